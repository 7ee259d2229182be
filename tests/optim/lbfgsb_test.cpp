// src/optim/lbfgsb.h: L-BFGS-B on every rollout of analytic batched Problems with known
// minimizers; bounds, independence of rollouts, iteration and evaluation accounting (also as
// a run's progress line and artifact report them), failures.
#include "optim/lbfgsb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiment/experiment.h"
#include "optimizer_test_problems.h"

namespace {

using steer_test_problems::DenseQuadraticProblem;
using steer_test_problems::QuadraticProblem;
using steer_test_problems::RosenbrockProblem;

// three rollouts: rollout 0's minimizer inside the box, rollout 1 outside in both coordinates
// (a lower and an upper bound active), rollout 2 outside in one
QuadraticProblem make_quadratic() {
  return QuadraticProblem({{0.5, 1.0}, {3.0, -2.0}, {-0.3, 5.0}},  // c_b
                          {1.0, 4.0},                              // a_i
                          {-1.0, 0.0}, {1.0, 2.0},                 // box [-1, 1] × [0, 2]
                          {0.0, 0.5});
}

steer::OptimizerConfig lbfgsb(int iterations) {
  steer::OptimizerConfig c;
  c.method = "lbfgsb";
  c.iterations = iterations;
  c.log_every = 1;
  return c;
}

// 10-D Rosenbrock, three rollouts with minimizers s_b inside the box [−2, 3]^10, each
// started from the classic point (−1.2, 1, −1.2, 1, …) shifted by s_b − 1
RosenbrockProblem make_rosenbrock(std::vector<double>& start) {
  std::vector<std::vector<double>> s = {std::vector<double>(10, 1.0), std::vector<double>(10, 0.5),
                                        std::vector<double>(10, 1.0)};
  for (int i = 0; i < 10; ++i) s[2][i] = 1.0 + 0.1 * i;
  RosenbrockProblem p(s, -2.0, 3.0);
  start.clear();
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 10; ++i) start.push_back((i % 2 == 0 ? -1.2 : 1.0) + s[b][i] - 1.0);
  return p;
}

steer::LbfgsbOptions tight() {
  steer::LbfgsbOptions o;
  o.epsilon = 1e-10;  // projected gradient ‖·‖_∞
  o.past = 0;         // no f-decrease test: stop on the gradient only
  return o;
}

}  // namespace

TEST(LbfgsbTest, QuadraticReachesProjectedMinimizers) {
  QuadraticProblem p = make_quadratic();
  steer::LbfgsbReport rep;
  const steer::OptimizationResult r =
      steer::lbfgsb_optimize(p, lbfgsb(100), p.initial(), nullptr, tight(), &rep);
  ASSERT_EQ(r.vars.size(), 6u);
  for (int b = 0; b < 3; ++b) {
    SCOPED_TRACE(b);
    const std::vector<double> m = p.projected_minimizer(b);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(r.vars[size_t(b) * 2 + i], m[i], 1e-10);
      EXPECT_GE(r.vars[size_t(b) * 2 + i], p.lower()[i]);
      EXPECT_LE(r.vars[size_t(b) * 2 + i], p.upper()[i]);
    }
    EXPECT_EQ(rep.status[b], "converged");
  }
  // active bounds are hit exactly (the solver projects onto the box)
  EXPECT_EQ(r.vars[2], 1.0);
  EXPECT_EQ(r.vars[3], 0.0);
  EXPECT_EQ(r.vars[5], 2.0);
  EXPECT_NEAR(r.final.loss[0], 0.0, 1e-20);
  EXPECT_NEAR(r.final.loss[1], 10.0, 1e-12);
  EXPECT_NEAR(r.final.loss[2], 18.0, 1e-12);
  // a separable quadratic: a handful of evaluations each (observed 9, 3, 3)
  for (int b = 0; b < 3; ++b) EXPECT_LE(rep.evaluations[b], 18);
}

TEST(LbfgsbTest, RosenbrockTenVariablesEveryRollout) {
  std::vector<double> start;
  RosenbrockProblem p = make_rosenbrock(start);
  steer::LbfgsbReport rep;
  const steer::OptimizationResult r =
      steer::lbfgsb_optimize(p, lbfgsb(1000), start, nullptr, tight(), &rep);
  for (int b = 0; b < 3; ++b) {
    SCOPED_TRACE(b);
    double err = 0;
    for (int i = 0; i < 10; ++i) {
      const double v = r.vars[size_t(b) * 10 + i];
      err = std::max(err, std::abs(v - p.minimizer(b)[i]));
      EXPECT_GE(v, -2.0);
      EXPECT_LE(v, 3.0);
    }
    EXPECT_LT(err, 1e-7);
    EXPECT_LT(r.final.loss[b], 1e-14);
    EXPECT_EQ(rep.status[b], "converged");
    // observed 94–101 iterations, 112–113 evaluations, max |v − s_b| ≈ 2e-12; budget ≈ 2×
    EXPECT_LE(rep.evaluations[b], 230);
  }
  // the solvers met at one batched evaluation each time: as many as the busiest rollout's
  // evaluations, not their sum, and one more for the final evaluation
  const long long busiest = *std::max_element(rep.evaluations.begin(), rep.evaluations.end());
  EXPECT_EQ(rep.batched_evaluations, busiest);
  EXPECT_EQ(p.evaluations, busiest + 1);
}

TEST(LbfgsbTest, CoupledQuadraticWithActiveBounds) {
  // 10-D, condition number 100, box [−1, 1]^10; rollout 0: x* inside; rollout 1: 3 lower and
  // 2 upper bounds active; rollout 2: all 10 active (a vertex)
  std::vector<std::vector<double>> xs(3, std::vector<double>(10)),
      gs(3, std::vector<double>(10, 0.0));
  for (int i = 0; i < 10; ++i) {
    xs[0][i] = 0.1 * i - 0.45;
    xs[1][i] = 0.05 * i - 0.2;
    xs[2][i] = i % 2 ? 1.0 : -1.0;
    gs[2][i] = i % 2 ? -0.5 - 0.1 * i : 0.5 + 0.1 * i;  // ≤ 0 at upper, ≥ 0 at lower bounds
  }
  for (int i : {0, 3, 7}) xs[1][i] = -1.0, gs[1][i] = 2.0 + i;
  for (int i : {5, 9}) xs[1][i] = 1.0, gs[1][i] = -1.0 - i;
  DenseQuadraticProblem p(10, 100.0, -1.0, 1.0, xs, gs);
  steer::LbfgsbReport rep;
  const steer::OptimizationResult r =
      steer::lbfgsb_optimize(p, lbfgsb(500), p.initial(), nullptr, tight(), &rep);
  for (int b = 0; b < 3; ++b) {
    SCOPED_TRACE(b);
    for (int i = 0; i < 10; ++i) {
      const double v = r.vars[size_t(b) * 10 + i];
      EXPECT_NEAR(v, xs[b][i], 1e-8) << i;
      EXPECT_GE(v, -1.0);
      EXPECT_LE(v, 1.0);
      if (gs[b][i] != 0) {
        EXPECT_EQ(v, xs[b][i]) << i;  // active bounds exactly
      }
    }
    // rollout 1 ends in a line search that finds no decrease: at |v − x*| ~ 1e-9, L ≈ 9.2
    // changes by less than its rounding (ulp 2e-15) before ‖Pg‖ reaches 1e-10
    EXPECT_TRUE(rep.status[b] == "converged" || rep.status[b].rfind("line_search", 0) == 0)
        << rep.status[b];
  }
  // observed 94, 52, 3 evaluations; a quasi-Newton method needs far fewer than 10·n·κ
  EXPECT_LE(rep.evaluations[0], 200);
  EXPECT_LE(rep.evaluations[1], 100);
  EXPECT_LE(rep.evaluations[2], 10);
  // iterations are accepted steps, the most any rollout took; each took at least one
  // evaluation per step (its line search's trials) plus one at its start
  EXPECT_EQ(r.iterations, *std::max_element(rep.iterations.begin(), rep.iterations.end()));
  for (int b = 0; b < 3; ++b) EXPECT_GE(rep.evaluations[b], rep.iterations[b] + 1) << b;
  EXPECT_LT(r.iterations, rep.batched_evaluations);
}

TEST(LbfgsbTest, RolloutsAreIndependentOfTheBatchAndOfTheThreadCount) {
  // rollout 2 of the batch follows exactly the path it follows alone, and running the
  // solvers one after another (max_solvers = 1) gives bitwise the same result
  std::vector<double> start;
  RosenbrockProblem batch = make_rosenbrock(start);
  RosenbrockProblem alone({batch.minimizer(2)}, -2.0, 3.0);
  const std::vector<double> start2(start.begin() + 20, start.end());
  steer::LbfgsbReport rb, ra, rs;
  const auto r_batch = steer::lbfgsb_optimize(batch, lbfgsb(1000), start, nullptr, tight(), &rb);
  const auto r_alone = steer::lbfgsb_optimize(alone, lbfgsb(1000), start2, nullptr, tight(), &ra);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r_batch.vars[20 + i], r_alone.vars[i]) << i;
  EXPECT_EQ(rb.evaluations[2], ra.evaluations[0]);
  EXPECT_EQ(rb.iterations[2], ra.iterations[0]);

  steer::LbfgsbOptions serial = tight();
  serial.max_solvers = 1;
  RosenbrockProblem again = make_rosenbrock(start);
  const auto r_serial = steer::lbfgsb_optimize(again, lbfgsb(1000), start, nullptr, serial, &rs);
  EXPECT_EQ(r_serial.vars, r_batch.vars);
  EXPECT_EQ(rs.evaluations, rb.evaluations);
  // one solver at a time: the batched evaluations add up
  long long sum = 0;
  for (long long e : rs.evaluations) sum += e;
  EXPECT_EQ(rs.batched_evaluations, sum);
}

TEST(LbfgsbTest, TraceHoldsEachRolloutsBestLossSoFar) {
  std::vector<double> start;
  RosenbrockProblem p = make_rosenbrock(start);
  steer::OptimizerConfig c = lbfgsb(1000);
  c.log_every = 10;
  std::vector<int> progress_its, progress_evaluations;
  steer::LbfgsbReport rep;
  const auto r = steer::lbfgsb_optimize(
      p, c, start,
      [&](int it, int evaluations, double) {
        progress_its.push_back(it);
        progress_evaluations.push_back(evaluations);
      },
      tight(), &rep);
  ASSERT_GE(r.trace.iteration.size(), 3u);
  // the trace's entries are numbered by batched evaluation: entry k is the (k+1)-th, the last
  // one the final evaluation at the result, which the count leaves out
  ASSERT_EQ(progress_evaluations.size(), r.trace.iteration.size());
  for (size_t k = 0; k + 1 < r.trace.iteration.size(); ++k)
    EXPECT_EQ(progress_evaluations[k], r.trace.iteration[k] + 1) << k;
  EXPECT_EQ(progress_evaluations.back(), rep.batched_evaluations);
  EXPECT_EQ(r.trace.iteration[0], 0);
  EXPECT_EQ(r.trace.iteration[1], 10);
  EXPECT_EQ(r.trace.iteration.back(), rep.batched_evaluations);
  // progress counts iterations as the result does: never down, ending at result.iterations
  EXPECT_TRUE(std::is_sorted(progress_its.begin(), progress_its.end()));
  EXPECT_EQ(progress_its.front(), 0);
  EXPECT_EQ(progress_its.back(), r.iterations);
  // every rollout starts at the same point y = (−1.2, 1, …) of R: the same loss
  EXPECT_EQ(r.trace.loss_rollouts[0][0], r.trace.loss_rollouts[0][1]);
  for (size_t k = 1; k < r.trace.loss_rollouts.size(); ++k)
    for (int b = 0; b < 3; ++b)
      EXPECT_LE(r.trace.loss_rollouts[k][b], r.trace.loss_rollouts[k - 1][b]);
  for (int b = 0; b < 3; ++b) EXPECT_EQ(r.trace.loss_rollouts.back()[b], r.final.loss[b]);
  EXPECT_EQ(steer::to_json(rep)["status"].size(), 3u);
}

TEST(LbfgsbTest, ZeroIterationsReturnsTheProjectedStart) {
  QuadraticProblem p = make_quadratic();
  const auto r = steer::lbfgsb_optimize(p, lbfgsb(0), {9.0, -9.0, 0.0, 0.5, -9.0, 9.0}, nullptr);
  EXPECT_EQ(r.vars, (std::vector<double>{1.0, 0.0, 0.0, 0.5, -1.0, 2.0}));
  EXPECT_EQ(p.evaluations, 1);  // the final evaluation only
  EXPECT_EQ(r.iterations, 0);
}

TEST(LbfgsbTest, EvaluationBudgetStopsARollout) {
  std::vector<double> start;
  RosenbrockProblem p = make_rosenbrock(start);
  steer::LbfgsbOptions o = tight();
  o.max_evaluations = 15;
  steer::LbfgsbReport rep;
  const auto r = steer::lbfgsb_optimize(p, lbfgsb(1000), start, nullptr, o, &rep);
  for (int b = 0; b < 3; ++b) {
    EXPECT_EQ(rep.status[b], "max_evaluations");
    EXPECT_EQ(rep.evaluations[b], 15);
    EXPECT_LT(r.final.loss[b], r.trace.loss_rollouts[0][b]);  // the best point so far is kept
  }
}

TEST(LbfgsbTest, BackendFailurePropagatesWithoutDeadlock) {
  std::vector<double> start;
  RosenbrockProblem p = make_rosenbrock(start);
  p.throw_at_evaluation = 5;
  EXPECT_THROW(steer::lbfgsb_optimize(p, lbfgsb(1000), start, nullptr, tight()),
               std::runtime_error);
  EXPECT_EQ(p.evaluations, 5);
}

TEST(LbfgsbTest, RejectsAStartOfTheWrongSize) {
  QuadraticProblem p = make_quadratic();
  EXPECT_THROW(steer::lbfgsb_optimize(p, lbfgsb(10), {0.0, 0.5}, nullptr), std::invalid_argument);
}

TEST(LbfgsbTest, IterationCapCountsStepsNotEvaluations) {
  // 1000 iterations allowed, 20 taken: the rollouts stop at the cap with more evaluations
  std::vector<double> start;
  RosenbrockProblem p = make_rosenbrock(start);
  steer::LbfgsbReport rep;
  const auto r = steer::lbfgsb_optimize(p, lbfgsb(20), start, nullptr, tight(), &rep);
  for (int b = 0; b < 3; ++b) {
    EXPECT_EQ(rep.status[b], "max_iterations") << b;
    EXPECT_EQ(rep.iterations[b], 20) << b;
    EXPECT_GT(rep.evaluations[b], 21) << b;
  }
  EXPECT_EQ(r.iterations, 20);
  EXPECT_GT(rep.batched_evaluations, 21);
}

TEST(LbfgsbTest, StartAtTheMinimizerTakesNoStep) {
  QuadraticProblem p = make_quadratic();
  std::vector<double> at_min;
  for (int b = 0; b < 3; ++b)
    for (double v : p.projected_minimizer(b)) at_min.push_back(v);
  steer::LbfgsbReport rep;
  const auto r = steer::lbfgsb_optimize(p, lbfgsb(10), at_min, nullptr, tight(), &rep);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(rep.iterations, std::vector<int>(3, 0));
  EXPECT_EQ(rep.evaluations, std::vector<long long>(3, 1));
  EXPECT_EQ(rep.batched_evaluations, 1);
  EXPECT_EQ(rep.status, std::vector<std::string>(3, "converged"));
}

// A run's artifact and its progress line on stderr count L-BFGS-B's iterations the same way
// (accepted steps, at most optimizer.iterations) and name its batched evaluations, which the
// line searches make more of: a projectile under quadratic drag aimed at a point (weights 1
// and 25 on x_T and y_T), stopped at the iteration cap long before it converges.
TEST(LbfgsbTest, ArtifactIterationsEqualTheProgressLine) {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "name": "lbfgsb_counts",
    "model": {"type": "projectile", "dim": 2, "drag": 0.1},
    "simulation": {"dt": 0.01, "steps": 100},
    "initial_state": {"position": [0.0, 0.0], "velocity": [2.5, 1.0]},
    "loss": {"terminal": [{"state": "position.x", "target": 6.0, "weight": 1.0},
                          {"state": "position.y", "target": 1.0, "weight": 25.0}]},
    "variables": {"x0.velocity.x": {"lower": -100.0, "upper": 100.0},
                  "x0.velocity.y": {"lower": -100.0, "upper": 100.0}},
    "optimizer": {"method": "lbfgsb", "iterations": 3},
    "validation": {"enabled": false}
  })");
  steer::ExperimentConfig c = steer::parse_config(j);
  steer::RunOptions o;
  o.backend = "cpu";
  o.write = false;
  o.progress = true;
  steer::apply_overrides(c, o);
  ::testing::internal::CaptureStderr();
  const steer::RunOutcome out = steer::run_experiment(c, o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  const nlohmann::json& opt = out.artifact["optimization"];
  ASSERT_TRUE(opt.is_object()) << out.artifact.dump();
  const int iterations = opt["iterations"].get<int>(), evaluations = opt["evaluations"].get<int>();
  EXPECT_EQ(iterations, 3);
  EXPECT_GT(evaluations, iterations) << "the line searches evaluate more points than they accept";
  // the last progress line: "steer: iteration N/3 (…%)  evaluations E, mean loss …"
  const std::regex line(R"(steer: iteration (\d+)/(\d+) \(\d+%\)  evaluations (\d+), mean loss)");
  std::smatch m, last;
  for (auto it = err.cbegin(); std::regex_search(it, err.cend(), m, line); it = m[0].second)
    last = m;
  ASSERT_FALSE(last.empty()) << err;
  EXPECT_EQ(std::stoi(last[1].str()), iterations) << err;
  EXPECT_EQ(std::stoi(last[2].str()), 3) << err;
  EXPECT_EQ(std::stoi(last[3].str()), evaluations) << err;
  // the history is sampled per batched evaluation, its last entry the final one at the result
  EXPECT_EQ(opt["history"]["iteration"].back().get<int>(), evaluations);
}
