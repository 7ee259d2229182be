// The articulated model's free root (model.h: a floating base in MuJoCo's convention,
// q = [p, quat (w, x, y, z)], q̇ = [v (world), ω (body frame)]), written as JSON configs.
// Checked here:
//   - the generic gradient suite (gradient_suite.h), float64: hand vs dual ≤ 1e-12 relative,
//     dual vs centered FD per step ≤ 1e-6, rollouts vs centered FD ≤ 1e-6 relative + 1e-9,
//     on (a) a tumbling asymmetric body (slow and fast spin, the exp map's two forms), (b) a
//     free body with a two-joint limb (Articulated) and a three-joint limb with its tip in
//     contact (ArticulatedLarge), under euler, implicitfast and rk4;
//   - the quaternion stays unit to rounding over 10⁴ euler steps;
//   - free flight without gravity: energy and angular momentum drift, first order in h under
//     euler (the drift at h is about twice the drift at h/2);
//   - the config: slot names, nq = n_dof + 1, the default initial pose from the root's pos and
//     quat, and the refusals (a free joint on a body below another, a zero quaternion).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// an asymmetric box-like body (principal moments 0.02, 0.035, 0.05 kg·m², off-diagonal
// products, centre of mass off the origin) on a free joint
nlohmann::json free_body(double damping = 0.0) {
  nlohmann::json j = {{"type", "free"}};
  if (damping > 0) j["damping"] = damping;
  return {{"name", "box"},
          {"pos", {0.1, -0.2, 1.0}},
          {"quat", {0.9, 0.1, -0.3, 0.2}},
          {"joint", j},
          {"mass", 1.3},
          {"com", {0.01, -0.02, 0.03}},
          {"fullinertia", {0.02, 0.035, 0.05, 0.002, -0.001, 0.003}}};
}

// a limb of n links hanging from the box: hinges about y and x, the third a slide along z
nlohmann::json limb_model(int n, bool contact) {
  nlohmann::json bodies = nlohmann::json::array();
  bodies.push_back(free_body(0.01));
  const std::vector<std::vector<double>> axes = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}};
  for (int k = 0; k < n; ++k) {
    nlohmann::json joint = {{"name", "j" + std::to_string(k)},
                            {"axis", axes[k]},
                            {"damping", 0.02},
                            {"armature", 0.001},
                            {"kp", 4.0},
                            {"kv", 0.2},
                            {"force_limit", 3.0},
                            {"target", 0.1 * (k + 1)}};
    if (k == 2) joint["type"] = "slide", joint["range"] = {-0.1, 0.1}, joint["target"] = 0.02;
    if (k == 1) joint["pos"] = {0.01, 0.0, 0.02};
    bodies.push_back({{"name", "l" + std::to_string(k)},
                      {"parent", k == 0 ? "box" : "l" + std::to_string(k - 1)},
                      {"pos", {0.05, 0.02, -0.15}},
                      {"quat", {0.99, 0.05, 0.0, 0.1}},
                      {"joint", joint},
                      {"mass", 0.3 - 0.05 * k},
                      {"com", {0.0, 0.01, -0.06}},
                      {"fullinertia", {3e-3, 2.5e-3, 1e-3, 1e-4, 0.0, -2e-4}}});
  }
  const std::string last = "l" + std::to_string(n - 1);
  nlohmann::json m = {{"type", "articulated"},
                      {"integrator", "euler"},
                      {"bodies", bodies},
                      {"tip", {{"body", last}, {"pos", {0, 0, -0.12}}}},
                      {"sites", {{{"name", "foot"}, {"body", last}, {"pos", {0.01, 0, -0.12}}}}}};
  if (contact)
    m["contact"] = {{"height", 0.0}, {"stiffness", 2000}, {"damping", 5}, {"smoothing", 0.01}};
  return m;
}

nlohmann::json config_json(const nlohmann::json& model, double gravity = 9.81) {
  nlohmann::json m = model;
  m["gravity"] = gravity;
  return {{"name", "free_base"},
          {"model", m},
          {"simulation", {{"dt", 0.002}, {"steps", 10}}},
          {"loss", {{"terminal", {{{"state", "box.joint.p.z"}, {"target", 0.5}}}}}},
          {"validation", {{"enabled", false}}}};
}

ExperimentConfig parse_json(const nlohmann::json& j) { return parse_config(j); }

// a state of the model: the box at p, turned by quat (normalized), moving at v, spinning at ω
// [rad/s] (body frame); joints a little off zero and moving
std::vector<double> free_state(int n_dof, double spin) {
  const int nq = n_dof + 1;
  std::vector<double> x(size_t(nq + n_dof), 0.0);
  const double q[4] = {0.8, -0.2, 0.4, 0.3}, qn = std::sqrt(0.64 + 0.04 + 0.16 + 0.09);
  x[0] = 0.1, x[1] = -0.05, x[2] = 0.8;
  for (int i = 0; i < 4; ++i) x[3 + i] = q[i] / qn;
  for (int j = 6; j < n_dof; ++j)
    x[j + 1] = 0.05 * std::sin(j + 1.0), x[nq + j] = 0.4 * std::cos(j + 1.0);
  x[nq + 0] = 0.3, x[nq + 1] = -0.1, x[nq + 2] = 0.5;
  x[nq + 3] = 2.0 * spin, x[nq + 4] = -3.0 * spin, x[nq + 5] = 5.0 * spin;
  return x;
}

template <class Model>
Model model_of(const ExperimentConfig& c) {
  if constexpr (std::is_same<Model, Articulated>::value) {
    EXPECT_FALSE(c.model_state<ArticulatedSetup>().large_tree);
    return c.model_state<ArticulatedSetup>().model;
  } else {
    return c.model_state<ArticulatedSetup>().large;
  }
}

std::vector<double> test_controls(int n) {
  std::vector<double> u(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) u[j] = 0.7 * std::sin(0.9 * j + 0.3);
  return u;
}

const char* kIntegratorNames[] = {"euler", "implicitfast", "rk4"};

// the rollout loss: terminal errors on p.z, the quaternion's x, ω_y and the last joint, the
// centre of mass along x, a running site term, control effort
template <class Model>
RolloutCase<Model> free_case(const std::string& name, const Model& m,
                             const std::vector<double>& theta, int integrator, int steps,
                             double spin) {
  const int nq = m.nq();
  RolloutCase<Model> r = articulated_rollout_case(name, m, theta, free_state(m.n_dof, spin),
                                                  integrator, steps, 0.5, {2, 4, nq + 4, nq - 1});
  // (ω_y's term near its initial value and weighted down: a loss below O(1) keeps the FD
  // quotient's rounding below 1e-9; the spin changes ω by several rad/s over the run)
  r.loss.terminal_target[2] = r.x0[size_t(nq + 4)] + 0.1;
  r.loss.terminal_weight[2] = 0.01;
  return r;
}

struct FreeProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const ExperimentConfig body =
        parse_json(config_json({{"type", "articulated"}, {"bodies", {free_body()}}}));
    const ExperimentConfig limb = parse_json(config_json(limb_model(2, false)));
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      Articulated b = model_of<Articulated>(body);
      b.integrator = integ;
      // slow spin: h|ω|/2 ≈ 0.006, the exp map's series; fast: ≈ 0.09, its closed form
      out.push_back({std::string("tumbling body, slow spin ") + kIntegratorNames[integ], b,
                     free_state(6, 1.0), test_controls(6), body.theta});
      out.push_back({std::string("tumbling body, fast spin ") + kIntegratorNames[integ], b,
                     free_state(6, 15.0), test_controls(6), body.theta});
      Articulated l = model_of<Articulated>(limb);
      l.integrator = integ;
      out.push_back({std::string("free body with a two-joint limb ") + kIntegratorNames[integ], l,
                     free_state(8, 1.0), test_controls(8), limb.theta});
    }
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    const ExperimentConfig body =
        parse_json(config_json({{"type", "articulated"}, {"bodies", {free_body()}}}));
    const ExperimentConfig limb = parse_json(config_json(limb_model(2, false)));
    const Articulated b = model_of<Articulated>(body), l = model_of<Articulated>(limb);
    return {
        free_case("tumbling body euler, 12 steps", b, body.theta, Articulated::kEuler, 12, 3.0),
        free_case("free body with a limb implicitfast, 12 steps", l, limb.theta,
                  Articulated::kImplicitFast, 12, 1.0),
        free_case("free body with a limb rk4, 6 steps", l, limb.theta, Articulated::kRk4, 6, 1.0)};
  }
};

struct FreeLargeProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    std::vector<StepCase<ArticulatedLarge>> out;
    const ExperimentConfig limb = parse_json(config_json(limb_model(3, true)));
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      ArticulatedLarge l = model_of<ArticulatedLarge>(limb);
      l.integrator = integ;
      // the tip 3 mm into the plane: the contact force acts through the free root's dofs
      std::vector<double> x = free_state(9, 1.0), p = limb.theta;
      p[l.p_global(Articulated::kPlaneHeight)] -=
          l.penetration<double>(view(x.data()), view(p.data())) - 0.003;
      out.push_back(
          {std::string("free body with a three-joint limb in contact ") + kIntegratorNames[integ],
           l, x, test_controls(9), p, 1e-2, 1});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    const ExperimentConfig limb = parse_json(config_json(limb_model(3, false)));
    const ArticulatedLarge l = model_of<ArticulatedLarge>(limb);
    return {free_case("free body with a three-joint limb euler, 10 steps", l, limb.theta,
                      Articulated::kEuler, 10, 1.0)};
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(FreeBase, GradientSuite, ::testing::Types<FreeProvider>);
INSTANTIATE_TYPED_TEST_SUITE_P(FreeBaseLarge, GradientSuite, ::testing::Types<FreeLargeProvider>);

namespace {

// x⁺ = step(x) for T steps under zero controls
template <class Model>
std::vector<double> run_steps(const Model& m, const std::vector<double>& theta,
                              std::vector<double> x, int steps) {
  std::vector<double> u(size_t(m.nu()), 0.0), xn(x.size());
  for (int k = 0; k < steps; ++k) {
    auto X = view(x.data());
    auto U = view(u.data());
    auto P = view(const_cast<double*>(theta.data()));
    auto XN = view(xn.data());
    m.template step<double>(k, X, U, P, XN);
    x.swap(xn);
  }
  return x;
}

// the free body's angular momentum about the world origin [kg·m²/s]:
// L = I_w ω_w + m c × ċ, ω_w = R ω, ċ = v + ω_w × (c − p)
std::vector<double> angular_momentum(const Articulated& m, const std::vector<double>& theta,
                                     const std::vector<double>& x) {
  Articulated::Kin<double> K;
  m.kinematics_at(x.data(), theta.data(), K);
  const int b = Articulated::kFreeFrames, nq = m.nq();
  const double* R = K.R[b];
  const double wb[3] = {x[nq + 3], x[nq + 4], x[nq + 5]};
  double w[3], Iw[9], Il[3], r[3], wr[3], cd[3], L[3];
  Articulated::rotate(R, wb, w);
  m.world_inertia(K, theta.data(), b, Iw);
  Articulated::rotate(Iw, w, Il);
  for (int i = 0; i < 3; ++i) r[i] = K.C[b][i] - x[i];
  Articulated::cross(w, r, wr);
  for (int i = 0; i < 3; ++i) cd[i] = x[nq + i] + wr[i];
  Articulated::cross(K.C[b], cd, L);
  const double mass = theta[m.p_body(b, Articulated::kMass)];
  return {Il[0] + mass * L[0], Il[1] + mass * L[1], Il[2] + mass * L[2]};
}

TEST(FreeBase, ConfigSlotsAndDefaults) {
  const ExperimentConfig c = parse_json(config_json(limb_model(2, false)));
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  EXPECT_FALSE(s.large_tree);
  const Articulated& m = s.model;
  EXPECT_TRUE(m.free_base);
  EXPECT_EQ(m.n_bodies, 8);  // 5 frames, the box, 2 links
  EXPECT_EQ(m.n_dof, 8);
  EXPECT_EQ(m.nq(), 9);
  EXPECT_EQ(m.nx(), 17);
  EXPECT_EQ(int(c.x0.size()), 17);
  ASSERT_EQ(int(c.info.state_names.size()), 17);
  EXPECT_EQ(c.info.state_names[0], "box.joint.p.x");
  EXPECT_EQ(c.info.state_names[3], "box.joint.quat.w");
  EXPECT_EQ(c.info.state_names[7], "j0.q");
  EXPECT_EQ(c.info.state_names[9], "box.joint.v.x");
  EXPECT_EQ(c.info.state_names[12], "box.joint.w.x");
  EXPECT_EQ(c.info.state_names[15], "j0.v");
  EXPECT_EQ(c.info.control_names[0], "box.joint.force.x");
  EXPECT_EQ(c.info.control_names[5], "box.joint.torque.z");
  EXPECT_EQ(c.info.control_names[6], "torque.j0");
  // the default initial pose: the root's pos and its quat, normalized
  const double qn = std::sqrt(0.81 + 0.01 + 0.09 + 0.04);
  EXPECT_DOUBLE_EQ(c.x0[2], 1.0);
  EXPECT_DOUBLE_EQ(c.x0[3], 0.9 / qn);
  EXPECT_DOUBLE_EQ(c.x0[5], -0.3 / qn);
  // the box's own slots follow the frames' (zero) ones
  EXPECT_EQ(c.theta[m.p_body(0, Articulated::kMass)], 0.0);
  EXPECT_EQ(c.theta[m.p_body(5, Articulated::kMass)], 1.3);
  EXPECT_EQ(c.info.param_names[m.p_body(5, Articulated::kMass)], "box.mass");
  // at rest and without gravity, nothing moves; with gravity the box falls at g
  nlohmann::json still = config_json(limb_model(2, false), 9.81);
  still["initial_state"] = {{"q", {0, 0, 1, 1, 0, 0, 0, 0.1, 0.2}}};
  const ExperimentConfig f = parse_json(still);
  std::vector<double> x = f.x0;
  for (int i = 9; i < 17; ++i) x[i] = 0;
  Articulated free = f.model_state<ArticulatedSetup>().model;
  std::vector<double> p = f.theta;
  for (int j = 6; j < 8; ++j)
    p[free.p_joint(j, Articulated::kKp)] = 0, p[free.p_joint(j, Articulated::kKv)] = 0;
  for (int j = 0; j < 8; ++j) p[free.p_joint(j, Articulated::kDamping)] = 0;
  const std::vector<double> x1 = run_steps(free, p, x, 50);
  // the whole tree falls freely: every velocity but v_z stays zero, v_z = −g t
  EXPECT_NEAR(x1[9 + 2], -9.81 * 0.1, 1e-12);
  for (int i : {9, 10, 12, 13, 14, 15, 16}) EXPECT_NEAR(x1[i], 0.0, 1e-12) << i;
}

TEST(FreeBase, Refusals) {
  nlohmann::json below = limb_model(2, false);
  below["bodies"][1]["joint"] = {{"type", "free"}};
  try {
    parse_json(config_json(below));
    FAIL() << "a free joint below the root was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.bodies[1].joint.type"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("parent is world"), std::string::npos) << e.what();
  }
  nlohmann::json zero = config_json(limb_model(2, false));
  zero["initial_state"] = {{"q", {0, 0, 1, 0, 0, 0, 0, 0.1, 0.2}}};
  try {
    parse_json(zero);
    FAIL() << "a zero quaternion was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("initial_state.q[3..6]"), std::string::npos) << e.what();
  }
  nlohmann::json gains = limb_model(2, false);
  gains["bodies"][0]["joint"]["kp"] = 3;
  try {
    parse_json(config_json(gains));
    FAIL() << "a free joint's kp was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.bodies[0].joint.kp"), std::string::npos)
        << e.what();
  }
}

TEST(FreeBase, QuaternionStaysUnit) {
  const ExperimentConfig c =
      parse_json(config_json({{"type", "articulated"}, {"bodies", {free_body()}}}));
  Articulated m = c.model_state<ArticulatedSetup>().model;
  // |ω| ≈ 6.2 rad/s for 10⁴ steps (20 s; the exp map's series), and ≈ 37 rad/s for 10³ steps
  // (its closed form; explicit Euler's gyroscopic term gains energy at that spin, so no longer)
  for (int integ : {int(Articulated::kEuler), int(Articulated::kImplicitFast)}) {
    m.integrator = integ;
    for (const auto& [spin, steps] :
         {std::pair<double, int>{1.0, 10000}, std::pair<double, int>{6.0, 1000}}) {
      const std::vector<double> x = run_steps(m, c.theta, free_state(6, spin), steps);
      const double n = std::sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]);
      std::printf("[ figures ] %s, |w| = %.3g rad/s: |quat| - 1 after %d steps = %.3g\n",
                  kIntegratorNames[integ], spin * std::sqrt(38.0), steps, n - 1);
      EXPECT_NEAR(n, 1.0, 1e-12) << kIntegratorNames[integ] << " spin " << spin;
    }
  }
}

// free flight without gravity: energy and angular momentum are invariants of the motion;
// euler's drift over 1 s is first order in h (halving h about halves it)
TEST(FreeBase, FreeFlightDrift) {
  const ExperimentConfig c =
      parse_json(config_json({{"type", "articulated"}, {"bodies", {free_body()}}}, 0.0));
  Articulated m = c.model_state<ArticulatedSetup>().model;
  const std::vector<double> x0 = free_state(6, 3.0);
  double e0, ke0;
  m.energies<double>(x0.data(), c.theta.data(), e0, ke0);
  const std::vector<double> L0 = angular_momentum(m, c.theta, x0);
  const double L0n = std::sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  double de[3], dl[3];
  const double hs[3] = {0.002, 0.001, 0.0005};
  for (int r = 0; r < 3; ++r) {
    m.dt = hs[r];
    const std::vector<double> x = run_steps(m, c.theta, x0, int(std::lround(1.0 / hs[r])));
    double e, ke;
    m.energies<double>(x.data(), c.theta.data(), e, ke);
    const std::vector<double> L = angular_momentum(m, c.theta, x);
    de[r] = std::fabs(e - e0) / e0;
    dl[r] = std::sqrt((L[0] - L0[0]) * (L[0] - L0[0]) + (L[1] - L0[1]) * (L[1] - L0[1]) +
                      (L[2] - L0[2]) * (L[2] - L0[2])) /
            L0n;
    std::printf(
        "[ figures ] euler h = %g s, 1 s of free flight: energy drift %.3g (relative), angular "
        "momentum drift %.3g (relative)\n",
        hs[r], de[r], dl[r]);
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_GT(de[r] / de[r + 1], 1.6) << "energy drift not first order at h = " << hs[r];
    EXPECT_LT(de[r] / de[r + 1], 2.5) << "energy drift not first order at h = " << hs[r];
    EXPECT_GT(dl[r] / dl[r + 1], 1.6) << "momentum drift not first order at h = " << hs[r];
    EXPECT_LT(dl[r] / dl[r + 1], 2.5) << "momentum drift not first order at h = " << hs[r];
  }
  EXPECT_LT(de[0], 0.15);
  EXPECT_LT(dl[0], 0.03);
}

}  // namespace
