// MassSpring's step (k, x_k, u_k, θ) -> x_{k+1} and its vector-Jacobian product, the entry
// points, which select the path: with a step tape that fits, the taped one-lane step
// (step_solo.h); the backward-Euler integrator (implicit.h); one lane on the host, the one-lane
// step (step_solo.h); else the lane-strided gather below.
// Symplectic Euler of length h at t = k h, per particle i:
//   f_i  = Σ_s ±F_s n̂_s + F_ground,i                       (+ at a spring's a end, − at its b end)
//   v*_i = e^{−ζh} v_i + h (f_i/m_i − g ŷ),  then integrate (ground.h): x' = x + h v*, v' = v*,
//   or on the impact ground the time-of-impact step, which reads v_i as well as v*_i
// Lanes: forces are gathered per particle through the CSR adjacency (particle -> springs), so
// every lane writes only its own particles: no atomics, deterministic, and the adjoint is the
// same gather reversed. Per-spring adjoints are written by the spring's lane; global
// parameters' adjoints by the leading lane.
// Adjoint, with f̄_i = h v̄*_i / m_i:  x̄ += x̄' (through integrate), v̄ += e^{−ζh} v̄* (and the
//   impact step's direct v̄),
//   m̄_i = −f_i·f̄_i/m_i,  ḡ −= m_i f̄_i,y,  ζ̄ −= h e^{−ζh} v·v̄*,  springs from ḡ_s = f̄_a − f̄_b.
#pragma once

#include <type_traits>

#include "steer/models/mass_spring/ground.h"
#include "steer/models/mass_spring/implicit.h"
#include "steer/models/mass_spring/springs.h"

namespace steer {

// forces on particle i (springs, and the penalty ground) and its free velocity
// v* = e^{−ζh} v + h (f/m − g ŷ)
template <class S, class XIn, class UIn, class PIn>
STEER_HD void MassSpring::free_velocity(int i, const S& t, const XIn& x, const UIn& u, const PIn& p,
                                        S* f, S* fg, S* vstar) const {
  const S h = S(dt);
  const S decay = exp_of(-S(p[p_global(kVelocityDamping)]) * h);
  S n[3];
  for (int c = 0; c < dim; ++c) f[c] = S(0);
  for (int e = adj_begin(i); e < adj_end(i); ++e) {
    const int s = adj_spring(e);
    const S F = spring_force<S>(s, t, x, u, p, n);
    const S sign = end_a(s) == i ? S(1) : S(-1);
    for (int c = 0; c < dim; ++c) f[c] += sign * F * n[c];
  }
  ground_force<S>(i, x, p, fg);
  finish_velocity<S>(i, decay, x, p, f, fg, vstar);
}
// v* = e^{−ζh} v + h ((f + f_ground)/m − g ŷ) from the gathered forces; decay = e^{−ζh}
template <class S, class XIn, class PIn>
STEER_HD void MassSpring::finish_velocity(int i, const S& decay, const XIn& x, const PIn& p,
                                          const S* f, const S* fg, S* vstar) const {
  const S h = S(dt);
  const S m = S(p[p_mass(i)]);
  for (int c = 0; c < dim; ++c) {
    S a = (f[c] + fg[c]) / m;
    if (c == 1) a -= S(p[p_global(kGravity)]);
    vstar[c] = decay * S(x[x_vel(i) + c]) + h * a;
  }
}

// (k, x_k, u_k, θ) -> x_{k+1}. tape (StepTape<S>*): filled where it fits (tape_fits: one lane
// on the host, symplectic, the penalty ground), the same bits as without; elsewhere unused.
// Simd.h packs (one lane each) take the one-lane or the implicit step.
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XOut, class Tape>
STEER_HD void MassSpring::step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                               const Lanes& ln, Tape tape) const {
  (void)tape;
#if !defined(__CUDA_ARCH__)
  if constexpr (!std::is_same<Tape, NoTape>::value) {
    if (ln.width == 1 && tape_fits<S>()) {
      symplectic_solo<S>(k, x, u, p, xn, tape);
      return;
    }
  }
#endif
  if constexpr (compiles_integrator(kIntegrators, kBackwardEuler)) {
    if (integrator == kBackwardEuler) {
      backward_euler<S>(k, x, u, p, xn, ln);  // implicit.h
      return;
    }
  }
#if !defined(__CUDA_ARCH__)
  if (ln.width == 1) {
    symplectic_solo<S>(k, x, u, p, xn);
    return;
  }
#endif
  if constexpr (!is_pack<S>::value) symplectic_gather<S>(k, x, u, p, xn, ln);
}
template <class S, class XIn, class UIn, class PIn, class XOut>
STEER_HD void MassSpring::symplectic_gather(int k, const XIn& x, const UIn& u, const PIn& p,
                                            XOut& xn, const Lanes& ln) const {
  // lanes of a warp: each gathers its own particles' springs (every spring evaluated at
  // both ends, each end by the lane that owns it: no atomics)
  const S t = S(dt * k);
  for (int i = ln.lane; i < n_particles; i += ln.width) {
    S f[3], fg[3], vstar[3] = {S(0), S(0), S(0)};
    free_velocity<S>(i, t, x, u, p, f, fg, vstar);
    integrate<S>(i, x, p, vstar, xn);
  }
}

// the adjoint of v*_j (vbar) and of the force on particle j (f̄_j = h v̄*_j / m_j); xbar and wbar_out
// the parts reaching x_j's position and velocity directly. With the penalty ground
// v̄*_j = v̄'_j + h x̄'_j comes from the incoming adjoint alone; the impact ground needs v*_j
// itself, recomputed by a gather over j's springs
template <class S, class XIn, class UIn, class PIn, class XnAdj>
STEER_HD void MassSpring::force_adjoint(int j, const S& t, const XIn& x, const UIn& u, const PIn& p,
                                        const XnAdj& adj_xn, S* out, S* xbar, S* vbar_out,
                                        S* adj_globals, S* wbar_out) const {
  const S h = S(dt), m = S(p[p_mass(j)]);
  S vstar[3] = {S(0), S(0), S(0)}, xb[3], vb[3], wb[3];
  if (ground && impact) {
    S f[3], fg[3];
    free_velocity<S>(j, t, x, u, p, f, fg, vstar);
  }
  adj_integrate<S>(j, x, p, vstar, adj_xn, xb, vb, wb, adj_globals);
  for (int c = 0; c < dim; ++c) {
    out[c] = h * vb[c] / m;
    if (xbar) xbar[c] = xb[c];
    if (vbar_out) vbar_out[c] = vb[c];
    if (wbar_out) wbar_out[c] = wb[c];
  }
}

// vector-Jacobian product of step: accumulates adj_x, adj_u, adj_p from adj_xn. tape (const
// StepTape<S>*, filled by the taped step k): read where it fits (tape_fits, as step), the same
// bits as without. One lane on the host takes the one-lane adjoint where it fits
// (solo_adjoint_fits), the lanes of a warp the gather below.
template <class S, unsigned kIntegrators, class XIn, class UIn, class PIn, class XAdj, class UAdj,
          class PAdj, class XnAdj, class Tape>
STEER_HD void MassSpring::adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                   UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln,
                                   Tape tape) const {
  (void)tape;
#if !defined(__CUDA_ARCH__)
  if constexpr (!std::is_same<Tape, NoTape>::value) {
    if (ln.width == 1 && tape_fits<S>()) {
      adj_symplectic_solo<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, tape);
      return;
    }
  }
#endif
  if constexpr (compiles_integrator(kIntegrators, kBackwardEuler)) {
    if (integrator == kBackwardEuler) {
      adj_backward_euler<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);  // implicit.h
      return;
    }
  }
  if constexpr (!is_pack<S>::value) {  // (packs run the symplectic adjoint from the tape only)
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1 && solo_adjoint_fits<S>()) {
      adj_symplectic_solo<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn);
      return;
    }
#endif
    adj_symplectic_gather<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);
  }
}
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
STEER_HD void MassSpring::adj_symplectic_gather(int k, const XIn& x, const UIn& u, const PIn& p,
                                                XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                                                const XnAdj& adj_xn, const Lanes& ln) const {
  const S h = S(dt), t = S(dt * k);
  const S zeta = S(p[p_global(kVelocityDamping)]);
  const S decay = exp_of(-zeta * h);
  S dummy_w = S(0);
  // the sinusoid bank's phases depend only on k: once per step, not per spring
  PhaseBank<S> pb;
  fill_phases<S>(t, p, pb);
  // one lane (the CPU, or a rollout per thread) owns every particle and spring: it writes the
  // springs' θ from the particle gather (at each spring's a end) and sums the globals there
  // too, instead of a spring pass and a second leader pass (the same terms; only the order
  // of sums over springs sharing an actuator, and of ω's sum, differs: rounding)
  const bool solo = ln.width == 1;
  const bool solo_frequency = solo && actuation == kSinusoid;
  S adj_globals[kNumGlobals];
  for (int q = 0; q < kNumGlobals; ++q) adj_globals[q] = S(0);
  S adj_w = S(0);
  // per particle: integrator, mass, and the spring forces gathered back onto the particle
  for (int i = ln.lane; i < n_particles; i += ln.width) {
    S fa[3], n[3], xb[3], vb[3], wb[3];
    force_adjoint<S>(i, t, x, u, p, adj_xn, fa, xb, vb, solo ? adj_globals : nullptr,
                     wb);  // impact globals
    for (int c = 0; c < dim; ++c) {
      adj_x[x_pos(i) + c] += xb[c];
      adj_x[x_vel(i) + c] += decay * vb[c];  // v* = e^{−ζh} v + h a
    }
    // the impact step also reads v_i itself (ground.h, impact_step)
    if (ground && impact)
      for (int c = 0; c < dim; ++c) adj_x[x_vel(i) + c] += wb[c];
    // m̄_i = −(f_i · f̄_i)/m_i, with f_i the non-gravity force (gravity enters as −g ŷ)
    S f[3] = {S(0), S(0), S(0)};
    for (int e = adj_begin(i); e < adj_end(i); ++e) {
      const int s = adj_spring(e);
      const S sign = end_a(s) == i ? S(1) : S(-1);
      // the spring's force on its a end is g_s; f̄ on a minus f̄ on b is ḡ_s
      S fb[3], adj_g[3], adj_d[3], adj_dv[3];
      const int other = end_a(s) == i ? end_b(s) : end_a(s);
      force_adjoint<S>(other, t, x, u, p, adj_xn, fb);
      for (int c = 0; c < dim; ++c) adj_g[c] = sign > S(0) ? fa[c] - fb[c] : fb[c] - fa[c];
      // solo: the spring's own θ (and ω's share) are written here from its a end, where adj_g
      // is the spring pass's f̄_a − f̄_b, and the spring pass below is skipped
      const bool own = solo && sign > S(0);
      const bool own_w = own && solo_frequency;
      const S F = adj_spring_force<S>(s, t, x, u, p, adj_g, adj_d, adj_dv, adj_u, adj_p, own, own_w,
                                      own_w ? adj_w : dummy_w, n, &pb);
      for (int c = 0; c < dim; ++c) f[c] += sign * F * n[c];
      // d = x_b − x_a, Δv = v_b − v_a: particle i receives −d̄ as a, +d̄ as b
      for (int c = 0; c < dim; ++c) {
        adj_x[x_pos(i) + c] += -sign * adj_d[c];
        adj_x[x_vel(i) + c] += -sign * adj_dv[c];
      }
      if (rest_from_positions) {
        // ∂F/∂L0 = −k (1 + α act): the rest-length adjoint reaches this particle's rest position
        S act_scale = S(1);
        if (actuator(s) >= 0)
          act_scale = S(1) + S(p[p_amplitude(s)]) * activation<S>(actuator(s), t, u, p, &pb);
        S g_n = S(0), l2 = S(0), d[3];
        for (int c = 0; c < dim; ++c) {
          d[c] = S(x[x_pos(end_b(s)) + c]) - S(x[x_pos(end_a(s)) + c]);
          l2 += d[c] * d[c];
        }
        if (l2 > S(1e-24)) {
          using std::sqrt;
          S l = sqrt(l2);
          if (length_offset != 0) l += S(length_offset);  // n̂ = d/ℓ, ℓ = |d| + ε (springs.h)
          for (int c = 0; c < dim; ++c) g_n += adj_g[c] * d[c] / l;
          adj_rest_length_at<S>(s, i, p, adj_p, -S(p[p_stiffness(s)]) * g_n * act_scale);
        }
      }
    }
    S fg[3], adj_y = S(0), adj_v[3] = {S(0), S(0), S(0)}, unused[kNumGlobals];
    for (int q = 0; q < kNumGlobals; ++q) unused[q] = S(0);
    ground_force<S>(i, x, p, fg);
    adj_ground_force<S>(i, x, p, fa, adj_y, adj_v, solo ? adj_globals : unused);
    if (solo) {
      // the leader pass's gravity and velocity-damping terms (see below)
      adj_globals[kGravity] += -S(p[p_mass(i)]) * fa[1];
      for (int c = 0; c < dim; ++c)
        adj_globals[kVelocityDamping] += -h * decay * S(x[x_vel(i) + c]) * vb[c];
    }
    adj_x[x_pos(i) + 1] += adj_y;
    for (int c = 0; c < dim; ++c) adj_x[x_vel(i) + c] += adj_v[c];
    S fdot = S(0);
    for (int c = 0; c < dim; ++c) fdot += (f[c] + fg[c]) * fa[c];
    adj_p[p_mass(i)] += -fdot / S(p[p_mass(i)]);
  }
  // per spring: its own parameters and its actuator's weights (one actuator per spring)
  for (int s = solo ? n_springs : ln.lane; s < n_springs; s += ln.width) {  // solo: done above
    S fa[3], fb[3], adj_g[3], adj_d[3], adj_dv[3];
    force_adjoint<S>(end_a(s), t, x, u, p, adj_xn, fa);
    force_adjoint<S>(end_b(s), t, x, u, p, adj_xn, fb);
    for (int c = 0; c < dim; ++c) adj_g[c] = fa[c] - fb[c];
    adj_spring_force<S>(s, t, x, u, p, adj_g, adj_d, adj_dv, adj_u, adj_p, true, false, dummy_w,
                        nullptr, &pb);
  }
  if (!ln.leader()) return;
  if (solo) {
    if (solo_frequency) adj_globals[kActuationFrequency] += adj_w;
    for (int q = 0; q < kNumGlobals; ++q) adj_p[p_global(q)] += adj_globals[q];
    return;
  }
  // globals, summed over all particles and springs by one lane
  for (int i = 0; i < n_particles; ++i) {
    S fa[3], vb[3], adj_y = S(0), adj_v[3] = {S(0), S(0), S(0)};
    force_adjoint<S>(i, t, x, u, p, adj_xn, fa, nullptr, vb, adj_globals);  // impact globals too
    adj_ground_force<S>(i, x, p, fa, adj_y, adj_v, adj_globals);
    const S m = S(p[p_mass(i)]);
    // a_y = … − g:  ḡ = −ā_y = −m f̄_y
    adj_globals[kGravity] += -m * fa[1];
    // v* = e^{−ζh} v + …:  ζ̄ = −h e^{−ζh} v·v̄*
    for (int c = 0; c < dim; ++c)
      adj_globals[kVelocityDamping] += -h * decay * S(x[x_vel(i) + c]) * vb[c];
  }
  if (actuation == kSinusoid) {
    for (int s = 0; s < n_springs; ++s) {
      if (actuator(s) < 0) continue;
      S fa[3], fb[3], adj_g[3];
      force_adjoint<S>(end_a(s), t, x, u, p, adj_xn, fa);
      force_adjoint<S>(end_b(s), t, x, u, p, adj_xn, fb);
      for (int c = 0; c < dim; ++c) adj_g[c] = fa[c] - fb[c];
      // only ω is taken from this pass (write_params = false keeps θ_s from doubling)
      adj_frequency<S>(s, t, x, u, p, adj_g, adj_w, &pb);
    }
    adj_globals[kActuationFrequency] += adj_w;
  }
  for (int q = 0; q < kNumGlobals; ++q) adj_p[p_global(q)] += adj_globals[q];
}

}  // namespace steer
