// Backend selection at run time (cpu, cuda, auto) and the one entry point that runs a
// batch on the chosen backend. The CUDA backend exists only in builds where CMake
// found a CUDA compiler (STEER_WITH_CUDA); elsewhere asking for it is a clear error.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "steer/batch.h"
#include "steer/cpu_backend.h"

namespace steer {

// whether a usable CUDA device is present, and why not if it is not
struct CudaStatus {
  bool compiled = false;   // this build contains the CUDA backend
  bool available = false;  // a device and a driver answered
  std::string reason;      // why not available ("built without CUDA", "no CUDA device: ...")
  std::string device;      // device name when available
  // the device's ceilings (0 = unknown), for the fraction bench_rollout reports
  // (docs/design.md, "Benchmarks and work counting"):
  // DRAM bandwidth = 2 (double data rate) · memory clock · bus width / 8 [GB/s];
  // FP32/FP64 peak = SMs · FMA lanes per SM (by compute capability) · 2 flops · SM clock [GFLOP/s]
  int sm_count = 0;
  double sm_clock_ghz = 0, peak_bandwidth_gbs = 0, peak_fp32_gflops = 0, peak_fp64_gflops = 0;
};
CudaStatus cuda_status();

// "cpu" | "cuda" | "auto" -> backend; "cuda" without a device throws std::runtime_error,
// "auto" falls back to the CPU and writes why into *note
BackendKind resolve_backend(const std::string& request, std::string* note);

// A model whose CUDA kernels a CUDA build compiles (kernels/rollout_<model>_<precision>.cu)
// says so with `static constexpr bool kCudaKernels = true;`. run_batch refuses the cuda backend
// for any other model instead of naming kernels that do not exist.
template <class Model, class = void>
struct has_cuda_kernels : std::false_type {};
template <class Model>
struct has_cuda_kernels<Model, std::enable_if_t<Model::kCudaKernels>> : std::true_type {};

#ifdef STEER_WITH_CUDA
// defined in kernels/rollout_kernels.cuh, instantiated per model and precision in
// kernels/rollout_<model>_<precision>.cu
template <class Model, class S>
void cuda_run_batch(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<S>& batch,
                    bool want_grad, BatchResult<S>& out);
#endif

template <class Model, class S>
void run_batch(BackendKind kind, const Model& m, const Loss& loss, const RolloutShape& sh,
               const Batch<S>& batch, bool want_grad, BatchResult<S>& out, int threads = 0) {
  if (kind == BackendKind::kCpu) {
    cpu_run_batch<Model, S>(m, loss, sh, batch, want_grad, out, threads);
    return;
  }
#ifdef STEER_WITH_CUDA
  if constexpr (has_cuda_kernels<Model>::value)
    cuda_run_batch<Model, S>(m, loss, sh, batch, want_grad, out);
  else
    throw std::runtime_error(
        "backend cuda: this model has no CUDA kernels; run it on the cpu backend");
#else
  throw std::runtime_error(
      "backend cuda: this build has no CUDA backend (configured with STEER_CUDA=OFF or no CUDA "
      "compiler found)");
#endif
}

}  // namespace steer
