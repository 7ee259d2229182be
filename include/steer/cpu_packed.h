// The CPU backend's SIMD path: W rollouts of a batch run as one, each model value a
// PackD<W> (float64) or PackF<W> (float32, simd.h) holding that value for every rollout of the
// group, so that one pass over the model's one-lane code does W rollouts' work in vector registers.
// A model opts in with
//   bool packable() const                 this configuration runs on packs
// (MassSpring, Articulated), and its step<P> and adj_step<P> take packs P with one lane and its
// step tape (model_contract.h); the uniform schedule with the step tape is the only one it
// runs, with the segment recompute or, within sh.store_forward_bytes per thread, the stored
// forward.
//
// Results are those of the scalar path bit for bit: every lane performs the operations its
// scalar run performs (simd.h), and the loss and the diagnostics are computed lane by lane by
// rollout.h's own forward_begin / forward_after_step / forward_end and backward_begin /
// reverse_loss_terms / backward_end on strided views of one lane. A group with fewer than W
// rollouts (the batch's tail) fills its spare lanes with copies of its last rollout and
// discards their results.
//
// A model whose per-step diagnostics are pack code too (Model::kPackedDiagnostics: the
// Articulated arm, whose contact test and energies each need the forward kinematics) has them
// computed on the packs once per step, and the lanes' bookkeeping reads them
// (StepObservations) instead of calling the model rollout by rollout.
//
// Layout: the batch's arrays are rollout-major; a group's inputs are transposed into packs
// once per call (x_0, u, θ: [n] packs, lane j = rollout b0 + j), the time loop reads and
// writes packs only, and the outputs are transposed back at the end.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "steer/batch.h"
#include "steer/cpu_backend.h"
#include "steer/model_contract.h"
#include "steer/rollout.h"
#include "steer/simd.h"
#include "steer/step_tapes.h"

namespace steer {

// lane j of a pack array as a strided view of its reals (a pack is W contiguous reals)
template <class P>
View<typename P::value_type> lane_view(View<P> v, int j) {
  using R = typename P::value_type;
  return View<R>{reinterpret_cast<R*>(v.p) + j, long(P::width) * v.stride};
}
template <class P>
View<const typename P::value_type> lane_view(View<const P> v, int j) {
  using R = typename P::value_type;
  return View<const R>{reinterpret_cast<const R*>(v.p) + j, long(P::width) * v.stride};
}

// one thread's buffers for a group of W rollouts: kept across calls (thread_local in
// cpu_run_groups_packed) and resized only when a call needs more, since a stored forward
// pass's megabytes of tapes cost more in fresh zeroed pages than a group's work; every buffer
// is written before it is read within a call
template <class Model, class R, int W>
struct PackedScratch {
  using P = typename PackOf<R, W>::type;
  std::vector<P> x0, u, p, ckpt, seg, lam, lam_prev, grad_x0, grad_u, grad_p;
  StepTapes<Model, P> tape;
  std::vector<std::uint8_t>
      contact;  // packed diagnostics: lane j's contact flags at [j · num_contacts + c]
  std::vector<double> energies;  // and its {E, KE} at [2j], [2j + 1]
  void reset(const Model& m, const RolloutShape& sh, bool want_grad) {
    x0.resize(m.nx());
    u.resize(size_t(sh.steps) * m.nu());
    p.resize(m.np());
    ckpt.resize(size_t(sh.checkpoint_slots()) * m.nx());
    seg.resize(size_t(sh.segment_slots()) * m.nx());
    contact.resize(size_t(W) * m.num_contacts());
    energies.resize(2 * W);
    if (!want_grad) return;
    lam.resize(m.nx());
    lam_prev.resize(m.nx());
    grad_x0.resize(m.nx());
    grad_u.resize(size_t(sh.steps) * m.nu());
    grad_p.resize(m.np());
    tape.resize(m, sh.checkpoint_every);
  }
};

// src rows b0..b0+nb−1 of a rollout-major array with n values per rollout -> n packs; spare
// lanes repeat row b0+nb−1
template <class R, class P>
void pack_rows(const R* src, int n, int nb, P* dst) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < P::width; ++j) dst[i].set(j, src[size_t(j < nb ? j : nb - 1) * n + i]);
}
// the first nb lanes of n packs -> rows of a rollout-major array
template <class R, class P>
void unpack_rows(const P* src, int n, int nb, R* dst) {
  for (int j = 0; j < nb; ++j)
    for (int i = 0; i < n; ++i) dst[size_t(j) * n + i] = src[i][j];
}

// the packed diagnostics of x_{k+1} = b for lanes 0..nb−1: the contact flags, and the energies
// where some lane still counts as conservative (forward_after_step drops a lane whose controls
// are non-zero at this step before it reads them)
template <class Model, class R, int W, class XV, class PV>
void packed_step_observations(const Model& m, const XV& b, const PV& p, const RolloutDiag* dg,
                              int nb, PackedScratch<Model, R, W>& sc, StepObservations* obs) {
  using P = typename PackOf<R, W>::type;
  const int nc = m.num_contacts();
  visit_contact_flags<P>(m, b, p, [&](int c, const auto& in) {
    for (int j = 0; j < nb; ++j) sc.contact[size_t(j) * nc + c] = in[j] ? 1 : 0;
  });
  bool conservative = false;
  for (int j = 0; j < nb; ++j) conservative = conservative || dg[j].conservative;
  if (conservative) {
    P e, ke;
    model_energies<P>(m, b, p, e, ke);
    for (int j = 0; j < nb; ++j) sc.energies[2 * j] = e[j], sc.energies[2 * j + 1] = ke[j];
  }
  for (int j = 0; j < nb; ++j) {
    obs[j].contact = nc > 0 ? sc.contact.data() + size_t(j) * nc : nullptr;
    obs[j].energies = conservative ? sc.energies.data() + 2 * j : nullptr;
  }
}

// rollouts b0..b0+nb−1 (1 ≤ nb ≤ W): forward, and with want_grad the adjoint sweep
template <class Model, class R, int W>
void packed_group(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<R>& batch,
                  bool want_grad, BatchResult<R>& out, int b0, int nb,
                  PackedScratch<Model, R, W>& sc) {
  using P = typename PackOf<R, W>::type;
  const int nx = m.nx(), nu = m.nu(), np = m.np(), T = sh.steps, K = sh.checkpoint_every;
  pack_rows(batch.x0_of(b0), nx, nb, sc.x0.data());
  pack_rows(batch.u_of(b0), T * nu, nb, sc.u.data());
  pack_rows(batch.theta_of(b0), np, nb, sc.p.data());
  const View<const P> x0{sc.x0.data(), 1}, u{sc.u.data(), 1}, p{sc.p.data(), 1};
  const View<P> ckpt{sc.ckpt.data(), 1}, seg{sc.seg.data(), 1};
  const int tslots = sh.traj_slots();

  // ---- forward: x_{sK} into checkpoint slot s, x_T into the last ----
  RolloutDiag dg[W];
  R L[W];
  View<P> a = seg.at(0), b = seg.at(nx);
  for (int i = 0; i < nx; ++i) a[i] = x0[i];
  for (int j = 0; j < nb; ++j) {
    L[j] = 0;
    forward_begin<Model, R>(m, loss, lane_view(a, j), lane_view(p, j), dg[j], L[j]);
  }
  auto record = [&](View<P> x, int slot) {  // trajectory slot of every real lane
    for (int j = 0; j < nb; ++j) {
      R* row = out.traj.data() + (size_t(b0 + j) * tslots + slot) * nx;
      for (int i = 0; i < nx; ++i) row[i] = x[i][j];
    }
  };
  if (sh.traj_stride > 0) record(a, 0);
  for (int k = 0; k < T; ++k) {
    if (sh.store_forward) a = seg.at(long(k) * nx), b = seg.at(long(k + 1) * nx);
    if (k % K == 0)
      for (int i = 0; i < nx; ++i) ckpt[(k / K) * nx + i] = a[i];
    const View<const P> uk = control_at(u, k, nu);
    if (sh.store_forward)  // (set only with a gradient: cpu_working_shape)
      m.template step<P>(k, a, uk, p, b, Lanes{}, &sc.tape[k]);  // the same bits, and step k's tape
    else
      m.template step<P>(k, a, uk, p, b);
    StepObservations obs[W];
    if constexpr (contract::has_packed_diagnostics<Model>::value)
      packed_step_observations<Model, R, W>(m, b, p, dg, nb, sc, obs);
    for (int j = 0; j < nb; ++j)
      forward_after_step<Model, R>(m, loss, k, lane_view(a, j), lane_view(b, j), lane_view(uk, j),
                                   lane_view(p, j), dg[j], L[j], &obs[j]);
    if (sh.traj_stride > 0 && (k + 1) % sh.traj_stride == 0) record(b, (k + 1) / sh.traj_stride);
    const View<P> t = a;
    a = b;
    b = t;
  }
  const View<P> xT = ckpt.at(sh.final_slot() * nx);
  for (int i = 0; i < nx; ++i) xT[i] = a[i];
  for (int j = 0; j < nb; ++j)
    forward_end<Model, R>(m, loss, lane_view(xT, j), lane_view(p, j), dg[j], L[j],
                          &out.loss[b0 + j], &out.diag[b0 + j]);
  if (!want_grad) return;

  // ---- backward: per segment, recompute with the tape (a stored forward pass kept every
  // state and tape in its one segment), then reverse its steps ----
  View<P> lam{sc.lam.data(), 1}, lam_prev{sc.lam_prev.data(), 1};
  const View<P> grad_u{sc.grad_u.data(), 1}, grad_p{sc.grad_p.data(), 1},
      grad_x0{sc.grad_x0.data(), 1};
  for (int i = 0; i < nx; ++i) lam[i] = P(0.0);
  for (int i = 0; i < np; ++i) grad_p[i] = P(0.0);
  for (long i = 0; i < long(T) * nu; ++i) grad_u[i] = P(0.0);
  double seed[W];
  for (int j = 0; j < nb; ++j) {
    View<R> lam_j = lane_view(lam, j), gp_j = lane_view(grad_p, j);
    seed[j] = backward_begin<Model, R>(m, loss, out.diag[b0 + j].event_step, T, lane_view(xT, j),
                                       lane_view(p, j), lam_j, gp_j);
  }
  for (int s = sh.segments() - 1; s >= 0; --s) {
    const int k0 = s * K, k1 = (k0 + K < T) ? k0 + K : T;
    if (!sh.store_forward) {
      for (int i = 0; i < nx; ++i) seg[i] = ckpt[s * nx + i];
      for (int k = k0; k < k1; ++k) {
        View<P> xk1 = seg.at((k - k0 + 1) * nx);
        m.template step<P>(k, seg.at((k - k0) * nx), control_at(u, k, nu), p, xk1, Lanes{},
                           &sc.tape[k - k0]);
      }
    }
    for (int k = k1 - 1; k >= k0; --k) {
      const View<P> xk = seg.at((k - k0) * nx), xk1 = seg.at((k - k0 + 1) * nx);
      const View<const P> uk = control_at(u, k, nu);
      View<P> guk = grad_u.at(long(k) * nu);
      for (int i = 0; i < nx; ++i) lam_prev[i] = P(0.0);
      for (int j = 0; j < nb; ++j) {
        View<R> lam_j = lane_view(lam, j), lam_prev_j = lane_view(lam_prev, j);
        View<R> guk_j = lane_view(guk, j), gp_j = lane_view(grad_p, j);
        reverse_loss_terms<Model, R>(m, loss, k, out.diag[b0 + j].event_step, lane_view(xk, j),
                                     lane_view(xk1, j), lane_view(uk, j), lane_view(p, j), lam_j,
                                     lam_prev_j, guk_j, gp_j, seed[j]);
      }
      View<P> gp = grad_p;
      const typename contract::StepTapeOf<Model, P>::type* tk = &sc.tape[k - k0];
      m.template adj_step<P>(k, xk, uk, p, lam_prev, guk, gp, lam, Lanes{}, tk);
      const View<P> t = lam;
      lam = lam_prev;
      lam_prev = t;
    }
  }
  for (int i = 0; i < nx; ++i) grad_x0[i] = lam[i];
  for (int j = 0; j < nb; ++j) {
    View<R> gx_j = lane_view(grad_x0, j), gp_j = lane_view(grad_p, j);
    backward_end<Model, R>(m, loss, T, lane_view(x0, j), lane_view(p, j), lane_view(lam, j), gx_j,
                           lane_view(grad_u, j), gp_j, seed[j],
                           sh.store_forward ? 0LL : (long long)T, &out.diag[b0 + j]);
  }
  unpack_rows(sc.grad_x0.data(), nx, nb, out.grad_x0.data() + size_t(b0) * nx);
  unpack_rows(sc.grad_u.data(), T * nu, nb, out.grad_u.data() + size_t(b0) * T * nu);
  unpack_rows(sc.grad_p.data(), np, nb, out.grad_theta.data() + size_t(b0) * np);
}

// the batch as groups of kPackWidth rollouts, parallel over groups; out is sized by the caller
// (src/backend/cpu_packed_isa.cpp instantiates it, once per instruction set and its kPackWidth)
template <class Model, class R>
void cpu_run_groups_packed(const Model& m, const Loss& loss, const RolloutShape& sh,
                           const Batch<R>& batch, bool want_grad, BatchResult<R>& out,
                           int threads) {
  constexpr int W = kPackWidth;
  const int B = batch.size, groups = (B + W - 1) / W;
  if (threads > groups) threads = groups;
  // a stored forward pass where one pack's fits sh.store_forward_bytes per thread (rollout.h)
  const RolloutShape wsh = cpu_working_shape<Model, typename PackOf<R, W>::type>(m, sh, want_grad);
#pragma omp parallel num_threads(threads)
  {
    static thread_local PackedScratch<Model, R, W> sc;
    sc.reset(m, wsh, want_grad);
#pragma omp for schedule(static)
    for (int g = 0; g < groups; ++g) {
      const int b0 = g * W, nb = B - b0 < W ? B - b0 : W;
      packed_group<Model, R, W>(m, loss, wsh, batch, want_grad, out, b0, nb, sc);
    }
  }
}

}  // namespace steer
