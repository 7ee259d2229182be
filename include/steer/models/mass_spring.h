// Mass-spring soft robot in 2D or 3D: particles joined by damped springs, some of them
// actuated (their target length oscillates), under gravity and velocity damping, over a
// compliant ground with smoothed Coulomb friction; symplectic Euler.
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
// x* = x + h v* would end below y_g hits the ground at the fraction s = (y − y_g)/(y − y*) of
// the step (s = 0 if it starts below), leaves with v'_y = −e v*_y, and feels a friction
// impulse scaled by the normal impulse Δn = (1 + e)(−v*_y):
//   v'_t = v*_t / (1 + μ Δn / sqrt(|v*_t|² + v_ε²))     (never reverses the sliding velocity)
//   y'   = y_g + (1 − s) h v'_y,   x'_t = x_t + s h v*_t + (1 − s) h v'_t
// A resting particle (e = 0) stays at y_g and its per-step impulse g h acts as Coulomb
// friction. The adjoint recomputes a neighbour's pre-impact velocity (a gather over its
// springs) where the penalty ground needs only the incoming adjoint.
//
// Lanes: forces are gathered per particle through a CSR adjacency (particle -> springs),
// so every lane writes only its own particles: no atomics, deterministic, and the adjoint
// is the same gather reversed. Per-spring adjoints are written by the spring's lane;
// global parameters' adjoints by the leading lane. With one lane per rollout (the CPU
// backend) step and adj_step take step_solo / adj_step_solo instead: every spring once per
// step, scattered onto both ends (no lane to race with), the phase bank and e^{−ζh} once per
// step; the forward is bitwise the gather's (see step_solo).
//
// Step tape (rollout.h): on the CPU backend's uniform schedule the segment recompute runs
// step_taped, which is step_solo keeping each spring's ℓ, n̂, Δv·n̂, F, act, L0, each particle's
// force and ground terms, e^{−ζh} and the phase bank in a StepTape; adj_step_taped is
// adj_step_solo reading them instead of computing the step again (bitwise the same gradient;
// robot A's backward/forward 3.2 → 2.0–2.3). Other paths fall back to step / adj_step.
#pragma once

#include <cmath>
#include <type_traits>
#include <vector>

#include "steer/core.h"
#include "steer/model_math.h"

namespace steer {

struct MassSpring {
  enum Global {
    kGravity = 0, kVelocityDamping, kGroundHeight, kGroundStiffness, kGroundDamping, kGroundSmoothing,
    kFriction, kFrictionSmoothing, kActuationFrequency, kRestitution, kNumGlobals
  };
  enum Actuation { kSinusoid = 0, kRaw = 1 };
  static constexpr int kMaxState = 0;  // sized at run time: host-only reference adjoint
  static constexpr int kMaxControl = 0;
  static constexpr int kMaxParam = 0;
  static constexpr int kSpringParams = 4;  // k, c, L0, α

  int dim = 2;
  int n_particles = 0;
  int n_springs = 0;
  int n_actuators = 0;
  int n_phases = 10;
  double dt = 0.004;
  int actuation = kSinusoid;
  bool ground = true;
  bool impact = false;               // ground by time-of-impact projection instead of penalty
  bool rest_from_positions = false;  // L0_s = |P_b − P_a| from θ rest positions

  // topology, one int array (host or device memory, owned elsewhere):
  //   [0, S)            spring end a
  //   [S, 2S)           spring end b
  //   [2S, 3S)          actuator of spring s, −1 if passive
  //   [3S, 3S+N+1)      CSR offsets: springs of particle i are adj[off[i] .. off[i+1])
  //   [3S+N+1, 5S+N+1)  CSR spring indices (each spring listed under both ends)
  const int* topo = nullptr;

  STEER_HD int nx() const { return 2 * dim * n_particles; }
  STEER_HD int nu() const { return actuation == kRaw ? n_actuators : 0; }
  STEER_HD int np() const {
    return kSpringParams * n_springs + (1 + dim) * n_particles + (n_phases + 1) * n_actuators + kNumGlobals;
  }
  STEER_HD int topology_size() const { return 5 * n_springs + n_particles + 1; }

  // θ offsets
  STEER_HD int p_stiffness(int s) const { return s; }
  STEER_HD int p_damping(int s) const { return n_springs + s; }
  STEER_HD int p_rest_length(int s) const { return 2 * n_springs + s; }
  STEER_HD int p_amplitude(int s) const { return 3 * n_springs + s; }
  STEER_HD int p_mass(int i) const { return kSpringParams * n_springs + i; }
  STEER_HD int p_rest_position(int i) const { return kSpringParams * n_springs + n_particles + dim * i; }
  STEER_HD int p_weight(int a, int j) const {
    return kSpringParams * n_springs + (1 + dim) * n_particles + a * n_phases + j;
  }
  STEER_HD int p_bias(int a) const {
    return kSpringParams * n_springs + (1 + dim) * n_particles + n_actuators * n_phases + a;
  }
  STEER_HD int p_global(int g) const {
    return kSpringParams * n_springs + (1 + dim) * n_particles + (n_phases + 1) * n_actuators + g;
  }
  // state offsets
  STEER_HD int x_pos(int i) const { return dim * i; }
  STEER_HD int x_vel(int i) const { return dim * (n_particles + i); }
  // topology
  STEER_HD int end_a(int s) const { return topo[s]; }
  STEER_HD int end_b(int s) const { return topo[n_springs + s]; }
  STEER_HD int actuator(int s) const { return topo[2 * n_springs + s]; }
  STEER_HD int adj_begin(int i) const { return topo[3 * n_springs + i]; }
  STEER_HD int adj_end(int i) const { return topo[3 * n_springs + i + 1]; }
  STEER_HD int adj_spring(int e) const { return topo[3 * n_springs + n_particles + 1 + e]; }

  // the phases sin(ω t + 2πj/n), cos(ω t + 2πj/n) for j = 0..n−1 by rotating (cos ωt, sin ωt)
  // through φ = 2π/n: two trigonometric calls per actuator instead of n
  template <class S, class PIn, class F>
  STEER_HD void for_each_phase(const S& t, const PIn& p, F&& f) const {
    const S wt = S(p[p_global(kActuationFrequency)]) * t;
    S sn, cs;
    sincos_of(wt, sn, cs);
    const double phi = 6.283185307179586 / n_phases;
    const S cp = S(std::cos(phi)), spp = S(std::sin(phi));
    for (int j = 0; j < n_phases; ++j) {
      f(j, sn, cs);
      const S sn1 = sn * cp + cs * spp;  // sin(x + φ) = sin x cos φ + cos x sin φ
      cs = cs * cp - sn * spp;           // cos(x + φ) = cos x cos φ − sin x sin φ
      sn = sn1;
    }
  }
  // the same phases stored once per step (filled by for_each_phase, so bit-identical) for the
  // one-lane step and the adjoint, which need them for every actuated spring. A fixed-size
  // register/stack array: no allocation, per lane; used only for floating-point S and
  // n_phases <= kPhaseCache (otherwise `ok` is false and callers recompute the rotation)
  static constexpr int kPhaseCache = 16;
  template <class S>
  struct PhaseBank {
    static constexpr int kCap = is_real_scalar<S>::value ? kPhaseCache : 1;
    S sn[kCap], cs[kCap];
    bool ok = false;
  };
  template <class S, class PIn>
  STEER_HD void fill_phases(const S& t, const PIn& p, PhaseBank<S>& pb) const {
    pb.ok = actuation == kSinusoid && n_phases <= PhaseBank<S>::kCap;
    if (!pb.ok) return;
    for_each_phase<S>(t, p, [&](int j, const S& sn, const S& cs) {
      pb.sn[j] = sn;
      pb.cs[j] = cs;
    });
  }

  // act_a(t) = tanh(Σ_j w_aj sin(ω t + 2πj/n) + b_a), or u_a in raw mode
  template <class S, class UIn, class PIn>
  STEER_HD S activation(int a, const S& t, const UIn& u, const PIn& p, const PhaseBank<S>* pb = nullptr) const {
    if (actuation == kRaw) return S(u[a]);
    S z = S(p[p_bias(a)]);
    if (pb && pb->ok) {
      for (int j = 0; j < n_phases; ++j) z += S(p[p_weight(a, j)]) * pb->sn[j];
      return tanh_of(z);
    }
    for_each_phase<S>(t, p, [&](int j, const S& sn, const S&) { z += S(p[p_weight(a, j)]) * sn; });
    return tanh_of(z);
  }
  // ∂act_a/∂(w_a·, b_a, ω, u_a) applied to adj_act
  template <class S, class UIn, class PIn, class UAdj, class PAdj>
  STEER_HD void adj_activation(int a, const S& t, const UIn& u, const PIn& p, UAdj& adj_u, PAdj& adj_p,
                               bool write_frequency, S& adj_w, const S& adj_act,
                               const PhaseBank<S>* pb = nullptr, const S* act_known = nullptr) const {
    // act_known: the activation the caller already has (saves recomputing it)
    if (actuation == kRaw) {
      adj_u[a] += adj_act;
      return;
    }
    const S act = act_known ? *act_known : activation<S>(a, t, u, p, pb);
    const S adj_z = adj_act * (S(1) - act * act);  // tanh' = 1 − tanh²
    adj_p[p_bias(a)] += adj_z;
    if (pb && pb->ok) {
      // w̄_aj += z̄ sin(ω t + 2πj/n);  ω̄ += z̄ Σ_j w_aj cos(ω t + 2πj/n) t  (the same terms
      // in the same order as one loop with the flag inside; two loops keep the branch out)
      for (int j = 0; j < n_phases; ++j) adj_p[p_weight(a, j)] += adj_z * pb->sn[j];
      if (write_frequency)
        for (int j = 0; j < n_phases; ++j) adj_w += adj_z * S(p[p_weight(a, j)]) * pb->cs[j] * t;
      return;
    }
    for_each_phase<S>(t, p, [&](int j, const S& sn, const S& cs) {
      adj_p[p_weight(a, j)] += adj_z * sn;
      if (write_frequency) adj_w += adj_z * S(p[p_weight(a, j)]) * cs * t;
    });
  }

  // rest length of spring s: the L0 slot, or |P_b − P_a| in rest-position mode
  template <class S, class PIn>
  STEER_HD S rest_length(int s, const PIn& p) const {
    using std::sqrt;
    if (!rest_from_positions) return S(p[p_rest_length(s)]);
    const int a = end_a(s), b = end_b(s);
    S l2 = S(0);
    for (int c = 0; c < dim; ++c) {
      const S d = S(p[p_rest_position(b) + c]) - S(p[p_rest_position(a) + c]);
      l2 += d * d;
    }
    return sqrt(l2);
  }

  // ---- step tape (rollout.h's optional per-step tape; the CPU backend's uniform schedule) ----
  // What adj_step_solo would otherwise recompute of step k, kept by the segment recompute's
  // step_taped for that step's adj_step_taped. Per spring: ℓ [m], n̂ [1], Δv·n̂ [m/s], the
  // tension F [N], act [1] and L0 [m] (one sqrt, dim divisions, a tanh over the phase bank
  // and, in rest-position mode, another sqrt saved). Per particle: the total force f_i =
  // springs + ground [N] (the mass adjoint's), and the ground's z = (y_g − y)/w_g [1],
  // softplus(z), σ(z) and q = sqrt(|v_t|² + v_ε²) [m/s] (an exp, a log1p, a sqrt and three
  // divisions saved). Per step: e^{−ζh} and the phases sin/cos(ω t + 2πj/n).
  // The per-particle and per-spring entries live in a TapeStorage sized to the robot, bound to
  // the tapes by bind_tapes (steer/step_tapes.h allocates and binds them): n tapes take
  // n · (n_particles · 56 B + n_springs · 64 B) plus 264 B each in float64 (robot A: 11 springs,
  // 6 particles: 1.3 kB per step), one contiguous run, so that the T tapes of a stored forward
  // pass (rollout.h) fill memory as densely as its states. (A tape with its arrays inline, sized
  // for the largest robot, is 80 kB per step, of which robot A touches 1.2 kB: T of them made
  // the stored forward slower than the recompute it replaces, a page fault and a conflicting
  // cache set at every step.)
  // Robots over the bounds, the impact ground, more than kPhaseCache phases, and lanes > 1
  // take step / adj_step instead (tape_fits).
  template <class S>
  struct SpringTape {
    S l, n[3], dv_n, F, act, L0;  // 8 scalars: one 64 B cache line in float64
  };
  template <class S>
  struct ParticleTape {
    S f[3], z, sp, sg, q;
  };
  static constexpr int kTapeSprings = 1024;
  static constexpr int kTapeParticles = 256;  // = kSoloParticles (the one-lane adjoint's bound)
  template <class S>
  struct StepTape {
    S decay;  // e^{−ζh} [1]
    S sn[kPhaseCache], cs[kPhaseCache];  // sin, cos(ω t + 2πj/n), sinusoid mode
    ParticleTape<S>* particle = nullptr;  // n_particles entries (TapeStorage)
    SpringTape<S>* spring = nullptr;      // n_springs entries (TapeStorage)
  };
  // host: the particle and spring entries of n tapes
  template <class S>
  struct TapeStorage {
    std::vector<ParticleTape<S>> particle;
    std::vector<SpringTape<S>> spring;
  };
  template <class S>
  void bind_tapes(StepTape<S>* tapes, int n, TapeStorage<S>& st) const {
    st.particle.resize(size_t(n) * n_particles);  // (entries are written before they are read)
    st.spring.resize(size_t(n) * n_springs);
    for (int i = 0; i < n; ++i) {
      tapes[i].particle = st.particle.data() + size_t(i) * n_particles;
      tapes[i].spring = st.spring.data() + size_t(i) * n_springs;
    }
  }

  // tension of spring s and its direction n̂ (from a to b); zero force at zero length,
  // where the direction is undefined. keep (optional): the step tape's ℓ, Δv·n̂, act, L0
  // (only ℓ at zero length, where the adjoint stops at ℓ)
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD S spring_force(int s, const S& t, const XIn& x, const UIn& u, const PIn& p, S* nhat,
                          const PhaseBank<S>* pb = nullptr, SpringTape<S>* keep = nullptr) const {
    using std::sqrt;
    const int a = end_a(s), b = end_b(s);
    S l2 = S(0);
    S d[3];
    for (int c = 0; c < dim; ++c) {
      d[c] = S(x[x_pos(b) + c]) - S(x[x_pos(a) + c]);
      l2 += d[c] * d[c];
    }
    const S l = sqrt(l2);
    if (keep) keep->l = l;
    // zero length: no force, no direction. A pack whose lanes differ computes the rest with
    // ℓ := 1 in its zero-length lanes (finite values) and zeroes their F and n̂ at the end.
    const auto live = l > S(1e-12);
    if (!any_lane(live)) {
      for (int c = 0; c < dim; ++c) nhat[c] = S(0);
      return S(0);
    }
    const S l_div = select(live, l, S(1));
    S dv_n = S(0);
    for (int c = 0; c < dim; ++c) {
      nhat[c] = d[c] / l_div;
      dv_n += (S(x[x_vel(b) + c]) - S(x[x_vel(a) + c])) * nhat[c];
    }
    const int act = actuator(s);
    S target = rest_length<S>(s, p);
    if (keep) {
      keep->dv_n = dv_n;
      keep->L0 = target;
      keep->act = S(0);
    }
    if (act >= 0) {
      const S act_v = activation<S>(act, t, u, p, pb);
      if (keep) keep->act = act_v;
      target = target * (S(1) + S(p[p_amplitude(s)]) * act_v);
    }
    const S F = S(p[p_stiffness(s)]) * (l - target) + S(p[p_damping(s)]) * dv_n;
    if constexpr (is_pack<S>::value) {
      for (int c = 0; c < dim; ++c) nhat[c] = select(live, nhat[c], S(0));
      return select(live, F, S(0));
    }
    return F;
  }
  // ∂(F_s n̂)/∂(x_a, x_b, v_a, v_b, θ_s, actuator) applied to adj_g, the adjoint of the force
  // on a. Writes the spring's own θ slots (and actuator weights) and returns the adjoints of
  // d = x_b − x_a and Δv = v_b − v_a in adj_d, adj_dv; rest-position adjoints go to the
  // particles' slots only when write_positions (the lane that owns them).
  template <class S, class XIn, class UIn, class PIn, class UAdj, class PAdj>
  STEER_HD S adj_spring_force(int s, const S& t, const XIn& x, const UIn& u, const PIn& p, const S* adj_g,
                              S* adj_d, S* adj_dv, UAdj& adj_u, PAdj& adj_p, bool write_params,
                              bool write_frequency, S& adj_w, S* nhat = nullptr,
                              const PhaseBank<S>* pb = nullptr, S* adj_rest = nullptr) const {
    // also returns the tension F_s and, into nhat, its direction: the forward values the
    // caller would otherwise recompute with spring_force; adj_rest (optional) receives the
    // adjoint of the rest length L0_s (what rest-position mode spreads onto P_a, P_b)
    using std::sqrt;
    for (int c = 0; c < dim; ++c) adj_d[c] = adj_dv[c] = S(0);
    if (nhat)
      for (int c = 0; c < dim; ++c) nhat[c] = S(0);
    if (adj_rest) *adj_rest = S(0);
    const int a = end_a(s), b = end_b(s);
    S l2 = S(0);
    S d[3], n[3], dv[3];
    for (int c = 0; c < dim; ++c) {
      d[c] = S(x[x_pos(b) + c]) - S(x[x_pos(a) + c]);
      dv[c] = S(x[x_vel(b) + c]) - S(x[x_vel(a) + c]);
      l2 += d[c] * d[c];
    }
    const S l = sqrt(l2);
    if (!(l > S(1e-12))) return S(0);  // the force is 0 there, and so is its derivative
    S dv_n = S(0), g_n = S(0);
    for (int c = 0; c < dim; ++c) {
      n[c] = d[c] / l;
      dv_n += dv[c] * n[c];
      g_n += adj_g[c] * n[c];
    }
    const int act = actuator(s);
    const S k = S(p[p_stiffness(s)]), cs = S(p[p_damping(s)]);
    const S L0 = rest_length<S>(s, p);
    S act_v = S(0), target = L0, scale = S(1);
    if (act >= 0) {
      act_v = activation<S>(act, t, u, p, pb);
      scale = S(1) + S(p[p_amplitude(s)]) * act_v;
      target = L0 * scale;
    }
    const S F = k * (l - target) + cs * dv_n;
    // g = F n̂:  ∂g/∂d = F (I − n̂n̂ᵀ)/ℓ + n̂ (k n̂ᵀ + c Δvᵀ (I − n̂n̂ᵀ)/ℓ),  ∂g/∂Δv = c n̂ n̂ᵀ
    for (int c = 0; c < dim; ++c) {
      adj_d[c] = F * (adj_g[c] - n[c] * g_n) / l + g_n * (k * n[c] + cs * (dv[c] - n[c] * dv_n) / l);
      adj_dv[c] = g_n * cs * n[c];
    }
    // F = k (ℓ − L) + c Δv·n̂,  L = L0 (1 + α act)
    const S adj_target = -k * g_n;
    if (adj_rest) *adj_rest = adj_target * scale;  // ∂F/∂L0 = −k (1 + α act)
    if (write_params) {
      adj_p[p_stiffness(s)] += g_n * (l - target);
      adj_p[p_damping(s)] += g_n * dv_n;
      if (!rest_from_positions) adj_p[p_rest_length(s)] += adj_target * scale;
      if (act >= 0) {
        adj_p[p_amplitude(s)] += adj_target * L0 * act_v;
        adj_activation<S>(act, t, u, p, adj_u, adj_p, write_frequency, adj_w,
                          adj_target * L0 * S(p[p_amplitude(s)]), pb, &act_v);
      }
    }
    if (nhat)
      for (int c = 0; c < dim; ++c) nhat[c] = n[c];
    return F;
  }
  // ∂L0_s/∂P for rest-position mode: adj of L0 spread onto P_a (−) and P_b (+) along the
  // rest direction; written for particle `owner` only (the gathering lane)
  template <class S, class PIn, class PAdj>
  STEER_HD void adj_rest_length_at(int s, int owner, const PIn& p, PAdj& adj_p, const S& adj_l0) const {
    using std::sqrt;
    const int a = end_a(s), b = end_b(s);
    S r[3], l2 = S(0);
    for (int c = 0; c < dim; ++c) {
      r[c] = S(p[p_rest_position(b) + c]) - S(p[p_rest_position(a) + c]);
      l2 += r[c] * r[c];
    }
    const S l = sqrt(l2);
    const auto live = l > S(1e-12);  // no direction at zero rest length (a pack: per lane)
    if (!any_lane(live)) return;
    const S l_div = select(live, l, S(1));
    const S sign = owner == b ? S(1) : S(-1);
    for (int c = 0; c < dim; ++c) {
      const S term = sign * adj_l0 * r[c] / l_div;
      adj_p[p_rest_position(owner) + c] += is_pack<S>::value ? select(live, term, S(0)) : term;
    }
  }

  // ground force on particle i: out[1] normal (+y), out[0] (and out[2]) friction
  // keep (optional): the step tape's z, softplus(z), σ(z), q (penalty ground only)
  template <class S, class XIn, class PIn>
  STEER_HD void ground_force(int i, const XIn& x, const PIn& p, S* out, ParticleTape<S>* keep = nullptr) const {
    using std::sqrt;
    for (int c = 0; c < dim; ++c) out[c] = S(0);
    if (!ground || impact) return;
    const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
    const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
    const S ve = S(p[p_global(kFrictionSmoothing)]);
    const S z = (S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1])) / wg;
    S sp, sg;
    softplus_sigmoid_of(z, sp, sg);  // model_math.h: one exp, the branch a select
    const S elastic = kg * wg * sp;
    out[1] = elastic - dg * sg * S(x[x_vel(i) + 1]);
    S vt2 = ve * ve;
    for (int c = 0; c < dim; ++c)
      if (c != 1) vt2 += S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
    const S q = sqrt(vt2);
    if (keep) {
      keep->z = z;
      keep->sp = sp;
      keep->sg = sg;
      keep->q = q;
    }
    for (int c = 0; c < dim; ++c)
      if (c != 1) out[c] = -mu * elastic * S(x[x_vel(i) + c]) / q;
  }
  // ∂(ground force)/∂(y, v, ground θ) applied to adj_f: particle terms into adj_y, adj_v;
  // global parameter terms into adj_globals[kGroundHeight .. kFrictionSmoothing]
  // force_out (optional): the ground force itself, bitwise ground_force's, from the same
  // exponentials (the one-lane adjoint needs it for the mass adjoint)
  template <class S, class XIn, class PIn>
  STEER_HD void adj_ground_force(int i, const XIn& x, const PIn& p, const S* adj_f, S& adj_y, S* adj_v,
                                 S* adj_globals, S* force_out = nullptr) const {
    using std::sqrt;
    if (force_out)
      for (int c = 0; c < dim; ++c) force_out[c] = S(0);
    if (!ground || impact) return;
    const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
    const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
    const S ve = S(p[p_global(kFrictionSmoothing)]);
    const S z = (S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1])) / wg;
    S sp, sg;
    softplus_sigmoid_of(z, sp, sg);  // model_math.h: one exp, the branch a select
    S vt2 = ve * ve;
    for (int c = 0; c < dim; ++c)
      if (c != 1) vt2 += S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
    const S q = sqrt(vt2);
    if (force_out) {
      // ground_force's expressions: F_n = E − d_g σ v_y, F_t = −μ E v_t / q
      const S elastic = kg * wg * sp;
      force_out[1] = elastic - dg * sg * S(x[x_vel(i) + 1]);
      for (int c = 0; c < dim; ++c)
        if (c != 1) force_out[c] = -mu * elastic * S(x[x_vel(i) + c]) / q;
    }
    adj_ground_terms(i, x, p, z, sp, sg, q, adj_f, adj_y, adj_v, adj_globals);
  }
  // the ground adjoint given particle i's z = (y_g − y)/w_g, softplus(z), σ(z) and the
  // friction norm q = sqrt(|v_t|² + v_ε²), computed (adj_ground_force) or read from the step
  // tape (adj_ground_taped)
  template <class S, class XIn, class PIn>
  STEER_HD void adj_ground_terms(int i, const XIn& x, const PIn& p, const S& z, const S& sp, const S& sg, const S& q,
                                 const S* adj_f, S& adj_y, S* adj_v, S* adj_globals) const {
    const S kg = S(p[p_global(kGroundStiffness)]), dg = S(p[p_global(kGroundDamping)]);
    const S wg = S(p[p_global(kGroundSmoothing)]), mu = S(p[p_global(kFriction)]);
    const S ve = S(p[p_global(kFrictionSmoothing)]);
    const S elastic = kg * wg * sp;
    const S vy = S(x[x_vel(i) + 1]);
    S vdotf = S(0);
    for (int c = 0; c < dim; ++c)
      if (c != 1) vdotf += S(x[x_vel(i) + c]) * adj_f[c];
    const S q3 = q * q * q;
    // friction F_t = −μ E v_t / q
    S adj_elastic = -mu * vdotf / q;
    adj_globals[kFriction] += -elastic * vdotf / q;
    adj_globals[kFrictionSmoothing] += mu * elastic * vdotf * ve / q3;
    for (int c = 0; c < dim; ++c)
      if (c != 1) adj_v[c] += -mu * elastic * (adj_f[c] / q - S(x[x_vel(i) + c]) * vdotf / q3);
    // normal F_n = E − d_g σ(z) v_y
    const S adj_n = adj_f[1];
    adj_elastic += adj_n;
    adj_v[1] += -adj_n * dg * sg;
    adj_globals[kGroundDamping] += -adj_n * sg * vy;
    // z-dependence: ∂E/∂z = k_g w_g σ, ∂(σ v_y)/∂z = σ(1 − σ) v_y
    const S adj_z = adj_elastic * kg * wg * sg - adj_n * dg * sg * (S(1) - sg) * vy;
    adj_globals[kGroundStiffness] += adj_elastic * wg * sp;
    // E = k_g w sp(z) at fixed p: ∂/∂w = k_g sp + ∂/∂z · (−z/w)
    adj_globals[kGroundSmoothing] += adj_elastic * kg * sp + adj_z * (-z / wg);
    adj_y += -adj_z / wg;
    adj_globals[kGroundHeight] += adj_z / wg;
  }

  // forces on particle i (springs, and the penalty ground) and its free velocity
  // v* = e^{−ζh} v + h (f/m − g ŷ)
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void free_velocity(int i, const S& t, const XIn& x, const UIn& u, const PIn& p, S* f, S* fg, S* vstar) const {
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
  STEER_HD void finish_velocity(int i, const S& decay, const XIn& x, const PIn& p, const S* f, const S* fg,
                                S* vstar) const {
    const S h = S(dt);
    const S m = S(p[p_mass(i)]);
    for (int c = 0; c < dim; ++c) {
      S a = (f[c] + fg[c]) / m;
      if (c == 1) a -= S(p[p_global(kGravity)]);
      vstar[c] = decay * S(x[x_vel(i) + c]) + h * a;
    }
  }

  // (x_i, v*_i) -> (x'_i, v'_i): free flight, or the time-of-impact projection
  template <class S, class XIn, class PIn, class XOut>
  STEER_HD void integrate(int i, const XIn& x, const PIn& p, const S* vstar, XOut& xn) const {
    const S h = S(dt);
    bool free_flight = !(ground && impact);
    if constexpr (!is_pack<S>::value) {
      const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
      if (!free_flight) free_flight = !(y + h * vstar[1] < yg);
    }
    if (free_flight) {
      for (int c = 0; c < dim; ++c) {
        xn[x_vel(i) + c] = vstar[c];
        xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + h * vstar[c];
      }
      return;
    }
    // (simd.h packs take only the penalty ground: MassSpring::packable)
    if constexpr (!is_pack<S>::value) integrate_impact<S>(i, x, p, vstar, xn);
  }
  template <class S, class XIn, class PIn, class XOut>
  STEER_HD void integrate_impact(int i, const XIn& x, const PIn& p, const S* vstar, XOut& xn) const {
    using std::sqrt;
    const S h = S(dt);
    const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
    const S e = S(p[p_global(kRestitution)]), mu = S(p[p_global(kFriction)]), ve = S(p[p_global(kFrictionSmoothing)]);
    const S s = y > yg ? (y - yg) / (-h * vstar[1]) : S(0);
    const S vy = -e * vstar[1];
    const S dn = -(S(1) + e) * vstar[1];
    S q2 = ve * ve;
    for (int c = 0; c < dim; ++c)
      if (c != 1) q2 += vstar[c] * vstar[c];
    const S fct = S(1) / (S(1) + mu * dn / sqrt(q2));
    xn[x_vel(i) + 1] = vy;
    xn[x_pos(i) + 1] = yg + (S(1) - s) * h * vy;
    for (int c = 0; c < dim; ++c) {
      if (c == 1) continue;
      const S vt = fct * vstar[c];
      xn[x_vel(i) + c] = vt;
      xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + s * h * vstar[c] + (S(1) - s) * h * vt;
    }
  }
  // adjoint of integrate: the part reaching x_i directly (xbar) and v*_i (vbar); the impact's
  // global parameters (y_g, e, μ, v_ε) into adj_globals when it is not null
  template <class S, class XIn, class PIn, class XnAdj>
  STEER_HD void adj_integrate(int i, const XIn& x, const PIn& p, const S* vstar, const XnAdj& adj_xn, S* xbar, S* vbar,
                              S* adj_globals) const {
    using std::sqrt;
    const S h = S(dt);
    const S yg = S(p[p_global(kGroundHeight)]), y = S(x[x_pos(i) + 1]);
    if (!(ground && impact) || !(y + h * vstar[1] < yg)) {
      // x' = x + h v', v' = v*
      for (int c = 0; c < dim; ++c) {
        xbar[c] = S(adj_xn[x_pos(i) + c]);
        vbar[c] = S(adj_xn[x_vel(i) + c]) + h * S(adj_xn[x_pos(i) + c]);
      }
      return;
    }
    const S e = S(p[p_global(kRestitution)]), mu = S(p[p_global(kFriction)]), ve = S(p[p_global(kFrictionSmoothing)]);
    const bool above = y > yg;
    const S s = above ? (y - yg) / (-h * vstar[1]) : S(0);
    const S vy = -e * vstar[1];
    const S dn = -(S(1) + e) * vstar[1];
    S q2 = ve * ve;
    for (int c = 0; c < dim; ++c)
      if (c != 1) q2 += vstar[c] * vstar[c];
    const S q = sqrt(q2);
    const S r = mu * dn / q;
    const S fct = S(1) / (S(1) + r);
    S adj_s = S(0), adj_fct = S(0), adj_yg = S(0), adj_e = S(0);
    for (int c = 0; c < dim; ++c) xbar[c] = vbar[c] = S(0);
    // tangential: x'_t = x_t + s h v*_t + (1 − s) h v'_t, v'_t = fct v*_t
    for (int c = 0; c < dim; ++c) {
      if (c == 1) continue;
      const S ax = S(adj_xn[x_pos(i) + c]);
      const S vt = fct * vstar[c];
      const S adj_vt = S(adj_xn[x_vel(i) + c]) + (S(1) - s) * h * ax;
      xbar[c] = ax;
      vbar[c] += s * h * ax + fct * adj_vt;
      adj_s += h * (vstar[c] - vt) * ax;
      adj_fct += vstar[c] * adj_vt;
    }
    // vertical: y' = y_g + (1 − s) h v'_y, v'_y = −e v*_y
    const S ay = S(adj_xn[x_pos(i) + 1]);
    const S adj_vy = S(adj_xn[x_vel(i) + 1]) + (S(1) - s) * h * ay;
    adj_yg += ay;
    adj_s += -h * vy * ay;
    vbar[1] += -e * adj_vy;
    adj_e += -vstar[1] * adj_vy;
    // fct = 1/(1 + r), r = μ Δn / q, Δn = −(1 + e) v*_y, q = sqrt(|v*_t|² + v_ε²)
    const S adj_r = -fct * fct * adj_fct;
    const S adj_dn = adj_r * mu / q;
    const S adj_q = -adj_r * mu * dn / (q * q);
    for (int c = 0; c < dim; ++c)
      if (c != 1) vbar[c] += adj_q * vstar[c] / q;
    vbar[1] += -(S(1) + e) * adj_dn;
    adj_e += -vstar[1] * adj_dn;
    // s = (y − y_g)/(−h v*_y) while the particle starts above the ground
    if (above) {
      xbar[1] += adj_s / (-h * vstar[1]);
      adj_yg += -adj_s / (-h * vstar[1]);
      vbar[1] += adj_s * (y - yg) / (h * vstar[1] * vstar[1]);
    }
    if (adj_globals) {
      adj_globals[kGroundHeight] += adj_yg;
      adj_globals[kRestitution] += adj_e;
      adj_globals[kFriction] += adj_r * dn / q;
      adj_globals[kFrictionSmoothing] += adj_q * ve / q;
    }
  }

  // (k, x_k, u_k, θ) -> x_{k+1}
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1) {
      step_solo<S>(k, x, u, p, xn);
      return;
    }
#endif
    // lanes of a warp: each gathers its own particles' springs (every spring evaluated at
    // both ends, each end by the lane that owns it: no atomics)
    const S t = S(dt * k);
    for (int i = ln.lane; i < n_particles; i += ln.width) {
      S f[3], fg[3], vstar[3] = {S(0), S(0), S(0)};
      free_velocity<S>(i, t, x, u, p, f, fg, vstar);
      integrate<S>(i, x, p, vstar, xn);
    }
  }

  // ---- one lane per rollout (Lanes::width == 1: the CPU backend, host only) ----
  // One lane owns the whole robot, so the per-step work need not be split by owner: e^{−ζh}
  // and the phase bank sin/cos(ω t + 2πj/n) are computed once per step, and every spring once
  // (its tension, activation tanh and sqrt), scattered onto both ends, instead of once per end
  // with its own sin/cos and tanh. The lane-strided gather above evaluates 2S springs, 2S
  // sin/cos pairs and tanhs and N exponentials of ζ per step; this path S springs, S tanhs,
  // one sin/cos pair, one exponential of ζ.
  //
  // step_solo is bitwise the lane-strided step: the springs' forces accumulate in xn's
  // velocity slots (zeroed first) in increasing spring order, which is the CSR order of
  // every particle's gather (pack_topology lists a particle's springs in increasing order),
  // F n̂ is added at a and subtracted at b (x − y == x + (−1·y) exactly), and the phase bank
  // holds the rotation's values. xn must not alias x (as for the strided step).
  //
  // tp (step_taped; tape_fits): also keeps the step's intermediates in *tp. The taped and the
  // plain step are this one function (the tape only stores values it computes anyway, at
  // compile time removed when tp is nullptr), so x_{k+1} is the same bits either way.
  template <class S, class XIn, class UIn, class PIn, class XOut, class Tape = std::nullptr_t>
  void step_solo(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, Tape tp = nullptr) const {
    constexpr bool taped = !std::is_same<Tape, std::nullptr_t>::value;
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
          for_each_phase<S>(t, p, [&](int j, const S& sn, const S& cs) { tp->sn[j] = sn, tp->cs[j] = cs; });
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

  // the adjoint of step_solo for the penalty ground (or none) with at most kSoloParticles
  // particles; the impact ground and larger robots take the lane-strided adj_step with one lane.
  // Three passes, each element once:
  //   particles: v̄* = v̄' + h x̄' (x' = x + h v*, v' = v*), x̄ += x̄', v̄ += e^{−ζh} v̄*,
  //              f̄_i = h v̄*_i / m_i (force adjoint), ḡ −= m_i f̄_i,y, ζ̄ −= h e^{−ζh} v·v̄*
  //   springs:   ḡ_s = f̄_a − f̄_b (the force on a is g_s = F n̂, on b −g_s): adj_spring_force
  //              gives d̄ (d = x_b − x_a) and Δv̄ (Δv = v_b − v_a), θ_s, the actuator's w, b
  //              and ω's share; the tension is summed per particle for the mass adjoint
  //   particles: ground force and its adjoint (one softplus/sigmoid pair), m̄_i = −f_i·f̄_i/m_i
  // The terms are the strided adj_step's; only the order of some sums differs (rounding).
  static constexpr int kSoloParticles = 256;
  template <class S>
  bool solo_adjoint_fits() const {
    return is_real_scalar<S>::value && !(ground && impact) && n_particles <= kSoloParticles && dim <= 3;
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  void adj_step_solo(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                     const XnAdj& adj_xn) const {
    const S h = S(dt), t = S(dt * k);
    const S decay = exp_of(-S(p[p_global(kVelocityDamping)]) * h);
    PhaseBank<S> pb;
    fill_phases<S>(t, p, pb);
    S adj_globals[kNumGlobals];
    for (int q = 0; q < kNumGlobals; ++q) adj_globals[q] = S(0);
    S fbar[3 * kSoloParticles];  // f̄_i [1/N · loss units], particle i at 3i
    S fsum[3 * kSoloParticles];  // Σ of spring forces on particle i [N]
    for (int i = 0; i < n_particles; ++i) {
      const S m = S(p[p_mass(i)]);
      for (int c = 0; c < dim; ++c) {
        const S xb = S(adj_xn[x_pos(i) + c]);
        const S vb = S(adj_xn[x_vel(i) + c]) + h * xb;  // v̄*
        adj_x[x_pos(i) + c] += xb;
        adj_x[x_vel(i) + c] += decay * vb;
        fbar[3 * i + c] = h * vb / m;
        fsum[3 * i + c] = S(0);
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
      const S F = adj_spring_force<S>(s, t, x, u, p, adj_g, adj_d, adj_dv, adj_u, adj_p, true, sinusoid, adj_w, n,
                                      &pb, rest_from_positions ? &adj_rest : nullptr);
      for (int c = 0; c < dim; ++c) {
        adj_x[x_pos(a) + c] -= adj_d[c];
        adj_x[x_pos(b) + c] += adj_d[c];
        adj_x[x_vel(a) + c] -= adj_dv[c];
        adj_x[x_vel(b) + c] += adj_dv[c];
        const S g = F * n[c];
        fsum[3 * a + c] += g;
        fsum[3 * b + c] -= g;
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
      adj_ground_force<S>(i, x, p, fb, adj_y, adj_v, adj_globals, fg);
      adj_x[x_pos(i) + 1] += adj_y;
      for (int c = 0; c < dim; ++c) adj_x[x_vel(i) + c] += adj_v[c];
      // m̄_i = −(f_i · f̄_i)/m_i, with f_i the non-gravity force (gravity enters as −g ŷ)
      S fdot = S(0);
      for (int c = 0; c < dim; ++c) fdot += (fsum[3 * i + c] + fg[c]) * fb[c];
      adj_p[p_mass(i)] += -fdot / S(p[p_mass(i)]);
    }
    if (sinusoid) adj_globals[kActuationFrequency] += adj_w;
    for (int q = 0; q < kNumGlobals; ++q) adj_p[p_global(q)] += adj_globals[q];
  }

  // ---- the step tape's adjoint (one lane, host) ----
  // The taped path: one lane, the penalty ground (or none), at most kTapeParticles particles
  // and kTapeSprings springs, at most kPhaseCache phases. For floating-point S this implies
  // solo_adjoint_fits, and adj_step_taped is then adj_step_solo with the recomputed values read
  // from the tape: the same operations on the same operands in the same order, so the same
  // bits. (Other S, e.g. op_count's Counted<S>, also take it; their adj_step is the strided one,
  // whose sums run in another order.)
  template <class S>
  bool tape_fits() const {
    return !(ground && impact) && n_particles <= kTapeParticles && n_springs <= kTapeSprings && dim <= 3 &&
           !(actuation == kSinusoid && n_phases > kPhaseCache);
  }
  // bytes of one step's tape with its share of the TapeStorage (rollout.h's stored forward
  // budgets T of them per thread)
  template <class S>
  long long step_tape_bytes() const {
    return (long long)sizeof(StepTape<S>) + (long long)n_particles * (long long)sizeof(ParticleTape<S>) +
           (long long)n_springs * (long long)sizeof(SpringTape<S>);
  }
  // simd.h packs (cpu_packed.h): W rollouts advance in lockstep through step_solo (with its
  // tape) and adj_step_solo_taped on PackD<W>, the paths tape_fits admits
  bool packable() const { return tape_fits<double>(); }
  // adj_spring_force (write_params, write_frequency = sinusoid) from spring s's tape entry:
  // the same expressions, with ℓ, n̂, Δv·n̂, F, act and L0 read instead of recomputed; n̂ into
  // nhat (zero at zero length)
  template <class S, class XIn, class UIn, class PIn, class UAdj, class PAdj>
  void adj_spring_taped(int s, const S& t, const XIn& x, const StepTape<S>& tp, const UIn& u, const PIn& p,
                        const S* adj_g, S* adj_d, S* adj_dv, UAdj& adj_u, PAdj& adj_p, S& adj_w, S* nhat,
                        S* adj_rest) const {
    (void)u;
    const SpringTape<S>& e = tp.spring[s];
    for (int c = 0; c < dim; ++c) adj_d[c] = adj_dv[c] = S(0);
    for (int c = 0; c < dim; ++c) nhat[c] = S(0);
    if (adj_rest) *adj_rest = S(0);
    const S l = e.l;
    // zero force and derivative at zero length (spring_force's branch). In a pack's zero-length
    // lanes the tape holds F = 0 and n̂ = 0, ℓ is replaced by 1 in the divisions and ḡ·n̂ by 0,
    // so every term below is 0 there (its scalar run adds nothing).
    const auto live = l > S(1e-12);
    if (!any_lane(live)) return;
    const S l_div = select(live, l, S(1));
    const int a = end_a(s), b = end_b(s);
    S dv[3], g_n = S(0);
    const S* n = e.n;
    for (int c = 0; c < dim; ++c) {
      dv[c] = S(x[x_vel(b) + c]) - S(x[x_vel(a) + c]);
      g_n += adj_g[c] * n[c];
    }
    if constexpr (is_pack<S>::value) g_n = select(live, g_n, S(0));
    const S dv_n = e.dv_n, F = e.F;
    const int act = actuator(s);
    const S k = S(p[p_stiffness(s)]), cs = S(p[p_damping(s)]);
    const S L0 = e.L0;
    S act_v = S(0), target = L0, scale = S(1);
    if (act >= 0) {
      act_v = e.act;
      scale = S(1) + S(p[p_amplitude(s)]) * act_v;
      target = L0 * scale;
    }
    // g = F n̂:  ∂g/∂d = F (I − n̂n̂ᵀ)/ℓ + n̂ (k n̂ᵀ + c Δvᵀ (I − n̂n̂ᵀ)/ℓ),  ∂g/∂Δv = c n̂ n̂ᵀ
    for (int c = 0; c < dim; ++c) {
      adj_d[c] = F * (adj_g[c] - n[c] * g_n) / l_div + g_n * (k * n[c] + cs * (dv[c] - n[c] * dv_n) / l_div);
      adj_dv[c] = g_n * cs * n[c];
    }
    // F = k (ℓ − L) + c Δv·n̂,  L = L0 (1 + α act)
    const S adj_target = -k * g_n;
    if (adj_rest) *adj_rest = adj_target * scale;
    adj_p[p_stiffness(s)] += g_n * (l - target);
    adj_p[p_damping(s)] += g_n * dv_n;
    if (!rest_from_positions) adj_p[p_rest_length(s)] += adj_target * scale;
    if (act >= 0) {
      adj_p[p_amplitude(s)] += adj_target * L0 * act_v;
      const S adj_act = adj_target * L0 * S(p[p_amplitude(s)]);
      if (actuation == kRaw) {
        adj_u[act] += adj_act;
      } else {
        // act = tanh(z), z = Σ_j w_aj sin(ω t + 2πj/n) + b_a (adj_activation's phase-bank path)
        const S adj_z = adj_act * (S(1) - act_v * act_v);
        adj_p[p_bias(act)] += adj_z;
        for (int j = 0; j < n_phases; ++j) adj_p[p_weight(act, j)] += adj_z * tp.sn[j];
        for (int j = 0; j < n_phases; ++j) adj_w += adj_z * S(p[p_weight(act, j)]) * tp.cs[j] * t;
      }
    }
    for (int c = 0; c < dim; ++c) nhat[c] = n[c];
  }
  // adj_ground_force from particle i's tape entry (z, softplus, σ, q read instead of recomputed)
  template <class S, class XIn, class PIn>
  void adj_ground_taped(int i, const XIn& x, const PIn& p, const ParticleTape<S>& e, const S* adj_f, S& adj_y,
                        S* adj_v, S* adj_globals) const {
    if (!ground || impact) return;
    adj_ground_terms(i, x, p, e.z, e.sp, e.sg, e.q, adj_f, adj_y, adj_v, adj_globals);
  }
  // adj_step_solo reading step k's tape: per step no exp of ζ, no phase rotation; per spring
  // no sqrt, division by ℓ for n̂, nor tanh; per particle no softplus/sigmoid exp and log1p,
  // no sqrt of the friction norm, and the mass adjoint's force f_i = Σ ±F n̂ + f_ground read.
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  void adj_step_solo_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& tp, XAdj& adj_x,
                           UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn) const {
    const S h = S(dt), t = S(dt * k);
    const S decay = tp.decay;
    S adj_globals[kNumGlobals];
    for (int q = 0; q < kNumGlobals; ++q) adj_globals[q] = S(0);
    S fbar[3 * kTapeParticles];  // f̄_i [1/N · loss units], particle i at 3i
    for (int i = 0; i < n_particles; ++i) {
      const S m = S(p[p_mass(i)]);
      for (int c = 0; c < dim; ++c) {
        const S xb = S(adj_xn[x_pos(i) + c]);
        const S vb = S(adj_xn[x_vel(i) + c]) + h * xb;  // v̄*
        adj_x[x_pos(i) + c] += xb;
        adj_x[x_vel(i) + c] += decay * vb;
        fbar[3 * i + c] = h * vb / m;
        adj_globals[kVelocityDamping] += -h * decay * S(x[x_vel(i) + c]) * vb;
      }
      adj_globals[kGravity] += -m * fbar[3 * i + 1];  // a_y = … − g:  ḡ = −h v̄*_y = −m f̄_y
    }
    S adj_w = S(0);
    for (int s = 0; s < n_springs; ++s) {
      const int a = end_a(s), b = end_b(s);
      S adj_g[3], adj_d[3], adj_dv[3], n[3], adj_rest;
      for (int c = 0; c < dim; ++c) adj_g[c] = fbar[3 * a + c] - fbar[3 * b + c];
      adj_spring_taped<S>(s, t, x, tp, u, p, adj_g, adj_d, adj_dv, adj_u, adj_p, adj_w, n,
                          rest_from_positions ? &adj_rest : nullptr);
      for (int c = 0; c < dim; ++c) {
        adj_x[x_pos(a) + c] -= adj_d[c];
        adj_x[x_pos(b) + c] += adj_d[c];
        adj_x[x_vel(a) + c] -= adj_dv[c];
        adj_x[x_vel(b) + c] += adj_dv[c];
      }
      if (rest_from_positions) {
        adj_rest_length_at<S>(s, a, p, adj_p, adj_rest);
        adj_rest_length_at<S>(s, b, p, adj_p, adj_rest);
      }
    }
    for (int i = 0; i < n_particles; ++i) {
      S adj_y = S(0), adj_v[3] = {S(0), S(0), S(0)};
      const S* fb = fbar + 3 * i;
      const ParticleTape<S>& e = tp.particle[i];
      adj_ground_taped<S>(i, x, p, e, fb, adj_y, adj_v, adj_globals);
      adj_x[x_pos(i) + 1] += adj_y;
      for (int c = 0; c < dim; ++c) adj_x[x_vel(i) + c] += adj_v[c];
      // m̄_i = −(f_i · f̄_i)/m_i, with f_i the non-gravity force (gravity enters as −g ŷ)
      S fdot = S(0);
      for (int c = 0; c < dim; ++c) fdot += e.f[c] * fb[c];
      adj_p[p_mass(i)] += -fdot / S(p[p_mass(i)]);
    }
    if (actuation == kSinusoid) adj_globals[kActuationFrequency] += adj_w;
    for (int q = 0; q < kNumGlobals; ++q) adj_p[p_global(q)] += adj_globals[q];
  }

  // rollout.h's step-tape protocol. step_taped = step (bit for bit) and keeps the tape;
  // adj_step_taped = adj_step from it. One lane on the host with tape_fits takes the taped
  // one-lane path; everything else (lanes > 1, the device, the impact ground, large robots)
  // runs step / adj_step and leaves the tape unused (the same predicate on both sides, so an
  // unfilled tape is never read).
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_taped(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& tp,
                           const Lanes& ln = Lanes{}) const {
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1 && tape_fits<S>()) {
      step_solo<S>(k, x, u, p, xn, &tp);
      return;
    }
#endif
    (void)tp;
    step<S>(k, x, u, p, xn, ln);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& tp, XAdj& adj_x,
                               UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1 && tape_fits<S>()) {
      adj_step_solo_taped<S>(k, x, u, p, tp, adj_x, adj_u, adj_p, adj_xn);
      return;
    }
#endif
    (void)tp;
    adj_step<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);
  }

  // the adjoint of v*_j (vbar) and of the force on particle j (f̄_j = h v̄*_j / m_j). With the
  // penalty ground v̄*_j = v̄'_j + h x̄'_j comes from the incoming adjoint alone; the impact
  // ground needs v*_j itself, recomputed by a gather over j's springs
  template <class S, class XIn, class UIn, class PIn, class XnAdj>
  STEER_HD void force_adjoint(int j, const S& t, const XIn& x, const UIn& u, const PIn& p, const XnAdj& adj_xn, S* out,
                              S* xbar = nullptr, S* vbar_out = nullptr, S* adj_globals = nullptr) const {
    const S h = S(dt), m = S(p[p_mass(j)]);
    S vstar[3] = {S(0), S(0), S(0)}, xb[3], vb[3];
    if (ground && impact) {
      S f[3], fg[3];
      free_velocity<S>(j, t, x, u, p, f, fg, vstar);
    }
    adj_integrate<S>(j, x, p, vstar, adj_xn, xb, vb, adj_globals);
    for (int c = 0; c < dim; ++c) {
      out[c] = h * vb[c] / m;
      if (xbar) xbar[c] = xb[c];
      if (vbar_out) vbar_out[c] = vb[c];
    }
  }

  // vector-Jacobian product of step: accumulates adj_x, adj_u, adj_p from adj_xn
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                         const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1 && solo_adjoint_fits<S>()) {
      adj_step_solo<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn);
      return;
    }
#endif
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
      S fa[3], n[3], xb[3], vb[3];
      force_adjoint<S>(i, t, x, u, p, adj_xn, fa, xb, vb, solo ? adj_globals : nullptr);  // impact globals
      for (int c = 0; c < dim; ++c) {
        adj_x[x_pos(i) + c] += xb[c];
        adj_x[x_vel(i) + c] += decay * vb[c];  // v* = e^{−ζh} v + h a
      }
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
          if (actuator(s) >= 0) act_scale = S(1) + S(p[p_amplitude(s)]) * activation<S>(actuator(s), t, u, p, &pb);
          S g_n = S(0), l2 = S(0), d[3];
          for (int c = 0; c < dim; ++c) {
            d[c] = S(x[x_pos(end_b(s)) + c]) - S(x[x_pos(end_a(s)) + c]);
            l2 += d[c] * d[c];
          }
          if (l2 > S(1e-24)) {
            using std::sqrt;
            const S l = sqrt(l2);
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
        for (int c = 0; c < dim; ++c) adj_globals[kVelocityDamping] += -h * decay * S(x[x_vel(i) + c]) * vb[c];
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
      adj_spring_force<S>(s, t, x, u, p, adj_g, adj_d, adj_dv, adj_u, adj_p, true, false, dummy_w, nullptr, &pb);
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
      for (int c = 0; c < dim; ++c) adj_globals[kVelocityDamping] += -h * decay * S(x[x_vel(i) + c]) * vb[c];
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

  // ∂(F_s n̂)/∂ω applied to adj_g (the actuation frequency's share of spring s)
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void adj_frequency(int s, const S& t, const XIn& x, const UIn& u, const PIn& p, const S* adj_g,
                              S& adj_w, const PhaseBank<S>* pb = nullptr) const {
    using std::cos;
    using std::sqrt;
    const int a = end_a(s), b = end_b(s), act = actuator(s);
    S l2 = S(0), d[3];
    for (int c = 0; c < dim; ++c) {
      d[c] = S(x[x_pos(b) + c]) - S(x[x_pos(a) + c]);
      l2 += d[c] * d[c];
    }
    const S l = sqrt(l2);
    if (!(l > S(1e-12))) return;
    S g_n = S(0);
    for (int c = 0; c < dim; ++c) g_n += adj_g[c] * d[c] / l;
    const S act_v = activation<S>(act, t, u, p, pb);
    const S adj_act = -S(p[p_stiffness(s)]) * g_n * rest_length<S>(s, p) * S(p[p_amplitude(s)]);
    const S adj_z = adj_act * (S(1) - act_v * act_v);
    if (pb && pb->ok) {
      for (int j = 0; j < n_phases; ++j) adj_w += adj_z * S(p[p_weight(act, j)]) * pb->cs[j] * t;
      return;
    }
    for_each_phase<S>(t, p, [&](int j, const S&, const S& cs) { adj_w += adj_z * S(p[p_weight(act, j)]) * cs * t; });
  }

  // ground contacts: one per particle, active while below the ground height
  STEER_HD int num_contacts() const { return ground ? n_particles : 0; }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn& x, const PIn& p, int i) const {
    // the impact ground leaves a landed particle exactly at y_g
    if (impact) return S(x[x_pos(i) + 1]) <= S(p[p_global(kGroundHeight)]);
    return S(x[x_pos(i) + 1]) < S(p[p_global(kGroundHeight)]);
  }
  // centre of mass along an axis: Σ m_i x_i / Σ m_i [m]
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int axis) const {
    S mx = S(0), M = S(0);
    for (int i = 0; i < n_particles; ++i) {
      mx += S(p[p_mass(i)]) * S(x[x_pos(i) + axis]);
      M += S(p[p_mass(i)]);
    }
    return mx / M;
  }
  // ∂c/∂x_i = m_i/M,  ∂c/∂m_i = (x_i − c)/M
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const {
    S mx = S(0), M = S(0);
    for (int i = 0; i < n_particles; ++i) {
      mx += S(p[p_mass(i)]) * S(x[x_pos(i) + axis]);
      M += S(p[p_mass(i)]);
    }
    const S c = mx / M;
    for (int i = 0; i < n_particles; ++i) {
      adj_x[x_pos(i) + axis] += adj_c * S(p[p_mass(i)]) / M;
      adj_p[p_mass(i)] += adj_c * (S(x[x_pos(i) + axis]) - c) / M;
    }
  }
  // kinetic ½ Σ m|v|², plus gravity and spring potentials [J]
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const {
    S e = S(0);
    for (int i = 0; i < n_particles; ++i)
      for (int c = 0; c < dim; ++c) e += S(0.5) * S(p[p_mass(i)]) * S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
    return e;
  }
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const {
    using std::sqrt;
    S e = kinetic_energy<S>(x, p);
    for (int i = 0; i < n_particles; ++i) e += S(p[p_mass(i)]) * S(p[p_global(kGravity)]) * S(x[x_pos(i) + 1]);
    for (int s = 0; s < n_springs; ++s) {
      S l2 = S(0);
      for (int c = 0; c < dim; ++c) {
        const S d = S(x[x_pos(end_b(s)) + c]) - S(x[x_pos(end_a(s)) + c]);
        l2 += d * d;
      }
      const S stretch = sqrt(l2) - rest_length<S>(s, p);
      e += S(0.5) * S(p[p_stiffness(s)]) * stretch * stretch;
    }
    return e;
  }
  // conservative: no damping of any kind, no ground, no actuation
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    if (ground || !(S(p[p_global(kVelocityDamping)]) == S(0))) return false;
    for (int s = 0; s < n_springs; ++s) {
      if (!(S(p[p_damping(s)]) == S(0))) return false;
      if (actuator(s) >= 0 && !(S(p[p_amplitude(s)]) == S(0))) return false;
    }
    return true;
  }
};

}  // namespace steer
