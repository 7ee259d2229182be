// src/validate/validator.cpp: the directional FD check and its failure labels, each produced by
// a real simulation that exhibits the cause (or, for fd_mismatch, by a gradient that is
// wrong on purpose).
#include "validate/validator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "config/json_reader.h"
#include "models/mass_spring/mass_spring_robot.h"
#include "models/projectile/projectile_setup.h"
#include "problem/problem.h"
#include "steer/dual.h"
#include "steer/models/mass_spring.h"

namespace steer {
namespace {

// the bouncing setup of configs/projectile_ground_penalty.json: drag couples the
// horizontal motion to the bounces and the loss watches both coordinates
nlohmann::json ground_config(double stiffness) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "t",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.1},
    "simulation": {"dt": 0.002, "steps": 1000, "backend": "cpu"},
    "initial_state": {"position": [0, 1.0], "velocity": [1.5, 0.5]},
    "loss": {"terminal": [{"state": "position.x", "target": 3.0}, {"state": "position.y", "target": 0.5}]},
    "variables": {"x0.velocity.x": {}, "x0.velocity.y": {}}
  })");
  j["model"]["ground"] = {
      {"type", "penalty"}, {"stiffness", stiffness}, {"damping", 5.0}, {"smoothing", 1e-3}};
  return j;
}

nlohmann::json base_config() {
  return nlohmann::json::parse(R"({
    "name": "t",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81},
    "simulation": {"dt": 0.01, "steps": 300, "backend": "cpu"},
    "initial_state": {"position": [0, 0], "velocity": [2.5, 1.0]},
    "loss": {"terminal": [{"state": "position.x", "target": 6.0}]},
    "variables": {"x0.velocity.x": {}, "x0.velocity.y": {}}
  })");
}

ValidationReport check(const nlohmann::json& j) {
  ExperimentConfig c = parse_config(j);
  auto p = make_problem(c, BackendKind::kCpu, 0);
  return validate(*p, p->initial(), c.validation, "initial");
}

bool has_label(const RolloutCheck& r, const std::string& name, double* figure = nullptr) {
  for (const auto& l : r.labels)
    if (l.name == name) {
      if (figure) *figure = l.figure;
      return true;
    }
  return false;
}

// the detail of label `name` on r ("" when r has no such label)
std::string label_detail(const RolloutCheck& r, const std::string& name) {
  for (const auto& l : r.labels)
    if (l.name == name) return l.detail;
  return "";
}

TEST(Validator, RelativeErrorIsAbsoluteBelowTheFloor) {
  EXPECT_NEAR(relative_error(1.01, 1.0, 1e-8), 0.01 / 1.01, 1e-15);
  EXPECT_NEAR(relative_error(3e-12, 1e-12, 1e-8), 2e-12 / 1e-8, 1e-18);
}

// the worked example is linear in v0: the check passes far below its 1e-6 tolerance
TEST(Validator, WorkedExamplePasses) {
  ValidationReport r = check(base_config());
  ASSERT_EQ(r.rollouts.size(), 1u);
  EXPECT_TRUE(r.all_passed());
  EXPECT_LE(r.max_error, 1e-6);
  EXPECT_FALSE(has_label(r.rollouts[0], "fd_mismatch"));
  EXPECT_EQ(r.forward_passes, 2 * 9);  // primary ε + 8 sweep values, two passes each
}

// a gradient that is 1% wrong is caught and labelled with its error
class BiasedProblem : public Problem {
 public:
  explicit BiasedProblem(std::unique_ptr<Problem> p) : inner_(std::move(p)) {
    batch_size_ = inner_->batch_size();
    lower_ = inner_->lower();
    upper_ = inner_->upper();
    initial_ = inner_->initial();
  }
  void evaluate(const std::vector<double>& v, bool g, Evaluation& out) override {
    inner_->evaluate(v, g, out);
    for (double& x : out.grad) x *= 1.01;
  }
  std::vector<double> trajectories(const std::vector<double>& v, int n, int s) override {
    return inner_->trajectories(v, n, s);
  }
  std::vector<double> parameters(const std::vector<double>& v) override {
    return inner_->parameters(v);
  }

 private:
  std::unique_ptr<Problem> inner_;
};

TEST(Validator, WrongGradientIsLabelledFdMismatch) {
  ExperimentConfig c = parse_config(base_config());
  BiasedProblem p(make_problem(c, BackendKind::kCpu, 0));
  ValidationReport r = validate(p, p.initial(), c.validation, "initial");
  double fig = 0;
  ASSERT_TRUE(has_label(r.rollouts[0], "fd_mismatch", &fig));
  EXPECT_NEAR(fig, 0.01 / 1.01, 1e-6);
  EXPECT_FALSE(r.all_passed());
}

// the penalty ground, stiffness swept over four decades in one batch: the FD-vs-adjoint
// error at a fixed ε grows with stiffness, and a contact mode switch is reported where the
// contact set differs between the ±ε rollouts
TEST(Validator, StiffGroundGrowsErrorAndReportsModeSwitch) {
  nlohmann::json j = ground_config(100.0);
  j["batch"] = {{"size", 4}, {"sweep", {{"theta.ground.stiffness", {1e2, 1e3, 1e4, 1e5}}}}};
  j["validation"] = {{"epsilon", 1e-4}, {"epsilon_sweep", {1e-2, 1e-3, 1e-5, 1e-6, 1e-7}}};
  ValidationReport r = check(j);
  ASSERT_EQ(r.rollouts.size(), 4u);
  // error at the primary ε = 1e-4, softest vs stiffest
  EXPECT_GT(r.rollouts[3].error, 100 * r.rollouts[0].error);
  // at ε = 1e-2 (sweep index 0) the stiff ground changes which steps are in contact
  EXPECT_EQ(r.rollouts[3].sweep_mode_switch[0], 1);
  EXPECT_TRUE(has_label(r.rollouts[3], "contact_mode_switch"));
  // the soft grounds still pass at their best ε
  EXPECT_TRUE(r.rollouts[0].passed);
}

// a ground too stiff for the step (ω h = √(k/m) h = 2 at k = 1e6, h = 2 ms) makes the
// adjoint grow without bound backwards over the horizon
TEST(Validator, UnstableContactIsLabelledExploding) {
  nlohmann::json j = ground_config(1e6);
  ValidationReport r = check(j);
  double ratio = 0;
  ASSERT_TRUE(has_label(r.rollouts[0], "gradient_exploding", &ratio));
  EXPECT_GT(ratio, 1e3);
}

// chatter: a unit mass resting in a linear penalty ground (smoothing 1 µm, so F ≈ k·depth)
// oscillates about its equilibrium depth mg/k, started a little off it and never leaving
// contact. Symplectic Euler turns that into a discrete oscillation with cos θ = 1 − (ωh)²/2 per
// step, ω = √(k/m). At ωh = 1.9 (k = 9.025e5 N/m, h = 2 ms; depth 10.9 µm, started 1 µm off,
// which the discrete oscillation swings to ±3 µm) θ = 2.51 rad: a period of 2.5 steps, so v_y
// turns back at 2.51/π ≈ 80% of the steps (measured 399 of 499), and the validator labels it
// chatter with that fraction. At ωh = 0.2 (k = 1e4 N/m, started 0.1 mm off) the period is 31
// steps: v_y turns back about 2·500/31 ≈ 32 times, 6% of the steps, below the 0.25 default.
TEST(Validator, UnresolvedOscillationIsLabelledChatter) {
  auto resting = [](double k, double offset) {
    nlohmann::json j = base_config();
    j["simulation"] = {{"dt", 0.002}, {"steps", 500}, {"backend", "cpu"}};
    j["model"]["ground"] = {
        {"type", "penalty"}, {"stiffness", k}, {"damping", 0.5}, {"smoothing", 1e-6}};
    j["model"]["mass"] = 1.0;
    j["initial_state"] = {{"position", {0.0, -9.81 / k - offset}}, {"velocity", {0.0, 0.0}}};
    j["validation"] = {{"timestep_check", false}};
    return j;
  };
  ValidationReport stiff = check(resting(9.025e5, 1e-6));
  const VelocityReversals& vs = stiff.rollouts[0].reversals;
  EXPECT_EQ(vs.name, "velocity.y");
  double fig = 0;
  ASSERT_TRUE(has_label(stiff.rollouts[0], "chatter", &fig)) << vs.count;
  EXPECT_GT(fig, 0.7);
  EXPECT_LT(fig, 0.9);
  EXPECT_DOUBLE_EQ(fig, double(vs.count) / 499);
  EXPECT_GT(vs.median_jump, 1e-3);  // |v| reaches 3e-3 m/s, and it turns back by about that much
  // the detail names the remedy for a contact at its stability limit, not the servo's
  EXPECT_NE(label_detail(stiff.rollouts[0], "chatter").find("remedy: a smaller simulation.dt"),
            std::string::npos);
  EXPECT_EQ(label_detail(stiff.rollouts[0], "chatter").find("newton_iterations"),
            std::string::npos);

  ValidationReport soft = check(resting(1e4, 1e-4));
  const VelocityReversals& vf = soft.rollouts[0].reversals;
  EXPECT_EQ(vf.name, "velocity.y");
  EXPECT_GT(vf.count, 20);  // it does oscillate: ~2·500/31 ≈ 32 turns
  EXPECT_LT(vf.count, 50);
  EXPECT_FALSE(has_label(soft.rollouts[0], "chatter"));
  // the count can be turned off
  nlohmann::json off = resting(9.025e5, 1e-6);
  off["validation"]["chatter_fraction"] = 0.0;
  EXPECT_FALSE(has_label(check(off).rollouts[0], "chatter"));
}

// quadratic drag bleeds velocity sensitivity: ∂v_T/∂v_0 = (v_T/v_0)² ≈ 4e-4 after 10 s
TEST(Validator, DragOverLongHorizonIsLabelledVanishing) {
  nlohmann::json j = base_config();
  j["model"]["drag"] = 1.0;
  j["simulation"]["steps"] = 1000;
  j["initial_state"]["velocity"] = {5.0, 0.0};
  j["model"]["gravity"] = 0.0;
  j["loss"] = {{"terminal", {{{"state", "velocity.x"}, {"target", 0.0}}}}};
  ValidationReport r = check(j);
  double ratio = 0;
  ASSERT_TRUE(has_label(r.rollouts[0], "gradient_vanishing", &ratio));
  EXPECT_LT(ratio, 1e-3);
  EXPECT_GT(ratio, 0.0);
}

// symplectic Euler under constant gravity drifts by ΔE = ½ g² h² k per unit mass after k
// steps; the validator measures it against the largest kinetic energy of the motion. With
// h = 0.05 s over 100 steps: ΔE = 12.0 J/kg against KE_max = ½(2.5² + 48.05²) = 1157 J/kg.
TEST(Validator, LargeStepIsLabelledEnergyDrift) {
  nlohmann::json j = base_config();
  j["simulation"]["dt"] = 0.05;
  j["simulation"]["steps"] = 100;
  j["validation"] = {{"energy_drift_bound", 0.005}};
  auto expected_drift = [](double h, int k) {
    const double g = 9.81, vy = 1.0 - g * h * k;
    return 0.5 * g * g * h * h * k / (0.5 * (2.5 * 2.5 + vy * vy));
  };
  ValidationReport r = check(j);
  double drift = 0;
  ASSERT_TRUE(has_label(r.rollouts[0], "energy_drift", &drift));
  EXPECT_NEAR(drift, expected_drift(0.05, 100), 1e-9);
  // with a 10x smaller step over the same 5 s the drift is 10x smaller and below the bound
  j["simulation"]["dt"] = 0.005;
  j["simulation"]["steps"] = 1000;
  ValidationReport r2 = check(j);
  EXPECT_FALSE(has_label(r2.rollouts[0], "energy_drift"));
  EXPECT_NEAR(r2.rollouts[0].energy_drift, expected_drift(0.005, 1000), 1e-9);
}

// an overflowing state is labelled nonfinite and fails
TEST(Validator, OverflowIsLabelledNonfinite) {
  nlohmann::json j = base_config();
  // v' = v − h c |v| v flips sign and squares the magnitude every step: 1e9 → −1e19 → 1e39 → … →
  // inf
  j["model"]["drag"] = 1000.0;
  j["initial_state"]["velocity"] = {1e9, 0.0};
  ValidationReport r = check(j);
  EXPECT_TRUE(has_label(r.rollouts[0], "nonfinite"));
  EXPECT_FALSE(r.rollouts[0].passed);
}

// A float32 run is checked on its float64 twin; its own float32 adjoint gradient must then be
// within validation.float32_tolerance of the float64 one. The worked example's flight is
// smooth (deviation ~1e-5, measured 1.2e-5): it passes at the default 1e-2 and fails, labelled
// float32_rounding with the deviation as the figure, when the tolerance is set below it.
TEST(Validator, Float32DeviationIsMeasuredAndGated) {
  nlohmann::json j = base_config();
  j["simulation"]["precision"] = "float32";
  ExperimentConfig c32 = parse_config(j);
  j["simulation"]["precision"] = "float64";
  ExperimentConfig c64 = parse_config(j);
  auto p32 = make_problem(c32, BackendKind::kCpu, 0);
  auto p64 = make_problem(c64, BackendKind::kCpu, 0);
  const std::vector<double> v = p64->initial();
  // the deviation by hand, from the two problems' gradients
  Evaluation e32, e64;
  p32->evaluate(v, true, e32);
  p64->evaluate(v, true, e64);
  double d2 = 0, g2 = 0;
  for (size_t i = 0; i < e64.grad.size(); ++i) {
    d2 += (e32.grad[i] - e64.grad[i]) * (e32.grad[i] - e64.grad[i]);
    g2 += e64.grad[i] * e64.grad[i];
  }
  const double expected = std::sqrt(d2 / g2);
  ASSERT_GT(expected, 1e-8);  // float32 really rounds
  ASSERT_LT(expected, 1e-3);

  ValidationReport r = validate(*p64, v, c32.validation, "initial", p32.get());
  ASSERT_EQ(r.rollouts.size(), 1u);
  EXPECT_TRUE(r.all_passed());
  EXPECT_TRUE(r.float32_compared);
  EXPECT_DOUBLE_EQ(r.rollouts[0].float32_deviation, expected);
  EXPECT_DOUBLE_EQ(r.float32_max_deviation, expected);
  EXPECT_FALSE(has_label(r.rollouts[0], "float32_rounding"));
  EXPECT_EQ(r.forward_passes,
            2 * 9);  // the float32 gradient is one evaluation, not a forward pass of the check

  ValidationConfig tight = c32.validation;
  tight.float32_tolerance = expected / 2;
  ValidationReport rt = validate(*p64, v, tight, "initial", p32.get());
  double fig = 0;
  ASSERT_TRUE(has_label(rt.rollouts[0], "float32_rounding", &fig));
  EXPECT_DOUBLE_EQ(fig, expected);
  EXPECT_FALSE(rt.all_passed());
  EXPECT_EQ(rt.label_counts["float32_rounding"], 1);
  // the float64 check itself still passes: only the float32 gate failed
  EXPECT_FALSE(has_label(rt.rollouts[0], "fd_mismatch"));
  const nlohmann::json a = to_json(rt, 1);
  EXPECT_EQ(a["float32_vs_float64"]["rollouts_over_tolerance"], 1);
  EXPECT_DOUBLE_EQ(a["rollouts"][0]["float32_gradient_relative_deviation"].get<double>(), expected);

  // a float64 run has no float32 figures
  ValidationReport r64 = validate(*p64, v, c64.validation, "initial");
  EXPECT_FALSE(r64.float32_compared);
  EXPECT_LT(r64.rollouts[0].float32_deviation, 0);
  EXPECT_FALSE(to_json(r64, 1).contains("float32_vs_float64"));
}

// HalfStepProblem is the experiment at h/2 in the variables at h. On a projectile with drag,
// a force control per step and an effort term: (a) its loss and gradient are the fine
// problem's at the refined variables (each u_k twice), with ∂L/∂u_k the sum over the two half
// steps; (b) that gradient passes the centered-FD check itself (the sum is the derivative of
// holding u_k over both half steps); (c) the halved config has dt/2, 2T steps and half the
// effort weight (2T half steps hold each u_k twice); (d) the gradient changes by O(h) between
// the two discretizations (measured 7.6e-4), far under the default tolerance 0.3, so there is
// no label unless the tolerance is set below the change.
TEST(Validator, HalfStepProblemHoldsEachControlOverTwoHalfSteps) {
  nlohmann::json j = base_config();
  j["model"]["drag"] = 0.05;
  j["simulation"]["steps"] = 100;
  j["controls"] = {{"initial", {0.3, -0.2}}};
  j["loss"]["control_effort"] = 0.01;
  j["variables"]["controls"] = {{"lower", -10}, {"upper", 10}};
  ExperimentConfig c = parse_config(j);
  const ExperimentConfig f = halved_timestep(c);
  EXPECT_DOUBLE_EQ(f.dt, c.dt / 2);
  EXPECT_EQ(f.steps, 2 * c.steps);
  EXPECT_DOUBLE_EQ(f.model_state<ProjectileSetup>().model.dt, c.dt / 2);
  // the copy owns its model: halving its dt left the original's alone
  EXPECT_DOUBLE_EQ(c.model_state<ProjectileSetup>().model.dt, c.dt);
  EXPECT_DOUBLE_EQ(f.loss.effort_weight, c.loss.effort_weight / 2);

  for (const auto& var : f.variables) {
    if (var.kind != VariableSpec::kControl) continue;
    EXPECT_EQ(var.hold, 2) << var.name;  // a knot spans 2 half steps
  }
  HalfStepProblem half(c, BackendKind::kCpu, 0);
  auto coarse = make_problem(c, BackendKind::kCpu, 0);
  // the fine problem with one control entry per half step, to see the sum over the pair
  ExperimentConfig f1 = f;
  for (auto& var : f1.variables) var.hold = 1;
  auto fine = make_problem(f1, BackendKind::kCpu, 0);
  ASSERT_EQ(half.num_vars(), coarse->num_vars());
  ASSERT_EQ(fine->num_vars(), 2 + 2 * 2 * c.steps);  // x0.velocity.x/y and 2T steps of 2 controls
  const std::vector<double> v = coarse->initial();
  EXPECT_EQ(half.initial(), v);
  EXPECT_EQ(half.var_names(), coarse->var_names());
  // v at h -> v at h/2: each control entry twice, x0 entries once
  std::vector<double> refined;
  for (int i = 0; i < coarse->num_vars(); ++i) {
    refined.push_back(v[size_t(i)]);
    if (coarse->var_names()[size_t(i)].find('[') != std::string::npos)
      refined.push_back(v[size_t(i)]);
  }
  Evaluation eh, ef;
  half.evaluate(v, true, eh);
  fine->evaluate(refined, true, ef);
  EXPECT_EQ(eh.loss, ef.loss);
  // by name: "controls.force.x[k]" at h is "controls.force.x[2k]" and "[2k+1]" at h/2, the
  // x0 variables are themselves
  std::map<std::string, int> at_fine;
  for (int i = 0; i < fine->num_vars(); ++i) at_fine[fine->var_names()[size_t(i)]] = i;
  int controls = 0;
  for (int i = 0; i < half.num_vars(); ++i) {
    const std::string& name = half.var_names()[size_t(i)];
    const size_t br = name.find('[');
    if (br == std::string::npos) {
      EXPECT_EQ(eh.grad[size_t(i)], ef.grad[size_t(at_fine.at(name))]) << name;
      continue;
    }
    const int k = std::stoi(name.substr(br + 1));
    const std::string stem = name.substr(0, br);
    const double g0 = ef.grad[size_t(at_fine.at(stem + "[" + std::to_string(2 * k) + "]"))];
    const double g1 = ef.grad[size_t(at_fine.at(stem + "[" + std::to_string(2 * k + 1) + "]"))];
    EXPECT_EQ(eh.grad[size_t(i)], g0 + g1) << name;
    ++controls;
  }
  EXPECT_EQ(controls, 2 * c.steps);
  ValidationReport rh = validate(half, v, c.validation, "initial");
  EXPECT_TRUE(rh.all_passed()) << rh.max_error;
  EXPECT_LE(rh.max_error, 1e-6);

  ValidationReport r = validate(*coarse, v, c.validation, "initial", nullptr, &half);
  ASSERT_TRUE(r.timestep_checked);
  const double change = r.rollouts[0].timestep_gradient_change;
  EXPECT_GT(change, 1e-4);  // not the same discretization (measured 7.6e-4)
  EXPECT_LT(change, 1e-2);
  EXPECT_FALSE(has_label(r.rollouts[0], "timestep_sensitive"));
  EXPECT_EQ(r.timestep_max_change, change);
  // a tolerance below the change labels it, with the change as the figure, and passes anyway
  ValidationConfig tight = c.validation;
  tight.timestep_tolerance = change / 2;
  ValidationReport rt = validate(*coarse, v, tight, "initial", nullptr, &half);
  double fig = 0;
  ASSERT_TRUE(has_label(rt.rollouts[0], "timestep_sensitive", &fig));
  EXPECT_EQ(fig, change);
  EXPECT_TRUE(rt.all_passed());
  EXPECT_EQ(to_json(rt, 1)["timestep_check"]["rollouts_labelled"], 1);
  EXPECT_FALSE(
      to_json(validate(*coarse, v, c.validation, "initial"), 1).contains("timestep_check"));

  // at an optimum (the final stage) the figure is |L(h/2) − L(h)| over the optimization's gain
  Evaluation ec;
  coarse->evaluate(v, false, ec);
  const double moved = std::fabs(eh.loss[0] - ec.loss[0]);
  ASSERT_GT(moved, 0.0);
  for (const double gain : {100 * moved, moved / 100}) {
    const std::vector<double> gains = {gain};
    ValidationReport rg = validate(*coarse, v, c.validation, "final", nullptr, &half, &gains);
    EXPECT_TRUE(rg.timestep_on_gain);
    EXPECT_NEAR(rg.rollouts[0].timestep_gain_moved, moved / gain, 1e-12 * moved / gain);
    EXPECT_EQ(has_label(rg.rollouts[0], "timestep_sensitive"), gain < moved) << gain;
    EXPECT_EQ(to_json(rg, 1)["timestep_check"]["measure"], "gain_moved");
  }
}

// a problem that cannot be cut to its leading rollouts: the validator then checks on all B
class UncutProblem : public Problem {
 public:
  explicit UncutProblem(Problem& p) : inner_(p) {
    batch_size_ = p.batch_size();
    nx_ = p.nx();
    steps_ = p.steps();
    lower_ = p.lower();
    upper_ = p.upper();
    initial_ = p.initial();
    names_ = p.var_names();
  }
  void evaluate(const std::vector<double>& v, bool g, Evaluation& out) override {
    inner_.evaluate(v, g, out);
  }
  std::vector<double> trajectories(const std::vector<double>& v, int n, int s) override {
    return inner_.trajectories(v, n, s);
  }
  std::vector<double> parameters(const std::vector<double>& v) override {
    return inner_.parameters(v);
  }
  std::vector<double> max_penetration(const std::vector<double>& v, int n) override {
    return inner_.max_penetration(v, n);
  }
  std::vector<VelocityReversals> velocity_reversals(const std::vector<double>& v, int n) override {
    return inner_.velocity_reversals(v, n);
  }

 private:
  Problem& inner_;
};

// Checking the first max_rollouts of a batch on the problems cut to them gives the report of
// checking them on the whole batch, bit for bit (JSON of every figure and label): the Panda of
// configs/panda.json (4 arms, 2 checked), as a float32 run with its float64 twin and the
// timestep check, so all three problems are cut.
TEST(Validator, CheckOnLeadingRolloutsEqualsCheckOnWholeBatch) {
  const std::string dir = std::string(STEER_SOURCE_DIR) + "/configs";
  std::ifstream in(dir + "/panda.json");
  nlohmann::json j = expand_includes(nlohmann::json::parse(in), dir);
  j["validation"]["max_rollouts"] = 2;
  j["simulation"]["precision"] = "float32";
  ExperimentConfig c32 = parse_config(j);
  j["simulation"]["precision"] = "float64";
  ExperimentConfig c64 = parse_config(j);
  ASSERT_EQ(c64.batch_size, 4);
  auto p32 = make_problem(c32, BackendKind::kCpu, 0);
  auto p64 = make_problem(c64, BackendKind::kCpu, 0);
  HalfStepProblem half(c64, BackendKind::kCpu, 0);
  ASSERT_NE(p64->leading(2), nullptr);
  const std::vector<double> v = p64->initial();
  const ValidationReport cut = validate(*p64, v, c64.validation, "initial", p32.get(), &half);
  UncutProblem u64(*p64), u32(*p32), uhalf(half);
  const ValidationReport whole = validate(u64, v, c64.validation, "initial", &u32, &uhalf);
  ASSERT_EQ(cut.rollouts.size(), 2u);
  EXPECT_EQ(to_json(cut, 2).dump(), to_json(whole, 2).dump());
  EXPECT_TRUE(cut.timestep_checked && cut.float32_compared);
}

// two Panda arms at 2 ms under implicitfast with saturating targets, float32: the second
// arm's servos chatter under MuJoCo's linearization (newton_iterations 0); includes expanded
nlohmann::json two_panda_arms(int newton_iterations) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "t",
    "model": {"type": "articulated", "include": "models/panda_arm.json", "integrator": "implicitfast",
              "torque_limits": {"newton_iterations": 0}},
    "simulation": {"dt": 0.002, "steps": 250, "precision": "float32", "backend": "cpu"},
    "initial_state": {"q": [0, 0, 0, -1.57079, 0, 1.57079, -0.7853]},
    "batch": {"size": 2, "sweep": {
      "theta.joint1.target": [-0.2006, -0.0528], "theta.joint2.target": [0.1641, -0.0828],
      "theta.joint3.target": [-0.0732, 0.0744], "theta.joint4.target": [-1.4516, -1.6714],
      "theta.joint5.target": [-0.2648, -0.2550], "theta.joint6.target": [1.4412, 1.4864],
      "theta.joint7.target": [-0.5488, -0.9209]}},
    "loss": {"terminal": [
      {"state": "joint1.q", "target": "theta.joint1.target"}, {"state": "joint2.q", "target": "theta.joint2.target"},
      {"state": "joint3.q", "target": "theta.joint3.target"}, {"state": "joint4.q", "target": "theta.joint4.target"},
      {"state": "joint5.q", "target": "theta.joint5.target"}, {"state": "joint6.q", "target": "theta.joint6.target"},
      {"state": "joint7.q", "target": "theta.joint7.target"}]},
    "variables": {"controls": {"lower": -87, "upper": 87}}
  })");
  j["model"]["torque_limits"]["newton_iterations"] = newton_iterations;
  return expand_includes(j, std::string(STEER_SOURCE_DIR) + "/configs");
}

// The physical case: two Panda arms (panda_reach's PD servos, force limits and 500 ms horizon)
// sent from the home pose to two joint targets (rollouts 0 and 6 of panda_reach's batch, to 4
// digits). Both saturate joints 1-4 at 87 N·m at the start. For the second target, joints 1
// and 3 (nearly coaxial while joint 2 is near 0) fall into a period-2 chatter of implicitfast
// under saturation from the first step: q̇₁ turns back every step (near step 160 between +0.59
// and −0.86 rad/s). MuJoCo 4.0's implicitfast with the same servos and a hard forcerange
// clamp chatters alike until step 174, and steer at saturation sharpness 1000 /(N·m) follows
// it to 5e-15 rad (bench/peers/mujoco_saturation.py, bench/RESULTS.md); at the default 5 /(N·m)
// the chatter lasts to the end. Where it ends depends on the last bits, so float32 and float64
// leave it at different steps: the float32 gradient is as far from the float64 one as the
// gradient is long (measured 1.01 relative, the float32 loss 66% off), and the adjoint
// explodes through the chatter (‖λ_0‖/‖λ_seed‖ measured 4.3e6), so the float64 check fails on
// its own too. The first arm never chatters: its float32 gradient is within 1e-3 (measured
// 1.4e-5) and its check passes. The timestep check tells the two apart as well.
TEST(Validator, ChatteringPandaIsLabelledFloat32Rounding) {
  nlohmann::json j = two_panda_arms(0);
  ExperimentConfig c32 = parse_config(j);
  j["simulation"]["precision"] = "float64";
  auto p32 = make_problem(c32, BackendKind::kCpu, 0);
  auto p64 = make_problem(parse_config(j), BackendKind::kCpu, 0);
  ValidationReport r = validate(*p64, p64->initial(), c32.validation, "initial", p32.get());
  ASSERT_EQ(r.rollouts.size(), 2u);
  EXPECT_LT(r.rollouts[0].float32_deviation, 1e-3);
  EXPECT_FALSE(has_label(r.rollouts[0], "float32_rounding"));
  EXPECT_TRUE(r.rollouts[0].passed);
  double fig = 0;
  ASSERT_TRUE(has_label(r.rollouts[1], "float32_rounding", &fig));
  EXPECT_GT(fig, 0.1);
  EXPECT_TRUE(has_label(r.rollouts[1], "gradient_exploding"));
  EXPECT_FALSE(r.rollouts[1].passed);
  EXPECT_EQ(r.float32_max_deviation, fig);

  // at h/2 (1 ms) the chatter is another one: the chattering arm's gradient changes
  // completely (measured 1.0 relative, its loss 95%), the other arm's by 1.7% (loss 0.4%);
  // the default tolerance 0.3 lies between
  const ExperimentConfig c64 = parse_config(j);
  HalfStepProblem half(c64, BackendKind::kCpu, 0);
  ValidationReport rh = validate(*p64, p64->initial(), c64.validation, "initial", nullptr, &half);
  EXPECT_LT(rh.rollouts[0].timestep_gradient_change, 0.1);
  EXPECT_FALSE(has_label(rh.rollouts[0], "timestep_sensitive"));
  ASSERT_TRUE(has_label(rh.rollouts[1], "timestep_sensitive", &fig));
  EXPECT_GT(fig, 0.5);
  // and the velocity count names the chattering joint
  ASSERT_TRUE(has_label(rh.rollouts[1], "chatter", &fig));
  EXPECT_EQ(rh.rollouts[1].reversals.name, "joint1.v");
  EXPECT_GT(fig, 0.5);
  // and its detail names the key that removes it (ImplicitServoEndsThePandasChatter)
  EXPECT_NE(
      label_detail(rh.rollouts[1], "chatter").find("model.torque_limits.newton_iterations ≥ 1"),
      std::string::npos);
  EXPECT_FALSE(has_label(rh.rollouts[0], "chatter"));
}

// The same two arms with the servo implicit through the saturation
// (model.torque_limits.newton_iterations, articulated.h servo_solve): the chattering arm
// (rollout 1) no longer chatters, its float64 gradient passes the FD check (measured 1.3e-10,
// was 7.1e-5 with gradient_exploding), its float32 gradient is within 1e-5 of float64 (was
// 1.01) and its gradient moves by 0.5% at h/2 (was 100%)
TEST(Validator, ImplicitServoEndsThePandasChatter) {
  nlohmann::json j = two_panda_arms(6);
  ExperimentConfig c32 = parse_config(j);
  j["simulation"]["precision"] = "float64";
  const ExperimentConfig c64 = parse_config(j);
  auto p32 = make_problem(c32, BackendKind::kCpu, 0);
  auto p64 = make_problem(c64, BackendKind::kCpu, 0);
  HalfStepProblem half(c64, BackendKind::kCpu, 0);
  ValidationReport r = validate(*p64, p64->initial(), c32.validation, "initial", p32.get(), &half);
  ASSERT_EQ(r.rollouts.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE("rollout " + std::to_string(k));
    EXPECT_TRUE(r.rollouts[k].passed);
    EXPECT_LT(r.rollouts[k].best_error, 1e-8);
    EXPECT_LT(r.rollouts[k].float32_deviation, 1e-3);
    EXPECT_LT(r.rollouts[k].timestep_gradient_change, 0.05);
    EXPECT_TRUE(r.rollouts[k].labels.empty())
        << r.rollouts[k].labels.size() << " labels, first " << r.rollouts[k].labels.front().name;
  }
}

// ---- the secant check (secant_mismatch) ----
// One particle dropped on the impact ground (y_g = 0, g = 9.81 m/s², e, h = 1 ms), per rollout
// the variables (y_0, v_0) and the loss L = y_T; the gradient is the discrete model's exact
// derivative (forward-mode dual numbers through every step), so the FD check passes for either
// law. law "fixed": MassSpring's time-of-impact step (ground.h, impact_step). law "old": the
// impact law it replaced, kept only here, v'_y = −e v*_y and y' = (1 − s) h v'_y with
// s = y/(−h v*_y), whatever the impact time within the step: ∂y_T/∂y_0 = (−e)^k at every h,
// against the continuous bounce's slope (docs/validation.md, secant_mismatch).
class DropProblem : public Problem {
 public:
  DropProblem(bool old_law, double e, int steps, const std::vector<double>& start)
      : old_(old_law), e_(e) {
    Robot r;
    r.particles = {{0.0, 0.5, 0.0}};
    topo_ = pack_topology(r);
    m_ = make_mass_spring(r, 1, MassSpring::kSinusoid, true, 1e-3);
    m_.impact = true;
    m_.topo = topo_.data();
    p_ = nominal_parameters(m_, r, 1.0, {9.81, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.05, 0.0, e}, 0.0);
    batch_size_ = int(start.size() / 2);
    nx_ = m_.nx();
    steps_ = steps;
    lower_ = {0.01, -5.0};
    upper_ = {5.0, 5.0};
    names_ = {"x0.position.y", "x0.velocity.y"};
    initial_ = start;
  }
  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override {
    using D = Dual<double, 2>;
    const int B = batch_size_;
    out.loss.assign(B, 0.0);
    out.diag.assign(B, RolloutDiag{});
    out.grad.assign(want_grad ? size_t(B) * 2 : 0, 0.0);
    const double h = m_.dt, g = 9.81;
    for (int b = 0; b < B; ++b) {
      std::vector<D> x(m_.nx()), xn(m_.nx()), p(m_.np()), u(1);
      for (int i = 0; i < m_.np(); ++i) p[i] = D(p_[i]);
      x[m_.x_pos(0) + 1] = D::variable(vars[2 * b], 0);
      x[m_.x_vel(0) + 1] = D::variable(vars[2 * b + 1], 1);
      for (int k = 0; k < steps_; ++k) {
        if (old_) {
          xn = x;
          D& y = xn[m_.x_pos(0) + 1];
          D& v = xn[m_.x_vel(0) + 1];
          const D vs = x[m_.x_vel(0) + 1] - D(h * g);
          const D y0 = x[m_.x_pos(0) + 1];
          if (y0 + D(h) * vs < D(0)) {
            const D s = y0 > D(0) ? y0 / (D(-h) * vs) : D(0);
            v = D(-e_) * vs;
            y = (D(1) - s) * D(h) * v;
          } else {
            v = vs;
            y = y0 + D(h) * vs;
          }
        } else {
          m_.step<D>(k, x, u, p, xn);
        }
        std::swap(x, xn);
        const double y = x[m_.x_pos(0) + 1].a, v = x[m_.x_vel(0) + 1].a;
        if (y <= 0 || y - h * v < 0)
          out.diag[b].contact_steps += 1;  // MassSpring::in_contact's test
      }
      out.loss[b] = x[m_.x_pos(0) + 1].a;
      if (want_grad) {
        out.grad[2 * b] = x[m_.x_pos(0) + 1].v[0];
        out.grad[2 * b + 1] = x[m_.x_pos(0) + 1].v[1];
      }
    }
  }
  std::vector<double> trajectories(const std::vector<double>&, int, int) override { return {}; }
  std::vector<double> parameters(const std::vector<double>&) override { return {}; }

 private:
  bool old_;
  double e_;
  MassSpring m_;
  std::vector<int> topo_;
  std::vector<double> p_;
};

// four drops (y_0 [m], v_0 [m/s]), each bouncing at least twice within the horizon (1.2 s at
// e = 1, 0.75 s at e = 0.5) with no impact within 0.07 s of its end: y_T has a kink where an
// impact crosses T (in the continuous bounce too), and a secant over ±ε straddling it sees a
// loss that is not smooth at that scale (y_0 = 0.6, v_0 = 0.5, landing at 0.758 s against
// T = 0.75 s, reads 0.35 with the fixed law)
const std::vector<double> kDrops = {0.5, 0.3, 0.6, -0.4, 0.55, 0.0, 0.45, 0.6};

// The old impact law passes the FD check (its adjoint is its own forward's derivative) yet is
// O(1) off the loss's slope: every drop is labelled secant_mismatch (measured 0.53–1.4). The
// fixed law passes and is not labelled: its mismatch is the O(h) discretization error
// (measured 0.003–0.12 at h = 1 ms), under the default tolerance 0.2.
TEST(Validator, SecantCheckCatchesTheBiasedImpactLawNotTheFixedOne) {
  ValidationConfig cfg;
  for (const auto& [e, T] : {std::pair{1.0, 1200}, std::pair{0.5, 750}}) {
    for (bool old_law : {true, false}) {
      SCOPED_TRACE(std::string(old_law ? "old law" : "fixed law") + ", e " + std::to_string(e));
      DropProblem p(old_law, e, T, kDrops);
      const ValidationReport r = validate(p, p.initial(), cfg, "initial");
      ASSERT_EQ(r.rollouts.size(), 4u);
      EXPECT_TRUE(r.secant_checked);
      EXPECT_EQ(r.secant_rollouts, 4);
      EXPECT_EQ(r.forward_passes, 2 * 9 + 4);  // the FD sweep, then ±ε and ±ε/2 of the secant
      for (const RolloutCheck& rc : r.rollouts) {
        SCOPED_TRACE("rollout " + std::to_string(rc.rollout));
        EXPECT_TRUE(rc.passed) << rc.best_error;  // the FD check cannot see the bias
        ASSERT_GE(rc.secant_mismatch, 0.0);
        double fig = 0;
        std::printf("[ secant   ] %s e %.1f rollout %d: grad.d %+.4f secant %+.4f mismatch %.3g\n",
                    old_law ? "old  " : "fixed", e, rc.rollout, rc.directional_adjoint,
                    rc.secant_slope, rc.secant_mismatch);
        if (old_law) {
          EXPECT_TRUE(has_label(rc, "secant_mismatch", &fig));
          EXPECT_EQ(fig, rc.secant_mismatch);
          EXPECT_GT(rc.secant_mismatch, 0.4);
        } else {
          EXPECT_FALSE(has_label(rc, "secant_mismatch"));
          EXPECT_LT(rc.secant_mismatch, 0.15);
        }
      }
      const nlohmann::json j = to_json(r, 4);
      ASSERT_TRUE(j.contains("secant_check"));
      EXPECT_EQ(j["secant_check"]["rollouts_labelled"].get<int>(), old_law ? 4 : 0);
      EXPECT_EQ(j["rollouts"][0]["secant_mismatch"].get<double>(), r.rollouts[0].secant_mismatch);
    }
  }
}

// without contact (the worked example's free flight) the secant check costs nothing and
// measures nothing; secant_check false turns it off where there is contact
TEST(Validator, SecantCheckRunsOnlyOnContactRolloutsAndCanBeTurnedOff) {
  ValidationReport r = check(base_config());
  EXPECT_FALSE(r.secant_checked);
  EXPECT_EQ(r.forward_passes, 2 * 9);
  EXPECT_LT(r.rollouts[0].secant_mismatch, 0);
  EXPECT_FALSE(to_json(r, 1).contains("secant_check"));
  EXPECT_TRUE(to_json(r, 1)["rollouts"][0]["secant_mismatch"].is_null());
  SecantCheckConfig off;
  off.enabled = false;
  DropProblem p(true, 1.0, 1200, kDrops);
  const ValidationReport q = validate(p, p.initial(), ValidationConfig(), "initial", nullptr,
                                      nullptr, nullptr, nullptr, off);
  EXPECT_FALSE(q.secant_checked);
  EXPECT_EQ(q.forward_passes, 2 * 9);
  EXPECT_EQ(q.label_counts.count("secant_mismatch"), 0u);
}

// validation.secant_check, secant_epsilon ∈ (0, 1], secant_tolerance > 0: read by the config
// parser into ValidationConfig (secant_check_of copies them), written to the effective config,
// out-of-range values refused naming the key
TEST(Validator, SecantCheckSettingsAreReadAndRangeChecked) {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/projectile.json");
  const nlohmann::json base = nlohmann::json::parse(f);
  nlohmann::json j = base;
  j["validation"]["secant_check"] = false;
  j["validation"]["secant_epsilon"] = 0.1;
  j["validation"]["secant_tolerance"] = 0.5;
  const ExperimentConfig c = parse_config(j);
  const SecantCheckConfig sc = secant_check_of(c.validation);
  EXPECT_FALSE(sc.enabled);
  EXPECT_EQ(sc.epsilon, 0.1);
  EXPECT_EQ(sc.tolerance, 0.5);
  const nlohmann::json eff = c.to_json()["validation"];
  EXPECT_EQ(eff["secant_check"], false);
  EXPECT_EQ(eff["secant_epsilon"], 0.1);
  EXPECT_EQ(eff["secant_tolerance"], 0.5);
  const SecantCheckConfig def = secant_check_of(parse_config(base).validation);
  EXPECT_TRUE(def.enabled);
  EXPECT_EQ(def.epsilon, 0.05);
  EXPECT_EQ(def.tolerance, 0.2);
  for (const auto& [key, bad] : {std::pair<std::string, nlohmann::json>{"secant_epsilon", 0.0},
                                 {"secant_epsilon", 1.5},
                                 {"secant_tolerance", -1.0},
                                 {"secant_check", "yes"}}) {
    nlohmann::json jb = base;
    jb["validation"][key] = bad;
    try {
      parse_config(jb);
      ADD_FAILURE() << key << " = " << bad << " accepted";
    } catch (const ConfigError& err) {
      EXPECT_NE(std::string(err.what()).find("validation." + key), std::string::npos) << err.what();
    }
  }
}

// a rollout whose loss, states or gradient are not finite gets the nonfinite label and nothing
// else: the timestep check at h/2, the horizon ratio and the secant check have no defined figure
// there (the h/2 change was labelled timestep_sensitive with a NaN figure, null in the artifact)
TEST(Validator, NonfiniteRolloutGetsOnlyTheNonfiniteLabel) {
  nlohmann::json j = base_config();
  j["model"]["drag"] = 1000.0;  // overflows to inf within ~10 steps (OverflowIsLabelledNonfinite)
  j["initial_state"]["velocity"] = {1e9, 0.0};
  const ExperimentConfig c = parse_config(j);
  auto p = make_problem(c, BackendKind::kCpu, 0);
  HalfStepProblem half(c, BackendKind::kCpu, 0);
  const ValidationReport r = validate(*p, p->initial(), c.validation, "initial", nullptr, &half);
  ASSERT_EQ(r.rollouts.size(), 1u);
  ASSERT_EQ(r.rollouts[0].labels.size(), 1u) << r.rollouts[0].labels.back().name;
  EXPECT_EQ(r.rollouts[0].labels[0].name, "nonfinite");
  EXPECT_FALSE(r.rollouts[0].passed);
  EXPECT_EQ(r.label_counts.size(), 1u);
  const nlohmann::json a = to_json(r, 1);
  for (const auto& l : a["rollouts"][0]["labels"]) EXPECT_TRUE(l["figure"].is_number()) << l;
}
}  // namespace
}  // namespace steer
