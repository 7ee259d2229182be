// The emulated device's barriers and schedules (tests/backend/cuda_emulation): steer's own
// transpose kernel (kernels/rollout_kernels.cuh) and rollout kernels give the right bits under
// every schedule, and copies of kernels with one barrier removed give wrong ones, so a missing
// __syncthreads or __syncwarp in kernels/ fails the emulated suites instead of waiting for a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_emulation/emulated_batches.h"
#include "cuda_emulation/emulator.h"
#include "cuda_emulation/transpose_copies.h"
#include "rollout_kernels.cuh"
#include "steer/cuda_device.h"

namespace {

using steer::DeviceBuffer;
using steer_emu::Schedule;

// every schedule the tests try: in order, shuffled, and shuffled with preemption at a quarter
// of the built-in reads, four seeds each
std::vector<Schedule> schedules() {
  std::vector<Schedule> s{Schedule{}};
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    s.push_back(Schedule{true, seed, 0.0});
    s.push_back(Schedule{true, seed, 0.25});
  }
  return s;
}

std::string name_of(const Schedule& s) {
  if (!s.shuffled) return "in order";
  return std::string(s.preempt > 0 ? "preempt" : "shuffled") + ", seed " + std::to_string(s.seed);
}

// restores the process's schedule and clears faults when a test ends
struct EmulatedScheduling : ::testing::Test {
  void TearDown() override { steer_emu::reset(); }
};

using TransposeKernel = void (*)(const double*, double*, long, long);

// how many entries of the transpose of a random rows × cols matrix `kernel` gets wrong on
// `grid` blocks of 32 × 8 threads (the output starts as NaN, so an entry never written counts)
long transpose_errors(TransposeKernel kernel, long rows, long cols, dim3 grid,
                      std::mt19937_64& rng) {
  std::vector<double> in(std::size_t(rows * cols)), out(in.size());
  for (double& v : in) v = std::uniform_real_distribution<double>(-1, 1)(rng);
  DeviceBuffer d_in(sizeof(double) * in.size()), d_out(sizeof(double) * in.size());
  EXPECT_EQ(cudaMemcpy(d_in.as<double>(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice),
            cudaSuccess);
  EXPECT_EQ(cudaMemset(d_out.as<double>(), 0xff, d_out.bytes()), cudaSuccess);
  STEER_KERNEL_LAUNCH(grid, dim3(32, 8), kernel)
  (d_in.as<const double>(), d_out.as<double>(), rows, cols);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out.as<double>(), d_out.bytes(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  long wrong = 0;
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c) wrong += !(out[c * rows + r] == in[r * cols + c]);
  return wrong;
}

dim3 full_grid(long rows, long cols) {
  return dim3(unsigned((rows + 31) / 32), unsigned((cols + 31) / 32));
}

TEST_F(EmulatedScheduling, RealTransposeIsRightUnderEverySchedule) {
  std::mt19937_64 rng(1);
  struct Shape {
    long rows, cols;
  };
  for (const Schedule& s : schedules()) {
    steer_emu::set_schedule(s);
    for (Shape sh : {Shape{70, 45}, Shape{32, 32}, Shape{1, 100}, Shape{96, 64}})
      for (dim3 g : {full_grid(sh.rows, sh.cols), dim3(1, 1), dim3(2, 1)})
        EXPECT_EQ(transpose_errors(steer::transpose_kernel<double>, sh.rows, sh.cols, g, rng), 0)
            << name_of(s) << ", " << sh.rows << " x " << sh.cols << ", grid " << g.x << " x "
            << g.y;
  }
}

// without the barrier between writing the tile and reading it, every schedule reads entries
// not yet written (thread (x, y) reads tile[x][y + 8k], written by thread (y + 8k, x mod 8))
TEST_F(EmulatedScheduling, MissingFirstBarrierIsCaught) {
  std::mt19937_64 rng(2);
  for (const Schedule& s : schedules()) {
    steer_emu::set_schedule(s);
    EXPECT_GT(transpose_errors(steer_test_kernels::transpose_without_first_barrier<double>, 96, 64,
                               full_grid(96, 64), rng),
              0)
        << name_of(s);
  }
}

// the barrier after reading the tile matters only when a block goes round its loop: with one
// tile per block (the launcher's grid) the bug is latent, with a 1 × 1 grid it shows
TEST_F(EmulatedScheduling, MissingSecondBarrierIsCaughtWhenABlockCoversSeveralTiles) {
  std::mt19937_64 rng(3);
  for (const Schedule& s : schedules()) {
    steer_emu::set_schedule(s);
    EXPECT_EQ(transpose_errors(steer_test_kernels::transpose_without_second_barrier<double>, 96, 64,
                               full_grid(96, 64), rng),
              0)
        << name_of(s);
    EXPECT_GT(transpose_errors(steer_test_kernels::transpose_without_second_barrier<double>, 96, 64,
                               dim3(1, 1), rng),
              0)
        << name_of(s);
  }
}

// lane l of each warp reads what lane l − 1 wrote (lane 0 its own): with __syncwarp right
// under every schedule; without it, right only in order (lower lanes always ran first), wrong
// under every shuffled one, which is why the suites can run shuffled
__global__ void warp_shift(const int* in, int* out, bool with_barrier) {
  __shared__ int buf[64];
  const int t = int(threadIdx.x);
  buf[t] = 3 * in[t];
  if (with_barrier) __syncwarp();
  out[t] = buf[t % 32 == 0 ? t : t - 1];
}

long warp_shift_errors(bool with_barrier, int run) {
  std::vector<int> in(64), out(64);
  for (int t = 0; t < 64; ++t) in[t] = 1000 * run + t;
  DeviceBuffer d_in(sizeof(int) * 64), d_out(sizeof(int) * 64);
  EXPECT_EQ(cudaMemcpy(d_in.as<int>(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice),
            cudaSuccess);
  STEER_KERNEL_LAUNCH(dim3(1), dim3(64), warp_shift)
  (d_in.as<const int>(), d_out.as<int>(), with_barrier);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out.as<int>(), d_out.bytes(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  long wrong = 0;
  for (int t = 0; t < 64; ++t) wrong += out[t] != 3 * in[t % 32 == 0 ? t : t - 1];
  return wrong;
}

TEST_F(EmulatedScheduling, MissingSyncwarpIsCaughtByShuffledSchedules) {
  int run = 0;
  for (const Schedule& s : schedules()) {
    steer_emu::set_schedule(s);
    EXPECT_EQ(warp_shift_errors(true, ++run), 0) << name_of(s);
    if (s.shuffled)
      EXPECT_GT(warp_shift_errors(false, ++run), 0) << name_of(s);
    else
      EXPECT_EQ(warp_shift_errors(false, ++run), 0) << name_of(s);
  }
}

// threads that return before a __syncthreads no longer count at it (sm_70 and later)
__global__ void reverse_first_n(const int* in, int* out, int n) {
  __shared__ int buf[128];
  const int t = int(threadIdx.x);
  if (t >= n) return;
  buf[t] = in[t];
  __syncthreads();
  out[t] = buf[n - 1 - t];
}

TEST_F(EmulatedScheduling, EndedThreadsDoNotHoldABarrier) {
  const int n = 100;
  std::vector<int> in(128), out(128, -1);
  for (int t = 0; t < 128; ++t) in[t] = 7 * t + 1;
  DeviceBuffer d_in(sizeof(int) * 128), d_out(sizeof(int) * 128);
  ASSERT_EQ(cudaMemcpy(d_in.as<int>(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice),
            cudaSuccess);
  for (const Schedule& s : schedules()) {
    steer_emu::set_schedule(s);
    ASSERT_EQ(cudaMemset(d_out.as<int>(), 0, d_out.bytes()), cudaSuccess);
    STEER_KERNEL_LAUNCH(dim3(1), dim3(128), reverse_first_n)
    (d_in.as<const int>(), d_out.as<int>(), n);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << name_of(s);
    ASSERT_EQ(cudaMemcpy(out.data(), d_out.as<int>(), d_out.bytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (int t = 0; t < n; ++t) EXPECT_EQ(out[t], in[n - 1 - t]) << name_of(s) << ", thread " << t;
  }
}

// thread 0 waits at __syncthreads, the rest of its warp at __syncwarp: neither barrier can
// fill. On hardware that hangs or corrupts; the emulator faults the launch (sticky, as a
// kernel fault is) and says why on stderr.
__global__ void divergent_barriers() {
  if (threadIdx.x == 0)
    __syncthreads();
  else
    __syncwarp();
}

TEST_F(EmulatedScheduling, DivergentBarriersFaultTheLaunch) {
  STEER_KERNEL_LAUNCH(dim3(1), dim3(128), divergent_barriers)();
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);  // sticky
  steer_emu::reset();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// the order in which the threads of a block first run
__global__ void record_order(int* order, int* counter) {
  const int t = int(threadIdx.x);
  order[t] = (*counter)++;  // fibers of one block never run at the same time
}

std::vector<int> first_run_order(int threads) {
  DeviceBuffer d_order(sizeof(int) * threads), d_counter(sizeof(int));
  EXPECT_EQ(cudaMemset(d_counter.as<int>(), 0, sizeof(int)), cudaSuccess);
  STEER_KERNEL_LAUNCH(dim3(1), dim3(threads), record_order)(d_order.as<int>(), d_counter.as<int>());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<int> order(threads);
  EXPECT_EQ(
      cudaMemcpy(order.data(), d_order.as<int>(), sizeof(int) * threads, cudaMemcpyDeviceToHost),
      cudaSuccess);
  return order;
}

TEST_F(EmulatedScheduling, ShuffledSchedulesRunThreadsOutOfOrder) {
  std::vector<int> identity(128);
  for (int t = 0; t < 128; ++t) identity[t] = t;
  steer_emu::set_schedule(Schedule{});
  EXPECT_EQ(first_run_order(128), identity);
  steer_emu::set_schedule(Schedule{true, 5, 0.0});
  const std::vector<int> a = first_run_order(128), b = first_run_order(128);
  EXPECT_NE(a, identity);
  EXPECT_NE(b, identity);
  EXPECT_NE(a, b);  // each launch draws its own order
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, identity);  // every thread ran once
}

// The rollout kernels through the real launcher: the projectile (a thread per rollout, SoA
// layout and transposes) and the mass-spring robot (a warp per rollout, its lanes meeting at
// Lanes::sync, i.e. __syncwarp) give the same bits under every schedule. A missing lane
// barrier in the model's lane-strided loops would let one lane read another's half-written
// particles, and the shuffled runs would differ from the ordered one.
TEST_F(EmulatedScheduling, RolloutKernelsGiveTheSameBitsUnderEverySchedule) {
  using namespace steer;
  const Projectile pm = emulated::projectile();
  RolloutShape psh;
  psh.steps = 60;
  psh.checkpoint_every = 8;
  psh.traj_stride = 15;
  const Batch<double> pb = emulated::projectile_batch(pm, 150, psh.steps, 9u);
  const emulated::MassSpringCase ms;
  RolloutShape msh;
  msh.steps = 40;
  msh.checkpoint_every = 6;
  msh.traj_stride = 20;
  const Batch<double> mb = ms.batch(6, msh.steps, 4u);

  steer_emu::set_schedule(Schedule{});
  BatchResult<double> p_ref, m_ref;
  cuda_run_batch_ex(pm, emulated::projectile_loss(), psh, pb, true, p_ref, CudaRunOptions{},
                    nullptr);
  const steer_emu::Counters c0 = steer_emu::counters();
  cuda_run_batch_ex(ms.model, ms.loss, msh, mb, true, m_ref, CudaRunOptions{}, nullptr);
  const steer_emu::Counters c1 = steer_emu::counters();
  // every lane of the 6 warps meets its warp at each Lanes::sync: many switches per thread
  EXPECT_GT(c1.switches - c0.switches, 10 * (c1.threads - c0.threads));
  for (const Schedule& s : {Schedule{true, 11, 0.0}, Schedule{true, 12, 0.25}}) {
    SCOPED_TRACE(name_of(s));
    steer_emu::set_schedule(s);
    BatchResult<double> p, m;
    cuda_run_batch_ex(pm, emulated::projectile_loss(), psh, pb, true, p, CudaRunOptions{}, nullptr);
    emulated::expect_same_bits(p, p_ref);
    const steer_emu::Counters before = steer_emu::counters();
    cuda_run_batch_ex(ms.model, ms.loss, msh, mb, true, m, CudaRunOptions{}, nullptr);
    emulated::expect_same_bits(m, m_ref);
    if (s.preempt > 0) {
      EXPECT_GT(steer_emu::counters().preemptions, before.preemptions);
    }
  }
}

TEST(EmulatedScheduleText, ParsesEveryFormAndRejectsTheRest) {
  using steer_emu::schedule_from_string;
  EXPECT_FALSE(schedule_from_string("in-order").shuffled);
  const Schedule s = schedule_from_string("shuffled:42");
  EXPECT_TRUE(s.shuffled);
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.preempt, 0.0);
  const Schedule p = schedule_from_string("preempt");
  EXPECT_TRUE(p.shuffled);
  EXPECT_GT(p.preempt, 0.0);
  for (const char* bad : {"", "random", "shuffled:", "shuffled:x", "in-order:3", "preempt:-1"}) {
    try {
      schedule_from_string(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("STEER_CUDA_EMULATION_SCHEDULE"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
