// MassSpring's data and layout: sizes and options, the θ and state slot offsets, the topology
// accessors, the phase bank and step-tape types, and the declarations of the member functions
// that the other headers of models/mass_spring/ define (one algorithm each, each adjoint after
// its function):
//   actuation.h    act_a = tanh(Σ_j w_aj sin(ω t + 2πj/n) + b_a) and its adjoint
//   springs.h      F_s = k_s (ℓ − L_s) + c_s Δv·n̂, L_s = L0_s (1 + α_s act), and its adjoint
//   ground.h       the penalty ground force, the time-of-impact step, and their adjoints
//   step.h         step and adj_step, the entry points, which select the path; the lane-strided
//                  symplectic step x_{k+1} = f(k, x_k, u_k, θ) and its vector-Jacobian product
//   step_solo.h    the one-lane symplectic step and adjoint, with the optional step tape
//   implicit.h     the backward-Euler step (Newton on the step's potential) and its adjoint
//   diagnostics.h  contacts, centre of mass, energy
//
// state x = (positions [m] (N·dim), velocities [m/s] (N·dim)); θ: per spring (k, c, L0, α), per
// particle (m, P), per actuator (w_a·, b_a), then the globals (enum Global).
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "steer/core.h"
#include "steer/model_contract.h"
#include "steer/model_math.h"

namespace steer {

struct MassSpring {
  enum Global {
    kGravity = 0,
    kVelocityDamping,
    kGroundHeight,
    kGroundStiffness,
    kGroundDamping,
    kGroundSmoothing,
    kFriction,
    kFrictionSmoothing,
    kActuationFrequency,
    kRestitution,
    kNumGlobals
  };
  enum Actuation { kSinusoid = 0, kRaw = 1 };
  static constexpr int kMaxState = 0;  // sized at run time: host-only reference adjoint
  static constexpr int kMaxControl = 0;
  static constexpr int kMaxParam = 0;
  static constexpr int kSpringParams = 4;  // k, c, L0, α
  // kernels/rollout_mass_spring_<precision>.cu (backend.h, has_cuda_kernels)
  static constexpr bool kCudaKernels = true;

  int dim = 2;
  int n_particles = 0;
  int n_springs = 0;
  int n_actuators = 0;
  int n_phases = 10;
  double dt = 0.004;
  int actuation = kSinusoid;
  bool ground = true;
  bool impact = false;  // ground by time-of-impact projection instead of penalty
  // the impact ground's stick law (DiffTaichi's mass_spring.py advance_toi): a particle that
  // would pass below y_g within the step while moving down (v*_y < −kStickSpeed) stops at y_g at
  // its time of impact, with zero velocity; no restitution, friction or damping after impact
  bool impact_stick = false;
  static constexpr double kStickSpeed = 1e-4;  // [m/s]
  bool rest_from_positions = false;            // L0_s = |P_b − P_a| from θ rest positions
  // ε [m]: a spring's length is |x_b − x_a| + ε and its force acts along (x_b − x_a)/(|…| + ε)
  // (DiffTaichi's mass_spring.py adds 10⁻⁴); 0: the length itself (springs.h)
  double length_offset = 0;
  // the time integrator: symplectic Euler (step.h, step_solo.h) or backward Euler in the
  // velocities, solved per step by Newton's method on the step's incremental potential
  // (implicit.h); bit i of a compiled-integrators mask (model_contract.h) is integrator i
  enum Integrator { kSymplecticEuler = 0, kBackwardEuler = 1 };
  int integrator = kSymplecticEuler;
  int newton_iterations =
      40;  // most Newton iterations of one implicit step (more: the step is NaN)

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
    return kSpringParams * n_springs + (1 + dim) * n_particles + (n_phases + 1) * n_actuators +
           kNumGlobals;
  }
  STEER_HD int topology_size() const { return 5 * n_springs + n_particles + 1; }

  // θ offsets
  STEER_HD int p_stiffness(int s) const { return s; }
  STEER_HD int p_damping(int s) const { return n_springs + s; }
  STEER_HD int p_rest_length(int s) const { return 2 * n_springs + s; }
  STEER_HD int p_amplitude(int s) const { return 3 * n_springs + s; }
  STEER_HD int p_mass(int i) const { return kSpringParams * n_springs + i; }
  STEER_HD int p_rest_position(int i) const {
    return kSpringParams * n_springs + n_particles + dim * i;
  }
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

  // ---- the phase bank ----
  // The phases sin/cos(ω t + 2πj/n) stored once per step (filled by for_each_phase, so
  // bit-identical) for the one-lane step and the adjoint, which need them for every actuated
  // spring. A fixed-size register/stack array: no allocation, per lane; used only for
  // floating-point S and n_phases <= kPhaseCache (otherwise `ok` is false and callers
  // recompute the rotation).
  static constexpr int kPhaseCache = 16;
  template <class S>
  struct PhaseBank {
    static constexpr int kCap = is_real_scalar<S>::value ? kPhaseCache : 1;
    S sn[kCap], cs[kCap];
    bool ok = false;
    STEER_HD bool phases_ready() const { return ok; }
  };

  // ---- the step tape (rollout.h's optional per-step tape; the CPU backend's uniform schedule)
  // ---- What adj_symplectic_solo would otherwise recompute of step k, kept by symplectic_solo for
  // that step's adjoint. Per spring: ℓ [m], n̂ [1], Δv·n̂ [m/s], the tension F [N], act [1] and L0
  // [m] (one sqrt, dim divisions, a tanh over the phase bank and, in rest-position mode, another
  // sqrt saved). Per particle: the total force f_i = springs + ground [N] (the mass adjoint's), and
  // the ground's z = (y_g − y)/w_g [1], softplus(z), σ(z) and q = sqrt(|v_t|² + v_ε²) [m/s]
  // (an exp, a log1p, a sqrt and three divisions saved). Per step: e^{−ζh} and the phases
  // sin/cos(ω t + 2πj/n).
  // The per-particle and per-spring entries live in a TapeStorage sized to the robot, bound to
  // the tapes by bind_tapes (steer/step_tapes.h allocates and binds them): n tapes take
  // n · (n_particles · 56 B + n_springs · 64 B) plus 264 B each in float64, one contiguous run,
  // so that the T tapes of a stored forward pass (rollout.h) fill memory as densely as its
  // states; arrays inline in the tape would be sized for the largest robot, and a small robot
  // would touch a sliver of each step's tape.
  // Robots over the bounds, the impact ground, more than kPhaseCache phases, the implicit
  // step and lanes > 1 leave the tape unused (tape_fits).
  template <class S>
  struct SpringTape {
    S l, n[3], dv_n, F, act, L0;  // 8 scalars: one 64 B cache line in float64
  };
  template <class S>
  struct ParticleTape {
    S f[3], z, sp, sg, q;
  };
  static constexpr int kTapeSprings = 1024;
  static constexpr int kTapeParticles = 256;
  static constexpr int kSoloParticles = 256;  // the one-lane adjoint's bound (adj_symplectic_solo)
  static_assert(kTapeParticles <= kSoloParticles,
                "the taped adjoint runs adj_symplectic_solo's arrays");
  template <class S>
  struct StepTape {
    S decay;                              // e^{−ζh} [1]
    S sn[kPhaseCache], cs[kPhaseCache];   // sin, cos(ω t + 2πj/n), sinusoid mode
    ParticleTape<S>* particle = nullptr;  // n_particles entries (TapeStorage)
    SpringTape<S>* spring = nullptr;      // n_springs entries (TapeStorage)
    // a tape's phases are always there where it is used (tape_fits: n_phases <= kPhaseCache)
    STEER_HD bool phases_ready() const { return true; }
  };
  // host: the particle and spring entries of n tapes
  template <class S>
  struct TapeStorage {
    std::vector<ParticleTape<S>> particle;
    std::vector<SpringTape<S>> spring;
  };

  // ---- the impact ground's step (ground.h, impact_step) ----
  // One particle's time-of-impact step, computed by the forward step and again by its adjoint:
  // e^{−ζh}, the held velocity increment w = v* − e^{−ζh} v [m/s], the impact fraction s [1] and
  // den = d(c + b s + A s²)/ds there (< 0), the velocity at impact v_in, after the reflection v_r
  // and at the end of the rest of the step v'' [m/s], the damping factor D(1 − s) [1], the
  // normal impulses Δn₁ (reflection) and Δn₂ (held on the ground) [m/s], the friction norms
  // q₁, q₂ [m/s] and factors fr₁, fr₂ [1], and the branches taken.
  template <class S>
  struct ImpactStep {
    S decay, w[3], s, den, vin[3], vr[3], damp, vpp[3], dn1, dn2, q1, q2, fr1, fr2;
    bool above, approach, clamp;
  };

  // ---- the implicit step's working storage (implicit.h) ----
  // Fixed capacities, so that the step allocates nothing and runs in device code: the unknowns
  // are the N·dim end-of-step velocities; the Hessian is kept as its lower band, row i holding
  // columns i − bw .. i (bw = dim (max_s |a_s − b_s| + 1) − 1 from the particle numbering), in
  // n (bw + 1) ≤ kImplicitBand scalars (the largest DiffTaichi robot takes 52 · 38 = 1976).
  // implicit_fits() says whether a robot fits. S may be a simd.h pack: then every lane solves
  // its own rollout's step, and `converged` is a lane mask.
  static constexpr int kImplicitDofs = 256;     // N·dim
  static constexpr int kImplicitBand = 3072;    // N·dim·(bw + 1)
  static constexpr int kImplicitSprings = 256;  // S
  template <class S>
  struct ImplicitWork {
    using Mask = decltype(std::declval<S>() < std::declval<S>());
    S H[kImplicitBand];  // lower band of the Hessian of E, then its LDLᵀ factor (D on the diagonal)
    S w[kImplicitDofs];         // the iterate v' [m/s]
    S g[kImplicitDofs];         // ∇E(v') [N·s]; the line search's trial point [m/s]
    S d[kImplicitDofs];         // the Newton direction [m/s]
    S t[kImplicitDofs];         // the line search's accepted point [m/s]
    S target[kImplicitDofs];    // e^{−ζh} v [m/s]
    S L[kImplicitSprings];      // target lengths L_s at t_k [m]
    S sg[kImplicitDofs / 2];    // σ(z_k) of each particle [1]
    S load[kImplicitDofs / 2];  // friction's normal load k_g w_g softplus(z_k) [N]
    int n = 0, bw = 0;          // unknowns, half-bandwidth
    int iterations = 0;         // Newton iterations taken (the most over a pack's lanes)
    Mask converged{};
  };

  // ---- actuation.h ----
  template <class S, class PIn, class F>
  STEER_HD void for_each_phase(const S& t, const PIn& p, F&& f) const;
  template <class S, class PIn>
  STEER_HD void fill_phases(const S& t, const PIn& p, PhaseBank<S>& pb) const;
  template <class S, class UIn, class PIn>
  STEER_HD S activation(int a, const S& t, const UIn& u, const PIn& p,
                        const PhaseBank<S>* pb = nullptr) const;
  template <class S, class UIn, class PIn, class UAdj, class PAdj, class Bank = PhaseBank<S>>
  STEER_HD void adj_activation(int a, const S& t, const UIn& u, const PIn& p, UAdj& adj_u,
                               PAdj& adj_p, bool write_frequency, S& adj_w, const S& adj_act,
                               const Bank* pb = nullptr, const S* act_known = nullptr) const;

  // ---- springs.h ----
  template <class S, class PIn>
  STEER_HD S rest_length(int s, const PIn& p) const;
  template <class S, class PIn, class PAdj>
  STEER_HD void adj_rest_length_at(int s, int owner, const PIn& p, PAdj& adj_p,
                                   const S& adj_l0) const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD S spring_force(int s, const S& t, const XIn& x, const UIn& u, const PIn& p, S* nhat,
                          const PhaseBank<S>* pb = nullptr, SpringTape<S>* keep = nullptr) const;
  template <class S, class XIn, class UIn, class PIn, class UAdj, class PAdj,
            class Tape = std::nullptr_t>
  STEER_HD S adj_spring_force(int s, const S& t, const XIn& x, const UIn& u, const PIn& p,
                              const S* adj_g, S* adj_d, S* adj_dv, UAdj& adj_u, PAdj& adj_p,
                              bool write_params, bool write_frequency, S& adj_w, S* nhat = nullptr,
                              const PhaseBank<S>* pb = nullptr, S* adj_rest = nullptr,
                              Tape tape = nullptr) const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void adj_frequency(int s, const S& t, const XIn& x, const UIn& u, const PIn& p,
                              const S* adj_g, S& adj_w, const PhaseBank<S>* pb = nullptr) const;

  // ---- ground.h ----
  template <class S, class XIn, class PIn>
  STEER_HD void ground_force(int i, const XIn& x, const PIn& p, S* out,
                             ParticleTape<S>* keep = nullptr) const;
  template <class S, class XIn, class PIn, class Tape = std::nullptr_t>
  STEER_HD void adj_ground_force(int i, const XIn& x, const PIn& p, const S* adj_f, S& adj_y,
                                 S* adj_v, S* adj_globals, S* force_out = nullptr,
                                 Tape tape = nullptr) const;
  template <class S, class XIn, class PIn>
  STEER_HD void adj_ground_terms(int i, const XIn& x, const PIn& p, const S& z, const S& sp,
                                 const S& sg, const S& q, const S* adj_f, S& adj_y, S* adj_v,
                                 S* adj_globals) const;
  template <class S, class XIn, class PIn, class XOut>
  STEER_HD void integrate(int i, const XIn& x, const PIn& p, const S* vstar, XOut& xn) const;
  template <class S, class XIn, class PIn>
  STEER_HD void impact_step(int i, const XIn& x, const PIn& p, const S* vstar,
                            ImpactStep<S>& st) const;
  template <class S, class XIn, class PIn, class XOut>
  STEER_HD void integrate_impact(int i, const XIn& x, const PIn& p, const S* vstar, XOut& xn) const;
  template <class S, class XIn, class PIn, class XnAdj>
  STEER_HD void adj_integrate(int i, const XIn& x, const PIn& p, const S* vstar,
                              const XnAdj& adj_xn, S* xbar, S* vbar, S* wbar, S* adj_globals) const;

  // ---- step.h ----
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void free_velocity(int i, const S& t, const XIn& x, const UIn& u, const PIn& p, S* f,
                              S* fg, S* vstar) const;
  template <class S, class XIn, class PIn>
  STEER_HD void finish_velocity(int i, const S& decay, const XIn& x, const PIn& p, const S* f,
                                const S* fg, S* vstar) const;
  template <class S, class XIn, class UIn, class PIn, class XnAdj>
  STEER_HD void force_adjoint(int j, const S& t, const XIn& x, const UIn& u, const PIn& p,
                              const XnAdj& adj_xn, S* out, S* xbar = nullptr, S* vbar_out = nullptr,
                              S* adj_globals = nullptr, S* wbar_out = nullptr) const;
  // The step and its adjoint, the model's only entry points (model_contract.h): the integrator
  // (the run-time field, among those compiled in kIntegrators), the lanes and the step tape
  // (NoTape, StepTape<S>* to fill, const StepTape<S>* to read) select the path below
  template <class S, unsigned kIntegrators = kAllIntegrators, class XIn, class UIn, class PIn,
            class XOut, class Tape = NoTape>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}, Tape tape = nullptr) const;
  template <class S, unsigned kIntegrators = kAllIntegrators, class XIn, class UIn, class PIn,
            class XAdj, class UAdj, class PAdj, class XnAdj, class Tape = NoTape>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{},
                         Tape tape = nullptr) const;
  // symplectic Euler on lanes of a warp, each gathering its own particles' springs, and its adjoint
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void symplectic_gather(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                                  const Lanes& ln) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_symplectic_gather(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                      UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn,
                                      const Lanes& ln) const;

  // ---- step_solo.h: symplectic Euler with one lane (every spring once), and the step tape ----
  template <class S, class XIn, class UIn, class PIn, class XOut, class Tape = NoTape>
  void symplectic_solo(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                       Tape tp = nullptr) const;
  template <class S>
  bool solo_adjoint_fits() const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj, class Tape = NoTape>
  void adj_symplectic_solo(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                           UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, Tape tp = nullptr) const;
  template <class S>
  bool tape_fits() const;
  template <class S>
  long long step_tape_bytes() const;
  bool packable() const;
  template <class S>
  void bind_tapes(StepTape<S>* tapes, int n, TapeStorage<S>& st) const;

  // ---- implicit.h: backward Euler, and its adjoint in stages ----
  STEER_HD int implicit_band() const;
  STEER_HD int implicit_fits() const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void implicit_prepare(int k, const XIn& x, const UIn& u, const PIn& p,
                                 ImplicitWork<S>& W) const;
  template <class S, class XIn, class PIn>
  STEER_HD S implicit_energy(const XIn& x, const PIn& p, const ImplicitWork<S>& W, const S* w,
                             S& scale) const;
  template <class S, class XIn, class PIn>
  STEER_HD void implicit_gradient(const XIn& x, const PIn& p, const ImplicitWork<S>& W, const S* w,
                                  S* g) const;
  template <class S, class XIn, class PIn, class Mask>
  STEER_HD Mask implicit_hessian(const XIn& x, const PIn& p, ImplicitWork<S>& W, const S* w,
                                 const Mask& clamp) const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void implicit_solve(int k, const XIn& x, const UIn& u, const PIn& p,
                               ImplicitWork<S>& W) const;
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void backward_euler(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                               const Lanes& ln) const;
  template <class S, class XIn, class PIn, class XnAdj>
  STEER_HD void implicit_adjoint_solve(const XIn& x, const PIn& p, ImplicitWork<S>& W,
                                       const XnAdj& adj_xn) const;
  template <class S, class XIn, class PIn, class XnAdj, class XAdj, class PAdj>
  STEER_HD void adj_implicit_inertia(const XIn& x, const PIn& p, const ImplicitWork<S>& W,
                                     const XnAdj& adj_xn, XAdj& adj_x, PAdj& adj_p,
                                     S* adj_globals) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj>
  STEER_HD void adj_implicit_spring(int s, const S& t, const XIn& x, const UIn& u, const PIn& p,
                                    const ImplicitWork<S>& W, const PhaseBank<S>& pb, XAdj& adj_x,
                                    UAdj& adj_u, PAdj& adj_p, S& adj_w) const;
  template <class S, class XIn, class PIn, class XAdj>
  STEER_HD void adj_implicit_ground(const XIn& x, const PIn& p, const ImplicitWork<S>& W,
                                    XAdj& adj_x, S* adj_globals) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_backward_euler(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                   UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn,
                                   const Lanes& ln) const;

  // ---- diagnostics.h ----
  // ground contacts: one per particle, active while below the ground height
  STEER_HD int num_contacts() const { return ground ? n_particles : 0; }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn& x, const PIn& p, int i) const;
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int axis) const;
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const;
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const;
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const;
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const;
};

// MassSpring as the CUDA kernels compile it for a symplectic-Euler model (FixedIntegrators,
// model_contract.h). MassSpring's step and adjoint branch on the integrator at run time, so a
// kernel instantiated for it also compiles the backward-Euler step (implicit.h), whose Newton
// solve keeps the banded Hessian, its factor and the iterates in the leading lane's frame; ptxas
// sizes every thread's stack for that path (tens of kB per thread) even when the batch is
// symplectic. This one compiles the symplectic step and adjoint only. The CUDA launcher runs
// symplectic models as this and backward-Euler ones as MassSpring; the CPU backend keeps
// MassSpring.
using MassSpringSymplectic =
    FixedIntegrators<MassSpring, integrator_bit(MassSpring::kSymplecticEuler)>;

}  // namespace steer
