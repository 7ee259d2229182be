// The kinematic tree as MuJoCo files describe it (docs/config.md, "Bodies and joints"): several
// joints in one body (massless frames, model.h), a joint's ref (the pose the tree describes is
// the joint's at q = ref), joint springs τ_s = −k_s (q − q_s) with their two θ slots, gravity
// in any direction, and a start outside a joint's range. The tree here is
// configs/mjcf/joint_tree.xml written as JSON (joint_tree_mujoco_test.cpp imports the file
// and compares it with MuJoCo). Checked, all in float64:
//   - the generic gradient suite (gradient_suite.h: hand vs dual ≤ 1e-12 relative, dual vs
//     centered FD per step ≤ 1e-6, rollout vs centered FD ≤ 1e-6 relative + 1e-9) on euler,
//     implicitfast and rk4, θ including every joint's stiffness and springref;
//   - against physics, not only the step's own FD: a hinge spring oscillates at ω = √(k/I)
//     (q(t) = q_s + (q₀ − q_s) cos ωt), rk4 within 1e-9 at h = 1 ms and euler's error falling
//     as h (halving h at least 1.8× smaller error); a slide falls along a tilted gravity as
//     x(t) = ½ g_x t² (exact for semi-implicit Euler up to its O(h) term, checked to 1e-12
//     against the discrete sum);
//   - the parse: the frames (names, θ group joint_frames, zero slots), the default q = ref, the
//     start outside a range accepted with the PD target clamped into it, and the refusals.
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

// configs/mjcf/joint_tree.xml as a JSON tree; the hip also has a PD servo
nlohmann::json tree_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "integrator": "euler", "gravity": [0.8, -0.3, -9.81],
    "bodies": [
      {"name": "torso", "pos": [0.1, 0, 1.2], "quat": [0.9950042, 0, 0.0998334, 0],
       "mass": 3.0, "com": [0.02, 0.01, 0.05], "fullinertia": [0.05, 0.06, 0.03, 0.002, 0, 0.001],
       "joints": [
         {"name": "rootx", "type": "slide", "axis": [1, 0, 0], "damping": 0.2},
         {"name": "rootz", "type": "slide", "axis": [0, 0, 1], "ref": 0.1, "armature": 0.01},
         {"name": "rooty", "type": "hinge", "axis": [0, 1, 0], "pos": [0.03, 0, -0.1],
          "damping": 0.1, "armature": 0.02}]},
      {"name": "thigh", "parent": "torso", "pos": [0, 0.05, -0.2],
       "quat": [0.9800666, 0.1986693, 0, 0], "mass": 1.2, "com": [0, 0, -0.12],
       "fullinertia": [0.012, 0.011, 0.002, 0, 0.0003, 0],
       "joint": {"name": "hip", "axis": [0, -1, 0], "pos": [0, 0, 0.02], "ref": 0.3,
                 "stiffness": 4, "springref": 0.5, "damping": 0.3, "armature": 0.01,
                 "kp": 5, "kv": 0.5, "target": 0.2, "range": [-1, 1], "force_limit": 50}},
      {"name": "leg", "parent": "thigh", "pos": [0.01, 0, -0.3], "mass": 0.8,
       "com": [0.01, 0, -0.1], "fullinertia": [0.006, 0.007, 0.002, 0.0001, 0, 0.0002],
       "joints": [
         {"name": "knee", "axis": [0, -1, 0], "pos": [0, 0, 0.01], "damping": 0.2,
          "armature": 0.005},
         {"name": "knee_twist", "axis": [0.6, 0, 0.8], "pos": [0.02, 0.01, -0.05],
          "stiffness": 2, "springref": -0.2, "damping": 0.1, "armature": 0.004}]},
      {"name": "foot", "parent": "leg", "pos": [0, 0, -0.25],
       "quat": [0.9887711, 0, 0, 0.1494381], "mass": 0.4, "com": [0.03, 0, 0],
       "fullinertia": [0.0005, 0.001, 0.001, 0, 0, 0],
       "joint": {"name": "ankle_slide", "type": "slide", "axis": [1, 0, 0.2], "pos": [0.01, 0, 0],
                 "ref": -0.05, "stiffness": 60, "damping": 1, "armature": 0.01}}],
    "torque_limits": {"enabled": true, "sharpness": 5},
    "sites": [{"name": "toe", "body": "foot", "pos": [0.1, 0, 0]}]
  })");
}

nlohmann::json config_json(const nlohmann::json& model, const std::string& state = "hip.q") {
  return {{"name", "joint_tree"},
          {"model", model},
          {"simulation", {{"dt", 0.002}, {"steps", 10}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", state}, {"target", 0.1}}}}}},
          {"validation", {{"enabled", false}}}};
}

const ExperimentConfig& tree_config() {
  static const ExperimentConfig c = parse_config(config_json(tree_model()));
  return c;
}

// near the default pose (every joint at its ref), kicked: every joint moves, springs stretched
std::vector<double> kicked_state(const Articulated& m) {
  std::vector<double> x(size_t(m.nx()));
  for (int j = 0; j < m.n_dof; ++j) {
    x[size_t(j)] = m.joint_ref[j] + 0.05 * std::sin(j + 1.0);
    x[size_t(m.n_dof + j)] = 0.4 * std::cos(1.3 * j + 0.2);
  }
  return x;
}

// θ with the springs' references and stiffnesses away from zero, so that every slot matters
std::vector<double> test_theta(const Articulated& m, std::vector<double> p) {
  for (int j = 0; j < m.n_dof; ++j)
    if (p[size_t(m.p_joint(j, Articulated::kStiffness))] == 0)
      p[size_t(m.p_joint(j, Articulated::kStiffness))] = 0.5 + 0.1 * j;
  return p;
}

struct JointTreeProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const char* names[] = {"euler", "implicitfast", "rk4"};
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      Articulated m = tree_config().model_state<ArticulatedSetup>().model;
      m.integrator = integ;
      std::vector<double> u(size_t(m.nu()));
      for (int j = 0; j < m.nu(); ++j) u[size_t(j)] = 0.3 * std::sin(0.7 * j + 0.1);
      out.push_back(StepCase<Articulated>{std::string("joint tree ") + names[integ], m,
                                          kicked_state(m), u, test_theta(m, tree_config().theta)});
    }
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    std::vector<RolloutCase<Articulated>> out;
    for (int integ : {int(Articulated::kEuler), int(Articulated::kRk4)}) {
      RolloutCase<Articulated> r;
      r.model = tree_config().model_state<ArticulatedSetup>().model;
      r.model.integrator = integ;
      r.name =
          integ == Articulated::kEuler ? "joint tree euler, 12 steps" : "joint tree rk4, 6 steps";
      r.steps = integ == Articulated::kEuler ? 12 : 6;
      r.checkpoint_every = 5;
      r.x0 = kicked_state(r.model);
      r.p = test_theta(r.model, tree_config().theta);
      const int n = r.model.n_dof;
      r.u.assign(size_t(r.steps * n), 0.0);
      for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.4 * std::cos(0.37 * double(i));
      r.loss.n_terminal = 4;
      const int idx[4] = {1, 2, 5, n + 6};  // rootz, rooty, knee_twist, the slide's velocity
      for (int t = 0; t < 4; ++t)
        r.loss.terminal_index[t] = idx[t], r.loss.terminal_target[t] = 0.05 * t,
        r.loss.terminal_weight[t] = 1.0;
      r.loss.effort_weight = 1e-3;
      out.push_back(r);
    }
    return out;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(JointTree, GradientSuite, ::testing::Types<JointTreeProvider>);

namespace {

TEST(JointTree, FramesDefaultPoseAndSlots) {
  const ExperimentConfig& c = tree_config();
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  ASSERT_FALSE(s.large_tree);
  const Articulated& m = s.model;
  // torso: 2 frames + the body; thigh; leg: 1 frame + the body; foot
  EXPECT_EQ(m.n_bodies, 7);
  EXPECT_EQ(m.n_dof, 7);
  const std::vector<std::string> bodies = {"torso.joint_frame.rootx",
                                           "torso.joint_frame.rootz",
                                           "torso",
                                           "thigh",
                                           "leg.joint_frame.knee",
                                           "leg",
                                           "foot"};
  EXPECT_EQ(s.names.bodies, bodies);
  EXPECT_EQ(s.names.entry, (std::vector<int>{-1, -1, 0, 1, -1, 2, 3}));
  const std::vector<std::string> joints = {"rootx", "rootz",      "rooty",      "hip",
                                           "knee",  "knee_twist", "ankle_slide"};
  EXPECT_EQ(s.names.joints, joints);
  // joint j on body j's chain, in the order given
  const int body_of[7] = {0, 1, 2, 3, 4, 5, 6};
  for (int j = 0; j < 7; ++j) EXPECT_EQ(m.body_of_dof[j], body_of[j]) << j;
  // the frames: the first has the torso's pose, the next and the torso sit on it
  EXPECT_DOUBLE_EQ(c.theta[size_t(m.p_body(0, Articulated::kPosZ))], 1.2);
  EXPECT_EQ(c.theta[size_t(m.p_body(1, Articulated::kPosZ))], 0.0);
  EXPECT_EQ(c.theta[size_t(m.p_body(2, Articulated::kPosZ))], 0.0);
  // the torso's pos slots are the first frame's, named for the torso; the torso's own stay 0
  EXPECT_EQ(c.info.param_names[size_t(m.p_body(0, Articulated::kPosZ))], "torso.pos.z");
  EXPECT_EQ(c.info.param_names[size_t(m.p_body(2, Articulated::kPosZ))], "torso.pos_on_frame.z");
  EXPECT_EQ(c.info.param_names[size_t(m.p_body(3, Articulated::kPosX))], "thigh.pos.x");
  EXPECT_EQ(m.rot[2][0], 1.0);
  EXPECT_EQ(m.parent[3], 2);  // the thigh hangs from the torso itself
  // slots: a frame's mass is a zero slot in group joint_frames; the springs have slots
  const auto& names = c.info.param_names;
  const int fm = m.p_body(0, Articulated::kMass);
  EXPECT_EQ(names[size_t(fm)], "torso.joint_frame.rootx.mass");
  EXPECT_EQ(c.theta[size_t(fm)], 0.0);
  EXPECT_EQ(names[size_t(m.p_joint(3, Articulated::kStiffness))], "hip.stiffness");
  EXPECT_EQ(names[size_t(m.p_joint(3, Articulated::kSpringRef))], "hip.springref");
  EXPECT_EQ(c.theta[size_t(m.p_joint(3, Articulated::kStiffness))], 4.0);
  EXPECT_EQ(c.theta[size_t(m.p_joint(5, Articulated::kSpringRef))], -0.2);
  EXPECT_EQ(c.info.param_units[size_t(m.p_joint(6, Articulated::kStiffness))], "N/m");
  // the default initial q is every joint's ref (MuJoCo's qpos0); gravity's direction
  const std::vector<double> q0 = {0, 0.1, 0, 0.3, 0, 0, -0.05};
  for (int j = 0; j < 7; ++j) EXPECT_EQ(c.x0[size_t(j)], q0[size_t(j)]) << j;
  const double g = std::sqrt(0.8 * 0.8 + 0.3 * 0.3 + 9.81 * 9.81);
  EXPECT_DOUBLE_EQ(c.theta[size_t(m.p_global(Articulated::kGravity))], g);
  EXPECT_DOUBLE_EQ(m.gravity_dir[0], 0.8 / g);
  EXPECT_DOUBLE_EQ(m.gravity_dir[2], -9.81 / g);
  // at q = ref the tree is the one described: the toe site is where the poses put it
  std::vector<double> x = c.x0, p = c.theta;
  double toe[3];
  m.site_position<double>(view(x.data()), view(p.data()), 0, toe);
  std::vector<double> moved = x;
  moved[3] += 0.1;  // the hip turns the toe
  double toe2[3];
  m.site_position<double>(view(moved.data()), view(p.data()), 0, toe2);
  EXPECT_GT(std::fabs(toe2[0] - toe[0]) + std::fabs(toe2[2] - toe[2]), 1e-3);
}

TEST(JointTree, EffectiveModelListsEachBodysJoints) {
  const nlohmann::json m = articulated_model_json(tree_config());
  ASSERT_EQ(m["bodies"].size(), 4u);  // the frames are listed with their body
  EXPECT_EQ(m["bodies"][0]["name"], "torso");
  EXPECT_EQ(m["bodies"][0]["parent"], "world");
  ASSERT_EQ(m["bodies"][0]["joints"].size(), 3u);
  EXPECT_EQ(m["bodies"][0]["joints"][1]["name"], "rootz");
  EXPECT_EQ(m["bodies"][0]["joints"][1]["ref"], 0.1);
  EXPECT_EQ(m["bodies"][0]["pos_m"][2], 1.2);
  EXPECT_EQ(m["bodies"][1]["parent"], "torso");
  EXPECT_EQ(m["bodies"][2]["joints"].size(), 2u);
  EXPECT_EQ(m["bodies"][3]["joint"]["name"], "ankle_slide");
  EXPECT_EQ(m["gravity_direction"].size(), 3u);
}

// a start outside a joint's range is accepted (MuJoCo starts there; the limit pushes back),
// and the PD target the config did not give holds the nearest pose within the range
TEST(JointTree, StartOutsideTheRangeIsAccepted) {
  nlohmann::json j = config_json(tree_model());
  j["model"]["bodies"][1]["joint"].erase("target");
  j["initial_state"] = {{"q", {0, 0.1, 0, 1.4, 0, 0, -0.05}}};  // hip's range is [−1, 1]
  const ExperimentConfig c = parse_config(j);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  EXPECT_EQ(c.x0[3], 1.4);
  EXPECT_EQ(c.theta[size_t(m.p_joint(3, Articulated::kTarget))], 1.0);
}

TEST(JointTree, RefusalsNameTheKey) {
  nlohmann::json both = config_json(tree_model());
  both["model"]["bodies"][0]["joint"] = {{"name", "x"}};
  expect_config_error(both, {"model.bodies[0].joint", "not both"});
  nlohmann::json free_in_list = config_json(tree_model());
  free_in_list["model"]["bodies"][0]["joints"][0]["type"] = "free";
  expect_config_error(free_in_list, {"model.bodies[0].joints[0].type", "only joint"});
  nlohmann::json empty = config_json(tree_model());
  empty["model"]["bodies"][2]["joints"] = nlohmann::json::array();
  expect_config_error(empty, {"model.bodies[2].joints", "non-empty"});
  nlohmann::json negative = config_json(tree_model());
  negative["model"]["bodies"][1]["joint"]["stiffness"] = -1;
  expect_config_error(negative, {"model.bodies[1].joint.stiffness", "out of range"});
  nlohmann::json grav = config_json(tree_model());
  grav["model"]["gravity"] = {0, 9.81};
  expect_config_error(grav, {"model.gravity", "expected 3 numbers"});
}

// one hinge about z with its centre of mass on the axis: gravity exerts no torque, and the
// spring makes a harmonic oscillator, I q̈ = −k (q − q_s), I = I_zz + armature
ExperimentConfig spring_config(double dt, const std::string& integrator) {
  nlohmann::json model = nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 9.81,
    "bodies": [{"name": "disk", "mass": 2.0, "fullinertia": [0.03, 0.03, 0.05, 0, 0, 0],
                "joint": {"name": "spin", "axis": [0, 0, 1], "stiffness": 3.0,
                          "springref": 0.4, "armature": 0.01}}]})");
  model["integrator"] = integrator;
  nlohmann::json j = config_json(model, "spin.q");
  j["simulation"]["dt"] = dt;
  return parse_config(j);
}

// |q_h(T) − q(T)| for the analytic q(t) = q_s + (q₀ − q_s) cos ωt, ω = √(k/I), T = 1 s
double spring_error(double dt, const std::string& integrator) {
  const ExperimentConfig c = spring_config(dt, integrator);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  std::vector<double> x = {1.0, 0.0}, p = c.theta, u = {0.0};
  const int steps = int(std::lround(1.0 / dt));
  for (int k = 0; k < steps; ++k) {
    std::vector<double> xn(size_t(m.nx()));
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    x = xn;
  }
  const double w = std::sqrt(3.0 / 0.06), qs = 0.4;
  return std::fabs(x[0] - (qs + (1.0 - qs) * std::cos(w * 1.0)));
}

TEST(JointTree, SpringOscillatesAtTheAnalyticFrequency) {
  EXPECT_LE(spring_error(1e-3, "rk4"), 1e-9);
  const double e1 = spring_error(2e-3, "euler"), e2 = spring_error(1e-3, "euler"),
               e3 = spring_error(5e-4, "euler");
  std::printf("[ spring ] euler |q_h(1 s) − q(1 s)| at h = 2, 1, 0.5 ms: %.3g %.3g %.3g\n", e1, e2,
              e3);
  EXPECT_GT(e1 / e2, 1.8);
  EXPECT_GT(e2 / e3, 1.8);
  EXPECT_LE(e3, 1e-2);
}

// a slide along world x under gravity (2, 0, −9.81): semi-implicit Euler gives
// v_k = k h g_x, x_k = h² g_x k(k+1)/2, within O(h) of ½ g_x t²
TEST(JointTree, SlideFallsAlongTiltedGravity) {
  nlohmann::json model = nlohmann::json::parse(R"({
    "type": "articulated", "gravity": [2.0, 0, -9.81],
    "bodies": [{"name": "cart", "mass": 1.5, "fullinertia": [0.01, 0.01, 0.01, 0, 0, 0],
                "joint": {"name": "x", "type": "slide", "axis": [1, 0, 0]}}]})");
  const ExperimentConfig c = parse_config(config_json(model, "x.q"));
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  std::vector<double> x = {0.0, 0.0}, p = c.theta, u = {0.0};
  const double h = m.dt;
  const int steps = 500;
  for (int k = 0; k < steps; ++k) {
    std::vector<double> xn(size_t(m.nx()));
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    x = xn;
  }
  EXPECT_NEAR(x[1], steps * h * 2.0, 1e-12);
  EXPECT_NEAR(x[0], h * h * 2.0 * steps * (steps + 1) / 2.0, 1e-12);
  const double T = steps * h;
  EXPECT_NEAR(x[0], 0.5 * 2.0 * T * T, 2.0 * h * T);  // the continuous fall, to O(h)
}

}  // namespace
