// BatchRunner (batch_runner.h) for one model struct in one precision: the only place the
// pipeline holds a model's type. A model's folder instantiates it in its make_runner hook
// (make_model_runner below); run_batch's CPU path is instantiated with it, its CUDA path in
// kernels/rollout_<model>_<precision>.cu. What differs between models beyond the struct (data
// the struct points into, setup from the config, a contact depth) comes through a hooks type
// from the model's folder (RunnerHooks).
#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "problem/batch_runner.h"
#include "steer/backend.h"
#include "steer/op_count.h"

namespace steer {

// A model's additions to its runner; a model folder derives from this and overrides what its
// model needs (the defaults do nothing). The hooks live in the runner, which is never copied.
template <class Model>
struct RunnerHooks {
  // prepares the runner's copy m of the model struct from the config; may keep data m points into
  void bind(const ExperimentConfig&, Model&, const RunnerOptions&) {}
  // whether penetration reports a contact depth for this model struct
  static bool measures_penetration(const Model&) { return false; }
  // the contact depth below the ground at state x, parameters p [m] (> 0: penetrating)
  static double penetration(const Model&, View<const double>, View<const double>) { return -1e300; }
  // whether min_volume_ratio reports element volume ratios for this model struct
  static bool measures_inversion(const Model&) { return false; }
  // the smallest element volume ratio J = det F at state x, parameters p [1]
  static double min_volume_ratio(const Model&, View<const double>, View<const double>) {
    return 1e300;
  }
  // A parameter map θ_eff = D(θ) the runner applies to each rollout's θ before the model sees
  // it (design slots the step does not read, mapped onto those it does), and its transpose
  // θ̄ += (∂D/∂θ)ᵀ θ̄_eff on the gradient after; np slots each. None by default.
  bool maps_parameters() const { return false; }
  void map_parameters(const double*, double*) const {}
  void adj_map_parameters(const double*, const double*, double*) const {}
};

template <class Model, class S, class Hooks = RunnerHooks<Model>>
class ModelRunner final : public BatchRunner {
  static_assert(std::is_same<S, double>::value || std::is_same<S, float>::value,
                "a runner runs float or double");

 public:
  ModelRunner(const ExperimentConfig& c, const Model& m, BackendKind backend,
              const RunnerOptions& options)
      : model_(m), loss_(c.loss) {
    hooks_.bind(c, model_, options);
    // the tracking table for this config's own dt and steps (a horizon sweep's T, the
    // half-step twin's dt/2)
    if (!c.tracking.empty()) {
      auto table = std::make_shared<std::vector<double>>();
      build_track_table(c, c.dt, c.steps, loss_, *table);
      loss_.track = table->empty() ? nullptr : table->data();
      track_table_ = table;
    }
    nx_ = model_.nx(), nu_ = model_.nu(), np_ = model_.np();
    backend_ = backend;
    float32_ = std::is_same<S, float>::value;
  }
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  void run(const Batch<double>& batch, const RolloutShape& sh, bool want_grad,
           BatchResult<double>& out, int threads, CudaRunStats* stats) const override {
    run_in(batch, sh, want_grad, out, threads, stats);
  }
  void run(const Batch<float>& batch, const RolloutShape& sh, bool want_grad,
           BatchResult<float>& out, int threads, CudaRunStats* stats) const override {
    run_in(batch, sh, want_grad, out, threads, stats);
  }

  void step(int k, const double* x, const double* u, const double* p, double* xn) const override {
    View<double> out{xn, 1};
    with_mapped(p, [&](const double* pe) {
      model_.template step<double>(k, View<const double>{x, 1}, View<const double>{u, 1},
                                   View<const double>{pe, 1}, out);
    });
  }
  void adj_step(int k, const double* x, const double* u, const double* p, const double* lam,
                double* adj_x, double* adj_u, double* adj_p) const override {
    auto vjp = [&](const double* pe, double* ape) {
      View<double> ax{adj_x, 1}, au{adj_u, 1}, ap{ape, 1};
      model_.template adj_step<double>(k, View<const double>{x, 1}, View<const double>{u, 1},
                                       View<const double>{pe, 1}, ax, au, ap,
                                       View<const double>{lam, 1});
    };
    if (!hooks_.maps_parameters()) {
      vjp(p, adj_p);
      return;
    }
    // θ_eff = D(θ): the step's θ̄_eff, then θ̄ += (∂D/∂θ)ᵀ θ̄_eff
    const std::vector<double> pe = mapped(p);
    std::vector<double> ape(static_cast<size_t>(np_), 0.0);
    vjp(pe.data(), ape.data());
    hooks_.adj_map_parameters(p, ape.data(), adj_p);
  }
  double center_of_mass(const double* x, const double* p, int axis) const override {
    return with_mapped(p, [&](const double* pe) {
      return model_.template center_of_mass<double>(View<const double>{x, 1},
                                                    View<const double>{pe, 1}, axis);
    });
  }
  bool measures_penetration() const override { return Hooks::measures_penetration(model_); }
  bool measures_inversion() const override { return Hooks::measures_inversion(model_); }
  double min_volume_ratio(const double* x, const double* p) const override {
    return Hooks::min_volume_ratio(model_, View<const double>{x, 1}, View<const double>{p, 1});
  }
  double penetration(const double* x, const double* p) const override {
    return with_mapped(p, [&](const double* pe) {
      return Hooks::penetration(model_, View<const double>{x, 1}, View<const double>{pe, 1});
    });
  }

  long long step_tape_bytes() const override { return step_tape_bytes_of<Model, S>(model_, 0); }

  StepWorkCounts count_work(const Batch<double>& b, int steps, int samples,
                            bool taped) const override {
    std::vector<double> x(b.x0_of(0), b.x0_of(0) + nx_), xn(static_cast<size_t>(nx_)),
        u(static_cast<size_t>(nu_));
    const std::vector<double> p = mapped(b.theta_of(0)), seed(static_cast<size_t>(nx_), 1.0);
    samples = std::min(steps, samples);
    StepWorkCounts w;
    for (int k = 0, taken = 0; k < steps && taken < samples; ++k) {
      for (int j = 0; j < nu_; ++j) u[size_t(j)] = b.u_of(0)[size_t(k) * nu_ + j];
      if (k == long(taken) * steps / samples) {
        // counted on Counted<double> in both precisions: the operations are the same (the
        // caller scales elements by sizeof(S)), and a model's float and double runners, which
        // share a translation unit, then share one instantiation of its step, adjoint and
        // dual-number adjoint on the counting scalar (minutes of compile time each)
        const StepWork f = count_step<double>(model_, k, x, u, p);
        StepWork a;
        if constexpr (contract::has_step_tape<Model>::value) {
          a = taped ? count_adj_step_taped<double>(model_, k, x, u, p, seed)
                    : count_adj_step<double>(model_, k, x, u, p, seed);
        } else {
          (void)taped;
          a = count_adj_step<double>(model_, k, x, u, p, seed);
        }
        w.flops_fwd += double(f.ops.flops()) / samples;
        w.special_fwd += double(f.ops.special) / samples;
        w.elements_fwd += double(f.elements) / samples;
        w.flops_adj += double(a.ops.flops()) / samples;
        w.special_adj += double(a.ops.special) / samples;
        w.elements_adj += double(a.elements) / samples;
        ++taken;
      }
      step(k, x.data(), u.data(), p.data(), xn.data());
      x.swap(xn);
    }
    return w;
  }

 private:
  // θ_eff of one rollout (θ itself without a parameter map)
  std::vector<double> mapped(const double* p) const {
    std::vector<double> pe(p, p + np_);
    if (hooks_.maps_parameters()) hooks_.map_parameters(p, pe.data());
    return pe;
  }
  // f(θ_eff): θ itself, uncopied, where there is no map (the per-state calls: step, the centre
  // of mass, the contact depth)
  template <class F>
  auto with_mapped(const double* p, F&& f) const {
    if (!hooks_.maps_parameters()) return f(p);
    const std::vector<double> pe = mapped(p);
    return f(pe.data());
  }

  // the batch with each rollout's θ mapped (Hooks::map_parameters), x0 and u viewed in place;
  // the gradient taken back through the map
  template <class R>
  void run_mapped(const Batch<R>& batch, const RolloutShape& sh, bool want_grad,
                  BatchResult<R>& out, int threads, CudaRunStats* stats) const {
    if (batch.memory() == Memory::kDevice)
      throw std::logic_error(
          "BatchRunner::run: a model with a parameter map takes its batch in host memory");
    const int B = batch.size;
    std::vector<R> th(size_t(B) * np_);
    std::vector<double> in(static_cast<size_t>(np_)), eff(static_cast<size_t>(np_));
    for (int b = 0; b < B; ++b) {
      for (int i = 0; i < np_; ++i) in[size_t(i)] = double(batch.theta_of(b)[i]);
      hooks_.map_parameters(in.data(), eff.data());
      for (int i = 0; i < np_; ++i) th[size_t(b) * np_ + i] = R(eff[size_t(i)]);
    }
    Batch<R> mb;
    mb.size = B, mb.nx = batch.nx, mb.nu = batch.nu, mb.np = batch.np, mb.steps = batch.steps;
    mb.view_inputs(batch.x0_data(), batch.u_data(), th.data());
    run_direct(mb, sh, want_grad, out, threads, stats);
    if (!want_grad || out.grad_theta.empty()) return;
    std::vector<double> ge(static_cast<size_t>(np_)), g(static_cast<size_t>(np_));
    for (int b = 0; b < B; ++b) {
      for (int i = 0; i < np_; ++i) {
        in[size_t(i)] = double(batch.theta_of(b)[i]);
        ge[size_t(i)] = double(out.grad_theta[size_t(b) * np_ + i]);
        g[size_t(i)] = 0;
      }
      hooks_.adj_map_parameters(in.data(), ge.data(), g.data());
      for (int i = 0; i < np_; ++i) out.grad_theta[size_t(b) * np_ + i] = R(g[size_t(i)]);
    }
  }

  template <class R>
  void run_in(const Batch<R>& batch, const RolloutShape& sh, bool want_grad, BatchResult<R>& out,
              int threads, CudaRunStats* stats) const {
    if constexpr (std::is_same<R, S>::value) {
      if (hooks_.maps_parameters()) {
        run_mapped(batch, sh, want_grad, out, threads, stats);
        return;
      }
    }
    run_direct(batch, sh, want_grad, out, threads, stats);
  }

  template <class R>
  void run_direct(const Batch<R>& batch, const RolloutShape& sh, bool want_grad,
                  BatchResult<R>& out, int threads, CudaRunStats* stats) const {
    if constexpr (!std::is_same<R, S>::value) {
      (void)batch, (void)sh, (void)want_grad, (void)out, (void)threads, (void)stats;
      throw std::logic_error(std::string("BatchRunner::run: a ") +
                             (float32_ ? "float32" : "float64") + " runner was given a " +
                             (std::is_same<R, float>::value ? "float32" : "float64") + " batch");
    } else {
#ifdef STEER_WITH_CUDA
      if constexpr (has_cuda_kernels<Model>::value) {
        if (stats && backend_ == BackendKind::kCuda) {
          cuda_run_batch_ex<Model, S>(model_, loss_, sh, batch, want_grad, out, CudaRunOptions{},
                                      stats);
          return;
        }
      }
#endif
      (void)stats;
      run_batch<Model, S>(backend_, model_, loss_, sh, batch, want_grad, out, threads);
    }
  }

  Model model_;
  Hooks hooks_;
  Loss loss_;
  std::shared_ptr<const std::vector<double>> track_table_;  // what loss_.track points at
};

// The runner of model struct m in c.precision. A model without CUDA kernels (has_cuda_kernels,
// backend.h) is refused on the cuda backend, naming simulation.backend.
template <class Model, class Hooks = RunnerHooks<Model>>
std::unique_ptr<BatchRunner> make_model_runner(const ExperimentConfig& c, const Model& m,
                                               BackendKind backend, const RunnerOptions& options) {
  if (backend == BackendKind::kCuda && !has_cuda_kernels<Model>::value)
    throw ConfigError(
        "simulation.backend: the " + c.model_type +
        " model has no CUDA kernels; run it on the cpu backend (\"backend\": \"cpu\")");
  if (backend == BackendKind::kCuda && c.loss.com_target)
    throw ConfigError(
        "loss.com_target: the centre-of-mass target is host-only (not compiled into the CUDA "
        "kernels); run this config on the cpu backend (\"backend\": \"cpu\")");
  if (c.precision == "float32")
    return std::make_unique<ModelRunner<Model, float, Hooks>>(c, m, backend, options);
  return std::make_unique<ModelRunner<Model, double, Hooks>>(c, m, backend, options);
}

}  // namespace steer
