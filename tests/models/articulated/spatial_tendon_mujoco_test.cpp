// configs/mjcf/spatial_tendon.xml imported (model.mjcf) moves as MuJoCo moves it: a cable from a
// world site over the upper arm to the hand of a hinge-hinge-slide arm, with a spring pulling
// (its rest length shorter than the cable), a damper and a range that never acts, joint motors
// driving the arm from kicked velocities. Built where MuJoCo is found (label crosscheck).
// Checked, float64:
//   - the import: the tendon's sites in order, stiffness, springlength, damping, range;
//   - 500 ms at the file's 2 ms under Euler and RK4: every q and q̇ after every step within 1e-10
//     of MuJoCo's, MuJoCo's ten_length at each Euler step's start equal to steer's length to
//     1e-12, and no constraint acting in MuJoCo.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "steer/models/articulated.h"
#include "mujoco_files.h"

using namespace steer;
using steer::testing::DataFree;
using steer::testing::imported_config;
using steer::testing::ModelFree;
using steer::testing::mujoco_model;

namespace {

const char* kFile = "mjcf/spatial_tendon.xml";
constexpr int kSteps = 250;  // 500 ms at the file's 2 ms
constexpr int kDof = 3;

ExperimentConfig imported(const std::string& integrator) {
  return imported_config(kFile, integrator, kSteps);
}

double control(int k, int a) {
  return (a == 0 ? 3.0 : 1.0) * std::sin(2 * M_PI * (1.0 + 0.7 * a) * k * 0.002 + 0.5 * a);
}

TEST(SpatialTendonMujoco, ImportKeepsTheFilesTendon) {
  const ExperimentConfig c = imported("euler");
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = s.large;
  ASSERT_EQ(m.n_tendons, 1);
  ASSERT_TRUE(m.tendon_spatial(0));
  ASSERT_EQ(m.tendon_path_n[0], 3);
  EXPECT_EQ(s.names.sites[size_t(m.tendon_path[0][0])], "anchor");
  EXPECT_EQ(s.names.sites[size_t(m.tendon_path[0][1])], "upper_s");
  EXPECT_EQ(s.names.sites[size_t(m.tendon_path[0][2])], "hand_s");
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], 40.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonSpringLength))], 0.5);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonDamping))], 0.3);
  EXPECT_EQ(m.tendon_upper[0], 3.0);
}

void compare_with_mujoco(const std::string& integrator, int mj_integrator) {
  const ExperimentConfig c = imported(integrator);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  ASSERT_EQ(m.n_dof, kDof);
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  ASSERT_TRUE(mm);
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  std::vector<double> x = c.x0, p = c.theta;
  for (int i = 0; i < kDof; ++i) {
    x[size_t(kDof + i)] = 1.2 * std::cos(1.1 * i + 0.3);
    d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(kDof + i)];
  }
  double worst = 0, worst_len = 0, stretch = 0, moved = 0;
  int nefc = 0;
  for (int k = 0; k < kSteps; ++k) {
    std::vector<double> u(ArticulatedLarge::kMaxControl, 0.0), xn(ArticulatedLarge::kMaxState, 0.0);
    for (int a = 0; a < 2; ++a) u[size_t(a)] = d->ctrl[a] = control(k, a);
    ArticulatedLarge::Kin<double> K;
    m.forward_kinematics(x.data(), p.data(), K);
    double Ldot;
    const double L =
        spatial_tendon_length<ArticulatedLarge, double>(m, K, 0, x.data() + kDof, Ldot);
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    nefc = std::max(nefc, d->nefc);
    if (mj_integrator == mjINT_EULER)
      worst_len = std::max(worst_len, std::fabs(L - d->ten_length[0]));
    stretch = std::max(stretch, L - 0.5);
    std::copy(xn.begin(), xn.begin() + 2 * kDof, x.begin());
    for (int i = 0; i < kDof; ++i) {
      worst = std::max(worst, std::fabs(x[size_t(i)] - d->qpos[i]));
      worst = std::max(worst, std::fabs(x[size_t(kDof + i)] - d->qvel[i]));
      moved = std::max(moved, std::fabs(d->qpos[i]));
    }
  }
  EXPECT_EQ(nefc, 0) << "a constraint acted in MuJoCo";
  EXPECT_LE(worst, 1e-10) << integrator;
  EXPECT_LE(worst_len, 1e-12);
  EXPECT_GT(stretch, 0.1) << "the cable's spring should pull";
  EXPECT_GT(moved, 0.1) << "the arm should move";
  std::printf(
      "[ spatial_tendon.xml ] 500 ms %s: max |x_steer − x_mujoco| = %.3g, cable length %.3g "
      "(stretched by up to %.3g)\n",
      integrator.c_str(), worst, worst_len, stretch);
}

TEST(SpatialTendonMujoco, EulerMatchesMujocoOver500ms) {
  compare_with_mujoco("euler", mjINT_EULER);
}

TEST(SpatialTendonMujoco, Rk4MatchesMujocoOver500ms) { compare_with_mujoco("rk4", mjINT_RK4); }

}  // namespace
