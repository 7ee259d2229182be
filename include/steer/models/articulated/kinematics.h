// Articulated: world kinematics of the tree, and its adjoint, with the 3-vector helpers.
// p_b is body b's joint anchor, j_b (joint_pos) its position in the body frame; the body
// origin is o_b = p_b − R_b j_b, and a point x_body of the body is at p_b + R_b (x_body − j_b):
//   R_b = R_parent · R_fixed,b · Rot(a_b, q_b − q_ref,b),
//   p_b = p_parent + R_parent · (offset_b − j_parent) + R_parent R_fixed,b j_b
//         (+ a_b (q_b − q_ref,b), slide),
//   a_b = R_parent · R_fixed,b · axis_b,   c_b = p_b + R_b (com_b − j_b),   I_w,b = R_b I_b R_bᵀ.
// Everything but the anchor's constant offset is the same as with j_b = 0, so the adjoint
// (a rigid-body sweep of moments about the anchors) is unchanged.
// The adjoint (adj_forward_kinematics) takes the per-body adjoints (KinAdj) back to q in one
// inward sweep of a force F_j and a moment T_j about p_j: q̄_j = a_j · T_j (hinge), a_j · F_j
// (slide). q is the configuration, nq = n_dof + n_balls entries (model.h): joint j's angle or
// displacement is q[qadr(j)]; a ball group's orientation (a free root's) is the quaternion at
// q[qadr(j)] of its dofs.
#pragma once

#include "steer/models/articulated/model.h"

namespace steer {

// o = a × b
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::cross(const S* a, const S* b, S* o) {
  const S x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
          z = a[0] * b[1] - a[1] * b[0];
  o[0] = x, o[1] = y, o[2] = z;
}

// ā += b × ō, b̄ += ō × a: the adjoint of o = a × b
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_cross(const S* a, const S* b, S* adj_a,
                                                                   S* adj_b, const S* adj_o) {
  S t[3];
  cross(b, adj_o, t);
  for (int i = 0; i < 3; ++i) adj_a[i] += t[i];
  cross(adj_o, a, t);
  for (int i = 0; i < 3; ++i) adj_b[i] += t[i];
}

// a · b
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD S ArticulatedCap<NB, ND, NS, NP, NC>::dot(const S* a, const S* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// o = R v (R row-major 3×3)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class T>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::rotate(const S* R, const T* v, S* o) {
  for (int i = 0; i < 3; ++i)
    o[i] = R[3 * i] * S(v[0]) + R[3 * i + 1] * S(v[1]) + R[3 * i + 2] * S(v[2]);
}

// (q, θ) -> R_b, p_b, a_b, c_b for every body
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::forward_kinematics(const S* q,
                                                                            const PIn& p,
                                                                            Kin<S>& K) const {
  for (int b = 0; b < n_bodies; ++b) {
    const int pa = parent[b];
    S Rp[9], Pp[3];
    for (int i = 0; i < 9; ++i) Rp[i] = pa < 0 ? S(i % 4 == 0 ? 1.0 : 0.0) : K.R[pa][i];
    for (int i = 0; i < 3; ++i) Pp[i] = pa < 0 ? S(0) : K.P[pa][i];
    // R0 = R_parent · R_fixed, and a ball group's first turning frame's · R(quat)
    S R0[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        R0[3 * i + j] = Rp[3 * i] * S(rot[b][j]) + Rp[3 * i + 1] * S(rot[b][3 + j]) +
                        Rp[3 * i + 2] * S(rot[b][6 + j]);
    if (turn[b] == 1) {
      S Rq[9], Rf[9];
      quat_matrix(q + qadr(dof[b]), Rq);
      for (int i = 0; i < 9; ++i) Rf[i] = R0[i];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          R0[3 * i + j] = Rf[3 * i] * Rq[j] + Rf[3 * i + 1] * Rq[3 + j] + Rf[3 * i + 2] * Rq[6 + j];
    }
    // the anchor's offset from the parent's anchor, parent frame: the body's origin (θ's pos slot)
    // less the parent's anchor plus the body's own anchor
    S ob[3];
    for (int i = 0; i < 3; ++i)
      ob[i] = S(p[p_body(b, kPosX + i)]) +
              S(-(pa < 0 ? 0.0 : joint_pos[pa][i]) + rot[b][3 * i] * joint_pos[b][0] +
                rot[b][3 * i + 1] * joint_pos[b][1] + rot[b][3 * i + 2] * joint_pos[b][2]);
    S off[3];
    rotate(Rp, ob, off);
    for (int i = 0; i < 3; ++i) K.P[b][i] = Pp[i] + off[i];
    rotate(R0, axis[b], K.A[b]);
    if (joint[b] == kHinge && !ball_frame(b)) {
      // Rodrigues, body frame: Rot(a, q)_ij = cos q δ_ij + sin q [a]×_ij + (1 − cos q) a_i a_j
      const S qb = q[qadr(dof[b])] - S(joint_ref[dof[b]]);
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
          K.R[b][3 * i + j] =
              R0[3 * i] * Rl[j] + R0[3 * i + 1] * Rl[3 + j] + R0[3 * i + 2] * Rl[6 + j];
    } else {
      for (int i = 0; i < 9; ++i) K.R[b][i] = R0[i];
      if (joint[b] == kSlide)
        for (int i = 0; i < 3; ++i)
          K.P[b][i] += K.A[b][i] * (q[qadr(dof[b])] - S(joint_ref[dof[b]]));
    }
    S com[3] = {S(p[p_body(b, kComX)]) - S(joint_pos[b][0]),
                S(p[p_body(b, kComY)]) - S(joint_pos[b][1]),
                S(p[p_body(b, kComZ)]) - S(joint_pos[b][2])},
      wc[3];
    rotate(K.R[b], com, wc);
    for (int i = 0; i < 3; ++i) K.C[b][i] = K.P[b][i] + wc[i];
  }
}

// adjoint of forward_kinematics: KA (consumed) -> q̄ and, when want_com, the centre-of-mass
// parameters com̄_b = R_bᵀ c̄_b (c_b = p_b + R_b com_b), when want_pos the body positions
// pos̄_b = R_parentᵀ F_b (p_b = p_parent + R_parent (pos_b + …) carries b's whole subtree).
// Bodies in reverse order; with F_b, T_b the force and the moment about p_b of b's subtree,
//   F_b = p̄_b + c̄_b + Σ_children F_ch,
//   T_b = t̄_b + (c_b − p_b) × c̄_b + a_b × ā_b + Σ_children [T_ch + (p_ch − p_b) × F_ch],
//   q̄_b = a_b · T_b (hinge) or a_b · F_b (slide).
// A ball group's three turning frames share one anchor, so T at its first is the moment of the
// subtree about that anchor: the adjoint of a world rotation of the ball's body, which
// adj_ball_turn takes to the quaternion (its hinges have no angle of their own).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class QIn, class PAdj>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_forward_kinematics(
    const Kin<S>& K, S* adj_q, PAdj& adj_p, KinAdj<S>& KA, bool want_com, bool want_pos,
    const QIn& q) const {
  for (int b = n_bodies - 1; b >= 0; --b) {
    S* F = KA.P[b];
    S* T = KA.T[b];
    const S* aC = KA.C[b];
    if (want_com)
      for (int j = 0; j < 3; ++j)
        adj_p[p_body(b, kComX + j)] +=
            K.R[b][j] * aC[0] + K.R[b][3 + j] * aC[1] + K.R[b][6 + j] * aC[2];
    const S rc[3] = {K.C[b][0] - K.P[b][0], K.C[b][1] - K.P[b][1], K.C[b][2] - K.P[b][2]};
    S t1[3], t2[3];
    cross(rc, aC, t1);
    cross(K.A[b], KA.A[b], t2);
    for (int i = 0; i < 3; ++i) F[i] += aC[i], T[i] += t1[i] + t2[i];
    if (joint[b] == kHinge && !ball_frame(b)) adj_q[qadr(dof[b])] += dot(K.A[b], T);
    if (joint[b] == kSlide) adj_q[qadr(dof[b])] += dot(K.A[b], F);
    if (turn[b] == 1) adj_ball_turn(K, b, q, T, adj_q);
    const int pa = parent[b];
    if (want_pos)
      for (int j = 0; j < 3; ++j)
        adj_p[p_body(b, kPosX + j)] +=
            pa < 0 ? F[j] : S(K.R[pa][j] * F[0] + K.R[pa][3 + j] * F[1] + K.R[pa][6 + j] * F[2]);
    if (pa < 0) continue;
    const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
    cross(r, F, t1);
    for (int i = 0; i < 3; ++i) KA.P[pa][i] += F[i], KA.T[pa][i] += T[i] + t1[i];
  }
}

// R(n), n = quat/|quat| (w, x, y, z), row-major: the normalization is a smooth map of the
// state, so a quaternion off the unit sphere by rounding still gives a rotation
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::quat_matrix(const S* quat, S* R) {
  using std::sqrt;
  const S inv =
      S(1) / sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
  const S w = quat[0] * inv, x = quat[1] * inv, y = quat[2] * inv, z = quat[3] * inv;
  R[0] = S(1) - S(2) * (y * y + z * z), R[1] = S(2) * (x * y - w * z),
  R[2] = S(2) * (x * z + w * y);
  R[3] = S(2) * (x * y + w * z), R[4] = S(1) - S(2) * (x * x + z * z),
  R[5] = S(2) * (y * z - w * x);
  R[6] = S(2) * (x * z - w * y), R[7] = S(2) * (y * z + w * x),
  R[8] = S(1) - S(2) * (x * x + y * y);
}

namespace articulated_detail {

// e = exp(u) = (cos θ, sinc θ · u) for the pure quaternion u (|u| = θ), with
// C = cos θ, Sc = sin θ/θ and their derivatives in θ², dC = −Sc/2, dSc = (cos θ − Sc)/(2θ²).
// Below θ² = 1e-3 the Taylor series (terms to θ⁸; the first left out is below 1e-22) replace
// the closed forms, whose 0/0 and cancellation they avoid; a select, so that packs and duals
// take each lane's own side.
template <class S>
STEER_HD void exp_coefficients(const S& t2, S& C, S& Sc, S& dSc) {
  using std::sqrt;
  const auto small = t2 < S(1e-3);
  const S ts = select(small, S(1), t2);  // a harmless angle where the series is taken
  const S th = sqrt(ts);
  S s, c;
  sincos_of(th, s, c);
  const S sc_big = s / th;
  const S C_series =
      S(1) + t2 * (S(-1.0 / 2) + t2 * (S(1.0 / 24) + t2 * (S(-1.0 / 720) + t2 * S(1.0 / 40320))));
  const S Sc_series =
      S(1) +
      t2 * (S(-1.0 / 6) + t2 * (S(1.0 / 120) + t2 * (S(-1.0 / 5040) + t2 * S(1.0 / 362880))));
  const S dSc_series =
      S(-1.0 / 6) + t2 * (S(1.0 / 60) + t2 * (S(-1.0 / 1680) + t2 * S(1.0 / 90720)));
  C = select(small, C_series, c);
  Sc = select(small, Sc_series, sc_big);
  dSc = select(small, dSc_series, S((c - sc_big) / (S(2) * ts)));
}

// o = a ⊗ b (w, x, y, z)
template <class S>
STEER_HD void quat_mul(const S* a, const S* b, S* o) {
  const S w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  const S x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  const S y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  const S z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  o[0] = w, o[1] = x, o[2] = y, o[3] = z;
}

// ā += ∂(a ⊗ b)/∂a ᵀ ō,  b̄ += ∂(a ⊗ b)/∂b ᵀ ō
template <class S>
STEER_HD void adj_quat_mul(const S* a, const S* b, const S* o, S* adj_a, S* adj_b) {
  adj_a[0] += o[0] * b[0] + o[1] * b[1] + o[2] * b[2] + o[3] * b[3];
  adj_a[1] += -o[0] * b[1] + o[1] * b[0] - o[2] * b[3] + o[3] * b[2];
  adj_a[2] += -o[0] * b[2] + o[1] * b[3] + o[2] * b[0] - o[3] * b[1];
  adj_a[3] += -o[0] * b[3] - o[1] * b[2] + o[2] * b[1] + o[3] * b[0];
  adj_b[0] += o[0] * a[0] + o[1] * a[1] + o[2] * a[2] + o[3] * a[3];
  adj_b[1] += -o[0] * a[1] + o[1] * a[0] + o[2] * a[3] - o[3] * a[2];
  adj_b[2] += -o[0] * a[2] - o[1] * a[3] + o[2] * a[0] + o[3] * a[1];
  adj_b[3] += -o[0] * a[3] + o[1] * a[2] - o[2] * a[1] + o[3] * a[0];
}

}  // namespace articulated_detail

// quat⁺ = quat ⊗ exp(h ω/2), ω in the body frame [rad/s]: the rotation by h|ω| about ω that
// MuJoCo's mju_quatIntegrate applies. exp of a pure quaternion has unit norm, so |quat⁺| =
// |quat| up to rounding.
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::quat_step(const S* quat, const S* w,
                                                                   const S& h, S* out) {
  const S u[3] = {S(0.5) * h * w[0], S(0.5) * h * w[1], S(0.5) * h * w[2]};
  S C, Sc, dSc;
  articulated_detail::exp_coefficients(S(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), C, Sc, dSc);
  const S e[4] = {C, Sc * u[0], Sc * u[1], Sc * u[2]};
  articulated_detail::quat_mul(quat, e, out);
}

// adjoint of quat_step: quat̄ += ∂quat⁺/∂quat ᵀ ō, ω̄ += ∂quat⁺/∂ω ᵀ ō. With e = (C, Sc u),
// u = h ω/2, θ² = |u|²: ū = Sc ē_v + 2 u (dC ē_0 + dSc (ē_v · u)), dC = −Sc/2, ω̄ = h ū/2.
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_quat_step(const S* quat, const S* w,
                                                                       const S& h, const S* adj_out,
                                                                       S* adj_quat, S* adj_w) {
  const S u[3] = {S(0.5) * h * w[0], S(0.5) * h * w[1], S(0.5) * h * w[2]};
  S C, Sc, dSc;
  articulated_detail::exp_coefficients(S(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), C, Sc, dSc);
  const S e[4] = {C, Sc * u[0], Sc * u[1], Sc * u[2]};
  S ae[4] = {S(0), S(0), S(0), S(0)};
  articulated_detail::adj_quat_mul(quat, e, adj_out, adj_quat, ae);
  const S g = S(-0.5) * Sc * ae[0] + dSc * (ae[1] * u[0] + ae[2] * u[1] + ae[3] * u[2]);
  for (int i = 0; i < 3; ++i) adj_w[i] += S(0.5) * h * (Sc * ae[1 + i] + S(2) * u[i] * g);
}

// T (world [N·m per unit cotangent]) is the adjoint of a small world rotation δφ of ball group
// b's first turning frame (applied at its anchor), R = K.R[b] = R_parent R_tree R(n). δφ = R δψ
// for a body-frame rotation δψ, and n = quat/|quat| perturbed by δquat turns by
// δψ = 2 Im(n* ⊗ δn) = (2/|quat|) Im(n* ⊗ δquat) (the radial part of δquat drops out),
// Im(n* ⊗ δq) = w δv − δw v − v × δv for n = (w, v); hence with ψ̄ = Rᵀ T,
//   quat̄_w += −(2/|quat|) v · ψ̄,   quat̄_v += (2/|quat|) (w ψ̄ + v × ψ̄).
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class QIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_ball_turn(const Kin<S>& K, int b,
                                                                       const QIn& q, const S* T,
                                                                       S* adj_q) const {
  using std::sqrt;
  const S* R = K.R[b];
  const int a = qadr(dof[b]);
  const S ps[3] = {R[0] * T[0] + R[3] * T[1] + R[6] * T[2], R[1] * T[0] + R[4] * T[1] + R[7] * T[2],
                   R[2] * T[0] + R[5] * T[1] + R[8] * T[2]};
  const S qw = S(q[a]), qx = S(q[a + 1]), qy = S(q[a + 2]), qz = S(q[a + 3]);
  const S nrm = sqrt(qw * qw + qx * qx + qy * qy + qz * qz);
  const S k = S(2) / (nrm * nrm);  // 2/|quat| times the 1/|quat| of n = quat/|quat|
  const S v[3] = {qx, qy, qz};
  S vx[3];
  cross(v, ps, vx);
  adj_q[a] -= k * dot(v, ps);
  for (int i = 0; i < 3; ++i) adj_q[a + 1 + i] += k * (qw * ps[i] + vx[i]);
}

// world inertia about the centre of mass, I_w = R I_body Rᵀ (row-major 3×3)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::world_inertia(const Kin<S>& K,
                                                                       const PIn& p, int b,
                                                                       S* Iw) const {
  const S xx = p[p_body(b, kIxx)], yy = p[p_body(b, kIyy)], zz = p[p_body(b, kIzz)];
  const S xy = p[p_body(b, kIxy)], xz = p[p_body(b, kIxz)], yz = p[p_body(b, kIyz)];
  const S Ib[9] = {xx, xy, xz, xy, yy, yz, xz, yz, zz};
  S RI[9];
  const S* R = K.R[b];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      RI[3 * i + j] = R[3 * i] * Ib[j] + R[3 * i + 1] * Ib[3 + j] + R[3 * i + 2] * Ib[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Iw[3 * i + j] =
          RI[3 * i] * R[3 * j] + RI[3 * i + 1] * R[3 * j + 1] + RI[3 * i + 2] * R[3 * j + 2];
}

// Ī_w += u vᵀ for the world inertia I_w = R I_b Rᵀ of body b: as a moment on the body,
// t̄ += axial(Ī_w I_w − I_w Ī_w) = (I_w v) × u − v × (I_w u) (I_w turning by δ changes by
// [δ]× I_w − I_w [δ]×; Iu = I_w u, Iv = I_w v given), and when want_inertia
// Ī_b += (Rᵀu)(Rᵀv)ᵀ into the six entries (off-diagonal pairs summed)
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_world_inertia_rank1(
    const Kin<S>& K, int b, const S* u, const S* v, const S* Iu, const S* Iv, S* adj_T, S* adj_p,
    bool want_inertia) const {
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
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::point_jacobian(const Kin<S>& K, int e,
                                                                        const S* x, S* jv) const {
  if (joint[e] == kSlide) {
    for (int i = 0; i < 3; ++i) jv[i] = K.A[e][i];
    return;
  }
  const S r[3] = {x[0] - K.P[e][0], x[1] - K.P[e][1], x[2] - K.P[e][2]};
  cross(K.A[e], r, jv);
}

// world position of the point `pos` (body frame [m]) of body b: p_b + R_b (pos − j_b)
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::body_point(const Kin<S>& K, int b,
                                                                    const double* pos, S* x) const {
  const double r[3] = {pos[0] - joint_pos[b][0], pos[1] - joint_pos[b][1],
                       pos[2] - joint_pos[b][2]};
  S o[3];
  rotate(K.R[b], r, o);
  for (int i = 0; i < 3; ++i) x[i] = K.P[b][i] + o[i];
}

}  // namespace steer
