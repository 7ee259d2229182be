// MassSpring's symplectic step with one lane per rollout (Lanes::width == 1: the CPU backend,
// host only; step.h selects it) and its adjoint, with every spring once per step, and the
// optional step tape.
//   forward:  f_i = Σ_s ±F_s n̂_s (springs scattered onto both ends in spring order) + F_ground,i,
//             v*_i = e^{−ζh} v_i + h (f_i/m_i − g ŷ),  x'_i = x_i + h v*_i  (or the impact ground)
//   adjoint:  v̄* = v̄' + h x̄',  x̄ += x̄',  v̄ += e^{−ζh} v̄*,  f̄_i = h v̄*_i / m_i,
//             ḡ −= m_i f̄_i,y,  ζ̄ −= h e^{−ζh} v·v̄*,  springs from ḡ_s = f̄_a − f̄_b,
//             m̄_i = −f_i·f̄_i/m_i
// The step tape (rollout.h): symplectic_solo with a tape keeps what adj_symplectic_solo would
// recompute, and adj_symplectic_solo with that tape reads it; one function each way, so taped
// and untaped results are the same bits.
#pragma once

#include <cstddef>
#include <type_traits>

#include "steer/models/mass_spring/step.h"

namespace steer {

// One lane owns the whole robot, so the per-step work need not be split by owner: e^{−ζh}
// and the phase bank sin/cos(ω t + 2πj/n) are computed once per step, and every spring once
// (its tension, activation tanh and sqrt), scattered onto both ends, instead of once per end
// with its own sin/cos and tanh. The lane-strided gather evaluates 2S springs, 2S sin/cos
// pairs and tanhs and N exponentials of ζ per step; this path S springs, S tanhs, one sin/cos
// pair, one exponential of ζ.
//
// symplectic_solo is bitwise the lane-strided step: the springs' forces accumulate in xn's
// velocity slots (zeroed first) in increasing spring order, which is the CSR order of
// every particle's gather (pack_topology lists a particle's springs in increasing order),
// F n̂ is added at a and subtracted at b (x − y == x + (−1·y) exactly), and the phase bank
// holds the rotation's values. xn must not alias x (as for the strided step).
//
// tp (the taped step; tape_fits): also keeps the step's intermediates in *tp. The taped and
// the plain step are this one function (the tape only stores values it computes anyway, at
// compile time removed when tp is NoTape), so x_{k+1} is the same bits either way.
template <class S, class XIn, class UIn, class PIn, class XOut, class Tape>
void MassSpring::symplectic_solo(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                                 Tape tp) const {
  constexpr bool taped = !std::is_same<Tape, NoTape>::value;
  const S t = S(dt * k);
  const S decay = exp_of(-S(p[p_global(kVelocityDamping)]) * S(dt));  // e^{−ζh}, as free_velocity
  PhaseBank<S> pb;
  fill_phases<S>(t, p, pb);  // (dual numbers: pb.ok is false, each activation rotates its own)
  if constexpr (taped) {
    tp->decay = decay;
    // the adjoint's phases for every S (PhaseBank holds them for floating-point S only);
    // the same rotation, so the same values as pb's
    if (actuation == kSinusoid) {
      if (pb.ok) {
        for (int j = 0; j < n_phases; ++j) tp->sn[j] = pb.sn[j], tp->cs[j] = pb.cs[j];
      } else {
        for_each_phase<S>(t, p,
                          [&](int j, const S& sn, const S& cs) { tp->sn[j] = sn, tp->cs[j] = cs; });
      }
    }
  }
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c) xn[x_vel(i) + c] = S(0);
  for (int s = 0; s < n_springs; ++s) {
    S n[3];
    SpringTape<S>* keep = nullptr;
    if constexpr (taped) keep = &tp->spring[s];
    const S F = spring_force<S>(s, t, x, u, p, n, &pb, keep);  // tension [N] along n̂ from a to b
    if constexpr (taped) {
      keep->F = F;
      for (int c = 0; c < dim; ++c) keep->n[c] = n[c];
    }
    const int a = end_a(s), b = end_b(s);
    for (int c = 0; c < dim; ++c) {
      const S g = F * n[c];  // force on a [N]; −g on b
      xn[x_vel(a) + c] += g;
      xn[x_vel(b) + c] -= g;
    }
  }
  for (int i = 0; i < n_particles; ++i) {
    S f[3], fg[3], vstar[3] = {S(0), S(0), S(0)};
    for (int c = 0; c < dim; ++c) f[c] = S(xn[x_vel(i) + c]);
    ParticleTape<S>* keep = nullptr;
    if constexpr (taped) keep = &tp->particle[i];
    ground_force<S>(i, x, p, fg, keep);
    if constexpr (taped)
      for (int c = 0; c < dim; ++c) keep->f[c] = f[c] + fg[c];  // finish_velocity's sum, same bits
    finish_velocity<S>(i, decay, x, p, f, fg, vstar);
    integrate<S>(i, x, p, vstar, xn);  // overwrites the force accumulator of particle i only
  }
}

// the adjoint of symplectic_solo for the penalty ground (or none) with at most kSoloParticles
// particles; the impact ground and larger robots take the lane-strided gather with one lane.
// Three passes, each element once:
//   particles: v̄* = v̄' + h x̄' (x' = x + h v*, v' = v*), x̄ += x̄', v̄ += e^{−ζh} v̄*,
//              f̄_i = h v̄*_i / m_i (force adjoint), ḡ −= m_i f̄_i,y, ζ̄ −= h e^{−ζh} v·v̄*
//   springs:   ḡ_s = f̄_a − f̄_b (the force on a is g_s = F n̂, on b −g_s): adj_spring_force
//              gives d̄ (d = x_b − x_a) and Δv̄ (Δv = v_b − v_a), θ_s, the actuator's w, b
//              and ω's share; the tension is summed per particle for the mass adjoint
//   particles: ground force and its adjoint (one softplus/sigmoid pair), m̄_i = −f_i·f̄_i/m_i
// The terms are the lane-strided gather's; only the order of some sums differs (rounding).
template <class S>
bool MassSpring::solo_adjoint_fits() const {
  return is_real_scalar<S>::value && !(ground && impact) && n_particles <= kSoloParticles &&
         dim <= 3;
}
// tp (optional, a const StepTape<S>* filled by symplectic_solo for step k; tape_fits): e^{−ζh}, the
// phases, each spring's ℓ, n̂, Δv·n̂, F, act, L0, each particle's ground terms and total force
// f_i are read instead of recomputed: per step no exp of ζ, no phase rotation; per spring no
// sqrt, division by ℓ for n̂, nor tanh; per particle no softplus/sigmoid exp and log1p, no sqrt
// of the friction norm. The values read are the ones computed here otherwise (the spring
// forces summed per particle in spring order, as symplectic_solo sums them), so the gradient
// is the same bits. With a tape this also runs on simd.h packs (cpu_packed.h).
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj,
          class Tape>
void MassSpring::adj_symplectic_solo(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                     UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, Tape tp) const {
  constexpr bool taped = !std::is_same<Tape, NoTape>::value;
  const S h = S(dt), t = S(dt * k);
  S decay;
  PhaseBank<S> pb;
  if constexpr (taped) {
    decay = tp->decay;
  } else {
    decay = exp_of(-S(p[p_global(kVelocityDamping)]) * h);
    fill_phases<S>(t, p, pb);
  }
  S adj_globals[kNumGlobals];
  for (int q = 0; q < kNumGlobals; ++q) adj_globals[q] = S(0);
  S fbar[3 * kSoloParticles];  // f̄_i [1/N · loss units], particle i at 3i
  S fsum[taped ? 1
               : 3 * kSoloParticles];  // Σ of spring forces on particle i [N] (the tape has f_i)
  for (int i = 0; i < n_particles; ++i) {
    const S m = S(p[p_mass(i)]);
    for (int c = 0; c < dim; ++c) {
      const S xb = S(adj_xn[x_pos(i) + c]);
      const S vb = S(adj_xn[x_vel(i) + c]) + h * xb;  // v̄*
      adj_x[x_pos(i) + c] += xb;
      adj_x[x_vel(i) + c] += decay * vb;
      fbar[3 * i + c] = h * vb / m;
      if constexpr (!taped) fsum[3 * i + c] = S(0);
      adj_globals[kVelocityDamping] += -h * decay * S(x[x_vel(i) + c]) * vb;
    }
    adj_globals[kGravity] += -m * fbar[3 * i + 1];  // a_y = … − g:  ḡ = −h v̄*_y = −m f̄_y
  }
  const bool sinusoid = actuation == kSinusoid;
  S adj_w = S(0);
  for (int s = 0; s < n_springs; ++s) {
    const int a = end_a(s), b = end_b(s);
    S adj_g[3], adj_d[3], adj_dv[3], n[3], adj_rest;
    for (int c = 0; c < dim; ++c) adj_g[c] = fbar[3 * a + c] - fbar[3 * b + c];
    const S F =
        adj_spring_force<S>(s, t, x, u, p, adj_g, adj_d, adj_dv, adj_u, adj_p, true, sinusoid,
                            adj_w, n, &pb, rest_from_positions ? &adj_rest : nullptr, tp);
    for (int c = 0; c < dim; ++c) {
      adj_x[x_pos(a) + c] -= adj_d[c];
      adj_x[x_pos(b) + c] += adj_d[c];
      adj_x[x_vel(a) + c] -= adj_dv[c];
      adj_x[x_vel(b) + c] += adj_dv[c];
      if constexpr (!taped) {
        const S g = F * n[c];
        fsum[3 * a + c] += g;
        fsum[3 * b + c] -= g;
      }
    }
    if (rest_from_positions) {
      // L0_s = |P_b − P_a|: L̄0 spread onto both rest positions
      adj_rest_length_at<S>(s, a, p, adj_p, adj_rest);
      adj_rest_length_at<S>(s, b, p, adj_p, adj_rest);
    }
  }
  for (int i = 0; i < n_particles; ++i) {
    S fg[3], adj_y = S(0), adj_v[3] = {S(0), S(0), S(0)};
    const S* fb = fbar + 3 * i;
    if constexpr (taped)
      adj_ground_force<S>(i, x, p, fb, adj_y, adj_v, adj_globals, nullptr, &tp->particle[i]);
    else
      adj_ground_force<S>(i, x, p, fb, adj_y, adj_v, adj_globals, fg);
    adj_x[x_pos(i) + 1] += adj_y;
    for (int c = 0; c < dim; ++c) adj_x[x_vel(i) + c] += adj_v[c];
    // m̄_i = −(f_i · f̄_i)/m_i, with f_i the non-gravity force (gravity enters as −g ŷ)
    S fdot = S(0);
    for (int c = 0; c < dim; ++c) {
      if constexpr (taped)
        fdot += tp->particle[i].f[c] * fb[c];
      else
        fdot += (fsum[3 * i + c] + fg[c]) * fb[c];
    }
    adj_p[p_mass(i)] += -fdot / S(p[p_mass(i)]);
  }
  if (sinusoid) adj_globals[kActuationFrequency] += adj_w;
  for (int q = 0; q < kNumGlobals; ++q) adj_p[p_global(q)] += adj_globals[q];
}

// ---- the step tape's protocol (rollout.h) ----
// The taped path (step and adj_step take it with a tape where this holds, and otherwise leave
// the tape unused, the same predicate on both sides, so an unfilled tape is never read): the
// explicit step (the implicit one keeps no tape), one lane, the penalty ground (or none), at
// most kTapeParticles particles and kTapeSprings springs, at most kPhaseCache phases. For
// floating-point S this implies solo_adjoint_fits. (Other S, e.g. op_count's Counted<S>, also
// take it; their untaped adjoint is the strided one, whose sums run in another order.)
template <class S>
bool MassSpring::tape_fits() const {
  return integrator == kSymplecticEuler && !(ground && impact) && n_particles <= kTapeParticles &&
         n_springs <= kTapeSprings && dim <= 3 &&
         !(actuation == kSinusoid && n_phases > kPhaseCache);
}
// bytes of one step's tape with its share of the TapeStorage (rollout.h's stored forward
// budgets T of them per thread)
template <class S>
long long MassSpring::step_tape_bytes() const {
  return (long long)sizeof(StepTape<S>) +
         (long long)n_particles * (long long)sizeof(ParticleTape<S>) +
         (long long)n_springs * (long long)sizeof(SpringTape<S>);
}
// simd.h packs (cpu_packed.h): W rollouts advance in lockstep through step and adj_step on
// PackD<W> with the step tape, the one-lane paths tape_fits admits; the implicit step takes
// them too (implicit.h leaves the tape alone: each lane iterates Newton until it converges,
// then is held by select)
inline bool MassSpring::packable() const {
  return tape_fits<double>() || (integrator == kBackwardEuler && implicit_fits() == 0);
}
// host: points n tapes at their entries in st (resized to n robots' worth)
template <class S>
void MassSpring::bind_tapes(StepTape<S>* tapes, int n, TapeStorage<S>& st) const {
  st.particle.resize(size_t(n) * n_particles);  // (entries are written before they are read)
  st.spring.resize(size_t(n) * n_springs);
  for (int i = 0; i < n; ++i) {
    tapes[i].particle = st.particle.data() + size_t(i) * n_particles;
    tapes[i].spring = st.spring.data() + size_t(i) * n_springs;
  }
}

}  // namespace steer
