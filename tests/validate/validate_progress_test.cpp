// The gradient check's progress callback (validate(..., progress), src/validate/validator.h):
// called after each batched pass with a count that rises by the pass's size up to the total,
// the total fixed from the first call on, and no effect on the report.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "problem/problem.h"
#include "validate/analyses.h"
#include "validate/validator.h"

namespace steer {
namespace {

// a projectile over a penalty ground (contact: the secant check's four passes run) or in free
// flight (no contact: they do not), a batch of 4 from a swept launch speed
nlohmann::json projectile_config(bool ground) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "t",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.1},
    "simulation": {"dt": 0.002, "steps": 600, "backend": "cpu"},
    "initial_state": {"position": [0, 1.0], "velocity": [1.5, 0.5]},
    "batch": {"size": 4, "sweep": {"x0.velocity.x": [1.0, 1.5, 2.0, 2.5]}},
    "loss": {"terminal": [{"state": "position.x", "target": 3.0}, {"state": "position.y", "target": 0.5}]},
    "variables": {"x0.velocity.x": {}, "x0.velocity.y": {}},
    "validation": {"epsilon_sweep": [1e-3, 1e-5, 1e-7]}
  })");
  if (ground)
    j["model"]["ground"] = {
        {"type", "penalty"}, {"stiffness", 1e4}, {"damping", 5.0}, {"smoothing", 1e-3}};
  return j;
}

struct Calls {
  std::vector<std::pair<long long, long long>> seen;
  ValidationProgress fn() {
    return [this](long long done, long long total) { seen.emplace_back(done, total); };
  }
};

// the counts rise strictly from 1 to the total, and the total never changes
void expect_rising_to_total(const Calls& c) {
  ASSERT_FALSE(c.seen.empty());
  const long long total = c.seen.front().second;
  EXPECT_EQ(c.seen.front().first, 1);
  for (size_t i = 0; i < c.seen.size(); ++i) {
    EXPECT_EQ(c.seen[i].second, total) << "call " << i;
    if (i > 0) {
      EXPECT_GT(c.seen[i].first, c.seen[i - 1].first) << "call " << i;
    }
    EXPECT_LE(c.seen[i].first, total) << "call " << i;
  }
  EXPECT_EQ(c.seen.back().first, total);
}

TEST(ValidateProgress, CountsRiseToTheTotalAndChangeNothing) {
  for (bool ground : {false, true})
    for (int max_rollouts :
         {4, 2}) {  // 2 < B: the check runs on the problem cut to its first rollouts
      SCOPED_TRACE(std::string(ground ? "ground" : "free flight") + ", max_rollouts " +
                   std::to_string(max_rollouts));
      nlohmann::json j = projectile_config(ground);
      j["validation"]["max_rollouts"] = max_rollouts;
      const ExperimentConfig c = parse_config(j);
      auto p = make_problem(c, BackendKind::kCpu, 0);
      const ValidationReport plain = validate(*p, p->initial(), c.validation, "initial");
      Calls calls;
      const ValidationReport watched =
          validate(*p, p->initial(), c.validation, "initial", nullptr, nullptr, nullptr, nullptr,
                   secant_check_of(c.validation), calls.fn());
      expect_rising_to_total(calls);
      // the total is every batched pass: the gradient, the optional ones (penetration bound,
      // chatter count), and the forward passes the report counts (±ε per ε, the secant's)
      const long long optional =
          (c.validation.penetration_bound > 0) + (c.validation.chatter_fraction > 0);
      EXPECT_EQ(calls.seen.back().second, 1 + optional + watched.forward_passes);
      EXPECT_EQ(watched.secant_checked, ground);
      // the same report, bit for bit, with and without the callback
      EXPECT_EQ(to_json(watched, 16).dump(), to_json(plain, 16).dump());
    }
}

// the horizon sweep reports one call per horizon, (k, levels) for k = 1..levels
TEST(ValidateProgress, HorizonSweepCountsHorizons) {
  nlohmann::json j = projectile_config(true);
  j["horizon_sweep"] = {{"steps", {100, 200, 300}}};
  const ExperimentConfig c = parse_config(j);
  std::ostringstream summary, summary2;
  std::map<std::string, int> labels, labels2;
  Calls calls;
  const nlohmann::json watched =
      run_horizon_sweep(c, BackendKind::kCpu, summary, labels, calls.fn());
  const nlohmann::json plain = run_horizon_sweep(c, BackendKind::kCpu, summary2, labels2);
  ASSERT_EQ(calls.seen.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(calls.seen[k], std::make_pair((long long)k + 1, 3LL));
  // the figures alike (the rows' timings differ from run to run)
  ASSERT_EQ(watched["rows"].size(), plain["rows"].size());
  for (size_t k = 0; k < plain["rows"].size(); ++k) {
    nlohmann::json a = watched["rows"][k], b = plain["rows"][k];
    a.erase("seconds");
    b.erase("seconds");
    EXPECT_EQ(a.dump(), b.dump()) << "horizon " << k;
  }
  EXPECT_EQ(labels, labels2);
}

}  // namespace
}  // namespace steer
