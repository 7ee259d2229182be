// A batch optimization problem with the model and precision erased: B rollouts, each
// with nv variables (its slice of x0, θ and controls named in the config), evaluated
// by the simulator on one backend. Optimizers and the validator see only this.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "steer/batch.h"

namespace steer {

struct Evaluation {
  std::vector<double> loss;        // [B]
  std::vector<double> grad;        // [B·nv] when requested
  std::vector<RolloutDiag> diag;   // [B]
};

class Problem {
 public:
  virtual ~Problem() = default;
  int batch_size() const { return batch_size_; }
  int num_vars() const { return int(lower_.size()); }
  int nx() const { return nx_; }
  int steps() const { return steps_; }
  const std::vector<double>& lower() const { return lower_; }  // [nv], shared by all rollouts
  const std::vector<double>& upper() const { return upper_; }
  // each variable's human name ("x0.velocity.x", "controls.force.x[12]")
  const std::vector<std::string>& var_names() const { return names_; }
  // starting point [B·nv]: nominal values after the batch's sweeps and randomization,
  // projected into the bounds
  const std::vector<double>& initial() const { return initial_; }

  // (vars) -> (L_b, ∂L_b/∂vars, diagnostics) for every rollout b
  virtual void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) = 0;
  // states x_0, x_s, x_2s, … (and x_T when s divides T) of rollouts [0, n), as [n][slots][nx]
  virtual std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) = 0;
  // per-rollout θ actually simulated for vars [B·np]
  virtual std::vector<double> parameters(const std::vector<double>& vars) = 0;

  // cost accounting: rollout-steps simulated forward, and backward sweeps (each a
  // recompute plus an adjoint pass over T steps)
  long long forward_rollout_steps = 0;
  long long backward_rollout_steps = 0;
  double forward_seconds = 0, gradient_seconds = 0;
  int forward_calls = 0, gradient_calls = 0;

 protected:
  int batch_size_ = 0, nx_ = 0, steps_ = 0;
  std::vector<double> lower_, upper_, initial_;
  std::vector<std::string> names_;
};

std::unique_ptr<Problem> make_problem(const ExperimentConfig& c, BackendKind backend, int threads);

// the nominal batch of a config after sweeps and randomization (float64)
Batch<double> build_batch(const ExperimentConfig& c);

}  // namespace steer
