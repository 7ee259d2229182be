// src/models/mass_spring/config_mass_spring.cpp and the config's mass_spring keys: robots from
// particles and springs or from grid cells, slot groups in variables and batch draws, the
// rest-position tie between θ and x0, and errors that name their key.
#include <gtest/gtest.h>

#include <cmath>

#include "config/config.h"
#include "config_errors.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "problem/problem.h"

namespace steer {
namespace {

using nlohmann::json;

json base() {
  return json::parse(R"({
    "name": "ms",
    "model": {"type": "mass_spring", "dim": 2,
              "robot": {"particles": [[0.1, 0.1], [0.2, 0.1], [0.15, 0.2]],
                        "springs": [[0, 1, 0.1, 1000, 0.0], [1, 2, 0.112, 1000, 0.1], [0, 2, 0.112, 1000, 0.1]]}},
    "simulation": {"dt": 0.004, "steps": 40},
    "loss": {"com_displacement": {"axis": "x"}},
    "variables": {"theta.spring.stiffness": {"lower": 100, "upper": 1e4}},
    "validation": {"enabled": false}
  })");
}

TEST(ConfigMassSpring, ExplicitRobotAndGroups) {
  ExperimentConfig c = parse_config(base());
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.n_particles, 3);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.n_springs, 3);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.n_actuators, 2);
  // the group expands to one variable per spring, each with the given bounds
  ASSERT_EQ(c.variables.size(), 3u);
  EXPECT_EQ(c.variables[1].name, "theta.spring[1].stiffness");
  EXPECT_EQ(c.variables[1].lower, 100.0);
  // defaults: the DiffTaichi example's gravity and damping, ground at 0.1 m
  EXPECT_EQ(c.theta[c.model_state<MassSpringSetup>().model.p_global(MassSpring::kGravity)], 4.8);
  EXPECT_EQ(c.theta[c.model_state<MassSpringSetup>().model.p_global(MassSpring::kVelocityDamping)],
            15.0);
  EXPECT_EQ(c.theta[c.model_state<MassSpringSetup>().model.p_global(MassSpring::kGroundHeight)],
            0.1);
  EXPECT_EQ(c.x0[c.model_state<MassSpringSetup>().model.x_pos(2) + 1], 0.2);
}

TEST(ConfigMassSpring, GridRobot) {
  json j = base();
  j["model"]["robot"] = {
      {"grid", {{"cells", {{0, 0}, {1, 0}}}, {"cell_size", 0.1}, {"stiffness", 2e4}}}};
  j["variables"]["theta.spring.stiffness"]["upper"] = 1e5;
  ExperimentConfig c = parse_config(j);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.n_particles, 6);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.n_springs, 11);
  EXPECT_EQ(c.model_state<MassSpringSetup>().model.n_actuators, 3);
}

TEST(ConfigMassSpring, RobotErrorsNameTheKey) {
  json j = base();
  j["model"]["robot"]["springs"][1] = {1, 7, 0.1, 1000, 0.0};
  testing::expect_config_error(j, {"model.robot.springs[1]", "[0, 2]"});
  json k = base();
  k["model"]["robot"]["particles"][2] = {0.1};
  testing::expect_config_error(k, {"model.robot.particles[2]", "2 numbers"});
  json g = base();
  g["model"]["robot"] = {{"grid", {{"cells", {{0, 0}, {0, 0}}}}}};
  testing::expect_config_error(g, {"model.robot.grid.cells[1]", "twice"});
  json s = base();
  s["model"]["robot"]["springs"][0] = {0, 1, 0.1, -5, 0.0};
  testing::expect_config_error(s, {"model.robot.springs[0]", "stiffness must be in (0, 1e9]"});
  s["model"]["robot"]["springs"][0] = {0, 1, 0.1, 2e9, 0.0};
  testing::expect_config_error(s, {"model.robot.springs[0]", "stiffness must be in (0, 1e9]"});
  json u = base();
  u["model"]["ground"] = {{"friction", 20.0}};
  testing::expect_config_error(u, {"model.ground.friction", "[0, 10]"});
  json v = base();
  v["variables"] = {{"theta.spring.stifness", json::object()}};
  testing::expect_config_error(v, {"variables.theta.spring.stifness", "theta.spring.stiffness"});
  json st = base();  // the stick ground takes its height only
  st["model"]["ground"] = {{"type", "stick"}, {"restitution", 0.5}};
  testing::expect_config_error(st, {"model.ground.restitution", "no effect on the stick ground"});
  st["model"]["ground"] = {{"type", "stick"}, {"height", 0.05}};
  st["model"]["integrator"] = "backward_euler";
  testing::expect_config_error(st, {"model.integrator", "\"penalty\" or \"none\""});
  st["model"].erase("integrator");
  const ExperimentConfig c = parse_config(st);
  EXPECT_TRUE(c.model_state<MassSpringSetup>().model.impact_stick);
  EXPECT_EQ(c.to_json()["model"]["ground"], "stick");
}

// draws around the nominal value: relative for stiffness, additive jitter for positions
TEST(ConfigMassSpring, RelativeAndJitterDraws) {
  json j = base();
  j["batch"] = {{"size", 50},
                {"seed", 3},
                {"randomize",
                 {{"theta.spring.stiffness", {{"relative", 0.5}}},
                  {"x0.particle.position", {{"jitter", 0.01}}}}}};
  ExperimentConfig c = parse_config(j);
  Batch<double> b = build_batch(c);
  double mn = 1e9, mx = 0;
  for (int r = 0; r < 50; ++r) {
    for (int s = 0; s < 3; ++s) {
      const double k = b.theta_of(r)[c.model_state<MassSpringSetup>().model.p_stiffness(s)];
      mn = std::min(mn, k);
      mx = std::max(mx, k);
    }
    EXPECT_LE(std::fabs(b.x0_of(r)[0] - 0.1), 0.01);
  }
  EXPECT_GE(mn, 500.0);
  EXPECT_LE(mx, 1500.0);
  EXPECT_LT(mn, 700.0);  // 150 draws cover the range
  EXPECT_GT(mx, 1300.0);
  // a relative draw that could make a stiffness non-positive is refused
  json k = base();
  k["batch"] = {{"size", 2}, {"randomize", {{"theta.spring.stiffness", {{"relative", 1.0}}}}}};
  testing::expect_config_error(k, {"batch.randomize.theta.spring.stiffness.relative", "[0, 1)"});
}

// a rest-shape slot the morphology does not read is refused as a variable or a draw, naming the
// key and the setting that would read it (it would otherwise be optimized or drawn to no effect)
TEST(ConfigMassSpring, UnreadRestShapeSlotsAreRefused) {
  json j = base();
  j["variables"] = {{"theta.particle.rest_position", {{"lower", -1.0}, {"upper", 1.0}}}};
  testing::expect_config_error(
      j, {"variables.theta.particle[0].rest_position.x", "rest_lengths", "rest_positions"});
  j = base();
  j["batch"] = {{"size", 2},
                {"randomize", {{"theta.particle[1].rest_position.y", {{"jitter", 0.01}}}}}};
  j["variables"] = {{"theta.spring.stiffness", {{"lower", 1.0}, {"upper", 1e5}}}};
  testing::expect_config_error(
      j, {"batch.randomize.theta.particle[1].rest_position.y", "is not read"});
  j = base();
  j["model"]["morphology"] = "rest_positions";
  j["variables"] = {{"theta.spring[0].rest_length", {{"lower", 0.01}, {"upper", 1.0}}}};
  testing::expect_config_error(
      j, {"variables.theta.spring[0].rest_length", "theta.particle.rest_position"});
}

// rest-position morphology: a rest-position variable also sets the initial position, and
// its gradient is the sum of both paths (checked against centered FD)
TEST(ConfigMassSpring, RestPositionsTieInitialState) {
  json j = base();
  j["model"]["morphology"] = "rest_positions";
  j["variables"] = {{"theta.particle.rest_position", {{"lower", -1.0}, {"upper", 1.0}}}};
  ExperimentConfig c = parse_config(j);
  ASSERT_EQ(c.variables.size(), 6u);
  EXPECT_EQ(c.variables[2].tied_state, c.model_state<MassSpringSetup>().model.x_pos(1));
  auto p = make_problem(c, BackendKind::kCpu, 1);
  std::vector<double> v = p->initial();
  EXPECT_NEAR(v[2], 0.2, 1e-15);  // particle 1's rest x
  Evaluation e;
  p->evaluate(v, true, e);
  for (int i = 0; i < 6; ++i) {
    std::vector<double> vp = v, vm = v;
    vp[i] += 1e-6;
    vm[i] -= 1e-6;
    Evaluation ep, em;
    p->evaluate(vp, false, ep);
    p->evaluate(vm, false, em);
    const double fd = (ep.loss[0] - em.loss[0]) / 2e-6;
    EXPECT_NEAR(e.grad[i], fd, 1e-6 * std::max(std::fabs(fd), 1e-3)) << "variable " << i;
  }
}

TEST(ConfigMassSpring, NormalizedNeedsFiniteBounds) {
  json j = base();
  j["variables"] = {{"theta.actuator.bias", json::object()}};
  j["optimizer"] = {{"method", "adam"}, {"normalized", true}};
  // actuator biases default to their physical range [-1000, 1000]: finite, accepted
  EXPECT_NO_THROW(parse_config(j));
  json k = base();
  k["variables"] = {{"x0.particle.velocity", {{"lower", 0.0}, {"upper", 0.0}}}};  // an empty box
  k["optimizer"] = {{"method", "adam"}, {"normalized", true}};
  testing::expect_config_error(k, {"optimizer.normalized", "lower < upper"});
}

}  // namespace
}  // namespace steer
