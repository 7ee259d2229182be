// Training over windows of W steps (optimizer.window; docs/config.md, "Windows"): truncated
// backpropagation through time, as SHAC trains a policy over short horizons. Each evaluate()
// runs the next window of every world, W steps from the state the world carried out of its last
// window, and returns the window's loss and its gradient with respect to θ with that start held
// constant; the optimizer steps once per window. A world goes back to its start state (its
// drawn x0) when its windows reach the horizon T or a reset condition holds at a window's end
// (a fall: a height below a threshold), or when its state is not finite.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "problem/problem.h"

namespace steer {

class WindowedProblem : public Problem {
 public:
  WindowedProblem(const ExperimentConfig& c, BackendKind backend, int threads);

  // the next window of every world: L_b = the window's loss terms (its centre-of-mass
  // displacement c(x_e) − c(x_s), its control effort, a terminal_linear term as w (x_e − x_s));
  // then each world's state moves on to x_e, or back to its start
  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override;
  // of the window evaluate() runs next
  std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) override {
    return inner_->trajectories(vars, n, stride);
  }
  std::vector<double> parameters(const std::vector<double>& vars) override {
    return inner_->parameters(vars);
  }

  // the artifact's optimization.window: W, the resets by cause and per window (the first
  // kMaxListed) its mean loss, mean gradient norm and the adjoint's growth ‖λ_s‖/‖λ_e‖
  nlohmann::json summary() const;
  static constexpr int kMaxListed = 2000;

 private:
  void advance(const std::vector<double>& ends, const std::vector<double>& theta);

  ExperimentConfig c_;
  std::unique_ptr<Problem> inner_;  // the config at W steps
  int W_ = 0, T_ = 0, nu_ = 0;
  std::vector<double> start_x0_, u_;  // the worlds' starts [B·nx] and controls [B·T·nu]
  std::vector<double> carried_;       // each world's state at its next window's start [B·nx]
  std::vector<int> step_;             // each world's step index there
  long long windows_ = 0, horizon_resets_ = 0, nonfinite_resets_ = 0;
  std::vector<long long> condition_resets_;  // per optimizer.window.reset entry
  nlohmann::json listed_ = nlohmann::json::array();
};

}  // namespace steer
