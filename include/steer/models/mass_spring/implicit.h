// MassSpring's implicit step (integrator kBackwardEuler) and its adjoint by the implicit-function
// theorem.
//
// Backward Euler in the velocities, of length h at t_k = k h: the end-of-step velocities w = v'
// solve
//   r(w) = M (w − e^{−ζh} v) − h f(x + h w, w) = 0,   x' = x + h w,
// where f holds the springs' elastic forces and the ground's elastic normal force at the end
// positions x' (implicit), the spring damping, ground damping and friction at the end velocities
// w (implicit) with the quantities that make them non-conservative lagged at x_k: the spring
// damping's direction n̂_k, the ground damping's σ(z_k) and the friction's normal load
// N_k = k_g w_g softplus(z_k). Gravity is constant; the actuated target lengths L_s and the raw
// controls are taken at t_k (step k's control acts in step k, and the gait keeps the explicit
// step's phase). Velocity damping stays the exact decay e^{−ζh} of the old velocity.
// With those lags r = ∇E, the gradient of the step's incremental potential
//   E(w) = ½ (w − e^{−ζh} v)ᵀ M (w − e^{−ζh} v)                             inertia
//        + Σ_s ½ k_s (ℓ'_s − L_s)² + Σ_i m_i g h w_i,y                      springs, gravity
//        + Σ_i k_g w_g² G(z'_i),   z' = (y_g − y')/w_g,  G(z) = ∫_{−∞}^z softplus = −Li₂(−e^z)
//        + h Σ_s ½ c_s (n̂_k·(w_b − w_a))²                                   spring damping
//        + h Σ_i [½ d_g σ(z_k,i) w_i,y² + μ N_k,i sqrt(|w_i,t|² + v_ε²)]    ground damping,
//        friction
// (the elastic terms at x' = x + h w, so ∂/∂w of them is −h times the force). Its Hessian
//   H = M + h² Σ_s K_s + h Σ_s c_s n̂_k n̂_kᵀ + ground and friction terms,
//   K_s = k_s n̂'n̂'ᵀ + k_s (1 − L_s/ℓ'_s)(I − n̂'n̂'ᵀ)   on (a, a), (b, b), and −K_s on (a, b),
// is symmetric; every term is positive semi-definite except a compressed spring's transverse
// term (ℓ' < L). Newton's method on E: the direction from the exact H where its LDLᵀ factor
// has positive pivots, else from H with 1 − L/ℓ' clamped at 0 (positive definite: M > 0); a
// backtracking (Armijo) line search on E; warm start w = e^{−ζh} v. It stops at rounding: when
// the step from the exact H is at most 64 ε max(|w|, |e^{−ζh} v|, h g) (ε of the scalar), or
// stops shrinking below 1e4 times that, that last full step is taken and the iteration ends.
// The last step is always an exact-Hessian Newton step, so run on dual numbers the step gives
// the implicit-function derivative (the dual reference). A step that does not converge within
// newton_iterations returns NaN (the rollout's nonfinite flag): never a silently unconverged
// state.
//
// Adjoint (implicit-function theorem): with w̄ = v̄' + h x̄', solve H λ = w̄ with the exact H at
// the converged w (symmetric), then every input z ∈ {x, v, θ, u} receives z̄ += −(∂r/∂z)ᵀ λ:
// with f̄ = h λ that is the explicit force adjoint at (x', w) and the lagged terms at x_k, plus
//   v̄ += e^{−ζh} M λ,  m̄_i −= λ_i·(w_i − e^{−ζh} v_i),  ζ̄ −= h e^{−ζh} vᵀ M λ,  x̄ += x̄'.
// At a strict local minimum of E the exact H is positive definite; where its factor has a
// non-positive pivot (a degenerate minimum, e.g. a buckled spring at its bifurcation) the
// derivative does not exist and the adjoint writes NaN.
//
// Branches on values are lane masks and selects (core.h, simd.h), so the same code runs on the
// CPU's SIMD packs (cpu_packed.h): each lane iterates until it has converged and is then held
// by select while the others go on, and a lane computes exactly what its scalar run computes.
//
// Storage and the GPU: the Hessian's lower band (ImplicitWork, model.h) lives in the calling
// thread's stack frame, sized by compile-time capacities, so nothing allocates. On a warp that
// shares a rollout (LanesPerRollout = 32) the leading lane runs the whole step and adjoint and
// the other lanes return: the working storage is that lane's local memory, which the other
// lanes cannot address without shared memory, and the band factorization is sequential anyway
// (rollout.h's sync after each step orders the leader's writes before the next reads).
#pragma once

#include <limits>
#include <type_traits>

#include "steer/implicit_math.h"
#include "steer/models/mass_spring/ground.h"
#include "steer/models/mass_spring/springs.h"

namespace steer {

// the half-bandwidth bw of the implicit step's Hessian in unknowns: dim (max_s |a_s − b_s| + 1) − 1
STEER_HD inline int MassSpring::implicit_band() const {
  int gap = 0;
  for (int s = 0; s < n_springs; ++s) {
    const int e = end_a(s) - end_b(s);
    const int a = e < 0 ? -e : e;
    gap = a > gap ? a : gap;
  }
  return dim * (gap + 1) - 1;
}
// 0 when the robot fits the implicit step's storage; else 1 (N·dim > kImplicitDofs), 2 (S >
// kImplicitSprings) or 3 (N·dim·(bw + 1) > kImplicitBand)
STEER_HD inline int MassSpring::implicit_fits() const {
  const int n = n_particles * dim;
  if (n > kImplicitDofs) return 1;
  if (n_springs > kImplicitSprings) return 2;
  if ((long long)n * (implicit_band() + 1) > kImplicitBand) return 3;
  return 0;
}

// what stays fixed over step k's Newton iteration: e^{−ζh} v, the target lengths at t_k and
// the lagged ground terms σ(z_k), N_k (the lagged spring directions n̂_k are recomputed from x)
template <class S, class XIn, class UIn, class PIn>
STEER_HD void MassSpring::implicit_prepare(int k, const XIn& x, const UIn& u, const PIn& p,
                                           ImplicitWork<S>& W) const {
  const S h = S(dt), t = S(dt * k);
  const S decay = exp_of(-S(p[p_global(kVelocityDamping)]) * h);
  W.n = n_particles * dim;
  W.bw = implicit_band();
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c) W.target[i * dim + c] = decay * S(x[x_vel(i) + c]);
  PhaseBank<S> pb;
  fill_phases<S>(t, p, pb);
  for (int s = 0; s < n_springs; ++s) {
    S target = rest_length<S>(s, p);
    if (actuator(s) >= 0)
      target = target * (S(1) + S(p[p_amplitude(s)]) * activation<S>(actuator(s), t, u, p, &pb));
    W.L[s] = target;
  }
  if (!ground) return;
  const S kg = S(p[p_global(kGroundStiffness)]), wg = S(p[p_global(kGroundSmoothing)]);
  const S yg = S(p[p_global(kGroundHeight)]);
  for (int i = 0; i < n_particles; ++i) {
    S sp, sg;
    softplus_sigmoid_of((yg - S(x[x_pos(i) + 1])) / wg, sp, sg);
    W.sg[i] = sg;
    W.load[i] = kg * wg * sp;
  }
}

namespace implicit_detail {
// spring s's direction at x_k, n̂_k = (x_b − x_a)/ℓ_k (0 at zero length), and ℓ_k (1 there)
template <class S, class M, class XIn>
STEER_HD void lagged_direction(const M& m, int s, const XIn& x, S* nk, S& lk) {
  using std::sqrt;
  S d[3], l2 = S(0);
  for (int c = 0; c < m.dim; ++c) {
    d[c] = S(x[m.x_pos(m.end_b(s)) + c]) - S(x[m.x_pos(m.end_a(s)) + c]);
    l2 += d[c] * d[c];
  }
  const S l = sqrt(l2);
  const auto live = l > S(1e-12);
  lk = select(live, l, S(1));
  for (int c = 0; c < m.dim; ++c) nk[c] = select(live, d[c] / lk, S(0));
}
}  // namespace implicit_detail

// E(w) up to a constant; scale receives Σ |terms|, the size its rounding is relative to [J]
template <class S, class XIn, class PIn>
STEER_HD S MassSpring::implicit_energy(const XIn& x, const PIn& p, const ImplicitWork<S>& W,
                                       const S* w, S& scale) const {
  using implicit_detail::abs_of;
  using std::sqrt;
  const S h = S(dt), grav = S(p[p_global(kGravity)]);
  S e = S(0);
  scale = S(0);
  auto add = [&](const S& term) {
    e += term;
    scale += abs_of(term);
  };
  for (int i = 0; i < n_particles; ++i) {
    const S m = S(p[p_mass(i)]);
    S kin = S(0);
    for (int c = 0; c < dim; ++c) {
      const S dw = w[i * dim + c] - W.target[i * dim + c];
      kin += dw * dw;
    }
    add(S(0.5) * m * kin);
    add(m * grav * h * w[i * dim + 1]);
  }
  for (int s = 0; s < n_springs; ++s) {
    const int a = end_a(s), b = end_b(s);
    S nk[3], lk;
    implicit_detail::lagged_direction(*this, s, x, nk, lk);
    S l2 = S(0), dvn = S(0);
    for (int c = 0; c < dim; ++c) {
      const S d = S(x[x_pos(b) + c]) + h * w[b * dim + c] - S(x[x_pos(a) + c]) - h * w[a * dim + c];
      l2 += d * d;
      dvn += nk[c] * (w[b * dim + c] - w[a * dim + c]);
    }
    const S st = sqrt(l2) - W.L[s];
    add(S(0.5) * S(p[p_stiffness(s)]) * st * st);
    add(S(0.5) * h * S(p[p_damping(s)]) * dvn * dvn);
  }
  if (ground) {
    const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
    const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
    const S ve = S(p[p_global(kFrictionSmoothing)]), yg = S(p[p_global(kGroundHeight)]);
    for (int i = 0; i < n_particles; ++i) {
      const S wy = w[i * dim + 1];
      const S z = (yg - S(x[x_pos(i) + 1]) - h * wy) / wg;
      add(kg * wg * wg * softplus_integral_of(z));
      add(S(0.5) * h * dg * W.sg[i] * wy * wy);
      S q2 = ve * ve;
      for (int c = 0; c < dim; ++c)
        if (c != 1) q2 += w[i * dim + c] * w[i * dim + c];
      add(h * mu * W.load[i] * sqrt(q2));
    }
  }
  return e;
}

// g = ∇E(w) = M (w − e^{−ζh} v) − h f(x + h w, w)
template <class S, class XIn, class PIn>
STEER_HD void MassSpring::implicit_gradient(const XIn& x, const PIn& p, const ImplicitWork<S>& W,
                                            const S* w, S* g) const {
  using std::sqrt;
  const S h = S(dt), grav = S(p[p_global(kGravity)]);
  for (int i = 0; i < n_particles; ++i) {
    const S m = S(p[p_mass(i)]);
    for (int c = 0; c < dim; ++c) g[i * dim + c] = m * (w[i * dim + c] - W.target[i * dim + c]);
    g[i * dim + 1] += h * m * grav;
  }
  for (int s = 0; s < n_springs; ++s) {
    const int a = end_a(s), b = end_b(s);
    S nk[3], lk;
    implicit_detail::lagged_direction(*this, s, x, nk, lk);
    S d[3], l2 = S(0), dvn = S(0);
    for (int c = 0; c < dim; ++c) {
      d[c] = S(x[x_pos(b) + c]) + h * w[b * dim + c] - S(x[x_pos(a) + c]) - h * w[a * dim + c];
      l2 += d[c] * d[c];
      dvn += nk[c] * (w[b * dim + c] - w[a * dim + c]);
    }
    const S l = sqrt(l2);
    const auto live = l > S(1e-12);  // no tension and no direction at zero length
    const S l_div = select(live, l, S(1));
    const S F = select(live, S(p[p_stiffness(s)]) * (l - W.L[s]), S(0));  // tension at x' [N]
    const S Fd = S(p[p_damping(s)]) * dvn;                                // damping along n̂_k [N]
    for (int c = 0; c < dim; ++c) {
      const S fa = F * d[c] / l_div + Fd * nk[c];  // force on a [N]
      g[a * dim + c] -= h * fa;
      g[b * dim + c] += h * fa;
    }
  }
  if (!ground) return;
  const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
  const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
  const S ve = S(p[p_global(kFrictionSmoothing)]), yg = S(p[p_global(kGroundHeight)]);
  for (int i = 0; i < n_particles; ++i) {
    const S wy = w[i * dim + 1];
    S sp, sg;
    softplus_sigmoid_of((yg - S(x[x_pos(i) + 1]) - h * wy) / wg, sp, sg);
    g[i * dim + 1] -= h * (kg * wg * sp - dg * W.sg[i] * wy);
    S q2 = ve * ve;
    for (int c = 0; c < dim; ++c)
      if (c != 1) q2 += w[i * dim + c] * w[i * dim + c];
    const S q = sqrt(q2);
    for (int c = 0; c < dim; ++c)
      if (c != 1) g[i * dim + c] += h * mu * W.load[i] * w[i * dim + c] / q;
  }
}

// assembles H(w) into W.H and factors it; clamp (per lane): compressed springs' transverse
// term 1 − L/ℓ' clamped at 0. The mask is false where the factor has a non-positive pivot
template <class S, class XIn, class PIn, class Mask>
STEER_HD Mask MassSpring::implicit_hessian(const XIn& x, const PIn& p, ImplicitWork<S>& W,
                                           const S* w, const Mask& clamp) const {
  using implicit_detail::band;
  using std::sqrt;
  const int n = W.n, bw = W.bw;
  const S h = S(dt);
  for (int q = 0; q < n * (bw + 1); ++q) W.H[q] = S(0);
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c) band(W.H, bw, i * dim + c, i * dim + c) += S(p[p_mass(i)]);
  for (int s = 0; s < n_springs; ++s) {
    const int a = end_a(s), b = end_b(s);
    S nk[3], lk;
    implicit_detail::lagged_direction(*this, s, x, nk, lk);
    S d[3], l2 = S(0);
    for (int c = 0; c < dim; ++c) {
      d[c] = S(x[x_pos(b) + c]) + h * w[b * dim + c] - S(x[x_pos(a) + c]) - h * w[a * dim + c];
      l2 += d[c] * d[c];
    }
    const S l = sqrt(l2);
    const auto live = l > S(1e-12);
    const S l_div = select(live, l, S(1)), l2_div = select(live, l2, S(1));
    const S k = S(p[p_stiffness(s)]), cs = S(p[p_damping(s)]);
    S beta = select(live, S(1) - W.L[s] / l_div, S(0));
    beta = select(clamp && beta < S(0), S(0), beta);
    // K = h² [k n̂n̂ᵀ + k β (I − n̂n̂ᵀ)] + h c n̂_k n̂_kᵀ
    S K[3][3] = {};
    for (int r = 0; r < dim; ++r)
      for (int c = 0; c < dim; ++c) {
        const S nn = d[r] * d[c] / l2_div;
        const S eye = r == c ? S(1) : S(0);
        K[r][c] = h * h * k * select(live, nn + beta * (eye - nn), S(0)) + h * cs * nk[r] * nk[c];
      }
    const int hi = a > b ? a : b, lo = a > b ? b : a;
    for (int r = 0; r < dim; ++r)
      for (int c = 0; c < dim; ++c) {
        if (c <= r) {
          band(W.H, bw, a * dim + r, a * dim + c) += K[r][c];
          band(W.H, bw, b * dim + r, b * dim + c) += K[r][c];
        }
        band(W.H, bw, hi * dim + r, lo * dim + c) -= K[r][c];
      }
  }
  if (ground) {
    const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
    const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
    const S ve = S(p[p_global(kFrictionSmoothing)]), yg = S(p[p_global(kGroundHeight)]);
    for (int i = 0; i < n_particles; ++i) {
      S sp, sg;
      softplus_sigmoid_of((yg - S(x[x_pos(i) + 1]) - h * w[i * dim + 1]) / wg, sp, sg);
      band(W.H, bw, i * dim + 1, i * dim + 1) += h * h * kg * sg + h * dg * W.sg[i];
      // friction μ N sqrt(|w_t|² + v_ε²): Hessian μ N (I/q − w_t w_tᵀ/q³)
      S q2 = ve * ve;
      for (int c = 0; c < dim; ++c)
        if (c != 1) q2 += w[i * dim + c] * w[i * dim + c];
      const S q = sqrt(q2), f = h * mu * W.load[i];
      for (int r = 0; r < dim; ++r)
        for (int c = 0; c <= r; ++c) {
          if (r == 1 || c == 1) continue;
          const S term = (r == c ? S(1) / q : S(0)) - w[i * dim + r] * w[i * dim + c] / (q2 * q);
          band(W.H, bw, i * dim + r, i * dim + c) += f * term;
        }
    }
  }
  return implicit_detail::band_ldlt(W.H, n, bw);
}

// Newton's method on E from w = e^{−ζh} v; W.w the converged velocities, W.converged whether
// (per lane) it stopped at rounding within newton_iterations. A pack's lanes iterate together
// until every lane has converged or the cap is reached; a converged lane is held by select.
template <class S, class XIn, class UIn, class PIn>
STEER_HD void MassSpring::implicit_solve(int k, const XIn& x, const UIn& u, const PIn& p,
                                         ImplicitWork<S>& W) const {
  using implicit_detail::abs_of;
  using implicit_detail::max_of;
  using R = typename implicit_detail::real_of<S>::type;
  using Mask = typename ImplicitWork<S>::Mask;
  const R eps = std::numeric_limits<R>::epsilon();
  implicit_prepare<S>(k, x, u, p, W);
  const int n = W.n;
  for (int q = 0; q < n; ++q) W.w[q] = W.target[q];
  // the velocity scale the rounding of w is relative to [m/s]: the velocities themselves, h g,
  // and max |x| / h, since w enters the forces through x + h w, which is rounded to ε |x|
  S vscale = S(dt) * abs_of(S(p[p_global(kGravity)]));
  for (int q = 0; q < n; ++q) vscale = max_of(abs_of(W.target[q]), vscale);
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c) vscale = max_of(abs_of(S(x[x_pos(i) + c])) / S(dt), vscale);
  S prev = S(-1);
  const Mask none = S(1) < S(0);
  Mask done = none;
  // E at the current iterate and its rounding scale, once known: the line search's accepted
  // (or last) trial is the next iterate, whose energy it has just computed (the same bits)
  Mask e_known = none;
  S e_cur = S(0), scale_cur = S(0);
  W.iterations = 0;
  for (int it = 1; it <= newton_iterations && any_lane(!done); ++it) {
    W.iterations = it;
    implicit_gradient<S>(x, p, W, W.w, W.g);
    const Mask exact = implicit_hessian<S>(x, p, W, W.w, none);
    // lanes whose exact factor has a non-positive pivot take the clamped H (positive definite);
    // the others assemble and factor the exact H again, to the same values
    if (any_lane(!exact)) implicit_hessian<S>(x, p, W, W.w, !exact);
    for (int q = 0; q < n; ++q) W.d[q] = -W.g[q];
    implicit_detail::band_solve(W.H, n, W.bw, W.d);
    S step = S(0), wmax = vscale, slope = S(0);
    for (int q = 0; q < n; ++q) {
      step = max_of(abs_of(W.d[q]), step);
      wmax = max_of(abs_of(W.w[q]), wmax);
      slope += W.g[q] * W.d[q];
    }
    const S tol = S(R(64) * eps) * wmax;
    // at rounding: the step is within a few ulps of w, or stops shrinking near there
    const Mask floor = prev >= S(0) && step > S(0.25) * prev && step <= S(1e4) * tol;
    const Mask conv = !done && exact && (step <= tol || floor);
    const Mask search = !done && !conv;
    S alpha = S(1);
    if (any_lane(search)) {
      // backtracking line search on E (Armijo, c = 1e-4), slack for E's own rounding; W.g
      // holds the trial point, W.t each lane's accepted one (or its last trial)
      if (any_lane(search && !e_known)) {
        S scale;
        const S e = implicit_energy<S>(x, p, W, W.w, scale);
        e_cur = select(e_known, e_cur, e);
        scale_cur = select(e_known, scale_cur, scale);
      }
      const S e0 = e_cur, slack = S(R(64) * eps) * scale_cur;
      Mask accepted = !search;
      for (int ls = 0; ls < 40 && any_lane(!accepted); ++ls) {
        for (int q = 0; q < n; ++q) W.g[q] = W.w[q] + alpha * W.d[q];
        S scale1;
        const S e1 = implicit_energy<S>(x, p, W, W.g, scale1);
        const Mask now = !accepted && e1 <= e0 + S(1e-4) * alpha * slope + slack;
        for (int q = 0; q < n; ++q) W.t[q] = select(accepted, W.t[q], W.g[q]);
        e_cur = select(accepted, e_cur, e1);
        scale_cur = select(accepted, scale_cur, scale1);
        accepted = accepted || now;
        alpha = select(accepted, alpha, alpha * S(0.5));
      }
      e_known = e_known || search;
    }
    for (int q = 0; q < n; ++q)
      W.w[q] = select(conv, W.w[q] + W.d[q], select(search, W.t[q], W.w[q]));
    prev = select(search, alpha * step, prev);
    done = done || conv;
  }
  W.converged = done;
}

// (k, x_k, u_k, θ) -> x_{k+1} by backward Euler (the leading lane; NaN if Newton did not converge)
// (STEER_NOINLINE: on the device this keeps the working storage in one frame of its own, so a
// kernel that calls both the step and its adjoint reserves one ImplicitWork, not two)
template <class S, class XIn, class UIn, class PIn, class XOut>
STEER_HD STEER_NOINLINE void MassSpring::backward_euler(int k, const XIn& x, const UIn& u,
                                                        const PIn& p, XOut& xn,
                                                        const Lanes& ln) const {
  if (!ln.leader()) return;
  ImplicitWork<S> W;
  implicit_solve<S>(k, x, u, p, W);
  const S h = S(dt), nan = S(std::numeric_limits<double>::quiet_NaN());
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c) {
      const S w = select(W.converged, W.w[i * dim + c], nan);
      xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + h * w;
      xn[x_vel(i) + c] = w;
    }
}

// The adjoint's stages, at the converged w of W (implicit_solve): the solve H λ = w̄, then the
// inertia and gravity, each spring, and the ground, each adding its −(∂r/∂z)ᵀ λ.

// λ from H λ = v̄' + h x̄' (into W.d) with the exact H at the converged w, never the clamped
// one: NaN where it is not positive definite; and f̄ = h λ (into W.g)
template <class S, class XIn, class PIn, class XnAdj>
STEER_HD void MassSpring::implicit_adjoint_solve(const XIn& x, const PIn& p, ImplicitWork<S>& W,
                                                 const XnAdj& adj_xn) const {
  using Mask = typename ImplicitWork<S>::Mask;
  const S h = S(dt);
  const Mask none = S(1) < S(0);
  const Mask ok = W.converged && implicit_hessian<S>(x, p, W, W.w, none);
  S* lam = W.d;
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c)
      lam[i * dim + c] = S(adj_xn[x_vel(i) + c]) + h * S(adj_xn[x_pos(i) + c]);
  implicit_detail::band_solve(W.H, W.n, W.bw, lam);
  const S nan = S(std::numeric_limits<double>::quiet_NaN());
  for (int q = 0; q < W.n; ++q) lam[q] = select(ok, lam[q], nan);
  S* fbar = W.g;
  for (int q = 0; q < W.n; ++q) fbar[q] = h * lam[q];
}

// inertia M (w − e^{−ζh} v) and gravity −m g ŷ: v̄ += e^{−ζh} M λ, m̄_i −= λ_i·(w_i − e^{−ζh} v_i)
// + g f̄_i,y, ζ̄ −= h e^{−ζh} vᵀ M λ, ḡ −= m_i f̄_i,y; and x' = x + h w reaches x directly
template <class S, class XIn, class PIn, class XnAdj, class XAdj, class PAdj>
STEER_HD void MassSpring::adj_implicit_inertia(const XIn& x, const PIn& p, const ImplicitWork<S>& W,
                                               const XnAdj& adj_xn, XAdj& adj_x, PAdj& adj_p,
                                               S* adj_globals) const {
  const S h = S(dt);
  const S *w = W.w, *lam = W.d, *fbar = W.g;
  const S decay = exp_of(-S(p[p_global(kVelocityDamping)]) * h), grav = S(p[p_global(kGravity)]);
  for (int i = 0; i < n_particles; ++i) {
    const S m = S(p[p_mass(i)]);
    S am = S(0);
    for (int c = 0; c < dim; ++c) {
      const int q = i * dim + c;
      const S v = S(x[x_vel(i) + c]);
      adj_x[x_pos(i) + c] += S(adj_xn[x_pos(i) + c]);
      adj_x[x_vel(i) + c] += decay * m * lam[q];
      am += -lam[q] * (w[q] - decay * v);
      adj_globals[kVelocityDamping] += -h * decay * m * v * lam[q];
    }
    am += -grav * fbar[i * dim + 1];
    adj_p[p_mass(i)] += am;
    adj_globals[kGravity] += -m * fbar[i * dim + 1];
  }
}

// spring s: the tension at x' along n̂', the damping along the lagged n̂_k; ω's share into adj_w
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj>
STEER_HD void MassSpring::adj_implicit_spring(int s, const S& t, const XIn& x, const UIn& u,
                                              const PIn& p, const ImplicitWork<S>& W,
                                              const PhaseBank<S>& pb, XAdj& adj_x, UAdj& adj_u,
                                              PAdj& adj_p, S& adj_w) const {
  using std::sqrt;
  const S h = S(dt);
  const S *w = W.w, *fbar = W.g;
  const bool sinusoid = actuation == kSinusoid;
  const int a = end_a(s), b = end_b(s);
  const S k_s = S(p[p_stiffness(s)]), c_s = S(p[p_damping(s)]);
  S nk[3], lk;
  implicit_detail::lagged_direction(*this, s, x, nk, lk);
  S gb[3], d[3], l2 = S(0), dw[3];
  for (int c = 0; c < dim; ++c) {
    gb[c] = fbar[a * dim + c] - fbar[b * dim + c];  // ḡ: the adjoint of the force on a
    d[c] = S(x[x_pos(b) + c]) + h * w[b * dim + c] - S(x[x_pos(a) + c]) - h * w[a * dim + c];
    dw[c] = w[b * dim + c] - w[a * dim + c];
    l2 += d[c] * d[c];
  }
  const S l = sqrt(l2);
  const auto live = l > S(1e-12);  // at zero length no tension, so no adjoint either
  if (any_lane(live)) {
    // g = F n̂', F = k (ℓ' − L): ∂g/∂d' = F (I − n̂n̂ᵀ)/ℓ' + k n̂n̂ᵀ
    const S l_div = select(live, l, S(1));
    S n[3], gn = S(0);
    for (int c = 0; c < dim; ++c) {
      n[c] = d[c] / l_div;
      gn += gb[c] * n[c];
    }
    gn = select(live, gn, S(0));
    const S F = select(live, k_s * (l - W.L[s]), S(0));
    for (int c = 0; c < dim; ++c) {
      const S dbar = F * (gb[c] - n[c] * gn) / l_div + gn * k_s * n[c];
      adj_x[x_pos(a) + c] -= dbar;
      adj_x[x_pos(b) + c] += dbar;
    }
    adj_p[p_stiffness(s)] += gn * (l - W.L[s]);
    // L = L0 (1 + α act): L̄ = −k ḡ·n̂'
    const S adj_L = -k_s * gn;
    const S L0 = rest_length<S>(s, p);
    S scale = S(1), act_v = S(0);
    const int act = actuator(s);
    if (act >= 0) {
      act_v = activation<S>(act, t, u, p, &pb);
      scale = S(1) + S(p[p_amplitude(s)]) * act_v;
    }
    if (rest_from_positions) {
      adj_rest_length_at<S>(s, a, p, adj_p, adj_L * scale);
      adj_rest_length_at<S>(s, b, p, adj_p, adj_L * scale);
    } else {
      adj_p[p_rest_length(s)] += adj_L * scale;
    }
    if (act >= 0) {
      adj_p[p_amplitude(s)] += adj_L * L0 * act_v;
      adj_activation<S>(act, t, u, p, adj_u, adj_p, sinusoid, adj_w,
                        adj_L * L0 * S(p[p_amplitude(s)]), &pb, &act_v);
    }
  }
  // g = c (n̂_k·Δw) n̂_k, n̂_k = d_k/ℓ_k: n̄ = c ((ḡ·n̂) Δw + (n̂·Δw) ḡ), d̄_k = (I − n̂n̂ᵀ) n̄/ℓ_k
  // (n̂_k = 0 at zero length: every term 0)
  S gk = S(0), sn = S(0), nbar[3], nn = S(0);
  for (int c = 0; c < dim; ++c) {
    gk += gb[c] * nk[c];
    sn += nk[c] * dw[c];
  }
  adj_p[p_damping(s)] += gk * sn;
  for (int c = 0; c < dim; ++c) {
    nbar[c] = c_s * (gk * dw[c] + sn * gb[c]);
    nn += nk[c] * nbar[c];
  }
  for (int c = 0; c < dim; ++c) {
    const S dbar = (nbar[c] - nk[c] * nn) / lk;
    adj_x[x_pos(a) + c] -= dbar;
    adj_x[x_pos(b) + c] += dbar;
  }
}

// the ground: the elastic force at z' = (y_g − y')/w_g, and the damping and friction lagged at
// z_k = (y_g − y)/w_g
template <class S, class XIn, class PIn, class XAdj>
STEER_HD void MassSpring::adj_implicit_ground(const XIn& x, const PIn& p, const ImplicitWork<S>& W,
                                              XAdj& adj_x, S* adj_globals) const {
  using std::sqrt;
  const S h = S(dt);
  const S *w = W.w, *fbar = W.g;
  const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
  const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
  const S ve = S(p[p_global(kFrictionSmoothing)]), yg = S(p[p_global(kGroundHeight)]);
  for (int i = 0; i < n_particles; ++i) {
    const S fy = fbar[i * dim + 1], wy = w[i * dim + 1], y = S(x[x_pos(i) + 1]);
    // elastic F = k_g w_g softplus(z'), z' = (y_g − y − h w_y)/w_g
    const S z1 = (yg - y - h * wy) / wg;
    S sp1, sg1;
    softplus_sigmoid_of(z1, sp1, sg1);
    adj_globals[kGroundStiffness] += wg * sp1 * fy;
    adj_globals[kGroundSmoothing] += kg * (sp1 - z1 * sg1) * fy;
    adj_globals[kGroundHeight] += kg * sg1 * fy;
    adj_x[x_pos(i) + 1] += -kg * sg1 * fy;
    // lagged at z_k = (y_g − y)/w_g: damping −d_g σ_k w_y, friction −μ N_k w_t/q
    const S zk = (yg - y) / wg;
    S spk, sgk, sgc;
    softplus_sigmoid_of(zk, spk, sgk, &sgc);
    S adj_zk = S(0);
    adj_globals[kGroundDamping] += -sgk * wy * fy;
    adj_zk += -dg * wy * fy * sgk * sgc;  // σ' = σ (1 − σ)
    S q2 = ve * ve, P = S(0);
    for (int c = 0; c < dim; ++c)
      if (c != 1) {
        q2 += w[i * dim + c] * w[i * dim + c];
        P += w[i * dim + c] * fbar[i * dim + c];
      }
    const S q = sqrt(q2), N = kg * wg * spk;
    adj_globals[kFriction] += -N * P / q;
    adj_globals[kFrictionSmoothing] += mu * N * P * ve / (q2 * q);
    const S adj_N = -mu * P / q;
    adj_globals[kGroundStiffness] += wg * spk * adj_N;
    adj_globals[kGroundSmoothing] += kg * spk * adj_N;  // at fixed z_k; z_k's share below
    adj_zk += kg * wg * sgk * adj_N;
    adj_globals[kGroundHeight] += adj_zk / wg;
    adj_x[x_pos(i) + 1] += -adj_zk / wg;
    adj_globals[kGroundSmoothing] += -adj_zk * zk / wg;
  }
}

// the vector-Jacobian product of backward_euler: H λ = v̄' + h x̄' at the converged w, then
// z̄ += −(∂r/∂z)ᵀ λ with f̄ = h λ the adjoint of the forces (see the header comment), stage by stage
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
STEER_HD STEER_NOINLINE void MassSpring::adj_backward_euler(int k, const XIn& x, const UIn& u,
                                                            const PIn& p, XAdj& adj_x, UAdj& adj_u,
                                                            PAdj& adj_p, const XnAdj& adj_xn,
                                                            const Lanes& ln) const {
  if (!ln.leader()) return;
  ImplicitWork<S> W;
  implicit_solve<S>(k, x, u, p, W);
  const S t = S(dt * k);
  implicit_adjoint_solve<S>(x, p, W, adj_xn);
  S adj_globals[kNumGlobals];
  for (int q = 0; q < kNumGlobals; ++q) adj_globals[q] = S(0);
  adj_implicit_inertia<S>(x, p, W, adj_xn, adj_x, adj_p, adj_globals);
  PhaseBank<S> pb;
  fill_phases<S>(t, p, pb);
  S adj_w = S(0);
  for (int s = 0; s < n_springs; ++s)
    adj_implicit_spring<S>(s, t, x, u, p, W, pb, adj_x, adj_u, adj_p, adj_w);
  if (ground) adj_implicit_ground<S>(x, p, W, adj_x, adj_globals);
  if (actuation == kSinusoid) adj_globals[kActuationFrequency] += adj_w;
  for (int q = 0; q < kNumGlobals; ++q) adj_p[p_global(q)] += adj_globals[q];
}

}  // namespace steer
