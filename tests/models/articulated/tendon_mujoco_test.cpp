// configs/mjcf/tendon_chain.xml imported (model.mjcf) moves as MuJoCo moves it: a three-hinge
// chain with two fixed tendons ("flex" = shoulder − elbow with a spring, a given rest length
// and a damper; "coupler" = 0.5 elbow + wrist with a spring whose rest length MuJoCo computes,
// a damper and a range that never acts), driven by joint motors from smooth sinusoids and
// kicked initial velocities. Built where MuJoCo is found (label crosscheck). Checked, float64:
//   - 500 ms at the file's 2 ms under Euler (MuJoCo's: dof damping implicit, tendon damping
//     explicit) and RK4: every q and q̇ after every step within 1e-10 of MuJoCo's, and MuJoCo
//     never creates a constraint row (the coupler's limit does not act);
//   - the import: model.tendons as the file gives them (coefficients, stiffness, the compiled
//     springlength, damping, range), the limit note, and the effective model's tendons.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "steer/models/articulated.h"
#include "mujoco_handles.h"

using namespace steer;
using steer::testing::DataFree;
using steer::testing::ModelFree;

namespace {

namespace fs = std::filesystem;
const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";
const char* kFile = "mjcf/tendon_chain.xml";
constexpr int kSteps = 250;  // 500 ms at the file's 2 ms
constexpr int kDof = 3;

ExperimentConfig imported(const std::string& integrator) {
  nlohmann::json j = {
      {"name", "tendon_chain_import"},
      {"model", {{"type", "articulated"}, {"mjcf", kFile}, {"integrator", integrator}}},
      {"simulation", {{"steps", kSteps}, {"precision", "float64"}}},
      {"loss", {{"control_effort", 1.0}}},
      {"validation", {{"enabled", false}}}};
  return parse_config(j, kConfigs.string());
}

// the joint torques [N·m] steer's u_ff applies; MuJoCo's ctrl is u / torque_per_ctrl
double control(int k, int j) {
  return (j == 0 ? 2.0 : 0.8) * std::sin(2 * M_PI * (1.0 + 0.6 * j) * k * 0.002 + 0.9 * j);
}

void compare_with_mujoco(const std::string& integrator, int mj_integrator) {
  const ExperimentConfig c = imported(integrator);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  ASSERT_EQ(m.n_dof, kDof);
  ASSERT_EQ(m.n_tendons, 2);
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> mm(
      mj_loadXML((kConfigs / kFile).string().c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(mm) << err;
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  ASSERT_EQ(mm->nq, kDof);
  for (int i = 0; i < kDof; ++i) ASSERT_EQ(c.x0[size_t(i)], mm->qpos0[i]) << i;
  std::vector<double> x = c.x0, p = c.theta;
  for (int i = 0; i < kDof; ++i) {
    x[size_t(kDof + i)] = 1.5 * std::cos(1.1 * i + 0.3);
    d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(kDof + i)];
  }
  const nlohmann::json& acts =
      c.model_state<ArticulatedSetup>().names.import_record.at("actuators");
  double worst = 0, moved = 0, stretch = 0;
  int nefc = 0;
  for (int k = 0; k < kSteps; ++k) {
    // (buffers of the capacity's size: the compiler cannot see that a free root's branch is dead)
    std::vector<double> u(Articulated::kMaxControl, 0.0), xn(Articulated::kMaxState, 0.0);
    for (int j = 0; j < kDof; ++j) {
      u[size_t(j)] = control(k, j);
      const nlohmann::json& a = acts.at(size_t(j)).at("control");
      const int id = mj_name2id(mm.get(), mjOBJ_ACTUATOR, a["actuator"].get<std::string>().c_str());
      d->ctrl[id] = u[size_t(j)] / a["torque_per_ctrl"].get<double>();
    }
    // MuJoCo's ten_length after an Euler mj_step is the step's start's (its position stage)
    const double L_start[2] = {m.tendon_length<double>(0, x.data()),
                               m.tendon_length<double>(1, x.data())};
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    nefc = std::max(nefc, d->nefc);
    std::copy(xn.begin(), xn.begin() + 2 * kDof, x.begin());
    for (int i = 0; i < kDof; ++i) {
      worst = std::max(worst, std::fabs(x[size_t(i)] - d->qpos[i]));
      worst = std::max(worst, std::fabs(x[size_t(kDof + i)] - d->qvel[i]));
      moved = std::max(moved, std::fabs(d->qpos[i] - mm->qpos0[i]));
    }
    if (mj_integrator == mjINT_EULER) {  // (RK4 leaves its last stage's lengths there)
      for (int t = 0; t < 2; ++t) EXPECT_NEAR(L_start[t], d->ten_length[t], 1e-10) << t;
    }
    stretch = std::max(stretch, std::fabs(d->ten_length[0] - 0.1));
  }
  EXPECT_EQ(nefc, 0) << "a constraint acted in MuJoCo";
  EXPECT_LE(worst, 1e-10) << integrator;
  EXPECT_GT(moved, 0.1) << "the inputs should move the chain";
  EXPECT_GT(stretch, 0.05) << "the tendon spring should be stretched";
  std::printf(
      "[ tendon_chain.xml ] 500 ms %s: max |x_steer − x_mujoco| = %.3g (largest excursion "
      "%.3g rad, flex stretched by up to %.3g)\n",
      integrator.c_str(), worst, moved, stretch);
}

TEST(TendonMujoco, EulerMatchesMujocoOver500ms) { compare_with_mujoco("euler", mjINT_EULER); }

TEST(TendonMujoco, Rk4MatchesMujocoOver500ms) { compare_with_mujoco("rk4", mjINT_RK4); }

TEST(TendonMujoco, ImportKeepsTheFilesTendons) {
  const ExperimentConfig c = imported("euler");
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const Articulated& m = s.model;
  ASSERT_EQ(s.names.tendons, (std::vector<std::string>{"flex", "coupler"}));
  EXPECT_EQ(m.tendon_c(0, 0), 1.0);
  EXPECT_EQ(m.tendon_c(0, 1), -1.0);
  EXPECT_EQ(m.tendon_c(1, 1), 0.5);
  EXPECT_EQ(m.tendon_c(1, 2), 1.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], 3.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonSpringLength))], 0.1);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonDamping))], 0.4);
  // no springlength in the file: MuJoCo's length at the joints' springref (0)
  EXPECT_EQ(c.theta[size_t(m.p_tendon(1, Articulated::kTendonSpringLength))], 0.0);
  EXPECT_EQ(m.tendon_limited[0], 0);
  EXPECT_EQ(m.tendon_limited[1], 1);
  EXPECT_EQ(m.tendon_lower[1], -3.0);
  EXPECT_EQ(m.tendon_upper[1], 3.0);
  EXPECT_TRUE(m.joint_limits);  // the tendon's range enables the limit law
  const std::string notes = s.names.import_record.at("notes").dump();
  EXPECT_NE(notes.find("limited tendons"), std::string::npos) << notes;
  const nlohmann::json eff = articulated_model_json(c);
  EXPECT_EQ(eff["tendons"][0]["name"], "flex");
  EXPECT_EQ(eff["tendons"][1]["joints"][1]["joint"], "wrist");
}

}  // namespace
