// Test controls of the emulated CUDA device (cuda_runtime.h, cuda_runtime_api.h): how a
// block's threads are scheduled, how much memory the device has, and faults on request.
// Test-only, like the rest of tests/backend/cuda_emulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda_runtime_api.h"

namespace steer_emu {

// The order in which a block's threads run between barriers. A fiber runs until it reaches
// a barrier (__syncthreads, __syncwarp), ends or, with preemption, reads a built-in index
// variable (threadIdx, blockIdx, blockDim, gridDim), which in steer's kernels sits next to
// every access that crosses threads (the transpose tiles). Then the next ready fiber runs:
//   in order   first come, first served from thread 0 up: what a sequential reading of the
//              kernel expects, and the default;
//   shuffled   a random ready fiber each time, from `seed` and the launch's number, so a
//              failure reproduces; with `preempt` > 0 a fiber also gives way at each
//              built-in read with that probability.
// A missing barrier then shows as a wrong result: on hardware it is a race that may pass.
struct Schedule {
  bool shuffled = false;
  std::uint64_t seed = 1;
  double preempt = 0.0;  // probability of a switch at each built-in read (shuffled only)
};
void set_schedule(const Schedule& s);
Schedule schedule();
// STEER_CUDA_EMULATION_SCHEDULE=in-order | shuffled[:SEED] | preempt[:SEED] (shuffled, and a
// switch at a quarter of the built-in reads) sets the schedule a process starts with
Schedule schedule_from_string(const std::string& text);  // throws std::invalid_argument

// device memory [bytes]: cudaMemGetInfo reports it, cudaMalloc fails with
// cudaErrorMemoryAllocation past it (allocations counted in 256-byte units, the alignment
// cudaMalloc guarantees)
constexpr std::size_t kDefaultMemoryBytes = std::size_t(16) << 30;
void set_memory_bytes(std::size_t bytes);
std::size_t memory_bytes();
std::size_t allocated_bytes();  // live, in 256-byte units
int live_allocations();

// Faults. fail_allocation(n): the (n+1)-th cudaMalloc from now returns
// cudaErrorMemoryAllocation. fail_launch(n, err): the (n+1)-th launch from now does not
// run; cudaErrorLaunchFailure, cudaErrorIllegalAddress and cudaErrorUnknown are faults
// inside the kernel and become the device's sticky error (every later call returns it, as
// after a real kernel fault), any other error is a launch error that cudaGetLastError
// reports and clears (cudaErrorLaunchOutOfResources, cudaErrorInvalidConfiguration).
void fail_allocation(int after);
void fail_launch(int after, cudaError_t err);

// what a test can count on
struct Counters {
  long launches = 0;  // grids run
  long blocks = 0;
  long threads = 0;
  long switches = 0;  // fiber switches away from a running thread (barrier, preemption, end)
  long preemptions = 0;
};
Counters counters();

// the device as a fresh process finds it: faults and the sticky error cleared, the default
// memory size and the schedule from the environment (live allocations stay, and count)
void reset();

}  // namespace steer_emu
