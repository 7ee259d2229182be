// Articulated: the actuator's smooth torque saturation and the joint-limit torque, with adjoints.
//   τ = sat(τ_raw) = τ_raw − (1/β)[softplus(β(τ_raw − τ_max)) − softplus(β(−τ_raw − τ_max))],
//   τ_l,j = k_l w_l [softplus((lo_j − q_j)/w_l) − softplus((q_j − hi_j)/w_l)],
//   τ_s,j = −k_s,j (q_j − q_s,j)  (the joint spring; explicit in every integrator, as in MuJoCo).
#pragma once

#include "steer/models/articulated/model.h"

namespace steer {

// τ = sat(τ_raw) and s' = ∂τ/∂τ_raw for joint j
// (sig, when given, receives σ(z_a), 1 − σ(z_a), σ(z_b), 1 − σ(z_b), softplus(z_a), softplus(z_b)
// for adj_saturate: kSatTape values per joint)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::saturate(const PIn& p, int j, const S& raw, S& slope,
                                                       S* sig) const {
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
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::adj_saturate(const PIn& p, int j, const S& raw,
                                                           const S* sig, S* adj_p, const S& adj_tau,
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

// the joint-limit torque τ_l,j(q_j) [N·m or N] (0 when joint_limits is off)
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::limit_torque(int j, const S& qj) const {
  if (!joint_limits) return S(0);
  const S w = S(limit_smoothing), k = S(limit_stiffness);
  return k * w *
         (softplus_of(S((S(limit_lower[j]) - qj) / w)) -
          softplus_of(S((qj - S(limit_upper[j])) / w)));
}

// ∂τ_l,j/∂q_j = −k_l [σ((lo − q)/w) + σ((q − hi)/w)]
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::limit_slope(int j, const S& qj) const {
  const S w = S(limit_smoothing), k = S(limit_stiffness);
  return -k * (sigmoid_of(S((S(limit_lower[j]) - qj) / w)) +
               sigmoid_of(S((qj - S(limit_upper[j])) / w)));
}

// the joint spring's torque τ_s,j = −k_s,j (q_j − q_s,j) [N·m or N]; its adjoint is written out
// where it is used (∂τ_s/∂q = −k_s, ∂τ_s/∂k_s = −(q − q_s), ∂τ_s/∂q_s = k_s)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::spring_torque(const PIn& p, int j,
                                                            const S& qj) const {
  return -S(p[p_joint(j, kStiffness)]) * (qj - S(p[p_joint(j, kSpringRef)]));
}

}  // namespace steer
