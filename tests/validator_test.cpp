// host/validator.cpp: the directional FD check and its failure labels, each produced by
// a real simulation that exhibits the cause (or, for fd_mismatch, by a gradient that is
// wrong on purpose).
#include "validator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "problem.h"

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
  j["model"]["ground"] = {{"type", "penalty"}, {"stiffness", stiffness}, {"damping", 5.0}, {"smoothing", 1e-3}};
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
  std::vector<double> trajectories(const std::vector<double>& v, int n, int s) override { return inner_->trajectories(v, n, s); }
  std::vector<double> parameters(const std::vector<double>& v) override { return inner_->parameters(v); }

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
  // v' = v − h c |v| v flips sign and squares the magnitude every step: 1e9 → −1e19 → 1e39 → … → inf
  j["model"]["drag"] = 1000.0;
  j["initial_state"]["velocity"] = {1e9, 0.0};
  ValidationReport r = check(j);
  EXPECT_TRUE(has_label(r.rollouts[0], "nonfinite"));
  EXPECT_FALSE(r.rollouts[0].passed);
}

}  // namespace
}  // namespace steer
