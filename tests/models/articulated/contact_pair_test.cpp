// Contact between two bodies (model.pairs, contact.h's pair_contact_forces, pair_geometry.h):
// spheres and capsules as segments with a radius, planes and boxes, the ground points' normal
// law and smoothed Coulomb friction on their overlap, equal and opposite on the two bodies.
// Checked, all in float64:
//   - the closest points of two segments (segment_closest) against a brute-force search over
//     a 2001 × 2001 grid of (s, t), to the grid's spacing, on crossed, skew, parallel and
//     end-to-end segments;
//   - a sphere against a tilted plane (gap, normal, contact point in closed form); a point
//     against a rotated box (outside: the distance to the clamp; inside: the nearest face); a
//     capsule against a box against a brute-force scan of its axis (20001 points) on skew,
//     parallel, edge-crossing and half-inside cases, exact to the scan's spacing wherever
//     neither end nor the scan is inside the box, and a penetrating core recognized as one;
//   - the generic gradient suite (gradient_suite.h: hand (here the dual-number adjoint every
//     model with pairs takes) vs dual ≤ 1e-12, dual vs centered FD per step ≤ 1e-6, rollout vs
//     centered FD ≤ 1e-6 relative + 1e-9) on overlapping sphere–sphere, sphere–capsule and
//     capsule–capsule pairs (one on the world), and on sphere–plane (a tilted world wall),
//     sphere–box (a rotated world block) and capsule–box (a box on a moving body) pairs (the wall
//     with a friction of its own), under euler, implicitfast and rk4;
//   - physics: two spheres on slides driven at each other collide and come back (never
//     passing: the overlap stays below 1 cm), momentum is exchanged equal and opposite (the
//     sum of the two slides' momenta changes by less than 1e-9 kg·m/s, gravity being off);
//   - the broad phase leaves out pairs beyond reach (40 smoothing widths) and only those;
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

// a rotation about y by angle a, row-major
std::vector<double> rot_y(double a) {
  return {std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)};
}

PairSide<double> sphere_side(const std::vector<double>& c, double r) {
  PairSide<double> s;
  s.shape = kPairSphere;
  for (int i = 0; i < 3; ++i) s.e0[i] = s.e1[i] = c[size_t(i)];
  s.r = r;
  return s;
}

PairSide<double> capsule_side(const std::vector<double>& a, const std::vector<double>& b,
                              double r) {
  PairSide<double> s;
  s.shape = kPairCapsule;
  for (int i = 0; i < 3; ++i) s.e0[i] = a[size_t(i)], s.e1[i] = b[size_t(i)];
  s.r = r;
  return s;
}

PairSide<double> box_side(const std::vector<double>& c, const std::vector<double>& half,
                          const std::vector<double>& R) {
  PairSide<double> s;
  s.shape = kPairBox;
  for (int i = 0; i < 3; ++i) s.e0[i] = s.e1[i] = c[size_t(i)], s.half[i] = half[size_t(i)];
  for (int i = 0; i < 9; ++i) s.R[i] = R[size_t(i)];
  return s;
}

TEST(ContactPair, SphereAgainstATiltedPlane) {
  PairSide<double> plane;
  plane.shape = kPairPlane;
  const double nn = std::sqrt(1 + 0.09);
  const double o[3] = {0.2, 0.1, -0.3}, nv[3] = {-1 / nn, 0, 0.3 / nn};
  for (int i = 0; i < 3; ++i) plane.e0[i] = o[i], plane.e1[i] = nv[i];
  const std::vector<double> c = {0.17, -0.4, -0.25};
  const double r = 0.05;
  const double h = nv[0] * (c[0] - o[0]) + nv[1] * (c[1] - o[1]) + nv[2] * (c[2] - o[2]);
  double xc[3], n[3];
  // the sphere on side 0, then on side 1 (the normal turns)
  EXPECT_NEAR(pair_sides_geometry(sphere_side(c, r), plane, xc, n), r - h, 1e-15);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(n[i], nv[i], 1e-15);
    EXPECT_NEAR(xc[i], c[size_t(i)] - 0.5 * (r + h) * nv[i], 1e-15);
  }
  EXPECT_NEAR(pair_sides_geometry(plane, sphere_side(c, r), xc, n), r - h, 1e-15);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(n[i], -nv[i], 1e-15);
}

// the gap of a point p (world) to a box, brute force: outside, the distance to the clamp of its
// box-frame coordinates; inside, minus the distance to the nearest face
double box_gap_reference(const double* p, const PairSide<double>& box) {
  double l[3], q[3], d2 = 0, inner = 1e300;
  bool inside = true;
  for (int i = 0; i < 3; ++i) {
    l[i] = 0;
    for (int k = 0; k < 3; ++k) l[i] += box.R[3 * k + i] * (p[k] - box.e0[k]);
    q[i] = std::clamp(l[i], -box.half[i], box.half[i]);
    inside = inside && std::fabs(l[i]) <= box.half[i];
    d2 += (l[i] - q[i]) * (l[i] - q[i]);
    inner = std::min(inner, box.half[i] - std::fabs(l[i]));
  }
  return inside ? -inner : std::sqrt(d2);
}

TEST(ContactPair, PointAgainstARotatedBox) {
  const PairSide<double> box = box_side({0.1, -0.2, 0.3}, {0.2, 0.1, 0.05}, rot_y(0.4));
  const std::vector<std::vector<double>> points = {
      {0.5, -0.2, 0.3}, {0.1, 0.2, 0.3}, {0.4, 0.2, 0.6}, {0.12, -0.18, 0.31}, {0.2, -0.2, 0.3}};
  for (const auto& c : points) {
    double xc[3], n[3];
    const double d = pair_sides_geometry(sphere_side(c, 0.03), box, xc, n);
    const double g = box_gap_reference(c.data(), box);
    EXPECT_NEAR(d, 0.03 - g, 1e-12);
    EXPECT_NEAR(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-12);
    // the surface point c − g n lies on the box's surface
    const double s[3] = {c[0] - g * n[0], c[1] - g * n[1], c[2] - g * n[2]};
    EXPECT_NEAR(box_gap_reference(s, box), 0.0, 1e-12);
  }
}

TEST(ContactPair, CapsuleAgainstABoxMatchesABruteForceScan) {
  const PairSide<double> box = box_side({0, 0, 0}, {0.2, 0.1, 0.05}, rot_y(0.3));
  struct Case {
    std::vector<double> a, b;
    bool exact;  // false: the core crosses the box with both ends outside (an approximation)
  };
  const std::vector<Case> cases = {
      {{0.5, -0.3, 0.2}, {-0.4, 0.4, 0.35}, true},    // skew, above an edge
      {{-0.15, 0.0, 0.12}, {0.15, 0.0, 0.21}, true},  // nearly parallel to the top face
      {{0.3, 0.3, 0.0}, {0.3, -0.3, 0.0}, true},      // beside an end face, crossing y
      {{0.0, 0.0, 0.02}, {0.0, 0.0, 0.4}, true},      // one end inside
      {{-0.5, 0.02, 0.0}, {0.5, 0.02, 0.01}, false},  // through the box, both ends outside
  };
  for (const Case& c : cases) {
    double xc[3], n[3];
    const double r = 0.02;
    const double d = pair_sides_geometry(capsule_side(c.a, c.b, r), box, xc, n);
    double brute = 1e300;
    const int N = 20000;
    for (int i = 0; i <= N; ++i) {
      const double s = double(i) / N;
      const double p[3] = {c.a[0] + s * (c.b[0] - c.a[0]), c.a[1] + s * (c.b[1] - c.a[1]),
                           c.a[2] + s * (c.b[2] - c.a[2])};
      brute = std::min(brute, box_gap_reference(p, box));
    }
    const double g = r - d;
    EXPECT_NEAR(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-12);
    if (c.exact) {
      EXPECT_LE(g, brute + 1e-12);  // never worse than the scan
      EXPECT_NEAR(g, brute, 1e-4);  // and the scan within its spacing of it
    } else {
      EXPECT_LT(g, 0.0) << "the core through the box penetrates";
      EXPECT_GE(g, brute - 1e-12);
    }
  }
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

// the model's first joint's position as the loss's terminal state
nlohmann::json config_json(const nlohmann::json& model, int steps = 10) {
  const nlohmann::json& b0 = model["bodies"][0];
  const std::string first =
      (b0.contains("joints") ? b0["joints"][0] : b0["joint"])["name"].get<std::string>();
  return {{"name", "contact_pairs"},
          {"model", model},
          {"simulation", {{"dt", 0.001}, {"steps", steps}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", first + ".q"}, {"target", 0.0}}}}}},
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

// a pair model's step cases under euler, implicitfast and rk4 at state x and controls u (FD scale
// 1e-2: the 2 mm smoothing)
std::vector<StepCase<ArticulatedLarge>> pair_step_cases(const ExperimentConfig& c,
                                                        const std::string& name,
                                                        const std::vector<double>& x,
                                                        const std::vector<double>& u) {
  std::vector<StepCase<ArticulatedLarge>> out;
  const char* names[] = {"euler", "implicitfast", "rk4"};
  for (int integ :
       {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
    ArticulatedLarge m = c.model_state<ArticulatedSetup>().large;
    m.integrator = integ;
    out.push_back(StepCase<ArticulatedLarge>{name + " " + names[integ], m, x, u, c.theta, 1e-2});
  }
  return out;
}

// a pair model's euler rollout case: 15 steps checkpointed every 4 from x0, controls
// 0.2 cos(0.5 i), terminal terms ½ (x_T[terminal[t]] − 0.01 t)² and effort 1e-3. ε = 3·10⁻⁶
// (fd_scale 3): well inside the 2 mm smoothing, and above the loss's rounding through 15 stiff
// contact steps (k = 2·10⁴ N/m), which at ε = 10⁻⁶ leaves ~2·10⁻⁹ of noise in a gradient of
// 6·10⁻⁷ (PairProvider's armature of xr: FD at ε = 10⁻⁶ and 3·10⁻⁷ bracket the dual-number
// value, −5.715 and −5.679 around −5.698 ·10⁻⁷)
RolloutCase<ArticulatedLarge> pair_rollout_case(const ExperimentConfig& c, const std::string& name,
                                                const std::vector<double>& x0,
                                                const std::vector<int>& terminal) {
  RolloutCase<ArticulatedLarge> r;
  r.name = name;
  r.model = c.model_state<ArticulatedSetup>().large;
  r.p = c.theta;
  r.steps = 15;
  r.checkpoint_every = 4;
  r.x0 = x0;
  r.u.assign(size_t(r.steps * r.model.nu()), 0.0);
  for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.2 * std::cos(0.5 * double(i));
  r.loss.n_terminal = int(terminal.size());
  for (int t = 0; t < r.loss.n_terminal; ++t)
    r.loss.terminal_index[t] = terminal[size_t(t)], r.loss.terminal_target[t] = 0.01 * t,
    r.loss.terminal_weight[t] = 1.0;
  r.loss.effort_weight = 1e-3;
  r.fd_scale = 3.0;
  return r;
}

struct PairProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    const ArticulatedLarge& m = pair_config().model_state<ArticulatedSetup>().large;
    return pair_step_cases(pair_config(), "pairs", overlap_state(m, pair_config().theta, -0.45),
                           {0.5, -0.3, 0.2});
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    return {pair_rollout_case(pair_config(), "pairs euler, 15 steps through the collision",
                              {0.095, -0.095, -0.45, 1.0, -1.0, 0.5}, {0, 2, 4})};
  }
};

// a cart on a planar root (slides x and z, a hinge about y) carrying a box and a sphere, and an
// arm on a hinge hanging a capsule onto the box: the sphere against a tilted world wall and a
// rotated world block, the capsule against the cart's box (a box that moves and turns). The slip
// speed v_s = 0.5 m/s keeps friction's viscous branch μ N / v_s (about 80 N·s/m at these
// depths) within the explicit step's stability on the sphere's effective mass (h μ N / (v_s m)
// ≈ 0.2); at 0.05 m/s it is not, the tangential velocity rings from step to step and the
// rollout's loss is rough on the 10⁻⁶ scale of the finite differences.
nlohmann::json solid_pair_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 0,
    "bodies": [
      {"name": "cart", "mass": 1.2, "fullinertia": [0.01, 0.012, 0.01, 0, 0, 0],
       "joints": [{"name": "cx", "type": "slide", "axis": [1, 0, 0], "damping": 0.1},
                  {"name": "cz", "type": "slide", "axis": [0, 0, 1]},
                  {"name": "cr", "axis": [0, 1, 0]}]},
      {"name": "arm", "pos": [-0.03, 0, 0.35], "mass": 0.5, "com": [0, 0, -0.1],
       "fullinertia": [0.004, 0.004, 0.001, 0, 0, 0],
       "joint": {"name": "swing", "axis": [0, 1, 0]}}],
    "contact": {"stiffness": 20000, "damping": 20, "smoothing": 0.002, "friction": 0.8,
                "slip_velocity": 0.5},
    "pairs": [
      {"name": "arm_box", "geoms": [
        {"body": "arm", "type": "capsule", "from": [0, 0, 0], "to": [0.03, 0, -0.2364],
         "radius": 0.03},
        {"body": "cart", "type": "box", "size": [0.1, 0.05, 0.08], "quat": [0.995, 0, 0.0998, 0]}]},
      {"name": "ball_wall", "friction": 0.3, "geoms": [
        {"body": "cart", "type": "sphere", "pos": [0.15, 0, 0], "radius": 0.04},
        {"body": "world", "type": "plane", "pos": [0.1927, 0, 0], "normal": [-1, 0, 0.3]}]},
      {"name": "block_ball", "geoms": [
        {"body": "world", "type": "box", "pos": [0.15, 0, -0.084], "size": [0.05, 0.05, 0.04],
         "quat": [0.995, 0, 0.0998, 0]},
        {"body": "cart", "type": "sphere", "pos": [0.15, 0, 0], "radius": 0.04}]}]
  })");
}

const ExperimentConfig& solid_pair_config() {
  static const ExperimentConfig c = parse_config(config_json(solid_pair_model()));
  return c;
}

// q = (cx, cz, cr, swing), q̇: every pair a few mm deep, everything moving
const std::vector<double> kSolidState = {0.002, -0.001, 0.03, 0.05, 0.3, -0.2, 0.5, 0.4};

struct SolidPairProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    return pair_step_cases(solid_pair_config(), "plane and box pairs", kSolidState,
                           {0.5, -0.3, 0.2, 0.1});
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    return {pair_rollout_case(solid_pair_config(), "plane and box pairs euler, 15 steps in contact",
                              kSolidState, {0, 2, 3})};
  }
};

// the solid pairs' state penetrates each pair (so that the suite checks contact, not free flight)
TEST(ContactPair, SolidPairStatePenetratesEveryPair) {
  const ArticulatedLarge& m = solid_pair_config().model_state<ArticulatedSetup>().large;
  const std::vector<double>& p = solid_pair_config().theta;
  ASSERT_EQ(m.n_pairs, 3);
  EXPECT_EQ(m.pair_shape[0][1], kPairBox);
  EXPECT_EQ(m.pair_shape[1][1], kPairPlane);
  EXPECT_EQ(m.pair_shape[2][0], kPairBox);
  // the wall's own friction 0.3 as a ratio to contact.friction 0.8; the others follow it
  EXPECT_DOUBLE_EQ(m.pair_friction_scale[1], 0.3 / 0.8);
  EXPECT_EQ(m.pair_friction_scale[0], 1.0);
  const std::vector<std::string>& names =
      solid_pair_config().model_state<ArticulatedSetup>().names.pairs;
  ArticulatedLarge::Kin<double> K;
  m.forward_kinematics(kSolidState.data(), view(p.data()), K);
  for (int c = 0; c < m.n_pairs; ++c) {
    double xc[3], n[3];
    const double depth = pair_geometry<ArticulatedLarge, double>(m, K, c, xc, n);
    std::printf("[ solid pairs ] %s: depth %.2f mm\n", names[size_t(c)].c_str(), 1e3 * depth);
    EXPECT_GT(depth, 1e-3);
    EXPECT_LT(depth, 5e-3);
  }
}

}  // namespace

namespace {
using PairProviders = ::testing::Types<PairProvider, SolidPairProvider>;
}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(ContactPair, GradientSuite, PairProviders);

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

// the broad phase (contact.h, pair_in_reach): a pair is left out of the step when its sides'
// bounding spheres (or a sphere and a plane) are more than kPairReach smoothing widths apart,
// where its force is below e^{−40} of its scale; within that it is evaluated
TEST(ContactPair, PairsBeyondReachAreLeftOut) {
  const ArticulatedLarge& m = pair_config().model_state<ArticulatedSetup>().large;
  const std::vector<double>& p = pair_config().theta;
  const double w = p[size_t(m.p_global(Articulated::kContactSmoothing))];
  auto in_reach = [&](const ArticulatedLarge& model, const std::vector<double>& q, int c) {
    ArticulatedLarge::Kin<double> K;
    model.forward_kinematics(q.data(), view(p.data()), K);
    return pair_in_reach<ArticulatedLarge, double>(model, K, c, w);
  };
  // the balls (radius 0.1 at x = ∓0.3 + q): their surfaces 0.4 − q_r + q_l apart; reach 40 w
  const double reach = kPairReach * w;
  EXPECT_FALSE(in_reach(m, {0.0, 0.0, -0.45}, 0));
  EXPECT_FALSE(in_reach(m, {0.2 - 0.5 * reach - 1e-4, -(0.2 - 0.5 * reach - 1e-4), 2.0}, 0));
  EXPECT_TRUE(in_reach(m, {0.2 - 0.5 * reach + 1e-4, -(0.2 - 0.5 * reach + 1e-4), 2.0}, 0));
  // the ball against the tilted wall: in reach at the test state, not with the cart 0.5 m away
  const ArticulatedLarge& sm = solid_pair_config().model_state<ArticulatedSetup>().large;
  EXPECT_TRUE(in_reach(sm, kSolidState, 1));
  std::vector<double> far = kSolidState;
  far[0] = -0.5;
  EXPECT_FALSE(in_reach(sm, far, 1));
  // left out, the pair adds nothing; within reach at −30 w its force is e^{−30}-small, not 0
  std::vector<double> xs = {0.2 - 15 * w, -(0.2 - 15 * w), 2.0, 0, 0, 0}, u(3, 0.0), xn(6);
  auto step_v = [&](const std::vector<double>& x) {
    auto XN = view(xn.data());
    m.step<double>(0, view(x.data()), view(u.data()), view(p.data()), XN);
    return xn[3];
  };
  EXPECT_NE(step_v(xs), 0.0);
  EXPECT_LT(std::fabs(step_v(xs)), 1e-9);
  xs[0] = 0.2 - 0.6 * reach, xs[1] = -xs[0];
  EXPECT_EQ(step_v(xs), 0.0);
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
  // planes and boxes: their keys, and the shapes a pair may join
  nlohmann::json two_solids = config_json(solid_pair_model());
  two_solids["model"]["pairs"][2]["geoms"][1] = two_solids["model"]["pairs"][0]["geoms"][1];
  expect_config_error(two_solids, {"model.pairs[2].geoms", "two planes or boxes"});
  nlohmann::json plane_capsule = config_json(solid_pair_model());
  plane_capsule["model"]["pairs"][1]["geoms"][0] = plane_capsule["model"]["pairs"][0]["geoms"][0];
  expect_config_error(plane_capsule, {"model.pairs[1].geoms", "end caps"});
  nlohmann::json no_normal = config_json(solid_pair_model());
  no_normal["model"]["pairs"][1]["geoms"][1].erase("normal");
  expect_config_error(no_normal, {"model.pairs[1].geoms[1].normal", "required"});
  nlohmann::json zero_normal = config_json(solid_pair_model());
  zero_normal["model"]["pairs"][1]["geoms"][1]["normal"] = {0, 0, 0};
  expect_config_error(zero_normal, {"model.pairs[1].geoms[1].normal", "zero"});
  nlohmann::json flat_box = config_json(solid_pair_model());
  flat_box["model"]["pairs"][0]["geoms"][1]["size"] = {0.1, 0, 0.08};
  expect_config_error(flat_box, {"model.pairs[0].geoms[1].size"});
  nlohmann::json no_friction = config_json(solid_pair_model());
  no_friction["model"]["contact"]["friction"] = 0.0;
  expect_config_error(no_friction, {"model.contact.friction", "model.pairs[1].friction"});
  nlohmann::json box_radius = config_json(solid_pair_model());
  box_radius["model"]["pairs"][0]["geoms"][1]["radius"] = 0.01;
  expect_config_error(box_radius, {"model.pairs[0].geoms[1]", "radius"});
}

}  // namespace

namespace {

// visit_contact_flags (one kinematics pass for all contacts, what the rollouts' diagnostics
// call) gives every contact the flag in_contact gives it alone, on states where some contacts
// touch and others do not
TEST(ContactPair, OneKinematicsPassFlagsEveryContactAsInContactDoes) {
  for (const ExperimentConfig* c : {&pair_config(), &solid_pair_config()}) {
    const ArticulatedLarge& m = c->model_state<ArticulatedSetup>().large;
    const auto p = view(c->theta.data());
    ASSERT_GT(m.num_contacts(), 1);
    int touching = 0, clear = 0;
    for (int s = 0; s < 7; ++s) {
      std::vector<double> x(size_t(m.nx()), 0.0);
      if (c == &solid_pair_config()) {
        x.assign(kSolidState.begin(), kSolidState.end());
        for (double& xi : x) xi *= 1.0 + 0.4 * (s - 3);  // from deep overlap to clear
      } else {
        x = overlap_state(m, c->theta, 0.1 * (s - 3));
        x[0] += 0.002 * s, x[1] -= 0.002 * s;  // the balls 3 mm into each other to 9 mm apart
      }
      std::vector<int> visited(size_t(m.num_contacts()), -1);
      visit_contact_flags<double>(m, view(x.data()), p,
                                  [&](int k, bool in) { visited[size_t(k)] = in; });
      for (int k = 0; k < m.num_contacts(); ++k) {
        const bool alone = m.in_contact<double>(view(x.data()), p, k);
        EXPECT_EQ(visited[size_t(k)], int(alone)) << "state " << s << ", contact " << k;
        (alone ? touching : clear) += 1;
      }
    }
    EXPECT_GT(touching, 0);
    EXPECT_GT(clear, 0);
  }
}

}  // namespace
