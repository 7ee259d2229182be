// A batch optimization problem with the model and precision erased: B rollouts, each
// with nv variables (its slice of x0, θ and controls named in the config), evaluated
// by the simulator on one backend. Optimizers and the validator see only this.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "steer/batch.h"

namespace steer {

// How often one velocity component of a rollout turns back: at step k when
// (v_{k+1} − v_k)(v_k − v_{k−1}) < 0 with both jumps above 1e-3 of the component's largest |v|
// over the rollout (and above 1e-6 in its unit, so rounding noise at rest is not counted).
// A smooth oscillation of period P steps turns back 2T/P times; a period-2 chatter nearly T.
struct VelocityReversals {
  int component = -1;  // the state slot that turns back most often; −1: no velocity turned back
  std::string name;    // its state name ("joint7.v")
  int count = 0;       // its reversals over steps 1 … T−1
  int first_step = -1, last_step = -1;
  double median_jump = 0;  // median |v_k − v_{k−1}| at its reversals [its unit]
  double largest = 0;      // its largest |v| over the rollout [its unit]
};

struct Evaluation {
  std::vector<double> loss;       // [B]
  std::vector<double> grad;       // [B·nv] when requested
  std::vector<RolloutDiag> diag;  // [B]
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
  // centre-of-mass displacement c(x_T) − c(x_0) along axis [m] of rollouts [0, n); empty for
  // problems that are not simulations (analytic test problems)
  virtual std::vector<double> com_displacement(const std::vector<double>& vars, int n, int axis) {
    (void)vars, (void)n, (void)axis;
    return {};
  }

  // deepest penetration of the model's contact point below its surface over each of rollouts
  // [0, n) [m] (negative: never touched); empty for models without a penetration measure
  virtual std::vector<double> max_penetration(const std::vector<double>& vars, int n) {
    (void)vars, (void)n;
    return {};
  }

  // the smallest element volume ratio J = det F over each of rollouts [0, n) [1] (≤ 0: an
  // element inverted); empty for models without elements
  virtual std::vector<double> min_volume_ratio(const std::vector<double>& vars, int n) {
    (void)vars, (void)n;
    return {};
  }

  // per rollout [0, n): the velocity component that turns back most often (VelocityReversals);
  // empty for problems that are not simulations
  virtual std::vector<VelocityReversals> velocity_reversals(const std::vector<double>& vars,
                                                            int n) {
    (void)vars, (void)n;
    return {};
  }

  // replaces the rollouts' start states x0 [B·nx] and open-loop controls u [B·T·nu] (a window's
  // slice: WindowedProblem) for the evaluations that follow; false where a problem cannot
  virtual bool set_starts(const std::vector<double>& x0, const std::vector<double>& u) {
    (void)x0, (void)u;
    return false;
  }

  // the problem restricted to its first n rollouts, each evaluating bit for bit as here; nullptr
  // where a problem cannot be cut (the validator then checks on the whole batch)
  virtual std::unique_ptr<Problem> leading(int n) const {
    (void)n;
    return nullptr;
  }

  // cost accounting: rollout-steps simulated forward, and backward sweeps (each a
  // recompute plus an adjoint pass over T steps)
  long long forward_rollout_steps = 0;
  long long backward_rollout_steps = 0;
  long long recomputed_rollout_steps =
      0;  // forward steps the backward sweeps recomputed (0 with a stored forward)
  double forward_seconds = 0, gradient_seconds = 0;
  int forward_calls = 0, gradient_calls = 0;

 protected:
  int batch_size_ = 0, nx_ = 0, steps_ = 0;
  std::vector<double> lower_, upper_, initial_;
  std::vector<std::string> names_;
};

std::unique_ptr<Problem> make_problem(const ExperimentConfig& c, BackendKind backend, int threads);

// The experiment at half its timestep over the same horizon (halved_timestep: h/2, 2T steps,
// the effort weight halved, each control's hold doubled), presented in the variables of the
// experiment at h: a control knot held over `hold` steps at h is held over 2·hold half steps,
// so its gradient is the sum over them, and x0 and θ variables are passed through. The loss
// is then the same functional of the same variables, and evaluate() at h and at h/2 compare
// term by term (the timestep check).
class HalfStepProblem : public Problem {
 public:
  HalfStepProblem(const ExperimentConfig& c, BackendKind backend, int threads);
  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override;
  std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) override;
  std::vector<double> parameters(const std::vector<double>& vars) override;
  std::unique_ptr<Problem> leading(int n) const override;

 private:
  HalfStepProblem(std::unique_ptr<Problem> inner, const HalfStepProblem& o);
  std::unique_ptr<Problem> inner_;
};

// the problem in variables z ∈ [0, 1]: v = lower + (upper − lower) z, ∂L/∂z = (upper − lower)
// ∂L/∂v, so one step size and one σ0 suit stiffness in N/m and weights of order 1 alike
class NormalizedProblem : public Problem {
 public:
  explicit NormalizedProblem(std::unique_ptr<Problem> p) : inner_(std::move(p)) {
    batch_size_ = inner_->batch_size();
    nx_ = inner_->nx();
    steps_ = inner_->steps();
    names_ = inner_->var_names();
    const int nv = inner_->num_vars();
    lo_ = inner_->lower();
    span_.resize(nv);
    for (int i = 0; i < nv; ++i) span_[i] = inner_->upper()[i] - lo_[i];
    lower_.assign(nv, 0.0);
    upper_.assign(nv, 1.0);
    initial_ = to_z(inner_->initial());
  }
  std::vector<double> to_v(const std::vector<double>& z) const {
    std::vector<double> v(z.size());
    const size_t nv = span_.size();
    for (size_t i = 0; i < z.size(); ++i) v[i] = lo_[i % nv] + span_[i % nv] * z[i];
    return v;
  }
  std::vector<double> to_z(const std::vector<double>& v) const {
    std::vector<double> z(v.size());
    const size_t nv = span_.size();
    for (size_t i = 0; i < v.size(); ++i) z[i] = (v[i] - lo_[i % nv]) / span_[i % nv];
    return z;
  }
  void evaluate(const std::vector<double>& z, bool want_grad, Evaluation& out) override {
    inner_->evaluate(to_v(z), want_grad, out);
    const size_t nv = span_.size();
    for (size_t i = 0; i < out.grad.size(); ++i) out.grad[i] *= span_[i % nv];
  }
  std::vector<double> trajectories(const std::vector<double>& z, int n, int s) override {
    return inner_->trajectories(to_v(z), n, s);
  }
  std::vector<double> parameters(const std::vector<double>& z) override {
    return inner_->parameters(to_v(z));
  }
  std::vector<double> com_displacement(const std::vector<double>& z, int n, int axis) override {
    return inner_->com_displacement(to_v(z), n, axis);
  }
  std::vector<double> max_penetration(const std::vector<double>& z, int n) override {
    return inner_->max_penetration(to_v(z), n);
  }
  std::vector<double> min_volume_ratio(const std::vector<double>& z, int n) override {
    return inner_->min_volume_ratio(to_v(z), n);
  }
  std::vector<VelocityReversals> velocity_reversals(const std::vector<double>& z, int n) override {
    return inner_->velocity_reversals(to_v(z), n);
  }
  std::unique_ptr<Problem> leading(int n) const override {
    std::unique_ptr<Problem> inner = inner_->leading(n);
    return inner ? std::make_unique<NormalizedProblem>(std::move(inner)) : nullptr;
  }
  Problem& inner() { return *inner_; }

 private:
  std::unique_ptr<Problem> inner_;
  std::vector<double> lo_, span_;
};

// the nominal batch of a config after sweeps and randomization (float64). Refuses (ConfigError,
// naming the draw key and the first rollout) a batch in which a rollout's values leave the
// physical domain: a drawn or scaled slot outside its range (draws on one slot compose in
// config order, and each was checked only alone), or a value the model's check_physical
// refuses (an indefinite inertia). Nothing is simulated before it returns.
Batch<double> build_batch(const ExperimentConfig& c);

// the config of the perturbation analysis (perturb) at level r: every slot of c.perturb scaled
// by (1 + r) in every rollout
ExperimentConfig perturbed_config(const ExperimentConfig& c, double r);

// Every batch a command will simulate for c, checked as build_batch checks one, before any
// simulation: c's batch; its rollouts' start after parameter variables are projected into
// their bounds; then for run and check (compare false) each perturbation level, for compare
// each repeat's batch (batch.seed + r). ConfigError (exit 2) naming the key and the rollout.
void check_physical_inputs(const ExperimentConfig& c, bool compare);

// the config with rollout 0's drawn values made nominal, as a batch of `size` identical
// rollouts (a CMA-ES population of one design)
ExperimentConfig replicate_rollout0(const ExperimentConfig& c, int size);

// The config whose rollout i is rollout rows[i] of c's batch, bit for bit: the slots where some
// chosen row differs from the nominal x0 and θ become sweeps of the rows' values, and nothing is
// drawn or scaled again. nominal = build_batch(c). batch.weights follow their rows; batch.groups
// is 1 (the caller groups the new batch).
ExperimentConfig rows_config(const ExperimentConfig& c, const Batch<double>& nominal,
                             const std::vector<int>& rows);

// c's batch repeated `copies` times (rollout j·B + b is c's rollout b): a CMA-ES population of
// designs shared over c's worlds, one group per candidate
ExperimentConfig replicate_worlds(const ExperimentConfig& c, int copies);

}  // namespace steer
