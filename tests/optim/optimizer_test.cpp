// src/optim/optimizer.h: gradient descent and Adam with box bounds on an analytic batch
// problem whose projected minimizers are known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "config/config.h"
#include "config_errors.h"
#include "optim/optimizer.h"
#include "optimizer_test_problems.h"
#include "problem/problem.h"

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
    for (int i = 0; i < 2; ++i)
      EXPECT_NEAR(r.vars[size_t(b) * 2 + i], m[i], 1e-9) << "rollout " << b << " var " << i;
  }
  // a gradient that keeps pushing outward keeps the iterate on the bound, exactly
  EXPECT_EQ(r.vars[2], 1.0);
  EXPECT_EQ(r.vars[3], 0.0);
  EXPECT_EQ(r.vars[5], 2.0);
}

TEST(OptimizerTest, StartOutsideBoundsIsProjectedFirst) {
  QuadraticProblem p = make_problem();
  steer::OptimizerConfig c = gd(0);  // no steps: the result is the projected start
  const steer::OptimizationResult r =
      steer::optimize(p, c, {9.0, -9.0, 0.0, 0.5, -9.0, 9.0}, nullptr);
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
  // at the start v = (0, 0.5) for every rollout: L = ½(0.25 + 4·0.25), ½(9 + 4·6.25), ½(0.09 +
  // 4·20.25)
  const std::vector<double> l0 = {0.625, 17.0, 40.545};
  ASSERT_EQ(r.trace.loss_rollouts[0].size(), 3u);
  for (int b = 0; b < 3; ++b) EXPECT_NEAR(r.trace.loss_rollouts[0][b], l0[b], 1e-12);
  EXPECT_NEAR(r.trace.loss_mean[0], (0.625 + 17.0 + 40.545) / 3, 1e-12);
  EXPECT_NEAR(r.trace.loss_min[0], 0.625, 1e-12);
  EXPECT_NEAR(r.trace.loss_max[0], 40.545, 1e-12);
  // projected gradient descent on a convex problem never increases any rollout's loss
  for (size_t k = 1; k < r.trace.loss_rollouts.size(); ++k)
    for (int b = 0; b < 3; ++b)
      EXPECT_LE(r.trace.loss_rollouts[k][b], r.trace.loss_rollouts[k - 1][b] + 1e-15);
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

// a gradient longer than gradient_clip is scaled to that length before the step: on the
// quadratic at v = (0, 0.5) rollout 1's gradient is a (v − c) = (−3, 10), norm √109; one gd
// step of η = 1 with clip 0.5 moves it by exactly 0.5 along −g, while rollout 0 (gradient
// (−0.5, −2), norm √4.25 ≈ 2.06) is clipped too and a clip above every norm changes nothing
TEST(OptimizerTest, GradientClipScalesLongGradientsToTheClipNorm) {
  QuadraticProblem p({{0.5, 1.0}, {3.0, -2.0}}, {1.0, 4.0}, {-10.0, -10.0}, {10.0, 10.0},
                     {0.0, 0.5});
  steer::OptimizerConfig c = gd(1);
  c.learning_rate = 1.0;
  c.gradient_clip = 0.5;
  steer::Evaluation ev;
  std::vector<double> v = p.initial();
  p.evaluate(v, true, ev);
  steer::GradientStepper st(c, p.batch_size(), p.num_vars());
  st.step(p, v, ev.grad);
  EXPECT_EQ(st.clipped_rows(), 2);
  const double n1 = std::sqrt(109.0), n0 = std::sqrt(4.25);
  EXPECT_NEAR(v[2], 0.0 + 0.5 * 3.0 / n1, 1e-15);
  EXPECT_NEAR(v[3], 0.5 - 0.5 * 10.0 / n1, 1e-15);
  EXPECT_NEAR(v[0], 0.0 + 0.5 * 0.5 / n0, 1e-15);
  EXPECT_NEAR(v[1], 0.5 + 0.5 * 2.0 / n0, 1e-15);
  // the clipped gradient is handed back: norm 0.5 per row
  EXPECT_NEAR(std::hypot(ev.grad[2], ev.grad[3]), 0.5, 1e-15);

  // a clip above every gradient norm: the plain gd step, bitwise
  c.gradient_clip = 100.0;
  std::vector<double> w = p.initial();
  p.evaluate(w, true, ev);
  steer::GradientStepper loose(c, p.batch_size(), p.num_vars());
  loose.step(p, w, ev.grad);
  EXPECT_EQ(loose.clipped_rows(), 0);
  EXPECT_EQ(w, (std::vector<double>{0.5, 2.5, 3.0, -9.5}));
}

// normalize_gradient: each row moves η g/(‖g‖ + 10⁻⁶), a step of length η (to 1e-6 relative)
TEST(OptimizerTest, NormalizedGradientStepHasTheLearningRatesLength) {
  QuadraticProblem p({{0.5, 1.0}, {3.0, -2.0}}, {1.0, 4.0}, {-10.0, -10.0}, {10.0, 10.0},
                     {0.0, 0.5});
  steer::OptimizerConfig c = gd(1);
  c.learning_rate = 0.2;
  c.normalize_gradient = true;
  steer::Evaluation ev;
  std::vector<double> v = p.initial();
  p.evaluate(v, true, ev);
  const std::vector<double> g = ev.grad, v0 = v;
  steer::GradientStepper st(c, p.batch_size(), p.num_vars());
  st.step(p, v, ev.grad);
  for (int b = 0; b < 2; ++b) {
    const double n = std::hypot(g[2 * b], g[2 * b + 1]);
    for (int i = 0; i < 2; ++i)
      EXPECT_NEAR(v[2 * b + i], v0[2 * b + i] - 0.2 * g[2 * b + i] / (n + 1e-6), 1e-15);
    EXPECT_NEAR(std::hypot(v[2 * b] - v0[2 * b], v[2 * b + 1] - v0[2 * b + 1]), 0.2,
                0.2e-6 / n + 1e-15);
  }
  nlohmann::json j =
      steer::load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_stiffness.json").raw;
  j["optimizer"] = {{"method", "gd"}, {"iterations", 2}, {"normalize_gradient", true}};
  EXPECT_EQ(steer::parse_config(j).to_json()["optimizer"]["normalize_gradient"], true);
  j["optimizer"]["method"] = "adam";
  steer::testing::expect_config_error(j, {"optimizer.normalize_gradient", "applies to method gd"});
}

// with clipping, Adam still converges on the quadratic (a clipped gradient keeps its sign,
// and near the minimum no gradient is clipped), and optimize() with clip 0 equals the
// stepper run by hand
TEST(OptimizerTest, ClippedAdamConvergesAndStepperMatchesOptimize) {
  QuadraticProblem p = make_problem();
  steer::OptimizerConfig c = adam(3000);
  c.gradient_clip = 0.1;  // below every starting gradient norm (the smallest is √4.25)
  const steer::OptimizationResult r = steer::optimize(p, c, p.initial(), nullptr);
  for (int b = 0; b < 3; ++b) {
    const std::vector<double> m = p.projected_minimizer(b);
    for (int i = 0; i < 2; ++i)
      EXPECT_NEAR(r.vars[size_t(b) * 2 + i], m[i], 1e-9) << "rollout " << b << " var " << i;
  }
  // the same 7 steps by hand and through optimize(): bitwise equal (gd's path only decreases
  // the loss on this convex problem, so optimize() keeps its last iterate)
  steer::OptimizerConfig g = gd(7);
  const steer::OptimizationResult ro = steer::optimize(p, g, p.initial(), nullptr);
  std::vector<double> v = p.initial();
  steer::Evaluation ev;
  steer::GradientStepper st(g, p.batch_size(), p.num_vars());
  for (int it = 0; it < 7; ++it) {
    p.evaluate(v, true, ev);
    st.step(p, v, ev.grad);
  }
  EXPECT_EQ(ro.vars, v);
  EXPECT_EQ(st.steps_taken(), 7);
}

// a rollout whose gradient is not finite takes no step; the others move
TEST(OptimizerTest, NonfiniteGradientRowTakesNoStep) {
  QuadraticProblem p = make_problem();
  steer::OptimizerConfig c = adam(1);
  steer::GradientStepper st(c, p.batch_size(), p.num_vars());
  std::vector<double> v = p.initial();
  std::vector<double> g = {1.0, 1.0, NAN, 2.0, -1.0, INFINITY};
  st.step(p, v, g);
  EXPECT_EQ(v[2], p.initial()[2]);
  EXPECT_EQ(v[3], p.initial()[3]);
  EXPECT_EQ(v[4], p.initial()[4]);
  EXPECT_EQ(v[5], p.initial()[5]);
  // Adam's first step moves every coordinate by η (m̂/√ŝ = sign g) against the gradient
  EXPECT_NEAR(v[0], p.initial()[0] - 0.01, 1e-9);
  EXPECT_NEAR(v[1], p.initial()[1] - 0.01, 1e-9);
}

// optimizer.gradient_clip is read and range-checked, the key named in the error
TEST(OptimizerTest, GradientClipConfigKey) {
  nlohmann::json j =
      steer::load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_stiffness.json").raw;
  j["optimizer"]["gradient_clip"] = 0.75;
  EXPECT_EQ(steer::parse_config(j).optimizer.gradient_clip, 0.75);
  EXPECT_EQ(steer::parse_config(j).to_json()["optimizer"]["gradient_clip"], 0.75);
  j["optimizer"]["gradient_clip"] = -1.0;
  try {
    steer::parse_config(j);
    ADD_FAILURE() << "negative gradient_clip accepted";
  } catch (const steer::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.gradient_clip"), std::string::npos) << e.what();
  }
}

// the learning-rate schedules: η_0 at step 0, η_f at step N−1, the cosine's midpoint the
// mean of the two, the exponential's the geometric mean; steps past the end keep η_f
TEST(OptimizerTest, LearningRateSchedules) {
  steer::OptimizerConfig c = gd(101);
  c.learning_rate = 0.04;
  c.learning_rate_final = 0.01;
  EXPECT_EQ(steer::scheduled_learning_rate(c, 0), 0.04);
  EXPECT_EQ(steer::scheduled_learning_rate(c, 100), 0.04);  // constant
  c.lr_schedule = "cosine";
  EXPECT_DOUBLE_EQ(steer::scheduled_learning_rate(c, 0), 0.04);
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 50), 0.025, 1e-15);
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 100), 0.01, 1e-15);
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 500), 0.01, 1e-15);
  // a quarter of the way: ½(1 + cos(π/4)) of the span above η_f
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 25), 0.01 + 0.03 * 0.5 * (1 + std::sqrt(0.5)),
              1e-15);
  c.lr_schedule = "exponential";
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 0), 0.04, 1e-15);
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 50), 0.02, 1e-15);
  EXPECT_NEAR(steer::scheduled_learning_rate(c, 100), 0.01, 1e-15);

  // the stepper takes the scheduled size: gd with unit gradients moves by Σ η_t
  QuadraticProblem p({{100.0, 100.0}}, {1.0, 1.0}, {-1e3, -1e3}, {1e3, 1e3}, {0.0, 0.0});
  c.lr_schedule = "cosine";
  c.iterations = 5;
  steer::GradientStepper st(c, 1, 2);
  std::vector<double> v = {0.0, 0.0}, expect = v;
  for (int t = 0; t < 5; ++t) {
    std::vector<double> g = {1.0, -2.0};
    st.step(p, v, g);
    expect[0] -= steer::scheduled_learning_rate(c, t) * 1.0;
    expect[1] += steer::scheduled_learning_rate(c, t) * 2.0;
  }
  EXPECT_EQ(v, expect);
  // η_0 + … + η_4 = 0.04 + η_1 + 0.025 + η_3 + 0.01, and η_1 + η_3 = 0.02 + 0.03 = 0.05
  EXPECT_NEAR(v[0], -0.125, 1e-15);
  EXPECT_NEAR(v[0],
              -(0.04 + 0.025 + 0.01 + (0.01 + 0.03 * 0.5 * (1 + std::sqrt(0.5))) +
                (0.01 + 0.03 * 0.5 * (1 - std::sqrt(0.5)))),
              1e-15);
}

// learning_rate_schedule / learning_rate_final are read, range-checked and echoed, in the
// optimizer and the compare sections, with the key named in the error
TEST(OptimizerTest, LearningRateScheduleConfigKeys) {
  using steer::testing::expect_config_error;
  nlohmann::json j =
      steer::load_config(std::string(STEER_SOURCE_DIR) + "/configs/soft_walker_stiffness.json").raw;
  j["optimizer"]["learning_rate_schedule"] = "cosine";
  j["optimizer"]["learning_rate_final"] = 0.003;
  const steer::ExperimentConfig c = steer::parse_config(j);
  EXPECT_EQ(c.optimizer.lr_schedule, "cosine");
  EXPECT_EQ(c.optimizer.learning_rate_final, 0.003);
  EXPECT_EQ(c.to_json()["optimizer"]["learning_rate_schedule"], "cosine");
  EXPECT_EQ(c.to_json()["optimizer"]["learning_rate_final"], 0.003);

  nlohmann::json bad = j;
  bad["optimizer"]["learning_rate_final"] = 0.5;  // above learning_rate 0.03
  expect_config_error(bad, {"optimizer.learning_rate_final", "0.03"});
  bad = j;
  bad["optimizer"].erase("learning_rate_final");
  expect_config_error(bad, {"optimizer.learning_rate_final", "missing"});
  bad = j;
  bad["optimizer"]["learning_rate_schedule"] = "step";
  expect_config_error(bad, {"optimizer.learning_rate_schedule", "cosine"});
  bad = j;
  bad["optimizer"]["learning_rate_schedule"] = "exponential";
  bad["optimizer"]["learning_rate_final"] = 0.0;  // the exponential needs η_f > 0
  expect_config_error(bad, {"optimizer.learning_rate_final"});
  bad = j;
  bad["optimizer"]["learning_rate_schedule"] = "constant";
  expect_config_error(bad, {"optimizer.learning_rate_final", "constant"});
  bad = j;
  bad["optimizer"]["method"] = "lbfgsb";
  bad["optimizer"].erase("gradient_clip");
  expect_config_error(bad, {"optimizer.learning_rate_schedule", "lbfgsb"});

  nlohmann::json k = j;
  k["compare"]["learning_rate_schedule"] = "exponential";
  k["compare"]["learning_rate_final"] = 0.001;
  const steer::ExperimentConfig ck = steer::parse_config(k);
  EXPECT_EQ(ck.compare.lr_schedule, "exponential");
  EXPECT_EQ(ck.compare.learning_rate_final, 0.001);
  k["compare"]["learning_rate_final"] = 0.05;
  expect_config_error(k, {"compare.learning_rate_final"});
}
