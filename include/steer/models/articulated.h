// Articulated: a kinematic tree of rigid bodies joined by hinge, slide or fixed joints
// (a Franka Panda-class arm), driven by joint torques from a PD controller plus a
// feed-forward torque, with implicit joint damping.
//
// state   x = (q [rad or m] (n_dof), q̇ [rad/s or m/s] (n_dof), the joints' actuator activations
//           [N·m or N] (n_act, activation.h))
// control u = feed-forward joint torque u_ff [N·m or N] (n_dof), one per step
// params  θ = per body: mass [kg], centre of mass c (3) [m, body frame], inertia about the
//             centre of mass (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) [kg·m², body axes];
//             per joint: damping D [N·m·s/rad], armature [kg·m²], k_p [N·m/rad],
//             k_v [N·m·s/rad], PD target q* [rad], force limit τ_max [N·m];
//             global: gravity g [m/s², along −z], saturation sharpness β [1/(N·m)],
//             contact plane height [m], stiffness [N/m], damping [N·s/m], smoothing width [m].
//
// Kinematics (world frame, bodies in topological order, parent before child):
//   R_b = R_parent · R_fixed,b · Rot(a_b, q_b)   p_b = p_parent + R_parent · offset_b (+ a q for
//   slides)
// Dynamics: M(q) q̈ + c(q, q̇) = τ + τ_c (τ_c: the contacts' generalized force, below), with
//   M = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_b J_ω,b   (by composite rigid bodies:
//   mass_matrix) c = Coriolis, centrifugal and gravity forces by recursive Newton–Euler with q̈ = 0
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
// Contact (optional), against the plane z = height (contact.h), τ_c summed over the contacts:
//   the fingertip (model.tip, contact.enabled): penetration d = height − z_tip, z = d/w,
//     f_z = k w softplus(z) − d_c σ(z) ż_tip,   τ_c = J_tip,zᵀ f_z;
//   the ground points (model.contacts): points and spheres fixed in bodies (contact_set.h),
//     each with a normal law (softplus or MuJoCo's impedance) and smooth friction
//     (contact_law.h) at its lowest point x_c, τ_c = J(x_c)ᵀ f; with ground.impact, also
//     time-of-impact restitution impulses after the smooth step (impact.h).
// Joint limits (optional, joint_limits): a smooth penalty torque outside each joint's range
// [lo_j, hi_j], τ_l,j = k_l w_l [softplus((lo_j − q_j)/w_l) − softplus((q_j − hi_j)/w_l)],
// which tends to k_l (lo_j − q_j) below the range and −k_l (q_j − hi_j) above it as w_l → 0
// and is ~k_l w_l e^{−d/w_l} a distance d inside. It enters the step explicitly, like the
// contact force; k_l, w_l and the ranges are model constants (not differentiable θ). Off by
// default, as in MuJoCo's compiler when limited is unset.
//
// One step entry point each way (model_contract.h): step and adj_step (integrators.h) select
// the integrator; the others are the integrators' own helpers.
// Adjoint: euler and implicitfast have a hand-written reverse (adj_step). It recomputes the
// step's system A q̇⁺ = b (implicit_system), solves A λ = q̇̄⁺ + h q̄⁺ with A's Cholesky
// factor, and differentiates φ = λᵀ (b − A q̇⁺) with λ and q̇⁺ held fixed, in reverse passes
// over the forward's quantities: the controller and smooth saturation joint by joint
// (adj_saturate); the dynamics λᵀ M (q̇ − q̇⁺) − h λᵀ c by virtual work, as one inward sweep
// over the bodies (adj_dynamics_form); the contacts (adj_contact_forces); and the
// kinematics as a force/moment sweep, q̄_j = a_j · (moment of the subtree's adjoints about
// p_j) (adj_forward_kinematics). Parameter groups not in grad_params are skipped where that
// saves work; only the listed entries are written. rk4 keeps the forward-mode dual adjoint
// (adj_by_duals: the step run on Dual<S, 8> over x, u and the listed parameters), which is
// also the reference: articulated_test compares the two column by column (1e-10 relative),
// and the generic suite checks both against centered finite differences.
// The recomputed step's system, factor and intermediates form a StepTape: on the CPU the
// backward sweep keeps one per step of the segment it recomputes (rollout.h) and passes it to
// adj_step, so the step is not computed a third time; adj_step without one fills its own
// tape first.
// The CUDA backend runs euler and implicitfast models as ArticulatedImplicit and
// ArticulatedLeggedImplicit (model.h: the model with its integrators fixed at compile time,
// model_contract.h's FixedIntegrators), whose step and adjoint leave rk4 and the dual path out,
// so that their kernels' stack frames are not sized by them; rk4 keeps the model's own kernels.
//
// Capacity: the arrays are sized at compile time (ArticulatedCap<bodies, joints, sites, ground
// points>, model.h). Articulated (10, 8, 8, 8) and ArticulatedLegged (20, 18, 8, 8) run on every
// backend; ArticulatedLarge (32, 32, 32, 64), for larger trees and for the walkers' and
// humanoids' dozens of contact points, on the CPU's scalar path only; the config parser picks
// the smallest that fits.
//
// The parts, one algorithm per header, each function followed by its adjoint (articulated/);
// contact_set.h, contact_law.h and impact.h come in through model.h, contact.h and
// implicit_step.h:
//   model.h        the data, parameter slots and shared intermediates; member declarations;
//                  the capacity copy (articulated_copy), ArticulatedImplicit and
//                  ArticulatedLeggedImplicit
//   contact_set.h  the ground points (points and spheres fixed in bodies) and their θ slots
//   kinematics.h   forward kinematics, world inertia, point Jacobian; adjoints
//   dynamics.h     mass matrix (CRBA), bias forces (RNEA); their adjoint adj_dynamics_form
//   contact_law.h  the ground points' normal laws, friction and restitution; adjoints
//   contact.h      contact forces of the fingertip and the ground points; adjoint
//   fluid.h, spatial_tendon.h, joint_friction.h  fluid forces, spatial tendons, joint friction
//                  (the CPU's scalar capacity only); adjoints
//   impact.h       time-of-impact restitution impulses of the ground points; adjoint
//   actuator.h     torque saturation, joint-limit torque; adjoints
//   cholesky.h     Cholesky factor and substitution
//   servo.h        the servo implicit through the saturation (Newton with line search)
//   implicit_step.h  the euler / implicitfast step; its hand adjoint
//   integrators.h  step and adj_step, the entry points; rk4 and its adjoint
//   diagnostics.h  penetration, centre of mass, energies
//   sites.h        sites (named points and frames on a body): position, orientation; adjoints
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/dynamics.h"
#include "steer/models/articulated/contact.h"
#include "steer/models/articulated/fluid.h"
#include "steer/models/articulated/spatial_tendon.h"
#include "steer/models/articulated/joint_friction.h"
#include "steer/models/articulated/actuator.h"
#include "steer/models/articulated/cholesky.h"
#include "steer/models/articulated/servo.h"
#include "steer/models/articulated/implicit_step.h"
#include "steer/models/articulated/integrators.h"
#include "steer/models/articulated/diagnostics.h"
#include "steer/models/articulated/sites.h"

// The CPU path of these models is compiled once, in
// src/models/articulated/articulated_runner_{arm,legged,large}.cpp
// (STEER_CPU_RUN_BATCH, steer/cpu_backend.h); device code never calls it.
#if !defined(__CUDACC__)
#include "steer/cpu_backend.h"

namespace steer {
STEER_CPU_RUN_BATCH(extern, Articulated, double);
STEER_CPU_RUN_BATCH(extern, Articulated, float);
STEER_CPU_RUN_BATCH(extern, ArticulatedLegged, double);
STEER_CPU_RUN_BATCH(extern, ArticulatedLegged, float);
STEER_CPU_RUN_BATCH(extern, ArticulatedLarge, double);
STEER_CPU_RUN_BATCH(extern, ArticulatedLarge, float);
}  // namespace steer
#endif
