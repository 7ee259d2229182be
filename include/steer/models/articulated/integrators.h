// Articulated: the step and its adjoint, the model's entry points, which select the integrator,
// and the rk4 integrator,
//   x⁺ = x + h/6 (k1 + 2 k2 + 2 k3 + k4),  k = (q̇, q̈),  q̈ = M⁻¹(τ − D q̇ − c + τ_c),
// whose adjoint is the forward-mode dual one (adj_by_duals).
#pragma once

#include <type_traits>

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/implicit_step.h"
#include "steer/models/articulated/activation.h"

namespace steer {

// (x_k, u_k, θ) -> x_{k+1}; small state, so only the leading lane works. The joints' torque
// inputs are their controls, or their activations (activation.h), whose update x⁺ then takes;
// advance() runs the integrator on those inputs. It is always called on the inputs' array, so
// that the kernels compile one copy of the integrator (with u as well, a second copy would set
// their registers and stack).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XOut, class Tape>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::step(int k, const XIn& x, const UIn& u,
                                                              const PIn& p, XOut& xn,
                                                              const Lanes& ln, Tape tape) const {
  (void)k;
  if (!ln.leader()) return;
  S uin[kMaxDof];
  activation_inputs<ArticulatedCap, S>(*this, x, u, uin);
  advance<S, kIntegrators>(x, uin, p, xn, tape);
  if (n_act == 0) return;
  const int base = nq() + n_dof;
  for (int j = 0; j < n_dof; ++j)
    if (act_kind[j] != kActNone)
      xn[base + act_slot[j]] = activation_next<ArticulatedCap, S>(*this, j, x, u);
}

// the step on torque inputs u: euler and implicitfast by semi_implicit_advance
// (implicit_step.h), which fills the tape (StepTape<S>*) when one is passed, else a tape of its
// own; rk4 keeps no tape. Simd.h packs run euler and implicitfast only (packable()), so rk4 is not
// compiled for them.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XOut, class Tape>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::advance(const XIn& x, const UIn& u,
                                                                 const PIn& p, XOut& xn,
                                                                 Tape tape) const {
  if constexpr (!is_pack<S>::value && compiles_integrator(kIntegrators, kRk4)) {
    if (integrator == kRk4) {
      rk4_advance<S>(x, u, p, xn);
      return;
    }
  }
  if constexpr (std::is_same<Tape, NoTape>::value) {
    (void)tape;
    StepTape<S> t;
    semi_implicit_advance<S>(x, u, p, xn, t);
  } else {
    semi_implicit_advance<S>(x, u, p, xn, *tape);
  }
}

// vector-Jacobian product of step: adj_x, adj_u, adj_θ += Jᵀ adj_xn. euler and implicitfast
// by hand (the reverse of implicit_system and the solve), from the tape (const StepTape<S>*)
// when one is passed, else recomputing the step first; rk4 by forward-mode duals.
//
// With A(z) q̇⁺ = b(z) (implicit_system) and q⁺ = q + h q̇⁺, for a cotangent (q̄⁺, q̇̄⁺):
//   q̄ += q̄⁺;  g = q̇̄⁺ + h q̄⁺ (the cotangent of q̇⁺);  A λ = g (A's Cholesky factor, reused);
//   z̄ += ∂φ/∂z  for every input z (q, q̇, u, θ), where φ(z) = λᵀ (b(z) − A(z) q̇⁺) with λ,
//   q̇⁺ held fixed. With μ = h λ [N·m per unit cotangent · s] that scalar is
//   φ = λᵀ M(q) (q̇ − q̇⁺) + Σ_i μ_i (τ_i − D_i q̇⁺_i [+ s'_i k_v,i (q̇_i − q̇⁺_i)]) − μᵀ c(q, q̇) + μᵀ
//   τ_c(q, q̇) and its terms reverse in adj_saturate, adj_dynamics_form and adj_contact_forces (plus
//   q̇̄ += M λ from b's M q̇), which deposit the adjoints of the world kinematics (KinAdj);
//   adj_forward_kinematics takes those back to q and the centres of mass.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XAdj, class UAdj,
          class PAdj, class XnAdj, class Tape>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_step(
    int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
    const XnAdj& adj_xn, const Lanes& ln, Tape tape) const {
  if (!ln.leader()) return;
  if constexpr (!is_pack<S>::value && compiles_integrator(kIntegrators, kRk4)) {
    if (integrator == kRk4) {
      adj_by_duals<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn);
      return;
    }
  }
  // contact pairs (contact.h) and spatial tendons (spatial_tendon.h) have no hand adjoint: the
  // step's is the dual-number one
  if constexpr (kMaxPairs > 0 && !is_pack<S>::value) {
    if (n_pairs > 0 || n_spatial > 0) {
      adj_by_duals<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn);
      return;
    }
  }
  // the hand adjoint on the torque inputs (one copy, as in step), then activation_inputs' (the
  // tape, when given, holds the step on those inputs; without one the step is recomputed on them)
  S uin[kMaxDof], adj_uin[kMaxDof];
  activation_inputs<ArticulatedCap, S>(*this, x, u, uin);
  for (int j = 0; j < n_dof; ++j) adj_uin[j] = S(0);
  adj_advance<S, kIntegrators>(x, uin, p, adj_x, adj_uin, adj_p, adj_xn, tape);
  adj_activation_inputs<ArticulatedCap, S>(*this, adj_uin, adj_xn, adj_x, adj_u);
}

// the hand adjoint of advance (euler, implicitfast) on torque inputs u, from the tape when one
// is passed
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XAdj, class UAdj,
          class PAdj, class XnAdj, class Tape>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_advance(const XIn& x, const UIn& u,
                                                                     const PIn& p, XAdj& adj_x,
                                                                     UAdj& adj_u, PAdj& adj_p,
                                                                     const XnAdj& adj_xn,
                                                                     Tape tape) const {
  if constexpr (std::is_same<Tape, NoTape>::value) {
    (void)tape;
    adj_semi_implicit_recompute<S>(x, u, p, adj_x, adj_u, adj_p, adj_xn);
  } else {
    (void)u;
    adj_semi_implicit_from_tape<S>(x, p, *tape, adj_x, adj_u, adj_p,
                                   adj_xn);  // u enters through the tape
  }
}

// q̈ = M⁻¹(τ − D q̇ − c + τ_c + τ_f + τ_l + τ_s + Σ_t c_t f_t), everything explicit (τ_f the
// fluid's and the joint friction's; the rk4 right-hand side; MuJoCo's RK4 too takes every
// passive force explicitly)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::acceleration(const S* q, const S* v,
                                                                      const UIn& u, const PIn& p,
                                                                      S* qdd) const {
  Kin<S> K;
  forward_kinematics(q, p, K);
  S M[kMaxDof * kMaxDof], c[kMaxDof];
  mass_matrix(K, p, M);
  bias_forces(K, v, p, c);
  for (int j = 0; j < n_dof; ++j) {
    S slope;
    const S raw = free_dof(j) ? S(u[j])
                              : S(p[p_joint(j, kKp)]) * (S(p[p_joint(j, kTarget)]) - q[qadr(j)]) -
                                    S(p[p_joint(j, kKv)]) * v[j] + S(u[j]);
    qdd[j] =
        (free_dof(j) ? raw : saturate(p, j, raw, slope)) - S(p[p_joint(j, kDamping)]) * v[j] - c[j];
  }
  contact_forces(K, v, p, qdd);
  fluid_forces<ArticulatedCap, S>(*this, K, v, p, qdd);
  spatial_tendon_forces<ArticulatedCap, S>(*this, K, v, p, qdd);
  joint_friction_forces<ArticulatedCap, S>(*this, v, p, qdd);
  for (int j = 0; j < n_dof; ++j)
    if (!free_dof(j)) qdd[j] += limit_torque(j, q[qadr(j)]) + spring_torque(p, j, q[qadr(j)]);
  tendon_forces(q, v, p, true, qdd);
  cholesky_solve(n_dof, M, qdd);
}

// the rk4 step: k1..k4 of (q̇, q̈); x⁺ = x + h/6 (k1 + 2 k2 + 2 k3 + k4). A ball's
// quaternion has q̇uat = ½ quat ⊗ (0, ω) (ω body frame) and is divided by its norm at the
// end of the step (a smooth map), which rk4's polynomial update does not keep.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class UIn, class PIn, class XOut>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::rk4_advance(const XIn& x, const UIn& u,
                                                                     const PIn& p, XOut& xn) const {
  const int n = n_dof, nqv = nq();
  const S h = S(dt);
  S q[kMaxQ] = {}, v[kMaxDof] = {};
  for (int i = 0; i < nqv; ++i) q[i] = x[i];
  for (int i = 0; i < n; ++i) v[i] = x[nqv + i];
  // q̇ at (qc, vc) into d (nq entries)
  auto qdot = [&](const S* qc, const S* vc, S* d) {
    for (int i = 0; i < n; ++i)
      if (!ball_dof_of(i)) d[qadr(i)] = vc[i];
    for (int k = 0; k < n_balls; ++k) {
      const int j = ball_dof[k], a = qadr(j);
      const S wq[4] = {S(0), S(0.5) * vc[j], S(0.5) * vc[j + 1], S(0.5) * vc[j + 2]};
      articulated_detail::quat_mul(qc + a, wq, d + a);
    }
  };
  S a1[kMaxDof] = {}, a2[kMaxDof] = {}, a3[kMaxDof] = {}, a4[kMaxDof] = {}, qs[kMaxQ] = {},
    vs[kMaxDof] = {};
  S d1[kMaxQ] = {}, d2[kMaxQ] = {}, d3[kMaxQ] = {}, d4[kMaxQ] = {};
  acceleration(q, v, u, p, a1);
  qdot(q, v, d1);
  for (int i = 0; i < nqv; ++i) qs[i] = q[i] + S(0.5) * h * d1[i];
  for (int i = 0; i < n; ++i) vs[i] = v[i] + S(0.5) * h * a1[i];
  acceleration(qs, vs, u, p, a2);
  qdot(qs, vs, d2);
  for (int i = 0; i < nqv; ++i) qs[i] = q[i] + S(0.5) * h * d2[i];
  for (int i = 0; i < n; ++i) vs[i] = v[i] + S(0.5) * h * a2[i];
  acceleration(qs, vs, u, p, a3);
  qdot(qs, vs, d3);
  for (int i = 0; i < nqv; ++i) qs[i] = q[i] + h * d3[i];
  for (int i = 0; i < n; ++i) vs[i] = v[i] + h * a3[i];
  acceleration(qs, vs, u, p, a4);
  qdot(qs, vs, d4);
  for (int i = 0; i < nqv; ++i)
    qs[i] = q[i] + h / S(6) * (d1[i] + S(2) * d2[i] + S(2) * d3[i] + d4[i]);
  for (int k = 0; k < n_balls; ++k) {
    using std::sqrt;
    S* n4 = qs + qadr(ball_dof[k]);
    const S inv = S(1) / sqrt(n4[0] * n4[0] + n4[1] * n4[1] + n4[2] * n4[2] + n4[3] * n4[3]);
    for (int i = 0; i < 4; ++i) n4[i] = n4[i] * inv;
  }
  for (int i = 0; i < nqv; ++i) xn[i] = qs[i];
  for (int i = 0; i < n; ++i)
    xn[nqv + i] = v[i] + h / S(6) * (a1[i] + S(2) * a2[i] + S(2) * a3[i] + a4[i]);
}

// the reference: vector-Jacobian product of step by forward-mode duals over x, u and the
// parameters in grad_params, 8 columns per pass (rk4's adjoint; the tests' reference)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_by_duals(int k, const XIn& x,
                                                                      const UIn& u, const PIn& p,
                                                                      XAdj& adj_x, UAdj& adj_u,
                                                                      PAdj& adj_p,
                                                                      const XnAdj& adj_xn) const {
  dual_adj_step<ArticulatedCap, S>(*this, k, x, u, p, adj_x, adj_u, adj_p, adj_xn,
                                   n_grad_params < 0 ? nullptr : grad_params, n_grad_params);
}

}  // namespace steer
