// The site, running-state and trajectory-fitting losses (include/steer/loss.h): their adjoints
// against dual numbers and centered FD (the gradient suite, float64), the packed CPU path
// against the scalar one bit for bit, the tracking table's interpolation, the data files'
// errors (exit 2 naming the key), per-step controls from a file, the gradient side file and a
// small system identification through the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/data_file.h"
#include "gradient_suite.h"
#include "loss_terms.h"
#include "models/articulated/articulated_setup.h"
#include "problem/problem.h"
#include "run_cli.h"
#include "steer/cpu_packed.h"
#include "steer/dual.h"
#include "steer/models/projectile.h"
#include "temp_dir.h"

namespace steer {
namespace {

using testing::add_site_term;
using testing::RolloutCase;
using testing::StepCase;
using testing::TempDir;

// A test double with sites (never in the library): the 2D projectile plus two named points
// that are polynomials of the state and of θ[kMass] (a), so that their adjoints reach x and θ:
//   site 0 = (x0 + a x1², a x1 + x0², x0 x1 − a),   site 1 = (x2 x3, a² x1, x3 − x0)
// and a "rotation" per site whose entries are such polynomials too (the loss treats R as nine
// numbers; orthogonality plays no part in its adjoint): R_i = c_i + x_(i mod 4) x_((i+s) mod 4) + a
// x_(i mod 4)
struct SiteProjectile : Projectile {
  int n_sites = 2;
  template <class S, class XIn, class PIn>
  STEER_HD void site_position(const XIn& x, const PIn& p, int s, S out[3]) const {
    const S x0 = S(x[0]), x1 = S(x[1]), x2 = S(x[2]), x3 = S(x[3]), a = S(p[kMass]);
    if (s == 0) {
      out[0] = x0 + a * x1 * x1;
      out[1] = a * x1 + x0 * x0;
      out[2] = x0 * x1 - a;
    } else {
      out[0] = x2 * x3;
      out[1] = a * a * x1;
      out[2] = x3 - x0;
    }
  }
  template <class S, class XIn, class PIn>
  STEER_HD void site_rotation(const XIn& x, const PIn& p, int s, S out[9]) const {
    const S a = S(p[kMass]);
    for (int i = 0; i < 9; ++i)
      out[i] = S(0.1 * i) + S(x[i % 4]) * S(x[(i + s) % 4]) + a * S(x[i % 4]);
  }
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_site_rotation(const XIn& x, const PIn& p, int s, XAdj& adj_x, PAdj& adj_p,
                                  const S g[9]) const {
    const S a = S(p[kMass]);
    for (int i = 0; i < 9; ++i) {
      const int j = i % 4, k = (i + s) % 4;
      adj_x[j] += g[i] * (S(x[k]) + a);
      adj_x[k] += g[i] * S(x[j]);
      adj_p[kMass] += g[i] * S(x[j]);
    }
  }
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_site_position(const XIn& x, const PIn& p, int s, XAdj& adj_x, PAdj& adj_p,
                                  const S g[3]) const {
    const S x0 = S(x[0]), x1 = S(x[1]), x2 = S(x[2]), x3 = S(x[3]), a = S(p[kMass]);
    if (s == 0) {
      adj_x[0] += g[0] + S(2) * x0 * g[1] + x1 * g[2];
      adj_x[1] += S(2) * a * x1 * g[0] + a * g[1] + x0 * g[2];
      adj_p[kMass] += x1 * x1 * g[0] + x1 * g[1] - g[2];
    } else {
      adj_x[2] += x3 * g[0];
      adj_x[3] += x2 * g[0] + g[2];
      adj_x[1] += a * a * g[1];
      adj_x[0] -= g[2];
      adj_p[kMass] += S(2) * a * x1 * g[1];
    }
  }
};

std::vector<double> projectile_theta() {
  std::vector<double> p(Projectile::kNumParams, 0.0);
  p[Projectile::kGravity] = 9.81;
  p[Projectile::kDrag] = 0.1;
  p[Projectile::kMass] = 1.3;
  p[Projectile::kGroundStiffness] = 0.4;  // unused by the dynamics (no ground): a θ target
  p[Projectile::kGroundDamping] = -0.2;   // the same
  return p;
}

SiteProjectile site_projectile() {
  SiteProjectile m;
  m.dim = 2;
  m.dt = 0.01;
  return m;
}

// a tracking table of `rows` rows over the channels: references from smooth curves, one
// channel unobserved at every third step (weight 0)
std::vector<double>& table_for(int rows, const std::vector<int>& channels) {
  static std::vector<std::vector<double>> keep;  // the Loss points into these for the test's life
  keep.emplace_back(size_t(2) * rows * channels.size(), 0.0);
  std::vector<double>& t = keep.back();
  for (int k = 0; k < rows; ++k)
    for (size_t c = 0; c < channels.size(); ++c) {
      t[(size_t(k) * channels.size() + c) * 2] =
          0.3 * std::sin(0.1 * k + double(c)) + 0.05 * double(c);
      // weights that keep the loss of order one: centered FD's rounding error grows with |L|
      t[(size_t(k) * channels.size() + c) * 2 + 1] =
          (c == 1 && k % 3 == 0) ? 0.0 : 0.02 + 0.01 * double(c);
    }
  return t;
}

void set_track(Loss& l, int rows, const std::vector<int>& channels) {
  testing::point_at_table(l, rows, channels, table_for(rows, channels));
}

Loss site_terminal_loss() {
  Loss l;
  const double tg0[3] = {3.0, 0.5, -1.0};
  add_site_term(l, 0, 1.5, false, tg0);
  // site 1's target from θ slots: a per-rollout (drawn or variable) target
  const double tg1[3] = {0.0, 0.25, 0.0};
  const int th1[3] = {Projectile::kGroundStiffness, -1, Projectile::kGroundDamping};
  add_site_term(l, 1, 0.7, false, tg1, th1);
  // and an orientation target on site 0
  l.site_rot_weight[0] = 0.3;
  for (int i = 0; i < 9; ++i) l.site_rot_target[0][i] = 0.2 * i - 0.5;
  return l;
}

Loss running_loss() {
  Loss l;
  const double tg[3] = {0.0, 0.1, 0.2};
  add_site_term(l, 1, 0.05, true, tg);
  l.site_rot_weight[0] = 0.01;  // a running orientation target
  for (int i = 0; i < 9; ++i) l.site_rot_target[0][i] = i % 4 == 0 ? 1.0 : 0.0;
  l.terminal_index[0] = 0;  // with a terminal state term beside them
  l.terminal_target[0] = 1.0;
  l.terminal_weight[0] = 1.0;
  l.n_terminal = 1;
  l.effort_weight = 0.01;
  return l;
}

struct SiteProvider {
  using Model = SiteProjectile;
  static std::vector<StepCase<SiteProjectile>> step_cases() {
    return {{"free", site_projectile(), {0.1, 0.7, 1.2, -0.3}, {0.5, -0.2}, projectile_theta()}};
  }
  static std::vector<RolloutCase<SiteProjectile>> rollout_cases() {
    const int T = 40;
    std::vector<double> u(size_t(T) * 2);
    for (int k = 0; k < T; ++k)
      u[size_t(2 * k)] = 0.3 * std::cos(0.2 * k), u[size_t(2 * k + 1)] = 0.1;
    const std::vector<double> x0 = {0.1, 0.4, 1.1, 0.9};
    std::vector<RolloutCase<SiteProjectile>> cs;
    cs.push_back({"terminal sites, constant and θ targets", site_projectile(), site_terminal_loss(),
                  T, 7, x0, u, projectile_theta()});
    cs.push_back({"running site target", site_projectile(), running_loss(), T, 6, x0, u,
                  projectile_theta()});
    Loss track;
    // state channels 0, 3, then site 0's x and z and site 1's y (adjacent per site)
    set_track(track, T + 1, {0, 3, -(1 + 0), -(1 + 2), -(1 + 3 + 1)});
    cs.push_back({"tracking table, states and sites", site_projectile(), track, T, 7, x0, u,
                  projectile_theta()});
    Loss partial;
    set_track(partial, T / 2, {1, -(1 + 3 + 0)});  // rows for the first half only
    const double origin[3] = {0.0, 0.0, 0.0};
    add_site_term(partial, 0, 2.0, false, origin);
    cs.push_back({"tracking over part of the horizon with a terminal site", site_projectile(),
                  partial, T, 5, x0, u, projectile_theta()});
    return cs;
  }
};

// The Panda (configs/panda.json) with a site 0.1 m beyond link7's origin: site terms and a
// tracking table with site and state channels through the arm's hand adjoint (implicitfast)
// and its dual-number step (rk4), in the gradient suite's tolerances
Articulated panda_with_site(const ExperimentConfig& c, int integrator) {
  Articulated m = c.model_state<ArticulatedSetup>().model;
  m.integrator = integrator;
  m.n_sites = 1;
  m.site_body[0] = m.n_bodies - 1;
  m.site_pos[0][0] = 0.02, m.site_pos[0][1] = -0.01, m.site_pos[0][2] = 0.1;
  for (int i = 0; i < 9; ++i) m.site_rot[0][i] = i % 4 == 0 ? 1.0 : 0.0;
  return m;
}

struct PandaSiteProvider {
  using Model = Articulated;
  static ExperimentConfig config() {
    return load_config(std::string(STEER_SOURCE_DIR) + "/configs/panda.json");
  }
  static std::vector<StepCase<Articulated>> step_cases() {
    const ExperimentConfig c = config();
    std::vector<double> x = c.x0;
    for (size_t i = 7; i < x.size(); ++i) x[i] = 0.1 * double(i % 3);
    return {{"panda implicitfast", panda_with_site(c, Articulated::kImplicitFast), x,
             std::vector<double>(7, 0.5), c.theta}};
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    const ExperimentConfig c = config();
    const int T = 20;
    std::vector<double> u(size_t(T) * 7);
    for (size_t i = 0; i < u.size(); ++i) u[i] = 3.0 * std::sin(0.37 * double(i));
    std::vector<RolloutCase<Articulated>> cs;
    for (int integ : {int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      const Articulated m = panda_with_site(c, integ);
      const std::string tag = integ == Articulated::kRk4 ? " (rk4)" : " (implicitfast)";
      // rk4 is explicit in the servo: the Panda's gains (kp 2000-4500) need implicitfast at
      // 2 ms, so the rk4 cases run gentle gains (kp 50, kv 5) to stay stable
      std::vector<double> p = c.theta;
      if (integ == Articulated::kRk4)
        for (int j = 0; j < 7; ++j)
          p[size_t(m.p_joint(j, Articulated::kKp))] = 50,
                                p[size_t(m.p_joint(j, Articulated::kKv))] = 5;
      Loss l;
      // weights that keep L of order one (centered FD's rounding grows with |L|)
      const double goal[3] = {0.45, 0.05, 0.55}, level[3] = {0.3, 0.3, 0.0};
      add_site_term(l, 0, 0.5, false, goal);
      // a running target whose z is a θ slot (joint 7's PD target here: any slot will do)
      const int z_slot[3] = {-1, -1, m.p_joint(6, Articulated::kTarget)};
      add_site_term(l, 0, 0.05, true, level, z_slot);
      // the hand's orientation at x_T against a rotation of 0.3 rad about x
      l.site_rot_weight[0] = 0.5;
      const double cx = std::cos(0.3), sx = std::sin(0.3);
      const double Rx[9] = {1, 0, 0, 0, cx, -sx, 0, sx, cx};
      for (int i = 0; i < 9; ++i) l.site_rot_target[0][i] = Rx[i];
      cs.push_back({"panda site targets" + tag, m, l, T, 6, c.x0, u, p});
      Loss t;
      set_track(t, T + 1, {1, 9, -(1 + 0), -(1 + 2)});
      cs.push_back({"panda tracking table with a site" + tag, m, t, T, 7, c.x0, u, p});
    }
    return cs;
  }
};

// the per-state loss terms' hand adjoints against forward-mode duals of the same terms, exact to
// rounding (≤ 1e-12 relative to max(1, ‖g‖∞)), in x and θ at once
TEST(LossTerms, AdjointsMatchDualNumbers) {
  const SiteProjectile m = site_projectile();
  const std::vector<double> x = {0.3, -0.8, 1.7, 0.45};
  const std::vector<double> p = projectile_theta();
  constexpr int N = 4 + Projectile::kNumParams;
  using D = Dual<double, N>;
  std::vector<D> xd, pd;
  for (int i = 0; i < 4; ++i) xd.push_back(D::variable(x[size_t(i)], i));
  for (int i = 0; i < Projectile::kNumParams; ++i) pd.push_back(D::variable(p[size_t(i)], 4 + i));
  const View<const D> X{xd.data(), 1}, P{pd.data(), 1};
  const View<const double> Xv{x.data(), 1}, Pv{p.data(), 1};
  std::vector<Loss> losses = {site_terminal_loss(), running_loss()};
  Loss track;
  set_track(track, 5, {2, -(1 + 1), -(1 + 2), 1, -(1 + 3 + 2)});
  losses.push_back(track);
  for (size_t li = 0; li < losses.size(); ++li) {
    const Loss& l = losses[li];
    for (int k = 0; k < 5; ++k) {
      const D v = l.state_running<D>(m, k, X, P) + l.site_terms<D>(m, X, P, false);
      std::vector<double> gx(4, 0.0), gp(Projectile::kNumParams, 0.0);
      View<double> GX{gx.data(), 1}, GP{gp.data(), 1};
      l.adj_state_running<double>(m, k, Xv, Pv, GX, GP, 1.0);
      l.adj_site_terms<double>(m, Xv, Pv, false, GX, GP, 1.0);
      double scale = 1;
      for (int j = 0; j < N; ++j) scale = std::max(scale, std::fabs(v.v[j]));
      for (int i = 0; i < 4; ++i)
        EXPECT_NEAR(gx[size_t(i)], v.v[i], 1e-12 * scale)
            << "loss " << li << " k " << k << " x" << i;
      for (int i = 0; i < Projectile::kNumParams; ++i)
        EXPECT_NEAR(gp[size_t(i)], v.v[4 + i], 1e-12 * scale)
            << "loss " << li << " k " << k << " θ" << i;
      EXPECT_GT(v.a, 0.0);
    }
  }
}

// the Panda (configs/panda.json) with a tracking table on joint angles and velocities: the
// packed CPU path (SIMD groups of rollouts) gives each rollout's bits of its scalar run
TEST(LossTerms, PackedPathMatchesScalarBits) {
  const ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/panda.json");
  const Articulated m = c.model_state<ArticulatedSetup>().model;
  const int T = 30, B = 5;
  Loss loss = c.loss;
  set_track(loss, T + 1, {0, 3, 6, 7, 12});
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 6;
  const Batch<double> b = testing::sine_batch(c, m.nx(), m.nu(), m.np(), B, T, 2.0, 0.3);
  ASSERT_TRUE((use_packed_path<Articulated, double>(m, sh, B)));
  BatchResult<double> all;
  cpu_run_batch<Articulated, double>(m, loss, sh, b, true, all, 2);
  for (int r = 0; r < B; ++r) {
    Batch<double> one;
    one.resize(1, m.nx(), m.nu(), m.np(), T);
    std::copy_n(b.x0_of(r), m.nx(), one.x0.begin());
    std::copy_n(b.u_of(r), T * m.nu(), one.u.begin());
    std::copy_n(b.theta_of(r), m.np(), one.theta.begin());
    BatchResult<double> alone;
    cpu_run_batch<Articulated, double>(m, loss, sh, one, true, alone, 1);
    EXPECT_EQ(std::memcmp(&all.loss[size_t(r)], &alone.loss[0], sizeof(double)), 0) << r;
    EXPECT_EQ(std::memcmp(all.grad_u.data() + size_t(r) * T * m.nu(), alone.grad_u.data(),
                          sizeof(double) * T * m.nu()),
              0)
        << r;
    EXPECT_EQ(std::memcmp(all.grad_theta.data() + size_t(r) * m.np(), alone.grad_theta.data(),
                          sizeof(double) * m.np()),
              0)
        << r;
    EXPECT_EQ(std::memcmp(all.grad_x0.data() + size_t(r) * m.nx(), alone.grad_x0.data(),
                          sizeof(double) * m.nx()),
              0)
        << r;
  }
  // the table's terms changed the loss (the test would pass vacuously otherwise)
  BatchResult<double> plain;
  cpu_run_batch<Articulated, double>(m, c.loss, sh, b, false, plain, 2);
  EXPECT_GT(std::fabs(all.loss[0] - plain.loss[0]), 1e-6);
}

// ---- configs and files ----

std::string write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  return p.string();
}

nlohmann::json projectile_config(int steps) {
  nlohmann::json j = {
      {"name", "tracking"},
      {"model",
       {{"type", "projectile"},
        {"dim", 2},
        {"gravity", 9.81},
        {"drag", 0.2},
        {"mass", 1.0},
        {"ground", {{"type", "none"}}}}},
      {"simulation",
       {{"dt", 0.01}, {"steps", steps}, {"precision", "float64"}, {"backend", "cpu"}}},
      {"initial_state", {{"position", {0.0, 0.0}}, {"velocity", {2.5, 1.0}}}},
      {"batch", {{"size", 1}, {"seed", 1}}},
      {"loss", nlohmann::json::object()},
      {"variables",
       {{"x0.velocity.x", {{"lower", -100}, {"upper", 100}}},
        {"theta.drag", {{"lower", 0}, {"upper", 2}}}}},
      {"optimizer", {{"method", "none"}}},
      {"validation",
       {{"enabled", true}, {"at", {"initial"}}, {"tolerance", 1e-6}, {"timestep_check", false}}},
      {"output", {{"dir", "runs"}, {"trajectory_stride", 1}, {"trajectory_rollouts", 1}}}};
  return j;
}

// observations of x and y every 0.025 s (between the steps of 0.01 s), y missing at 0.05 s
std::string observation_csv() {
  std::ostringstream s;
  s << "t,position.x,position.y\n";
  for (int i = 0; i <= 8; ++i) {
    const double t = 0.025 * i;
    s << t << "," << 2.4 * t << ",";
    if (i != 2) s << (1.0 * t - 4.9 * t * t);
    s << "\n";
  }
  return s.str();
}

TEST(TrackTable, InterpolatesAndWeighsObservations) {
  TempDir d("steer_losses");
  write_file(d.path / "obs.csv", observation_csv());
  nlohmann::json j = projectile_config(30);
  j["loss"] = {{"observations", {{"file", "obs.csv"}, {"weight", {{"position.y", 4.0}}}}}};
  const ExperimentConfig c = parse_config(j, d.path.string());
  ASSERT_EQ(c.loss.n_track, 2);
  ASSERT_EQ(c.loss.track_rows, 31);
  ASSERT_NE(c.loss.track, nullptr);
  const double* t = c.loss.track;
  auto ref = [&](int k, int ch) { return t[(size_t(k) * 2 + ch) * 2]; };
  auto w = [&](int k, int ch) { return t[(size_t(k) * 2 + ch) * 2 + 1]; };
  // x: linear in t, so the interpolation is exact at every step within [0, 0.2] s
  for (int k = 0; k <= 20; ++k) {
    EXPECT_NEAR(ref(k, 0), 2.4 * 0.01 * k, 1e-12) << k;
    EXPECT_EQ(w(k, 0), 1.0) << k;
  }
  // past the last observation (0.2 s) nothing is observed
  for (int k = 21; k <= 30; ++k) EXPECT_EQ(w(k, 0), 0.0) << k;
  // y at 0.03 s lies between 0.025 and 0.05 s, where y is missing: not observed; at 0.01 s it
  // is interpolated between 0 and 0.025 s
  EXPECT_EQ(w(3, 1), 0.0);
  EXPECT_EQ(w(7, 1), 0.0);
  EXPECT_EQ(w(1, 1), 4.0);
  const double y25 = 0.025 - 4.9 * 0.025 * 0.025;
  EXPECT_NEAR(ref(1, 1), 0.4 * y25, 1e-12);
  // interpolation "none": only the steps at observation times (0, 0.05, 0.1, … s) count
  j["loss"]["observations"]["interpolation"] = "none";
  const ExperimentConfig at = parse_config(j, d.path.string());
  for (int k = 0; k <= 30; ++k)
    EXPECT_EQ(at.loss.track[(size_t(k) * 2) * 2 + 1], (k % 5 == 0 && k <= 20) ? 1.0 : 0.0)
        << "none, step " << k;
  // the half-step twin: twice the rows, the weights halved (the running sum has twice the terms)
  const ExperimentConfig h = halved_timestep(c);
  ASSERT_EQ(h.loss.track_rows, 61);
  EXPECT_EQ(h.loss.track[(size_t(2) * 2 + 0) * 2 + 1], 0.5);
  EXPECT_NEAR(h.loss.track[(size_t(2) * 2 + 0) * 2], 2.4 * 0.01, 1e-12);
}

TEST(TrackTable, ReferenceFromNpyAndInlineValuesAgree) {
  TempDir d("steer_losses");
  const int T = 20;
  std::vector<double> v;
  nlohmann::json rows = nlohmann::json::array();
  for (int k = 0; k <= T; ++k) {
    v.push_back(0.02 * k);
    v.push_back(1.0 - 0.01 * k);
    rows.push_back({0.02 * k, 1.0 - 0.01 * k});
  }
  write_file(d.path / "ref.npy", npy_bytes(v, {T + 1, 2}));
  nlohmann::json j = projectile_config(T);
  j["loss"] = {{"reference",
                {{"file", "ref.npy"}, {"columns", {"position.x", "velocity.x"}}, {"weight", 2.0}}}};
  const ExperimentConfig a = parse_config(j, d.path.string());
  j["loss"] = {{"reference",
                {{"values", rows}, {"columns", {"position.x", "velocity.x"}}, {"weight", 2.0}}}};
  const ExperimentConfig b = parse_config(j, d.path.string());
  ASSERT_EQ(a.loss.n_track, 2);
  ASSERT_EQ(b.loss.n_track, 2);
  EXPECT_EQ(a.loss.track_channel[1], 2);  // velocity.x is state slot 2
  const size_t n = size_t(2) * 2 * (T + 1);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(a.loss.track[i], b.loss.track[i]) << i;
  EXPECT_EQ(a.loss.track[1], 2.0);
  // the loss of a problem is that of the table: a rollout that follows the reference exactly
  // in x... is not available in closed form; check the problem runs and its gradient passes
  std::unique_ptr<Problem> p = make_problem(a, BackendKind::kCpu, 1);
  Evaluation e;
  p->evaluate(p->initial(), true, e);
  EXPECT_TRUE(std::isfinite(e.loss[0]));
  EXPECT_GT(e.loss[0], 0.0);
}

// ---- CLI: errors name the key, exit 2 ----

struct CliCase {
  std::string what;
  nlohmann::json loss, controls;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> expect;  // substrings of stderr
};

TEST(LossFiles, ErrorsNameTheKeyAndExitTwo) {
  std::vector<CliCase> cases = {
      {"missing file",
       {{"reference", {{"file", "nope.csv"}}}},
       nullptr,
       {},
       {"loss.reference.file", "nope.csv"}},
      {"unknown column",
       {{"observations", {{"file", "o.csv"}}}},
       nullptr,
       {{"o.csv", "t,position.q\n0,1\n0.1,2\n"}},
       {"loss.observations.file", "position.q", "accepted"}},
      {"times not increasing",
       {{"observations", {{"file", "o.csv"}}}},
       nullptr,
       {{"o.csv", "t,position.x\n0,1\n0.05,2\n0.04,3\n"}},
       {"loss.observations.file", "row 2", "increase strictly"}},
      {"no time column",
       {{"observations", {{"file", "o.csv"}}}},
       nullptr,
       {{"o.csv", "position.x\n0\n1\n"}},
       {"loss.observations.file", "no time column"}},
      {"reference rows",
       {{"reference", {{"file", "r.csv"}}}},
       nullptr,
       {{"r.csv", "position.x\n0\n1\n"}},
       {"loss.reference.file", "expected simulation.steps + 1 = 11"}},
      {"npy without names",
       {{"reference", {{"file", "r.npy"}}}},
       nullptr,
       {{"r.npy", npy_bytes(std::vector<double>(11, 0.0), {11})}},
       {"loss.reference", "columns"}},
      {"bad number",
       {{"observations", {{"file", "o.csv"}}}},
       nullptr,
       {{"o.csv", "t,position.x\n0,1\n0.05,abc\n"}},
       {"loss.observations.file", "line 3", "abc"}},
      {"sites on a model without sites",
       {{"sites", {{{"site", "hand"}, {"target", {0, 0, 0}}}}}},
       nullptr,
       {},
       {"loss.sites", "has no sites"}},
      {"site column on a model without sites",
       {{"observations", {{"file", "o.csv"}}}},
       nullptr,
       {{"o.csv", "t,site.hand.x\n0,1\n0.05,2\n"}},
       {"loss.observations.file", "has no sites"}},
      {"control file rows",
       {{"terminal", {{{"state", "position.x"}, {"target", 1.0}}}}},
       {{"initial_file", "u.csv"}},
       {{"u.csv", std::string("force.x,force.y\n") +
                      [] {
                        std::string s;
                        for (int i = 0; i < 12; ++i) s += "0,0\n";
                        return s;
                      }()}},
       {"controls.initial_file", "12 rows", "at most simulation.steps = 10 rows and 2 columns"}},
      {"control file columns",
       {{"terminal", {{{"state", "position.x"}, {"target", 1.0}}}}},
       {{"initial_file", "u.csv"}},
       {{"u.csv", "1,2,3\n"}},
       {"controls.initial_file", "1 x 3 values", "2 columns (force.x, force.y)"}},
      {"control file and constant",
       {{"terminal", {{{"state", "position.x"}, {"target", 1.0}}}}},
       {{"initial_file", "u.csv"}, {"initial", {0, 0}}},
       {{"u.csv", "0,0\n"}},
       {"controls.initial_file", "not both"}},
  };
  for (const CliCase& k : cases) {
    TempDir d("steer_losses");
    for (const auto& [name, text] : k.files) write_file(d.path / name, text);
    nlohmann::json j = projectile_config(10);
    j["loss"] = k.loss;
    if (!k.controls.is_null()) j["controls"] = k.controls;
    const std::string cfg = write_file(d.path / "c.json", j.dump());
    const testing::CliResult r = testing::run_steer("check '" + cfg + "'", d.path);
    EXPECT_EQ(r.code, 2) << k.what << ": " << r.err;
    for (const auto& s : k.expect)
      EXPECT_NE(r.err.find(s), std::string::npos) << k.what << ": '" << s << "' not in: " << r.err;
  }
}

// per-step controls from a file: row k is u_k, the last row held; the half-step twin holds each
// row over two half steps
TEST(ControlFile, RowsReachTheBatch) {
  TempDir d("steer_losses");
  write_file(d.path / "u.csv", "force.y,force.x\n1,2\n3,4\n5,6\n");
  nlohmann::json j = projectile_config(6);
  j["loss"] = {{"terminal", {{{"state", "position.x"}, {"target", 1.0}}}}};
  j["controls"] = {{"initial_file", "u.csv"}};
  const ExperimentConfig c = parse_config(j, d.path.string());
  const Batch<double> b = build_batch(c);
  const double want[6][2] = {{2, 1}, {4, 3}, {6, 5}, {6, 5}, {6, 5}, {6, 5}};
  for (int k = 0; k < 6; ++k)
    for (int i = 0; i < 2; ++i) EXPECT_EQ(b.u_of(0)[k * 2 + i], want[k][i]) << k << " " << i;
  const Batch<double> h = build_batch(halved_timestep(c));
  for (int k = 0; k < 12; ++k)
    for (int i = 0; i < 2; ++i)
      EXPECT_EQ(h.u_of(0)[k * 2 + i], want[k / 2][i]) << "half step " << k;
  // NPY, T × nu, the same rows
  write_file(d.path / "u.npy", npy_bytes({2, 1, 4, 3, 6, 5}, {3, 2}));
  j["controls"] = {{"initial_file", "u.npy"}};
  const Batch<double> n = build_batch(parse_config(j, d.path.string()));
  EXPECT_EQ(n.u, b.u);
}

// reads a float64 C-order .npy: shape and values
bool read_npy(const std::string& path, std::vector<long>& shape, std::vector<double>& v) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) return false;
  const size_t hl = (unsigned char)s[8] | ((unsigned char)s[9] << 8);
  const std::string h = s.substr(10, hl);
  if (h.find("'<f8'") == std::string::npos) return false;
  const size_t a = h.find("'shape': (") + 10, b = h.find(')', a);
  std::stringstream ss(h.substr(a, b - a));
  std::string part;
  shape.clear();
  while (std::getline(ss, part, ','))
    if (part.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stol(part));
  long n = 1;
  for (long x : shape) n *= x;
  if (s.size() != 10 + hl + size_t(n) * 8) return false;
  v.resize(size_t(n));
  std::memcpy(v.data(), s.data() + 10 + hl, size_t(n) * 8);
  return true;
}

nlohmann::json read_artifact(const std::filesystem::path& runs) {
  for (const auto& e : std::filesystem::directory_iterator(runs)) {
    if (!e.is_directory() || e.path().filename().string()[0] == '.') continue;
    std::ifstream f(e.path() / "artifact.json");
    nlohmann::json j = nlohmann::json::parse(f);
    j["__dir"] = e.path().string();
    return j;
  }
  return nullptr;
}

// The Panda with a site named in the config (model.sites): a terminal and a running site
// target, site and joint observations from a file; `steer check`'s gradient check (centered
// FD, 1e-6) passes on every rollout, and the site names reach the loss
TEST(SiteLoss, PandaSitesByNameThroughTheCli) {
  TempDir d("steer_losses");
  std::ostringstream obs;
  obs << "t,site.grip.x,site.grip.z,joint2.q\n";
  for (int i = 0; i <= 10; ++i)
    obs << 0.01 * i << "," << 0.5 + 0.001 * i << "," << 0.6 - 0.002 * i << "," << 0.01 * i << "\n";
  write_file(d.path / "obs.csv", obs.str());
  nlohmann::json j =
      nlohmann::json::parse(std::ifstream(std::string(STEER_SOURCE_DIR) + "/configs/panda.json"));
  j["model"]["include"] = std::string(STEER_SOURCE_DIR) + "/configs/models/panda_arm.json";
  j["model"]["sites"] = {{{"name", "grip"}, {"body", "link7"}, {"pos", {0.0, 0.0, 0.1}}}};
  j["simulation"]["steps"] = 50;
  j["simulation"]["backend"] = "cpu";
  j["loss"] = {
      {"sites",
       {{{"site", "grip"},
         {"target", {0.4, "theta.joint1.target", 0.6}},
         {"weight", 10.0},
         {"orientation", {0.0, 1.0, 0.0, 0.0}},
         {"orientation_weight", 2.0}},
        {{"site", "grip"}, {"orientation", {1.0, 0.0, 0.0, 0.0}}, {"orientation_weight", 0.5}},
        {{"site", "grip"}, {"target", {0.5, 0.0, 0.5}}, {"weight", 0.1}, {"running", true}}}},
      {"observations", {{"file", "obs.csv"}, {"weight", 5.0}}}};
  j["variables"] = {{"controls", {{"lower", -50}, {"upper", 50}, {"hold", 10}}},
                    {"theta.damping", {{"lower", 0}, {"upper", 100}}}};
  j["validation"] = {
      {"at", {"initial"}}, {"tolerance", 1e-6}, {"max_rollouts", 4}, {"timestep_check", false}};
  j["output"] = {{"dir", (d.path / "runs").string()}, {"trajectory_rollouts", 1}};
  const std::string cfg = write_file(d.path / "c.json", j.dump());
  const testing::CliResult r = testing::run_steer("check '" + cfg + "'", d.path);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const nlohmann::json a = read_artifact(d.path / "runs");
  ASSERT_FALSE(a.is_null());
  const auto& v = a["validation"][0];
  EXPECT_TRUE(v["all_passed"].get<bool>()) << v.dump().substr(0, 800);
  EXPECT_EQ(v["rollouts_passed"].get<int>(), 4);
  const auto& loss = a["effective_config"]["loss"];
  EXPECT_EQ(loss["sites"][0]["site"], "grip");
  EXPECT_EQ(loss["sites"][0]["target"][1], "theta.joint1.target");
  EXPECT_EQ(loss["sites"][0]["orientation_weight"], 2.0);
  EXPECT_EQ(loss["sites"][1]["weight"], 0.0);  // orientation only
  EXPECT_EQ(loss["sites"].size(), 3u);
  EXPECT_EQ(loss["observations"]["columns"].size(), 3u);
  EXPECT_EQ(loss["observations"]["file_fnv1a64"].get<std::string>().size(), 16u);
  // a term with neither target nor orientation is refused, naming the key
  nlohmann::json none = j;
  none["loss"]["sites"] = {{{"site", "grip"}, {"running", true}}};
  const std::string nf = write_file(d.path / "none.json", none.dump());
  const testing::CliResult rn = testing::run_steer("check '" + nf + "'", d.path);
  EXPECT_EQ(rn.code, 2);
  EXPECT_NE(rn.err.find("loss.sites[0].target: missing; give target"), std::string::npos) << rn.err;
  // an unknown site is refused by name
  j["loss"]["sites"][0]["site"] = "thumb";
  const std::string bad = write_file(d.path / "bad.json", j.dump());
  const testing::CliResult rb = testing::run_steer("check '" + bad + "'", d.path);
  EXPECT_EQ(rb.code, 2);
  EXPECT_NE(rb.err.find("loss.sites[0].site"), std::string::npos) << rb.err;
  EXPECT_NE(rb.err.find("grip"), std::string::npos) << rb.err;
}

// System identification on a small scale through the CLI: observations of the projectile's
// position, recorded from the same model with drag 0.35 and mass 1.0 (every 0.02 s, noise-free),
// fitted from drags 0.1, 0.5, 0.9 with L-BFGS-B; the drag comes back to 1e-5 (L-BFGS-B stops on
// its gradient tolerance, so the weight sets how close), the gradient check passes,
// and every rollout's gradient reaches gradient.npy in the variables' order.
TEST(SysId, ProjectileDragFromObservations) {
  TempDir d("steer_losses");
  const int T = 60;
  {
    nlohmann::json g = projectile_config(T);
    g["model"]["drag"] = 0.35;
    g["loss"] = {{"terminal", {{{"state", "position.x"}, {"target", 0.0}}}}};
    const ExperimentConfig c = parse_config(g);
    std::unique_ptr<Problem> p = make_problem(c, BackendKind::kCpu, 1);
    const std::vector<double> traj = p->trajectories(p->initial(), 1, 1);
    std::ostringstream s;
    s.precision(17);
    s << "t,position.x,position.y\n";
    for (int k = 0; k <= T; k += 2)
      s << k * 0.01 << "," << traj[size_t(k) * 4] << "," << traj[size_t(k) * 4 + 1] << "\n";
    write_file(d.path / "obs.csv", s.str());
  }
  nlohmann::json j = projectile_config(T);
  j["model"]["drag"] = 0.1;
  j["batch"]["size"] = 3;
  j["batch"]["sweep"] = {{"theta.drag", {0.1, 0.5, 0.9}}};
  j["variables"] = {{"theta.drag", {{"lower", 0}, {"upper", 2}}}};
  // observed every second step: "none" compares the states at the observation times only; the
  // linear interpolation between them would bias the fit by the trajectory's curvature,
  // O(Δt_obs² ẍ / 8) per interpolated value
  j["loss"] = {{"observations", {{"file", "obs.csv"}, {"weight", 1e4}, {"interpolation", "none"}}}};
  j["optimizer"] = {{"method", "lbfgsb"}, {"iterations", 60}};
  j["output"]["dir"] = (d.path / "runs").string();
  j["output"]["trajectory_rollouts"] = 3;  // the artifact lists these rollouts' variables
  const std::string cfg = write_file(d.path / "c.json", j.dump());
  const testing::CliResult r = testing::run_steer("run '" + cfg + "'", d.path);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const nlohmann::json a = read_artifact(d.path / "runs");
  ASSERT_FALSE(a.is_null());
  const auto& rolls = a["result"]["rollouts"];
  ASSERT_EQ(rolls.size(), 3u);
  for (const auto& ro : rolls)
    EXPECT_NEAR(ro["variables"]["theta.drag"]["final"].get<double>(), 0.35, 1e-5) << ro.dump();
  // the side file: [B, nv] float64, the same numbers as the listed gradients
  const auto& gf = a["result"]["gradient_file"];
  ASSERT_TRUE(gf.is_object()) << a["result"].dump().substr(0, 400);
  EXPECT_EQ(gf["variables"], nlohmann::json::array({"theta.drag"}));
  std::vector<long> shape;
  std::vector<double> g;
  ASSERT_TRUE(
      read_npy(a["__dir"].get<std::string>() + "/" + gf["final"].get<std::string>(), shape, g));
  ASSERT_EQ(shape, (std::vector<long>{3, 1}));
  for (int b = 0; b < 3; ++b)
    EXPECT_EQ(g[size_t(b)],
              rolls[size_t(b)]["variables"]["theta.drag"]["gradient_final"].get<double>());
  ASSERT_TRUE(
      read_npy(a["__dir"].get<std::string>() + "/" + gf["initial"].get<std::string>(), shape, g));
  for (int b = 0; b < 3; ++b)
    EXPECT_EQ(g[size_t(b)],
              rolls[size_t(b)]["variables"]["theta.drag"]["gradient_initial"].get<double>());
  // the gradient check at the start passed on the observation loss
  EXPECT_TRUE(a["validation"][0]["all_passed"].get<bool>())
      << a["validation"][0].dump().substr(0, 600);
}

}  // namespace
}  // namespace steer

namespace steer::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(SiteLosses, GradientSuite, ::testing::Types<steer::SiteProvider>);
INSTANTIATE_TYPED_TEST_SUITE_P(PandaSiteLosses, GradientSuite,
                               ::testing::Types<steer::PandaSiteProvider>);
}  // namespace steer::testing
