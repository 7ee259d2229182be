// Gradient descent and Adam with box bounds, every rollout of the batch optimized
// independently in one batched loop: one forward+backward pass per iteration for all.
#pragma once

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"
#include "problem.h"

namespace steer {

struct OptimizationTrace {
  std::vector<int> iteration;
  std::vector<double> loss_mean, loss_min, loss_max;  // over the batch
  std::vector<std::vector<double>> loss_rollouts;     // per logged iteration, first ≤ 16 rollouts
};

struct OptimizationResult {
  std::vector<double> vars;  // [B·nv] final iterate
  Evaluation final;          // loss, gradient and diagnostics at the final iterate
  OptimizationTrace trace;
  int iterations = 0;
  double seconds = 0;
};

// appends iteration `it` with the batch's losses to the trace (mean, min, max, first ≤ 16)
void record_losses(OptimizationTrace& t, int it, const std::vector<double>& loss);

// clamps every variable into [lower_i, upper_i]
void project_to_bounds(const Problem& p, std::vector<double>& vars);

// runs cfg.iterations steps from start and returns each rollout's best iterate (the last one
// unless a step made the loss worse); progress(it, mean loss) is called on every logged
// iteration (may be empty)
OptimizationResult optimize(Problem& p, const OptimizerConfig& cfg, const std::vector<double>& start,
                            const std::function<void(int, double)>& progress);

nlohmann::json to_json(const OptimizationTrace& t);

}  // namespace steer
