// Backend selection: cpu, cuda or auto, decided per run from what this build and this
// machine offer.
#include "steer/backend.h"

#include <cstdlib>
#include <thread>

namespace steer {

int cpu_default_threads() {
  // STEER_THREADS overrides; otherwise every hardware thread
  if (const char* env = std::getenv("STEER_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
#endif
}

#ifndef STEER_WITH_CUDA
CudaStatus cuda_status() {
  CudaStatus s;
  s.compiled = false;
  s.available = false;
  s.reason =
      "this build has no CUDA backend (STEER_CUDA=OFF or no CUDA compiler at configure time)";
  return s;
}
#endif

BackendKind resolve_backend(const std::string& request, std::string* note) {
  if (request == "cpu") return BackendKind::kCpu;
  if (request == "cuda" || request == "auto") {
    CudaStatus s = cuda_status();
    if (s.available) {
      if (note) *note = "using CUDA device " + s.device;
      return BackendKind::kCuda;
    }
    if (request == "cuda") throw std::runtime_error("backend cuda: " + s.reason);
    if (note) *note = "backend auto: falling back to cpu (" + s.reason + ")";
    return BackendKind::kCpu;
  }
  throw std::invalid_argument("backend: '" + request + "' is not one of cpu, cuda, auto");
}

}  // namespace steer
