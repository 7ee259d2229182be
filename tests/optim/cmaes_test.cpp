// src/optim/cmaes.h: default strategy parameters against Hansen's tutorial, convergence on the
// sphere and Rosenbrock within stated budgets, bounds, determinism, and the Problem driver.
#include "optim/cmaes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "optimizer_test_problems.h"

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using steer_test_problems::QuadraticProblem;
using steer_test_problems::RosenbrockProblem;

// f(x) = Σ x_i², one column per candidate
void sphere(const MatrixXd& X, VectorXd& f) { f = X.colwise().squaredNorm().transpose(); }

void rosenbrock(const MatrixXd& X, VectorXd& f) {
  for (int k = 0; k < X.cols(); ++k) {
    const VectorXd x = X.col(k);
    f[k] = RosenbrockProblem::rosenbrock(x.data(), int(x.size()), nullptr);
  }
}

steer::CmaesOptions options(double sigma0, std::uint64_t seed) {
  steer::CmaesOptions o;
  o.sigma0 = sigma0;
  o.seed = seed;
  o.target_f = 1e-8;
  return o;
}

}  // namespace

TEST(CmaesTest, DefaultStrategyParametersForTenVariables) {
  const steer::Cmaes es(VectorXd::Zero(10), steer::CmaesOptions{});
  // tutorial Table 1 at n = 10: λ = 4 + ⌊3 ln 10⌋ = 4 + ⌊6.91⌋ = 10, µ = ⌊λ/2⌋ = 5
  EXPECT_EQ(es.lambda(), 10);
  EXPECT_EQ(es.mu(), 5);
  ASSERT_EQ(es.weights().size(), 5);
  EXPECT_NEAR(es.weights().sum(), 1.0, 1e-15);
  // w'_i = ln 5.5 − ln i; µ_eff = (Σw')²/Σw'² = 3.7362²/4.4074 ≈ 3.1672
  EXPECT_NEAR(es.mu_eff(), 3.1672, 1e-4);
  EXPECT_NEAR(es.weights()[0], std::log(5.5) / (5 * std::log(5.5) - std::log(120.0)), 1e-15);
  for (int i = 1; i < 5; ++i) EXPECT_LT(es.weights()[i], es.weights()[i - 1]);
  EXPECT_GT(es.weights()[4], 0.0);
  // the learning rates from their formulas at n = 10, µ_eff = 3.1672 (hand-evaluated)
  const double me = es.mu_eff();
  EXPECT_NEAR(es.c_sigma(), (me + 2) / (10 + me + 5), 1e-15);
  EXPECT_NEAR(es.c_sigma(), 0.2844, 1e-4);
  EXPECT_NEAR(es.d_sigma(), 1 + es.c_sigma(), 1e-15);  // √((µ_eff − 1)/11) < 1: no extra damping
  EXPECT_NEAR(es.c_c(), 0.29499, 1e-5);                // (4 + 0.31673)/(14 + 0.63346)
  EXPECT_NEAR(es.c_1(), 2 / (11.3 * 11.3 + me), 1e-15);
  EXPECT_NEAR(es.c_1(), 0.01528, 1e-5);
  EXPECT_NEAR(es.c_mu(), 2 * (me - 2 + 1 / me) / (144 + me), 1e-15);
  EXPECT_NEAR(es.c_mu(), 0.02015, 1e-5);
  EXPECT_NEAR(es.chi_n(), std::sqrt(10.0) * (1 - 1 / 40.0 + 1 / 2100.0), 1e-15);
  // B, D refreshed every max(1, ⌊1/(10·10·(c_1 + c_µ))⌋) = ⌊1/3.54⌋ → every generation
  EXPECT_EQ(es.eigen_interval(), 1);
  // other dimensions: λ(2) = 4 + ⌊2.08⌋ = 6, λ(100) = 4 + ⌊13.8⌋ = 17
  EXPECT_EQ(steer::cmaes_default_lambda(2), 6);
  EXPECT_EQ(steer::cmaes_default_lambda(100), 17);
  // at n = 1000 (λ = 24): ⌊1/(10⁴ (c_1 + c_µ))⌋ = ⌊8.14⌋
  EXPECT_EQ(steer::Cmaes(VectorXd::Zero(1000), {}).eigen_interval(), 8);
}

TEST(CmaesTest, SphereTenVariables) {
  // from x = (1, …, 1), σ0 = 0.5; observed 1180–1360 evaluations over seeds 1–5
  // (1290, 1180, 1320, 1360, 1350); budget ≈ 2× the largest
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    steer::Cmaes es(VectorXd::Ones(10), options(0.5, seed));
    const steer::CmaesResult r = es.minimize(sphere);
    SCOPED_TRACE(seed);
    EXPECT_EQ(r.stop_reason, "target_f");
    EXPECT_LT(r.best_f, 1e-8);
    EXPECT_LE(r.evaluations, 2700);
    EXPECT_LT(r.best_x.norm(), 1e-4);
  }
}

TEST(CmaesTest, RosenbrockTenVariables) {
  // from x = 0, σ0 = 0.5; observed 5300–6400 evaluations over seeds 1–5
  // (6400, 5430, 5560, 5300, 5950), each at the global minimizer; budget ≈ 2× the largest
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    steer::Cmaes es(VectorXd::Zero(10), options(0.5, seed));
    const steer::CmaesResult r = es.minimize(rosenbrock);
    SCOPED_TRACE(seed);
    EXPECT_EQ(r.stop_reason, "target_f");
    EXPECT_LT(r.best_f, 1e-8);
    EXPECT_LE(r.evaluations, 13000);
    EXPECT_LT((r.best_x - VectorXd::Ones(10)).norm(), 1e-3);  // the global minimizer (1, …, 1)
  }
}

TEST(CmaesTest, HistoryRecordsEveryGeneration) {
  steer::Cmaes es(VectorXd::Ones(10), options(0.5, 7));
  const steer::CmaesResult r = es.minimize(sphere);
  const steer::CmaesHistory& h = r.history;
  ASSERT_EQ(int(h.generation.size()), r.generations);
  ASSERT_EQ(h.best_f.size(), h.generation.size());
  for (size_t g = 0; g < h.generation.size(); ++g) {
    EXPECT_EQ(h.generation[g], int(g) + 1);
    EXPECT_EQ(h.evaluations[g], 10LL * (g + 1));  // λ = 10 per generation
    if (g > 0) {
      EXPECT_LE(h.best_f[g], h.best_f[g - 1]);
    }
  }
  EXPECT_EQ(r.evaluations, h.evaluations.back());
  EXPECT_EQ(r.best_f, h.best_f.back());
  // the first generation samples around f(1, …, 1) = 10 with σ = 0.5: best well above target
  EXPECT_GT(h.best_f.front(), 1.0);
  const nlohmann::json j = steer::to_json(h);
  EXPECT_EQ(j["best_f"].size(), h.best_f.size());
}

TEST(CmaesTest, MaxEvaluationsStops) {
  steer::CmaesOptions o = options(0.5, 1);
  o.max_evaluations = 95;  // 9 generations of 10; a 10th would exceed the budget
  steer::Cmaes es(VectorXd::Zero(10), o);
  const steer::CmaesResult r = es.minimize(rosenbrock);
  EXPECT_EQ(r.stop_reason, "max_evaluations");
  EXPECT_EQ(r.evaluations, 90);
  EXPECT_GT(r.best_f, 1e-8);
}

TEST(CmaesTest, BoundedMinimumOutsideBoxConvergesToFace) {
  // f(x) = Σ (x_i − c_i)² with c outside the box in 4 of 10 coordinates: the minimizer over
  // [−1, 1]^10 is clamp(c), on the faces x_0 = 1, x_1 = −1, x_4 = 1, x_9 = −1
  VectorXd c(10);
  c << 2.0, -3.0, 0.5, -0.25, 1.5, 0.0, 0.75, -0.5, 0.1, -1.2;
  const VectorXd m = c.cwiseMax(-1.0).cwiseMin(1.0);
  const double f_min = (c - m).squaredNorm();  // 1 + 4 + 0.25 + 0.04 = 5.29
  auto shifted = [&](const MatrixXd& X, VectorXd& f) {
    for (int k = 0; k < X.cols(); ++k) {
      // the objective only ever sees points inside the box
      EXPECT_TRUE((X.col(k).array() >= -1.0).all() && (X.col(k).array() <= 1.0).all());
      f[k] = (X.col(k) - c).squaredNorm();
    }
  };
  steer::CmaesOptions o = options(0.5, 3);
  o.target_f = f_min + 1e-10;
  o.lower.assign(10, -1.0);
  o.upper.assign(10, 1.0);
  steer::Cmaes es(VectorXd::Zero(10), o);
  const steer::CmaesResult r = es.minimize(shifted);
  EXPECT_EQ(r.stop_reason, "target_f");
  EXPECT_LT(r.best_f - f_min, 1e-10);
  // observed 2320 evaluations (2310–2740 over seeds 1–5); budget ≈ 2×. The active coordinates
  // sit exactly on the faces: the evaluated points are projections
  EXPECT_LE(r.evaluations, 5000);
  EXPECT_EQ(r.best_x[0], 1.0);
  EXPECT_EQ(r.best_x[1], -1.0);
  EXPECT_EQ(r.best_x[4], 1.0);
  EXPECT_EQ(r.best_x[9], -1.0);
  EXPECT_LT((r.best_x - m).norm(), 1e-5);
  EXPECT_FALSE(steer::Cmaes::method().empty());
}

TEST(CmaesTest, DeterministicForAFixedSeed) {
  auto run = [](std::uint64_t seed) {
    steer::Cmaes es(VectorXd::Zero(10), options(0.5, seed));
    return es.minimize(rosenbrock);
  };
  const steer::CmaesResult a = run(11), b = run(11), c = run(12);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(a.history.best_f, b.history.best_f);  // bitwise
  EXPECT_EQ(a.history.sigma, b.history.sigma);
  EXPECT_TRUE(a.best_x == b.best_x);
  EXPECT_NE(a.history.best_f, c.history.best_f);  // another seed, another path
}

TEST(CmaesTest, AskTellMatchesMinimize) {
  steer::Cmaes driven(VectorXd::Ones(10), options(0.5, 5));
  const steer::CmaesResult r = driven.minimize(sphere);
  steer::Cmaes es(VectorXd::Ones(10), options(0.5, 5));
  VectorXd f(es.lambda());
  while (es.stop_reason().empty()) {
    sphere(es.ask(), f);
    es.tell(f);
  }
  EXPECT_EQ(es.evaluations(), r.evaluations);
  EXPECT_EQ(es.best_f(), r.best_f);
  EXPECT_THROW(es.tell(f), std::logic_error);  // tell without ask
}

TEST(CmaesTest, RejectsBadOptions) {
  steer::CmaesOptions o;
  o.sigma0 = 0;
  EXPECT_THROW(steer::Cmaes(VectorXd::Zero(3), o), std::invalid_argument);
  o = {};
  o.lambda = 1;
  EXPECT_THROW(steer::Cmaes(VectorXd::Zero(3), o), std::invalid_argument);
  o = {};
  o.lower = {0, 0};
  o.upper = {1, 1, 1};
  EXPECT_THROW(steer::Cmaes(VectorXd::Zero(3), o), std::invalid_argument);
  o = {};
  o.lower = {0, 2, 0};
  o.upper = {1, 1, 1};
  EXPECT_THROW(steer::Cmaes(VectorXd::Zero(3), o), std::invalid_argument);
}

TEST(CmaesTest, OptimizeUsesTheBatchAsThePopulation) {
  // one rollout's 2 variables; λ(2) = 6, so the Problem has 6 identical rollouts: center
  // (0.3, −2), box [−1, 1] × [0, 2], minimizer (0.3, 0) on the face v_1 = 0, L = ½·4·2² = 8
  const int lambda = steer::cmaes_default_lambda(2);
  ASSERT_EQ(lambda, 6);
  QuadraticProblem p(std::vector<std::vector<double>>(lambda, {0.3, -2.0}), {1.0, 4.0}, {-1.0, 0.0},
                     {1.0, 2.0}, {0.0, 0.5});
  steer::CmaesOptions o;
  o.sigma0 = 0.5;
  o.seed = 2;
  o.target_f = 8.0 + 1e-12;  // |v_0 − 0.3| < 1.5e-6
  steer::CmaesHistory h;
  int calls = 0;
  const steer::OptimizationResult r = steer::cmaes_optimize(
      p, o, {0.0, 0.5}, [&](int, double) { ++calls; }, &h);
  ASSERT_EQ(r.vars.size(), 12u);
  for (int k = 0; k < lambda; ++k) {
    EXPECT_NEAR(r.vars[2 * k], 0.3, 1.5e-6);
    EXPECT_EQ(r.vars[2 * k + 1], 0.0);    // on the face exactly
    EXPECT_EQ(r.vars[2 * k], r.vars[0]);  // the best point in every row
    EXPECT_NEAR(r.final.loss[k], 8.0, 1e-12);
  }
  // one batched forward pass per generation, plus the final evaluation with gradient
  EXPECT_EQ(p.evaluations, r.iterations + 1);
  EXPECT_EQ(p.gradient_evaluations, 1);
  EXPECT_EQ(calls, r.iterations);
  EXPECT_EQ(int(h.generation.size()), r.iterations);
  EXPECT_EQ(h.evaluations.back(), 6LL * r.iterations);
  EXPECT_LE(h.best_f.back(), 8.0 + 1e-12);
  ASSERT_EQ(int(r.trace.iteration.size()), r.iterations + 1);  // each generation and the final
  EXPECT_EQ(r.trace.iteration.front(), 0);
  EXPECT_EQ(r.trace.iteration.back(), r.iterations);
  EXPECT_EQ(r.trace.loss_rollouts.front().size(), 6u);
  // observed 82 generations (492 evaluations); budget ≈ 2×
  EXPECT_LE(r.iterations, 160);

  // a batch that is not λ is refused, naming both sizes
  QuadraticProblem wrong(std::vector<std::vector<double>>(4, {3.0, -2.0}), {1.0, 4.0}, {-1.0, 0.0},
                         {1.0, 2.0}, {0.0, 0.5});
  EXPECT_THROW(steer::cmaes_optimize(wrong, o, {0.0, 0.5}), std::invalid_argument);
}
