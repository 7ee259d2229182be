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

// FP32 and FP64 FMA lanes per SM, from NVIDIA's per-architecture tables (CUDA C++
// Programming Guide, "Arithmetic Instructions" throughput table); 0 where not listed here
void fma_lanes_per_sm(int major, int minor, int& fp32, int& fp64) {
  fp32 = fp64 = 0;
  if (major == 7) fp32 = 64, fp64 = minor == 0 ? 32 : 2;  // V100 (7.0), Turing (7.5)
  if (major == 8) fp32 = minor == 0 ? 64 : 128, fp64 = minor == 0 ? 32 : 2;  // A100 / GA10x, Ada
  if (major == 9) fp32 = 128, fp64 = 64;                                     // H100, H200
}

// the ceilings of device `dev` (the clocks come from attributes: CUDA 13's cudaDeviceProp no
// longer carries them); a query that fails leaves its ceiling at 0 (unknown)
void set_ceilings(CudaStatus& s, int dev, int major, int minor, int sms) {
  int sm_khz = 0, mem_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, dev) != cudaSuccess) sm_khz = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) mem_khz = 0;
  if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess)
    bus_bits = 0;
  cudaGetLastError();
  int fp32 = 0, fp64 = 0;
  fma_lanes_per_sm(major, minor, fp32, fp64);
  s.sm_count = sms;
  s.sm_clock_ghz = sm_khz * 1e-6;
  s.peak_bandwidth_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) * 1e-9;
  s.peak_fp32_gflops = double(sms) * fp32 * 2.0 * s.sm_clock_ghz;
  s.peak_fp64_gflops = double(sms) * fp64 * 2.0 * s.sm_clock_ghz;
}

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
  set_ceilings(s, dev, prop.major, prop.minor, prop.multiProcessorCount);
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
