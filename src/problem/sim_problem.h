// The batch problem of one config: the Problem interface (problem.h) over the config's
// BatchRunner (batch_runner.h), in the runner's precision S. It knows no model: the variables
// are scattered into a copy of the nominal batch, run, and the gradients gathered back; the
// model's own parts (the step, the centre of mass, a contact depth) come from the runner.
// Instantiated for float and double in sim_problem.cpp; make_problem (problem.h) builds it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "problem/batch_runner.h"
#include "problem/problem.h"

namespace steer {

template <class S>
class SimProblem : public Problem {
 public:
  // runner: c's model in precision S (make_runner); shared read-only with the problem's copies
  // (leading)
  SimProblem(const ExperimentConfig& c, std::shared_ptr<const BatchRunner> runner, int threads)
      : runner_(std::move(runner)), threads_(threads), vars_(c.variables) {
    batch_size_ = c.batch_size;
    nx_ = runner_->nx();
    state_names_ = c.info.state_names;
    for (int i = 0; i < c.info.nx(); ++i)
      if (c.info.state_units[size_t(i)] == "m/s" || c.info.state_units[size_t(i)] == "rad/s")
        velocity_slots_.push_back(i);
    steps_ = c.steps;
    shape_ = c.checkpoint_plan()
                 .shape;  // steps, and uniform K or binomial s (docs/design.md, Checkpointing)
    Batch<double> nominal = build_batch(c);
    base_.resize(nominal.size, nominal.nx, nominal.nu, nominal.np, nominal.steps);
    std::transform(nominal.x0.begin(), nominal.x0.end(), base_.x0.begin(),
                   [](double v) { return S(v); });
    std::transform(nominal.u.begin(), nominal.u.end(), base_.u.begin(),
                   [](double v) { return S(v); });
    std::transform(nominal.theta.begin(), nominal.theta.end(), base_.theta.begin(),
                   [](double v) { return S(v); });
    // flatten the variable blocks: one slot per x0/θ variable, ⌈T/hold⌉ knots per control component
    for (const auto& v : vars_) {
      const int len = v.length(c.steps);
      for (int k = 0; k < len; ++k) {
        lower_.push_back(v.lower);
        upper_.push_back(v.upper);
        names_.push_back(len == 1 ? v.name : v.name + "[" + std::to_string(k) + "]");
      }
    }
    const int nv = num_vars();
    initial_.assign(size_t(batch_size_) * nv, 0.0);
    for (int b = 0; b < batch_size_; ++b) {
      int o = 0;
      for (const auto& v : vars_) {
        if (v.kind == VariableSpec::kControl) {
          // a knot starts at the nominal control of its first step
          for (int k = 0; k < c.steps; k += v.hold)
            initial_[size_t(b) * nv + o++] = nominal.u_of(b)[size_t(k) * nominal.nu + v.index];
        } else {
          const double* src =
              v.kind == VariableSpec::kInitialState ? nominal.x0_of(b) : nominal.theta_of(b);
          initial_[size_t(b) * nv + o++] = src[v.index];
        }
      }
      for (int i = 0; i < nv; ++i)
        initial_[size_t(b) * nv + i] =
            std::min(std::max(initial_[size_t(b) * nv + i], lower_[i]), upper_[i]);
    }
  }

  // rollouts [0, n) of o: the same nominal batch rows, so each evaluates bit for bit as in o
  SimProblem(const SimProblem& o, int n)
      : velocity_slots_(o.velocity_slots_),
        state_names_(o.state_names_),
        runner_(o.runner_),
        threads_(o.threads_),
        vars_(o.vars_),
        shape_(o.shape_) {
    batch_size_ = n;
    nx_ = o.nx_;
    steps_ = o.steps_;
    lower_ = o.lower_;
    upper_ = o.upper_;
    names_ = o.names_;
    const Batch<S>& b = o.base_;
    base_.resize(n, b.nx, b.nu, b.np, b.steps);
    std::copy_n(b.x0.begin(), size_t(n) * b.nx, base_.x0.begin());
    std::copy_n(b.u.begin(), size_t(n) * b.steps * b.nu, base_.u.begin());
    std::copy_n(b.theta.begin(), size_t(n) * b.np, base_.theta.begin());
    initial_.assign(o.initial_.begin(), o.initial_.begin() + size_t(n) * o.num_vars());
  }
  std::unique_ptr<Problem> leading(int n) const override {
    if (n <= 0 || n > batch_size_) return nullptr;
    return std::make_unique<SimProblem>(*this, n);
  }

  bool set_starts(const std::vector<double>& x0, const std::vector<double>& u) override {
    if (x0.size() != base_.x0.size() || u.size() != base_.u.size()) return false;
    std::transform(x0.begin(), x0.end(), base_.x0.begin(), [](double v) { return S(v); });
    std::transform(u.begin(), u.end(), base_.u.begin(), [](double v) { return S(v); });
    return true;
  }

  // writes vars into a copy of the nominal batch
  void scatter(const std::vector<double>& vars, Batch<S>& batch) const {
    batch = base_;
    const int nv = num_vars(), nu = base_.nu;
    for (int b = 0; b < batch_size_; ++b) {
      const double* v = vars.data() + size_t(b) * nv;
      int o = 0;
      for (const auto& var : vars_) {
        if (var.kind == VariableSpec::kControl) {
          S* u = batch.u_of(b);
          for (int k = 0; k < steps_; ++k) u[size_t(k) * nu + var.index] = S(v[o + k / var.hold]);
          o += var.length(steps_);
        } else if (var.kind == VariableSpec::kInitialState) {
          batch.x0_of(b)[var.index] = S(v[o++]);
        } else {
          // a tied parameter (rest position) also sets its initial-state slot
          if (var.tied_state >= 0) batch.x0_of(b)[var.tied_state] = S(v[o]);
          // and the slots it moves, by a_j (v − v0) added to their values (the batch starts as
          // the nominal one, so the moves of several variables on one slot add up)
          const double shift = v[o] - double(base_.theta_of(b)[var.index]);
          for (const auto& [j, a] : var.moves)
            batch.theta_of(b)[j] = S(double(batch.theta_of(b)[j]) + a * shift);
          batch.theta_of(b)[var.index] = S(v[o++]);
        }
      }
    }
  }

  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override {
    if (vars.size() != size_t(batch_size_) * num_vars())
      throw std::invalid_argument("evaluate: vars has the wrong size");
    auto t0 = std::chrono::steady_clock::now();
    scatter(vars, work_);
    runner_->run(work_, shape_, want_grad, result_, threads_);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    forward_rollout_steps += (long long)batch_size_ * steps_;
    if (want_grad) {
      backward_rollout_steps += (long long)batch_size_ * steps_;
      for (const RolloutDiag& d : result_.diag) recomputed_rollout_steps += d.recompute_steps;
      gradient_seconds += secs;
      ++gradient_calls;
    } else {
      forward_seconds += secs;
      ++forward_calls;
    }
    out.loss.assign(result_.loss.begin(), result_.loss.end());
    out.diag = result_.diag;
    if (!want_grad) {
      out.grad.clear();
      return;
    }
    const int nv = num_vars(), nu = base_.nu, nx = base_.nx, np = base_.np;
    out.grad.assign(size_t(batch_size_) * nv, 0.0);
    for (int b = 0; b < batch_size_; ++b) {
      double* g = out.grad.data() + size_t(b) * nv;
      int o = 0;
      for (const auto& var : vars_) {
        if (var.kind == VariableSpec::kControl) {
          // ∂L/∂knot_j = Σ ∂L/∂u_k over the knot's steps, summed in step order
          const S* gu = result_.grad_u.data() + size_t(b) * steps_ * nu;
          for (int k = 0; k < steps_; ++k)
            g[o + k / var.hold] += double(gu[size_t(k) * nu + var.index]);
          o += var.length(steps_);
        } else if (var.kind == VariableSpec::kInitialState) {
          g[o++] = double(result_.grad_x0[size_t(b) * nx + var.index]);
        } else {
          double gv = double(result_.grad_theta[size_t(b) * np + var.index]);
          if (var.tied_state >= 0) gv += double(result_.grad_x0[size_t(b) * nx + var.tied_state]);
          for (const auto& [j, a] : var.moves)
            gv += a * double(result_.grad_theta[size_t(b) * np + j]);
          g[o++] = gv;
        }
      }
    }
  }

  std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) override {
    n = std::min(n, batch_size_);
    if (n <= 0) return {};
    scatter(vars, work_);
    Batch<S> part;
    part.resize(n, work_.nx, work_.nu, work_.np, steps_);
    std::copy(work_.x0.begin(), work_.x0.begin() + size_t(n) * work_.nx, part.x0.begin());
    std::copy(work_.u.begin(), work_.u.begin() + size_t(n) * steps_ * work_.nu, part.u.begin());
    std::copy(work_.theta.begin(), work_.theta.begin() + size_t(n) * work_.np, part.theta.begin());
    RolloutShape sh = shape_;
    sh.traj_stride = stride;
    BatchResult<S> res;
    runner_->run(part, sh, false, res, threads_);
    return std::vector<double>(res.traj.begin(), res.traj.end());
  }

  std::vector<double> com_displacement(const std::vector<double>& vars, int n, int axis) override {
    n = std::min(n, batch_size_);
    const std::vector<double> ends = trajectories(vars, n, steps_);  // x_0 and x_T per rollout
    const std::vector<double> th = parameters(vars);
    std::vector<double> out(n);
    const int np = base_.np;
    for (int b = 0; b < n; ++b) {
      const double* P = th.data() + size_t(b) * np;
      const double *X0 = ends.data() + size_t(b) * 2 * nx_,
                   *XT = ends.data() + (size_t(b) * 2 + 1) * nx_;
      out[b] = runner_->center_of_mass(XT, P, axis) - runner_->center_of_mass(X0, P, axis);
    }
    return out;
  }

  std::vector<double> max_penetration(const std::vector<double>& vars, int n) override {
    if (!runner_->measures_penetration()) return {};
    return fold_states(vars, n, -1e300, [this](const double* x, const double* p, double acc) {
      return std::max(acc, runner_->penetration(x, p));
    });
  }

  std::vector<double> min_volume_ratio(const std::vector<double>& vars, int n) override {
    if (!runner_->measures_inversion()) return {};
    return fold_states(vars, n, 1e300, [this](const double* x, const double* p, double acc) {
      return std::min(acc, runner_->min_volume_ratio(x, p));
    });
  }

  std::vector<double> parameters(const std::vector<double>& vars) override {
    scatter(vars, work_);
    return std::vector<double>(work_.theta.begin(), work_.theta.end());
  }

  std::vector<VelocityReversals> velocity_reversals(const std::vector<double>& vars,
                                                    int n) override {
    n = std::min(n, batch_size_);
    std::vector<VelocityReversals> out(size_t(std::max(n, 0)));
    if (n <= 0 || velocity_slots_.empty() || steps_ < 2) return out;
    scatter(vars, work_);
    const int nx = work_.nx, nu = work_.nu, np = work_.np, slots = steps_ + 1;
    // every state of a chunk of rollouts at a time: ≤ 64 MiB of trajectory
    const size_t per_rollout = size_t(slots) * nx * sizeof(S);
    const int chunk = int(std::max<size_t>(1, (size_t(64) << 20) / per_rollout));
    RolloutShape sh = shape_;
    sh.traj_stride = 1;
    std::vector<double> jumps;
    for (int b0 = 0; b0 < n; b0 += chunk) {
      const int c = std::min(chunk, n - b0);
      Batch<S> part;
      part.resize(c, nx, nu, np, steps_);
      std::copy_n(work_.x0_of(b0), size_t(c) * nx, part.x0.begin());
      std::copy_n(work_.u_of(b0), size_t(c) * steps_ * nu, part.u.begin());
      std::copy_n(work_.theta_of(b0), size_t(c) * np, part.theta.begin());
      BatchResult<S> res;
      runner_->run(part, sh, false, res, threads_);
      for (int r = 0; r < c; ++r) {
        VelocityReversals& o = out[size_t(b0 + r)];
        const S* x = res.traj.data() + size_t(r) * slots * nx;
        for (int i : velocity_slots_) {
          double vmax = 0;
          for (int k = 0; k < slots; ++k)
            vmax = std::max(vmax, std::abs(double(x[size_t(k) * nx + i])));
          const double floor = std::max(1e-3 * vmax, 1e-6);
          int first = -1, last = -1;
          jumps.clear();
          for (int k = 1; k + 1 < slots; ++k) {
            const double d0 = double(x[size_t(k) * nx + i]) - double(x[size_t(k - 1) * nx + i]);
            const double d1 = double(x[size_t(k + 1) * nx + i]) - double(x[size_t(k) * nx + i]);
            if (d0 * d1 < 0 && std::abs(d0) > floor && std::abs(d1) > floor) {
              jumps.push_back(std::abs(d0));
              if (first < 0) first = k;
              last = k;
            }
          }
          const int count = int(jumps.size());
          if (count > o.count) {
            std::nth_element(jumps.begin(), jumps.begin() + count / 2, jumps.end());
            o = {i, state_names_[size_t(i)], count, first, last, jumps[size_t(count / 2)], vmax};
          }
        }
      }
    }
    return out;
  }

 private:
  // per rollout of [0, n): acc = fold(x_k, θ, acc) over every state x_0 … x_T, from init (one
  // forward pass keeping every state)
  template <class Fold>
  std::vector<double> fold_states(const std::vector<double>& vars, int n, double init, Fold fold) {
    n = std::min(n, batch_size_);
    const std::vector<double> traj = trajectories(vars, n, 1);  // every state
    const std::vector<double> th = parameters(vars);
    const int slots = steps_ + 1, np = base_.np;
    std::vector<double> out(n, init);
    for (int b = 0; b < n; ++b)
      for (int k = 0; k < slots; ++k)
        out[b] =
            fold(traj.data() + (size_t(b) * slots + k) * nx_, th.data() + size_t(b) * np, out[b]);
    return out;
  }

  std::vector<int> velocity_slots_;  // state slots in m/s or rad/s
  std::vector<std::string> state_names_;
  std::shared_ptr<const BatchRunner> runner_;
  int threads_;
  std::vector<VariableSpec> vars_;
  RolloutShape shape_;
  Batch<S> base_, work_;
  BatchResult<S> result_;
};

extern template class SimProblem<float>;
extern template class SimProblem<double>;

}  // namespace steer
