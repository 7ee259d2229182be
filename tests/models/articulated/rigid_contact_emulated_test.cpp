// The CUDA backend on rigid contact (contact_law.h, contact.h): a batch of the box on 3 slides +
// 3 hinges with its 8 corner points, lanes clear, sticking, sliding and tipping, run through
// run_batch on the CUDA backend (the emulated device in tests/backend/gpu_emulation.cmake, or a
// real one) and on the CPU, with the softplus law (its damping given, or from a coefficient of
// restitution, or with time-of-impact impulses) and the impedance law: loss and every gradient
// agree to 1e-10 relative in float64 (the two differ in the order of reductions only), 1e-2 in
// float32 beyond float32's own CPU error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
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

// the box of rigid_contact_test.cpp (tests/data/rigid_contact_box.json) with the given normal
// law; "restitution": the softplus law with its damping from a coefficient of restitution
ExperimentConfig box(const std::string& law) {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/tests/data/rigid_contact_box.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["model"]["contacts"][4]["radius"] = 0.01;  // one sphere among the points
  if (law == "time_of_impact") {
    // the softplus law with its damping, and impulses with e = 0.4 where a point crosses the plane
    j["model"]["contact"]["law"] = "softplus";
    j["model"]["contact"]["restitution"] = 0.4;
    j["model"]["contact"]["impact"] = "time_of_impact";
  } else if (law == "restitution") {
    j["model"]["contact"].erase("damping");
    j["model"]["contact"]["restitution"] = 0.4;
    j["model"]["contact"]["law"] = "softplus";
  } else {
    j["model"]["contact"]["law"] = law;
  }
  return parse_config(j);
}

template <class S>
Batch<S> lanes(const Articulated& m, const std::vector<double>& theta, int B, int T) {
  Batch<S> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  for (int r = 0; r < B; ++r) {
    const double q[6] = {0,
                         0,
                         0.05 + 0.001 * (r % 5) - 0.002 + (r % 7 == 0 ? 0.05 : 0.0),
                         0.04 * std::sin(r),
                         0.03 * std::cos(r),
                         0};
    const double v[6] = {0.05 * (r % 6), 0.002 * r, -0.05, 0.1 * std::sin(r), 0.2 * std::cos(r), 0};
    for (int i = 0; i < 6; ++i) b.x0_of(r)[i] = S(q[i]), b.x0_of(r)[6 + i] = S(v[i]);
    for (int k = 0; k < m.np(); ++k) b.theta_of(r)[k] = S(theta[k]);
    for (int k = 0; k < T * m.nu(); ++k) b.u_of(r)[k] = S(0.3 * std::sin(0.2 * k + r));
  }
  return b;
}

template <class S>
void check(const std::string& law, double tol) {
  const CudaStatus cs = cuda_status();
#if defined(STEER_CUDA_EMULATION)
  ASSERT_TRUE(cs.available) << cs.reason;
#else
  if (!cs.available) GTEST_SKIP() << cs.reason;
#endif
  const ExperimentConfig c = box(law);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  const int B = 24, T = 40;
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
  // the batch touches the plane in some lanes and not in others
  int touched = 0;
  for (int r = 0; r < B; ++r) {
    EXPECT_EQ(gpu.diag[r].contact_steps, cpu.diag[r].contact_steps) << "rollout " << r;
    touched += cpu.diag[r].contact_steps > 0 ? 1 : 0;
  }
  EXPECT_GT(touched, 0);
  EXPECT_LT(touched, B);
  if (law == "time_of_impact") {
    // some lanes take impulses: their loss depends on e
    int impacted = 0;
    for (int r = 0; r < B; ++r)
      impacted += cpu.grad_theta[size_t(r) * m.np() + m.p_contact(kContactRestitution)] != 0.0;
    EXPECT_GT(impacted, 0);
  }
}

TEST(RigidContactCuda, SoftplusFloat64) { check<double>("softplus", 1e-10); }
TEST(RigidContactCuda, ImpedanceFloat64) { check<double>("impedance", 1e-10); }
TEST(RigidContactCuda, SoftplusFloat32) { check<float>("softplus", 1e-2); }
TEST(RigidContactCuda, RestitutionFloat64) { check<double>("restitution", 1e-10); }
TEST(RigidContactCuda, TimeOfImpactFloat64) { check<double>("time_of_impact", 1e-10); }
TEST(RigidContactCuda, TimeOfImpactFloat32) { check<float>("time_of_impact", 1e-2); }

}  // namespace
}  // namespace steer
