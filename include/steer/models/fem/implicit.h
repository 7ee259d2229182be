// Fem's implicit step (integrator kBackwardEuler) and its adjoint by the implicit-function
// theorem; the pattern is the mass-spring model's (models/mass_spring/implicit.h).
//
// Backward Euler in the velocities, of length h: the end-of-step velocities w = v' solve
//   r(w) = M ((1 + hα) w − v) + h M g ŷ − h f(x_k, x', w) = 0,   x' = x_k + h w,
// where f holds each element's elastic and active forces at the end positions x' (implicit),
// the elements' damping stress at the end velocities w with F lagged at x_k, the ground's
// elastic normal force at x', its damping with σ(z_k) and its friction with the normal load
// N_k = k_g w_g softplus(z_k) lagged at x_k, and the controls' active levels at t_k. With those
// lags r = ∇E, the gradient of the step's incremental potential
//   E(w) = ½ (1 + hα) wᵀ M w − wᵀ M v + h Σ_i m_i g w_i,y                 inertia, gravity
//        + Σ_e V_e (Ψ_e(F'_e) + a_e Φ_e(F'_e))                              elastic, active
//        + Σ_i k_g w_g² G(z'_i),   G = ∫ softplus  (steer/implicit_math.h)   ground
//        + h Σ_e V_e ½ P_d,e(F_k, Ḟ(w)) : Ḟ(w)                              damping (linear in Ḟ)
//        + h Σ_i [½ d_g σ(z_k,i) w_i,y² + μ N_k,i sqrt(|w_i,t|² + v_s²)]   ground damping, friction
// (Φ = ½ |F d|² for a muscle, −(J − 1) for a chamber). Its Hessian
//   H = (1 + hα) M + h² (K_elastic + K_active + K_ground)(x') + h D_damping(F_k) + h D_friction(w)
// is symmetric; the damping and friction terms are positive semi-definite, the elastic one may
// be indefinite where elements are compressed hard. Newton's method on E, warm-started at w = v:
// the direction from the exact H where its banded LDLᵀ factor has positive pivots, else from
// H + τ M (τ doubled from 1 until it factors); a backtracking (Armijo) line search on E, where a
// step that halves ∇E is also taken while E's change is below its rounding (E's terms are of the
// size of e = Σ_e V_e (μ_e + λ_e), far larger than E near the solution). It stops when the exact-H
// step is at most 64 ε max(|w|, |v|, h g, h e / (M L)) (M the body's mass, L the smallest
// element's edge: the velocity the elastic forces' rounding allows), or stops shrinking below 1e4
// times that, takes that last full step and ends: the last step is always an exact-Hessian Newton
// step, so run on dual numbers
// the step gives the implicit-function derivative (the dual reference). A step that does not
// converge within newton_iterations gives NaN (the rollout's nonfinite flag).
//
// Adjoint: w̄ = v̄' + h x̄' on the free vertices; solve H λ = w̄ with the exact H at the converged w
// (NaN where it is not positive definite), then z̄ += −(∂r/∂z)ᵀ λ for every input: with f̄ = h λ,
// the explicit force adjoint at x' (elastic, active: into x̄, θ̄, ū) and the lagged terms' at x_k
// (damping through F_k, the ground's σ(z_k) and N_k), plus v̄ += M λ, m̄_i = −λ_i·((1 + hα) w_i −
// v_i + h g ŷ), ᾱ −= h Σ m_i λ_i·w_i, ḡ −= h Σ m_i λ_i,y, and x̄ += x̄' (x' = x_k + h w).
//
// Storage: the Hessian's lower band in the calling thread's stack (FemImplicitWork), sized by
// compile-time capacities: at most kImplicitVertices vertices and kImplicitBand band entries
// (3N (bw + 1), bw = 3 (largest vertex-index gap within an element + 1) − 1). Pinned vertices
// keep w = 0: their rows and columns are the identity's.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "steer/implicit_math.h"
#include "steer/models/fem/step.h"

namespace steer {

template <class S>
struct FemImplicitWork {
  S H[Fem::kImplicitBand];      // lower band of H, then its LDLᵀ factor
  S w[Fem::kImplicitDofs];      // the iterate v' [m/s]
  S g[Fem::kImplicitDofs];      // ∇E(w) [N·s]; then f̄ = h λ in the adjoint
  S d[Fem::kImplicitDofs];      // the Newton direction; then λ in the adjoint
  S t[Fem::kImplicitDofs];      // the line search's trial point
  S gt[Fem::kImplicitDofs];     // ∇E at the trial point
  S m[Fem::kImplicitVertices];  // lumped masses [kg]
  int n = 0, bw = 0;
  bool converged = false;
};

// the half-bandwidth in unknowns: 3 (largest vertex-index gap within an element + 1) − 1
STEER_HD inline int Fem::implicit_band() const {
  int gap = 0;
  for (int e = 0; e < n_elements; ++e)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < a; ++b) {
        const int d = vertex(e, a) - vertex(e, b);
        gap = (d < 0 ? -d : d) > gap ? (d < 0 ? -d : d) : gap;
      }
  return 3 * (gap + 1) - 1;
}
// 0 when the mesh fits the implicit step's storage; 1: too many vertices, 2: the band too wide
STEER_HD inline int Fem::implicit_fits() const {
  if (n_vertices > kImplicitVertices) return 1;
  if ((long long)3 * n_vertices * (implicit_band() + 1) > kImplicitBand) return 2;
  return 0;
}

namespace fem_implicit {
// an element's nodal field from a per-dof array (3 per vertex)
template <class S>
STEER_HD void gather_dofs(const Fem& m, int e, const S* a, S (&out)[4][3]) {
  for (int v = 0; v < 4; ++v)
    for (int c = 0; c < 3; ++c) out[v][c] = a[3 * m.vertex(e, v) + c];
}
// the ground's parameters, and at a surface vertex softplus and σ of z_k = (y_g − y)/w_g and of
// z' = (y_g − y − h w_y)/w_g (dy = h w_y)
template <class S>
struct GroundLaw {
  S yg, kg, dg, wg, mu, vs;
  template <class PIn>
  STEER_HD GroundLaw(const Fem& m, const PIn& p)
      : yg(S(p[m.p_global(Fem::kGroundHeight)])),
        kg(S(p[m.p_global(Fem::kGroundStiffness)])),
        dg(S(p[m.p_global(Fem::kGroundDamping)])),
        wg(S(p[m.p_global(Fem::kGroundSmoothing)])),
        mu(S(p[m.p_global(Fem::kFriction)])),
        vs(S(p[m.p_global(Fem::kFrictionSmoothing)])) {}
  template <class XIn>
  STEER_HD void at(int y_slot, const XIn& x, const S& dy, S& spk, S& sgk, S& sp1, S& sg1) const {
    const S y = S(x[y_slot]);
    softplus_sigmoid_of((yg - y) / wg, spk, sgk);
    softplus_sigmoid_of((yg - y - dy) / wg, sp1, sg1);
  }
};
}  // namespace fem_implicit

// E(w) (stored in W.w when w = W.w; any w) and, with grad, r = ∇E into grad
template <class S, class XIn, class UIn, class PIn>
STEER_HD S Fem::implicit_energy(const XIn& x, const UIn& u, const PIn& p,
                                const FemImplicitWork<S>& W, const S* w, S* grad) const {
  using std::sqrt;
  const S h = S(dt), grav = S(p[p_global(kGravity)]), alpha = S(p[p_global(kMassDamping)]);
  const int N = n_vertices;
  S E = S(0);
  if (grad)
    for (int q = 0; q < 3 * N; ++q) grad[q] = S(0);
  for (int i = 0; i < N; ++i) {
    if (pinned(i)) continue;
    for (int c = 0; c < 3; ++c) {
      const S wq = w[3 * i + c], v = S(x[x_vel(i) + c]);
      E += W.m[i] *
           (S(0.5) * (S(1) + h * alpha) * wq * wq - wq * v + (c == 1 ? h * grav * wq : S(0)));
      if (grad)
        grad[3 * i + c] += W.m[i] * ((S(1) + h * alpha) * wq - v + (c == 1 ? h * grav : S(0)));
    }
  }
  for (int e = 0; e < n_elements; ++e) {
    TetNodes<S> end, now;
    S we[4][3];
    fem_implicit::gather_dofs(*this, e, w, we);
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) {
        const int i = vertex(e, a);
        now.x[a][c] = S(x[x_pos(i) + c]);
        end.x[a][c] = now.x[a][c] + h * we[a][c];
        end.v[a][c] = now.v[a][c] = S(0);
      }
    const Mat3<S> B = rest_inverse<S>(e);
    const S V = rest_volume<S>(e);
    FemMaterial<S> mat = element_material<S>(p, e);
    const ActiveStress<S> act = element_active<S>(u, p, e);
    // elastic and active at x': energy, and −h f as the gradient
    const Mat3<S> F = tet_gradient(end.x, B);
    const StressPoint<S> q = stress_point(F, law);
    E += V * elastic_energy_density(law, F, q, mat.mu, mat.lambda) + V * active_energy(act, F, q);
    // damping with F lagged at x_k: ½ h V P_d(F_k, Ḟ) : Ḟ
    const Mat3<S> Fk = tet_gradient(now.x, B), Fd = tet_gradient(we, B);
    const StressPoint<S> qk = stress_point(Fk, law);
    const Mat3<S> Pd = viscous_stress(law == kNeoHookeanWarp, Fk, qk, Fd, mat);
    E += S(0.5) * h * V * mat3_ddot(Pd, Fd);
    if (grad) {
      S f[4][3] = {};
      mat.damping = S(0);
      tet_forces(law, end, B, V, mat, act, f);  // elastic and active at x' (Ḟ = 0)
      tet_stress_forces(Pd, B, V, f);           // the damping at (F_k, Ḟ(w))
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 3; ++c) grad[3 * vertex(e, a) + c] -= h * f[a][c];
    }
  }
  if (ground) {
    const fem_implicit::GroundLaw<S> gl(*this, p);
    const S kg = gl.kg, dg = gl.dg, wg = gl.wg, mu = gl.mu, vs = gl.vs;
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      if (pinned(i)) continue;
      S spk, sgk, sp1, sg1;  // softplus and σ at z_k (lagged) and at z' (end of step)
      gl.at(x_pos(i) + 1, x, h * w[3 * i + 1], spk, sgk, sp1, sg1);
      const S z1 = (gl.yg - S(x[x_pos(i) + 1]) - h * w[3 * i + 1]) / wg;
      const S load = kg * wg * spk;
      const S wt2 = w[3 * i] * w[3 * i] + w[3 * i + 2] * w[3 * i + 2] + vs * vs, qn = sqrt(wt2);
      E += kg * wg * wg * softplus_integral_of(z1) +
           h * (S(0.5) * dg * sgk * w[3 * i + 1] * w[3 * i + 1] + mu * load * qn);
      if (grad) {
        // −h f: the elastic normal k_g w_g softplus(z'), its damping −d_g σ(z_k) w_y, friction
        grad[3 * i + 1] += -h * kg * wg * sp1 + h * dg * sgk * w[3 * i + 1];
        grad[3 * i] += h * mu * load * w[3 * i] / qn;
        grad[3 * i + 2] += h * mu * load * w[3 * i + 2] / qn;
      }
    }
  }
  // a pinned vertex's w is no unknown (it stays 0): no gradient there
  if (grad)
    for (int i = 0; i < N; ++i)
      if (pinned(i))
        for (int c = 0; c < 3; ++c) grad[3 * i + c] = S(0);
  return E;
}

// H at w (the exact Hessian of E plus shift · M) into W.H, factored in place; whether every
// pivot is positive
template <class S, class XIn, class UIn, class PIn>
STEER_HD bool Fem::implicit_hessian(const XIn& x, const UIn& u, const PIn& p, FemImplicitWork<S>& W,
                                    const S* w, const S& shift) const {
  using implicit_detail::band;
  using std::sqrt;
  const S h = S(dt), alpha = S(p[p_global(kMassDamping)]);
  const int N = n_vertices, bw = W.bw;
  for (int q = 0; q < 3 * N * (bw + 1); ++q) W.H[q] = S(0);
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < 3; ++c)
      band(W.H, bw, 3 * i + c, 3 * i + c) = pinned(i) ? S(1) : (S(1) + h * alpha + shift) * W.m[i];
  for (int e = 0; e < n_elements; ++e) {
    S we[4][3], xk[4][3], xe[4][3];
    fem_implicit::gather_dofs(*this, e, w, we);
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) {
        xk[a][c] = S(x[x_pos(vertex(e, a)) + c]);
        xe[a][c] = xk[a][c] + h * we[a][c];
      }
    const Mat3<S> B = rest_inverse<S>(e);
    const S V = rest_volume<S>(e);
    const FemMaterial<S> mat = element_material<S>(p, e);
    const ActiveStress<S> act = element_active<S>(u, p, e);
    const Mat3<S> F = tet_gradient(xe, B), Fk = tet_gradient(xk, B);
    const StressPoint<S> q = stress_point(F, law), qk = stress_point(Fk, law);
    // column (b, cb) of the element's 12 × 12 block: −h² df_elastic − h df_damping for a unit
    // velocity of vertex b along cb
    for (int b = 0; b < 4; ++b)
      for (int cb = 0; cb < 3; ++cb) {
        const int col = 3 * vertex(e, b) + cb;
        if (pinned(vertex(e, b))) continue;
        S d[4][3] = {};
        d[b][cb] = S(1);
        const Mat3<S> G = tet_gradient(d, B);
        Mat3<S> dP = elastic_stress_differential(law, F, q, mat.mu, mat.lambda, G);
        mat3_axpy(dP, S(1), active_differential(act, F, G));
        S del[4][3] = {}, dda[4][3] = {};
        tet_stress_forces(dP, B, V, del);
        tet_stress_forces(viscous_stress(law == kNeoHookeanWarp, Fk, qk, G, mat), B, V, dda);
        for (int a = 0; a < 4; ++a)
          for (int ca = 0; ca < 3; ++ca) {
            const int row = 3 * vertex(e, a) + ca;
            if (row < col || pinned(vertex(e, a))) continue;
            band(W.H, bw, row, col) += -h * h * del[a][ca] - h * dda[a][ca];
          }
      }
  }
  if (ground) {
    const fem_implicit::GroundLaw<S> gl(*this, p);
    const S kg = gl.kg, dg = gl.dg, wg = gl.wg, mu = gl.mu, vs = gl.vs;
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      if (pinned(i)) continue;
      S spk, sgk, sp1, sg1;  // softplus and σ at z_k (lagged) and at z' (end of step)
      gl.at(x_pos(i) + 1, x, h * w[3 * i + 1], spk, sgk, sp1, sg1);
      band(W.H, bw, 3 * i + 1, 3 * i + 1) += h * h * kg * sg1 + h * dg * sgk;
      // friction: h μ N (I/q − w_t w_tᵀ/q³) on (x, z)
      const S load = kg * wg * spk, wx = w[3 * i], wz = w[3 * i + 2];
      const S q2 = wx * wx + wz * wz + vs * vs, qn = sqrt(q2), c = h * mu * load / qn;
      band(W.H, bw, 3 * i, 3 * i) += c * (S(1) - wx * wx / q2);
      band(W.H, bw, 3 * i + 2, 3 * i + 2) += c * (S(1) - wz * wz / q2);
      band(W.H, bw, 3 * i + 2, 3 * i) += -c * wx * wz / q2;
    }
  }
  return bool(implicit_detail::band_ldlt(W.H, 3 * N, bw));
}

// Newton's method on E (see the header) from w = v; W.w the converged velocities
template <class S, class XIn, class UIn, class PIn>
STEER_HD void Fem::implicit_solve(const XIn& x, const UIn& u, const PIn& p,
                                  FemImplicitWork<S>& W) const {
  using R = typename implicit_detail::real_of<S>::type;
  const int N = n_vertices, n = 3 * N;
  W.n = n;
  W.bw = implicit_band();
  W.converged = false;
  for (int i = 0; i < N; ++i) W.m[i] = S(0);
  for (int e = 0; e < n_elements; ++e)
    for (int a = 0; a < 4; ++a) W.m[vertex(e, a)] += vertex_mass_share<S>(p, e);
  double scale = std::abs(double(value_of(S(dt) * S(p[p_global(kGravity)]))));
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < 3; ++c) {
      W.w[3 * i + c] = pinned(i) ? S(0) : S(x[x_vel(i) + c]);
      scale = std::max(scale, std::abs(double(value_of(W.w[3 * i + c]))));
    }
  const double tol = 64 * double(std::numeric_limits<R>::epsilon()) * std::max(scale, 1e-300);
  double e_scale = 0;  // Σ_e V_e (μ_e + λ_e) [J]: the size of E's terms
  for (int e = 0; e < n_elements; ++e) {
    const FemMaterial<S> mat = element_material<S>(p, e);
    e_scale += std::abs(double(value_of(rest_volume<S>(e) * (mat.mu + mat.lambda))));
  }
  const double e_round = 1e3 * double(std::numeric_limits<R>::epsilon()) * e_scale;
  // the velocity the step can resolve: the elastic forces' rounding (of the size of
  // e_scale / L, L the smallest element's edge) over the body's mass, for one step
  double mass = 0, vmin = 1e300;
  for (int e = 0; e < n_elements; ++e) {
    mass += std::abs(double(value_of(S(4) * vertex_mass_share<S>(p, e))));
    vmin = std::min(vmin, std::abs(double(value_of(rest_volume<S>(e)))));
  }
  const double floor = 64 * double(std::numeric_limits<R>::epsilon()) * double(value_of(S(dt))) *
                       e_scale / (std::max(mass, 1e-300) * std::cbrt(6 * vmin));
  double last = 1e300;
  for (int it = 1; it <= newton_iterations; ++it) {
    const S E0 = implicit_energy<S>(x, u, p, W, W.w, W.g);
    const bool exact = implicit_hessian<S>(x, u, p, W, W.w, S(0));
    if (!exact) {
      // a descent direction from H + τ M, τ doubled until it factors (M > 0)
      double tau = 1;
      while (!implicit_hessian<S>(x, u, p, W, W.w, S(tau)) && tau < 1e12) tau *= 2;
    }
    for (int q = 0; q < n; ++q) W.d[q] = -W.g[q];
    implicit_detail::band_solve(W.H, n, W.bw, W.d);
    double step = 0, wmax = scale;
    for (int q = 0; q < n; ++q) {
      step = std::max(step, std::abs(double(value_of(W.d[q]))));
      wmax = std::max(wmax, std::abs(double(value_of(W.w[q]))));
    }
    const double stop = 64 * double(std::numeric_limits<R>::epsilon()) * wmax;
    if (exact && (step <= std::max(std::max(stop, tol), floor) ||
                  (step <= 1e4 * std::max(stop, floor) && step >= 0.5 * last))) {
      for (int q = 0; q < n; ++q) W.w[q] += W.d[q];  // the last step: a full exact-H Newton step
      W.converged = true;
      return;
    }
    last = exact ? step : 1e300;
    S slope = S(0);
    double g0 = 0;
    for (int q = 0; q < n; ++q) {
      slope += W.g[q] * W.d[q];
      g0 = std::max(g0, std::abs(double(value_of(W.g[q]))));
    }
    // Armijo on E; near the solution the decrease E can show is below its rounding (its terms,
    // of the size of Σ_e V_e (μ_e + λ_e), are far larger than their sum), and a step that halves
    // ∇E without raising E beyond that rounding is taken instead
    double t = 1;
    for (int ls = 0; ls < 40; ++ls, t *= 0.5) {
      for (int q = 0; q < n; ++q) W.t[q] = W.w[q] + S(t) * W.d[q];
      const S E1 = implicit_energy<S>(x, u, p, W, W.t, W.gt);
      if (value_of(E1) <= value_of(E0 + S(1e-4 * t) * slope)) break;
      double g1 = 0;
      for (int q = 0; q < n; ++q) g1 = std::max(g1, std::abs(double(value_of(W.gt[q]))));
      if (double(value_of(E1 - E0)) <= e_round && g1 <= 0.5 * g0) break;
    }
    for (int q = 0; q < n; ++q) W.w[q] = W.t[q];
  }
}

template <class S, class XIn, class UIn, class PIn, class XOut>
STEER_HD void Fem::implicit_step(const XIn& x, const UIn& u, const PIn& p, XOut& xn) const {
  FemImplicitWork<S> W;
  implicit_solve<S>(x, u, p, W);
  const S h = S(dt), nan = S(std::numeric_limits<double>::quiet_NaN());
  for (int i = 0; i < n_vertices; ++i)
    for (int c = 0; c < 3; ++c) {
      const S w = W.converged ? W.w[3 * i + c] : nan;
      xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + h * w;
      xn[x_vel(i) + c] = w;
    }
}

// the adjoint (see the header): λ from H λ = w̄, then every input's −(∂r/∂z)ᵀ λ
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
STEER_HD void Fem::adj_implicit_step(const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                     UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn) const {
  FemImplicitWork<S> W;
  implicit_solve<S>(x, u, p, W);
  const int N = n_vertices, n = 3 * N;
  const S h = S(dt), grav = S(p[p_global(kGravity)]), alpha = S(p[p_global(kMassDamping)]);
  const bool ok = W.converged && implicit_hessian<S>(x, u, p, W, W.w, S(0));
  S* lam = W.d;
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < 3; ++c)
      lam[3 * i + c] = pinned(i) ? S(0) : S(adj_xn[x_vel(i) + c]) + h * S(adj_xn[x_pos(i) + c]);
  implicit_detail::band_solve(W.H, n, W.bw, lam);
  if (!ok)
    for (int q = 0; q < n; ++q) lam[q] = S(std::numeric_limits<double>::quiet_NaN());
  S* fbar = W.g;
  for (int q = 0; q < n; ++q) fbar[q] = h * lam[q];
  // inertia, gravity, mass damping; the masses' cotangents into W.t (one per vertex)
  S* mbar = W.t;
  for (int i = 0; i < N; ++i) {
    mbar[i] = S(0);
    for (int c = 0; c < 3; ++c) adj_x[x_pos(i) + c] += S(adj_xn[x_pos(i) + c]);
    if (pinned(i)) continue;
    for (int c = 0; c < 3; ++c) {
      const S l = lam[3 * i + c], w = W.w[3 * i + c], v = S(x[x_vel(i) + c]);
      adj_x[x_vel(i) + c] += W.m[i] * l;
      mbar[i] -= l * ((S(1) + h * alpha) * w - v + (c == 1 ? h * grav : S(0)));
      adj_p[p_global(kMassDamping)] -= h * W.m[i] * l * w;
    }
    adj_p[p_global(kGravity)] -= h * W.m[i] * lam[3 * i + 1];
  }
  for (int e = 0; e < n_elements; ++e) {
    S we[4][3], fb[4][3], xk[4][3], xbar[4][3] = {}, vbar[4][3] = {}, kbar[4][3] = {};
    fem_implicit::gather_dofs(*this, e, W.w, we);
    fem_implicit::gather_dofs(*this, e, fbar, fb);
    TetNodes<S> end;
    S share_bar = S(0);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      share_bar += mbar[i];
      for (int c = 0; c < 3; ++c) {
        xk[a][c] = S(x[x_pos(i) + c]);
        end.x[a][c] = xk[a][c] + h * we[a][c];
        end.v[a][c] = S(0);
      }
    }
    const Mat3<S> B = rest_inverse<S>(e);
    const S V = rest_volume<S>(e);
    const FemMaterial<S> mat = element_material<S>(p, e);
    const ActiveStress<S> act = element_active<S>(u, p, e);
    FemMaterial<S> mb;
    mb.mu = mb.lambda = mb.mu_l = mb.lambda_l = mb.damping = S(0);
    S level_bar = S(0);
    // elastic and active at x' = x_k + h w
    FemMaterial<S> elastic = mat;
    elastic.damping = S(0);
    adj_tet_forces(law, end, B, V, elastic, act, fb, xbar, vbar, mb, level_bar);
    // the damping at (F_k, Ḟ(w))
    const Mat3<S> Fk = tet_gradient(xk, B);
    const StressPoint<S> qk = stress_point(Fk, law);
    Mat3<S> Fkbar = mat3_zero<S>(), Fdbar = mat3_zero<S>();
    adj_viscous_stress(law == kNeoHookeanWarp, Fk, qk, tet_gradient(we, B), mat,
                       adj_tet_stress_forces(fb, B, V), Fkbar, Fdbar, mb);
    adj_tet_gradient(Fkbar, B, kbar);
    adj_element_material(p, e, mb, adj_p);
    adj_element_active(u, p, e, level_bar, adj_u, adj_p);
    adj_vertex_mass_share(p, e, share_bar, adj_p);
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) adj_x[x_pos(vertex(e, a)) + c] += xbar[a][c] + kbar[a][c];
  }
  if (ground) {
    NormalLawParams<S> q, aq;
    q.k = S(p[p_global(kGroundStiffness)]);
    q.dc = S(p[p_global(kGroundDamping)]);
    q.w = S(p[p_global(kGroundSmoothing)]);
    aq.k = aq.dc = aq.w = S(0);
    const S yg = S(p[p_global(kGroundHeight)]), mu = S(p[p_global(kFriction)]);
    const S vs = S(p[p_global(kFrictionSmoothing)]);
    S amu = S(0), avs = S(0), ayg = S(0);
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      if (pinned(i)) continue;
      const S y = S(x[x_pos(i) + 1]), wy = W.w[3 * i + 1];
      // the elastic normal at y' = y + h w_y (no damping there: ż = 0)
      S ad = S(0), az = S(0);
      adj_normal_softplus(yg - y - h * wy, S(0), q, fbar[3 * i + 1], S(0), ad, az, aq);
      adj_x[x_pos(i) + 1] -= ad;
      ayg += ad;
      // the damping −d_g σ(z_k) w_y and the friction's load N_k, both at y_k: the normal law's
      // f_n − N at (d_k, w_y) with cotangent f̄_y, and N's from the friction
      const S wt[2] = {W.w[3 * i], W.w[3 * i + 2]}, aft[2] = {fbar[3 * i], fbar[3 * i + 2]};
      const S dk = yg - y;
      const NormalForce<S> nk = normal_softplus(dk, wy, q);
      S avt[2] = {S(0), S(0)}, afe = S(0);
      adj_friction_smoothed(wt, nk.fe, mu, vs, aft, avt, afe, amu, avs);
      S ad2 = S(0);
      az = S(0);
      adj_normal_softplus(dk, wy, q, fbar[3 * i + 1], afe - fbar[3 * i + 1], ad2, az, aq);
      adj_x[x_pos(i) + 1] -= ad2;
      ayg += ad2;
    }
    adj_p[p_global(kGroundHeight)] += ayg;
    adj_p[p_global(kGroundStiffness)] += aq.k;
    adj_p[p_global(kGroundDamping)] += aq.dc;
    adj_p[p_global(kGroundSmoothing)] += aq.w;
    adj_p[p_global(kFriction)] += amu;
    adj_p[p_global(kFrictionSmoothing)] += avs;
  }
}

}  // namespace steer
