// Articulated: per-step diagnostics: the contact point's penetration, the centre of mass
//   c = Σ_b m_b c_b / Σ_b m_b   (with its adjoint),
// and the energies KE = ½ q̇ᵀ M(q) q̇, E = KE + Σ_b m_b g z_b.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/dynamics.h"

namespace steer {

// the contact point's penetration below the plane [m] (≤ 0 when clear)
template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS>::penetration(const XIn& x, const PIn& p) const {
  S q[kMaxDof] = {};
  for (int i = 0; i < n_dof; ++i) q[i] = x[i];
  Kin<S> K;
  forward_kinematics(q, p, K);
  S t[3];
  tip_position(K, t);
  return S(p[p_global(kPlaneHeight)]) - t[2];
}

// (bool for a scalar S, the lanes' mask for a pack)
template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD auto ArticulatedCap<NB, ND, NS>::in_contact(const XIn& x, const PIn& p, int c) const {
  (void)c;
  return penetration<S>(x, p) > S(0);
}

// centre of mass of all bodies along an axis [m]: Σ m_b c_b / Σ m_b
template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS>::center_of_mass(const XIn& x, const PIn& p, int ax) const {
  Kin<S> K;
  S mt = S(0);
  return center_of_mass_kin(x, p, ax, K, mt);
}

// the same, keeping the kinematics of x's joint positions in K and the total mass Σ m_b in mt
template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS>::center_of_mass_kin(const XIn& x, const PIn& p, int ax, Kin<S>& K, S& mt) const {
  S q[kMaxDof] = {};
  for (int i = 0; i < n_dof; ++i) q[i] = x[i];
  forward_kinematics(q, p, K);
  S mc = S(0);
  mt = S(0);
  for (int b = 0; b < n_bodies; ++b) {
    mc += S(p[p_body(b, kMass)]) * K.C[b][ax];
    mt += S(p[p_body(b, kMass)]);
  }
  return mc / mt;
}

// ∂c/∂q by duals (one pass, n_dof ≤ 8 columns); ∂c/∂m_b = (c_b − c)/Σm; ∂c/∂com_b = m_b/Σm · R_b[axis, :]
template <int NB, int ND, int NS>
template <class S, class XIn, class PIn, class XAdj, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::adj_center_of_mass(const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p,
                                                     const S& adj_c) const {
  using D = Dual<S, kMaxDof>;
  D qd[kMaxDof];
  for (int i = 0; i < n_dof; ++i) qd[i] = D::variable(S(x[i]), i);
  D pd[kMaxParam];
  for (int q = 0; q < np(); ++q) pd[q] = D(S(p[q]));
  Kin<D> K;
  forward_kinematics(qd, pd, K);
  D mc = D(S(0));
  S mt = S(0);
  for (int b = 0; b < n_bodies; ++b) {
    mc += pd[p_body(b, kMass)] * K.C[b][ax];
    mt += S(p[p_body(b, kMass)]);
  }
  const S cm = mc.a / mt;
  for (int i = 0; i < n_dof; ++i) adj_x[i] += adj_c * mc.v[i] / mt;
  for (int b = 0; b < n_bodies; ++b) {
    const S m = p[p_body(b, kMass)];
    adj_p[p_body(b, kMass)] += adj_c * (K.C[b][ax].a - cm) / mt;
    for (int j = 0; j < 3; ++j) adj_p[p_body(b, kComX + j)] += adj_c * m / mt * K.R[b][3 * ax + j].a;
  }
}

// E = ½ q̇ᵀ M(q) q̇ + Σ m_b g z_b, the kinetic plus gravitational energy, and KE = ½ q̇ᵀ M(q) q̇
// (armature included, as MuJoCo counts it) [J], from one kinematics pass and one M(q)
template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::energies(const XIn& x, const PIn& p, S& e, S& ke) const {
  S q[kMaxDof] = {}, M[kMaxDof * kMaxDof] = {};
  for (int i = 0; i < n_dof; ++i) q[i] = x[i];
  Kin<S> K;
  forward_kinematics(q, p, K);
  mass_matrix(K, p, M);
  ke = S(0);
  for (int i = 0; i < n_dof; ++i)
    for (int j = 0; j < n_dof; ++j) ke += S(0.5) * S(x[n_dof + i]) * M[i * kMaxDof + j] * S(x[n_dof + j]);
  e = ke;
  for (int b = 0; b < n_bodies; ++b) e += S(p[p_body(b, kMass)]) * S(p[p_global(kGravity)]) * K.C[b][2];
}

template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS>::kinetic_energy(const XIn& x, const PIn& p) const {
  S e, ke;
  energies<S>(x, p, e, ke);
  return ke;
}

template <int NB, int ND, int NS>
template <class S, class XIn, class PIn>
inline STEER_HD S ArticulatedCap<NB, ND, NS>::energy(const XIn& x, const PIn& p) const {
  S e, ke;
  energies<S>(x, p, e, ke);
  return e;
}

// conservative when no damping, no PD gains and no contact: then, with zero controls,
// an energy change is the integrator's error
template <int NB, int ND, int NS>
template <class S, class PIn>
inline STEER_HD bool ArticulatedCap<NB, ND, NS>::conservative(const PIn& p) const {
  // the limit and contact forces have potentials, but energy() does not include them
  if (contact || joint_limits) return false;
  for (int j = 0; j < n_dof; ++j)
    if (!(S(p[p_joint(j, kDamping)]) == S(0) && S(p[p_joint(j, kKp)]) == S(0) && S(p[p_joint(j, kKv)]) == S(0)))
      return false;
  return true;
}

}  // namespace steer
