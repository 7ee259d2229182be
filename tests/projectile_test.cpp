// include/steer/models/projectile.h: the generic gradient suite, the worked example's
// closed form, and the landing loss's dependence on v_y.
#include "steer/models/projectile.h"

#include <gtest/gtest.h>

#include <cmath>

#include "gradient_suite.h"

namespace steer::testing {
namespace {

Projectile projectile(int dim, int ground, double dt = 0.01) {
  Projectile m;
  m.dim = dim;
  m.ground = ground;
  m.dt = dt;
  return m;
}

// θ = (g, c, m, k, d, w)
std::vector<double> params(double drag, double k = 1e3, double d = 5.0, double w = 1e-2, double mass = 1.3) {
  return {9.81, drag, mass, k, d, w};
}

struct ProjectileCases {
  using Model = Projectile;
  static std::vector<StepCase<Projectile>> step_cases() {
    const int N = Projectile::kGroundNone, P = Projectile::kGroundPenalty;
    return {
        {"2d free flight", projectile(2, N), {0.1, 0.7, 2.5, 1.0}, {0.3, -0.2}, params(0.0)},
        {"2d drag", projectile(2, N), {0.1, 0.7, 2.5, -1.0}, {0.3, -0.2}, params(0.4)},
        {"3d drag", projectile(3, N), {0.1, 0.7, -0.2, 2.5, -1.0, 0.8}, {0.3, -0.2, 0.1}, params(0.4)},
        // |v| = 0 under drag: ∂(|v| v)/∂v = 0 there, and nothing may be NaN
        {"zero velocity under drag", projectile(2, N), {0.1, 0.7, 0.0, 0.0}, {0.0, 0.0}, params(0.4)},
        {"3d zero velocity under drag", projectile(3, N), {0.1, 0.7, 0.0, 0.0, 0.0, 0.0}, {0.1, 0.0, 0.0}, params(0.4)},
        {"penalty ground above", projectile(2, P), {0.1, 0.05, 1.0, -2.0}, {0.0, 0.0}, params(0.1)},
        {"penalty ground in contact", projectile(2, P), {0.1, -0.004, 1.0, -2.0}, {0.0, 0.0}, params(0.1)},
        // contact onset: exactly at y = 0, and with a narrow smoothing width
        {"penalty ground onset", projectile(2, P), {0.1, 0.0, 1.0, -2.0}, {0.0, 0.0}, params(0.1)},
        {"penalty ground narrow width", projectile(2, P, 0.002), {0.1, -1e-4, 1.0, -2.0}, {0.0, 0.0}, params(0.1, 1e4, 5.0, 1e-4), 1e-4},
        {"3d penalty ground", projectile(3, P), {0.1, -0.01, 0.2, 1.0, -2.0, 0.3}, {0.5, 1.0, -0.5}, params(0.2)},
    };
  }
  static std::vector<RolloutCase<Projectile>> rollout_cases() {
    std::vector<RolloutCase<Projectile>> out;
    {
      RolloutCase<Projectile> c;
      c.name = "2d drag, terminal + effort";
      c.model = projectile(2, Projectile::kGroundNone);
      c.loss.n_terminal = 2;
      c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 2.0, c.loss.terminal_weight[0] = 1.0;
      c.loss.terminal_index[1] = 3, c.loss.terminal_target[1] = -1.0, c.loss.terminal_weight[1] = 0.5;
      c.loss.effort_weight = 0.01;
      c.steps = 60;
      c.x0 = {0.0, 0.0, 2.5, 1.0};
      c.u.resize(size_t(c.steps) * 2);
      for (size_t i = 0; i < c.u.size(); ++i) c.u[i] = 0.3 * std::sin(0.37 * double(i));
      c.p = params(0.3);
      out.push_back(c);
    }
    {
      RolloutCase<Projectile> c;
      c.name = "2d bouncing on the penalty ground";
      c.model = projectile(2, Projectile::kGroundPenalty, 0.002);
      c.loss.n_terminal = 2;
      c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 1.0, c.loss.terminal_weight[0] = 1.0;
      c.loss.terminal_index[1] = 1, c.loss.terminal_target[1] = 0.3, c.loss.terminal_weight[1] = 1.0;
      c.steps = 300;
      c.checkpoint_every = 17;
      c.x0 = {0.0, 0.2, 1.0, 0.0};
      c.u.assign(size_t(c.steps) * 2, 0.1);
      c.p = params(0.1, 300.0, 2.0, 0.02);
      out.push_back(c);
    }
    {
      RolloutCase<Projectile> c;
      c.name = "3d drag, landing loss with time of impact";
      c.model = projectile(3, Projectile::kGroundNone);
      c.loss.landing = true;
      c.loss.n_landing = 2;
      c.loss.landing_index[0] = 0, c.loss.landing_target[0] = 1.5;
      c.loss.landing_index[1] = 2, c.loss.landing_target[1] = -0.5;
      c.steps = 150;
      c.checkpoint_every = 12;
      c.x0 = {0.0, 0.5, 0.0, 2.0, 2.0, -0.3};
      c.u.assign(size_t(c.steps) * 3, 0.05);
      c.p = params(0.2);
      out.push_back(c);
    }
    return out;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Projectile, GradientSuite, ::testing::Types<ProjectileCases>);

namespace {

RolloutCase<Projectile> worked_example(double vx, double vy) {
  RolloutCase<Projectile> c;
  c.model = projectile(2, Projectile::kGroundNone);
  c.loss.n_terminal = 1;
  c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 6.0, c.loss.terminal_weight[0] = 1.0;
  c.steps = 300;
  c.checkpoint_every = 18;
  c.x0 = {0.0, 0.0, vx, vy};
  c.u.assign(600, 0.0);
  c.p = params(0.0);
  return c;
}

// x_T = T·dt·v_x = 3 v_x, so ∂½(x_T − 6)²/∂v_x = 3 (3 v_x − 6) = 4.5 at v_x = 2.5, and 0 for v_y
TEST(Projectile, WorkedExampleGradientMatchesClosedForm) {
  double loss = 0;
  std::vector<double> g = rollout_gradient(worked_example(2.5, 1.0), false, 18, &loss);
  EXPECT_NEAR(loss, 0.5 * 1.5 * 1.5, 1e-12);
  EXPECT_NEAR(g[2], 4.5, 4.5e-9);  // 1e-9 relative
  EXPECT_EQ(g[3], 0.0);            // v_y does not reach x_T at all
  EXPECT_NEAR(g[0], 1.5, 1.5e-9);  // ∂L/∂x_0 = x_T − 6
}

// landing point x_land = x_e + s (x_{e+1} − x_e) moves with v_y through the flight time, so
// ∂L/∂v_y ≠ 0; its sign: more v_y, longer flight, farther landing, so with the target short
// of the landing point (here the origin) the gradient is positive
TEST(Projectile, LandingLossDependsOnVerticalVelocity) {
  RolloutCase<Projectile> c = worked_example(2.5, 1.0);
  c.x0[1] = 0.5;
  c.loss = Loss{};
  c.loss.landing = true;
  c.loss.n_landing = 1;
  c.loss.landing_index[0] = 0;
  c.loss.landing_target[0] = 0.0;
  std::vector<double> g = rollout_gradient(c, false, 18);
  std::vector<double> fd = rollout_fd(c);
  EXPECT_GT(g[3], 0.1);
  EXPECT_NEAR(g[3], fd[3], 1e-6 * std::fabs(g[3]));
  EXPECT_NEAR(g[2], fd[2], 1e-6 * std::fabs(g[2]));
  // continuous-time reference: t* = (v_y + sqrt(v_y² + 2 g y0))/g, x = v_x t*; the gradient
  // of the discrete landing point agrees with it to O(dt)
  const double gr = 9.81, vy = 1.0, y0 = 0.5, vx = 2.5;
  const double disc = std::sqrt(vy * vy + 2 * gr * y0);
  const double t = (vy + disc) / gr;
  const double dt_dvy = (1 + vy / disc) / gr;
  const double dL_dvy = (vx * t - 0.0) * vx * dt_dvy;
  EXPECT_NEAR(g[3], dL_dvy, 0.05 * std::fabs(dL_dvy));
}

// no crossing within the horizon: the landing term falls back to x_T and says so
TEST(Projectile, LandingWithoutCrossingUsesFinalState) {
  RolloutCase<Projectile> c = worked_example(1.0, 50.0);
  c.steps = 20;
  c.u.assign(40, 0.0);
  c.loss = Loss{};
  c.loss.landing = true;
  c.loss.n_landing = 1;
  c.loss.landing_index[0] = 0;
  c.loss.landing_target[0] = 0.0;
  Batch<double> b;
  b.resize(1, 4, 2, 6, c.steps);
  b.x0 = c.x0;
  b.theta = c.p;
  RolloutShape sh;
  sh.steps = c.steps;
  sh.checkpoint_every = 5;
  BatchResult<double> out;
  cpu_run_batch<Projectile, double>(c.model, c.loss, sh, b, true, out, 1);
  EXPECT_EQ(out.diag[0].event_step, -1);
  // x_T = 20 · 0.01 · 1.0 = 0.2, L = ½ 0.2², ∂L/∂v_x = 0.2 · 0.2
  EXPECT_NEAR(out.loss[0], 0.02, 1e-12);
  EXPECT_NEAR(out.grad_x0[2], 0.04, 1e-12);
}

// the contact point is reported active only while penetrating, and only with a ground
TEST(Projectile, ContactFollowsPenetration) {
  Projectile m = projectile(2, Projectile::kGroundPenalty);
  std::vector<double> below = {0, -0.01, 0, 0}, above = {0, 0.01, 0, 0};
  EXPECT_EQ(m.num_contacts(), 1);
  std::vector<double> p = params(0.0);
  EXPECT_TRUE(m.in_contact<double>(view(below.data()), view(p.data()), 0));
  EXPECT_FALSE(m.in_contact<double>(view(above.data()), view(p.data()), 0));
  m.ground = Projectile::kGroundNone;
  EXPECT_EQ(m.num_contacts(), 0);
}

}  // namespace
}  // namespace steer::testing
