// Articulated: the euler / implicitfast step, and its hand adjoint.
//   A q̇⁺ = b,  A = M + h diag(D + s' k_v [implicitfast]) [+ h Σ_t d_t c_t c_tᵀ, implicitfast],
//   b = M q̇ + h (τ − c + τ_c + τ_f + τ_l + τ_s + Σ_t c_t f_t [+ s' k_v q̇]) (τ_f the fluid's and
//   the joint friction's, τ_l the limits', τ_s the springs' torque, f_t the fixed tendons'
//   forces, their damping left out in implicitfast),
//   q⁺ = q + h q̇⁺;
// adjoint: A λ = q̇̄⁺ + h q̄⁺, q̄ += q̄⁺, and z̄ += ∂φ/∂z for φ(z) = λᵀ (b(z) − A(z) q̇⁺) with λ
// and q̇⁺ held fixed.
// A free root and a ball (model.h) have no servo: τ_i = u_i for their dofs (a free root's world
// force [N], a body-frame torque [N·m]: the generalized forces of their velocities), damping
// and armature as any joint's; a ball's quaternion steps on the rotation group,
// quat⁺ = quat ⊗ exp(h ω⁺/2) (quat_step), a free root's p⁺ = p + h v⁺, and the cotangent of ω⁺
// then takes quat_step's adjoint in place of h q̄⁺. With time-of-impact restitution
// (GroundContacts::impact) the impulses follow q̇⁺ and the position integrates their mean velocity
// (impact.h).
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/dynamics.h"
#include "steer/models/articulated/contact.h"
#include "steer/models/articulated/fluid.h"
#include "steer/models/articulated/spatial_tendon.h"
#include "steer/models/articulated/joint_friction.h"
#include "steer/models/articulated/actuator.h"
#include "steer/models/articulated/cholesky.h"
#include "steer/models/articulated/servo.h"
#include "steer/models/articulated/impact.h"

namespace steer {

// the generalized forces every integrator applies explicitly, per joint,
//   f = τ − c + τ_c + τ_f + τ_l + τ_s + Σ_t c_t f_t   (no joint damping D q̇: euler and
//   implicitfast take it into A, rk4 subtracts it),
// with the kinematics K, the Newton–Euler intermediates W and M (row-major, into M); τ_raw, s'
// and the saturation's tape per joint. The implicit servo's τ is left out (servo_solve adds it),
// and implicitfast leaves the fixed tendons' damping out (A takes it).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::applied_forces(const S* q, const S* v,
                                                                        const UIn& u, const PIn& p,
                                                                        Kin<S>& K, RneaWork<S>& W,
                                                                        S* M, S* f, S* raw,
                                                                        S* slope, S* sig) const {
  const int n = n_dof;
  forward_kinematics(q, p, K);
  S c[kMaxDof], tc[kMaxDof];
  mass_matrix(K, p, M);
  bias_forces(K, v, p, c, W);
  for (int i = 0; i < n; ++i) tc[i] = S(0);
  contact_forces(K, v, p, tc);
  fluid_forces<ArticulatedCap, S>(*this, K, v, p, tc);           // explicit (fluid.h)
  spatial_tendon_forces<ArticulatedCap, S>(*this, K, v, p, tc);  // explicit (spatial_tendon.h)
  joint_friction_forces<ArticulatedCap, S>(*this, v, p, tc);     // explicit (joint_friction.h)
  // the fixed tendons' c_t f_t, joined to the contact forces (τ_c below); implicitfast's tendon
  // damping goes into A (add_tendon_damping)
  tendon_forces(q, v, p, integrator != kImplicitFast, tc);
  for (int i = 0; i < n; ++i) {
    if (free_dof(i)) {
      raw[i] = S(u[i]), slope[i] = S(0);  // a direct generalized force: no servo, no saturation
      f[i] = raw[i] - c[i] + tc[i];
    } else if (implicit_servo()) {
      f[i] = tc[i] - c[i];  // servo_solve adds the controller
    } else {
      raw[i] = S(p[p_joint(i, kKp)]) * (S(p[p_joint(i, kTarget)]) - q[qadr(i)]) -
               S(p[p_joint(i, kKv)]) * v[i] + S(u[i]);
      const S tau = saturate(p, i, raw[i], slope[i], sig ? sig + kSatTape * i : nullptr);
      f[i] = tau - c[i] + tc[i];
    }
    if (joint_limits && !free_dof(i)) f[i] += limit_torque(i, q[qadr(i)]);
    if (!free_dof(i)) f[i] += spring_torque(p, i, q[qadr(i)]);
  }
}

// the linear system of the euler / implicitfast step, A q̇⁺ = rhs:
//   A = M + h diag(D + s' k_v [implicitfast]),  rhs = M q̇ + h (f [+ s' k_v q̇])
// (f: applied_forces); also returns the kinematics K, the Newton–Euler intermediates W, M's
// diagonal (A's strict upper triangle is M's, and survives cholesky_factor), τ_raw and s' per
// joint
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::implicit_system(
    const S* q, const S* v, const UIn& u, const PIn& p, Kin<S>& K, RneaWork<S>& W, S* M, S* mdiag,
    S* rhs, S* raw, S* slope, S* sig) const {
  const int n = n_dof;
  const S h = S(dt);
  applied_forces(q, v, u, p, K, W, M, rhs, raw, slope, sig);  // rhs holds f until row i is made
  // rhs = M q̇ + h f (+ h s' k_v q̇ for implicitfast); M becomes the system matrix
  for (int i = 0; i < n; ++i) {
    S mv = S(0);
    for (int j = 0; j < n; ++j) mv += M[i * kMaxDof + j] * v[j];
    S implicit_gain = S(p[p_joint(i, kDamping)]);
    S f = rhs[i];
    if (integrator == kImplicitFast && !implicit_servo() && !free_dof(i)) {
      const S kv = p[p_joint(i, kKv)];
      implicit_gain += slope[i] * kv;
      f += slope[i] * kv * v[i];
    }
    rhs[i] = mv + h * f;
    mdiag[i] = M[i * kMaxDof + i];
    M[i * kMaxDof + i] += h * implicit_gain;
  }
  if (integrator == kImplicitFast) add_tendon_damping(p, M);
}

// rk4's right-hand side with its tape: q̈ = M⁻¹ (f − D q̇) (f: applied_forces, every force
// explicit, as MuJoCo's RK4 takes them) into t.vp, M's Cholesky factor in t.A (M's strict upper
// triangle kept), M's diagonal in t.mdiag
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::acceleration_system(const S* q, const S* v,
                                                                             const UIn& u,
                                                                             const PIn& p,
                                                                             StepTape<S>& t) const {
  const int n = n_dof;
  applied_forces(q, v, u, p, t.K, t.W, t.A, t.vp, t.raw, t.slope, t.sig);
  for (int i = 0; i < n; ++i) {
    t.vp[i] -= S(p[p_joint(i, kDamping)]) * v[i];
    t.mdiag[i] = t.A[i * kMaxDof + i];
  }
  cholesky_factor(n, t.A);
  cholesky_substitute(n, t.A, t.vp);
}

// the euler / implicitfast step up to q̇⁺ (step() and the adjoint both run exactly this, so
// the taped and the untaped sweeps give the same bits)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::fill_tape(const S* q, const S* v,
                                                                   const UIn& u, const PIn& p,
                                                                   StepTape<S>& t) const {
  implicit_system(q, v, u, p, t.K, t.W, t.A, t.mdiag, t.vp, t.raw, t.slope, t.sig);
  if (implicit_servo()) {
    servo_solve(q, u, p, t);
    return;
  }
  cholesky_factor(n_dof, t.A);
  cholesky_substitute(n_dof, t.A, t.vp);  // q̇⁺
}

// the euler / implicitfast step (semi-implicit: A q̇⁺ = rhs is linear in q̇⁺): q̇⁺ from
// A q̇⁺ = rhs (fill_tape), q⁺ = q + h q̇⁺; t receives its tape
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class UIn, class PIn, class XOut>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::semi_implicit_advance(
    const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& t) const {
  const int n = n_dof, nqv = nq();
  const S h = S(dt);
  S q[kMaxQ] = {}, v[kMaxDof] = {};
  for (int i = 0; i < nqv; ++i) q[i] = x[i];
  for (int i = 0; i < n; ++i) v[i] = x[nqv + i];
  fill_tape(q, v, u, p, t);
  // q̇_end and the mean velocity q̇_pos the position integrates: q̇⁺ both, unless a ground point
  // takes a time-of-impact impulse (impact.h)
  S vend[kMaxDof], vpos[kMaxDof];
  for (int i = 0; i < n; ++i) vend[i] = vpos[i] = t.vp[i];
  if (ground.impact) ground_impacts(*this, t, p, v, vend, vpos);
  for (int i = 0; i < n; ++i) {
    xn[nqv + i] = vend[i];
    if (!ball_dof_of(i)) xn[qadr(i)] = q[qadr(i)] + h * vpos[i];
  }
  for (int k = 0; k < n_balls; ++k) {
    const int j = ball_dof[k], a = qadr(j);
    S qn[4];
    quat_step(q + a, vpos + j, h, qn);
    for (int i = 0; i < 4; ++i) xn[a + i] = qn[i];
  }
}

// z̄ += ∂φ/∂z for the dynamics' part of a step's adjoint scalar
//   φ = λᵀ M(q) w + Σ_i μ_i (τ_i − D_i q̇ᵈ_i) − μᵀ c(q, q̇) + μᵀ (τ_c + τ_f + τ_l + τ_s + Σ_t c_t
//   f_t)
// with λ, μ, w held fixed, over every input of applied_forces (t its tape: K, W, τ_raw, s', the
// saturation's): euler and implicitfast take μ = h λ, w = q̇ − q̇⁺ and their damping at q̇ᵈ = q̇⁺
// (held fixed: A's), rk4's right-hand side μ = λ = M⁻¹ ā, w = −q̈ and its damping explicit at
// q̇ᵈ = q̇. The world kinematics' adjoint KA collects the terms that move with the bodies (the
// caller may have started it) and is taken back to q last. q̄, q̇̄, ū and θ̄ accumulate.
// Not inlined on the device (STEER_NOINLINE; g++ is unaffected): inlined into the euler
// adjoint, ptxas gave the quadruped's float backward kernel 9.3 KB more stack than the same code
// written in one function; called, the kernel's stack and registers are below that figure
// (bench log 2026-12-08-01).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn, class UAdj>
STEER_HD STEER_NOINLINE void ArticulatedCap<NB, ND, NS, NP, NC>::adj_applied_forces(
    const S* q, const S* v, const PIn& p, const StepTape<S>& t, const S* lam, const S* mu,
    const S* wv, const S& h, KinAdj<S>& KA, S* aq, S* av, UAdj& adj_u, S* ap) const {
  const int n = n_dof;
  const Kin<S>& K = t.K;
  const RneaWork<S>& W = t.W;
  const S *vp = t.vp, *raw = t.raw, *slope = t.slope, *sig = t.sig;
  const GradGroups want = grad_groups();
  // the controller and the implicit joint terms, joint by joint
  for (int i = 0; i < n; ++i) {
    const S kp = p[p_joint(i, kKp)], kv = p[p_joint(i, kKv)];
    if (integrator == kRk4) {
      // −μ_i D_i q̇_i, explicit
      ap[p_joint(i, kDamping)] -= mu[i] * v[i];
      av[i] -= mu[i] * S(p[p_joint(i, kDamping)]);
    } else {
      ap[p_joint(i, kDamping)] -= mu[i] * vp[i];
    }
    if (free_dof(i)) {
      adj_u[i] += mu[i];  // τ_i = u_i
      continue;
    }
    S aslope = S(0);
    if (integrator == kImplicitFast && !implicit_servo()) {
      // μ_i s'_i k_v,i (q̇_i − q̇⁺_i)
      aslope = mu[i] * kv * wv[i];
      ap[p_joint(i, kKv)] += mu[i] * slope[i] * wv[i];
      av[i] += mu[i] * slope[i] * kv;
    }
    const S araw = adj_saturate(p, i, raw[i], sig + kSatTape * i, ap, mu[i], aslope, want.beta);
    // h λ_i τ_l,i(q_i) in φ: q̄_i += μ_i ∂τ_l,i/∂q_i
    if (joint_limits) aq[qadr(i)] += mu[i] * limit_slope(i, q[qadr(i)]);
    // h λ_i τ_s,i in φ, τ_s,i = −k_s (q_i − q_s)
    {
      const S ks = p[p_joint(i, kStiffness)];
      aq[qadr(i)] -= mu[i] * ks;
      ap[p_joint(i, kStiffness)] -= mu[i] * (q[qadr(i)] - S(p[p_joint(i, kSpringRef)]));
      ap[p_joint(i, kSpringRef)] += mu[i] * ks;
    }
    // τ_raw = k_p (q* − q) − k_v q̇ + u_ff; for the implicit servo τ_raw = k_p (q* − q) − k_v q̇⁺ +
    // u_ff with q̇⁺ held fixed in φ (its dependence is λ's)
    const S tgt = p[p_joint(i, kTarget)];
    ap[p_joint(i, kKp)] += araw * (tgt - q[qadr(i)]);
    ap[p_joint(i, kTarget)] += araw * kp;
    aq[qadr(i)] -= araw * kp;
    if (implicit_servo()) {
      ap[p_joint(i, kKv)] -= araw * vp[i];
    } else {
      ap[p_joint(i, kKv)] -= araw * v[i];
      av[i] -= araw * kv;
    }
    adj_u[i] += araw;
  }
  // the fixed tendons: h λᵀ c_t f_t in φ, i.e. m_t f_t with m_t = c_tᵀ μ; f_t = −k_t (L_t − L0_t)
  // + f_l,t(L_t) − d_t L̇_t (euler, rk4: L̇_t = c_tᵀ q̇) or, implicitfast, −m_t d_t c_tᵀ q̇⁺ from A
  for (int t = 0; t < n_tendons; ++t) {
    S mt = S(0);
    for (int j = 0; j < n; ++j)
      if (tendon_c(t, j) != 0) mt += S(tendon_c(t, j)) * mu[j];
    const S L = tendon_length<S>(t, q), kt = p[p_tendon(t, kTendonStiffness)],
            dt_ = p[p_tendon(t, kTendonDamping)];
    ap[p_tendon(t, kTendonStiffness)] -= mt * (L - S(p[p_tendon(t, kTendonSpringLength)]));
    ap[p_tendon(t, kTendonSpringLength)] += mt * kt;
    S aL = -mt * kt;  // ∂φ/∂L_t
    if (joint_limits && tendon_limited[t])
      aL += mt * limit_law_slope(tendon_lower[t], tendon_upper[t], L);
    const bool implicit_damping = integrator == kImplicitFast;
    ap[p_tendon(t, kTendonDamping)] -= mt * tendon_speed(t, implicit_damping ? vp : v);
    for (int j = 0; j < n; ++j) {
      if (tendon_c(t, j) == 0) continue;
      aq[qadr(j)] += aL * S(tendon_c(t, j));
      if (!implicit_damping) av[j] -= mt * dt_ * S(tendon_c(t, j));
    }
  }
  adj_dynamics_form(K, v, p, W, lam, wv, h, KA, av, ap, want.inertia);
  adj_contact_forces(K, v, p, mu, KA, av, ap);
  adj_fluid_forces<ArticulatedCap, S>(*this, K, v, p, mu, KA, av, ap);
  adj_joint_friction_forces<ArticulatedCap, S>(*this, v, p, mu, av, ap);
  adj_forward_kinematics(K, aq, ap, KA, want.com, want.pos, q);
}

// the hand adjoint of an euler / implicitfast step from its tape t (u enters through the tape)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_semi_implicit_from_tape(
    const XIn& x, const PIn& p, const StepTape<S>& t, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
    const XnAdj& adj_xn) const {
  const int n = n_dof, npv = np(), nqv = nq();
  const S h = S(dt);
  S q[kMaxQ] = {}, v[kMaxDof] = {};
  for (int i = 0; i < nqv; ++i) q[i] = x[i];
  for (int i = 0; i < n; ++i) v[i] = x[nqv + i];
  const S *A = t.A, *vp = t.vp, *mdiag = t.mdiag;
  S ap[kMaxParam];
  for (int qq = 0; qq < npv; ++qq) ap[qq] = S(0);
  const GradGroups want = grad_groups();
  KinAdj<S> KA;
  for (int b = 0; b < n_bodies; ++b)
    for (int i = 0; i < 3; ++i)
      KA.P[b][i] = S(0), KA.A[b][i] = S(0), KA.C[b][i] = S(0), KA.T[b][i] = S(0);
  // λ = A⁻¹ (q̇̄⁺ + h q̄⁺) (a ball's ω⁺: q̇̄⁺ + quat_step's adjoint); with time-of-impact
  // impulses the position integrates q̇_pos, and q̇̄⁺ comes back through the impulses (impact.h)
  S lam[kMaxDof], mu[kMaxDof] = {}, wv[kMaxDof] = {}, aq[kMaxQ] = {}, av[kMaxDof], apos[kMaxDof],
                  av0[kMaxDof];
  for (int i = 0; i < n; ++i) av0[i] = S(0);
  for (int i = 0; i < nqv; ++i) aq[i] = S(adj_xn[i]);
  for (int i = 0; i < n; ++i)
    lam[i] = S(adj_xn[nqv + i]), apos[i] = ball_dof_of(i) ? S(0) : h * aq[qadr(i)];
  // the impulses rerun from the tape (their record for the adjoint, q̇_pos for quat_step's)
  S vpos[kMaxDof], vend[kMaxDof];
  for (int i = 0; i < n; ++i) vpos[i] = vend[i] = vp[i];
  ImpactRecord<ArticulatedCap, S> rec;
  const bool impulses = ground.impact && ground_impacts(*this, t, p, v, vend, vpos, &rec);
  for (int k = 0; k < n_balls; ++k) {
    const int j = ball_dof[k], a = qadr(j);
    const S aqn[4] = {aq[a], aq[a + 1], aq[a + 2], aq[a + 3]};
    for (int i = 0; i < 4; ++i) aq[a + i] = S(0);
    adj_quat_step(q + a, vpos + j, h, aqn, aq + a, apos + j);
  }
  if (impulses) adj_ground_impacts(*this, t, p, v, rec, lam, apos, av0, KA, ap, want.inertia);
  for (int i = 0; i < n; ++i) lam[i] += apos[i];
  cholesky_substitute(n, A, lam);
  for (int i = 0; i < n; ++i) {
    mu[i] = h * lam[i];
    wv[i] = v[i] - vp[i];
    // q̇̄ += M λ (M's strict upper triangle survives in A)
    S ml = mdiag[i] * lam[i];
    for (int j = 0; j < n; ++j)
      if (j != i) ml += A[(i < j ? i : j) * kMaxDof + (i < j ? j : i)] * lam[j];
    av[i] = ml + av0[i];
  }
  adj_applied_forces(q, v, p, t, lam, mu, wv, h, KA, aq, av, adj_u, ap);
  for (int i = 0; i < nqv; ++i) adj_x[i] += aq[i];
  for (int i = 0; i < n; ++i) adj_x[nqv + i] += av[i];
  add_param_adjoint(ap, adj_p);
}

// the hand adjoint of an euler / implicitfast step, recomputing the step first to keep its
// factor and intermediates
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_semi_implicit_recompute(
    const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
    const XnAdj& adj_xn) const {
  const int n = n_dof, nqv = nq();
  S q[kMaxQ] = {}, v[kMaxDof] = {};
  for (int i = 0; i < nqv; ++i) q[i] = x[i];
  for (int i = 0; i < n; ++i) v[i] = x[nqv + i];
  StepTape<S> t;
  fill_tape(q, v, u, p, t);
  adj_semi_implicit_from_tape<S>(x, p, t, adj_x, adj_u, adj_p, adj_xn);
}

}  // namespace steer
