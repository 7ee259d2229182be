// Articulated: sites, named points and frames fixed in a body (MJCF sites, or model.sites in
// a config), and their adjoints, for losses on Cartesian positions and orientations.
//   x_s = p_b + R_b (pos_s − j_b),   R_s = R_b R_site,s,   b = site_body[s];
// a site on the world (b = −1) is fixed: x_s = pos_s, R_s = R_site,s.
// Adjoints: x_s is a point of body b, so x̄_s enters the kinematics' adjoint as a force x̄ at
// p_b and a moment (x_s − p_b) × x̄ about p_b. R_s turning with its body by a small rotation
// δ changes by [δ]× R_s, so R̄ (∂φ/∂R_s) enters as the moment t with
//   δ·t = Σ_ij R̄_ij ([δ]× R_s)_ij,   t_k = Σ_li ε_kli (R_s R̄ᵀ)_li.
// adj_forward_kinematics then takes both back to q. A site depends on θ only through the
// kinematics (sites are model constants, not parameters), whose only θ-dependent outputs are
// the centres of mass, which a site does not touch: adj_site_position and adj_site_rotation
// write nothing into adj_p.
// Also here: the centre of mass of the whole tree along one axis, c = Σ m_b c_b / Σ m_b, for
// loss.com_displacement. It does depend on θ (the masses and the bodies' centres of mass), so
// its adjoint writes ∂c/∂m_b and ∂c/∂com_b into adj_p (adj_center_of_mass_sweep, below).
#pragma once

#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/model.h"

namespace steer {

// the kinematics at q = x[0 .. nq)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::kinematics_at(const XIn& x, const PIn& p,
                                                                       Kin<S>& K) const {
  S q[kMaxQ] = {};
  for (int i = 0; i < nq(); ++i) q[i] = S(x[i]);
  forward_kinematics(q, p, K);
}

// R_s = R_b R_site,s from the kinematics
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::site_frame(const Kin<S>& K, int s,
                                                                    S out[9]) const {
  const double* Q = site_rot[s];
  if (site_body[s] < 0) {  // a site on the world: R_s = R_site,s
    for (int i = 0; i < 9; ++i) out[i] = S(Q[i]);
    return;
  }
  const S* R = K.R[site_body[s]];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      out[3 * i + j] = R[3 * i] * S(Q[j]) + R[3 * i + 1] * S(Q[3 + j]) + R[3 * i + 2] * S(Q[6 + j]);
}

// a force at p_b and a moment about p_b on body b (the adjoint of points and directions fixed
// in it), taken back to q by adj_forward_kinematics and added into adj_x
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class XAdj, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_body_wrench(
    const Kin<S>& K, const XIn& x, int b, const S force[3], const S moment[3], XAdj& adj_x,
    PAdj& adj_p) const {
  KinAdj<S> KA;
  for (int c = 0; c < n_bodies; ++c)
    for (int i = 0; i < 3; ++i)
      KA.P[c][i] = S(0), KA.A[c][i] = S(0), KA.C[c][i] = S(0), KA.T[c][i] = S(0);
  for (int i = 0; i < 3; ++i) KA.P[b][i] = force[i], KA.T[b][i] = moment[i];
  S aq[kMaxQ] = {};
  adj_forward_kinematics(K, aq, adj_p, KA, false, true, x);
  for (int i = 0; i < nq(); ++i) adj_x[i] += aq[i];
}

// c = Σ m_b c_b / Σ m_b sends c̄_b = c̄ m_b/Σm (along the axis) to each centre of mass, and
// adj_forward_kinematics takes those back to q; ∂c/∂m_b = (c_b − c)/Σm,
// ∂c/∂com_b = m_b/Σm · R_b[axis, :]
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn, class XAdj, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_center_of_mass_sweep(
    const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p, const S& adj_c) const {
  Kin<S> K;
  S mt = S(0);
  const S cm = center_of_mass_kin(x, p, ax, K, mt);
  KinAdj<S> KA;
  for (int b = 0; b < n_bodies; ++b) {
    const S m = p[p_body(b, kMass)];
    adj_p[p_body(b, kMass)] += adj_c * (K.C[b][ax] - cm) / mt;
    for (int j = 0; j < 3; ++j) adj_p[p_body(b, kComX + j)] += adj_c * m / mt * K.R[b][3 * ax + j];
    for (int i = 0; i < 3; ++i)
      KA.P[b][i] = S(0), KA.A[b][i] = S(0), KA.C[b][i] = S(0), KA.T[b][i] = S(0);
    KA.C[b][ax] = adj_c * m / mt;
  }
  S aq[kMaxQ] = {};
  // com̄_b is added above, so adj_forward_kinematics writes the body positions only
  adj_forward_kinematics(K, aq, adj_p, KA, false, true, x);
  for (int i = 0; i < nq(); ++i) adj_x[i] += aq[i];
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::site_position(const XIn& x, const PIn& p,
                                                                       int s, S out[3]) const {
  if (site_body[s] < 0) {  // a site on the world: x_s = pos_s
    for (int i = 0; i < 3; ++i) out[i] = S(site_pos[s][i]);
    return;
  }
  Kin<S> K;
  kinematics_at(x, p, K);
  body_point(K, site_body[s], site_pos[s], out);
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn, class XAdj, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_site_position(
    const XIn& x, const PIn& p, int s, XAdj& adj_x, PAdj& adj_p, const S adj_out[3]) const {
  const int b = site_body[s];
  if (b < 0) return;  // a site on the world does not move
  Kin<S> K;
  kinematics_at(x, p, K);
  S xs[3], m[3];
  body_point(K, b, site_pos[s], xs);
  const S r[3] = {xs[0] - K.P[b][0], xs[1] - K.P[b][1], xs[2] - K.P[b][2]};
  cross(r, adj_out, m);
  adj_body_wrench(K, x, b, adj_out, m, adj_x, adj_p);
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::site_rotation(const XIn& x, const PIn& p,
                                                                       int s, S out[9]) const {
  Kin<S> K;
  kinematics_at(x, p, K);
  site_frame(K, s, out);
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class XIn, class PIn, class XAdj, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_site_rotation(
    const XIn& x, const PIn& p, int s, XAdj& adj_x, PAdj& adj_p, const S adj_out[9]) const {
  if (site_body[s] < 0) return;  // a site on the world does not turn
  Kin<S> K;
  kinematics_at(x, p, K);
  S Rs[9];
  site_frame(K, s, Rs);
  // G = R_s R̄ᵀ; t = (G_12 − G_21, G_20 − G_02, G_01 − G_10)
  S G[9];
  for (int l = 0; l < 3; ++l)
    for (int i = 0; i < 3; ++i)
      G[3 * l + i] = Rs[3 * l] * adj_out[3 * i] + Rs[3 * l + 1] * adj_out[3 * i + 1] +
                     Rs[3 * l + 2] * adj_out[3 * i + 2];
  const S zero[3] = {S(0), S(0), S(0)}, t[3] = {G[5] - G[7], G[6] - G[2], G[1] - G[3]};
  adj_body_wrench(K, x, site_body[s], zero, t, adj_x, adj_p);
}

}  // namespace steer
