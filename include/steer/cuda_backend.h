// The CUDA backend's extended entry point: the same batch run as cuda_run_batch (backend.h),
// with a cap on rollouts per device pass and per-phase timings for benchmarks and tests.
// Device layout follows the lanes per rollout (steer/lanes_per_rollout.h): with one thread
// per rollout, structure-of-arrays (element i of rollout b at i*Bc + b); with a warp per
// rollout, rollout-major (b*n + i). Bc is the number of rollouts on the device at once (the
// whole batch, or one chunk of it when the batch does not fit in device memory; chunking
// does not change any result). A model's topology is copied to the device once per call.
#pragma once

#include <cstddef>

#include "steer/backend.h"

namespace steer {

struct CudaRunOptions {
  long max_chunk = 0;  // most rollouts per device pass; 0 = as many as free device memory holds
};

// what one cuda_run_batch_ex call did; times are summed over chunks [ms], from CUDA events
struct CudaRunStats {
  int chunks = 0;                // device passes
  long chunk_rollouts = 0;       // rollouts per pass (the last one may hold fewer)
  std::size_t device_bytes = 0;  // device memory allocated for one pass
  std::size_t bytes_per_rollout = 0;
  float upload_ms = 0;    // host -> device copies and transposes to SoA
  float forward_ms = 0;   // forward kernel
  float backward_ms = 0;  // backward kernel (0 without gradients)
  float download_ms = 0;  // transposes back and device -> host copies
};

#ifdef STEER_WITH_CUDA
// (x0, u, θ) -> (L, diag[, ∂L/∂x0, ∂L/∂u, ∂L/∂θ]) laid out as cpu_run_batch lays them out
template <class Model, class S>
void cuda_run_batch_ex(const Model& m, const Loss& loss, const RolloutShape& sh,
                       const Batch<S>& batch, bool want_grad, BatchResult<S>& out,
                       const CudaRunOptions& opt, CudaRunStats* stats);
#endif

}  // namespace steer
