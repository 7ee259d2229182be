// Actuator activation (model.joints[].activation; activation.h): a state per joint that filters
// (filter: MuJoCo's Euler step of ȧ = (u − a)/τ; filterexact: the exact step) or integrates
// (ȧ = u) the joint's control, the torque taking a (or a⁺ when early). Checked, in float64:
//   - the generic gradient suite (gradient_suite.h: hand vs dual ≤ 1e-12 relative, dual vs
//     centred FD per step ≤ 1e-6, rollout vs centred FD ≤ 1e-6 relative + 1e-9) on an arm with
//     one joint of each kind (one early), a servo and torque limits, on euler, implicitfast and
//     implicitfast with the servo implicit through the saturation;
//   - physics against the ODE's closed form: a slide of mass m pushed through a filter by a held
//     force F has a(t) = F + (a0 − F) e^{−t/τ} and x(t) = (1/m) ∫∫ a; filterexact's a_k is that
//     a(kh) to rounding at any h, the integrator's a0 + kh F; x(T) and the adjoint's ∂x(T)/∂F
//     (the sum of ∂x(T)/∂u_k over the steps) and ∂x(T)/∂a0 converge to the closed form at first
//     order in h (error ratio ≥ 1.8 per halving, ≤ 2e-3 relative at h = 1/4000 s);
//   - the packed path (B > 1) gives the scalar path's bits;
//   - the parse: state names, units, the effective model, initial_state.act, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config_errors.h"
#include "articulated_steps.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "steer/backend.h"
#include "steer/cpu_backend.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// tests/data/activation_arm.json: an arm with shoulder (filter, τ = 50 ms, a servo on it), elbow
// (filterexact, τ = 30 ms, early), wrist (integrator) and a slide without activation
nlohmann::json arm_model() {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/tests/data/activation_arm.json");
  return nlohmann::json::parse(in);
}

nlohmann::json config_json(const nlohmann::json& model) {
  return {{"name", "activation_arm"},
          {"model", model},
          {"simulation", {{"dt", 0.002}, {"steps", 10}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", "wrist.q"}, {"target", 0.1}}}}}},
          {"validation", {{"enabled", false}}}};
}

ExperimentConfig arm_config(const std::string& integrator, int newton = 0) {
  nlohmann::json m = arm_model();
  m["integrator"] = integrator;
  if (newton > 0) m["torque_limits"]["newton_iterations"] = newton;
  return parse_config(config_json(m));
}

// every joint off its ref and moving, every activation away from zero
std::vector<double> kicked_state(const Articulated& m) {
  std::vector<double> x(size_t(m.nx()));
  for (int j = 0; j < m.n_dof; ++j) {
    x[size_t(j)] = 0.05 * std::sin(j + 1.0);
    x[size_t(m.n_dof + j)] = 0.4 * std::cos(1.3 * j + 0.2);
  }
  for (int s = 0; s < m.n_act; ++s) x[size_t(2 * m.n_dof + s)] = 1.5 * std::sin(2.1 * s + 0.4);
  return x;
}

struct ActivationProvider {
  using Model = Articulated;
  struct Variant {
    const char* name;
    const char* integrator;
    int newton;
  };
  static std::vector<Variant> variants() {
    return {{"euler", "euler", 0},
            {"implicitfast", "implicitfast", 0},
            {"implicit servo", "implicitfast", 2}};
  }
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    for (const Variant& v : variants()) {
      const ExperimentConfig c = arm_config(v.integrator, v.newton);
      const Articulated& m = c.model_state<ArticulatedSetup>().model;
      std::vector<double> u(size_t(m.nu()));
      for (int j = 0; j < m.nu(); ++j) u[size_t(j)] = 2.0 * std::sin(0.7 * j + 0.1);
      out.push_back(StepCase<Articulated>{std::string("activation arm ") + v.name, m,
                                          kicked_state(m), u, c.theta});
    }
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    std::vector<RolloutCase<Articulated>> out;
    for (const Variant& v : variants()) {
      const ExperimentConfig c = arm_config(v.integrator, v.newton);
      RolloutCase<Articulated> r;
      r.model = c.model_state<ArticulatedSetup>().model;
      r.name = std::string("activation arm ") + v.name + ", 12 steps";
      r.steps = 12;
      r.checkpoint_every = 5;
      r.fd_scale = 2;
      r.x0 = kicked_state(r.model);
      r.p = c.theta;
      const int n = r.model.n_dof;
      r.u.assign(size_t(r.steps * n), 0.0);
      for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 2.0 * std::cos(0.37 * double(i));
      // the shoulder and wrist angles, the elbow's velocity and the wrist's activation
      r.loss.n_terminal = 4;
      const int idx[4] = {0, 2, n + 1, 2 * n + 2};
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

INSTANTIATE_TYPED_TEST_SUITE_P(Activation, GradientSuite, ::testing::Types<ActivationProvider>);

namespace {

// a slide of mass m along x, no gravity, its force through the given activation
ExperimentConfig slide_config(const nlohmann::json& activation, double dt, double T) {
  nlohmann::json model = nlohmann::json::parse(R"({
    "type": "articulated", "integrator": "euler", "gravity": 0,
    "bodies": [{"name": "cart", "mass": 2.0, "fullinertia": [0.01, 0.01, 0.01, 0, 0, 0],
                "joint": {"name": "x", "type": "slide", "axis": [1, 0, 0]}}],
    "torque_limits": {"enabled": false}
  })");
  model["bodies"][0]["joint"]["activation"] = activation;
  nlohmann::json j = config_json(model);
  j["simulation"]["dt"] = dt;
  j["simulation"]["steps"] = int(std::lround(T / dt));
  j["loss"]["terminal"][0]["state"] = "x.q";
  return parse_config(j);
}

// x(T), ∂x(T)/∂F (F held over every step) and ∂x(T)/∂a0 by the model's step and adjoint
struct SlideRun {
  double x, dx_dF, dx_da0;
  std::vector<double> act;  // a_k, k = 0 … T/h
};
SlideRun run_slide(const ExperimentConfig& c, double F, double a0) {
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  std::vector<double> x0(size_t(m.nx()), 0.0);
  x0[2] = a0;
  const HeldRun h = held_run(m, x0, {F}, c.theta, c.steps, 0);
  SlideRun r;
  for (int k = 0; k <= c.steps; ++k) r.act.push_back(h.xs[size_t(k * m.nx() + 2)]);
  r.x = h.xs[size_t(c.steps * m.nx())];
  r.dx_dF = h.grad_u[0];
  r.dx_da0 = h.grad_x0[2];
  return r;
}

TEST(Activation, FilterConvergesToTheClosedForm) {
  const double m = 2.0, tau = 0.1, F = 3.0, a0 = -1.0, T = 0.5;
  const double e = std::exp(-T / tau);
  // a(t) = F + (a0 − F) e^{−t/τ}: x(T) = [F T²/2 + (a0 − F) τ (T − τ (1 − e))]/m
  const double x_exact = (F * T * T / 2 + (a0 - F) * tau * (T - tau * (1 - e))) / m;
  const double dF_exact = (T * T / 2 - tau * (T - tau * (1 - e))) / m;
  const double da0_exact = tau * (T - tau * (1 - e)) / m;
  double prev[3] = {0, 0, 0};
  for (double dt : {1.0 / 1000, 1.0 / 2000, 1.0 / 4000}) {
    const SlideRun r =
        run_slide(slide_config({{"dynamics", "filter"}, {"time_constant", tau}}, dt, T), F, a0);
    const double err[3] = {std::fabs(r.x - x_exact) / std::fabs(x_exact),
                           std::fabs(r.dx_dF - dF_exact) / dF_exact,
                           std::fabs(r.dx_da0 - da0_exact) / da0_exact};
    std::printf(
        "[ figures ] filter, h = %g s: relative error of x(T) %.3g, dx/dF %.3g, dx/da0 %.3g\n", dt,
        err[0], err[1], err[2]);
    for (int i = 0; i < 3; ++i) {
      if (prev[i] > 0) {
        EXPECT_GT(prev[i] / err[i], 1.8) << "quantity " << i << " at h = " << dt;
      }
      prev[i] = err[i];
    }
  }
  for (int i = 0; i < 3; ++i) EXPECT_LT(prev[i], 2e-3) << "quantity " << i;
}

TEST(Activation, FilterExactAndIntegratorAreExactInTheActivation) {
  const double tau = 0.1, F = 3.0, a0 = 0.5;
  for (double dt : {0.01, 0.037}) {
    const SlideRun fe = run_slide(
        slide_config({{"dynamics", "filterexact"}, {"time_constant", tau}}, dt, 0.5), F, a0);
    const SlideRun in = run_slide(slide_config({{"dynamics", "integrator"}}, dt, 0.5), F, a0);
    for (size_t k = 0; k < fe.act.size(); ++k) {
      const double t = double(k) * dt;
      EXPECT_NEAR(fe.act[k], F + (a0 - F) * std::exp(-t / tau), 1e-13) << "h " << dt << " k " << k;
      EXPECT_NEAR(in.act[k], a0 + F * t, 1e-13) << "h " << dt << " k " << k;
    }
  }
}

TEST(Activation, EarlyTakesTheUpdatedActivation) {
  // one step from rest: the late filter's force is a0, the early one's a0 + (h/τ)(F − a0)
  const double dt = 0.01, tau = 0.1, F = 3.0, a0 = 0.5, mass = 2.0;
  for (bool early : {false, true}) {
    const SlideRun r = run_slide(
        slide_config({{"dynamics", "filter"}, {"time_constant", tau}, {"early", early}}, dt, dt), F,
        a0);
    const double force = early ? a0 + dt / tau * (F - a0) : a0;
    EXPECT_NEAR(r.x, dt * dt * force / mass, 1e-15) << early;
  }
}

TEST(Activation, PackedGivesTheScalarBits) {
  const ExperimentConfig c = arm_config("implicitfast");
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  const int B = 6, T = 20;
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 7;
  Batch<double> batch;
  batch.resize(B, m.nx(), m.nu(), m.np(), T);
  const std::vector<double> x0 = kicked_state(m);
  for (int r = 0; r < B; ++r) {
    for (int i = 0; i < m.nx(); ++i) batch.x0_of(r)[i] = x0[size_t(i)] * (1 + 0.1 * r);
    for (int k = 0; k < m.np(); ++k) batch.theta_of(r)[k] = c.theta[size_t(k)];
    for (int k = 0; k < T * m.nu(); ++k) batch.u_of(r)[k] = 2 * std::sin(0.2 * k + r);
  }
  BatchResult<double> packed;
  run_batch<Articulated, double>(BackendKind::kCpu, m, c.loss, sh, batch, true, packed, 0);
  for (int r = 0; r < B; ++r) {
    Batch<double> one;
    one.resize(1, m.nx(), m.nu(), m.np(), T);
    for (int i = 0; i < m.nx(); ++i) one.x0_of(0)[i] = batch.x0_of(r)[i];
    for (int k = 0; k < m.np(); ++k) one.theta_of(0)[k] = batch.theta_of(r)[k];
    for (int k = 0; k < T * m.nu(); ++k) one.u_of(0)[k] = batch.u_of(r)[k];
    BatchResult<double> scalar;
    run_batch<Articulated, double>(BackendKind::kCpu, m, c.loss, sh, one, true, scalar, 0);
    EXPECT_EQ(packed.loss[size_t(r)], scalar.loss[0]) << r;
    for (int i = 0; i < m.nx(); ++i)
      EXPECT_EQ(packed.grad_x0[size_t(r * m.nx() + i)], scalar.grad_x0[size_t(i)]) << r << " " << i;
    for (int k = 0; k < T * m.nu(); ++k)
      EXPECT_EQ(packed.grad_u[size_t(r * T * m.nu() + k)], scalar.grad_u[size_t(k)]) << r;
    for (int k = 0; k < m.np(); ++k)
      EXPECT_EQ(packed.grad_theta[size_t(r * m.np() + k)], scalar.grad_theta[size_t(k)]) << r;
  }
}

TEST(Activation, StateNamesInitialStateAndEffectiveModel) {
  nlohmann::json j = config_json(arm_model());
  j["initial_state"]["act"] = {0.5, -0.25, 1.0};
  const ExperimentConfig c = parse_config(j);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  ASSERT_EQ(m.n_act, 3);
  ASSERT_EQ(m.nx(), 2 * 4 + 3);
  EXPECT_EQ(c.info.state_names[8], "shoulder.act");
  EXPECT_EQ(c.info.state_names[9], "elbow.act");
  EXPECT_EQ(c.info.state_names[10], "wrist.act");
  EXPECT_EQ(c.info.state_units[8], "N*m");
  EXPECT_EQ(c.x0[8], 0.5);
  EXPECT_EQ(c.x0[9], -0.25);
  EXPECT_EQ(c.x0[10], 1.0);
  EXPECT_EQ(m.act_kind[3], Articulated::kActNone);
  EXPECT_EQ(m.act_early[1], 1);
  const nlohmann::json e = articulated_model_json(c);
  const nlohmann::json& elbow = e["bodies"][1]["joint"]["activation"];
  EXPECT_EQ(elbow["dynamics"], "filterexact");
  EXPECT_EQ(elbow["time_constant_s"], 0.03);
  EXPECT_EQ(elbow["early"], true);
  EXPECT_EQ(elbow["state"], "elbow.act");
}

TEST(Activation, RefusalsNameTheKey) {
  nlohmann::json rk4 = config_json(arm_model());
  rk4["model"]["integrator"] = "rk4";
  expect_config_error(rk4, {"model.integrator", "rk4", "shoulder", "activation"});
  nlohmann::json missing = config_json(arm_model());
  missing["model"]["bodies"][0]["joint"]["activation"].erase("dynamics");
  expect_config_error(missing, {"model.bodies[0].joint.activation.dynamics", "filterexact"});
  nlohmann::json unknown = config_json(arm_model());
  unknown["model"]["bodies"][0]["joint"]["activation"]["dynamics"] = "muscle";
  expect_config_error(unknown, {"model.bodies[0].joint.activation.dynamics", "'muscle'"});
  nlohmann::json no_tau = config_json(arm_model());
  no_tau["model"]["bodies"][0]["joint"]["activation"].erase("time_constant");
  expect_config_error(no_tau, {"model.bodies[0].joint.activation.time_constant", "missing"});
  nlohmann::json zero_tau = config_json(arm_model());
  zero_tau["model"]["bodies"][1]["joint"]["activation"]["time_constant"] = 0;
  expect_config_error(zero_tau, {"model.bodies[1].joint.activation.time_constant", "(0, 1000]"});
  nlohmann::json int_tau = config_json(arm_model());
  int_tau["model"]["bodies"][2]["joint"]["activation"]["time_constant"] = 0.1;
  expect_config_error(int_tau, {"model.bodies[2].joint.activation.time_constant", "integrator"});
  nlohmann::json extra = config_json(arm_model());
  extra["model"]["bodies"][0]["joint"]["activation"]["range"] = {-1, 1};
  expect_config_error(extra, {"model.bodies[0].joint.activation", "range"});
  nlohmann::json wrong_count = config_json(arm_model());
  wrong_count["initial_state"]["act"] = {0.5, 1.0};
  expect_config_error(wrong_count, {"initial_state.act", "3"});
  nlohmann::json none = config_json(arm_model());
  for (int b = 0; b < 3; ++b) none["model"]["bodies"][b]["joint"].erase("activation");
  none["initial_state"]["act"] = {0.5};
  expect_config_error(none, {"initial_state.act", "no actuator activations"});
}

}  // namespace
