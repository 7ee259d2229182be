// ArticulatedCap (Articulated, ArticulatedLarge): the model's data (the tree, joint types and axes,
// the parameters' slots in θ), the intermediates its algorithms share (Kin, RneaWork, StepTape,
// KinAdj), and the declarations of its member functions, each defined with its adjoint in its
// algorithm's header (articulated.h includes them all). Parameter slots:
//   θ = [body b: kBodyParams each][joint j: kJointParams each][kGlobalParams],
//   p_body(b, k) = 13 b + k,  p_joint(j, k) = 13 n_bodies + 8 j + k,  p_global(k) = 13 n_bodies + 8
//   n_dof + k, p_contact(k) = p_global(kGlobalParams) + k (contact_set.h),
//   p_tendon(t, k) = p_contact(GroundContacts::kParams) + kTendonParams t + k (fixed tendons),
//   p_fluid(k) = p_tendon(n_tendons, 0) + k (fluid forces, when on),
//   p_frictionloss(j) = p_fluid(kFluidParams when fluid, else 0) + j (joint friction, when on),
//   p_ground(c, k), p_design(i) after them (model.morphology, when on).
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "steer/core.h"
#include "steer/dual.h"
#include "steer/model_contract.h"
#include "steer/models/articulated/contact_set.h"
#include "steer/model_math.h"
#include "steer/reference_adjoint.h"

namespace steer {

// The model's fields whose size does not depend on its capacity: the counts, the integrator and
// the options and the tip. ArticulatedCap adds the arrays sized by the capacity and the ground
// contacts; articulated_copy copies this part by one assignment.
struct ArticulatedSettings {
  enum Integrator {
    kEuler = 0,
    kImplicitFast = 1,
    kRk4 = 2
  };  // bit i of a compiled-integrators mask

  int n_bodies = 0;
  int n_dof = 0;
  double dt = 0.002;  // h [s]
  // the direction gravity acts in, world frame, unit; its magnitude g [m/s²] is θ's gravity slot,
  // so the gravitational acceleration is g · gravity_dir (MuJoCo's opt.gravity = g · gravity_dir)
  double gravity_dir[3] = {0, 0, -1};
  int integrator = kEuler;
  // the first body is a free root: dofs 0 … 5, bodies 0 … 5 (ArticulatedCap); other bodies
  // on the world may have free joints of their own (free_slide, ball_dof)
  bool free_base = false;
  // ball groups (a ball joint, or a free root's rotation): three hinge dofs at angle zero whose
  // orientation is a quaternion in q (ArticulatedCap::ball_dof); the free root's is the first
  int n_balls = 0;
  int servo_newton =
      0;  // Newton iterations of the servo implicit through saturation (implicitfast; 0 = MuJoCo's)
  bool torque_limits = true;
  bool contact = false;
  bool joint_limits = false;
  double limit_stiffness = 0;     // k_l [N·m/rad or N/m]
  double limit_smoothing = 0.01;  // w_l [rad or m], > 0
  // contact point: body and position in that body's frame [m]
  int tip_body = -1;
  double tip_offset[3] = {};
  // ground contact points beyond the tip (contact_set.h, contact.h)
  GroundContacts ground;
  int n_sites = 0;
  int n_pairs = 0;  // contact pairs between two bodies (contact.h, pair_contact_forces)
  // fixed tendons (MuJoCo's <fixed>): at most kMaxDof; each a length L_t = Σ_j c_tj q_j over
  // hinges and slides (ArticulatedCap::tendon_coef), with a spring, a damper and an optional
  // range (actuator.h)
  int n_tendons = 0;
  // fluid forces, MuJoCo's inertia-box model (fluid.h): θ's fluid slots (density, viscosity,
  // wind) follow the tendons'; only capacities with kFluid run them
  bool fluid = false;
  // spatial tendons among the tendons (spatial_tendon.h): only capacities with kFluid run them
  int n_spatial = 0;
  // joint friction (MuJoCo's frictionloss, joint_friction.h): τ_j = −F_j tanh(q̇_j / v_f) with
  // F_j θ's p_frictionloss(j) slot [N·m or N] and v_f the smoothing speed [rad/s or m/s]; only
  // capacities with kFluid run it
  bool joint_friction = false;
  double frictionloss_velocity = 0.1;
  // morphology slots (config model.morphology; only capacities with kFluid run them): each ground
  // point's centre in its body's frame and its radius are θ's p_ground(c, k) slots instead of
  // the constants ground.pos and ground.radius (contact.h's ground_point), and n_design design
  // slots follow them (a body's scale, a geom's radius, half-length and centre) that the step
  // never reads: the runner maps them onto the body and point slots before a batch runs
  // (src/models/articulated/morphology.h) and their gradient back after
  bool morphology = false;
  int n_design = 0;
  // actuator activations (activation.h): states after q̇, one per joint with act_kind ≠ kActNone
  int n_act = 0;
  // parameters whose gradient adj_step computes; −1 = all (the hand adjoint gets them all at
  // little extra cost; the dual path pays 1/8 of a dual pass per parameter)
  int n_grad_params = -1;
};

// The model at a capacity fixed at compile time: NB bodies, ND joints, NS sites, NP ground
// contact points, NC contact pairs between bodies (0: none; their adjoint is the dual-number
// one, so only the CPU's scalar capacity has them). Every array
// below (the tree, Kin, RneaWork, StepTape's A[ND²], KinAdj, θ's kMaxParam slots) is sized by
// them, so a GPU thread's frame, and hence its registers and local memory, grows with the
// capacity, not with the tree it runs: small robots keep Articulated (10, 8, 8), and trees
// beyond it take ArticulatedLarge (32, 32, 8) on the CPU (articulated_model.cpp picks).
// The arrays, each listed in articulated_arrays below, are sized by the capacity; the rest is
// ArticulatedSettings.
template <int NB, int ND, int NS, int NP, int NC>
struct ArticulatedCap : ArticulatedSettings {
  static constexpr int kMaxBodies = NB;
  static constexpr int kMaxDof = ND;
  static constexpr int kBodyParams = 13;
  static constexpr int kJointParams = 8;
  static constexpr int kGlobalParams = 6;
  static constexpr int kTendonParams = 3;
  static constexpr int kMaxTendons = ND;
  static constexpr int kFluidParams = 5;
  // fluid forces (fluid.h) have a hand adjoint on the scalar path only: the capacity that has
  // them is the CPU's scalar one, which also has the contact pairs. Only it counts their θ
  // slots in kMaxParam, so that the other capacities' per-thread arrays (θ̄ in the kernels)
  // keep their size
  static constexpr bool kFluid = NC > 0;
  static constexpr int kFluidRows = kFluid ? NB : 1;  // the fluid arrays' rows
  // spatial tendons (spatial_tendon.h), the same capacity: at most kMaxPath sites each
  static constexpr int kMaxPath = 8;
  static constexpr int kSpatialRows = kFluid ? ND : 1;
  // ball groups (a free root's rotation included): three dofs each
  static constexpr int kMaxBalls = ND / 3 > 0 ? ND / 3 : 1;
  // x = [q (nq), q̇ (n_dof), a (n_act)]: nq = n_dof + n_balls (each ball's quaternion has 4
  // entries for its 3 dofs), a the joints' actuator activations (activation.h), at most one each
  static constexpr int kMaxQ = kMaxDof + kMaxBalls;
  static constexpr int kMaxState = kMaxQ + 2 * kMaxDof;
  static constexpr int kMaxControl = kMaxDof;
  // the morphology slots (model.morphology): a ground point's centre and radius, and the design
  // slots (a scale per body; per geom, at most one per ground point, its radius, half-length
  // and centre)
  static constexpr int kGroundPointParams = 4;
  static constexpr int kMaxDesign = kMaxBodies + 5 * NP;
  static constexpr int kMaxParam =
      kMaxBodies * kBodyParams + kMaxDof * kJointParams + kGlobalParams + GroundContacts::kParams +
      kMaxTendons * kTendonParams +
      (kFluid ? kFluidParams + kMaxDof + kGroundPointParams * NP + kMaxDesign : 0);
  static constexpr int kMaxContacts = 1;
  static constexpr int kMaxSites = NS;
  static constexpr int kMaxGroundPoints = NP;
  static constexpr int kMaxPairs = NC;
  static constexpr int kPairRows = NC > 0 ? NC : 1;  // the pair arrays' rows (C++ has no [0])
  static constexpr int kSatTape = 6;  // saturate()'s taped values per joint (σ_a, 1 − σ_a, σ_b, 1 −
                                      // σ_b, softplus_a, softplus_b)

  enum JointType { kFixed = 0, kHinge = 1, kSlide = 2 };
  // a joint's actuator activation (activation.h): none, MuJoCo's filter, filterexact, integrator
  enum ActivationKind { kActNone = 0, kActFilter, kActFilterExact, kActIntegrator };
  // A ball group: three dofs whose velocities are the angular velocity ω [rad/s] of a body
  // relative to its parent, in the body's own frame, and whose configuration is one unit
  // quaternion n (w, x, y, z) in q, MuJoCo's ball joint (qpos = quat, qvel = ω local). Its dofs
  // d, d + 1, d + 2 (ball_dof) are hinges about the frame's x, y, z on three bodies chained at
  // one anchor: two massless frames, then the body itself (turn = 1, 2, 3), all at angle zero;
  // the first takes R_parent · R_tree · R(n) as its rotation. The velocity-level algorithms
  // (mass matrix, Jacobians, contact, the kinematics' adjoint sweep) then need nothing else;
  // the configuration and the velocity product α ∋ ω_P × R ω (ω_P the ball's parent's, not
  // the previous frame's: the three axes turn with the body) do (kinematics.h, dynamics.h,
  // implicit_step.h, integrators.h).
  // A free root (free_base): a 6-DoF joint between the world and the tree's root, in
  // MuJoCo's convention, q = [p (3, world) [m], quat (w, x, y, z)], q̇ = [v (3) [m/s], the
  // linear velocity of the root's origin in the world frame, ω (3) [rad/s] in the root's body
  // frame], so its q has 7 entries for 6 dofs: three slides along the world axes (bodies 0, 1,
  // 2, massless frames), then a ball group (bodies 3, 4, 5; 5 the root body itself). A free
  // joint on another child of the world (a second floating body: a ball, an object) is the same
  // six dofs on five frames of its own, in its place in the tree's order (free_slide).
  static constexpr int kFreeDofs = 6;
  static constexpr int kFreeFrames = 5;  // bodies 0 … 4, massless
  // per body: mass, centre of mass (body frame), inertia about it, and the body's origin in its
  // parent's frame (its `pos`: the link offset, a morphology variable; kinematics.h)
  enum BodyParam {
    kMass = 0,
    kComX,
    kComY,
    kComZ,
    kIxx,
    kIyy,
    kIzz,
    kIxy,
    kIxz,
    kIyz,
    kPosX,
    kPosY,
    kPosZ
  };
  // per joint: damping D, armature, the servo's k_p, k_v and target q*, the force limit τ_max, and
  // the joint spring τ_s = −k_s (q − q_s) (MuJoCo's stiffness and springref)
  enum JointParam {
    kDamping = 0,
    kArmature,
    kKp,
    kKv,
    kTarget,
    kForceLimit,
    kStiffness,
    kSpringRef
  };
  // per fixed tendon t: the spring's stiffness k_t [force per unit of tendon length] and rest
  // length L0_t (MuJoCo's stiffness and springlength) and the damping d_t [force·s per unit
  // length]: f_t = −k_t (L_t − L0_t) − d_t L̇_t (+ the limit's, actuator.h), τ_j += c_tj f_t
  enum TendonParam { kTendonStiffness = 0, kTendonSpringLength, kTendonDamping };
  // the fluid (fluid.h): density ρ [kg/m³], viscosity β [Pa·s] and the wind [m/s], world frame
  enum FluidParam { kFluidDensity = 0, kFluidViscosity, kFluidWindX, kFluidWindY, kFluidWindZ };
  enum GlobalParam {
    kGravity = 0,
    kSharpness,
    kPlaneHeight,
    kContactStiffness,
    kContactDamping,
    kContactSmoothing
  };

  // ground contact points beyond the tip (contact_set.h, contact.h)
  GroundContactsCap<NP> ground;
  double limit_lower[kMaxDof] = {}, limit_upper[kMaxDof] = {};  // joint ranges [rad or m]
  // each hinge or slide turns or moves by q − q_ref from the pose the tree describes (MuJoCo's
  // ref, its qpos0): the body frames below are the file's at q = q_ref [rad or m]
  double joint_ref[kMaxDof] = {};
  // tree, bodies in topological order
  // (a body's origin in its parent's frame [m] is θ's p_body(b, kPosX …): a morphology slot)
  double rot[kMaxBodies][9] = {};   // parent→body rotation, row-major (from the unit quaternion)
  double axis[kMaxBodies][3] = {};  // joint axis, body frame, unit
  // joint anchor in the body frame [m] (MJCF's joint pos): a hinge turns the body about the
  // line through this point. Kin's P is the anchor, so the dynamics and adjoints, which take
  // moments about P, need nothing else; the body origin is P − R jpos.
  double joint_pos[kMaxBodies][3] = {};
  // sites: named points (and frames) fixed in a body, for losses and reports; pos and rot in
  // the body frame (rot: site→body, row-major)
  double site_pos[kMaxSites][3] = {};
  double site_rot[kMaxSites][9] = {};
  // fixed tendon t's coefficient c_tj of dof j [tendon length per rad or m] at
  // tendon_coef[t · n_dof + j] (flat, stride n_dof, so that its rows copy between capacities);
  // zero on a free root's dofs
  double tendon_coef[kMaxTendons * kMaxDof] = {};
  // tendon t's range [lo, hi] [tendon length], a penalty force outside it under model.joint_limits'
  // law (actuator.h) when tendon_limited[t] and joint_limits
  double tendon_lower[kMaxTendons] = {}, tendon_upper[kMaxTendons] = {};
  // (the arrays by element size, doubles first: no padding between them)
  int parent[kMaxBodies] = {};  // −1 = world
  int joint[kMaxBodies] = {};   // JointType
  int dof[kMaxBodies] = {};     // dof index of the body's joint, −1 if fixed
  int body_of_dof[kMaxDof] = {};
  // dof j's slot in q (set_q_layout): its angle or displacement, or for a ball's dofs the first
  // of its quaternion's four
  int q_index[kMaxDof] = {};
  int ball_dof[kMaxBalls] = {};  // ball group k's first dof, ascending
  // 1, 2, 3: dof j is that world slide (x, y, z) of a free joint, its body's position; 0: not
  int free_slide[kMaxDof] = {};
  int turn[kMaxBodies] = {};      // 1, 2, 3: body b is that turning frame of a ball group; 0: not
  int site_body[kMaxSites] = {};  // the body site s is fixed in, −1 for the world
  // contact pair c between two geoms, sides k = 0, 1, each fixed in body pair_body[c][k]'s frame
  // (−1: the world), of shape pair_shape[c][k] (pair_geometry.h's PairShape): a sphere or
  // capsule, pair_end its segment's two ends (a sphere's centre twice) and pair_radius its radius;
  // a plane, pair_end its point and unit normal; a box, pair_end its centre and half-sizes and
  // pair_rot its axes (box → body, row-major)
  int pair_body[kPairRows][2] = {};
  int pair_shape[kPairRows][2] = {};
  double pair_end[kPairRows][2][2][3] = {};  // [side][end] [m]
  double pair_radius[kPairRows][2] = {};     // [m]
  double pair_rot[kPairRows][2][9] = {};
  // pair c's friction over θ[contact.friction] (1: the model's; a pair with its own, MuJoCo's
  // per-pair friction, keeps its ratio when contact.friction varies)
  double pair_friction_scale[kPairRows] = {};
  // joint j's activation time constant τ [s] (the filters'; activation.h)
  double act_tau[kMaxDof] = {};
  // the fluid's box of body b (fluid.h): its principal axes in b's frame (box→body rotation,
  // row-major: column k is axis k), and whether b takes fluid forces (a body with mass)
  double fluid_frame[kFluidRows][9] = {};
  int tendon_limited[kMaxTendons] = {};  // 1: tendon t has a range
  int fluid_body[kFluidRows] = {};
  // joint j's activation: its ActivationKind, its state's index in the activation block (x's
  // nq + n_dof + act_slot[j]) and whether the torque takes a⁺ (MuJoCo's actearly) rather than a
  int act_kind[kMaxDof] = {};
  int act_slot[kMaxDof] = {};
  int act_early[kMaxDof] = {};
  // tendon t's path when it is spatial (tendon_path_n[t] ≥ 2 sites, indices into the sites),
  // 0 for a fixed tendon (its row of tendon_coef)
  int tendon_path_n[kSpatialRows] = {};
  int tendon_path[kSpatialRows][kMaxPath] = {};
  short grad_params[kMaxParam] = {};  // the n_grad_params parameters adj_step computes

  STEER_HD int nq() const { return n_dof + n_balls; }
  STEER_HD int nx() const { return nq() + n_dof + n_act; }
  // dof j's slot in q: its angle or displacement (the free root's p for j < 3); a ball's dofs
  // have no angle, their quaternion starts there
  STEER_HD int qadr(int j) const { return n_balls == 0 ? j : q_index[j]; }
  // dof j belongs to a ball group (no angle of its own)
  STEER_HD bool ball_dof_of(int j) const { return turn[body_of_dof[j]] != 0; }
  // dof j takes its control as a direct generalized force: a free joint's or a ball's (no servo,
  // saturation, limit or spring; damping and armature apply)
  STEER_HD bool free_dof(int j) const { return free_slide[j] != 0 || ball_dof_of(j); }
  // body b is a ball group's turning frame (its hinge has no angle of its own)
  STEER_HD bool ball_frame(int b) const { return turn[b] != 0; }
  // the body a ball's turning frame b turns relative to (the first frame's parent; −1: world)
  STEER_HD int ball_parent(int b) const { return parent[b - turn[b] + 1]; }
  // q_index from n_dof and the ball groups (host, once the tree is built)
  void set_q_layout() {
    int shift = 0, k = 0;
    for (int j = 0; j < n_dof; ++j) {
      if (k < n_balls && j == ball_dof[k]) {
        q_index[j] = q_index[j + 1] = q_index[j + 2] = j + shift;
        j += 2, ++shift, ++k;
      } else {
        q_index[j] = j + shift;
      }
    }
  }
  STEER_HD int nu() const { return n_dof; }
  // the contact pairs this capacity runs: n_pairs, and 0 where the capacity has none (NC = 0,
  // the packed and CUDA ones), a constant there, so that the diagnostics' pair branches are
  // compiled out of the kernels
  STEER_HD int pair_count() const { return kMaxPairs > 0 ? n_pairs : 0; }
  // whether tendon t is spatial (a path through sites, spatial_tendon.h), never where the
  // capacity has none
  STEER_HD bool tendon_spatial(int t) const {
    return kFluid && n_spatial > 0 && tendon_path_n[kFluid ? t : 0] >= 2;
  }
  // d · v for gravity's direction d (gravity_dir): a height is −d · x
  template <class S>
  STEER_HD S gravity_along(const S* v) const {
    return S(gravity_dir[0]) * v[0] + S(gravity_dir[1]) * v[1] + S(gravity_dir[2]) * v[2];
  }
  // (at a capacity without kFluid a compile-time p_tendon(n_tendons, 0): the kernels' θ loops
  // stay as they were)
  STEER_HD int np() const {
    if (!kFluid) return p_tendon(n_tendons, 0);
    return morphology ? p_design(n_design) : p_morphology();
  }
  STEER_HD int p_body(int b, int k) const { return b * kBodyParams + k; }
  STEER_HD int p_joint(int j, int k) const { return n_bodies * kBodyParams + j * kJointParams + k; }
  STEER_HD int p_global(int k) const { return n_bodies * kBodyParams + n_dof * kJointParams + k; }
  STEER_HD int p_contact(int k) const { return p_global(kGlobalParams) + k; }
  STEER_HD int p_tendon(int t, int k) const {
    return p_contact(GroundContacts::kParams) + t * kTendonParams + k;
  }
  STEER_HD int p_fluid(int k) const { return p_tendon(n_tendons, 0) + k; }
  STEER_HD int p_frictionloss(int j) const { return p_fluid(fluid ? kFluidParams : 0) + j; }
  // the morphology slots (model.morphology): ground point c's centre (k = 0, 1, 2, body frame
  // [m]) and radius (k = 3 [m]), then the design slots
  STEER_HD int p_morphology() const {
    return joint_friction ? p_frictionloss(n_dof) : p_fluid(fluid ? kFluidParams : 0);
  }
  STEER_HD int p_ground(int c, int k) const { return p_morphology() + kGroundPointParams * c + k; }
  STEER_HD int p_design(int i) const { return p_ground(ground.n_points, 0) + i; }
  // whether the ground points' geometry is read from θ (never where the capacity has no
  // morphology slots: a constant there, so that the kernels keep the constants)
  STEER_HD bool ground_in_theta() const { return kFluid && morphology; }
  // c_tj (tendon_coef)
  STEER_HD double tendon_c(int t, int j) const { return tendon_coef[t * n_dof + j]; }

  // world-frame kinematics of every body for one configuration q
  template <class S>
  struct Kin {
    S R[kMaxBodies][9];  // body→world rotation
    S P[kMaxBodies][3];  // body origin (joint anchor) [m]
    S A[kMaxBodies][3];  // joint axis, world [unit]
    S C[kMaxBodies][3];  // centre of mass [m]
  };

  // the Newton–Euler sweeps' intermediates, kept for the adjoint (adj_dynamics_form)
  template <class S>
  struct RneaWork {
    S w[kMaxBodies][3];   // angular velocity ω_b [rad/s]
    S al[kMaxBodies][3];  // angular acceleration α_b [rad/s²]
    S ao[kMaxBodies]
        [3];  // acceleration of the body origin p_b, gravity as an upward base acceleration [m/s²]
    S F[kMaxBodies]
       [3];  // after the inward sweep: force the subtree of b takes through its joint [N]
    S N[kMaxBodies][3];    // after the inward sweep: the subtree's moment about p_b [N·m]
    S Iw[kMaxBodies][9];   // world inertia about the centre of mass [kg·m²]
    S ac[kMaxBodies][3];   // acceleration of the centre of mass [m/s²]
    S Iwv[kMaxBodies][3];  // I_w ω [kg·m²/s]
    S gyr[kMaxBodies][3];  // ω × I_w ω [N·m]
  };

  // What the hand adjoint needs of one euler / implicitfast step (rollout.h's step tape):
  // the kinematics, the Newton–Euler intermediates, A = L Lᵀ (L in the lower triangle, M's
  // strict upper triangle above it), M's diagonal, q̇⁺, and per joint τ_raw, s' and the
  // saturation's sigmoids. About 5 kB per step in float64 for the Panda.
  template <class S>
  struct StepTape {
    Kin<S> K;
    RneaWork<S> W;
    S A[kMaxDof * kMaxDof], vp[kMaxDof], mdiag[kMaxDof], raw[kMaxDof], slope[kMaxDof],
        sig[kSatTape * kMaxDof];
  };

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

  // the parameter groups whose adjoint a hand adjoint must form (n_grad_params < 0: all); the
  // rest of its θ̄ is left out of the sums
  struct GradGroups {
    bool com, inertia, beta, pos;
  };
  STEER_HD GradGroups grad_groups() const {
    const bool all = n_grad_params < 0;
    GradGroups g{all, all, all, all};
    for (int i = 0; i < n_grad_params; ++i) {
      const int qq = grad_params[i];
      g.beta = g.beta || qq == p_global(kSharpness);
      if (qq >= p_joint(0, 0)) continue;
      const int kk = qq % kBodyParams;
      g.com = g.com || (kk >= kComX && kk <= kComZ);
      g.inertia = g.inertia || (kk >= kIxx && kk <= kIyz);
      g.pos = g.pos || kk >= kPosX;
    }
    return g;
  }
  // θ̄ += ap over the parameters whose gradient is asked for (grad_params, or all)
  template <class S, class PAdj>
  STEER_HD void add_param_adjoint(const S* ap, PAdj& adj_p) const {
    if (n_grad_params < 0) {
      for (int qq = 0; qq < np(); ++qq) adj_p[qq] += ap[qq];
    } else {
      for (int g = 0; g < n_grad_params; ++g) adj_p[grad_params[g]] += ap[grad_params[g]];
    }
  }

  // the servo implicit through the saturation: safeguarded line-search steps per Newton
  // iteration, and the tolerance |ψ(α)| ≤ kServoLineSearchTol ψ(0) (servo.h)
  static constexpr int kServoLineSearch = 8;
  static constexpr double kServoLineSearchTol = 1e-3;
  STEER_HD bool implicit_servo() const { return integrator == kImplicitFast && servo_newton > 0; }
  STEER_HD int num_contacts() const;  // contact.h

  // world kinematics and its adjoint (kinematics.h)
  template <class S>
  STEER_HD static void cross(const S* a, const S* b, S* o);
  template <class S>
  STEER_HD static void adj_cross(const S* a, const S* b, S* adj_a, S* adj_b, const S* adj_o);
  template <class S>
  STEER_HD static S dot(const S* a, const S* b);
  template <class S, class T>
  STEER_HD static void rotate(const S* R, const T* v, S* o);
  template <class S, class PIn>
  STEER_HD void forward_kinematics(const S* q, const PIn& p, Kin<S>& K) const;
  template <class S, class QIn, class PAdj>
  STEER_HD void adj_forward_kinematics(const Kin<S>& K, S* adj_q, PAdj& adj_p, KinAdj<S>& KA,
                                       bool want_com, bool want_pos, const QIn& q) const;
  // ball groups: R(quat/|quat|) and quat ⊗ exp(h ω/2) with its adjoint (kinematics.h)
  template <class S>
  STEER_HD static void quat_matrix(const S* quat, S* R);
  template <class S>
  STEER_HD static void quat_step(const S* quat, const S* w, const S& h, S* out);
  template <class S>
  STEER_HD static void adj_quat_step(const S* quat, const S* w, const S& h, const S* adj_out,
                                     S* adj_quat, S* adj_w);
  template <class S, class QIn>
  STEER_HD void adj_ball_turn(const Kin<S>& K, int b, const QIn& q, const S* T, S* adj_q) const;
  template <class S, class PIn>
  STEER_HD void world_inertia(const Kin<S>& K, const PIn& p, int b, S* Iw) const;
  template <class S>
  STEER_HD void adj_world_inertia_rank1(const Kin<S>& K, int b, const S* u, const S* v, const S* Iu,
                                        const S* Iv, S* adj_T, S* adj_p, bool want_inertia) const;
  template <class S>
  STEER_HD void point_jacobian(const Kin<S>& K, int e, const S* x, S* jv) const;
  template <class S>
  STEER_HD void body_point(const Kin<S>& K, int b, const double* pos, S* x) const;

  // sites (sites.h): world position [m] and orientation (site→world, row-major) of site s at
  // q = x[0 .. nq) with parameters p, and their adjoints, which add (∂out/∂x)ᵀ adj_out to
  // adj_x and (∂out/∂p)ᵀ adj_out to adj_p
  template <class S, class XIn, class PIn>
  STEER_HD void kinematics_at(const XIn& x, const PIn& p, Kin<S>& K) const;
  template <class S>
  STEER_HD void site_frame(const Kin<S>& K, int s, S out[9]) const;
  template <class S, class XIn, class XAdj, class PAdj>
  STEER_HD void adj_body_wrench(const Kin<S>& K, const XIn& x, int b, const S force[3],
                                const S moment[3], XAdj& adj_x, PAdj& adj_p) const;
  // the centre of mass's adjoint through the kinematics' adjoint (implicit.h's, and the free
  // root's on every path; sites.h)
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass_sweep(const XIn& x, const PIn& p, int ax, XAdj& adj_x,
                                         PAdj& adj_p, const S& adj_c) const;
  template <class S, class XIn, class PIn>
  STEER_HD void site_position(const XIn& x, const PIn& p, int s, S out[3]) const;
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_site_position(const XIn& x, const PIn& p, int s, XAdj& adj_x, PAdj& adj_p,
                                  const S adj_out[3]) const;
  template <class S, class XIn, class PIn>
  STEER_HD void site_rotation(const XIn& x, const PIn& p, int s, S out[9]) const;
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_site_rotation(const XIn& x, const PIn& p, int s, XAdj& adj_x, PAdj& adj_p,
                                  const S adj_out[9]) const;

  // mass matrix, bias forces and their adjoint (dynamics.h)
  template <class S, class PIn>
  STEER_HD void mass_matrix(const Kin<S>& K, const PIn& p, S* M) const;
  template <class S, class PIn>
  STEER_HD void bias_forces(const Kin<S>& K, const S* v, const PIn& p, S* c) const;
  template <class S, class PIn>
  STEER_HD void bias_forces(const Kin<S>& K, const S* v, const PIn& p, S* c, RneaWork<S>& W) const;
  template <class S, class PIn>
  STEER_HD void adj_dynamics_form(const Kin<S>& K, const S* v, const PIn& p, const RneaWork<S>& W,
                                  const S* lam, const S* w, const S& h, KinAdj<S>& KA, S* adj_v,
                                  S* adj_p, bool want_inertia) const;

  // the contact forces of the fingertip and the ground points, their adjoint, and the
  // fingertip's position (contact.h)
  template <class S>
  STEER_HD void tip_position(const Kin<S>& K, S* x) const;
  template <class S, class PIn>
  STEER_HD void contact_forces(const Kin<S>& K, const S* v, const PIn& p, S* tc) const;
  template <class S, class PIn>
  STEER_HD void adj_contact_forces(const Kin<S>& K, const S* v, const PIn& p, const S* mu,
                                   KinAdj<S>& KA, S* adj_v, S* adj_p) const;

  // torque saturation, joint-limit torque and their adjoints (actuator.h)
  template <class S, class PIn>
  STEER_HD S saturate(const PIn& p, int j, const S& raw, S& slope, S* sig = nullptr) const;
  template <class S, class PIn>
  STEER_HD S adj_saturate(const PIn& p, int j, const S& raw, const S* sig, S* adj_p,
                          const S& adj_tau, const S& adj_slope, bool want_beta) const;
  template <class S>
  STEER_HD S limit_torque(int j, const S& qj) const;
  template <class S>
  STEER_HD S limit_slope(int j, const S& qj) const;
  template <class S, class PIn>
  STEER_HD S spring_torque(const PIn& p, int j, const S& qj) const;
  // the limit law k_l w_l [softplus((lo − x)/w_l) − softplus((x − hi)/w_l)] and its slope in x
  template <class S>
  STEER_HD S limit_law(double lo, double hi, const S& x) const;
  template <class S>
  STEER_HD S limit_law_slope(double lo, double hi, const S& x) const;
  // fixed tendons (actuator.h): L_t(q) = Σ_j c_tj q_j, L̇_t = Σ_j c_tj q̇_j, and the generalized
  // forces c_tj f_t added to tau (with the damping −d_t L̇_t when `damping`; implicitfast's is in A)
  template <class S, class QIn>
  STEER_HD S tendon_length(int t, const QIn& q) const;
  template <class S>
  STEER_HD S tendon_speed(int t, const S* v) const;
  template <class S, class PIn>
  STEER_HD void tendon_forces(const S* q, const S* v, const PIn& p, bool damping, S* tau) const;
  template <class S, class PIn>
  STEER_HD void add_tendon_damping(const PIn& p, S* A) const;

  // Cholesky factor and solve (cholesky.h)
  template <class S>
  STEER_HD static void cholesky_solve(int n, S* A, S* y);
  template <class S>
  STEER_HD static void cholesky_factor(int n, S* A);
  template <class S>
  STEER_HD static void cholesky_substitute(int n, const S* L, S* y);

  // the servo implicit through the saturation (servo.h)
  template <class S, class UIn, class PIn>
  STEER_HD void servo_solve(const S* q, const UIn& u, const PIn& p, StepTape<S>& t) const;

  // the euler / implicitfast step and its hand adjoint, and rk4's right-hand side with its tape
  // (implicit_step.h)
  template <class S, class UIn, class PIn>
  STEER_HD void applied_forces(const S* q, const S* v, const UIn& u, const PIn& p, Kin<S>& K,
                               RneaWork<S>& W, S* M, S* f, S* raw, S* slope, S* sig) const;
  template <class S, class UIn, class PIn>
  STEER_HD void acceleration_system(const S* q, const S* v, const UIn& u, const PIn& p,
                                    StepTape<S>& t) const;
  template <class S, class PIn, class UAdj>
  STEER_HD void adj_applied_forces(const S* q, const S* v, const PIn& p, const StepTape<S>& t,
                                   const S* lam, const S* mu, const S* wv, const S& h,
                                   KinAdj<S>& KA, S* aq, S* av, UAdj& adj_u, S* ap) const;
  template <class S, class UIn, class PIn>
  STEER_HD void implicit_system(const S* q, const S* v, const UIn& u, const PIn& p, Kin<S>& K,
                                RneaWork<S>& W, S* M, S* mdiag, S* rhs, S* raw, S* slope,
                                S* sig = nullptr) const;
  template <class S, class UIn, class PIn>
  STEER_HD void fill_tape(const S* q, const S* v, const UIn& u, const PIn& p, StepTape<S>& t) const;
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void semi_implicit_advance(const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                                      StepTape<S>& t) const;
  template <class S, class XIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_semi_implicit_from_tape(const XIn& x, const PIn& p, const StepTape<S>& t,
                                            XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                                            const XnAdj& adj_xn) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_semi_implicit_recompute(const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                            UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn) const;

  // The step and its adjoint, the model's only entry points (model_contract.h), and rk4
  // (integrators.h). The integrator (the run-time field, among those compiled in kIntegrators)
  // and the step tape (NoTape, StepTape<S>* to fill, const StepTape<S>* to read) select the
  // path; only the leading lane works (a small state).
  template <class S, unsigned kIntegrators = kAllIntegrators, class XIn, class UIn, class PIn,
            class XOut, class Tape = NoTape>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}, Tape tape = nullptr) const;
  template <class S, unsigned kIntegrators = kAllIntegrators, class XIn, class UIn, class PIn,
            class XAdj, class UAdj, class PAdj, class XnAdj, class Tape = NoTape>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{},
                         Tape tape = nullptr) const;
  // step and adj_step without the activations (integrators.h): u is the torque input
  template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XOut, class Tape>
  STEER_HD void advance(const XIn& x, const UIn& u, const PIn& p, XOut& xn, Tape tape) const;
  template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XAdj, class UAdj,
            class PAdj, class XnAdj, class Tape>
  STEER_HD void adj_advance(const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                            PAdj& adj_p, const XnAdj& adj_xn, Tape tape) const;
  template <class S, class UIn, class PIn>
  STEER_HD void acceleration(const S* q, const S* v, const UIn& u, const PIn& p, S* qdd) const;
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void rk4_advance(const XIn& x, const UIn& u, const PIn& p, XOut& xn) const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void rk4_stages(const XIn& x, const UIn& u, const PIn& p, S (*qs)[kMaxQ],
                           S (*vs)[kMaxDof], S (*d)[kMaxQ], S (*a)[kMaxDof], StepTape<S>* tapes,
                           bool keep) const;
  template <class S>
  STEER_HD void quat_rates(const S* q, const S* v, S* d) const;
  template <class S>
  STEER_HD void adj_quat_rates(const S* q, const S* v, const S* adj_d, S* aq, S* av) const;
  template <class S, class PIn, class UAdj>
  STEER_HD void adj_acceleration(const S* q, const S* v, const PIn& p, const StepTape<S>& t,
                                 const S* adj_qdd, S* aq, S* av, UAdj& adj_u, S* ap) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_rk4_advance(const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                                PAdj& adj_p, const XnAdj& adj_xn) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_by_duals(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                             UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn) const;

  // diagnostics: penetration, centre of mass, energies (diagnostics.h)
  template <class S, class XIn, class PIn>
  STEER_HD S penetration(const XIn& x, const PIn& p) const;
  template <class S, class XIn, class PIn>
  STEER_HD auto in_contact(const XIn& x, const PIn& p, int c) const;
  template <class S, class XIn, class PIn, class F>
  STEER_HD void visit_contacts(const XIn& x, const PIn& p, F&& f) const;
  template <class S, class XIn, class PIn>
  STEER_HD auto contact_flag(const Kin<S>& K, const XIn& x, const PIn& p, int c) const;
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int ax) const;
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass_kin(const XIn& x, const PIn& p, int ax, Kin<S>& K, S& mt) const;
  template <class S, unsigned kIntegrators = kAllIntegrators, class XIn, class PIn, class XAdj,
            class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const;
  template <class S, class XIn, class PIn>
  STEER_HD void energies(const XIn& x, const PIn& p, S& e, S& ke) const;
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const;
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const;
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const;
};

// The arm-sized model: every existing use (the CPU scalar and packed paths, the CUDA kernels,
// Python) is of this capacity.
struct Articulated : ArticulatedCap<10, 8, 8, 8, 0> {
  // ---- the CPU backend's SIMD path (cpu_packed.h) ----
  // The step and its hand adjoint (euler and implicitfast from their tape, rk4 recomputing its
  // stages), called with S = simd.h's PackD: one rollout per lane, every lane the same topology,
  // the value branches (saturation and contact sides, adj_saturate's slope form) selects.
  bool packable() const { return true; }
  // The per-step diagnostics too run on packs (cpu_packed.h): in_contact<PackD> returns the
  // lanes' mask and energies<PackD> every lane's energies, each from one kinematics pass for
  // W rollouts instead of one per rollout
  static constexpr bool kPackedDiagnostics = true;
  // kernels/rollout_articulated*_<precision>.cu (backend.h, has_cuda_kernels)
  static constexpr bool kCudaKernels = true;
};

// Trees beyond Articulated's capacity (a humanoid's limbs, an arm with a gripper): up to 32
// bodies and 32 joints. It runs on the CPU's scalar path only (no packable(), so cpu_backend.h
// sends every batch there; no CUDA kernels are instantiated for it), which keeps the packed
// and CUDA objects, compiled per instruction set and per precision, to the small model.
struct ArticulatedLarge : ArticulatedCap<32, 32, 32, 64, 512> {};

// A legged robot on a free root: a quadruped's torso and 4 × 3 leg links with the free joint's
// five frames (18 bodies), its 18 joints (the free root's 6 and 12 hinges), and room for 2 more
// bodies and 8 sites. Like Articulated, and unlike ArticulatedLarge, it runs on the CPU's packs
// (cpu_packed_isa.cpp) and has CUDA kernels (kernels/rollout_articulated_legged_*.cu); the
// config parser picks it for a tree beyond Articulated that fits it.
struct ArticulatedLegged : ArticulatedCap<20, 18, 8, 8, 0> {
  bool packable() const { return true; }
  static constexpr bool kPackedDiagnostics = true;
  // kernels/rollout_articulated_legged*_<precision>.cu (backend.h, has_cuda_kernels)
  static constexpr bool kCudaKernels = true;
};

namespace articulated_detail {
// b = a for one row of an array: a value, or a fixed-size array (of arrays) of values
template <class T>
constexpr void copy_row(const T& a, T& b) {
  b = a;
}
template <class T, std::size_t N>
constexpr void copy_row(const T (&a)[N], T (&b)[N]) {
  for (std::size_t i = 0; i < N; ++i) copy_row(a[i], b[i]);
}
}  // namespace articulated_detail

// Every array of ArticulatedCap, with the rows of it in use: f(from's array, to's array, rows)
// for each, from and to of any capacities (their per-row shapes are the same). The one list of
// the arrays: articulated_copy copies through it, and checks that it covers the struct.
template <class From, class To, class F>
constexpr void articulated_arrays(From& from, To& to, F&& f) {
  const int nb = from.n_bodies, nd = from.n_dof, ns = from.n_sites, ng = from.n_grad_params,
            nc = from.ground.n_points, npair = from.n_pairs, nt = from.n_tendons,
            nf = from.fluid ? from.n_bodies : 0;
  f(from.limit_lower, to.limit_lower, nd);
  f(from.limit_upper, to.limit_upper, nd);
  f(from.joint_ref, to.joint_ref, nd);
  f(from.rot, to.rot, nb);
  f(from.axis, to.axis, nb);
  f(from.joint_pos, to.joint_pos, nb);
  f(from.site_pos, to.site_pos, ns);
  f(from.site_rot, to.site_rot, ns);
  f(from.tendon_coef, to.tendon_coef, nt * nd);
  f(from.tendon_lower, to.tendon_lower, nt);
  f(from.tendon_upper, to.tendon_upper, nt);
  f(from.parent, to.parent, nb);
  f(from.joint, to.joint, nb);
  f(from.dof, to.dof, nb);
  f(from.body_of_dof, to.body_of_dof, nd);
  f(from.q_index, to.q_index, nd);
  f(from.ball_dof, to.ball_dof, from.n_balls);
  f(from.free_slide, to.free_slide, nd);
  f(from.turn, to.turn, nb);
  f(from.site_body, to.site_body, ns);
  f(from.tendon_limited, to.tendon_limited, nt);
  f(from.fluid_frame, to.fluid_frame, nf);
  f(from.fluid_body, to.fluid_body, nf);
  f(from.tendon_path_n, to.tendon_path_n, from.n_spatial > 0 ? nt : 0);
  f(from.tendon_path, to.tendon_path, from.n_spatial > 0 ? nt : 0);
  f(from.grad_params, to.grad_params, ng);
  f(from.ground.body, to.ground.body, nc);
  f(from.ground.pos, to.ground.pos, nc);
  f(from.ground.radius, to.ground.radius, nc);
  f(from.pair_body, to.pair_body, npair);
  f(from.pair_shape, to.pair_shape, npair);
  f(from.pair_end, to.pair_end, npair);
  f(from.pair_radius, to.pair_radius, npair);
  f(from.pair_rot, to.pair_rot, npair);
  f(from.pair_friction_scale, to.pair_friction_scale, npair);
  f(from.act_tau, to.act_tau, nd);
  f(from.act_kind, to.act_kind, nd);
  f(from.act_slot, to.act_slot, nd);
  f(from.act_early, to.act_early, nd);
}
// the bytes of the arrays articulated_arrays lists, at capacity Cap
template <class Cap>
constexpr std::size_t articulated_array_bytes() {
  Cap c{};
  std::size_t bytes = 0;
  articulated_arrays(c, c, [&bytes](const auto& a, const auto&, int) { bytes += sizeof(a); });
  return bytes;
}
// whether the settings and the listed arrays make up all of Cap: a field of 8 bytes or more
// missing from articulated_arrays breaks this (the rest is padding, under 8 bytes)
template <class Cap>
constexpr bool articulated_arrays_complete() {
  const std::size_t listed =
      sizeof(ArticulatedSettings) + sizeof(GroundContactSettings) + articulated_array_bytes<Cap>();
  return sizeof(Cap) < listed + alignof(double) && listed < sizeof(Cap) + alignof(double);
}

// `to` becomes `from` at another capacity (same tree, same fields); the caller checks that the
// tree fits `to` (articulated_fits). The settings by one assignment, then the rows in use of
// every array.
template <class To, class From>
inline bool articulated_fits(const From& from) {
  return from.n_bodies <= To::kMaxBodies && from.n_dof <= To::kMaxDof &&
         from.n_sites <= To::kMaxSites && from.n_grad_params <= To::kMaxParam &&
         from.n_tendons <= To::kMaxTendons && from.ground.n_points <= To::kMaxGroundPoints &&
         from.n_pairs <= To::kMaxPairs && from.n_balls <= To::kMaxBalls &&
         (!from.fluid || To::kFluid) && (from.n_spatial == 0 || To::kFluid) &&
         (!from.joint_friction || To::kFluid) && (!from.morphology || To::kFluid);
}
template <class To, class From>
inline void articulated_copy(const From& from, To& to) {
  static_assert(articulated_arrays_complete<From>() && articulated_arrays_complete<To>(),
                "articulated_arrays must list every array of ArticulatedCap");
  static_cast<ArticulatedSettings&>(to) = static_cast<const ArticulatedSettings&>(from);
  static_cast<GroundContactSettings&>(to.ground) =
      static_cast<const GroundContactSettings&>(from.ground);
  articulated_arrays(from, to, [](const auto& a, auto& b, int rows) {
    for (int r = 0; r < rows; ++r) articulated_detail::copy_row(a[r], b[r]);
  });
}

// Articulated as the CUDA kernels compile it for euler and implicitfast models (FixedIntegrators,
// model_contract.h). Articulated's step and adjoint branch on its integrator at run time, so a
// kernel instantiated for it compiles the rk4 step (four accelerations) and rk4's dual-number
// adjoint (Dual<S, 8> copies of the whole step) alongside the hand adjoint, and ptxas sizes the
// per-thread stack for all of them, reserved as local memory for every resident thread. This
// one leaves rk4 out, and with it every dual number: its centre-of-mass adjoint is the
// kinematics sweep (diagnostics.h). The CUDA launcher runs euler and implicitfast models as
// this and rk4 ones as Articulated; the CPU backend keeps Articulated.
using ArticulatedImplicit =
    FixedIntegrators<Articulated, integrator_bit(Articulated::kEuler) |
                                      integrator_bit(Articulated::kImplicitFast)>;

// ArticulatedLegged as the CUDA kernels compile it for euler and implicitfast models, for the
// same reason: without rk4 and its dual-number adjoint, the quadruped's backward kernel needs
// a stack frame a fifth the size and no spills, and its forward kernel fits 128 registers
// (figures: bench/RESULTS.md, GPU).
using ArticulatedLeggedImplicit =
    FixedIntegrators<ArticulatedLegged, integrator_bit(ArticulatedLegged::kEuler) |
                                            integrator_bit(ArticulatedLegged::kImplicitFast)>;

}  // namespace steer
