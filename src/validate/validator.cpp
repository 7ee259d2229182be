#include "validate/validator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

#include "config/json_reader.h"

namespace steer {

SecantCheckConfig secant_check_of(const ValidationConfig& v) {
  SecantCheckConfig sc;
  sc.enabled = v.secant_check;
  sc.epsilon = v.secant_epsilon;
  sc.tolerance = v.secant_tolerance;
  return sc;
}

double relative_error(double fd, double ad, double atol) {
  const double scale = std::max({std::fabs(fd), std::fabs(ad), atol});
  return std::fabs(fd - ad) / scale;
}

namespace {

bool contact_set_differs(const RolloutDiag& a, const RolloutDiag& b) {
  return a.contact_hash != b.contact_hash || a.contact_steps != b.contact_steps ||
         a.event_step != b.event_step;
}

// ‖a − ref‖ / max(‖ref‖, floor) over n components (‖a − ref‖ where both are 0)
double relative_distance(const double* a, const double* ref, int n, double floor = 0) {
  double d2 = 0, r2 = 0;
  for (int i = 0; i < n; ++i) {
    d2 += (a[i] - ref[i]) * (a[i] - ref[i]);
    r2 += ref[i] * ref[i];
  }
  const double scale = std::max(std::sqrt(r2), floor);
  return scale > 0 ? std::sqrt(d2) / scale : std::sqrt(d2);
}

// the largest (NaN wins) and the median of v
std::pair<double, double> max_and_median(std::vector<double> v) {
  double worst = 0;
  for (double x : v)
    if (!(x <= worst)) worst = x;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return {worst, v.empty() ? 0.0 : v[v.size() / 2]};
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

}  // namespace

namespace {

// One validate call: its inputs, and what its batched passes measured, shared by the stages
// below (each fills its part, then the per-rollout checks read them).
struct CheckContext {
  // inputs (validate's parameters)
  Problem& problem;
  const std::vector<double>& vars;
  const ValidationConfig& cfg;
  Problem* run_problem;                  // the float32 run whose gradient is compared, or null
  Problem* half_step;                    // problem at h/2, or null
  const std::vector<double>* loss_gain;  // per rollout, at an optimum; or null
  const std::vector<double>* start_gradient_norm;  // per rollout, where the run started; or null
  const SecantCheckConfig& secant;
  const ValidationProgress& progress;
  int B = 0, nv = 0, n = 0, T = 0;  // batch, variables per rollout, rollouts checked, steps

  CheckContext(Problem& problem, const std::vector<double>& vars, const ValidationConfig& cfg,
               Problem* run_problem, Problem* half_step, const std::vector<double>* loss_gain,
               const std::vector<double>* start_gradient_norm, const SecantCheckConfig& secant,
               const ValidationProgress& progress)
      : problem(problem),
        vars(vars),
        cfg(cfg),
        run_problem(run_problem),
        half_step(half_step),
        loss_gain(loss_gain),
        start_gradient_norm(start_gradient_norm),
        secant(secant),
        progress(progress) {}

  // the gradient pass at vars, and which rollouts it left finite / with contact
  Evaluation base;
  std::vector<char> finite_base, secant_on;
  // the optional passes: deepest penetration, the run's float32 gradient, velocity reversals,
  // the gradient at h/2
  std::vector<double> depth;
  std::vector<double> volume_ratio;  // the smallest element J = det F per rollout (inversion check)
  Evaluation run;
  std::vector<VelocityReversals> reversals;
  Evaluation half;
  // the directions d_b and ∇L·d_b
  std::vector<double> dir, dad;
  // the ε sweep (the primary ε first): centered differences, contact-set switches (bit 0) and
  // non-finite ends (bit 1) per ε and rollout, and the +ε rollouts' diagnostics
  std::vector<double> eps;
  std::vector<std::vector<double>> fd;
  std::vector<std::vector<int>> switched;
  std::vector<std::vector<RolloutDiag>> plus_diag;
  // the secant check's S(ε) and S(ε/2) per rollout
  std::vector<double> secant_full, secant_half;

  // progress: the batched passes done and in all
  long long passes_done = 0, passes_total = 0;
  void passed(int k) {
    passes_done += k;
    if (progress) progress(passes_done, passes_total);
  }
};

// the gradient at vars (one forward + backward pass); which rollouts are finite and which of
// those the secant check measures (they touched a contact); then the count of passes in all
void gradient_pass(CheckContext& x, ValidationReport& rep) {
  const ValidationConfig& cfg = x.cfg;
  x.problem.evaluate(x.vars, true, x.base);
  x.finite_base.assign(x.B, 0);
  x.secant_on.assign(x.B, 0);
  for (int b = 0; b < x.n; ++b) {
    bool ok = std::isfinite(x.base.loss[b]) && !x.base.diag[b].nonfinite;
    for (int i = 0; i < x.nv && ok; ++i) ok = std::isfinite(x.base.grad[size_t(b) * x.nv + i]);
    x.finite_base[b] = ok;
    if (x.secant.enabled && ok && x.base.diag[b].contact_steps > 0) {
      x.secant_on[b] = 1;
      ++rep.secant_rollouts;
    }
  }
  // the batched passes of this check, for progress: the gradient here, the optional passes
  // (penetration, float32 gradient, reversals, h/2 gradient), two per ε of the sweep and the
  // secant check's four
  x.passes_total = 1 + (cfg.penetration_bound > 0) + cfg.inversion_check +
                   (x.run_problem != nullptr) + (cfg.chatter_fraction > 0) +
                   (x.half_step != nullptr) + 2 * (1 + (long long)cfg.epsilon_sweep.size()) +
                   (rep.secant_rollouts > 0 ? 4 : 0);
  x.passed(1);
}

// the passes the labels compare against: penetration depths, the run's own float32 gradient,
// velocity reversals and the gradient at h/2, each when asked for
void reference_passes(CheckContext& x, ValidationReport& rep) {
  const ValidationConfig& cfg = x.cfg;
  // deepest penetration per rollout, for the penetration label (models with contact points)
  if (cfg.penetration_bound > 0) {
    x.depth = x.problem.max_penetration(x.vars, x.n);
    x.passed(1);
  }
  // the smallest element volume ratio per rollout, for the inverted_element label
  if (cfg.inversion_check) {
    x.volume_ratio = x.problem.min_volume_ratio(x.vars, x.n);
    x.passed(1);
  }
  // the run's own (float32) gradient at the same variables, one more forward + backward pass
  if (x.run_problem) {
    x.run_problem->evaluate(x.vars, true, x.run);
    x.passed(1);
    rep.float32_compared = true;
    rep.float32_tolerance = cfg.float32_tolerance;
  }
  // the velocity that turns back most often, per rollout: one more forward pass keeping every state
  if (cfg.chatter_fraction > 0) {
    x.reversals = x.problem.velocity_reversals(x.vars, x.n);
    x.passed(1);
  }
  // the same variables at half the timestep
  if (x.half_step) {
    x.half_step->evaluate(x.vars, true, x.half);
    x.passed(1);
    rep.timestep_checked = true;
    rep.timestep_tolerance = cfg.timestep_tolerance;
  }
}

// per rollout a random direction d_b = D z / |z|, z ~ N(0, I), with D = diag(max(|v_i|, 1)):
// unit in variables scaled to their magnitude, so stiffness-sized and velocity-sized variables
// are perturbed alike; and ∇L·d_b
void draw_directions(CheckContext& x) {
  const int nv = x.nv;
  x.dir.assign(size_t(x.B) * nv, 0.0);
  x.dad.assign(x.B, 0.0);
  for (int b = 0; b < x.n; ++b) {
    std::mt19937_64 rng(x.cfg.seed * 1000003ull + std::uint64_t(b));
    std::normal_distribution<double> gauss(0.0, 1.0);
    double norm = 0;
    for (int i = 0; i < nv; ++i) {
      double z = gauss(rng);
      x.dir[size_t(b) * nv + i] = z;
      norm += z * z;
    }
    norm = std::sqrt(norm);
    for (int i = 0; i < nv; ++i) {
      double& d = x.dir[size_t(b) * nv + i];
      d = d / norm * std::max(std::fabs(x.vars[size_t(b) * nv + i]), 1.0);
      x.dad[b] += x.base.grad[size_t(b) * nv + i] * d;
    }
  }
}

// L(vars ± e d) for every rollout: two batched forward passes
void evaluate_pair(CheckContext& x, ValidationReport& rep, double e, Evaluation& ep,
                   Evaluation& em) {
  std::vector<double> vp(x.vars.size()), vm(x.vars.size());
  for (size_t i = 0; i < x.vars.size(); ++i) {
    vp[i] = x.vars[i] + e * x.dir[i];
    vm[i] = x.vars[i] - e * x.dir[i];
  }
  x.problem.evaluate(vp, false, ep);
  x.problem.evaluate(vm, false, em);
  rep.forward_passes += 2;
  x.passed(2);
}

// (L(v + εd) − L(v − εd)) / 2ε for every ε, the primary one first
void fd_sweep(CheckContext& x, ValidationReport& rep) {
  x.eps = x.cfg.epsilon_sweep;
  x.eps.insert(x.eps.begin(), x.cfg.epsilon);
  const size_t ne = x.eps.size();
  x.fd.assign(ne, std::vector<double>(x.B, 0.0));
  x.switched.assign(ne, std::vector<int>(x.B, 0));
  x.plus_diag.assign(ne, {});
  for (size_t e = 0; e < ne; ++e) {
    Evaluation ep, em;
    evaluate_pair(x, rep, x.eps[e], ep, em);
    for (int b = 0; b < x.n; ++b) {
      x.fd[e][b] = (ep.loss[b] - em.loss[b]) / (2 * x.eps[e]);
      x.switched[e][b] = contact_set_differs(ep.diag[b], em.diag[b]) ? 1 : 0;
      if (!std::isfinite(ep.loss[b]) || !std::isfinite(em.loss[b])) x.switched[e][b] |= 2;
    }
    x.plus_diag[e] = ep.diag;
  }
}

// the secant check on the rollouts with contact: S(ε) and S(ε/2) over the same directions
void secant_passes(CheckContext& x, ValidationReport& rep) {
  x.secant_full.assign(x.B, 0.0);
  x.secant_half.assign(x.B, 0.0);
  if (rep.secant_rollouts == 0) return;
  rep.secant_checked = true;
  rep.secant_epsilon = x.secant.epsilon;
  rep.secant_tolerance = x.secant.tolerance;
  for (int half_eps = 0; half_eps < 2; ++half_eps) {
    const double e = half_eps ? 0.5 * x.secant.epsilon : x.secant.epsilon;
    Evaluation ep, em;
    evaluate_pair(x, rep, e, ep, em);
    for (int b = 0; b < x.n; ++b)
      (half_eps ? x.secant_half : x.secant_full)[b] = (ep.loss[b] - em.loss[b]) / (2 * e);
  }
}

// rollout b's finite differences against ∇L·d: the error at the primary ε and over the sweep,
// and the pass (the best agreement over the sweep within tolerance: the Taylor test separates
// truncation at large ε and rounding at small ε from a real bias, which shows as an error
// floor at every ε). finite: whether the rollout's loss, states and gradient are; a rollout
// that is not gets the nonfinite label only
RolloutCheck fd_check(const CheckContext& x, int b, bool& finite) {
  const ValidationConfig& cfg = x.cfg;
  RolloutCheck rc;
  rc.rollout = b;
  rc.loss = x.base.loss[b];
  rc.directional_adjoint = x.dad[b];
  rc.fd = x.fd[0][b];
  rc.error = relative_error(rc.fd, rc.directional_adjoint, cfg.abs_tolerance);
  rc.best_error = rc.error;
  rc.best_epsilon = x.eps[0];
  for (size_t e = 1; e < x.eps.size(); ++e) {
    const double err = relative_error(x.fd[e][b], rc.directional_adjoint, cfg.abs_tolerance);
    rc.sweep_fd.push_back(x.fd[e][b]);
    rc.sweep_error.push_back(err);
    rc.sweep_mode_switch.push_back(x.switched[e][b] & 1);
    if (err < rc.best_error) {
      rc.best_error = err;
      rc.best_epsilon = x.eps[e];
    }
  }
  finite = x.finite_base[b] && std::isfinite(rc.directional_adjoint);
  rc.passed = finite && rc.best_error <= cfg.tolerance;
  if (!finite) {
    // nothing else: every other label's figure would be a measure of a gradient that does not
    // exist (the h/2 change, the float32 deviation, the horizon ratio are NaN or inf)
    rc.labels.push_back(
        {"nonfinite", 1, "the loss, a state or a gradient component is inf or NaN"});
    return rc;
  }
  if (rc.best_error > cfg.tolerance)
    rc.labels.push_back({"fd_mismatch", rc.best_error,
                         "smallest relative error over the ε sweep (at ε = " +
                             fmt(rc.best_epsilon) + "), tolerance " + fmt(cfg.tolerance)});
  return rc;
}

// contact_mode_switch: the contact set differs between the +ε and −ε rollouts, at the primary
// ε or at some ε of the sweep
void label_contact_switch(const CheckContext& x, int b, RolloutCheck& rc) {
  const RolloutDiag& dg = x.base.diag[b];
  if (x.switched[0][b] & 1) {
    const RolloutDiag& dp = x.plus_diag[0][b];
    std::ostringstream d;
    d << "contact set differs between the +ε and −ε rollouts at ε = " << x.eps[0]
      << ": active contact-steps " << dp.contact_steps << " vs baseline " << dg.contact_steps;
    if (dp.event_step != dg.event_step)
      d << "; landing step " << dp.event_step << " vs " << dg.event_step;
    rc.labels.push_back(
        {"contact_mode_switch", double(std::abs(dp.contact_steps - dg.contact_steps)), d.str()});
    return;
  }
  int nsw = 0;
  double first = 0;
  for (size_t e = 0; e < rc.sweep_mode_switch.size(); ++e)
    if (rc.sweep_mode_switch[e]) {
      if (!nsw) first = x.eps[e + 1];
      ++nsw;
    }
  if (nsw)
    rc.labels.push_back({"contact_mode_switch", first,
                         "contact set differs between the +ε and −ε rollouts at " +
                             std::to_string(nsw) +
                             " ε of the sweep, the largest being ε = " + fmt(first)});
}

// the labels of the rollout's own diagnostics: the horizon ratio (gradient_vanishing,
// gradient_exploding), penetration, inverted_element, energy_drift
void label_diagnostics(const CheckContext& x, int b, RolloutCheck& rc) {
  const ValidationConfig& cfg = x.cfg;
  const RolloutDiag& dg = x.base.diag[b];
  // the horizon ratio: how much the adjoint grows or shrinks walking back over the horizon,
  // measured on the state adjoint (‖λ_0‖/‖λ_seed‖) or on the control gradient
  // (‖∂L/∂u_0‖/‖∂L/∂u_{T−1}‖), as validation.horizon_measure says
  const bool by_controls = cfg.horizon_measure == "controls";
  const double h_num = by_controls ? dg.grad_u_first_norm : dg.adj_x0_norm;
  const double h_den = by_controls ? dg.grad_u_last_norm : dg.adj_seed_norm;
  const std::string h_what = by_controls ? "‖∂L/∂u_0‖/‖∂L/∂u_{T−1}‖" : "‖λ_0‖/‖λ_seed‖";
  if (h_den > 0) {
    rc.horizon_ratio = h_num / h_den;
    if (rc.horizon_ratio < 1.0 / cfg.horizon_ratio_bound)
      rc.labels.push_back({"gradient_vanishing", rc.horizon_ratio,
                           h_what + " over the horizon, bound 1/" + fmt(cfg.horizon_ratio_bound)});
    if (rc.horizon_ratio > cfg.horizon_ratio_bound)
      rc.labels.push_back({"gradient_exploding", rc.horizon_ratio,
                           h_what + " over the horizon, bound " + fmt(cfg.horizon_ratio_bound)});
  }
  if (cfg.penetration_bound > 0 && size_t(b) < x.depth.size() && x.depth[b] > cfg.penetration_bound)
    rc.labels.push_back(
        {"penetration", x.depth[b],
         "deepest penetration of a contact point below its surface over the rollout [m], bound " +
             fmt(cfg.penetration_bound)});
  // an inverted (or flat) element: the hyperelastic energy still pushes it back, but the
  // element's stress and its derivative there are far from the material's tested range, and a
  // mesh that folds through itself is not the body being modelled
  if (cfg.inversion_check && size_t(b) < x.volume_ratio.size() && x.volume_ratio[b] <= 0)
    rc.labels.push_back(
        {"inverted_element", x.volume_ratio[b],
         "the smallest element volume ratio J = det F over the rollout [1], bound 0"});
  if (dg.conservative) {
    rc.energy_drift = dg.energy_max_dev / std::max(dg.kinetic_max, 1e-12);
    if (rc.energy_drift > cfg.energy_drift_bound)
      rc.labels.push_back(
          {"energy_drift", rc.energy_drift,
           "max_k |E_k − E_0| / max_k KE_k in free motion, bound " + fmt(cfg.energy_drift_bound)});
  }
}

// the float32 comparison: the run's float32 gradient against the float64 one checked here; a
// rollout over the tolerance, or whose float32 run is not finite, fails
void float32_check(const CheckContext& x, int b, RolloutCheck& rc) {
  const ValidationConfig& cfg = x.cfg;
  const int nv = x.nv;
  // against max(‖g64‖, abs_tolerance), and at an optimum against the gradient where the
  // optimization started (‖g64‖ ~ 0 there, and float32 resolves no gradient below its rounding)
  double floor = cfg.abs_tolerance;
  if (x.start_gradient_norm && size_t(b) < x.start_gradient_norm->size())
    floor = std::max(floor, (*x.start_gradient_norm)[size_t(b)]);
  rc.float32_deviation = relative_distance(x.run.grad.data() + size_t(b) * nv,
                                           x.base.grad.data() + size_t(b) * nv, nv, floor);
  const double l = std::fabs(x.base.loss[b]);
  rc.float32_loss_deviation = std::fabs(x.run.loss[b] - x.base.loss[b]) / (l > 0 ? l : 1.0);
  // a float32 run that overflows (its loss or gradient inf or NaN while the float64 twin's
  // is finite) fails as nonfinite: its deviation has no value
  bool run_finite = std::isfinite(x.run.loss[b]) && !x.run.diag[b].nonfinite;
  for (int i = 0; i < nv && run_finite; ++i)
    run_finite = std::isfinite(x.run.grad[size_t(b) * nv + i]);
  if (!run_finite) {
    rc.passed = false;
    rc.labels.push_back(
        {"nonfinite", 1,
         "the float32 run's loss, a state or a gradient component is inf or NaN (its float64 twin "
         "is finite): float32 overflow; run in float64"});
  } else if (!(rc.float32_deviation <= cfg.float32_tolerance)) {
    rc.passed = false;
    rc.labels.push_back(
        {"float32_rounding", rc.float32_deviation,
         "‖g32 − g64‖/‖g64‖ of the run's float32 adjoint gradient against the float64 one at "
         "the same variables (float32 loss off by " +
             fmt(rc.float32_loss_deviation) + " relative), tolerance " +
             fmt(cfg.float32_tolerance) + ": rounding amplified over the horizon; run in float64"});
  }
}

// chatter: a velocity component that turns back at more than chatter_fraction of the steps
void label_chatter(const CheckContext& x, int b, RolloutCheck& rc) {
  const ValidationConfig& cfg = x.cfg;
  const int T = x.T;
  rc.reversals = x.reversals[size_t(b)];
  const VelocityReversals& vr = rc.reversals;
  const double fraction = T > 1 ? double(vr.count) / double(T - 1) : 0.0;
  if (vr.component >= 0 && fraction > cfg.chatter_fraction) {
    std::ostringstream d;
    d << vr.name << " turns back at " << vr.count << " of " << T - 1 << " steps (steps "
      << vr.first_step << " … " << vr.last_step << ", median jump " << fmt(vr.median_jump)
      << " against a largest |v| of " << fmt(vr.largest) << "), fraction above "
      << fmt(cfg.chatter_fraction) << ": an oscillation of period ≤ "
      << fmt(2.0 / cfg.chatter_fraction)
      << " steps that the timestep does not resolve (a saturated servo under implicitfast, a stiff "
         "spring or contact at its stability limit)";
    if (!cfg.chatter_remedy.empty()) d << "; remedy: " << cfg.chatter_remedy;
    rc.labels.push_back({"chatter", fraction, d.str()});
  }
}

// the timestep check: the gradient at h/2 against the one at h (or, at an optimum, the share
// of the optimization's gain that re-simulating at h/2 moves); timestep_sensitive above the
// tolerance
void timestep_check(const CheckContext& x, int b, RolloutCheck& rc) {
  const ValidationConfig& cfg = x.cfg;
  const int nv = x.nv;
  const Evaluation& half = x.half;
  const Evaluation& base = x.base;
  // a gradient of rounding size (at an optimum, say) is compared absolutely, as in the FD check
  rc.timestep_gradient_change = relative_distance(
      half.grad.data() + size_t(b) * nv, base.grad.data() + size_t(b) * nv, nv, cfg.abs_tolerance);
  const double l = std::fabs(base.loss[b]);
  rc.timestep_loss_change = std::fabs(half.loss[b] - base.loss[b]) / (l > 0 ? l : 1.0);
  double figure = rc.timestep_gradient_change;
  std::string what =
      "‖g(h/2) − g(h)‖/max(‖g(h)‖, " + fmt(cfg.abs_tolerance) +
      ") of the same variables at half the timestep (2T steps, each control held over both half "
      "steps; the loss changes by " +
      fmt(rc.timestep_loss_change) + " relative)";
  if (x.loss_gain && size_t(b) < x.loss_gain->size()) {
    const double gain = (*x.loss_gain)[size_t(b)];
    rc.timestep_gain_moved =
        std::fabs(half.loss[b] - base.loss[b]) / std::max(gain, 1e-12 + 1e-9 * l);
    figure = rc.timestep_gain_moved;
    what = "|L(h/2) − L(h)| at the optimum over what the optimization gained, " + fmt(gain) +
           " (2T steps, each control held over both half steps)";
  }
  bool half_finite = std::isfinite(half.loss[b]) && !half.diag[b].nonfinite;
  for (int i = 0; i < nv && half_finite; ++i)
    half_finite = std::isfinite(half.grad[size_t(b) * nv + i]);
  if (!half_finite)
    rc.labels.push_back(
        {"timestep_sensitive", 1,
         "the same variables at half the timestep give a loss, state or gradient that is inf or "
         "NaN (figure 1: the gradient changes entirely): the result depends on the "
         "discretization"});
  else if (!(figure <= cfg.timestep_tolerance))
    rc.labels.push_back(
        {"timestep_sensitive", figure,
         what + ", tolerance " + fmt(cfg.timestep_tolerance) +
             ": the result depends on the discretization (stiff contact, chatter, chaos)"});
}

// the secant check: the Richardson slope S_w = (4 S(ε/2) − S(ε))/3 against ∇L·d;
// secant_mismatch above the tolerance
void secant_check(const CheckContext& x, int b, RolloutCheck& rc, ValidationReport& rep) {
  const ValidationConfig& cfg = x.cfg;
  const int nv = x.nv;
  rc.secant_slope = (4 * x.secant_half[b] - x.secant_full[b]) / 3;
  // the floor: the directional slope a gradient of this length has along a random unit
  // direction, ‖D∇L‖/√n (so an unlucky d nearly orthogonal to ∇L does not inflate the figure),
  // abs_tolerance, and at an optimum (∇L ~ 0 by construction) ‖∇L‖ where the run started
  double scaled2 = 0;
  for (int i = 0; i < nv; ++i) {
    const double gi =
        x.base.grad[size_t(b) * nv + i] * std::max(std::fabs(x.vars[size_t(b) * nv + i]), 1.0);
    scaled2 += gi * gi;
  }
  double floor = std::max(std::sqrt(scaled2 / std::max(nv, 1)), cfg.abs_tolerance);
  if (x.start_gradient_norm && size_t(b) < x.start_gradient_norm->size())
    floor = std::max(floor, (*x.start_gradient_norm)[size_t(b)]);
  const double ad = rc.directional_adjoint;
  if (std::isfinite(rc.secant_slope)) {
    rc.secant_mismatch = std::fabs(rc.secant_slope - ad) /
                         std::max({std::fabs(rc.secant_slope), std::fabs(ad), floor});
    if (rc.secant_mismatch > x.secant.tolerance)
      rc.labels.push_back(
          {"secant_mismatch", rc.secant_mismatch,
           "|S − ∇L·d| / max(|S|, |∇L·d|, " + fmt(floor) + ") with ∇L·d = " + fmt(ad) +
               " and S = " + fmt(rc.secant_slope) + ", the loss's slope over ±" +
               fmt(x.secant.epsilon) + " along d (Richardson from ε and ε/2), tolerance " +
               fmt(x.secant.tolerance) +
               ": the gradient does not give the loss's slope at this scale (a contact law "
               "whose derivative is biased at every timestep, or a loss rough at this scale)"});
  }
  rep.secant_max_mismatch = std::max(rep.secant_max_mismatch, rc.secant_mismatch);
}

// rollout b checked: the FD check, then (when its gradient is finite) every label and
// comparison the passes measured
RolloutCheck check_rollout(const CheckContext& x, int b, ValidationReport& rep) {
  bool finite = false;
  RolloutCheck rc = fd_check(x, b, finite);
  if (!finite) return rc;
  label_contact_switch(x, b, rc);
  label_diagnostics(x, b, rc);
  if (x.run_problem) float32_check(x, b, rc);
  if (size_t(b) < x.reversals.size()) label_chatter(x, b, rc);
  if (x.half_step) timestep_check(x, b, rc);
  if (x.secant_on[b]) secant_check(x, b, rc, rep);
  return rc;
}

// the report's counts: labels, passes, the largest (NaN wins) and median FD error, and the
// float32 and timestep figures over the checked rollouts
void summarize_checks(const CheckContext& x, ValidationReport& rep) {
  std::vector<double> errors;
  for (const RolloutCheck& rc : rep.rollouts) {
    for (const auto& l : rc.labels) rep.label_counts[l.name]++;
    if (rc.passed) ++rep.passed;
    errors.push_back(rc.best_error);
    // NaN must show in the summary, so it is not compared away by std::max
    if (!(rc.best_error <= rep.max_error)) rep.max_error = rc.best_error;
  }
  if (!errors.empty()) {
    std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
    rep.median_error = errors[errors.size() / 2];
  }
  rep.timestep_on_gain = x.half_step && x.loss_gain;
  std::vector<double> dev, change;
  for (const auto& rc : rep.rollouts) {
    dev.push_back(rc.float32_deviation);
    change.push_back(rep.timestep_on_gain ? rc.timestep_gain_moved : rc.timestep_gradient_change);
  }
  if (x.run_problem && !dev.empty())
    std::tie(rep.float32_max_deviation, rep.float32_median_deviation) = max_and_median(dev);
  if (x.half_step && !change.empty())
    std::tie(rep.timestep_max_change, rep.timestep_median_change) = max_and_median(change);
}

}  // namespace

ValidationReport validate(Problem& problem, const std::vector<double>& vars,
                          const ValidationConfig& cfg, const std::string& stage,
                          Problem* run_problem, Problem* half_step,
                          const std::vector<double>* loss_gain,
                          const std::vector<double>* start_gradient_norm,
                          const SecantCheckConfig& secant, const ValidationProgress& progress) {
  const int B = problem.batch_size(), nv = problem.num_vars();
  const int n = std::min(B, cfg.max_rollouts);
  // only rollouts [0, n) are checked: on a large batch, check them on the problems cut to those
  // rollouts (bit for bit the same rollouts), not on all B, when every problem can be cut
  if (n < B) {
    std::unique_ptr<Problem> cut = problem.leading(n), cut_run, cut_half;
    bool ok = cut != nullptr;
    if (ok && run_problem) ok = (cut_run = run_problem->leading(n)) != nullptr;
    if (ok && half_step) ok = (cut_half = half_step->leading(n)) != nullptr;
    if (ok) {
      const std::vector<double> first(vars.begin(), vars.begin() + size_t(n) * nv);
      return validate(*cut, first, cfg, stage, cut_run.get(), cut_half.get(), loss_gain,
                      start_gradient_norm, secant, progress);
    }
  }
  ValidationReport rep;
  rep.stage = stage;
  rep.epsilon = cfg.epsilon;
  rep.tolerance = cfg.tolerance;
  rep.epsilons = cfg.epsilon_sweep;
  CheckContext x(problem, vars, cfg, run_problem, half_step, loss_gain, start_gradient_norm, secant,
                 progress);
  x.B = B, x.nv = nv, x.n = n, x.T = problem.steps();
  gradient_pass(x, rep);
  reference_passes(x, rep);
  draw_directions(x);
  fd_sweep(x, rep);
  secant_passes(x, rep);
  for (int b = 0; b < n; ++b) rep.rollouts.push_back(check_rollout(x, b, rep));
  summarize_checks(x, rep);
  return rep;
}

nlohmann::json to_json(const ValidationReport& r, int max_listed) {
  nlohmann::json j;
  j["stage"] = r.stage;
  j["method"] =
      "directional centered finite differences: (L(v+εd) − L(v−εd))/(2ε) vs ∇L·d, d a random "
      "direction, unit after scaling each variable by max(|v_i|, 1); pass when the smallest "
      "relative error over the ε sweep is within tolerance";
  j["epsilon"] = r.epsilon;
  j["epsilon_sweep"] = r.epsilons;
  j["tolerance"] = r.tolerance;
  j["rollouts_checked"] = r.rollouts.size();
  j["rollouts_passed"] = r.passed;
  j["all_passed"] = r.all_passed();
  j["max_relative_error"] = r.max_error;
  j["median_relative_error"] = r.median_error;
  j["label_counts"] = r.label_counts;
  j["forward_passes"] = r.forward_passes;
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < r.rollouts.size() && int(i) < max_listed; ++i) {
    const auto& c = r.rollouts[i];
    nlohmann::json labels = nlohmann::json::array();
    for (const auto& l : c.labels)
      labels.push_back({{"label", l.name}, {"figure", l.figure}, {"detail", l.detail}});
    list.push_back(
        {{"rollout", c.rollout},
         {"loss", c.loss},
         {"directional_adjoint", c.directional_adjoint},
         {"fd", c.fd},
         {"relative_error", c.error},
         {"best_relative_error", c.best_error},
         {"best_epsilon", c.best_epsilon},
         {"sweep_fd", c.sweep_fd},
         {"sweep_relative_error", c.sweep_error},
         {"sweep_contact_mode_switch", c.sweep_mode_switch},
         {"horizon_ratio", c.horizon_ratio},
         {"energy_drift_relative", c.energy_drift},
         {"float32_gradient_relative_deviation",
          c.float32_deviation < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.float32_deviation)},
         {"velocity_reversals", c.reversals.component < 0
                                    ? nlohmann::json(nullptr)
                                    : nlohmann::json({{"state", c.reversals.name},
                                                      {"count", c.reversals.count},
                                                      {"first_step", c.reversals.first_step},
                                                      {"last_step", c.reversals.last_step},
                                                      {"median_jump", c.reversals.median_jump},
                                                      {"largest_abs", c.reversals.largest}})},
         {"timestep_gradient_change", c.timestep_gradient_change < 0
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(c.timestep_gradient_change)},
         {"timestep_loss_change", c.timestep_loss_change < 0
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(c.timestep_loss_change)},
         {"secant_slope",
          c.secant_mismatch < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.secant_slope)},
         {"secant_mismatch",
          c.secant_mismatch < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.secant_mismatch)},
         {"passed", c.passed},
         {"labels", labels}});
  }
  j["rollouts"] = list;
  if (r.timestep_checked) {
    nlohmann::json change = nlohmann::json::array(), loss_change = nlohmann::json::array(),
                   gain = nlohmann::json::array();
    for (const auto& c : r.rollouts) {
      change.push_back(c.timestep_gradient_change);
      loss_change.push_back(c.timestep_loss_change);
      gain.push_back(c.timestep_gain_moved);
    }
    j["timestep_check"] = {
        {"rollouts", r.rollouts.size()},
        {"tolerance", r.timestep_tolerance},
        {"measure", r.timestep_on_gain ? "gain_moved" : "gradient_change"},
        {"max", r.timestep_max_change},
        {"median", r.timestep_median_change},
        {"gradient_change", change},
        {"loss_change", loss_change},
        {"rollouts_labelled",
         r.label_counts.count("timestep_sensitive") ? r.label_counts.at("timestep_sensitive") : 0},
        {"definition",
         "the same variables at half the timestep over the same horizon (2T steps, each control "
         "held "
         "over both half steps, the weights of the sums over the steps halved; observations "
         "without "
         "interpolation compared at the same observation times with their own weights): per "
         "rollout "
         "||g(h/2) - g(h)|| / max(||g(h)||, abs_tolerance) and |L(h/2) - L(h)| / |L(h)|; at an "
         "optimum (measure gain_moved) "
         "|L(h/2) - L(h)| / (the optimization's gain |L(start) - L(optimum)|) instead; "
         "timestep_sensitive when the measure exceeds the tolerance (a label, not a failure)"}};
    if (r.timestep_on_gain) j["timestep_check"]["gain_moved"] = gain;
  }
  if (r.secant_checked) {
    nlohmann::json mismatch = nlohmann::json::array();
    for (const auto& c : r.rollouts)
      mismatch.push_back(c.secant_mismatch < 0 ? nlohmann::json(nullptr)
                                               : nlohmann::json(c.secant_mismatch));
    j["secant_check"] = {
        {"rollouts", r.secant_rollouts},
        {"epsilon", r.secant_epsilon},
        {"tolerance", r.secant_tolerance},
        {"max", r.secant_max_mismatch},
        {"mismatch", mismatch},
        {"rollouts_labelled",
         r.label_counts.count("secant_mismatch") ? r.label_counts.at("secant_mismatch") : 0},
        {"definition",
         "on rollouts with contact: S(e) = (L(v + e d) - L(v - e d)) / (2e) along the check's "
         "direction "
         "d, S = (4 S(e/2) - S(e)) / 3, mismatch |S - grad.d| / max(|S|, |grad.d|, ||D "
         "grad||/sqrt(n), "
         "abs_tolerance, at an optimum ||grad at the start||); secant_mismatch when it exceeds the "
         "tolerance (a label, not a failure)"}};
  }
  if (r.float32_compared) {
    nlohmann::json dev = nlohmann::json::array(), loss_dev = nlohmann::json::array();
    for (const auto& c : r.rollouts) {
      dev.push_back(c.float32_deviation);
      loss_dev.push_back(c.float32_loss_deviation);
    }
    j["float32_vs_float64"] = {
        {"rollouts", r.rollouts.size()},
        {"tolerance", r.float32_tolerance},
        {"gradient_relative_deviation_max", r.float32_max_deviation},
        {"gradient_relative_deviation_median", r.float32_median_deviation},
        {"gradient_relative_deviation", dev},
        {"loss_relative_deviation", loss_dev},
        {"rollouts_over_tolerance",
         r.label_counts.count("float32_rounding") ? r.label_counts.at("float32_rounding") : 0},
        {"definition",
         "per rollout ||grad_float32 - grad_float64|| / max(||grad_float64||, abs_tolerance) over "
         "the "
         "run's variables, at a run's final check max(||grad_float64||, ||grad at the start||, "
         "abs_tolerance); loss: |L32 - L64| / |L64|; a rollout over the tolerance fails its check, "
         "labelled float32_rounding"}};
  }
  return j;
}

}  // namespace steer
