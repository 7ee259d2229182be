// Checked CUDA runtime calls: a failing call becomes a std::runtime_error that names the
// call, the CUDA error and the call site, so a bad launch is never silent. CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace steer {

// throws if err is not cudaSuccess; the message reads "<call> failed at <file>:<line>: <error>"
inline void cuda_check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  // the failed call is also the runtime's last error; cleared here, it cannot resurface at the
  // next launch check (cudaGetLastError) of a later call that goes on after this exception
  cudaGetLastError();
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace steer

// STEER_CUDA_CHECK(cudaMalloc(&p, n)); after a launch: STEER_CUDA_CHECK(cudaGetLastError())
#define STEER_CUDA_CHECK(call) ::steer::cuda_check((call), #call, __FILE__, __LINE__)
