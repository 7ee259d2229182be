// The rollout kernels: forward_kernel and backward_kernel run the CPU backend's
// forward_rollout / backward_rollout for one rollout per thread (or per warp), and only index
// and call. Included only by the kernels/*.cu files that instantiate launch_forward /
// launch_backward (STEER_INSTANTIATE_CUDA_KERNELS), so each kernel is compiled in one file.
#pragma once

#include "rollout_device.cuh"
#include "steer/cuda_check.h"
#include "steer/cuda_device.h"
#include "steer/lanes_per_rollout.h"

namespace steer {
namespace cuda_detail {
namespace {

// The model and the loss are __grid_constant__: read where the launch put them (the kernel's
// parameter space), with no copy per thread into local memory where their arrays are indexed by
// a run-time value (a body's parent, a joint's dof), which otherwise adds the model's size
// (kilobytes) to every thread's stack frame.
// (x0, u, θ) -> (checkpoints, L, diag), W = LanesPerRollout lanes per rollout
template <class Model, class S>
__global__ void forward_kernel(__grid_constant__ const Model m, __grid_constant__ const Loss loss,
                               RolloutShape sh, DeviceRollouts<S> d) {
  constexpr int W = LanesPerRollout<Model>::value;
  const long b = rollout_index<W>();
  if (b >= d.count) return;
  forward_rollout<Model, S>(m, loss, sh, refs_of<W>(d, b), lanes_of<W>());
}

// (checkpoints, u, θ) -> (∂L/∂x0, ∂L/∂u, ∂L/∂θ). The adjoint choice is a template argument
// so that the dual-number path, when not asked for, is compiled out (AdjointPath::kHand): it
// would otherwise set the kernel's registers and stack even where it never runs (the
// projectile's register count; articulated: its Dual<S, 8> arrays, where reverse_step is not
// inlined).
// The reference kernel keeps the run-time switch, set here: fixing it at compile time too
// gave articulated's reference kernel a larger frame (figures:
// bench/log/2026-12-05-01-kernel-figures-from-comments.md).
// Models whose reference adjoint is host-only (run-time sized, kMaxState == 0) get only the
// `false` kernel.
template <class Model, class S, bool kReferenceAdjoint>
__global__ void backward_kernel(__grid_constant__ const Model m, __grid_constant__ const Loss loss,
                                RolloutShape sh, DeviceRollouts<S> d) {
  constexpr int W = LanesPerRollout<Model>::value;
  constexpr AdjointPath kPath = kReferenceAdjoint ? AdjointPath::kRunTime : AdjointPath::kHand;
  const long b = rollout_index<W>();
  if (b >= d.count) return;
  sh.reference_adjoint = kReferenceAdjoint;
  backward_rollout<Model, S, kPath>(m, loss, sh, refs_of<W>(d, b), lanes_of<W>());
}

// The loss as a kernel reads it: the host's Loss with its tracking table (Loss::track, host
// memory, 2·rows·channels doubles and the linear channels' terms) copied to the device for the
// launch. The copy lives until
// the launch function returns, which waits for the kernel that reads it before freeing it.
struct DeviceLoss {
  Loss loss;
  DeviceBuffer table;
  explicit DeviceLoss(const Loss& host) : loss(host) {
    if (!host.has_track()) return;
    const std::size_t bytes = sizeof(double) * std::size_t(host.track_doubles());
    table = DeviceBuffer(bytes);
    STEER_CUDA_CHECK(cudaMemcpy(table.as<double>(), host.track, bytes, cudaMemcpyHostToDevice));
    loss.track = table.as<const double>();
  }
  ~DeviceLoss() {
    // a destructor cannot report; the launcher's own synchronizing call surfaces any fault
    if (table.bytes() > 0) cudaDeviceSynchronize();
  }
  DeviceLoss(const DeviceLoss&) = delete;
  DeviceLoss& operator=(const DeviceLoss&) = delete;
};

}  // namespace

template <class KModel, class S>
void launch_forward(const KModel& m, const Loss& loss, const RolloutShape& sh,
                    const DeviceRollouts<S>& d, dim3 grid) {
  const DeviceLoss dl(loss);
  STEER_KERNEL_LAUNCH(grid, kRolloutThreads, forward_kernel<KModel, S>)(m, dl.loss, sh, d);
}

template <class KModel, class S, bool kReferenceAdjoint>
void launch_backward(const KModel& m, const Loss& loss, const RolloutShape& sh,
                     const DeviceRollouts<S>& d, dim3 grid) {
  const DeviceLoss dl(loss);
  STEER_KERNEL_LAUNCH(grid, kRolloutThreads, backward_kernel<KModel, S, kReferenceAdjoint>)
  (m, dl.loss, sh, d);
}

}  // namespace cuda_detail
}  // namespace steer

// the forward kernel and the hand-adjoint backward kernel of KModel in S
#define STEER_INSTANTIATE_CUDA_KERNELS(KModel, S)                                                  \
  namespace steer::cuda_detail {                                                                   \
  template void launch_forward<KModel, S>(const KModel&, const Loss&, const RolloutShape&,         \
                                          const DeviceRollouts<S>&, dim3);                         \
  template void launch_backward<KModel, S, false>(const KModel&, const Loss&, const RolloutShape&, \
                                                  const DeviceRollouts<S>&, dim3);                 \
  }
// the dual-number (reference) backward kernel of KModel in S
#define STEER_INSTANTIATE_CUDA_REFERENCE_KERNEL(KModel, S)                                        \
  namespace steer::cuda_detail {                                                                  \
  template void launch_backward<KModel, S, true>(const KModel&, const Loss&, const RolloutShape&, \
                                                 const DeviceRollouts<S>&, dim3);                 \
  }
