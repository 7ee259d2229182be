// configs/mjcf/frictionloss.xml imported (model.mjcf) against MuJoCo: a flywheel (I = 0.1 kg·m²,
// frictionloss 0.2 N·m) spun at 2 rad/s and a sled (2 kg, frictionloss 1 N) pushed at 1 m/s.
// MuJoCo's frictionloss is a dry-friction constraint; steer's is the smooth law
// −F tanh(q̇ / v_f) (joint_friction.h), here at v_f = 0.005 rad/s or m/s. While a joint slides
// (|q̇| ≫ v_f) both apply exactly F against the motion. Built where MuJoCo is found (label
// crosscheck). Checked, float64:
//   - the import: each joint's frictionloss in its θ slot, v_f the default 0.1 unless the
//     config sets it, the import's note;
//   - Euler and RK4 over the sliding phase (0.9 s: the wheel slows from 2 to 0.2 rad/s): every
//     q and q̇ after every step within 1e-12 of MuJoCo's;
//   - through the wheel's stop (1.5 s, Euler): both hold it still, within 5e-4 rad of each other
//     (MuJoCo's soft constraint and steer's viscous tail below v_f stop it differently).
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
using steer::testing::ModelFree;
using steer::testing::mujoco_model;

namespace {

const char* kFile = "mjcf/frictionloss.xml";
constexpr double kH = 0.002;  // the file's timestep [s]

ExperimentConfig imported(const std::string& integrator, int steps, double v_f = 0) {
  nlohmann::json extra = nlohmann::json::object();
  if (v_f > 0) extra["frictionloss_velocity"] = v_f;
  return steer::testing::imported_config(kFile, integrator, steps, extra);
}

TEST(JointFrictionMujoco, ImportKeepsTheFilesFriction) {
  const ExperimentConfig c = imported("euler", 10);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  ASSERT_TRUE(m.joint_friction);
  EXPECT_EQ(m.frictionloss_velocity, 0.1);
  EXPECT_EQ(c.theta[size_t(m.p_frictionloss(0))], 0.2);
  EXPECT_EQ(c.theta[size_t(m.p_frictionloss(1))], 1.0);
  EXPECT_EQ(c.info.param_names[size_t(m.p_frictionloss(1))], "slide.frictionloss");
  const std::string notes = articulated_model_json(c)["imported_from"]["notes"].dump();
  EXPECT_NE(notes.find("frictionloss"), std::string::npos) << notes;
  EXPECT_EQ(
      imported("euler", 10, 0.005).model_state<ArticulatedSetup>().large.frictionloss_velocity,
      0.005);
}

struct BothRuns {
  double worst = 0;        // max |x_steer − x_mujoco| over the steps
  double x_steer[4] = {};  // the last state of each
  double x_mujoco[4] = {};
};

BothRuns run_both(const std::string& integrator, int mj_integrator, int steps) {
  const ExperimentConfig c = imported(integrator, steps, 0.005);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  BothRuns r;
  if (!mm) return r;
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  std::vector<double> x = c.x0, p = c.theta;
  x[2] = d->qvel[0] = 2.0;
  x[3] = d->qvel[1] = 1.0;
  std::vector<double> u(ArticulatedLarge::kMaxControl, 0.0), xn(ArticulatedLarge::kMaxState, 0.0);
  for (int k = 0; k < steps; ++k) {
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    std::copy(xn.begin(), xn.begin() + 4, x.begin());
    for (int i = 0; i < 2; ++i) {
      r.worst = std::max(r.worst, std::fabs(x[size_t(i)] - d->qpos[i]));
      r.worst = std::max(r.worst, std::fabs(x[size_t(2 + i)] - d->qvel[i]));
    }
  }
  for (int i = 0; i < 2; ++i)
    r.x_steer[i] = x[size_t(i)], r.x_steer[2 + i] = x[size_t(2 + i)], r.x_mujoco[i] = d->qpos[i],
    r.x_mujoco[2 + i] = d->qvel[i];
  return r;
}

TEST(JointFrictionMujoco, SlidingMatchesMujocosDryFriction) {
  for (const auto& [name, mj] : {std::pair<const char*, int>{"euler", mjINT_EULER},
                                 std::pair<const char*, int>{"rk4", mjINT_RK4}}) {
    const BothRuns r = run_both(name, mj, 450);
    EXPECT_LE(r.worst, 1e-12) << name;
    // the wheel at 0.9 s: 2 − 2 · 0.9 rad/s under Coulomb friction
    EXPECT_NEAR(r.x_steer[2], 0.2, 1e-9) << name;
    std::printf("[ frictionloss.xml ] sliding 0.9 s %s: max |x_steer − x_mujoco| = %.3g\n", name,
                r.worst);
  }
}

TEST(JointFrictionMujoco, BothStopTheWheel) {
  const BothRuns r = run_both("euler", mjINT_EULER, 750);
  EXPECT_LT(std::fabs(r.x_steer[2]), 1e-6);
  EXPECT_LT(std::fabs(r.x_mujoco[2]), 1e-6);
  EXPECT_NEAR(r.x_steer[0], r.x_mujoco[0], 5e-4);
  // the sled still slides at 1.5 s: 1 − 0.5 · 1.5 m/s on both sides
  EXPECT_NEAR(r.x_steer[3], 0.25, 1e-9);
  EXPECT_NEAR(r.x_mujoco[3], 0.25, 1e-9);
  std::printf("[ frictionloss.xml ] the wheel stopped at %.6f rad (steer), %.6f rad (MuJoCo)\n",
              r.x_steer[0], r.x_mujoco[0]);
}

}  // namespace
