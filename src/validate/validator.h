// The gradient validator (docs/validation.md), a product feature: per-rollout directional
// centered finite differences over the rollout's variables, an ε sweep, and failure
// labels by physical cause, each with the figure that triggered it.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "problem/problem.h"

namespace steer {

// The secant check (label secant_mismatch, docs/validation.md): on rollouts with contact, the
// gradient's directional derivative ∇L·d against the slope of the loss over a wide,
// physical-scale ε along the same direction d, Richardson-extrapolated from the secants at ε and
// ε/2 so that a smooth loss's curvature cancels to O(ε⁴):
//   S(ε) = (L(v + εd) − L(v − εd))/(2ε),   S_w = (4 S(ε/2) − S(ε))/3.
// A time-discretized contact law can have a derivative that agrees with finite differences of
// its own forward pass (the FD check passes) and still miss the slope of the loss by O(1)
// whatever h: the loss is then a sawtooth of O(h) teeth around the right slope. The FD check's
// ε resolves single teeth; ε here spans many.
// Settings under validation: secant_check (bool), secant_epsilon (ε, in the direction's
// scaled units), secant_tolerance (ValidationConfig holds them; secant_check_of copies them).
struct SecantCheckConfig {
  bool enabled = true;
  // ε [scaled variable units]: d is a unit vector in the variables scaled by max(|v_i|, 1), so
  // 0.05 moves a 0.5 m drop height by ~3.5 cm in two variables: some ten impact steps at
  // h = 1 ms and v_c = 3 m/s, where one tooth is v_c h = 3 mm
  double epsilon = 0.05;
  // |S_w − ∇L·d| / max(|S_w|, |∇L·d|, ‖D∇L‖/√n, floor) above this is labelled: a bias that
  // does not shrink with h is of order one, an O(h) discretization error where the motion is
  // resolved stays well under it (docs/validation.md, secant_mismatch, gives the figures)
  double tolerance = 0.2;
};

// the secant check's settings of a config's validation section
SecantCheckConfig secant_check_of(const ValidationConfig& validation);

struct Label {
  std::string name;    // fd_mismatch, contact_mode_switch, gradient_vanishing, ...
  double figure = 0;   // the number that triggered it
  std::string detail;  // what the figure is, in words, with units
};

struct RolloutCheck {
  int rollout = 0;
  double loss = 0;
  double directional_adjoint = 0;             // ∇L·d
  double fd = 0, error = 0;                   // centered FD and relative error at the primary ε
  std::vector<double> sweep_fd, sweep_error;  // per ε of the sweep
  std::vector<int> sweep_mode_switch;         // contact set differed between +ε and −ε
  double best_error = 0, best_epsilon = 0;
  double horizon_ratio = 1;  // ‖λ_0‖/‖λ_seed‖
  double energy_drift = 0;   // relative, for conservative rollouts
  // a float32 run checked on its float64 twin: ‖g₃₂ − g₆₄‖/‖g₆₄‖ of the run's own adjoint
  // gradient (absolute where g₆₄ = 0) and |L₃₂ − L₆₄|/|L₆₄|; −1 when not measured
  double float32_deviation = -1, float32_loss_deviation = -1;
  // the timestep check: ‖g_{h/2} − g_h‖/‖g_h‖ (absolute where g_h = 0) and |L_{h/2} − L_h|/|L_h|
  // of the same variables at half the timestep; −1 when not measured
  double timestep_gradient_change = -1, timestep_loss_change = -1;
  double timestep_gain_moved = -1;  // |L_{h/2} − L_h| / the optimization's gain (optima only)
  // the secant check: S_w of the loss over ±secant ε (SecantCheckConfig) and its mismatch with
  // ∇L·d; NaN / −1 when not measured (no contact, check off, non-finite rollout)
  double secant_slope = std::nan(""), secant_mismatch = -1;
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
  bool secant_checked = false;  // some checked rollout had contact and the check is on
  double secant_epsilon = 0, secant_tolerance = 0, secant_max_mismatch = 0;
  int secant_rollouts = 0;  // rollouts measured (those with contact)
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
// size float32 resolves near it, so ‖g32 − g64‖ is measured against max(‖g64‖, ‖∇L(start)‖);
// and likewise the secant check's mismatch.
// secant: the secant check's settings (SecantCheckConfig; the defaults when not given). It runs
// on the checked rollouts that touched a contact (RolloutDiag::contact_steps > 0) and costs
// four batched forward passes, none when no checked rollout has contact.
// A rollout whose loss, a state or a gradient component is not finite gets the nonfinite label
// only: the other measures are figures of a gradient that does not exist.
// progress, when given, is called after each batched pass with (passes done, passes in all):
// the total is known once the gradient pass at vars has shown which rollouts touch a contact
// (the secant check's passes), so the first call is (1, total) and the last (total, total).
// It only reports: the result is the same with or without it.
using ValidationProgress = std::function<void(long long done, long long total)>;
ValidationReport validate(Problem& problem, const std::vector<double>& vars,
                          const ValidationConfig& cfg, const std::string& stage,
                          Problem* run_problem = nullptr, Problem* half_step = nullptr,
                          const std::vector<double>* loss_gain = nullptr,
                          const std::vector<double>* start_gradient_norm = nullptr,
                          const SecantCheckConfig& secant = SecantCheckConfig(),
                          const ValidationProgress& progress = ValidationProgress());

// artifact form; rollouts beyond max_listed are summarized only
nlohmann::json to_json(const ValidationReport& r, int max_listed);

}  // namespace steer
