// ArticulatedLegged (model.h: 20 bodies, 18 joints, 8 sites), the capacity a quadruped on a free
// root runs at, on configs/mjcf/quadruped.xml imported with its four feet as ground points, and
// on configs/mjcf/ball_ragdoll.xml (a free torso with limbs on ball joints: three quaternions):
//   - the parser picks it (beyond Articulated, within ArticulatedLegged);
//   - it gives the same bits as ArticulatedLarge on the same tree (scalar path), and its CPU
//     packs the same bits as its scalar path (losses and every gradient);
//   - its CUDA sources (kernels/rollout_articulated_legged_*.cu) on the emulated device of
//     tests/backend/cuda_emulation (or a real one) against the CPU in float64: loss and gradients
//     within 1e-10 relative to the largest entry, the other parity suites' bound (the kernels
//     run the same rollout code; a device's transcendentals may differ from steer's vmath in
//     the last bit, and four feet striking the ground over 20 steps amplify that); float32
//     within 1e-10 plus twice the CPU's own float32 error.
// Built as an emulated test (tests/models/articulated/CMakeLists.txt), where STEER_WITH_CUDA is
// defined, and in a CUDA build as free_base_legged_cuda_test (label cuda: the same parity on a real
// device, skipped without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <type_traits>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#include "steer/models/articulated.h"
#include "parity_error.h"

namespace steer {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 20;

// file's free root at p.x and one knee's angle as terminal targets
ExperimentConfig legged_config(const std::string& file, const std::string& knee) {
  nlohmann::json j = {
      {"name", "legged"},
      {"model", {{"type", "articulated"}, {"mjcf", file}}},
      {"simulation", {{"dt", 0.002}, {"steps", kSteps}}},
      {"loss",
       {{"terminal",
         {{{"state", "root.p.x"}, {"target", 0.1}}, {{"state", knee + ".q"}, {"target", 0.2}}}},
        {"control_effort", 1e-3}}},
      {"validation", {{"enabled", false}}}};
  return parse_config(j, (fs::path(STEER_SOURCE_DIR) / "configs").string());
}

ExperimentConfig quadruped_config() { return legged_config("mjcf/quadruped.xml", "FL_knee"); }

// a free torso with two limbs on ball joints (three quaternions in q): ArticulatedLegged too
ExperimentConfig ragdoll_config() { return legged_config("mjcf/ball_ragdoll.xml", "left_knee"); }

// B rollouts from the standing pose, each a little apart, with controls on every joint
template <class Model, class S>
Batch<S> legged_batch(const ExperimentConfig& c, const Model& m, int B) {
  Batch<S> b;
  b.resize(B, m.nx(), m.nu(), m.np(), kSteps);
  for (int r = 0; r < B; ++r) {
    for (int i = 0; i < m.nx(); ++i)
      b.x0_of(r)[i] = S(c.x0[i] + (i >= 7 && i < m.nq() ? 0.02 * std::sin(r + i) : 0.0));
    b.x0_of(r)[m.nq() + 3] = S(0.3 * std::cos(r));  // a roll rate [rad/s]
    for (int q = 0; q < m.np(); ++q) b.theta_of(r)[q] = S(c.theta[q]);
    for (int k = 0; k < kSteps * m.nu(); ++k) b.u_of(r)[k] = S(0.5 * std::sin(0.1 * k + r));
  }
  return b;
}

RolloutShape shape() {
  RolloutShape sh;
  sh.steps = kSteps;
  sh.checkpoint_every = 6;
  return sh;
}

template <class S>
bool same_bits(const std::vector<S>& a, const std::vector<S>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(S)) == 0;
}

TEST(ArticulatedLegged, ParserPicksIt) {
  const ExperimentConfig c = quadruped_config();
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  EXPECT_TRUE(s.large_tree);
  ASSERT_TRUE(s.legged_tree);
  EXPECT_TRUE(s.legged.free_base);
  EXPECT_EQ(s.legged.n_bodies, 18);
  EXPECT_EQ(s.legged.n_dof, 18);
  EXPECT_EQ(s.legged.ground.n_points, 4);
  EXPECT_EQ(s.legged.nx(), 37);
}

void expect_same_bits_as_large_and_packed_as_scalar(const ExperimentConfig& c) {
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const RolloutShape sh = shape();
  const int B = 8;
  // the packed path (B > 1) against one rollout at a time (the scalar path)
  Batch<double> batch = legged_batch<ArticulatedLegged, double>(c, s.legged, B);
  BatchResult<double> packed;
  run_batch<ArticulatedLegged, double>(BackendKind::kCpu, s.legged, c.loss, sh, batch, true, packed,
                                       1);
  for (int r = 0; r < B; ++r) {
    Batch<double> one;
    one.resize(1, batch.nx, batch.nu, batch.np, kSteps);
    std::copy(batch.x0_of(r), batch.x0_of(r) + batch.nx, one.x0_of(0));
    std::copy(batch.u_of(r), batch.u_of(r) + size_t(kSteps) * batch.nu, one.u_of(0));
    std::copy(batch.theta_of(r), batch.theta_of(r) + batch.np, one.theta_of(0));
    BatchResult<double> scalar, large;
    run_batch<ArticulatedLegged, double>(BackendKind::kCpu, s.legged, c.loss, sh, one, true, scalar,
                                         1);
    run_batch<ArticulatedLarge, double>(BackendKind::kCpu, s.large, c.loss, sh, one, true, large,
                                        1);
    auto row = [&](const std::vector<double>& v, int n) {
      return std::vector<double>(v.begin() + size_t(r) * n, v.begin() + size_t(r + 1) * n);
    };
    EXPECT_TRUE(same_bits(scalar.loss, large.loss)) << r;
    EXPECT_TRUE(same_bits(scalar.grad_x0, large.grad_x0)) << r;
    EXPECT_TRUE(same_bits(scalar.grad_u, large.grad_u)) << r;
    EXPECT_TRUE(same_bits(scalar.grad_theta, large.grad_theta)) << r;
    EXPECT_TRUE(same_bits(row(packed.loss, 1), scalar.loss)) << r;
    EXPECT_TRUE(same_bits(row(packed.grad_x0, batch.nx), scalar.grad_x0)) << r;
    EXPECT_TRUE(same_bits(row(packed.grad_u, kSteps * batch.nu), scalar.grad_u)) << r;
    EXPECT_TRUE(same_bits(row(packed.grad_theta, batch.np), scalar.grad_theta)) << r;
  }
}

TEST(ArticulatedLegged, SameBitsAsLargeAndPackedAsScalar) {
  expect_same_bits_as_large_and_packed_as_scalar(quadruped_config());
}

TEST(ArticulatedLegged, BallJointsSameBitsAsLargeAndPackedAsScalar) {
  const ExperimentConfig c = ragdoll_config();
  ASSERT_TRUE(c.model_state<ArticulatedSetup>().legged_tree);
  EXPECT_EQ(c.model_state<ArticulatedSetup>().legged.n_balls, 3);
  expect_same_bits_as_large_and_packed_as_scalar(c);
}

template <class S>
void emulated_parity(int integrator, bool ragdoll = false) {
#if defined(STEER_CUDA_EMULATION)
  ASSERT_TRUE(cuda_status().available) << cuda_status().reason;
#else
  if (!cuda_status().available) GTEST_SKIP() << cuda_status().reason;
#endif
  ExperimentConfig c = ragdoll ? ragdoll_config() : quadruped_config();
  c.model_state<ArticulatedSetup>().legged.integrator = integrator;
  const ArticulatedLegged& m = c.model_state<ArticulatedSetup>().legged;
  const RolloutShape sh = shape();
  const int B = 6;
  Batch<S> batch = legged_batch<ArticulatedLegged, S>(c, m, B);
  Batch<double> batch64 = legged_batch<ArticulatedLegged, double>(c, m, B);
  BatchResult<S> gpu, cpu32;
  BatchResult<double> cpu;
  run_batch<ArticulatedLegged, S>(BackendKind::kCuda, m, c.loss, sh, batch, true, gpu, 0);
  run_batch<ArticulatedLegged, double>(BackendKind::kCpu, m, c.loss, sh, batch64, true, cpu, 0);
  const bool f32 = std::is_same<S, float>::value;
  if (f32) run_batch<ArticulatedLegged, S>(BackendKind::kCpu, m, c.loss, sh, batch, true, cpu32, 0);
  expect_device_parity(gpu, cpu32, cpu, 1e-10);
}

TEST(ArticulatedLegged, DeviceParityEulerDouble) { emulated_parity<double>(Articulated::kEuler); }
TEST(ArticulatedLegged, DeviceParityImplicitFastFloat) {
  emulated_parity<float>(Articulated::kImplicitFast);
}
// ball joints: three quaternions stepped on the device
TEST(ArticulatedLegged, BallJointsDeviceParityEulerDouble) {
  emulated_parity<double>(Articulated::kEuler, true);
}
// rk4 is host-only on the cuda backend (is_host_only_integrator, kernels/rollout_kernels.cuh):
// an argument error before any device work; the cpu backend runs the same call
TEST(ArticulatedLegged, DeviceRk4IsRejected) {
  ExperimentConfig c = quadruped_config();
  c.model_state<ArticulatedSetup>().legged.integrator = Articulated::kRk4;
  const ArticulatedLegged& m = c.model_state<ArticulatedSetup>().legged;
  const RolloutShape sh = shape();
  const Batch<double> batch = legged_batch<ArticulatedLegged, double>(c, m, 2);
  BatchResult<double> out;
  try {
    run_batch<ArticulatedLegged, double>(BackendKind::kCuda, m, c.loss, sh, batch, true, out, 0);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rk4"), std::string::npos) << e.what();
  }
  run_batch<ArticulatedLegged, double>(BackendKind::kCpu, m, c.loss, sh, batch, true, out, 0);
  for (double g : out.grad_u) ASSERT_TRUE(std::isfinite(g));
}

}  // namespace
}  // namespace steer
