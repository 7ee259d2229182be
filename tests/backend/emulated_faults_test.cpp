// Faults on the emulated device (tests/backend/cuda_emulation/emulator.h): a device smaller than
// the batch makes the launcher (kernels/rollout_kernels.cuh) split it into passes that give the
// one-pass bits; one too small for a single rollout, a failed allocation, a failed launch and
// a fault inside a kernel each end the call with the error STEER_CUDA_CHECK words, and leave
// no device memory behind.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cuda_emulation/emulated_batches.h"
#include "cuda_emulation/emulator.h"
#include "rollout_kernels.cuh"
#include "steer/cuda_device.h"

namespace {

using namespace steer;

struct EmulatedFaults : ::testing::Test {
  void SetUp() override { steer_emu::reset(); }
  void TearDown() override { steer_emu::reset(); }
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// the projectile and the mass-spring robot, each with a batch and a shape, run the same way
struct Problem {
  std::string name;
  std::function<void(BatchResult<double>&, const CudaRunOptions&, CudaRunStats*)> run;
};

std::vector<Problem> problems(int projectile_rollouts, int robot_rollouts) {
  static const emulated::MassSpringCase ms;
  const Projectile pm = emulated::projectile();
  RolloutShape psh;
  psh.steps = 100;
  psh.checkpoint_every = 10;
  psh.traj_stride = 25;
  const Batch<double> pb = emulated::projectile_batch(pm, projectile_rollouts, psh.steps, 21u);
  RolloutShape msh;
  msh.steps = 30;
  msh.checkpoint_every = 5;
  msh.traj_stride = 10;
  const Batch<double> mb = ms.batch(robot_rollouts, msh.steps, 22u);
  return {
      {"projectile",
       [=](BatchResult<double>& out, const CudaRunOptions& o, CudaRunStats* st) {
         cuda_run_batch_ex(pm, emulated::projectile_loss(), psh, pb, true, out, o, st);
       }},
      {"mass_spring",
       [=](BatchResult<double>& out, const CudaRunOptions& o, CudaRunStats* st) {
         cuda_run_batch_ex(ms.model, ms.loss, msh, mb, true, out, o, st);
       }},
  };
}

TEST(EmulatedDevice, IsTheCudaDeviceOfTheseTests) {
  const CudaStatus s = cuda_status();
  EXPECT_TRUE(s.compiled);
  ASSERT_TRUE(s.available) << s.reason;
  EXPECT_EQ(s.device, "steer CUDA emulator (sm_90, 16384 MiB)");
  EXPECT_EQ(s.sm_count, 1);
  EXPECT_EQ(s.peak_bandwidth_gbs, 0.0);  // no clocks: the ceilings are unknown
  std::string note;
  EXPECT_EQ(resolve_backend("cuda", &note), BackendKind::kCuda);
  EXPECT_EQ(note, "using CUDA device " + s.device);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the failed clock queries were cleared
}

// A device of M bytes: the launcher sizes passes to fit kFreeFraction · M − kReserveBytes;
// M chosen so that F rollouts fit. The passes give the one-pass bits.
TEST_F(EmulatedFaults, ABatchLargerThanTheDeviceRunsInPassesWithTheSameBits) {
  struct Want {
    int rollouts, fit;
  };
  const std::vector<Problem> ps = problems(1000, 40);
  const Want want[] = {{1000, 137}, {40, 9}};
  for (std::size_t i = 0; i < ps.size(); ++i) {
    SCOPED_TRACE(ps[i].name);
    ASSERT_EQ(steer_emu::allocated_bytes(), 0u);
    BatchResult<double> whole, parts;
    CudaRunStats s_whole, s_parts;
    ps[i].run(whole, CudaRunOptions{}, &s_whole);
    EXPECT_EQ(s_whole.chunks, 1);
    const double per = double(s_whole.bytes_per_rollout);
    const std::size_t mem =
        std::size_t((double(kReserveBytes) + (want[i].fit + 0.5) * per) / kFreeFraction) + 1;
    steer_emu::set_memory_bytes(mem);
    ps[i].run(parts, CudaRunOptions{}, &s_parts);
    EXPECT_EQ(s_parts.chunk_rollouts, want[i].fit);
    EXPECT_EQ(s_parts.chunks, (want[i].rollouts + want[i].fit - 1) / want[i].fit);
    EXPECT_LE(s_parts.device_bytes, mem);
    emulated::expect_same_bits(parts, whole);
    EXPECT_EQ(steer_emu::live_allocations(), 0);
    steer_emu::set_memory_bytes(steer_emu::kDefaultMemoryBytes);
  }
}

TEST_F(EmulatedFaults, ADeviceTooSmallForOneRolloutIsAClearError) {
  for (const Problem& p : problems(50, 4)) {
    SCOPED_TRACE(p.name);
    BatchResult<double> out;
    CudaRunStats st;
    p.run(out, CudaRunOptions{}, &st);
    steer_emu::set_memory_bytes(kReserveBytes);
    try {
      p.run(out, CudaRunOptions{}, nullptr);
      ADD_FAILURE() << "expected std::runtime_error";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "backend cuda: one rollout needs " +
                                           std::to_string(st.bytes_per_rollout) +
                                           " bytes of device memory, " +
                                           std::to_string(kReserveBytes) + " bytes are free");
    }
    steer_emu::set_memory_bytes(steer_emu::kDefaultMemoryBytes);
  }
}

// fails the 1st, 2nd, ... allocation of a call in turn until a call makes fewer; each failure
// is STEER_CUDA_CHECK's message from DeviceBuffer, and every buffer made before it is freed
TEST_F(EmulatedFaults, EveryFailedAllocationIsReportedAndLeaksNothing) {
  for (const Problem& p : problems(50, 4)) {
    SCOPED_TRACE(p.name);
    BatchResult<double> ref;
    p.run(ref, CudaRunOptions{}, nullptr);
    int failed = 0;
    for (int k = 0; k < 100; ++k) {
      steer_emu::fail_allocation(k);
      BatchResult<double> out;
      try {
        p.run(out, CudaRunOptions{}, nullptr);
        emulated::expect_same_bits(out, ref);  // k past the call's last allocation
        break;
      } catch (const std::runtime_error& e) {
        ++failed;
        const std::string m = e.what();
        EXPECT_TRUE(contains(m, "cudaMalloc(&ptr_, bytes) failed at ")) << m;
        EXPECT_TRUE(contains(m, "cuda_device.cpp:")) << m;
        EXPECT_TRUE(contains(m, ": cudaErrorMemoryAllocation (out of memory)")) << m;
        // cuda_check cleared it: the next call's launch checks must not see it
        EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
      }
      EXPECT_EQ(steer_emu::live_allocations(), 0) << "allocation " << k;
    }
    steer_emu::reset();
    // x0, u, θ, checkpoints, segment, trajectory, λ, λ_prev, three gradients, loss and diag,
    // and the projectile's staging array or the robot's topology
    EXPECT_EQ(failed, 14);
    BatchResult<double> after;
    p.run(after, CudaRunOptions{}, nullptr);  // out of memory is not sticky
    emulated::expect_same_bits(after, ref);
  }
}

// fails the 1st, 2nd, ... launch of a call (transposes, forward, backward) with an error a
// launch reports at once; the launcher's check after that launch throws
TEST_F(EmulatedFaults, EveryFailedLaunchIsReportedAndLeaksNothing) {
  for (const Problem& p : problems(50, 4)) {
    SCOPED_TRACE(p.name);
    BatchResult<double> ref;
    p.run(ref, CudaRunOptions{}, nullptr);
    int failed = 0;
    for (int k = 0; k < 100; ++k) {
      steer_emu::fail_launch(k, cudaErrorLaunchOutOfResources);
      BatchResult<double> out;
      try {
        p.run(out, CudaRunOptions{}, nullptr);
        emulated::expect_same_bits(out, ref);
        break;
      } catch (const std::runtime_error& e) {
        ++failed;
        const std::string m = e.what();
        EXPECT_TRUE(contains(m, "cudaGetLastError() failed at ")) << m;
        EXPECT_TRUE(contains(m, "rollout_kernels.cuh:")) << m;
        EXPECT_TRUE(contains(
            m, ": cudaErrorLaunchOutOfResources (too many resources requested for launch)"))
            << m;
      }
      EXPECT_EQ(steer_emu::live_allocations(), 0) << "launch " << k;
    }
    steer_emu::reset();
    // the projectile: 3 uploads, forward, backward, 4 downloads; the robot: forward, backward
    EXPECT_EQ(failed, p.name == "projectile" ? 9 : 2);
  }
}

// a fault inside a kernel loses the context: that call and every later one fail with it until
// the device is reset (on hardware: until the process ends)
TEST_F(EmulatedFaults, AKernelFaultIsStickyUntilTheDeviceIsReset) {
  for (const Problem& p : problems(50, 4)) {
    SCOPED_TRACE(p.name);
    BatchResult<double> ref, out;
    p.run(ref, CudaRunOptions{}, nullptr);
    steer_emu::fail_launch(p.name == "projectile" ? 3 : 0,
                           cudaErrorIllegalAddress);  // the forward kernel
    for (int call = 0; call < 2; ++call) {
      try {
        p.run(out, CudaRunOptions{}, nullptr);
        ADD_FAILURE() << "call " << call << ": expected std::runtime_error";
      } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(
            e.what(), ": cudaErrorIllegalAddress (an illegal memory access was encountered)"))
            << e.what();
      }
      EXPECT_EQ(steer_emu::live_allocations(), 0);
    }
    steer_emu::reset();
    p.run(out, CudaRunOptions{}, nullptr);
    emulated::expect_same_bits(out, ref);
  }
}

// the runtime checks what a launcher bug would get wrong: copies that leave an allocation,
// frees of what was never allocated, launch shapes a device refuses, unrecorded events
TEST_F(EmulatedFaults, TheRuntimeRejectsWhatHardwareWould) {
  char host[256] = {};
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 100), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, host, 100, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, host, 101, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not sticky: read once, then cleared
  EXPECT_EQ(cudaMemcpy(host, static_cast<char*>(d) + 50, 50, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host, static_cast<char*>(d) + 50, 51, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host, d, 10, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);  // directions swapped
  EXPECT_EQ(cudaMemset(static_cast<char*>(d) + 99, 0, 2), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(static_cast<char*>(d) + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidValue);
  EXPECT_EQ(steer_emu::live_allocations(), 0);
  cudaGetLastError();

  steer_emu::set_memory_bytes(1024);
  EXPECT_EQ(cudaMalloc(&d, 1000), cudaSuccess);  // 1024 bytes in 256-byte units
  void* more = nullptr;
  EXPECT_EQ(cudaMalloc(&more, 1), cudaErrorMemoryAllocation);
  std::size_t free_bytes = 1, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  EXPECT_EQ(free_bytes, 0u);
  EXPECT_EQ(total, 1024u);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  cudaGetLastError();

  STEER_KERNEL_LAUNCH(dim3(1), dim3(2048), transpose_kernel<double>)(nullptr, nullptr, 0, 0);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  STEER_KERNEL_LAUNCH(dim3(1, 70000), dim3(32), transpose_kernel<double>)(nullptr, nullptr, 0, 0);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);

  cudaEvent_t a = nullptr, b = nullptr;
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventRecord(a), cudaSuccess);
  EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(b), cudaSuccess);
  EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(cudaEventDestroy(a), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(b), cudaSuccess);
  cudaGetLastError();
}

}  // namespace
