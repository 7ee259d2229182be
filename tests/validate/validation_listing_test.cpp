// Which checked rollouts the artifact lists in validation[].rollouts: validation.listed_rollouts
// (default 8), apart from output.trajectory_rollouts. Recording no trajectory
// (trajectory_rollouts 0) leaves the check and its per-rollout list as they are; the counts and
// the timestep check's per-rollout arrays cover every checked rollout (validation.max_rollouts)
// whatever the listing. Bad values exit 2 naming the key and its range (docs/config.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "config_errors.h"
#include "experiment/experiment.h"
#include "recorded_fit.h"
#include "temp_dir.h"

namespace steer {
namespace {

using nlohmann::json;

constexpr int kBatch = 12;  // more than the default listing of 8

// a projectile batch of 12 launch speeds, 200 steps, two variables; a check is cheap
json projectile_config() {
  json j = json::parse(R"({
    "name": "listing",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.1},
    "simulation": {"dt": 0.002, "steps": 200, "backend": "cpu"},
    "initial_state": {"position": [0, 1.0], "velocity": [1.5, 0.5]},
    "loss": {"terminal": [{"state": "position.x", "target": 3.0}, {"state": "position.y", "target": 0.5}]},
    "variables": {"x0.velocity.x": {}, "x0.velocity.y": {}},
    "validation": {"at": ["initial"], "epsilon_sweep": [1e-3, 1e-5]}
  })");
  json speeds = json::array();
  for (int b = 0; b < kBatch; ++b) speeds.push_back(1.0 + 0.1 * b);
  j["batch"] = {{"size", kBatch}, {"sweep", {{"x0.velocity.x", speeds}}}};
  return j;
}

// the artifact's first validation entry of `steer check` on j (nothing written)
json checked(const json& j) {
  const json artifact = testing::run_in_process(j, "check");
  EXPECT_EQ(artifact["validation"].size(), 1u);
  return artifact["validation"][0];
}

// the listed entries are the first n checked rollouts, in order
void expect_listed(const json& v, int n, int checked_rollouts) {
  EXPECT_EQ(v["rollouts_checked"].get<int>(), checked_rollouts);
  ASSERT_EQ(v["rollouts"].size(), size_t(n)) << "listed entries";
  for (int b = 0; b < n; ++b) EXPECT_EQ(v["rollouts"][size_t(b)]["rollout"].get<int>(), b);
  // the timestep check's arrays are per checked rollout, not per listed one
  ASSERT_TRUE(v.contains("timestep_check"));
  EXPECT_EQ(v["timestep_check"]["gradient_change"].size(), size_t(checked_rollouts));
}

// the symptom: trajectory_rollouts 0 listed one rollout of the twelve checked
TEST(ValidationListing, NoTrajectoriesKeepTheChecksList) {
  json j = projectile_config();
  j["output"] = {{"trajectory_rollouts", 0}};
  const json v = checked(j);
  expect_listed(v, 8, kBatch);
  EXPECT_TRUE(v["all_passed"].get<bool>());
}

// the listing follows validation.listed_rollouts, up to the rollouts checked, whatever
// trajectory_rollouts is
TEST(ValidationListing, ListedRolloutsIsItsOwnKey) {
  struct Case {
    int trajectory, listed, max_rollouts, expect_listed, expect_checked;
  };
  const Case cases[] = {{0, 12, 4096, 12, kBatch}, {0, 3, 4096, 3, kBatch},
                        {3, 8, 4096, 8, kBatch},   {12, 2, 4096, 2, kBatch},
                        {0, 100, 5, 5, 5},         {1, 0, 4096, 0, kBatch}};
  for (const Case& k : cases) {
    SCOPED_TRACE("trajectory_rollouts " + std::to_string(k.trajectory) + ", listed_rollouts " +
                 std::to_string(k.listed) + ", max_rollouts " + std::to_string(k.max_rollouts));
    json j = projectile_config();
    j["output"] = {{"trajectory_rollouts", k.trajectory}};
    j["validation"]["listed_rollouts"] = k.listed;
    j["validation"]["max_rollouts"] = k.max_rollouts;
    expect_listed(checked(j), k.expect_listed, k.expect_checked);
  }
}

TEST(ValidationListing, EffectiveConfigRecordsIt) {
  json j = projectile_config();
  EXPECT_EQ(parse_config(j).to_json()["validation"]["listed_rollouts"].get<int>(), 8);
  j["validation"]["listed_rollouts"] = 5;
  EXPECT_EQ(parse_config(j).to_json()["validation"]["listed_rollouts"].get<int>(), 5);
}

TEST(ValidationListing, OutOfRangeIsAConfigError) {
  for (long bad : {-1L, (1L << 24) + 1}) {
    json j = projectile_config();
    j["validation"]["listed_rollouts"] = bad;
    testing::expect_config_error(
        j, {"validation.listed_rollouts", "[0, 16777216]", std::to_string(bad)});
  }
  json j = projectile_config();
  j["validation"]["listed_rollouts"] = 2.5;
  testing::expect_config_error(
      j, {"validation.listed_rollouts", "expected an integer in [0, 16777216]"});
}

// through the CLI: exit code 2, the key on stderr, nothing written
TEST(ValidationListing, CliExitsTwoNamingTheKey) {
  testing::TempDir d("steer_listing_test");
  json j = projectile_config();
  j["validation"]["listed_rollouts"] = -3;
  j["output"] = {{"dir", (d.path / "runs").string()}};
  const std::string cfg = (d.path / "c.json").string(), err = (d.path / "err.txt").string();
  std::ofstream(cfg) << j.dump();
  const std::string cmd =
      std::string(STEER_BINARY) + " check " + cfg + " 2> " + err + " > /dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("validation.listed_rollouts"), std::string::npos) << text;
  EXPECT_NE(text.find("[0, 16777216]"), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(d.path / "runs")) << "a refused config writes nothing";
}

}  // namespace
}  // namespace steer
