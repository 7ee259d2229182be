// Gradient descent and Adam with box bounds, every rollout of the batch optimized
// independently in one batched loop: one forward+backward pass per iteration for all.
#pragma once

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "problem/problem.h"

namespace steer {

struct OptimizationTrace {
  std::vector<int> iteration;
  std::vector<double> loss_mean, loss_min, loss_max;  // over the batch
  std::vector<double> loss_median;                    // over the batch's finite losses
  std::vector<std::vector<double>> loss_rollouts;     // per logged iteration, first ≤ 16 rollouts
  // per logged iteration, the variables of the first ≤ kTraceVarRollouts rollouts, row-major
  // [rollouts·nv]; kept only for small problems (nv ≤ kTraceMaxVars), empty otherwise
  int vars_per_rollout = 0;  // nv when variables are kept, 0 otherwise
  std::vector<std::vector<double>> vars;
};

// the limits on the variables' paths in the trace: with at most 8 rollouts × 32 variables an
// entry is ≤ 256 numbers, a few KB per logged iteration in artifact.json
constexpr int kTraceMaxVars = 32;
constexpr int kTraceVarRollouts = 8;

struct OptimizationResult {
  std::vector<double> vars;  // [B·nv] final iterate
  Evaluation final;          // loss, gradient and diagnostics at the final iterate
  OptimizationTrace trace;
  int iterations = 0;
  double seconds = 0;
};

// appends iteration `it` with the batch's losses to the trace (mean, min, max, median, first
// ≤ 16) and, when 0 < nv ≤ kTraceMaxVars and vars is not empty, the first ≤ kTraceVarRollouts
// rows of vars [B·nv]
void record_losses(OptimizationTrace& t, int it, const std::vector<double>& loss,
                   const std::vector<double>& vars = {}, int nv = 0);

// the median of the finite values (the mean of the two middle ones for an even count); NaN
// when none is finite
double finite_median(const std::vector<double>& x);

// clamps every variable into [lower_i, upper_i]
void project_to_bounds(const Problem& p, std::vector<double>& vars);

// the step size of gd/Adam step t (0-based) of cfg.iterations under cfg.lr_schedule;
// steps past the last keep learning_rate_final
double scheduled_learning_rate(const OptimizerConfig& cfg, int t);

// the step rule of optimize(), one batched step at a time, so that callers can run it on
// several problems in turn (continuation) with their own evaluation and cost accounting:
// gd (v ← P(v − η g), or with normalize_gradient v ← P(v − η g/(‖g‖ + 10⁻⁶))) or Adam
// (Kingma & Ba) on each rollout's row, after scaling a row
// whose L2 norm exceeds cfg.gradient_clip down to that norm (0 = no clipping). A row whose
// gradient is not finite takes no step (its Adam moments are kept).
class GradientStepper {
 public:
  GradientStepper(const OptimizerConfig& cfg, int batch, int nv);
  // v ← P(v − step(grad)); grad [B·nv] is clipped in place
  void step(const Problem& p, std::vector<double>& v, std::vector<double>& grad);
  int steps_taken() const { return t_; }
  int clipped_rows() const { return clipped_; }  // rows scaled down so far

 private:
  OptimizerConfig cfg_;
  int batch_, nv_, t_ = 0, clipped_ = 0;
  std::vector<double> m1_, m2_;  // Adam moments
};

// How an optimizer that runs on one part (a block of rollouts) of a larger batch sees the whole
// batch: gather(rows, per, n) returns the whole batch's rows of rollouts [0, n) (n < 0: all), per
// values each, from every part's `rows`, on every part; any(flag) is true on every part when
// `flag` is true on any. Both are collectives (docs/scaling.md). Empty: the problem is the batch.
struct BatchView {
  std::function<std::vector<double>(const std::vector<double>&, size_t, int)> gather;
  std::function<bool(bool)> any;
};

// runs cfg.iterations steps from start and returns each rollout's best iterate (the last one
// unless a step made the loss worse); progress(it, mean loss) is called on every logged
// iteration (may be empty). With a view, p is one part of the batch and start, the result's
// vars and final are that part's rows, while the trace and progress are the whole batch's: the
// steps need nothing from the other parts, and only a logged iteration gathers its losses (8 B
// per rollout) and the first ≤ kTraceVarRollouts rollouts' variables.
OptimizationResult optimize(Problem& p, const OptimizerConfig& cfg,
                            const std::vector<double>& start,
                            const std::function<void(int, double)>& progress,
                            const BatchView& view = {});

nlohmann::json to_json(const OptimizationTrace& t);

}  // namespace steer
