// Articulated: fluid forces, MuJoCo's inertia-box model (its documentation, "Fluid forces",
// "Inertia model"), and their adjoint.
//   Each body b with mass (not steer's massless frames: fluid_body) is, for the fluid, the box
//   with b's mass M and principal moments I_x, I_y, I_z: full sides
//     s_x = sqrt(6 max(ε, I_y + I_z − I_x) / M)  (and cyclically; ε = 10⁻¹⁵ as MuJoCo's mjMINVAL),
//   the principal moments being Iₖ = eₖᵀ R_pᵀ I(θ) R_p eₖ on the body's principal axes R_p
//   (fluid_frame, fixed in the body: the file's or, for a JSON model, the nominal inertia's).
//   In that frame, at the centre of mass c_b, with v the velocity of c_b less the wind and ω
//   the angular velocity (both in the box's axes), fluid density ρ and viscosity β, and
//   d = (s_x + s_y + s_z)/3:
//     f = −3π β d v − ½ ρ (s_y s_z |v_x| v_x, s_x s_z |v_y| v_y, s_x s_y |v_z| v_z)   [N]
//     t = −π β d³ ω − (ρ/64) (s_x (s_y⁴ + s_z⁴) |ω_x| ω_x, …cyclic)                 [N·m]
//   (viscous Stokes drag of the sphere of diameter d, and quadratic drag of the box's faces),
//   applied at c_b: τ_e += J_e(c_b) · R f + a_e · R t for each joint e above b, R = R_b R_p.
//   The force depends on q̇, explicitly in every integrator (euler and rk4, as MuJoCo's Euler
//   and RK4 do; MuJoCo's implicit integrators also differentiate it in q̇, which steer's
//   implicitfast does not, so the config refuses that combination).
// Adjoint of φ = μᵀ τ_f = Σ_b f · u + t · w, with u = Rᵀ (J(c_b) μ), w = Rᵀ (J_ω μ) the box's
// velocities under joint velocities μ: ū = f, w̄ = t, and f, t are diagonal in v and ω,
//   ∂f_k/∂v_k = −3π β d − ρ s_j s_l |v_k|,  ∂t_k/∂ω_k = −π β d³ − (ρ/32) s_k (s_j⁴ + s_l⁴) |ω_k|,
// so v̄ = diag(∂f/∂v) u, ω̄ = diag(∂t/∂ω) w. Each local vector z = Rᵀ x (x world: v_c − wind,
// ω, J μ, J_ω μ) with adjoint z̄ gives the world adjoint R z̄ and, since the box turns with
// b, the moment (R z̄) × x about its origin (KinAdj's t̄_b); the Jacobians' adjoint is
// J̄_e = v̄_c q̇_e + F μ_e (into ā_e, p̄_e and c̄_b) and ā_e += ω̄ q̇_e + T μ_e for hinges.
// Only capacities with kFluid have them (the CPU's scalar one, ArticulatedLarge): the config
// moves a model with fluid forces there.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"

namespace steer {

namespace fluid_detail {

constexpr double kPi = 3.14159265358979323846;
constexpr double kMinMoment = 1e-15;  // MuJoCo's mjMINVAL, the floor under I_y + I_z − I_x

template <class S>
STEER_HD S signed_square(const S& x) {  // |x| x
  return select(x < S(0), S(-x), x) * x;
}
template <class S>
STEER_HD S magnitude(const S& x) {
  return select(x < S(0), S(-x), x);
}

// the box of body b: its full sides s [m] and, for the adjoint, ∂s_k/∂I_k-combination
// (ds_dx[k] = ∂s_k/∂X_k with X_k = max(ε, I_j + I_l − I_k), 0 where the floor holds) and
// ∂s_k/∂M = −s_k/(2M); the principal moments I [kg·m²] on fluid_frame's axes
template <class Model, class S, class PIn>
STEER_HD void box_sides(const Model& m, const PIn& p, int b, S* s, S* ds_dx, S* I) {
  using std::sqrt;
  const S mass = S(p[m.p_body(b, Model::kMass)]);
  const S J[3][3] = {{S(p[m.p_body(b, Model::kIxx)]), S(p[m.p_body(b, Model::kIxy)]),
                      S(p[m.p_body(b, Model::kIxz)])},
                     {S(p[m.p_body(b, Model::kIxy)]), S(p[m.p_body(b, Model::kIyy)]),
                      S(p[m.p_body(b, Model::kIyz)])},
                     {S(p[m.p_body(b, Model::kIxz)]), S(p[m.p_body(b, Model::kIyz)]),
                      S(p[m.p_body(b, Model::kIzz)])}};
  const double* Rp = m.fluid_frame[b];
  for (int k = 0; k < 3; ++k) {
    S ik = S(0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) ik += S(Rp[3 * i + k] * Rp[3 * j + k]) * J[i][j];
    I[k] = ik;
  }
  for (int k = 0; k < 3; ++k) {
    const S x = I[(k + 1) % 3] + I[(k + 2) % 3] - I[k];
    const auto floor = x < S(kMinMoment);
    s[k] = sqrt(S(6) * select(floor, S(kMinMoment), x) / mass);
    ds_dx[k] = select(floor, S(0), S(S(3) / (mass * s[k])));
  }
}

// the box's local drag coefficients: A_k = ½ ρ s_j s_l (faces) and B_k = (ρ/64) s_k (s_j⁴ + s_l⁴)
// (turning), with the viscous c_v = 3π β d, c_w = π β d³
template <class S>
struct BoxDrag {
  S A[3], B[3], cv, cw, d;
};
template <class S>
STEER_HD BoxDrag<S> box_drag(const S* s, const S& rho, const S& beta) {
  BoxDrag<S> c;
  c.d = (s[0] + s[1] + s[2]) / S(3);
  c.cv = S(3 * kPi) * beta * c.d;
  c.cw = S(kPi) * beta * c.d * c.d * c.d;
  for (int k = 0; k < 3; ++k) {
    const S sj = s[(k + 1) % 3], sl = s[(k + 2) % 3];
    c.A[k] = S(0.5) * rho * sj * sl;
    c.B[k] = rho / S(64) * s[k] * (sj * sj * sj * sj + sl * sl * sl * sl);
  }
  return c;
}

// world velocity of body b's centre of mass and its angular velocity under joint velocities v
template <class Model, class S>
STEER_HD void body_twist(const Model& m, const typename Model::template Kin<S>& K, int b,
                         const S* v, S* vc, S* w) {
  for (int i = 0; i < 3; ++i) vc[i] = w[i] = S(0);
  for (int e = b; e >= 0; e = m.parent[e]) {
    if (m.joint[e] == Model::kFixed) continue;
    S je[3];
    m.point_jacobian(K, e, K.C[b], je);
    const S qd = v[m.dof[e]];
    for (int i = 0; i < 3; ++i) vc[i] += je[i] * qd;
    if (m.joint[e] == Model::kHinge)
      for (int i = 0; i < 3; ++i) w[i] += K.A[e][i] * qd;
  }
}

// R = R_b R_p, the box's axes in the world
template <class Model, class S>
STEER_HD void box_rotation(const Model& m, const typename Model::template Kin<S>& K, int b, S* R) {
  const double* Rp = m.fluid_frame[b];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      R[3 * i + j] = K.R[b][3 * i] * S(Rp[j]) + K.R[b][3 * i + 1] * S(Rp[3 + j]) +
                     K.R[b][3 * i + 2] * S(Rp[6 + j]);
}

template <class S>
STEER_HD void mul(const S* R, const S* x, S* y) {  // y = R x
  for (int i = 0; i < 3; ++i) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}
template <class S>
STEER_HD void mul_t(const S* R, const S* x, S* y) {  // y = Rᵀ x
  for (int i = 0; i < 3; ++i) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}

// the fluid's θ slots: ρ [kg/m³], β [Pa·s] and the wind [m/s]
template <class S>
struct Medium {
  S rho, beta, wind[3];
};
template <class Model, class S, class PIn>
STEER_HD Medium<S> medium(const Model& m, const PIn& p) {
  return {S(p[m.p_fluid(Model::kFluidDensity)]),
          S(p[m.p_fluid(Model::kFluidViscosity)]),
          {S(p[m.p_fluid(Model::kFluidWindX)]), S(p[m.p_fluid(Model::kFluidWindY)]),
           S(p[m.p_fluid(Model::kFluidWindZ)])}};
}

// body b's box in the flow: its sides s (with ∂s/∂X and the moments I, box_sides), drag
// coefficients c, axes R (world), the world velocity of its centre of mass less the wind vc and
// angular velocity w, and both on the box's axes, vl and wl
template <class S>
struct BoxState {
  S s[3], dsx[3], I[3], R[9], vc[3], w[3], vl[3], wl[3];
  BoxDrag<S> c;
};
template <class Model, class S, class PIn>
STEER_HD void box_state(const Model& m, const typename Model::template Kin<S>& K, const PIn& p,
                        const Medium<S>& f, int b, const S* v, BoxState<S>& x) {
  box_sides<Model, S>(m, p, b, x.s, x.dsx, x.I);
  x.c = box_drag(x.s, f.rho, f.beta);
  box_rotation<Model, S>(m, K, b, x.R);
  body_twist<Model, S>(m, K, b, v, x.vc, x.w);
  for (int i = 0; i < 3; ++i) x.vc[i] -= f.wind[i];
  mul_t(x.R, x.vc, x.vl);
  mul_t(x.R, x.w, x.wl);
}

}  // namespace fluid_detail

// τ += Σ_b J(c_b)ᵀ R f + J_ωᵀ R t over the bodies with fluid forces (fluid_body)
template <class Model, class S, class PIn>
STEER_HD void fluid_forces(const Model& m, const typename Model::template Kin<S>& K, const S* v,
                           const PIn& p, S* tau) {
  if constexpr (Model::kFluid) {
    if (!m.fluid) return;
    using namespace fluid_detail;
    const Medium<S> md = medium<Model, S>(m, p);
    for (int b = 0; b < m.n_bodies; ++b) {
      if (!m.fluid_body[b]) continue;
      BoxState<S> x;
      box_state<Model, S>(m, K, p, md, b, v, x);
      const BoxDrag<S>& c = x.c;
      const S* R = x.R;
      S f[3], t[3], F[3], T[3];
      for (int k = 0; k < 3; ++k) {
        f[k] = -c.cv * x.vl[k] - c.A[k] * signed_square(x.vl[k]);
        t[k] = -c.cw * x.wl[k] - c.B[k] * signed_square(x.wl[k]);
      }
      mul(R, f, F);
      mul(R, t, T);
      for (int e = b; e >= 0; e = m.parent[e]) {
        if (m.joint[e] == Model::kFixed) continue;
        S je[3];
        m.point_jacobian(K, e, K.C[b], je);
        S g = je[0] * F[0] + je[1] * F[1] + je[2] * F[2];
        if (m.joint[e] == Model::kHinge)
          g += K.A[e][0] * T[0] + K.A[e][1] * T[1] + K.A[e][2] * T[2];
        tau[m.dof[e]] += g;
      }
    }
  }
}

// adjoint of φ = μᵀ τ_f (fluid_forces): into q̇̄ (adj_v), the kinematics' adjoint KA and θ̄
// (density, viscosity, wind, and each body's mass and inertia through its box)
template <class Model, class S, class PIn>
STEER_HD void adj_fluid_forces(const Model& m, const typename Model::template Kin<S>& K, const S* v,
                               const PIn& p, const S* mu, typename Model::template KinAdj<S>& KA,
                               S* adj_v, S* adj_p) {
  if constexpr (Model::kFluid) {
    if (!m.fluid) return;
    using namespace fluid_detail;
    const Medium<S> md = medium<Model, S>(m, p);
    const S rho = md.rho, beta = md.beta;
    S arho = S(0), abeta = S(0), awind[3] = {S(0), S(0), S(0)};
    for (int b = 0; b < m.n_bodies; ++b) {
      if (!m.fluid_body[b]) continue;
      BoxState<S> x;
      box_state<Model, S>(m, K, p, md, b, v, x);
      const BoxDrag<S>& c = x.c;
      const S *s = x.s, *dsx = x.dsx, *R = x.R, *vc = x.vc, *w = x.w, *vl = x.vl, *wl = x.wl;
      S uc[3], wm[3], ul[3], wml[3];
      body_twist<Model, S>(m, K, b, mu, uc, wm);
      mul_t(R, uc, ul);
      mul_t(R, wm, wml);
      // φ_b = f · u_l + t · w_l; the local adjoints and the coefficients' adjoints
      S f[3], t[3], gv[3], gw[3], aA[3], aB[3];
      S acv = S(0), acw = S(0);
      for (int k = 0; k < 3; ++k) {
        const S sv = signed_square(vl[k]), sw = signed_square(wl[k]);
        f[k] = -c.cv * vl[k] - c.A[k] * sv;
        t[k] = -c.cw * wl[k] - c.B[k] * sw;
        gv[k] = (-c.cv - S(2) * c.A[k] * magnitude(vl[k])) * ul[k];
        gw[k] = (-c.cw - S(2) * c.B[k] * magnitude(wl[k])) * wml[k];
        aA[k] = -sv * ul[k];
        aB[k] = -sw * wml[k];
        acv -= vl[k] * ul[k];
        acw -= wl[k] * wml[k];
      }
      // the coefficients: c_v = 3π β d, c_w = π β d³, A_k = ½ ρ s_j s_l,
      // B_k = (ρ/64) s_k (s_j⁴ + s_l⁴), d = (s_x + s_y + s_z)/3
      abeta += acv * S(3 * kPi) * c.d + acw * S(kPi) * c.d * c.d * c.d;
      const S ad = acv * S(3 * kPi) * beta + acw * S(3 * kPi) * beta * c.d * c.d;
      S as[3];
      for (int k = 0; k < 3; ++k) as[k] = ad / S(3);
      for (int k = 0; k < 3; ++k) {
        const int j = (k + 1) % 3, l = (k + 2) % 3;
        const S sj4 = s[j] * s[j] * s[j] * s[j], sl4 = s[l] * s[l] * s[l] * s[l];
        arho += aA[k] * S(0.5) * s[j] * s[l] + aB[k] / S(64) * s[k] * (sj4 + sl4);
        as[j] +=
            aA[k] * S(0.5) * rho * s[l] + aB[k] * rho / S(64) * s[k] * S(4) * s[j] * s[j] * s[j];
        as[l] +=
            aA[k] * S(0.5) * rho * s[j] + aB[k] * rho / S(64) * s[k] * S(4) * s[l] * s[l] * s[l];
        as[k] += aB[k] * rho / S(64) * (sj4 + sl4);
      }
      // the sides: s_k = sqrt(6 X_k / M), X_k = I_j + I_l − I_k; Iₖ = eₖᵀ R_pᵀ I(θ) R_p eₖ
      S aI[3] = {S(0), S(0), S(0)}, amass = S(0);
      const S mass = S(p[m.p_body(b, Model::kMass)]);
      for (int k = 0; k < 3; ++k) {
        const S ax = as[k] * dsx[k];
        aI[(k + 1) % 3] += ax;
        aI[(k + 2) % 3] += ax;
        aI[k] -= ax;
        amass -= as[k] * s[k] / (S(2) * mass);
      }
      adj_p[m.p_body(b, Model::kMass)] += amass;
      const double* Rp = m.fluid_frame[b];
      const int slot[3][3] = {{Model::kIxx, Model::kIxy, Model::kIxz},
                              {Model::kIxy, Model::kIyy, Model::kIyz},
                              {Model::kIxz, Model::kIyz, Model::kIzz}};
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            adj_p[m.p_body(b, slot[i][j])] += aI[k] * S(Rp[3 * i + k] * Rp[3 * j + k]);
      // to the world: v̄_c = R gv (also the wind's, negated), ω̄ = R gw, ū_c = F, w̄_μ = T
      S avc[3], aw[3], F[3], T[3];
      mul(R, gv, avc);
      mul(R, gw, aw);
      mul(R, f, F);
      mul(R, t, T);
      for (int i = 0; i < 3; ++i) awind[i] -= avc[i];
      // the box turns with b: the moment Σ (R z̄) × x
      S m1[3], m2[3], m3[3], m4[3];
      Model::cross(avc, vc, m1);
      Model::cross(aw, w, m2);
      Model::cross(F, uc, m3);
      Model::cross(T, wm, m4);
      for (int i = 0; i < 3; ++i) KA.T[b][i] += m1[i] + m2[i] + m3[i] + m4[i];
      // the Jacobians: v_c = Σ J_e(c_b) q̇_e, u_c = Σ J_e μ_e, ω = Σ a_e q̇_e, w_μ = Σ a_e μ_e
      for (int e = b; e >= 0; e = m.parent[e]) {
        if (m.joint[e] == Model::kFixed) continue;
        const int j = m.dof[e];
        S je[3];
        m.point_jacobian(K, e, K.C[b], je);
        S g = je[0] * avc[0] + je[1] * avc[1] + je[2] * avc[2];
        S aj[3];
        for (int i = 0; i < 3; ++i) aj[i] = avc[i] * v[j] + F[i] * mu[j];
        if (m.joint[e] == Model::kSlide) {
          for (int i = 0; i < 3; ++i) KA.A[e][i] += aj[i];
        } else {
          g += K.A[e][0] * aw[0] + K.A[e][1] * aw[1] + K.A[e][2] * aw[2];
          // J_e = a_e × (c_b − p_e)
          const S r[3] = {K.C[b][0] - K.P[e][0], K.C[b][1] - K.P[e][1], K.C[b][2] - K.P[e][2]};
          S ar[3] = {S(0), S(0), S(0)};
          Model::adj_cross(K.A[e], r, KA.A[e], ar, aj);
          for (int i = 0; i < 3; ++i) {
            KA.C[b][i] += ar[i];
            KA.P[e][i] -= ar[i];
            KA.A[e][i] += aw[i] * v[j] + T[i] * mu[j];
          }
        }
        adj_v[j] += g;
      }
    }
    adj_p[m.p_fluid(Model::kFluidDensity)] += arho;
    adj_p[m.p_fluid(Model::kFluidViscosity)] += abeta;
    for (int i = 0; i < 3; ++i) adj_p[m.p_fluid(Model::kFluidWindX + i)] += awind[i];
  }
}

}  // namespace steer
