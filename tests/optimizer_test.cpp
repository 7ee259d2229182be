// host/optimizer.h: gradient descent and Adam with box bounds on an analytic batch
// problem whose projected minimizers are known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "optimizer.h"
#include "optimizer_test_problems.h"
#include "problem.h"

namespace {

// the separable quadratic of optimizer_test_problems.h: its projected minimizers are the
// per-coordinate clamps of c_b
using steer_test_problems::QuadraticProblem;

// three rollouts with different minimizers: rollout 0 inside the box, rollout 1 outside in
// both coordinates (lower and upper bounds active), rollout 2 outside in one coordinate
QuadraticProblem make_problem() {
  return QuadraticProblem({{0.5, 1.0}, {3.0, -2.0}, {-0.3, 5.0}},  // c_b
                          {1.0, 4.0},                              // a_i: condition number 4
                          {-1.0, 0.0}, {1.0, 2.0},                 // box [-1, 1] × [0, 2]
                          {0.0, 0.5});
}

steer::OptimizerConfig gd(int iterations) {
  steer::OptimizerConfig c;
  c.method = "gd";
  c.learning_rate = 0.2;  // contraction 1 − η a_i ∈ {0.8, 0.2} per step on the free coordinates
  c.iterations = iterations;
  c.log_every = 1;
  return c;
}

steer::OptimizerConfig adam(int iterations) {
  steer::OptimizerConfig c;
  c.method = "adam";
  c.learning_rate = 0.01;
  c.iterations = iterations;
  c.log_every = 1;
  return c;
}

}  // namespace

TEST(OptimizerTest, ProjectToBoundsClamps) {
  QuadraticProblem p = make_problem();
  // two rollouts' worth: the bounds repeat per rollout (index i mod nv)
  std::vector<double> v = {-5.0, 1.5, 0.25, 7.0, 1.0, -0.0};
  steer::project_to_bounds(p, v);
  EXPECT_EQ(v, (std::vector<double>{-1.0, 1.5, 0.25, 2.0, 1.0, 0.0}));
  std::vector<double> inside = {0.1, 0.2, -0.9, 1.9};
  std::vector<double> copy = inside;
  steer::project_to_bounds(p, copy);
  EXPECT_EQ(copy, inside);  // points inside the box are unchanged, bitwise
}

TEST(OptimizerTest, GradientDescentReachesProjectedMinimizers) {
  QuadraticProblem p = make_problem();
  const steer::OptimizationResult r = steer::optimize(p, gd(200), p.initial(), nullptr);
  ASSERT_EQ(r.vars.size(), 6u);
  for (int b = 0; b < 3; ++b) {
    const std::vector<double> m = p.projected_minimizer(b);
    for (int i = 0; i < 2; ++i) {
      const double v = r.vars[size_t(b) * 2 + i];
      // free coordinates: error 0.8^200 ≈ 4e-20 of the start, i.e. rounding; active
      // bounds: the projection returns the bound itself
      EXPECT_NEAR(v, m[i], 1e-12) << "rollout " << b << " var " << i;
      EXPECT_GE(v, p.lower()[i]);
      EXPECT_LE(v, p.upper()[i]);
    }
  }
  // the active bounds are hit exactly
  EXPECT_EQ(r.vars[2], 1.0);
  EXPECT_EQ(r.vars[3], 0.0);
  EXPECT_EQ(r.vars[5], 2.0);
  // rollout 0 ends at its free minimum: zero loss; rollout 1 at ½(2² + 4·2²) = 10
  EXPECT_NEAR(r.final.loss[0], 0.0, 1e-20);
  EXPECT_NEAR(r.final.loss[1], 10.0, 1e-12);
  EXPECT_NEAR(r.final.loss[2], 0.5 * 4.0 * 9.0, 1e-12);
  EXPECT_EQ(r.iterations, 200);
}

TEST(OptimizerTest, AdamReachesProjectedMinimizers) {
  QuadraticProblem p = make_problem();
  const steer::OptimizationResult r = steer::optimize(p, adam(3000), p.initial(), nullptr);
  for (int b = 0; b < 3; ++b) {
    const std::vector<double> m = p.projected_minimizer(b);
    // Adam's step shrinks with the gradient's running moments; after 3000 steps of η = 0.01
    // the free coordinates sit at the minimizer to rounding (measured < 1e-15)
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(r.vars[size_t(b) * 2 + i], m[i], 1e-9) << "rollout " << b << " var " << i;
  }
  // a gradient that keeps pushing outward keeps the iterate on the bound, exactly
  EXPECT_EQ(r.vars[2], 1.0);
  EXPECT_EQ(r.vars[3], 0.0);
  EXPECT_EQ(r.vars[5], 2.0);
}

TEST(OptimizerTest, StartOutsideBoundsIsProjectedFirst) {
  QuadraticProblem p = make_problem();
  steer::OptimizerConfig c = gd(0);  // no steps: the result is the projected start
  const steer::OptimizationResult r = steer::optimize(p, c, {9.0, -9.0, 0.0, 0.5, -9.0, 9.0}, nullptr);
  EXPECT_EQ(r.vars, (std::vector<double>{1.0, 0.0, 0.0, 0.5, -1.0, 2.0}));
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(p.evaluations, 1);  // the final evaluation only
}

TEST(OptimizerTest, RolloutsAreOptimizedIndependently) {
  // rollout 2 of the batch must follow exactly the path it follows when optimized alone
  QuadraticProblem batch = make_problem();
  QuadraticProblem alone({{-0.3, 5.0}}, {1.0, 4.0}, {-1.0, 0.0}, {1.0, 2.0}, {0.0, 0.5});
  for (const auto& cfg : {gd(7), adam(7)}) {
    SCOPED_TRACE(cfg.method);
    const steer::OptimizationResult rb = steer::optimize(batch, cfg, batch.initial(), nullptr);
    const steer::OptimizationResult ra = steer::optimize(alone, cfg, alone.initial(), nullptr);
    EXPECT_EQ(rb.vars[4], ra.vars[0]);
    EXPECT_EQ(rb.vars[5], ra.vars[1]);
    // and the rollouts did not end up in the same place
    EXPECT_NE(rb.vars[0], rb.vars[2]);
    EXPECT_NE(rb.vars[0], rb.vars[4]);
  }
}

TEST(OptimizerTest, TraceRecordsIterations) {
  QuadraticProblem p = make_problem();
  steer::OptimizerConfig c = gd(20);
  c.log_every = 5;
  std::vector<int> progress_its;
  const steer::OptimizationResult r =
      steer::optimize(p, c, p.initial(), [&](int it, double) { progress_its.push_back(it); });
  // logged at 0, 5, 10, 15 (before those steps) and at 20 (the final iterate)
  EXPECT_EQ(r.trace.iteration, (std::vector<int>{0, 5, 10, 15, 20}));
  EXPECT_EQ(progress_its, r.trace.iteration);
  ASSERT_EQ(r.trace.loss_mean.size(), 5u);
  ASSERT_EQ(r.trace.loss_rollouts.size(), 5u);
  EXPECT_EQ(p.evaluations, 21);  // one gradient per iteration plus the final one
  // at the start v = (0, 0.5) for every rollout: L = ½(0.25 + 4·0.25), ½(9 + 4·6.25), ½(0.09 + 4·20.25)
  const std::vector<double> l0 = {0.625, 17.0, 40.545};
  ASSERT_EQ(r.trace.loss_rollouts[0].size(), 3u);
  for (int b = 0; b < 3; ++b) EXPECT_NEAR(r.trace.loss_rollouts[0][b], l0[b], 1e-12);
  EXPECT_NEAR(r.trace.loss_mean[0], (0.625 + 17.0 + 40.545) / 3, 1e-12);
  EXPECT_NEAR(r.trace.loss_min[0], 0.625, 1e-12);
  EXPECT_NEAR(r.trace.loss_max[0], 40.545, 1e-12);
  // projected gradient descent on a convex problem never increases any rollout's loss
  for (size_t k = 1; k < r.trace.loss_rollouts.size(); ++k)
    for (int b = 0; b < 3; ++b) EXPECT_LE(r.trace.loss_rollouts[k][b], r.trace.loss_rollouts[k - 1][b] + 1e-15);
  // the last entry is the final evaluation
  for (int b = 0; b < 3; ++b) EXPECT_DOUBLE_EQ(r.trace.loss_rollouts.back()[b], r.final.loss[b]);
  // and the JSON form carries the same numbers
  const nlohmann::json j = steer::to_json(r.trace);
  EXPECT_EQ(j["iteration"], nlohmann::json(r.trace.iteration));
  EXPECT_EQ(j["loss_mean"].size(), 5u);
}

TEST(OptimizerTest, MethodNoneDoesNotMove) {
  QuadraticProblem p = make_problem();
  steer::OptimizerConfig c;
  c.method = "none";
  c.iterations = 5;
  const steer::OptimizationResult r = steer::optimize(p, c, p.initial(), nullptr);
  EXPECT_EQ(r.vars, p.initial());
}
