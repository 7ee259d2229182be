// MassSpring's actuation: the activation of actuator a at time t and its adjoint.
//   sinusoid mode: act_a = tanh(z_a),  z_a = Σ_j w_aj sin(ω t + 2πj/n) + b_a   [1]
//   raw mode:      act_a = u_a (the control)
//   adjoint:       z̄ = act̄ (1 − act²),  b̄_a += z̄,  w̄_aj += z̄ sin(ω t + 2πj/n),
//                  ω̄ += z̄ Σ_j w_aj cos(ω t + 2πj/n) t;  raw: ū_a += act̄
// The phases sin/cos(ω t + 2πj/n) come from one sin/cos pair rotated through 2π/n, either
// on the spot (for_each_phase) or from a bank filled once per step (PhaseBank, or the step
// tape's copy of it).
#pragma once

#include "steer/models/mass_spring/model.h"

namespace steer {

// the phases sin(ω t + 2πj/n), cos(ω t + 2πj/n) for j = 0..n−1 by rotating (cos ωt, sin ωt)
// through φ = 2π/n: two trigonometric calls per actuator instead of n
template <class S, class PIn, class F>
STEER_HD void MassSpring::for_each_phase(const S& t, const PIn& p, F&& f) const {
  const S wt = S(p[p_global(kActuationFrequency)]) * t;
  S sn, cs;
  sincos_of(wt, sn, cs);
  const double phi = 6.283185307179586 / n_phases;
  const S cp = S(std::cos(phi)), spp = S(std::sin(phi));
  for (int j = 0; j < n_phases; ++j) {
    f(j, sn, cs);
    const S sn1 = sn * cp + cs * spp;  // sin(x + φ) = sin x cos φ + cos x sin φ
    cs = cs * cp - sn * spp;           // cos(x + φ) = cos x cos φ − sin x sin φ
    sn = sn1;
  }
}
template <class S, class PIn>
STEER_HD void MassSpring::fill_phases(const S& t, const PIn& p, PhaseBank<S>& pb) const {
  pb.ok = actuation == kSinusoid && n_phases <= PhaseBank<S>::kCap;
  if (!pb.ok) return;
  for_each_phase<S>(t, p, [&](int j, const S& sn, const S& cs) {
    pb.sn[j] = sn;
    pb.cs[j] = cs;
  });
}

// act_a(t) = tanh(Σ_j w_aj sin(ω t + 2πj/n) + b_a), or u_a in raw mode
template <class S, class UIn, class PIn>
STEER_HD S MassSpring::activation(int a, const S& t, const UIn& u, const PIn& p,
                                  const PhaseBank<S>* pb) const {
  if (actuation == kRaw) return S(u[a]);
  S z = S(p[p_bias(a)]);
  if (pb && pb->ok) {
    for (int j = 0; j < n_phases; ++j) z += S(p[p_weight(a, j)]) * pb->sn[j];
    return tanh_of(z);
  }
  for_each_phase<S>(t, p, [&](int j, const S& sn, const S&) { z += S(p[p_weight(a, j)]) * sn; });
  return tanh_of(z);
}
// ∂act_a/∂(w_a·, b_a, ω, u_a) applied to adj_act. pb: the step's phases, a PhaseBank or a
// StepTape (anything with sn[], cs[] and phases_ready()); without them the rotation runs here.
// act_known: the activation the caller already has (saves recomputing it).
template <class S, class UIn, class PIn, class UAdj, class PAdj, class Bank>
STEER_HD void MassSpring::adj_activation(int a, const S& t, const UIn& u, const PIn& p, UAdj& adj_u,
                                         PAdj& adj_p, bool write_frequency, S& adj_w,
                                         const S& adj_act, const Bank* pb,
                                         const S* act_known) const {
  if (actuation == kRaw) {
    adj_u[a] += adj_act;
    return;
  }
  S act;
  if (act_known)
    act = *act_known;
  else if constexpr (std::is_same<Bank, PhaseBank<S>>::value)
    act = activation<S>(a, t, u, p, pb);
  else
    act = activation<S>(a, t, u, p);             // (a step tape's adjoint always passes act_known)
  const S adj_z = adj_act * (S(1) - act * act);  // tanh' = 1 − tanh²
  adj_p[p_bias(a)] += adj_z;
  if (pb && pb->phases_ready()) {
    // w̄_aj += z̄ sin(ω t + 2πj/n);  ω̄ += z̄ Σ_j w_aj cos(ω t + 2πj/n) t  (the same terms
    // in the same order as one loop with the flag inside; two loops keep the branch out)
    for (int j = 0; j < n_phases; ++j) adj_p[p_weight(a, j)] += adj_z * pb->sn[j];
    if (write_frequency)
      for (int j = 0; j < n_phases; ++j) adj_w += adj_z * S(p[p_weight(a, j)]) * pb->cs[j] * t;
    return;
  }
  for_each_phase<S>(t, p, [&](int j, const S& sn, const S& cs) {
    adj_p[p_weight(a, j)] += adj_z * sn;
    if (write_frequency) adj_w += adj_z * S(p[p_weight(a, j)]) * cs * t;
  });
}

}  // namespace steer
