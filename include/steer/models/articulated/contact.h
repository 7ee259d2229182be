// Articulated: the fingertip contact against the plane z = height, and its adjoint.
//   d = height − z_tip,  z = d/w,  f_z = k w softplus(z) − d_c σ(z) ż_tip,  τ_c = J_tip,zᵀ f_z.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"

namespace steer {

// the contacts the validator's contact_mode_switch watches
template <int NB, int ND, int NS>
inline STEER_HD int ArticulatedCap<NB, ND, NS>::num_contacts() const {
  return contact ? 1 : 0;
}

// world position of the contact point [m]
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::tip_position(const Kin<S>& K, S* x) const {
  body_point(K, tip_body, tip_offset, x);
}

// τ_c = J_tip,zᵀ f_z, f_z = k w softplus(d/w) − d_c σ(d/w) ż_tip, d = height − z_tip (added into tc)
template <int NB, int ND, int NS>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::contact_forces(const Kin<S>& K, const S* v, const PIn& p, S* tc) const {
  if (!contact) return;
  S x[3];
  tip_position(K, x);
  S jz[kMaxDof];
  int ds[kMaxDof], nd = 0;
  S zdot = S(0);
  for (int e = tip_body; e >= 0; e = parent[e]) {
    if (joint[e] == kFixed) continue;
    S jv[3];
    point_jacobian(K, e, x, jv);
    jz[nd] = jv[2];
    ds[nd] = dof[e];
    zdot += jv[2] * v[dof[e]];
    ++nd;
  }
  const S k = p[p_global(kContactStiffness)], dc = p[p_global(kContactDamping)], wd = p[p_global(kContactSmoothing)];
  const S z = (S(p[p_global(kPlaneHeight)]) - x[2]) / wd;
  S sp, sg;
  softplus_sigmoid_of(z, sp, sg);
  const S fz = k * wd * sp - dc * sg * zdot;
  for (int r = 0; r < nd; ++r) tc[ds[r]] += jz[r] * fz;
}

// adjoint of φ = μᵀ τ_c = ż_μ f_z (ż_μ = Σ_e J_tip,z,e μ_e: the tip's vertical speed under
// joint velocities μ) with respect to the kinematics, q̇ and the contact parameters:
//   f_z = k w softplus(z) − d_c σ(z) ż,  z = (height − z_tip)/w
//   f̄_z = ż_μ,  z̄ = f̄_z (k σ(z) − d_c σ'(z) ż) [per w: k w σ/w],  ż̄ = −f̄_z d_c σ(z),
//   J̄_z,e = f_z μ_e + ż̄ q̇_e
template <int NB, int ND, int NS>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::adj_contact_forces(const Kin<S>& K, const S* v, const PIn& p, const S* mu,
                                                     KinAdj<S>& KA, S* adj_v, S* adj_p) const {
  if (!contact) return;
  S x[3];
  tip_position(K, x);
  S jz[kMaxDof];
  int es[kMaxDof], nd = 0;
  S zdot = S(0), zmu = S(0);
  for (int e = tip_body; e >= 0; e = parent[e]) {
    if (joint[e] == kFixed) continue;
    S jv[3];
    point_jacobian(K, e, x, jv);
    jz[nd] = jv[2];
    es[nd] = e;
    zdot += jv[2] * v[dof[e]];
    zmu += jv[2] * mu[dof[e]];
    ++nd;
  }
  const S k = p[p_global(kContactStiffness)], dc = p[p_global(kContactDamping)], wd = p[p_global(kContactSmoothing)];
  const S z = (S(p[p_global(kPlaneHeight)]) - x[2]) / wd;
  S sp, sg;
  softplus_sigmoid_of(z, sp, sg);
  const S fz = k * wd * sp - dc * sg * zdot;
  const S afz = zmu;
  const S az = afz * (k * wd * sg - dc * sg * (S(1) - sg) * zdot) / wd;  // ∂φ/∂(height − z_tip)
  const S azdot = -afz * dc * sg;
  adj_p[p_global(kContactStiffness)] += afz * wd * sp;
  adj_p[p_global(kContactDamping)] -= afz * sg * zdot;
  adj_p[p_global(kContactSmoothing)] += afz * k * sp - az * z;
  adj_p[p_global(kPlaneHeight)] += az;
  S ax[3] = {S(0), S(0), -az};
  for (int r = 0; r < nd; ++r) {
    const int e = es[r];
    const S ajz = fz * mu[dof[e]] + azdot * v[dof[e]];
    adj_v[dof[e]] += azdot * jz[r];
    const S aj[3] = {S(0), S(0), ajz};
    if (joint[e] == kSlide) {
      KA.A[e][2] += ajz;
      continue;
    }
    const S rr[3] = {x[0] - K.P[e][0], x[1] - K.P[e][1], x[2] - K.P[e][2]};
    S arr[3] = {S(0), S(0), S(0)};
    adj_cross(K.A[e], rr, KA.A[e], arr, aj);
    for (int i = 0; i < 3; ++i) ax[i] += arr[i], KA.P[e][i] -= arr[i];
  }
  // x = p_tip + R_tip o: a point of the tip body, a force x̄ and a moment (x − p_tip) × x̄
  const S rx[3] = {x[0] - K.P[tip_body][0], x[1] - K.P[tip_body][1], x[2] - K.P[tip_body][2]};
  S mx[3];
  cross(rx, ax, mx);
  for (int i = 0; i < 3; ++i) KA.P[tip_body][i] += ax[i], KA.T[tip_body][i] += mx[i];
}

}  // namespace steer
