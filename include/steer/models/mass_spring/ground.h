// MassSpring's ground: the penalty force, the integration step with the impact ground, and
// their adjoints.
// Penalty ground, p = y_g − y_i, z = p/w_g [1]:
//   F_n = k_g w_g softplus(z) − d_g σ(z) v_y                     normal [N] (→ hard penalty as w_g
//   → 0) F_t = −μ k_g w_g softplus(z) v_t / sqrt(|v_t|² + v_ε²)       smoothed Coulomb friction [N]
// Integration of particle i from its free velocity v*: x' = x + h v*, v' = v*; with the impact
// ground, a particle whose x* = x + h v* ends below y_g takes the time-of-impact step instead:
// a symplectic-Euler sub-step to the impact fraction s, the reflection (restitution e, friction
// impulse), and a sub-step over the rest 1 − s of the step with the step's forces held
// (impact_step below states it in full). The stick law (impact_stick, DiffTaichi's advance_toi)
// instead stops a particle moving down (v*_y < −10⁻⁴ m/s) at its time of impact:
// x' = x + τ v*, τ = −(y − y_g)/v*_y, v' = 0.
#pragma once

#include "steer/models/mass_spring/model.h"

namespace steer {

// ground force on particle i: out[1] normal (+y), out[0] (and out[2]) friction
// keep (optional): the step tape's z, softplus(z), σ(z), q (penalty ground only)
template <class S, class XIn, class PIn>
STEER_HD void MassSpring::ground_force(int i, const XIn& x, const PIn& p, S* out,
                                       ParticleTape<S>* keep) const {
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
// and friction norm q = sqrt(|v_t|² + v_ε²) read from symplectic_solo's tape instead of recomputed
// (the same values, so the same bits); force_out is not filled then.
template <class S, class XIn, class PIn, class Tape>
STEER_HD void MassSpring::adj_ground_force(int i, const XIn& x, const PIn& p, const S* adj_f,
                                           S& adj_y, S* adj_v, S* adj_globals, S* force_out,
                                           Tape tape) const {
  constexpr bool taped = !std::is_same<Tape, std::nullptr_t>::value;
  using std::sqrt;
  if (force_out)
    for (int c = 0; c < dim; ++c) force_out[c] = S(0);
  if (!ground || impact) return;
  if constexpr (taped) {
    adj_ground_terms(i, x, p, tape->z, tape->sp, tape->sg, tape->q, adj_f, adj_y, adj_v,
                     adj_globals);
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
STEER_HD void MassSpring::adj_ground_terms(int i, const XIn& x, const PIn& p, const S& z,
                                           const S& sp, const S& sg, const S& q, const S* adj_f,
                                           S& adj_y, S* adj_v, S* adj_globals) const {
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

// (x_i, v*_i) -> (x'_i, v'_i): free flight, or the time-of-impact step
template <class S, class XIn, class PIn, class XOut>
STEER_HD void MassSpring::integrate(int i, const XIn& x, const PIn& p, const S* vstar,
                                    XOut& xn) const {
  const S h = S(dt);
  bool free_flight = !(ground && impact);
  if constexpr (!is_pack<S>::value) {
    const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
    if (!free_flight) free_flight = !(y + h * vstar[1] < yg);
    if (!free_flight && impact_stick) {
      if (!(vstar[1] < S(-kStickSpeed))) {
        free_flight = true;
      } else {
        // x' = x + τ v*, τ = −(y − y_g)/v*_y (τ < 0 lifts a particle below y_g onto it); v' = 0
        const S tau = -(y - yg) / vstar[1];
        for (int c = 0; c < dim; ++c) {
          xn[x_vel(i) + c] = S(0);
          xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + tau * vstar[c];
        }
        return;
      }
    }
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
// The impact step's intermediates (ImpactStep, model.h) from x_i and v*_i; the forward step and
// its adjoint both call this, so the adjoint differentiates exactly the branch the forward took.
// The step's smooth forces are held over the step: w = v* − e^{−ζh} v is their velocity
// increment h a [m/s], and velocity damping is interpolated linearly in the elapsed fraction,
// D(σ) = 1 − σ (1 − e^{−ζh}), so that D(0) = 1 and D(1) = e^{−ζh}. A sub-step of fraction σ from
// velocity u is then the symplectic-Euler step of length σh: u' = D(σ) u + σ w, x' = x + σh u'.
//   impact:    y + s h v(s) = y_g with v(s) = v + s (v* − v) (= D(s) v + s w), i.e. the root in
//              (0, 1) of c + b s + A s² (c = y − y_g > 0, b = h v_y, A = h (v*_y − v_y)); it is
//              unique because c > 0 and c + b + A = y + h v*_y − y_g < 0; s = 0 for a particle
//              starting on or below the ground. v_in = v(s), and v_in,y = −c/(s h) < 0.
//   reflect:   if v_in,y < 0: Δn₁ = −(1 + e) v_in,y, v_r,y = −e v_in,y, else Δn₁ = 0, v_r = v_in;
//              v_r,t = v_in,t / (1 + μ Δn₁ / sqrt(|v_in,t|² + v_ε²))
//   remainder: σ = 1 − s, v'' = D(σ) v_r + σ w. A particle that would move back into the ground
//              (v''_y < 0: resting contact, or a bounce slower than the rest of the step's pull)
//              is held on it: Δn₂ = −v''_y, v'_y = 0, v'_t = v''_t / (1 + μ Δn₂ / sqrt(|v''_t|² +
//              v_ε²)); otherwise v' = v''.
//   positions: y' = y_g + σ h v'_y,  x'_t = x_t + s h v_in,t + σ h v'_t
// As h → 0 the outgoing velocity carries the pull of the forces over the part of the step after
// the impact, so ∂v'/∂(impact time) tends to the continuous bounce's (for a drop under gravity
// ∂v_T/∂y_0 = (1 + e) g/v_c). At s = 1 the step ends on the ground with v' = v_r, and at s = 0 it
// is the free step from v_r: the step is continuous where the impact moves from one step to the
// next (up to the velocity-dependent forces, evaluated once per step).
template <class S, class XIn, class PIn>
STEER_HD void MassSpring::impact_step(int i, const XIn& x, const PIn& p, const S* vstar,
                                      ImpactStep<S>& st) const {
  using std::sqrt;
  const S h = S(dt);
  const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
  const S e = S(p[p_global(kRestitution)]), mu = S(p[p_global(kFriction)]),
          ve = S(p[p_global(kFrictionSmoothing)]);
  st.decay = exp_of(-S(p[p_global(kVelocityDamping)]) * h);  // e^{−ζh}, as free_velocity
  S v[3];
  for (int c = 0; c < dim; ++c) {
    v[c] = S(x[x_vel(i) + c]);
    st.w[c] = vstar[c] - st.decay * v[c];
  }
  st.above = y > yg;
  st.s = S(0);
  st.den = S(-1);
  if (st.above) {
    const S c0 = y - yg, b = h * v[1], A = h * (vstar[1] - v[1]);
    S disc = b * b - S(4) * A * c0;  // ≥ 0 where a root lies in (0, 1); rounding aside
    if (!(disc > S(0))) disc = S(0);
    st.s = S(2) * c0 / (-b + sqrt(disc));  // the root in (0, 1), without cancellation
    st.den = b + S(2) * A * st.s;          // d(c + b s + A s²)/ds at the root, < 0
  }
  for (int c = 0; c < dim; ++c) st.vin[c] = v[c] + st.s * (vstar[c] - v[c]);
  st.approach = st.vin[1] < S(0);
  st.dn1 = st.approach ? -(S(1) + e) * st.vin[1] : S(0);
  st.vr[1] = st.approach ? -e * st.vin[1] : st.vin[1];
  S q2 = ve * ve;
  for (int c = 0; c < dim; ++c)
    if (c != 1) q2 += st.vin[c] * st.vin[c];
  st.q1 = sqrt(q2);
  st.fr1 = S(1) / (S(1) + mu * st.dn1 / st.q1);
  for (int c = 0; c < dim; ++c)
    if (c != 1) st.vr[c] = st.fr1 * st.vin[c];
  const S rest = S(1) - st.s;
  st.damp = S(1) - rest * (S(1) - st.decay);
  for (int c = 0; c < dim; ++c) st.vpp[c] = st.damp * st.vr[c] + rest * st.w[c];
  st.clamp = st.vpp[1] < S(0);
  st.dn2 = st.clamp ? -st.vpp[1] : S(0);
  q2 = ve * ve;
  for (int c = 0; c < dim; ++c)
    if (c != 1) q2 += st.vpp[c] * st.vpp[c];
  st.q2 = sqrt(q2);
  st.fr2 = S(1) / (S(1) + mu * st.dn2 / st.q2);
}
template <class S, class XIn, class PIn, class XOut>
STEER_HD void MassSpring::integrate_impact(int i, const XIn& x, const PIn& p, const S* vstar,
                                           XOut& xn) const {
  const S h = S(dt);
  const S yg = S(p[p_global(kGroundHeight)]);
  ImpactStep<S> st{};  // slots past dim stay zero
  impact_step<S>(i, x, p, vstar, st);
  const S rest = S(1) - st.s;
  const S vy = st.clamp ? S(0) : st.vpp[1];
  xn[x_vel(i) + 1] = vy;
  xn[x_pos(i) + 1] = yg + rest * h * vy;
  for (int c = 0; c < dim; ++c) {
    if (c == 1) continue;
    const S vt = st.fr2 * st.vpp[c];
    xn[x_vel(i) + c] = vt;
    xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + st.s * h * st.vin[c] + rest * h * vt;
  }
}
// adjoint of integrate: the part reaching x_i's position directly (xbar), v*_i (vbar) and x_i's
// velocity directly (wbar: the impact step's sub-steps read v_i besides v*_i; 0 in free flight);
// the impact's global parameters (y_g, e, μ, v_ε, and ζ through e^{−ζh}) into adj_globals when
// it is not null
template <class S, class XIn, class PIn, class XnAdj>
STEER_HD void MassSpring::adj_integrate(int i, const XIn& x, const PIn& p, const S* vstar,
                                        const XnAdj& adj_xn, S* xbar, S* vbar, S* wbar,
                                        S* adj_globals) const {
  const S h = S(dt);
  const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
  if (!(ground && impact) || !(y + h * vstar[1] < yg) ||
      (impact_stick && !(vstar[1] < S(-kStickSpeed)))) {
    // x' = x + h v', v' = v*
    for (int c = 0; c < dim; ++c) {
      xbar[c] = S(adj_xn[x_pos(i) + c]);
      vbar[c] = S(adj_xn[x_vel(i) + c]) + h * S(adj_xn[x_pos(i) + c]);
      wbar[c] = S(0);
    }
    return;
  }
  if (impact_stick) {
    // x' = x + τ v*, τ = −(y − y_g)/v*_y, v' = 0:  x̄ += x̄', v̄* += τ x̄', τ̄ = v*·x̄',
    // ∂τ/∂y = −1/v*_y, ∂τ/∂y_g = 1/v*_y, ∂τ/∂v*_y = (y − y_g)/v*_y²
    const S tau = -(y - yg) / vstar[1];
    S tau_bar = S(0);
    for (int c = 0; c < dim; ++c) {
      const S ax = S(adj_xn[x_pos(i) + c]);
      xbar[c] = ax;
      vbar[c] = tau * ax;
      wbar[c] = S(0);
      tau_bar += vstar[c] * ax;
    }
    xbar[1] += -tau_bar / vstar[1];
    vbar[1] += tau_bar * (y - yg) / (vstar[1] * vstar[1]);
    if (adj_globals) adj_globals[kGroundHeight] += tau_bar / vstar[1];
    return;
  }
  const S e = S(p[p_global(kRestitution)]), mu = S(p[p_global(kFriction)]),
          ve = S(p[p_global(kFrictionSmoothing)]);
  ImpactStep<S> st{};  // slots past dim stay zero
  impact_step<S>(i, x, p, vstar, st);
  const S rest = S(1) - st.s;
  S adj_rest = S(0), adj_s = S(0), adj_damp = S(0), adj_decay = S(0), adj_yg = S(0), adj_e = S(0);
  S adj_mu = S(0), adj_ve = S(0), adj_fr2 = S(0), adj_fr1 = S(0);
  S adj_vpp[3], adj_vin[3], adj_vr[3], adj_w[3];
  for (int c = 0; c < dim; ++c) xbar[c] = vbar[c] = wbar[c] = adj_vin[c] = S(0);
  // y' = y_g + σ h v'_y, v'_y = v''_y (0 when held on the ground)
  const S ay = S(adj_xn[x_pos(i) + 1]);
  const S vy = st.clamp ? S(0) : st.vpp[1];
  adj_yg += ay;
  adj_rest += h * vy * ay;
  adj_vpp[1] = st.clamp ? S(0) : S(adj_xn[x_vel(i) + 1]) + rest * h * ay;
  // x'_t = x_t + s h v_in,t + σ h v'_t, v'_t = fr₂ v''_t
  for (int c = 0; c < dim; ++c) {
    if (c == 1) continue;
    const S ax = S(adj_xn[x_pos(i) + c]);
    const S vt = st.fr2 * st.vpp[c];
    xbar[c] = ax;
    adj_s += h * st.vin[c] * ax;
    adj_vin[c] = st.s * h * ax;
    adj_rest += h * vt * ax;
    const S adj_vt = S(adj_xn[x_vel(i) + c]) + rest * h * ax;
    adj_vpp[c] = st.fr2 * adj_vt;
    adj_fr2 += st.vpp[c] * adj_vt;
  }
  // fr₂ = 1/(1 + r₂), r₂ = μ Δn₂/q₂, Δn₂ = −v''_y, q₂ = sqrt(|v''_t|² + v_ε²) (held only)
  if (st.clamp) {
    const S adj_r = -st.fr2 * st.fr2 * adj_fr2;
    const S adj_dn = adj_r * mu / st.q2;
    const S adj_q = -adj_r * mu * st.dn2 / (st.q2 * st.q2);
    adj_mu += adj_r * st.dn2 / st.q2;
    for (int c = 0; c < dim; ++c)
      if (c != 1) adj_vpp[c] += adj_q * st.vpp[c] / st.q2;
    adj_ve += adj_q * ve / st.q2;
    adj_vpp[1] += -adj_dn;
  }
  // v'' = D v_r + σ w, D = 1 − σ (1 − e^{−ζh})
  for (int c = 0; c < dim; ++c) {
    adj_vr[c] = st.damp * adj_vpp[c];
    adj_w[c] = rest * adj_vpp[c];
    adj_damp += st.vr[c] * adj_vpp[c];
    adj_rest += st.w[c] * adj_vpp[c];
  }
  adj_rest += -(S(1) - st.decay) * adj_damp;
  adj_decay += rest * adj_damp;
  // v_r,t = fr₁ v_in,t; v_r,y = −e v_in,y while approaching (else v_in,y)
  for (int c = 0; c < dim; ++c) {
    if (c == 1) continue;
    adj_vin[c] += st.fr1 * adj_vr[c];
    adj_fr1 += st.vin[c] * adj_vr[c];
  }
  if (st.approach) {
    adj_vin[1] += -e * adj_vr[1];
    adj_e += -st.vin[1] * adj_vr[1];
    // fr₁ = 1/(1 + r₁), r₁ = μ Δn₁/q₁, Δn₁ = −(1 + e) v_in,y, q₁ = sqrt(|v_in,t|² + v_ε²)
    const S adj_r = -st.fr1 * st.fr1 * adj_fr1;
    const S adj_dn = adj_r * mu / st.q1;
    const S adj_q = -adj_r * mu * st.dn1 / (st.q1 * st.q1);
    adj_mu += adj_r * st.dn1 / st.q1;
    for (int c = 0; c < dim; ++c)
      if (c != 1) adj_vin[c] += adj_q * st.vin[c] / st.q1;
    adj_ve += adj_q * ve / st.q1;
    adj_vin[1] += -(S(1) + e) * adj_dn;
    adj_e += -st.vin[1] * adj_dn;
  } else {
    adj_vin[1] += adj_vr[1];
  }
  // σ = 1 − s; v_in = v + s (v* − v); w = v* − e^{−ζh} v
  adj_s += -adj_rest;
  for (int c = 0; c < dim; ++c) {
    const S v = S(x[x_vel(i) + c]);
    adj_s += (vstar[c] - v) * adj_vin[c];
    vbar[c] += st.s * adj_vin[c] + adj_w[c];
    wbar[c] += (S(1) - st.s) * adj_vin[c] - st.decay * adj_w[c];
    adj_decay += -v * adj_w[c];
  }
  // s: the root of c + b s + A s² with c = y − y_g, b = h v_y, A = h (v*_y − v_y); implicitly
  // ds = −(dc + s db + s² dA)/den, den = b + 2 A s
  if (st.above) {
    const S adj_c = -adj_s / st.den, adj_b = -st.s * adj_s / st.den,
            adj_A = -st.s * st.s * adj_s / st.den;
    xbar[1] += adj_c;
    adj_yg += -adj_c;
    wbar[1] += h * adj_b - h * adj_A;
    vbar[1] += h * adj_A;
  }
  if (adj_globals) {
    adj_globals[kGroundHeight] += adj_yg;
    adj_globals[kRestitution] += adj_e;
    adj_globals[kFriction] += adj_mu;
    adj_globals[kFrictionSmoothing] += adj_ve;
    adj_globals[kVelocityDamping] += -h * st.decay * adj_decay;  // e^{−ζh}
  }
}

}  // namespace steer
