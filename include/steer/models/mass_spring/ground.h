// MassSpring's ground: the penalty force, the integration step with the impact ground, and
// their adjoints.
// Penalty ground, p = y_g − y_i, z = p/w_g [1]:
//   F_n = k_g w_g softplus(z) − d_g σ(z) v_y                     normal [N] (→ hard penalty as w_g → 0)
//   F_t = −μ k_g w_g softplus(z) v_t / sqrt(|v_t|² + v_ε²)       smoothed Coulomb friction [N]
// Integration of particle i from its free velocity v*: x' = x + h v*, v' = v*; with the impact
// ground, a particle whose x* = x + h v* ends below y_g hits at the fraction
// s = (y − y_g)/(−h v*_y) of the step (0 if it starts below), with Δn = (1 + e)(−v*_y):
//   v'_y = −e v*_y,  v'_t = v*_t / (1 + μ Δn / sqrt(|v*_t|² + v_ε²))
//   y'   = y_g + (1 − s) h v'_y,  x'_t = x_t + s h v*_t + (1 − s) h v'_t
#pragma once

#include "steer/models/mass_spring/model.h"

namespace steer {

// ground force on particle i: out[1] normal (+y), out[0] (and out[2]) friction
// keep (optional): the step tape's z, softplus(z), σ(z), q (penalty ground only)
template <class S, class XIn, class PIn>
STEER_HD void MassSpring::ground_force(int i, const XIn& x, const PIn& p, S* out, ParticleTape<S>* keep) const {
  using std::sqrt;
  for (int c = 0; c < dim; ++c) out[c] = S(0);
  if (!ground || impact) return;
  const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
  const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
  const S ve = S(p[p_global(kFrictionSmoothing)]);
  const S z = (S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1])) / wg;
  S sp, sg;
  softplus_sigmoid_of(z, sp, sg);  // model_math.h: one exp, the branch a select
  const S elastic = kg * wg * sp;
  out[1] = elastic - dg * sg * S(x[x_vel(i) + 1]);
  S vt2 = ve * ve;
  for (int c = 0; c < dim; ++c)
    if (c != 1) vt2 += S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
  const S q = sqrt(vt2);
  if (keep) {
    keep->z = z;
    keep->sp = sp;
    keep->sg = sg;
    keep->q = q;
  }
  for (int c = 0; c < dim; ++c)
    if (c != 1) out[c] = -mu * elastic * S(x[x_vel(i) + c]) / q;
}
// ∂(ground force)/∂(y, v, ground θ) applied to adj_f: particle terms into adj_y, adj_v;
// global parameter terms into adj_globals[kGroundHeight .. kFrictionSmoothing].
// force_out (optional): the ground force itself, bitwise ground_force's, from the same
// exponentials (the one-lane adjoint needs it for the mass adjoint).
// tape (optional, a const ParticleTape<S>*): particle i's z = (y_g − y)/w_g, softplus(z), σ(z)
// and friction norm q = sqrt(|v_t|² + v_ε²) read from step_solo's tape instead of recomputed
// (the same values, so the same bits); force_out is not filled then.
template <class S, class XIn, class PIn, class Tape>
STEER_HD void MassSpring::adj_ground_force(int i, const XIn& x, const PIn& p, const S* adj_f, S& adj_y, S* adj_v,
                                           S* adj_globals, S* force_out, Tape tape) const {
  constexpr bool taped = !std::is_same<Tape, std::nullptr_t>::value;
  using std::sqrt;
  if (force_out)
    for (int c = 0; c < dim; ++c) force_out[c] = S(0);
  if (!ground || impact) return;
  if constexpr (taped) {
    adj_ground_terms(i, x, p, tape->z, tape->sp, tape->sg, tape->q, adj_f, adj_y, adj_v, adj_globals);
  } else {
    const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
    const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
    const S ve = S(p[p_global(kFrictionSmoothing)]);
    const S z = (S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1])) / wg;
    S sp, sg;
    softplus_sigmoid_of(z, sp, sg);  // model_math.h: one exp, the branch a select
    S vt2 = ve * ve;
    for (int c = 0; c < dim; ++c)
      if (c != 1) vt2 += S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
    const S q = sqrt(vt2);
    if (force_out) {
      // ground_force's expressions: F_n = E − d_g σ v_y, F_t = −μ E v_t / q
      const S elastic = kg * wg * sp;
      force_out[1] = elastic - dg * sg * S(x[x_vel(i) + 1]);
      for (int c = 0; c < dim; ++c)
        if (c != 1) force_out[c] = -mu * elastic * S(x[x_vel(i) + c]) / q;
    }
    adj_ground_terms(i, x, p, z, sp, sg, q, adj_f, adj_y, adj_v, adj_globals);
  }
}
// the ground adjoint given particle i's z = (y_g − y)/w_g, softplus(z), σ(z) and the friction
// norm q = sqrt(|v_t|² + v_ε²), computed or read from the tape by adj_ground_force
template <class S, class XIn, class PIn>
STEER_HD void MassSpring::adj_ground_terms(int i, const XIn& x, const PIn& p, const S& z, const S& sp, const S& sg,
                                           const S& q, const S* adj_f, S& adj_y, S* adj_v, S* adj_globals) const {
  const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
  const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
  const S ve = S(p[p_global(kFrictionSmoothing)]);
  const S elastic = kg * wg * sp;
  const S vy = S(x[x_vel(i) + 1]);
  S vdotf = S(0);
  for (int c = 0; c < dim; ++c)
    if (c != 1) vdotf += S(x[x_vel(i) + c]) * adj_f[c];
  const S q3 = q * q * q;
  // friction F_t = −μ E v_t / q
  S adj_elastic = -mu * vdotf / q;
  adj_globals[kFriction] += -elastic * vdotf / q;
  adj_globals[kFrictionSmoothing] += mu * elastic * vdotf * ve / q3;
  for (int c = 0; c < dim; ++c)
    if (c != 1) adj_v[c] += -mu * elastic * (adj_f[c] / q - S(x[x_vel(i) + c]) * vdotf / q3);
  // normal F_n = E − d_g σ(z) v_y
  const S adj_n = adj_f[1];
  adj_elastic += adj_n;
  adj_v[1] += -adj_n * dg * sg;
  adj_globals[kGroundDamping] += -adj_n * sg * vy;
  // z-dependence: ∂E/∂z = k_g w_g σ, ∂(σ v_y)/∂z = σ(1 − σ) v_y
  const S adj_z = adj_elastic * kg * wg * sg - adj_n * dg * sg * (S(1) - sg) * vy;
  adj_globals[kGroundStiffness] += adj_elastic * wg * sp;
  // E = k_g w sp(z) at fixed p: ∂/∂w = k_g sp + ∂/∂z · (−z/w)
  adj_globals[kGroundSmoothing] += adj_elastic * kg * sp + adj_z * (-z / wg);
  adj_y += -adj_z / wg;
  adj_globals[kGroundHeight] += adj_z / wg;
}

// (x_i, v*_i) -> (x'_i, v'_i): free flight, or the time-of-impact projection
template <class S, class XIn, class PIn, class XOut>
STEER_HD void MassSpring::integrate(int i, const XIn& x, const PIn& p, const S* vstar, XOut& xn) const {
  const S h = S(dt);
  bool free_flight = !(ground && impact);
  if constexpr (!is_pack<S>::value) {
    const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
    if (!free_flight) free_flight = !(y + h * vstar[1] < yg);
  }
  if (free_flight) {
    for (int c = 0; c < dim; ++c) {
      xn[x_vel(i) + c] = vstar[c];
      xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + h * vstar[c];
    }
    return;
  }
  // (simd.h packs take only the penalty ground: MassSpring::packable)
  if constexpr (!is_pack<S>::value) integrate_impact<S>(i, x, p, vstar, xn);
}
template <class S, class XIn, class PIn, class XOut>
STEER_HD void MassSpring::integrate_impact(int i, const XIn& x, const PIn& p, const S* vstar, XOut& xn) const {
  using std::sqrt;
  const S h = S(dt);
  const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
  const S e = S(p[p_global(kRestitution)]), mu = S(p[p_global(kFriction)]), ve = S(p[p_global(kFrictionSmoothing)]);
  const S s = y > yg ? (y - yg) / (-h * vstar[1]) : S(0);
  const S vy = -e * vstar[1];
  const S dn = -(S(1) + e) * vstar[1];
  S q2 = ve * ve;
  for (int c = 0; c < dim; ++c)
    if (c != 1) q2 += vstar[c] * vstar[c];
  const S fct = S(1) / (S(1) + mu * dn / sqrt(q2));
  xn[x_vel(i) + 1] = vy;
  xn[x_pos(i) + 1] = yg + (S(1) - s) * h * vy;
  for (int c = 0; c < dim; ++c) {
    if (c == 1) continue;
    const S vt = fct * vstar[c];
    xn[x_vel(i) + c] = vt;
    xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + s * h * vstar[c] + (S(1) - s) * h * vt;
  }
}
// adjoint of integrate: the part reaching x_i directly (xbar) and v*_i (vbar); the impact's
// global parameters (y_g, e, μ, v_ε) into adj_globals when it is not null
template <class S, class XIn, class PIn, class XnAdj>
STEER_HD void MassSpring::adj_integrate(int i, const XIn& x, const PIn& p, const S* vstar, const XnAdj& adj_xn,
                                        S* xbar, S* vbar, S* adj_globals) const {
  using std::sqrt;
  const S h = S(dt);
  const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
  if (!(ground && impact) || !(y + h * vstar[1] < yg)) {
    // x' = x + h v', v' = v*
    for (int c = 0; c < dim; ++c) {
      xbar[c] = S(adj_xn[x_pos(i) + c]);
      vbar[c] = S(adj_xn[x_vel(i) + c]) + h * S(adj_xn[x_pos(i) + c]);
    }
    return;
  }
  const S e = S(p[p_global(kRestitution)]), mu = S(p[p_global(kFriction)]), ve = S(p[p_global(kFrictionSmoothing)]);
  const bool above = y > yg;
  const S s = above ? (y - yg) / (-h * vstar[1]) : S(0);
  const S vy = -e * vstar[1];
  const S dn = -(S(1) + e) * vstar[1];
  S q2 = ve * ve;
  for (int c = 0; c < dim; ++c)
    if (c != 1) q2 += vstar[c] * vstar[c];
  const S q = sqrt(q2);
  const S r = mu * dn / q;
  const S fct = S(1) / (S(1) + r);
  S adj_s = S(0), adj_fct = S(0), adj_yg = S(0), adj_e = S(0);
  for (int c = 0; c < dim; ++c) xbar[c] = vbar[c] = S(0);
  // tangential: x'_t = x_t + s h v*_t + (1 − s) h v'_t, v'_t = fct v*_t
  for (int c = 0; c < dim; ++c) {
    if (c == 1) continue;
    const S ax = S(adj_xn[x_pos(i) + c]);
    const S vt = fct * vstar[c];
    const S adj_vt = S(adj_xn[x_vel(i) + c]) + (S(1) - s) * h * ax;
    xbar[c] = ax;
    vbar[c] += s * h * ax + fct * adj_vt;
    adj_s += h * (vstar[c] - vt) * ax;
    adj_fct += vstar[c] * adj_vt;
  }
  // vertical: y' = y_g + (1 − s) h v'_y, v'_y = −e v*_y
  const S ay = S(adj_xn[x_pos(i) + 1]);
  const S adj_vy = S(adj_xn[x_vel(i) + 1]) + (S(1) - s) * h * ay;
  adj_yg += ay;
  adj_s += -h * vy * ay;
  vbar[1] += -e * adj_vy;
  adj_e += -vstar[1] * adj_vy;
  // fct = 1/(1 + r), r = μ Δn / q, Δn = −(1 + e) v*_y, q = sqrt(|v*_t|² + v_ε²)
  const S adj_r = -fct * fct * adj_fct;
  const S adj_dn = adj_r * mu / q;
  const S adj_q = -adj_r * mu * dn / (q * q);
  for (int c = 0; c < dim; ++c)
    if (c != 1) vbar[c] += adj_q * vstar[c] / q;
  vbar[1] += -(S(1) + e) * adj_dn;
  adj_e += -vstar[1] * adj_dn;
  // s = (y − y_g)/(−h v*_y) while the particle starts above the ground
  if (above) {
    xbar[1] += adj_s / (-h * vstar[1]);
    adj_yg += -adj_s / (-h * vstar[1]);
    vbar[1] += adj_s * (y - yg) / (h * vstar[1] * vstar[1]);
  }
  if (adj_globals) {
    adj_globals[kGroundHeight] += adj_yg;
    adj_globals[kRestitution] += adj_e;
    adj_globals[kFriction] += adj_r * dn / q;
    adj_globals[kFrictionSmoothing] += adj_q * ve / q;
  }
}

}  // namespace steer
