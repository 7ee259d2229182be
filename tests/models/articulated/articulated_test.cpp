// include/steer/models/articulated.h: the generic gradient suite on the Panda (three
// integrators, torque saturation, fingertip contact at onset, zero velocity) and on a small
// hinge + slide chain; the physics the model promises, checked independently of its code
// path (a pendulum's analytic acceleration, Lagrange's equations against the Newton–Euler
// bias forces, energy conservation of a free swing); and the seed's bar: ∂(joint-angle
// error at 500 ms)/∂u_ff,k for every k against centered finite differences.
#include "steer/models/articulated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "config/config.h"
#include "config_errors.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"

namespace steer::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<double> kHome = {0, 0, 0, -1.57079, 0, 1.57079, -0.7853};

ExperimentConfig panda_config() {
  return load_config((fs::path(STEER_SOURCE_DIR) / "configs" / "panda.json").string());
}

// the Panda with the given integrator and contact setting, θ nominal
Articulated panda(int integrator, bool contact, std::vector<double>& theta) {
  ExperimentConfig c = panda_config();
  Articulated m = c.model_state<ArticulatedSetup>().model;
  m.integrator = integrator;
  m.contact = contact;
  theta = c.theta;
  return m;
}

// a moving state near the home pose
std::vector<double> moving_state(double speed) {
  std::vector<double> x(14);
  for (int j = 0; j < 7; ++j) {
    x[j] = kHome[j] + 0.05 * std::sin(1.0 + j);
    x[7 + j] = speed * std::cos(2.0 + j);
  }
  return x;
}

// a two-body chain: a hinge about y at the origin, then a slide along the link's x axis
ExperimentConfig hinge_slide_config() {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "hinge_slide",
    "model": {"type": "articulated", "integrator": "euler",
      "bodies": [
        {"name": "arm", "pos": [0, 0, 1], "joint": {"name": "shoulder", "axis": [0, 1, 0], "damping": 0.3, "armature": 0.01,
          "kp": 20, "kv": 2, "force_limit": 15}, "mass": 2.0, "com": [0.2, 0, 0], "fullinertia": [0.01, 0.03, 0.03, 0, 0.001, 0]},
        {"name": "slider", "parent": "arm", "pos": [0.4, 0, 0], "quat": [0.9238795, 0, 0.3826834, 0],
          "joint": {"name": "rail", "type": "slide", "axis": [1, 0, 0], "range": [-0.5, 0.5], "damping": 0.5, "kp": 50, "kv": 1,
          "force_limit": 30}, "mass": 0.7, "com": [0.05, 0.01, 0], "fullinertia": [0.002, 0.004, 0.003, 0.0001, 0, 0.0002]}
      ],
      "tip": {"body": "slider", "pos": [0.1, 0, 0]},
      "contact": {"height": 0.5, "stiffness": 2000, "damping": 5, "smoothing": 0.01}},
    "simulation": {"dt": 0.002, "steps": 10},
    "initial_state": {"q": [0.3, 0.1], "v": [0.5, -0.2]},
    "loss": {"terminal": [{"state": "shoulder.q", "target": 0.2}]},
    "validation": {"enabled": false}
  })");
  return parse_config(j);
}

// three hinges and a slide whose joints sit away from their body origins (joint pos, in the
// body frame), with two sites; the tip (contact point) is on a body with a joint pos
nlohmann::json offset_joints_json() {
  return nlohmann::json::parse(R"({
    "name": "offset_joints",
    "model": {"type": "articulated", "integrator": "euler",
      "bodies": [
        {"name": "base", "pos": [0, 0, 1], "quat": [0.9659258, 0, 0, 0.2588190],
          "joint": {"name": "j1", "axis": [0, 0, 1], "pos": [0.05, -0.02, 0.1], "damping": 0.2, "kp": 10, "kv": 1, "force_limit": 20},
          "mass": 1.5, "com": [0.02, 0.01, 0.15], "fullinertia": [0.02, 0.02, 0.01, 0.001, 0, 0.0005]},
        {"name": "upper", "parent": "base", "pos": [0.1, 0, 0.3], "quat": [0.9238795, 0.3826834, 0, 0],
          "joint": {"name": "j2", "axis": [0, 1, 0], "pos": [-0.04, 0.03, 0.02], "damping": 0.3, "armature": 0.01, "kp": 20, "kv": 2, "force_limit": 15},
          "mass": 1.0, "com": [0.15, 0, 0.01], "fullinertia": [0.004, 0.012, 0.011, 0, 0.0005, 0]},
        {"name": "fore", "parent": "upper", "pos": [0.3, 0.02, 0],
          "joint": {"name": "j3", "axis": [0.6, 0.8, 0], "pos": [0.01, 0.02, -0.05], "damping": 0.1, "kp": 5, "kv": 0.5, "force_limit": 10},
          "mass": 0.6, "com": [0.12, 0.01, 0], "fullinertia": [0.001, 0.005, 0.005, 0.0002, 0, 0]},
        {"name": "finger", "parent": "fore", "pos": [0.25, 0, 0], "quat": [0.9659258, 0, 0.2588190, 0],
          "joint": {"name": "j4", "type": "slide", "axis": [1, 0, 0], "pos": [0.3, 0.1, 0], "range": [-0.1, 0.1], "damping": 0.5, "kp": 50, "kv": 1, "force_limit": 30},
          "mass": 0.2, "com": [0.03, 0, 0.01], "fullinertia": [0.0002, 0.0003, 0.0003, 0, 0, 0]}
      ],
      "tip": {"body": "fore", "pos": [0.2, 0.01, -0.02]},
      "sites": [{"name": "grip", "body": "finger", "pos": [0.06, 0.01, -0.02], "quat": [0.8, 0.2, -0.1, 0.3]},
                {"name": "elbow", "body": "upper", "pos": [0.3, 0, 0]}],
      "contact": {"height": 0.8, "stiffness": 2000, "damping": 5, "smoothing": 0.01}},
    "simulation": {"dt": 0.002, "steps": 10},
    "initial_state": {"q": [0.3, -0.2, 0.4, 0.02], "v": [0.5, -0.2, 0.3, 0.1]},
    "loss": {"terminal": [{"state": "j2.q", "target": 0.2}]},
    "validation": {"enabled": false}
  })");
}

ExperimentConfig offset_joints_config() { return parse_config(offset_joints_json()); }

std::vector<double> with_gains_off(const Articulated& m, std::vector<double> p) {
  for (int j = 0; j < m.n_dof; ++j) {
    p[m.p_joint(j, Articulated::kDamping)] = 0;
    p[m.p_joint(j, Articulated::kKp)] = 0;
    p[m.p_joint(j, Articulated::kKv)] = 0;
  }
  return p;
}

struct ArticulatedProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const std::vector<double> u = {3, -2, 1, 0.5, -0.3, 0.2, 0.1};
    const char* names[3] = {"euler", "implicitfast", "rk4"};
    for (int integ = 0; integ < 3; ++integ) {
      std::vector<double> p;
      Articulated m = panda(integ, false, p);
      // targets away from the state: the PD torque saturates on several joints
      for (int j = 0; j < 7; ++j) p[m.p_joint(j, Articulated::kTarget)] = kHome[j] + 0.01 * (j + 1);
      StepCase<Articulated> c{
          std::string("panda ") + names[integ], m, moving_state(0.4), u, p, 1.0, 3};
      out.push_back(c);
    }
    for (int newton : {2, 3}) {
      // the servo implicit through the saturation (servo_solve), saturating targets as above
      std::vector<double> p;
      Articulated m = panda(Articulated::kImplicitFast, false, p);
      m.servo_newton = newton;
      for (int j = 0; j < 7; ++j) p[m.p_joint(j, Articulated::kTarget)] = kHome[j] + 0.01 * (j + 1);
      StepCase<Articulated> c{"panda implicit servo, " + std::to_string(newton) + " Newton",
                              m,
                              moving_state(0.4),
                              u,
                              p,
                              1.0,
                              3};
      out.push_back(c);
    }
    {
      // fingertip exactly at the plane (contact onset), moving down: penetration = height − z_tip,
      // so the plane goes to height − penetration = z_tip
      std::vector<double> p;
      Articulated m = panda(Articulated::kImplicitFast, true, p);
      std::vector<double> x = moving_state(0.2);
      p[m.p_global(Articulated::kPlaneHeight)] -=
          m.penetration<double>(view(x.data()), view(p.data()));
      p[m.p_global(Articulated::kContactStiffness)] = 1e4;
      p[m.p_global(Articulated::kContactSmoothing)] = 1e-3;
      StepCase<Articulated> c{"panda fingertip at contact onset", m, x, u, p, 1e-3, 0};
      out.push_back(c);
    }
    {
      std::vector<double> p;
      Articulated m = panda(Articulated::kEuler, false, p);
      StepCase<Articulated> c{
          "panda at rest at home", m, moving_state(0.0), std::vector<double>(7, 0.0), p, 1.0, 0};
      out.push_back(c);
    }
    for (int integ = 0; integ < 3; ++integ) {
      // joint limits on: joint 2 half a smoothing width past its upper limit, joint 4 at its
      // lower limit, joint 6 two widths inside its upper limit, the rest inside
      std::vector<double> p;
      Articulated m = panda(integ, false, p);
      // PD targets as in the first cases: the saturation is away from its knee, where
      // centered FD in the targets loses accuracy (the clamp's curvature is β k_p²)
      for (int j = 0; j < 7; ++j) p[m.p_joint(j, Articulated::kTarget)] = kHome[j] + 0.01 * (j + 1);
      m.joint_limits = true;
      m.limit_stiffness = 1e4;   // [N·m/rad]
      m.limit_smoothing = 2e-3;  // [rad]
      for (int j = 0; j < 7; ++j) m.limit_lower[j] = -2.8, m.limit_upper[j] = 2.8;
      std::vector<double> x = moving_state(0.4);
      m.limit_upper[1] = x[1] - 0.5 * m.limit_smoothing;
      m.limit_lower[3] = x[3];
      m.limit_upper[5] = x[5] + 2 * m.limit_smoothing;
      StepCase<Articulated> c{
          std::string("panda past its joint limits ") + names[integ], m, x, u, p, 1.0, 2};
      out.push_back(c);
    }
    {
      ExperimentConfig hs = hinge_slide_config();
      for (int integ = 0; integ < 3; ++integ) {
        Articulated m = hs.model_state<ArticulatedSetup>().model;
        m.integrator = integ;
        m.contact = true;
        StepCase<Articulated> c{std::string("hinge + slide ") + names[integ],
                                m,
                                {0.3, 0.1, 0.5, -0.2},
                                {1.0, -2.0},
                                hs.theta,
                                1.0,
                                1};
        out.push_back(c);
      }
      // the implicit servo with the shoulder driven into its limit (τ_raw ≈ 40 N·m against 15)
      Articulated m = hs.model_state<ArticulatedSetup>().model;
      m.integrator = Articulated::kImplicitFast;
      m.servo_newton = 2;
      m.contact = true;
      StepCase<Articulated> c{
          "hinge + slide implicit servo", m, {0.3, 0.1, 0.5, -0.2}, {40.0, -2.0}, hs.theta, 1.0, 1};
      out.push_back(c);
    }
    {
      // joints away from their body origins, the contact point on such a body at the plane
      ExperimentConfig oj = offset_joints_config();
      for (int integ = 0; integ < 3; ++integ) {
        Articulated m = oj.model_state<ArticulatedSetup>().model;
        m.integrator = integ;
        m.contact = true;
        std::vector<double> p = oj.theta, x = {0.3, -0.2, 0.4, 0.02, 0.5, -0.2, 0.3, 0.1};
        p[m.p_global(Articulated::kPlaneHeight)] -=
            m.penetration<double>(view(x.data()), view(p.data())) - 0.003;
        StepCase<Articulated> c{
            std::string("offset joints ") + names[integ], m, x, {1.0, -2.0, 0.5, 3.0}, p, 1e-2, 1};
        out.push_back(c);
      }
    }
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    std::vector<RolloutCase<Articulated>> out;
    // the Panda over 30 steps, each joint's terminal error against its PD target (a parameter)
    auto panda_targets_case = [](const std::string& name, int servo_newton, double target_step) {
      RolloutCase<Articulated> c;
      c.name = name;
      c.model = panda(Articulated::kImplicitFast, false, c.p);
      c.model.servo_newton = servo_newton;
      for (int j = 0; j < 7; ++j)
        c.p[c.model.p_joint(j, Articulated::kTarget)] = kHome[j] + target_step * (j + 1);
      c.steps = 30;
      c.checkpoint_every = 6;
      c.x0 = moving_state(0.1);
      c.u.assign(size_t(c.steps) * 7, 0.0);
      for (size_t i = 0; i < c.u.size(); ++i) c.u[i] = 2.0 * std::sin(0.1 * double(i));
      c.loss.n_terminal = 7;
      for (int j = 0; j < 7; ++j) {
        c.loss.terminal_index[j] = j;
        c.loss.terminal_param[j] = c.model.p_joint(j, Articulated::kTarget);
        c.loss.terminal_weight[j] = 1.0;
      }
      c.loss.effort_weight = 1e-4;
      return c;
    };
    out.push_back(panda_targets_case("panda implicitfast, 30 steps, parameter targets", 0, 0.003));
    // the implicit servo, with targets that saturate the shoulder joints
    out.push_back(panda_targets_case("panda implicit servo, 30 steps, parameter targets", 3, 0.02));
    {
      RolloutCase<Articulated> c;
      ExperimentConfig hs = hinge_slide_config();
      c.name = "hinge + slide rk4 with contact, 25 steps";
      c.model = hs.model_state<ArticulatedSetup>().model;
      c.model.integrator = Articulated::kRk4;
      c.model.contact = true;
      c.p = hs.theta;
      c.steps = 25;
      c.checkpoint_every = 5;
      c.x0 = {0.3, 0.1, 0.5, -0.2};
      c.u.assign(size_t(c.steps) * 2, 0.5);
      c.loss.n_terminal = 2;
      c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 0.2, c.loss.terminal_weight[0] = 1;
      c.loss.terminal_index[1] = 3, c.loss.terminal_target[1] = 0.0,
      c.loss.terminal_weight[1] = 0.5;
      out.push_back(c);
    }
    for (int integ : {int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      RolloutCase<Articulated> c;
      ExperimentConfig oj = offset_joints_config();
      c.name = std::string("offset joints, 20 steps, ") +
               (integ == Articulated::kRk4 ? "rk4" : "implicitfast");
      c.model = oj.model_state<ArticulatedSetup>().model;
      c.model.integrator = integ;
      c.p = oj.theta;
      c.steps = 20;
      c.checkpoint_every = 6;
      c.x0 = {0.3, -0.2, 0.4, 0.02, 0.5, -0.2, 0.3, 0.1};
      c.u.assign(size_t(c.steps) * 4, 0.0);
      for (size_t i = 0; i < c.u.size(); ++i) c.u[i] = std::cos(0.3 * double(i));
      c.loss.n_terminal = 3;
      for (int j = 0; j < 3; ++j)
        c.loss.terminal_index[j] = j, c.loss.terminal_target[j] = 0.1 * j,
        c.loss.terminal_weight[j] = 1;
      c.loss.effort_weight = 1e-3;
      out.push_back(c);
    }
    return out;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Articulated, GradientSuite, ::testing::Types<ArticulatedProvider>);

namespace {

// a single rigid pendulum: a hinge about y, centre of mass at distance l along x, so
// (I_yy + m l² + armature) q̈ = m g l cos q − D q̇ + τ (q = 0: arm horizontal)
TEST(Articulated, PendulumAccelerationMatchesAnalytic) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "pendulum",
    "model": {"type": "articulated", "torque_limits": {"enabled": false},
      "bodies": [{"name": "bob", "joint": {"name": "pivot", "axis": [0, -1, 0], "damping": 0.2, "armature": 0.05},
                  "mass": 1.5, "com": [0.4, 0, 0], "fullinertia": [0.01, 0.02, 0.03, 0, 0, 0]}]},
    "simulation": {"dt": 1e-3, "steps": 1},
    "initial_state": {"q": [0.3], "v": [0.7]},
    "loss": {"terminal": [{"state": "pivot.q", "target": 0}]},
    "validation": {"enabled": false}
  })");
  ExperimentConfig c = parse_config(j);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  const double q = 0.3, v = 0.7, tau = 0.25, h = 1e-3, ml = 1.5 * 0.4, I = 0.02 + 1.5 * 0.16 + 0.05;
  // axis −y: positive q lifts the x axis towards −z... rotating about −y by q takes x to (cos q, 0,
  // sin q) so z_com = l sin q and gravity torque about the axis is −m g l cos q
  const double qdd = (-ml * 9.81 * std::cos(q) - 0.2 * v + tau) / I;
  std::vector<double> x = {q, v}, u = {tau}, xn(size_t(m.nx()));
  auto XN = view(xn.data());
  Articulated me = m;
  me.integrator = Articulated::kRk4;  // explicit: v⁺ ≈ v + h q̈ to O(h²)
  me.step<double>(0, view(x.data()), view(u.data()), view(c.theta.data()), XN);
  EXPECT_NEAR((xn[1] - v) / h, qdd, 5e-3 * std::fabs(qdd));
  // euler with implicit damping: (I + h D) v⁺ = I v + h (τ − c)
  me.integrator = Articulated::kEuler;
  me.step<double>(0, view(x.data()), view(u.data()), view(c.theta.data()), XN);
  const double vplus = (I * v + h * (tau - ml * 9.81 * std::cos(q))) / (I + h * 0.2);
  EXPECT_NEAR(xn[1], vplus, 1e-12);
  EXPECT_NEAR(xn[0], q + h * vplus, 1e-12);
}

// Lagrange: c(q, q̇) = Ṁ q̇ − ½ ∂(q̇ᵀ M q̇)/∂q + ∂V/∂q with Ṁ = Σ_j ∂M/∂q_j q̇_j; the
// derivatives of M and V come from dual numbers, the bias from Newton–Euler: two
// independent computations of the same forces
TEST(Articulated, NewtonEulerBiasMatchesLagrange) {
  std::vector<double> p;
  Articulated m = panda(Articulated::kEuler, false, p);
  const std::vector<double> x = moving_state(1.3);
  const int n = 7;
  using D = Dual<double, 7>;
  D qd[8], pd[Articulated::kMaxParam];
  for (int i = 0; i < n; ++i) qd[i] = D::variable(x[i], i);
  for (int k = 0; k < m.np(); ++k) pd[k] = D(p[k]);
  Articulated::Kin<D> KD;
  m.forward_kinematics(qd, pd, KD);
  D M[64];
  m.mass_matrix(KD, pd, M);
  D V = D(0.0);
  for (int b = 0; b < m.n_bodies; ++b) V += pd[m.p_body(b, Articulated::kMass)] * 9.81 * KD.C[b][2];
  std::vector<double> lag(n, 0.0);
  for (int i = 0; i < n; ++i) {
    double mdot_v = 0, dT = 0;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) {
        mdot_v += M[i * 8 + k].v[j] * x[n + j] * x[n + k];
        dT += 0.5 * x[n + j] * M[j * 8 + k].v[i] * x[n + k];
      }
    lag[i] = mdot_v - dT + V.v[i];
  }
  double q[8], v[8], c[8];
  for (int i = 0; i < n; ++i) q[i] = x[i], v[i] = x[n + i];
  Articulated::Kin<double> K;
  m.forward_kinematics(q, p.data(), K);
  m.bias_forces(K, v, p.data(), c);
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(c[i], lag[i], 1e-10 * std::max(1.0, std::fabs(lag[i]))) << "joint " << i;
  // M symmetric positive definite with the armature on the diagonal
  double Md[64];
  m.mass_matrix(K, p.data(), Md);
  for (int i = 0; i < n; ++i) {
    EXPECT_GT(Md[i * 8 + i], 0.1);
    for (int j = 0; j < n; ++j) EXPECT_EQ(Md[i * 8 + j], Md[j * 8 + i]);
  }
}

// M(q) by the model's composite rigid bodies against the textbook sum over bodies,
// M = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_w,b J_ω,b, with each body's Jacobian
// columns written out here (J_v: a_e × (c_b − p_e) for a hinge, a_e for a slide; J_ω: a_e for
// a hinge); on the Panda at two poses and on the hinge + slide chain (a slide below a hinge,
// a rotated body); agreement to 1e-13 of the matrix's largest entry
TEST(Articulated, CompositeRigidBodyMassMatrixMatchesJacobianSum) {
  auto jacobian_sum = [](const Articulated& m, const Articulated::Kin<double>& K, const double* p,
                         double* M) {
    const int n = m.n_dof;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        M[i * 8 + j] = i == j ? p[m.p_joint(i, Articulated::kArmature)] : 0.0;
    for (int b = 0; b < m.n_bodies; ++b) {
      double Jv[8][3] = {}, Jw[8][3] = {};
      for (int e = b; e >= 0; e = m.parent[e]) {
        if (m.joint[e] == Articulated::kFixed) continue;
        const int d = m.dof[e];
        if (m.joint[e] == Articulated::kSlide) {
          for (int k = 0; k < 3; ++k) Jv[d][k] = K.A[e][k];
        } else {
          const double r[3] = {K.C[b][0] - K.P[e][0], K.C[b][1] - K.P[e][1], K.C[b][2] - K.P[e][2]};
          Jv[d][0] = K.A[e][1] * r[2] - K.A[e][2] * r[1];
          Jv[d][1] = K.A[e][2] * r[0] - K.A[e][0] * r[2];
          Jv[d][2] = K.A[e][0] * r[1] - K.A[e][1] * r[0];
          for (int k = 0; k < 3; ++k) Jw[d][k] = K.A[e][k];
        }
      }
      double Iw[9];
      m.world_inertia(K, p, b, Iw);
      const double mass = p[m.p_body(b, Articulated::kMass)];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double v = 0;
          for (int k = 0; k < 3; ++k) {
            v += mass * Jv[i][k] * Jv[j][k];
            for (int l = 0; l < 3; ++l) v += Jw[i][k] * Iw[3 * k + l] * Jw[j][l];
          }
          M[i * 8 + j] += v;
        }
    }
  };
  std::vector<double> pp;
  const Articulated panda_m = panda(Articulated::kImplicitFast, false, pp);
  const ExperimentConfig hs = hinge_slide_config();
  struct Pose {
    const Articulated* m;
    const std::vector<double>* p;
    std::vector<double> q;
  };
  std::vector<double> q_far(7);
  for (int j = 0; j < 7; ++j) q_far[j] = kHome[j] + 0.7 * std::cos(0.5 + 1.3 * j);
  const std::vector<double> x_home = moving_state(0.0);
  const std::vector<double> q_home(x_home.begin(), x_home.begin() + 7);
  const std::vector<Pose> poses = {
      {&panda_m, &pp, q_home},
      {&panda_m, &pp, q_far},
      {&hs.model_state<ArticulatedSetup>().model, &hs.theta, {0.3, 0.1}},
      {&hs.model_state<ArticulatedSetup>().model, &hs.theta, {-1.1, -0.4}}};
  for (const Pose& ps : poses) {
    const Articulated& m = *ps.m;
    Articulated::Kin<double> K;
    m.forward_kinematics(ps.q.data(), ps.p->data(), K);
    double Mc[64], Mj[64];
    m.mass_matrix(K, ps.p->data(), Mc);
    jacobian_sum(m, K, ps.p->data(), Mj);
    double scale = 0;
    for (int i = 0; i < m.n_dof * 8; ++i) scale = std::max(scale, std::fabs(Mj[i]));
    ASSERT_GT(scale, 0.0);
    for (int i = 0; i < m.n_dof; ++i)
      for (int j = 0; j < m.n_dof; ++j)
        EXPECT_NEAR(Mc[i * 8 + j], Mj[i * 8 + j], 1e-13 * scale)
            << "M[" << i << "][" << j << "], n_dof " << m.n_dof;
  }
}

// a free swing (no damping, gains or limits, zero torque) for 2 s: semi-implicit Euler keeps
// the energy error bounded, RK4 is far more accurate; both stated as a fraction of the
// largest kinetic energy reached
TEST(Articulated, FreeSwingEnergyDrift) {
  std::vector<double> p0;
  Articulated m = panda(Articulated::kEuler, false, p0);
  m.torque_limits = false;
  const std::vector<double> p = with_gains_off(m, p0);
  double drift[3] = {0, 0, 0};
  for (int integ : {Articulated::kEuler, Articulated::kRk4}) {
    m.integrator = integ;
    std::vector<double> x = moving_state(0.0), xn(14), u(7, 0.0);
    const double e0 = m.energy<double>(view(x.data()), view(p.data()));
    double dev = 0, kmax = 0;
    for (int k = 0; k < 1000; ++k) {
      auto XN = view(xn.data());
      m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
      x = xn;
      dev = std::max(dev, std::fabs(m.energy<double>(view(x.data()), view(p.data())) - e0));
      kmax = std::max(kmax, m.kinetic_energy<double>(view(x.data()), view(p.data())));
    }
    EXPECT_GT(kmax, 1.0) << "the arm swings";
    drift[integ] = dev / kmax;
  }
  std::cout << "[ energy ] free swing 2 s: euler drift " << drift[Articulated::kEuler]
            << ", rk4 drift " << drift[Articulated::kRk4] << " (of max kinetic energy)\n";
  EXPECT_LT(drift[Articulated::kEuler], 0.05);
  EXPECT_LT(drift[Articulated::kRk4], 1e-5);
  EXPECT_LT(drift[Articulated::kRk4], drift[Articulated::kEuler] / 100);
}

// sat(τ) tends to the clamp: within ln 2/β of ±τ_max far out, identity near 0
TEST(Articulated, SaturationLaw) {
  std::vector<double> p;
  Articulated m = panda(Articulated::kEuler, false, p);
  double s = 0;
  const double beta = p[m.p_global(Articulated::kSharpness)];
  EXPECT_NEAR(m.saturate<double>(p.data(), 0, 1000.0, s), 87.0, 1e-9);
  EXPECT_NEAR(s, 0.0, 1e-12);
  EXPECT_NEAR(m.saturate<double>(p.data(), 0, -1000.0, s), -87.0, 1e-9);
  EXPECT_NEAR(m.saturate<double>(p.data(), 0, 0.0, s), 0.0, 1e-15);
  EXPECT_NEAR(s, 1.0, 1e-12);
  EXPECT_NEAR(m.saturate<double>(p.data(), 0, 87.0, s), 87.0 - std::log(2.0) / beta, 1e-9);
  m.torque_limits = false;
  EXPECT_EQ(m.saturate<double>(p.data(), 0, 1000.0, s), 1000.0);
}

// The servo implicit through the saturation (servo_newton ≥ 1, articulated.h servo_solve):
// its q̇⁺ solves G(q̇⁺) = M (q̇ − q̇⁺) + h (sat(k_p (q* − q) − k_v q̇⁺ + u) − D q̇⁺ − c) = 0,
// evaluated here from the model's pieces (M, c, sat) rather than its solver, at 40 random
// states with joints deep in saturation and at the knee (random velocities up to 1 rad/s,
// targets up to 0.3 rad away). Residual relative to h·max τ_max: MuJoCo's linearization
// (n = 0) leaves up to 2 (a joint's clamp taken on the wrong side); 6 damped Newton
// iterations reach ≤ 1e-11 on every state (measured: 1e-15 everywhere; at n = 4, 3 of the
// 40 states are still above 1e-11). Without the line search the iterates of one state jump
// between the clamps (residual 2 at every n, measured before it was added). With the torque limits
// off the equation is linear and every n gives implicitfast's q̇⁺ (to 1e-12 relative).
TEST(Articulated, ImplicitServoSolvesTheImplicitStep) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  constexpr int kMaxIt = 6;
  double worst[kMaxIt + 1] = {}, lin_change = 0;
  int converged_at[kMaxIt + 1] = {};  // states first below 1e-11 at n
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> p;
    Articulated m = panda(Articulated::kImplicitFast, false, p);
    const int n = m.n_dof;
    std::vector<double> x(2 * n), u(n);
    for (int j = 0; j < n; ++j) {
      x[j] = kHome[j] + 0.3 * U(rng);
      x[n + j] = U(rng);
      u[j] = 5.0 * U(rng);
      p[m.p_joint(j, Articulated::kTarget)] =
          x[j] + (trial % 2 ? 0.3 : 0.03) * U(rng);  // odd: deep saturation
    }
    double taumax = 0;
    for (int j = 0; j < n; ++j)
      taumax = std::max(taumax, p[m.p_joint(j, Articulated::kForceLimit)]);
    const double h = m.dt;
    bool done = false;
    for (int it = 0; it <= kMaxIt; ++it) {
      m.servo_newton = it;
      std::vector<double> xn(2 * n);
      auto X = view(x.data()), Uv = view(u.data()), P = view(p.data()), XN = view(xn.data());
      m.step<double>(0, X, Uv, P, XN);
      // G(q̇⁺) from the model's pieces
      Articulated::Kin<double> K;
      m.forward_kinematics(x.data(), p.data(), K);
      double M[Articulated::kMaxDof * Articulated::kMaxDof], c[Articulated::kMaxDof];
      m.mass_matrix(K, p.data(), M);
      m.bias_forces(K, x.data() + n, p.data(), c);
      double res = 0;
      for (int i = 0; i < n; ++i) {
        double g = 0, s = 0;
        for (int j = 0; j < n; ++j) g += M[i * Articulated::kMaxDof + j] * (x[n + j] - xn[n + j]);
        const double raw =
            p[m.p_joint(i, Articulated::kKp)] * (p[m.p_joint(i, Articulated::kTarget)] - x[i]) -
            p[m.p_joint(i, Articulated::kKv)] * xn[n + i] + u[i];
        g += h * (m.saturate<double>(p.data(), i, raw, s) -
                  p[m.p_joint(i, Articulated::kDamping)] * xn[n + i] - c[i]);
        res = std::max(res, std::fabs(g) / (h * taumax));
      }
      worst[it] = std::max(worst[it], res);
      if (it > 0 && !done && res <= 1e-11) converged_at[it]++, done = true;
    }
    // torque limits off: G is linear, so the predictor is the solution and every n gives the same
    // q̇⁺
    m.torque_limits = false;
    std::vector<double> ref(2 * n), xn(2 * n);
    auto X = view(x.data()), Uv = view(u.data()), P = view(p.data());
    m.servo_newton = 0;
    auto R = view(ref.data());
    m.step<double>(0, X, Uv, P, R);
    for (int it : {1, 3}) {
      m.servo_newton = it;
      auto XN = view(xn.data());
      m.step<double>(0, X, Uv, P, XN);
      for (int i = 0; i < 2 * n; ++i)
        lin_change = std::max(lin_change, std::fabs(xn[i] - ref[i]) / (std::fabs(ref[i]) + 1e-3));
    }
  }
  std::cout << "[ implicit servo ] max residual |G(q̇⁺)|/(h τ_max) over 40 states, n = 0.." << kMaxIt
            << ":";
  for (double w : worst) std::cout << " " << w;
  std::cout << "; states first ≤ 1e-11 at n = 1.." << kMaxIt << ":";
  for (int it = 1; it <= kMaxIt; ++it) std::cout << " " << converged_at[it];
  std::cout << "; limits off, change " << lin_change << "\n";
  EXPECT_GT(worst[0], 1e-3);
  EXPECT_LE(worst[kMaxIt], 1e-11);
  EXPECT_LE(lin_change, 1e-12);
}

// the seed's bar: over 250 steps at 2 ms (500 ms), ∂L/∂u_ff,k of the joint-angle error for
// every k and joint, and the gains, damping and link inertias, against finite differences;
// relative error ≤ 1e-6 of max(|g|, |fd|) + 5e-12 absolute (the seed's bar is 1e-3)
TEST(Articulated, Panda500msGradientMatchesFiniteDifferences) {
  ExperimentConfig c = panda_config();
  RolloutCase<Articulated> rc;
  rc.model = c.model_state<ArticulatedSetup>().model;
  rc.p = c.theta;
  for (int j = 0; j < 7; ++j)
    rc.p[rc.model.p_joint(j, Articulated::kTarget)] = kHome[j] + 0.02 * std::sin(3.0 + j);
  rc.loss = c.loss;
  rc.steps = 250;
  rc.checkpoint_every = 16;
  rc.x0 = c.x0;
  rc.u.assign(size_t(rc.steps) * 7, 0.0);
  for (size_t i = 0; i < rc.u.size(); ++i) rc.u[i] = 1.5 * std::sin(0.013 * double(i));
  const std::vector<double> g = rollout_gradient(rc, false, rc.checkpoint_every);  // [x0, u, θ]
  const int nx = 14, nu = 7;
  const Articulated& m = rc.model;
  // the perturbed inputs: every u_ff,k (ε = 1e-3 N·m), and the gains, damping and inertias
  // (ε = 1e-3 max(1e-2, |θ_q|)), each by ±ε and ±ε/2, combined by
  // Richardson extrapolation (4 D(ε/2) − D(ε))/3, whose truncation error is O(ε⁴): the loss
  // carries ~1e-18 of rounding, so a plain centered difference small enough to be accurate
  // would drown the smallest parameter gradients (~1e-10) in it. One forward batch.
  std::vector<int> params;
  for (int j = 0; j < 7; ++j)
    for (int k : {Articulated::kKp, Articulated::kKv, Articulated::kDamping})
      params.push_back(m.p_joint(j, k));
  for (int b = 1; b < m.n_bodies; ++b)
    for (int k = Articulated::kIxx; k <= Articulated::kIyz; ++k) params.push_back(m.p_body(b, k));
  const int n_u = rc.steps * nu, n = n_u + int(params.size());
  Batch<double> batch;
  batch.resize(4 * n, nx, nu, m.np(), rc.steps);
  std::vector<double> eps(n);
  const double step_of[4] = {1.0, -1.0, 0.5, -0.5};
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < 4; ++s) {
      const int r = 4 * i + s;
      std::copy(rc.x0.begin(), rc.x0.end(), batch.x0_of(r));
      std::copy(rc.u.begin(), rc.u.end(), batch.u_of(r));
      std::copy(rc.p.begin(), rc.p.end(), batch.theta_of(r));
      double* slot = i < n_u ? batch.u_of(r) + i : batch.theta_of(r) + params[i - n_u];
      eps[i] = i < n_u ? 1e-3 : 1e-3 * std::max(1e-2, std::fabs(*slot));
      *slot += step_of[s] * eps[i];
    }
  RolloutShape sh;
  sh.steps = rc.steps;
  sh.checkpoint_every = rc.checkpoint_every;
  BatchResult<double> out;
  cpu_run_batch<Articulated, double>(m, rc.loss, sh, batch, false, out);
  double worst = 0, gmax = 0;
  for (int i = 0; i < n; ++i) {
    const double* L = out.loss.data() + 4 * i;
    const double d1 = (L[0] - L[1]) / (2 * eps[i]), d2 = (L[2] - L[3]) / eps[i];
    const double fd = (4 * d2 - d1) / 3;
    const double gi = i < n_u ? g[nx + i] : g[nx + n_u + params[i - n_u]];
    const double scale = std::max(std::fabs(gi), std::fabs(fd));
    if (i < n_u) gmax = std::max(gmax, std::fabs(gi));
    // the reported figure: relative error where the gradient stands above FD's rounding floor
    if (scale > 1e-9) worst = std::max(worst, std::fabs(gi - fd) / scale);
    // absolute floor 5e-12: the FD's own rounding (≈ 1e-18 / ε with ε ≥ 1e-5, times ~3 for
    // the extrapolation), reached only by gradients below ~1e-10
    EXPECT_NEAR(gi, fd, 1e-6 * scale + 5e-12)
        << (i < n_u ? "u_ff step " + std::to_string(i / nu) + " joint " + std::to_string(i % nu)
                    : "parameter " + std::to_string(params[i - n_u]));
  }
  std::cout << "[ panda ] dL/d(u_ff, k_p, k_v, D, inertia) over 250 steps: max relative error "
            << worst << " where |g| > 1e-9; max |dL/du_ff| " << gmax << "\n";
  // with k_p = 2000–4500 N·m/rad a feed-forward torque moves q_T by ~u/k_p, so ∂L/∂u_ff is
  // small (error × 1/k_p) but must be there
  EXPECT_GT(gmax, 1e-8) << "the check must see a gradient";
}

// the hand adjoint (euler, implicitfast) against the dual-number adjoint column by column:
// for every output x⁺_o the cotangent e_o gives row o of the step Jacobian, (∂x⁺_o/∂x,
// ∂x⁺_o/∂u, ∂x⁺_o/∂θ), once per path; at random states of the Panda (saturation off,
// mixed/deep, and at the knee |τ_raw| ≈ τ_max; fingertip clear of the plane and pressed
// 5 mm in) and of the hinge + slide chain with contact, all parameters and a masked subset.
// Bar, per entry: |hand − dual| ≤ 1e-10 |dual| + 1e-14 ‖row‖∞ (float64); the floor is
// rounding of entries that are zero or 1e-100 in exact arithmetic but carry the cancellation
// of s' = 1 − σ_a − σ_b at a saturated joint (~1e-16 of the row's k_p λ).
struct ColumnCheck {
  double worst = 0;  // max over entries of |hand − dual| / (|dual| + 1e-4 ‖row‖∞)
  double ratio = 0;  // max over entries of |hand − dual| / bar
  int rows = 0;
};
void compare_columns(const Articulated& m, const std::vector<double>& x,
                     const std::vector<double>& u, const std::vector<double>& p,
                     const std::string& name, ColumnCheck& out) {
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  for (int o = 0; o < nx; ++o) {
    std::vector<double> e(nx, 0.0);
    e[o] = 1.0;
    std::vector<double> hx(nx, 0), hu(nu, 0), hp(np, 0), dx(nx, 0), du(nu, 0), dp(np, 0);
    auto X = view(const_cast<double*>(x.data())), U = view(const_cast<double*>(u.data())),
         P = view(const_cast<double*>(p.data())), E = view(e.data());
    auto vhx = view(hx.data()), vhu = view(hu.data()), vhp = view(hp.data());
    auto vdx = view(dx.data()), vdu = view(du.data()), vdp = view(dp.data());
    m.adj_step<double>(0, X, U, P, vhx, vhu, vhp, E);
    m.adj_by_duals<double>(0, X, U, P, vdx, vdu, vdp, E);
    std::vector<double> hand = hx, dual = dx;
    hand.insert(hand.end(), hu.begin(), hu.end());
    hand.insert(hand.end(), hp.begin(), hp.end());
    dual.insert(dual.end(), du.begin(), du.end());
    dual.insert(dual.end(), dp.begin(), dp.end());
    const double row = inf_norm(dual);
    ASSERT_GT(row, 0.0) << name << " output " << o;
    for (size_t i = 0; i < hand.size(); ++i) {
      ASSERT_TRUE(std::isfinite(hand[i])) << name << " output " << o << " input " << i;
      const double err = std::fabs(hand[i] - dual[i]),
                   bar = 1e-10 * std::fabs(dual[i]) + 1e-14 * row;
      const std::string what = i < size_t(nx)        ? "x" + std::to_string(i)
                               : i < size_t(nx + nu) ? "u" + std::to_string(i - nx)
                                                     : "θ" + std::to_string(i - nx - nu);
      EXPECT_LE(err, bar) << name << ": ∂x⁺" << o << "/∂" << what << " hand " << hand[i] << " dual "
                          << dual[i];
      out.ratio = std::max(out.ratio, err / bar);
      out.worst = std::max(out.worst, err / (std::fabs(dual[i]) + 1e-4 * row));
    }
    ++out.rows;
  }
}

TEST(Articulated, HandAdjointMatchesDualColumnByColumn) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  ColumnCheck check;
  int saturated = 0, knee = 0, free_joints = 0, touching = 0, clear = 0;
  // variant 2: implicitfast with the servo implicit through the saturation (4 Newton iterations)
  const char* integ_name[3] = {"euler", "implicitfast", "implicit servo"};
  for (int variant : {0, 1, 2})
    for (int sat = 0; sat < 3; ++sat)  // 0: no joint saturated, 1: mixed and deep, 2: at the knee
      for (int touch = 0; touch < 3;
           ++touch) {  // 0: no contact model, 1: clear of the plane, 2: pressed in
        const int integ = variant == 0 ? Articulated::kEuler : Articulated::kImplicitFast;
        std::vector<double> p;
        Articulated m = panda(integ, touch > 0, p);
        m.servo_newton = variant == 2 ? 4 : 0;
        const int n = m.n_dof;
        std::vector<double> x(2 * n), u(n);
        for (int j = 0; j < n; ++j) {
          x[j] = kHome[j] + 0.3 * U(rng);
          x[n + j] = (sat == 0 ? 0.01 : 1.0) * U(rng);
          u[j] = (sat == 0 ? 1.0 : 5.0) * U(rng);
          p[m.p_joint(j, Articulated::kTarget)] = x[j] + (sat == 0 ? 1e-3 : 0.03) * U(rng);
        }
        p[m.p_global(Articulated::kContactStiffness)] = 1e4;
        p[m.p_global(Articulated::kContactSmoothing)] = 1e-3;
        // the plane at z_tip + 5 mm (pressed in) or z_tip − 5 cm (clear); penetration = height −
        // z_tip
        p[m.p_global(Articulated::kPlaneHeight)] +=
            -m.penetration<double>(view(x.data()), view(p.data())) + (touch == 2 ? 5e-3 : -0.05);
        for (int j = 0; j < n; ++j) {
          const double kp = p[m.p_joint(j, Articulated::kKp)],
                       kv = p[m.p_joint(j, Articulated::kKv)];
          const double lim = p[m.p_joint(j, Articulated::kForceLimit)];
          const double pd = kp * (p[m.p_joint(j, Articulated::kTarget)] - x[j]) - kv * x[n + j];
          if (sat == 2)
            u[j] = (j % 2 ? lim : -lim) - pd + 0.2 * U(rng);  // τ_raw = ±τ_max ± 0.2 N·m
          double slope = 0;
          m.saturate<double>(p.data(), j, pd + u[j], slope);
          saturated += slope<1e-3, free_joints += slope> 0.999, knee += slope > 0.1 && slope < 0.9;
        }
        if (touch > 0)
          (m.in_contact<double>(view(x.data()), view(p.data()), 0) ? touching : clear)++;
        const std::string name = std::string("panda ") + integ_name[variant] + " sat " +
                                 std::to_string(sat) + " touch " + std::to_string(touch);
        compare_columns(m, x, u, p, name, check);
        // a masked subset: the listed parameters only, each as the dual path gives it
        Articulated mm = m;
        mm.n_grad_params = 0;
        for (int k : {Articulated::kKp, Articulated::kForceLimit})
          mm.grad_params[mm.n_grad_params++] = short(m.p_joint(int(rng() % n), k));
        mm.grad_params[mm.n_grad_params++] =
            short(m.p_body(1 + int(rng() % (m.n_bodies - 1)), Articulated::kIxz));
        mm.grad_params[mm.n_grad_params++] = short(m.p_global(Articulated::kSharpness));
        mm.grad_params[mm.n_grad_params++] = short(m.p_global(Articulated::kContactSmoothing));
        compare_columns(mm, x, u, p, name + " masked", check);
      }
  // the hinge + slide chain: a slide joint, a tilted body frame, contact on the slider
  ExperimentConfig hs = hinge_slide_config();
  for (int variant : {0, 1, 2})
    for (int trial = 0; trial < 4; ++trial) {
      Articulated m = hs.model_state<ArticulatedSetup>().model;
      m.integrator = variant == 0 ? Articulated::kEuler : Articulated::kImplicitFast;
      m.servo_newton = variant == 2 ? 4 : 0;
      m.contact = true;
      std::vector<double> p = hs.theta, x = {0.3 + 0.3 * U(rng), 0.1 * U(rng), U(rng), U(rng)};
      std::vector<double> u = {trial % 2 ? 40.0 : 1.0 * U(rng),
                               2.0 * U(rng)};  // odd trials: the shoulder saturates
      p[m.p_global(Articulated::kPlaneHeight)] +=
          -m.penetration<double>(view(x.data()), view(p.data())) + (trial < 2 ? 2e-3 : -0.05);
      ASSERT_EQ(m.in_contact<double>(view(x.data()), view(p.data()), 0), trial < 2);
      compare_columns(
          m, x, u, p,
          std::string("hinge + slide ") + integ_name[variant] + " trial " + std::to_string(trial),
          check);
    }
  std::cout << "[ hand adjoint ] " << check.rows
            << " Jacobian rows, hand vs dual: max |Δ|/(|dual| + 1e-4 ‖row‖) " << check.worst
            << ", max |Δ|/bar " << check.ratio << "; Panda joints saturated " << saturated
            << ", at the knee " << knee << ", free " << free_joints << "; cases in contact "
            << touching << ", clear " << clear << "\n";
  // the cases cover what they claim
  EXPECT_GT(saturated, 10);
  EXPECT_GT(knee, 10);
  EXPECT_GT(free_joints, 10);
  EXPECT_EQ(touching, 9);
  EXPECT_EQ(clear, 9);
}

// the adjoint differentiates only the listed parameters, and those exactly as the full one
// the backward sweep with the step tape (the CPU backend's path: each recomputed step keeps
// its intermediates for its adjoint) and without it (adj_step recomputes the step) must give
// the same bits: both run fill_tape's arithmetic on the same states
TEST(Articulated, StepTapeGivesTheUntapedGradientBitForBit) {
  // 3: implicitfast with the implicit servo (2 Newton iterations)
  for (int variant :
       {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4), 3}) {
    for (bool contact : {false, true}) {
      SCOPED_TRACE("variant " + std::to_string(variant) + (contact ? ", contact" : ""));
      std::vector<double> theta;
      Articulated m = panda(variant == 3 ? Articulated::kImplicitFast : variant, contact, theta);
      m.servo_newton = variant == 3 ? 2 : 0;
      const int T = 60, K = 7, nu = m.nu();
      ExperimentConfig c = panda_config();
      RolloutShape sh;
      sh.steps = T;
      sh.checkpoint_every = K;
      std::vector<double> x0 = moving_state(0.8), u(size_t(T) * nu);
      if (contact) {  // the plane 5 mm above the fingertip: in contact from the start
        theta[m.p_global(Articulated::kPlaneHeight)] -=
            m.penetration<double>(view(x0.data()), view(theta.data()));
        theta[m.p_global(Articulated::kPlaneHeight)] += 0.005;
      }
      for (size_t i = 0; i < u.size(); ++i) u[i] = 4.0 * std::sin(0.07 * double(i));
      const SweepOut a = forward_backward_sweep(m, c.loss, sh, x0, u, theta, false),
                     b = forward_backward_sweep(m, c.loss, sh, x0, u, theta, true);
      EXPECT_EQ(a.loss, b.loss);
      EXPECT_EQ(a.gx0, b.gx0);
      EXPECT_EQ(a.gu, b.gu);
      EXPECT_EQ(a.gp, b.gp);
      double gmax = 0;
      for (double g : a.gu) gmax = std::max(gmax, std::fabs(g));
      EXPECT_GT(gmax, 0.0) << "the loss must depend on the controls";
      if (contact) {
        EXPECT_GT(b.diag.contact_steps, 0) << "the hand must reach the plane";
      }
    }
  }
}

// The CUDA backend runs euler and implicitfast models as ArticulatedImplicit, whose kernels
// leave rk4 and its dual adjoint out. Its step and adjoint are Articulated's arithmetic, so
// without the centre-of-mass term its sweep gives the same bits, taped or not; with the term,
// its hand ∂c/∂q differs from the dual one by rounding only.
TEST(Articulated, ImplicitVariantGivesArticulatedsGradient) {
  // 3: implicitfast with the implicit servo (2 Newton iterations)
  for (int variant : {int(Articulated::kEuler), int(Articulated::kImplicitFast), 3}) {
    for (bool contact : {false, true}) {
      for (bool com : {false, true}) {
        SCOPED_TRACE("variant " + std::to_string(variant) + (contact ? ", contact" : "") +
                     (com ? ", com" : ""));
        std::vector<double> theta;
        Articulated m = panda(variant == 3 ? Articulated::kImplicitFast : variant, contact, theta);
        m.servo_newton = variant == 3 ? 2 : 0;
        const ArticulatedImplicit mi(m);
        ExperimentConfig c = panda_config();
        c.loss.com = com;
        c.loss.com_axis = 2;
        RolloutShape sh;
        sh.steps = 30;
        sh.checkpoint_every = 7;
        std::vector<double> x0 = moving_state(0.8), u(size_t(sh.steps) * m.nu());
        if (contact) {  // the plane 5 mm above the fingertip: in contact from the start
          theta[m.p_global(Articulated::kPlaneHeight)] -=
              m.penetration<double>(view(x0.data()), view(theta.data()));
          theta[m.p_global(Articulated::kPlaneHeight)] += 0.005;
        }
        for (size_t i = 0; i < u.size(); ++i) u[i] = 4.0 * std::sin(0.07 * double(i));
        const SweepOut a = forward_backward_sweep(m, c.loss, sh, x0, u, theta, false);
        for (bool taped : {false, true}) {
          const SweepOut b = forward_backward_sweep(mi, c.loss, sh, x0, u, theta, taped);
          EXPECT_EQ(a.loss, b.loss);
          EXPECT_EQ(a.ckpt, b.ckpt);
          if (!com) {
            EXPECT_EQ(a.gx0, b.gx0);
            EXPECT_EQ(a.gu, b.gu);
            EXPECT_EQ(a.gp, b.gp);
            continue;
          }
          auto close = [](const std::vector<double>& x, const std::vector<double>& ref) {
            double d = 0, s = 0;
            for (size_t i = 0; i < x.size(); ++i)
              d = std::max(d, std::fabs(x[i] - ref[i])), s = std::max(s, std::fabs(ref[i]));
            return d <= 1e-12 * s;
          };
          EXPECT_TRUE(close(b.gx0, a.gx0));
          EXPECT_TRUE(close(b.gu, a.gu));
          EXPECT_TRUE(close(b.gp, a.gp));
        }
      }
    }
  }
}

// ArticulatedImplicit's hand centre-of-mass adjoint against Articulated's dual one and
// against centered finite differences, on the Panda (hinges) and on the hinge + slide chain,
// for each axis
TEST(Articulated, ImplicitVariantCenterOfMassAdjointMatchesDual) {
  std::vector<double> panda_theta;
  const Articulated arm = panda(Articulated::kEuler, false, panda_theta);
  const ExperimentConfig hs = hinge_slide_config();
  const std::vector<double> hs_x = {0.3, 0.1, 0.5, -0.2};
  struct Case {
    const Articulated& m;
    std::vector<double> x, p;
  };
  for (const Case& k : {Case{arm, moving_state(0.2), panda_theta},
                        Case{hs.model_state<ArticulatedSetup>().model, hs_x, hs.theta}}) {
    const ArticulatedImplicit mi(k.m);
    double gmax = 0;  // over the axes: the chain moves in the xz plane only
    for (int ax = 0; ax < 3; ++ax) {
      std::vector<double> gx(k.x.size(), 0.0), gp(k.p.size(), 0.0), hx = gx, hp = gp;
      auto X = view(const_cast<double*>(k.x.data())), P = view(const_cast<double*>(k.p.data()));
      auto GX = view(gx.data()), GP = view(gp.data()), HX = view(hx.data()), HP = view(hp.data());
      k.m.adj_center_of_mass<double>(X, P, ax, GX, GP, 0.7);
      mi.adj_center_of_mass<double>(X, P, ax, HX, HP, 0.7);
      for (size_t i = 0; i < gx.size(); ++i)
        EXPECT_NEAR(hx[i], gx[i], 1e-14) << "axis " << ax << " state " << i;
      for (size_t q = 0; q < gp.size(); ++q)
        EXPECT_EQ(hp[q], gp[q]) << "axis " << ax << " parameter " << q;
      for (double g : gx) gmax = std::max(gmax, std::fabs(g));

      // the hand adjoint against centered finite differences of center_of_mass (float64,
      // h = 1e-6: truncation ~h² · 1 m⁻¹ and rounding ~1e-16/h, both ≤ 1e-9 absolute per
      // entry against gradients of order 0.1–1): every joint position, every body's mass
      // and centre-of-mass offset
      const double h = 1e-6, tol = 1e-8;
      auto com_at = [&](std::vector<double> x, std::vector<double> p) {
        return mi.center_of_mass<double>(view(x.data()), view(p.data()), ax);
      };
      for (int i = 0; i < k.m.n_dof; ++i) {
        std::vector<double> xp = k.x, xm = k.x;
        xp[i] += h, xm[i] -= h;
        const double fd = 0.7 * (com_at(xp, k.p) - com_at(xm, k.p)) / (2 * h);
        EXPECT_NEAR(hx[i], fd, tol) << "axis " << ax << " joint " << i;
      }
      for (int b = 0; b < k.m.n_bodies; ++b)
        for (int slot :
             {Articulated::kMass, Articulated::kComX, Articulated::kComY, Articulated::kComZ}) {
          const int q = k.m.p_body(b, slot);
          std::vector<double> pp = k.p, pm = k.p;
          pp[q] += h, pm[q] -= h;
          const double fd = 0.7 * (com_at(k.x, pp) - com_at(k.x, pm)) / (2 * h);
          EXPECT_NEAR(hp[q], fd, tol) << "axis " << ax << " body " << b << " slot " << slot;
        }
    }
    EXPECT_GT(gmax, 0.01);
  }
}

// joint limits: with no gravity, gains or saturation and a damped arm, constant torques u_j
// drive every joint past a limit and the arm comes to rest where each joint's limit torque
// balances its applied torque exactly (at rest M q̈ = 0 and c = 0, so joint by joint
// u_j + τ_l,j(q_j) = 0): k w softplus((q_j − hi_j)/w) = u_j above, the mirror below
TEST(Articulated, JointLimitHoldsAgainstATorque) {
  std::vector<double> p;
  Articulated m = panda(Articulated::kImplicitFast, false, p);
  m.joint_limits = true;
  m.limit_stiffness = 2e3;   // [N·m/rad]
  m.limit_smoothing = 1e-3;  // [rad]
  m.torque_limits = false;
  p[m.p_global(Articulated::kGravity)] = 0.0;
  std::vector<double> x = moving_state(0.0), u(7);
  for (int j = 0; j < 7; ++j) {
    p[m.p_joint(j, Articulated::kKp)] = 0.0;
    p[m.p_joint(j, Articulated::kKv)] = 0.0;
    p[m.p_joint(j, Articulated::kDamping)] = 20.0;  // [N·m·s/rad]
    u[j] = (j % 2 ? -1.0 : 1.0) * (2.0 + j);        // [N·m]
    m.limit_lower[j] = x[j] - 0.05;
    m.limit_upper[j] = x[j] + 0.05;
  }
  std::vector<double> xn(14);
  // 30 s: the slowest mode of the damped arm decays by ~1e-9 only after ~20 s
  for (int k = 0; k < 15000; ++k) {
    m.step<double>(k, x.data(), u.data(), p.data(), xn);
    x = xn;
  }
  const double k_l = m.limit_stiffness, w = m.limit_smoothing;
  for (int j = 0; j < 7; ++j) {
    // softplus(z) = a  <=>  z = log(e^a − 1)
    const double a = std::fabs(u[j]) / (k_l * w), pen = w * std::log(std::expm1(a));
    const double expected = u[j] > 0 ? m.limit_upper[j] + pen : m.limit_lower[j] - pen;
    EXPECT_NEAR(x[j], expected, 1e-9) << "joint " << j + 1;
    EXPECT_NEAR(x[7 + j], 0.0, 1e-9) << "joint " << j + 1 << " at rest";
    EXPECT_GT(pen, 0.0);
  }
  // off, the same torques carry the joints far past the range
  m.joint_limits = false;
  x = moving_state(0.0);
  for (int k = 0; k < 1500; ++k) {
    m.step<double>(k, x.data(), u.data(), p.data(), xn);
    x = xn;
  }
  EXPECT_GT(std::fabs(x[0] - moving_state(0.0)[0]), 0.1);
}

TEST(Articulated, ParameterMaskKeepsListedGradients) {
  std::vector<double> p;
  Articulated full = panda(Articulated::kImplicitFast, false, p);
  Articulated masked = full;
  masked.n_grad_params = 2;
  // (joint 4's PD torque is saturated deep in this state, so its k_p gradient is ~1e-98:
  // the force limit is the live parameter there)
  masked.grad_params[0] = short(full.p_joint(3, Articulated::kForceLimit));
  masked.grad_params[1] = short(full.p_body(5, Articulated::kMass));
  const std::vector<double> x = moving_state(0.3), u = {1, 2, 3, 4, 5, 6, 7};
  std::vector<double> adj(14);
  for (int i = 0; i < 14; ++i) adj[i] = std::cos(0.7 * i);
  std::vector<double> ax1(14, 0), au1(7, 0), ap1(full.np(), 0), ax2 = ax1, au2 = au1, ap2 = ap1;
  auto X = view(const_cast<double*>(x.data())), U = view(const_cast<double*>(u.data())),
       P = view(p.data()), A = view(adj.data());
  auto vx1 = view(ax1.data()), vu1 = view(au1.data()), vp1 = view(ap1.data());
  auto vx2 = view(ax2.data()), vu2 = view(au2.data()), vp2 = view(ap2.data());
  full.adj_step<double>(0, X, U, P, vx1, vu1, vp1, A);
  masked.adj_step<double>(0, X, U, P, vx2, vu2, vp2, A);
  for (int i = 0; i < 14; ++i)
    EXPECT_NEAR(ax1[i], ax2[i], 1e-14 * std::max(1.0, std::fabs(ax1[i])));
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(au1[i], au2[i], 1e-14 * std::max(1.0, std::fabs(au1[i])));
  for (int q = 0; q < full.np(); ++q) {
    const bool listed = q == masked.grad_params[0] || q == masked.grad_params[1];
    EXPECT_EQ(ap2[q], listed ? ap1[q] : 0.0) << "parameter " << q;
  }
  EXPECT_NE(ap1[masked.grad_params[0]], 0.0);
}

// the centre of mass's adjoint (q by duals, masses and centres of mass analytic) against
// centered FD of center_of_mass, for each axis
TEST(Articulated, CenterOfMassGradientMatchesFiniteDifferences) {
  std::vector<double> p;
  Articulated m = panda(Articulated::kEuler, false, p);
  std::vector<double> x = moving_state(0.2);
  for (int ax = 0; ax < 3; ++ax) {
    std::vector<double> gx(14, 0.0), gp(m.np(), 0.0);
    auto GX = view(gx.data()), GP = view(gp.data());
    m.adj_center_of_mass<double>(view(x.data()), view(p.data()), ax, GX, GP, 1.0);
    auto com = [&](const std::vector<double>& xx, const std::vector<double>& pp) {
      return m.center_of_mass<double>(view(const_cast<double*>(xx.data())),
                                      view(const_cast<double*>(pp.data())), ax);
    };
    for (int i = 0; i < 14; ++i) {
      std::vector<double> xp = x, xm = x;
      xp[i] += 1e-6, xm[i] -= 1e-6;
      EXPECT_NEAR(gx[i], (com(xp, p) - com(xm, p)) / 2e-6, 1e-8) << "axis " << ax << " state " << i;
    }
    for (int b = 0; b < m.n_bodies; ++b)
      for (int k = Articulated::kMass; k <= Articulated::kComZ; ++k) {
        const int q = m.p_body(b, k);
        std::vector<double> pp = p, pm = p;
        pp[q] += 1e-6, pm[q] -= 1e-6;
        EXPECT_NEAR(gp[q], (com(x, pp) - com(x, pm)) / 2e-6, 1e-8)
            << "axis " << ax << " parameter " << q;
      }
  }
}

// A joint pos is a change of the body's frame origin only: the same arm with every body's
// frame moved to its joint anchor (offset_b → offset_b + R_fixed,b j_b − j_parent, com_b,
// tip and sites → x − j_b, no joint pos) must move identically. Checked on the state after
// 100 steps of each integrator (1e-12: the two differ only in rounding) and on the sites.
TEST(Articulated, JointPosIsAFrameShift) {
  const ExperimentConfig oj = offset_joints_config();
  const Articulated m = oj.model_state<ArticulatedSetup>().model;
  Articulated s = m;
  std::vector<double> ps = oj.theta;
  for (int b = 0; b < m.n_bodies; ++b) {
    const int pa = m.parent[b];
    for (int i = 0; i < 3; ++i) {
      double rj = 0;
      for (int k = 0; k < 3; ++k) rj += m.rot[b][3 * i + k] * m.joint_pos[b][k];
      ps[m.p_body(b, Articulated::kPosX + i)] += rj - (pa < 0 ? 0.0 : m.joint_pos[pa][i]);
      ps[m.p_body(b, Articulated::kComX + i)] -= m.joint_pos[b][i];
    }
  }
  for (int i = 0; i < 3; ++i) s.tip_offset[i] -= m.joint_pos[m.tip_body][i];
  for (int k = 0; k < m.n_sites; ++k)
    for (int i = 0; i < 3; ++i) s.site_pos[k][i] -= m.joint_pos[m.site_body[k]][i];
  for (int b = 0; b < m.n_bodies; ++b)
    for (int i = 0; i < 3; ++i) s.joint_pos[b][i] = 0;
  double any = 0;
  for (int b = 0; b < m.n_bodies; ++b)
    for (int i = 0; i < 3; ++i) any += std::fabs(m.joint_pos[b][i]);
  ASSERT_GT(any, 0.1);
  for (int integ = 0; integ < 3; ++integ) {
    Articulated a = m, b = s;
    a.integrator = b.integrator = integ;
    a.contact = b.contact = true;
    std::vector<double> xa = {0.3, -0.2, 0.4, 0.02, 0.5, -0.2, 0.3, 0.1}, xb = xa, na(8), nb(8);
    const std::vector<double> u = {0.5, -1.0, 0.2, 2.0};
    for (int k = 0; k < 100; ++k) {
      auto NA = view(na.data()), NB = view(nb.data());
      a.step<double>(k, view(xa.data()), view(u.data()), view(oj.theta.data()), NA);
      b.step<double>(k, view(xb.data()), view(u.data()), view(ps.data()), NB);
      xa = na, xb = nb;
    }
    for (int i = 0; i < 8; ++i)
      EXPECT_NEAR(xa[i], xb[i], 1e-12) << "integrator " << integ << " state " << i;
    for (int k = 0; k < m.n_sites; ++k) {
      double pa[3], pb[3];
      a.site_position<double>(view(xa.data()), view(oj.theta.data()), k, pa);
      b.site_position<double>(view(xb.data()), view(ps.data()), k, pb);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(pa[i], pb[i], 1e-12) << "site " << k;
    }
  }
}

// sites: the hand adjoints of site_position and site_rotation against the dual path (the
// same functions on Dual numbers, 1e-13 absolute: rounding only) and centered finite
// differences (h = 1e-6: truncation ~h² and rounding ~1e-16/h, ≤ 1e-9 absolute for entries
// of order 1) in the state and in θ (only the bodies' positions move a site), for every site
// of the offset-joint arm and of a Panda with a site written in JSON
TEST(Articulated, SiteAdjointsMatchDualAndFiniteDifferences) {
  nlohmann::json pj =
      nlohmann::json::parse(std::ifstream(fs::path(STEER_SOURCE_DIR) / "configs" / "panda.json"));
  pj["model"]["sites"] = nlohmann::json::parse(
      R"([{"name": "gripper", "body": "link7", "pos": [0.01, -0.02, 0.1], "quat": [0.9, 0.1, 0.3, -0.2]}])");
  const ExperimentConfig pc =
      parse_config(expand_includes(pj, (fs::path(STEER_SOURCE_DIR) / "configs").string()));
  const ExperimentConfig oj = offset_joints_config();
  ASSERT_EQ(pc.model_state<ArticulatedSetup>().site_index("gripper"), 0);
  ASSERT_EQ(oj.model_state<ArticulatedSetup>().site_index("elbow"), 1);
  ASSERT_EQ(oj.model_state<ArticulatedSetup>().site_index("nothing"), -1);
  struct Case {
    const ExperimentConfig& c;
    std::vector<double> x;
  };
  for (const Case& k :
       {Case{pc, moving_state(0.2)}, Case{oj, {0.3, -0.2, 0.4, 0.02, 0.5, -0.2, 0.3, 0.1}}}) {
    const Articulated& m = k.c.model_state<ArticulatedSetup>().model;
    const std::vector<double>& p = k.c.theta;
    const int n = m.n_dof;
    using D = Dual<double, Articulated::kMaxDof>;
    std::vector<D> xd(size_t(2 * n)), pd(p.size());
    for (int i = 0; i < 2 * n; ++i) xd[i] = i < n ? D::variable(k.x[i], i) : D(k.x[i]);
    for (size_t q = 0; q < p.size(); ++q) pd[q] = D(p[q]);
    const double h = 1e-6;
    for (int s = 0; s < m.n_sites; ++s) {
      for (int out = 0; out < 12; ++out) {
        // out < 3: position component, else rotation entry out − 3
        const bool pos = out < 3;
        double w[9] = {};
        w[pos ? out : out - 3] = 1.0;
        std::vector<double> gx(k.x.size(), 0.0), gp(p.size(), 0.0);
        auto GX = view(gx.data()), GP = view(gp.data());
        auto X = view(const_cast<double*>(k.x.data())), P = view(const_cast<double*>(p.data()));
        if (pos)
          m.adj_site_position<double>(X, P, s, GX, GP, w);
        else
          m.adj_site_rotation<double>(X, P, s, GX, GP, w);
        // θ: the body positions move the site (centred differences, as for the states below);
        // nothing else in θ does
        for (size_t q = 0; q < p.size(); ++q) {
          std::vector<double> pp = p, pm = p;
          pp[q] += h, pm[q] -= h;
          double vp[9], vm[9];
          if (pos) {
            m.site_position<double>(X, view(pp.data()), s, vp);
            m.site_position<double>(X, view(pm.data()), s, vm);
          } else {
            m.site_rotation<double>(X, view(pp.data()), s, vp);
            m.site_rotation<double>(X, view(pm.data()), s, vm);
          }
          const int o = pos ? out : out - 3;
          EXPECT_NEAR(gp[q], (vp[o] - vm[o]) / (2 * h), 1e-9)
              << "site " << s << " output " << out << " parameter " << q;
          if (k.c.info.param_names[q].find(".pos.") == std::string::npos) {
            EXPECT_EQ(gp[q], 0.0) << "parameter " << q;
          }
        }
        D vd[9];
        if (pos)
          m.site_position<D>(xd.data(), pd.data(), s, vd);
        else
          m.site_rotation<D>(xd.data(), pd.data(), s, vd);
        auto value = [&](std::vector<double> x) {
          double v[9];
          if (pos)
            m.site_position<double>(view(x.data()), P, s, v);
          else
            m.site_rotation<double>(view(x.data()), P, s, v);
          return v[pos ? out : out - 3];
        };
        for (int i = 0; i < 2 * n; ++i) {
          const double dual = i < n ? vd[pos ? out : out - 3].v[i] : 0.0;
          EXPECT_NEAR(gx[i], dual, 1e-13) << "site " << s << " output " << out << " state " << i;
          std::vector<double> xp = k.x, xm = k.x;
          xp[i] += h, xm[i] -= h;
          EXPECT_NEAR(gx[i], (value(xp) - value(xm)) / (2 * h), 1e-9)
              << "site " << s << " output " << out << " state " << i;
        }
      }
    }
  }
  // the site's position by its definition, p_b + R_b (pos − j_b) through the body's own frame
  // (the centre of mass c_b = p_b + R_b (com − j_b) with com moved onto the site)
  const Articulated& m = oj.model_state<ArticulatedSetup>().model;
  std::vector<double> p = oj.theta, x = {0.3, -0.2, 0.4, 0.02, 0.5, -0.2, 0.3, 0.1};
  for (int s = 0; s < m.n_sites; ++s) {
    const int b = m.site_body[s];
    for (int i = 0; i < 3; ++i) p[m.p_body(b, Articulated::kComX + i)] = m.site_pos[s][i];
    double v[3];
    m.site_position<double>(view(x.data()), view(p.data()), s, v);
    for (int ax = 0; ax < 3; ++ax) {
      Articulated::Kin<double> K;
      m.forward_kinematics(x.data(), p.data(), K);
      EXPECT_NEAR(v[ax], K.C[b][ax], 1e-15);
    }
  }
}

TEST(Articulated, ConfigErrorsNameTheKey) {
  auto fails_with = [](const std::string& text, const std::string& key) {
    expect_config_error(nlohmann::json::parse(text), {key});
  };
  const std::string head =
      R"({"name": "t", "simulation": {"dt": 0.002, "steps": 3}, "loss": {"control_effort": 1}, "validation": {"enabled": false}, "model": {"type": "articulated", )";
  fails_with(
      head + R"("bodies": [{"name": "a", "joint": {}, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "model.bodies[0].mass");
  fails_with(
      head +
          R"("bodies": [{"name": "a", "parent": "b", "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "model.bodies[0].parent");
  fails_with(
      head +
          R"("bodies": [{"name": "a", "quat": [0, 0, 0, 0], "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "model.bodies[0].quat");
  fails_with(
      head +
          R"("bodies": [{"name": "a", "joint": {}, "mass": 1, "fullinertia": [1, -1, 1, 0, 0, 0]}]}})",
      "model.bodies[0].fullinertia");
  fails_with(head + R"("bodies": [{"name": "a", "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
             "model.bodies");
  fails_with(
      head +
          R"("bodies": [{"name": "a", "joint": {"range": [1, -1]}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "model.bodies[0].joint.range");
  fails_with(
      head +
          R"("joint_limits": {"enabled": true, "smoothing": 0}, "bodies": [{"name": "a", "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "model.joint_limits.smoothing");
  fails_with(
      head +
          R"("joint_limits": {"enabled": true, "stiffnes": 10}, "bodies": [{"name": "a", "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "stiffnes");
  {
    // accepted: the limits take each joint's range
    const ExperimentConfig ok = parse_config(nlohmann::json::parse(
        head +
        R"("joint_limits": {"enabled": true, "stiffness": 500}, "bodies": [{"name": "a", "joint": {"range": [-0.5, 0.7]}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})"));
    EXPECT_TRUE(ok.model_state<ArticulatedSetup>().model.joint_limits);
    EXPECT_EQ(ok.model_state<ArticulatedSetup>().model.limit_stiffness, 500.0);
    EXPECT_EQ(ok.model_state<ArticulatedSetup>().model.limit_smoothing, 1e-3);
    EXPECT_EQ(ok.model_state<ArticulatedSetup>().model.limit_lower[0], -0.5);
    EXPECT_EQ(ok.model_state<ArticulatedSetup>().model.limit_upper[0], 0.7);
  }
  fails_with(head + R"("integrator": "verlet", "bodies": []}})", "model.integrator");
  // the implicit servo: an integer in [0, 8], with implicitfast only
  const std::string arm =
      R"("bodies": [{"name": "a", "joint": {}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})";
  fails_with(
      head + R"("integrator": "implicitfast", "torque_limits": {"newton_iterations": 9}, )" + arm,
      "model.torque_limits.newton_iterations");
  fails_with(
      head + R"("integrator": "implicitfast", "torque_limits": {"newton_iterations": 2.5}, )" + arm,
      "model.torque_limits.newton_iterations");
  fails_with(
      head + R"("integrator": "implicitfast", "torque_limits": {"newton_iterations": "4"}, )" + arm,
      "model.torque_limits.newton_iterations");
  fails_with(head + R"("integrator": "euler", "torque_limits": {"newton_iterations": 2}, )" + arm,
             "model.torque_limits.newton_iterations");
  EXPECT_EQ(
      parse_config(
          nlohmann::json::parse(
              head +
              R"("integrator": "implicitfast", "torque_limits": {"newton_iterations": 4}, )" + arm))
          .model_state<ArticulatedSetup>()
          .model.servo_newton,
      4);
  fails_with(head + R"("integrator": "euler"}})", "model.bodies");
  // sites: a known body, unique names, at most kMaxSites
  fails_with(head + R"("sites": [{"name": "s", "body": "nobody"}], )" + arm, "model.sites[0].body");
  fails_with(head + R"("sites": [{"name": "s", "body": "a"}, {"name": "s", "body": "a"}], )" + arm,
             "model.sites[1].name");
  fails_with(head + R"("sites": [{"body": "a"}], )" + arm, "model.sites[0].name");
  fails_with(head + R"("sites": [{"name": "s", "body": "a", "quat": [0, 0, 0, 0]}], )" + arm,
             "model.sites[0].quat");
  fails_with(head + R"("sites": {"name": "s"}, )" + arm, "model.sites");
  fails_with(
      head +
          R"("bodies": [{"name": "a", "joint": {"pos": [0, 1]}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]}})",
      "model.bodies[0].joint.pos");
  try {
    expand_includes(nlohmann::json::parse(head + R"("include": "no_such_file.json"}})"),
                    STEER_SOURCE_DIR);
    ADD_FAILURE() << "a missing include was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.include"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace steer::testing
