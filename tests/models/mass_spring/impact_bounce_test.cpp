// The impact ground's time-of-impact step (include/steer/models/mass_spring/ground.h,
// impact_step) against the continuous bounce: a particle dropped under gravity, its height y_T
// and the derivatives ∂y_T/∂y_0 and ∂y_T/∂v_0 converging to the analytic bounce as h → 0, over
// one to five impacts; and the step's hand adjoint through rollouts against the dual-number
// reference and centered finite differences, all in float64.
//
// The continuous bounce (ground at 0, height y_0 > 0, upward velocity v_0, gravity g,
// restitution e; no friction on a vertical drop):
//   first impact:   y_0 + v_0 τ − ½ g τ² = 0  ⇒  w = sqrt(v_0² + 2 g y_0) (impact speed),
//                   τ_1 = (v_0 + w)/g
//   k-th bounce:    leaves at u_k = e^k w, lands again after 2 u_k/g with the same speed:
//                   t_{k+1} = t_k + 2 u_k/g
//   after impact k: δ = T − t_k ∈ (0, 2 u_k/g):  y_T = u_k δ − ½ g δ²
//   derivatives:    ∂w/∂y_0 = g/w, ∂w/∂v_0 = v_0/w, ∂τ_1/∂y_0 = 1/w, ∂τ_1/∂v_0 = (1 + v_0/w)/g,
//                   t_k = τ_1 + (2w/g) Σ_{j=1}^{k−1} e^j,
//                   ∂y_T = e^k δ ∂w − (u_k − g δ) ∂t_k
// (for a drop from rest with e = 1 after one impact: ∂y_T/∂y_0 = 2g(T − τ_1)/w − 1). With e = 0
// the particle stays on the ground after the first impact: y_T = 0 and both derivatives 0.
//
// The symplectic-Euler step is first order: the state and, with the time-of-impact step, its
// derivatives are O(h) from the continuous bounce. The expected order is 1; the test fits it
// over two decades of h (1e-3 → 1e-5 s) and accepts 0.8–1.2, and every decade must shrink the
// error at least 5-fold. (The impact law before this step, v'_y = −e v*_y whatever the impact
// time, gives ∂y_T/∂y_0 = (−e)^k at every h: +1 against the continuous −0.416 on the first
// case below.)
#include "steer/models/mass_spring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mass_spring_draws.h"
#include "steer/backend.h"
#include "steer/dual.h"

namespace steer::testing {
namespace {

constexpr double kGravity = 9.81;  // [m/s²]

struct Bounce {
  double y = 0, dy0 = 0, dv0 = 0;  // y_T [m], ∂y_T/∂y_0 [1], ∂y_T/∂v_0 [s]
  int impacts = 0;
};

// the continuous bounce above
Bounce analytic_bounce(double y0, double v0, double e, double T) {
  const double g = kGravity;
  const double w = std::sqrt(v0 * v0 + 2 * g * y0);
  const double tau = (v0 + w) / g;
  Bounce b;
  if (T <= tau) {
    b.y = y0 + v0 * T - 0.5 * g * T * T;
    b.dy0 = 1;
    b.dv0 = T;
    return b;
  }
  if (e == 0) {
    b.impacts = 1;
    return b;  // at rest on the ground: y_T = 0, no dependence
  }
  const double dw_dy = g / w, dw_dv = v0 / w, dtau_dy = 1 / w, dtau_dv = (1 + v0 / w) / g;
  double t = tau, u = e * w, ek = e, sum = 0;  // t_k, u_k, e^k, Σ_{j<k} e^j
  int k = 1;
  while (t + 2 * u / g < T) {
    t += 2 * u / g;
    sum += ek;
    ek *= e;
    u *= e;
    ++k;
  }
  const double d = T - t;
  b.impacts = k;
  b.y = u * d - 0.5 * g * d * d;
  const double dt_dy = dtau_dy + 2 * sum / g * dw_dy, dt_dv = dtau_dv + 2 * sum / g * dw_dv;
  b.dy0 = ek * d * dw_dy - (u - g * d) * dt_dy;
  b.dv0 = ek * d * dw_dv - (u - g * d) * dt_dv;
  return b;
}

// one particle in 2D on the impact ground at y_g = 0; globals g, ζ, y_g, k_g, d_g, w_g, μ, v_ε,
// ω, e (the penalty terms k_g, d_g, w_g are unused by the impact ground)
struct Particle {
  MassSpring m;
  std::vector<double> p;
};
Particle particle(double h, double e, double zeta = 0.0, double mu = 0.0) {
  Robot r;
  r.particles = {{0.0, 0.5, 0.0}};
  Particle q;
  q.m = bind_topology(make_mass_spring(r, 1, MassSpring::kSinusoid, true, h), r);
  q.m.impact = true;
  q.p =
      nominal_parameters(q.m, r, 1.0, {kGravity, zeta, 0.0, 0.0, 0.0, 1.0, mu, 0.05, 0.0, e}, 0.0);
  return q;
}
int steps_for(double T, double h) { return int(std::lround(T / h)); }

// the loss c_a(x_T) − c_a(x_0): the centre of mass's travel along axis a (for one particle, its
// own)
Loss com_rise(int axis) {
  Loss loss;
  loss.com = true;
  loss.com_axis = axis;
  loss.com_weight = 1.0;
  return loss;
}

// y_T and its derivatives from the rollout machinery's adjoint sweep (the hand adjoint, or the
// dual-number reference adjoint with reference = true): the loss is the centre of mass's rise
// c_y(x_T) − c_y(x_0) = y_T − y_0 of the one particle
Bounce pipeline(const Particle& q, double y0, double v0, double T, bool reference = false) {
  const MassSpring& m = q.m;
  Batch<double> b;
  b.resize(1, m.nx(), m.nu(), m.np(), steps_for(T, m.dt));
  b.x0[m.x_pos(0) + 1] = y0;
  b.x0[m.x_vel(0) + 1] = v0;
  b.theta = q.p;
  const Loss loss = com_rise(1);
  RolloutShape sh;
  sh.steps = b.steps;
  sh.checkpoint_every = std::max(1, int(std::sqrt(double(sh.steps))));
  sh.reference_adjoint = reference;
  BatchResult<double> out;
  cpu_run_batch<MassSpring, double>(m, loss, sh, b, true, out, 1);
  Bounce r;
  r.y = out.loss[0] + y0;
  r.dy0 = out.grad_x0[m.x_pos(0) + 1] + 1.0;
  r.dv0 = out.grad_x0[m.x_vel(0) + 1];
  return r;
}

// y_T and its derivatives by forward-mode dual numbers through the model's own step, seeded on
// y_0 and v_0, and the number of impacts (steps where the vertical velocity turns upward)
Bounce forward_dual(const Particle& q, double y0, double v0, double T) {
  using D = Dual<double, 2>;
  const MassSpring& m = q.m;
  std::vector<D> x(m.nx()), xn(m.nx()), p(m.np()), u(1);
  for (int i = 0; i < m.np(); ++i) p[i] = D(q.p[i]);
  x[m.x_pos(0) + 1] = D::variable(y0, 0);
  x[m.x_vel(0) + 1] = D::variable(v0, 1);
  Bounce r;
  for (int k = 0; k < steps_for(T, m.dt); ++k) {
    m.step<D>(k, x, u, p, xn);
    if (x[m.x_vel(0) + 1].a < 0 && xn[m.x_vel(0) + 1].a > 0) ++r.impacts;
    std::swap(x, xn);
  }
  r.y = x[m.x_pos(0) + 1].a;
  r.dy0 = x[m.x_pos(0) + 1].v[0];
  r.dv0 = x[m.x_pos(0) + 1].v[1];
  return r;
}

// centered finite differences of y_T over y_0 and v_0 (one batch of 4 rollouts), ε = min(1e-6,
// h/100): the derivative of the discrete model has O(h) steps where an impact moves from one
// step to the next, and a stencil wider than about 1e-2 of a step's travel (v_c h ≈ 3e-2 mm at
// h = 1e-5 s) straddles one at the later impacts of a five-bounce rollout
Bounce finite_differences(const Particle& q, double y0, double v0, double T) {
  const MassSpring& m = q.m;
  const double eps = std::min(1e-6, 1e-2 * m.dt);
  Batch<double> b;
  b.resize(4, m.nx(), m.nu(), m.np(), steps_for(T, m.dt));
  for (int r = 0; r < 4; ++r) {
    b.x0_of(r)[m.x_pos(0) + 1] = y0 + (r == 0 ? eps : r == 1 ? -eps : 0.0);
    b.x0_of(r)[m.x_vel(0) + 1] = v0 + (r == 2 ? eps : r == 3 ? -eps : 0.0);
    std::copy(q.p.begin(), q.p.end(), b.theta_of(r));
  }
  const Loss loss = com_rise(1);
  RolloutShape sh;
  sh.steps = b.steps;
  sh.checkpoint_every = std::max(1, int(std::sqrt(double(sh.steps))));
  BatchResult<double> out;
  cpu_run_batch<MassSpring, double>(m, loss, sh, b, false, out, 1);
  Bounce r;
  // L = y_T − y_0: the −y_0 term adds −1 to the y_0 difference
  r.dy0 = (out.loss[0] - out.loss[1]) / (2 * eps) + 1.0;
  r.dv0 = (out.loss[2] - out.loss[3]) / (2 * eps);
  return r;
}

struct DropCase {
  std::string name;
  double e, y0, v0, T;
  int impacts;
};
// drops from 0.5 m thrown up at 0.3 m/s: τ_1 = 0.351 s, w = 3.146 m/s
std::vector<DropCase> drop_cases() {
  return {{"e 1, 2 impacts", 1.0, 0.5, 0.3, 1.2, 2},
          {"e 0.5, 2 impacts", 0.5, 0.5, 0.3, 0.75, 2},
          {"e 1, 5 impacts", 1.0, 0.5, 0.3, 3.0, 5},
          {"e 0.5 from rest, 2 impacts", 0.5, 0.4, 0.0, 0.7, 2}};
}

// the closed form's derivatives are its own centered differences (ε = 1e-6, agreement ≤ 1e-7
// relative): the reference the convergence test measures against is right
TEST(ImpactBounce, AnalyticBounceDerivativesAreItsFiniteDifferences) {
  for (const DropCase& c : drop_cases()) {
    SCOPED_TRACE(c.name);
    const Bounce a = analytic_bounce(c.y0, c.v0, c.e, c.T);
    EXPECT_EQ(a.impacts, c.impacts);
    const double eps = 1e-6;
    const double fy = (analytic_bounce(c.y0 + eps, c.v0, c.e, c.T).y -
                       analytic_bounce(c.y0 - eps, c.v0, c.e, c.T).y) /
                      (2 * eps);
    const double fv = (analytic_bounce(c.y0, c.v0 + eps, c.e, c.T).y -
                       analytic_bounce(c.y0, c.v0 - eps, c.e, c.T).y) /
                      (2 * eps);
    EXPECT_NEAR(a.dy0, fy, 1e-7 * std::max(1.0, std::fabs(fy)));
    EXPECT_NEAR(a.dv0, fv, 1e-7 * std::max(1.0, std::fabs(fv)));
  }
  // a drop from rest with e = 1 after one impact: ∂y_T/∂y_0 = 2g(T − τ_1)/w − 1
  const double y0 = 0.5, T = 0.6, w = std::sqrt(2 * kGravity * y0), tau = w / kGravity;
  EXPECT_NEAR(analytic_bounce(y0, 0.0, 1.0, T).dy0, 2 * kGravity * (T - tau) / w - 1, 1e-12);
}

// y_T, ∂y_T/∂y_0 and ∂y_T/∂v_0 of the hand adjoint converge to the continuous bounce at first
// order over h = 1e-3, 1e-4, 1e-5 s, with the same number of impacts
TEST(ImpactBounce, DerivativesConvergeToTheContinuousBounceAtFirstOrder) {
  const double hs[3] = {1e-3, 1e-4, 1e-5};
  for (const DropCase& c : drop_cases()) {
    SCOPED_TRACE(c.name);
    const Bounce a = analytic_bounce(c.y0, c.v0, c.e, c.T);
    double err[3][3];  // [h][y, ∂y_0, ∂v_0]
    for (int j = 0; j < 3; ++j) {
      const Particle q = particle(hs[j], c.e);
      const Bounce b = pipeline(q, c.y0, c.v0, c.T);
      EXPECT_EQ(forward_dual(q, c.y0, c.v0, c.T).impacts, c.impacts) << "h " << hs[j];
      err[j][0] = std::fabs(b.y - a.y);
      err[j][1] = std::fabs(b.dy0 - a.dy0);
      err[j][2] = std::fabs(b.dv0 - a.dv0);
      std::printf(
          "[ impact   ] %-28s h %.0e  y_T %.6f (%.6f)  dy_T/dy0 %+.5f (%+.5f)  dy_T/dv0 %+.5f "
          "(%+.5f)\n",
          c.name.c_str(), hs[j], b.y, a.y, b.dy0, a.dy0, b.dv0, a.dv0);
    }
    const char* what[3] = {"y_T", "dy_T/dy0", "dy_T/dv0"};
    const double scale[3] = {1.0, std::max(1.0, std::fabs(a.dy0)), std::max(1.0, std::fabs(a.dv0))};
    for (int q = 0; q < 3; ++q) {
      SCOPED_TRACE(what[q]);
      const double order = std::log10(err[0][q] / err[2][q]) / 2;
      EXPECT_GE(order, 0.8) << err[0][q] << " " << err[1][q] << " " << err[2][q];
      EXPECT_LE(order, 1.2) << err[0][q] << " " << err[1][q] << " " << err[2][q];
      EXPECT_GE(err[0][q] / err[1][q], 5.0);
      EXPECT_GE(err[1][q] / err[2][q], 5.0);
      // first order with a constant of order the motion's: |error| ≤ 200 h · scale
      for (int j = 0; j < 3; ++j) EXPECT_LE(err[j][q], 200 * hs[j] * scale[q]) << "h " << hs[j];
    }
  }
}

// e = 0: the particle lands and stays on the ground (held there at every later step), so y_T is
// the ground height and does not depend on y_0 or v_0 at any h, as in the continuous bounce
TEST(ImpactBounce, InelasticDropRestsOnTheGroundAtEveryTimestep) {
  for (double h : {1e-3, 1e-4, 1e-5}) {
    SCOPED_TRACE("h " + std::to_string(h));
    const Particle q = particle(h, 0.0);
    const Bounce b = pipeline(q, 0.5, 0.3, 0.75), d = forward_dual(q, 0.5, 0.3, 0.75);
    EXPECT_EQ(b.y, 0.0);
    EXPECT_EQ(b.dy0, 0.0);
    EXPECT_EQ(b.dv0, 0.0);
    EXPECT_EQ(d.dy0, 0.0);
    EXPECT_EQ(d.dv0, 0.0);
    EXPECT_EQ(d.impacts, 0);  // it never leaves the ground
  }
}

// at every h and e the hand adjoint equals the forward-mode dual derivative and the dual
// reference adjoint (rounding over up to 3·10⁵ steps: ≤ 1e-9 · max(1, |∂|)), and centered
// finite differences of the forward pass (ε = min(1e-6, h/100): ≤ 1e-6 · max(1, |∂|))
TEST(ImpactBounce, HandAdjointMatchesDualAndFiniteDifferences) {
  for (const DropCase& c : drop_cases()) {
    for (double h : {1e-3, 1e-4, 1e-5}) {
      SCOPED_TRACE(c.name + ", h " + std::to_string(h));
      const Particle q = particle(h, c.e);
      const Bounce hand = pipeline(q, c.y0, c.v0, c.T), dual = forward_dual(q, c.y0, c.v0, c.T);
      const Bounce fd = finite_differences(q, c.y0, c.v0, c.T);
      EXPECT_NEAR(hand.y, dual.y, 1e-12);
      for (const auto& [x, y] : {std::pair{hand.dy0, dual.dy0}, std::pair{hand.dv0, dual.dv0}})
        EXPECT_NEAR(x, y, 1e-9 * std::max(1.0, std::fabs(y)));
      EXPECT_NEAR(hand.dy0, fd.dy0, 1e-6 * std::max(1.0, std::fabs(fd.dy0)));
      EXPECT_NEAR(hand.dv0, fd.dv0, 1e-6 * std::max(1.0, std::fabs(fd.dv0)));
      if (h >=
          1e-4) {  // the per-step dual reference adjoint (slower: one dual step per input chunk)
        const Bounce ref = pipeline(q, c.y0, c.v0, c.T, true);
        EXPECT_NEAR(hand.dy0, ref.dy0, 1e-9 * std::max(1.0, std::fabs(ref.dy0)));
        EXPECT_NEAR(hand.dv0, ref.dv0, 1e-9 * std::max(1.0, std::fabs(ref.dv0)));
      }
    }
  }
}

// every input (x_0 and θ: mass, rest position, g, ζ, y_g, μ, v_ε, e and the unused penalty
// slots) of a 2D particle thrown sideways that bounces with friction and velocity damping,
// and one that lands inelastically and slides to rest under friction (held on the ground at
// every later step): the hand adjoint against the dual reference adjoint (≤ 1e-12 ·
// max(1, ‖g‖∞), the gradient suite's bound) and centered finite differences (ε = 1e-6 ·
// max(1, |z_i|): ≤ 1e-6 · max(|g|, |fd|) + 1e-9)
TEST(ImpactBounce, FullGradientWithFrictionAndDampingMatchesDualAndFiniteDifferences) {
  struct Case {
    std::string name;
    double e, zeta, mu, T;
  };
  for (const Case& c : {Case{"bounce, e 0.5, friction 0.4, damping 0.5/s", 0.5, 0.5, 0.4, 0.7},
                        Case{"landing and sliding, e 0, friction 0.3", 0.0, 0.2, 0.3, 0.6}}) {
    SCOPED_TRACE(c.name);
    const Particle q = particle(1e-3, c.e, c.zeta, c.mu);
    const MassSpring& m = q.m;
    const int T = steps_for(c.T, m.dt), nx = m.nx(), np = m.np();
    std::vector<double> x0(nx, 0.0);
    x0[m.x_pos(0) + 1] = 0.4;
    x0[m.x_vel(0)] = 1.5;
    x0[m.x_vel(0) + 1] = 0.2;
    Loss loss;  // ½ Σ (x_T[i] − target_i)² over position and velocity
    loss.n_terminal = nx;
    for (int i = 0; i < nx; ++i) {
      loss.terminal_index[i] = i;
      loss.terminal_target[i] = 0.3 * (i + 1);
      loss.terminal_weight[i] = 1.0;
    }
    RolloutShape sh;
    sh.steps = T;
    sh.checkpoint_every = 23;
    auto gradient = [&](bool reference) {
      Batch<double> b;
      b.resize(1, nx, 0, np, T);
      b.x0 = x0;
      b.theta = q.p;
      RolloutShape s = sh;
      s.reference_adjoint = reference;
      BatchResult<double> out;
      cpu_run_batch<MassSpring, double>(m, loss, s, b, true, out, 1);
      std::vector<double> g = out.grad_x0;
      g.insert(g.end(), out.grad_theta.begin(), out.grad_theta.end());
      return g;
    };
    const std::vector<double> hand = gradient(false), ref = gradient(true);
    const int n = nx + np;
    Batch<double> b;
    b.resize(2 * n, nx, 0, np, T);
    std::vector<double> eps(n);
    for (int r = 0; r < 2 * n; ++r) {
      std::copy(x0.begin(), x0.end(), b.x0_of(r));
      std::copy(q.p.begin(), q.p.end(), b.theta_of(r));
    }
    for (int i = 0; i < n; ++i) {
      double* plus = i < nx ? b.x0_of(2 * i) + i : b.theta_of(2 * i) + (i - nx);
      double* minus = i < nx ? b.x0_of(2 * i + 1) + i : b.theta_of(2 * i + 1) + (i - nx);
      eps[i] = 1e-6 * std::max(1.0, std::fabs(*plus));
      *plus += eps[i];
      *minus -= eps[i];
    }
    BatchResult<double> out;
    cpu_run_batch<MassSpring, double>(m, loss, sh, b, false, out, 1);
    double gmax = 0;
    for (double v : ref) gmax = std::max(gmax, std::fabs(v));
    for (int i = 0; i < n; ++i) {
      const double fd = (out.loss[2 * i] - out.loss[2 * i + 1]) / (2 * eps[i]);
      ASSERT_TRUE(std::isfinite(hand[i])) << "input " << i;
      EXPECT_NEAR(hand[i], ref[i], 1e-12 * std::max(1.0, gmax)) << "input " << i;
      EXPECT_NEAR(hand[i], fd, 1e-6 * std::max(std::fabs(hand[i]), std::fabs(fd)) + 1e-9)
          << "input " << i;
    }
    // the impact law's own parameters are live: μ, v_ε and (bouncing) e and y_g
    EXPECT_NE(hand[nx + m.p_global(MassSpring::kFriction)], 0.0);
    EXPECT_NE(hand[nx + m.p_global(MassSpring::kGroundHeight)], 0.0);
    if (c.e > 0) {
      EXPECT_NE(hand[nx + m.p_global(MassSpring::kRestitution)], 0.0);
    }
  }
}

// The stick ground (impact_stick, DiffTaichi's advance_toi): a particle thrown at (0.7, 0.2) m/s
// from 0.3 m under gravity follows, step for step, the rule written out here on its own
// (v* = v − h g ŷ; if y + h v*_y < y_g and v*_y < −10⁻⁴: τ = −(y − y_g)/v*_y, x' = x + τ v*,
// v' = 0; else x' = x + h v*, v' = v*) to 1e-15, stops at y_g, and the hand adjoint of
// x_T − x_0 (whose landing point depends on v_y through τ) matches the dual reference (1e-12),
// centered differences (1e-6) and the continuous throw's ∂x_T/∂v_y (5e-4 at h = 1e-3 s)
TEST(ImpactBounce, StickGroundStopsAParticleWhereItLands) {
  const double h = 1e-3, T = 0.5;
  Particle q = particle(h, 0.0);
  q.m.impact_stick = true;
  const MassSpring& m = q.m;
  std::vector<double> x(m.nx(), 0.0), xn(m.nx()), u(1, 0.0);
  x[m.x_pos(0) + 1] = 0.3, x[m.x_vel(0)] = 0.7, x[m.x_vel(0) + 1] = 0.2;
  double rx = 0, ry = 0.3, vx = 0.7, vy = 0.2;  // the rule on its own
  int landed = -1;
  for (int k = 0; k < steps_for(T, h); ++k) {
    m.step<double>(k, x, u, q.p, xn);
    const double sx = vx, sy = vy - h * kGravity;
    if (ry + h * sy < 0.0 && sy < -1e-4) {
      const double tau = -ry / sy;
      rx += tau * sx, ry += tau * sy, vx = vy = 0;
      if (landed < 0) landed = k;
    } else {
      rx += h * sx, ry += h * sy, vx = sx, vy = sy;
    }
    std::swap(x, xn);
    ASSERT_NEAR(x[m.x_pos(0)], rx, 1e-15) << "step " << k;
    ASSERT_NEAR(x[m.x_pos(0) + 1], ry, 1e-15) << "step " << k;
  }
  EXPECT_GT(landed, 200);  // τ_1 = 0.2 + √(0.04 + 2 g 0.3) over g ≈ 0.27 s
  EXPECT_NEAR(x[m.x_pos(0) + 1], 0.0, 1e-15);
  EXPECT_EQ(x[m.x_vel(0)], 0.0);
  // ∂(x_T − x_0)/∂(x0) by the hand adjoint, the dual reference and central differences
  Batch<double> b;
  b.resize(1, m.nx(), m.nu(), m.np(), steps_for(T, h));
  b.x0[m.x_pos(0) + 1] = 0.3, b.x0[m.x_vel(0)] = 0.7, b.x0[m.x_vel(0) + 1] = 0.2;
  b.theta = q.p;
  const Loss loss = com_rise(0);
  RolloutShape sh;
  sh.steps = b.steps;
  sh.checkpoint_every = 23;
  BatchResult<double> hand, ref;
  cpu_run_batch<MassSpring, double>(m, loss, sh, b, true, hand, 1);
  sh.reference_adjoint = true;
  cpu_run_batch<MassSpring, double>(m, loss, sh, b, true, ref, 1);
  sh.reference_adjoint = false;
  // the landing time's share against the continuous throw: x_T = x_0 + v_x τ,
  // τ = (v_y + w)/g, w = √(v_y² + 2 g y_0): ∂x_T/∂v_y = v_x (1 + v_y/w)/g (0.07722; O(h) apart)
  const double w = std::sqrt(0.04 + 2 * kGravity * 0.3);
  EXPECT_NEAR(hand.grad_x0[m.x_vel(0) + 1], 0.7 * (1 + 0.2 / w) / kGravity, 5e-4);
  for (int i = 0; i < m.nx(); ++i) {
    EXPECT_NEAR(hand.grad_x0[i], ref.grad_x0[i], 1e-12) << "x0 slot " << i;
    Batch<double> bp = b, bm = b;
    const double eps = 1e-7;
    bp.x0[i] += eps, bm.x0[i] -= eps;
    BatchResult<double> op, om;
    cpu_run_batch<MassSpring, double>(m, loss, sh, bp, false, op, 1);
    cpu_run_batch<MassSpring, double>(m, loss, sh, bm, false, om, 1);
    EXPECT_NEAR(hand.grad_x0[i], (op.loss[0] - om.loss[0]) / (2 * eps), 1e-6) << "x0 slot " << i;
  }
  const int yg = m.p_global(MassSpring::kGroundHeight);
  EXPECT_NEAR(hand.grad_theta[yg], ref.grad_theta[yg], 1e-12);
}

}  // namespace
}  // namespace steer::testing
