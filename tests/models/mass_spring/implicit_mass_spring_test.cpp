// include/steer/models/mass_spring/implicit.h: the backward-Euler mass-spring step and its
// implicit-function adjoint.
//   - the generic gradient suite (gradient_suite.h) on implicit models: per step hand adjoint vs
//     the dual-number reference (1e-12 relative to max(1, ‖g‖∞)), dual Jacobian vs centered FD
//     (1e-6 · max(1, |J|)), through rollouts hand vs reference (1e-12) and vs centered FD
//     (1e-6 relative + 1e-9), on contact, contact onset, friction at zero slip, raw actuation,
//     rest-position morphology, 3-D, stiff springs (k = 3e5 N/m, 10x the largest the shipped
//     morphology sweep draws, 20000 · 1.5) and springs compressed by 30 % (exact Hessian
//     indefinite at the warm start)
//   - a stiff walker the explicit step blows up on runs cleanly under the implicit step, and its
//     rollout gradient matches the dual reference and Richardson-extrapolated FD
//   - convergence to a damped oscillator's analytic solution and d x(T)/d k as dt shrinks
//     (first order: the error halves with dt)
//   - the ground potential G(z) = ∫ softplus against its derivative
//   - the warp-per-rollout branch (32 emulated lanes) against one lane
//   - the CPU's SIMD packs give every rollout its scalar run's bits (per-lane convergence)
//   - the Newton cap is visible (NaN), float32 runs, the config keys and their errors
#include "steer/models/mass_spring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <cstring>

#include "config/config.h"
#include "config_errors.h"
#if !defined(STEER_CUDA_EMULATION)
#include "gradient_suite.h"  // (the emulated build instantiates no suite)
#endif
#include "mass_spring_draws.h"
#include "warp_lanes.h"
#include "models/mass_spring/mass_spring_robot.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#include "steer/loss.h"
#include "steer/rollout.h"

namespace steer::testing {
namespace {

Robot four_cells(double k) {
  return grid_robot({{0, 0}, {1, 0}, {2, 0}, {3, 0}}, 0.1, {0.1, 0.1}, k, 0.15);
}

MassSpring implicit_model(const Robot& r, int actuation = MassSpring::kSinusoid, int phases = 10) {
  MassSpring m = bind_topology(make_mass_spring(r, phases, actuation, true, 0.004), r);
  m.integrator = MassSpring::kBackwardEuler;
  return m;
}

Loss com_loss() {
  Loss l;
  l.com = true;
  l.com_axis = 0;
  l.com_weight = -1.0;
  return l;
}

}  // namespace

#if !defined(STEER_CUDA_EMULATION)
namespace {

// globals: g [m/s²], ζ [1/s], y_g [m], k_g [N/m], d_g [N·s/m], w_g [m], μ, v_ε [m/s], ω [rad/s], e
std::vector<double> globals() { return {9.81, 2.0, 0.1, 3e3, 20.0, 1e-2, 0.8, 0.05, 10.0, 0.0}; }
// the shipped morphology sweep's settings (configs/morphology_sweep.json)
std::vector<double> sweep_globals() {
  return {4.8, 15.0, 0.1, 1e4, 50.0, 1e-2, 1.0, 0.05, 10.0, 0.0};
}

Robot two_cells(double k = 1e3) { return grid_robot({{0, 0}, {1, 0}}, 0.1, {0.1, 0.1}, k, 0.15); }

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

std::vector<double> params_for(const MassSpring& m, const Robot& r,
                               const std::vector<double>& gl = globals()) {
  return actuated_parameters(m, r, gl);
}

struct ImplicitCases {
  using Model = MassSpring;
  static std::vector<StepCase<MassSpring>> step_cases() {
    std::vector<StepCase<MassSpring>> out;
    const Robot r2 = two_cells(), r3 = tetrahedron();
    {
      MassSpring m = implicit_model(r2);
      out.push_back(
          {"2d robot in contact", m, moving_state(m, r2, 0.004), {}, params_for(m, r2), 1.0, 17});
      out.push_back(
          {"2d robot contact onset", m, moving_state(m, r2, 0.0), {}, params_for(m, r2), 1.0, 3});
      StepCase<MassSpring> c{"2d robot at rest on the ground",
                             m,
                             moving_state(m, r2, 0.002),
                             {},
                             params_for(m, r2),
                             1.0,
                             5};
      for (int i = 0; i < m.n_particles; ++i) c.x[m.x_vel(i)] = 0.0;  // zero slip under friction
      out.push_back(c);
    }
    {
      MassSpring m = implicit_model(r2, MassSpring::kRaw);
      std::vector<double> u(m.nu());
      for (int a = 0; a < m.nu(); ++a) u[a] = 0.5 * std::sin(2.0 * a + 1);
      out.push_back(
          {"2d robot raw actuation", m, moving_state(m, r2, 0.003), u, params_for(m, r2), 1.0, 4});
    }
    {
      MassSpring m = implicit_model(r2, MassSpring::kSinusoid, 4);
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
      MassSpring m = implicit_model(r3);
      out.push_back({"3d tetrahedron in contact",
                     m,
                     moving_state(m, r3, 0.004),
                     {},
                     params_for(m, r3),
                     1.0,
                     8});
    }
    {
      // k = 3e5 N/m: h² k / m ≈ 4.8, far past the explicit step's limit (h ω < 2)
      const Robot rs = two_cells(3e5);
      MassSpring m = implicit_model(rs);
      out.push_back({"2d stiff robot (k 3e5) in contact",
                     m,
                     moving_state(m, rs, 0.003),
                     {},
                     params_for(m, rs),
                     1.0,
                     7});
      // every spring 30 % shorter than its rest length: the transverse stiffness k (1 − L/ℓ) is
      // −0.43 k, h² k · 0.43 ≈ 2 m, so the exact Hessian is indefinite at the warm start
      StepCase<MassSpring> c{"2d stiff robot compressed 30 %",
                             m,
                             moving_state(m, rs, 0.0),
                             {},
                             params_for(m, rs),
                             1.0,
                             2};
      double cx = 0, cy = 0;
      for (int i = 0; i < m.n_particles; ++i)
        cx += c.x[m.x_pos(i)] / m.n_particles, cy += c.x[m.x_pos(i) + 1] / m.n_particles;
      for (int i = 0; i < m.n_particles; ++i) {
        c.x[m.x_pos(i)] = cx + 0.7 * (c.x[m.x_pos(i)] - cx);
        c.x[m.x_pos(i) + 1] = cy + 0.7 * (c.x[m.x_pos(i) + 1] - cy) + 0.05;
      }
      out.push_back(c);
    }
    return out;
  }
  static std::vector<RolloutCase<MassSpring>> rollout_cases() {
    std::vector<RolloutCase<MassSpring>> out;
    const Robot r2 = two_cells(), r3 = tetrahedron();
    {
      RolloutCase<MassSpring> c;
      c.name = "2d robot walking, CoM loss";
      c.model = implicit_model(r2);
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
      c.model = implicit_model(r2, MassSpring::kRaw);
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
      RolloutCase<MassSpring> c;
      c.name = "3d tetrahedron, CoM loss";
      c.model = implicit_model(r3);
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

// the sweep's four-cell walker at k = 3e5 N/m (the explicit step diverges on it), dropped 1 cm
// onto the ground, CoM loss (StiffWalker below)
RolloutCase<MassSpring> stiff_walker_case() {
  const Robot rs = four_cells(3e5);
  RolloutCase<MassSpring> c;
  c.name = "stiff four-cell walker (k 3e5), CoM loss";
  c.model = implicit_model(rs);
  c.loss = com_loss();
  c.steps = 60;
  c.checkpoint_every = 8;
  c.x0 = rest_state(c.model, rs);
  for (int i = 0; i < c.model.n_particles; ++i) c.x0[c.model.x_pos(i) + 1] += 0.01;
  c.p = params_for(c.model, rs, sweep_globals());
  return c;
}

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(ImplicitMassSpring, GradientSuite, ::testing::Types<ImplicitCases>);

namespace {

// forward states x_0..x_T of one rollout (one lane) with zero controls
template <class S>
std::vector<std::vector<S>> forward_states(const MassSpring& m, std::vector<S> x,
                                           const std::vector<S>& p, int T) {
  std::vector<std::vector<S>> xs{x};
  std::vector<S> u(std::max(1, m.nu()), S(0)), y(m.nx());
  for (int k = 0; k < T; ++k) {
    auto Y = view(y.data());
    m.template step<S>(k, View<const S>{xs.back().data(), 1}, View<const S>{u.data(), 1},
                       View<const S>{p.data(), 1}, Y);
    xs.push_back(y);
  }
  return xs;
}

double max_speed(const MassSpring& m, const std::vector<std::vector<double>>& xs) {
  double v = 0;
  for (const auto& x : xs)
    for (int q = m.x_vel(0); q < m.nx(); ++q)
      v = std::max(v, std::isfinite(x[q]) ? std::fabs(x[q]) : INFINITY);
  return v;
}

}  // namespace

// G(z) = ∫_{−∞}^z softplus: G' = softplus by centered FD, G(0) = π²/12, the tails
TEST(ImplicitMassSpring, SoftplusIntegral) {
  EXPECT_NEAR(softplus_integral_of(0.0), M_PI * M_PI / 12, 1e-15);
  EXPECT_NEAR(softplus_integral_of(-40.0) / std::exp(-40.0), 1.0, 1e-12);
  EXPECT_NEAR(softplus_integral_of(40.0), 800.0 + M_PI * M_PI / 6, 1e-12);
  for (double z = -30; z <= 30; z += 0.37) {
    const double e = 1e-5 * std::max(1.0, std::fabs(z));
    const double fd = (softplus_integral_of(z + e) - softplus_integral_of(z - e)) / (2 * e);
    EXPECT_NEAR(fd, softplus(z), 1e-8 * std::max(1.0, std::fabs(z))) << "z = " << z;
  }
}

// a walker with k = 3e5 N/m (10x the stiffest spring the shipped sweep draws) at the sweep's
// dt = 4 ms: the explicit step diverges, the implicit one stays bounded and converges every step
TEST(ImplicitMassSpring, StiffWalkerExplicitDivergesImplicitStaysBounded) {
  const Robot r = four_cells(3e5);
  MassSpring ex = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004), r);
  MassSpring im = ex;
  im.integrator = MassSpring::kBackwardEuler;
  std::vector<double> x0 = rest_state(ex, r);
  for (int i = 0; i < ex.n_particles; ++i) x0[ex.x_pos(i) + 1] += 0.01;
  const std::vector<double> p = params_for(ex, r, sweep_globals());
  const int T = 200;
  const double v_ex = max_speed(ex, forward_states<double>(ex, x0, p, T));
  const auto xs = forward_states<double>(im, x0, p, T);
  const double v_im = max_speed(im, xs);
  std::printf("  largest speed over %d steps: explicit %.3g m/s, implicit %.3g m/s\n", T, v_ex,
              v_im);
  EXPECT_GT(v_ex, 1e3) << "the explicit step was expected to diverge at h ω ≈ 3";
  EXPECT_LT(v_im, 2.0);
  // Newton's effort over the rollout
  int most = 0;
  for (int k = 0; k < T; ++k) {
    MassSpring::ImplicitWork<double> W;
    std::vector<double> u(1, 0.0);
    im.implicit_solve<double>(k, View<const double>{xs[k].data(), 1},
                              View<const double>{u.data(), 1}, View<const double>{p.data(), 1}, W);
    ASSERT_TRUE(W.converged) << "step " << k;
    most = std::max(most, W.iterations);
  }
  std::printf("  most Newton iterations in a step: %d (cap %d)\n", most, im.newton_iterations);
  EXPECT_LT(most, im.newton_iterations);
}

// centered FD of the rollout loss for every input with Richardson extrapolation,
// (4 D(ε/2) − D(ε))/3 with ε = 1e-6 · max(1, |z_i|): truncation O(ε⁴) instead of O(ε²). The
// stiff walker's loss has third derivatives large enough that plain centered FD at ε = 1e-6
// is off by up to 3e-5 relative (it converges to the adjoint's value as ε shrinks to 1e-7)
std::vector<double> rollout_fd_richardson(const RolloutCase<MassSpring>& c) {
  const MassSpring& m = c.model;
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  const int n = nx + c.steps * nu + np;
  Batch<double> b;
  b.resize(4 * n, nx, nu, np, c.steps);
  std::vector<double> eps(n);
  for (int r = 0; r < 4 * n; ++r) {
    std::copy(c.x0.begin(), c.x0.end(), b.x0_of(r));
    std::copy(c.u.begin(), c.u.end(), b.u_of(r));
    std::copy(c.p.begin(), c.p.end(), b.theta_of(r));
  }
  for (int i = 0; i < n; ++i) {
    for (int s = 0; s < 4; ++s) {
      const int r = 4 * i + s;
      double* slot = i < nx ? b.x0_of(r) + i
                            : (i < nx + c.steps * nu ? b.u_of(r) + (i - nx)
                                                     : b.theta_of(r) + (i - nx - c.steps * nu));
      if (s == 0) eps[i] = 1e-6 * std::max(1.0, std::fabs(*slot));
      const double e[4] = {eps[i], -eps[i], 0.5 * eps[i], -0.5 * eps[i]};
      *slot += e[s];
    }
  }
  RolloutShape sh;
  sh.steps = c.steps;
  sh.checkpoint_every = c.checkpoint_every;
  BatchResult<double> out;
  cpu_run_batch<MassSpring, double>(m, c.loss, sh, b, false, out);
  std::vector<double> fd(n);
  for (int i = 0; i < n; ++i) {
    const double d1 = (out.loss[4 * i] - out.loss[4 * i + 1]) / (2 * eps[i]);
    const double d2 = (out.loss[4 * i + 2] - out.loss[4 * i + 3]) / eps[i];
    fd[i] = (4 * d2 - d1) / 3;
  }
  return fd;
}

// the stiff walker's gradient under the implicit step: hand adjoint == dual reference
// (1e-12 relative to max(1, ‖g‖∞)) and == Richardson-extrapolated centered FD (1e-6 relative +
// 1e-9)
TEST(ImplicitMassSpring, StiffWalkerGradientPassesFiniteDifferences) {
  const RolloutCase<MassSpring> c = stiff_walker_case();
  const std::vector<double> g = rollout_gradient(c, false, c.checkpoint_every);
  const std::vector<double> ref = rollout_gradient(c, true, c.checkpoint_every);
  const std::vector<double> fd = rollout_fd_richardson(c);
  ASSERT_EQ(g.size(), fd.size());
  const double scale = std::max(1.0, inf_norm(ref));
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_TRUE(std::isfinite(g[i])) << "input " << i;
    EXPECT_NEAR(g[i], ref[i], 1e-12 * scale) << "input " << i;
    EXPECT_NEAR(g[i], fd[i], 1e-6 * std::max(std::fabs(g[i]), std::fabs(fd[i])) + 1e-9)
        << "input " << i;
    worst = std::max(
        worst, std::fabs(g[i] - fd[i]) / (std::max(std::fabs(g[i]), std::fabs(fd[i])) + 1e-3));
  }
  std::printf("  %zu inputs: largest |g − fd| / (max(|g|, |fd|) + 1e-3) = %.3g; ‖g‖∞ = %.3g\n",
              g.size(), worst, inf_norm(g));
  EXPECT_GT(inf_norm(g), 1e-3);
}

// float32: the stiff walker converges every step (rounding floor of float) and stays within
// float rounding of the float64 run
TEST(ImplicitMassSpring, Float32Converges) {
  const Robot r = four_cells(3e5);
  MassSpring im = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004), r);
  im.integrator = MassSpring::kBackwardEuler;
  std::vector<double> x0 = rest_state(im, r);
  for (int i = 0; i < im.n_particles; ++i) x0[im.x_pos(i) + 1] += 0.01;
  const std::vector<double> p = params_for(im, r, sweep_globals());
  const int T = 100;
  const auto xd = forward_states<double>(im, x0, p, T);
  const auto xf = forward_states<float>(im, std::vector<float>(x0.begin(), x0.end()),
                                        std::vector<float>(p.begin(), p.end()), T);
  double worst = 0;
  for (int q = 0; q < im.n_particles * im.dim; ++q) {
    ASSERT_TRUE(std::isfinite(xf[T][q]));
    worst = std::max(worst, std::fabs(double(xf[T][q]) - xd[T][q]));
  }
  std::printf("  float32 vs float64 positions after %d steps: largest difference %.3g m\n", T,
              worst);
  EXPECT_LT(worst, 1e-4);
}

// a conservative chain (4 particles, 3 springs, no gravity, ground or damping) started strained
// at rest: every step converges, from the turning points where the velocities are ~0 (Newton's
// rounding floor is then set by the positions, ε |x| / h) to k = 2e6 N/m at h = 16 ms, and
// backward Euler never adds energy: E(x_T) ≤ E(x_0)
TEST(ImplicitMassSpring, ConservativeChainConvergesEveryStep) {
  Robot r;
  r.dim = 2;
  r.particles = {{0.1, 0.5, 0}, {0.205, 0.51, 0}, {0.3, 0.495, 0}, {0.41, 0.5, 0}};
  for (double k : {2e3, 2e6})
    for (double h : {0.001, 0.016}) {
      r.springs = {{0, 1, 0.1, k, 0.0}, {1, 2, 0.1, k, 0.0}, {2, 3, 0.1, k, 0.0}};
      MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, false, h), r);
      m.integrator = MassSpring::kBackwardEuler;
      const std::vector<double> p =
          nominal_parameters(m, r, 1.0, {0, 0, 0, 1, 0, 1, 0, 1, 0, 0}, 0.0);
      const int T = int(std::lround(1.0 / h));
      const auto xs = forward_states<double>(m, rest_state(m, r), p, T);
      int most = 0;
      std::vector<double> u(1, 0.0);
      for (int kk = 0; kk < T; ++kk) {
        MassSpring::ImplicitWork<double> W;
        m.implicit_solve<double>(kk, View<const double>{xs[kk].data(), 1},
                                 View<const double>{u.data(), 1}, View<const double>{p.data(), 1},
                                 W);
        ASSERT_TRUE(W.converged) << "k " << k << " h " << h << " step " << kk;
        most = std::max(most, W.iterations);
      }
      auto E = [&](const std::vector<double>& x) {
        return m.energy<double>(View<const double>{x.data(), 1}, View<const double>{p.data(), 1});
      };
      std::printf("  k %.0e N/m, h %g ms: E_T/E_0 = %.3g, most Newton iterations %d\n", k, h * 1e3,
                  E(xs[T]) / E(xs[0]), most);
      EXPECT_LE(E(xs[T]), E(xs[0]) * (1 + 1e-12));
    }
}

// the Newton cap is never silent: a step that needs more iterations than allowed is NaN
TEST(ImplicitMassSpring, NewtonCapGivesNaN) {
  const Robot r = two_cells(3e5);
  MassSpring m = implicit_model(r);
  m.newton_iterations = 1;
  const std::vector<double> x = moving_state(m, r, 0.003), p = params_for(m, r);
  const std::vector<double> y = step_value(m, 3, x, {}, p);
  for (double v : y) EXPECT_TRUE(std::isnan(v));
  m.newton_iterations = 40;
  for (double v : step_value(m, 3, x, {}, p)) EXPECT_TRUE(std::isfinite(v));
}

// two unit masses joined by a spring (k 100 N/m, c 1 N·s/m, L 0.1 m) moving along x, no
// gravity, ground or velocity damping: the stretch ξ obeys ξ'' + 2γ ξ' + ω0² ξ = 0 with
// ω0² = 2k/m, γ = c/m; from ξ(0) = ξ0 at rest
//   ξ(t) = e^{−γt} (ξ0 cos ω_d t + (γ ξ0/ω_d) sin ω_d t),  ω_d = sqrt(ω0² − γ²),
//   dξ/dk = (∂ξ/∂ω_d)/(m ω_d)   (dω_d/dk = 1/(m ω_d)).
// Backward Euler is first order: the error in ξ(T) and in dξ(T)/dk halves with dt.
TEST(ImplicitMassSpring, DampedOscillatorConvergesFirstOrder) {
  Robot r;
  r.dim = 2;
  const double xi0 = 0.01, L = 0.1, k = 100, c = 1, mass = 1, T = 0.5;
  r.particles = {{0.1, 0.5, 0}, {0.1 + L + xi0, 0.5, 0}};
  r.springs = {{0, 1, L, k, 0.0}};
  const double w0 = std::sqrt(2 * k / mass), gam = c / mass, wd = std::sqrt(w0 * w0 - gam * gam);
  const double xi =
      std::exp(-gam * T) * (xi0 * std::cos(wd * T) + gam * xi0 / wd * std::sin(wd * T));
  const double dxi_dwd =
      std::exp(-gam * T) * (-xi0 * T * std::sin(wd * T) - gam * xi0 / (wd * wd) * std::sin(wd * T) +
                            gam * xi0 / wd * T * std::cos(wd * T));
  const double dxi_dk = dxi_dwd / (mass * wd);
  double prev_e = 0, prev_g = 0;
  for (int level = 0; level < 4; ++level) {
    const double h = 0.002 / (1 << level);
    const int steps = int(std::lround(T / h));
    MassSpring m = bind_topology(make_mass_spring(r, 10, MassSpring::kSinusoid, false, h), r);
    m.integrator = MassSpring::kBackwardEuler;
    std::vector<double> p = nominal_parameters(m, r, mass, {0, 0, 0, 1, 0, 1, 0, 1, 0, 0}, c);
    const auto xs = forward_states<double>(m, rest_state(m, r), p, steps);
    const double xi_h = xs[steps][m.x_pos(1)] - xs[steps][m.x_pos(0)] - L;
    // dξ(T)/dk by the hand adjoint, step by step
    std::vector<double> lam(m.nx(), 0.0), gp(m.np(), 0.0), u(1, 0.0);
    lam[m.x_pos(1)] = 1;
    lam[m.x_pos(0)] = -1;
    for (int kk = steps - 1; kk >= 0; --kk) {
      std::vector<double> ax(m.nx(), 0.0), au(1, 0.0);
      auto vax = view(ax.data()), vau = view(au.data()), vgp = view(gp.data());
      m.adj_step<double>(kk, View<const double>{xs[kk].data(), 1}, View<const double>{u.data(), 1},
                         View<const double>{p.data(), 1}, vax, vau, vgp,
                         View<const double>{lam.data(), 1});
      lam = ax;
    }
    const double e = std::fabs(xi_h - xi), eg = std::fabs(gp[m.p_stiffness(0)] - dxi_dk);
    std::printf(
        "  h = %.4g ms: |ξ(T) − exact| = %.4g m, |dξ/dk − exact| = %.4g m/(N/m) (exact %.4g)\n",
        h * 1e3, e, eg, dxi_dk);
    if (level > 0) {
      EXPECT_GT(prev_e / e, 1.7) << "h = " << h;
      EXPECT_LT(prev_e / e, 2.3) << "h = " << h;
      EXPECT_GT(prev_g / eg, 1.7) << "h = " << h;
      EXPECT_LT(prev_g / eg, 2.3) << "h = " << h;
    }
    prev_e = e;
    prev_g = eg;
  }
  EXPECT_LT(prev_e, 0.05 * std::fabs(xi0));
}

namespace {

// ---- the warp-per-rollout branch: W host threads as the lanes of one rollout (warp_lanes.h) ----
struct Buffers {
  std::vector<double> x0, u, p, ckpt, seg, lam, lam_prev, gx0, gu, gp;
  std::vector<int> stack{0};
  double loss = 0;
  RolloutDiag diag{};
  Buffers(const MassSpring& m, const RolloutShape& sh, std::vector<double> x,
          std::vector<double> uu, std::vector<double> pp)
      : x0(std::move(x)), u(std::move(uu)), p(std::move(pp)) {
    ckpt.assign(size_t(sh.checkpoint_slots()) * m.nx(), 0.0);
    seg.assign(size_t(sh.segment_slots()) * m.nx(), 0.0);
    lam.assign(m.nx(), 0.0);
    lam_prev.assign(m.nx(), 0.0);
    gx0.assign(m.nx(), 0.0);
    gu.assign(size_t(sh.steps) * m.nu(), 0.0);
    gp.assign(m.np(), 0.0);
  }
  RolloutRefs<double> refs() {
    RolloutRefs<double> r;
    r.x0 = {x0.data(), 1};
    r.u = {u.data(), 1};
    r.p = {p.data(), 1};
    r.ckpt = {ckpt.data(), 1};
    r.seg = {seg.data(), 1};
    r.lam = {lam.data(), 1};
    r.lam_prev = {lam_prev.data(), 1};
    r.grad_x0 = {gx0.data(), 1};
    r.grad_u = {gu.data(), 1};
    r.grad_p = {gp.data(), 1};
    r.stack = {stack.data(), 1};
    r.loss = &loss;
    r.diag = &diag;
    return r;
  }
};

bool run_lanes(const MassSpring& m, const Loss& loss, const RolloutShape& sh, Buffers& b,
               int width) {
  const RolloutRefs<double> r = b.refs();
  if (width == 1) {
    forward_rollout<MassSpring, double>(m, loss, sh, r);
    backward_rollout<MassSpring, double>(m, loss, sh, r);
    return true;
  }
  return run_as_warp(width, [&](const Lanes& ln) {
    forward_rollout<MassSpring, double>(m, loss, sh, r, ln);
    ln.sync();
    backward_rollout<MassSpring, double>(m, loss, sh, r, ln);
  });
}

}  // namespace

// the CUDA backend's 32 lanes per rollout (the leading lane steps, the others wait at the
// rollout's syncs) against one lane: the same arithmetic, so the same bits
TEST(ImplicitMassSpring, WarpOf32MatchesOneLane) {
  const Robot r = wide_grid_robot();  // 33 particles: more than a warp's lanes
  for (int actuation : {int(MassSpring::kSinusoid), int(MassSpring::kRaw)}) {
    MassSpring m = implicit_model(r, actuation);
    RolloutShape sh;
    sh.steps = 30;
    sh.checkpoint_every = 6;
    std::mt19937_64 rng(5 + actuation);
    std::vector<double> x(m.nx()), u(size_t(sh.steps) * m.nu()), p(m.np());
    draw_mass_spring_rollout<double>(m, r, sh.steps, rng, x.data(), u.data(), p.data());
    Loss loss = com_loss();
    if (actuation == MassSpring::kRaw) loss.effort_weight = 1e-3;
    Buffers one(m, sh, x, u, p), warp(m, sh, x, u, p);
    ASSERT_TRUE(run_lanes(m, loss, sh, one, 1));
    ASSERT_TRUE(run_lanes(m, loss, sh, warp, 32)) << "the lanes did not reach the same sync points";
    ASSERT_TRUE(std::isfinite(one.loss));
    EXPECT_EQ(warp.loss, one.loss);
    EXPECT_EQ(warp.ckpt, one.ckpt);
    EXPECT_EQ(warp.gx0, one.gx0);
    EXPECT_EQ(warp.gu, one.gu);
    EXPECT_EQ(warp.gp, one.gp);
    EXPECT_GT(inf_norm(one.gp), 1e-8) << "dL/dtheta is zero: the comparison would be vacuous";
  }
}

namespace {

template <class R>
bool same_bits(R a, R b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
template <class R>
int count_bit_differences(const std::vector<R>& a, const std::vector<R>& b) {
  int bad = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) bad += same_bits(a[i], b[i]) ? 0 : 1;
  return bad + int(a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

// B rollouts of the four-cell walker, lane by lane different: stiffness 2e4 or 3e5 N/m
// (different Newton iteration counts per lane), dropped from different heights, some starting
// in the ground, per-lane ω
template <class R>
void expect_packs_match_scalar(int actuation) {
  const Robot r = four_cells(2e4);
  MassSpring m = implicit_model(r, actuation);
  const int B = 11, T = 40;  // a tail group with spare lanes at every pack width up to 8
  Batch<R> batch;
  batch.resize(B, m.nx(), m.nu(), m.np(), T);
  std::mt19937_64 rng(3);
  for (int b = 0; b < B; ++b) {
    std::vector<double> x(m.nx()), u(size_t(T) * m.nu()), p(m.np());
    draw_mass_spring_rollout<double>(m, r, T, rng, x.data(), u.data(), p.data());
    if (b % 2 == 1)
      for (int s = 0; s < m.n_springs; ++s) p[m.p_stiffness(s)] *= 15.0;  // up to 3.6e5 N/m
    if (b % 3 == 1)
      for (int i = 0; i < m.n_particles; i += 2)
        x[m.x_pos(i) + 1] -= 0.004;  // 4 mm into the ground
    p[m.p_global(MassSpring::kActuationFrequency)] = 6.0 + 0.5 * b;
    std::transform(x.begin(), x.end(), batch.x0_of(b), [](double v) { return R(v); });
    std::transform(u.begin(), u.end(), batch.u_of(b), [](double v) { return R(v); });
    std::transform(p.begin(), p.end(), batch.theta_of(b), [](double v) { return R(v); });
  }
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 7;
  Loss loss = com_loss();
  loss.effort_weight = 1e-3;
  ASSERT_TRUE(m.packable());
  ASSERT_TRUE((use_packed_path<MassSpring, R>(m, sh, B)));
  BatchResult<R> packed;
  cpu_run_batch<MassSpring, R>(m, loss, sh, batch, true, packed, 2);
  int bad = 0;
  double gmax = 0;
  for (int b = 0; b < B; ++b) {
    Batch<R> one;
    one.resize(1, m.nx(), m.nu(), m.np(), T);
    std::copy(batch.x0_of(b), batch.x0_of(b) + m.nx(), one.x0.begin());
    std::copy(batch.u_of(b), batch.u_of(b) + T * m.nu(), one.u.begin());
    std::copy(batch.theta_of(b), batch.theta_of(b) + m.np(), one.theta.begin());
    BatchResult<R> alone;
    cpu_run_batch<MassSpring, R>(m, loss, sh, one, true, alone, 1);
    ASSERT_TRUE(std::isfinite(double(alone.loss[0]))) << "rollout " << b;
    EXPECT_TRUE(same_bits(packed.loss[b], alone.loss[0])) << "rollout " << b;
    auto slice = [](const std::vector<R>& v, int b, size_t n) {
      return std::vector<R>(v.begin() + size_t(b) * n, v.begin() + size_t(b + 1) * n);
    };
    bad += count_bit_differences(slice(packed.grad_x0, b, m.nx()), alone.grad_x0);
    bad += count_bit_differences(slice(packed.grad_u, b, size_t(T) * m.nu()), alone.grad_u);
    bad += count_bit_differences(slice(packed.grad_theta, b, m.np()), alone.grad_theta);
    for (R g : alone.grad_theta) gmax = std::max(gmax, std::fabs(double(g)));
  }
  EXPECT_EQ(bad, 0) << "gradient entries whose packed bits differ from the scalar run's";
  EXPECT_GT(gmax, 1e-6) << "all-zero gradients would make the comparison vacuous";
}

}  // namespace

// the CPU's SIMD packs (cpu_packed.h) run the implicit step with per-lane convergence: every
// rollout gets the bits of its scalar run (loss, ∂L/∂x0, ∂L/∂u, ∂L/∂θ), float64 and float32
TEST(ImplicitMassSpring, PacksGiveTheScalarBits) {
  std::printf("  pack width %d (%s)\n", cpu_pack_width(), cpu_pack_isa());
  expect_packs_match_scalar<double>(MassSpring::kSinusoid);
  expect_packs_match_scalar<double>(MassSpring::kRaw);
  expect_packs_match_scalar<float>(MassSpring::kSinusoid);
}

// the config keys: model.integrator, model.newton_iterations, and the refusals (exit 2)
TEST(ImplicitMassSpring, ConfigKeys) {
  using nlohmann::json;
  json j = json::parse(R"({
    "name": "ms",
    "model": {"type": "mass_spring", "dim": 2, "integrator": "backward_euler", "newton_iterations": 25,
              "robot": {"grid": {"cells": [[0, 0], [1, 0]], "stiffness": 3e5}}},
    "simulation": {"dt": 0.004, "steps": 40},
    "loss": {"com_displacement": {"axis": "x"}},
    "validation": {"enabled": false}
  })");
  ExperimentConfig c = parse_config(j);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.integrator, MassSpring::kBackwardEuler);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.newton_iterations, 25);
  json d = j;
  d["model"].erase("integrator");
  d["model"].erase("newton_iterations");
  EXPECT_EQ(parse_config(d).model_state<MassSpringSetup>().model.integrator,
            MassSpring::kSymplecticEuler);
  json bad = j;
  bad["model"]["integrator"] = "rk4";
  expect_config_error(bad, {"model.integrator", "symplectic_euler", "backward_euler"});
  bad = j;
  bad["model"]["newton_iterations"] = 0;
  expect_config_error(bad, {"model.newton_iterations", "500"});
  bad = d;
  bad["model"]["newton_iterations"] = 10;
  expect_config_error(bad, {"model.newton_iterations", "backward_euler"});
  bad = j;
  bad["model"]["ground"] = {{"type", "impact"}};
  expect_config_error(bad, {"model.integrator", "penalty"});
  // springs joining particles i and 39 − i: bandwidth 2 (39 + 1) − 1 = 79, 80 coordinates x 80
  // band entries > kImplicitBand (the same robot numbered along the chain would have bandwidth 3)
  bad = j;
  json parts = json::array(), springs = json::array();
  for (int i = 0; i < 40; ++i) parts.push_back({0.1 * i, 0.1});
  for (int i = 0; i < 20; ++i) springs.push_back({i, 39 - i, 0.1, 1000, 0.0});
  for (int i = 0; i + 1 < 40; ++i) springs.push_back({i, i + 1, 0.1, 1000, 0.0});
  bad["model"]["robot"] = {{"particles", parts}, {"springs", springs}};
  expect_config_error(bad,
                      {"model.integrator", std::to_string(MassSpring::kImplicitBand), "80 x 80"});
}

#endif  // !STEER_CUDA_EMULATION

#if defined(STEER_CUDA_EMULATION)
// This file built a second time against the emulated device (tests/backend/cuda_emulation; the
// target emulated_implicit_mass_spring_test): the real CUDA kernels, a warp of 32 lanes per
// mass-spring rollout with the leading lane running the implicit step and its adjoint, against
// the CPU backend (SIMD packs) on the same batch. The emulator computes as the CPU does (host
// transcendentals, no contracted multiply-adds), so the loss and every gradient must agree to
// 1e-12 relative per rollout in float64 and 1e-5 in float32 (the order of the rollout code's
// own sums aside, the two run the same arithmetic; observed differences are printed).
namespace {
template <class R>
void expect_device_matches_cpu() {
  const Robot r = four_cells(2e4);
  MassSpring m = implicit_model(r);
  const int B = 12, T = 40;
  Batch<R> batch;
  batch.resize(B, m.nx(), m.nu(), m.np(), T);
  std::mt19937_64 rng(9);
  for (int b = 0; b < B; ++b) {
    std::vector<double> x(m.nx()), u(size_t(T) * m.nu()), p(m.np());
    draw_mass_spring_rollout<double>(m, r, T, rng, x.data(), u.data(), p.data());
    if (b % 2 == 1)
      for (int s = 0; s < m.n_springs; ++s) p[m.p_stiffness(s)] *= 15.0;  // up to 3.6e5 N/m
    std::transform(x.begin(), x.end(), batch.x0_of(b), [](double v) { return R(v); });
    std::transform(p.begin(), p.end(), batch.theta_of(b), [](double v) { return R(v); });
  }
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 7;
  const Loss loss = com_loss();
  BatchResult<R> cpu, gpu;
  run_batch(BackendKind::kCpu, m, loss, sh, batch, true, cpu);
  run_batch(BackendKind::kCuda, m, loss, sh, batch, true, gpu);
  const double tol = std::is_same<R, double>::value ? 1e-12 : 1e-5;
  double worst = 0, gmax = 0;
  auto compare = [&](const std::vector<R>& a, const std::vector<R>& b, size_t n, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (int k = 0; k < B; ++k) {
      double scale = 1.0, diff = 0.0;
      for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(double(b[k * n + i])));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(std::isfinite(double(a[k * n + i]))) << what << " rollout " << k;
        diff = std::max(diff, std::fabs(double(a[k * n + i]) - double(b[k * n + i])));
      }
      worst = std::max(worst, diff / scale);
      EXPECT_LE(diff / scale, tol) << what << " rollout " << k;
    }
  };
  compare(gpu.loss, cpu.loss, 1, "loss");
  compare(gpu.grad_x0, cpu.grad_x0, m.nx(), "dL/dx0");
  compare(gpu.grad_theta, cpu.grad_theta, m.np(), "dL/dtheta");
  for (R g : cpu.grad_theta) gmax = std::max(gmax, std::fabs(double(g)));
  EXPECT_GT(gmax, 1e-6) << "all-zero gradients would make the comparison vacuous";
  std::printf("  %s: largest relative difference device vs CPU %.3g\n",
              std::is_same<R, double>::value ? "float64" : "float32", worst);
}
}  // namespace

TEST(ImplicitMassSpring, EmulatedDeviceMatchesCpu) {
  ASSERT_TRUE(cuda_status().available) << cuda_status().reason;
  expect_device_matches_cpu<double>();
  expect_device_matches_cpu<float>();
}
#endif  // STEER_CUDA_EMULATION

}  // namespace steer::testing
