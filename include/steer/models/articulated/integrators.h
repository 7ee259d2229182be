// Articulated: the step and its adjoint, the model's entry points, which select the integrator,
// and the rk4 integrator,
//   x⁺ = x + h/6 (k1 + 2 k2 + 2 k3 + k4),  k = (q̇, q̈),  q̈ = M⁻¹(τ − D q̇ − c + τ_c),
// with its hand adjoint (adj_rk4_advance), and the forward-mode dual adjoint (adj_by_duals), the
// tests' reference and the adjoint of steps with contact pairs or spatial tendons.
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
// own; rk4 keeps no tape. The kernels compile the integrators in kIntegrators only
// (FixedIntegrators).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XOut, class Tape>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::advance(const XIn& x, const UIn& u,
                                                                 const PIn& p, XOut& xn,
                                                                 Tape tape) const {
  if constexpr (compiles_integrator(kIntegrators, kRk4)) {
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
// when one is passed, else recomputing the step first; rk4 by hand too (adj_rk4_advance, its
// stages recomputed). A model with contact pairs or spatial tendons takes the forward-mode dual
// one (adj_by_duals), whatever its integrator.
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

// the hand adjoint of advance on torque inputs u: rk4's, or euler's and implicitfast's from the
// tape when one is passed
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XAdj, class UAdj,
          class PAdj, class XnAdj, class Tape>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_advance(const XIn& x, const UIn& u,
                                                                     const PIn& p, XAdj& adj_x,
                                                                     UAdj& adj_u, PAdj& adj_p,
                                                                     const XnAdj& adj_xn,
                                                                     Tape tape) const {
  if constexpr (compiles_integrator(kIntegrators, kRk4)) {
    if (integrator == kRk4) {
      adj_rk4_advance<S>(x, u, p, adj_x, adj_u, adj_p, adj_xn);  // rk4 keeps no tape
      return;
    }
  }
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
// passive force explicitly): acceleration_system (implicit_step.h) without its tape
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::acceleration(const S* q, const S* v,
                                                                      const UIn& u, const PIn& p,
                                                                      S* qdd) const {
  StepTape<S> t;
  acceleration_system(q, v, u, p, t);
  for (int j = 0; j < n_dof; ++j) qdd[j] = t.vp[j];
}

// adjoint of q̈ = M(q)⁻¹ f(q, q̇, u, θ) for a cotangent ā: with λ = M⁻¹ ā (M symmetric),
//   z̄ += ∂/∂z [λᵀ (f(z) − M(q) q̈)]   (λ and q̈ held fixed),
// the euler adjoint's φ with μ = λ and w = −q̈ (adj_applied_forces), from the tape t that
// acceleration_system filled at (q, q̇) (u enters through it); q̄, q̇̄, ū and θ̄ (all of θ, into ap)
// accumulate.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn, class UAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_acceleration(
    const S* q, const S* v, const PIn& p, const StepTape<S>& t, const S* adj_qdd, S* aq, S* av,
    UAdj& adj_u, S* ap) const {
  const int n = n_dof;
  S lam[kMaxDof], wv[kMaxDof];
  for (int i = 0; i < n; ++i) lam[i] = adj_qdd[i], wv[i] = -t.vp[i];
  cholesky_substitute(n, t.A, lam);
  KinAdj<S> KA;
  for (int b = 0; b < n_bodies; ++b)
    for (int i = 0; i < 3; ++i)
      KA.P[b][i] = S(0), KA.A[b][i] = S(0), KA.C[b][i] = S(0), KA.T[b][i] = S(0);
  adj_applied_forces(q, v, p, t, lam, lam, wv, S(1), KA, aq, av, adj_u, ap);
}

// the configuration's rate at (q, q̇) into d (nq entries): q̇ for hinges and slides, a ball's
// quaternion ½ quat ⊗ (0, ω) (ω in the body frame)
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::quat_rates(const S* q, const S* v,
                                                                    S* d) const {
  for (int i = 0; i < n_dof; ++i)
    if (!ball_dof_of(i)) d[qadr(i)] = v[i];
  for (int k = 0; k < n_balls; ++k) {
    const int j = ball_dof[k], a = qadr(j);
    const S wq[4] = {S(0), S(0.5) * v[j], S(0.5) * v[j + 1], S(0.5) * v[j + 2]};
    articulated_detail::quat_mul(q + a, wq, d + a);
  }
}

// adjoint of quat_rates: q̄ and q̇̄ += its Jacobian's transpose times d̄
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_quat_rates(const S* q, const S* v,
                                                                        const S* adj_d, S* aq,
                                                                        S* av) const {
  for (int i = 0; i < n_dof; ++i)
    if (!ball_dof_of(i)) av[i] += adj_d[qadr(i)];
  for (int k = 0; k < n_balls; ++k) {
    const int j = ball_dof[k], a = qadr(j);
    const S wq[4] = {S(0), S(0.5) * v[j], S(0.5) * v[j + 1], S(0.5) * v[j + 2]};
    S awq[4] = {S(0), S(0), S(0), S(0)};
    articulated_detail::adj_quat_mul(q + a, wq, adj_d + a, aq + a, awq);
    for (int i = 0; i < 3; ++i) av[j + i] += S(0.5) * awq[1 + i];
  }
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
  S qs[4][kMaxQ] = {}, vs[4][kMaxDof] = {}, d[4][kMaxQ] = {}, a[4][kMaxDof] = {};
  StepTape<S> scratch;
  rk4_stages<S>(x, u, p, qs, vs, d, a, &scratch, false);
  S y[kMaxQ] = {};
  for (int i = 0; i < nqv; ++i)
    y[i] = qs[0][i] + h / S(6) * (d[0][i] + S(2) * d[1][i] + S(2) * d[2][i] + d[3][i]);
  for (int k = 0; k < n_balls; ++k) {
    using std::sqrt;
    S* n4 = y + qadr(ball_dof[k]);
    const S inv = S(1) / sqrt(n4[0] * n4[0] + n4[1] * n4[1] + n4[2] * n4[2] + n4[3] * n4[3]);
    for (int i = 0; i < 4; ++i) n4[i] = n4[i] * inv;
  }
  for (int i = 0; i < nqv; ++i) xn[i] = y[i];
  for (int i = 0; i < n; ++i)
    xn[nqv + i] = vs[0][i] + h / S(6) * (a[0][i] + S(2) * a[1][i] + S(2) * a[2][i] + a[3][i]);
}

// rk4's stages from x: s_1 = (q, q̇), s_i = s_1 + c_i h (d_{i−1}, a_{i−1}) (c = ½, ½, 1), with
// d_i = q̇(s_i) (quat_rates) and a_i = q̈(s_i) (acceleration_system, into tapes[i] when keep,
// else into tapes[0] as scratch); the step and its adjoint both run this, so the adjoint's
// stages are the step's bits
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class UIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::rk4_stages(
    const XIn& x, const UIn& u, const PIn& p, S (*qs)[kMaxQ], S (*vs)[kMaxDof], S (*d)[kMaxQ],
    S (*a)[kMaxDof], StepTape<S>* tapes, bool keep) const {
  const int n = n_dof, nqv = nq();
  const S h = S(dt);
  for (int i = 0; i < nqv; ++i) qs[0][i] = x[i];
  for (int i = 0; i < n; ++i) vs[0][i] = x[nqv + i];
  const double c[4] = {0, 0.5, 0.5, 1};
  for (int st = 0; st < 4; ++st) {
    if (st > 0) {
      for (int i = 0; i < nqv; ++i) qs[st][i] = qs[0][i] + S(c[st]) * h * d[st - 1][i];
      for (int i = 0; i < n; ++i) vs[st][i] = vs[0][i] + S(c[st]) * h * a[st - 1][i];
    }
    StepTape<S>& t = tapes[keep ? st : 0];
    acceleration_system(qs[st], vs[st], u, p, t);
    for (int i = 0; i < n; ++i) a[st][i] = t.vp[i];
    quat_rates(qs[st], vs[st], d[st]);
  }
}

// the hand adjoint of rk4_advance. With the stages s_1 = (q, q̇), s_i = (q, q̇) + c_i h (d_{i−1},
// a_{i−1}) (c = ½, ½, 1), d_i = q̇(s_i) (a ball's ½ quat ⊗ (0, ω)), a_i = q̈(s_i) and the weights
// w = (1, 2, 2, 1): x⁺ = (N(q + h/6 Σ w_i d_i), q̇ + h/6 Σ w_i a_i), N dividing each ball's
// quaternion by its norm. In reverse: ȳ = N'ᵀ q̄⁺ (ȳ − n (n·ȳ), over |y| per ball), d̄_i = h/6 w_i ȳ,
// ā_i = h/6 w_i q̇̄⁺; then stage by stage, last first, the stage's cotangent (s̄_q, s̄_v) from
// d̄_i (q̇'s adjoint) and ā_i (adj_acceleration), passed to (q, q̇) and to d̄_{i−1}, ā_{i−1} by
// c_i h. The stages are recomputed forward first, keeping each acceleration's tape (four
// StepTapes of stack: this runs on the CPU only, the kernels leave rk4 out).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_rk4_advance(
    const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
    const XnAdj& adj_xn) const {
  using std::sqrt;
  const int n = n_dof, nqv = nq(), npv = np();
  const S h = S(dt);
  // the stages' states (qs, vs), rates d and accelerations a, recomputed as rk4_advance does
  S qs[4][kMaxQ], vs[4][kMaxDof], d[4][kMaxQ], a[4][kMaxDof];
  StepTape<S> tape[4];
  rk4_stages<S>(x, u, p, qs, vs, d, a, tape, true);
  const double c[4] = {0, 0.5, 0.5, 1};
  // through the balls' normalization: y = q + h/6 Σ w_i d_i
  S ay[kMaxQ], av_end[kMaxDof];
  for (int i = 0; i < nqv; ++i) ay[i] = S(adj_xn[i]);
  for (int i = 0; i < n; ++i) av_end[i] = S(adj_xn[nqv + i]);
  for (int k = 0; k < n_balls; ++k) {
    const int j0 = qadr(ball_dof[k]);
    S y[4];
    for (int i = 0; i < 4; ++i)
      y[i] = qs[0][j0 + i] +
             h / S(6) * (d[0][j0 + i] + S(2) * d[1][j0 + i] + S(2) * d[2][j0 + i] + d[3][j0 + i]);
    const S inv = S(1) / sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3]);
    S ny = S(0);
    for (int i = 0; i < 4; ++i) ny += y[i] * inv * ay[j0 + i];
    for (int i = 0; i < 4; ++i) ay[j0 + i] = (ay[j0 + i] - y[i] * inv * ny) * inv;
  }
  S aq[kMaxQ], av[kMaxDof], ap[kMaxParam], ad[kMaxQ], aa[kMaxDof];
  for (int i = 0; i < nqv; ++i) aq[i] = ay[i];
  for (int i = 0; i < n; ++i) av[i] = av_end[i];
  for (int qq = 0; qq < npv; ++qq) ap[qq] = S(0);
  const double w[4] = {1, 2, 2, 1};
  // ad, aa: the cotangents of stage st's d and a, from x⁺ and from stage st + 1
  for (int st = 3; st >= 0; --st) {
    for (int i = 0; i < nqv; ++i) ad[i] = (st == 3 ? S(0) : ad[i]) + h / S(6) * S(w[st]) * ay[i];
    for (int i = 0; i < n; ++i) aa[i] = (st == 3 ? S(0) : aa[i]) + h / S(6) * S(w[st]) * av_end[i];
    S sq[kMaxQ], sv[kMaxDof];
    for (int i = 0; i < nqv; ++i) sq[i] = S(0);
    for (int i = 0; i < n; ++i) sv[i] = S(0);
    adj_quat_rates(qs[st], vs[st], ad, sq, sv);
    adj_acceleration(qs[st], vs[st], p, tape[st], aa, sq, sv, adj_u, ap);
    if (st == 0) {
      for (int i = 0; i < nqv; ++i) aq[i] += sq[i];
      for (int i = 0; i < n; ++i) av[i] += sv[i];
    } else {
      for (int i = 0; i < nqv; ++i) aq[i] += sq[i], ad[i] = S(c[st]) * h * sq[i];
      for (int i = 0; i < n; ++i) av[i] += sv[i], aa[i] = S(c[st]) * h * sv[i];
    }
  }
  for (int i = 0; i < nqv; ++i) adj_x[i] += aq[i];
  for (int i = 0; i < n; ++i) adj_x[nqv + i] += av[i];
  add_param_adjoint(ap, adj_p);
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
