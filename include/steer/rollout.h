// One rollout's forward pass with checkpoints and its checkpointed adjoint sweep, as
// host/device functions. The CPU backend calls them in a loop over rollouts (one
// thread each, one lane); the CUDA kernels call them from one thread per rollout, or
// from the lanes of a warp that share a rollout. Nothing here allocates: every buffer
// arrives as a strided view into batch arrays.
//
// forward : x_{k+1} = f(k, x_k, u_k, θ), k = 0..T−1; x_{sK} stored for s = 0..⌈T/K⌉−1, and x_T.
// backward: λ_T = ∂ℓ/∂x_T; for each segment from last to first, recompute its states from the
//           checkpoint, then λ_k = (∂f/∂x_k)ᵀ λ_{k+1} + ∂c/∂x_k, ū_k = (∂f/∂u_k)ᵀ λ_{k+1} +
//           ∂c/∂u_k, θ̄ += (∂f/∂θ)ᵀ λ_{k+1}; finally ∂L/∂x_0 = λ_0 (+ the loss's own x_0 terms).
// The recompute repeats the forward arithmetic exactly, so the gradient is bitwise the
// same for every K (checked in tests/problem/rollout_test.cpp).
//
// Binomial schedule (RolloutShape::schedule = kBinomial, docs/design.md, "Checkpointing"): memory
// is fixed at s snapshots whatever T is. The forward pass stores only x_0 (slot 0) and x_T; the
// backward sweep replays Griewank & Walther's binomial checkpointing ("Algorithm 799: Revolve", ACM
// TOMS 26(1), 2000) from x_0: with s snapshots and r repetitions it reverses β(s, r) = C(s + r, s)
// steps, and it takes the least r with β(s, r) ≥ T. It runs iteratively: a stack of the step
// indices held in snapshot slots 0..s−1 (RolloutRefs::stack, per-rollout scratch) replaces the
// recursion. Forward steps executed by the sweep: r·T − β(s + 1, r − 1) (binomial_forward_steps),
// at most r·T; every step is then reversed from a state recomputed by the same arithmetic, so the
// gradient is bitwise that of K = 1.
//
// Lanes: state-sized loops are lane-strided; loss terms and diagnostics are evaluated by
// the leading lane; sync() separates a phase's writes from the next phase's reads.
#pragma once

#include <type_traits>

#include <cmath>
#include <cstdint>

#include "steer/core.h"
#include "steer/loss.h"
#include "steer/model_contract.h"
#include "steer/reference_adjoint.h"

namespace steer {

// per-rollout diagnostics written by forward and backward
struct RolloutDiag {
  int event_step = -1;             // landing crossing step e, −1 if none
  int contact_steps = 0;           // Σ_k (active contacts in x_k), k = 1..T
  std::uint64_t contact_hash = 0;  // FNV-1a over (k, contact) of every active contact
  int nonfinite = 0;               // 1 if the loss or a state became inf/NaN
  double energy0 = 0;              // E(x_0) [J]
  double energy_max_dev = 0;       // max_k |E(x_k) − E(x_0)| [J]
  double kinetic_max = 0;          // max_k KE(x_k) [J], the scale the drift is measured against
  int conservative = 0;          // model reports conservative motion for these θ and zero controls
  double adj_seed_norm = 0;      // ‖λ‖ where the adjoint first became nonzero (walking back)
  double adj_x0_norm = 0;        // ‖λ_0‖
  double grad_u_first_norm = 0;  // ‖∂L/∂u_0‖
  double grad_u_last_norm = 0;   // ‖∂L/∂u_{T−1}‖
  long long recompute_steps = 0;  // forward steps executed by backward_rollout's recompute
};

// how the backward sweep gets its states back: uniform checkpoints every K steps with a
// segment recompute, or the binomial (Revolve) schedule with s snapshots
enum class CheckpointSchedule : int { kUniform = 0, kBinomial = 1 };

struct RolloutShape {
  int steps = 1;             // T
  int checkpoint_every = 1;  // K (uniform schedule)
  CheckpointSchedule schedule = CheckpointSchedule::kUniform;
  int snapshots = 2;               // s (binomial schedule): snapshot slots, x_0's included, ≥ 1
  bool reference_adjoint = false;  // use the dual-number adjoint instead of the hand one
  int traj_stride = 0;             // record x_k every traj_stride steps (0 = no recording)
  // Stored forward (CPU backend, uniform schedule). The CPU runs a rollout's backward sweep
  // right after its forward pass on the same thread, so what the forward keeps costs memory per
  // thread, not per rollout. store_forward_bytes is the most one thread may keep [bytes] (0 =
  // never): within it the CPU backend sets store_forward on its working copy of the shape,
  // with checkpoint_every = T. The forward pass then keeps every state x_0..x_T (seg) and,
  // for a model with a step tape, every step's tape, and the backward sweep reverses them
  // without recomputing a step: a gradient costs (taped forward + adjoint) instead of
  // (forward + taped recompute + adjoint), with the same bits (the taped step is the step).
  // The GPU recomputes as before (its memory is per rollout in flight).
  long long store_forward_bytes = 0;
  bool store_forward = false;
  STEER_HD bool binomial() const { return schedule == CheckpointSchedule::kBinomial; }
  STEER_HD int segments() const { return (steps + checkpoint_every - 1) / checkpoint_every; }
  // snapshot slots the binomial schedule uses: more than T are never filled
  STEER_HD int snapshot_slots() const { return snapshots < steps ? snapshots : steps; }
  // the checkpoint slot holding x_T (after the segment starts or the snapshots)
  STEER_HD int final_slot() const { return binomial() ? snapshot_slots() : segments(); }
  // checkpoint slots: one per segment start (uniform) or per snapshot (binomial), plus x_T
  STEER_HD int checkpoint_slots() const { return final_slot() + 1; }
  // scratch states: one segment's recompute (uniform); the two states a step reads and
  // writes plus x_{e+1} for the landing adjoint (binomial)
  STEER_HD int segment_slots() const { return binomial() ? 3 : checkpoint_every + 1; }
  // ints per rollout: the step index held in each snapshot slot (binomial only)
  STEER_HD int stack_slots() const { return binomial() ? snapshot_slots() : 0; }
  STEER_HD int traj_slots() const { return traj_stride > 0 ? steps / traj_stride + 1 : 0; }
};

// scratch memory of one rollout [bytes]: checkpoint and segment states, the two adjoint
// vectors λ and λ_prev, and the binomial schedule's index stack
template <class S>
long long rollout_scratch_bytes(const RolloutShape& sh, int nx) {
  return (long long)(sh.checkpoint_slots() + sh.segment_slots() + 2) * nx * (long long)sizeof(S) +
         (long long)sh.stack_slots() * (long long)sizeof(int);
}

// the most binomial snapshots whose scratch fits `budget` bytes per rollout (more than T are
// never used, so at most T); 0 when not even one fits
template <class S>
int binomial_snapshots_within(long long budget, int steps, int nx) {
  RolloutShape sh;
  sh.steps = steps;
  sh.schedule = CheckpointSchedule::kBinomial;
  sh.snapshots = 0;
  const long long fixed = rollout_scratch_bytes<S>(sh, nx);  // x_T, 3 working states, λ, λ_prev
  const long long per = (long long)nx * (long long)sizeof(S) + (long long)sizeof(int);
  if (budget < fixed + per) return 0;
  const long long s = (budget - fixed) / per;
  return int(s < steps ? s : steps);
}

// ---- binomial checkpointing (Griewank & Walther 2000) ----
// β(s, r) = C(s + r, s): the most steps s snapshots reverse when no step is advanced more
// than r times. binomial_reach gives the least r with β(s, r) ≥ l (l ≤ 2^31, s ≥ 1), and
// β(s, r − 1) (0 for r = 0) and β(s, r); no intermediate exceeds l·(s + r).
struct BinomialReach {
  int r = 0;
  long long beta_prev = 0;  // β(s, r − 1)
  long long beta = 1;       // β(s, r)
};
STEER_HD inline BinomialReach binomial_reach(long long l, int s) {
  BinomialReach q;
  while (q.beta < l) {
    q.r += 1;
    q.beta_prev = q.beta;
    q.beta = q.beta * (s + q.r) / q.r;  // C(s + r, r) = C(s + r − 1, r − 1)·(s + r)/r, exact
  }
  return q;
}

// forward steps the binomial sweep executes to reverse T steps with s snapshots, x_0 held in
// the first: r·T − β(s + 1, r − 1), with β(s + 1, r − 1) = β(s, r)·r/(s + 1); T(T − 1)/2 for
// s = 1 (every state recomputed from x_0)
STEER_HD inline long long binomial_forward_steps(long long T, int s) {
  if (T <= 1) return 0;
  if (s <= 1) return T * (T - 1) / 2;
  const BinomialReach q = binomial_reach(T, s);
  return q.r * T - q.beta * q.r / (s + 1);
}

// first advance of an optimal reversal of l ≥ 2 steps with s ≥ 2 snapshots: any m with
// β(s, r − 2) < m ≤ β(s, r − 1) and β(s − 1, r − 1) ≤ l − m ≤ β(s − 1, r) keeps the count at
// r·l − β(s + 1, r − 1) (the part after m is reversed with s − 1 snapshots and r repetitions,
// the part before with s and r − 1); this takes the largest, min(β(s, r − 1), l − β(s − 1, r − 1))
STEER_HD inline long long binomial_split(long long l, int s) {
  const BinomialReach q = binomial_reach(l, s);
  const long long b1 = q.beta_prev;                     // β(s, r − 1)
  const long long b2 = b1 * (q.r - 1) / (s + q.r - 1);  // β(s, r − 2), 0 for r = 1
  const long long right = l - (b1 - b2);                // l − β(s − 1, r − 1)
  return b1 < right ? b1 : right;
}

// views of one rollout's slices of the batch arrays
template <class S>
struct RolloutRefs {
  View<const S> x0;  // [nx]
  View<const S> u;   // [T·nu], u_k[j] at k·nu + j
  View<const S> p;   // [np]
  View<S> ckpt;      // [slots·nx]
  View<S> seg;       // [(K+1)·nx]
  View<S> lam;       // [nx]
  View<S> lam_prev;  // [nx]
  View<S> grad_x0;   // [nx]
  View<S> grad_u;    // [T·nu]
  View<S> grad_p;    // [np]
  View<S> traj;      // [traj_slots·nx] or null
  View<int> stack;   // [stack_slots] (binomial schedule only) or null
  S* loss = nullptr;
  RolloutDiag* diag = nullptr;
};

// Optional per-step tape (model_contract.h). A model that defines
//   template <class S> struct StepTape;                     what its adjoint needs of a step
// takes a StepTape<S>* as step's tape argument (the same step, bit for bit, and it fills the
// tape) and a const StepTape<S>* as adj_step's (the same adjoint, from the tape). The uniform
// schedule's backward sweep then keeps each recomputed step's intermediates for the adjoint
// of that step, instead of having adj_step compute the step once more: the backward pass
// costs (recompute + reverse) instead of (recompute + step + reverse).
// The tape holds one segment, K steps, per thread (the CPU backend passes it; on the GPU,
// where every rollout in flight would need its own K tapes, it is not used).

// the bytes of one step's tape for this configuration: Model::step_tape_bytes<S>() where the
// model defines it (the mass-spring tape, whose particle and spring entries lie in a storage
// sized to the robot: steer/step_tapes.h), else sizeof the tape
template <class Model, class S>
auto step_tape_bytes_of(const Model& m, int)
    -> decltype((long long)m.template step_tape_bytes<S>()) {
  return (long long)m.template step_tape_bytes<S>();
}
template <class Model, class S>
long long step_tape_bytes_of(const Model&, long) {
  if constexpr (contract::has_step_tape<Model>::value)
    return (long long)sizeof(typename Model::template StepTape<S>);
  else
    return 0;
}

// memory one CPU thread keeps for a stored forward pass [bytes] (RolloutShape::store_forward):
// the T + 1 states and, for a model with a step tape, T tapes as far as the steps write them.
// S is the thread's real type: a scalar, or a pack of rollouts (cpu_packed.h).
template <class Model, class S>
long long stored_forward_bytes(const Model& m, int steps) {
  return (long long)(steps + 1) * m.nx() * (long long)sizeof(S) +
         (long long)steps * step_tape_bytes_of<Model, S>(m, 0);
}

// The shape the CPU backend runs a batch with: sh itself, or, when a gradient is wanted, the
// schedule is uniform and a stored forward pass fits sh.store_forward_bytes per thread, sh
// with store_forward set and one segment (checkpoint_every = T).
template <class Model, class S>
RolloutShape cpu_working_shape(const Model& m, const RolloutShape& sh, bool want_grad) {
  RolloutShape w = sh;
  w.store_forward = want_grad && !sh.binomial() && sh.store_forward_bytes > 0 &&
                    stored_forward_bytes<Model, S>(m, sh.steps) <= sh.store_forward_bytes;
  if (w.store_forward) w.checkpoint_every = sh.steps;
  return w;
}

STEER_HD inline std::uint64_t fnv1a_mix(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xffu;
    h *= 1099511628211ull;
  }
  return h;
}

template <class S>
STEER_HD bool finite_value(S a) {
  double v = double(a);
  return v == v && v - v == 0.0;
}

// to[i] = from[i], lane-strided
template <class S, class From>
STEER_HD void copy_state(int nx, const From& from, View<S> to, const Lanes& ln) {
  for (int i = ln.lane; i < nx; i += ln.width) to[i] = from[i];
}
template <class S>
STEER_HD void fill(View<S> v, long n, S value, const Lanes& ln) {
  for (long i = ln.lane; i < n; i += ln.width) v[i] = value;
}

template <class S>
STEER_HD View<const S> control_at(const View<const S>& u, int k, int nu) {
  return View<const S>{u.p + long(k) * nu * u.stride, u.stride};
}

// E(x) and KE(x), the total and the kinetic energy of a state [J]: the model's energies()
// where it gets both from one kinematics pass (Articulated), else energy() and kinetic_energy()
template <class S, class Model, class X, class P>
STEER_HD auto model_energies(const Model& m, const X& x, const P& p, S& e, S& ke, int)
    -> decltype(m.template energies<S>(x, p, e, ke), void()) {
  m.template energies<S>(x, p, e, ke);
}
template <class S, class Model, class X, class P>
STEER_HD void model_energies(const Model& m, const X& x, const P& p, S& e, S& ke, long) {
  e = m.template energy<S>(x, p);
  ke = m.template kinetic_energy<S>(x, p);
}
template <class S, class Model, class X, class P>
STEER_HD void model_energies(const Model& m, const X& x, const P& p, S& e, S& ke) {
  model_energies<S>(m, x, p, e, ke, 0);
}

// What cpu_packed.h computed for one rollout of a pack on the whole pack (the bits the
// rollout's own calls give), so that forward_after_step does not compute it again lane by
// lane: the contact flags of x_{k+1} (num_contacts() of them) and {E, KE}(x_{k+1}); nullptr =
// compute
struct StepObservations {
  const std::uint8_t* contact = nullptr;
  const double* energies = nullptr;
};

// The per-rollout bookkeeping of a forward pass (the loss and the diagnostics), run by the
// leading lane: forward_rollout calls these, and so does cpu_packed.h lane by lane.
// before step 0: x0 = x_0
template <class Model, class S, class X, class P>
STEER_HD void forward_begin(const Model& m, const Loss& loss, const X& x0, const P& p,
                            RolloutDiag& dg, S& L) {
  dg.conservative = m.template conservative<S>(p) ? 1 : 0;
  S e, ke;
  model_energies<S>(m, x0, p, e, ke);
  dg.energy0 = double(e);
  dg.kinetic_max = double(ke);
  L -= loss.template com_term<S>(m, x0, p);  // −w_c c(x_0)
  L += loss.template state_running<S>(m, 0, x0, p);
}
// after step k: a = x_k, b = x_{k+1}, uk = u_k; obs: what the packed path has already computed
// Not inlined on the device (STEER_NOINLINE; g++ is unaffected): the diagnostics behind it
// (in_contact's kinematics per contact, the energies) then take a frame of their own instead of
// adding their live values to the step's in the forward kernel, which the kernel budget holds to
// 128 registers (tools/kernel_budget.json; docs/design.md, The kernel budget).
template <class Model, class S, class X, class U, class P>
STEER_HD STEER_NOINLINE void forward_after_step(const Model& m, const Loss& loss, int k, const X& a,
                                                const X& b, const U& uk, const P& p,
                                                RolloutDiag& dg, S& L,
                                                const StepObservations* obs = nullptr) {
  const int nu = m.nu();
  // applied forces do work, so the motion is conservative only with zero controls
  for (int j = 0; j < nu; ++j)
    if (!(uk[j] == S(0))) dg.conservative = 0;
  L += loss.template running<S>(uk, nu);
  L += loss.template state_running<S>(m, k + 1, b, p);
#if defined(__CUDA_ARCH__)
  // the kernels keep one in_contact per contact, the form their budgeted frames were measured
  // with (tools/kernel_budget.json); the host shares one pass below (visit_contact_flags)
  for (int c = 0; c < m.num_contacts(); ++c) {
    if (!(obs && obs->contact ? obs->contact[c] : m.template in_contact<S>(b, p, c))) continue;
    dg.contact_steps += 1;
    dg.contact_hash = fnv1a_mix(dg.contact_hash ? dg.contact_hash : 1469598103934665603ull,
                                (std::uint64_t(k + 1) << 24) ^ std::uint64_t(c));
  }
#else
  auto tally = [&](int c, bool in) {
    if (!in) return;
    dg.contact_steps += 1;
    dg.contact_hash = fnv1a_mix(dg.contact_hash ? dg.contact_hash : 1469598103934665603ull,
                                (std::uint64_t(k + 1) << 24) ^ std::uint64_t(c));
  };
  if (obs && obs->contact) {
    for (int c = 0; c < m.num_contacts(); ++c) tally(c, obs->contact[c] != 0);
  } else {
    visit_contact_flags<S>(m, b, p, tally);
  }
#endif
  if (loss.landing && dg.event_step < 0 && loss.template crosses<S>(a, b)) {
    dg.event_step = k;
    L += loss.template landing_loss<S>(a, b, true);
  }
  // the energy drift is a diagnostic of free motion only; skip its cost otherwise
  if (dg.conservative) {
    double e, ke;
    if (obs && obs->energies) {
      e = obs->energies[0];
      ke = obs->energies[1];
    } else {
      S es, kes;
      model_energies<S>(m, b, p, es, kes);
      e = double(es);
      ke = double(kes);
    }
    const double dev = e - dg.energy0;
    const double adev = dev < 0 ? -dev : dev;
    if (adev > dg.energy_max_dev) dg.energy_max_dev = adev;
    if (ke > dg.kinetic_max) dg.kinetic_max = ke;
  }
}
// after the last step: xT = x_T; writes *loss_out and the forward's fields of *diag_out
template <class Model, class S, class X, class P>
STEER_HD void forward_end(const Model& m, const Loss& loss, const X& xT, const P& p,
                          RolloutDiag& dg, S& L, S* loss_out, RolloutDiag* diag_out) {
  L += loss.template terminal<S>(xT, p);
  L += loss.template com_term<S>(m, xT, p);  // +w_c c(x_T)
  L += loss.template com_target_term<S>(m, xT, p);
  if (loss.has_terminal_sites()) L += loss.template site_terms<S>(m, xT, p, false);
  if (loss.landing && dg.event_step < 0) L += loss.template landing_loss<S>(xT, xT, false);
  bool ok = finite_value(L);
  for (int i = 0; i < m.nx(); ++i) ok = ok && finite_value(xT[i]);
  dg.nonfinite = ok ? 0 : 1;
  *loss_out = L;
  if (diag_out) {
    // the adjoint norms belong to backward_rollout and are left as they are
    diag_out->event_step = dg.event_step;
    diag_out->contact_steps = dg.contact_steps;
    diag_out->contact_hash = dg.contact_hash;
    diag_out->nonfinite = dg.nonfinite;
    diag_out->energy0 = dg.energy0;
    diag_out->energy_max_dev = dg.energy_max_dev;
    diag_out->kinetic_max = dg.kinetic_max;
    diag_out->conservative = dg.conservative;
  }
}

// (x0, u, θ) -> (checkpoints, L, diagnostics)
// sh.store_forward: every state x_k into seg slot k and, given a tape of T steps, step k's
// tape into tape[k] (the backward sweep then recomputes nothing; checkpoint_every = T)
template <class Model, class S>
STEER_HD void forward_rollout(const Model& m, const Loss& loss, const RolloutShape& sh,
                              const RolloutRefs<S>& r, const Lanes& ln = Lanes{},
                              typename contract::StepTapeOf<Model, S>::type* tape = nullptr) {
  static_assert(satisfies_model_contract<Model, S>,
                "forward_rollout: the model lacks a member of model_contract.h");
  const int nx = m.nx(), nu = m.nu();
  const int T = sh.steps;
  const bool binomial = sh.binomial();
  const int K = binomial ? 1 : sh.checkpoint_every;
  RolloutDiag dg;
  View<S> a = r.seg.at(0), b = r.seg.at(nx);  // ping-pong states (stored forward: x_k, x_{k+1})
  copy_state<S>(nx, r.x0, a, ln);
  if (sh.traj_stride > 0) copy_state<S>(nx, r.x0, r.traj.at(0), ln);
  ln.sync();
  S L = S(0);
  if (ln.leader()) forward_begin<Model, S>(m, loss, a, r.p, dg, L);
  for (int k = 0; k < T; ++k) {
    if (sh.store_forward) a = r.seg.at(long(k) * nx), b = r.seg.at(long(k + 1) * nx);
    // uniform: x_{sK} in slot s; binomial: x_0 in slot 0 (the backward sweep recomputes)
    if (binomial ? k == 0 : k % K == 0) copy_state<S>(nx, a, r.ckpt.at((k / K) * nx), ln);
    const View<const S> uk = control_at(r.u, k, nu);
    bool taped = false;
    if constexpr (contract::has_step_tape<Model>::value) {
      if (sh.store_forward && tape) {
        m.template step<S>(k, a, uk, r.p, b, ln, tape + k);
        taped = true;
      }
    }
    if (!taped) m.template step<S>(k, a, uk, r.p, b, ln);
    ln.sync();
    if (ln.leader()) forward_after_step<Model, S>(m, loss, k, a, b, uk, r.p, dg, L);
    if (sh.traj_stride > 0 && (k + 1) % sh.traj_stride == 0)
      copy_state<S>(nx, b, r.traj.at(((k + 1) / sh.traj_stride) * nx), ln);
    View<S> t = a;
    a = b;
    b = t;
  }
  // a holds x_T
  copy_state<S>(nx, a, r.ckpt.at(sh.final_slot() * nx), ln);
  ln.sync();
  if (!ln.leader()) return;
  forward_end<Model, S>(m, loss, a, r.p, dg, L, r.loss, r.diag);
}

template <class S>
STEER_HD double view_norm(View<S> v, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += double(v[i]) * double(v[i]);
  return std::sqrt(s);
}

// The per-rollout loss terms of the backward pass, run by the leading lane: backward_rollout
// calls these, and so does cpu_packed.h lane by lane.
// λ_T = ∂ℓ/∂x_T (+ landing at x_T when no crossing happened, + the running state terms of
// x_T); θ̄ from the CoM, site and tracking terms; returns ‖λ_T‖
template <class Model, class S, class X, class P, class XAdj, class PAdj>
STEER_HD double backward_begin(const Model& m, const Loss& loss, int event, int T, const X& xT,
                               const P& p, XAdj& lam, PAdj& grad_p) {
  loss.template adj_terminal<S>(xT, p, lam, grad_p, S(1));
  loss.template adj_com_term<S>(m, xT, p, lam, grad_p, S(1));
  loss.template adj_com_target_term<S>(m, xT, p, lam, grad_p, S(1));
  if (loss.has_terminal_sites())
    loss.template adj_site_terms<S>(m, xT, p, false, lam, grad_p, S(1));
  loss.template adj_state_running<S>(m, T, xT, p, lam, grad_p, S(1));
  if (loss.landing && event < 0) loss.template adj_landing_loss<S>(xT, xT, false, lam, lam, S(1));
  return view_norm(lam, m.nx());
}
// step k's loss terms: the landing term at the crossing step into λ_k (lam_prev, zeroed by the
// caller), the running cost's ū_k, the running state terms of x_k into λ_k and θ̄, and the seed
// norm ‖λ‖ where the adjoint first becomes nonzero
template <class Model, class S, class X, class U, class P, class XAdj, class UAdj, class PAdj>
STEER_HD void reverse_loss_terms(const Model& m, const Loss& loss, int k, int event, const X& xk,
                                 const X& xk1, const U& uk, const P& p, XAdj& lam, XAdj& lam_prev,
                                 UAdj& guk, PAdj& grad_p, double& seed) {
  if (loss.landing && k == event)
    loss.template adj_landing_loss<S>(xk, xk1, true, lam_prev, lam, S(1));
  if (seed == 0.0) seed = view_norm(lam, m.nx());
  loss.template adj_running<S>(uk, m.nu(), guk, S(1));
  loss.template adj_state_running<S>(m, k, xk, p, lam_prev, grad_p, S(1));
}
// after step 0's adjoint: lam = λ_0; the CoM term's direct x_0 and θ parts, and the diagnostics
template <class Model, class S, class X, class P, class XAdj, class UAdj, class PAdj>
STEER_HD void backward_end(const Model& m, const Loss& loss, int T, const X& x0, const P& p,
                           const XAdj& lam, XAdj& grad_x0, const UAdj& grad_u, PAdj& grad_p,
                           double seed, long long recomputed, RolloutDiag* diag) {
  const int nx = m.nx(), nu = m.nu();
  // the CoM displacement's −w_c c(x_0) term reaches x_0 and θ directly
  loss.template adj_com_term<S>(m, x0, p, grad_x0, grad_p, S(-1));
  if (diag) {
    diag->adj_seed_norm = seed;
    diag->adj_x0_norm = view_norm(lam, nx);
    diag->grad_u_first_norm = view_norm(grad_u.at(0), nu);
    diag->grad_u_last_norm = view_norm(grad_u.at(long(T - 1) * nu), nu);
    diag->recompute_steps = recomputed;
  }
}

// Which adjoints the backward sweep compiles. kRunTime (the CPU backend, the reference
// kernels) follows RolloutShape::reference_adjoint; kHand compiles the hand adjoint only,
// so the dual-number path is not instantiated at all. The hand kernels need that:
// reverse_step and binomial_sweep are not always inlined, and then a run-time flag, even one
// the kernel sets to a constant, leaves the dual path (arrays of Dual<S, 8>) in the kernel,
// where it sets every thread's stack frame.
enum class AdjointPath : int { kRunTime = 0, kHand = 1 };
template <AdjointPath kPath>
STEER_HD bool use_reference_adjoint(const RolloutShape& sh) {
  if constexpr (kPath == AdjointPath::kRunTime) {
    return sh.reference_adjoint;
  } else {
    (void)sh;
    return false;
  }
}

// one adjoint step k, λ_{k+1} (lam) -> λ_k (lam_prev, then swapped into lam): the landing
// term at the crossing step, the running cost, and (∂f/∂x_k, ∂f/∂u_k, ∂f/∂θ)ᵀ λ_{k+1}.
// xk1 = x_{k+1} is read by the landing term only. Both schedules call this.
// tape: step k's tape from the segment recompute, or null (adj_step recomputes the step)
template <class Model, class S, AdjointPath kPath = AdjointPath::kRunTime>
STEER_HD void reverse_step(const Model& m, const Loss& loss, const RolloutShape& sh,
                           const RolloutRefs<S>& r, const Lanes& ln, int k, int event, View<S> xk,
                           View<S> xk1, View<S>& lam, View<S>& lam_prev, double& seed,
                           const typename contract::StepTapeOf<Model, S>::type* tape = nullptr) {
  const int nx = m.nx(), nu = m.nu();
  const View<const S> uk = control_at(r.u, k, nu);
  View<S> guk = r.grad_u.at(long(k) * nu);
  fill(lam_prev, nx, S(0), ln);
  ln.sync();
  if (ln.leader()) {
    View<S> gp = r.grad_p;
    reverse_loss_terms<Model, S>(m, loss, k, event, xk, xk1, uk, r.p, lam, lam_prev, guk, gp, seed);
  }
  ln.sync();
  if (use_reference_adjoint<kPath>(sh)) {
    if constexpr (kPath != AdjointPath::kHand)
      if (ln.leader()) dual_adj_step<Model, S>(m, k, xk, uk, r.p, lam_prev, guk, r.grad_p, lam);
  } else {
    bool taped = false;
    if constexpr (contract::has_step_tape<Model>::value) {
      if (tape) {
        m.template adj_step<S>(k, xk, uk, r.p, lam_prev, guk, r.grad_p, lam, ln, tape);
        taped = true;
      }
    }
    if (!taped) m.template adj_step<S>(k, xk, uk, r.p, lam_prev, guk, r.grad_p, lam, ln);
  }
  ln.sync();
  View<S> t = lam;
  lam = lam_prev;
  lam_prev = t;
}

// the binomial sweep: reverses steps T−1..0 from x_0 in snapshot slot 0 (see the top of the
// file). Level d of the stack holds x_top in snapshot slot d with s − d slots free from it
// on; steps ≥ end are reversed. While the range [top, end) is longer than one step and a
// slot is left, it advances to top + binomial_split(end − top, s − d) and pushes that state;
// otherwise it advances from x_top to x_{end−1}, reverses step end − 1, and pops the level
// once end reaches top. Returns the forward steps it executed.
template <class Model, class S, AdjointPath kPath = AdjointPath::kRunTime>
STEER_HD long long binomial_sweep(const Model& m, const Loss& loss, const RolloutShape& sh,
                                  const RolloutRefs<S>& r, const Lanes& ln, int event, View<S>& lam,
                                  View<S>& lam_prev, double& seed) {
  const int nx = m.nx(), nu = m.nu();
  const int T = sh.steps, slots = sh.snapshot_slots();
  View<S> a = r.seg.at(0), b = r.seg.at(nx);  // a holds x_cur; b receives the next step
  View<S> xnext = r.seg.at(2 * nx);           // x_{e+1} for the landing adjoint at step e
  View<S> xT = r.ckpt.at(sh.final_slot() * nx);
  long long steps = 0;
  int d = 0, top = 0, end = T;
  int cur = -1;  // step index of the state in a; −1: none yet
  while (end > 0) {
    const int l = end - top, avail = slots - d;
    const bool split = l >= 2 && avail >= 2;
    const int target = split ? top + int(binomial_split(l, avail)) : end - 1;
    // x_target from x_cur when it lies on the way, else from the snapshot of x_top
    if (cur < top || cur > target) {
      copy_state<S>(nx, r.ckpt.at(long(d) * nx), a, ln);
      ln.sync();
      cur = top;
    }
    for (; cur < target; ++cur) {
      m.template step<S>(cur, a, control_at(r.u, cur, nu), r.p, b, ln);
      ln.sync();
      View<S> t = a;
      a = b;
      b = t;
      ++steps;
    }
    if (split) {
      d += 1;
      top = target;
      if (ln.leader()) r.stack[d] = top;
      copy_state<S>(nx, a, r.ckpt.at(long(d) * nx), ln);
      ln.sync();
      continue;
    }
    const int k = target;
    if (loss.landing && k == event + 1 && k < T) {
      copy_state<S>(nx, a, xnext, ln);
      ln.sync();
    }
    reverse_step<Model, S, kPath>(m, loss, sh, r, ln, k, event, a, k + 1 == T ? xT : xnext, lam,
                                  lam_prev, seed);
    end = k;
    if (end == top && d > 0) {
      d -= 1;
      top = d > 0 ? r.stack[d] : 0;  // written by the leader before a sync
    }
  }
  return steps;
}

// (checkpoints, u, θ, λ_T) -> (∂L/∂x0, ∂L/∂u, ∂L/∂θ); requires forward_rollout first
// tape: room for checkpoint_every step tapes (uniform schedule, one lane), or null; with
// sh.store_forward, the tapes forward_rollout filled (the same array), or null if it got none
// kPath: the adjoint compiled in (AdjointPath); the CPU backend keeps the run-time choice
template <class Model, class S, AdjointPath kPath = AdjointPath::kRunTime>
STEER_HD void backward_rollout(const Model& m, const Loss& loss, const RolloutShape& sh,
                               const RolloutRefs<S>& r, const Lanes& ln = Lanes{},
                               typename contract::StepTapeOf<Model, S>::type* tape = nullptr) {
  static_assert(satisfies_model_contract<Model, S>,
                "backward_rollout: the model lacks a member of model_contract.h");
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  const int T = sh.steps;
  const int event = r.diag ? r.diag->event_step : -1;
  View<S> lam = r.lam, lam_prev = r.lam_prev;
  fill(lam, nx, S(0), ln);
  fill(r.grad_p, np, S(0), ln);
  fill(r.grad_u, long(T) * nu, S(0), ln);
  ln.sync();
  // λ_T = ∂ℓ/∂x_T (+ landing at x_T when no crossing happened); θ̄ from the CoM term
  View<S> xT = r.ckpt.at(sh.final_slot() * nx);
  double seed = 0;
  if (ln.leader()) {
    View<S> gp = r.grad_p;
    seed = backward_begin<Model, S>(m, loss, event, T, xT, r.p, lam, gp);
  }
  ln.sync();
  long long recomputed = 0;
  if (sh.binomial()) {
    recomputed = binomial_sweep<Model, S, kPath>(m, loss, sh, r, ln, event, lam, lam_prev, seed);
  } else {
    const int K = sh.checkpoint_every;
    for (int s = sh.segments() - 1; s >= 0; --s) {
      const int k0 = s * K;
      const int k1 = (k0 + K < T) ? k0 + K : T;
      // recompute x_{k0..k1} of this segment from its checkpoint (a stored forward pass kept
      // them all, and the tapes, in its one segment)
      if (!sh.store_forward) {
        copy_state<S>(nx, r.ckpt.at(s * nx), r.seg.at(0), ln);
        ln.sync();
        for (int k = k0; k < k1; ++k) {
          View<S> xk = r.seg.at((k - k0) * nx), xk1 = r.seg.at((k - k0 + 1) * nx);
          bool taped = false;
          if constexpr (contract::has_step_tape<Model>::value) {
            if (tape) {
              m.template step<S>(k, xk, control_at(r.u, k, nu), r.p, xk1, ln, tape + (k - k0));
              taped = true;
            }
          }
          if (!taped) m.template step<S>(k, xk, control_at(r.u, k, nu), r.p, xk1, ln);
          ln.sync();
        }
        recomputed += k1 - k0;
      }
      for (int k = k1 - 1; k >= k0; --k)
        reverse_step<Model, S, kPath>(m, loss, sh, r, ln, k, event, r.seg.at((k - k0) * nx),
                                      r.seg.at((k - k0 + 1) * nx), lam, lam_prev, seed,
                                      tape ? tape + (k - k0) : nullptr);
    }
  }
  copy_state<S>(nx, lam, r.grad_x0, ln);
  ln.sync();
  if (!ln.leader()) return;
  View<S> grad_x0 = r.grad_x0;
  backward_end<Model, S>(m, loss, T, r.x0, r.p, lam, grad_x0, r.grad_u, r.grad_p, seed, recomputed,
                         r.diag);
}

}  // namespace steer
