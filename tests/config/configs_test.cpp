// configs/*.json: every shipped experiment parses and runs end to end on the CPU with
// finite losses (new configs are picked up by iterating the folder), and the worked
// example reproduces its documented numbers exactly.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "temp_dir.h"
#include "experiment/experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// a temporary folder named after this test file
struct TempDir : steer::testing::TempDir {
  TempDir() : steer::testing::TempDir("steer_configs_test") {}
};

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

std::vector<fs::path> config_files() {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(fs::path(STEER_SOURCE_DIR) / "configs"))
    if (e.is_regular_file() && e.path().extension() == ".json") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// cap on optimizer iterations × batch × steps per config, so that a long config keeps this
// test to a few seconds; configs under the cap run exactly as shipped
constexpr long long kMaxRolloutStepIterations = 200LL * 1000 * 8;

}  // namespace

TEST(ConfigsTest, FolderHoldsConfigs) {
  // the three shipped with the first host commit; more may be added
  EXPECT_GE(config_files().size(), 3u);
}

// runs one config file end to end and checks its result
void run_config(const fs::path& p) {
  const std::string base_dir =
      p.parent_path().string();  // data and model files are relative to the config
  json j = steer::expand_includes(read_json(p), base_dir);
#ifndef STEER_TEST_MUJOCO_IMPORT
  // a build without MuJoCo refuses model.mjcf / model.urdf by design (docs/import.md)
  if (j.contains("model") && (j["model"].contains("mjcf") || j["model"].contains("urdf"))) {
    std::cout << "[ configs ] " << p.filename().string()
              << ": skipped, this build has no MJCF/URDF import\n";
    return;
  }
#endif
  steer::ExperimentConfig c0;
  ASSERT_NO_THROW(c0 = steer::parse_config(j, base_dir));
  // lowering the iteration count of a long config (see kMaxRolloutStepIterations) is the
  // only change made, and it is printed on stdout
  const long long work = (long long)c0.optimizer.iterations * c0.batch_size * c0.steps;
  if (work > kMaxRolloutStepIterations) {
    const long long it =
        std::max(1LL, kMaxRolloutStepIterations / ((long long)c0.batch_size * c0.steps));
    std::cout << "[ configs ] " << p.filename().string() << ": optimizer.iterations lowered from "
              << c0.optimizer.iterations << " to " << it << " for test time\n";
    j["optimizer"]["iterations"] = it;
  }
  // a batch too large for even one iteration (the 4096-variant morphology sweep) runs with
  // fewer variants; only batches without per-rollout sweep lists can shrink
  const long long per_iteration = (long long)c0.batch_size * c0.steps;
  if (per_iteration > kMaxRolloutStepIterations / 8 &&
      !(j.contains("batch") && j["batch"].contains("sweep"))) {
    const long long b = std::max(1LL, kMaxRolloutStepIterations / 32 / c0.steps);
    std::cout << "[ configs ] " << p.filename().string() << ": batch.size lowered from "
              << c0.batch_size << " to " << b << " for test time\n";
    j["batch"]["size"] = b;
    const long long it_now = j["optimizer"].value("iterations", 0LL);
    j["optimizer"]["iterations"] =
        std::min<long long>(it_now, kMaxRolloutStepIterations / (b * c0.steps));
  }
  steer::ExperimentConfig c = steer::parse_config(j, base_dir);
  TempDir d;
  steer::RunOptions o;
  o.backend = "cpu";
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const auto t0 = std::chrono::steady_clock::now();
  steer::RunOutcome r;
  ASSERT_NO_THROW(r = steer::run_experiment(c, o));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // reported, not asserted: speed belongs in bench/, and CI machines differ
  std::cout << "[ configs ] " << p.filename().string() << ": " << secs << " s\n";
  ASSERT_FALSE(r.artifact_dir.empty());
  EXPECT_TRUE(fs::is_regular_file(fs::path(r.artifact_dir) / "artifact.json"));
  const json& res = r.artifact["result"];
  EXPECT_TRUE(std::isfinite(res["loss_initial_mean"].get<double>()));
  EXPECT_TRUE(std::isfinite(res["loss_final_mean"].get<double>()));
  ASSERT_FALSE(res["rollouts"].empty());
  for (const auto& rb : res["rollouts"]) {
    EXPECT_TRUE(std::isfinite(rb["loss_final"].get<double>())) << "rollout " << rb["rollout"];
    for (const auto& [name, v] : rb["variables"].items()) {
      EXPECT_TRUE(std::isfinite(v["final"].get<double>())) << name;
      EXPECT_TRUE(std::isfinite(v["gradient_final"].get<double>())) << name;
    }
  }
  // an optimizer that ran did not make the mean loss worse
  if (c.optimizer.method != "none" && c.optimizer.iterations > 0) {
    EXPECT_LE(res["loss_final_mean"].get<double>(), res["loss_initial_mean"].get<double>());
  }
  EXPECT_EQ(r.artifact["device"]["backend"], "cpu");
}

// The folder is listed when the test runs, not when it is built, so a config added to
// configs/ is exercised without rebuilding (a value-parameterized test would be listed by
// gtest_discover_tests at build time and miss it).
TEST(ConfigsTest, EveryConfigRuns) {
  for (const fs::path& p : config_files()) {
    SCOPED_TRACE(p.filename().string());
    run_config(p);
  }
}

// The worked example, as shipped: x_T = T·dt·vx = 3 s · vx (no drag, vx constant), so
// L = ½(3 vx − 6)², dL/dvx = 3(3 vx − 6) = 4.5 at vx = 2.5 and dL/dvy = 0 (x_T does not
// depend on vy). Gradient descent with η = 0.05 contracts vx − 2 by 1 − 9η = 0.55 per
// step, so after 200 iterations vx = 2 to rounding.
TEST(ConfigsTest, WorkedExample) {
  const fs::path p = fs::path(STEER_SOURCE_DIR) / "configs" / "projectile.json";
  steer::ExperimentConfig c = steer::load_config(p.string());
  TempDir d;
  steer::RunOptions o;
  o.backend = "cpu";
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  const json& res = r.artifact["result"];
  const json& vars = res["rollouts"][0]["variables"];

  const double gx = vars["x0.velocity.x"]["gradient_initial"].get<double>();
  const double gy = vars["x0.velocity.y"]["gradient_initial"].get<double>();
  EXPECT_NEAR(gx, 4.5, 4.5 * 1e-9);
  EXPECT_NEAR(gy, 0.0, 1e-12);
  EXPECT_NEAR(res["rollouts"][0]["loss_initial"].get<double>(), 1.125, 1e-9);  // ½ (7.5 − 6)²

  EXPECT_EQ(r.artifact["optimization"]["iterations"], 200);
  const double vx = vars["x0.velocity.x"]["final"].get<double>();
  const double vy = vars["x0.velocity.y"]["final"].get<double>();
  EXPECT_LT(std::fabs(vx - 2.0), 5e-5) << "vx = " << vx;
  EXPECT_DOUBLE_EQ(vy, 1.0);  // zero gradient: vy never moves
  const double xT = res["final_state"][0]["state"]["position.x"]["value"].get<double>();
  EXPECT_LT(std::fabs(xT - 6.0), 5e-5) << "x_T = " << xT;
  EXPECT_LT(res["loss_final_mean"].get<double>(), 1e-9);

  const json& v0 = r.artifact["validation"][0];
  EXPECT_EQ(v0["stage"], "initial");
  EXPECT_LE(v0["max_relative_error"].get<double>(), 1e-6);
  EXPECT_TRUE(v0["all_passed"].get<bool>());
  EXPECT_EQ(v0["rollouts_passed"], 1);
  EXPECT_TRUE(r.check_passed);
}
