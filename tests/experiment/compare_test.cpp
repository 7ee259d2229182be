// src/experiment/compare.cpp: the gradient-vs-CMA-ES comparison end to end on a small budget, its
// rollout accounting, the loss-level table and the plot; its genetic-algorithm side, and the GA
// as `steer run`'s optimizer.
#include "experiment/compare.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "experiment/artifact.h"
#include "experiment/experiment.h"

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

TEST(Compare, PlotHasOneLinePerCurveAndOneLegendPerMethod) {
  CompareCurve a, b, a2;
  a.method = "a";
  a.rollouts = {1, 10, 100};
  a.best_loss = {0, -1, -2};
  b.method = "b";
  b.group = 1;
  b.rollouts = {10, 1000};
  b.best_loss = {0, -3};
  a2 = a;  // a repeat of method a: its own line, a's colour, no second legend entry
  a2.best_loss = {0, -0.5, -2.5};
  auto count = [](const std::string& svg, const std::string& what) {
    size_t n = 0;
    for (size_t p = svg.find(what); p != std::string::npos; p = svg.find(what, p + 1)) ++n;
    return n;
  };
  const std::string svg = svg_plot({a, b, a2}, "t");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_EQ(count(svg, ">a</text>"), 1u);
  EXPECT_EQ(count(svg, ">b</text>"), 1u);
  EXPECT_EQ(count(svg, "stroke=\"#1f77b4\""), 2u);
  EXPECT_EQ(count(svg, "stroke=\"#d62728\""), 1u);
}

// the soft walker with a tiny budget: both methods run from the same start, the cost model
// counts a gradient evaluation as 1 + bwd/fwd rollouts, and the artifact holds the table,
// the CSV and the SVG
TEST(Compare, SoftWalkerRunsEndToEnd) {
  ExperimentConfig c =
      load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_stiffness.json");
  nlohmann::json j = c.raw;
  j["simulation"]["steps"] = 120;
  j["compare"]["iterations"] = 8;
  j["compare"]["cmaes_rollouts"] = 200;
  j["compare"]["repeats"] = 1;
  const fs::path out =
      fs::temp_directory_path() / ("steer_compare_test_" + std::to_string(getpid()));
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
  // 8 gradient evaluations and a forward pass scoring the last iterate
  EXPECT_NEAR(a["gradient"]["rollouts_total"].get<double>(), 8 * per_grad + 1, 1e-9);
  EXPECT_EQ(a["gradient"]["gradient_evaluations"], 8);
  EXPECT_LE(a["cmaes"]["rollouts_used"].get<double>(), 200.0);
  EXPECT_GT(a["cmaes"]["rollouts_used"].get<double>(), 100.0);
  EXPECT_EQ(a["levels"].size(), 5u);
  // CMA-ES's loss after 100 rollouts and after its whole budget, each with steer's cost to reach it
  ASSERT_EQ(a["levels_at_cmaes_budgets"].size(), 2u);
  EXPECT_EQ(a["levels_at_cmaes_budgets"][0]["cmaes_rollouts"], 100.0);
  EXPECT_EQ(a["levels_at_cmaes_budgets"][1]["cmaes_loss"], a["cmaes"]["loss_best"]);
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

// the walker with actuation knots (configs/soft_walker_knots.json) at 120 steps: ⌈120/hold⌉
// knots for each actuator next to the spring stiffnesses; both sides start at rest (every
// activation 0) and both improve on it
TEST(Compare, SoftWalkerKnotsRunsEndToEnd) {
  nlohmann::json j =
      load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_knots.json").raw;
  j["simulation"]["steps"] = 120;
  j["compare"]["iterations"] = 6;
  j["compare"]["cmaes_rollouts"] = 100;
  j["compare"]["repeats"] = 1;
  ExperimentConfig c = parse_config(j);
  const int n_act = c.info.nu();
  const int n_springs = int(c.info.param_groups.at("spring.stiffness").size());
  ASSERT_GT(n_act, 0);
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  apply_overrides(c, o);
  const nlohmann::json a = run_compare(c, o).artifact;
  int hold = 0;
  for (const auto& v : c.variables)
    if (v.kind == VariableSpec::kControl) hold = v.hold;
  ASSERT_GT(hold, 1);
  EXPECT_EQ(a["variables"]["count"], n_springs + (120 + hold - 1) / hold * n_act);
  EXPECT_EQ(a["gradient"]["gradient_evaluations"], 6);
  EXPECT_LT(a["gradient"]["loss_best"].get<double>(), a["gradient"]["loss_start"].get<double>());
  EXPECT_LT(a["cmaes"]["loss_best"].get<double>(), a["gradient"]["loss_start"].get<double>());
  // each best design run again at h/2: a finite loss, and the share of the gain it moves
  for (const char* m : {"steer", "cmaes"}) {
    const auto& t = a["timestep_check"][m];
    EXPECT_TRUE(std::isfinite(t["loss_half_step"].get<double>())) << m;
    EXPECT_NE(t["loss_half_step"].get<double>(), t["loss"].get<double>()) << m;
    const double moved =
        std::abs(t["loss_half_step"].get<double>() - t["loss"].get<double>()) /
        std::abs(t["loss"].get<double>() - a["gradient"]["loss_start"].get<double>());
    EXPECT_DOUBLE_EQ(t["moved_of_gain"].get<double>(), moved) << m;
  }
  EXPECT_EQ(a["timestep_check"]["steer"]["loss"], a["gradient"]["loss_best"]);
  EXPECT_EQ(a["timestep_check"]["cmaes"]["loss"], a["cmaes"]["loss_best"]);
}

// the soft walker's config with a short horizon and small budgets, and these compare keys
ExperimentConfig small_walker(const nlohmann::json& compare_keys) {
  nlohmann::json j =
      load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_stiffness.json").raw;
  j["simulation"]["steps"] = 120;
  j["compare"]["iterations"] = 4;
  j["compare"]["cmaes_rollouts"] = 40;
  j["compare"]["repeats"] = 1;
  for (auto it = compare_keys.begin(); it != compare_keys.end(); ++it)
    j["compare"][it.key()] = it.value();
  return parse_config(j);
}

// compare.ga_rollouts adds a third side: the GA from the same start (its individual 0, so its
// best is never worse than the start), within its budget in whole generations, checked at h/2,
// in the artifact, the curves and the best designs
TEST(Compare, TheGeneticAlgorithmSideRunsFromTheSameStart) {
  ExperimentConfig c = small_walker({{"ga_rollouts", 120}, {"ga_population", 20}});
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  apply_overrides(c, o);
  const RunOutcome r = run_compare(c, o);
  const nlohmann::json& a = r.artifact;
  ASSERT_TRUE(a.contains("ga"));
  EXPECT_EQ(a["ga"]["population"], 20);
  EXPECT_EQ(a["ga"]["rollouts_used"].get<double>(), 120.0);  // six generations of 20
  EXPECT_LE(a["ga"]["loss_best"].get<double>(), a["gradient"]["loss_start"].get<double>());
  EXPECT_TRUE(a["timestep_check"].contains("ga"));
  EXPECT_EQ(a["timestep_check"]["ga"]["loss"], a["ga"]["loss_best"]);
  EXPECT_EQ(a["repeats"][0]["ga_loss_best"], a["ga"]["loss_best"]);
  const auto& best = a["best_variables"];
  ASSERT_FALSE(best.empty());
  EXPECT_TRUE(best.begin().value().contains("ga"));
  EXPECT_NE(r.summary.find("GA: loss -> "), std::string::npos) << r.summary;
}

// optimizer.method "ga" in steer run: the population is a batch of copies of the one rollout,
// one generation per batched pass; a projectile's launch speed to land 2 m away (v = 5 m/s)
TEST(Optimizer, TheGeneticAlgorithmRunsInSteerRun) {
  ExperimentConfig c = parse_config(nlohmann::json::parse(R"({
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "ground": {"type": "none"}},
    "simulation": {"dt": 0.01, "steps": 40},
    "initial_state": {"position": [0.0, 0.0], "velocity": [2.5, 1.0]},
    "loss": {"terminal": [{"state": "position.x", "target": 2.0, "weight": 1.0}]},
    "variables": {"x0.velocity.x": {"lower": -10.0, "upper": 10.0}},
    "optimizer": {"method": "ga", "iterations": 30, "sigma0": 2.0, "seed": 4},
    "validation": {"enabled": false}
  })"));
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  apply_overrides(c, o);
  const nlohmann::json a = run_experiment(c, o).artifact;
  const nlohmann::json& r0 = a["result"]["rollouts"][0];
  // from 0.5 (x_T = 1 m) to within 1e-4 of the optimum: |v − 5| < 0.03 m/s
  EXPECT_NEAR(r0["loss_initial"].get<double>(), 0.5, 1e-9);
  EXPECT_LT(r0["loss_final"].get<double>(), 1e-4);
  EXPECT_NEAR(r0["variables"]["x0.velocity.x"]["final"].get<double>(), 5.0, 0.03);
}

// multi-start and continuation: every start pays for every pass, a continuation phase's
// gradient at its measured cost, each scoring on the real problem as one forward rollout
TEST(Compare, StartsAndContinuationAreCountedInFull) {
  ExperimentConfig c = small_walker({{"starts", 3},
                                     {"start_spread", 0.2},
                                     {"gradient_clip", 0.25},
                                     {"continuation",
                                      {{{"steps", 60}, {"iterations", 3}, {"evaluate_every", 2}},
                                       {{"ground_smoothing", 0.03}, {"iterations", 1}}}}});
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  apply_overrides(c, o);
  const nlohmann::json a = run_compare(c, o).artifact;
  const double g = a["cost_model"]["rollouts_per_gradient_evaluation"];
  const auto& pc = a["cost_model"]["continuation_rollouts_per_gradient_evaluation"];
  ASSERT_EQ(pc.size(), 2u);
  // a 60-step gradient costs about half a 120-step one (measured: loose bounds)
  EXPECT_GT(pc[0].get<double>(), 0.2 * g);
  EXPECT_LT(pc[0].get<double>(), 0.9 * g);
  // 3 starts × (scoring of the start + phase 1: 3 gradients, scored after steps 2 and 3 +
  // phase 2: 1 gradient, scored + 4 real gradients + the final scoring)
  const double expect =
      3 * (1 + 3 * pc[0].get<double>() + 2 + 1 * pc[1].get<double>() + 1 + 4 * g + 1);
  EXPECT_NEAR(a["gradient"]["rollouts_total"].get<double>(), expect, 1e-9 * expect);
  EXPECT_EQ(a["gradient"]["gradient_evaluations"], 3 + 1 + 4);
  EXPECT_EQ(a["gradient"]["continuation"][0]["steps"], 60);
  EXPECT_EQ(a["gradient"]["continuation"][1]["steps"], 120);
  // the best loss is the best start's, and it improves on the common start
  const auto& per_start = a["gradient"]["loss_best_per_start"];
  ASSERT_EQ(per_start.size(), 3u);
  double m = INFINITY;
  for (const auto& v : per_start) m = std::min(m, v.get<double>());
  EXPECT_EQ(a["gradient"]["loss_best"].get<double>(), m);
  EXPECT_LT(m, a["gradient"]["loss_start"].get<double>());
  EXPECT_EQ(a["gradient"]["starts"], 3);
}

// repeats: each repeat draws its own start (batch.seed + r) and seeds CMA-ES with seed + r;
// repeat 0 is the single run, and the median over repeats treats "not reached" as +infinity
TEST(Compare, RepeatsRunIndependentStartsAndReportTheMedian) {
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  ExperimentConfig one = small_walker({{"gradient_clip", 0.25}});
  apply_overrides(one, o);
  const nlohmann::json a1 = run_compare(one, o).artifact;
  ExperimentConfig three = small_walker({{"gradient_clip", 0.25}, {"repeats", 3}});
  apply_overrides(three, o);
  const nlohmann::json a3 = run_compare(three, o).artifact;
  const auto& reps = a3["repeats"];
  ASSERT_EQ(reps.size(), 3u);
  // repeat 0 of three is the single run: same start, same gradient path, same CMA-ES
  EXPECT_EQ(reps[0]["loss_start"], a1["gradient"]["loss_start"]);
  EXPECT_EQ(reps[0]["steer_loss_best"], a1["gradient"]["loss_best"]);
  EXPECT_EQ(reps[0]["cmaes_loss_best"], a1["cmaes"]["loss_best"]);
  EXPECT_EQ(a3["gradient"]["loss_best"], a1["gradient"]["loss_best"]);
  // the soft walker's batch jitters the actuator weights: other seeds, other starts
  const std::uint64_t s0 = reps[0]["batch_seed"];
  for (int r = 1; r < 3; ++r) {
    EXPECT_EQ(reps[r]["batch_seed"].get<std::uint64_t>(), s0 + std::uint64_t(r));
    EXPECT_EQ(reps[r]["cmaes_seed"].get<std::uint64_t>(), three.compare.seed + std::uint64_t(r));
    EXPECT_NE(reps[r]["loss_start"], reps[0]["loss_start"]);
  }
  // the median row of each budget agrees with its per-repeat ratios
  const auto& over = a3["over_repeats"]["at_cmaes_budgets"];
  ASSERT_FALSE(over.empty());
  for (const auto& row : over) {
    std::vector<double> r;
    int reached = 0;
    for (double x : row["ratio_per_repeat"]) {
      r.push_back(x < 0 ? INFINITY : x);
      reached += x >= 0;
    }
    ASSERT_EQ(r.size(), 3u);
    std::sort(r.begin(), r.end());
    EXPECT_EQ(row["reached"].get<int>(), reached);
    if (std::isfinite(r[1]))
      EXPECT_DOUBLE_EQ(row["median_ratio"].get<double>(), r[1]);
    else
      EXPECT_EQ(row["median_ratio"].get<double>(), -1.0);
    // a repeat's ratio is its steer rollouts over N
    for (int k = 0; k < 3; ++k) {
      const double st = row["steer_rollouts_per_repeat"][k], x = row["ratio_per_repeat"][k];
      if (st > 0) {
        EXPECT_DOUBLE_EQ(x, st / row["cmaes_rollouts"].get<double>());
      }
    }
  }
}

// the compare keys are validated, the offending key named (the CLI exits 2 on ConfigError)
TEST(Compare, OptionsAreValidated) {
  auto fails_naming = [](const nlohmann::json& keys, const std::string& path) {
    try {
      small_walker(keys);
      ADD_FAILURE() << keys.dump() << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  fails_naming({{"gradient_clip", -0.1}}, "compare.gradient_clip");
  fails_naming({{"gradient_method", "lbfgsb"}, {"gradient_clip", 0.5}}, "compare.gradient_clip");
  fails_naming({{"starts", 0}}, "compare.starts");
  fails_naming({{"start_spread", 0.0}}, "compare.start_spread");
  fails_naming({{"beta2", 1.0}}, "compare.beta2");
  fails_naming({{"repeats", 0}}, "compare.repeats");
  fails_naming({{"continuation", 3}}, "compare.continuation");
  fails_naming({{"continuation", {{{"steps", 500}}}}}, "compare.continuation[0].steps");
  fails_naming({{"continuation", {{{"iterations", 2}}, {{"ground_smoothing", -1.0}}}}},
               "compare.continuation[1].ground_smoothing");
  fails_naming({{"continuation", {{{"iterations", 0}}}}}, "compare.continuation[0].iterations");
  fails_naming({{"continuation", {{{"horizon", 10}}}}}, "compare.continuation[0].horizon");
  fails_naming({{"gradient_method", "lbfgsb"},
                {"gradient_clip", 0.0},
                {"continuation", {{{"iterations", 2}}}}},
               "compare.continuation");
  // and good values are read
  const ExperimentConfig c = small_walker(
      {{"starts", 4}, {"beta1", 0.5}, {"continuation", {{{"steps", 60}, {"iterations", 2}}}}});
  EXPECT_EQ(c.compare.starts, 4);
  EXPECT_EQ(c.compare.beta1, 0.5);
  ASSERT_EQ(c.compare.continuation.size(), 1u);
  EXPECT_EQ(c.compare.continuation[0].steps, 60);
  EXPECT_EQ(c.compare.continuation[0].evaluate_every, 5);
}

TEST(Compare, NeedsACompareSection) {
  ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/projectile.json");
  RunOptions o;
  o.write = false;
  EXPECT_THROW(run_compare(c, o), ConfigError);
}

}  // namespace
}  // namespace steer
