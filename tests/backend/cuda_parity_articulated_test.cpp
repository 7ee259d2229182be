// CUDA vs CPU for the articulated Panda (one thread per rollout; the hand adjoint of
// implicitfast and euler; rk4 is host-only on the device): losses and every gradient on the
// same batch. The step is a long chain of trigonometry, 3×3
// products and a Cholesky solve; nvcc contracts a·b + c into FMAs, so the two differ by
// rounding amplified by the arm's conditioning over the horizon. Tolerances, over the batch,
// max-norm of the difference over max-norm of the reference array:
//   float64: |cuda − cpu| ≤ 1e-10 (50 steps of 2 ms)
//   float32: |cuda − ref64| ≤ 1e-2 + 2 |cpu32 − ref64|, ref64 = the CPU in float64 on the same
//            inputs: the GPU must be as accurate as the CPU in float32. The CPU's own float32
//            gradients are 0.12 from float64 on this batch (its loss 4e-5), so a bound on
//            |cuda − ref64| alone would fail a correct device.
// Without a CUDA device every test skips with the reason. The file is built a second time
// against the emulated device of tests/backend/cuda_emulation (tests named Emulated.*), where it
// never skips; there the arm's sin, cos and sqrt are the host's and nothing is contracted into an
// FMA, so the emulated device gives the CPU's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#include "steer/cuda_backend.h"
#include "parity_error.h"

namespace steer {
namespace {

namespace fs = std::filesystem;

#if defined(STEER_CUDA_EMULATION)
// the emulated device is always present: a skip would hide the whole suite
#define STEER_SKIP_WITHOUT_CUDA() ASSERT_TRUE(cuda_status().available) << cuda_status().reason
#else
#define STEER_SKIP_WITHOUT_CUDA()                 \
  do {                                            \
    const CudaStatus cs = cuda_status();          \
    if (!cs.available) GTEST_SKIP() << cs.reason; \
  } while (0)
#endif

template <class S>
Batch<S> panda_batch(const ExperimentConfig& c, int B, int T) {
  Batch<S> b;
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  for (int r = 0; r < B; ++r) {
    for (int i = 0; i < m.nx(); ++i)
      b.x0_of(r)[i] = S(c.x0[i] + (i < 7 ? 0.01 * std::sin(r + i) : 0.0));
    for (int q = 0; q < m.np(); ++q) b.theta_of(r)[q] = S(c.theta[q]);
    for (int j = 0; j < 7; ++j)
      b.theta_of(r)[m.p_joint(j, Articulated::kTarget)] = S(c.x0[j] + 0.005 * std::cos(r * 7 + j));
    for (int k = 0; k < T * 7; ++k) b.u_of(r)[k] = S(2.0 * std::sin(0.01 * k + r));
  }
  return b;
}

// integrator: the config's (implicitfast) when negative; euler and implicitfast run as
// ArticulatedImplicit
template <class S>
void check(double tol, int integrator = -1, int B = 64) {
  STEER_SKIP_WITHOUT_CUDA();
  ExperimentConfig c =
      load_config((fs::path(STEER_SOURCE_DIR) / "configs" / "panda.json").string());
  if (integrator >= 0) c.model_state<ArticulatedSetup>().model.integrator = integrator;
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  const int T = 50;
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 7;
  Batch<S> batch = panda_batch<S>(c, B, T);
  Batch<double> batch64 = panda_batch<double>(c, B, T);
  BatchResult<S> gpu, cpu32;
  BatchResult<double> cpu;
  run_batch<Articulated, S>(BackendKind::kCuda, m, c.loss, sh, batch, true, gpu, 0);
  run_batch<Articulated, double>(BackendKind::kCpu, m, c.loss, sh, batch64, true, cpu, 0);
  if (std::is_same<S, float>::value)
    run_batch<Articulated, S>(BackendKind::kCpu, m, c.loss, sh, batch, true, cpu32, 0);
  expect_device_parity(gpu, cpu32, cpu, tol);
}

TEST(CudaParityArticulated, Float64) { check<double>(1e-10); }
TEST(CudaParityArticulated, Float32) { check<float>(1e-2); }
TEST(CudaParityArticulated, Float64Euler) { check<double>(1e-10, Articulated::kEuler); }

// The arm's reference (dual-number) adjoint and its rk4 integrator are host-only on the cuda
// backend (kDeviceReference, is_host_only_integrator: kernels/rollout_kernels.cuh): asked for,
// the call is an argument error raised before any device work, so this runs without a GPU too;
// the cpu backend runs the same request.
void expect_host_only(bool reference_adjoint, int integrator, const char* what) {
  ExperimentConfig c =
      load_config((fs::path(STEER_SOURCE_DIR) / "configs" / "panda.json").string());
  if (integrator >= 0) c.model_state<ArticulatedSetup>().model.integrator = integrator;
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  RolloutShape sh;
  sh.steps = 5;
  sh.checkpoint_every = 5;
  sh.reference_adjoint = reference_adjoint;
  const Batch<double> batch = panda_batch<double>(c, 2, sh.steps);
  BatchResult<double> out;
  try {
    run_batch<Articulated, double>(BackendKind::kCuda, m, c.loss, sh, batch, true, out, 0);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host-only"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
  run_batch<Articulated, double>(BackendKind::kCpu, m, c.loss, sh, batch, true, out, 0);
  for (double g : out.grad_u) ASSERT_TRUE(std::isfinite(g));
}

TEST(CudaParityArticulated, ReferenceAdjointIsRejected) {
  expect_host_only(true, -1, "reference (dual-number) adjoint");
}
TEST(CudaParityArticulated, Rk4IsRejected) { expect_host_only(false, Articulated::kRk4, "rk4"); }

}  // namespace
}  // namespace steer
