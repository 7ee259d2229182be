// Articulated: the actuator's smooth torque saturation and the joint-limit torque, with adjoints.
//   τ = sat(τ_raw) = τ_raw − (1/β)[softplus(β(τ_raw − τ_max)) − softplus(β(−τ_raw − τ_max))],
//   τ_l,j = k_l w_l [softplus((lo_j − q_j)/w_l) − softplus((q_j − hi_j)/w_l)],
//   τ_s,j = −k_s,j (q_j − q_s,j)  (the joint spring; explicit in every integrator, as in MuJoCo).
// Fixed tendons (MuJoCo's <fixed>): a length L_t = Σ_j c_tj q_j over hinges and slides, and
//   f_t = −k_t (L_t − L0_t) − d_t L̇_t + f_l,t(L_t),  τ_j += c_tj f_t,
// f_l,t the limit law above on the tendon's range [lo_t, hi_t] (with model.joint_limits' k_l
// and w_l). The spring and the limit are explicit in every integrator. The damping is explicit
// in euler and rk4 and implicit in implicitfast, as MuJoCo 4.0.1 does it: its Euler takes only
// the dofs' damping into M + h D (a one-step cross-check with a tendon damper confirms it),
// implicitfast every velocity derivative of the passive forces, here h d_t c_t c_tᵀ in A.
#pragma once

#include "steer/models/articulated/model.h"

namespace steer {

// τ = sat(τ_raw) and s' = ∂τ/∂τ_raw for joint j
// (sig, when given, receives σ(z_a), 1 − σ(z_a), σ(z_b), 1 − σ(z_b), softplus(z_a), softplus(z_b)
// for adj_saturate: kSatTape values per joint)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::saturate(const PIn& p, int j, const S& raw,
                                                               S& slope, S* sig) const {
  if (!torque_limits) {
    slope = S(1);
    return raw;
  }
  const S beta = p[p_global(kSharpness)], lim = p[p_joint(j, kForceLimit)];
  const S za = beta * (raw - lim), zb = beta * (-raw - lim);
  // softplus and σ of each side from one exponential (model_math.h)
  S sa, sb, spa, spb;
  if (sig) {
    softplus_sigmoid_of(za, spa, sig[0], &sig[1]);
    softplus_sigmoid_of(zb, spb, sig[2], &sig[3]);
    sa = sig[0], sb = sig[2], sig[4] = spa, sig[5] = spb;
  } else {
    softplus_sigmoid_of(za, spa, sa);
    softplus_sigmoid_of(zb, spb, sb);
  }
  slope = S(1) - sa - sb;
  return raw - (spa - spb) / beta;
}

// adjoint of τ = sat(τ_raw) and s' = ∂τ/∂τ_raw (saturate) given τ̄, s̄'; with z_a = β(τ_raw − τ_max),
// z_b = β(−τ_raw − τ_max), σ_a = σ(z_a), σ'_a = σ_a(1 − σ_a):
//   ∂τ/∂τ_raw = s' = 1 − σ_a − σ_b,  ∂τ/∂τ_max = σ_a − σ_b,
//   ∂τ/∂β = −[(σ_a (τ_raw − τ_max) − σ_b (−τ_raw − τ_max))/β − (softplus(z_a) − softplus(z_b))/β²],
//   ∂s'/∂τ_raw = β(σ'_b − σ'_a),  ∂s'/∂τ_max = β(σ'_a + σ'_b),
//   ∂s'/∂β = −σ'_a (τ_raw − τ_max) − σ'_b (−τ_raw − τ_max).  Returns τ̄_raw.
//   sig = σ_a, 1 − σ_a, σ_b, 1 − σ_b, softplus(z_a), softplus(z_b) from saturate (the step's
//   own values, so the adjoint computes no exponential); s' is taken as (1 − σ_a) − σ_b or
//   (1 − σ_b) − σ_a on the saturated side, which keeps its digits there; ∂τ/∂β only when
//   want_beta.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::adj_saturate(const PIn& p, int j,
                                                                   const S& raw, const S* sig,
                                                                   S* adj_p, const S& adj_tau,
                                                                   const S& adj_slope,
                                                                   bool want_beta) const {
  if (!torque_limits) return adj_tau;
  const S beta = p[p_global(kSharpness)], lim = p[p_joint(j, kForceLimit)];
  const S a = raw - lim, b = -raw - lim;
  const S sa = sig[0], ca = sig[1], sb = sig[2], cb = sig[3];
  const S da = sa * ca, db = sb * cb;
  const S slope =
      select(sa >= S(0.5), S(ca - sb), select(sb >= S(0.5), S(cb - sa), S(S(1) - sa - sb)));
  adj_p[p_joint(j, kForceLimit)] += adj_tau * (sa - sb) + adj_slope * beta * (da + db);
  if (want_beta)
    adj_p[p_global(kSharpness)] +=
        adj_tau * ((sig[4] - sig[5]) / (beta * beta) - (sa * a - sb * b) / beta) -
        adj_slope * (da * a + db * b);
  return adj_tau * slope + adj_slope * beta * (db - da);
}

// the limit law k_l w_l [softplus((lo − x)/w_l) − softplus((x − hi)/w_l)] [N·m or N, or
// tendon force] of a coordinate x [rad, m or tendon length]: a penalty pushing x back into
// [lo, hi]
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::limit_law(double lo, double hi,
                                                                const S& x) const {
  const S w = S(limit_smoothing), k = S(limit_stiffness);
  return k * w * (softplus_of(S((S(lo) - x) / w)) - softplus_of(S((x - S(hi)) / w)));
}

// ∂(limit_law)/∂x = −k_l [σ((lo − x)/w) + σ((x − hi)/w)]
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::limit_law_slope(double lo, double hi,
                                                                      const S& x) const {
  const S w = S(limit_smoothing), k = S(limit_stiffness);
  return -k * (sigmoid_of(S((S(lo) - x) / w)) + sigmoid_of(S((x - S(hi)) / w)));
}

// the joint-limit torque τ_l,j(q_j) [N·m or N] (0 when joint_limits is off)
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::limit_torque(int j, const S& qj) const {
  if (!joint_limits) return S(0);
  return limit_law(limit_lower[j], limit_upper[j], qj);
}

// ∂τ_l,j/∂q_j
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::limit_slope(int j, const S& qj) const {
  return limit_law_slope(limit_lower[j], limit_upper[j], qj);
}

// the joint spring's torque τ_s,j = −k_s,j (q_j − q_s,j) [N·m or N]; its adjoint is written out
// where it is used (∂τ_s/∂q = −k_s, ∂τ_s/∂k_s = −(q − q_s), ∂τ_s/∂q_s = k_s)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::spring_torque(const PIn& p, int j,
                                                                    const S& qj) const {
  return -S(p[p_joint(j, kStiffness)]) * (qj - S(p[p_joint(j, kSpringRef)]));
}

// tendon t's length L_t = Σ_j c_tj q_j [tendon length] (q indexed by qadr)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class QIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::tendon_length(int t, const QIn& q) const {
  S L = S(0);
  for (int j = 0; j < n_dof; ++j)
    if (tendon_c(t, j) != 0) L += S(tendon_c(t, j)) * S(q[qadr(j)]);
  return L;
}

// tendon t's speed L̇_t = Σ_j c_tj q̇_j [tendon length/s]
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::tendon_speed(int t, const S* v) const {
  S Ld = S(0);
  for (int j = 0; j < n_dof; ++j)
    if (tendon_c(t, j) != 0) Ld += S(tendon_c(t, j)) * v[j];
  return Ld;
}

// tau_j += Σ_t c_tj f_t, f_t = −k_t (L_t − L0_t) [− d_t L̇_t when damping] + f_l,t(L_t); one
// tendon at a time, so no array beyond tau
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::tendon_forces(const S* q, const S* v,
                                                                       const PIn& p, bool damping,
                                                                       S* tau) const {
  for (int t = 0; t < n_tendons; ++t) {
    const S L = tendon_length<S>(t, q);
    S f = -S(p[p_tendon(t, kTendonStiffness)]) * (L - S(p[p_tendon(t, kTendonSpringLength)]));
    if (damping) f -= S(p[p_tendon(t, kTendonDamping)]) * tendon_speed(t, v);
    if (joint_limits && tendon_limited[t]) f += limit_law(tendon_lower[t], tendon_upper[t], L);
    for (int j = 0; j < n_dof; ++j)
      if (tendon_c(t, j) != 0) tau[j] += S(tendon_c(t, j)) * f;
  }
}

// implicitfast's tendon damping: A += h Σ_t d_t c_t c_tᵀ on A's diagonal and lower triangle
// (the triangle cholesky_factor reads; the strict upper triangle keeps M's, which the adjoint,
// the servo and the impulses read back)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::add_tendon_damping(const PIn& p,
                                                                            S* A) const {
  const S h = S(dt);
  for (int t = 0; t < n_tendons; ++t) {
    const S hd = h * S(p[p_tendon(t, kTendonDamping)]);
    for (int i = 0; i < n_dof; ++i) {
      if (tendon_c(t, i) == 0) continue;
      for (int j = 0; j <= i; ++j)
        if (tendon_c(t, j) != 0) A[i * kMaxDof + j] += hd * S(tendon_c(t, i) * tendon_c(t, j));
    }
  }
}

}  // namespace steer
