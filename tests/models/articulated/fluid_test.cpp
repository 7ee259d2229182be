// Fluid forces (model.fluid; fluid.h): MuJoCo's inertia-box model, each body with mass the box of
// its mass and principal moments, with Stokes and quadratic drag in a fluid of density ρ and
// viscosity β moving at the wind's velocity. fluid_mujoco_test.cpp compares an imported file
// with MuJoCo; here, all in float64:
//   - the generic gradient suite (gradient_suite.h: hand vs dual ≤ 1e-12 relative, dual vs
//     centred FD per step ≤ 1e-6, rollout vs centred FD ≤ 1e-6 relative + 1e-9) on euler and
//     rk4 for a free hull with a hinged fin and a sliding probe in a fluid with wind, θ
//     including ρ, β, the wind and every body's mass and inertia (the box's sides);
//   - the physics against closed forms as h shrinks: a cube of side a and mass m sliding in the
//     fluid, v̇ = −(3π β a/m) v (Stokes: v(T) = v0 e^{−3πβaT/m}) and v̇ = −(ρ a²/(2m)) v|v|
//     (v(T) = v0/(1 + ρ a² v0 T/(2m))). Euler's error halves with h (first order), rk4's falls
//     sixteenfold (fourth order), and the adjoint's ∂v(T)/∂β and ∂v(T)/∂ρ converge to the
//     closed forms' derivatives the same way;
//   - the box's axes: the eigenvectors of the inertia (symmetric3_eigen) or the body's
//     inertia_frame; the parse (slots, units, values, the capacity, the effective model) and
//     its refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
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
#include "models/articulated/inertia_check.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// a free hull (its inertia off its body axes), a fin on a tilted hinge and a probe on a slide
nlohmann::json hull_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "integrator": "euler", "gravity": 9.81,
    "bodies": [
      {"name": "hull", "joint": {"type": "free"}, "pos": [0, 0, 1], "quat": [0.9, 0.1, 0.3, 0.2],
       "mass": 2.0, "com": [0.05, 0, -0.02],
       "fullinertia": [0.03, 0.05, 0.06, 0.004, -0.002, 0.003]},
      {"name": "fin", "parent": "hull", "pos": [0.3, 0, 0], "mass": 0.6, "com": [0.1, 0, 0],
       "fullinertia": [0.01, 0.02, 0.021, 0, 0, 0],
       "joint": {"name": "fin_hinge", "axis": [0, 0.6, 0.8], "damping": 0.01}},
      {"name": "probe", "parent": "fin", "pos": [0.2, 0, 0], "mass": 0.5, "com": [0, 0.01, 0],
       "fullinertia": [0.02, 0.024, 0.012, 0, 0, 0], "inertia_frame": [0.8, 0, 0.6, 0],
       "joint": {"name": "probe_slide", "type": "slide", "axis": [1, 0, 0]}}],
    "fluid": {"density": 10, "viscosity": 0.05, "wind": [0.3, -0.2, 0.1]}
  })");
}

nlohmann::json config_json(const nlohmann::json& model, const std::string& state = "fin_hinge.q",
                           int steps = 10) {
  return {{"name", "fluid"},
          {"model", model},
          {"simulation", {{"dt", 0.002}, {"steps", steps}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", state}, {"target", 0.1}}}}}},
          {"validation", {{"enabled", false}}}};
}

const ExperimentConfig& hull_config() {
  static const ExperimentConfig c = parse_config(config_json(hull_model()));
  return c;
}

// the hull moving at about 1 m/s and turning, the fin and the probe moving
std::vector<double> kicked_state(const ArticulatedLarge& m, const std::vector<double>& x0) {
  std::vector<double> x = x0;
  const int nq = m.nq();
  const double v[8] = {0.9, -0.6, 0.4, 1.1, -0.7, 0.5, 1.3, -0.4};
  for (int j = 0; j < m.n_dof; ++j) x[size_t(nq + j)] = v[j];
  x[size_t(7)] += 0.2;  // the fin's angle
  return x;
}

struct FluidProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    std::vector<StepCase<ArticulatedLarge>> out;
    for (int integ : {int(Articulated::kEuler), int(Articulated::kRk4)}) {
      ArticulatedLarge m = hull_config().model_state<ArticulatedSetup>().large;
      m.integrator = integ;
      std::vector<double> u(size_t(m.nu()));
      for (int j = 0; j < m.nu(); ++j) u[size_t(j)] = 0.3 * std::sin(0.7 * j + 0.1);
      // ε = 1e-6 · max(0.01, |z|): the probe's moment (3e-4 kg·m²) would move by 0.3 % at the
      // default ε = 1e-6, and the FD's truncation error then reaches 1e-6
      out.push_back(StepCase<ArticulatedLarge>{
          std::string("hull in a fluid ") + (integ == Articulated::kRk4 ? "rk4" : "euler"), m,
          kicked_state(m, hull_config().x0), u, hull_config().theta, 0.01});
    }
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    std::vector<RolloutCase<ArticulatedLarge>> out;
    for (int integ : {int(Articulated::kEuler), int(Articulated::kRk4)}) {
      RolloutCase<ArticulatedLarge> r;
      r.model = hull_config().model_state<ArticulatedSetup>().large;
      r.model.integrator = integ;
      r.name = integ == Articulated::kRk4 ? "hull in a fluid rk4, 6 steps"
                                          : "hull in a fluid euler, 12 steps";
      r.steps = integ == Articulated::kRk4 ? 6 : 12;
      r.checkpoint_every = 5;
      // ε = 1e-6 · max(3, |z|), as the tendon chain's: the loss's rounding over 12 steps (~5e-15)
      // over ε would exceed the 1e-9 allowance at ε = 1e-6 (2e-9 there), while every box's
      // I_j + I_l − I_k stays above 0.008 kg·m², so that the truncation error in the moments,
      // O((ε/X)²), stays below half the tolerance (at fd_scale 3 the worst input uses 55 % of it)
      r.fd_scale = 3;
      r.x0 = kicked_state(r.model, hull_config().x0);
      r.p = hull_config().theta;
      const int n = r.model.nu();
      r.u.assign(size_t(r.steps * n), 0.0);
      for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.4 * std::cos(0.37 * double(i));
      const int nq = r.model.nq();
      r.loss.n_terminal = 4;
      const int idx[4] = {0, 2, 7, nq + 4};  // the hull's x and z, the fin, the hull's ω_y
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

INSTANTIATE_TYPED_TEST_SUITE_P(Fluid, GradientSuite, ::testing::Types<FluidProvider>);

namespace {

// a cube of side a = 0.2 m and mass m = 1 kg on a slide along x: its box is the cube
constexpr double kSide = 0.2, kMass = 1.0, kV0 = 1.5, kT = 0.4;

struct Decay {
  double v, dv;  // v(T) [m/s] and its derivative in the fluid slot
};

// v(T) and ∂v(T)/∂θ_slot by steer at N steps of T/N, from the adjoint of L = v(T)²
Decay slide_decay(const std::string& integrator, double density, double viscosity, int steps,
                  int slot) {
  nlohmann::json model = {{"type", "articulated"},
                          {"integrator", integrator},
                          {"gravity", 0.0},
                          {"bodies",
                           {{{"name", "cube"},
                             {"mass", kMass},
                             {"fullinertia",
                              {kMass * kSide * kSide / 6, kMass * kSide * kSide / 6,
                               kMass * kSide * kSide / 6, 0, 0, 0}},
                             {"joint", {{"name", "x"}, {"type", "slide"}, {"axis", {1, 0, 0}}}}}}},
                          {"fluid", {{"density", density}, {"viscosity", viscosity}}}};
  nlohmann::json cj = config_json(model, "x.v", steps);
  cj["simulation"]["dt"] = kT / steps;
  const ExperimentConfig c = parse_config(cj);
  RolloutCase<ArticulatedLarge> r;
  r.model = c.model_state<ArticulatedSetup>().large;
  r.steps = steps;
  r.checkpoint_every = std::min(16, steps);
  r.x0 = {0.0, kV0};
  r.p = c.theta;
  r.u.assign(size_t(steps), 0.0);
  r.loss.n_terminal = 1;
  r.loss.terminal_index[0] = 1, r.loss.terminal_target[0] = 0, r.loss.terminal_weight[0] = 1;
  double loss = 0;
  const std::vector<double> g = rollout_gradient(r, false, r.checkpoint_every, &loss);
  std::vector<double> x = r.x0, u(1, 0.0);
  for (int k = 0; k < steps; ++k) x = step_value(r.model, k, x, u, r.p);
  const double v = x[1];
  // L ∝ v², so ∂L/∂θ = (2L/v) ∂v/∂θ
  const double dv = g[size_t(2 + steps + r.model.p_fluid(slot))] * v / (2 * loss);
  return {v, dv};
}

// the errors of v(T) and ∂v/∂θ against the closed form at N, 2N, 4N steps: each ratio of
// successive errors is about 2^order
void expect_converges(const std::string& integ, double density, double viscosity, int slot,
                      double v_exact, double dv_exact, double order, int n0) {
  double ev[3], ed[3];
  for (int i = 0; i < 3; ++i) {
    const Decay d = slide_decay(integ, density, viscosity, n0 << i, slot);
    ev[i] = std::fabs(d.v - v_exact);
    ed[i] = std::fabs(d.dv - dv_exact);
  }
  const double want = std::pow(2.0, order);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(ev[i] / ev[i + 1], want, 0.15 * want) << integ << " v(T), " << (n0 << i);
    EXPECT_NEAR(ed[i] / ed[i + 1], want, 0.15 * want) << integ << " dv/dθ, " << (n0 << i);
  }
  EXPECT_LT(ev[2], (order > 2 ? 1e-9 : 2e-3) * v_exact) << integ;
  EXPECT_LT(ed[2], (order > 2 ? 1e-8 : 4e-3) * std::fabs(dv_exact)) << integ;
  std::printf("[ %s ] v(T) errors %.3g %.3g %.3g; dv/dθ errors %.3g %.3g %.3g\n", integ.c_str(),
              ev[0], ev[1], ev[2], ed[0], ed[1], ed[2]);
}

TEST(Fluid, StokesDragConvergesToTheClosedForm) {
  const double beta = 0.4, c = 3 * M_PI * beta * kSide;
  const double v = kV0 * std::exp(-c * kT / kMass);
  const double dv = -3 * M_PI * kSide * kT / kMass * v;  // ∂v(T)/∂β
  expect_converges("euler", 0.0, beta, Articulated::kFluidViscosity, v, dv, 1, 100);
  expect_converges("rk4", 0.0, beta, Articulated::kFluidViscosity, v, dv, 4, 10);
}

TEST(Fluid, QuadraticDragConvergesToTheClosedForm) {
  const double rho = 20.0, k = 0.5 * kSide * kSide / kMass;  // v̇ = −ρ k v|v|
  const double v = kV0 / (1 + rho * k * kV0 * kT);
  const double dv = -kV0 * kV0 * k * kT / ((1 + rho * k * kV0 * kT) * (1 + rho * k * kV0 * kT));
  expect_converges("euler", rho, 0.0, Articulated::kFluidDensity, v, dv, 1, 100);
  expect_converges("rk4", rho, 0.0, Articulated::kFluidDensity, v, dv, 4, 10);
}

// the principal axes: V diag(e) Vᵀ gives the tensor back and V is orthonormal
TEST(Fluid, PrincipalAxesRebuildTheInertia) {
  const double I[6] = {0.03, 0.05, 0.06, 0.004, -0.002, 0.003};
  double V[9];
  const std::array<double, 3> e = symmetric3_eigen(I, V);
  const double full[3][3] = {{I[0], I[3], I[4]}, {I[3], I[1], I[5]}, {I[4], I[5], I[2]}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double r = 0, o = 0;
      for (int k = 0; k < 3; ++k) r += V[3 * i + k] * e[size_t(k)] * V[3 * j + k];
      for (int k = 0; k < 3; ++k) o += V[3 * k + i] * V[3 * k + j];
      EXPECT_NEAR(r, full[i][j], 1e-16) << i << j;
      EXPECT_NEAR(o, i == j ? 1.0 : 0.0, 1e-15) << i << j;
    }
  const ArticulatedLarge& m = hull_config().model_state<ArticulatedSetup>().large;
  const ArticulatedNames& names = hull_config().model_state<ArticulatedSetup>().names;
  int hull = -1, probe = -1;
  for (int b = 0; b < m.n_bodies; ++b) {
    if (names.bodies[size_t(b)] == "hull") hull = b;
    if (names.bodies[size_t(b)] == "probe") probe = b;
    EXPECT_EQ(m.fluid_body[b], names.is_frame(b) ? 0 : 1) << names.bodies[size_t(b)];
  }
  ASSERT_GE(hull, 0);
  ASSERT_GE(probe, 0);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(m.fluid_frame[hull][i], V[i]) << i;
  // the probe's inertia_frame (0.8, 0, 0.6, 0): a turn about y by 2 atan(0.75)
  EXPECT_NEAR(m.fluid_frame[probe][0], 0.28, 1e-15);
  EXPECT_NEAR(m.fluid_frame[probe][2], 0.96, 1e-15);
  EXPECT_NEAR(m.fluid_frame[probe][6], -0.96, 1e-15);
}

TEST(Fluid, SlotsCapacityAndEffectiveModel) {
  const ExperimentConfig& c = hull_config();
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  // a tree that fits the arm's capacity runs at the scalar one, which has the fluid
  EXPECT_TRUE(s.large_tree);
  EXPECT_FALSE(s.legged_tree);
  const ArticulatedLarge& m = s.large;
  ASSERT_TRUE(m.fluid);
  EXPECT_EQ(m.np(), m.p_tendon(0, 0) + ArticulatedLarge::kFluidParams);
  EXPECT_EQ(int(c.theta.size()), m.np());
  const auto& names = c.info.param_names;
  const auto& units = c.info.param_units;
  EXPECT_EQ(names[size_t(m.p_fluid(Articulated::kFluidDensity))], "fluid.density");
  EXPECT_EQ(units[size_t(m.p_fluid(Articulated::kFluidDensity))], "kg/m^3");
  EXPECT_EQ(names[size_t(m.p_fluid(Articulated::kFluidViscosity))], "fluid.viscosity");
  EXPECT_EQ(units[size_t(m.p_fluid(Articulated::kFluidViscosity))], "Pa*s");
  EXPECT_EQ(names[size_t(m.p_fluid(Articulated::kFluidWindZ))], "fluid.wind.z");
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidDensity))], 10.0);
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidViscosity))], 0.05);
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidWindY))], -0.2);
  const nlohmann::json eff = articulated_model_json(c);
  ASSERT_TRUE(eff.contains("fluid"));
  EXPECT_EQ(eff["fluid"]["integration"], "explicit");
  // without model.fluid nothing changes: θ ends at the tendons and the arm's capacity is kept
  nlohmann::json dry = hull_model();
  dry.erase("fluid");
  dry["bodies"][0].erase("joint");
  const ExperimentConfig d = parse_config(config_json(dry));
  EXPECT_FALSE(d.model_state<ArticulatedSetup>().large_tree);
  EXPECT_EQ(int(d.theta.size()), d.model_state<ArticulatedSetup>().model.p_tendon(0, 0));
}

TEST(Fluid, RefusalsNameTheKey) {
  auto with = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json m = hull_model();
    edit(m);
    return config_json(m);
  };
  expect_config_error(with([](nlohmann::json& m) { m["integrator"] = "implicitfast"; }),
                      {"model.fluid", "implicitfast", "\"euler\" or \"rk4\""});
  expect_config_error(with([](nlohmann::json& m) { m["fluid"]["density"] = -1; }),
                      {"model.fluid.density", "out of range"});
  expect_config_error(with([](nlohmann::json& m) { m["fluid"]["viscosity"] = 1e4; }),
                      {"model.fluid.viscosity", "out of range"});
  expect_config_error(with([](nlohmann::json& m) {
                        m["fluid"]["wind"] = {1, 2};
                      }),
                      {"model.fluid.wind"});
  expect_config_error(with([](nlohmann::json& m) { m["fluid"]["speed"] = 1; }),
                      {"model.fluid", "speed"});
  expect_config_error(with([](nlohmann::json& m) { m["fluid"] = 3; }),
                      {"model.fluid", "expected {"});
  expect_config_error(with([](nlohmann::json& m) {
                        m["bodies"][1]["inertia_frame"] = {0, 0, 0, 0};
                      }),
                      {"model.bodies[1].inertia_frame", "zero"});
}

}  // namespace
