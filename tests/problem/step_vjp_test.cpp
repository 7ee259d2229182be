// BatchRunner::adj_step (src/problem/batch_runner.h), the per-step API's vector-Jacobian product
// (Python's Simulator.step_vjp, steer.torch.step): for a random cotangent λ = x̄_{k+1} and a random
// direction d = (d_x, d_u, d_θ), x̄·d_x + ū·d_u + θ̄·d_θ must equal the central difference
// λ·(f(z + εd) − f(z − εd))/(2ε) of the runner's own step, on every model family: the
// projectile with drag on its compliant ground, DiffTaichi's robot A (mass-spring), the Panda
// (implicitfast servos), the quadruped in contact, and the walker with model.morphology (its
// θ map's adjoint). Float64, ε = 1e-6 on variables scaled by max(|v|, 1): truncation ~ε²,
// rounding ~1e-16/ε, so the tolerance is 1e-6 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "problem/batch_runner.h"
#include "problem/problem.h"

namespace {

struct Case {
  const char* config;
  int k;  // the step index checked, after k steps from the config's start
};

void check_vjp(const Case& cs) {
  const steer::ExperimentConfig c =
      steer::load_config(std::string(STEER_SOURCE_DIR) + "/configs/" + cs.config);
  steer::ExperimentConfig c64 = c;
  c64.precision = "float64";
  steer::RunnerOptions o;
  o.every_parameter_gradient = true;
  const std::unique_ptr<steer::BatchRunner> r =
      steer::make_runner(c64, steer::BackendKind::kCpu, o);
  const steer::Batch<double> b = steer::build_batch(c64);
  const int nx = r->nx(), nu = r->nu(), np = r->np();
  std::vector<double> x(b.x0_of(0), b.x0_of(0) + nx), xn(static_cast<size_t>(nx));
  const std::vector<double> th(b.theta_of(0), b.theta_of(0) + np);
  auto control = [&](int k) {
    return std::vector<double>(b.u_of(0) + size_t(k) * nu, b.u_of(0) + size_t(k + 1) * nu);
  };
  for (int k = 0; k < cs.k; ++k) {
    r->step(k, x.data(), control(k).data(), th.data(), xn.data());
    x.swap(xn);
  }
  std::vector<double> u = control(cs.k);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01;
  std::vector<double> lam(static_cast<size_t>(nx)), dx(static_cast<size_t>(nx)),
      du(static_cast<size_t>(nu)), dp(static_cast<size_t>(np));
  for (auto& v : lam) v = n01(rng);
  // directions scaled by each value's size, so that a stiffness in N/m and an angle in rad move
  // alike
  for (int i = 0; i < nx; ++i) dx[size_t(i)] = n01(rng) * std::max(std::fabs(x[size_t(i)]), 1.0);
  for (int i = 0; i < nu; ++i) du[size_t(i)] = n01(rng) * std::max(std::fabs(u[size_t(i)]), 1.0);
  for (int i = 0; i < np; ++i) dp[size_t(i)] = n01(rng) * std::max(std::fabs(th[size_t(i)]), 1.0);
  std::vector<double> ax(static_cast<size_t>(nx), 0.0), au(static_cast<size_t>(nu), 0.0),
      ap(static_cast<size_t>(np), 0.0);
  r->adj_step(cs.k, x.data(), u.data(), th.data(), lam.data(), ax.data(), au.data(), ap.data());
  double adjoint = 0;
  for (int i = 0; i < nx; ++i) adjoint += ax[size_t(i)] * dx[size_t(i)];
  for (int i = 0; i < nu; ++i) adjoint += au[size_t(i)] * du[size_t(i)];
  for (int i = 0; i < np; ++i) adjoint += ap[size_t(i)] * dp[size_t(i)];
  auto f = [&](double e) {
    std::vector<double> xs = x, us = u, ps = th, out(static_cast<size_t>(nx));
    for (int i = 0; i < nx; ++i) xs[size_t(i)] += e * dx[size_t(i)];
    for (int i = 0; i < nu; ++i) us[size_t(i)] += e * du[size_t(i)];
    for (int i = 0; i < np; ++i) ps[size_t(i)] += e * dp[size_t(i)];
    r->step(cs.k, xs.data(), us.data(), ps.data(), out.data());
    double s = 0;
    for (int i = 0; i < nx; ++i) s += lam[size_t(i)] * out[size_t(i)];
    return s;
  };
  const double eps = 1e-6, fd = (f(eps) - f(-eps)) / (2 * eps);
  EXPECT_GT(std::fabs(fd), 1e-8) << cs.config;
  EXPECT_NEAR(adjoint, fd, 1e-6 * std::max(std::fabs(fd), 1.0)) << cs.config << " at step " << cs.k;
  // accumulated, not assigned: a second call doubles the outputs
  std::vector<double> ax2 = ax;
  r->adj_step(cs.k, x.data(), u.data(), th.data(), lam.data(), ax2.data(), au.data(), ap.data());
  for (int i = 0; i < nx; ++i) EXPECT_DOUBLE_EQ(ax2[size_t(i)], 2 * ax[size_t(i)]);
}

TEST(StepVjp, ProjectileOnItsGround) { check_vjp({"projectile_ground_penalty.json", 40}); }
TEST(StepVjp, MassSpringRobotA) { check_vjp({"difftaichi_robot_a.json", 60}); }
TEST(StepVjp, PandaServos) { check_vjp({"panda.json", 20}); }
TEST(StepVjp, QuadrupedInContact) { check_vjp({"quadruped_walk.json", 30}); }
TEST(StepVjp, WalkerThroughItsMorphologyMap) { check_vjp({"walker_legs.json", 30}); }

}  // namespace
