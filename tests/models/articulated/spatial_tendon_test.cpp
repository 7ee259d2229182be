// Spatial tendons (model.tendons with "sites"; spatial_tendon.h): a path of straight segments
// through sites, L = Σ |x_{i+1} − x_i|, with the fixed tendons' spring, damper and range law
// applied as J_Lᵀ f. spatial_tendon_mujoco_test.cpp compares configs/mjcf/spatial_tendon.xml with
// MuJoCo; here, all in float64:
//   - the generic gradient suite (gradient_suite.h: the step's adjoint is the dual-number one;
//     dual vs centred FD per step ≤ 1e-6, rollout vs centred FD ≤ 1e-6 relative + 1e-9) on euler
//     and rk4 for a cable from a world site over the upper arm to the hand, its range acting,
//     θ including the cable's stiffness, springlength and damping;
//   - physics: a cable from a world site straight along a slide is the slide's spring (the same
//     step to 1e-13 as a joint spring k at L0 − d, with the cable's damping as the joint's);
//   - the parse: slot names and units (N, m), the capacity, the effective model, refusals.
#include <gtest/gtest.h>

#include <cmath>
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

// spatial_tendon.xml's arm, with the cable's range [0.1, 0.98] whose upper limit acts at
// kicked_state (the cable is about 1.002 long there)
nlohmann::json cable_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "integrator": "euler", "gravity": 9.81,
    "bodies": [
      {"name": "upper", "pos": [0, 0, 1.2], "mass": 1.0, "com": [0.2, 0, 0],
       "fullinertia": [0.002, 0.015, 0.015, 0, 0, 0],
       "joint": {"name": "shoulder", "axis": [0, 1, 0], "damping": 0.1}},
      {"name": "lower", "parent": "upper", "pos": [0.4, 0, 0], "mass": 0.6, "com": [0.15, 0, 0],
       "fullinertia": [0.001, 0.006, 0.006, 0, 0, 0],
       "joint": {"name": "elbow", "axis": [0, 0.6, 0.8], "damping": 0.05}},
      {"name": "hand", "parent": "lower", "pos": [0.3, 0, 0], "mass": 0.2, "com": [0.05, 0, 0],
       "fullinertia": [0.0002, 0.0005, 0.0005, 0, 0, 0],
       "joint": {"name": "reach", "type": "slide", "axis": [1, 0, 0], "damping": 0.2}}],
    "sites": [
      {"name": "anchor", "body": "world", "pos": [0.1, 0.05, 1.6]},
      {"name": "upper_s", "body": "upper", "pos": [0.3, 0, 0.05]},
      {"name": "hand_s", "body": "hand", "pos": [0.08, 0.02, 0.03]}],
    "joint_limits": {"enabled": true, "stiffness": 50, "smoothing": 0.05},
    "tendons": [
      {"name": "cable", "sites": ["anchor", "upper_s", "hand_s"], "stiffness": 40,
       "springlength": 0.5, "damping": 0.3, "range": [0.1, 0.98]}]
  })");
}

nlohmann::json config_json(const nlohmann::json& model, const std::string& state = "elbow.q") {
  return {{"name", "cable"},
          {"model", model},
          {"simulation", {{"dt", 0.002}, {"steps", 10}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", state}, {"target", 0.1}}}}}},
          {"validation", {{"enabled", false}}}};
}

const ExperimentConfig& cable_config() {
  static const ExperimentConfig c = parse_config(config_json(cable_model()));
  return c;
}

std::vector<double> kicked_state(const ArticulatedLarge& m) {
  std::vector<double> x(size_t(m.nx()));
  const double q[3] = {0.3, -0.4, 0.05}, v[3] = {0.7, -0.9, 0.3};
  for (int j = 0; j < m.n_dof; ++j) x[size_t(j)] = q[j], x[size_t(m.n_dof + j)] = v[j];
  return x;
}

struct CableProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    std::vector<StepCase<ArticulatedLarge>> out;
    for (int integ : {int(Articulated::kEuler), int(Articulated::kRk4)}) {
      ArticulatedLarge m = cable_config().model_state<ArticulatedSetup>().large;
      m.integrator = integ;
      std::vector<double> u = {0.4, -0.3, 0.2};
      out.push_back(StepCase<ArticulatedLarge>{
          std::string("cable ") + (integ == Articulated::kRk4 ? "rk4" : "euler"), m,
          kicked_state(m), u, cable_config().theta});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    std::vector<RolloutCase<ArticulatedLarge>> out;
    for (int integ : {int(Articulated::kEuler), int(Articulated::kRk4)}) {
      RolloutCase<ArticulatedLarge> r;
      r.model = cable_config().model_state<ArticulatedSetup>().large;
      r.model.integrator = integ;
      r.name = integ == Articulated::kRk4 ? "cable rk4, 6 steps" : "cable euler, 12 steps";
      r.steps = integ == Articulated::kRk4 ? 6 : 12;
      r.checkpoint_every = 5;
      r.fd_scale = 3;  // as the tendon chain's: the loss's rounding over ε stays below 1e-9
      r.x0 = kicked_state(r.model);
      r.p = cable_config().theta;
      r.u.assign(size_t(r.steps * 3), 0.0);
      for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.4 * std::cos(0.37 * double(i));
      r.loss.n_terminal = 3;
      const int idx[3] = {0, 2, 4};
      for (int t = 0; t < 3; ++t)
        r.loss.terminal_index[t] = idx[t], r.loss.terminal_target[t] = 0.05 * t,
        r.loss.terminal_weight[t] = 1.0;
      r.loss.effort_weight = 1e-3;
      out.push_back(r);
    }
    return out;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(SpatialTendon, GradientSuite, ::testing::Types<CableProvider>);

namespace {

// the range's upper limit acts at the kicked state, so the suite covers the limit law
TEST(SpatialTendon, TheRangeActsInTheSuite) {
  const ArticulatedLarge& m = cable_config().model_state<ArticulatedSetup>().large;
  const std::vector<double> x = kicked_state(m);
  ArticulatedLarge::Kin<double> K;
  m.forward_kinematics(x.data(), cable_config().theta.data(), K);
  double Ldot;
  const double L = spatial_tendon_length<ArticulatedLarge, double>(m, K, 0, x.data() + 3, Ldot);
  EXPECT_GT(L, 0.98);
  EXPECT_LT(L, 0.98 + 0.1);
}

// one step of each model from the same state gives the same state to 1e-13
void expect_same_step(const nlohmann::json& cable, const nlohmann::json& spring) {
  const ExperimentConfig a = parse_config(config_json(cable, "x.q"));
  const ExperimentConfig b = parse_config(config_json(spring, "x.q"));
  ASSERT_TRUE(a.model_state<ArticulatedSetup>().large_tree);
  const std::vector<double> x = {0.1, 0.8}, u = {0.3};
  const std::vector<double> xa =
      step_value(a.model_state<ArticulatedSetup>().large, 0, x, u, a.theta);
  const std::vector<double> xb =
      step_value(b.model_state<ArticulatedSetup>().model, 0, x, u, b.theta);
  EXPECT_NEAR(xa[0], xb[0], 1e-13) << cable["integrator"];
  EXPECT_NEAR(xa[1], xb[1], 1e-13) << cable["integrator"];
  EXPECT_GT(std::fabs(xa[1] - 0.8), 1e-3) << "the spring should act";
}

// a cable from a world site along a slide is that slide's spring and damper
TEST(SpatialTendon, CableAlongASlideIsItsSpring) {
  nlohmann::json base = nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 0,
    "bodies": [{"name": "cart", "mass": 2.0, "fullinertia": [0.01, 0.01, 0.01, 0, 0, 0],
                "joint": {"name": "x", "type": "slide", "axis": [1, 0, 0]}}],
    "sites": [{"name": "wall", "body": "world", "pos": [-1, 0, 0]},
              {"name": "hook", "body": "cart", "pos": [0, 0, 0]}]})");
  nlohmann::json cable = base;
  cable["tendons"] = {{{"name", "cable"},
                       {"sites", {"wall", "hook"}},
                       {"stiffness", 30.0},
                       {"springlength", 1.4},
                       {"damping", 0.7}}};
  nlohmann::json spring = base;
  spring["bodies"][0]["joint"]["stiffness"] = 30.0;
  spring["bodies"][0]["joint"]["springref"] = 0.4;  // L0 − 1
  spring["bodies"][0]["joint"]["damping"] = 0.7;
  // rk4 takes both dampers explicitly: the same step with them
  cable["integrator"] = spring["integrator"] = "rk4";
  expect_same_step(cable, spring);
  // euler integrates the joint's damping implicitly and the cable's explicitly: without them
  cable["tendons"][0]["damping"] = 0.0;
  spring["bodies"][0]["joint"]["damping"] = 0.0;
  cable["integrator"] = spring["integrator"] = "euler";
  expect_same_step(cable, spring);
}

TEST(SpatialTendon, SlotsAndEffectiveModel) {
  const ExperimentConfig& c = cable_config();
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  EXPECT_TRUE(s.large_tree);
  const ArticulatedLarge& m = s.large;
  ASSERT_EQ(m.n_tendons, 1);
  EXPECT_EQ(m.n_spatial, 1);
  EXPECT_TRUE(m.tendon_spatial(0));
  EXPECT_EQ(m.tendon_path_n[0], 3);
  const auto& names = c.info.param_names;
  const auto& units = c.info.param_units;
  EXPECT_EQ(names[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], "cable.stiffness");
  EXPECT_EQ(units[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], "N/m");
  EXPECT_EQ(units[size_t(m.p_tendon(0, Articulated::kTendonSpringLength))], "m");
  EXPECT_EQ(units[size_t(m.p_tendon(0, Articulated::kTendonDamping))], "N*s/m");
  const nlohmann::json eff = articulated_model_json(c);
  EXPECT_EQ(eff["tendons"][0]["sites"], (nlohmann::json{"anchor", "upper_s", "hand_s"}));
  EXPECT_FALSE(eff["tendons"][0].contains("joints"));
  EXPECT_FALSE(m.conservative<double>(c.theta.data()));
}

TEST(SpatialTendon, RefusalsNameTheKey) {
  nlohmann::json unknown = config_json(cable_model());
  unknown["model"]["tendons"][0]["sites"][1] = "nowhere";
  expect_config_error(unknown, {"model.tendons[0].sites[1]", "'nowhere'", "not a site"});
  nlohmann::json one = config_json(cable_model());
  one["model"]["tendons"][0]["sites"] = {"anchor"};
  expect_config_error(one, {"model.tendons[0].sites", "2 to 8"});
  nlohmann::json both = config_json(cable_model());
  both["model"]["tendons"][0]["joints"] = {{{"joint", "elbow"}}};
  expect_config_error(both, {"model.tendons[0].sites", "not both"});
  nlohmann::json implicit = config_json(cable_model());
  implicit["model"]["integrator"] = "implicitfast";
  expect_config_error(implicit, {"model.tendons", "implicitfast"});
}

}  // namespace
