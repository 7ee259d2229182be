// The tracking table and the site terms on the CUDA path, run on the emulated device
// (tests/backend/gpu_emulation.cmake): the real launcher and kernels, with the table copied to
// device memory per launch (kernels/rollout_kernel_defs.cuh), against the CPU backend. The
// projectile runs one thread per rollout, the mass-spring robot a warp per rollout (the leading
// lane evaluates the loss), the Panda one thread per rollout with a site (position and
// orientation) and a linear channel (a tendon's length: its terms after the table's rows).
// Tolerance: 1e-12 relative to max(1, |value|) per array entry (the emulated kernels are host code,
// so the two paths differ at most by the schedule of a warp's lanes).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "cuda_emulation/emulated_batches.h"
#include "loss_terms.h"
#include "models/articulated/articulated_setup.h"
#include "steer/backend.h"
#include "steer/cuda_backend.h"

namespace steer {
namespace {

// a table over the channels, smooth references, one channel unobserved at every fourth step
std::vector<double> table(int rows, int channels) {
  std::vector<double> t(size_t(2) * rows * channels);
  for (int k = 0; k < rows; ++k)
    for (int c = 0; c < channels; ++c) {
      t[(size_t(k) * channels + c) * 2] = 0.2 * std::cos(0.07 * k + c);
      t[(size_t(k) * channels + c) * 2 + 1] = (c == 0 && k % 4 == 0) ? 0.0 : 1.0 + 0.1 * c;
    }
  return t;
}

template <class Model>
void expect_cuda_matches_cpu(const Model& m, const Loss& loss, const Batch<double>& b, int T,
                             const char* what) {
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 5;
  BatchResult<double> cpu, gpu;
  cpu_run_batch<Model, double>(m, loss, sh, b, true, cpu, 1);
  cuda_run_batch_ex<Model, double>(m, loss, sh, b, true, gpu, CudaRunOptions{}, nullptr);
  auto near = [&](const std::vector<double>& a, const std::vector<double>& c, const char* name) {
    ASSERT_EQ(a.size(), c.size()) << what << " " << name;
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], c[i], 1e-12 * std::max(1.0, std::fabs(a[i])))
          << what << " " << name << "[" << i << "]";
  };
  near(cpu.loss, gpu.loss, "loss");
  near(cpu.grad_x0, gpu.grad_x0, "dL/dx0");
  near(cpu.grad_u, gpu.grad_u, "dL/du");
  near(cpu.grad_theta, gpu.grad_theta, "dL/dθ");
  // the table's terms are in the loss (not a vacuous comparison)
  BatchResult<double> plain;
  Loss none = loss;
  none.n_track = 0;
  none.n_site = 0;
  cpu_run_batch<Model, double>(m, none, sh, b, false, plain, 1);
  EXPECT_GT(std::fabs(plain.loss[0] - cpu.loss[0]), 1e-9) << what;
}

TEST(LossesOnDevice, ProjectileTrackingTable) {
  const Projectile m = emulated::projectile();
  const int T = 40;
  Loss l = emulated::projectile_loss();
  const std::vector<double> t = table(T + 1, 3);
  testing::point_at_table(l, T + 1, {0, 1, 3}, t);
  expect_cuda_matches_cpu(m, l, emulated::projectile_batch(m, 7, T, 11), T, "projectile");
}

TEST(LossesOnDevice, MassSpringWarpTrackingTable) {
  const emulated::MassSpringCase ms;
  const int T = 20;
  Loss l = ms.loss;
  const std::vector<double> t = table(T - 3, 4);  // rows for part of the horizon
  testing::point_at_table(l, T - 3, {1, 6, 11, 16}, t);
  expect_cuda_matches_cpu(ms.model, l, ms.batch(3, T, 5), T, "mass-spring");
}

TEST(LossesOnDevice, PandaSiteTermsAndTable) {
  const ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/panda.json");
  Articulated m = c.model_state<ArticulatedSetup>().model;
  // a site 0.1 m beyond the last body's origin
  m.n_sites = 1;
  m.site_body[0] = m.n_bodies - 1;
  m.site_pos[0][0] = 0.0, m.site_pos[0][1] = 0.0, m.site_pos[0][2] = 0.1;
  for (int i = 0; i < 9; ++i) m.site_rot[0][i] = i % 4 == 0 ? 1.0 : 0.0;
  const int T = 25, B = 3;
  Loss l = c.loss;
  const double goal[3] = {0.4, 0.1, 0.6};
  testing::add_site_term(l, 0, 2.0, true, goal);
  l.site_rot_weight[0] = 0.5;  // and the site's orientation against the identity
  for (int i = 0; i < 9; ++i) l.site_rot_target[0][i] = i % 4 == 0 ? 1.0 : 0.0;
  std::vector<double> t = table(T + 1, 6);
  // channel 5: a linear combination of state slots (a fixed tendon's length, Loss's linear
  // channels), its terms after the rows: one offset, then 2 terms (q1 − 0.5 q3)
  const size_t start = t.size();
  t.insert(t.end(), {1.0, 2.0, 1.0, 1.0, 3.0, -0.5});
  testing::point_at_table(l, T + 1, {1, 8, -(1 + 0), -(1 + 1), -(1 + 2), Loss::kLinearChannel}, t);
  l.track_extra = int(t.size() - start);
  const Batch<double> b = testing::sine_batch(c, m.nx(), m.nu(), m.np(), B, T, 3.0, 0.2);
  expect_cuda_matches_cpu(m, l, b, T, "panda");
}

}  // namespace
}  // namespace steer
