// The articulated model's ball joints (model.h's ball groups: MuJoCo's ball, q = quat (w, x, y,
// z), q̇ = ω in the body's frame), written as JSON configs. Checked here:
//   - the generic gradient suite (gradient_suite.h), float64: hand vs dual ≤ 1e-12 relative,
//     dual vs centered FD per step ≤ 1e-6, rollouts vs centered FD ≤ 1e-6 relative + 1e-9,
//     on (a) a ball pendulum with its anchor off the body origin and a servoed hinge below it
//     (Articulated), (b) a free body with a ball-jointed limb and a hinge, its tip in contact
//     (ArticulatedLegged), (c) two floating bodies (a free box; a free ball with a tail on a ball
//     joint) beside a hinge pendulum (ArticulatedLegged), under euler, implicitfast and rk4;
//   - a ball swinging in a plane against the same body on a hinge (an independent code path):
//     the angle 2 atan2(q_y, q_w) and ω_y equal the hinge's q and q̇ within 1e-12 over 1 s;
//   - a spherical pendulum without damping: the energy and the vertical angular momentum about
//     the anchor are conserved up to the integrator's error, which converges: under rk4 the
//     drift over 1 s falls by more than 10× when h halves (fourth order: 16×);
//   - the quaternion stays unit to rounding over 10⁴ euler steps;
//   - the config: slot and state names, nq, the default pose (the identity), targets skipping
//     the ball's dofs, the effective model, and the refusals (a ball beside other joints, a
//     zero quaternion, a key a ball has no use for).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// a pendulum bob on a ball joint at the world point (0, 0, 1), its anchor 5 cm above the body
// origin, asymmetric inertia with products; below it an arm on a servoed hinge about y
nlohmann::json pendulum_model(bool arm, double damping = 0.02) {
  nlohmann::json bodies = nlohmann::json::array();
  nlohmann::json ball = {{"name", "socket"}, {"type", "ball"}, {"pos", {0, 0, 0.05}}};
  if (damping > 0) ball["damping"] = damping, ball["armature"] = 0.002;
  bodies.push_back({{"name", "bob"},
                    {"pos", {0, 0, 0.95}},
                    {"quat", {0.97, 0.1, 0.2, 0.05}},
                    {"joint", ball},
                    {"mass", 1.2},
                    {"com", {0.02, -0.01, -0.3}},
                    {"fullinertia", {0.03, 0.025, 0.006, 0.001, -0.002, 0.0015}}});
  if (arm)
    bodies.push_back({{"name", "arm"},
                      {"parent", "bob"},
                      {"pos", {0, 0.02, -0.4}},
                      {"joint",
                       {{"name", "elbow"},
                        {"axis", {0.2, 1, 0}},
                        {"damping", 0.01},
                        {"kp", 5.0},
                        {"kv", 0.2},
                        {"force_limit", 2.0},
                        {"target", 0.3}}},
                      {"mass", 0.5},
                      {"com", {0, 0, -0.15}},
                      {"fullinertia", {0.01, 0.012, 0.002, 0, 0.0005, 0}}});
  return {{"type", "articulated"},
          {"integrator", "euler"},
          {"bodies", bodies},
          {"sites", {{{"name", "end"}, {"body", arm ? "arm" : "bob"}, {"pos", {0, 0, -0.3}}}}}};
}

// a free torso with a limb on a ball joint and a shin on a hinge below it, the shin's tip a
// contact point
nlohmann::json limb_model(bool contact) {
  nlohmann::json bodies = {
      {{"name", "torso"},
       {"pos", {0.1, -0.2, 1.0}},
       {"quat", {0.9, 0.1, -0.3, 0.2}},
       {"joint", {{"name", "root"}, {"type", "free"}, {"damping", 0.01}}},
       {"mass", 2.0},
       {"com", {0.01, -0.02, 0.03}},
       {"fullinertia", {0.04, 0.035, 0.05, 0.002, -0.001, 0.003}}},
      {{"name", "thigh"},
       {"parent", "torso"},
       {"pos", {0.05, 0.02, -0.15}},
       {"quat", {0.99, 0.05, 0.0, 0.1}},
       {"joints", {{{"name", "hip"}, {"type", "ball"}, {"pos", {0, 0, 0.02}}, {"damping", 0.03}}}},
       {"mass", 0.6},
       {"com", {0.0, 0.01, -0.12}},
       {"fullinertia", {6e-3, 5e-3, 2e-3, 1e-4, 0.0, -2e-4}}},
      {{"name", "shin"},
       {"parent", "thigh"},
       {"pos", {0, 0, -0.25}},
       {"joint",
        {{"name", "knee"},
         {"axis", {0, 1, 0}},
         {"kp", 4.0},
         {"kv", 0.2},
         {"force_limit", 3.0},
         {"target", 0.2}}},
       {"mass", 0.3},
       {"com", {0, 0, -0.1}},
       {"fullinertia", {2e-3, 2e-3, 4e-4, 0, 0, 0}}}};
  nlohmann::json m = {{"type", "articulated"},
                      {"integrator", "euler"},
                      {"bodies", bodies},
                      {"tip", {{"body", "shin"}, {"pos", {0, 0, -0.22}}}}};
  if (contact)
    m["contact"] = {{"height", 0.0}, {"stiffness", 2000}, {"damping", 5}, {"smoothing", 0.01}};
  return m;
}

// two floating bodies under the world, a hinge pendulum between them: a free box, then a free
// ball with a tail on a ball joint (three quaternions in q); inertias of 10⁻² kg·m², so that
// the FD steps of 10⁻⁶ on the zero slots (armature, products) stay in the linear range
nlohmann::json two_free_model() {
  auto inertial = [](nlohmann::json b, double mass, std::vector<double> I) {
    b["mass"] = mass;
    b["com"] = {0.01, -0.02, 0.03};
    b["fullinertia"] = I;
    return b;
  };
  nlohmann::json bodies = {
      inertial({{"name", "box"},
                {"pos", {0, 0, 1}},
                {"quat", {0.9, 0.1, -0.3, 0.2}},
                {"joint", {{"name", "box_free"}, {"type", "free"}}}},
               1.3, {0.02, 0.035, 0.05, 0.002, -0.001, 0.003}),
      inertial({{"name", "pendulum"},
                {"pos", {0.5, 0, 1.2}},
                {"joint", {{"name", "swing"}, {"axis", {0, 1, 0}}, {"damping", 0.01}}}},
               0.5, {0.004, 0.004, 0.001, 0, 0, 0}),
      inertial({{"name", "ball"},
                {"pos", {1, 0.2, 0.8}},
                {"quat", {0.8, 0, 0.6, 0}},
                {"joint", {{"name", "ball_free"}, {"type", "free"}, {"damping", 0.02}}}},
               0.4, {0.02, 0.022, 0.018, 0, 0.001, 0}),
      inertial({{"name", "tail"},
                {"parent", "ball"},
                {"pos", {0, 0, -0.1}},
                {"joint", {{"name", "tail_joint"}, {"type", "ball"}}}},
               0.3, {0.02, 0.02, 0.01, 0, 0, 0})};
  return {{"type", "articulated"}, {"integrator", "euler"}, {"bodies", bodies}};
}

nlohmann::json config_json(const nlohmann::json& model, double gravity = 9.81) {
  nlohmann::json m = model;
  m["gravity"] = gravity;
  return {{"name", "ball_joint"},
          {"model", m},
          {"simulation", {{"dt", 0.002}, {"steps", 10}}},
          {"loss", {{"control_effort", 1.0}}},
          {"validation", {{"enabled", false}}}};
}

ExperimentConfig parse_json(const nlohmann::json& j) { return parse_config(j); }

// quaternion (w, x, y, z) normalized into x at `at`
void put_quat(std::vector<double>& x, int at, double w, double a, double b, double c) {
  const double n = std::sqrt(w * w + a * a + b * b + c * c);
  x[size_t(at)] = w / n, x[size_t(at + 1)] = a / n, x[size_t(at + 2)] = b / n,
  x[size_t(at + 3)] = c / n;
}

// the pendulum's state: the bob turned and spinning at `spin` × (2, −3, 5) rad/s, the arm bent
std::vector<double> pendulum_state(const Articulated& m, double spin) {
  const int nq = m.nq();
  std::vector<double> x(size_t(m.nx()), 0.0);
  put_quat(x, 0, 0.8, -0.2, 0.4, 0.3);
  x[size_t(nq)] = 2.0 * spin, x[size_t(nq + 1)] = -3.0 * spin, x[size_t(nq + 2)] = 5.0 * spin;
  if (m.n_dof > 3) x[4] = 0.2, x[size_t(nq + 3)] = -0.7;
  return x;
}

// the limb's state: torso moving and turning, hip turned and spinning, knee bent
template <class Model>
std::vector<double> limb_state(const Model& m) {
  const int nq = m.nq();
  std::vector<double> x(size_t(m.nx()), 0.0);
  x[0] = 0.1, x[1] = -0.05, x[2] = 0.4;
  put_quat(x, 3, 0.8, -0.2, 0.4, 0.3);
  put_quat(x, 7, 0.9, 0.1, -0.2, 0.15);
  x[11] = 0.3;
  const double v[10] = {0.3, -0.1, 0.5, 1.0, -1.5, 2.0, 2.5, -1.0, 0.7, -0.8};
  for (int i = 0; i < 10; ++i) x[size_t(nq + i)] = v[i];
  return x;
}

std::vector<double> test_controls(int n) {
  std::vector<double> u(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) u[size_t(j)] = 0.7 * std::sin(0.9 * j + 0.3);
  return u;
}

const char* kIntegratorNames[] = {"euler", "implicitfast", "rk4"};

// the rollout loss: terminal errors on the last ball's quaternion x, its rate and the last q,
// the centre of mass along x, a running site term (where the model has a site), control effort
template <class Model>
RolloutCase<Model> ball_case(const std::string& name, const Model& m,
                             const std::vector<double>& theta, std::vector<double> x0,
                             int integrator, int steps) {
  const int nq = m.nq(), last = m.ball_dof[m.n_balls - 1];
  RolloutCase<Model> r = articulated_rollout_case(name, m, theta, std::move(x0), integrator, steps,
                                                  0.3, {m.qadr(last) + 1, nq + last + 1, nq - 1});
  // (the rate's term near its initial value and weighted down, as free_base_test's)
  r.loss.terminal_target[1] = r.x0[size_t(nq + last + 1)] + 0.1;
  r.loss.terminal_weight[1] = 0.01;
  return r;
}

struct BallProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const ExperimentConfig bob = parse_json(config_json(pendulum_model(false)));
    const ExperimentConfig arm = parse_json(config_json(pendulum_model(true)));
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      Articulated b = bob.model_state<ArticulatedSetup>().model;
      b.integrator = integ;
      // slow spin: the exp map's series; fast: its closed form
      out.push_back({std::string("ball pendulum, slow spin ") + kIntegratorNames[integ], b,
                     pendulum_state(b, 1.0), test_controls(3), bob.theta});
      out.push_back({std::string("ball pendulum, fast spin ") + kIntegratorNames[integ], b,
                     pendulum_state(b, 15.0), test_controls(3), bob.theta});
      Articulated a = arm.model_state<ArticulatedSetup>().model;
      a.integrator = integ;
      out.push_back({std::string("ball pendulum with a servoed arm ") + kIntegratorNames[integ], a,
                     pendulum_state(a, 1.0), test_controls(4), arm.theta});
    }
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    const ExperimentConfig arm = parse_json(config_json(pendulum_model(true)));
    const Articulated a = arm.model_state<ArticulatedSetup>().model;
    return {ball_case("ball pendulum with an arm euler, 12 steps", a, arm.theta,
                      pendulum_state(a, 1.0), Articulated::kEuler, 12),
            ball_case("ball pendulum with an arm implicitfast, 12 steps", a, arm.theta,
                      pendulum_state(a, 1.0), Articulated::kImplicitFast, 12),
            ball_case("ball pendulum with an arm rk4, 6 steps", a, arm.theta,
                      pendulum_state(a, 1.0), Articulated::kRk4, 6)};
  }
};

struct BallLimbProvider {
  using Model = ArticulatedLegged;
  static std::vector<StepCase<ArticulatedLegged>> step_cases() {
    std::vector<StepCase<ArticulatedLegged>> out;
    const ExperimentConfig limb = parse_json(config_json(limb_model(true)));
    EXPECT_TRUE(limb.model_state<ArticulatedSetup>().legged_tree);
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      ArticulatedLegged l = limb.model_state<ArticulatedSetup>().legged;
      l.integrator = integ;
      // the tip 3 mm into the plane: the contact force acts through the ball's dofs
      std::vector<double> x = limb_state(l), p = limb.theta;
      p[l.p_global(Articulated::kPlaneHeight)] -=
          l.penetration<double>(view(x.data()), view(p.data())) - 0.003;
      out.push_back(
          {std::string("free body with a ball-jointed limb in contact ") + kIntegratorNames[integ],
           l, x, test_controls(10), p, 1e-2, 1});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLegged>> rollout_cases() {
    const ExperimentConfig limb = parse_json(config_json(limb_model(false)));
    const ArticulatedLegged l = limb.model_state<ArticulatedSetup>().legged;
    RolloutCase<ArticulatedLegged> r =
        ball_case("free body with a ball-jointed limb euler, 10 steps", l, limb.theta,
                  limb_state(l), Articulated::kEuler, 10);
    return {r};
  }
};

// the two floating bodies moving and turning, the pendulum swinging, the tail turned
std::vector<double> two_free_state(const ArticulatedLegged& m, const std::vector<double>& x0) {
  std::vector<double> x = x0;
  const int nq = m.nq();
  put_quat(x, 15, 0.9, 0.1, -0.2, 0.15);
  x[7] = 0.3;
  for (int j = 0; j < m.n_dof; ++j) x[size_t(nq + j)] = 1.2 * std::cos(0.7 + 1.3 * j);
  return x;
}

struct TwoFreeProvider {
  using Model = ArticulatedLegged;
  static std::vector<StepCase<ArticulatedLegged>> step_cases() {
    std::vector<StepCase<ArticulatedLegged>> out;
    const ExperimentConfig c = parse_json(config_json(two_free_model()));
    EXPECT_TRUE(c.model_state<ArticulatedSetup>().legged_tree);
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      ArticulatedLegged m = c.model_state<ArticulatedSetup>().legged;
      m.integrator = integ;
      out.push_back({std::string("two free bodies and a pendulum ") + kIntegratorNames[integ], m,
                     two_free_state(m, c.x0), test_controls(m.n_dof), c.theta});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLegged>> rollout_cases() {
    const ExperimentConfig c = parse_json(config_json(two_free_model()));
    const ArticulatedLegged m = c.model_state<ArticulatedSetup>().legged;
    RolloutCase<ArticulatedLegged> r =
        ball_case("two free bodies and a pendulum implicitfast, 10 steps", m, c.theta,
                  two_free_state(m, c.x0), Articulated::kImplicitFast, 10);
    return {r};
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(BallJoint, GradientSuite, ::testing::Types<BallProvider>);
INSTANTIATE_TYPED_TEST_SUITE_P(TwoFreeBodies, GradientSuite, ::testing::Types<TwoFreeProvider>);
INSTANTIATE_TYPED_TEST_SUITE_P(BallJointLimb, GradientSuite, ::testing::Types<BallLimbProvider>);

namespace {

template <class Model>
std::vector<double> step_once(const Model& m, const std::vector<double>& theta,
                              const std::vector<double>& x, int k) {
  std::vector<double> u(size_t(m.nu()), 0.0), xn(x.size());
  auto X = view(const_cast<double*>(x.data()));
  auto U = view(u.data());
  auto P = view(const_cast<double*>(theta.data()));
  auto XN = view(xn.data());
  m.template step<double>(k, X, U, P, XN);
  return xn;
}

// a body with its y axis principal and its centre of mass in its x-z plane swings in that plane
// on a ball started with ω about y only: the same motion as on a hinge about y
TEST(BallJoint, PlanarSwingEqualsHinge) {
  auto model = [](const nlohmann::json& joint) {
    return nlohmann::json{{"type", "articulated"},
                          {"integrator", "implicitfast"},
                          {"bodies",
                           {{{"name", "bob"},
                             {"pos", {0, 0, 1}},
                             {"joint", joint},
                             {"mass", 1.0},
                             {"com", {0.1, 0, -0.3}},
                             {"fullinertia", {0.02, 0.03, 0.01, 0, 0.004, 0}}}}}};
  };
  const ExperimentConfig ball = parse_json(config_json(
      model({{"name", "socket"}, {"type", "ball"}, {"pos", {0, 0, 0.1}}, {"damping", 0.05}})));
  const ExperimentConfig hinge = parse_json(config_json(
      model({{"name", "pin"}, {"axis", {0, 1, 0}}, {"pos", {0, 0, 0.1}}, {"damping", 0.05}})));
  const Articulated& mb = ball.model_state<ArticulatedSetup>().model;
  const Articulated& mh = hinge.model_state<ArticulatedSetup>().model;
  std::vector<double> xb(size_t(mb.nx()), 0.0), xh(size_t(mh.nx()), 0.0);
  const double a0 = 0.6, w0 = -1.2;
  put_quat(xb, 0, std::cos(a0 / 2), 0, std::sin(a0 / 2), 0);
  xb[5] = w0;
  xh[0] = a0, xh[1] = w0;
  double gap = 0;
  for (int k = 0; k < 500; ++k) {
    xb = step_once(mb, ball.theta, xb, k);
    xh = step_once(mh, hinge.theta, xh, k);
    const double angle = 2 * std::atan2(xb[2], xb[0]);
    gap = std::max({gap, std::fabs(angle - xh[0]), std::fabs(xb[5] - xh[1]), std::fabs(xb[1]),
                    std::fabs(xb[3]), std::fabs(xb[4]), std::fabs(xb[6])});
  }
  std::printf("[ figures ] planar swing, 1 s at 2 ms: max |ball - hinge| %.3g\n", gap);
  EXPECT_LT(gap, 1e-12);
}

// E and the vertical angular momentum about the anchor of a single ball pendulum
void invariants(const Articulated& m, const std::vector<double>& theta,
                const std::vector<double>& x, double& energy, double& lz) {
  energy = m.energy<double>(view(const_cast<double*>(x.data())),
                            view(const_cast<double*>(theta.data())));
  Articulated::Kin<double> K;
  m.kinematics_at(x.data(), theta.data(), K);
  const int b = 2, nq = m.nq();  // the bob (after the ball's two frames)
  const double wb[3] = {x[size_t(nq)], x[size_t(nq + 1)], x[size_t(nq + 2)]};
  double w[3], Iw[9], Il[3], r[3], cd[3], L[3];
  Articulated::rotate(K.R[b], wb, w);
  m.world_inertia(K, theta.data(), b, Iw);
  Articulated::rotate(Iw, w, Il);
  for (int i = 0; i < 3; ++i) r[i] = K.C[b][i] - K.P[b][i];
  Articulated::cross(w, r, cd);  // ċ = ω × (c − anchor)
  Articulated::cross(r, cd, L);
  lz = Il[2] + theta[size_t(m.p_body(b, Articulated::kMass))] * L[2];
}

TEST(BallJoint, SphericalPendulumConservesEnergyAndMomentum) {
  ExperimentConfig c = parse_json(config_json(pendulum_model(false, 0.0)));
  Articulated m = c.model_state<ArticulatedSetup>().model;
  m.integrator = Articulated::kRk4;
  std::vector<double> drift;
  for (double h : {0.004, 0.002, 0.001}) {
    m.dt = h;
    std::vector<double> x = pendulum_state(m, 1.0);
    double e0, l0, e, l;
    invariants(m, c.theta, x, e0, l0);
    double de = 0, dl = 0;
    for (int k = 0; k < int(std::lround(1.0 / h)); ++k) {
      x = step_once(m, c.theta, x, k);
      invariants(m, c.theta, x, e, l);
      de = std::max(de, std::fabs(e - e0)), dl = std::max(dl, std::fabs(l - l0));
    }
    std::printf(
        "[ figures ] rk4 h = %g s, 1 s: |dE| %.3g J (E0 %.3g), |dLz| %.3g kg m^2/s (Lz0 %.3g)\n", h,
        de, e0, dl, l0);
    drift.push_back(de + dl);
  }
  EXPECT_LT(drift[0], 1e-4);
  EXPECT_GT(drift[0] / drift[1], 10.0);
  EXPECT_GT(drift[1] / drift[2], 10.0);
}

TEST(BallJoint, QuaternionStaysUnit) {
  const ExperimentConfig c = parse_json(config_json(pendulum_model(true)));
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  std::vector<double> x = pendulum_state(m, 5.0);
  for (int k = 0; k < 10000; ++k) x = step_once(m, c.theta, x, k);
  const double n = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]);
  std::printf("[ figures ] euler, 10000 steps: |quat| - 1 = %.3g\n", n - 1);
  EXPECT_LT(std::fabs(n - 1), 1e-12);
  for (double v : x) EXPECT_TRUE(std::isfinite(v));
}

TEST(BallJoint, ConfigSlotsDefaultsAndTargets) {
  nlohmann::json j = config_json(pendulum_model(true));
  j["model"]["targets"] = {0.25};  // one per servoed joint: the elbow (the ball has none)
  const ExperimentConfig c = parse_json(j);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const Articulated& m = s.model;
  EXPECT_EQ(m.n_balls, 1);
  EXPECT_EQ(m.n_bodies, 4);  // 2 frames, the bob, the arm
  EXPECT_EQ(m.n_dof, 4);
  EXPECT_EQ(m.nq(), 5);
  ASSERT_EQ(int(c.info.state_names.size()), 9);
  EXPECT_EQ(c.info.state_names[0], "socket.quat.w");
  EXPECT_EQ(c.info.state_names[3], "socket.quat.z");
  EXPECT_EQ(c.info.state_names[4], "elbow.q");
  EXPECT_EQ(c.info.state_names[5], "socket.w.x");
  EXPECT_EQ(c.info.state_names[8], "elbow.v");
  EXPECT_EQ(c.info.control_names[2], "socket.torque.z");
  EXPECT_EQ(c.info.control_names[3], "torque.elbow");
  // the default pose: the identity, the hinge at its ref
  EXPECT_EQ(c.x0[0], 1.0);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(c.x0[size_t(i)], 0.0);
  // the ball's damping and armature on each of its dofs; the target on the elbow only
  auto slot = [&](const std::string& name) {
    for (size_t q = 0; q < c.info.param_names.size(); ++q)
      if (c.info.param_names[q] == name) return c.theta[q];
    ADD_FAILURE() << "no slot " << name;
    return 0.0;
  };
  EXPECT_EQ(slot("socket.ry.damping"), 0.02);
  EXPECT_EQ(slot("socket.rz.armature"), 0.002);
  EXPECT_EQ(slot("elbow.target"), 0.25);
  EXPECT_EQ(slot("bob.ball_frame.rx.mass"), 0.0);
  // the effective model lists the ball as the bob's joint, with the bob's pose
  const nlohmann::json e = articulated_model_json(c);
  const nlohmann::json& bob = e["bodies"][0];
  EXPECT_EQ(bob["name"], "bob");
  EXPECT_EQ(bob["joint"]["type"], "ball");
  EXPECT_EQ(bob["joint"]["name"], "socket");
  EXPECT_EQ(bob["pos_m"][2], 0.95);
  EXPECT_EQ(e["bodies"][1]["joint"]["name"], "elbow");
}

void expect_refused(const nlohmann::json& j, const std::string& key, const std::string& words) {
  try {
    parse_json(j);
    ADD_FAILURE() << "accepted; expected a refusal at " << key;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

TEST(BallJoint, Refusals) {
  nlohmann::json beside = config_json(pendulum_model(false));
  beside["model"]["bodies"][0].erase("joint");
  beside["model"]["bodies"][0]["joints"] = {{{"name", "socket"}, {"type", "ball"}},
                                            {{"name", "twist"}, {"axis", {0, 0, 1}}}};
  expect_refused(beside, "model.bodies[0].joints[0].type", "only joint");
  nlohmann::json zero = config_json(pendulum_model(false));
  zero["initial_state"] = {{"q", {0, 0, 0, 0}}};
  expect_refused(zero, "initial_state.q[0..3]", "ball joint 'socket'");
  nlohmann::json range = config_json(pendulum_model(false));
  range["model"]["bodies"][0]["joint"]["range"] = {0, 0.5};
  expect_refused(range, "model.bodies[0].joint.range", "");
  nlohmann::json tendon = config_json(pendulum_model(true));
  tendon["model"]["tendons"] = {
      {{"name", "t"}, {"joints", {{{"joint", "socket.rx"}, {"coef", 1.0}}}}}};
  expect_refused(tendon, "model.tendons[0].joints[0].joint", "ball joint");
}

}  // namespace
