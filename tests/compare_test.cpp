// host/compare.cpp: the gradient-vs-CMA-ES comparison end to end on a small budget, its
// rollout accounting, the loss-level table and the plot.
#include "compare.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "artifact.h"

namespace fs = std::filesystem;

namespace steer {
namespace {

TEST(Compare, RolloutsToReachFindsTheFirstCrossing) {
  CompareCurve c;
  c.rollouts = {10, 20, 30, 40};
  c.best_loss = {1.0, 0.5, 0.5, 0.1};
  EXPECT_EQ(rollouts_to_reach(c, 0.6), 20);
  EXPECT_EQ(rollouts_to_reach(c, 0.1), 40);
  EXPECT_EQ(rollouts_to_reach(c, 0.05), -1);
}

TEST(Compare, PlotHasOneLinePerCurve) {
  CompareCurve a, b;
  a.method = "a";
  a.rollouts = {1, 10, 100};
  a.best_loss = {0, -1, -2};
  b.method = "b";
  b.rollouts = {10, 1000};
  b.best_loss = {0, -3};
  const std::string svg = svg_plot({a, b}, "t");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  size_t n = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++n;
  EXPECT_EQ(n, 2u);
}

// the soft walker with a tiny budget: both methods run from the same start, the cost model
// counts a gradient evaluation as 1 + bwd/fwd rollouts, and the artifact holds the table,
// the CSV and the SVG
TEST(Compare, SoftWalkerRunsEndToEnd) {
  ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_stiffness.json");
  nlohmann::json j = c.raw;
  j["simulation"]["steps"] = 120;
  j["compare"]["iterations"] = 8;
  j["compare"]["cmaes_rollouts"] = 200;
  const fs::path out = fs::temp_directory_path() / ("steer_compare_test_" + std::to_string(getpid()));
  j["output"]["dir"] = out.string();
  c = parse_config(j);
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  apply_overrides(c, o);
  RunOutcome r = run_compare(c, o);
  const nlohmann::json& a = r.artifact;
  const double per_grad = a["cost_model"]["rollouts_per_gradient_evaluation"];
  EXPECT_GE(per_grad, 1.0);
  EXPECT_NEAR(a["cost_model"]["backward_over_forward"].get<double>() + 1.0, per_grad, 1e-12);
  // 8 iterations and the final evaluation: 9 gradient evaluations
  EXPECT_NEAR(a["gradient"]["rollouts_total"].get<double>(), 9 * per_grad, 1e-9);
  EXPECT_LE(a["cmaes"]["rollouts_used"].get<double>(), 200.0);
  EXPECT_GT(a["cmaes"]["rollouts_used"].get<double>(), 100.0);
  EXPECT_EQ(a["levels"].size(), 5u);
  // both methods improve on the start (the loss is −displacement)
  EXPECT_LT(a["gradient"]["loss_best"].get<double>(), a["gradient"]["loss_start"].get<double>());
  EXPECT_LT(a["cmaes"]["loss_best"].get<double>(), a["gradient"]["loss_start"].get<double>());
  ASSERT_FALSE(r.artifact_dir.empty());
  EXPECT_TRUE(fs::exists(fs::path(r.artifact_dir) / "compare.csv"));
  EXPECT_TRUE(fs::exists(fs::path(r.artifact_dir) / "compare.svg"));
  EXPECT_EQ(read_artifact(r.artifact_dir)["command"], "compare");
  std::error_code ec;
  fs::remove_all(out, ec);
}

TEST(Compare, NeedsACompareSection) {
  ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/projectile.json");
  RunOptions o;
  o.write = false;
  EXPECT_THROW(run_compare(c, o), ConfigError);
}

}  // namespace
}  // namespace steer
