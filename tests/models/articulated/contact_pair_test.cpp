// Contact between two bodies (model.pairs, contact.h's pair_contact_forces): spheres and
// capsules as segments with a radius, the ground points' normal law and smoothed Coulomb
// friction on their overlap, equal and opposite on the two bodies. Checked, all in float64:
//   - the closest points of two segments (segment_closest) against a brute-force search over
//     a 2001 × 2001 grid of (s, t), to the grid's spacing, on crossed, skew, parallel and
//     end-to-end segments;
//   - the generic gradient suite (gradient_suite.h: hand (here the dual-number adjoint every
//     model with pairs takes) vs dual ≤ 1e-12, dual vs centered FD per step ≤ 1e-6, rollout vs
//     centered FD ≤ 1e-6 relative + 1e-9) on overlapping sphere–sphere, sphere–capsule and
//     capsule–capsule pairs (one on the world) under euler, implicitfast and rk4;
//   - physics: two spheres on slides driven at each other collide and come back (never
//     passing: the overlap stays below 1 cm), momentum is exchanged equal and opposite (the
//     sum of the two slides' momenta changes by less than 1e-9 kg·m/s, gravity being off);
//   - a model with pairs runs on the CPU's large capacity (with_articulated refuses CUDA for it),
//     and the refusals name their keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config_errors.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// the distance of two segments' closest points by brute force over an n × n grid of (s, t)
double brute_distance(const double* A0, const double* A1, const double* B0, const double* B1,
                      int n) {
  double best = 1e300;
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) {
      const double s = double(i) / n, t = double(j) / n;
      double d2 = 0;
      for (int k = 0; k < 3; ++k) {
        const double dk = A0[k] + s * (A1[k] - A0[k]) - B0[k] - t * (B1[k] - B0[k]);
        d2 += dk * dk;
      }
      best = std::min(best, d2);
    }
  return std::sqrt(best);
}

TEST(ContactPair, SegmentClosestPointsMatchABruteForceSearch) {
  struct Case {
    std::vector<double> a0, a1, b0, b1;
  };
  const std::vector<Case> cases = {
      {{0, 0, 0}, {1, 0, 0}, {0.5, -1, 0.3}, {0.5, 1, 0.3}},         // crossed
      {{0, 0, 0}, {1, 0.2, 0.1}, {-0.3, 0.5, 1}, {0.8, -0.4, 0.2}},  // skew
      {{0, 0, 0}, {1, 0, 0}, {0.3, 0.2, 0}, {1.5, 0.2, 0}},          // parallel, overlapping
      {{0, 0, 0}, {1, 0, 0}, {1.3, 0.1, 0}, {2.0, 0.4, 0}},          // end to end
      {{0, 0, 0}, {0, 0, 1}, {0.2, -3, 2}, {0.2, 3, 2.5}},           // clamped at A's end
  };
  for (const Case& c : cases) {
    double s, t;
    segment_closest(c.a0.data(), c.a1.data(), false, c.b0.data(), c.b1.data(), false, s, t);
    double d2 = 0;
    for (int k = 0; k < 3; ++k) {
      const double dk = c.a0[k] + s * (c.a1[k] - c.a0[k]) - c.b0[k] - t * (c.b1[k] - c.b0[k]);
      d2 += dk * dk;
    }
    const double brute = brute_distance(c.a0.data(), c.a1.data(), c.b0.data(), c.b1.data(), 2000);
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, 1.0);
    EXPECT_GE(t, 0.0);
    EXPECT_LE(t, 1.0);
    EXPECT_LE(std::sqrt(d2), brute + 1e-12);  // never worse than the grid
    EXPECT_NEAR(std::sqrt(d2), brute, 2e-3);  // and the grid is within its spacing of it
  }
  // a point against a segment, and two points
  const double p[3] = {0.4, 0.3, 0}, a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0};
  double s, t;
  segment_closest(p, p, true, a0, a1, false, s, t);
  EXPECT_EQ(s, 0.0);
  EXPECT_NEAR(t, 0.4, 1e-15);
  segment_closest(p, p, true, a0, a0, true, s, t);
  EXPECT_EQ(s + t, 0.0);
}

// two bodies on slides along x (left, right) and a third on a hinge, with pairs between them:
// sphere–sphere (left, right), sphere–capsule (right, arm), capsule–capsule (arm, a capsule
// fixed in the world)
nlohmann::json pair_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 0,
    "bodies": [
      {"name": "left", "pos": [-0.3, 0, 0], "mass": 1.0,
       "fullinertia": [0.004, 0.004, 0.004, 0, 0, 0],
       "joint": {"name": "xl", "type": "slide", "axis": [1, 0, 0], "damping": 0.1}},
      {"name": "right", "pos": [0.3, 0, 0], "mass": 1.5,
       "fullinertia": [0.006, 0.006, 0.006, 0, 0, 0],
       "joint": {"name": "xr", "type": "slide", "axis": [1, 0, 0]}},
      {"name": "arm", "pos": [0.3, 0, 0.4], "mass": 0.8, "com": [0, 0, -0.15],
       "fullinertia": [0.01, 0.01, 0.002, 0, 0, 0],
       "joint": {"name": "swing", "axis": [0, 1, 0]}}],
    "contact": {"stiffness": 20000, "damping": 20, "smoothing": 0.002, "friction": 0.8,
                "slip_velocity": 0.05},
    "pairs": [
      {"name": "balls", "geoms": [{"body": "left", "type": "sphere", "radius": 0.1},
                                  {"body": "right", "type": "sphere", "radius": 0.1}]},
      {"name": "ball_arm", "geoms": [{"body": "right", "type": "sphere", "radius": 0.1},
                                     {"body": "arm", "type": "capsule", "from": [0, 0, -0.05],
                                      "to": [0.02, 0, -0.3], "radius": 0.04}]},
      {"name": "arm_post", "geoms": [{"body": "arm", "type": "capsule", "from": [0, 0, -0.05],
                                      "to": [0.02, 0, -0.3], "radius": 0.04},
                                     {"body": "world", "type": "capsule",
                                      "from": [0.45, -0.2, 0.2], "to": [0.45, 0.2, 0.25],
                                      "radius": 0.05}]}]
  })");
}

nlohmann::json config_json(const nlohmann::json& model, int steps = 10) {
  return {{"name", "contact_pairs"},
          {"model", model},
          {"simulation", {{"dt", 0.001}, {"steps", steps}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", "xl.q"}, {"target", 0.0}}}}}},
          {"validation", {{"enabled", false}}}};
}

const ExperimentConfig& pair_config() {
  static const ExperimentConfig c = parse_config(config_json(pair_model()));
  return c;
}

// every pair overlapping by a few mm, everything moving: xl, xr put the balls 3 mm into each
// other; the arm's angle puts its capsule into the ball and the post
std::vector<double> overlap_state(const ArticulatedLarge& m, const std::vector<double>& p,
                                  double swing) {
  std::vector<double> x = {0.103, -0.103, swing, 0.3, -0.4, 0.7};
  (void)m, (void)p;
  return x;
}

struct PairProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    std::vector<StepCase<ArticulatedLarge>> out;
    const char* names[] = {"euler", "implicitfast", "rk4"};
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      ArticulatedLarge m = pair_config().model_state<ArticulatedSetup>().large;
      m.integrator = integ;
      const std::vector<double> x = overlap_state(m, pair_config().theta, -0.45);
      out.push_back(StepCase<ArticulatedLarge>{
          std::string("pairs ") + names[integ], m, x, {0.5, -0.3, 0.2}, pair_config().theta, 1e-2});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    RolloutCase<ArticulatedLarge> r;
    r.name = "pairs euler, 15 steps through the collision";
    r.model = pair_config().model_state<ArticulatedSetup>().large;
    r.p = pair_config().theta;
    r.steps = 15;
    r.checkpoint_every = 4;
    r.x0 = {0.095, -0.095, -0.45, 1.0, -1.0, 0.5};
    r.u.assign(size_t(r.steps * 3), 0.0);
    for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.2 * std::cos(0.5 * double(i));
    r.loss.n_terminal = 3;
    const int idx[3] = {0, 2, 4};
    for (int t = 0; t < 3; ++t)
      r.loss.terminal_index[t] = idx[t], r.loss.terminal_target[t] = 0.01 * t,
      r.loss.terminal_weight[t] = 1.0;
    r.loss.effort_weight = 1e-3;
    // ε = 3·10⁻⁶ (fd_scale 3): well inside the 2 mm smoothing, and above the loss's rounding
    // through 15 stiff contact steps (k = 2·10⁴ N/m), which at ε = 10⁻⁶ leaves ~2·10⁻⁹ of noise
    // in a gradient of 6·10⁻⁷ (the armature of xr: FD at ε = 10⁻⁶ and 3·10⁻⁷ bracket the
    // dual-number value, −5.715 and −5.679 around −5.698 ·10⁻⁷)
    r.fd_scale = 3.0;
    return {r};
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(ContactPair, GradientSuite, ::testing::Types<PairProvider>);

namespace {

TEST(ContactPair, ModelRunsOnTheLargeCapacity) {
  const ArticulatedSetup& s = pair_config().model_state<ArticulatedSetup>();
  EXPECT_TRUE(s.large_tree);
  EXPECT_FALSE(s.legged_tree);
  EXPECT_EQ(s.large.n_pairs, 3);
  EXPECT_EQ(s.large.pair_body[2][1], -1);  // the post is in the world
  EXPECT_EQ(s.large.num_contacts(), 3);
  EXPECT_EQ(s.names.pairs[1], "ball_arm");
}

// the balls 3 mm apart at the surfaces, then the slides driven at ±1 m/s
TEST(ContactPair, TwoSpheresCollideAndComeBack) {
  nlohmann::json model = pair_model();
  model["pairs"] = nlohmann::json::array({model["pairs"][0]});
  model["bodies"][2]["pos"] = {0.3, 0, 2.0};  // the arm well out of the way
  nlohmann::json j = config_json(model, 500);
  const ExperimentConfig c = parse_config(j);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  std::vector<double> x = {0.0, 0.0, 0.0, 1.0, -1.0, 0.0}, p = c.theta, u(3, 0.0);
  p[size_t(m.p_joint(0, Articulated::kDamping))] = 0;  // no loss but the contact's
  double deepest = 0;
  const double momentum0 = 1.0 * x[3] + 1.5 * x[4];
  for (int k = 0; k < 500; ++k) {
    std::vector<double> xn(size_t(m.nx()));
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    x = xn;
    deepest = std::max(deepest, m.penetration<double>(view(x.data()), view(p.data())));
  }
  const double momentum1 = 1.0 * x[3] + 1.5 * x[4];
  std::printf(
      "[ two spheres ] after 0.5 s: x_left %.4f m, x_right %.4f m, v %.3f, %.3f m/s, "
      "deepest overlap %.2f mm\n",
      -0.3 + x[0], 0.3 + x[1], x[3], x[4], 1e3 * deepest);
  EXPECT_LT(x[3], 0.0) << "the left ball should come back";
  EXPECT_GT(x[4], 0.0) << "the right ball should come back";
  EXPECT_LT(-0.3 + x[0], 0.3 + x[1]) << "the balls passed through each other";
  EXPECT_GT(deepest, 0.0);
  EXPECT_LT(deepest, 0.01);
  EXPECT_NEAR(momentum1, momentum0, 1e-9);
}

TEST(ContactPair, RefusalsNameTheKey) {
  nlohmann::json same = config_json(pair_model());
  same["model"]["pairs"][0]["geoms"][1]["body"] = "left";
  expect_config_error(same, {"model.pairs[0].geoms", "same body"});
  nlohmann::json no_to = config_json(pair_model());
  no_to["model"]["pairs"][1]["geoms"][1].erase("to");
  expect_config_error(no_to, {"model.pairs[1].geoms[1].to", "capsule"});
  nlohmann::json bad_body = config_json(pair_model());
  bad_body["model"]["pairs"][0]["geoms"][0]["body"] = "nope";
  expect_config_error(bad_body, {"model.pairs[0].geoms[0].body", "'nope'"});
  nlohmann::json one = config_json(pair_model());
  one["model"]["pairs"][0]["geoms"] = nlohmann::json::array({one["model"]["pairs"][0]["geoms"][0]});
  expect_config_error(one, {"model.pairs[0].geoms", "two geoms"});
}

}  // namespace
