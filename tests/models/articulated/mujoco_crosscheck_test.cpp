// Cross-check of steer's articulated Panda (include/steer/models/articulated.h,
// configs/panda.json) against MuJoCo on the same arm (configs/mjcf/panda.xml), both in
// float64 with MuJoCo's Euler integrator: semi-implicit Euler with the joint damping
// implicit, (M + h D) v⁺ = M v + h (τ − c(q, v)), q⁺ = q + h v⁺.
//
// Built only when CMake finds a MuJoCo >= 3.3 (cmake/mujoco_import.cmake). Checks:
// - the MJCF is the model the facts describe, and MuJoCo's Euler is the law above;
// - the same torque sequence from the home pose gives the same q, v after every step over
//   500 ms (250 steps of 2 ms), to 1e-8 rad and rad/s;
// - steer's exact one-step Jacobians ∂x⁺/∂x, ∂x⁺/∂u agree with MuJoCo's centered finite
//   differences (mjd_transitionFD) to 1e-6 · max(1, |J|);
// - mass matrix (with armature) and bias forces c(q, v) agree to rounding.
// The dynamics checks give steer the inertia tensors MuJoCo's compiler produces from the
// MJCF's fullinertia (see use_mujoco_inertia); the effect of the difference is printed.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
#include "steer/reference_adjoint.h"

namespace {

constexpr int kDof = 7;
constexpr int kSteps = 250;   // 500 ms at h = 2 ms
constexpr double kH = 0.002;  // [s]
const std::array<double, kDof> kHome = {0, 0, 0, -1.57079, 0, 1.57079, -0.7853};

// ---------------------------------------------------------------------------------------
// MuJoCo helpers

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

ModelPtr load_panda() {
  char err[1000] = "";
  mjModel* m = mj_loadXML(STEER_PANDA_MJCF, nullptr, err, sizeof(err));
  EXPECT_NE(m, nullptr) << STEER_PANDA_MJCF << ": " << err;
  return ModelPtr(m);
}

// puts the arm at the home pose at rest, t = 0
void reset_home(const mjModel* m, mjData* d) {
  mj_resetData(m, d);
  for (int i = 0; i < kDof; ++i) d->qpos[i] = kHome[size_t(i)];
  mj_forward(m, d);
}

// gravity torque at the home pose [N m]: qfrc_bias at rest (v = 0) is gravity alone
std::array<double, kDof> home_gravity(const mjModel* m) {
  DataPtr d(mj_makeData(m));
  reset_home(m, d.get());
  std::array<double, kDof> g{};
  for (int i = 0; i < kDof; ++i) g[size_t(i)] = d->qfrc_bias[i];
  return g;
}

// the feed-forward torque at step k [N m]: the home pose's gravity torque plus smooth
// sinusoids of a few N m per joint at 1–3 Hz, so every joint moves (0.08–0.7 rad in 500 ms)
// and the velocity-dependent terms are exercised, staying 0.8 rad inside the joint ranges
std::array<double, kDof> torque(int k, const std::array<double, kDof>& g_home) {
  static const double amp[kDof] = {6.0, 8.0, 5.0, 6.0, 2.0, 2.0, 1.5};   // [N m]
  static const double freq[kDof] = {1.0, 1.3, 1.7, 1.1, 2.3, 1.9, 2.9};  // [Hz]
  const double t = k * kH;
  std::array<double, kDof> u{};
  for (int j = 0; j < kDof; ++j)
    u[size_t(j)] = g_home[size_t(j)] + amp[j] * std::sin(2 * M_PI * freq[j] * t + 0.7 * j);
  return u;
}

// dense mass matrix M(q) (with armature) and bias c(q, v) = Coriolis/centrifugal + gravity
// at the state in d; runs mj_forward
void mass_and_bias(const mjModel* m, mjData* d, std::vector<double>& M, std::vector<double>& c) {
  mj_forward(m, d);
  M.assign(size_t(m->nv * m->nv), 0.0);
  mj_fullM(m, d, M.data());
  c.assign(d->qfrc_bias, d->qfrc_bias + m->nv);
}

// MuJoCo's trajectory from the home pose under torque(): x_k = (q, v) for k = 0..kSteps;
// also records the constraint count of every step
struct MjTrajectory {
  std::vector<std::array<double, 2 * kDof>> x;
  int max_nefc = 0;
};

MjTrajectory mujoco_trajectory(const mjModel* m) {
  DataPtr d(mj_makeData(m));
  reset_home(m, d.get());
  const auto g = home_gravity(m);
  MjTrajectory tr;
  auto record = [&] {
    std::array<double, 2 * kDof> x{};
    for (int i = 0; i < kDof; ++i) x[size_t(i)] = d->qpos[i], x[size_t(kDof + i)] = d->qvel[i];
    tr.x.push_back(x);
  };
  record();
  for (int k = 0; k < kSteps; ++k) {
    const auto u = torque(k, g);
    for (int j = 0; j < kDof; ++j) d->ctrl[j] = u[size_t(j)];
    mj_step(m, d.get());
    tr.max_nefc = std::max(tr.max_nefc, d->nefc);
    record();
  }
  return tr;
}

// solves A x = b in place (A n × n, row-major, copied), Gaussian elimination with pivoting
std::vector<double> solve(std::vector<double> A, std::vector<double> b) {
  const int n = int(b.size());
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(A[size_t(r * n + c)]) > std::fabs(A[size_t(p * n + c)])) p = r;
    for (int j = 0; j < n; ++j) std::swap(A[size_t(c * n + j)], A[size_t(p * n + j)]);
    std::swap(b[size_t(c)], b[size_t(p)]);
    for (int r = c + 1; r < n; ++r) {
      const double f = A[size_t(r * n + c)] / A[size_t(c * n + c)];
      for (int j = c; j < n; ++j) A[size_t(r * n + j)] -= f * A[size_t(c * n + j)];
      b[size_t(r)] -= f * b[size_t(c)];
    }
  }
  for (int r = n - 1; r >= 0; --r) {
    double s = b[size_t(r)];
    for (int j = r + 1; j < n; ++j) s -= A[size_t(r * n + j)] * b[size_t(j)];
    b[size_t(r)] = s / A[size_t(r * n + r)];
  }
  return b;
}

// ---------------------------------------------------------------------------------------
// MuJoCo alone: the MJCF and the integrator law the comparison relies on

TEST(MujocoCrosscheckTest, ModelIsTheFactsPanda) {
  ModelPtr m = load_panda();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->nq, kDof);
  EXPECT_EQ(m->nv, kDof);
  EXPECT_EQ(m->nu, kDof);
  EXPECT_EQ(m->na, 0);
  EXPECT_EQ(m->ngeom, 0);   // nothing can collide
  EXPECT_EQ(m->nbody, 10);  // world, link0..7, hand
  EXPECT_EQ(m->opt.integrator, mjINT_EULER);
  EXPECT_DOUBLE_EQ(m->opt.timestep, kH);
  EXPECT_DOUBLE_EQ(m->opt.gravity[2], -9.81);
  double mass = 0;
  for (int b = 0; b < m->nbody; ++b) mass += m->body_mass[b];
  // Σ of the facts' link masses, link0 … hand [kg]
  EXPECT_NEAR(
      mass,
      0.629769 + 4.970684 + 0.646926 + 3.228604 + 3.587895 + 1.225946 + 1.666555 + 0.735522 + 0.73,
      1e-12);
  for (int i = 0; i < kDof; ++i) {
    EXPECT_EQ(m->jnt_type[i], mjJNT_HINGE);
    EXPECT_DOUBLE_EQ(m->dof_armature[i], 0.1);
    EXPECT_DOUBLE_EQ(m->dof_damping[i], 1.0);
    EXPECT_EQ(m->actuator_outadr[i], i);
    EXPECT_EQ(m->actuator_ctrladr[i], i);
    EXPECT_DOUBLE_EQ(m->actuator_gear[6 * i], 1.0);
    EXPECT_FALSE(m->actuator_ctrllimited[i]);
    EXPECT_FALSE(m->actuator_forcelimited[i]);
    EXPECT_EQ(m->actuator_trnid[2 * i], i);
  }
}

// MuJoCo's Euler step with dof damping (2.2.2 and 4.0.1) is the law steer's `euler` implements:
// v⁺ = (M + h D)⁻¹ (M v + h (τ − c)), q⁺ = q + h v⁺, with M (armature included) and c from
// mj_forward at (q, v); checked at states along the trajectory to rounding
TEST(MujocoCrosscheckTest, EulerIsSemiImplicitWithImplicitDamping) {
  ModelPtr m = load_panda();
  ASSERT_TRUE(m);
  const MjTrajectory tr = mujoco_trajectory(m.get());
  const auto g = home_gravity(m.get());
  DataPtr d(mj_makeData(m.get()));
  double err_q = 0, err_v = 0;
  for (int k : {0, 1, 60, 125, 249}) {
    mj_resetData(m.get(), d.get());
    for (int i = 0; i < kDof; ++i)
      d->qpos[i] = tr.x[size_t(k)][size_t(i)], d->qvel[i] = tr.x[size_t(k)][size_t(kDof + i)];
    const auto u = torque(k, g);
    for (int j = 0; j < kDof; ++j) d->ctrl[j] = u[size_t(j)];
    std::vector<double> M, c;
    mass_and_bias(m.get(), d.get(), M, c);
    std::vector<double> A = M, b(kDof);
    for (int i = 0; i < kDof; ++i) {
      A[size_t(i * kDof + i)] += kH * m->dof_damping[i];
      double Mv = 0;
      for (int j = 0; j < kDof; ++j) Mv += M[size_t(i * kDof + j)] * d->qvel[j];
      b[size_t(i)] = Mv + kH * (u[size_t(i)] - c[size_t(i)]);
    }
    const std::vector<double> vn = solve(A, b);
    mj_step(m.get(), d.get());
    for (int i = 0; i < kDof; ++i) {
      err_v = std::max(err_v, std::fabs(d->qvel[i] - vn[size_t(i)]));
      err_q = std::max(err_q,
                       std::fabs(d->qpos[i] - (tr.x[size_t(k)][size_t(i)] + kH * vn[size_t(i)])));
      // mj_step from the recorded state reproduces the recorded next state exactly
      EXPECT_EQ(d->qpos[i], tr.x[size_t(k + 1)][size_t(i)]);
      EXPECT_EQ(d->qvel[i], tr.x[size_t(k + 1)][size_t(kDof + i)]);
    }
  }
  std::printf("[ mujoco ] Euler law vs mj_step: max |dq| %.3e rad, max |dv| %.3e rad/s\n", err_q,
              err_v);
  EXPECT_LE(err_v, 1e-12);
  EXPECT_LE(err_q, 1e-14);
}

// the cross-check trajectory moves every joint, stays at least 0.1 rad inside every joint
// range, and never creates a constraint (so the joint limits in the MJCF never act)
TEST(MujocoCrosscheckTest, TrajectoryStaysInsideRanges) {
  ModelPtr m = load_panda();
  ASSERT_TRUE(m);
  const MjTrajectory tr = mujoco_trajectory(m.get());
  ASSERT_EQ(tr.x.size(), size_t(kSteps + 1));
  EXPECT_EQ(tr.max_nefc, 0);
  double margin = 1e300;
  std::array<double, kDof> travel{};
  for (const auto& x : tr.x)
    for (int i = 0; i < kDof; ++i) {
      ASSERT_TRUE(std::isfinite(x[size_t(i)]) && std::isfinite(x[size_t(kDof + i)]));
      margin = std::min(
          {margin, x[size_t(i)] - m->jnt_range[2 * i], m->jnt_range[2 * i + 1] - x[size_t(i)]});
      travel[size_t(i)] = std::max(travel[size_t(i)], std::fabs(x[size_t(i)] - kHome[size_t(i)]));
    }
  std::printf("[ mujoco ] smallest distance to a joint limit %.3f rad; travel per joint [rad]:",
              margin);
  for (double t : travel) std::printf(" %.3f", t);
  std::printf("\n");
  EXPECT_GE(margin, 0.1);
  for (int i = 0; i < kDof; ++i)
    EXPECT_GE(travel[size_t(i)], 0.01) << "joint " << i + 1 << " barely moves";
}

// mjd_transitionFD's A, B are row-major (2nv × 2nv, 2nv × nu), rows and columns ordered
// (q, v): checked against our own centered differences of mj_step, so that the comparison
// with steer's Jacobian reads them the right way round
TEST(MujocoCrosscheckTest, TransitionFDLayout) {
  ModelPtr m = load_panda();
  ASSERT_TRUE(m);
  const MjTrajectory tr = mujoco_trajectory(m.get());
  const auto g = home_gravity(m.get());
  DataPtr d(mj_makeData(m.get()));
  const int k = 125, n = 2 * kDof;
  auto set = [&](const std::array<double, 2 * kDof>& x, const std::array<double, kDof>& u) {
    mj_resetData(m.get(), d.get());
    for (int i = 0; i < kDof; ++i)
      d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(kDof + i)], d->ctrl[i] = u[size_t(i)];
  };
  auto stepped = [&](const std::array<double, 2 * kDof>& x, const std::array<double, kDof>& u) {
    set(x, u);
    mj_step(m.get(), d.get());
    std::array<double, 2 * kDof> y{};
    for (int i = 0; i < kDof; ++i) y[size_t(i)] = d->qpos[i], y[size_t(kDof + i)] = d->qvel[i];
    return y;
  };
  const auto x = tr.x[size_t(k)];
  const auto u = torque(k, g);
  std::vector<double> A(size_t(n * n)), B(size_t(n * kDof));
  set(x, u);
  mjd_transitionFD(m.get(), d.get(), 1e-6, 1, A.data(), B.data(), nullptr, nullptr);
  const double eps = 1e-6;
  double err = 0;
  for (int c = 0; c < n + kDof; ++c) {
    auto xp = x, xm = x;
    auto up = u, um = u;
    if (c < n)
      xp[size_t(c)] += eps, xm[size_t(c)] -= eps;
    else
      up[size_t(c - n)] += eps, um[size_t(c - n)] -= eps;
    const auto yp = stepped(xp, up), ym = stepped(xm, um);
    for (int r = 0; r < n; ++r) {
      const double fd = (yp[size_t(r)] - ym[size_t(r)]) / (2 * eps);
      const double mj = c < n ? A[size_t(r * n + c)] : B[size_t(r * kDof + c - n)];
      err = std::max(err, std::fabs(fd - mj) / std::max(1.0, std::fabs(fd)));
    }
  }
  std::printf("[ mujoco ] mjd_transitionFD vs own centered FD of mj_step: max rel err %.3e\n", err);
  EXPECT_LE(err, 1e-8);
}

// ---------------------------------------------------------------------------------------
// steer against MuJoCo

using steer::Articulated;

// steer's Panda as configs/panda.json ships it, made into the MJCF's plant: the `euler`
// integrator, PD gains k_p = k_v = 0 (the feed-forward torque is the whole joint torque, as
// with MuJoCo's motors), torque saturation and contact off
struct SteerPanda {
  Articulated m;
  std::vector<double> theta, x0;
};

SteerPanda steer_panda() {
  const steer::ExperimentConfig c =
      steer::load_config(std::string(STEER_CONFIGS_DIR) + "/panda.json");
  SteerPanda s;
  s.m = c.model_state<steer::ArticulatedSetup>().model;
  s.theta = c.theta;
  s.x0 = c.x0;
  s.m.integrator = Articulated::kEuler;
  s.m.torque_limits = false;
  s.m.contact = false;
  for (const char* g : {"kp", "kv"})
    for (int q : c.info.param_groups.at(g)) s.theta[size_t(q)] = 0.0;
  return s;
}

// MuJoCo's compiler replaces each fullinertia by principal moments and axes (body_inertia,
// body_iquat) from its Jacobi eigensolver mju_eig3, which in 2.2.2 stops with off-diagonal
// residue left: for link1 it returns after 3 iterations with 4.6e-7 kg m^2 off the
// diagonal, so the tensor MuJoCo simulates, rotated back, has Iyz = 0.019169457 where the
// MJCF says 0.019169. That is MuJoCo's model, not steer's, so the dynamics checks give
// steer the tensor MuJoCo actually simulates, R diag(I) Rᵀ in the body frame;
// InertiaAsCompiled bounds the compiler's deviation from the config and
// TrajectoryMatchesEuler reports the difference it makes.
void use_mujoco_inertia(const mjModel* mj, SteerPanda& s) {
  for (int b = 0; b < s.m.n_bodies; ++b) {
    double R[9], I[9];
    mju_quat2Mat(R, mj->body_iquat + 4 * (b + 1));
    const double* d = mj->body_inertia + 3 * (b + 1);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        I[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                       R[3 * i + 2] * d[2] * R[3 * j + 2];
    const double full[6] = {I[0], I[4], I[8], I[1], I[2], I[5]};
    for (int k = 0; k < 6; ++k) s.theta[size_t(s.m.p_body(b, Articulated::kIxx + k))] = full[k];
  }
}

// the shipped config is the MJCF's arm: same timestep, gravity, damping, armature, masses
// and home pose (everything else, kinematics and inertias, is compared through dynamics)
TEST(MujocoCrosscheckTest, SteerConfigIsTheSameArm) {
  ModelPtr mj = load_panda();
  ASSERT_TRUE(mj);
  const SteerPanda s = steer_panda();
  const Articulated& m = s.m;
  ASSERT_EQ(m.n_dof, kDof);
  ASSERT_EQ(m.n_bodies, mj->nbody - 1);  // MuJoCo counts the world body
  EXPECT_DOUBLE_EQ(m.dt, mj->opt.timestep);
  EXPECT_DOUBLE_EQ(s.theta[size_t(m.p_global(Articulated::kGravity))], -mj->opt.gravity[2]);
  for (int j = 0; j < kDof; ++j) {
    EXPECT_DOUBLE_EQ(s.theta[size_t(m.p_joint(j, Articulated::kDamping))], mj->dof_damping[j])
        << "joint " << j + 1;
    EXPECT_DOUBLE_EQ(s.theta[size_t(m.p_joint(j, Articulated::kArmature))], mj->dof_armature[j])
        << "joint " << j + 1;
    EXPECT_EQ(s.x0[size_t(j)], kHome[size_t(j)]) << "joint " << j + 1;
    EXPECT_EQ(s.x0[size_t(kDof + j)], 0.0);
  }
  for (int b = 0; b < m.n_bodies; ++b)
    EXPECT_DOUBLE_EQ(s.theta[size_t(m.p_body(b, Articulated::kMass))], mj->body_mass[b + 1])
        << "body " << b;
}

// MuJoCo's compiled inertias are the config's (the facts) up to mju_eig3's residue: within
// 1e-6 of each body's largest principal moment (measured with 2.2.2: 4.6e-7 kg m^2 on
// link1, 6.5e-7 of its 0.707 kg m^2; the other bodies 1e-7 or less). A transcription
// error in a leading digit of either file would show here far above that.
TEST(MujocoCrosscheckTest, InertiaAsCompiled) {
  ModelPtr mj = load_panda();
  ASSERT_TRUE(mj);
  const SteerPanda facts = steer_panda();
  SteerPanda compiled = facts;
  use_mujoco_inertia(mj.get(), compiled);
  double worst_abs = 0, worst_rel = 0;
  for (int b = 0; b < facts.m.n_bodies; ++b) {
    double largest = 0, diff = 0;
    for (int k = 0; k < 3; ++k) largest = std::max(largest, mj->body_inertia[3 * (b + 1) + k]);
    for (int k = 0; k < 6; ++k) {
      const size_t q = size_t(facts.m.p_body(b, Articulated::kIxx + k));
      diff = std::max(diff, std::fabs(compiled.theta[q] - facts.theta[q]));
    }
    worst_abs = std::max(worst_abs, diff);
    worst_rel = std::max(worst_rel, diff / largest);
    EXPECT_LE(diff, 1e-6 * largest) << "body " << b;
    // the centre of mass is stored as given
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(mj->body_ipos[3 * (b + 1) + k],
                facts.theta[size_t(facts.m.p_body(b, Articulated::kComX + k))])
          << "body " << b;
  }
  std::printf(
      "[ mujoco ] compiled inertia vs fullinertia: max |dI| %.3e kg m^2, %.3e of the body's "
      "largest moment\n",
      worst_abs, worst_rel);
}

// M(q) (armature included) and c(q, q̇) from steer's mass_matrix / bias_forces against
// MuJoCo's mj_fullM and qfrc_bias at states along the trajectory. Tolerance 1e-12 relative
// to the largest entry: MuJoCo diagonalizes each inertia (principal axes and a quaternion)
// at compile time and rotates it back, steer rotates the full tensor, so the two agree to
// rounding, not bitwise.
TEST(MujocoCrosscheckTest, MassMatrixAndBias) {
  ModelPtr mj = load_panda();
  ASSERT_TRUE(mj);
  SteerPanda s = steer_panda();
  use_mujoco_inertia(mj.get(), s);
  const MjTrajectory tr = mujoco_trajectory(mj.get());
  DataPtr d(mj_makeData(mj.get()));
  double err_M = 0, err_c = 0, max_M = 0, max_c = 0;
  for (int k : {0, 1, 60, 125, 200, 250}) {
    const auto& x = tr.x[size_t(k)];
    mj_resetData(mj.get(), d.get());
    for (int i = 0; i < kDof; ++i) d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(kDof + i)];
    std::vector<double> M, c;
    mass_and_bias(mj.get(), d.get(), M, c);
    Articulated::Kin<double> K;
    double q[Articulated::kMaxDof], v[Articulated::kMaxDof];
    for (int i = 0; i < kDof; ++i) q[i] = x[size_t(i)], v[i] = x[size_t(kDof + i)];
    s.m.forward_kinematics(q, s.theta, K);
    double Ms[Articulated::kMaxDof * Articulated::kMaxDof], cs[Articulated::kMaxDof];
    s.m.mass_matrix(K, s.theta, Ms);
    s.m.bias_forces(K, v, s.theta, cs);
    for (int i = 0; i < kDof; ++i) {
      for (int j = 0; j < kDof; ++j) {
        err_M =
            std::max(err_M, std::fabs(Ms[i * Articulated::kMaxDof + j] - M[size_t(i * kDof + j)]));
        max_M = std::max(max_M, std::fabs(M[size_t(i * kDof + j)]));
      }
      err_c = std::max(err_c, std::fabs(cs[i] - c[size_t(i)]));
      max_c = std::max(max_c, std::fabs(c[size_t(i)]));
    }
  }
  std::printf(
      "[ steer vs mujoco ] max |dM| %.3e kg m^2 (max |M| %.3f), max |dc| %.3e N m (max |c| %.3f)\n",
      err_M, max_M, err_c, max_c);
  EXPECT_LE(err_M, 1e-12 * std::max(1.0, max_M));
  EXPECT_LE(err_c, 1e-12 * std::max(1.0, max_c));
}

// steer's free-running trajectory from the home pose under torque() against MuJoCo's: the
// largest |Δq|, |Δq̇| after any step, and the largest of one steer step taken from
// MuJoCo's own state (no accumulation)
struct TrajectoryError {
  double q = 0, v = 0, step_q = 0, step_v = 0;
};

TrajectoryError trajectory_error(const SteerPanda& s, const MjTrajectory& tr,
                                 const std::array<double, kDof>& g) {
  TrajectoryError e;
  std::vector<double> x(s.x0), xn(size_t(2 * kDof));
  for (int k = 0; k < kSteps; ++k) {
    const auto ua = torque(k, g);
    const std::vector<double> u(ua.begin(), ua.end());
    const auto& next = tr.x[size_t(k + 1)];
    const std::vector<double> xm(tr.x[size_t(k)].begin(), tr.x[size_t(k)].end());
    s.m.step<double>(k, xm, u, s.theta, xn);
    for (int i = 0; i < kDof; ++i) {
      e.step_q = std::max(e.step_q, std::fabs(xn[size_t(i)] - next[size_t(i)]));
      e.step_v = std::max(e.step_v, std::fabs(xn[size_t(kDof + i)] - next[size_t(kDof + i)]));
    }
    s.m.step<double>(k, x, u, s.theta, xn);
    x = xn;
    for (int i = 0; i < kDof; ++i) {
      e.q = std::max(e.q, std::fabs(x[size_t(i)] - next[size_t(i)]));
      e.v = std::max(e.v, std::fabs(x[size_t(kDof + i)] - next[size_t(kDof + i)]));
    }
  }
  return e;
}

// the same torques from the home pose: q, q̇ after every step of 500 ms agree to 1e-8
// (rad, rad/s), each simulator running free from the shared start, with steer given the
// inertias MuJoCo simulates (see use_mujoco_inertia). With the config's own inertias the
// difference is reported, not asserted: it is MuJoCo's compile-time eigensolver residue
// (≤ 4.6e-7 kg m^2, see use_mujoco_inertia) carried through the dynamics (2.0e-8 rad and
// 1.7e-7 rad/s after 500 ms with MuJoCo 2.2.2).
TEST(MujocoCrosscheckTest, TrajectoryMatchesEuler) {
  ModelPtr mj = load_panda();
  ASSERT_TRUE(mj);
  const SteerPanda facts = steer_panda();
  SteerPanda s = facts;
  use_mujoco_inertia(mj.get(), s);
  const MjTrajectory tr = mujoco_trajectory(mj.get());
  const auto g = home_gravity(mj.get());
  for (int i = 0; i < 2 * kDof; ++i) ASSERT_EQ(s.x0[size_t(i)], tr.x[0][size_t(i)]);
  const TrajectoryError e = trajectory_error(s, tr, g), ef = trajectory_error(facts, tr, g);
  std::printf(
      "[ steer vs mujoco ] %d steps of %g s, MuJoCo's compiled inertias: max |dq| %.3e rad, max "
      "|dv| %.3e rad/s; one "
      "step from MuJoCo's state: max |dq| %.3e rad, max |dv| %.3e rad/s\n",
      kSteps, kH, e.q, e.v, e.step_q, e.step_v);
  std::printf(
      "[ steer vs mujoco ] the same with the config's inertias (MJCF fullinertia before MuJoCo "
      "diagonalizes it): max "
      "|dq| %.3e rad, max |dv| %.3e rad/s\n",
      ef.q, ef.v);
  EXPECT_LE(e.q, 1e-8);
  EXPECT_LE(e.v, 1e-8);
}

// steer's exact one-step Jacobians (forward-mode duals through `step`) against MuJoCo's
// centered finite differences mjd_transitionFD(eps = 1e-6) at states along the trajectory:
// A = dx+/dx (2n x 2n), B = dx+/du (2n x n). Centered FD errs by O(eps^2) (about 1e-12
// here) plus rounding O(1e-16 |x+| / eps) (about 1e-10), so 1e-6 max(1, |J|) leaves a wide
// margin for FD yet fails on any modelling difference, which is of the order of the entry.
// (MuJoCo 2.2.2's centered mode gets the sign of D = dsensor/du wrong; A and B are right,
// and TransitionFDLayout checks them against our own differences of mj_step.)
TEST(MujocoCrosscheckTest, OneStepJacobians) {
  ModelPtr mj = load_panda();
  ASSERT_TRUE(mj);
  SteerPanda s = steer_panda();
  use_mujoco_inertia(mj.get(), s);
  const MjTrajectory tr = mujoco_trajectory(mj.get());
  const auto g = home_gravity(mj.get());
  DataPtr d(mj_makeData(mj.get()));
  const int nx = 2 * kDof, nu = kDof, ncol = s.m.nx() + s.m.nu() + s.m.np();
  ASSERT_EQ(s.m.nx(), nx);
  ASSERT_EQ(s.m.nu(), nu);
  double err_A = 0, err_B = 0, max_A = 0, max_B = 0;
  for (int k : {0, 60, 125, 249}) {
    const auto& xa = tr.x[size_t(k)];
    const auto ua = torque(k, g);
    mj_resetData(mj.get(), d.get());
    for (int i = 0; i < kDof; ++i)
      d->qpos[i] = xa[size_t(i)], d->qvel[i] = xa[size_t(kDof + i)], d->ctrl[i] = ua[size_t(i)];
    std::vector<double> A(size_t(nx * nx)), B(size_t(nx * nu));
    mjd_transitionFD(mj.get(), d.get(), 1e-6, 1, A.data(), B.data(), nullptr, nullptr);
    const std::vector<double> x(xa.begin(), xa.end()), u(ua.begin(), ua.end());
    std::vector<double> J(size_t(nx * ncol));
    steer::dual_jacobian<Articulated, double>(s.m, k, x, u, s.theta, J.data());
    for (int r = 0; r < nx; ++r) {
      for (int c = 0; c < nx; ++c) {
        const double js = J[size_t(r * ncol + c)], jm = A[size_t(r * nx + c)];
        err_A = std::max(err_A, std::fabs(js - jm) / std::max(1.0, std::fabs(js)));
        max_A = std::max(max_A, std::fabs(js));
      }
      for (int c = 0; c < nu; ++c) {
        const double js = J[size_t(r * ncol + nx + c)], jm = B[size_t(r * nu + c)];
        err_B = std::max(err_B, std::fabs(js - jm) / std::max(1.0, std::fabs(js)));
        max_B = std::max(max_B, std::fabs(js));
      }
    }
  }
  std::printf(
      "[ steer vs mujoco ] one-step Jacobians vs mjd_transitionFD (centered, eps 1e-6): max "
      "|dA|/max(1,|A|) %.3e "
      "(max |A| %.3f), max |dB|/max(1,|B|) %.3e (max |B| %.3f)\n",
      err_A, max_A, err_B, max_B);
  EXPECT_LE(err_A, 1e-6);
  EXPECT_LE(err_B, 1e-6);
}

}  // namespace
