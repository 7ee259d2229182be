// The gradient validator (docs/validation.md), a product feature: per-rollout directional
// centered finite differences over the rollout's variables, an ε sweep, and failure
// labels by physical cause, each with the figure that triggered it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "problem/problem.h"

namespace steer {

struct Label {
  std::string name;    // fd_mismatch, contact_mode_switch, gradient_vanishing, ...
  double figure = 0;   // the number that triggered it
  std::string detail;  // what the figure is, in words, with units
};

struct RolloutCheck {
  int rollout = 0;
  double loss = 0;
  double directional_adjoint = 0;      // ∇L·d
  double fd = 0, error = 0;            // centered FD and relative error at the primary ε
  std::vector<double> sweep_fd, sweep_error;  // per ε of the sweep
  std::vector<int> sweep_mode_switch;  // contact set differed between +ε and −ε
  double best_error = 0, best_epsilon = 0;
  double horizon_ratio = 1;            // ‖λ_0‖/‖λ_seed‖
  double energy_drift = 0;             // relative, for conservative rollouts
  // a float32 run checked on its float64 twin: ‖g₃₂ − g₆₄‖/‖g₆₄‖ of the run's own adjoint
  // gradient (absolute where g₆₄ = 0) and |L₃₂ − L₆₄|/|L₆₄|; −1 when not measured
  double float32_deviation = -1, float32_loss_deviation = -1;
  // the timestep check: ‖g_{h/2} − g_h‖/‖g_h‖ (absolute where g_h = 0) and |L_{h/2} − L_h|/|L_h|
  // of the same variables at half the timestep; −1 when not measured
  double timestep_gradient_change = -1, timestep_loss_change = -1;
  double timestep_gain_moved = -1;  // |L_{h/2} − L_h| / the optimization's gain (optima only)
  VelocityReversals reversals;  // the velocity that turns back most often (chatter count)
  bool passed = false;
  std::vector<Label> labels;
};

struct ValidationReport {
  std::string stage;  // "initial" or "final"
  std::vector<double> epsilons;
  double epsilon = 0, tolerance = 0;
  std::vector<RolloutCheck> rollouts;
  int passed = 0;
  double max_error = 0, median_error = 0;
  std::map<std::string, int> label_counts;
  bool all_passed() const { return passed == int(rollouts.size()); }
  int forward_passes = 0;  // batched forward passes the check cost
  // float32 runs: the checked problem is the float64 twin of the run's (run_problem below)
  bool float32_compared = false;
  double float32_tolerance = 0, float32_max_deviation = 0, float32_median_deviation = 0;
  bool timestep_checked = false;
  bool timestep_on_gain = false;  // the figure is timestep_gain_moved, not the gradient change
  double timestep_tolerance = 0, timestep_max_change = 0, timestep_median_change = 0;
};

// relative error |fd − ad| / max(|fd|, |ad|, atol): absolute below atol
double relative_error(double fd, double ad, double atol);

// checks ∇L at vars for the first min(B, cfg.max_rollouts) rollouts. A float32 run is checked
// on `problem`, its float64 twin (float32 central differences cannot resolve the tolerance),
// and passes its own problem as run_problem: the run's float32 adjoint gradient is then compared
// with problem's float64 one per rollout, and a rollout fails, labelled float32_rounding, when
// they differ by more than cfg.float32_tolerance (relative), since the run optimizes with the
// float32 gradient, not with the float64 one that passed the check.
// half_step, when given, is `problem` at half the timestep in the same variables
// (HalfStepProblem). Without loss_gain, a rollout whose gradient there differs from the one at h
// by more than cfg.timestep_tolerance, ‖g(h/2) − g(h)‖/max(‖g(h)‖, abs_tolerance), is labelled
// timestep_sensitive. With loss_gain (per rollout, what an optimization gained: |L(start) −
// L(vars)| at h), vars is an optimum, where the gradient is ~0 at h by construction, and the
// figure is the share of that gain that re-simulating at h/2 moves, |L_{h/2} − L_h|/gain. The
// label does not fail the check: the gradient is right for the discretized model, whose answer
// depends on h.
// start_gradient_norm, when given (per rollout, ‖∇L‖ where the optimization started), also scales
// the float32 deviation: at an optimum ‖g64‖ ~ 0 and the float32 gradient is rounding of the
// size float32 resolves near it, so ‖g32 − g64‖ is measured against max(‖g64‖, ‖∇L(start)‖).
ValidationReport validate(Problem& problem, const std::vector<double>& vars, const ValidationConfig& cfg,
                          const std::string& stage, Problem* run_problem = nullptr, Problem* half_step = nullptr,
                          const std::vector<double>* loss_gain = nullptr,
                          const std::vector<double>* start_gradient_norm = nullptr);

// artifact form; rollouts beyond max_listed are summarized only
nlohmann::json to_json(const ValidationReport& r, int max_listed);

}  // namespace steer
