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
//   M = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_b J_ω,b   (by composite rigid bodies: mass_matrix)
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
//                With servo_newton = n ≥ 1 (config model.torque_limits.newton_iterations),
//                the servo is implicit through the saturation instead of linearized at q̇:
//                q̇⁺ solves G(q̇⁺) = M (q̇ − q̇⁺) + h (sat(τ_raw(q̇⁺)) − D q̇⁺ − c + τ_c) = 0,
//                τ_raw(q̇⁺) = k_p (q* − q) − k_v q̇⁺ + u_ff, by an unsaturated predictor (s' = 1)
//                and n Newton iterations (servo_solve). Why: MuJoCo's linearization is one
//                Newton step from q̇, and where h k_v/M_jj ≫ 2 (the Panda's wrist: ~9) a joint
//                at the clamp (s' ≈ 0) takes its k_v explicitly and overshoots to the other
//                side, a period-2 chatter that repeats step after step (the validator's
//                `chatter` label). G is the gradient of a strictly convex function, so q̇⁺ is
//                unique; for one joint with a hard clamp the predictor and one Newton step are
//                exact. Default 0: MuJoCo's implicitfast, bit for bit.
//   rk4          classic Runge–Kutta on (q, q̇) with q̈ = M⁻¹(τ − D q̇ − c + τ_c), all explicit.
// Contact (optional): one point on a body (the fingertip) against the plane z = height,
// penetration d = height − z_tip, z = d/w:
//   f_z = k w softplus(z) − d_c σ(z) ż_tip,   τ_c = J_tip,zᵀ f_z
// Joint limits (optional, joint_limits): a smooth penalty torque outside each joint's range
// [lo_j, hi_j], τ_l,j = k_l w_l [softplus((lo_j − q_j)/w_l) − softplus((q_j − hi_j)/w_l)],
// which tends to k_l (lo_j − q_j) below the range and −k_l (q_j − hi_j) above it as w_l → 0
// and is ~k_l w_l e^{−d/w_l} a distance d inside. It enters the step explicitly, like the
// contact force; k_l, w_l and the ranges are model constants (not differentiable θ). Off by
// default, as in MuJoCo's compiler when limited is unset.
//
// Adjoint: euler and implicitfast have a hand-written reverse (adj_step). It recomputes the
// step's system A q̇⁺ = b (implicit_system), solves A λ = q̇̄⁺ + h q̄⁺ with A's Cholesky
// factor, and differentiates φ = λᵀ (b − A q̇⁺) with λ and q̇⁺ held fixed, in reverse passes
// over the forward's quantities: the controller and smooth saturation joint by joint
// (adj_saturate); the dynamics λᵀ M (q̇ − q̇⁺) − h λᵀ c by virtual work, as one inward sweep
// over the bodies (adj_dynamics_form); the fingertip contact (adj_contact_forces); and the
// kinematics as a force/moment sweep, q̄_j = a_j · (moment of the subtree's adjoints about
// p_j) (adj_forward_kinematics). Parameter groups not in grad_params are skipped where that
// saves work; only the listed entries are written. rk4 keeps the forward-mode dual adjoint
// (adj_step_dual: the step run on Dual<S, 8> over x, u and the listed parameters), which is
// also the reference: articulated_test compares the two column by column (1e-10 relative),
// and the generic suite checks both against centered finite differences.
// The recomputed step's system, factor and intermediates form a StepTape: on the CPU the
// backward sweep keeps one per step of the segment it recomputes (rollout.h) and calls
// adj_step_taped, so the step is not computed a third time (backward/forward 2.8 → 1.8);
// adj_step alone fills its own tape first.
// The CUDA backend runs euler and implicitfast models as ArticulatedImplicit (end of file),
// whose step and adjoint leave rk4 and the dual path out at compile time, so that its
// kernels' stack frames are not sized by them; rk4 keeps Articulated's own kernels.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "steer/core.h"
#include "steer/dual.h"
#include "steer/model_math.h"
#include "steer/reference_adjoint.h"

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
  static constexpr int kSatTape = 6;  // saturate()'s taped values per joint (σ_a, 1 − σ_a, σ_b, 1 − σ_b, softplus_a, softplus_b)

  enum JointType { kFixed = 0, kHinge = 1, kSlide = 2 };
  enum Integrator { kEuler = 0, kImplicitFast = 1, kRk4 = 2 };
  enum BodyParam { kMass = 0, kComX, kComY, kComZ, kIxx, kIyy, kIzz, kIxy, kIxz, kIyz };
  enum JointParam { kDamping = 0, kArmature, kKp, kKv, kTarget, kForceLimit };
  enum GlobalParam { kGravity = 0, kSharpness, kPlaneHeight, kContactStiffness, kContactDamping, kContactSmoothing };

  int n_bodies = 0;
  int n_dof = 0;
  double dt = 0.002;  // h [s]
  int integrator = kEuler;
  int servo_newton = 0;  // Newton iterations of the servo implicit through saturation (implicitfast; 0 = MuJoCo's)
  bool torque_limits = true;
  bool contact = false;
  bool joint_limits = false;
  double limit_lower[kMaxDof] = {}, limit_upper[kMaxDof] = {};  // [rad or m]
  double limit_stiffness = 0;                                    // k_l [N·m/rad or N/m]
  double limit_smoothing = 0.01;                                 // w_l [rad or m], > 0
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
  // parameters whose gradient adj_step computes; −1 = all (the hand adjoint gets them all at
  // little extra cost; the dual path pays 1/8 of a dual pass per parameter)
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

  // M(q) = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_w,b J_ω,b, row-major n×n into
  // M[kMaxDof·kMaxDof], by composite rigid bodies (O(n_bodies + n²) instead of the Jacobian
  // sum's O(n_bodies·n²)). Each body's subtree, leaves first, is summed about the body's
  // anchor p_b as its mass m, first moment h = Σ m_k (c_k − p_b) and inertia
  // J = Σ I_w,k + m_k (|c_k − p_b|² 𝟙 − (c_k − p_b)(c_k − p_b)ᵀ) [kg·m²]; moved to the
  // parent's anchor by r = p_b − p_pa: h' = h + m r, J' = J + (2 h·r + m|r|²) 𝟙 − (h rᵀ + r hᵀ + m r rᵀ).
  // A unit q̈_i of body b's joint accelerates its subtree (b's composite) with the force f and
  // the moment n about p_b
  //   hinge, axis a:  f = a × h,  n = J a;      slide, direction d:  f = m d,  n = h × d,
  // and M_ji for every joint j at b or above it (body e) is the work of that wrench on j's
  // unit motion: a_e · (n + (p_b − p_e) × f) (hinge), a_e · f (slide); M_ij = M_ji.
  template <class S, class PIn>
  STEER_HD void mass_matrix(const Kin<S>& K, const PIn& p, S* M) const {
    const int n = n_dof;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) M[i * kMaxDof + j] = S(0);
    S cm[kMaxBodies], ch[kMaxBodies][3], cJ[kMaxBodies][9];  // composites about p_b
    for (int b = 0; b < n_bodies; ++b) {
      const S m = p[p_body(b, kMass)];
      S u[3];
      for (int i = 0; i < 3; ++i) u[i] = K.C[b][i] - K.P[b][i];
      world_inertia(K, p, b, cJ[b]);
      const S uu = dot(u, u);
      for (int i = 0; i < 3; ++i) {
        ch[b][i] = m * u[i];
        for (int j = 0; j < 3; ++j) cJ[b][3 * i + j] += m * ((i == j ? uu : S(0)) - u[i] * u[j]);
      }
      cm[b] = m;
    }
    for (int b = n_bodies - 1; b >= 0; --b) {
      // b's composite is complete: its children (later in topological order) are merged
      if (joint[b] != kFixed) {
        const int i = dof[b];
        S f[3], nb[3];
        if (joint[b] == kHinge) {
          cross(K.A[b], ch[b], f);
          rotate(cJ[b], K.A[b], nb);
        } else {
          for (int k = 0; k < 3; ++k) f[k] = cm[b] * K.A[b][k];
          cross(ch[b], K.A[b], nb);
        }
        for (int e = b; e >= 0; e = parent[e]) {
          if (joint[e] == kFixed) continue;
          const int j = dof[e];
          S v;
          if (joint[e] == kHinge) {
            const S r[3] = {K.P[b][0] - K.P[e][0], K.P[b][1] - K.P[e][1], K.P[b][2] - K.P[e][2]};
            S rf[3];
            cross(r, f, rf);
            const S ne[3] = {nb[0] + rf[0], nb[1] + rf[1], nb[2] + rf[2]};
            v = dot(K.A[e], ne);
          } else {
            v = dot(K.A[e], f);
          }
          M[j * kMaxDof + i] = v;
          M[i * kMaxDof + j] = v;
        }
      }
      const int pa = parent[b];
      if (pa < 0) continue;
      const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
      const S m = cm[b];
      const S hr = dot(ch[b], r), rr = dot(r, r);
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l)
          cJ[pa][3 * k + l] += cJ[b][3 * k + l] + ((k == l ? S(2) * hr + m * rr : S(0)) -
                                                   (ch[b][k] * r[l] + r[k] * ch[b][l] + m * r[k] * r[l]));
      for (int k = 0; k < 3; ++k) ch[pa][k] += ch[b][k] + m * r[k];
      cm[pa] += m;
    }
    for (int i = 0; i < n; ++i) M[i * kMaxDof + i] += S(p[p_joint(i, kArmature)]);
  }

  // c(q, q̇): Coriolis, centrifugal and gravity joint forces by recursive Newton–Euler with
  // q̈ = 0 and the base accelerating upward at g (so M q̈ + c = τ)
  template <class S, class PIn>
  STEER_HD void bias_forces(const Kin<S>& K, const S* v, const PIn& p, S* c) const {
    RneaWork<S> W;
    bias_forces(K, v, p, c, W);
  }
  // the Newton–Euler sweeps' intermediates, kept for the adjoint (adj_dynamics_form)
  template <class S>
  struct RneaWork {
    S w[kMaxBodies][3];   // angular velocity ω_b [rad/s]
    S al[kMaxBodies][3];  // angular acceleration α_b [rad/s²]
    S ao[kMaxBodies][3];  // acceleration of the body origin p_b, gravity as an upward base acceleration [m/s²]
    S F[kMaxBodies][3];   // after the inward sweep: force the subtree of b takes through its joint [N]
    S N[kMaxBodies][3];   // after the inward sweep: the subtree's moment about p_b [N·m]
    S Iw[kMaxBodies][9];  // world inertia about the centre of mass [kg·m²]
    S ac[kMaxBodies][3];  // acceleration of the centre of mass [m/s²]
    S Iwv[kMaxBodies][3]; // I_w ω [kg·m²/s]
    S gyr[kMaxBodies][3]; // ω × I_w ω [N·m]
  };
  template <class S, class PIn>
  STEER_HD void bias_forces(const Kin<S>& K, const S* v, const PIn& p, S* c, RneaWork<S>& W) const {
    S(&w)[kMaxBodies][3] = W.w;
    S(&al)[kMaxBodies][3] = W.al;
    S(&ao)[kMaxBodies][3] = W.ao;
    S(&F)[kMaxBodies][3] = W.F;
    S(&N)[kMaxBodies][3] = W.N;
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
      S* Iw = W.Iw[b];
      S* Iwv = W.Iwv[b];
      S* gyr = W.gyr[b];
      S Ial[3];
      world_inertia(K, p, b, Iw);
      rotate(Iw, al[b], Ial);
      rotate(Iw, w[b], Iwv);
      cross(w[b], Iwv, gyr);
      S f[3], rf[3];
      for (int i = 0; i < 3; ++i) f[i] = m * ac[i], W.ac[b][i] = ac[i];
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
    S sp, sg;
    softplus_sigmoid_of(z, sp, sg);
    const S fz = k * wd * sp - dc * sg * zdot;
    for (int r = 0; r < nd; ++r) tc[ds[r]] += jz[r] * fz;
  }

  // the joint-limit torque τ_l,j(q_j) [N·m or N] (0 when joint_limits is off)
  template <class S>
  STEER_HD S limit_torque(int j, const S& qj) const {
    if (!joint_limits) return S(0);
    const S w = S(limit_smoothing), k = S(limit_stiffness);
    return k * w * (softplus_of(S((S(limit_lower[j]) - qj) / w)) - softplus_of(S((qj - S(limit_upper[j])) / w)));
  }
  // ∂τ_l,j/∂q_j = −k_l [σ((lo − q)/w) + σ((q − hi)/w)]
  template <class S>
  STEER_HD S limit_slope(int j, const S& qj) const {
    const S w = S(limit_smoothing), k = S(limit_stiffness);
    return -k * (sigmoid_of(S((S(limit_lower[j]) - qj) / w)) + sigmoid_of(S((qj - S(limit_upper[j])) / w)));
  }

  // τ = sat(τ_raw) and s' = ∂τ/∂τ_raw for joint j
  // (sig, when given, receives σ(z_a), 1 − σ(z_a), σ(z_b), 1 − σ(z_b), softplus(z_a), softplus(z_b)
  // for adj_saturate: kSatTape values per joint)
  template <class S, class PIn>
  STEER_HD S saturate(const PIn& p, int j, const S& raw, S& slope, S* sig = nullptr) const {
    if (!torque_limits) {
      slope = S(1);
      return raw;
    }
    const S beta = p[p_global(kSharpness)], lim = p[p_joint(j, kForceLimit)];
    const S za = beta * (raw - lim), zb = beta * (-raw - lim);
    // softplus and σ of each side from one exponential (model_math.h)
    S sa, sb, spa, spb;
    if (sig) {
      softplus_sigmoid_of(za, spa, sig[0], &sig[1]);
      softplus_sigmoid_of(zb, spb, sig[2], &sig[3]);
      sa = sig[0], sb = sig[2], sig[4] = spa, sig[5] = spb;
    } else {
      softplus_sigmoid_of(za, spa, sa);
      softplus_sigmoid_of(zb, spb, sb);
    }
    slope = S(1) - sa - sb;
    return raw - (spa - spb) / beta;
  }
  // in-place Cholesky solve of A y = b (A symmetric positive definite, n×n, stride kMaxDof)
  template <class S>
  STEER_HD static void cholesky_solve(int n, S* A, S* y) {
    cholesky_factor(n, A);
    cholesky_substitute(n, A, y);
  }
  // A = L Lᵀ, L into the lower triangle and diagonal of A; the strict upper triangle is kept
  template <class S>
  STEER_HD static void cholesky_factor(int n, S* A) {
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
  }
  // y <- (L Lᵀ)⁻¹ y with L from cholesky_factor
  template <class S>
  STEER_HD static void cholesky_substitute(int n, const S* L, S* y) {
    for (int i = 0; i < n; ++i) {
      S t = y[i];
      for (int k = 0; k < i; ++k) t -= L[i * kMaxDof + k] * y[k];
      y[i] = t / L[i * kMaxDof + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      S t = y[i];
      for (int k = i + 1; k < n; ++k) t -= L[k * kMaxDof + i] * y[k];
      y[i] = t / L[i * kMaxDof + i];
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
    if (joint_limits)
      for (int j = 0; j < n_dof; ++j) qdd[j] += limit_torque(j, q[j]);
    cholesky_solve(n_dof, M, qdd);
  }

  // (x_k, u_k, θ) -> x_{k+1}; small state, so only the leading lane works
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    if (integrator == kRk4) {
      step_rk4<S>(x, u, p, xn);
      return;
    }
    StepTape<S> t;
    step_implicit<S>(x, u, p, xn, t);
  }

  // the rk4 step: k1..k4 of (q̇, q̈); x⁺ = x + h/6 (k1 + 2 k2 + 2 k3 + k4)
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_rk4(const XIn& x, const UIn& u, const PIn& p, XOut& xn) const {
    const int n = n_dof;
    const S h = S(dt);
    S q[kMaxDof] = {}, v[kMaxDof] = {};
    for (int i = 0; i < n; ++i) q[i] = x[i], v[i] = x[n + i];
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
  }

  // What the hand adjoint needs of one euler / implicitfast step (rollout.h's step tape):
  // the kinematics, the Newton–Euler intermediates, A = L Lᵀ (L in the lower triangle, M's
  // strict upper triangle above it), M's diagonal, q̇⁺, and per joint τ_raw, s' and the
  // saturation's sigmoids. About 5 kB per step in float64 for the Panda.
  template <class S>
  struct StepTape {
    Kin<S> K;
    RneaWork<S> W;
    S A[kMaxDof * kMaxDof], vp[kMaxDof], mdiag[kMaxDof], raw[kMaxDof], slope[kMaxDof], sig[kSatTape * kMaxDof];
  };
  // the euler / implicitfast step up to q̇⁺ (step() and the adjoint both run exactly this, so
  // the taped and the untaped sweeps give the same bits)
  template <class S, class UIn, class PIn>
  STEER_HD void fill_tape(const S* q, const S* v, const UIn& u, const PIn& p, StepTape<S>& t) const {
    implicit_system(q, v, u, p, t.K, t.W, t.A, t.mdiag, t.vp, t.raw, t.slope, t.sig);
    if (implicit_servo()) {
      servo_solve(q, u, p, t);
      return;
    }
    cholesky_factor(n_dof, t.A);
    cholesky_substitute(n_dof, t.A, t.vp);  // q̇⁺
  }
  STEER_HD bool implicit_servo() const { return integrator == kImplicitFast && servo_newton > 0; }
  // the servo implicit through the saturation (servo_newton ≥ 1): on entry t.A = M + h D and
  // t.vp = b := M q̇ + h (−c + τ_c [+ τ_l]) from implicit_system. With r_i = k_p (q* − q) + u_ff
  // and H = M + h D the step's equation is
  //   G(w) = b − H w + h sat(r − k_v w) = 0,
  // the gradient of the strictly convex Φ(w) = ½ wᵀH w − bᵀw + h Σ_i ∫ sat (taken negative),
  // since sat is increasing (0 < s' ≤ 1). Linearizing τ_i about the iterate w,
  // τ_i ≈ sat(r_i − k_v w_i) − s'_i k_v (w⁺_i − w_i), gives the Newton system
  //   J(w) w⁺ = b + h (sat(r − k_v w) + s' k_v w),   J(w) = M + h diag(D + s' k_v).
  // The predictor takes every joint unsaturated (s' = 1, τ = r − k_v w⁺: the implicit PD).
  // Plain Newton is not enough: the function is S-shaped per joint (slope 1 in the clamps,
  // 1 + h k_v/M inside), and on the Panda a coupled joint's iterates jump from one clamp to
  // the other and back (articulated_test ImplicitServoSolvesTheImplicitStep). So each Newton
  // step d = w⁺ − w is damped by a line search for the minimum of Φ along d, the root of
  // the decreasing ψ(α) = dᵀ G(w + α d) = c₀ − α c₁ + h Σ d_i sat(r_i − k_v,i (w_i + α d_i)),
  // c₀ = dᵀ(b − H w), c₁ = dᵀ H d: α = 1 when ψ(1) ≥ −10⁻³ ψ(0) (the minimum lies beyond
  // the full step, or just short of it), else up to kServoLineSearch safeguarded Newton steps
  // on ψ within the bracket [0, 1] (bisection where Newton leaves it) until |ψ(α)| ≤ 10⁻³ ψ(0).
  // Φ decreases at every iteration (but for that margin), so the iterates converge to the
  // unique solution. Value branches are selects, for the SIMD lanes; the line search is
  // skipped when no lane needs it (measured on the Panda at B = 256, n = 2: the step 2.5× faster than with it always run).
  // Last, J at the solution is factored and τ_raw, s' and the saturation's sigmoids are
  // taped there: the hand adjoint is the implicit-function one, λ = J⁻¹ (q̇̄⁺ + h q̄⁺).
  static constexpr int kServoLineSearch = 8;
  static constexpr double kServoLineSearchTol = 1e-3;
  template <class S, class UIn, class PIn>
  STEER_HD void servo_solve(const S* q, const UIn& u, const PIn& p, StepTape<S>& t) const {
    const int n = n_dof;
    const S h = S(dt);
    S base[kMaxDof], r[kMaxDof], w[kMaxDof], d[kMaxDof], tau_w[kMaxDof];
    for (int i = 0; i < n; ++i) {
      base[i] = t.vp[i];
      r[i] = S(p[p_joint(i, kKp)]) * (S(p[p_joint(i, kTarget)]) - q[i]) + S(u[i]);
      w[i] = S(0);
    }
    // H x from M's strict upper triangle (kept in t.A), its diagonal and D
    auto h_times = [&](const S* x, int i) {
      S y = (t.mdiag[i] + h * S(p[p_joint(i, kDamping)])) * x[i];
      for (int j = 0; j < n; ++j)
        if (j != i) y += t.A[(i < j ? i : j) * kMaxDof + (i < j ? j : i)] * x[j];
      return y;
    };
    // ψ(α) and ψ'(α) = −c₁ − h Σ k_v d_i² s'_i
    auto psi = [&](const S& c0, const S& c1, const S& a, S& dpsi) {
      S v = c0 - a * c1;
      dpsi = -c1;
      for (int i = 0; i < n; ++i) {
        const S kv = p[p_joint(i, kKv)];
        S s;
        const S tau = saturate(p, i, S(r[i] - kv * (w[i] + a * d[i])), s);
        v += h * d[i] * tau;
        dpsi -= h * kv * d[i] * d[i] * s;
      }
      return v;
    };
    // the system at w: J(w) into t.A (factored), b + h (sat(r − k_v w) + s' k_v w) into t.vp
    // (the predictor's when `predictor`), τ(w) into tau_w; τ_raw, s', sigmoids taped at w
    auto newton_system = [&](bool predictor) {
      for (int i = 0; i < n; ++i) {
        const S kv = p[p_joint(i, kKv)];
        S s = S(1), lin = r[i];  // the predictor: τ = r − k_v w⁺
        if (!predictor) {
          t.raw[i] = r[i] - kv * w[i];
          tau_w[i] = saturate(p, i, t.raw[i], s, t.sig + kSatTape * i);
          lin = tau_w[i] + s * kv * w[i];
        }
        t.slope[i] = s;
        // rebuild the lower triangle from M's strict upper one (cholesky_factor keeps it)
        t.A[i * kMaxDof + i] = t.mdiag[i] + h * (S(p[p_joint(i, kDamping)]) + s * kv);
        for (int j = 0; j < i; ++j) t.A[i * kMaxDof + j] = t.A[j * kMaxDof + i];
        t.vp[i] = base[i] + h * lin;
      }
      cholesky_factor(n, t.A);
    };
    newton_system(true);
    cholesky_substitute(n, t.A, t.vp);
    for (int i = 0; i < n; ++i) w[i] = t.vp[i];
    // a lane whose Newton step is below rounding (|d|∞ ≤ 64 ε (|w|∞ + 10⁻³)) is done: its w is
    // frozen from there on, and the loop ends when every lane is (the scalar run's break)
    const S eps_d = S(64.0 * roundoff_of<S>());
    auto done = S(1) < S(0);
    for (int it = 1; it <= servo_newton && any_lane(!done); ++it) {
      newton_system(false);
      cholesky_substitute(n, t.A, t.vp);
      // the line search along d = w⁺ − w; ψ(0) = dᵀ G(w) = dᵀ J d > 0
      S c0 = S(0), c1 = S(0), p0 = S(0), dmax = S(0), wmax = S(0);
      for (int i = 0; i < n; ++i) d[i] = t.vp[i] - w[i];
      for (int i = 0; i < n; ++i) {
        c0 += d[i] * (base[i] - h_times(w, i));
        c1 += d[i] * h_times(d, i);
        p0 += h * d[i] * tau_w[i];
        const S ad = select(d[i] < S(0), S(S(0) - d[i]), d[i]), aw = select(w[i] < S(0), S(S(0) - w[i]), w[i]);
        dmax = select(ad > dmax, ad, dmax);
        wmax = select(aw > wmax, aw, wmax);
      }
      p0 += c0;
      const auto tiny = dmax <= eps_d * (wmax + S(1e-3));
      S dpa;
      S a = S(1), pa = psi(c0, c1, a, dpa);
      // the full step unless it passes the minimum along d by more than a small margin
      // (|ψ(1)| ≤ 1e-3 ψ(0) is where Newton converges; a margin keeps those steps whole)
      const S tol = S(kServoLineSearchTol) * p0;
      auto busy = !done && !tiny && pa < -tol;
      if (any_lane(busy)) {
        S lo = S(0), hi = S(1);
        for (int ls = 0; ls < kServoLineSearch && any_lane(busy); ++ls) {
          // ψ(lo) > 0 > ψ(hi); a Newton step from a, a bisection where it leaves (lo, hi);
          // a lane stops (its values frozen) once |ψ(a)| ≤ tol, so each lane's bits are
          // those of its own scalar run
          const auto right = pa <= S(0);
          hi = select(right, a, hi);
          lo = select(right, lo, a);
          S an = a - pa / select(dpa < S(0), dpa, S(-1));
          an = select(an > lo && an < hi, an, S(S(0.5) * (lo + hi)));
          S dn;
          const S pn = psi(c0, c1, an, dn);
          a = select(busy, an, a);
          pa = select(busy, pn, pa);
          dpa = select(busy, dn, dpa);
          busy = busy && (pa < -tol || pa > tol);
        }
      }
      for (int i = 0; i < n; ++i) w[i] = select(done, w[i], S(w[i] + a * d[i]));
      done = done || tiny;
    }
    // J at the solution, and the saturation taped there, for the adjoint
    newton_system(false);
    for (int i = 0; i < n; ++i) t.vp[i] = w[i];
  }
  // step, keeping its tape (rk4 has no tape: its adjoint is the dual path)
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_taped(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& t,
                           const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    if (integrator == kRk4) {
      step_rk4<S>(x, u, p, xn);
      return;
    }
    step_implicit<S>(x, u, p, xn, t);
  }
  // the euler / implicitfast step: q̇⁺ from A q̇⁺ = rhs (fill_tape), q⁺ = q + h q̇⁺; t receives its tape
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_implicit(const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& t) const {
    const int n = n_dof;
    const S h = S(dt);
    S q[kMaxDof] = {}, v[kMaxDof] = {};
    for (int i = 0; i < n; ++i) q[i] = x[i], v[i] = x[n + i];
    fill_tape(q, v, u, p, t);
    for (int i = 0; i < n; ++i) {
      xn[n + i] = t.vp[i];
      xn[i] = q[i] + h * t.vp[i];
    }
  }

  // the linear system of the euler / implicitfast step, A q̇⁺ = rhs:
  //   A = M + h diag(D + s' k_v [implicitfast]),  rhs = M q̇ + h (τ − c + τ_c [+ s' k_v q̇])
  // also returns the kinematics K, the Newton–Euler intermediates W, M's diagonal (A's strict
  // upper triangle is M's, and survives cholesky_factor), τ_raw and s' per joint
  template <class S, class UIn, class PIn>
  STEER_HD void implicit_system(const S* q, const S* v, const UIn& u, const PIn& p, Kin<S>& K, RneaWork<S>& W,
                                S* M, S* mdiag, S* rhs, S* raw, S* slope, S* sig = nullptr) const {
    const int n = n_dof;
    const S h = S(dt);
    forward_kinematics(q, p, K);
    S c[kMaxDof], tc[kMaxDof];
    mass_matrix(K, p, M);
    bias_forces(K, v, p, c, W);
    for (int i = 0; i < n; ++i) tc[i] = S(0);
    contact_forces(K, v, p, tc);
    // rhs = M q̇ + h (τ − c + τ_c) (+ h s' k_v q̇ for implicitfast); M becomes the system matrix
    for (int i = 0; i < n; ++i) {
      S mv = S(0);
      for (int j = 0; j < n; ++j) mv += M[i * kMaxDof + j] * v[j];
      const S kv = p[p_joint(i, kKv)];
      S implicit_gain = S(p[p_joint(i, kDamping)]);
      S f;
      if (implicit_servo()) {
        f = tc[i] - c[i];  // servo_solve adds the controller
      } else {
        raw[i] = S(p[p_joint(i, kKp)]) * (S(p[p_joint(i, kTarget)]) - q[i]) - kv * v[i] + S(u[i]);
        const S tau = saturate(p, i, raw[i], slope[i], sig ? sig + kSatTape * i : nullptr);
        f = tau - c[i] + tc[i];
      }
      if (joint_limits) f += limit_torque(i, q[i]);
      if (integrator == kImplicitFast && !implicit_servo()) {
        implicit_gain += slope[i] * kv;
        f += slope[i] * kv * v[i];
      }
      rhs[i] = mv + h * f;
      mdiag[i] = M[i * kMaxDof + i];
      M[i * kMaxDof + i] += h * implicit_gain;
    }
  }

  // ---------------------------------------------------------------------------------------
  // The hand adjoint (euler, implicitfast). Notation: z̄ = ∂φ/∂z for the scalar φ being
  // differentiated; every adj_* helper accumulates (+=).
  //
  // The adjoint of the world kinematics is kept per body as KinAdj: p̄_b, ā_b, c̄_b (the
  // adjoints of the joint anchor, the joint axis and the centre of mass) and t̄_b, a moment
  // about p_b that collects everything else rigidly attached to body b (its world inertia,
  // the contact point). Every one of them moves rigidly with its body, so a hinge j turning
  // by dq moves a point x of its subtree by a_j × (x − p_j) dq, a direction d by a_j × d dq
  // and an inertia by [a_j]× I − I [a_j]×; hence
  //   q̄_j = a_j · Σ_{subtree of j} [(x − p_j) × x̄ + d × d̄ + t̄]   (hinge),
  //   q̄_j = a_j · Σ_{subtree of j} x̄                               (slide),
  // one inward sweep of a force Σ x̄ and a moment about p_b (adj_forward_kinematics).
  template <class S>
  struct KinAdj {
    S P[kMaxBodies][3];  // p̄_b; during adj_forward_kinematics: the subtree's force Σ x̄
    S A[kMaxBodies][3];  // ā_b
    S C[kMaxBodies][3];  // c̄_b
    S T[kMaxBodies][3];  // t̄_b, a moment about p_b; during adj_forward_kinematics: the subtree's
                         // moment about p_b
  };

  // ā += b × ō, b̄ += ō × a: the adjoint of o = a × b
  template <class S>
  STEER_HD static void adj_cross(const S* a, const S* b, S* adj_a, S* adj_b, const S* adj_o) {
    S t[3];
    cross(b, adj_o, t);
    for (int i = 0; i < 3; ++i) adj_a[i] += t[i];
    cross(adj_o, a, t);
    for (int i = 0; i < 3; ++i) adj_b[i] += t[i];
  }

  // adjoint of forward_kinematics: KA (consumed) -> q̄ and, when want_com, the centre-of-mass
  // parameters com̄_b = R_bᵀ c̄_b (c_b = p_b + R_b com_b). Bodies in reverse order; with F_b,
  // T_b the force and the moment about p_b of b's subtree,
  //   F_b = p̄_b + c̄_b + Σ_children F_ch,
  //   T_b = t̄_b + (c_b − p_b) × c̄_b + a_b × ā_b + Σ_children [T_ch + (p_ch − p_b) × F_ch],
  //   q̄_b = a_b · T_b (hinge) or a_b · F_b (slide).
  template <class S>
  STEER_HD void adj_forward_kinematics(const Kin<S>& K, S* adj_q, S* adj_p, KinAdj<S>& KA, bool want_com) const {
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

  // Ī_w += u vᵀ for the world inertia I_w = R I_b Rᵀ of body b: as a moment on the body,
  // t̄ += axial(Ī_w I_w − I_w Ī_w) = (I_w v) × u − v × (I_w u) (I_w turning by δ changes by
  // [δ]× I_w − I_w [δ]×; Iu = I_w u, Iv = I_w v given), and when want_inertia
  // Ī_b += (Rᵀu)(Rᵀv)ᵀ into the six entries (off-diagonal pairs summed)
  template <class S>
  STEER_HD void adj_world_inertia_rank1(const Kin<S>& K, int b, const S* u, const S* v, const S* Iu, const S* Iv,
                                        S* adj_T, S* adj_p, bool want_inertia) const {
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

  // adjoint of the dynamics part of φ,
  //   φ_d = λᵀ M(q) w − h λᵀ c(q, q̇)
  // for fixed λ, w (dof vectors), with respect to the kinematics (KA), q̇, masses, armatures,
  // inertias and gravity. By virtual work (c_j = a_j·N_j sums the bodies' inertial wrenches
  // over j's subtree) λᵀ c = Σ_b m_b V_b(λ)·a_c,b + Ω_b(λ)·(I_w α_b + ω_b × I_w ω_b), and
  // λᵀ M w = Σ_i armature_i λ_i w_i + Σ_b m_b V_b(λ)·V_b(w) + Ω_b(λ)ᵀ I_w Ω_b(w), so
  //   φ_d = Σ_i armature_i λ_i w_i + Σ_b m_b V_b(λ)·X_b + Ω_b(λ)·Y_b,
  //   X_b = V_b(w) − h a_c,b [m/s],  Y_b = I_w Z_b − h ω_b × I_w ω_b [kg·m²/s],  Z_b = Ω_b(w) − h α_b,
  // where, for joint velocities λ, the angular velocity Ω, the anchor velocity o and the
  // centre-of-mass velocity V of each body follow the outward recursion
  //   Ω_b = Ω_pa + λ_b a_b [hinge],  o_b = o_pa + Ω_pa × (p_b − p_pa) + λ_b a_b [slide],
  //   V_b = o_b + Ω_b × (c_b − p_b),
  // and ω_b, α_b, a_o,b, a_c,b = a_o,b + α_b × rc + ω_b × (ω_b × rc) are bias_forces' (W).
  // The reverse runs inward over the bodies. Per body:
  //   m̄_b = V(λ)·X,  V̄(λ) = m X,  V̄(w) = m V(λ),  ā_c = −h m V(λ) = −h V̄(w),
  //   Ω̄(λ) = Y,  Ω̄(w) = I_w Ω(λ),  ᾱ = −h I_w Ω(λ) = −h Ω̄(w),
  //   ω̄ = −h [I_w ω × Ω(λ) + I_w (Ω(λ) × ω)],  Ī_w = Ω(λ) Z_bᵀ − h (Ω(λ) × ω) ωᵀ;
  // since the w velocities (Ω(w), o(w)) and the Newton–Euler pass (α, a_o) propagate alike
  // (α_b ∋ α_pa, a_o,b ∋ a_o,pa + α_pa × r), their adjoints stay in the ratio −h all the way
  // in: ᾱ = −h Ω̄(w), ā_o = −h ō(w); one recursion carries both, and where a geometric
  // adjoint pairs with Ω(w) and α it pairs with Z (e.g. r̄ += ō(w) × Z_pa). The rest — the
  // λ velocities, ω̄ and the centripetal and Coriolis terms of a_c and a_o — reverse term by term.
  // Bodies without a moving joint at or above them (a fixed base) carry only gravity's ā_o.
  template <class S, class PIn>
  STEER_HD void adj_dynamics_form(const Kin<S>& K, const S* v, const PIn& p, const RneaWork<S>& W, const S* lam,
                                  const S* w, const S& h, KinAdj<S>& KA, S* adj_v, S* adj_p, bool want_inertia) const {
    for (int i = 0; i < n_dof; ++i) adj_p[p_joint(i, kArmature)] += lam[i] * w[i];
    // outward: Ω and o under λ (l) and w (w); which bodies move
    S Ol[kMaxBodies][3], Ow[kMaxBodies][3], ol[kMaxBodies][3], ow[kMaxBodies][3];
    bool moving[kMaxBodies];
    for (int b = 0; b < n_bodies; ++b) {
      const int pa = parent[b];
      moving[b] = joint[b] != kFixed || (pa >= 0 && moving[pa]);
      if (pa < 0) {
        for (int i = 0; i < 3; ++i) Ol[b][i] = Ow[b][i] = ol[b][i] = ow[b][i] = S(0);
      } else {
        const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
        S tl[3], tw[3];
        cross(Ol[pa], r, tl);
        cross(Ow[pa], r, tw);
        for (int i = 0; i < 3; ++i) {
          Ol[b][i] = Ol[pa][i], Ow[b][i] = Ow[pa][i];
          ol[b][i] = ol[pa][i] + tl[i], ow[b][i] = ow[pa][i] + tw[i];
        }
      }
      if (joint[b] == kHinge)
        for (int i = 0; i < 3; ++i) Ol[b][i] += lam[dof[b]] * K.A[b][i], Ow[b][i] += w[dof[b]] * K.A[b][i];
      if (joint[b] == kSlide)
        for (int i = 0; i < 3; ++i) ol[b][i] += lam[dof[b]] * K.A[b][i], ow[b][i] += w[dof[b]] * K.A[b][i];
    }
    // inward: Ω̄, ō under λ (l) and under w with the Newton–Euler pass (w), ω̄
    S aOl[kMaxBodies][3], aOw[kMaxBodies][3], aol[kMaxBodies][3], aow[kMaxBodies][3], aw[kMaxBodies][3];
    for (int b = 0; b < n_bodies; ++b)
      for (int i = 0; i < 3; ++i) aOl[b][i] = aOw[b][i] = aol[b][i] = aow[b][i] = aw[b][i] = S(0);
    for (int b = n_bodies - 1; b >= 0; --b) {
      const int pa = parent[b];
      if (!moving[b]) {
        if (pa >= 0)
          for (int i = 0; i < 3; ++i) aow[pa][i] += aow[b][i];
        else
          adj_p[p_global(kGravity)] -= h * aow[b][2];  // the base accelerates upward at g: ā_o = −h ō(w)
        continue;
      }
      const S m = p[p_body(b, kMass)];
      const S* Iw = W.Iw[b];
      const S* om = W.w[b];
      const S* g = W.Iwv[b];
      const S rc[3] = {K.C[b][0] - K.P[b][0], K.C[b][1] - K.P[b][1], K.C[b][2] - K.P[b][2]};
      // the body's term m V(λ)·X + Ω(λ)·Y
      S Vl[3], t[3], X[3], Z[3], IZ[3], IOl[3], e[3], Ie[3];
      cross(Ol[b], rc, Vl);
      cross(Ow[b], rc, t);
      for (int i = 0; i < 3; ++i) {
        Vl[i] += ol[b][i];
        X[i] = ow[b][i] + t[i] - h * W.ac[b][i];
        Z[i] = Ow[b][i] - h * W.al[b][i];
      }
      rotate(Iw, Z, IZ);
      rotate(Iw, Ol[b], IOl);
      cross(Ol[b], om, e);
      rotate(Iw, e, Ie);
      adj_p[p_body(b, kMass)] += dot(Vl, X);
      S aVl[3], aVw[3], aac[3], arc[3] = {S(0), S(0), S(0)}, he[3], hIe[3];
      cross(g, Ol[b], t);
      for (int i = 0; i < 3; ++i) {
        aVl[i] = m * X[i], aVw[i] = m * Vl[i], aac[i] = -h * aVw[i];
        aOl[b][i] += IZ[i] - h * W.gyr[b][i];
        aOw[b][i] += IOl[i];
        aw[b][i] -= h * (t[i] + Ie[i]);
        he[i] = -h * e[i], hIe[i] = -h * Ie[i];
        aol[b][i] += aVl[i], aow[b][i] += aVw[i];
      }
      adj_world_inertia_rank1(K, b, Ol[b], Z, IOl, IZ, KA.T[b], adj_p, want_inertia);
      adj_world_inertia_rank1(K, b, he, om, hIe, g, KA.T[b], adj_p, want_inertia);
      // V(λ) = o + Ω × rc;  V(w) − h a_c = o(w) − h a_o + Z × rc − h ω × (ω × rc)
      adj_cross(Ol[b], rc, aOl[b], arc, aVl);
      adj_cross(Z, rc, aOw[b], arc, aVw);
      S u2[3], au2[3] = {S(0), S(0), S(0)};
      cross(om, rc, u2);
      adj_cross(om, u2, aw[b], au2, aac);
      adj_cross(om, rc, aw[b], arc, au2);
      for (int i = 0; i < 3; ++i) KA.C[b][i] += arc[i], KA.P[b][i] -= arc[i];
      // the joint. Velocities: Ω_b ∋ λ_b a_b (hinge), o_b ∋ λ_b a_b (slide), and the same in w;
      // Newton–Euler: ω = ω_p + a q̇, α = α_p + ω_p × a q̇ (hinge), a_o ∋ 2 ω_p × a q̇ (slide)
      S wp[3], awp[3];
      for (int i = 0; i < 3; ++i) wp[i] = pa < 0 ? S(0) : W.w[pa][i], awp[i] = aw[b][i];
      if (joint[b] != kFixed) {
        const S qd = v[dof[b]], lb = lam[dof[b]], wb = w[dof[b]];
        const S av[3] = {K.A[b][0] * qd, K.A[b][1] * qd, K.A[b][2] * qd};
        S aav[3] = {S(0), S(0), S(0)}, ane[3];
        if (joint[b] == kHinge) {
          for (int i = 0; i < 3; ++i) KA.A[b][i] += lb * aOl[b][i] + wb * aOw[b][i], aav[i] += aw[b][i], ane[i] = -h * aOw[b][i];
        } else {
          for (int i = 0; i < 3; ++i) KA.A[b][i] += lb * aol[b][i] + wb * aow[b][i], ane[i] = S(-2) * h * aow[b][i];
        }
        adj_cross(wp, av, awp, aav, ane);
        adj_v[dof[b]] += dot(K.A[b], aav);
        for (int i = 0; i < 3; ++i) KA.A[b][i] += qd * aav[i];
      }
      if (pa < 0) {
        adj_p[p_global(kGravity)] -= h * aow[b][2];
        continue;
      }
      // to the parent: o_b = o_pa + Ω_pa × r (λ, w) and a_o = a_o,p + α_p × r + ω_p × (ω_p × r)
      const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
      S Zp[3], aao[3], t2[3], at2[3] = {S(0), S(0), S(0)}, ar[3] = {S(0), S(0), S(0)};
      for (int i = 0; i < 3; ++i) Zp[i] = Ow[pa][i] - h * W.al[pa][i], aao[i] = -h * aow[b][i];
      adj_cross(Ol[pa], r, aOl[pa], ar, aol[b]);
      adj_cross(Zp, r, aOw[pa], ar, aow[b]);
      cross(wp, r, t2);
      adj_cross(wp, t2, awp, at2, aao);
      adj_cross(wp, r, awp, ar, at2);
      for (int i = 0; i < 3; ++i) {
        KA.P[b][i] += ar[i], KA.P[pa][i] -= ar[i];
        aw[pa][i] += awp[i];
        aOl[pa][i] += aOl[b][i], aOw[pa][i] += aOw[b][i];
        aol[pa][i] += aol[b][i], aow[pa][i] += aow[b][i];
      }
    }
  }

  // adjoint of φ = μᵀ τ_c = ż_μ f_z (ż_μ = Σ_e J_tip,z,e μ_e: the tip's vertical speed under
  // joint velocities μ) with respect to the kinematics, q̇ and the contact parameters:
  //   f_z = k w softplus(z) − d_c σ(z) ż,  z = (height − z_tip)/w
  //   f̄_z = ż_μ,  z̄ = f̄_z (k σ(z) − d_c σ'(z) ż) [per w: k w σ/w],  ż̄ = −f̄_z d_c σ(z),
  //   J̄_z,e = f_z μ_e + ż̄ q̇_e
  template <class S, class PIn>
  STEER_HD void adj_contact_forces(const Kin<S>& K, const S* v, const PIn& p, const S* mu, KinAdj<S>& KA, S* adj_v,
                                   S* adj_p) const {
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

  // adjoint of τ = sat(τ_raw) and s' = ∂τ/∂τ_raw (saturate) given τ̄, s̄'; with z_a = β(τ_raw − τ_max),
  // z_b = β(−τ_raw − τ_max), σ_a = σ(z_a), σ'_a = σ_a(1 − σ_a):
  //   ∂τ/∂τ_raw = s' = 1 − σ_a − σ_b,  ∂τ/∂τ_max = σ_a − σ_b,
  //   ∂τ/∂β = −[(σ_a (τ_raw − τ_max) − σ_b (−τ_raw − τ_max))/β − (softplus(z_a) − softplus(z_b))/β²],
  //   ∂s'/∂τ_raw = β(σ'_b − σ'_a),  ∂s'/∂τ_max = β(σ'_a + σ'_b),
  //   ∂s'/∂β = −σ'_a (τ_raw − τ_max) − σ'_b (−τ_raw − τ_max).  Returns τ̄_raw.
  //   sig = σ_a, 1 − σ_a, σ_b, 1 − σ_b, softplus(z_a), softplus(z_b) from saturate (the step's
  //   own values, so the adjoint computes no exponential); s' is taken as (1 − σ_a) − σ_b or
  //   (1 − σ_b) − σ_a on the saturated side, which keeps its digits there; ∂τ/∂β only when
  //   want_beta.
  template <class S, class PIn>
  STEER_HD S adj_saturate(const PIn& p, int j, const S& raw, const S* sig, S* adj_p, const S& adj_tau,
                          const S& adj_slope, bool want_beta) const {
    if (!torque_limits) return adj_tau;
    const S beta = p[p_global(kSharpness)], lim = p[p_joint(j, kForceLimit)];
    const S a = raw - lim, b = -raw - lim;
    const S sa = sig[0], ca = sig[1], sb = sig[2], cb = sig[3];
    const S da = sa * ca, db = sb * cb;
    const S slope = select(sa >= S(0.5), S(ca - sb), select(sb >= S(0.5), S(cb - sa), S(S(1) - sa - sb)));
    adj_p[p_joint(j, kForceLimit)] += adj_tau * (sa - sb) + adj_slope * beta * (da + db);
    if (want_beta)
      adj_p[p_global(kSharpness)] += adj_tau * ((sig[4] - sig[5]) / (beta * beta) - (sa * a - sb * b) / beta) -
                                     adj_slope * (da * a + db * b);
    return adj_tau * slope + adj_slope * beta * (db - da);
  }

  // vector-Jacobian product of step: adj_x, adj_u, adj_θ += Jᵀ adj_xn. euler and implicitfast
  // by hand (the reverse of implicit_system and the solve), rk4 by forward-mode duals.
  //
  // With A(z) q̇⁺ = b(z) (implicit_system) and q⁺ = q + h q̇⁺, for a cotangent (q̄⁺, q̇̄⁺):
  //   q̄ += q̄⁺;  g = q̇̄⁺ + h q̄⁺ (the cotangent of q̇⁺);  A λ = g (A's Cholesky factor, reused);
  //   z̄ += ∂φ/∂z  for every input z (q, q̇, u, θ), where φ(z) = λᵀ (b(z) − A(z) q̇⁺) with λ,
  //   q̇⁺ held fixed. With μ = h λ [N·m per unit cotangent · s] that scalar is
  //   φ = λᵀ M(q) (q̇ − q̇⁺) + Σ_i μ_i (τ_i − D_i q̇⁺_i [+ s'_i k_v,i (q̇_i − q̇⁺_i)]) − μᵀ c(q, q̇) + μᵀ τ_c(q, q̇)
  //   and its terms reverse in adj_saturate, adj_dynamics_form and adj_contact_forces (plus
  //   q̇̄ += M λ from b's M q̇), which deposit the adjoints of the world kinematics (KinAdj);
  //   adj_forward_kinematics takes those back to q and the centres of mass.
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                         const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    if (!ln.leader()) return;
    if (integrator == kRk4) {
      adj_step_dual<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);
      return;
    }
    adj_step_implicit<S>(x, u, p, adj_x, adj_u, adj_p, adj_xn);
  }

  // adj_step from the step's tape (rollout.h keeps it from the segment recompute)
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& t, XAdj& adj_x,
                               UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    if (!ln.leader()) return;
    if (integrator == kRk4) {
      adj_step_dual<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);
      return;
    }
    adj_step_implicit_taped<S>(x, p, t, adj_x, adj_u, adj_p, adj_xn);
  }

  // ---- the CPU backend's SIMD path (cpu_packed.h) ----
  // The euler / implicitfast step and its taped hand adjoint, called with S = simd.h's PackD:
  // one rollout per lane, every lane the same topology, the value branches (saturation and
  // contact sides, adj_saturate's slope form) selects. rk4 stays on the scalar path (its
  // adjoint is the dual-number one).
  bool packable() const { return integrator != kRk4; }
  // The per-step diagnostics too run on packs (cpu_packed.h): in_contact<PackD> returns the
  // lanes' mask and energies<PackD> every lane's energies, each from one kinematics pass for
  // W rollouts instead of one per rollout
  static constexpr bool kPackedDiagnostics = true;
  // step, and with tp its tape (step_implicit; as step() and step_taped() run it)
  template <class S, class XIn, class UIn, class PIn, class XOut, class Tape = std::nullptr_t>
  void step_solo(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, Tape tp = nullptr) const {
    (void)k;
    if constexpr (std::is_same<Tape, std::nullptr_t>::value) {
      StepTape<S> t;
      step_implicit<S>(x, u, p, xn, t);
    } else {
      step_implicit<S>(x, u, p, xn, *tp);
    }
  }
  // adj_step_taped's hand adjoint (u enters through the tape)
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  void adj_step_solo_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& t, XAdj& adj_x,
                           UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn) const {
    (void)k, (void)u;
    adj_step_implicit_taped<S>(x, p, t, adj_x, adj_u, adj_p, adj_xn);
  }

  // the hand adjoint of an euler / implicitfast step, recomputing the step first to keep its
  // factor and intermediates
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_implicit(const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                                  const XnAdj& adj_xn) const {
    const int n = n_dof;
    S q[kMaxDof] = {}, v[kMaxDof] = {};
    for (int i = 0; i < n; ++i) q[i] = x[i], v[i] = x[n + i];
    StepTape<S> t;
    fill_tape(q, v, u, p, t);
    adj_step_implicit_taped<S>(x, p, t, adj_x, adj_u, adj_p, adj_xn);
  }

  // the hand adjoint of an euler / implicitfast step from its tape t (u enters through the tape)
  template <class S, class XIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_implicit_taped(const XIn& x, const PIn& p, const StepTape<S>& t, XAdj& adj_x, UAdj& adj_u,
                                        PAdj& adj_p, const XnAdj& adj_xn) const {
    const int n = n_dof, npv = np();
    const S h = S(dt);
    S q[kMaxDof] = {}, v[kMaxDof] = {};
    for (int i = 0; i < n; ++i) q[i] = x[i], v[i] = x[n + i];
    const Kin<S>& K = t.K;
    const RneaWork<S>& W = t.W;
    const S *A = t.A, *vp = t.vp, *mdiag = t.mdiag, *raw = t.raw, *slope = t.slope, *sig = t.sig;
    // λ = A⁻¹ (q̇̄⁺ + h q̄⁺)
    S lam[kMaxDof], mu[kMaxDof], wv[kMaxDof], aq[kMaxDof], av[kMaxDof];
    for (int i = 0; i < n; ++i) lam[i] = S(adj_xn[n + i]) + h * S(adj_xn[i]);
    cholesky_substitute(n, A, lam);
    for (int i = 0; i < n; ++i) {
      mu[i] = h * lam[i];
      wv[i] = v[i] - vp[i];
      aq[i] = S(adj_xn[i]);
      // q̇̄ += M λ (M's strict upper triangle survives in A)
      S ml = mdiag[i] * lam[i];
      for (int j = 0; j < n; ++j)
        if (j != i) ml += A[(i < j ? i : j) * kMaxDof + (i < j ? j : i)] * lam[j];
      av[i] = ml;
    }
    S ap[kMaxParam];
    for (int qq = 0; qq < npv; ++qq) ap[qq] = S(0);
    // which parameter groups are requested (the rest of ap is left out of the sums)
    bool want_com = n_grad_params < 0, want_inertia = n_grad_params < 0, want_beta = n_grad_params < 0;
    for (int g = 0; g < n_grad_params; ++g) {
      const int qq = grad_params[g];
      want_beta = want_beta || qq == p_global(kSharpness);
      if (qq >= p_joint(0, 0)) continue;
      const int kk = qq % kBodyParams;
      want_com = want_com || (kk >= kComX && kk <= kComZ);
      want_inertia = want_inertia || kk >= kIxx;
    }
    KinAdj<S> KA;
    for (int b = 0; b < n_bodies; ++b)
      for (int i = 0; i < 3; ++i) KA.P[b][i] = S(0), KA.A[b][i] = S(0), KA.C[b][i] = S(0), KA.T[b][i] = S(0);
    // the controller and the implicit joint terms, joint by joint
    for (int i = 0; i < n; ++i) {
      const S kp = p[p_joint(i, kKp)], kv = p[p_joint(i, kKv)];
      ap[p_joint(i, kDamping)] -= mu[i] * vp[i];
      S aslope = S(0);
      if (integrator == kImplicitFast && !implicit_servo()) {
        // μ_i s'_i k_v,i (q̇_i − q̇⁺_i)
        aslope = mu[i] * kv * wv[i];
        ap[p_joint(i, kKv)] += mu[i] * slope[i] * wv[i];
        av[i] += mu[i] * slope[i] * kv;
      }
      const S araw = adj_saturate(p, i, raw[i], sig + kSatTape * i, ap, mu[i], aslope, want_beta);
      // h λ_i τ_l,i(q_i) in φ: q̄_i += μ_i ∂τ_l,i/∂q_i
      if (joint_limits) aq[i] += mu[i] * limit_slope(i, q[i]);
      // τ_raw = k_p (q* − q) − k_v q̇ + u_ff; for the implicit servo τ_raw = k_p (q* − q) − k_v q̇⁺ + u_ff
      // with q̇⁺ held fixed in φ (its dependence is λ's)
      const S tgt = p[p_joint(i, kTarget)];
      ap[p_joint(i, kKp)] += araw * (tgt - q[i]);
      ap[p_joint(i, kTarget)] += araw * kp;
      aq[i] -= araw * kp;
      if (implicit_servo()) {
        ap[p_joint(i, kKv)] -= araw * vp[i];
      } else {
        ap[p_joint(i, kKv)] -= araw * v[i];
        av[i] -= araw * kv;
      }
      adj_u[i] += araw;
    }
    adj_dynamics_form(K, v, p, W, lam, wv, h, KA, av, ap, want_inertia);
    adj_contact_forces(K, v, p, mu, KA, av, ap);
    adj_forward_kinematics(K, aq, ap, KA, want_com);
    for (int i = 0; i < n; ++i) adj_x[i] += aq[i], adj_x[n + i] += av[i];
    if (n_grad_params < 0) {
      for (int qq = 0; qq < npv; ++qq) adj_p[qq] += ap[qq];
    } else {
      for (int g = 0; g < n_grad_params; ++g) adj_p[grad_params[g]] += ap[grad_params[g]];
    }
  }

  // the reference: vector-Jacobian product of step by forward-mode duals over x, u and the
  // parameters in grad_params, 8 columns per pass (rk4's adjoint; the tests' reference)
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_dual(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                              PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    if (!ln.leader()) return;
    dual_adj_step<Articulated, S>(*this, k, x, u, p, adj_x, adj_u, adj_p, adj_xn,
                                  n_grad_params < 0 ? nullptr : grad_params, n_grad_params);
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
  // (bool for a scalar S, the lanes' mask for a pack)
  template <class S, class XIn, class PIn>
  STEER_HD auto in_contact(const XIn& x, const PIn& p, int c) const {
    (void)c;
    return penetration<S>(x, p) > S(0);
  }

  // centre of mass of all bodies along an axis [m]: Σ m_b c_b / Σ m_b
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int ax) const {
    Kin<S> K;
    S mt = S(0);
    return center_of_mass_kin(x, p, ax, K, mt);
  }
  // the same, keeping the kinematics of x's joint positions in K and the total mass Σ m_b in mt
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass_kin(const XIn& x, const PIn& p, int ax, Kin<S>& K, S& mt) const {
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

  // E = ½ q̇ᵀ M(q) q̇ + Σ m_b g z_b, the kinetic plus gravitational energy, and KE = ½ q̇ᵀ M(q) q̇
  // (armature included, as MuJoCo counts it) [J], from one kinematics pass and one M(q)
  template <class S, class XIn, class PIn>
  STEER_HD void energies(const XIn& x, const PIn& p, S& e, S& ke) const {
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
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const {
    S e, ke;
    energies<S>(x, p, e, ke);
    return ke;
  }
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const {
    S e, ke;
    energies<S>(x, p, e, ke);
    return e;
  }
  // conservative when no damping, no PD gains and no contact: then, with zero controls,
  // an energy change is the integrator's error
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    // the limit and contact forces have potentials, but energy() does not include them
    if (contact || joint_limits) return false;
    for (int j = 0; j < n_dof; ++j)
      if (!(S(p[p_joint(j, kDamping)]) == S(0) && S(p[p_joint(j, kKp)]) == S(0) && S(p[p_joint(j, kKv)]) == S(0)))
        return false;
    return true;
  }
};

// Articulated with the integrator known at compile time to be euler or implicitfast, for the
// CUDA backend. Articulated's step and adjoint branch on `integrator` at run time, so a
// kernel instantiated for it compiles the rk4 step (four accelerations) and rk4's dual-number
// adjoint (Dual<S, 8> copies of the whole step) alongside the hand adjoint, and ptxas sizes
// the per-thread stack for all of them, reserved as local memory for every resident thread.
// This type's step and adjoint entry points leave rk4 out, and its centre-of-mass adjoint is
// by hand, so its kernels' frames hold only what the hand path uses (sm_90, float64 backward
// kernel: 17,344 bytes, was 192,720). Everything else is Articulated's; the CPU backend keeps
// Articulated. The caller converts only a model whose integrator is not kRk4 (the CUDA
// launcher checks; an rk4 model would be stepped as euler here).
struct ArticulatedImplicit : Articulated {
  ArticulatedImplicit() = default;
  STEER_HD explicit ArticulatedImplicit(const Articulated& a) : Articulated(a) {}

  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    StepTape<S> t;
    step_implicit<S>(x, u, p, xn, t);
  }
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_taped(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& t,
                           const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    step_implicit<S>(x, u, p, xn, t);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                         const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    adj_step_implicit<S>(x, u, p, adj_x, adj_u, adj_p, adj_xn);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& t, XAdj& adj_x,
                               UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    (void)k, (void)u;
    if (!ln.leader()) return;
    adj_step_implicit_taped<S>(x, p, t, adj_x, adj_u, adj_p, adj_xn);
  }

  // Articulated's adj_center_of_mass by hand: its ∂c/∂q runs the kinematics on Dual<S, 8>
  // (Kin<Dual> alone is ~13 kB in float64), once per call site in the backward kernel. Here
  // c = Σ m_b c_b / Σ m_b sends c̄_b = c̄ m_b/Σm (along the axis) to each centre of mass, and
  // adj_forward_kinematics takes those back to q: q̄_j = a_j · Σ_subtree (c_b − p_j) × c̄_b
  // (hinge), a_j · Σ_subtree c̄_b (slide). The parameter terms are Articulated's formulas:
  // ∂c/∂m_b = (c_b − c)/Σm, ∂c/∂com_b = m_b/Σm · R_b[axis, :]. Equal to the dual version up
  // to rounding in q̄ (articulated_test compares them).
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const {
    Kin<S> K;
    S mt = S(0);
    const S cm = center_of_mass_kin(x, p, ax, K, mt);
    KinAdj<S> KA;
    for (int b = 0; b < n_bodies; ++b) {
      const S m = p[p_body(b, kMass)];
      adj_p[p_body(b, kMass)] += adj_c * (K.C[b][ax] - cm) / mt;
      for (int j = 0; j < 3; ++j) adj_p[p_body(b, kComX + j)] += adj_c * m / mt * K.R[b][3 * ax + j];
      for (int i = 0; i < 3; ++i) KA.P[b][i] = S(0), KA.A[b][i] = S(0), KA.C[b][i] = S(0), KA.T[b][i] = S(0);
      KA.C[b][ax] = adj_c * m / mt;
    }
    S aq[kMaxDof] = {};
    // com̄_b is added above, so adj_forward_kinematics writes no parameter (want_com = false)
    adj_forward_kinematics(K, aq, static_cast<S*>(nullptr), KA, false);
    for (int i = 0; i < n_dof; ++i) adj_x[i] += aq[i];
  }
};

}  // namespace steer
