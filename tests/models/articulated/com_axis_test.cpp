// loss.com_displacement on the articulated model along x, y and z: the Panda (configs/panda.json,
// fixed base: Articulated, ∂c/∂q on dual numbers) and the quadruped (configs/quadruped_walk.json,
// free root: ArticulatedLegged, ∂c/∂q through the kinematics' adjoint sweep). All in float64:
//   - the centre of mass c(q, θ) alone: the hand adj_center_of_mass against the dual-number
//     derivative of center_of_mass (≤ 1e-12 relative to max(1, ‖dual‖∞): rounding order only)
//     and the dual against centered FD (ε = 1e-6 · max(1, |z_i|); ≤ 1e-6 · max(1, |dual_i|));
//   - through rollouts with the term alone as the loss: the scalar path's hand gradient against
//     the dual-reference adjoint (≤ 1e-12 relative) and against centered FD of the rollout loss
//     for every input, Richardson-extrapolated (ε and ε/2, ε = 1e-6 · max(1, |z_i|);
//     |fd − g| ≤ 1e-6 · max(|g|, |fd|) + 1e-9, tests/support/gradient_suite.h's bound), and the
//     SIMD packed path (cpu_packed.h) against the scalar path bit for bit, lane by lane, in a
//     batch of two full packs and a tail;
//   - the config accepts the three axes and refuses another, naming the key and x, y, z.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "config_errors.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "steer/cpu_backend.h"
#include "steer/dual.h"
#include "steer/models/articulated.h"

namespace steer::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kAxes[3] = {"x", "y", "z"};

}  // namespace
// gradient_suite.h's typed suite is not run here; its helpers are
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GradientSuite);
namespace {

json read_config(const std::string& name) {
  std::ifstream in(fs::path(STEER_SOURCE_DIR) / "configs" / name);
  return json::parse(in);
}

// the shipped config with the displacement term along `axis` as its only loss term, one
// rollout, no variables
ExperimentConfig com_config(const std::string& name, const std::string& axis, int steps) {
  json j = read_config(name);
  j["loss"] = {{"com_displacement", {{"axis", axis}, {"weight", 1.0}}}};
  j["simulation"]["steps"] = steps;
  for (const char* k : {"variables", "optimizer", "compare", "batch", "perturb", "horizon_sweep"})
    j.erase(k);
  j["validation"] = {{"enabled", false}};
  const std::string dir = (fs::path(STEER_SOURCE_DIR) / "configs").string();
  return parse_config(expand_includes(j, dir), dir);
}

// x0 away from the config's symmetric pose: each joint angle moved by a few centiradians and,
// on a free root, the base turned (so that every axis of c depends on every joint) and moving
template <class Model>
std::vector<double> moved_state(const Model& m, const std::vector<double>& x0, int lane) {
  std::vector<double> x = x0;
  const int first = m.free_base ? 7 : 0;  // a free root's [p, quat] lead q
  for (int i = first; i < m.nq(); ++i) x[size_t(i)] += 0.03 * std::sin(1.7 * i + 0.4 * lane);
  if (m.free_base) {
    // q_root ← q_root ⊗ (cos φ/2, sin φ/2 · n), φ = 0.2 rad about n ∝ (1, 2, 3)
    const double n0 = 1 / std::sqrt(14.0), h = 0.1 + 0.01 * lane, s = std::sin(h), c = std::cos(h);
    const double b[4] = {c, s * n0, 2 * s * n0, 3 * s * n0};
    const double a[4] = {x[3], x[4], x[5], x[6]};
    x[3] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    x[4] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    x[5] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    x[6] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    for (int i = 0; i < 6; ++i) x[size_t(m.nq() + i)] = 0.2 * std::cos(i + lane);  // [m/s], [rad/s]
  }
  return x;
}

// ∂c/∂(x, θ) on Dual<double, 8>, eight inputs a pass
template <class Model>
std::vector<double> dual_gradient(const Model& m, const std::vector<double>& x,
                                  const std::vector<double>& p, int ax) {
  using D = Dual<double, 8>;
  const int nx = m.nx(), np = m.np(), n = nx + np;
  std::vector<double> g(size_t(n), 0.0);
  for (int first = 0; first < n; first += 8) {
    std::vector<D> xd(static_cast<size_t>(nx)), pd(static_cast<size_t>(np));
    for (int i = 0; i < nx; ++i) xd[size_t(i)] = D::variable(x[size_t(i)], i - first);
    for (int q = 0; q < np; ++q) pd[size_t(q)] = D::variable(p[size_t(q)], nx + q - first);
    const D* X = xd.data();
    const D* P = pd.data();
    const D c = m.template center_of_mass<D>(X, P, ax);
    for (int j = 0; j < 8 && first + j < n; ++j) g[size_t(first + j)] = c.v[j];
  }
  return g;
}

template <class Model>
double com_value(const Model& m, const std::vector<double>& x, const std::vector<double>& p,
                 int ax) {
  return m.template center_of_mass<double>(view(const_cast<double*>(x.data())),
                                           view(const_cast<double*>(p.data())), ax);
}

template <class Model>
void expect_com_gradient(const Model& m, const std::vector<double>& x, const std::vector<double>& p,
                         int ax, const std::string& what) {
  const int nx = m.nx(), np = m.np(), n = nx + np;
  std::vector<double> hx(size_t(nx), 0.0), hp(size_t(np), 0.0);
  auto vx = view(hx.data()), vp = view(hp.data());
  m.template adj_center_of_mass<double>(view(const_cast<double*>(x.data())),
                                        view(const_cast<double*>(p.data())), ax, vx, vp, 1.0);
  std::vector<double> hand = hx;
  hand.insert(hand.end(), hp.begin(), hp.end());
  const std::vector<double> dual = dual_gradient(m, x, p, ax);
  const double scale = std::max(1.0, inf_norm(dual));
  double dq = 0;  // ‖∂c/∂q‖∞: the axis moves with the pose
  for (int i = 0; i < m.nq(); ++i) dq = std::max(dq, std::fabs(dual[size_t(i)]));
  EXPECT_GT(dq, 1e-3) << what << ": c does not depend on q along this axis";
  int bad_dual = 0, bad_fd = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(hand[size_t(i)])) << what << " input " << i;
    if (std::fabs(hand[size_t(i)] - dual[size_t(i)]) > 1e-12 * scale && bad_dual++ < 5)
      ADD_FAILURE() << what << " input " << i << ": hand " << hand[size_t(i)] << " vs dual "
                    << dual[size_t(i)];
    std::vector<double> xp = x, xm = x, pp = p, pm = p;
    double* sp = i < nx ? &xp[size_t(i)] : &pp[size_t(i - nx)];
    double* sm = i < nx ? &xm[size_t(i)] : &pm[size_t(i - nx)];
    const double eps = 1e-6 * std::max(1.0, std::fabs(*sp));
    *sp += eps;
    *sm -= eps;
    const double fd = (com_value(m, xp, pp, ax) - com_value(m, xm, pm, ax)) / (2 * eps);
    if (std::fabs(fd - dual[size_t(i)]) > 1e-6 * std::max(1.0, std::fabs(dual[size_t(i)])) &&
        bad_fd++ < 5)
      ADD_FAILURE() << what << " input " << i << ": dual " << dual[size_t(i)] << " vs FD " << fd;
  }
  EXPECT_EQ(bad_dual, 0) << what << ": hand vs dual";
  EXPECT_EQ(bad_fd, 0) << what << ": dual vs FD";
  std::printf("%s: ‖∂c/∂q‖∞ %.4f, hand vs dual and dual vs FD over %d inputs\n", what.c_str(), dq,
              n);
}

template <class Model>
RolloutCase<Model> com_case(const std::string& name, const Model& m, const ExperimentConfig& c,
                            int steps, int lane) {
  RolloutCase<Model> r;
  r.name = name;
  r.model = m;
  r.loss = c.loss;
  r.steps = steps;
  r.checkpoint_every = 5;
  r.x0 = moved_state(m, c.x0, lane);
  r.p = c.theta;
  r.u.assign(size_t(steps) * m.nu(), 0.0);
  for (size_t i = 0; i < r.u.size(); ++i)
    r.u[i] = 2.0 * std::sin(0.37 * double(i) + lane);  // [N·m]
  return r;
}

// centered FD of the rollout loss for every input (x0, u, θ), Richardson-extrapolated:
// D(ε) = (L(z + ε) − L(z − ε)) / 2ε with ε_i = 1e-6 · max(1, |z_i|) (gradient_suite.h's step),
// and fd = (4 D(ε/2) − D(ε)) / 3, which cancels D's O(ε²) truncation. On the inertia entries
// of the quadruped's light links (0.05–0.8 kg; the off-diagonal ones 0, so ε is the absolute
// 1e-6 kg·m², not small against the link's inertia) plain D(ε) keeps its truncation above the
// tolerance, and a smaller ε meets the rounding of c(x_T) ≈ 0.3 m (~1e-16 / ε). One batch of
// 4n rollouts.
template <class Model>
std::vector<double> rollout_fd_richardson(const RolloutCase<Model>& c) {
  const Model& m = c.model;
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  const int n = nx + c.steps * nu + np;
  Batch<double> b;
  b.resize(4 * n, nx, nu, np, c.steps);
  std::vector<double> eps(static_cast<size_t>(n), 0.0);
  for (int r = 0; r < 4 * n; ++r) {
    std::copy(c.x0.begin(), c.x0.end(), b.x0_of(r));
    std::copy(c.u.begin(), c.u.end(), b.u_of(r));
    std::copy(c.p.begin(), c.p.end(), b.theta_of(r));
  }
  for (int i = 0; i < n; ++i) {
    const double sign[4] = {1, -1, 0.5, -0.5};  // rows 4i..4i+3: +ε, −ε, +ε/2, −ε/2
    for (int s = 0; s < 4; ++s) {
      const int r = 4 * i + s;
      double* slot = i < nx ? b.x0_of(r) + i
                            : (i < nx + c.steps * nu ? b.u_of(r) + (i - nx)
                                                     : b.theta_of(r) + (i - nx - c.steps * nu));
      if (s == 0) eps[size_t(i)] = 1e-6 * std::max(1.0, std::fabs(*slot));
      *slot += sign[s] * eps[size_t(i)];
    }
  }
  RolloutShape sh;
  sh.steps = c.steps;
  sh.checkpoint_every = c.checkpoint_every;
  BatchResult<double> out;
  cpu_run_batch<Model, double>(m, c.loss, sh, b, false, out);
  std::vector<double> fd(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    const double* L = &out.loss[size_t(4 * i)];
    const double d1 = (L[0] - L[1]) / (2 * eps[size_t(i)]), d2 = (L[2] - L[3]) / eps[size_t(i)];
    fd[size_t(i)] = (4 * d2 - d1) / 3;
  }
  return fd;
}

// input i of a rollout case (x0, u, θ) by name, for the failure messages
std::string input_name(const ExperimentConfig& cfg, int nx, int nu, int steps, size_t i) {
  const int k = int(i);
  if (k < nx) return "x0." + cfg.info.state_names[size_t(k)];
  if (k < nx + steps * nu)
    return "u[" + std::to_string((k - nx) / nu) + "]." +
           cfg.info.control_names[size_t((k - nx) % nu)];
  return "theta." + cfg.info.param_names[size_t(k - nx - steps * nu)];
}

// scalar hand gradient vs the dual-reference adjoint and centered FD; the packed path's lanes
// vs the scalar path, bit for bit
template <class Model>
void expect_rollout_gradients(const RolloutCase<Model>& c, const ExperimentConfig& cfg) {
  double loss = 0;
  const std::vector<double> g = rollout_gradient(c, false, c.checkpoint_every, &loss);
  const std::vector<double> ref = rollout_gradient(c, true, c.checkpoint_every);
  const std::vector<double> fd = rollout_fd_richardson(c);
  ASSERT_EQ(g.size(), ref.size());
  ASSERT_EQ(g.size(), fd.size());
  const double scale = std::max(1.0, inf_norm(ref));
  int bad_ref = 0, bad_fd = 0;
  double worst_fd = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_TRUE(std::isfinite(g[i])) << c.name << " input " << i;
    if (std::fabs(g[i] - ref[i]) > 1e-12 * scale && bad_ref++ < 5)
      ADD_FAILURE() << c.name << " input " << i << " ("
                    << input_name(cfg, c.model.nx(), c.model.nu(), c.steps, i) << "): hand " << g[i]
                    << " vs reference " << ref[i];
    const double tol = 1e-6 * std::max(std::fabs(g[i]), std::fabs(fd[i])) + 1e-9;
    worst_fd = std::max(worst_fd, std::fabs(g[i] - fd[i]) / tol);
    if (std::fabs(g[i] - fd[i]) > tol && bad_fd++ < 5)
      ADD_FAILURE() << c.name << " input " << i << " ("
                    << input_name(cfg, c.model.nx(), c.model.nu(), c.steps, i) << "): gradient "
                    << g[i] << " vs FD " << fd[i];
  }
  EXPECT_EQ(bad_ref, 0) << c.name << ": hand vs dual reference";
  EXPECT_EQ(bad_fd, 0) << c.name << ": gradient vs FD";
  EXPECT_GT(inf_norm(g), 1e-6) << c.name << ": a vanishing gradient checks nothing";
  std::printf("%s: L %.6e, ‖g‖∞ %.4e, largest |g − FD| / tolerance %.3f over %zu inputs\n",
              c.name.c_str(), loss, inf_norm(g), worst_fd, g.size());

  // the packed path: lanes with their own start, two full packs and a tail
  const Model& m = c.model;
  const int B = 2 * cpu_pack_width() + 1, nx = m.nx(), nu = m.nu(), np = m.np();
  Batch<double> b;
  b.resize(B, nx, nu, np, c.steps);
  std::vector<RolloutCase<Model>> lanes;
  for (int l = 0; l < B; ++l) {
    RolloutCase<Model> k = c;
    k.x0 = moved_state(m, c.x0, l);
    for (size_t i = 0; i < k.u.size(); ++i) k.u[i] = c.u[i] * (1.0 + 0.05 * l);
    std::copy(k.x0.begin(), k.x0.end(), b.x0_of(l));
    std::copy(k.u.begin(), k.u.end(), b.u_of(l));
    std::copy(k.p.begin(), k.p.end(), b.theta_of(l));
    lanes.push_back(k);
  }
  RolloutShape sh;
  sh.steps = c.steps;
  sh.checkpoint_every = c.checkpoint_every;
  ASSERT_TRUE((use_packed_path<Model, double>(m, sh, B))) << c.name;
  BatchResult<double> out;
  cpu_run_batch<Model, double>(m, c.loss, sh, b, true, out, 2);
  int differing = 0;
  for (int l = 0; l < B; ++l) {
    double alone_loss = 0;
    const std::vector<double> alone =
        rollout_gradient(lanes[size_t(l)], false, c.checkpoint_every, &alone_loss);
    std::vector<double> packed(out.grad_x0.begin() + size_t(l) * nx,
                               out.grad_x0.begin() + size_t(l + 1) * nx);
    packed.insert(packed.end(), out.grad_u.begin() + size_t(l) * c.steps * nu,
                  out.grad_u.begin() + size_t(l + 1) * c.steps * nu);
    packed.insert(packed.end(), out.grad_theta.begin() + size_t(l) * np,
                  out.grad_theta.begin() + size_t(l + 1) * np);
    ASSERT_EQ(packed.size(), alone.size());
    EXPECT_EQ(std::memcmp(&out.loss[size_t(l)], &alone_loss, sizeof(double)), 0)
        << c.name << " lane " << l << ": loss";
    if (std::memcmp(packed.data(), alone.data(), alone.size() * sizeof(double)) != 0) ++differing;
  }
  EXPECT_EQ(differing, 0) << c.name
                          << ": lanes whose packed gradient differs from the scalar path's";
}

TEST(ComAxis, ConfigAcceptsEveryAxisOnTheArticulatedModel) {
  for (const char* name : {"panda.json", "quadruped_walk.json"})
    for (const char* axis : kAxes) {
      const ExperimentConfig c = com_config(name, axis, 10);
      EXPECT_TRUE(c.loss.com) << name << " " << axis;
      EXPECT_EQ(c.loss.com_axis, int(axis[0] - 'x')) << name << " " << axis;
      EXPECT_EQ(c.loss_json["com_displacement"]["axis"], axis);
    }
  json j = read_config("quadruped_walk.json");
  j["loss"]["com_displacement"] = {{"axis", "w"}};
  try {
    parse_config(j, (fs::path(STEER_SOURCE_DIR) / "configs").string());
    ADD_FAILURE() << "axis w accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("loss.com_displacement.axis"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x, y, z"), std::string::npos) << msg;
  }
}

TEST(ComAxis, PandaCentreOfMassGradientEveryAxis) {
  for (int ax = 0; ax < 3; ++ax) {
    const ExperimentConfig c = com_config("panda.json", kAxes[ax], 10);
    const Articulated& m = c.model_state<ArticulatedSetup>().model;
    ASSERT_FALSE(m.free_base);
    expect_com_gradient(m, moved_state(m, c.x0, 0), c.theta, ax,
                        std::string("panda c_") + kAxes[ax]);
  }
}

TEST(ComAxis, QuadrupedCentreOfMassGradientEveryAxis) {
  for (int ax = 0; ax < 3; ++ax) {
    const ExperimentConfig c = com_config("quadruped_walk.json", kAxes[ax], 10);
    ASSERT_TRUE(c.model_state<ArticulatedSetup>().legged_tree);
    const ArticulatedLegged& m = c.model_state<ArticulatedSetup>().legged;
    ASSERT_TRUE(m.free_base);
    expect_com_gradient(m, moved_state(m, c.x0, 0), c.theta, ax,
                        std::string("quadruped c_") + kAxes[ax]);
  }
}

TEST(ComAxis, PandaRolloutGradientEveryAxisScalarAndPacked) {
  for (int ax = 0; ax < 3; ++ax) {
    const ExperimentConfig c = com_config("panda.json", kAxes[ax], 30);
    const Articulated& m = c.model_state<ArticulatedSetup>().model;
    expect_rollout_gradients(
        com_case(std::string("panda, com along ") + kAxes[ax] + ", 30 steps", m, c, 30, 0), c);
  }
}

TEST(ComAxis, QuadrupedRolloutGradientEveryAxisScalarAndPacked) {
  for (int ax = 0; ax < 3; ++ax) {
    const ExperimentConfig c = com_config("quadruped_walk.json", kAxes[ax], 12);
    const ArticulatedLegged& m = c.model_state<ArticulatedSetup>().legged;
    expect_rollout_gradients(
        com_case(std::string("quadruped, com along ") + kAxes[ax] + ", 12 steps", m, c, 12, 0), c);
  }
}

}  // namespace
}  // namespace steer::testing
