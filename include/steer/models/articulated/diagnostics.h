// Articulated: per-step diagnostics: the contacts' penetration and state, the centre of mass
//   c = Σ_b m_b c_b / Σ_b m_b   (with its adjoint),
// and the energies KE = ½ q̇ᵀ M(q) q̇, E = KE + Σ_b m_b g z_b.
#pragma once

#include <algorithm>

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/dynamics.h"
#include "steer/models/articulated/contact.h"

namespace steer {

// contact c's depth below the plane [m] (≤ 0 when clear) from the kinematics K: c = 0 is the
// tip when contact.enabled, the ground points follow in their order (depth of the sphere's
// lowest point, height − (z − r)), then the contact pairs (their overlap r₀ + r₁ − ρ)
template <class Model, class S, class PIn>
STEER_HD S contact_depth(const Model& m, const typename Model::template Kin<S>& K, const PIn& p,
                         int c) {
  if constexpr (Model::kMaxPairs > 0) {  // (the packed and CUDA capacities have no pairs)
    const int first_pair = (m.contact ? 1 : 0) + m.ground.n_points;
    if (c >= first_pair) {  // a contact pair: r₀ + r₁ − ρ
      S xc[3], n[3];
      return pair_geometry<Model, S>(m, K, c - first_pair, xc, n);
    }
  }
  const S height = S(p[m.p_global(Model::kPlaneHeight)]);
  S t[3];
  if (m.contact && c == 0) {
    m.tip_position(K, t);
  } else {
    ground_point<Model, S>(m, K, p, c - (m.contact ? 1 : 0), t);
  }
  return height - t[2];
}

// the deepest penetration below the plane over the model's contacts [m] (≤ 0 when all are
// clear); the tip alone when there are no ground points (also when contact.enabled is off)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::penetration(const XIn& x,
                                                                  const PIn& p) const {
  S q[kMaxQ] = {};
  for (int i = 0; i < nq(); ++i) q[i] = x[i];
  Kin<S> K;
  forward_kinematics(q, p, K);
  if (ground.n_points == 0 && pair_count() == 0) {
    S t[3];
    tip_position(K, t);
    return S(p[p_global(kPlaneHeight)]) - t[2];
  }
  S deepest = contact_depth<ArticulatedCap, S>(*this, K, p, 0);
  for (int c = 1; c < num_contacts(); ++c) {
    const S d = contact_depth<ArticulatedCap, S>(*this, K, p, c);
    deepest = select(d > deepest, d, deepest);
  }
  return deepest;
}

// contact c's flag (in_contact) from the kinematics K of the state x
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD auto ArticulatedCap<NB, ND, NS, NP, NC>::contact_flag(const Kin<S>& K, const XIn& x,
                                                                      const PIn& p, int c) const {
  const S depth = contact_depth<ArticulatedCap, S>(*this, K, p, c);
  const int g = c - (contact ? 1 : 0);
  if (!ground.impact || g < 0 || (kMaxPairs > 0 && g >= ground.n_points)) return depth > S(0);
  S v[kMaxDof], xc[3], J[kMaxDof][3], vel[3];
  int es[kMaxDof];
  for (int i = 0; i < n_dof; ++i) v[i] = S(x[nq() + i]);
  ground_point<ArticulatedCap, S>(*this, K, p, g, xc);
  ground_jacobian<ArticulatedCap, S>(*this, K, ground.body[g], xc, v, nullptr, J, es, vel, nullptr);
  return depth > S(0) || S(S(dt) * vel[2] - depth) < S(0);
}

// contact c below the plane (bool for a scalar S, the lanes' mask for a pack). With
// time-of-impact impulses (impact.h) a ground point also counts while it is about to strike:
// above the plane by d and closing so that d + h ż < 0 at the state's velocity, the step in
// which it takes an impulse (up to the step's own change of ż). The validator's
// contact_mode_switch then sees an impact move from one step to another under ±ε, where the
// gradient jumps, although the point is above the plane at both ends of the step.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD auto ArticulatedCap<NB, ND, NS, NP, NC>::in_contact(const XIn& x, const PIn& p,
                                                                    int c) const {
  if (ground.n_points == 0 && pair_count() == 0) return penetration<S>(x, p) > S(0);
  S q[kMaxQ] = {};
  for (int i = 0; i < nq(); ++i) q[i] = x[i];
  Kin<S> K;
  forward_kinematics(q, p, K);
#if defined(__CUDA_ARCH__)
  // contact_flag's body written out, the form the kernels' budget was measured with: through
  // contact_flag (even forced inline) ptxas gives the float64 forward kernels 2 and 4 registers
  // more (152 and 160 against their ceilings of 150 and 156, tools/kernel_budget.json)
  const S depth = contact_depth<ArticulatedCap, S>(*this, K, p, c);
  const int g = c - (contact ? 1 : 0);
  if (!ground.impact || g < 0 || (kMaxPairs > 0 && g >= ground.n_points)) return depth > S(0);
  S v[kMaxDof], xc[3], J[kMaxDof][3], vel[3];
  int es[kMaxDof];
  for (int i = 0; i < n_dof; ++i) v[i] = S(x[nq() + i]);
  ground_point<ArticulatedCap, S>(*this, K, p, g, xc);
  ground_jacobian<ArticulatedCap, S>(*this, K, ground.body[g], xc, v, nullptr, J, es, vel, nullptr);
  return depth > S(0) || S(S(dt) * vel[2] - depth) < S(0);
#else
  return contact_flag<S>(K, x, p, c);
#endif
}

// every contact's in_contact flag from one kinematics pass, f(c, flag) for c = 0 … num_contacts()
// − 1 (model_contract.h's visit_contact_flags): a file with 25 contacts costs one forward
// kinematics per state instead of 25
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn, class F>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::visit_contacts(const XIn& x, const PIn& p,
                                                                        F&& f) const {
  const int nc = num_contacts();
  if (ground.n_points == 0 && pair_count() == 0) {
    for (int c = 0; c < nc; ++c) f(c, in_contact<S>(x, p, c));
    return;
  }
  S q[kMaxQ] = {};
  for (int i = 0; i < nq(); ++i) q[i] = x[i];
  Kin<S> K;
  forward_kinematics(q, p, K);
  for (int c = 0; c < nc; ++c) f(c, contact_flag<S>(K, x, p, c));
}

// one contact's state at a state x: its mode, its depth [m] and its point's slip speed |v_t| [m/s]
enum ContactMode { kContactAir = 0, kContactStick = 1, kContactSlip = 2 };
struct ContactState {
  int mode = kContactAir;  // air: depth ≤ 0; stick: |v_t| < v_s (friction grows linearly with
                           // the slip, f_t ≈ −μ N v_t / v_s); slip: |v_t| ≥ v_s (f_t → −μ N v̂_t)
  double depth = 0;  // height − z of the contact point (> 0: penetrating) [m]
  double slip = 0;   // |v_t|, the contact point's speed along the plane [m/s]
};

// contact c's state (c as in_contact counts: the tip first when enabled, then the ground
// points); the tip has no friction, so it sticks whenever it penetrates and moves less than v_s
template <class Model, class XIn, class PIn>
ContactState contact_state(const Model& m, const XIn& x, const PIn& p, int c) {
  using K_t = typename Model::template Kin<double>;
  double q[Model::kMaxQ] = {}, v[Model::kMaxDof] = {};
  for (int i = 0; i < m.nq(); ++i) q[i] = x[i];
  for (int i = 0; i < m.n_dof; ++i) v[i] = x[m.nq() + i];
  K_t K;
  m.forward_kinematics(q, p, K);
  double pt[3], J[Model::kMaxDof][3], vel[3];
  int es[Model::kMaxDof];
  int b;
  const int first_pair = (m.contact ? 1 : 0) + m.ground.n_points;
  if (Model::kMaxPairs > 0 && c >= first_pair) {
    // a contact pair: its overlap, and the slip of side 0 against side 1 at the contact point
    double n[3], Jp[2][Model::kMaxDof][3], vel2[2][3];
    const int pc = c - first_pair;
    ContactState s;
    s.depth = pair_geometry<Model, double>(m, K, pc, pt, n);
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < 3; ++i) vel2[k][i] = 0;
      if (m.pair_body[pc][k] >= 0)
        ground_jacobian<Model, double>(m, K, m.pair_body[pc][k], pt, v, nullptr, Jp[k], es, vel2[k],
                                       nullptr);
    }
    double u[3], un = 0;
    for (int i = 0; i < 3; ++i) u[i] = vel2[0][i] - vel2[1][i], un += u[i] * n[i];
    s.slip = std::sqrt(std::max(0.0, u[0] * u[0] + u[1] * u[1] + u[2] * u[2] - un * un));
    if (s.depth > 0)
      s.mode = s.slip < double(p[m.p_contact(kContactSlipVelocity)]) ? kContactStick : kContactSlip;
    return s;
  }
  if (m.contact && c == 0) {
    m.tip_position(K, pt);
    b = m.tip_body;
  } else {
    ground_point<Model, double>(m, K, p, c - (m.contact ? 1 : 0), pt);
    b = m.ground.body[c - (m.contact ? 1 : 0)];
  }
  ground_jacobian<Model, double>(m, K, b, pt, v, nullptr, J, es, vel, nullptr);
  ContactState s;
  s.depth = double(p[m.p_global(Model::kPlaneHeight)]) - pt[2];
  s.slip = std::sqrt(vel[0] * vel[0] + vel[1] * vel[1]);
  if (s.depth > 0)
    s.mode = s.slip < double(p[m.p_contact(kContactSlipVelocity)]) ? kContactStick : kContactSlip;
  return s;
}

// centre of mass of all bodies along an axis [m]: Σ m_b c_b / Σ m_b
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::center_of_mass(const XIn& x, const PIn& p,
                                                                     int ax) const {
  Kin<S> K;
  S mt = S(0);
  return center_of_mass_kin(x, p, ax, K, mt);
}

// the same, keeping the kinematics of x's joint positions in K and the total mass Σ m_b in mt
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::center_of_mass_kin(const XIn& x, const PIn& p,
                                                                         int ax, Kin<S>& K,
                                                                         S& mt) const {
  S q[kMaxQ] = {};
  for (int i = 0; i < nq(); ++i) q[i] = x[i];
  forward_kinematics(q, p, K);
  S mc = S(0);
  mt = S(0);
  for (int b = 0; b < n_bodies; ++b) {
    mc += S(p[p_body(b, kMass)]) * K.C[b][ax];
    mt += S(p[p_body(b, kMass)]);
  }
  return mc / mt;
}

// the centre of mass's adjoint: by the kinematics' adjoint sweep (sites.h), which also gives the
// body positions' (a dual-number pass over q would need θ's position columns too)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, unsigned kIntegrators, class XIn, class PIn, class XAdj, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_center_of_mass(
    const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p, const S& adj_c) const {
  adj_center_of_mass_sweep(x, p, ax, adj_x, adj_p, adj_c);
}

// E = ½ q̇ᵀ M(q) q̇ + Σ m_b g z_b + the joint and tendon springs' ½ k Δ², the kinetic plus
// gravitational energy, and KE = ½ q̇ᵀ M(q) q̇ (armature included, as MuJoCo counts it) [J], from one
// kinematics pass and one M(q)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::energies(const XIn& x, const PIn& p, S& e,
                                                                  S& ke) const {
  S q[kMaxQ] = {}, M[kMaxDof * kMaxDof] = {};
  for (int i = 0; i < nq(); ++i) q[i] = x[i];
  Kin<S> K;
  forward_kinematics(q, p, K);
  mass_matrix(K, p, M);
  ke = S(0);
  for (int i = 0; i < n_dof; ++i)
    for (int j = 0; j < n_dof; ++j)
      ke += S(0.5) * S(x[nq() + i]) * M[i * kMaxDof + j] * S(x[nq() + j]);
  e = ke;
  for (int b = 0; b < n_bodies; ++b)
    e += S(p[p_body(b, kMass)]) * S(p[p_global(kGravity)]) * -gravity_along(K.C[b]);
  // the joint springs' potential ½ k_s (q − q_s)²
  for (int j = 0; j < n_dof; ++j) {
    if (free_dof(j)) continue;
    const S ks = p[p_joint(j, kStiffness)];
    const S dq = q[qadr(j)] - S(p[p_joint(j, kSpringRef)]);
    e += S(0.5) * ks * dq * dq;
  }
  // the fixed tendons' springs ½ k_t (L_t − L0_t)²
  for (int t = 0; t < n_tendons; ++t) {
    // (a compile-time branch: the plain test alone costs the float kernels 8 registers)
    if constexpr (kFluid) {
      if (tendon_spatial(t)) continue;  // (conservative() is false with them)
    }
    const S dl = tendon_length<S>(t, q) - S(p[p_tendon(t, kTendonSpringLength)]);
    e += S(0.5) * S(p[p_tendon(t, kTendonStiffness)]) * dl * dl;
  }
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::kinetic_energy(const XIn& x,
                                                                     const PIn& p) const {
  S e, ke;
  energies<S>(x, p, e, ke);
  return ke;
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::energy(const XIn& x, const PIn& p) const {
  S e, ke;
  energies<S>(x, p, e, ke);
  return e;
}

// conservative when no damping, no PD gains, no contact, no fluid and no joint friction: then, with
// zero controls, an energy change is the integrator's error
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD bool ArticulatedCap<NB, ND, NS, NP, NC>::conservative(const PIn& p) const {
  // the limit and contact forces have potentials, but energy() does not include them
  if (contact || ground.n_points > 0 || joint_limits) return false;
  // the fluid's drag and the joint friction only take energy out; energy() leaves the spatial
  // tendons' springs out (none exists, at compile time, at a capacity without kFluid)
  if constexpr (kFluid) {
    if (fluid || n_spatial > 0 || joint_friction) return false;
  }
  for (int j = 0; j < n_dof; ++j)
    if (!(S(p[p_joint(j, kDamping)]) == S(0) && S(p[p_joint(j, kKp)]) == S(0) &&
          S(p[p_joint(j, kKv)]) == S(0)))
      return false;
  for (int t = 0; t < n_tendons; ++t)
    if (!(S(p[p_tendon(t, kTendonDamping)]) == S(0))) return false;
  return true;
}

}  // namespace steer
