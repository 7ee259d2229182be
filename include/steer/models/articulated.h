// Articulated: a kinematic tree of rigid bodies joined by hinge, slide or fixed joints
// (a Franka Panda-class arm), driven by joint torques from a PD controller plus a
// feed-forward torque, with implicit joint damping.
//
// state   x = (q [rad or m] (n_dof), q̇ [rad/s or m/s] (n_dof))
// control u = feed-forward joint torque u_ff [N·m or N] (n_dof), one per step
// params  θ = per body: mass [kg], centre of mass c (3) [m, body frame], inertia about the
//             centre of mass (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) [kg·m², body axes];
//             per joint: damping D [N·m·s/rad], armature [kg·m²], k_p [N·m/rad],
//             k_v [N·m·s/rad], PD target q* [rad], force limit τ_max [N·m];
//             global: gravity g [m/s², along −z], saturation sharpness β [1/(N·m)],
//             contact plane height [m], stiffness [N/m], damping [N·s/m], smoothing width [m].
//
// Kinematics (world frame, bodies in topological order, parent before child):
//   R_b = R_parent · R_fixed,b · Rot(a_b, q_b)   p_b = p_parent + R_parent · offset_b (+ a q for slides)
// Dynamics: M(q) q̈ + c(q, q̇) = τ + J_tipᵀ f_contact, with
//   M = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_b J_ω,b   (composite of body Jacobians)
//   c = Coriolis, centrifugal and gravity forces by recursive Newton–Euler with q̈ = 0
//       (gravity enters as an upward base acceleration g ẑ).
// Controller: τ_raw = k_p (q* − q) − k_v q̇ + u_ff, saturated smoothly when limits are on:
//   τ = sat(τ_raw) = τ_raw − (1/β)[softplus(β(τ_raw − τ_max)) − softplus(β(−τ_raw − τ_max))]
//   which tends to clamp(τ_raw, ±τ_max) as β → ∞ (β = 5 /(N·m): within 0.14 N·m of the clamp).
// Integrators, step h:
//   euler        (M + h D) q̇⁺ = M q̇ + h (τ − c + τ_c),            q⁺ = q + h q̇⁺
//                (MuJoCo's Euler: semi-implicit with implicit joint damping)
//   implicitfast (M + h (D + s' K_v)) q̇⁺ = M q̇ + h (τ + s' K_v q̇ − c + τ_c),  q⁺ = q + h q̇⁺
//                s' = ∂sat/∂τ_raw: the PD velocity term −k_v q̇⁺ is implicit (linearized
//                through the saturation); Coriolis derivatives are skipped, as in MuJoCo's
//                implicitfast.
//   rk4          classic Runge–Kutta on (q, q̇) with q̈ = M⁻¹(τ − D q̇ − c + τ_c), all explicit.
// Contact (optional): one point on a body (the fingertip) against the plane z = height,
// penetration d = height − z_tip, z = d/w:
//   f_z = k w softplus(z) − d_c σ(z) ż_tip,   τ_c = J_tip,zᵀ f_z
// Joint ranges are not enforced (no limit constraint); experiments keep inside them.
//
// Adjoint: the step is a template on the scalar, so adj_step runs it on forward-mode
// duals (DESIGN §3, exact to rounding) over the columns that matter: x, u and the
// parameters listed in grad_params (all of them by default). The generic suite checks it
// against the reference adjoint and centered finite differences.
#pragma once

#include <cmath>

#include "steer/core.h"
#include "steer/dual.h"

namespace steer {

struct Articulated {
  static constexpr int kMaxBodies = 10;
  static constexpr int kMaxDof = 8;
  static constexpr int kBodyParams = 10;
  static constexpr int kJointParams = 6;
  static constexpr int kGlobalParams = 6;
  static constexpr int kMaxState = 2 * kMaxDof;
  static constexpr int kMaxControl = kMaxDof;
  static constexpr int kMaxParam = kMaxBodies * kBodyParams + kMaxDof * kJointParams + kGlobalParams;
  static constexpr int kMaxContacts = 1;

  enum JointType { kFixed = 0, kHinge = 1, kSlide = 2 };
  enum Integrator { kEuler = 0, kImplicitFast = 1, kRk4 = 2 };
  enum BodyParam { kMass = 0, kComX, kComY, kComZ, kIxx, kIyy, kIzz, kIxy, kIxz, kIyz };
  enum JointParam { kDamping = 0, kArmature, kKp, kKv, kTarget, kForceLimit };
  enum GlobalParam { kGravity = 0, kSharpness, kPlaneHeight, kContactStiffness, kContactDamping, kContactSmoothing };

  int n_bodies = 0;
  int n_dof = 0;
  double dt = 0.002;  // h [s]
  int integrator = kEuler;
  bool torque_limits = true;
  bool contact = false;
  // tree, bodies in topological order
  int parent[kMaxBodies] = {};      // −1 = world
  int joint[kMaxBodies] = {};       // JointType
  int dof[kMaxBodies] = {};         // dof index of the body's joint, −1 if fixed
  int body_of_dof[kMaxDof] = {};
  double offset[kMaxBodies][3] = {};  // body origin in the parent frame [m]
  double rot[kMaxBodies][9] = {};     // parent→body rotation, row-major (from the unit quaternion)
  double axis[kMaxBodies][3] = {};    // joint axis, body frame, unit
  // contact point: body and position in that body's frame [m]
  int tip_body = -1;
  double tip_offset[3] = {};
  // parameters whose gradient adj_step computes; −1 = all (each extra one costs 1/8 of a dual pass)
  int n_grad_params = -1;
  short grad_params[kMaxParam] = {};

  STEER_HD int nx() const { return 2 * n_dof; }
  STEER_HD int nu() const { return n_dof; }
  STEER_HD int np() const { return p_global(kGlobalParams); }
  STEER_HD int p_body(int b, int k) const { return b * kBodyParams + k; }
  STEER_HD int p_joint(int j, int k) const { return n_bodies * kBodyParams + j * kJointParams + k; }
  STEER_HD int p_global(int k) const { return n_bodies * kBodyParams + n_dof * kJointParams + k; }

  // world-frame kinematics of every body for one configuration q
  template <class S>
  struct Kin {
    S R[kMaxBodies][9];  // body→world rotation
    S P[kMaxBodies][3];  // body origin (joint anchor) [m]
    S A[kMaxBodies][3];  // joint axis, world [unit]
    S C[kMaxBodies][3];  // centre of mass [m]
  };

  template <class S>
  STEER_HD static void cross(const S* a, const S* b, S* o) {
    const S x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x, o[1] = y, o[2] = z;
  }
  template <class S>
  STEER_HD static S dot(const S* a, const S* b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  }
  // o = R v (R row-major 3×3)
  template <class S, class T>
  STEER_HD static void rotate(const S* R, const T* v, S* o) {
    for (int i = 0; i < 3; ++i) o[i] = R[3 * i] * S(v[0]) + R[3 * i + 1] * S(v[1]) + R[3 * i + 2] * S(v[2]);
  }

  // (q, θ) -> R_b, p_b, a_b, c_b for every body
  template <class S, class PIn>
  STEER_HD void forward_kinematics(const S* q, const PIn& p, Kin<S>& K) const {
    using std::cos;
    using std::sin;
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
      S off[3];
      rotate(Rp, offset[b], off);
      for (int i = 0; i < 3; ++i) K.P[b][i] = Pp[i] + off[i];
      rotate(R0, axis[b], K.A[b]);
      if (joint[b] == kHinge) {
        // Rodrigues, body frame: Rot(a, q)_ij = cos q δ_ij + sin q [a]×_ij + (1 − cos q) a_i a_j
        const S qb = q[dof[b]];
        const S c = cos(qb), s = sin(qb), t = S(1) - c;
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
      S com[3] = {S(p[p_body(b, kComX)]), S(p[p_body(b, kComY)]), S(p[p_body(b, kComZ)])}, wc[3];
      rotate(K.R[b], com, wc);
      for (int i = 0; i < 3; ++i) K.C[b][i] = K.P[b][i] + wc[i];
    }
  }

  // world inertia about the centre of mass, I_w = R I_body Rᵀ (row-major 3×3)
  template <class S, class PIn>
  STEER_HD void world_inertia(const Kin<S>& K, const PIn& p, int b, S* Iw) const {
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

  // linear Jacobian column of dof d (joint of body e) at world point x: a × (x − p_e), or a
  template <class S>
  STEER_HD void point_jacobian(const Kin<S>& K, int e, const S* x, S* jv) const {
    if (joint[e] == kSlide) {
      for (int i = 0; i < 3; ++i) jv[i] = K.A[e][i];
      return;
    }
    const S r[3] = {x[0] - K.P[e][0], x[1] - K.P[e][1], x[2] - K.P[e][2]};
    cross(K.A[e], r, jv);
  }

  // M(q) = diag(armature) + Σ_b m_b J_vᵀ J_v + J_ωᵀ I_b J_ω, row-major n×n into M[kMaxDof·kMaxDof]
  template <class S, class PIn>
  STEER_HD void mass_matrix(const Kin<S>& K, const PIn& p, S* M) const {
    const int n = n_dof;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) M[i * kMaxDof + j] = i == j ? S(p[p_joint(i, kArmature)]) : S(0);
    for (int b = 0; b < n_bodies; ++b) {
      S jv[kMaxDof][3], jw[kMaxDof][3];
      int ds[kMaxDof], nd = 0;
      for (int e = b; e >= 0; e = parent[e]) {
        if (joint[e] == kFixed) continue;
        point_jacobian(K, e, K.C[b], jv[nd]);
        for (int i = 0; i < 3; ++i) jw[nd][i] = joint[e] == kHinge ? K.A[e][i] : S(0);
        ds[nd++] = dof[e];
      }
      if (nd == 0) continue;
      const S m = p[p_body(b, kMass)];
      S Iw[9];
      world_inertia(K, p, b, Iw);
      for (int r = 0; r < nd; ++r) {
        S Ijw[3];
        rotate(Iw, jw[r], Ijw);
        for (int s = 0; s <= r; ++s) {
          const S v = m * dot(jv[r], jv[s]) + dot(jw[s], Ijw);
          M[ds[r] * kMaxDof + ds[s]] += v;
          if (r != s) M[ds[s] * kMaxDof + ds[r]] += v;
        }
      }
    }
  }

  // c(q, q̇): Coriolis, centrifugal and gravity joint forces by recursive Newton–Euler with
  // q̈ = 0 and the base accelerating upward at g (so M q̈ + c = τ)
  template <class S, class PIn>
  STEER_HD void bias_forces(const Kin<S>& K, const S* v, const PIn& p, S* c) const {
    S w[kMaxBodies][3], al[kMaxBodies][3], ao[kMaxBodies][3], F[kMaxBodies][3], N[kMaxBodies][3];
    const S g = p[p_global(kGravity)];
    for (int b = 0; b < n_bodies; ++b) {
      const int pa = parent[b];
      S wp[3], alp[3], aop[3], r[3];
      for (int i = 0; i < 3; ++i) {
        wp[i] = pa < 0 ? S(0) : w[pa][i];
        alp[i] = pa < 0 ? S(0) : al[pa][i];
        aop[i] = pa < 0 ? (i == 2 ? g : S(0)) : ao[pa][i];
        r[i] = K.P[b][i] - (pa < 0 ? S(0) : K.P[pa][i]);
      }
      // a_o = a_o,p + α_p × r + ω_p × (ω_p × r)
      S t1[3], t2[3], t3[3];
      cross(alp, r, t1);
      cross(wp, r, t2);
      cross(wp, t2, t3);
      for (int i = 0; i < 3; ++i) ao[b][i] = aop[i] + t1[i] + t3[i];
      for (int i = 0; i < 3; ++i) w[b][i] = wp[i], al[b][i] = alp[i];
      if (joint[b] != kFixed) {
        const S qd = v[dof[b]];
        S av[3] = {K.A[b][0] * qd, K.A[b][1] * qd, K.A[b][2] * qd}, t4[3];
        cross(wp, av, t4);
        if (joint[b] == kHinge) {
          // ω = ω_p + a q̇, α = α_p + ω_p × a q̇
          for (int i = 0; i < 3; ++i) w[b][i] += av[i], al[b][i] += t4[i];
        } else {
          // slide: Coriolis 2 ω_p × a q̇ on the origin
          for (int i = 0; i < 3; ++i) ao[b][i] += S(2) * t4[i];
        }
      }
      // centre-of-mass acceleration, force and moment of body b
      S rc[3] = {K.C[b][0] - K.P[b][0], K.C[b][1] - K.P[b][1], K.C[b][2] - K.P[b][2]};
      S ac[3], u1[3], u2[3], u3[3];
      cross(al[b], rc, u1);
      cross(w[b], rc, u2);
      cross(w[b], u2, u3);
      for (int i = 0; i < 3; ++i) ac[i] = ao[b][i] + u1[i] + u3[i];
      const S m = p[p_body(b, kMass)];
      S Iw[9], Ial[3], Iwv[3], gyr[3];
      world_inertia(K, p, b, Iw);
      rotate(Iw, al[b], Ial);
      rotate(Iw, w[b], Iwv);
      cross(w[b], Iwv, gyr);
      S f[3], rf[3];
      for (int i = 0; i < 3; ++i) f[i] = m * ac[i];
      cross(rc, f, rf);
      for (int i = 0; i < 3; ++i) F[b][i] = f[i], N[b][i] = Ial[i] + gyr[i] + rf[i];  // moment about p_b
    }
    for (int i = 0; i < n_dof; ++i) c[i] = S(0);
    for (int b = n_bodies - 1; b >= 0; --b) {
      if (joint[b] == kHinge) c[dof[b]] = dot(K.A[b], N[b]);
      if (joint[b] == kSlide) c[dof[b]] = dot(K.A[b], F[b]);
      const int pa = parent[b];
      if (pa < 0) continue;
      S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]}, rF[3];
      cross(r, F[b], rF);
      for (int i = 0; i < 3; ++i) F[pa][i] += F[b][i], N[pa][i] += N[b][i] + rF[i];
    }
  }

  // world position of the contact point [m]
  template <class S>
  STEER_HD void tip_position(const Kin<S>& K, S* x) const {
    S o[3];
    rotate(K.R[tip_body], tip_offset, o);
    for (int i = 0; i < 3; ++i) x[i] = K.P[tip_body][i] + o[i];
  }

  // τ_c = J_tip,zᵀ f_z, f_z = k w softplus(d/w) − d_c σ(d/w) ż_tip, d = height − z_tip (added into tc)
  template <class S, class PIn>
  STEER_HD void contact_forces(const Kin<S>& K, const S* v, const PIn& p, S* tc) const {
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
    const S fz = k * wd * softplus(z) - dc * sigmoid(z) * zdot;
    for (int r = 0; r < nd; ++r) tc[ds[r]] += jz[r] * fz;
  }

  // τ = sat(τ_raw) and s' = ∂τ/∂τ_raw for joint j
  template <class S, class PIn>
  STEER_HD S saturate(const PIn& p, int j, const S& raw, S& slope) const {
    if (!torque_limits) {
      slope = S(1);
      return raw;
    }
    const S beta = p[p_global(kSharpness)], lim = p[p_joint(j, kForceLimit)];
    const S za = beta * (raw - lim), zb = beta * (-raw - lim);
    slope = S(1) - sigmoid(za) - sigmoid(zb);
    return raw - (softplus(za) - softplus(zb)) / beta;
  }

  // in-place Cholesky solve of A y = b (A symmetric positive definite, n×n, stride kMaxDof)
  template <class S>
  STEER_HD static void cholesky_solve(int n, S* A, S* y) {
    using std::sqrt;
    for (int j = 0; j < n; ++j) {
      S s = A[j * kMaxDof + j];
      for (int k = 0; k < j; ++k) s -= A[j * kMaxDof + k] * A[j * kMaxDof + k];
      // M + hD is positive definite for physical inertias; a non-positive pivot means an
      // unphysical θ (negative mass or inertia) and yields NaN, which the validator labels
      A[j * kMaxDof + j] = sqrt(s);
      for (int i = j + 1; i < n; ++i) {
        S t = A[i * kMaxDof + j];
        for (int k = 0; k < j; ++k) t -= A[i * kMaxDof + k] * A[j * kMaxDof + k];
        A[i * kMaxDof + j] = t / A[j * kMaxDof + j];
      }
    }
    for (int i = 0; i < n; ++i) {
      S t = y[i];
      for (int k = 0; k < i; ++k) t -= A[i * kMaxDof + k] * y[k];
      y[i] = t / A[i * kMaxDof + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      S t = y[i];
      for (int k = i + 1; k < n; ++k) t -= A[k * kMaxDof + i] * y[k];
      y[i] = t / A[i * kMaxDof + i];
    }
  }

  // q̈ = M⁻¹(τ − D q̇ − c + τ_c), everything explicit (the rk4 right-hand side)
  template <class S, class UIn, class PIn>
  STEER_HD void acceleration(const S* q, const S* v, const UIn& u, const PIn& p, S* qdd) const {
    Kin<S> K;
    forward_kinematics(q, p, K);
    S M[kMaxDof * kMaxDof], c[kMaxDof];
    mass_matrix(K, p, M);
    bias_forces(K, v, p, c);
    for (int j = 0; j < n_dof; ++j) {
      S slope;
      const S raw = S(p[p_joint(j, kKp)]) * (S(p[p_joint(j, kTarget)]) - q[j]) - S(p[p_joint(j, kKv)]) * v[j] + S(u[j]);
      qdd[j] = saturate(p, j, raw, slope) - S(p[p_joint(j, kDamping)]) * v[j] - c[j];
    }
    contact_forces(K, v, p, qdd);
    cholesky_solve(n_dof, M, qdd);
  }

  // (x_k, u_k, θ) -> x_{k+1}; small state, so only the leading lane works
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    const int n = n_dof;
    const S h = S(dt);
    S q[kMaxDof] = {}, v[kMaxDof] = {};
    for (int i = 0; i < n; ++i) q[i] = x[i], v[i] = x[n + i];
    if (integrator == kRk4) {
      // k1..k4 of (q̇, q̈); x⁺ = x + h/6 (k1 + 2 k2 + 2 k3 + k4)
      S a1[kMaxDof] = {}, a2[kMaxDof] = {}, a3[kMaxDof] = {}, a4[kMaxDof] = {}, qs[kMaxDof] = {}, vs[kMaxDof] = {}, v2[kMaxDof] = {}, v3[kMaxDof] = {};
      acceleration(q, v, u, p, a1);
      for (int i = 0; i < n; ++i) qs[i] = q[i] + S(0.5) * h * v[i], vs[i] = v[i] + S(0.5) * h * a1[i];
      for (int i = 0; i < n; ++i) v2[i] = vs[i];
      acceleration(qs, vs, u, p, a2);
      for (int i = 0; i < n; ++i) qs[i] = q[i] + S(0.5) * h * v2[i], vs[i] = v[i] + S(0.5) * h * a2[i];
      for (int i = 0; i < n; ++i) v3[i] = vs[i];
      acceleration(qs, vs, u, p, a3);
      for (int i = 0; i < n; ++i) qs[i] = q[i] + h * v3[i], vs[i] = v[i] + h * a3[i];
      acceleration(qs, vs, u, p, a4);
      for (int i = 0; i < n; ++i) {
        xn[i] = q[i] + h / S(6) * (v[i] + S(2) * v2[i] + S(2) * v3[i] + vs[i]);
        xn[n + i] = v[i] + h / S(6) * (a1[i] + S(2) * a2[i] + S(2) * a3[i] + a4[i]);
      }
      return;
    }
    Kin<S> K;
    forward_kinematics(q, p, K);
    S M[kMaxDof * kMaxDof], c[kMaxDof], rhs[kMaxDof], tc[kMaxDof];
    mass_matrix(K, p, M);
    bias_forces(K, v, p, c);
    for (int i = 0; i < n; ++i) tc[i] = S(0);
    contact_forces(K, v, p, tc);
    // rhs = M q̇ + h (τ − c + τ_c) (+ h s' k_v q̇ for implicitfast); M becomes the system matrix
    for (int i = 0; i < n; ++i) {
      S mv = S(0);
      for (int j = 0; j < n; ++j) mv += M[i * kMaxDof + j] * v[j];
      S slope;
      const S kv = p[p_joint(i, kKv)];
      const S raw = S(p[p_joint(i, kKp)]) * (S(p[p_joint(i, kTarget)]) - q[i]) - kv * v[i] + S(u[i]);
      const S tau = saturate(p, i, raw, slope);
      S implicit_gain = S(p[p_joint(i, kDamping)]);
      S f = tau - c[i] + tc[i];
      if (integrator == kImplicitFast) {
        implicit_gain += slope * kv;
        f += slope * kv * v[i];
      }
      rhs[i] = mv + h * f;
      M[i * kMaxDof + i] += h * implicit_gain;
    }
    cholesky_solve(n, M, rhs);
    for (int i = 0; i < n; ++i) {
      xn[n + i] = rhs[i];
      xn[i] = q[i] + h * rhs[i];
    }
  }

  // vector-Jacobian product of step: adj_x, adj_u, adj_θ += Jᵀ adj_xn, by forward-mode duals
  // over x, u and the parameters in grad_params, 8 columns per pass
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    if (!ln.leader()) return;
    constexpr int N = 8;
    using D = Dual<S, N>;
    const int nxv = nx(), nuv = nu(), npv = np();
    const int ngp = n_grad_params < 0 ? npv : n_grad_params;
    const int ncols = nxv + nuv + ngp;
    D xd[kMaxState], ud[kMaxControl], pd[kMaxParam], yd[kMaxState];
    for (int i = 0; i < nxv; ++i) xd[i] = D(S(x[i]));
    for (int j = 0; j < nuv; ++j) ud[j] = D(S(u[j]));
    for (int q = 0; q < npv; ++q) pd[q] = D(S(p[q]));
    for (int c0 = 0; c0 < ncols; c0 += N) {
      // seed columns c0 .. c0+N−1, run the step, contract each column with adj_xn, unseed
      for (int c = 0; c < N && c0 + c < ncols; ++c) column_input(c0 + c, xd, ud, pd).v[c] = S(1);
      step<D>(k, xd, ud, pd, yd);
      for (int c = 0; c < N && c0 + c < ncols; ++c) {
        S acc = S(0);
        for (int i = 0; i < nxv; ++i) acc += yd[i].v[c] * S(adj_xn[i]);
        const int col = c0 + c;
        if (col < nxv)
          adj_x[col] += acc;
        else if (col < nxv + nuv)
          adj_u[col - nxv] += acc;
        else
          adj_p[n_grad_params < 0 ? col - nxv - nuv : grad_params[col - nxv - nuv]] += acc;
        column_input(col, xd, ud, pd).v[c] = S(0);
      }
    }
  }
  template <class D>
  STEER_HD D& column_input(int col, D* xd, D* ud, D* pd) const {
    const int nxv = nx(), nuv = nu();
    if (col < nxv) return xd[col];
    if (col < nxv + nuv) return ud[col - nxv];
    const int q = col - nxv - nuv;
    return pd[n_grad_params < 0 ? q : grad_params[q]];
  }

  // the contact point's penetration below the plane [m] (≤ 0 when clear)
  template <class S, class XIn, class PIn>
  STEER_HD S penetration(const XIn& x, const PIn& p) const {
    S q[kMaxDof] = {};
    for (int i = 0; i < n_dof; ++i) q[i] = x[i];
    Kin<S> K;
    forward_kinematics(q, p, K);
    S t[3];
    tip_position(K, t);
    return S(p[p_global(kPlaneHeight)]) - t[2];
  }
  STEER_HD int num_contacts() const { return contact ? 1 : 0; }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn& x, const PIn& p, int c) const {
    (void)c;
    return penetration<S>(x, p) > S(0);
  }

  // centre of mass of all bodies along an axis [m]: Σ m_b c_b / Σ m_b
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int ax) const {
    S q[kMaxDof] = {};
    for (int i = 0; i < n_dof; ++i) q[i] = x[i];
    Kin<S> K;
    forward_kinematics(q, p, K);
    S mc = S(0), mt = S(0);
    for (int b = 0; b < n_bodies; ++b) {
      mc += S(p[p_body(b, kMass)]) * K.C[b][ax];
      mt += S(p[p_body(b, kMass)]);
    }
    return mc / mt;
  }
  // ∂c/∂q by duals (one pass, n_dof ≤ 8 columns); ∂c/∂m_b = (c_b − c)/Σm; ∂c/∂com_b = m_b/Σm · R_b[axis, :]
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p,
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

  // kinetic energy ½ q̇ᵀ M(q) q̇ (armature included, as MuJoCo counts it) [J]
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const {
    S q[kMaxDof] = {}, M[kMaxDof * kMaxDof] = {};
    for (int i = 0; i < n_dof; ++i) q[i] = x[i];
    Kin<S> K;
    forward_kinematics(q, p, K);
    mass_matrix(K, p, M);
    S e = S(0);
    for (int i = 0; i < n_dof; ++i)
      for (int j = 0; j < n_dof; ++j) e += S(0.5) * S(x[n_dof + i]) * M[i * kMaxDof + j] * S(x[n_dof + j]);
    return e;
  }
  // kinetic plus gravitational energy Σ m_b g z_b [J]
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const {
    S q[kMaxDof] = {};
    for (int i = 0; i < n_dof; ++i) q[i] = x[i];
    Kin<S> K;
    forward_kinematics(q, p, K);
    S e = kinetic_energy<S>(x, p);
    for (int b = 0; b < n_bodies; ++b) e += S(p[p_body(b, kMass)]) * S(p[p_global(kGravity)]) * K.C[b][2];
    return e;
  }
  // conservative when no damping, no PD gains and no contact: then, with zero controls,
  // an energy change is the integrator's error
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    if (contact) return false;
    for (int j = 0; j < n_dof; ++j)
      if (!(S(p[p_joint(j, kDamping)]) == S(0) && S(p[p_joint(j, kKp)]) == S(0) && S(p[p_joint(j, kKv)]) == S(0)))
        return false;
    return true;
  }
};

}  // namespace steer
