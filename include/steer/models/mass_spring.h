// Mass-spring soft robot in 2D or 3D: particles joined by damped springs, some of them
// actuated (their target length oscillates), under gravity and velocity damping, over a
// compliant ground with smoothed Coulomb friction; symplectic Euler, or backward Euler solved
// by Newton's method (integrator kBackwardEuler: implicit.h states that step and its adjoint).
//
// state x = (positions [m] (N·dim), velocities [m/s] (N·dim)); particle i's position at
//           i·dim, its velocity at N·dim + i·dim; axis 1 (y) is vertical.
// control u = per-step actuation act_a ∈ ℝ per actuator (raw mode), none otherwise.
// parameters θ (per rollout, all differentiable), in this order:
//   per spring s:   stiffness k_s [N/m], damping c_s [N·s/m], rest length L0_s [m],
//                   actuation amplitude α_s [1]
//   per particle i: mass m_i [kg], rest position P_i [m] (dim; used in rest-position mode)
//   per actuator a: weights w_aj (n_phase), bias b_a
//   globals:        gravity g [m/s²], velocity damping ζ [1/s], ground height y_g [m],
//                   ground stiffness k_g [N/m], ground damping d_g [N·s/m], smoothing width
//                   w_g [m], friction coefficient μ [1], friction smoothing v_ε [m/s],
//                   actuation frequency ω [rad/s], restitution e [1] (impact ground)
//
// one step of length h at t = k h:
//   act_a = tanh(Σ_j w_aj sin(ω t + 2πj/n) + b_a)     (sinusoid mode; raw mode: act_a = u_a)
//   L_s   = L0_s (1 + α_s act_{a(s)})                   target length of spring s
//   d = x_b − x_a, ℓ = |d|, n̂ = d/ℓ
//   F_s   = k_s (ℓ − L_s) + c_s (v_b − v_a)·n̂          tension; force F_s n̂ on a, −F_s n̂ on b
//   ground, p = y_g − y_i, z = p/w_g:
//   F_n   = k_g w_g softplus(z) − d_g σ(z) v_y          normal (→ hard penalty as w_g → 0)
//   F_t   = −μ k_g w_g softplus(z) v_t / sqrt(|v_t|² + v_ε²)   smoothed Coulomb friction
//   a_i   = (Σ_s ±F_s n̂ + F_ground) / m_i − g ŷ
//   v'_i  = e^{−ζh} v_i + h a_i,   x'_i = x_i + h v'_i
// In rest-position mode L0_s = |P_b − P_a| replaces the L0 slots, so moving a particle's
// rest position reshapes the robot (morphology).
//
// Impact ground (the time-of-impact variant): no penalty force; a particle whose free update
// x* = x + h v* would end below y_g takes the time-of-impact step (ground.h, impact_step). The
// step's forces are held over it (w = v* − e^{−ζh} v = h a, damping D(σ) = 1 − σ(1 − e^{−ζh})):
//   to the impact:  v(s) = v + s (v* − v), y + s h v(s) = y_g  (a quadratic in s ∈ (0, 1); s = 0
//                   if it starts on or below the ground),  v_in = v(s)
//   reflection:     v_r,y = −e v_in,y while approaching, with the friction impulse scaled by
//                   Δn₁ = (1 + e)(−v_in,y):  v_r,t = v_in,t / (1 + μ Δn₁ / sqrt(|v_in,t|² + v_ε²))
//   rest of step:   v'' = D(1 − s) v_r + (1 − s) w; if v''_y < 0 the particle is held on the
//                   ground (v'_y = 0, friction impulse Δn₂ = −v''_y on v''_t), else v' = v''
//   positions:      y' = y_g + (1 − s) h v'_y,  x'_t = x_t + s h v_in,t + (1 − s) h v'_t
// so the outgoing velocity depends on the impact time as the continuous bounce's does, and the
// derivatives converge to it as h → 0 (a drop under gravity: ∂v_T/∂y_0 → (1 + e) g/v_c). A
// resting particle stays at y_g and its per-step impulse g h acts as Coulomb friction (the
// friction factor never reverses the sliding velocity). The adjoint recomputes a neighbour's
// pre-impact velocity (a gather over its springs) where the penalty ground needs only the
// incoming adjoint.
//
// One step entry point each way (model_contract.h): step and adj_step (step.h) select the path
// by the integrator, the lanes and the step tape.
// Lanes: forces are gathered per particle through a CSR adjacency (particle -> springs),
// so every lane writes only its own particles (step.h); with one lane per rollout (the CPU
// backend) step and adj_step take the one-lane path (symplectic_solo / adj_symplectic_solo,
// step_solo.h), every spring once per step, bitwise the gather's forward.
//
// Step tape (rollout.h): on the CPU backend's uniform schedule the segment recompute runs step
// with a tape, which is symplectic_solo keeping each spring's ℓ, n̂, Δv·n̂, F, act, L0, each
// particle's force and ground terms, e^{−ζh} and the phase bank in a StepTape; adj_step with
// that tape is adj_symplectic_solo reading them instead of computing the step again (the same
// gradient, bit for bit). Other paths leave the tape unused.
//
// The parts, one algorithm per header (models/mass_spring/): model.h (data, layout, tape
// types, declarations, and MassSpringSymplectic, the CUDA backend's compile-time symplectic
// model), actuation.h, springs.h, ground.h, step.h, step_solo.h, implicit.h, diagnostics.h.
#pragma once

#include "steer/models/mass_spring/model.h"
#include "steer/models/mass_spring/actuation.h"
#include "steer/models/mass_spring/springs.h"
#include "steer/models/mass_spring/ground.h"
#include "steer/models/mass_spring/step.h"
#include "steer/models/mass_spring/implicit.h"
#include "steer/models/mass_spring/step_solo.h"
#include "steer/models/mass_spring/diagnostics.h"

// The CPU path of these models is compiled once, in src/models/mass_spring/mass_spring_model.cpp
// (STEER_CPU_RUN_BATCH, steer/cpu_backend.h); device code never calls it.
#if !defined(__CUDACC__)
#include "steer/cpu_backend.h"

namespace steer {
STEER_CPU_RUN_BATCH(extern, MassSpring, double);
STEER_CPU_RUN_BATCH(extern, MassSpring, float);
}  // namespace steer
#endif
