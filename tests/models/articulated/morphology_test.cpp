// Body positions as θ slots (<body>.pos.x|y|z, the link offsets: a morphology variable;
// kinematics.h). Every articulated gradient suite now covers them (θ includes them); here, in
// float64:
//   - physics against the closed form: a pendulum whose bob hangs at pos (0, 0, −L) below its
//     hinge swings at ω² = m g L / (m L² + I) for small angles, so q(T) = q0 cos ωT; the
//     adjoint's ∂q(T)/∂L (rk4 at h = 1 ms, 2 s) matches d/dL of it to 1e-6 relative, and
//     euler's converges to it at first order in h (error ratio ≥ 1.8 per halving);
//   - the slots: names (a body's own pos, a multi-joint body's on its first frame, the frames
//     that stay at 0), units, ranges, the effective model's pos_m reading θ, a variable and a
//     batch sweep over a link offset.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "articulated_steps.h"
#include "steer/models/articulated.h"

using namespace steer;
using steer::testing::held_run;
using steer::testing::HeldRun;

namespace {

constexpr double kMass = 2.0, kInertia = 1e-3, kG = 9.81;

// a hinge about y at the origin and a bob on a fixed body at pos (0, 0, −L)
ExperimentConfig pendulum(double L, const std::string& integrator, double dt, double T) {
  nlohmann::json model = nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 9.81,
    "bodies": [
      {"name": "arm", "mass": 1e-9, "fullinertia": [1e-9, 1e-9, 1e-9, 0, 0, 0],
       "joint": {"name": "swing", "axis": [0, 1, 0]}},
      {"name": "bob", "parent": "arm", "mass": 2.0,
       "fullinertia": [1e-3, 1e-3, 1e-3, 0, 0, 0], "joint": null}],
    "torque_limits": {"enabled": false}
  })");
  model["integrator"] = integrator;
  model["bodies"][1]["pos"] = {0.0, 0.0, -L};
  return parse_config(
      {{"name", "pendulum"},
       {"model", model},
       {"simulation", {{"dt", dt}, {"steps", int(std::lround(T / dt))}, {"precision", "float64"}}},
       {"loss", {{"terminal", {{{"state", "swing.q"}, {"target", 0.0}}}}}},
       {"validation", {{"enabled", false}}}});
}

// q(T) and ∂q(T)/∂L (L = −bob.pos.z) by the model's step and adjoint from q0 at rest
void swing(const ExperimentConfig& c, double q0, double& qT, double& dqT_dL) {
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  std::vector<double> x0(size_t(m.nx()), 0.0);
  x0[0] = q0;
  const HeldRun r = held_run(m, x0, {0.0}, c.theta, c.steps, 0);
  qT = r.xs[size_t(c.steps * m.nx())];
  dqT_dL = -r.grad_p[size_t(c.info.param_index("bob.pos.z"))];
}

// d/dL of q0 cos ωT, ω² = m g L / (m L² + I)
double closed_form_slope(double L, double q0, double T) {
  const double J = kMass * L * L + kInertia, w = std::sqrt(kMass * kG * L / J);
  const double dw = kMass * kG * (kInertia - kMass * L * L) / (2 * w * J * J);
  return -q0 * std::sin(w * T) * T * dw;
}

TEST(Morphology, PendulumLengthGradientMatchesTheClosedForm) {
  const double L = 0.6, q0 = 1e-3, T = 2.0;
  const double exact = closed_form_slope(L, q0, T);
  double qT, g;
  swing(pendulum(L, "rk4", 1e-3, T), q0, qT, g);
  EXPECT_NEAR(g, exact, 1e-6 * std::fabs(exact)) << "rk4";
  std::printf("[ figures ] rk4, h = 1 ms: dq(T)/dL %.9g, closed form %.9g (relative %.3g)\n", g,
              exact, std::fabs(g - exact) / std::fabs(exact));
  double prev = 0;
  for (double dt : {1e-3, 5e-4, 2.5e-4}) {
    swing(pendulum(L, "euler", dt, T), q0, qT, g);
    const double err = std::fabs(g - exact) / std::fabs(exact);
    std::printf("[ figures ] euler, h = %g s: dq(T)/dL relative error %.3g\n", dt, err);
    if (prev > 0) {
      EXPECT_GT(prev / err, 1.8) << "euler at h = " << dt;
    }
    prev = err;
  }
  EXPECT_LT(prev, 2e-2);
}

TEST(Morphology, SlotsNamesAndEffectiveModel) {
  const ExperimentConfig c = pendulum(0.6, "euler", 1e-3, 0.01);
  const int z = c.info.param_index("bob.pos.z");
  ASSERT_GE(z, 0);
  EXPECT_EQ(c.theta[size_t(z)], -0.6);
  EXPECT_EQ(c.info.param_units[size_t(z)], "m");
  EXPECT_GE(c.info.param_index("arm.pos.x"), 0);
  const nlohmann::json e = articulated_model_json(c);
  EXPECT_EQ(e["bodies"][1]["pos_m"], nlohmann::json({0.0, 0.0, -0.6}));
  // a swept link length: each rollout's θ has its own
  nlohmann::json j = {
      {"name", "sweep"},
      {"model", {{"type", "articulated"}}},
      {"simulation", {{"dt", 1e-3}, {"steps", 10}}},
      {"batch", {{"size", 3}, {"sweep", {{"theta.bob.pos.z", {-0.5, -0.6, -0.7}}}}}},
      {"loss", {{"terminal", {{{"state", "swing.q"}, {"target", 0.0}}}}}},
      {"variables", {{"theta.bob.pos.z", {{"lower", -1.0}, {"upper", -0.2}}}}},
      {"validation", {{"enabled", false}}}};
  nlohmann::json model = nlohmann::json::parse(R"({
    "type": "articulated",
    "bodies": [
      {"name": "arm", "mass": 1e-9, "fullinertia": [1e-9, 1e-9, 1e-9, 0, 0, 0],
       "joint": {"name": "swing", "axis": [0, 1, 0]}},
      {"name": "bob", "parent": "arm", "pos": [0, 0, -0.6], "mass": 2.0,
       "fullinertia": [1e-3, 1e-3, 1e-3, 0, 0, 0], "joint": null}]
  })");
  j["model"] = model;
  const ExperimentConfig s = parse_config(j);
  ASSERT_EQ(s.variables.size(), 1u);
  EXPECT_EQ(s.variables[0].index, s.info.param_index("bob.pos.z"));
}

}  // namespace
