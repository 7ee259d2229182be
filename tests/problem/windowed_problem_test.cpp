// Training over windows of W steps (optimizer.window, src/problem/windowed_problem.cpp), on
// DiffTaichi's robot A with a state-feedback controller shared by its worlds:
//  - W = T: each evaluation is the whole horizon from the drawn starts, the run's own problem's
//    loss and gradient bit for bit, and every world resets at the horizon's end;
//  - W = T/3: three windows' losses (each c(x_e) − c(x_s) with the state carried in) add up to
//    the horizon's c(x_T) − c(x_0) (to 1e-12 of the travel: the same steps in the same order,
//    the windows' starts are the previous ends bit for bit), and the fourth window starts over;
//  - window.terminal's window-end terms add Σ ½ w (x_e − target)² to each window's loss (the ends
//    read from the whole horizon's trajectory) and nothing to the horizon's loss;
//  - a reset condition that always holds sends every world back after each window;
//  - a run writes optimization.window (windows run, resets, the per-window horizon analysis);
//  - the config refuses what a window cannot take, naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "experiment/experiment.h"
#include "problem/problem.h"
#include "problem/windowed_problem.h"
#include "config_errors.h"
#include "temp_dir.h"

namespace {

using nlohmann::json;

json robot_a_policy(int steps, int window) {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/difftaichi_robot_a_controller.json");
  json c = json::parse(f);
  c["simulation"]["steps"] = steps;
  c["batch"]["size"] = 3;
  c["controller"]["observations"].erase(0);  // the phases: a window restarts the time
  c["optimizer"]["iterations"] = 3;
  c["optimizer"]["window"] = {{"steps", window}};
  c["validation"] = {{"enabled", false}};
  return c;
}

steer::ExperimentConfig parse(const json& j) {
  return steer::parse_config(j, std::string(STEER_SOURCE_DIR) + "/configs");
}

TEST(WindowedProblem, OneWindowOfTheWholeHorizonIsTheRunsProblem) {
  const steer::ExperimentConfig c = parse(robot_a_policy(60, 60));
  auto full = steer::make_problem(c, steer::BackendKind::kCpu, 1);
  steer::WindowedProblem w(c, steer::BackendKind::kCpu, 1);
  const std::vector<double> v = full->initial();
  ASSERT_EQ(w.initial(), v);
  steer::Evaluation ef, ew;
  full->evaluate(v, true, ef);
  for (int pass = 0; pass < 2; ++pass) {
    w.evaluate(v, true, ew);
    EXPECT_EQ(ew.loss, ef.loss) << pass;
    EXPECT_EQ(ew.grad, ef.grad) << pass;
  }
  const json s = w.summary();
  EXPECT_EQ(s["windows_run"], 2);
  EXPECT_EQ(s["resets"]["horizon_end"], 2 * 3);
}

TEST(WindowedProblem, WindowsLossesAddUpToTheHorizonsAndStartOver) {
  const steer::ExperimentConfig c = parse(robot_a_policy(60, 20));
  json jf = robot_a_policy(60, 60);
  jf["optimizer"].erase("window");
  auto full = steer::make_problem(parse(jf), steer::BackendKind::kCpu, 1);
  steer::WindowedProblem w(c, steer::BackendKind::kCpu, 1);
  const std::vector<double> v = full->initial();
  steer::Evaluation ef, ew;
  full->evaluate(v, false, ef);
  std::vector<double> sum(3, 0.0), first;
  for (int k = 0; k < 3; ++k) {
    w.evaluate(v, true, ew);
    if (k == 0) first = ew.loss;
    for (int b = 0; b < 3; ++b) sum[size_t(b)] += ew.loss[size_t(b)];
  }
  for (int b = 0; b < 3; ++b) {
    EXPECT_NEAR(sum[size_t(b)], ef.loss[size_t(b)], 1e-12 * (1 + std::fabs(ef.loss[size_t(b)])))
        << b;
    EXPECT_NE(first[size_t(b)], 0.0);
  }
  w.evaluate(v, false, ew);  // the horizon is over: every world starts again
  EXPECT_EQ(ew.loss, first);
  EXPECT_EQ(w.summary()["resets"]["horizon_end"], 3);
}

// optimizer.window.terminal adds Σ ½ w (x_e − target)² at each window's end to the window's
// loss and nothing to the horizon's: the same worlds with and without it differ by exactly that
TEST(WindowedProblem, WindowEndTermsJoinTheWindowsLossOnly) {
  const json plain = robot_a_policy(60, 20);
  json j = plain;
  j["optimizer"]["window"]["terminal"] = {
      {{"state", "particle[0].position.y"}, {"target", 0.3}, {"weight", 7.0}},
      {{"state", "particle[1].position.x"}, {"target", -0.2}}};
  const steer::ExperimentConfig cp = parse(plain), ct = parse(j);
  ASSERT_EQ(ct.loss.n_terminal, cp.loss.n_terminal);  // the horizon's loss is unchanged
  steer::WindowedProblem wp(cp, steer::BackendKind::kCpu, 1), wt(ct, steer::BackendKind::kCpu, 1);
  auto full = steer::make_problem(ct, steer::BackendKind::kCpu, 1);
  const std::vector<double> v = wp.initial();
  const int y0 = ct.info.state_index("particle[0].position.y");
  const int x1 = ct.info.state_index("particle[1].position.x");
  for (int k = 0; k < 2; ++k) {
    steer::Evaluation ep, et;
    wp.evaluate(v, true, ep);
    wt.evaluate(v, true, et);
    // the window's ends: the whole horizon's trajectory at step 20 (k + 1)
    const std::vector<double> tr = full->trajectories(v, 3, 20);
    const int nx = ct.info.nx();
    bool grads_differ = false;
    for (int b = 0; b < 3; ++b) {
      const double* xe = tr.data() + (size_t(b) * 4 + size_t(k) + 1) * nx;
      const double extra =
          0.5 * 7.0 * (xe[y0] - 0.3) * (xe[y0] - 0.3) + 0.5 * (xe[x1] + 0.2) * (xe[x1] + 0.2);
      EXPECT_NEAR(et.loss[size_t(b)] - ep.loss[size_t(b)], extra, 1e-12 * (1 + extra)) << k << b;
      EXPECT_GT(extra, 1e-6);
    }
    for (size_t i = 0; i < et.grad.size(); ++i) grads_differ |= et.grad[i] != ep.grad[i];
    EXPECT_TRUE(grads_differ) << k;
  }
  EXPECT_EQ(ct.to_json()["optimizer"]["window"]["terminal"].size(), 2u);
}

TEST(WindowedProblem, AResetConditionSendsWorldsBack) {
  json j = robot_a_policy(60, 20);
  j["optimizer"]["window"]["reset"] = {{{"state", "particle[0].position.y"}, {"below", 1e6}}};
  steer::WindowedProblem w(parse(j), steer::BackendKind::kCpu, 1);
  const std::vector<double> v = w.initial();
  steer::Evaluation e0, e;
  w.evaluate(v, false, e0);
  for (int k = 0; k < 4; ++k) {
    w.evaluate(v, false, e);
    EXPECT_EQ(e.loss, e0.loss) << k;
  }
  const json s = w.summary();
  EXPECT_EQ(s["resets"]["conditions"][0]["resets"], 5 * 3);
  EXPECT_EQ(s["resets"]["horizon_end"], 0);
}

TEST(WindowedProblem, ARunReportsItsWindows) {
  steer::testing::TempDir d("steer_windowed_problem_test");
  json j = robot_a_policy(60, 20);
  j["optimizer"]["iterations"] = 6;
  steer::ExperimentConfig c = parse(j);
  steer::RunOptions o;
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  const json& win = r.artifact["optimization"]["window"];
  EXPECT_EQ(win["steps"], 20);
  EXPECT_EQ(win["windows_per_horizon"], 3);
  EXPECT_GE(win["windows_run"].get<int>(), 7);  // 6 steps and the final evaluation
  EXPECT_EQ(win["per_window"][0]["start_step_rollout0"], 0);
  EXPECT_EQ(win["per_window"][1]["start_step_rollout0"], 20);
  EXPECT_EQ(win["per_window"][3]["start_step_rollout0"], 0);
  EXPECT_TRUE(std::isfinite(win["per_window"][1]["adjoint_growth_median"].get<double>()));
  EXPECT_GT(win["per_window"][1]["gradient_norm_median"].get<double>(), 0.0);
  EXPECT_EQ(r.artifact["effective_config"]["optimizer"]["window"]["steps"], 20);
  // the result is the trained policy over the whole horizon
  EXPECT_TRUE(std::isfinite(r.artifact["result"]["loss_final_mean"].get<double>()));
}

TEST(WindowedProblem, RefusalsNameTheKey) {
  using steer::testing::expect_config_error;
  json j = robot_a_policy(60, 25);
  expect_config_error(j, {"optimizer.window.steps", "does not divide", "60"});
  j = robot_a_policy(60, 20);
  j["optimizer"]["method"] = "lbfgsb";
  expect_config_error(j, {"optimizer.window", "gd and adam"});
  j = robot_a_policy(60, 20);
  j["variables"]["x0.particle.velocity"] = {{"lower", -1}, {"upper", 1}};
  expect_config_error(j, {"optimizer.window", "x0.particle[0].velocity.x"});
  j = robot_a_policy(60, 20);
  j["loss"]["terminal"] = {{{"state", "particle[0].position.x"}, {"target", 1.0}}};
  expect_config_error(j, {"optimizer.window", "loss.terminal"});
  j = robot_a_policy(60, 20);
  j["controller"]["observations"].push_back({{"phase", {{"count", 2}, {"frequency", 10.0}}}});
  expect_config_error(j, {"optimizer.window", "phase"});
  j = robot_a_policy(60, 20);
  j["model"]["actuation"] = {{"type", "sinusoid"}, {"phases", 4}, {"frequency", 10.0}};
  j.erase("controller");
  j["variables"] = {{"theta.actuator.weight", {{"lower", -5}, {"upper", 5}}}};
  expect_config_error(j, {"optimizer.window", "sinusoid"});
  j = robot_a_policy(60, 20);
  j["optimizer"]["window"]["reset"] = {{{"state", "particle[0].position.q"}, {"below", 0}}};
  expect_config_error(j, {"optimizer.window.reset[0].state", "particle[0].position.q"});
  j["optimizer"]["window"]["reset"] = {{{"state", "particle[0].position.y"}}};
  expect_config_error(j, {"optimizer.window.reset[0]", "below or above"});
  j = robot_a_policy(60, 20);
  j["optimizer"]["window"]["terminal"] = {{{"state", "particle[0].position.q"}, {"target", 0}}};
  expect_config_error(j, {"optimizer.window.terminal[0].state", "particle[0].position.q"});
  j["optimizer"]["window"]["terminal"] = {{{"state", "particle[0].position.y"}}};
  expect_config_error(j, {"optimizer.window.terminal[0].target"});
  j["optimizer"]["window"]["terminal"] = json::array();
  expect_config_error(j, {"optimizer.window.terminal", "{state, target, weight}"});
}

}  // namespace
