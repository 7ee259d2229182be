// The CPU backend: every rollout of a batch runs forward_rollout (and backward_rollout)
// on its own thread-local scratch, parallel over rollouts with OpenMP. Scratch is kept per
// thread across calls (grown when a call needs more), never allocated in the time loop. With a
// gradient and within sh.store_forward_bytes per thread, the forward pass keeps every state and
// step tape and the backward sweep recomputes nothing (rollout.h, RolloutShape::store_forward).
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "steer/batch.h"
#include "steer/model_contract.h"
#include "steer/rollout.h"
#include "steer/step_tapes.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace steer {

// number of threads the CPU backend uses when the caller passes 0
int cpu_default_threads();

// ---- the SIMD path (cpu_packed.h) ----
// A model with a packed path defines packable() (model_contract.h's has_packed_path) and is
// listed in src/models/packed_models.h; the path itself is compiled in
// src/backend/cpu_packed_isa.cpp, once per instruction set.

// whether cpu_run_batch sends this batch to the packed path: a model that opts in and can,
// float64 or float32, the uniform schedule with the hand adjoint (the tape), and more than one
// rollout
template <class Model, class S>
bool use_packed_path(const Model& m, const RolloutShape& sh, int B) {
  if constexpr (contract::has_packed_path<Model>::value &&
                (std::is_same<S, double>::value || std::is_same<S, float>::value)) {
    return B > 1 && m.packable() && !sh.binomial() && !sh.reference_adjoint;
  } else {
    (void)m, (void)sh, (void)B;
    return false;
  }
}

// the batch as groups of cpu_pack_width() rollouts, parallel over groups; out is sized by the
// caller. S is float or double; instantiated in src/backend/cpu_packed.cpp for the models of
// STEER_PACKED_MODELS (src/models/packed_models.h)
template <class Model, class S>
void cpu_run_packed(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<S>& batch,
                    bool want_grad, BatchResult<S>& out, int threads);
// rollouts per pack in the packed path: 8 with AVX-512, 4 with AVX2, else 2 (the instruction set
// is chosen at run time, src/backend/cpu_packed.cpp)
int cpu_pack_width();
// the packed path's instruction set in this process: "avx512", "avx2" or "sse2"
const char* cpu_pack_isa();

template <class Model, class S>
void cpu_run_batch(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<S>& batch,
                   bool want_grad, BatchResult<S>& out, int threads = 0) {
  check_batch(m, sh, batch);
  if (batch.memory() == Memory::kDevice)
    throw std::invalid_argument(
        "backend cpu: the batch's inputs are in CUDA device memory; run it on the cuda backend or "
        "copy them to the host");
  const int B = batch.size, nx = m.nx(), nu = m.nu(), np = m.np(), T = sh.steps;
  out.memory = Memory::kHost;
  out.device = {};
  out.loss.assign(B, S(0));
  out.diag.assign(B, RolloutDiag{});
  if (want_grad) {
    out.grad_x0.assign(size_t(B) * nx, S(0));
    out.grad_u.assign(size_t(B) * T * nu, S(0));
    out.grad_theta.assign(size_t(B) * np, S(0));
  } else {
    out.grad_x0.clear();
    out.grad_u.clear();
    out.grad_theta.clear();
  }
  const int tslots = sh.traj_slots();
  if (tslots > 0)
    out.traj.assign(size_t(B) * tslots * nx, S(0));
  else
    out.traj.clear();
  if (threads <= 0) threads = cpu_default_threads();
  // float64 and float32 batches of a model with a SIMD path run cpu_pack_width() rollouts per
  // pass (cpu_packed.h, compiled per instruction set in src/backend/cpu_packed_isa.cpp), with
  // the same results bit for bit
  if constexpr ((std::is_same<S, double>::value || std::is_same<S, float>::value) &&
                contract::has_packed_path<Model>::value) {
    if (use_packed_path<Model, S>(m, sh, B)) {
      cpu_run_packed(m, loss, sh, batch, want_grad, out, threads);
      return;
    }
  }
  if (threads > B) threads = B;  // no idle threads for small batches
  // the stored forward pass where it fits sh.store_forward_bytes per thread (rollout.h)
  const RolloutShape wsh = cpu_working_shape<Model, S>(m, sh, want_grad);
  // scratch sizes per rollout: checkpoints, segment states, two adjoint vectors, and the
  // binomial schedule's snapshot index stack (rollout_scratch_bytes in all)
  const size_t n_ckpt = size_t(wsh.checkpoint_slots()) * nx;
  const size_t n_seg = size_t(wsh.segment_slots()) * nx;
  const size_t n_stack = size_t(wsh.stack_slots());
  // a model with a step tape keeps one segment's step intermediates for its adjoint (rollout.h)
  using Tape = typename contract::StepTapeOf<Model, S>::type;
  const size_t n_tape = contract::has_step_tape<Model>::value && want_grad && !wsh.binomial() &&
                                !wsh.reference_adjoint
                            ? size_t(wsh.checkpoint_every)
                            : 0;
#pragma omp parallel num_threads(threads)
  {
    // per-thread buffers, kept across calls and resized only when a call needs more (a stored
    // forward pass's tapes cost more in fresh zeroed pages than the pass); each is written
    // before it is read
    static thread_local std::vector<S> ckpt, seg, lam, lam_prev;
    static thread_local std::vector<int> stack;
    static thread_local StepTapes<Model, S> tape;
    ckpt.resize(n_ckpt), seg.resize(n_seg), lam.resize(nx), lam_prev.resize(nx),
        stack.resize(n_stack);
    tape.resize(m, int(n_tape));
#pragma omp for schedule(static)
    for (int b = 0; b < B; ++b) {
      RolloutRefs<S> r;
      r.x0 = View<const S>{batch.x0_of(b), 1};
      r.u = View<const S>{batch.u_of(b), 1};
      r.p = View<const S>{batch.theta_of(b), 1};
      r.ckpt = view(ckpt.data());
      r.seg = view(seg.data());
      r.lam = view(lam.data());
      r.lam_prev = view(lam_prev.data());
      r.stack = n_stack > 0 ? view(stack.data()) : View<int>{};
      r.traj = tslots > 0 ? view(out.traj.data() + size_t(b) * tslots * nx) : View<S>{};
      r.loss = &out.loss[b];
      r.diag = &out.diag[b];
      Tape* tp = n_tape > 0 ? tape.data() : nullptr;
      forward_rollout<Model, S>(m, loss, wsh, r, Lanes{}, wsh.store_forward ? tp : nullptr);
      if (want_grad) {
        r.grad_x0 = view(out.grad_x0.data() + size_t(b) * nx);
        r.grad_u = view(out.grad_u.data() + size_t(b) * T * nu);
        r.grad_p = view(out.grad_theta.data() + size_t(b) * np);
        backward_rollout<Model, S>(m, loss, wsh, r, Lanes{}, tp);
      }
    }
  }
}

// An explicit instantiation of the CPU path of one model in one precision. `extern` in the
// model's header (steer/models/<model>.h), so that the files that call it (tests, benchmarks,
// the Python module) link the one copy compiled in libsteer instead of compiling their own:
// for an articulated model that is its step, hand adjoint, dual-number adjoint and packed
// dispatch, minutes of compile time per file. Defined (`kind` empty) once in the model's
// runner source.
#define STEER_CPU_RUN_BATCH(kind, Model, S)                                                  \
  kind template void cpu_run_batch<Model, S>(const Model&, const Loss&, const RolloutShape&, \
                                             const Batch<S>&, bool, BatchResult<S>&, int)

}  // namespace steer
