// One model in one precision behind an interface that names no model: a batch of rollouts in
// (x0, u, θ), out (L, diagnostics[, ∂L/∂x0, ∂L/∂u, ∂L/∂θ][, trajectory]). The CLI's problem
// (SimProblem, sim_problem.h), the Python binding and the benchmark all run batches through
// it; a model's folder builds its runner (its ModelDef's make_runner hook, registry.h) with
// make_model_runner (model_runner.h), and nothing outside the folder knows the model's type.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "steer/batch.h"
#include "steer/cuda_backend.h"

namespace steer {

struct RunnerOptions {
  // ∂L/∂θ for every θ slot (Python returns the whole gradient). false: only for the config's
  // parameter variables, all a problem reads; the articulated adjoint then skips the other slots.
  bool every_parameter_gradient = false;
};

// counted work of one forward step and one adjoint step of one rollout (steer/op_count.h),
// averaged over the states sampled; elements are the distinct per-rollout scalars touched
struct StepWorkCounts {
  double flops_fwd = 0, flops_adj = 0, special_fwd = 0, special_adj = 0, elements_fwd = 0,
         elements_adj = 0;
};

class BatchRunner {
 public:
  virtual ~BatchRunner() = default;
  int nx() const { return nx_; }
  int nu() const { return nu_; }
  int np() const { return np_; }
  BackendKind backend() const { return backend_; }
  bool float32() const { return float32_; }

  // Runs batch with schedule sh on the runner's backend; out is sized here. A runner runs one
  // precision (float32()); the other overload throws std::logic_error. stats: on the CUDA
  // backend, the device's phase timings (cuda_backend.h); ignored on the CPU.
  virtual void run(const Batch<double>& batch, const RolloutShape& sh, bool want_grad,
                   BatchResult<double>& out, int threads, CudaRunStats* stats = nullptr) const = 0;
  virtual void run(const Batch<float>& batch, const RolloutShape& sh, bool want_grad,
                   BatchResult<float>& out, int threads, CudaRunStats* stats = nullptr) const = 0;

  // one plain float64 step x_{k+1} = f(k, x, u, θ) (x, u, θ, x⁺ contiguous)
  virtual void step(int k, const double* x, const double* u, const double* p, double* xn) const = 0;
  // its vector-Jacobian product at (k, x, u, θ) for λ = x̄_{k+1}, added to the outputs:
  // x̄ += (∂f/∂x)ᵀ λ, ū += (∂f/∂u)ᵀ λ, θ̄ += (∂f/∂θ)ᵀ λ (through the parameter map where the model
  // has one); the model's hand adjoint, float64, host
  virtual void adj_step(int k, const double* x, const double* u, const double* p, const double* lam,
                        double* adj_x, double* adj_u, double* adj_p) const = 0;
  // the centre of mass c(x, θ) along axis 0, 1, 2 [m]
  virtual double center_of_mass(const double* x, const double* p, int axis) const = 0;
  // whether penetration() measures a contact depth for this model
  virtual bool measures_penetration() const = 0;
  // the deepest contact below its surface at (x, θ) [m] (> 0: penetrating)
  virtual double penetration(const double* x, const double* p) const = 0;
  // whether min_volume_ratio() measures element volume ratios for this model
  virtual bool measures_inversion() const = 0;
  // the smallest volume ratio J = det F of the model's elements at (x, θ) [1] (≤ 0: inverted)
  virtual double min_volume_ratio(const double* x, const double* p) const = 0;

  // the bytes of one step's tape in the runner's precision (0: the model keeps none)
  virtual long long step_tape_bytes() const = 0;
  // Counted work of the step and its adjoint at `samples` states spread over rollout 0 of
  // `batch` (stepped and counted in float64: the runner's precision runs the same operations;
  // elements × sizeof(S) are its bytes), the adjoint seeded with λ = 1; taped: the adjoint from
  // the step's tape, as the CPU's uniform schedule runs it.
  virtual StepWorkCounts count_work(const Batch<double>& batch, int steps, int samples,
                                    bool taped) const = 0;

 protected:
  int nx_ = 0, nu_ = 0, np_ = 0;
  BackendKind backend_ = BackendKind::kCpu;
  bool float32_ = false;
};

// The config's model in c.precision on `backend`, from its registered ModelDef (registry.h).
// ConfigError when the model cannot run there (a tree too large for the CUDA kernels).
std::unique_ptr<BatchRunner> make_runner(const ExperimentConfig& c, BackendKind backend,
                                         const RunnerOptions& options = RunnerOptions{});

}  // namespace steer
