// configs/mjcf/joint_tree.xml imported (model.mjcf) moves as MuJoCo moves it: three joints in
// the root body (slide, slide with ref, hinge off the origin), a hinge with ref and a spring,
// two hinges in one body with their own anchors and axes, a slide with ref and a spring, and
// gravity with x and y components. Built where MuJoCo is found (label crosscheck). Checked, in
// float64, with motors driven by smooth sinusoids and kicked initial velocities on every joint:
//   - 500 ms at 2 ms under Euler (MuJoCo's: damping implicit) and under RK4: every q and q̇ after
//     every step within 1e-10 of MuJoCo's, and MuJoCo never creates a constraint row;
//   - the start: steer's default q is MuJoCo's qpos0 (each joint's ref);
//   - the import record and effective model keep the file's joints (ref, stiffness, springref);
//   - initial_state.keyframe takes the file's <keyframe>.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
#include "mujoco_handles.h"

using namespace steer;
using steer::testing::DataFree;
using steer::testing::ModelFree;

namespace {

namespace fs = std::filesystem;
const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";
constexpr int kSteps = 250;  // 500 ms at the file's 2 ms

ExperimentConfig imported(const std::string& integrator) {
  nlohmann::json j = {
      {"name", "joint_tree_import"},
      {"model",
       {{"type", "articulated"}, {"mjcf", "mjcf/joint_tree.xml"}, {"integrator", integrator}}},
      {"simulation", {{"steps", kSteps}, {"precision", "float64"}}},
      {"loss", {{"control_effort", 1.0}}},
      {"validation", {{"enabled", false}}}};
  return parse_config(j, kConfigs.string());
}

// feed-forward torques [N·m or N]: steer's u_ff = gear · ctrl on the four motors' joints (3 … 6),
// nothing on the root's three
double control(int k, int j) {
  if (j < 3) return 0.0;
  return (j == 6 ? 3.0 : 1.5) * std::sin(2 * M_PI * (1.0 + 0.4 * j) * k * 0.002 + 0.7 * j);
}

void compare_with_mujoco(const std::string& integrator, int mj_integrator) {
  const ExperimentConfig c = imported(integrator);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  ASSERT_EQ(m.n_dof, 7);
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> mm(
      mj_loadXML((kConfigs / "mjcf/joint_tree.xml").string().c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(mm) << err;
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  ASSERT_EQ(mm->nq, 7);
  // steer's default start is MuJoCo's qpos0; both are kicked alike
  for (int i = 0; i < 7; ++i) ASSERT_EQ(c.x0[size_t(i)], mm->qpos0[i]) << i;
  std::vector<double> x = c.x0, p = c.theta;
  for (int i = 0; i < 7; ++i) {
    x[size_t(7 + i)] = 0.5 * std::cos(1.1 * i + 0.3);
    d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(7 + i)];
  }
  const nlohmann::json& acts =
      c.model_state<ArticulatedSetup>().names.import_record.at("actuators");
  double worst = 0, moved = 0;
  int nefc = 0;
  for (int k = 0; k < kSteps; ++k) {
    std::vector<double> u(7), xn(14);
    for (int j = 0; j < 7; ++j) {
      u[size_t(j)] = control(k, j);
      if (j < 3) continue;
      const nlohmann::json& a = acts.at(size_t(j)).at("control");
      const int id = mj_name2id(mm.get(), mjOBJ_ACTUATOR, a["actuator"].get<std::string>().c_str());
      d->ctrl[id] = u[size_t(j)] / a["torque_per_ctrl"].get<double>();
    }
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    nefc = std::max(nefc, d->nefc);
    x = xn;
    for (int i = 0; i < 7; ++i) {
      worst = std::max(worst, std::fabs(x[size_t(i)] - d->qpos[i]));
      worst = std::max(worst, std::fabs(x[size_t(7 + i)] - d->qvel[i]));
      moved = std::max(moved, std::fabs(d->qpos[i] - mm->qpos0[i]));
    }
  }
  EXPECT_EQ(nefc, 0) << "a constraint acted in MuJoCo";
  EXPECT_LE(worst, 1e-10) << integrator;
  EXPECT_GT(moved, 0.1) << "the inputs should move the tree";
  std::printf(
      "[ joint_tree.xml ] 500 ms %s: max |x_steer − x_mujoco| = %.3g (largest excursion %.3g)\n",
      integrator.c_str(), worst, moved);
}

TEST(JointTreeMujoco, EulerMatchesMujocoOver500ms) { compare_with_mujoco("euler", mjINT_EULER); }

TEST(JointTreeMujoco, Rk4MatchesMujocoOver500ms) { compare_with_mujoco("rk4", mjINT_RK4); }

TEST(JointTreeMujoco, ImportKeepsTheFilesJoints) {
  const ExperimentConfig c = imported("euler");
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const Articulated& m = s.model;
  EXPECT_EQ(s.names.bodies[0], "torso.joint_frame.rootx");
  EXPECT_EQ(m.joint_ref[1], 0.1);
  EXPECT_EQ(m.joint_ref[3], 0.3);
  EXPECT_EQ(c.theta[size_t(m.p_joint(3, Articulated::kStiffness))], 4.0);
  EXPECT_EQ(c.theta[size_t(m.p_joint(3, Articulated::kSpringRef))], 0.5);
  EXPECT_EQ(c.theta[size_t(m.p_joint(6, Articulated::kStiffness))], 60.0);
  EXPECT_NEAR(m.gravity_dir[0] * c.theta[size_t(m.p_global(Articulated::kGravity))], 0.8, 1e-15);
  EXPECT_NEAR(m.gravity_dir[1] * c.theta[size_t(m.p_global(Articulated::kGravity))], -0.3, 1e-15);
}

// initial_state.keyframe takes a <keyframe>'s qpos and qvel; an unknown name is refused naming
// the key and the file's keyframes
TEST(JointTreeMujoco, KeyframeIsAnInitialState) {
  nlohmann::json j = {{"name", "joint_tree_keyframe"},
                      {"model", {{"type", "articulated"}, {"mjcf", "mjcf/joint_tree.xml"}}},
                      {"simulation", {{"steps", 5}}},
                      {"initial_state", {{"keyframe", "crouch"}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  const ExperimentConfig c = parse_config(j, kConfigs.string());
  const std::vector<double> q = {0.05, 0.02, -0.1, 0.6, -0.4, 0.1, 0.02};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(c.x0[size_t(i)], q[size_t(i)]) << i;
  EXPECT_EQ(c.x0[7 + 3], 0.5);
  j["initial_state"]["keyframe"] = "stand";
  try {
    parse_config(j, kConfigs.string());
    ADD_FAILURE() << "an unknown keyframe was accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("initial_state.keyframe"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'crouch'"), std::string::npos) << msg;
  }
}

}  // namespace
