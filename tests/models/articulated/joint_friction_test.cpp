// Joint friction (a joint's `frictionloss`; joint_friction.h): τ = −F tanh(q̇ / v_f) on each
// hinge and slide, F a θ slot, v_f model.frictionloss_velocity. joint_friction_mujoco_test.cpp
// compares an imported file with MuJoCo's dry friction; here, all in float64:
//   - the generic gradient suite (gradient_suite.h: hand vs dual ≤ 1e-12 relative, dual vs
//     centred FD per step ≤ 1e-6, rollout vs centred FD ≤ 1e-6 relative + 1e-9) on euler,
//     implicitfast and rk4 for a two-hinge arm with a slide under gravity, its joints moving
//     both faster and slower than v_f (the law's sliding and viscous regimes), θ including
//     every joint's F;
//   - the law against its closed form as h shrinks: a flywheel of inertia I spun at ω0 obeys
//     I ω̇ = −F tanh(ω/v_f), so sinh(ω(t)/v_f) = sinh(ω0/v_f) e^{−F t/(I v_f)}. Euler's error
//     in ω(T) and in ∂ω(T)/∂F halves with h (first order), rk4's falls sixteenfold (from
//     h F/(I v_f) = 0.2 down: at 0.8 and 0.4 it is not yet asymptotic);
//   - the physics as v_f → 0: Coulomb friction, under which the flywheel decelerates at F/I
//     and stops after turning ω0² I / (2F); the smooth law's excess turn falls as v_f²;
//   - the parse (slots, units, values, the capacity, the effective model) and its refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config_errors.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// two hinges about y and a slide along the second link, each with its frictionloss
nlohmann::json arm_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "integrator": "euler", "gravity": 9.81, "frictionloss_velocity": 0.2,
    "bodies": [
      {"name": "upper", "mass": 1.2, "com": [0, 0, -0.2], "fullinertia": [0.02, 0.02, 0.004, 0, 0, 0],
       "joint": {"name": "shoulder", "axis": [0, 1, 0], "damping": 0.05, "frictionloss": 0.3}},
      {"name": "lower", "parent": "upper", "pos": [0, 0, -0.4], "mass": 0.8, "com": [0, 0, -0.15],
       "fullinertia": [0.01, 0.01, 0.002, 0, 0, 0],
       "joint": {"name": "elbow", "axis": [0, 1, 0], "frictionloss": 0.2}},
      {"name": "probe", "parent": "lower", "pos": [0, 0, -0.3], "mass": 0.3,
       "fullinertia": [0.001, 0.001, 0.001, 0, 0, 0],
       "joint": {"name": "reach", "type": "slide", "axis": [0, 0, -1], "frictionloss": 0.5,
                 "stiffness": 20}}]
  })");
}

nlohmann::json config_json(const nlohmann::json& model, const std::string& state = "elbow.q",
                           int steps = 10, double dt = 0.002) {
  return {{"name", "joint_friction"},
          {"model", model},
          {"simulation", {{"dt", dt}, {"steps", steps}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", state}, {"target", 0.1}}}}}},
          {"validation", {{"enabled", false}}}};
}

const ExperimentConfig& arm_config() {
  static const ExperimentConfig c = parse_config(config_json(arm_model()));
  return c;
}

// the shoulder slower than v_f = 0.2 (the viscous regime), the elbow and the slide faster
std::vector<double> kicked_state(const ArticulatedLarge& m, const std::vector<double>& x0) {
  std::vector<double> x = x0;
  const double q[3] = {0.3, -0.5, 0.02}, v[3] = {0.08, -0.9, 0.6};
  for (int j = 0; j < 3; ++j) x[size_t(j)] = q[j], x[size_t(m.nq() + j)] = v[j];
  return x;
}

const char* integrator_name(int integ) {
  return integ == Articulated::kRk4     ? "rk4"
         : integ == Articulated::kEuler ? "euler"
                                        : "implicitfast";
}

struct JointFrictionProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    std::vector<StepCase<ArticulatedLarge>> out;
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      ArticulatedLarge m = arm_config().model_state<ArticulatedSetup>().large;
      m.integrator = integ;
      std::vector<double> u(size_t(m.nu()));
      for (int j = 0; j < m.nu(); ++j) u[size_t(j)] = 0.3 * std::sin(0.7 * j + 0.1);
      out.push_back(StepCase<ArticulatedLarge>{
          std::string("arm with joint friction ") + integrator_name(integ), m,
          kicked_state(m, arm_config().x0), u, arm_config().theta});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    std::vector<RolloutCase<ArticulatedLarge>> out;
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      RolloutCase<ArticulatedLarge> r;
      r.model = arm_config().model_state<ArticulatedSetup>().large;
      r.model.integrator = integ;
      r.name = std::string("arm with joint friction ") + integrator_name(integ) + ", 12 steps";
      r.steps = 12;
      r.checkpoint_every = 5;
      r.x0 = kicked_state(r.model, arm_config().x0);
      r.p = arm_config().theta;
      const int n = r.model.nu();
      r.u.assign(size_t(r.steps * n), 0.0);
      for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.4 * std::cos(0.37 * double(i));
      r.loss.n_terminal = 3;
      for (int t = 0; t < 3; ++t)
        r.loss.terminal_index[t] = t == 2 ? r.model.nq() : t, r.loss.terminal_target[t] = 0.05 * t,
        r.loss.terminal_weight[t] = 1.0;
      r.loss.effort_weight = 1e-3;
      out.push_back(r);
    }
    return out;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(JointFriction, GradientSuite,
                               ::testing::Types<JointFrictionProvider>);

namespace {

// a flywheel of inertia I = 0.1 kg·m² about its hinge, spun at ω0 = 2 rad/s against F = 0.2 N·m:
// under Coulomb friction it stops at t = ω0 I / F = 1 s after turning ω0² I / (2F) = 1 rad
constexpr double kInertia = 0.1, kFriction = 0.2, kOmega0 = 2.0;

struct Spin {
  double q, v, dv;  // the angle [rad] and ω [rad/s] at T, and ∂ω(T)/∂F [rad/(s·N·m)]
};

// the flywheel by steer at N steps of T/N; ∂ω(T)/∂F from the adjoint of L = ω(T)²
Spin flywheel(const std::string& integrator, double v_f, double T, int steps) {
  const nlohmann::json model = {
      {"type", "articulated"},
      {"integrator", integrator},
      {"gravity", 0.0},
      {"frictionloss_velocity", v_f},
      {"bodies",
       {{{"name", "wheel"},
         {"mass", 1.0},
         {"fullinertia", {kInertia, kInertia, kInertia, 0, 0, 0}},
         {"joint", {{"name", "spin"}, {"axis", {0, 0, 1}}, {"frictionloss", kFriction}}}}}}};
  const ExperimentConfig c = parse_config(config_json(model, "spin.v", steps, T / steps));
  RolloutCase<ArticulatedLarge> r;
  r.model = c.model_state<ArticulatedSetup>().large;
  r.steps = steps;
  r.checkpoint_every = std::min(16, steps);
  r.x0 = {0.0, kOmega0};
  r.p = c.theta;
  r.u.assign(size_t(steps), 0.0);
  r.loss.n_terminal = 1;
  r.loss.terminal_index[0] = 1, r.loss.terminal_target[0] = 0, r.loss.terminal_weight[0] = 1;
  double loss = 0;
  const std::vector<double> g = rollout_gradient(r, false, r.checkpoint_every, &loss);
  std::vector<double> x = r.x0, u(1, 0.0);
  for (int k = 0; k < steps; ++k) x = step_value(r.model, k, x, u, r.p);
  // L ∝ ω², so ∂L/∂F = (2L/ω) ∂ω/∂F
  const double dv = g[size_t(2 + steps + r.model.p_frictionloss(0))] * x[1] / (2 * loss);
  return {x[0], x[1], dv};
}

TEST(JointFriction, SmoothLawConvergesToItsClosedForm) {
  // v_f = 0.05 rad/s, T = 1 s: ω(T) ≈ 0.024 rad/s, where the law is between its regimes
  const double v_f = 0.05, T = 1.0, a = kFriction * T / (kInertia * v_f);
  // y = sinh(ω0/v_f) e^{−a} from logarithms (sinh(40) is 1.2e17)
  const double y = 0.5 * (std::exp(kOmega0 / v_f - a) - std::exp(-kOmega0 / v_f - a));
  const double w = v_f * std::asinh(y);
  const double dw = -T * y / (kInertia * std::sqrt(1 + y * y));  // ∂ω(T)/∂F
  for (const auto& [integ, order, n0] : {std::tuple<const char*, double, int>{"euler", 1, 200},
                                         std::tuple<const char*, double, int>{"rk4", 4, 200}}) {
    double ev[3], ed[3];
    for (int i = 0; i < 3; ++i) {
      const Spin s = flywheel(integ, v_f, T, n0 << i);
      ev[i] = std::fabs(s.v - w);
      ed[i] = std::fabs(s.dv - dw);
    }
    const double want = std::pow(2.0, order);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(ev[i] / ev[i + 1], want, 0.15 * want) << integ << " ω(T), " << (n0 << i);
      EXPECT_NEAR(ed[i] / ed[i + 1], want, 0.15 * want) << integ << " ∂ω/∂F, " << (n0 << i);
    }
    EXPECT_LT(ev[2], (order > 2 ? 1e-5 : 2e-2) * w) << integ;
    EXPECT_LT(ed[2], (order > 2 ? 1e-5 : 2e-2) * std::fabs(dw)) << integ;
    std::printf("[ %s ] ω(T) = %.6g: errors %.3g %.3g %.3g; ∂ω/∂F = %.6g: errors %.3g %.3g %.3g\n",
                integ, w, ev[0], ev[1], ev[2], dw, ed[0], ed[1], ed[2]);
  }
}

// As v_f shrinks (the step with it, for stability), the flywheel decelerates at F/I while it
// slides and stops after ω0² I / (2F) = 1 rad: the smooth law's excess turn, from the tail
// where |ω| < v_f (about v_f I / F long, at speeds about v_f), shrinks as v_f²
TEST(JointFriction, ApproachesCoulombFrictionAsTheSmoothingSpeedShrinks) {
  const double stop = kOmega0 * kOmega0 * kInertia / (2 * kFriction);
  double excess[3];
  for (int i = 0; i < 3; ++i) {
    const double v_f = 0.04 / (1 << i);
    const Spin sliding = flywheel("rk4", v_f, 0.5, 200);
    // sliding: ω(0.5 s) = ω0 − F t / I = 1 rad/s (tanh(1/0.04) = 1 − 4e−22)
    EXPECT_NEAR(sliding.v, kOmega0 - kFriction * 0.5 / kInertia, 1e-12) << v_f;
    EXPECT_NEAR(sliding.dv, -0.5 / kInertia, 1e-9) << v_f;
    const Spin stopped = flywheel("rk4", v_f, 3.0, 1200);
    EXPECT_LT(std::fabs(stopped.v), 1e-3 * v_f) << v_f;
    excess[i] = stopped.q - stop;
    EXPECT_GT(excess[i], 0.0) << v_f;  // the law brakes less than Coulomb below v_f
    std::printf("[ coulomb ] v_f %.3g rad/s: turned %.9f rad (Coulomb %.9f), excess %.3g\n", v_f,
                stopped.q, stop, excess[i]);
  }
  EXPECT_LT(excess[0], 1e-3 * stop);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(excess[i] / excess[i + 1], 4.0, 0.4) << i;
}

TEST(JointFriction, SlotsCapacityAndEffectiveModel) {
  const ExperimentConfig& c = arm_config();
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  // a tree that fits the arm's capacity runs at the scalar one, which has the joint friction
  EXPECT_TRUE(s.large_tree);
  EXPECT_FALSE(s.legged_tree);
  const ArticulatedLarge& m = s.large;
  ASSERT_TRUE(m.joint_friction);
  EXPECT_EQ(m.frictionloss_velocity, 0.2);
  EXPECT_EQ(m.np(), m.p_tendon(0, 0) + m.n_dof);
  EXPECT_EQ(int(c.theta.size()), m.np());
  const auto& names = c.info.param_names;
  const auto& units = c.info.param_units;
  EXPECT_EQ(names[size_t(m.p_frictionloss(0))], "shoulder.frictionloss");
  EXPECT_EQ(units[size_t(m.p_frictionloss(0))], "N*m");
  EXPECT_EQ(names[size_t(m.p_frictionloss(2))], "reach.frictionloss");
  EXPECT_EQ(units[size_t(m.p_frictionloss(2))], "N");
  EXPECT_EQ(c.theta[size_t(m.p_frictionloss(1))], 0.2);
  EXPECT_EQ(c.theta[size_t(m.p_frictionloss(2))], 0.5);
  const nlohmann::json eff = articulated_model_json(c);
  ASSERT_TRUE(eff.contains("frictionloss"));
  EXPECT_EQ(eff["frictionloss"]["frictionloss_velocity"], 0.2);
  EXPECT_EQ(eff["frictionloss"]["integration"], "explicit");
  // one joint's key gives every joint a slot (0 where not given); all_joints sets them all
  nlohmann::json one = arm_model();
  one["bodies"][0]["joint"].erase("frictionloss");
  one["bodies"][2]["joint"].erase("frictionloss");
  one.erase("frictionloss_velocity");
  const ExperimentConfig o = parse_config(config_json(one));
  const ArticulatedLarge& om = o.model_state<ArticulatedSetup>().large;
  ASSERT_TRUE(om.joint_friction);
  EXPECT_EQ(om.frictionloss_velocity, 0.1);  // the default
  EXPECT_EQ(o.theta[size_t(om.p_frictionloss(0))], 0.0);
  EXPECT_EQ(o.theta[size_t(om.p_frictionloss(1))], 0.2);
  one["all_joints"] = {{"frictionloss", 0.7}};
  const ExperimentConfig all = parse_config(config_json(one));
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(all.theta[size_t(all.model_state<ArticulatedSetup>().large.p_frictionloss(j))], 0.7)
        << j;
  // without any frictionloss nothing changes: θ ends at the tendons, the arm's capacity is kept
  nlohmann::json dry = arm_model();
  dry.erase("frictionloss_velocity");
  for (auto& b : dry["bodies"]) b["joint"].erase("frictionloss");
  const ExperimentConfig d = parse_config(config_json(dry));
  EXPECT_FALSE(d.model_state<ArticulatedSetup>().large_tree);
  EXPECT_FALSE(d.model_state<ArticulatedSetup>().model.joint_friction);
  EXPECT_EQ(int(d.theta.size()), d.model_state<ArticulatedSetup>().model.p_tendon(0, 0));
  EXPECT_FALSE(articulated_model_json(d).contains("frictionloss"));
}

TEST(JointFriction, RefusalsNameTheKey) {
  auto with = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json m = arm_model();
    edit(m);
    return config_json(m);
  };
  expect_config_error(with([](nlohmann::json& m) { m["bodies"][1]["joint"]["frictionloss"] = -1; }),
                      {"model.bodies[1].joint.frictionloss", "out of range"});
  expect_config_error(with([](nlohmann::json& m) { m["frictionloss_velocity"] = 0; }),
                      {"model.frictionloss_velocity", "out of range"});
  expect_config_error(with([](nlohmann::json& m) { m["frictionloss_velocity"] = "fast"; }),
                      {"model.frictionloss_velocity"});
  expect_config_error(with([](nlohmann::json& m) { m["all_joints"]["frictionloss"] = 2e6; }),
                      {"model.all_joints.frictionloss", "out of range"});
  expect_config_error(with([](nlohmann::json& m) {
                        m["bodies"][0]["joint"] = {{"type", "free"}, {"frictionloss", 0.1}};
                      }),
                      {"model.bodies[0].joint", "frictionloss"});
}

}  // namespace
