// What the CUDA rollout kernels and their host launcher share: the block size, the device
// arrays of one pass (DeviceRollouts), a rollout's slice of them, and the two launch entry
// points. launch_forward / launch_backward are defined in rollout_kernel_defs.cuh and
// explicitly instantiated once per kernel model and precision in a kernels/*.cu file; the
// launcher (rollout_kernels.cuh) sees only these declarations, so it never compiles a kernel.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>
#include <utility>

#include "steer/backend.h"
#include "steer/loss.h"
#include "steer/rollout.h"

// A kernel launch, written STEER_KERNEL_LAUNCH(grid, block, kernel)(args...): for nvcc the
// triple-chevron launch kernel<<<grid, block>>>(args...) itself. The host emulation of the
// tests (tests/backend/cuda_emulation/cuda_runtime.h) defines it first, to run the grid on the
// host.
#ifndef STEER_KERNEL_LAUNCH
#define STEER_KERNEL_LAUNCH(grid, block, ...) __VA_ARGS__<<<grid, block>>>
#endif

namespace steer {
namespace cuda_detail {

constexpr int kRolloutThreads = 128;  // threads per block of the rollout kernels (4 warps)
constexpr int kWarp = 32;

// whether a model type carries a topology array (`const int* topo`, topology_size() ints)
template <class Model, class = void>
struct HasTopology : std::false_type {};
template <class Model>
struct HasTopology<Model, std::void_t<decltype(std::declval<Model&>().topo)>> : std::true_type {};

// one pass's device arrays: SoA [n][count] with one lane per rollout (the shapes below),
// rollout-major [count][n] with a warp per rollout (see the top of the file)
template <class S>
struct DeviceRollouts {
  long count = 0;                                                     // rollouts in this pass, Bc
  long n_x = 0, n_u = 0, n_p = 0, n_ckpt = 0, n_seg = 0, n_traj = 0;  // elements per rollout
  long n_stack = 0;             // ints per rollout (binomial schedule's snapshot indices)
  const S* x0 = nullptr;        // [nx][Bc]
  const S* u = nullptr;         // [T·nu][Bc]
  const S* p = nullptr;         // [np][Bc]
  S* ckpt = nullptr;            // [slots·nx][Bc]
  S* seg = nullptr;             // [segment_slots·nx][Bc]
  int* stack = nullptr;         // [stack_slots][Bc] or null
  S* lam = nullptr;             // [nx][Bc]
  S* lam_prev = nullptr;        // [nx][Bc]
  S* grad_x0 = nullptr;         // [nx][Bc]
  S* grad_u = nullptr;          // [T·nu][Bc]
  S* grad_p = nullptr;          // [np][Bc]
  S* traj = nullptr;            // [traj_slots·nx][Bc] or null
  S* loss = nullptr;            // [Bc]
  RolloutDiag* diag = nullptr;  // [Bc], one struct per rollout (written once, not strided)
};

// rollout b's slice of an array with n elements per rollout, for W lanes per rollout
template <int W, class T>
__device__ View<T> slice_of(T* base, long b, long n, long count) {
  const long offset = W == 1 ? b : b * n;  // SoA: i*Bc + b; rollout-major: b*n + i
  return View<T>{base ? base + offset : nullptr, W == 1 ? count : 1};
}

template <int W, class S>
__device__ RolloutRefs<S> refs_of(const DeviceRollouts<S>& d, long b) {
  const long B = d.count;
  RolloutRefs<S> r;
  r.x0 = slice_of<W>(d.x0, b, d.n_x, B);
  r.u = slice_of<W>(d.u, b, d.n_u, B);
  r.p = slice_of<W>(d.p, b, d.n_p, B);
  r.ckpt = slice_of<W>(d.ckpt, b, d.n_ckpt, B);
  r.seg = slice_of<W>(d.seg, b, d.n_seg, B);
  r.stack = slice_of<W>(d.stack, b, d.n_stack, B);
  r.lam = slice_of<W>(d.lam, b, d.n_x, B);
  r.lam_prev = slice_of<W>(d.lam_prev, b, d.n_x, B);
  r.grad_x0 = slice_of<W>(d.grad_x0, b, d.n_x, B);
  r.grad_u = slice_of<W>(d.grad_u, b, d.n_u, B);
  r.grad_p = slice_of<W>(d.grad_p, b, d.n_p, B);
  r.traj = slice_of<W>(d.traj, b, d.n_traj, B);
  r.loss = d.loss + b;
  r.diag = d.diag + b;
  return r;
}

// the rollout of this thread and its lane in it. W divides the block size, so the W lanes
// of a rollout lie in one warp and the bounds test below is uniform across them, which
// keeps every __syncwarp in Lanes::sync reached by the full warp.
template <int W>
__device__ long rollout_index() {
  return (long(blockIdx.x) * blockDim.x + threadIdx.x) / W;
}
template <int W>
__device__ Lanes lanes_of() {
#if defined(STEER_CUDA_EMULATION)
  // host emulation (tests/backend/cuda_emulation): Lanes::sync reaches the emulated __syncwarp
  // through its host hook, so core.h is compiled the same way in every host translation unit
  return Lanes{int(threadIdx.x % W), W, W > 1 ? ::steer_emu::sync_warp_hook : nullptr, nullptr};
#else
  return Lanes{int(threadIdx.x % W), W};
#endif
}

// (x0, u, θ) -> (checkpoints, L, diag) for d.count rollouts on `grid` blocks of
// kRolloutThreads; KModel is the model as the kernels are compiled for it
template <class KModel, class S>
void launch_forward(const KModel& m, const Loss& loss, const RolloutShape& sh,
                    const DeviceRollouts<S>& d, dim3 grid);

// (checkpoints, u, θ) -> (∂L/∂x0, ∂L/∂u, ∂L/∂θ); kReferenceAdjoint: the dual-number adjoint
template <class KModel, class S, bool kReferenceAdjoint>
void launch_backward(const KModel& m, const Loss& loss, const RolloutShape& sh,
                     const DeviceRollouts<S>& d, dim3 grid);

}  // namespace cuda_detail
}  // namespace steer
