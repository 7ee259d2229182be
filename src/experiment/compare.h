// `steer compare CONFIG`: gradient-based optimization (Adam, gradient descent or L-BFGS-B on
// the adjoint gradient) against CMA-ES on the same robot, horizon and loss, with the cost of
// both counted in simulated rollouts: a CMA-ES candidate is one forward rollout; a gradient
// evaluation is one forward plus one backward pass, counted as 1 + r rollouts with
// r = t_backward / t_forward measured on this machine in the same run (thread CPU time on the
// CPU backend). The gradient side may run several starts as one batch and continuation
// phases (shorter horizon, smoother ground) before the real problem: every start pays for
// every pass, and its curve is the best real loss over all starts against the total cost.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/experiment.h"

namespace steer {

struct CompareCurve {
  std::string method;
  int group = 0;                  // plot colour and legend entry: 0 the gradient side, 1 CMA-ES
  std::vector<double> rollouts;   // cumulative forward-rollout equivalents
  std::vector<double> best_loss;  // best loss so far
};

// rollouts a curve needs to reach loss ≤ level (−1 if it never does)
double rollouts_to_reach(const CompareCurve& c, double level);

// a small SVG line plot of the curves: log10 rollouts on x, loss on y
std::string svg_plot(const std::vector<CompareCurve>& curves, const std::string& title);

RunOutcome run_compare(const ExperimentConfig& c, const RunOptions& o);

}  // namespace steer
