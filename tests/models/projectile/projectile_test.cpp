// include/steer/models/projectile.h: the generic gradient suite (including the hard penalty
// law, the approach-only damping and the wall), the worked example's closed form, the landing
// loss's dependence on v_y, and the contact laws' values.
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

// a projectile with Warp's contact law (damping only while approaching) and a wall x = X
// with normal s x̂
Projectile walled(int dim, int ground, int normal, int law = Projectile::kDampApproach,
                  double dt = 0.01) {
  Projectile m = projectile(dim, ground, dt);
  m.wall = Projectile::kGroundPenalty;
  m.wall_normal = normal;
  m.damping_law = law;
  return m;
}

// the same with the hard penalty law (the smoothing width w in θ is then unused)
Projectile hard(Projectile m) {
  m.contact = Projectile::kContactHard;
  return m;
}

// the same with the particle's radius r [m] and the wall's position X [m]
Projectile placed(Projectile m, double radius, double wall_x = 0.0) {
  m.radius = radius;
  m.wall_position = wall_x;
  return m;
}

// θ = (g, c, m, k, d, w)
std::vector<double> params(double drag, double k = 1e3, double d = 5.0, double w = 1e-2,
                           double mass = 1.3) {
  return {9.81, drag, mass, k, d, w};
}

// Warp's example_bounce scene (configs/warp_bounce.json) with mass m [kg] and the contact law's
// k, d scaled by m: 0.6 s in `steps` steps (288: 1/480 s) from (−0.5, 1, 0) at (5, −5, 0) m/s;
// terminal loss |x_T − (−2, 1.5, 0)|² (weight 2 in ½ w e²)
RolloutCase<Projectile> warp_bounce_case(double mass, int steps = 288) {
  RolloutCase<Projectile> c;
  c.name = "3d bounce off the hard ground and wall, Warp's law, m = " + std::to_string(mass) +
           ", T = " + std::to_string(steps);
  c.model = placed(
      hard(walled(3, Projectile::kGroundPenalty, -1, Projectile::kDampApproach, 0.6 / steps)), 0.1,
      1.75);
  c.loss.n_terminal = 3;
  const double target[3] = {-2.0, 1.5, 0.0};
  for (int i = 0; i < 3; ++i) {
    c.loss.terminal_index[i] = i, c.loss.terminal_target[i] = target[i],
    c.loss.terminal_weight[i] = 2.0;
  }
  c.steps = steps;
  c.checkpoint_every = 17;
  c.x0 = {-0.5, 1.0, 0.0, 5.0, -5.0, 0.0};
  c.u.assign(size_t(c.steps) * 3, 0.0);
  c.p = {9.80665, 0.0, mass, 1e4 * mass, 10.0 * mass, 1e-3};
  return c;
}

struct ProjectileCases {
  using Model = Projectile;
  static std::vector<StepCase<Projectile>> step_cases() {
    const int N = Projectile::kGroundNone, P = Projectile::kGroundPenalty;
    return {
        {"2d free flight", projectile(2, N), {0.1, 0.7, 2.5, 1.0}, {0.3, -0.2}, params(0.0)},
        {"2d drag", projectile(2, N), {0.1, 0.7, 2.5, -1.0}, {0.3, -0.2}, params(0.4)},
        {"3d drag",
         projectile(3, N),
         {0.1, 0.7, -0.2, 2.5, -1.0, 0.8},
         {0.3, -0.2, 0.1},
         params(0.4)},
        // |v| = 0 under drag: ∂(|v| v)/∂v = 0 there, and nothing may be NaN
        {"zero velocity under drag",
         projectile(2, N),
         {0.1, 0.7, 0.0, 0.0},
         {0.0, 0.0},
         params(0.4)},
        {"3d zero velocity under drag",
         projectile(3, N),
         {0.1, 0.7, 0.0, 0.0, 0.0, 0.0},
         {0.1, 0.0, 0.0},
         params(0.4)},
        {"penalty ground above", projectile(2, P), {0.1, 0.05, 1.0, -2.0}, {0.0, 0.0}, params(0.1)},
        {"penalty ground in contact",
         projectile(2, P),
         {0.1, -0.004, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1)},
        // contact onset: exactly at y = 0, and with a narrow smoothing width
        {"penalty ground onset", projectile(2, P), {0.1, 0.0, 1.0, -2.0}, {0.0, 0.0}, params(0.1)},
        {"penalty ground narrow width",
         projectile(2, P, 0.002),
         {0.1, -1e-4, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1, 1e4, 5.0, 1e-4),
         1e-4},
        {"3d penalty ground",
         projectile(3, P),
         {0.1, -0.01, 0.2, 1.0, -2.0, 0.3},
         {0.5, 1.0, -0.5},
         params(0.2)},
        // the hard law: in contact, out of contact; every kink (c = 0, v_n = 0) is ≥ 1e-3 away
        // from the case, far beyond the FD step; w = 1e-2 is in θ but unused (its derivative 0)
        {"hard ground in contact",
         hard(projectile(2, P)),
         {0.1, -0.004, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1)},
        {"hard ground separating",
         hard(projectile(2, P)),
         {0.1, -0.004, 1.0, 2.0},
         {0.0, 0.0},
         params(0.1)},
        {"hard ground above",
         hard(projectile(2, P)),
         {0.1, 0.05, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1)},
        // the particle's radius: the ground acts on its surface, y − r < 0
        {"hard ground, radius",
         placed(hard(projectile(2, P)), 0.1),
         {0.1, 0.097, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"smooth ground, radius",
         placed(projectile(2, P), 0.1),
         {0.1, 0.097, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        // damping only while approaching (v_n < 0): approaching, then separating
        {"approach law, hard, approaching",
         placed(hard(walled(2, P, -1)), 0.0, 5.0),
         {0.1, -0.004, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"approach law, hard, separating",
         placed(hard(walled(2, P, -1)), 0.0, 5.0),
         {0.1, -0.004, 1.0, 2.0},
         {0.0, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"approach law, smooth, approaching",
         placed(walled(2, P, -1), 0.0, 5.0),
         {0.1, -0.004, 1.0, -2.0},
         {0.0, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"approach law, smooth, separating",
         placed(walled(2, P, -1), 0.0, 5.0),
         {0.1, -0.004, 1.0, 2.0},
         {0.0, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        // the wall: normal −x (the particle keeps to x < X − r) and +x (x > X + r), hard and
        // smooth, approaching and separating, alone and with the ground
        {"wall -x hard, approaching",
         placed(hard(walled(2, N, -1)), 0.1, 1.75),
         {1.67, 0.5, 3.0, -1.0},
         {0.2, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"wall -x hard, separating",
         placed(hard(walled(2, N, -1)), 0.1, 1.75),
         {1.67, 0.5, -3.0, -1.0},
         {0.2, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"wall -x hard, clear",
         placed(hard(walled(2, N, -1)), 0.1, 1.75),
         {1.6, 0.5, 3.0, -1.0},
         {0.2, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"wall +x smooth, approaching",
         placed(walled(2, N, 1), 0.0, -1.0),
         {-0.995, 0.5, -3.0, 1.0},
         {0.2, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"wall +x smooth, always law",
         placed(walled(2, N, 1, Projectile::kDampAlways), 0.0, -1.0),
         {-0.995, 0.5, 3.0, 1.0},
         {0.2, 0.0},
         params(0.1, 1e3, 5.0, 1e-2, 1.3)},
        {"3d ground and wall, Warp's law, both in contact",
         placed(hard(walled(3, P, -1)), 0.1, 1.75),
         {1.67, 0.095, 0.2, 3.0, -2.0, 0.3},
         {0.5, 1.0, -0.5},
         params(0.2, 1e4, 10.0, 1e-3, 1.0)},
    };
  }
  static std::vector<RolloutCase<Projectile>> rollout_cases() {
    std::vector<RolloutCase<Projectile>> out;
    {
      RolloutCase<Projectile> c;
      c.name = "2d drag, terminal + effort";
      c.model = projectile(2, Projectile::kGroundNone);
      c.loss.n_terminal = 2;
      c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 2.0,
      c.loss.terminal_weight[0] = 1.0;
      c.loss.terminal_index[1] = 3, c.loss.terminal_target[1] = -1.0,
      c.loss.terminal_weight[1] = 0.5;
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
      c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 1.0,
      c.loss.terminal_weight[0] = 1.0;
      c.loss.terminal_index[1] = 1, c.loss.terminal_target[1] = 0.3,
      c.loss.terminal_weight[1] = 1.0;
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
    {
      // Warp's bounce scene (configs/warp_bounce.json: hard ground and wall, damping only
      // while approaching, radius 0.1 m) with the mass scaled to 10 g and k, d with it (k/m,
      // d/m are Warp's) and steps of 1/120 s (ω h = 0.83): a control u moves x_T by
      // ~h² (T − k) u/m, which at m = 1 kg, h = 1/480 s and ε = 1e-6 N is at the FD's rounding
      // floor (at m = 10 g the FD of u_213,x still missed by 1.4e-6 relative, and agreed to
      // 5e-10 at ε = 1e-3: the rollout is piecewise affine in its inputs); a smaller mass puts
      // ε = 1e-6 kg too close to m. WarpBounceScene below checks the scene itself
      out.push_back(warp_bounce_case(0.01, 72));
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
  b.resize(1, 4, 2, Projectile::kNumParams, c.steps);
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

// Warp's scene itself (m = 1 kg): the hand gradient of x_0 and θ against centered FD
// (ε = 1e-6 max(1, |z|), |fd − g| ≤ 1e-6 max(|g|, |fd|) + 1e-9, float64), the dual reference
// to 1e-12; and the rollout touches the ground and the wall (so every new term is exercised)
TEST(Projectile, WarpBounceScene) {
  const RolloutCase<Projectile> c = warp_bounce_case(1.0);
  double loss = 0;
  std::vector<double> g = rollout_gradient(c, false, c.checkpoint_every, &loss);
  std::vector<double> ref = rollout_gradient(c, true, c.checkpoint_every);
  std::vector<double> fd = rollout_fd(c);
  const int nx = 6, nu = 3, T = c.steps;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], ref[i], 1e-12 * std::max(1.0, inf_norm(ref))) << "input " << i;
  for (int i = 0; i < nx + Projectile::kNumParams; ++i) {
    const size_t j = i < nx ? size_t(i) : size_t(nx + T * nu + (i - nx));
    EXPECT_NEAR(g[j], fd[j], 1e-6 * std::max(std::fabs(g[j]), std::fabs(fd[j])) + 1e-9)
        << "input " << j;
  }
  // the gradient reaches v_x, v_y and the contact law's stiffness and damping
  EXPECT_GT(std::fabs(g[3]), 0.1);
  EXPECT_GT(std::fabs(g[4]), 0.1);
  const size_t p0 = size_t(nx + T * nu);
  EXPECT_NE(g[p0 + Projectile::kGroundStiffness], 0.0);
  EXPECT_NE(g[p0 + Projectile::kGroundDamping], 0.0);
  // the hard law does not read the smoothing width
  EXPECT_EQ(g[p0 + Projectile::kGroundSmoothing], 0.0);
  // both planes are touched: per-step contact flags of the ground (0) and the wall (1)
  Batch<double> b;
  b.resize(1, nx, nu, Projectile::kNumParams, T);
  b.x0 = c.x0;
  b.theta = c.p;
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 17;
  BatchResult<double> out;
  cpu_run_batch<Projectile, double>(c.model, c.loss, sh, b, false, out, 1);
  EXPECT_EQ(out.loss[0], loss);
  EXPECT_GT(out.diag[0].contact_steps, 0);
  int ground_steps = 0, wall_steps = 0;
  std::vector<double> x = c.x0, xn(6);
  auto P = view(const_cast<double*>(c.p.data()));
  for (int k = 0; k < T; ++k) {
    auto vxn = view(xn.data());
    c.model.step<double>(k, view(x.data()), view(const_cast<double*>(c.u.data()) + 3 * k), P, vxn);
    x = xn;
    ground_steps += c.model.in_contact<double>(view(x.data()), P, 0) ? 1 : 0;
    wall_steps += c.model.in_contact<double>(view(x.data()), P, 1) ? 1 : 0;
  }
  EXPECT_GT(ground_steps, 0);
  EXPECT_GT(wall_steps, 0);
  EXPECT_EQ(out.diag[0].contact_steps, ground_steps + wall_steps);
}

// the wall is contact 1 after the ground (contact 0 without a ground); both act on the
// particle's surface (radius r)
TEST(Projectile, WallContactFollowsPenetration) {
  Projectile m = placed(walled(2, Projectile::kGroundPenalty, -1), 0.1, 1.75);
  std::vector<double> p = params(0.0, 1e3, 5.0, 1e-3, 1.3);
  std::vector<double> touching = {1.66, 0.5, 0, 0}, clear = {1.64, 0.5, 0, 0},
                      on_ground = {0.0, 0.09, 0, 0};
  EXPECT_EQ(m.num_contacts(), 2);
  EXPECT_TRUE(m.in_contact<double>(view(touching.data()), view(p.data()), 1));
  EXPECT_FALSE(m.in_contact<double>(view(touching.data()), view(p.data()), 0));
  EXPECT_FALSE(m.in_contact<double>(view(clear.data()), view(p.data()), 1));
  EXPECT_TRUE(m.in_contact<double>(view(on_ground.data()), view(p.data()), 0));
  m.ground = Projectile::kGroundNone;
  EXPECT_EQ(m.num_contacts(), 1);
  EXPECT_TRUE(m.in_contact<double>(view(touching.data()), view(p.data()), 0));
}

// the hard law's values: F = −k c − d D(v_n) for c < 0, else 0, with D(v) = v (always) or
// min(v, 0) (approach); exact in float64 for these binary-exact inputs
TEST(Projectile, HardPenaltyLawValues) {
  Projectile m = hard(Projectile{});
  const double k = 1e4, d = 10.0, c = -0.25, w = 1e-3;
  m.damping_law = Projectile::kDampAlways;
  EXPECT_EQ(m.contact_force(c, -2.0, k, d, w), 2500.0 + 20.0);
  EXPECT_EQ(m.contact_force(c, 2.0, k, d, w), 2500.0 - 20.0);
  EXPECT_EQ(m.contact_force(0.25, -2.0, k, d, w), 0.0);
  m.damping_law = Projectile::kDampApproach;
  EXPECT_EQ(m.contact_force(c, -2.0, k, d, w), 2500.0 + 20.0);
  EXPECT_EQ(m.contact_force(c, 2.0, k, d, w), 2500.0);  // separating: no damping
  EXPECT_EQ(m.contact_force(0.25, -2.0, k, d, w), 0.0);
}

// the smooth law tends to the hard one as w → 0: |F_w − F_0| ≤ k w log 2 + d σ-error, which
// for |c| ≫ w is below 1e-9 relative at w = 1e-9 m
TEST(Projectile, SmoothLawTendsToHardLaw) {
  Projectile m;
  m.damping_law = Projectile::kDampApproach;
  const Projectile mh = hard(m);
  for (double c : {-0.01, -1e-4, 1e-4}) {
    for (double vn : {-1.5, 1.5}) {
      const double f_hard = mh.contact_force(c, vn, 1e4, 10.0, 1e-9);
      const double f_smooth = m.contact_force(c, vn, 1e4, 10.0, 1e-9);
      EXPECT_NEAR(f_smooth, f_hard, 1e-9 * std::max(1.0, std::fabs(f_hard)))
          << "c " << c << " v_n " << vn;
    }
  }
}

// the wall pushes along its normal: normal −x pushes toward −x, +x toward +x; one step from
// rest in contact with the wall alone (no gravity effect on x) gives v_x' = h F_w / m
TEST(Projectile, WallPushesAlongItsNormal) {
  for (int s : {-1, 1}) {
    Projectile m = placed(
        hard(walled(2, Projectile::kGroundNone, s, Projectile::kDampApproach, 0.01)), 0.1, 0.0);
    std::vector<double> p = params(0.0, 1e3, 5.0, 1e-3, 2.0);
    // gap c = s (x − X) − r = −0.05 for x = s · 0.05
    std::vector<double> x = {s * 0.05, 1.0, 0.0, 0.0}, u = {0.0, 0.0}, xn(4);
    auto vxn = view(xn.data());
    m.step<double>(0, view(x.data()), view(u.data()), view(p.data()), vxn);
    // F = −k c = 50 N along s x̂; v_x' = 0.01 · 50 / 2
    EXPECT_NEAR(xn[2], s * 0.25, 1e-15);
  }
}

}  // namespace
}  // namespace steer::testing
