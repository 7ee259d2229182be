// Piecewise-constant controls (`variables.controls.hold`): a knot j sets u_k for the steps
// k in [j·hold, (j+1)·hold) and its gradient is Σ_k ∂L/∂u_k over them. These tests tie a held
// problem to the per-step problem it stands for, bit for bit, check the knot gradient against
// centered finite differences in float64, and check the config's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config_errors.h"
#include "problem/problem.h"
#include "validate/validator.h"

namespace steer {
namespace {

using steer::testing::expect_config_error;

// a projectile with drag, a force control per step and an effort term: the gradient with
// respect to every control is non-zero and differs from step to step
nlohmann::json projectile_with_controls(int steps, int hold) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "hold",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.05},
    "simulation": {"dt": 0.01, "steps": 100, "backend": "cpu"},
    "initial_state": {"position": [0, 0], "velocity": [2.5, 1.0]},
    "controls": {"initial": [0.3, -0.2]},
    "loss": {"terminal": [{"state": "position.x", "target": 6.0}], "control_effort": 0.01},
    "variables": {"x0.velocity.x": {}, "controls": {"lower": -10, "upper": 10}}
  })");
  j["simulation"]["steps"] = steps;
  j["variables"]["controls"]["hold"] = hold;
  return j;
}

// the per-step variables a held vector stands for: each knot repeated over its steps
std::vector<double> expand(const ExperimentConfig& c, const std::vector<double>& v) {
  std::vector<double> out;
  size_t o = 0;
  for (const auto& var : c.variables) {
    if (var.kind != VariableSpec::kControl) {
      out.push_back(v[o++]);
      continue;
    }
    for (int k = 0; k < c.steps; ++k) out.push_back(v[o + size_t(k / var.hold)]);
    o += size_t(var.length(c.steps));
  }
  EXPECT_EQ(o, v.size());
  return out;
}

ExperimentConfig per_step(ExperimentConfig c) {
  for (auto& v : c.variables) v.hold = 1;
  return c;
}

// T = 100, hold 8: 13 knots per component, the last one over 4 steps. Loss, trajectory and
// gradient are the per-step problem's at the expanded variables, bit for bit (the knot's
// gradient is summed in step order).
TEST(ControlHold, KnotsAreTheHeldPerStepControls) {
  const ExperimentConfig c = parse_config(projectile_with_controls(100, 8));
  // variables in key order: controls.force.x, controls.force.y, x0.velocity.x
  ASSERT_EQ(c.variables.size(), 3u);
  EXPECT_EQ(c.variables[0].hold, 8);
  EXPECT_EQ(c.variables[0].length(c.steps), 13);
  EXPECT_EQ(c.variables[2].length(c.steps), 1);
  auto held = make_problem(c, BackendKind::kCpu, 0);
  auto fine = make_problem(per_step(c), BackendKind::kCpu, 0);
  ASSERT_EQ(held->num_vars(), 1 + 2 * 13);
  ASSERT_EQ(fine->num_vars(), 1 + 2 * 100);
  EXPECT_EQ(held->var_names()[0], "controls.force.x[0]");
  EXPECT_EQ(held->var_names()[12], "controls.force.x[12]");
  EXPECT_EQ(held->var_names()[13], "controls.force.y[0]");
  EXPECT_EQ(held->var_names()[26], "x0.velocity.x");
  // the start: each knot at the nominal control
  const std::vector<double> v0 = held->initial();
  EXPECT_EQ(expand(c, v0), fine->initial());

  // a start where every knot differs, so a wrong knot-to-step map shows
  std::vector<double> v = v0;
  for (size_t i = 0; i < 26; ++i) v[i] = 0.5 * std::sin(1.7 * double(i));
  const std::vector<double> vf = expand(c, v);
  Evaluation eh, ef;
  held->evaluate(v, true, eh);
  fine->evaluate(vf, true, ef);
  EXPECT_EQ(eh.loss, ef.loss);
  EXPECT_EQ(held->trajectories(v, 1, 1), fine->trajectories(vf, 1, 1));
  ASSERT_EQ(eh.grad.size(), size_t(held->num_vars()));
  EXPECT_EQ(eh.grad[26], ef.grad[200]);
  for (int comp = 0; comp < 2; ++comp)
    for (int j = 0; j < 13; ++j) {
      double sum = 0;
      for (int k = 8 * j; k < std::min(100, 8 * (j + 1)); ++k)
        sum += ef.grad[size_t(comp * 100 + k)];
      EXPECT_EQ(eh.grad[size_t(comp * 13 + j)], sum) << "component " << comp << " knot " << j;
      EXPECT_NE(sum, 0.0);
    }

  // hold = T: one value per component for the whole horizon
  const ExperimentConfig one = parse_config(projectile_with_controls(100, 100));
  EXPECT_EQ(make_problem(one, BackendKind::kCpu, 0)->num_vars(), 1 + 2);
}

// the knot gradient against centered FD in float64 (the validator's check, tolerance 1e-6
// relative): on the projectile with drag, and on DiffTaichi-sized walker with raw actuation
// held over 8 steps, standing on its compliant ground (100 steps, contact active throughout)
TEST(ControlHold, KnotGradientPassesCenteredFiniteDifferences) {
  ExperimentConfig c = parse_config(projectile_with_controls(100, 8));
  auto p = make_problem(c, BackendKind::kCpu, 0);
  std::vector<double> v = p->initial();
  for (size_t i = 0; i < 26; ++i) v[i] = 0.5 * std::sin(1.7 * double(i));
  c.validation.tolerance = 1e-6;
  ValidationReport r = validate(*p, v, c.validation, "initial");
  EXPECT_TRUE(r.all_passed()) << r.max_error;
  EXPECT_LE(r.max_error, 1e-6);
  // and entry by entry: every knot (and x0.velocity.x), ε = 1e-5
  Evaluation e;
  p->evaluate(v, true, e);
  const double eps = 1e-5;
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<double> a = v, b = v;
    a[i] += eps;
    b[i] -= eps;
    Evaluation ea, eb;
    p->evaluate(a, false, ea);
    p->evaluate(b, false, eb);
    const double fd = (ea.loss[0] - eb.loss[0]) / (2 * eps);
    EXPECT_LE(std::abs(fd - e.grad[i]), 1e-6 * std::max(std::abs(e.grad[i]), 1e-3))
        << p->var_names()[i];
  }

  nlohmann::json w = nlohmann::json::parse(R"({
    "name": "walker_knots",
    "model": {"type": "mass_spring", "dim": 2,
              "robot": {"grid": {"cells": [[0, 0], [2, 0], [0, 1], [1, 1], [2, 1]], "cell_size": 0.1,
                                 "origin": [0.1, 0.1], "stiffness": 20000.0, "actuation": 0.15}},
              "particle_mass": 1.0, "gravity": 4.8, "velocity_damping": 15.0,
              "actuation": {"type": "raw"},
              "ground": {"type": "penalty", "height": 0.1, "stiffness": 10000.0, "damping": 50.0,
                         "smoothing": 0.01, "friction": 1.0, "friction_smoothing": 0.05}},
    "simulation": {"dt": 0.004, "steps": 100, "precision": "float64", "backend": "cpu"},
    "loss": {"com_displacement": {"axis": "x", "weight": -1.0}},
    "variables": {"theta.spring.stiffness": {"lower": 5000.0, "upper": 30000.0},
                  "controls": {"lower": -1.0, "upper": 1.0, "hold": 8}},
    "validation": {"tolerance": 1e-6}
  })");
  ExperimentConfig cw = parse_config(w);
  auto pw = make_problem(cw, BackendKind::kCpu, 0);
  const int n_act = cw.info.nu();
  ASSERT_GT(n_act, 0);
  ASSERT_EQ(pw->num_vars(),
            cw.info.param_groups.at("spring.stiffness").size() + size_t(n_act) * 13);
  std::vector<double> vw = pw->initial();
  const size_t n_k = cw.info.param_groups.at("spring.stiffness").size();
  for (size_t i = n_k; i < vw.size(); ++i) vw[i] = 0.6 * std::sin(0.9 * double(i));
  ValidationReport rw = validate(*pw, vw, cw.validation, "initial");
  EXPECT_TRUE(rw.all_passed()) << rw.max_error;
  EXPECT_LE(rw.max_error, 1e-6);
}

// the timestep check's problem at h/2 keeps the knots: hold doubles, the variables are the
// same, and its gradient passes FD itself
TEST(ControlHold, HalfStepProblemKeepsTheKnots) {
  const ExperimentConfig c = parse_config(projectile_with_controls(60, 7));
  const ExperimentConfig f = halved_timestep(c);
  EXPECT_EQ(f.variables[0].hold, 14);
  EXPECT_EQ(f.variables[0].length(f.steps),
            c.variables[0].length(c.steps));  // ⌈60/7⌉ = ⌈120/14⌉ = 9
  HalfStepProblem half(c, BackendKind::kCpu, 0);
  auto coarse = make_problem(c, BackendKind::kCpu, 0);
  ASSERT_EQ(half.num_vars(), coarse->num_vars());
  EXPECT_EQ(half.var_names(), coarse->var_names());
  EXPECT_EQ(half.initial(), coarse->initial());
  const std::vector<double> v = coarse->initial();
  Evaluation eh, ec;
  half.evaluate(v, true, eh);
  coarse->evaluate(v, true, ec);
  // the same functional at two timesteps: close (O(h)), not equal
  EXPECT_NE(eh.loss[0], ec.loss[0]);
  EXPECT_NEAR(eh.loss[0], ec.loss[0], 0.05 * std::abs(ec.loss[0]));
  ExperimentConfig cv = c;
  cv.validation.tolerance = 1e-6;
  ValidationReport r = validate(half, v, cv.validation, "initial");
  EXPECT_TRUE(r.all_passed()) << r.max_error;
}

TEST(ControlHold, ConfigEchoesHoldAndEntries) {
  const ExperimentConfig c = parse_config(projectile_with_controls(100, 8));
  const nlohmann::json j = c.to_json();
  ASSERT_EQ(j["variables"].size(), 3u);
  EXPECT_EQ(j["variables"][2]["hold"], 1);
  EXPECT_EQ(j["variables"][2]["entries"], 1);
  EXPECT_EQ(j["variables"][0]["hold"], 8);
  EXPECT_EQ(j["variables"][0]["entries"], 13);
  EXPECT_EQ(j["variables"][0]["per_step"], true);
}

TEST(ControlHold, ConfigErrors) {
  nlohmann::json j = projectile_with_controls(100, 8);
  j["variables"]["x0.velocity.x"]["hold"] = 4;
  expect_config_error(j, {"variables.x0.velocity.x.hold", "applies to controls"});
  for (double bad : {0.0, 101.0, -3.0}) {
    nlohmann::json k = projectile_with_controls(100, 8);
    k["variables"]["controls"]["hold"] = bad;
    expect_config_error(k, {"variables.controls.hold", "[1, 100]"});
  }
  nlohmann::json f = projectile_with_controls(100, 8);
  f["variables"]["controls"]["hold"] = 2.5;
  expect_config_error(f, {"variables.controls.hold"});
  nlohmann::json s = projectile_with_controls(100, 8);
  s["variables"]["controls"]["hold"] = "8";
  expect_config_error(s, {"variables.controls.hold", "a string"});
  // a continuation phase at a shorter horizon would have fewer control entries
  nlohmann::json cont = projectile_with_controls(100, 8);
  cont["variables"]["controls"]["hold"] = 1;
  cont["compare"] = {{"iterations", 5}, {"continuation", {{{"steps", 50}, {"iterations", 3}}}}};
  expect_config_error(cont, {"compare.continuation[0].steps", "controls.force.x"});
}

}  // namespace
}  // namespace steer
