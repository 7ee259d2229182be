// Batch-shared variables end to end (steer run, src/problem/shared_problem.h): one launch speed
// for many gravities. A projectile without drag launched at vy reaches, under symplectic Euler,
//   y_T = T h vy − g h² T (T + 1)/2,
// so the shared vy that minimizes the weighted mean of ½ (y_T,b − y*)² over worlds of gravity
// g_b is the launch for the weighted mean gravity ḡ = Σ w_b g_b / Σ w_b:
//   vy* = (y* + ḡ h² T (T + 1)/2) / (T h),
// which tends to the continuous (y* + ḡ t²/2)/t (t = T h) as h → 0, ḡ h/2 away at step h. Each
// world alone would be solved exactly instead. Checked: the optimum of L-BFGS-B and of CMA-ES
// against that closed form, one value in every rollout of a group, two groups each at its own
// mean, the group gradient check in the artifact, and the same artifact at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "experiment/experiment.h"
#include "temp_dir.h"

using nlohmann::json;

namespace {

struct TempDir : steer::testing::TempDir {
  TempDir() : steer::testing::TempDir("steer_shared_variables_test") {}
};

constexpr double kDt = 0.01, kTarget = 0.5;
constexpr int kSteps = 100;

// eight worlds of gravity g_b, weights w_b; vy shared by `groups` groups of consecutive worlds
json gravity_worlds(const std::vector<double>& g, const std::vector<double>& w, int groups,
                    const json& optimizer) {
  return {
      {"name", "shared-gravity"},
      {"model",
       {{"type", "projectile"},
        {"dim", 2},
        {"gravity", 9.81},
        {"drag", 0.0},
        {"mass", 1.0},
        {"ground", {{"type", "none"}}}}},
      {"simulation",
       {{"dt", kDt}, {"steps", kSteps}, {"precision", "float64"}, {"backend", "cpu"}}},
      {"initial_state", {{"position", {0.0, 0.0}}, {"velocity", {1.0, 3.0}}}},
      {"batch",
       {{"size", int(g.size())},
        {"groups", groups},
        {"weights", w},
        {"sweep", {{"theta.gravity", g}}}}},
      {"loss", {{"terminal", {{{"state", "position.y"}, {"target", kTarget}, {"weight", 1.0}}}}}},
      {"variables", {{"x0.velocity.y", {{"lower", 0.0}, {"upper", 20.0}, {"shared", true}}}}},
      {"optimizer", optimizer},
      {"validation", {{"enabled", true}, {"at", {"initial", "final"}}, {"tolerance", 1e-6}}},
      {"output", {{"trajectory_rollouts", int(g.size())}, {"trajectory_stride", 10}}}};
}

// vy* of the closed form for worlds [begin, end)
double closed_form(const std::vector<double>& g, const std::vector<double>& w, int begin, int end) {
  double gw = 0, ws = 0;
  for (int b = begin; b < end; ++b) gw += w[size_t(b)] * g[size_t(b)], ws += w[size_t(b)];
  const double gbar = gw / ws, T = kSteps, h = kDt;
  return (kTarget + gbar * h * h * T * (T + 1) / 2) / (T * h);
}

json run(const json& cfg, const std::string& dir, int threads = -1) {
  steer::ExperimentConfig c = steer::parse_config(cfg);
  steer::RunOptions o;
  o.out_dir = dir;
  o.progress = false;
  o.threads = threads;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  EXPECT_TRUE(r.check_passed);
  return r.artifact;
}

double final_vy(const json& a, int b) {
  return a["result"]["rollouts"][b]["variables"]["x0.velocity.y"]["final"].get<double>();
}

const std::vector<double> kGravity = {9.0, 9.5, 9.81, 10.2,
                                      3.5, 3.7, 3.9,  4.1};  // Earth-like, then Mars-like
const std::vector<double> kWeights = {1, 2, 1, 2, 1, 1, 3, 1};

TEST(SharedVariables, OneLaunchForManyGravitiesIsTheMeanGravitysLaunch) {
  TempDir d;
  const json a =
      run(gravity_worlds(kGravity, kWeights, 1, {{"method", "lbfgsb"}, {"iterations", 40}}),
          d.path.string());
  const double expect = closed_form(kGravity, kWeights, 0, 8);
  for (int b = 0; b < 8; ++b) EXPECT_EQ(final_vy(a, b), final_vy(a, 0)) << "rollout " << b;
  EXPECT_NEAR(final_vy(a, 0), expect, 1e-6 * expect);
  // the continuous-time design is ḡ h/2 away at h = 0.01 (the step's own error)
  double gw = 0, ws = 0;
  for (int b = 0; b < 8; ++b)
    gw += kWeights[size_t(b)] * kGravity[size_t(b)], ws += kWeights[size_t(b)];
  const double t = kSteps * kDt, continuous = (kTarget + gw / ws * t * t / 2) / t;
  EXPECT_NEAR(final_vy(a, 0) - continuous, gw / ws * kDt / 2, 1e-3 * gw / ws * kDt);
  // no world is solved alone: the heaviest misses low, the lightest high
  const json& rows = a["result"]["rollouts"];
  EXPECT_GT(rows[3]["loss_final"].get<double>(), 1e-3);
  EXPECT_GT(rows[4]["loss_final"].get<double>(), 1e-3);
  // the artifact describes the groups and checks the group gradient
  EXPECT_EQ(a["shared"]["groups"], 1);
  EXPECT_EQ(a["shared"]["rollouts_per_group"], 8);
  ASSERT_TRUE(a["shared"].contains("group_loss"));
  EXPECT_LT(a["shared"]["group_loss"]["final"][0].get<double>(),
            a["shared"]["group_loss"]["initial"][0].get<double>());
  int shared_checks = 0;
  for (const auto& v : a["validation"])
    if (v.contains("shared")) {
      ++shared_checks;
      EXPECT_TRUE(v["all_passed"].get<bool>()) << v.dump();
      EXPECT_GT(v["rollouts_checked"].get<int>(), 0);
    }
  EXPECT_EQ(shared_checks, 2);  // initial and final
}

TEST(SharedVariables, TwoGroupsEachServeTheirOwnWorlds) {
  TempDir d;
  const json a =
      run(gravity_worlds(kGravity, kWeights, 2,
                         {{"method", "adam"}, {"learning_rate", 0.2}, {"iterations", 400}}),
          d.path.string());
  const double earth = closed_form(kGravity, kWeights, 0, 4),
               mars = closed_form(kGravity, kWeights, 4, 8);
  for (int b = 0; b < 4; ++b) EXPECT_EQ(final_vy(a, b), final_vy(a, 0));
  for (int b = 4; b < 8; ++b) EXPECT_EQ(final_vy(a, b), final_vy(a, 4));
  EXPECT_NEAR(final_vy(a, 0), earth, 1e-4 * earth);
  EXPECT_NEAR(final_vy(a, 4), mars, 1e-4 * mars);
  EXPECT_EQ(a["optimization"]["history"]["rows"], "groups");
}

TEST(SharedVariables, CmaesEvaluatesEachCandidateOnEveryWorld) {
  TempDir d;
  json cfg = gravity_worlds(kGravity, kWeights, 1,
                            {{"method", "cmaes"},
                             {"iterations", 60},
                             {"sigma0", 0.1},
                             {"normalized", true},
                             {"seed", 2}});
  const json a = run(cfg, d.path.string());
  const double expect = closed_form(kGravity, kWeights, 0, 8);
  for (int b = 0; b < 8; ++b) EXPECT_EQ(final_vy(a, b), final_vy(a, 0));
  EXPECT_NEAR(final_vy(a, 0), expect, 1e-3 * expect);
}

TEST(SharedVariables, SameArtifactAtOneAndTwoThreads) {
  TempDir d1, d2;
  const json cfg = gravity_worlds(kGravity, kWeights, 2,
                                  {{"method", "adam"}, {"learning_rate", 0.2}, {"iterations", 30}});
  const json a1 = run(cfg, d1.path.string(), 1), a2 = run(cfg, d2.path.string(), 2);
  EXPECT_EQ(a1["result"]["rollouts"], a2["result"]["rollouts"]);
  EXPECT_EQ(a1["shared"], a2["shared"]);
  EXPECT_EQ(a1["optimization"]["history"], a2["optimization"]["history"]);
}

}  // namespace

namespace {

// A policy trained over worlds is written beside the artifact as a weight file
// (controller_weights.json, the best rollout's weights: with shared weights every world's), and
// a config that names it in controller.init.file starts from exactly those weights.
TEST(SharedVariables, TrainedControllerWeightsReloadAsAnInitFile) {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/difftaichi_robot_a_controller.json");
  json cfg = json::parse(f);
  cfg["simulation"]["steps"] = 40;
  cfg["batch"]["size"] = 3;
  cfg["optimizer"]["iterations"] = 4;
  cfg["validation"] = {{"enabled", false}};
  TempDir d;
  steer::ExperimentConfig c = steer::parse_config(cfg, std::string(STEER_SOURCE_DIR) + "/configs");
  steer::RunOptions o;
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  const std::string file = r.artifact_dir + "/controller_weights.json";
  ASSERT_TRUE(std::ifstream(file).good()) << file;
  EXPECT_EQ(r.artifact["result"]["controller_weights"]["file"], "controller_weights.json");
  cfg["controller"]["init"] = {{"file", file}};
  const steer::ExperimentConfig c2 =
      steer::parse_config(cfg, std::string(STEER_SOURCE_DIR) + "/configs");
  int compared = 0, moved = 0;
  for (const auto& roll : r.artifact["result"]["rollouts"])
    for (const auto& [name, v] : roll["variables"].items()) {
      if (name.rfind("theta.controller.layer", 0) != 0) continue;
      const int slot = c2.info.param_index(name.substr(6));
      ASSERT_GE(slot, 0) << name;
      EXPECT_EQ(c2.theta[size_t(slot)], v["final"].get<double>()) << name;
      moved += v["final"].get<double>() != v["initial"].get<double>();
      ++compared;
    }
  // the 64 listed variables of each listed world (output.trajectory_rollouts of them)
  EXPECT_EQ(compared, 64 * int(r.artifact["result"]["rollouts"].size()));
  EXPECT_GT(moved, 0);  // the run trained them: these are not the initial weights
}

}  // namespace
