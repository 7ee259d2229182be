// Fixed tendons (model.tendons; actuator.h): a length L_t = Σ_j c_tj q_j over hinges and
// slides, a force f_t = −k_t (L_t − L0_t) − d_t L̇_t + f_l,t(L_t) applied as τ_j += c_tj f_t,
// the damping explicit in euler and rk4 and implicit (h d_t c_t c_tᵀ in the step's matrix) in
// implicitfast, the range a smooth penalty under model.joint_limits' law. The chain here is
// configs/mjcf/tendon_chain.xml's with a slide added (tendon_mujoco_test.cpp compares the file
// with MuJoCo). Checked, all in float64:
//   - the generic gradient suite (gradient_suite.h: hand vs dual ≤ 1e-12 relative, dual vs
//     centred FD per step ≤ 1e-6, rollout vs centred FD ≤ 1e-6 relative + 1e-9) on euler,
//     implicitfast and rk4, θ including every tendon's stiffness, springlength and damping,
//     at a state where one tendon's range limit acts;
//   - physics: with the tendon spring alone the energy ½ q̇ᵀM q̇ + gravity + ½ k (L − L0)² is
//     conserved by rk4 (drift ≤ 1e-9 relative over 1 s at 1 ms); a tendon damper makes the
//     model non-conservative; a one-hinge tendon is the joint spring and damper it equals (the
//     same q̈ to 1e-13 as a joint spring c² k at L0/c with damping c² d; implicitfast's step
//     the same, euler's the tendon damper's explicit step, to 1e-12);
//   - the parse: slot names, units, values, the effective model's tendons, and the refusals;
//   - a tendon's length as a loss.reference column ("tendon.<name>", Loss's linear channels):
//     the loss against ½ w Σ_k (Σ_j c_j q_j(k) − ref_k)² from the states, the problem's gradient
//     against centred FD (1e-6 relative), a spatial tendon's column refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config_errors.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "problem/problem.h"
#include "steer/models/articulated.h"

using namespace steer;
using namespace steer::testing;

namespace {

// tendon_chain.xml's chain with a slide at the hand; "coupler" spans a hinge pair and the slide
// and has a range whose upper limit acts at kicked_state
nlohmann::json chain_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "integrator": "euler", "gravity": 9.81,
    "bodies": [
      {"name": "upper", "pos": [0, 0, 1.5], "mass": 1.0, "com": [0.2, 0, 0],
       "fullinertia": [0.002, 0.015, 0.015, 0, 0, 0],
       "joint": {"name": "shoulder", "axis": [0, 1, 0], "damping": 0.2}},
      {"name": "lower", "parent": "upper", "pos": [0.4, 0, 0], "mass": 0.8, "com": [0.17, 0, 0],
       "fullinertia": [0.0015, 0.01, 0.01, 0, 0, 0],
       "joint": {"name": "elbow", "axis": [0, 1, 0], "ref": 0.2, "kp": 3, "kv": 0.3,
                 "target": 0.1, "force_limit": 20}},
      {"name": "hand", "parent": "lower", "pos": [0.35, 0, 0], "mass": 0.3,
       "com": [0.07, 0, 0.02], "fullinertia": [0.0004, 0.001, 0.001, 0, 0.0001, 0],
       "joint": {"name": "wrist", "axis": [0, 0.6, 0.8], "armature": 0.01}},
      {"name": "finger", "parent": "hand", "pos": [0.15, 0, 0.05], "mass": 0.1,
       "com": [0.03, 0, 0], "fullinertia": [0.0001, 0.0002, 0.0002, 0, 0, 0],
       "joint": {"name": "ext", "type": "slide", "axis": [1, 0, 0], "damping": 0.5}}],
    "torque_limits": {"enabled": true, "sharpness": 5},
    "joint_limits": {"enabled": true, "stiffness": 50, "smoothing": 0.05},
    "tendons": [
      {"name": "flex", "joints": [{"joint": "shoulder", "coef": 1}, {"joint": "elbow", "coef": -1}],
       "stiffness": 3, "springlength": 0.1, "damping": 0.4},
      {"name": "coupler",
       "joints": [{"joint": "elbow", "coef": 0.5}, {"joint": "wrist", "coef": 1},
                  {"joint": "ext", "coef": 2}],
       "stiffness": 2, "damping": 0.2, "range": [-0.3, 0.05]}]
  })");
}

nlohmann::json config_json(const nlohmann::json& model, const std::string& state = "wrist.q") {
  return {{"name", "tendon_chain"},
          {"model", model},
          {"simulation", {{"dt", 0.002}, {"steps", 10}, {"precision", "float64"}}},
          {"loss", {{"terminal", {{{"state", state}, {"target", 0.1}}}}}},
          {"validation", {{"enabled", false}}}};
}

const ExperimentConfig& chain_config() {
  static const ExperimentConfig c = parse_config(config_json(chain_model()));
  return c;
}

// every joint near its ref and moving; coupler's length ≈ 0.054, at its upper limit 0.05
std::vector<double> kicked_state(const Articulated& m) {
  std::vector<double> x(size_t(m.nx()));
  for (int j = 0; j < m.n_dof; ++j) {
    x[size_t(j)] = m.joint_ref[j] + 0.05 * std::sin(j + 1.0);
    x[size_t(m.n_dof + j)] = 0.4 * std::cos(1.3 * j + 0.2);
  }
  return x;
}

struct TendonProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const char* names[] = {"euler", "implicitfast", "rk4"};
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      Articulated m = chain_config().model_state<ArticulatedSetup>().model;
      m.integrator = integ;
      std::vector<double> u(size_t(m.nu()));
      for (int j = 0; j < m.nu(); ++j) u[size_t(j)] = 0.3 * std::sin(0.7 * j + 0.1);
      out.push_back(StepCase<Articulated>{std::string("tendon chain ") + names[integ], m,
                                          kicked_state(m), u, chain_config().theta});
    }
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    std::vector<RolloutCase<Articulated>> out;
    const char* names[] = {"tendon chain euler, 12 steps", "tendon chain implicitfast, 12 steps",
                           "tendon chain rk4, 6 steps"};
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      RolloutCase<Articulated> r;
      r.model = chain_config().model_state<ArticulatedSetup>().model;
      r.model.integrator = integ;
      r.name = names[integ];
      r.steps = integ == Articulated::kRk4 ? 6 : 12;
      r.checkpoint_every = 5;
      // ε = 1e-5 · max(1, |z|): at the default ε = 1e-6 the FD misses by ~5e-9 on gradients of
      // ~3e-3, and by ten times that at ε = 1e-7 (rounding in the loss, ~5e-15, over ε); the
      // hand adjoint matches the dual one to 1e-12 here (RolloutHandMatchesReference)
      r.fd_scale = 10;
      r.x0 = kicked_state(r.model);
      r.p = chain_config().theta;
      const int n = r.model.n_dof;
      r.u.assign(size_t(r.steps * n), 0.0);
      for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.4 * std::cos(0.37 * double(i));
      r.loss.n_terminal = 4;
      const int idx[4] = {0, 2, 3, n + 1};  // shoulder, wrist, ext, the elbow's velocity
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

INSTANTIATE_TYPED_TEST_SUITE_P(Tendon, GradientSuite, ::testing::Types<TendonProvider>);

namespace {

TEST(Tendon, SlotsValuesAndEffectiveModel) {
  const ExperimentConfig& c = chain_config();
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  ASSERT_FALSE(s.large_tree);
  const Articulated& m = s.model;
  ASSERT_EQ(m.n_tendons, 2);
  EXPECT_EQ(m.np(), m.p_contact(GroundContacts::kParams) + 2 * Articulated::kTendonParams);
  EXPECT_EQ(int(c.theta.size()), m.np());
  // coefficients, stride n_dof
  EXPECT_EQ(m.tendon_c(0, 0), 1.0);
  EXPECT_EQ(m.tendon_c(0, 1), -1.0);
  EXPECT_EQ(m.tendon_c(0, 2), 0.0);
  EXPECT_EQ(m.tendon_c(1, 3), 2.0);
  EXPECT_EQ(m.tendon_limited[0], 0);
  EXPECT_EQ(m.tendon_limited[1], 1);
  EXPECT_EQ(m.tendon_upper[1], 0.05);
  const auto& names = c.info.param_names;
  const auto& units = c.info.param_units;
  EXPECT_EQ(names[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], "flex.stiffness");
  EXPECT_EQ(units[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], "N*m/rad");
  EXPECT_EQ(names[size_t(m.p_tendon(0, Articulated::kTendonSpringLength))], "flex.springlength");
  EXPECT_EQ(units[size_t(m.p_tendon(0, Articulated::kTendonSpringLength))], "rad");
  EXPECT_EQ(names[size_t(m.p_tendon(1, Articulated::kTendonDamping))], "coupler.damping");
  EXPECT_EQ(units[size_t(m.p_tendon(1, Articulated::kTendonDamping))], "F*s/L");  // mixed
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonStiffness))], 3.0);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(0, Articulated::kTendonSpringLength))], 0.1);
  EXPECT_EQ(c.theta[size_t(m.p_tendon(1, Articulated::kTendonDamping))], 0.2);
  const nlohmann::json eff = articulated_model_json(c);
  ASSERT_TRUE(eff.contains("tendons"));
  EXPECT_EQ(eff["tendons"][1]["name"], "coupler");
  EXPECT_EQ(eff["tendons"][1]["joints"].size(), 3u);
  EXPECT_EQ(eff["tendons"][1]["joints"][2]["joint"], "ext");
  EXPECT_EQ(eff["tendons"][1]["range"][1], 0.05);
  EXPECT_EQ(eff["tendons"][0]["damping_integration"], "explicit");
}

// a tendon on one hinge with coefficient c is a joint spring of stiffness c² k at q_s = L0/c
// and a damper c² d: the same q̈ (rk4's right-hand side) to rounding
TEST(Tendon, OneJointTendonIsAJointSpring) {
  nlohmann::json base = nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 9.81, "integrator": "rk4",
    "bodies": [{"name": "arm", "mass": 1.0, "com": [0.3, 0, 0],
                "fullinertia": [0.01, 0.02, 0.02, 0, 0, 0], "joint": {"name": "j", "axis": [0, 1, 0]}}]})");
  nlohmann::json with_tendon = base;
  with_tendon["tendons"] = {{{"name", "t"},
                             {"joints", {{{"joint", "j"}, {"coef", 2.0}}}},
                             {"stiffness", 3.0},
                             {"springlength", 0.4},
                             {"damping", 0.25}}};
  nlohmann::json with_spring = base;
  with_spring["bodies"][0]["joint"]["stiffness"] = 12.0;
  with_spring["bodies"][0]["joint"]["springref"] = 0.2;
  with_spring["bodies"][0]["joint"]["damping"] = 1.0;
  const ExperimentConfig a = parse_config(config_json(with_tendon, "j.q"));
  const ExperimentConfig b = parse_config(config_json(with_spring, "j.q"));
  const Articulated& ma = a.model_state<ArticulatedSetup>().model;
  const Articulated& mb = b.model_state<ArticulatedSetup>().model;
  // (arrays at the capacity: the compiler cannot see that the model reads only its one dof)
  const double q[Articulated::kMaxQ] = {0.7}, v[Articulated::kMaxDof] = {-0.3},
               u[Articulated::kMaxDof] = {0.1};
  double qa[Articulated::kMaxDof], qb[Articulated::kMaxDof];
  ma.acceleration<double>(q, v, u, a.theta.data(), qa);
  mb.acceleration<double>(q, v, u, b.theta.data(), qb);
  EXPECT_NEAR(qa[0], qb[0], 1e-13 * std::fabs(qb[0]));
  // implicitfast takes both dampers into the step's matrix: the same step. euler takes the
  // joint's damper D = c² d implicitly and the tendon's explicitly (as MuJoCo's Euler), so with
  // M = I_yy + m r² = 0.11 kg·m² and F every other force, from the joint spring's step
  // (M + h D) v⁺ = M v + h F, the tendon's is v⁺ = v + h (F − D v)/M
  const double h = ma.dt, M = 0.02 + 1.0 * 0.3 * 0.3, D = 4.0 * 0.25;
  for (int integ : {int(Articulated::kEuler), int(Articulated::kImplicitFast)}) {
    Articulated ea = ma, eb = mb;
    ea.integrator = eb.integrator = integ;
    // (buffers of the capacity's size: the compiler cannot see that a free root's branch is dead)
    std::vector<double> x(Articulated::kMaxState, 0.0), xa = x, xb = x,
                                                        uu(Articulated::kMaxControl, 0.0);
    x[0] = 0.7, x[1] = -0.3, uu[0] = 0.1;
    std::vector<double> pa = a.theta, pb = b.theta;
    auto XA = view(xa.data()), XB = view(xb.data());
    ea.step<double>(0, view(x.data()), view(uu.data()), view(pa.data()), XA);
    eb.step<double>(0, view(x.data()), view(uu.data()), view(pb.data()), XB);
    double expect = xb[1];
    if (integ == Articulated::kEuler) {
      const double F = ((M + h * D) * xb[1] - M * x[1]) / h;
      expect = x[1] + h * (F - D * x[1]) / M;
      EXPECT_GT(std::fabs(expect - xb[1]), 1e-5);  // the two dampers' steps do differ
    }
    EXPECT_NEAR(xa[1], expect, 1e-12) << integ;
  }
}

// the tendon spring alone (no damping, no limit, no servo): rk4 keeps the energy with
// ½ k (L − L0)² in it
TEST(Tendon, Rk4ConservesEnergyWithTheTendonSpring) {
  nlohmann::json model = chain_model();
  model["integrator"] = "rk4";
  model["joint_limits"]["enabled"] = false;
  model["torque_limits"]["enabled"] = false;
  for (auto& b : model["bodies"]) {
    b["joint"]["damping"] = 0.0;
    b["joint"]["kp"] = 0.0;
    b["joint"]["kv"] = 0.0;
  }
  for (auto& t : model["tendons"]) t["damping"] = 0.0;
  nlohmann::json j = config_json(model);
  j["simulation"]["dt"] = 0.001;
  const ExperimentConfig c = parse_config(j);
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  ASSERT_TRUE(m.conservative<double>(c.theta.data()));
  std::vector<double> x = kicked_state(m), xn(x.size()), u(size_t(m.nu()), 0.0);
  const double e0 = m.energy<double>(x.data(), c.theta.data());
  double drift = 0, spring = 0;
  for (int k = 0; k < 1000; ++k) {
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(c.theta.data()), XN);
    x = xn;
    drift = std::max(drift, std::fabs(m.energy<double>(x.data(), c.theta.data()) - e0));
    const double dl = m.tendon_length<double>(0, x.data()) - 0.1;
    spring = std::max(spring, 0.5 * 3.0 * dl * dl);
  }
  EXPECT_LE(drift, 1e-9 * std::fabs(e0));
  EXPECT_GT(spring, 1e-3) << "the tendon spring should store energy";
  std::vector<double> damped = c.theta;
  damped[size_t(m.p_tendon(1, Articulated::kTendonDamping))] = 0.1;
  EXPECT_FALSE(m.conservative<double>(damped.data()));
}

TEST(Tendon, RefusalsNameTheKey) {
  nlohmann::json unknown = config_json(chain_model());
  unknown["model"]["tendons"][0]["joints"][1]["joint"] = "knee";
  expect_config_error(unknown, {"model.tendons[0].joints[1].joint", "'knee'", "not a hinge"});
  nlohmann::json twice = config_json(chain_model());
  twice["model"]["tendons"][0]["joints"][1]["joint"] = "shoulder";
  expect_config_error(twice, {"model.tendons[0].joints[1].joint", "listed twice"});
  nlohmann::json zero = config_json(chain_model());
  zero["model"]["tendons"][1]["joints"][0]["coef"] = 0;
  expect_config_error(zero, {"model.tendons[1].joints[0].coef", "not be zero"});
  nlohmann::json empty = config_json(chain_model());
  empty["model"]["tendons"][1]["joints"] = nlohmann::json::array();
  expect_config_error(empty, {"model.tendons[1].joints", "non-empty"});
  nlohmann::json range = config_json(chain_model());
  range["model"]["tendons"][1]["range"] = {0.1, -0.1};
  expect_config_error(range, {"model.tendons[1].range", "low < high"});
  nlohmann::json negative = config_json(chain_model());
  negative["model"]["tendons"][0]["stiffness"] = -1;
  expect_config_error(negative, {"model.tendons[0].stiffness", "out of range"});
  nlohmann::json name = config_json(chain_model());
  name["model"]["tendons"][1]["name"] = "flex";
  expect_config_error(name, {"model.tendons[1].name", "used twice"});
  nlohmann::json unknown_key = config_json(chain_model());
  unknown_key["model"]["tendons"][0]["frictionloss"] = 1;
  expect_config_error(unknown_key, {"model.tendons[0]", "frictionloss"});
  nlohmann::json servo = config_json(chain_model());
  servo["model"]["integrator"] = "implicitfast";
  servo["model"]["torque_limits"]["newton_iterations"] = 2;
  expect_config_error(servo, {"model.tendons", "newton_iterations"});
}

}  // namespace

namespace {

// target_range narrows a PD target's θ range (and clamps its default, the initial pose);
// springlength_range narrows a tendon's springlength slot (an imported servo's ctrlrange)
TEST(Tendon, TargetAndSpringlengthRanges) {
  nlohmann::json model = chain_model();
  model["bodies"][1]["joint"]["target_range"] = {0.25, 0.4};  // elbow: ref 0.2 is below it
  model["bodies"][1]["joint"].erase("target");
  model["tendons"][1]["springlength_range"] = {-0.1, 0.2};
  const ExperimentConfig c = parse_config(config_json(model));
  const Articulated& m = c.model_state<ArticulatedSetup>().model;
  const int target = m.p_joint(1, Articulated::kTarget);
  EXPECT_EQ(c.info.param_ranges[size_t(target)].lo, 0.25);
  EXPECT_EQ(c.info.param_ranges[size_t(target)].hi, 0.4);
  EXPECT_EQ(c.theta[size_t(target)], 0.25);  // the initial pose (0.2), clamped into the range
  const int len = m.p_tendon(1, Articulated::kTendonSpringLength);
  EXPECT_EQ(c.info.param_ranges[size_t(len)].lo, -0.1);
  EXPECT_EQ(c.info.param_ranges[size_t(len)].hi, 0.2);
  EXPECT_EQ(c.theta[size_t(len)], 0.0);
  const nlohmann::json eff = articulated_model_json(c);
  EXPECT_EQ(eff["bodies"][1]["joint"]["target_range"][0], 0.25);
  EXPECT_EQ(eff["tendons"][1]["springlength_range"][1], 0.2);
  EXPECT_FALSE(eff["tendons"][0].contains("springlength_range"));

  nlohmann::json outside = config_json(chain_model());
  outside["model"]["bodies"][1]["joint"]["range"] = {-1, 1};
  outside["model"]["bodies"][1]["joint"]["target_range"] = {-2, 0.5};
  expect_config_error(outside, {"model.bodies[1].joint.target_range", "out of range"});
  nlohmann::json reversed = config_json(chain_model());
  reversed["model"]["bodies"][1]["joint"]["target_range"] = {0.5, 0.1};
  expect_config_error(reversed, {"model.bodies[1].joint.target_range", "low < high"});
  nlohmann::json beyond = config_json(chain_model());
  beyond["model"]["bodies"][1]["joint"]["target_range"] = {-0.5, 0.05};  // target 0.1
  expect_config_error(beyond, {"model.bodies[1].joint.target", "out of range"});
  nlohmann::json length = config_json(chain_model());
  length["model"]["tendons"][0]["springlength_range"] = {0.2, 0.5};  // springlength 0.1
  expect_config_error(length, {"model.tendons[0].springlength", "out of range"});
}

}  // namespace

namespace {

TEST(Tendon, LengthIsALossColumn) {
  nlohmann::json j = config_json(chain_model());
  const int T = 60;
  j["simulation"]["steps"] = T;
  j["loss"] = nlohmann::json::object();
  nlohmann::json rows = nlohmann::json::array();
  for (int k = 0; k <= T; ++k) rows.push_back({0.3 * std::sin(0.05 * k), 0.1 + 0.002 * k});
  j["loss"]["reference"] = {{"columns", {"tendon.flex", "elbow.q"}},
                            {"values", rows},
                            {"weight", {{"tendon.flex", 3.0}}}};
  j["variables"] = {{"theta.flex.stiffness", {{"lower", 0.0}, {"upper", 10.0}}},
                    {"x0.shoulder.q", nlohmann::json::object()}};
  j["validation"] = {{"enabled", false}};
  const ExperimentConfig c = parse_config(j);
  std::unique_ptr<Problem> p = make_problem(c, BackendKind::kCpu, 1);
  std::vector<double> v = p->initial();
  Evaluation ev;
  p->evaluate(v, true, ev);
  // the loss from the states: flex = shoulder − elbow
  const std::vector<double> xs = p->trajectories(v, 1, 1);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  const int nx = m.nx(), sh = 0, el = 1;
  double expect = 0;
  for (int k = 0; k <= T; ++k) {
    const double* x = xs.data() + size_t(k) * nx;
    const double L = x[sh] - x[el];
    expect += 0.5 * 3.0 * std::pow(L - rows[size_t(k)][0].get<double>(), 2) +
              0.5 * std::pow(x[el] - rows[size_t(k)][1].get<double>(), 2);
  }
  EXPECT_NEAR(ev.loss[0], expect, 1e-12 * std::max(1.0, expect));
  for (int i = 0; i < p->num_vars(); ++i) {
    const double e = 1e-6;
    std::vector<double> vp = v, vm = v;
    vp[size_t(i)] += e, vm[size_t(i)] -= e;
    Evaluation ep, em;
    p->evaluate(vp, false, ep);
    p->evaluate(vm, false, em);
    const double fd = (ep.loss[0] - em.loss[0]) / (2 * e);
    EXPECT_NEAR(ev.grad[size_t(i)], fd, 1e-6 * std::max(1e-3, std::fabs(fd)))
        << p->var_names()[size_t(i)];
  }
  // an unknown column lists the tendons among the accepted ones
  nlohmann::json bad = j;
  bad["loss"]["reference"]["columns"] = {"tendon.nothing", "elbow.q"};
  expect_config_error(bad, {"loss.reference", "tendon.flex"});
}

TEST(Tendon, SpatialTendonLengthIsRefusedAsALossColumn) {
  nlohmann::json model = chain_model();
  model["sites"] = {{{"name", "wall"}, {"body", "world"}, {"pos", {-1, 0, 0}}},
                    {{"name", "hook"}, {"body", "lower"}, {"pos", {0.1, 0, 0}}}};
  model["tendons"].push_back({{"name", "cable"}, {"sites", {"wall", "hook"}}});
  nlohmann::json j = config_json(model);
  j["loss"]["reference"] = {{"columns", {"tendon.cable"}},
                            {"values", nlohmann::json::array({nlohmann::json::array({1.0}),
                                                              nlohmann::json::array({1.0})})}};
  j["simulation"]["steps"] = 1;
  expect_config_error(j, {"tendon.cable", "spatial tendon"});
}

}  // namespace
