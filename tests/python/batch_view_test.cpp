// A Batch that views caller memory (Batch::view_inputs, include/steer/batch.h), as the Python
// module passes its caller's arrays to the engine: the same bits as a batch that owns copies of
// the same values, on every path. Built twice (tests/python/CMakeLists.txt): against the host
// library (BatchView.*: the CPU backend's scalar path with the projectile and its SIMD-pack path
// with the mass-spring robot; writes through a view and device memory on the CPU backend refused),
// and against the emulated CUDA device (Emulated.BatchViewDevice.*: host views, and inputs in
// device memory, read in place by the warp-per-rollout layout and transposed on the device for
// the projectile's structure-of-arrays, with the results left in device memory; whole batches
// and chunked passes).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_emulation/emulated_batches.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#ifdef STEER_CUDA_EMULATION
#include <cuda_runtime.h>

#include "steer/cuda_backend.h"
#include "steer/cuda_device.h"
#endif

namespace steer {
namespace {

using emulated::expect_same_bits;

// a batch of the same sizes as `owned` that reads owned's vectors where they are
template <class S>
Batch<S> view_of(const Batch<S>& owned, Memory where = Memory::kHost, const S* x0 = nullptr,
                 const S* u = nullptr, const S* theta = nullptr) {
  Batch<S> v;
  v.size = owned.size, v.nx = owned.nx, v.nu = owned.nu, v.np = owned.np, v.steps = owned.steps;
  v.view_inputs(x0 ? x0 : owned.x0.data(), u ? u : owned.u.data(),
                theta ? theta : owned.theta.data(), where);
  return v;
}

RolloutShape shape(int T, int every, int traj_stride) {
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = every;
  sh.traj_stride = traj_stride;
  return sh;
}

TEST(BatchView, ViewedInputsGiveTheOwnedBatchsBitsOnTheCpu) {
  // projectile: one rollout per thread (scalar path); B = 5, T = 60, checkpoints every 7 steps
  const Projectile pm = emulated::projectile();
  const Batch<double> pb = emulated::projectile_batch(pm, 5, 60, 3u);
  const Batch<double> pv = view_of(pb);
  ASSERT_TRUE(pv.views_inputs());
  EXPECT_TRUE(pv.x0.empty() && pv.u.empty() && pv.theta.empty());
  EXPECT_EQ(pv.x0_of(2), pb.x0_of(2));  // the engine's reads land in the caller's memory
  EXPECT_EQ(pv.u_of(4), pb.u_of(4));
  for (int threads : {1, 2}) {
    BatchResult<double> a, b;
    cpu_run_batch(pm, emulated::projectile_loss(), shape(60, 7, 3), pb, true, a, threads);
    cpu_run_batch(pm, emulated::projectile_loss(), shape(60, 7, 3), pv, true, b, threads);
    expect_same_bits(a, b);
  }
  // mass-spring: B = 6 > 1 takes the SIMD-pack path (cpu_run_packed reads through x0_of)
  const emulated::MassSpringCase ms;
  const Batch<double> mb = ms.batch(6, 40, 5u);
  ASSERT_TRUE((use_packed_path<MassSpring, double>(ms.model, shape(40, 40, 4), 6)));
  BatchResult<double> a, b;
  cpu_run_batch(ms.model, ms.loss, shape(40, 40, 4), mb, true, a, 2);
  cpu_run_batch(ms.model, ms.loss, shape(40, 40, 4), view_of(mb), true, b, 2);
  expect_same_bits(a, b);
  EXPECT_EQ(b.memory, Memory::kHost);
}

TEST(BatchView, AViewsInputsAreReadOnly) {
  const Projectile m = emulated::projectile();
  const Batch<double> owned = emulated::projectile_batch(m, 2, 10, 1u);
  Batch<double> v = view_of(owned);
  EXPECT_THROW(v.x0_of(0), std::logic_error);
  EXPECT_THROW(v.u_of(1), std::logic_error);
  EXPECT_THROW(v.theta_of(0), std::logic_error);
  // an owned batch stays writable
  Batch<double> w = owned;
  EXPECT_NO_THROW(w.x0_of(1)[0] = 1.0);
}

TEST(BatchView, ANullViewIsRefused) {
  const Projectile m = emulated::projectile();
  const Batch<double> owned = emulated::projectile_batch(m, 2, 10, 1u);
  Batch<double> v = view_of(owned);
  v.view_inputs(owned.x0.data(), nullptr, owned.theta.data());
  BatchResult<double> r;
  try {
    cpu_run_batch(m, emulated::projectile_loss(), shape(10, 10, 0), v, false, r);
    FAIL() << "a null input array ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a viewed input array is null"), std::string::npos)
        << e.what();
  }
}

TEST(BatchView, TheCpuBackendRefusesDeviceMemory) {
  const Projectile m = emulated::projectile();
  const Batch<double> owned = emulated::projectile_batch(m, 2, 10, 1u);
  BatchResult<double> r;
  try {
    run_batch(BackendKind::kCpu, m, emulated::projectile_loss(), shape(10, 10, 0),
              view_of(owned, Memory::kDevice), false, r);
    FAIL() << "device memory ran on the cpu backend";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("backend cpu: the batch's inputs are in CUDA device memory"),
        std::string::npos)
        << e.what();
  }
}

#ifdef STEER_CUDA_EMULATION
// an emulated-device copy of v
struct DeviceCopy {
  DeviceBuffer buf;
  explicit DeviceCopy(const std::vector<double>& v)
      : buf(sizeof(double) * (v.empty() ? 1 : v.size())) {
    EXPECT_EQ(
        cudaMemcpy(buf.as<double>(), v.data(), sizeof(double) * v.size(), cudaMemcpyHostToDevice),
        cudaSuccess);
  }
  const double* data() const { return buf.as<double>(); }
};

std::vector<double> to_host(const double* d, std::size_t n) {
  std::vector<double> h(n);
  if (n > 0) {
    EXPECT_EQ(cudaMemcpy(h.data(), d, sizeof(double) * n, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return h;
}

// runs `owned` on the emulated cuda backend from host memory, from a host view and from device
// memory (chunks of max_chunk rollouts, 0: one pass) and expects the host path's bits each time
template <class Model>
void expect_device_path_bits(const Model& m, const Loss& loss, const RolloutShape& sh,
                             const Batch<double>& owned, long max_chunk) {
  CudaRunOptions opt;
  opt.max_chunk = max_chunk;
  BatchResult<double> ref, hv, dv;
  cuda_run_batch_ex(m, loss, sh, owned, true, ref, opt, nullptr);
  cuda_run_batch_ex(m, loss, sh, view_of(owned), true, hv, opt, nullptr);
  expect_same_bits(ref, hv);
  const DeviceCopy x0(owned.x0), u(owned.u), th(owned.theta);
  CudaRunStats st;
  cuda_run_batch_ex(m, loss, sh, view_of(owned, Memory::kDevice, x0.data(), u.data(), th.data()),
                    true, dv, opt, &st);
  if (max_chunk > 0) {
    EXPECT_GT(st.chunks, 1);
  }
  ASSERT_EQ(dv.memory, Memory::kDevice);
  EXPECT_TRUE(dv.loss.empty() && dv.grad_x0.empty() && dv.grad_u.empty() && dv.grad_theta.empty() &&
              dv.traj.empty());
  ASSERT_TRUE(dv.device.owner && dv.device.loss && dv.device.grad_x0 && dv.device.grad_u &&
              dv.device.grad_theta);
  ASSERT_EQ(dv.device.traj != nullptr, sh.traj_stride > 0);
  // the device arrays as host vectors: then every array and diagnostic as the host path's
  BatchResult<double> back;
  back.loss = to_host(dv.device.loss, ref.loss.size());
  back.grad_x0 = to_host(dv.device.grad_x0, ref.grad_x0.size());
  back.grad_u = to_host(dv.device.grad_u, ref.grad_u.size());
  back.grad_theta = to_host(dv.device.grad_theta, ref.grad_theta.size());
  back.traj = to_host(dv.device.traj, ref.traj.size());
  back.diag = dv.diag;
  expect_same_bits(ref, back);
}

TEST(BatchViewDevice, ProjectileTransposedOnTheDevice) {
  const Projectile m = emulated::projectile();
  const Batch<double> b = emulated::projectile_batch(m, 7, 50, 9u);
  for (long chunk : {0L, 3L})
    expect_device_path_bits(m, emulated::projectile_loss(), shape(50, 6, 5), b, chunk);
}

TEST(BatchViewDevice, MassSpringReadInPlace) {
  const emulated::MassSpringCase ms;
  const Batch<double> b = ms.batch(5, 16, 4u);
  for (long chunk : {0L, 2L})
    expect_device_path_bits(ms.model, ms.loss, shape(16, 16, 4), b, chunk);
}

TEST(BatchViewDevice, DeviceMemoryOfAnotherDeviceIsRefused) {
  const Projectile m = emulated::projectile();
  const Batch<double> owned = emulated::projectile_batch(m, 2, 10, 1u);
  Batch<double> v = view_of(owned);
  v.view_inputs(owned.x0.data(), owned.u.data(), owned.theta.data(), Memory::kDevice, 1);
  BatchResult<double> r;
  try {
    cuda_run_batch(m, emulated::projectile_loss(), shape(10, 10, 0), v, false, r);
    FAIL() << "device 1's arrays ran on device 0";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the batch's arrays are on device 1"), std::string::npos)
        << e.what();
  }
}
#endif

}  // namespace
}  // namespace steer
