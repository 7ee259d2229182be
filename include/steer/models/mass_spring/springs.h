// MassSpring's springs: rest length, tension and their adjoints.
//   L0_s = θ slot, or |P_b − P_a| in rest-position mode                  [m]
//   L_s  = L0_s (1 + α_s act_{a(s)})                                      target length [m]
//   d = x_b − x_a, ℓ = |d|, n̂ = d/ℓ, Δv = v_b − v_a
//   F_s  = k_s (ℓ − L_s) + c_s Δv·n̂                                      tension [N]; F n̂ on a, −F
//   n̂ on b adjoint of g = F n̂:  ∂g/∂d = F (I − n̂n̂ᵀ)/ℓ + n̂ (k n̂ᵀ + c Δvᵀ (I − n̂n̂ᵀ)/ℓ),  ∂g/∂Δv = c n̂
//   n̂ᵀ,
//                        ∂F/∂k = ℓ − L, ∂F/∂c = Δv·n̂, ∂F/∂L0 = −k (1 + α act), ∂F/∂α = −k L0 act
// No force and no derivative at zero length, where n̂ is undefined.
// With a length offset ε > 0 (DiffTaichi's mass_spring.py: length = |d| + 10⁻⁴): ℓ = |d| + ε and
// n̂ = d/ℓ (not of unit length), so g = F d/ℓ, finite and zero at d = 0; the adjoint then takes
// ∂ℓ/∂d = d̂ = d/|d| where it takes n̂ without an offset:
//   ∂g/∂d = F (I − n̂d̂ᵀ)/ℓ + n̂ (k d̂ᵀ + c Δvᵀ (I − n̂d̂ᵀ)/ℓ)
#pragma once

#include "steer/models/mass_spring/actuation.h"

namespace steer {

// rest length of spring s: the L0 slot, or |P_b − P_a| in rest-position mode
template <class S, class PIn>
STEER_HD S MassSpring::rest_length(int s, const PIn& p) const {
  using std::sqrt;
  if (!rest_from_positions) return S(p[p_rest_length(s)]);
  const int a = end_a(s), b = end_b(s);
  S l2 = S(0);
  for (int c = 0; c < dim; ++c) {
    const S d = S(p[p_rest_position(b) + c]) - S(p[p_rest_position(a) + c]);
    l2 += d * d;
  }
  return sqrt(l2);
}
// ∂L0_s/∂P for rest-position mode: adj of L0 spread onto P_a (−) and P_b (+) along the
// rest direction; written for particle `owner` only (the gathering lane)
template <class S, class PIn, class PAdj>
STEER_HD void MassSpring::adj_rest_length_at(int s, int owner, const PIn& p, PAdj& adj_p,
                                             const S& adj_l0) const {
  using std::sqrt;
  const int a = end_a(s), b = end_b(s);
  S r[3], l2 = S(0);
  for (int c = 0; c < dim; ++c) {
    r[c] = S(p[p_rest_position(b) + c]) - S(p[p_rest_position(a) + c]);
    l2 += r[c] * r[c];
  }
  const S l = sqrt(l2);
  const auto live = l > S(1e-12);  // no direction at zero rest length (a pack: per lane)
  if (!any_lane(live)) return;
  const S l_div = select(live, l, S(1));
  const S sign = owner == b ? S(1) : S(-1);
  for (int c = 0; c < dim; ++c) {
    const S term = sign * adj_l0 * r[c] / l_div;
    adj_p[p_rest_position(owner) + c] += is_pack<S>::value ? select(live, term, S(0)) : term;
  }
}

// tension of spring s and its direction n̂ (from a to b); zero force at zero length,
// where the direction is undefined. keep (optional): the step tape's ℓ, Δv·n̂, act, L0
// (only ℓ at zero length, where the adjoint stops at ℓ)
template <class S, class XIn, class UIn, class PIn>
STEER_HD S MassSpring::spring_force(int s, const S& t, const XIn& x, const UIn& u, const PIn& p,
                                    S* nhat, const PhaseBank<S>* pb, SpringTape<S>* keep) const {
  using std::sqrt;
  const int a = end_a(s), b = end_b(s);
  S l2 = S(0);
  S d[3];
  for (int c = 0; c < dim; ++c) {
    d[c] = S(x[x_pos(b) + c]) - S(x[x_pos(a) + c]);
    l2 += d[c] * d[c];
  }
  S l = sqrt(l2);
  if (length_offset != 0) l += S(length_offset);
  if (keep) keep->l = l;
  // zero length: no force, no direction. A pack whose lanes differ computes the rest with
  // ℓ := 1 in its zero-length lanes (finite values) and zeroes their F and n̂ at the end.
  const auto live = l > S(1e-12);
  if (!any_lane(live)) {
    for (int c = 0; c < dim; ++c) nhat[c] = S(0);
    return S(0);
  }
  const S l_div = select(live, l, S(1));
  S dv_n = S(0);
  for (int c = 0; c < dim; ++c) {
    nhat[c] = d[c] / l_div;
    dv_n += (S(x[x_vel(b) + c]) - S(x[x_vel(a) + c])) * nhat[c];
  }
  const int act = actuator(s);
  S target = rest_length<S>(s, p);
  if (keep) {
    keep->dv_n = dv_n;
    keep->L0 = target;
    keep->act = S(0);
  }
  if (act >= 0) {
    const S act_v = activation<S>(act, t, u, p, pb);
    if (keep) keep->act = act_v;
    target = target * (S(1) + S(p[p_amplitude(s)]) * act_v);
  }
  const S F = S(p[p_stiffness(s)]) * (l - target) + S(p[p_damping(s)]) * dv_n;
  if constexpr (is_pack<S>::value) {
    for (int c = 0; c < dim; ++c) nhat[c] = select(live, nhat[c], S(0));
    return select(live, F, S(0));
  }
  return F;
}
// ∂(F_s n̂)/∂(x_a, x_b, v_a, v_b, θ_s, actuator) applied to adj_g, the adjoint of the force
// on a. Writes the spring's own θ slots (and actuator weights) and returns the adjoints of
// d = x_b − x_a and Δv = v_b − v_a in adj_d, adj_dv.
// Also returns the tension F_s and, into nhat, its direction: the forward values the caller
// would otherwise recompute with spring_force; adj_rest (optional) receives the adjoint of the
// rest length L0_s (what rest-position mode spreads onto P_a, P_b).
// tape (optional, a const StepTape<S>*; then pb is unused): ℓ, n̂, Δv·n̂, F, act, L0 and the
// phases are read from symplectic_solo's tape instead of recomputed; they are the values computed
// here otherwise (spring_force's expressions on the same operands), so the adjoint is the same
// bits either way. The taped path also runs on simd.h packs: in a pack's zero-length lanes the
// tape holds F = 0 and n̂ = 0, ℓ is replaced by 1 in the divisions and ḡ·n̂ by 0, so every term
// is 0 there (its scalar run adds nothing).
template <class S, class XIn, class UIn, class PIn, class UAdj, class PAdj, class Tape>
STEER_HD S MassSpring::adj_spring_force(int s, const S& t, const XIn& x, const UIn& u, const PIn& p,
                                        const S* adj_g, S* adj_d, S* adj_dv, UAdj& adj_u,
                                        PAdj& adj_p, bool write_params, bool write_frequency,
                                        S& adj_w, S* nhat, const PhaseBank<S>* pb, S* adj_rest,
                                        Tape tape) const {
  constexpr bool taped = !std::is_same<Tape, std::nullptr_t>::value;
  using std::sqrt;
  for (int c = 0; c < dim; ++c) adj_d[c] = adj_dv[c] = S(0);
  if (nhat)
    for (int c = 0; c < dim; ++c) nhat[c] = S(0);
  if (adj_rest) *adj_rest = S(0);
  const int a = end_a(s), b = end_b(s);
  [[maybe_unused]] const SpringTape<S>* e = nullptr;
  S l, l_div, d[3], n_own[3], dv[3];  // (d: the untaped path's x_b − x_a)
  S dv_n = S(0), g_n = S(0);
  const S* n = n_own;
  if constexpr (taped) {
    e = &tape->spring[s];
    l = e->l;
    const auto live = l > S(1e-12);
    if (!any_lane(live)) return S(0);  // the force is 0 there, and so is its derivative
    l_div = select(live, l, S(1));
    n = e->n;
    for (int c = 0; c < dim; ++c) {
      dv[c] = S(x[x_vel(b) + c]) - S(x[x_vel(a) + c]);
      g_n += adj_g[c] * n[c];
    }
    if constexpr (is_pack<S>::value) g_n = select(live, g_n, S(0));
    dv_n = e->dv_n;
  } else {
    static_assert(!is_pack<S>::value, "simd.h packs take the taped path");
    S l2 = S(0);
    for (int c = 0; c < dim; ++c) {
      d[c] = S(x[x_pos(b) + c]) - S(x[x_pos(a) + c]);
      dv[c] = S(x[x_vel(b) + c]) - S(x[x_vel(a) + c]);
      l2 += d[c] * d[c];
    }
    l = sqrt(l2);
    if (length_offset != 0) l += S(length_offset);
    if (!(l > S(1e-12))) return S(0);  // the force is 0 there, and so is its derivative
    l_div = l;
    for (int c = 0; c < dim; ++c) {
      n_own[c] = d[c] / l;
      dv_n += dv[c] * n_own[c];
      g_n += adj_g[c] * n_own[c];
    }
  }
  const int act = actuator(s);
  const S k = S(p[p_stiffness(s)]), cs = S(p[p_damping(s)]);
  S L0;
  if constexpr (taped)
    L0 = e->L0;
  else
    L0 = rest_length<S>(s, p);
  S act_v = S(0), target = L0, scale = S(1);
  if (act >= 0) {
    if constexpr (taped)
      act_v = e->act;
    else
      act_v = activation<S>(act, t, u, p, pb);
    scale = S(1) + S(p[p_amplitude(s)]) * act_v;
    target = L0 * scale;
  }
  S F;
  if constexpr (taped)
    F = e->F;
  else
    F = k * (l - target) + cs * dv_n;
  // g = F n̂:  ∂g/∂d = F (I − n̂n̂ᵀ)/ℓ + n̂ (k n̂ᵀ + c Δvᵀ (I − n̂n̂ᵀ)/ℓ),  ∂g/∂Δv = c n̂ n̂ᵀ;
  // with a length offset n̂ᵀ becomes d̂ᵀ = (ℓ/(ℓ − ε)) n̂ᵀ in ∂ℓ/∂d's places (0 at d = 0)
  const S* dh = n;
  S dh_own[3];
  if (length_offset != 0) {
    const S r = l_div - S(length_offset);
    const auto has_direction = r > S(1e-12);
    const S ratio = select(has_direction, S(l_div / select(has_direction, r, S(1))), S(0));
    for (int c = 0; c < dim; ++c) dh_own[c] = n[c] * ratio;
    dh = dh_own;
  }
  for (int c = 0; c < dim; ++c) {
    adj_d[c] = F * (adj_g[c] - dh[c] * g_n) / l_div +
               g_n * (k * dh[c] + cs * (dv[c] - dh[c] * dv_n) / l_div);
    adj_dv[c] = g_n * cs * n[c];
  }
  // F = k (ℓ − L) + c Δv·n̂,  L = L0 (1 + α act)
  const S adj_target = -k * g_n;
  if (adj_rest) *adj_rest = adj_target * scale;  // ∂F/∂L0 = −k (1 + α act)
  if (write_params) {
    adj_p[p_stiffness(s)] += g_n * (l - target);
    adj_p[p_damping(s)] += g_n * dv_n;
    if (!rest_from_positions) adj_p[p_rest_length(s)] += adj_target * scale;
    if (act >= 0) {
      adj_p[p_amplitude(s)] += adj_target * L0 * act_v;
      const S adj_act = adj_target * L0 * S(p[p_amplitude(s)]);
      if constexpr (taped)
        adj_activation<S>(act, t, u, p, adj_u, adj_p, write_frequency, adj_w, adj_act, tape,
                          &act_v);
      else
        adj_activation<S>(act, t, u, p, adj_u, adj_p, write_frequency, adj_w, adj_act, pb, &act_v);
    }
  }
  if (nhat)
    for (int c = 0; c < dim; ++c) nhat[c] = n[c];
  return F;
}
// ∂(F_s n̂)/∂ω applied to adj_g (the actuation frequency's share of spring s): the ω terms of
// adj_spring_force alone, for the lane-strided adjoint's leader pass
template <class S, class XIn, class UIn, class PIn>
STEER_HD void MassSpring::adj_frequency(int s, const S& t, const XIn& x, const UIn& u, const PIn& p,
                                        const S* adj_g, S& adj_w, const PhaseBank<S>* pb) const {
  using std::cos;
  using std::sqrt;
  const int a = end_a(s), b = end_b(s), act = actuator(s);
  S l2 = S(0), d[3];
  for (int c = 0; c < dim; ++c) {
    d[c] = S(x[x_pos(b) + c]) - S(x[x_pos(a) + c]);
    l2 += d[c] * d[c];
  }
  S l = sqrt(l2);
  if (length_offset != 0) l += S(length_offset);
  if (!(l > S(1e-12))) return;
  S g_n = S(0);
  for (int c = 0; c < dim; ++c) g_n += adj_g[c] * d[c] / l;
  const S act_v = activation<S>(act, t, u, p, pb);
  const S adj_act = -S(p[p_stiffness(s)]) * g_n * rest_length<S>(s, p) * S(p[p_amplitude(s)]);
  const S adj_z = adj_act * (S(1) - act_v * act_v);
  if (pb && pb->ok) {
    for (int j = 0; j < n_phases; ++j) adj_w += adj_z * S(p[p_weight(act, j)]) * pb->cs[j] * t;
    return;
  }
  for_each_phase<S>(t, p, [&](int j, const S&, const S& cs) {
    adj_w += adj_z * S(p[p_weight(act, j)]) * cs * t;
  });
}

}  // namespace steer
