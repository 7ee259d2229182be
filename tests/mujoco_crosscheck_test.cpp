// Cross-check of steer's articulated Panda (include/steer/models/articulated.h,
// configs/panda.json) against MuJoCo on the same arm (configs/mjcf/panda.xml), both in
// float64 with MuJoCo's Euler integrator: semi-implicit Euler with the joint damping
// implicit, (M + h D) v⁺ = M v + h (τ − c(q, v)), q⁺ = q + h v⁺.
//
// Built only when CMake finds MuJoCo (Debian libmujoco-dev, MuJoCo 2.2.2). Checks:
// - the MJCF is the model the facts describe, and MuJoCo's Euler is the law above;
// - the same torque sequence from the home pose gives the same q, v after every step over
//   500 ms (250 steps of 2 ms), to 1e-8 rad and rad/s;
// - steer's exact one-step Jacobians ∂x⁺/∂x, ∂x⁺/∂u agree with MuJoCo's centered finite
//   differences (mjd_transitionFD) to 1e-6 · max(1, |J|);
// - mass matrix (with armature) and bias forces c(q, v) agree to rounding.
#include <gtest/gtest.h>

#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#if __has_include("steer/models/articulated.h")
#define STEER_HAVE_ARTICULATED 1
#include "config.h"
#include "steer/models/articulated.h"
#include "steer/reference_adjoint.h"
#else
#define STEER_HAVE_ARTICULATED 0
#endif

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
  mj_fullM(m, M.data(), d->qM);
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
  EXPECT_EQ(m->ngeom, 0);  // nothing can collide
  EXPECT_EQ(m->nbody, 10);  // world, link0..7, hand
  EXPECT_EQ(m->opt.integrator, mjINT_EULER);
  EXPECT_DOUBLE_EQ(m->opt.timestep, kH);
  EXPECT_DOUBLE_EQ(m->opt.gravity[2], -9.81);
  double mass = 0;
  for (int b = 0; b < m->nbody; ++b) mass += m->body_mass[b];
  // Σ of the facts' link masses, link0 … hand [kg]
  EXPECT_NEAR(mass, 0.629769 + 4.970684 + 0.646926 + 3.228604 + 3.587895 + 1.225946 + 1.666555 + 0.735522 + 0.73,
              1e-12);
  for (int i = 0; i < kDof; ++i) {
    EXPECT_EQ(m->jnt_type[i], mjJNT_HINGE);
    EXPECT_DOUBLE_EQ(m->dof_armature[i], 0.1);
    EXPECT_DOUBLE_EQ(m->dof_damping[i], 1.0);
    EXPECT_DOUBLE_EQ(m->actuator_gear[6 * i], 1.0);
    EXPECT_FALSE(m->actuator_ctrllimited[i]);
    EXPECT_FALSE(m->actuator_forcelimited[i]);
    EXPECT_EQ(m->actuator_trnid[2 * i], i);
  }
}

// MuJoCo 2.2.2's Euler step with dof damping is the law steer's `euler` implements:
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
    for (int i = 0; i < kDof; ++i) d->qpos[i] = tr.x[size_t(k)][size_t(i)], d->qvel[i] = tr.x[size_t(k)][size_t(kDof + i)];
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
      err_q = std::max(err_q, std::fabs(d->qpos[i] - (tr.x[size_t(k)][size_t(i)] + kH * vn[size_t(i)])));
      // mj_step from the recorded state reproduces the recorded next state exactly
      EXPECT_EQ(d->qpos[i], tr.x[size_t(k + 1)][size_t(i)]);
      EXPECT_EQ(d->qvel[i], tr.x[size_t(k + 1)][size_t(kDof + i)]);
    }
  }
  std::printf("[ mujoco ] Euler law vs mj_step: max |dq| %.3e rad, max |dv| %.3e rad/s\n", err_q, err_v);
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
      margin = std::min({margin, x[size_t(i)] - m->jnt_range[2 * i], m->jnt_range[2 * i + 1] - x[size_t(i)]});
      travel[size_t(i)] = std::max(travel[size_t(i)], std::fabs(x[size_t(i)] - kHome[size_t(i)]));
    }
  std::printf("[ mujoco ] smallest distance to a joint limit %.3f rad; travel per joint [rad]:", margin);
  for (double t : travel) std::printf(" %.3f", t);
  std::printf("\n");
  EXPECT_GE(margin, 0.1);
  for (int i = 0; i < kDof; ++i) EXPECT_GE(travel[size_t(i)], 0.01) << "joint " << i + 1 << " barely moves";
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
    for (int i = 0; i < kDof; ++i) d->qpos[i] = x[size_t(i)], d->qvel[i] = x[size_t(kDof + i)], d->ctrl[i] = u[size_t(i)];
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
    if (c < n) xp[size_t(c)] += eps, xm[size_t(c)] -= eps;
    else up[size_t(c - n)] += eps, um[size_t(c - n)] -= eps;
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

#if STEER_HAVE_ARTICULATED
// ---------------------------------------------------------------------------------------
// steer against MuJoCo

#endif

}  // namespace
