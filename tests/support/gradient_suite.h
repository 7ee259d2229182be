// The generic gradient suite every model goes through (docs/design.md, "The model contract:
// step and adjoint"). A model's test file supplies a Provider with step cases and rollout cases and
// instantiates the typed suite:
//
//   struct MyProvider { using Model = MyModel;
//                       static std::vector<StepCase<MyModel>> step_cases();
//                       static std::vector<RolloutCase<MyModel>> rollout_cases(); };
//   INSTANTIATE_TYPED_TEST_SUITE_P(MyModel, GradientSuite, ::testing::Types<MyProvider>);
//
// All checks in float64. Tolerances:
//   hand adjoint vs dual reference, per step and through rollouts: ≤ 1e-12 relative to max(1, ‖g‖∞)
//     (the two differ only in rounding order)
//   dual Jacobian vs centered FD per step (ε = 1e-6 · max(fd_scale, |z_i|)): ≤ 1e-6 · max(1,
//   |J_ij|) rollout gradient vs centered FD per variable (ε = 1e-6 · max(1, |z_i|)):
//     |fd − g| ≤ 1e-6 · max(|g|, |fd|) + 1e-9
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "steer/backend.h"
#include "steer/reference_adjoint.h"
#include "steer/step_tapes.h"

namespace steer::testing {

template <class Model>
struct StepCase {
  std::string name;
  Model model;
  std::vector<double> x, u, p;
  // FD step ε_i = 1e-6 · max(fd_scale, |z_i|): lower fd_scale for cases whose inputs vary on a
  // small length scale (a narrow contact smoothing width), so that ε stays far below it
  double fd_scale = 1.0;
  int k = 0;  // step index (time t = k·dt) the step is taken at
  // false at a genuine discontinuity (a zero-length spring's direction is undefined): FD
  // has no derivative to agree with there, so only finiteness and hand-vs-dual are checked
  bool smooth = true;
};

template <class Model>
struct RolloutCase {
  std::string name;
  Model model;
  Loss loss;
  int steps = 50;
  int checkpoint_every = 7;
  std::vector<double> x0, u, p;  // u: [T·nu]
  // FD step ε_i = 1e-6 · max(fd_scale, |z_i|) (as StepCase's)
  double fd_scale = 1.0;
};

// the running terms the articulated rollout cases share: control effort (weight 1e-3), the
// centre of mass along x (0.5) and, when the model has a site, a running target on site 0 (0.3)
inline void add_effort_com_site_terms(Loss& loss, bool site) {
  loss.effort_weight = 1e-3;
  loss.com = true;
  loss.com_axis = 0;
  loss.com_weight = 0.5;
  if (!site) return;
  loss.n_site = 1;
  loss.site_index[0] = 0;
  loss.site_running[0] = true;
  loss.site_weight[0] = 0.3;
  for (int a = 0; a < 3; ++a) loss.site_target[0][a] = 0.1 * a, loss.site_param[0][a] = -1;
}

// an articulated model's rollout case at `integrator`: θ and x0 as given, `steps` steps
// checkpointed every 4, controls u_i = amplitude cos(0.37 i) over the flat [T·nu] array,
// terminal terms ½ (x_T[terminal[t]] − 0.1 t)² and add_effort_com_site_terms
template <class Model>
RolloutCase<Model> articulated_rollout_case(const std::string& name, const Model& m,
                                            const std::vector<double>& theta,
                                            std::vector<double> x0, int integrator, int steps,
                                            double amplitude, const std::vector<int>& terminal) {
  RolloutCase<Model> r;
  r.name = name;
  r.model = m;
  r.model.integrator = integrator;
  r.p = theta;
  r.steps = steps;
  r.checkpoint_every = 4;
  r.x0 = std::move(x0);
  r.u.assign(size_t(steps) * size_t(m.nu()), 0.0);
  for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = amplitude * std::cos(0.37 * double(i));
  r.loss.n_terminal = int(terminal.size());
  for (int t = 0; t < r.loss.n_terminal; ++t)
    r.loss.terminal_index[t] = terminal[size_t(t)], r.loss.terminal_target[t] = 0.1 * t,
    r.loss.terminal_weight[t] = 1.0;
  add_effort_com_site_terms(r.loss, m.n_sites > 0);
  return r;
}

inline double inf_norm(const std::vector<double>& v) {
  double m = 0;
  for (double a : v) m = std::max(m, std::fabs(a));
  return m;
}

// hand and dual vector-Jacobian products of one step for a random cotangent
template <class Model>
void step_vjps(const StepCase<Model>& c, const std::vector<double>& adj_xn,
               std::vector<double>& hand, std::vector<double>& dual) {
  const Model& m = c.model;
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  std::vector<double> hx(nx, 0), hu(nu, 0), hp(np, 0), dx(nx, 0), du(nu, 0), dp(np, 0);
  auto X = view(const_cast<double*>(c.x.data()));
  auto U = view(const_cast<double*>(c.u.data()));
  auto P = view(const_cast<double*>(c.p.data()));
  auto A = view(const_cast<double*>(adj_xn.data()));
  auto vhx = view(hx.data()), vhu = view(hu.data()), vhp = view(hp.data());
  auto vdx = view(dx.data()), vdu = view(du.data()), vdp = view(dp.data());
  m.template adj_step<double>(c.k, X, U, P, vhx, vhu, vhp, A);
  dual_adj_step<Model, double>(m, c.k, X, U, P, vdx, vdu, vdp, A);
  hand = hx;
  hand.insert(hand.end(), hu.begin(), hu.end());
  hand.insert(hand.end(), hp.begin(), hp.end());
  dual = dx;
  dual.insert(dual.end(), du.begin(), du.end());
  dual.insert(dual.end(), dp.begin(), dp.end());
}

// one step f(x, u, θ) -> x'
template <class Model>
std::vector<double> step_value(const Model& m, int k, const std::vector<double>& x,
                               const std::vector<double>& u, const std::vector<double>& p) {
  std::vector<double> y(m.nx(), 0.0);
  auto Y = view(y.data());
  m.template step<double>(k, view(const_cast<double*>(x.data())),
                          view(const_cast<double*>(u.data())), view(const_cast<double*>(p.data())),
                          Y);
  return y;
}

// one rollout's forward and backward sweep on plain vectors (one lane), with the model's step
// tape (K = sh.checkpoint_every tapes) or without it: the taped-vs-untaped bit tests
struct SweepOut {
  std::vector<double> ckpt, seg, lam, lam_prev, gx0, gu, gp;
  double loss = 0;
  RolloutDiag diag{};
};
template <class Model>
SweepOut forward_backward_sweep(const Model& m, const Loss& loss, const RolloutShape& sh,
                                const std::vector<double>& x0, const std::vector<double>& u,
                                const std::vector<double>& p, bool taped) {
  const int nx = m.nx();
  SweepOut o;
  o.ckpt.assign(size_t(sh.checkpoint_slots()) * nx, 0.0);
  o.seg.assign(size_t(sh.segment_slots()) * nx, 0.0);
  o.lam.assign(nx, 0.0);
  o.lam_prev.assign(nx, 0.0);
  o.gx0.assign(nx, 0.0);
  o.gu.assign(u.size(), 0.0);
  o.gp.assign(m.np(), 0.0);
  RolloutRefs<double> r;
  r.x0 = {x0.data(), 1};
  r.u = {u.data(), 1};
  r.p = {p.data(), 1};
  r.ckpt = view(o.ckpt.data());
  r.seg = view(o.seg.data());
  r.lam = view(o.lam.data());
  r.lam_prev = view(o.lam_prev.data());
  r.grad_x0 = view(o.gx0.data());
  r.grad_u = view(o.gu.data());
  r.grad_p = view(o.gp.data());
  r.loss = &o.loss;
  r.diag = &o.diag;
  StepTapes<Model, double> tape(m, taped ? sh.checkpoint_every : 0);
  forward_rollout<Model, double>(m, loss, sh, r);
  backward_rollout<Model, double>(m, loss, sh, r, Lanes{}, taped ? tape.data() : nullptr);
  return o;
}

// the full rollout gradient (x0, u, θ) of a case, on the CPU
template <class Model>
std::vector<double> rollout_gradient(const RolloutCase<Model>& c, bool reference, int K,
                                     double* loss = nullptr) {
  const Model& m = c.model;
  Batch<double> b;
  b.resize(1, m.nx(), m.nu(), m.np(), c.steps);
  b.x0 = c.x0;
  b.u = c.u;
  b.theta = c.p;
  RolloutShape sh;
  sh.steps = c.steps;
  sh.checkpoint_every = K;
  sh.reference_adjoint = reference;
  BatchResult<double> out;
  cpu_run_batch<Model, double>(m, c.loss, sh, b, true, out, 1);
  if (loss) *loss = out.loss[0];
  std::vector<double> g = out.grad_x0;
  g.insert(g.end(), out.grad_u.begin(), out.grad_u.end());
  g.insert(g.end(), out.grad_theta.begin(), out.grad_theta.end());
  return g;
}

// centered FD of the rollout loss for every input (x0, u, θ), as one batch of 2n rollouts
template <class Model>
std::vector<double> rollout_fd(const RolloutCase<Model>& c,
                               std::vector<double>* eps_out = nullptr) {
  const Model& m = c.model;
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  const int n = nx + c.steps * nu + np;
  Batch<double> b;
  b.resize(2 * n, nx, nu, np, c.steps);
  std::vector<double> eps(n);
  for (int r = 0; r < 2 * n; ++r) {
    std::copy(c.x0.begin(), c.x0.end(), b.x0_of(r));
    std::copy(c.u.begin(), c.u.end(), b.u_of(r));
    std::copy(c.p.begin(), c.p.end(), b.theta_of(r));
  }
  for (int i = 0; i < n; ++i) {
    double* slot[2];
    for (int s = 0; s < 2; ++s) {
      const int r = 2 * i + s;
      slot[s] = i < nx ? b.x0_of(r) + i
                       : (i < nx + c.steps * nu ? b.u_of(r) + (i - nx)
                                                : b.theta_of(r) + (i - nx - c.steps * nu));
    }
    eps[i] = 1e-6 * std::max(c.fd_scale, std::fabs(*slot[0]));
    *slot[0] += eps[i];
    *slot[1] -= eps[i];
  }
  RolloutShape sh;
  sh.steps = c.steps;
  sh.checkpoint_every = c.checkpoint_every;
  BatchResult<double> out;
  cpu_run_batch<Model, double>(m, c.loss, sh, b, false, out);
  std::vector<double> fd(n);
  for (int i = 0; i < n; ++i) fd[i] = (out.loss[2 * i] - out.loss[2 * i + 1]) / (2 * eps[i]);
  if (eps_out) *eps_out = eps;
  return fd;
}

template <class Provider>
class GradientSuite : public ::testing::Test {};
TYPED_TEST_SUITE_P(GradientSuite);

// per step: hand adjoint == dual reference (to rounding) for random cotangents
TYPED_TEST_P(GradientSuite, StepHandAdjointMatchesDual) {
  using Model = typename TypeParam::Model;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0, 1);
  for (const auto& c : TypeParam::step_cases()) {
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<double> adj(c.model.nx());
      for (auto& a : adj) a = g(rng);
      std::vector<double> hand, dual;
      step_vjps<Model>(c, adj, hand, dual);
      const double scale = std::max(1.0, inf_norm(dual));
      for (size_t i = 0; i < hand.size(); ++i) {
        ASSERT_TRUE(std::isfinite(hand[i])) << c.name << " input " << i;
        EXPECT_NEAR(hand[i], dual[i], 1e-12 * scale) << c.name << " input " << i;
      }
    }
  }
}

// per step: dual Jacobian == centered finite differences
TYPED_TEST_P(GradientSuite, StepDualMatchesFiniteDifferences) {
  using Model = typename TypeParam::Model;
  for (const auto& c : TypeParam::step_cases()) {
    if (!c.smooth) continue;
    const Model& m = c.model;
    const int nx = m.nx(), nu = m.nu(), np = m.np(), n = nx + nu + np;
    std::vector<double> J(size_t(nx) * n);
    dual_jacobian<Model, double>(m, c.k, view(const_cast<double*>(c.x.data())),
                                 view(const_cast<double*>(c.u.data())),
                                 view(const_cast<double*>(c.p.data())), J.data());
    for (int j = 0; j < n; ++j) {
      std::vector<double> xp = c.x, xm = c.x, up = c.u, um = c.u, pp = c.p, pm = c.p;
      double* sp = j < nx ? &xp[j] : (j < nx + nu ? &up[j - nx] : &pp[j - nx - nu]);
      double* sm = j < nx ? &xm[j] : (j < nx + nu ? &um[j - nx] : &pm[j - nx - nu]);
      const double eps = 1e-6 * std::max(c.fd_scale, std::fabs(*sp));
      *sp += eps;
      *sm -= eps;
      std::vector<double> yp = step_value(m, c.k, xp, up, pp), ym = step_value(m, c.k, xm, um, pm);
      for (int i = 0; i < nx; ++i) {
        const double fd = (yp[i] - ym[i]) / (2 * eps);
        const double jd = J[size_t(i) * n + j];
        ASSERT_TRUE(std::isfinite(jd)) << c.name;
        EXPECT_NEAR(jd, fd, 1e-6 * std::max(1.0, std::fabs(jd)))
            << c.name << " d out " << i << " / d in " << j;
      }
    }
  }
}

// the adjoint reads its inputs and never writes them
TYPED_TEST_P(GradientSuite, AdjointLeavesInputsUnchanged) {
  using Model = typename TypeParam::Model;
  for (const auto& c : TypeParam::step_cases()) {
    std::vector<double> x = c.x, u = c.u, p = c.p, adj(c.model.nx(), 0.5);
    const std::vector<double> x0 = x, u0 = u, p0 = p, a0 = adj;
    std::vector<double> ax(c.model.nx(), 0), au(c.model.nu(), 0), ap(c.model.np(), 0);
    auto vax = view(ax.data()), vau = view(au.data()), vap = view(ap.data());
    c.model.template adj_step<double>(c.k, view(x.data()), view(u.data()), view(p.data()), vax, vau,
                                      vap, view(adj.data()));
    EXPECT_EQ(x, x0) << c.name;
    EXPECT_EQ(u, u0) << c.name;
    EXPECT_EQ(p, p0) << c.name;
    EXPECT_EQ(adj, a0) << c.name;
    (void)sizeof(Model);
  }
}

// through rollouts: hand adjoint == dual-reference adjoint
TYPED_TEST_P(GradientSuite, RolloutHandMatchesReference) {
  for (const auto& c : TypeParam::rollout_cases()) {
    std::vector<double> hand = rollout_gradient(c, false, c.checkpoint_every);
    std::vector<double> ref = rollout_gradient(c, true, c.checkpoint_every);
    const double scale = std::max(1.0, inf_norm(ref));
    ASSERT_EQ(hand.size(), ref.size());
    for (size_t i = 0; i < hand.size(); ++i)
      EXPECT_NEAR(hand[i], ref[i], 1e-12 * scale) << c.name << " input " << i;
  }
}

// through rollouts: gradient == centered FD for every input
TYPED_TEST_P(GradientSuite, RolloutMatchesFiniteDifferences) {
  for (const auto& c : TypeParam::rollout_cases()) {
    std::vector<double> g = rollout_gradient(c, false, c.checkpoint_every);
    std::vector<double> fd = rollout_fd(c);
    ASSERT_EQ(g.size(), fd.size());
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_TRUE(std::isfinite(g[i])) << c.name << " input " << i;
      EXPECT_NEAR(g[i], fd[i], 1e-6 * std::max(std::fabs(g[i]), std::fabs(fd[i])) + 1e-9)
          << c.name << " input " << i;
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(GradientSuite, StepHandAdjointMatchesDual,
                            StepDualMatchesFiniteDifferences, AdjointLeavesInputsUnchanged,
                            RolloutHandMatchesReference, RolloutMatchesFiniteDifferences);

}  // namespace steer::testing
