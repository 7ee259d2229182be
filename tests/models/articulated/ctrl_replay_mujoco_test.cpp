// A MuJoCo ctrl sequence drives steer unchanged (controls.initial_file with one column
// ctrl.<actuator> per actuator; ModelInfo::ForeignControls): configs/mjcf/tendon_servo.xml, with
// a motor on a tendon over one joint, a position servo with kv on a tendon over two joints and a
// position servo with a ctrlrange on a joint, and configs/mjcf/tendon_motor.xml, with a motor and
// a velocity servo on tendons over two joints each, are driven by recorded sequences of
// sinusoids whose controls leave their ctrlranges (MuJoCo clamps them; so does the mapping).
// Built where MuJoCo is found (label crosscheck). Checked, float64:
//   - 500 ms at the files' 2 ms under Euler and RK4: every q and q̇ after every step within 1e-10
//     of MuJoCo's driven by the same ctrl, the servos' targets moving every step;
//   - the same at a servo target θ set away from 0 in the config (the mapping subtracts it);
//   - the effective config names the file's columns and what they map to; refusals: a missing
//     or unknown column, ctrl.<actuator> columns on a model without an import.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config_errors.h"
#include "models/articulated/articulated_setup.h"
#include "problem/problem.h"
#include "steer/models/articulated.h"
#include "mujoco_files.h"
#include "temp_dir.h"

using namespace steer;
using steer::testing::configs_dir;
using steer::testing::DataFree;
using steer::testing::expect_config_error;
using steer::testing::ModelFree;
using steer::testing::mujoco_model;

namespace {

constexpr int kSteps = 250;  // 500 ms at the files' 2 ms
constexpr double kH = 0.002;

// a file and the ctrl sequence recorded for it: actuator a's ctrl at step k is
// amp[a] sin(2π freq[a] t + 0.4 a), its column ctrl.<names[a]>
struct Recording {
  const char* file;
  std::vector<std::string> names;  // MuJoCo's actuator order
  std::vector<double> amp, freq;
  const char* keyframe = nullptr;  // initial_state.keyframe (MuJoCo starts from the same qpos)
  double ctrl(int k, int a) const {
    return amp[size_t(a)] * std::sin(2 * M_PI * freq[size_t(a)] * k * kH + 0.4 * a);
  }
};
// tendon_servo.xml: actuators push, couple, twist; couple's ctrlrange is [−0.4, 0.6] and twist's
// [−0.3, 0.3], which these leave
const Recording kServos = {
    "mjcf/tendon_servo.xml", {"push", "couple", "twist"}, {2.0, 0.9, 0.5}, {1.3, 0.7, 2.1}};
// tendon_motor.xml: a motor on a two-joint tendon (ctrlrange ±1, which 1.4 leaves) and a velocity
// servo on another
const Recording kMotors = {"mjcf/tendon_motor.xml", {"grasp", "spread"}, {1.4, 0.8}, {1.1, 0.6}};

// activation_arm.xml: a filtered motor, an early exact-filtered servo (ctrlrange [−0.5, 0.8],
// which 0.9 leaves), an integrated velocity command and a filtered servo on a two-joint tendon,
// from the keyframe "bent"
const Recording kActivations = {"mjcf/activation_arm.xml",
                                {"push", "lift", "bend", "close"},
                                {1.5, 0.9, 0.6, 0.7},
                                {1.3, 0.8, 1.7, 1.1},
                                "bent"};

// the recorded sequence, its columns in reverse order of MuJoCo's
std::string write_ctrl_csv(const std::filesystem::path& dir, const Recording& r) {
  std::ofstream f(dir / "ctrl.csv");
  const int na = int(r.names.size());
  for (int a = na - 1; a >= 0; --a) f << "ctrl." << r.names[size_t(a)] << (a > 0 ? "," : "\n");
  f.precision(17);
  for (int k = 0; k < kSteps; ++k)
    for (int a = na - 1; a >= 0; --a) f << r.ctrl(k, a) << (a > 0 ? "," : "\n");
  return (dir / "ctrl.csv").string();
}

nlohmann::json replay_config(const std::string& integrator, const std::string& file,
                             const nlohmann::json& model_extra = nlohmann::json::object(),
                             const char* model_file = kServos.file) {
  nlohmann::json model = {{"type", "articulated"},
                          {"mjcf", (configs_dir() / model_file).string()},
                          {"integrator", integrator}};
  model.update(model_extra);
  return {{"name", "ctrl_replay"},
          {"model", model},
          {"simulation", {{"steps", kSteps}, {"precision", "float64"}}},
          {"controls", {{"initial_file", file}}},
          {"loss", {{"control_effort", 1.0}}},
          {"validation", {{"enabled", false}}}};
}

double replay_against_mujoco(const std::string& integrator, int mj_integrator,
                             const nlohmann::json& model_extra = nlohmann::json::object(),
                             const Recording& r = kServos) {
  steer::testing::TempDir dir("steer_ctrl_replay");
  nlohmann::json j = replay_config(integrator, write_ctrl_csv(dir.path, r), model_extra, r.file);
  if (r.keyframe) j["initial_state"] = {{"keyframe", r.keyframe}};
  const ExperimentConfig c = parse_config(j);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  const Batch<double> b = build_batch(c);
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(r.file);
  if (!mm) return 1e300;
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  const int n = m.n_dof, nu = m.nu(), na = int(r.names.size());
  std::vector<double> x = c.x0, p = c.theta, xn(ArticulatedLarge::kMaxState, 0.0);
  for (int i = 0; i < n; ++i) d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(n + i)];
  double worst = 0, moved = 0;
  for (int k = 0; k < kSteps; ++k) {
    std::vector<double> u(b.u_of(0) + size_t(k) * nu, b.u_of(0) + size_t(k + 1) * nu);
    u.resize(ArticulatedLarge::kMaxControl, 0.0);
    for (int a = 0; a < na; ++a) d->ctrl[a] = r.ctrl(k, a);
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    std::copy(xn.begin(), xn.begin() + m.nx(), x.begin());
    for (int i = 0; i < n; ++i) {
      worst = std::max(
          {worst, std::fabs(x[size_t(i)] - d->qpos[i]), std::fabs(x[size_t(n + i)] - d->qvel[i])});
      moved = std::max(moved, std::fabs(d->qpos[i]));
    }
  }
  EXPECT_GT(moved, 0.05) << "the arm should move";
  return worst;
}

TEST(CtrlReplayMujoco, RecordedCtrlReproducesMujoco) {
  for (const auto& [name, mj] : {std::pair<const char*, int>{"euler", mjINT_EULER},
                                 std::pair<const char*, int>{"rk4", mjINT_RK4}}) {
    const double worst = replay_against_mujoco(name, mj);
    EXPECT_LE(worst, 1e-10) << name;
    std::printf(
        "[ tendon_servo.xml ] 500 ms %s driven by MuJoCo's ctrl: max |x_steer − x_mujoco| "
        "= %.3g\n",
        name, worst);
  }
}

// motors on tendons over several joints: the joints' torques from one ctrl each (the ctrl map's
// "joints"), the velocity servo's gain the tendon's damping; the motor's ctrlrange clamps ctrl
// as MuJoCo does, and the joints' smooth torque limit that it also sets is off here (MuJoCo
// has none beyond the clamp)
TEST(CtrlReplayMujoco, TendonMotorsReproduceMujoco) {
  const nlohmann::json no_limits = {{"torque_limits", {{"enabled", false}}}};
  for (const auto& [name, mj] : {std::pair<const char*, int>{"euler", mjINT_EULER},
                                 std::pair<const char*, int>{"rk4", mjINT_RK4}}) {
    const double worst = replay_against_mujoco(name, mj, no_limits, kMotors);
    EXPECT_LE(worst, 1e-10) << name;
    std::printf(
        "[ tendon_motor.xml ] 500 ms %s driven by MuJoCo's ctrl: max |x_steer − x_mujoco| "
        "= %.3g\n",
        name, worst);
  }
  const ExperimentConfig c = steer::testing::imported_config(kMotors.file, "euler", 10);
  const nlohmann::json& rec = c.model_state<ArticulatedSetup>().names.import_record;
  const nlohmann::json& grasp = rec["ctrl"][0];
  EXPECT_EQ(grasp["tendon"], "grasp");
  ASSERT_EQ(grasp["joints"].size(), 2u);
  EXPECT_EQ(grasp["joints"][0]["torque_per_ctrl"], 1.0);  // coef 0.5 × gear 2
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  EXPECT_NEAR(c.theta[size_t(m.p_tendon(1, Articulated::kTendonDamping))], 0.3, 1e-15);
}

// actuator dynamics (filter, filterexact with actearly, integrator; on joints and on a tendon
// over two joints) as the joints' activations, from a bent start: the activations start at the
// ctrl map's offset (MuJoCo's act = 0), and the integrator's offset stays out of its input
TEST(CtrlReplayMujoco, ActivationsReproduceMujoco) {
  const nlohmann::json no_limits = {{"torque_limits", {{"enabled", false}}}};
  const double worst = replay_against_mujoco("euler", mjINT_EULER, no_limits, kActivations);
  EXPECT_LE(worst, 1e-10);
  std::printf(
      "[ activation_arm.xml ] 500 ms euler driven by MuJoCo's ctrl: max |x_steer − x_mujoco| "
      "= %.3g\n",
      worst);
  const ExperimentConfig c = steer::testing::imported_config(kActivations.file, "euler", 10);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  ASSERT_EQ(m.n_act, 5);  // every joint: the tendon's servo gives wrist and thumb theirs
  EXPECT_EQ(m.act_kind[1], Articulated::kActFilterExact);
  EXPECT_EQ(m.act_early[1], 1);
  EXPECT_EQ(m.act_kind[2], Articulated::kActIntegrator);
  EXPECT_EQ(m.act_tau[4], 0.08);
  EXPECT_EQ(c.info.state_names[size_t(2 * m.n_dof + 4)], "thumb.act");
}

// a servo target θ away from 0 (the wrist's, the tendon's springlength): the mapping subtracts
// it, so the replay is MuJoCo's still
TEST(CtrlReplayMujoco, ReplayHoldsWhateverTheTargets) {
  const nlohmann::json with_target = {
      {"bodies", {{{"name", "hand"}, {"joint", {{"target", 0.2}}}}}}};
  const double worst = replay_against_mujoco("euler", mjINT_EULER, with_target);
  EXPECT_LE(worst, 1e-10);
}

TEST(CtrlReplayMujoco, EffectiveConfigAndRefusals) {
  steer::testing::TempDir dir("steer_ctrl_refusals");
  const std::string file = write_ctrl_csv(dir.path, kServos);
  const ExperimentConfig c = parse_config(replay_config("euler", file));
  const nlohmann::json eff = c.to_json();
  const nlohmann::json& f = eff["controls_initial_file"];
  EXPECT_EQ(f["rows"], kSteps);
  EXPECT_EQ(f["columns"], nlohmann::json({"ctrl.push", "ctrl.couple", "ctrl.twist"}));
  EXPECT_EQ(f["mapped_to"]["controls"], nlohmann::json(c.info.control_names));
  ASSERT_EQ(c.info.foreign_controls.names.size(), 3u);
  EXPECT_EQ(c.info.foreign_controls.lo[1], -0.4);
  EXPECT_EQ(c.info.foreign_controls.hi[2], 0.3);
  // a missing column, an unknown one
  std::ofstream(dir.path / "two.csv") << "ctrl.push,ctrl.couple\n1,0.2\n";
  expect_config_error(replay_config("euler", (dir.path / "two.csv").string()),
                      {"controls.initial_file", "no column 'ctrl.twist'"});
  std::ofstream(dir.path / "odd.csv") << "ctrl.push,ctrl.couple,ctrl.spin\n1,0.2,0\n";
  expect_config_error(replay_config("euler", (dir.path / "odd.csv").string()),
                      {"controls.initial_file", "'ctrl.spin'", "not an actuator"});
  // a JSON arm has no ctrl
  nlohmann::json arm = replay_config("euler", (dir.path / "two.csv").string());
  arm["model"] = {{"type", "articulated"},
                  {"bodies",
                   {{{"name", "b"},
                     {"mass", 1.0},
                     {"fullinertia", {0.01, 0.01, 0.01, 0, 0, 0}},
                     {"joint", {{"name", "j"}}}}}}};
  arm["simulation"]["dt"] = kH;
  expect_config_error(arm, {"controls.initial_file", "ctrl.<actuator>", "torque.j"});
}

}  // namespace
