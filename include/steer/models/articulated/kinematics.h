// Articulated: world kinematics of the tree, and its adjoint, with the 3-vector helpers.
// p_b is body b's joint anchor, j_b (joint_pos) its position in the body frame; the body
// origin is o_b = p_b − R_b j_b, and a point x_body of the body is at p_b + R_b (x_body − j_b):
//   R_b = R_parent · R_fixed,b · Rot(a_b, q_b),
//   p_b = p_parent + R_parent · (offset_b − j_parent) + R_parent R_fixed,b j_b (+ a_b q_b, slide),
//   a_b = R_parent · R_fixed,b · axis_b,   c_b = p_b + R_b (com_b − j_b),   I_w,b = R_b I_b R_bᵀ.
// Everything but the anchor's constant offset is the same as with j_b = 0, so the adjoint
// (a rigid-body sweep of moments about the anchors) is unchanged.
// The adjoint (adj_forward_kinematics) takes the per-body adjoints (KinAdj) back to q in one
// inward sweep of a force F_j and a moment T_j about p_j: q̄_j = a_j · T_j (hinge), a_j · F_j (slide).
#pragma once

#include "steer/models/articulated/model.h"

namespace steer {

// o = a × b
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::cross(const S* a, const S* b, S* o) {
  const S x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  o[0] = x, o[1] = y, o[2] = z;
}

// ā += b × ō, b̄ += ō × a: the adjoint of o = a × b
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::adj_cross(const S* a, const S* b, S* adj_a, S* adj_b, const S* adj_o) {
  S t[3];
  cross(b, adj_o, t);
  for (int i = 0; i < 3; ++i) adj_a[i] += t[i];
  cross(adj_o, a, t);
  for (int i = 0; i < 3; ++i) adj_b[i] += t[i];
}

// a · b
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS>::dot(const S* a, const S* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// o = R v (R row-major 3×3)
template <int NB, int ND, int NS>
template <class S, class T>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::rotate(const S* R, const T* v, S* o) {
  for (int i = 0; i < 3; ++i) o[i] = R[3 * i] * S(v[0]) + R[3 * i + 1] * S(v[1]) + R[3 * i + 2] * S(v[2]);
}

// (q, θ) -> R_b, p_b, a_b, c_b for every body
template <int NB, int ND, int NS>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::forward_kinematics(const S* q, const PIn& p, Kin<S>& K) const {
  for (int b = 0; b < n_bodies; ++b) {
    const int pa = parent[b];
    S Rp[9], Pp[3];
    for (int i = 0; i < 9; ++i) Rp[i] = pa < 0 ? S(i % 4 == 0 ? 1.0 : 0.0) : K.R[pa][i];
    for (int i = 0; i < 3; ++i) Pp[i] = pa < 0 ? S(0) : K.P[pa][i];
    // R0 = R_parent · R_fixed
    S R0[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        R0[3 * i + j] = Rp[3 * i] * S(rot[b][j]) + Rp[3 * i + 1] * S(rot[b][3 + j]) + Rp[3 * i + 2] * S(rot[b][6 + j]);
    // the anchor's offset from the parent's anchor, parent frame (constants)
    double ob[3];
    for (int i = 0; i < 3; ++i)
      ob[i] = offset[b][i] - (pa < 0 ? 0.0 : joint_pos[pa][i]) + rot[b][3 * i] * joint_pos[b][0] +
              rot[b][3 * i + 1] * joint_pos[b][1] + rot[b][3 * i + 2] * joint_pos[b][2];
    S off[3];
    rotate(Rp, ob, off);
    for (int i = 0; i < 3; ++i) K.P[b][i] = Pp[i] + off[i];
    rotate(R0, axis[b], K.A[b]);
    if (joint[b] == kHinge) {
      // Rodrigues, body frame: Rot(a, q)_ij = cos q δ_ij + sin q [a]×_ij + (1 − cos q) a_i a_j
      const S qb = q[dof[b]];
      S s, c;
      sincos_of(qb, s, c);  // model_math.h: vmath's on the host in float64 and for packs
      const S t = S(1) - c;
      const double* a = axis[b];
      S Rl[9];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Rl[3 * i + j] = t * S(a[i] * a[j]) + (i == j ? c : S(0));
      Rl[1] -= s * S(a[2]), Rl[2] += s * S(a[1]);
      Rl[3] += s * S(a[2]), Rl[5] -= s * S(a[0]);
      Rl[6] -= s * S(a[1]), Rl[7] += s * S(a[0]);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          K.R[b][3 * i + j] = R0[3 * i] * Rl[j] + R0[3 * i + 1] * Rl[3 + j] + R0[3 * i + 2] * Rl[6 + j];
    } else {
      for (int i = 0; i < 9; ++i) K.R[b][i] = R0[i];
      if (joint[b] == kSlide)
        for (int i = 0; i < 3; ++i) K.P[b][i] += K.A[b][i] * q[dof[b]];
    }
    S com[3] = {S(p[p_body(b, kComX)]) - S(joint_pos[b][0]), S(p[p_body(b, kComY)]) - S(joint_pos[b][1]),
                S(p[p_body(b, kComZ)]) - S(joint_pos[b][2])}, wc[3];
    rotate(K.R[b], com, wc);
    for (int i = 0; i < 3; ++i) K.C[b][i] = K.P[b][i] + wc[i];
  }
}

// adjoint of forward_kinematics: KA (consumed) -> q̄ and, when want_com, the centre-of-mass
// parameters com̄_b = R_bᵀ c̄_b (c_b = p_b + R_b com_b). Bodies in reverse order; with F_b,
// T_b the force and the moment about p_b of b's subtree,
//   F_b = p̄_b + c̄_b + Σ_children F_ch,
//   T_b = t̄_b + (c_b − p_b) × c̄_b + a_b × ā_b + Σ_children [T_ch + (p_ch − p_b) × F_ch],
//   q̄_b = a_b · T_b (hinge) or a_b · F_b (slide).
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::adj_forward_kinematics(const Kin<S>& K, S* adj_q, S* adj_p, KinAdj<S>& KA,
                                                         bool want_com) const {
  for (int b = n_bodies - 1; b >= 0; --b) {
    S* F = KA.P[b];
    S* T = KA.T[b];
    const S* aC = KA.C[b];
    if (want_com)
      for (int j = 0; j < 3; ++j)
        adj_p[p_body(b, kComX + j)] += K.R[b][j] * aC[0] + K.R[b][3 + j] * aC[1] + K.R[b][6 + j] * aC[2];
    const S rc[3] = {K.C[b][0] - K.P[b][0], K.C[b][1] - K.P[b][1], K.C[b][2] - K.P[b][2]};
    S t1[3], t2[3];
    cross(rc, aC, t1);
    cross(K.A[b], KA.A[b], t2);
    for (int i = 0; i < 3; ++i) F[i] += aC[i], T[i] += t1[i] + t2[i];
    if (joint[b] == kHinge) adj_q[dof[b]] += dot(K.A[b], T);
    if (joint[b] == kSlide) adj_q[dof[b]] += dot(K.A[b], F);
    const int pa = parent[b];
    if (pa < 0) continue;
    const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
    cross(r, F, t1);
    for (int i = 0; i < 3; ++i) KA.P[pa][i] += F[i], KA.T[pa][i] += T[i] + t1[i];
  }
}

// world inertia about the centre of mass, I_w = R I_body Rᵀ (row-major 3×3)
template <int NB, int ND, int NS>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::world_inertia(const Kin<S>& K, const PIn& p, int b, S* Iw) const {
  const S xx = p[p_body(b, kIxx)], yy = p[p_body(b, kIyy)], zz = p[p_body(b, kIzz)];
  const S xy = p[p_body(b, kIxy)], xz = p[p_body(b, kIxz)], yz = p[p_body(b, kIyz)];
  const S Ib[9] = {xx, xy, xz, xy, yy, yz, xz, yz, zz};
  S RI[9];
  const S* R = K.R[b];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) RI[3 * i + j] = R[3 * i] * Ib[j] + R[3 * i + 1] * Ib[3 + j] + R[3 * i + 2] * Ib[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Iw[3 * i + j] = RI[3 * i] * R[3 * j] + RI[3 * i + 1] * R[3 * j + 1] + RI[3 * i + 2] * R[3 * j + 2];
}

// Ī_w += u vᵀ for the world inertia I_w = R I_b Rᵀ of body b: as a moment on the body,
// t̄ += axial(Ī_w I_w − I_w Ī_w) = (I_w v) × u − v × (I_w u) (I_w turning by δ changes by
// [δ]× I_w − I_w [δ]×; Iu = I_w u, Iv = I_w v given), and when want_inertia
// Ī_b += (Rᵀu)(Rᵀv)ᵀ into the six entries (off-diagonal pairs summed)
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::adj_world_inertia_rank1(const Kin<S>& K, int b, const S* u, const S* v, const S* Iu,
                                                          const S* Iv, S* adj_T, S* adj_p, bool want_inertia) const {
  S t1[3], t2[3];
  cross(Iv, u, t1);
  cross(v, Iu, t2);
  for (int i = 0; i < 3; ++i) adj_T[i] += t1[i] - t2[i];
  if (!want_inertia) return;
  const S* R = K.R[b];
  S ub[3], vb[3];
  for (int i = 0; i < 3; ++i) {
    ub[i] = R[i] * u[0] + R[3 + i] * u[1] + R[6 + i] * u[2];
    vb[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
  }
  adj_p[p_body(b, kIxx)] += ub[0] * vb[0];
  adj_p[p_body(b, kIyy)] += ub[1] * vb[1];
  adj_p[p_body(b, kIzz)] += ub[2] * vb[2];
  adj_p[p_body(b, kIxy)] += ub[0] * vb[1] + ub[1] * vb[0];
  adj_p[p_body(b, kIxz)] += ub[0] * vb[2] + ub[2] * vb[0];
  adj_p[p_body(b, kIyz)] += ub[1] * vb[2] + ub[2] * vb[1];
}

// linear Jacobian column of dof d (joint of body e) at world point x: a × (x − p_e), or a
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::point_jacobian(const Kin<S>& K, int e, const S* x, S* jv) const {
  if (joint[e] == kSlide) {
    for (int i = 0; i < 3; ++i) jv[i] = K.A[e][i];
    return;
  }
  const S r[3] = {x[0] - K.P[e][0], x[1] - K.P[e][1], x[2] - K.P[e][2]};
  cross(K.A[e], r, jv);
}

// world position of the point `pos` (body frame [m]) of body b: p_b + R_b (pos − j_b)
template <int NB, int ND, int NS>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS>::body_point(const Kin<S>& K, int b, const double* pos, S* x) const {
  const double r[3] = {pos[0] - joint_pos[b][0], pos[1] - joint_pos[b][1], pos[2] - joint_pos[b][2]};
  S o[3];
  rotate(K.R[b], r, o);
  for (int i = 0; i < 3; ++i) x[i] = K.P[b][i] + o[i];
}

}  // namespace steer
