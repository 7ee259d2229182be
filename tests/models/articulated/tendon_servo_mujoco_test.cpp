// configs/mjcf/tendon_servo.xml imported (model.mjcf) moves as MuJoCo moves it: a motor on a
// tendon over one joint (steer's joint actuator with the gear times the coefficient), a position
// servo with kv on a tendon over two joints (steer's tendon spring, its target the
// springlength), and a position servo with a ctrlrange on an unlimited joint (its target's
// range the ctrlrange). Built where MuJoCo is found (label crosscheck). Checked, float64:
//   - the import: the joint's control scale, the tendon's stiffness, damping, springlength and
//     springlength_range, the wrist's target_range, the record of the tendon servo;
//   - 500 ms at the file's 2 ms under Euler and RK4 from kicked velocities, the motor driven by a
//     sinusoid and each servo's ctrl a constant (steer: the target θ slot = per_ctrl · ctrl):
//     every q and q̇ after every step within 1e-10 of MuJoCo's, no constraint acting in MuJoCo;
//   - a servo ctrl outside its ctrlrange: MuJoCo clamps it, and steer's θ slot refuses the
//     value with its range.
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

const char* kFile = "mjcf/tendon_servo.xml";
constexpr int kSteps = 250;                    // 500 ms at the file's 2 ms
constexpr int kDof = 4;                        // slide_x, shoulder, elbow, wrist
constexpr double kCouple = 0.5, kTwist = 0.2;  // the servos' ctrl (within their ctrlranges)

ExperimentConfig imported(const std::string& integrator) {
  return imported_config(kFile, integrator, kSteps);
}

double push(int k) { return 0.8 * std::sin(2 * M_PI * 1.5 * k * 0.002); }

TEST(TendonServoMujoco, ImportMapsTheActuators) {
  const ExperimentConfig c = imported("euler");
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const Articulated& m = s.model;
  ASSERT_EQ(m.n_dof, kDof);
  ASSERT_EQ(m.n_tendons, 2);
  const nlohmann::json& rec = s.names.import_record;
  // the motor on drive_x (coefficient 2) drives the slide with the gear 3 · 2
  EXPECT_EQ(rec["actuators"][0]["control"]["actuator"], "push");
  EXPECT_EQ(rec["actuators"][0]["control"]["torque_per_ctrl"], 6.0);
  // the servo on coupling is the tendon's spring
  EXPECT_EQ(c.theta[size_t(m.p_tendon(1, Articulated::kTendonStiffness))], 20.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(1, Articulated::kTendonDamping))], 2.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(1, Articulated::kTendonSpringLength))], 0.0);
  EXPECT_EQ(s.names.springlength_ranges[1], (std::array<double, 2>{-0.4, 0.6}));
  ASSERT_EQ(rec["tendon_servos"].size(), 1u);
  EXPECT_EQ(rec["tendon_servos"][0]["tendon"], "coupling");
  EXPECT_EQ(rec["tendon_servos"][0]["actuator"], "couple");
  EXPECT_EQ(rec["tendon_servos"][0]["springlength_per_ctrl"], 1.0);
  // the wrist's servo: its target's range is the ctrlrange (the joint has none)
  EXPECT_EQ(s.names.target_ranges[3], (std::array<double, 2>{-0.3, 0.3}));
  EXPECT_EQ(c.theta[size_t(m.p_joint(3, Articulated::kKp))], 0.5);
  const std::vector<std::string>& names = c.info.param_names;
  const int slot = m.p_joint(3, Articulated::kTarget);
  EXPECT_EQ(names[size_t(slot)], "wrist.target");
  EXPECT_EQ(c.info.param_ranges[size_t(slot)].lo, -0.3);
  EXPECT_EQ(c.info.param_ranges[size_t(slot)].hi, 0.3);
  const nlohmann::json eff = articulated_model_json(c);
  EXPECT_EQ(eff["tendons"][1]["springlength_range"][1], 0.6);
}

void compare_with_mujoco(const std::string& integrator, int mj_integrator) {
  const ExperimentConfig c = imported(integrator);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  std::vector<double> x = c.x0, p = c.theta;
  p[size_t(m.p_tendon(1, Articulated::kTendonSpringLength))] = kCouple;  // 1 · ctrl
  p[size_t(m.p_joint(3, Articulated::kTarget))] = kTwist;                // 1 · ctrl
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  ASSERT_TRUE(mm);
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  for (int i = 0; i < kDof; ++i) {
    x[size_t(kDof + i)] = 0.9 * std::cos(1.3 * i + 0.4);
    d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(kDof + i)];
  }
  const int push_id = mj_name2id(mm.get(), mjOBJ_ACTUATOR, "push");
  d->ctrl[mj_name2id(mm.get(), mjOBJ_ACTUATOR, "couple")] = kCouple;
  d->ctrl[mj_name2id(mm.get(), mjOBJ_ACTUATOR, "twist")] = kTwist;
  double worst = 0, moved = 0;
  int nefc = 0;
  for (int k = 0; k < kSteps; ++k) {
    std::vector<double> u(Articulated::kMaxControl, 0.0), xn(Articulated::kMaxState, 0.0);
    u[0] = 6.0 * push(k);  // torque_per_ctrl · ctrl
    d->ctrl[push_id] = push(k);
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    nefc = std::max(nefc, d->nefc);
    std::copy(xn.begin(), xn.begin() + 2 * kDof, x.begin());
    for (int i = 0; i < kDof; ++i) {
      worst = std::max(worst, std::fabs(x[size_t(i)] - d->qpos[i]));
      worst = std::max(worst, std::fabs(x[size_t(kDof + i)] - d->qvel[i]));
      moved = std::max(moved, std::fabs(d->qpos[i]));
    }
  }
  EXPECT_EQ(nefc, 0) << "a constraint acted in MuJoCo";
  EXPECT_LE(worst, 1e-10) << integrator;
  EXPECT_GT(moved, 0.2) << "the actuators should move the arm";
  std::printf(
      "[ tendon_servo.xml ] 500 ms %s: max |x_steer − x_mujoco| = %.3g (largest |q| %.3g)\n",
      integrator.c_str(), worst, moved);
}

TEST(TendonServoMujoco, EulerMatchesMujocoOver500ms) { compare_with_mujoco("euler", mjINT_EULER); }

TEST(TendonServoMujoco, Rk4MatchesMujocoOver500ms) { compare_with_mujoco("rk4", mjINT_RK4); }

// MuJoCo clamps a servo's ctrl to its ctrlrange; steer's target slot refuses a value beyond it
TEST(TendonServoMujoco, TargetsOutsideTheCtrlrangeAreRefused) {
  nlohmann::json j = {{"name", "tendon_servo_import"},
                      {"model",
                       {{"type", "articulated"},
                        {"mjcf", kFile},
                        {"bodies", {{{"name", "hand"}, {"joint", {{"target", 0.5}}}}}}}},
                      {"simulation", {{"steps", 5}, {"precision", "float64"}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  try {
    parse_config(j, steer::testing::configs_dir().string());
    ADD_FAILURE() << "a target beyond the ctrlrange was accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("target"), std::string::npos) << msg;
    EXPECT_NE(msg.find("0.3"), std::string::npos) << msg;
  }
}

}  // namespace
