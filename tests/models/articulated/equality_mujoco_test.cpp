// configs/mjcf/equality.xml imported (model.mjcf) against MuJoCo: two pairs of flywheels on
// parallel axes (I = 0.1 and 0.3 kg·m²), one pair coupled by a joint equality (spin_b = spin_a),
// the other by a tendon equality that holds spin_c + spin_d at its start; a motor torque
// u = 0.8 N·m on the first wheel of each pair. MuJoCo's equalities are soft constraints; steer
// imports each as a coupling tendon whose spring and damper are that constraint's
// (mjcf_import.cpp, import_equality). The constrained motion is the pair turning as one body:
// θ(t) = u t² / (2 (0.1 + 0.3)). Built where MuJoCo is found (label crosscheck). Checked,
// float64:
//   - the import: each coupling tendon's joints and coefficients, rest length, and the
//     stiffness and damping from solref on MuJoCo's own effective mass (dof_invweight0,
//     tendon_invweight0);
//   - 500 ms under Euler and RK4 at 2 ms: steer and MuJoCo each within 2e-3 rad of the
//     constrained motion, within 1e-3 rad of each other, the coupling's residual below 2e-3 rad
//     in both. Both are soft, differently: the coupling tendon deflects under the load it
//     carries by F/K (7.6e-4 rad here), where MuJoCo's constraint, which aims at a reference
//     acceleration, lets only the fraction 1 − d_max of the load through (8.8e-5 rad). Matching
//     that static stiffness would take K/(1 − d_max), a twentyfold stiffer spring, beyond the
//     explicit step's bound; the import keeps the constraint's natural frequency instead;
//   - as solref's time constant shrinks (and the step with it), steer's residual and its
//     distance to the constrained motion shrink: the coupling converges to the constraint;
//   - the gradient of the final angles in the coupling's stiffness and in the motor torques
//     against centred finite differences.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "gradient_suite.h"
#include "steer/models/articulated.h"
#include "mujoco_files.h"
#include "temp_dir.h"

// the gradient helpers only; the generic suite runs on the tendons elsewhere (tendon_test)
namespace steer::testing {
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GradientSuite);
}  // namespace steer::testing

using namespace steer;
using steer::testing::configs_dir;
using steer::testing::DataFree;
using steer::testing::imported_config;
using steer::testing::ModelFree;
using steer::testing::mujoco_model;

namespace {

const char* kFile = "mjcf/equality.xml";
constexpr double kTorque = 0.8, kInertiaSum = 0.4;

int tendon_index(const ArticulatedNames& names, const std::string& name) {
  for (size_t t = 0; t < names.tendons.size(); ++t)
    if (names.tendons[t] == name) return int(t);
  return -1;
}

TEST(EqualityMujoco, ImportMakesCouplingTendonsFromSolref) {
  const ExperimentConfig c = imported_config(kFile, "euler", 10);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = s.large;
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  ASSERT_TRUE(mm);
  const int gear = tendon_index(s.names, "gear_equality"),
            hold = tendon_index(s.names, "hold_equality");
  ASSERT_GE(gear, 0);
  ASSERT_GE(hold, 0);
  // gear: spin_b − spin_a (joint1 minus a1 = 1 times joint2); hold: spin_c + spin_d
  EXPECT_EQ(m.tendon_c(gear, 0), -1.0);
  EXPECT_EQ(m.tendon_c(gear, 1), 1.0);
  EXPECT_EQ(m.tendon_c(hold, 2), 1.0);
  EXPECT_EQ(m.tendon_c(hold, 3), 1.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(gear, Articulated::kTendonSpringLength))], 0.0);
  // ω = 1/(τ ζ √d_max), τ = 0.01 s, ζ = 1, d_max = 0.95; m = 1/(w_a + w_b) (MuJoCo's), here
  // within the explicit step's bounds at 2 ms (ω h = 0.021)
  const double omega = 1 / (0.01 * std::sqrt(0.95)), zeta = std::sqrt(0.95);
  const double mg = 1 / (mm->dof_invweight0[0] + mm->dof_invweight0[1]);
  const double mh = 1 / mm->tendon_invweight0[0];
  EXPECT_NEAR(mg, 0.075, 1e-12);  // 0.1 · 0.3 / 0.4
  EXPECT_NEAR(c.theta[size_t(m.p_tendon(gear, Articulated::kTendonStiffness))], mg * omega * omega,
              1e-9);
  EXPECT_NEAR(c.theta[size_t(m.p_tendon(gear, Articulated::kTendonDamping))], 2 * zeta * mg * omega,
              1e-12);
  EXPECT_NEAR(c.theta[size_t(m.p_tendon(hold, Articulated::kTendonStiffness))], mh * omega * omega,
              1e-9);
  EXPECT_EQ(c.info.param_names[size_t(m.p_tendon(gear, Articulated::kTendonStiffness))],
            "gear_equality.stiffness");
}

struct Pairs {
  double q[4] = {};        // steer's angles at the end
  double q_mj[4] = {};     // MuJoCo's
  double residual = 0;     // the largest |spin_b − spin_a| or |spin_c + spin_d| in steer
  double residual_mj = 0;  // and in MuJoCo
};

Pairs run_both(const std::string& integrator, int mj_integrator, int steps) {
  const ExperimentConfig c = imported_config(kFile, integrator, steps);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  Pairs r;
  if (!mm) return r;
  mm->opt.integrator = mj_integrator;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  std::vector<double> x = c.x0, p = c.theta;
  std::vector<double> u(ArticulatedLarge::kMaxControl, 0.0), xn(ArticulatedLarge::kMaxState, 0.0);
  u[0] = u[2] = d->ctrl[0] = d->ctrl[1] = kTorque;
  for (int k = 0; k < steps; ++k) {
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    mj_step(mm.get(), d.get());
    std::copy(xn.begin(), xn.begin() + 8, x.begin());
    r.residual = std::max({r.residual, std::fabs(x[1] - x[0]), std::fabs(x[2] + x[3])});
    r.residual_mj = std::max(
        {r.residual_mj, std::fabs(d->qpos[1] - d->qpos[0]), std::fabs(d->qpos[2] + d->qpos[3])});
  }
  for (int i = 0; i < 4; ++i) r.q[i] = x[size_t(i)], r.q_mj[i] = d->qpos[i];
  return r;
}

TEST(EqualityMujoco, CoupledPairsTurnAsOneBodyAsInMujoco) {
  const double t = 0.5, theta = kTorque * t * t / (2 * kInertiaSum);  // 0.25 rad
  const double want[4] = {theta, theta, theta, -theta};
  for (const auto& [name, mj] : {std::pair<const char*, int>{"euler", mjINT_EULER},
                                 std::pair<const char*, int>{"rk4", mjINT_RK4}}) {
    const Pairs r = run_both(name, mj, 250);
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(r.q[i], want[i], 2e-3) << name << " steer, wheel " << i;
      EXPECT_NEAR(r.q_mj[i], want[i], 2e-3) << name << " MuJoCo, wheel " << i;
      EXPECT_NEAR(r.q[i], r.q_mj[i], 1e-3) << name << " wheel " << i;
    }
    EXPECT_LT(r.residual, 2e-3) << name;
    EXPECT_LT(r.residual_mj, 2e-3) << name;
    std::printf(
        "[ equality.xml ] 500 ms %s: angles %.6f %.6f %.6f %.6f (steer), %.6f %.6f %.6f %.6f "
        "(MuJoCo), constrained ±%.6f; residual %.3g (steer), %.3g (MuJoCo)\n",
        name, r.q[0], r.q[1], r.q[2], r.q[3], r.q_mj[0], r.q_mj[1], r.q_mj[2], r.q_mj[3], theta,
        r.residual, r.residual_mj);
  }
}

// the same file with solref's time constant τ (and the step, h = τ/5) shrinking fourfold twice:
// steer's coupling residual and its distance from the constrained motion fall with τ
TEST(EqualityMujoco, CouplingConvergesToTheConstraint) {
  std::ifstream in(configs_dir() / kFile);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  steer::testing::TempDir dir("steer_equality_tau");
  double err[3], res[3];
  for (int i = 0; i < 3; ++i) {
    const double tau = 0.01 / (1 << (2 * i)), h = tau / 5;
    std::string x = xml;
    for (const char* from : {"solref=\"0.01 1\"", "timestep=\"0.002\""}) {
      const size_t at = x.find(from);
      ASSERT_NE(at, std::string::npos);
      while (x.find(from) != std::string::npos)
        x.replace(x.find(from), std::string(from).size(),
                  from[0] == 's' ? "solref=\"" + std::to_string(tau) + " 1\""
                                 : "timestep=\"" + std::to_string(h) + "\"");
    }
    std::ofstream(dir.path / "equality.xml") << x;
    const int steps = int(std::lround(0.5 / h));
    const nlohmann::json j = {
        {"name", "tau"},
        {"model", {{"type", "articulated"}, {"mjcf", "equality.xml"}, {"integrator", "euler"}}},
        {"simulation", {{"steps", steps}, {"precision", "float64"}}},
        {"loss", {{"control_effort", 1.0}}},
        {"validation", {{"enabled", false}}}};
    const ExperimentConfig c = parse_config(j, dir.path.string());
    const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
    std::vector<double> xs = c.x0, p = c.theta, u(ArticulatedLarge::kMaxControl, 0.0),
                        xn(ArticulatedLarge::kMaxState, 0.0);
    u[0] = u[2] = kTorque;
    res[i] = 0;
    for (int k = 0; k < steps; ++k) {
      auto XN = view(xn.data());
      m.step<double>(k, view(xs.data()), view(u.data()), view(p.data()), XN);
      std::copy(xn.begin(), xn.begin() + 8, xs.begin());
      res[i] = std::max({res[i], std::fabs(xs[1] - xs[0]), std::fabs(xs[2] + xs[3])});
    }
    const double theta = kTorque * 0.25 / (2 * kInertiaSum);
    err[i] = std::max({std::fabs(xs[0] - theta), std::fabs(xs[1] - theta), std::fabs(xs[2] - theta),
                       std::fabs(xs[3] + theta)});
    std::printf("[ equality.xml ] tau %.5f s, h %.5f s: residual %.3g rad, error %.3g rad\n", tau,
                h, res[i], err[i]);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_LT(res[i + 1], 0.3 * res[i]) << i;
    EXPECT_LT(err[i + 1], 0.5 * err[i]) << i;
  }
}

TEST(EqualityMujoco, GradientMatchesFiniteDifferences) {
  const ExperimentConfig c = imported_config(kFile, "euler", 100);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  steer::testing::RolloutCase<ArticulatedLarge> r;
  r.model = s.large;
  r.steps = 40;
  r.checkpoint_every = 7;
  r.x0 = c.x0;
  r.x0[4] = 0.3, r.x0[6] = -0.2;  // the first wheels kicked
  r.p = c.theta;
  const int nu = r.model.nu();
  r.u.assign(size_t(r.steps * nu), 0.0);
  for (int k = 0; k < r.steps; ++k) r.u[size_t(k * nu)] = r.u[size_t(k * nu + 2)] = kTorque;
  r.loss.n_terminal = 2;
  r.loss.terminal_index[0] = 1, r.loss.terminal_target[0] = 0.1, r.loss.terminal_weight[0] = 1;
  r.loss.terminal_index[1] = 3, r.loss.terminal_target[1] = -0.1, r.loss.terminal_weight[1] = 1;
  const std::vector<double> g = steer::testing::rollout_gradient(r, false, r.checkpoint_every);
  const std::vector<double> ref = steer::testing::rollout_gradient(r, true, r.checkpoint_every);
  const int nx = r.model.nx(), ut = r.steps * nu;
  auto loss_at = [&](const std::vector<double>& p, const std::vector<double>& u) {
    steer::testing::RolloutCase<ArticulatedLarge> q = r;
    q.p = p, q.u = u;
    double L = 0;
    steer::testing::rollout_gradient(q, false, q.checkpoint_every, &L);
    return L;
  };
  const int gear = tendon_index(s.names, "gear_equality");
  ASSERT_GE(gear, 0);
  for (int slot : {r.model.p_tendon(gear, Articulated::kTendonStiffness),
                   r.model.p_tendon(gear, Articulated::kTendonDamping)}) {
    const double e = 1e-6 * std::max(1.0, std::fabs(r.p[size_t(slot)]));
    std::vector<double> pp = r.p, pm = r.p;
    pp[size_t(slot)] += e, pm[size_t(slot)] -= e;
    const double fd = (loss_at(pp, r.u) - loss_at(pm, r.u)) / (2 * e);
    const double an = g[size_t(nx + ut + slot)];
    EXPECT_NEAR(an, fd, 1e-6 * std::max(std::fabs(fd), 1e-3)) << c.info.param_names[size_t(slot)];
    EXPECT_NEAR(an, ref[size_t(nx + ut + slot)], 1e-12 * std::max(1.0, std::fabs(an)));
  }
  for (int k : {0, 17, 39}) {
    const size_t i = size_t(k * nu);
    std::vector<double> up = r.u, um = r.u;
    up[i] += 1e-6, um[i] -= 1e-6;
    const double fd = (loss_at(r.p, up) - loss_at(r.p, um)) / 2e-6;
    EXPECT_NEAR(g[size_t(nx) + i], fd, 1e-6 * std::max(std::fabs(fd), 1e-3)) << "u at step " << k;
  }
}

}  // namespace
