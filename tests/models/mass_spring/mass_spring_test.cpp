// include/steer/models/mass_spring.h: the generic gradient suite on small robots (2D and 3D,
// sinusoid and raw actuation, rest-length and rest-position morphology), singular inputs
// (a zero-length spring, contact onset, zero tangential velocity under friction), and the
// physics the model promises (CSR gather equals a scatter over springs, a spring at rest
// length exerts no force, the CoM loss's gradient).
#include "steer/models/mass_spring.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "gradient_suite.h"
#include "mass_spring_draws.h"
#include "models/mass_spring/mass_spring_robot.h"

namespace steer::testing {
namespace {

// globals: g, ζ, y_g, k_g, d_g, w_g, μ, v_ε, ω
std::vector<double> globals(double ground_height = 0.1) {
  return {9.81, 2.0, ground_height, 3e3, 20.0, 1e-2, 0.8, 0.05, 10.0};
}

Robot two_cells() { return grid_robot({{0, 0}, {1, 0}}, 0.1, {0.1, 0.1}, 1e3, 0.15); }

Robot tetrahedron() {
  Robot r;
  r.dim = 3;
  r.particles = {{0.0, 0.1, 0.0}, {0.1, 0.1, 0.0}, {0.0, 0.1, 0.1}, {0.03, 0.2, 0.03}};
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      const auto& pa = r.particles[a];
      const auto& pb = r.particles[b];
      const double L =
          std::sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) +
                    (pa[2] - pb[2]) * (pa[2] - pb[2]));
      r.springs.push_back({a, b, L * 1.05, 800.0, b == 3 ? 0.1 : 0.0});
    }
  return r;
}

std::vector<double> params_for(const MassSpring& m, const Robot& r, double ground_height = 0.1) {
  return actuated_parameters(m, r, globals(ground_height));
}

struct MassSpringCases {
  using Model = MassSpring;
  static std::vector<StepCase<MassSpring>> step_cases() {
    std::vector<StepCase<MassSpring>> out;
    const Robot r2 = two_cells(), r3 = tetrahedron();
    {
      MassSpring m =
          bind_topology(make_mass_spring(r2, 10, MassSpring::kSinusoid, true, 0.004), r2);
      out.push_back(
          {"2d robot in contact", m, moving_state(m, r2, 0.004), {}, params_for(m, r2), 1.0, 17});
      out.push_back(
          {"2d robot contact onset", m, moving_state(m, r2, 0.0), {}, params_for(m, r2), 1.0, 3});
      // zero tangential velocity under friction: the smoothed sign has a finite slope there
      StepCase<MassSpring> c{"2d robot at rest on the ground",
                             m,
                             moving_state(m, r2, 0.002),
                             {},
                             params_for(m, r2),
                             1.0,
                             5};
      for (int i = 0; i < m.n_particles; ++i) c.x[m.x_vel(i)] = 0.0;
      out.push_back(c);
      // zero-length spring: particles 0 and 1 on top of each other
      StepCase<MassSpring> z{
          "2d zero-length spring", m, moving_state(m, r2, 0.0), {}, params_for(m, r2), 1.0, 9};
      for (int c2 = 0; c2 < 2; ++c2) z.x[m.x_pos(1) + c2] = z.x[m.x_pos(0) + c2];
      z.smooth = false;  // the force jumps from 0 to k L0 in the direction of any perturbation
      out.push_back(z);
    }
    {
      MassSpring m = bind_topology(make_mass_spring(r2, 10, MassSpring::kRaw, true, 0.004), r2);
      std::vector<double> u(m.nu());
      for (int a = 0; a < m.nu(); ++a) u[a] = 0.5 * std::sin(2.0 * a + 1);
      out.push_back(
          {"2d robot raw actuation", m, moving_state(m, r2, 0.003), u, params_for(m, r2), 1.0, 4});
      // DiffTaichi's spring length |d| + 10⁻⁴, and at zero length, where the offset keeps the
      // force 0 and its derivative F/ℓ I finite; the force's curvature there, k L/ε² per metre,
      // is beyond what centered differences resolve, so that case checks hand against dual only
      m.length_offset = 1e-4;
      out.push_back({"2d robot, spring length offset", m, moving_state(m, r2, 0.003), u,
                     params_for(m, r2), 1.0, 4});
      StepCase<MassSpring> z{"2d zero-length spring with a length offset",
                             m,
                             moving_state(m, r2, 0.0),
                             u,
                             params_for(m, r2),
                             1.0,
                             9};
      for (int c2 = 0; c2 < 2; ++c2) z.x[m.x_pos(1) + c2] = z.x[m.x_pos(0) + c2];
      z.smooth = false;
      out.push_back(z);
    }
    {
      MassSpring m = bind_topology(make_mass_spring(r2, 4, MassSpring::kSinusoid, true, 0.004), r2);
      m.rest_from_positions = true;
      out.push_back({"2d robot rest-position morphology",
                     m,
                     moving_state(m, r2, 0.003),
                     {},
                     params_for(m, r2),
                     1.0,
                     11});
    }
    {
      MassSpring m =
          bind_topology(make_mass_spring(r3, 10, MassSpring::kSinusoid, true, 0.004), r3);
      out.push_back({"3d tetrahedron in contact",
                     m,
                     moving_state(m, r3, 0.004),
                     {},
                     params_for(m, r3),
                     1.0,
                     8});
    }
    {
      // the time-of-impact ground: particles 0, 2, 4 land within the step (1 mm above, falling
      // at 1 m/s), particle 1 starts below it (s = 0), the rest fly free; restitution 0.3
      MassSpring m =
          bind_topology(make_mass_spring(r2, 10, MassSpring::kSinusoid, true, 0.004), r2);
      m.impact = true;
      StepCase<MassSpring> c{"2d robot landing on the impact ground",
                             m,
                             moving_state(m, r2, -0.001),
                             {},
                             params_for(m, r2),
                             1.0,
                             6};
      c.p[m.p_global(MassSpring::kRestitution)] = 0.3;
      for (int i = 0; i < m.n_particles; i += 2) c.x[m.x_vel(i) + 1] = -1.0;
      c.x[m.x_pos(1) + 1] = 0.1 - 0.002;
      c.x[m.x_vel(1) + 1] = -0.5;
      out.push_back(c);
      MassSpring m3 =
          bind_topology(make_mass_spring(r3, 10, MassSpring::kSinusoid, true, 0.004), r3);
      m3.impact = true;
      StepCase<MassSpring> d{"3d tetrahedron landing on the impact ground",
                             m3,
                             moving_state(m3, r3, -0.001),
                             {},
                             params_for(m3, r3),
                             1.0,
                             2};
      for (int i = 0; i < m3.n_particles; i += 2) d.x[m3.x_vel(i) + 1] = -1.0;
      out.push_back(d);
    }
    return out;
  }
  static std::vector<RolloutCase<MassSpring>> rollout_cases() {
    std::vector<RolloutCase<MassSpring>> out;
    const Robot r2 = two_cells(), r3 = tetrahedron();
    auto com_loss = [] {
      Loss l;
      l.com = true;
      l.com_axis = 0;
      l.com_weight = -1.0;
      return l;
    };
    {
      RolloutCase<MassSpring> c;
      c.name = "2d robot walking, CoM loss";
      c.model = bind_topology(make_mass_spring(r2, 10, MassSpring::kSinusoid, true, 0.004), r2);
      c.loss = com_loss();
      c.steps = 60;
      c.checkpoint_every = 8;
      c.x0 = rest_state(c.model, r2);
      c.p = params_for(c.model, r2);
      out.push_back(c);
    }
    {
      RolloutCase<MassSpring> c;
      c.name = "2d robot, raw actuation, rest-position morphology";
      c.model = bind_topology(make_mass_spring(r2, 10, MassSpring::kRaw, true, 0.004), r2);
      c.model.rest_from_positions = true;
      c.loss = com_loss();
      c.loss.effort_weight = 1e-3;
      c.steps = 40;
      c.checkpoint_every = 7;
      c.x0 = rest_state(c.model, r2);
      c.u.resize(size_t(c.steps) * c.model.nu());
      for (size_t i = 0; i < c.u.size(); ++i) c.u[i] = 0.4 * std::sin(0.3 * double(i));
      c.p = params_for(c.model, r2);
      out.push_back(c);
    }
    {
      // dropped from 2 cm onto the impact ground with restitution 0.2
      RolloutCase<MassSpring> c;
      c.name = "2d robot on the impact ground, CoM loss";
      c.model = bind_topology(make_mass_spring(r2, 10, MassSpring::kSinusoid, true, 0.004), r2);
      c.model.impact = true;
      c.loss = com_loss();
      c.steps = 60;
      c.checkpoint_every = 8;
      c.x0 = rest_state(c.model, r2);
      for (int i = 0; i < c.model.n_particles; ++i) c.x0[c.model.x_pos(i) + 1] += 0.02;
      c.p = params_for(c.model, r2);
      c.p[c.model.p_global(MassSpring::kRestitution)] = 0.2;
      out.push_back(c);
    }
    {
      // the impact case's robot and drop onto the stick ground (DiffTaichi's time of impact):
      // landing particles stop where they land, the springs pull the others on
      RolloutCase<MassSpring> c = out.back();
      c.name = "2d robot on the stick ground, CoM loss";
      c.model.impact_stick = true;
      // τ = −(y − y_g)/v*_y: a particle landing slowly makes the loss curved on a small scale
      // (at ε = 1e-6 the centered difference is 1.1e-6 off); ε = 1e-7 for inputs below 1
      c.fd_scale = 0.1;
      out.push_back(c);
    }
    {
      // the raw-actuation case's robot, controls and effort with rest lengths as θ and
      // DiffTaichi's spring length |d| + ε, ε = 10⁻⁴, on the penalty ground
      RolloutCase<MassSpring> c = *std::find_if(out.begin(), out.end(), [](const auto& e) {
        return e.name == "2d robot, raw actuation, rest-position morphology";
      });
      c.name = "2d robot, spring length offset, raw actuation, head-particle loss";
      c.model.rest_from_positions = false;
      c.model.length_offset = 1e-4;
      // DiffTaichi's loss, −x_T of particle 0, beside the CoM term: loss.terminal_linear's
      // pair ½ w (x + ½)² − ½ w (x − ½)² with w = −1
      c.loss.n_terminal = 2;
      for (int t = 0; t < 2; ++t) {
        c.loss.terminal_index[t] = c.model.x_pos(0);
        c.loss.terminal_target[t] = t == 0 ? -0.5 : 0.5;
        c.loss.terminal_weight[t] = t == 0 ? -1.0 : 1.0;
      }
      out.push_back(c);
    }
    {
      RolloutCase<MassSpring> c;
      c.name = "3d tetrahedron, CoM loss";
      c.model = bind_topology(make_mass_spring(r3, 10, MassSpring::kSinusoid, true, 0.004), r3);
      c.loss = com_loss();
      c.steps = 50;
      c.checkpoint_every = 9;
      c.x0 = rest_state(c.model, r3);
      c.p = params_for(c.model, r3);
      out.push_back(c);
    }
    return out;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(MassSpring, GradientSuite, ::testing::Types<MassSpringCases>);

namespace {

// the per-particle gather over the CSR adjacency equals a scatter over springs
// DiffTaichi's mass_spring.py spring, written out: impulse = h (ℓ − L) k/ℓ (x_a − x_b) with
// ℓ = |x_a − x_b| + 10⁻⁴ and L = L0 (1 + α act), v_a −= impulse, v_b += impulse (unit masses);
// with spring_length_offset 10⁻⁴, no gravity, ground or damping, one step gives the same
// velocities (1e-15), at 3 cm and at 0 separation
TEST(MassSpring, LengthOffsetIsDiffTaichisSpring) {
  for (double sep : {0.03, 0.0}) {
    Robot r;
    r.particles = {{0.1, 0.2, 0.0}, {0.1 + sep * 0.6, 0.2 + sep * 0.8, 0.0}};
    r.springs = {{0, 1, 0.05, 14000, 0.1}};
    MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kRaw, false, 0.004), r);
    m.length_offset = 1e-4;
    std::vector<double> p =
        nominal_parameters(m, r, 1.0, std::vector<double>(MassSpring::kNumGlobals, 0.0), 0.0);
    std::vector<double> x(m.nx(), 0.0), xn(m.nx()), u = {0.7};
    for (int i = 0; i < 2; ++i)
      for (int c = 0; c < 2; ++c) x[m.x_pos(i) + c] = r.particles[i][c];
    x[m.x_vel(0)] = 0.3, x[m.x_vel(1) + 1] = -0.2;
    m.step<double>(0, x, u, p, xn);
    const double dx = x[m.x_pos(0)] - x[m.x_pos(1)], dy = x[m.x_pos(0) + 1] - x[m.x_pos(1) + 1];
    const double len = std::sqrt(dx * dx + dy * dy) + 1e-4, target = 0.05 * (1 + 0.1 * 0.7);
    const double ix = 0.004 * (len - target) * 14000 / len * dx,
                 iy = 0.004 * (len - target) * 14000 / len * dy;
    EXPECT_NEAR(xn[m.x_vel(0)], 0.3 - ix, 1e-15) << sep;
    EXPECT_NEAR(xn[m.x_vel(0) + 1], 0.0 - iy, 1e-15) << sep;
    EXPECT_NEAR(xn[m.x_vel(1)], 0.0 + ix, 1e-15) << sep;
    EXPECT_NEAR(xn[m.x_vel(1) + 1], -0.2 + iy, 1e-15) << sep;
    if (sep > 0) {
      EXPECT_GT(std::fabs(ix), 1e-3);
    }
  }
}

TEST(MassSpring, GatherEqualsScatter) {
  const Robot r = two_cells();
  MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, false, 0.004), r);
  std::vector<double> x = moving_state(m, r, 0.0), p = params_for(m, r), u;
  std::vector<double> xn(m.nx());
  auto X = view(x.data()), P = view(p.data()), U = view(u.data()), XN = view(xn.data());
  m.step<double>(7, X, U, P, XN);
  // scatter: every spring adds its force to both ends
  std::vector<double> f(size_t(m.n_particles) * 2, 0.0);
  for (int s = 0; s < m.n_springs; ++s) {
    double n[3];
    const double F = m.spring_force<double>(s, 7 * 0.004, X, U, P, n);
    for (int c = 0; c < 2; ++c) {
      f[2 * m.end_a(s) + c] += F * n[c];
      f[2 * m.end_b(s) + c] -= F * n[c];
    }
  }
  const double h = 0.004, decay = std::exp(-p[m.p_global(MassSpring::kVelocityDamping)] * h);
  for (int i = 0; i < m.n_particles; ++i)
    for (int c = 0; c < 2; ++c) {
      double a = f[2 * i + c] / p[m.p_mass(i)] - (c == 1 ? 9.81 : 0.0);
      EXPECT_NEAR(xn[m.x_vel(i) + c], decay * x[m.x_vel(i) + c] + h * a, 1e-12);
    }
}

// a passive spring at its rest length and at rest exerts no force; stretched, it pulls
TEST(MassSpring, SpringAtRestLengthIsForceFree) {
  Robot r;
  r.particles = {{0.0, 1.0, 0.0}, {0.2, 1.0, 0.0}};
  r.springs = {{0, 1, 0.2, 500.0, 0.0}};
  MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, false, 0.01), r);
  std::vector<double> x = rest_state(m, r),
                      p = nominal_parameters(m, r, 1.0, {0, 0, 0, 1, 0, 1, 0, 1, 0}, 0.0), u;
  double n[3];
  EXPECT_NEAR(m.spring_force<double>(0, 0.0, view(x.data()), view(u.data()), view(p.data()), n),
              0.0, 1e-12);
  x[m.x_pos(1)] = 0.3;  // stretched by 0.1 m: tension k ΔL = 50 N, pulling a towards b (+x)
  EXPECT_NEAR(m.spring_force<double>(0, 0.0, view(x.data()), view(u.data()), view(p.data()), n),
              50.0, 1e-12);
  EXPECT_NEAR(n[0], 1.0, 1e-15);
}

// a zero-length spring and contact onset give finite states and gradients through a rollout
TEST(MassSpring, SingularInputsStayFinite) {
  const Robot r = two_cells();
  RolloutCase<MassSpring> c;
  c.model = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004), r);
  c.loss.com = true;
  c.steps = 30;
  c.checkpoint_every = 5;
  c.x0 = rest_state(c.model, r);
  for (int d = 0; d < 2; ++d)
    c.x0[c.model.x_pos(1) + d] = c.x0[c.model.x_pos(0) + d];  // zero length
  c.x0[c.model.x_pos(0) + 1] = 0.1;                           // exactly at the ground height
  c.p = params_for(c.model, r);
  double loss = 0;
  std::vector<double> g = rollout_gradient(c, false, 5, &loss);
  EXPECT_TRUE(std::isfinite(loss));
  for (double v : g) ASSERT_TRUE(std::isfinite(v));
}

// ∂c/∂x_i = m_i / M and ∂c/∂m_i = (x_i − c)/M for the centre of mass
TEST(MassSpring, CenterOfMassGradient) {
  const Robot r = two_cells();
  MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004), r);
  std::vector<double> x = moving_state(m, r, 0.0), p = params_for(m, r);
  std::vector<double> gx(m.nx(), 0.0), gp(m.np(), 0.0);
  auto GX = view(gx.data()), GP = view(gp.data());
  const double c = m.center_of_mass<double>(view(x.data()), view(p.data()), 0);
  m.adj_center_of_mass<double>(view(x.data()), view(p.data()), 0, GX, GP, 1.0);
  double M = 0;
  for (int i = 0; i < m.n_particles; ++i) M += p[m.p_mass(i)];
  for (int i = 0; i < m.n_particles; ++i) {
    EXPECT_NEAR(gx[m.x_pos(i)], p[m.p_mass(i)] / M, 1e-15);
    EXPECT_NEAR(gp[m.p_mass(i)], (x[m.x_pos(i)] - c) / M, 1e-15);
  }
}

// the impact ground: a falling particle crossing y_g inside the step is put back on the
// ground at the impact fraction and leaves with −e times its vertical velocity; a robot
// dropped on it comes to rest on it without sinking
TEST(MassSpring, ImpactGroundReflectsAndHolds) {
  Robot r;
  r.particles = {{0.0, 0.1005, 0.0}, {0.5, 1.0, 0.0}};
  r.springs = {{0, 1, 1.0, 1e-3, 0.0}};  // a negligible spring: particle 0 is nearly free
  MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.01), r);
  m.impact = true;
  std::vector<double> p =
      nominal_parameters(m, r, 1.0, {0.0, 0.0, 0.1, 1e4, 0.0, 1e-3, 0.0, 0.05, 0.0, 0.5}, 0.0);
  std::vector<double> x = rest_state(m, r), xn(m.nx()), u;
  x[m.x_vel(0) + 1] = -0.1;  // y* = 0.1005 − 0.001 < 0.1: lands at s = 0.5
  auto XN = view(xn.data());
  m.step<double>(0, view(x.data()), view(u.data()), view(p.data()), XN);
  EXPECT_NEAR(xn[m.x_vel(0) + 1], 0.05, 1e-6);                     // −e v*_y with e = 0.5
  EXPECT_NEAR(xn[m.x_pos(0) + 1], 0.1 + 0.5 * 0.01 * 0.05, 1e-6);  // y_g + (1 − s) h v'_y
  // a grid robot dropped from 5 cm with e = 0 rests on the ground after 1 s
  const Robot g = two_cells();
  MassSpring mg = bind_topology(make_mass_spring(g, 10, MassSpring::kSinusoid, true, 0.004), g);
  mg.impact = true;
  std::vector<double> pg =
      nominal_parameters(mg, g, 1.0, {9.81, 2.0, 0.1, 1e4, 0.0, 1e-3, 0.8, 0.05, 10.0, 0.0}, 0.5);
  std::vector<double> a = rest_state(mg, g), b(mg.nx());
  for (int i = 0; i < mg.n_particles; ++i) a[mg.x_pos(i) + 1] += 0.05;
  for (int k = 0; k < 250; ++k) {
    auto B = view(b.data());
    mg.step<double>(k, view(a.data()), view(u.data()), view(pg.data()), B);
    std::swap(a, b);
  }
  for (int i = 0; i < mg.n_particles; ++i)
    EXPECT_GE(a[mg.x_pos(i) + 1], 0.1 - 1e-12) << "particle " << i;
  // the bottom row (particles 0, 1, 4) stands on the ground; the top row still vibrates
  for (int i : {0, 1, 4}) {
    EXPECT_LT(a[mg.x_pos(i) + 1], 0.1 + 1e-3) << "particle " << i;
    EXPECT_LT(std::fabs(a[mg.x_vel(i) + 1]), 0.05) << "particle " << i;
  }
}

// the cases of the lanes comparisons below: every step case, plus the same robots without a ground
std::vector<StepCase<MassSpring>> lane_cases() {
  std::vector<StepCase<MassSpring>> out = MassSpringCases::step_cases();
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) {
    if (out[i].model.impact) continue;
    StepCase<MassSpring> c = out[i];
    c.name += ", no ground";
    c.model.ground = false;
    out.push_back(c);
  }
  return out;
}

// xn of one step taken by W lanes one after the other (as a warp's lanes would, each writing
// only its own particles)
std::vector<double> strided_step(const StepCase<MassSpring>& c, int W) {
  std::vector<double> x = c.x, u = c.u, p = c.p, xn(c.model.nx(), -7.0);
  auto XN = view(xn.data());
  for (int l = 0; l < W; ++l)
    c.model.step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), XN, Lanes{l, W});
  return xn;
}

// the one-lane step (springs once, scattered onto both ends; the CPU backend's) is bitwise the
// lane-strided step the CUDA kernels run (every spring at both ends, gathered per particle)
TEST(MassSpring, OneLaneStepIsBitwiseTheStridedStep) {
  for (const auto& c : lane_cases()) {
    const std::vector<double> solo = strided_step(c, 1);
    for (int W : {2, 3, 32}) {
      const std::vector<double> lanes = strided_step(c, W);
      for (size_t i = 0; i < solo.size(); ++i)
        EXPECT_EQ(solo[i], lanes[i]) << c.name << " W " << W << " x' " << i;
    }
  }
}

// the one-lane adjoint equals the lane-strided one (the same terms, summed in another order:
// rounding) and, like it, adds to what adj_x, adj_u, adj_θ already hold
TEST(MassSpring, OneLaneAdjointMatchesStridedLanes) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0, 1);
  for (const auto& c : lane_cases()) {
    const MassSpring& m = c.model;
    std::vector<double> adj_xn(m.nx());
    for (auto& a : adj_xn) a = g(rng);
    std::vector<double> prior(m.nx() + m.nu() + m.np());
    for (auto& a : prior) a = g(rng);
    auto run = [&](int W) {
      std::vector<double> x = c.x, u = c.u, p = c.p, a = adj_xn;
      std::vector<double> ax(prior.begin(), prior.begin() + m.nx());
      std::vector<double> au(prior.begin() + m.nx(), prior.begin() + m.nx() + m.nu());
      std::vector<double> ap(prior.begin() + m.nx() + m.nu(), prior.end());
      auto AX = view(ax.data()), AU = view(au.data()), AP = view(ap.data());
      for (int l = 0; l < W; ++l)
        m.adj_step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), AX, AU, AP,
                           view(a.data()), Lanes{l, W});
      ax.insert(ax.end(), au.begin(), au.end());
      ax.insert(ax.end(), ap.begin(), ap.end());
      return ax;
    };
    const std::vector<double> solo = run(1);
    for (int W : {2, 3, 32}) {
      const std::vector<double> lanes = run(W);
      const double scale = std::max(1.0, inf_norm(lanes));
      for (size_t i = 0; i < solo.size(); ++i) {
        ASSERT_TRUE(std::isfinite(solo[i])) << c.name;
        EXPECT_NEAR(solo[i], lanes[i], 1e-13 * scale) << c.name << " W " << W << " input " << i;
      }
    }
  }
}

// a robot over MassSpring::kSoloParticles takes the lane-strided adjoint with one lane; it too
// matches the dual reference
TEST(MassSpring, LargeRobotAdjointMatchesDual) {
  std::vector<std::array<int, 2>> cells;
  for (int col = 0; col < 130; ++col) cells.push_back({col, 0});  // 262 particles, 521 springs
  const Robot r = grid_robot(cells, 0.1, {0.1, 0.1}, 1e3, 0.15);
  MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004), r);
  ASSERT_GT(m.n_particles, MassSpring::kSoloParticles);
  StepCase<MassSpring> c{
      "262-particle strip", m, moving_state(m, r, 0.003), {}, params_for(m, r), 1.0, 5};
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0, 1);
  std::vector<double> adj(m.nx()), hand, dual;
  for (auto& a : adj) a = g(rng);
  step_vjps<MassSpring>(c, adj, hand, dual);
  const double scale = std::max(1.0, inf_norm(dual));
  for (size_t i = 0; i < hand.size(); ++i)
    EXPECT_NEAR(hand[i], dual[i], 1e-12 * scale) << "input " << i;
}

// the grid generator: 2 cells share one edge -> 6 particles, 11 springs, 3 vertical (actuated)
TEST(MassSpring, GridRobotSharesEdges) {
  const Robot r = two_cells();
  EXPECT_EQ(r.particles.size(), 6u);
  EXPECT_EQ(r.springs.size(), 11u);
  EXPECT_EQ(r.actuators(), 3);
  const std::vector<int> t = pack_topology(r);
  // every spring listed under both of its ends
  EXPECT_EQ(t[3 * 11 + 6], 22);
}

// the bit patterns of a and b agree (EXPECT_EQ would let −0 pass for +0)
void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    std::uint64_t ba, bb;
    std::memcpy(&ba, &a[i], sizeof ba);
    std::memcpy(&bb, &b[i], sizeof bb);
    EXPECT_EQ(ba, bb) << what << " [" << i << "]: " << a[i] << " vs " << b[i];
  }
}

// step with a tape is bitwise step, and adj_step from that tape bitwise adj_step (one lane),
// adding to what the adjoints already hold; also where the tape is not used (the impact
// ground, no ground, more phases than kPhaseCache, a robot over kTapeParticles)
TEST(MassSpring, StepTapeStepAndAdjointAreBitwiseTheUntaped) {
  std::vector<StepCase<MassSpring>> cases = lane_cases();
  {
    StepCase<MassSpring> c = cases[0];
    const Robot r = two_cells();
    c.model = bind_topology(
        make_mass_spring(r, MassSpring::kPhaseCache + 2, MassSpring::kSinusoid, true, 0.004), r);
    c.p = params_for(c.model, r);
    c.name = "2d robot, 18 phases (untaped)";
    ASSERT_FALSE(c.model.tape_fits<double>());
    cases.push_back(c);
  }
  {
    std::vector<std::array<int, 2>> cells;
    for (int col = 0; col < 130; ++col) cells.push_back({col, 0});  // 262 particles (untaped)
    const Robot r = grid_robot(cells, 0.1, {0.1, 0.1}, 1e3, 0.15);
    MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004), r);
    ASSERT_FALSE(m.tape_fits<double>());
    cases.push_back(
        {"262-particle strip", m, moving_state(m, r, 0.003), {}, params_for(m, r), 1.0, 5});
  }
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 1);
  int taped = 0;
  for (const auto& c : cases) {
    const MassSpring& m = c.model;
    StepTapes<MassSpring, double> tapes(m, 1);
    auto* tape = tapes.data();
    taped += m.tape_fits<double>();
    std::vector<double> x = c.x, u = c.u, p = c.p, xa(m.nx(), -7.0), xb(m.nx(), -7.0);
    auto XA = view(xa.data()), XB = view(xb.data());
    m.step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), XA);
    m.step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), XB, Lanes{}, tape);
    const MassSpring::StepTape<double>* filled = tape;
    expect_same_bits(xa, xb, c.name + ": x'");
    std::vector<double> adj_xn(m.nx()), prior(m.nx() + m.nu() + m.np());
    for (auto& a : adj_xn) a = g(rng);
    for (auto& a : prior) a = g(rng);
    auto run = [&](bool use_tape) {
      std::vector<double> ax(prior.begin(), prior.begin() + m.nx());
      std::vector<double> au(prior.begin() + m.nx(), prior.begin() + m.nx() + m.nu());
      std::vector<double> ap(prior.begin() + m.nx() + m.nu(), prior.end());
      auto AX = view(ax.data()), AU = view(au.data()), AP = view(ap.data());
      if (use_tape)
        m.adj_step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), AX, AU, AP,
                           view(adj_xn.data()), Lanes{}, filled);
      else
        m.adj_step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), AX, AU, AP,
                           view(adj_xn.data()));
      ax.insert(ax.end(), au.begin(), au.end());
      ax.insert(ax.end(), ap.begin(), ap.end());
      return ax;
    };
    expect_same_bits(run(false), run(true), c.name + ": adjoint");
  }
  EXPECT_GE(taped, 8) << "most cases must take the taped path";
}

// taped and untaped backward sweeps of the uniform schedule give the same bits: DiffTaichi-like
// robots walking with ground contact and friction, sinusoid and raw actuation, rest-position
// morphology, 3D; and the cases the tape leaves to step / adj_step (the impact ground)
TEST(MassSpring, StepTapeGivesTheUntapedGradientBitForBit) {
  struct Case {
    std::string name;
    MassSpring m;
    std::vector<double> x0, u, p;
  };
  std::vector<Case> cases;
  const Robot r2 = two_cells(), r3 = tetrahedron();
  const Robot r4 =
      grid_robot({{0, 0}, {1, 0}, {2, 0}, {3, 0}}, 0.1, {0.1, 0.1}, 2e4, 0.15);  // a 4-cell walker
  const int T = 70;
  auto add = [&](const std::string& name, MassSpring m, const Robot& r) {
    Case c{name, m, moving_state(m, r, 0.003), {}, params_for(m, r)};
    c.u.resize(size_t(T) * m.nu());
    for (size_t i = 0; i < c.u.size(); ++i) c.u[i] = 0.6 * std::sin(0.3 * double(i));
    cases.push_back(c);
  };
  add("2d two cells, sinusoid",
      bind_topology(make_mass_spring(r2, 10, MassSpring::kSinusoid, true, 0.004), r2), r2);
  add("2d four-cell walker, sinusoid",
      bind_topology(make_mass_spring(r4, 10, MassSpring::kSinusoid, true, 0.004), r4), r4);
  add("2d two cells, raw actuation",
      bind_topology(make_mass_spring(r2, 10, MassSpring::kRaw, true, 0.004), r2), r2);
  {
    MassSpring m = bind_topology(make_mass_spring(r2, 6, MassSpring::kSinusoid, true, 0.004), r2);
    m.rest_from_positions = true;
    add("2d two cells, rest-position morphology", m, r2);
  }
  add("3d tetrahedron, sinusoid",
      bind_topology(make_mass_spring(r3, 10, MassSpring::kSinusoid, true, 0.004), r3), r3);
  {
    MassSpring m = bind_topology(make_mass_spring(r2, 10, MassSpring::kSinusoid, true, 0.004), r2);
    m.impact = true;
    add("2d two cells, impact ground (untaped)", m, r2);
    for (int i = 0; i < m.n_particles; ++i) cases.back().x0[m.x_pos(i) + 1] += 0.01;
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const MassSpring& m = c.m;
    const int K = 9;
    RolloutShape sh;
    sh.steps = T;
    sh.checkpoint_every = K;
    Loss loss;
    loss.com = true;
    loss.com_axis = 0;
    loss.com_weight = -1.0;
    loss.effort_weight = 1e-3;
    const SweepOut a = forward_backward_sweep(m, loss, sh, c.x0, c.u, c.p, false),
                   b = forward_backward_sweep(m, loss, sh, c.x0, c.u, c.p, true);
    EXPECT_EQ(a.loss, b.loss);
    expect_same_bits(a.gx0, b.gx0, "dL/dx0");
    expect_same_bits(a.gu, b.gu, "dL/du");
    expect_same_bits(a.gp, b.gp, "dL/dθ");
    EXPECT_GT(b.diag.contact_steps, 0) << "the robot must touch the ground";
    double gmax = 0;
    for (double v : a.gp) gmax = std::max(gmax, std::fabs(v));
    EXPECT_GT(gmax, 0.0);
    // the ground and friction parameters' gradients are live (penalty ground)
    if (!m.impact) {
      EXPECT_NE(a.gp[m.p_global(MassSpring::kFriction)], 0.0);
      EXPECT_NE(a.gp[m.p_global(MassSpring::kGroundStiffness)], 0.0);
    }
  }
}

}  // namespace
}  // namespace steer::testing
