// The CUDA backend on actuator activations (activation.h): a batch of
// tests/data/activation_arm.json (a filter with a servo, an early exact filter, an integrator and a
// slide without one; euler and implicitfast), lanes differing in their start, activations and
// controls, run through run_batch on the CUDA backend (the emulated device in
// tests/backend/gpu_emulation.cmake, or a real one) and on the CPU: loss and every gradient agree
// to 1e-10 relative in float64 (the two differ in the order of reductions only), 1e-2 in float32
// beyond float32's own CPU error.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#include "steer/cuda_backend.h"
#include "parity_error.h"

namespace steer {
namespace {

ExperimentConfig arm(const std::string& integrator) {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/tests/data/activation_arm.json");
  nlohmann::json model = nlohmann::json::parse(in);
  model["integrator"] = integrator;
  return parse_config(
      {{"name", "activation_arm"},
       {"model", model},
       {"simulation", {{"dt", 0.002}, {"steps", 10}, {"precision", "float64"}}},
       {"loss",
        {{"terminal", {{{"state", "wrist.act"}, {"target", 0.1}}}}, {"control_effort", 1e-3}}},
       {"validation", {{"enabled", false}}}});
}

template <class S>
Batch<S> lanes(const Articulated& m, const std::vector<double>& theta, int B, int T) {
  Batch<S> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  for (int r = 0; r < B; ++r) {
    for (int i = 0; i < m.nx(); ++i) b.x0_of(r)[i] = S(0.3 * std::sin(1.7 * i + 0.3 * r));
    for (int k = 0; k < m.np(); ++k) b.theta_of(r)[k] = S(theta[size_t(k)]);
    for (int k = 0; k < T * m.nu(); ++k) b.u_of(r)[k] = S(2.0 * std::sin(0.2 * k + r));
  }
  return b;
}

template <class S>
void check(const std::string& integrator, double tol) {
  const CudaStatus cs = cuda_status();
#if defined(STEER_CUDA_EMULATION)
  ASSERT_TRUE(cs.available) << cs.reason;
#else
  if (!cs.available) GTEST_SKIP() << cs.reason;
#endif
  const ExperimentConfig c = arm(integrator);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  ASSERT_EQ(m.n_act, 3);
  const int B = 12, T = 30;
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 7;
  const Batch<S> batch = lanes<S>(m, c.theta, B, T);
  const Batch<double> batch64 = lanes<double>(m, c.theta, B, T);
  BatchResult<S> gpu, cpu32;
  BatchResult<double> cpu;
  run_batch<Articulated, S>(BackendKind::kCuda, m, c.loss, sh, batch, true, gpu, 0);
  run_batch<Articulated, double>(BackendKind::kCpu, m, c.loss, sh, batch64, true, cpu, 0);
  const bool f32 = std::is_same<S, float>::value;
  if (f32) run_batch<Articulated, S>(BackendKind::kCpu, m, c.loss, sh, batch, true, cpu32, 0);
  expect_device_parity(gpu, cpu32, cpu, tol);
  // the activations' gradients are not zero: the loss reaches them
  double act_grad = 0;
  for (int r = 0; r < B; ++r)
    for (int s = 0; s < m.n_act; ++s)
      act_grad += std::fabs(cpu.grad_x0[size_t(r * m.nx() + 2 * m.n_dof + s)]);
  EXPECT_GT(act_grad, 0.0);
}

TEST(ActivationCuda, EulerFloat64) { check<double>("euler", 1e-10); }
TEST(ActivationCuda, ImplicitFastFloat64) { check<double>("implicitfast", 1e-10); }
TEST(ActivationCuda, ImplicitFastFloat32) { check<float>("implicitfast", 1e-2); }

}  // namespace
}  // namespace steer
