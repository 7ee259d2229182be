#include "problem/problem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <type_traits>

#include "models/registry.h"
#include "steer/backend.h"

namespace steer {

Batch<double> build_batch(const ExperimentConfig& c) {
  Batch<double> b;
  b.resize(c.batch_size, c.info.nx(), c.info.nu(), c.info.np(), c.steps);
  for (int r = 0; r < c.batch_size; ++r) {
    std::copy(c.x0.begin(), c.x0.end(), b.x0_of(r));
    std::copy(c.theta.begin(), c.theta.end(), b.theta_of(r));
    double* u = b.u_of(r);
    for (int k = 0; k < c.steps; ++k)
      for (int j = 0; j < c.info.nu(); ++j) u[size_t(k) * c.info.nu() + j] = c.u_init[j];
  }
  // overrides in config order; draws come from one seeded stream, per rollout and slot
  std::mt19937_64 rng(c.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& o : c.overrides) {
    for (int r = 0; r < c.batch_size; ++r) {
      double* dst = o.is_state ? b.x0_of(r) : b.theta_of(r);
      for (int i : o.indices) {
        const double u = o.draw == BatchOverride::kSweep ? 0.0 : unit(rng);
        switch (o.draw) {
          case BatchOverride::kSweep: dst[i] = o.values[r]; break;
          case BatchOverride::kUniform: dst[i] = o.lo + (o.hi - o.lo) * u; break;
          case BatchOverride::kRelative: dst[i] *= 1.0 + o.lo + (o.hi - o.lo) * u; break;
          case BatchOverride::kJitter: dst[i] += o.lo + (o.hi - o.lo) * u; break;
        }
      }
    }
  }
  for (const auto& [i, f] : c.theta_scale)
    for (int r = 0; r < c.batch_size; ++r) b.theta_of(r)[i] *= f;
  // state slots that follow drawn parameters (a robot that starts in its drawn rest shape)
  const ModelDef& def = model_of(c);
  if (def.finish_batch) def.finish_batch(c, b);
  return b;
}

ExperimentConfig replicate_rollout0(const ExperimentConfig& c, int size) {
  ExperimentConfig r = c;
  Batch<double> b1 = build_batch(c);
  r.x0.assign(b1.x0_of(0), b1.x0_of(0) + b1.nx);
  r.theta.assign(b1.theta_of(0), b1.theta_of(0) + b1.np);
  r.overrides.clear();
  r.batch_size = size;
  return r;
}

std::unique_ptr<Problem> make_problem(const ExperimentConfig& c, BackendKind backend, int threads) {
  return model_of(c).make_problem(c, backend, threads);
}

HalfStepProblem::HalfStepProblem(const ExperimentConfig& c, BackendKind backend, int threads)
    : inner_(make_problem(halved_timestep(c), backend, threads)) {
  // halved_timestep doubles each control's hold, so the inner problem's variables are these:
  // a knot (hold steps at h) spans 2·hold half steps, and the inner problem sums their gradients
  batch_size_ = inner_->batch_size();
  nx_ = inner_->nx();
  steps_ = c.steps;
  lower_ = inner_->lower();
  upper_ = inner_->upper();
  names_ = inner_->var_names();
  initial_ = inner_->initial();
}

HalfStepProblem::HalfStepProblem(std::unique_ptr<Problem> inner, const HalfStepProblem& o) : inner_(std::move(inner)) {
  batch_size_ = inner_->batch_size();
  nx_ = o.nx_;
  steps_ = o.steps_;
  lower_ = o.lower_;
  upper_ = o.upper_;
  names_ = o.names_;
  initial_.assign(o.initial_.begin(), o.initial_.begin() + size_t(batch_size_) * o.num_vars());
}

std::unique_ptr<Problem> HalfStepProblem::leading(int n) const {
  std::unique_ptr<Problem> inner = inner_->leading(n);
  if (!inner) return nullptr;
  return std::unique_ptr<Problem>(new HalfStepProblem(std::move(inner), *this));
}

void HalfStepProblem::evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  inner_->evaluate(vars, want_grad, out);
  forward_rollout_steps = inner_->forward_rollout_steps;
  backward_rollout_steps = inner_->backward_rollout_steps;
  recomputed_rollout_steps = inner_->recomputed_rollout_steps;
}

std::vector<double> HalfStepProblem::trajectories(const std::vector<double>& vars, int n, int stride) {
  return inner_->trajectories(vars, n, 2 * stride);
}

std::vector<double> HalfStepProblem::parameters(const std::vector<double>& vars) { return inner_->parameters(vars); }

}  // namespace steer
