// CUDA device discovery and device memory, for builds with the CUDA backend. A machine
// with no GPU or no driver is reported as "no CUDA device: <why>", never a crash.
#include "steer/cuda_device.h"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "steer/backend.h"
#include "steer/cuda_check.h"

namespace steer {

namespace {

CudaStatus probe_cuda() {
  CudaStatus s;
  s.compiled = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // no driver, or a driver older than the runtime, or no device: all end here.
    // cudaGetLastError clears the error so later runtime calls do not see it.
    s.reason = std::string("no CUDA device: ") + cudaGetErrorString(err);
    cudaGetLastError();
    return s;
  }
  if (count == 0) {
    s.reason = "no CUDA device: the driver reports 0 devices";
    return s;
  }
  int dev = 0;
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDevice(&dev) == cudaSuccess ? cudaGetDeviceProperties(&prop, dev)
                                                              : cudaErrorInvalidDevice;
  if (perr != cudaSuccess) {
    s.reason = std::string("no CUDA device: ") + cudaGetErrorString(perr);
    cudaGetLastError();
    return s;
  }
  s.available = true;
  s.device = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
             std::to_string(prop.minor) + ", " + std::to_string(prop.totalGlobalMem >> 20) +
             " MiB)";
  return s;
}

}  // namespace

CudaStatus cuda_status() {
  // the answer cannot change within a process; ask the driver once
  static const CudaStatus status = probe_cuda();
  return status;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) STEER_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  // cudaFree only fails on an already-broken context; a destructor cannot report it
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

DeviceMemory device_memory() {
  DeviceMemory m;
  STEER_CUDA_CHECK(cudaMemGetInfo(&m.free_bytes, &m.total_bytes));
  return m;
}

}  // namespace steer
