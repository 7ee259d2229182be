// Articulated: the servo implicit through the saturation (implicitfast, servo_newton ≥ 1),
//   G(q̇⁺) = M (q̇ − q̇⁺) + h (sat(k_p (q* − q) − k_v q̇⁺ + u_ff) − D q̇⁺ − c + τ_c) = 0,
// solved by an unsaturated predictor and damped Newton iterations. Its adjoint is the
// implicit-function one, λ = J⁻¹ (q̇̄⁺ + h q̄⁺) with J = ∂(−G)/∂q̇⁺ at the solution, which
// adj_semi_implicit_from_tape (implicit_step.h) runs on the factor servo_solve leaves in the tape.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/actuator.h"
#include "steer/models/articulated/cholesky.h"

namespace steer {

// the servo implicit through the saturation (servo_newton ≥ 1): on entry t.A = M + h D and
// t.vp = b := M q̇ + h (−c + τ_c [+ τ_l]) from implicit_system. With r_i = k_p (q* − q) + u_ff
// and H = M + h D the step's equation is
//   G(w) = b − H w + h sat(r − k_v w) = 0,
// the gradient of the strictly convex Φ(w) = ½ wᵀH w − bᵀw + h Σ_i ∫ sat (taken negative),
// since sat is increasing (0 < s' ≤ 1). Linearizing τ_i about the iterate w,
// τ_i ≈ sat(r_i − k_v w_i) − s'_i k_v (w⁺_i − w_i), gives the Newton system
//   J(w) w⁺ = b + h (sat(r − k_v w) + s' k_v w),   J(w) = M + h diag(D + s' k_v).
// The predictor takes every joint unsaturated (s' = 1, τ = r − k_v w⁺: the implicit PD).
// Plain Newton is not enough: the function is S-shaped per joint (slope 1 in the clamps,
// 1 + h k_v/M inside), and on the Panda a coupled joint's iterates jump from one clamp to
// the other and back (articulated_test ImplicitServoSolvesTheImplicitStep). So each Newton
// step d = w⁺ − w is damped by a line search for the minimum of Φ along d, the root of
// the decreasing ψ(α) = dᵀ G(w + α d) = c₀ − α c₁ + h Σ d_i sat(r_i − k_v,i (w_i + α d_i)),
// c₀ = dᵀ(b − H w), c₁ = dᵀ H d: α = 1 when ψ(1) ≥ −10⁻³ ψ(0) (the minimum lies beyond
// the full step, or just short of it), else up to kServoLineSearch safeguarded Newton steps
// on ψ within the bracket [0, 1] (bisection where Newton leaves it) until |ψ(α)| ≤ 10⁻³ ψ(0).
// Φ decreases at every iteration (but for that margin), so the iterates converge to the
// unique solution. Value branches are selects, for the SIMD lanes; the line search is
// skipped when no lane needs it.
// Last, J at the solution is factored and τ_raw, s' and the saturation's sigmoids are
// taped there: the hand adjoint is the implicit-function one, λ = J⁻¹ (q̇̄⁺ + h q̄⁺).
static constexpr int kServoLineSearch = 8;
static constexpr double kServoLineSearchTol = 1e-3;
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::servo_solve(const S* q, const UIn& u,
                                                                     const PIn& p,
                                                                     StepTape<S>& t) const {
  const int n = n_dof;
  const S h = S(dt);
  S base[kMaxDof], r[kMaxDof], w[kMaxDof], d[kMaxDof], tau_w[kMaxDof];
  for (int i = 0; i < n; ++i) {
    base[i] = t.vp[i];
    r[i] = S(p[p_joint(i, kKp)]) * (S(p[p_joint(i, kTarget)]) - q[qadr(i)]) + S(u[i]);
    w[i] = S(0);
  }
  // H x from M's strict upper triangle (kept in t.A), its diagonal and D
  auto h_times = [&](const S* x, int i) {
    S y = (t.mdiag[i] + h * S(p[p_joint(i, kDamping)])) * x[i];
    for (int j = 0; j < n; ++j)
      if (j != i) y += t.A[(i < j ? i : j) * kMaxDof + (i < j ? j : i)] * x[j];
    return y;
  };
  // ψ(α) and ψ'(α) = −c₁ − h Σ k_v d_i² s'_i
  auto psi = [&](const S& c0, const S& c1, const S& a, S& dpsi) {
    S v = c0 - a * c1;
    dpsi = -c1;
    for (int i = 0; i < n; ++i) {
      const S kv = p[p_joint(i, kKv)];
      S s;
      const S tau = saturate(p, i, S(r[i] - kv * (w[i] + a * d[i])), s);
      v += h * d[i] * tau;
      dpsi -= h * kv * d[i] * d[i] * s;
    }
    return v;
  };
  // the system at w: J(w) into t.A (factored), b + h (sat(r − k_v w) + s' k_v w) into t.vp
  // (the predictor's when `predictor`), τ(w) into tau_w; τ_raw, s', sigmoids taped at w
  auto newton_system = [&](bool predictor) {
    for (int i = 0; i < n; ++i) {
      const S kv = p[p_joint(i, kKv)];
      S s = S(1), lin = r[i];  // the predictor: τ = r − k_v w⁺
      if (!predictor) {
        t.raw[i] = r[i] - kv * w[i];
        tau_w[i] = saturate(p, i, t.raw[i], s, t.sig + kSatTape * i);
        lin = tau_w[i] + s * kv * w[i];
      }
      t.slope[i] = s;
      // rebuild the lower triangle from M's strict upper one (cholesky_factor keeps it)
      t.A[i * kMaxDof + i] = t.mdiag[i] + h * (S(p[p_joint(i, kDamping)]) + s * kv);
      for (int j = 0; j < i; ++j) t.A[i * kMaxDof + j] = t.A[j * kMaxDof + i];
      t.vp[i] = base[i] + h * lin;
    }
    cholesky_factor(n, t.A);
  };
  newton_system(true);
  cholesky_substitute(n, t.A, t.vp);
  for (int i = 0; i < n; ++i) w[i] = t.vp[i];
  // a lane whose Newton step is below rounding (|d|∞ ≤ 64 ε (|w|∞ + 10⁻³)) is done: its w is
  // frozen from there on, and the loop ends when every lane is (the scalar run's break)
  const S eps_d = S(64.0 * roundoff_of<S>());
  auto done = S(1) < S(0);
  for (int it = 1; it <= servo_newton && any_lane(!done); ++it) {
    newton_system(false);
    cholesky_substitute(n, t.A, t.vp);
    // the line search along d = w⁺ − w; ψ(0) = dᵀ G(w) = dᵀ J d > 0
    S c0 = S(0), c1 = S(0), p0 = S(0), dmax = S(0), wmax = S(0);
    for (int i = 0; i < n; ++i) d[i] = t.vp[i] - w[i];
    for (int i = 0; i < n; ++i) {
      c0 += d[i] * (base[i] - h_times(w, i));
      c1 += d[i] * h_times(d, i);
      p0 += h * d[i] * tau_w[i];
      const S ad = select(d[i] < S(0), S(S(0) - d[i]), d[i]),
              aw = select(w[i] < S(0), S(S(0) - w[i]), w[i]);
      dmax = select(ad > dmax, ad, dmax);
      wmax = select(aw > wmax, aw, wmax);
    }
    p0 += c0;
    const auto tiny = dmax <= eps_d * (wmax + S(1e-3));
    S dpa;
    S a = S(1), pa = psi(c0, c1, a, dpa);
    // the full step unless it passes the minimum along d by more than a small margin
    // (|ψ(1)| ≤ 1e-3 ψ(0) is where Newton converges; a margin keeps those steps whole)
    const S tol = S(kServoLineSearchTol) * p0;
    auto busy = !done && !tiny && pa < -tol;
    if (any_lane(busy)) {
      S lo = S(0), hi = S(1);
      for (int ls = 0; ls < kServoLineSearch && any_lane(busy); ++ls) {
        // ψ(lo) > 0 > ψ(hi); a Newton step from a, a bisection where it leaves (lo, hi);
        // a lane stops (its values frozen) once |ψ(a)| ≤ tol, so each lane's bits are
        // those of its own scalar run
        const auto right = pa <= S(0);
        hi = select(right, a, hi);
        lo = select(right, lo, a);
        S an = a - pa / select(dpa < S(0), dpa, S(-1));
        an = select(an > lo && an < hi, an, S(S(0.5) * (lo + hi)));
        S dn;
        const S pn = psi(c0, c1, an, dn);
        a = select(busy, an, a);
        pa = select(busy, pn, pa);
        dpa = select(busy, dn, dpa);
        busy = busy && (pa < -tol || pa > tol);
      }
    }
    for (int i = 0; i < n; ++i) w[i] = select(done, w[i], S(w[i] + a * d[i]));
    done = done || tiny;
  }
  // J at the solution, and the saturation taped there, for the adjoint
  newton_system(false);
  for (int i = 0; i < n; ++i) t.vp[i] = w[i];
}

}  // namespace steer
