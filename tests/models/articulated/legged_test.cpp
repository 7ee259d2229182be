// The foot-strike sign error of issue 29 (docs/legged.md, "The foot-strike case"), on the
// quadruped of configs/mjcf/quadruped.xml (ArticulatedLegged, four sphere feet on the ground):
//
//   the robot is dropped 2 cm onto the ground (torso at z0 = 0.37 m, feet 2 cm up, so they
//   strike at about 64 ms), the loss is L = ½ z_T² of the torso height at T = 150 ms (75 steps
//   of 2 ms: the stance phase after the strike), and the one variable is a feed-forward torque
//   u on the front-left knee, held over the horizon (u = 0 at the check).
//
// Under stiff contact (k = 10⁶ N/m, smoothing w = 30 µm) the explicit 2 ms step does not
// resolve the strike: a foot carrying m ≈ 3.6 kg gives ω h = sqrt(k/m) h ≈ 1, so the feet
// bounce and the step at which a foot is in contact jumps with u. L(u) is then jagged at the
// torque scale of the FD stencil: the adjoint (the exact derivative of the discrete rollout,
// equal to the forward-mode dual derivative) has the opposite sign of centered FD at
// ε = 10⁻² and 10⁻³ N·m, and the validator labels the rollout fd_mismatch and
// contact_mode_switch. Widening the smoothing to w = 1 mm at the same stiffness makes the
// onset smooth over the step: the adjoint agrees with FD at every ε of the sweep and no label
// is set. The tests check both through run_experiment (the validator's figures and labels)
// and by hand (the ±ε rollouts' contact sets per step and foot, and the dual derivative).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "config/config.h"
#include "experiment/experiment.h"
#include "models/articulated/articulated_setup.h"
#include "steer/dual.h"
#include "steer/models/articulated.h"
#include "temp_dir.h"

namespace steer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSteps = 75;                              // 150 ms at 2 ms
constexpr double kStiff = 1e6;                          // contact stiffness of both levels [N/m]
constexpr double kSharpW = 3e-5;                        // the stiff level's smoothing width [m]
constexpr double kSmoothW = 1e-3;                       // the smoothed level's [m]
const char* const kFeet[4] = {"FL", "FR", "HL", "HR"};  // model.contacts in the file's order

// rollout 0: stiff and sharp; rollout 1: the same stiffness, wider smoothing
json foot_strike_config() {
  json q = json::array({0, 0, 0.37, 1, 0, 0, 0});
  for (int i = 0; i < 12; ++i) q.push_back(0);
  return {{"name", "foot_strike"},
          {"model",
           {{"type", "articulated"},
            {"mjcf", "mjcf/quadruped.xml"},
            {"contact",
             {{"stiffness", 3e4}, {"damping", 300}, {"smoothing", 2e-3}, {"slip_velocity", 0.2}}}}},
          {"simulation", {{"dt", 0.002}, {"steps", kSteps}, {"precision", "float64"}}},
          {"initial_state", {{"q", q}}},
          {"batch",
           {{"size", 2},
            {"sweep",
             {{"theta.contact.stiffness", {kStiff, kStiff}},
              {"theta.contact.smoothing", {kSharpW, kSmoothW}}}}}},
          {"loss", {{"terminal", {{{"state", "root.p.z"}, {"target", 0.0}}}}}},
          {"variables",
           {{"controls.torque.FL_knee", {{"lower", -10}, {"upper", 10}, {"hold", kSteps}}}}},
          {"optimizer", {{"method", "none"}}},
          {"validation",
           {{"at", {"initial"}},
            {"tolerance", 1e-6},
            {"epsilon", 1e-2},
            {"epsilon_sweep", {1e-2, 1e-3, 1e-4, 1e-5, 1e-6}},
            {"timestep_check", false},
            {"max_rollouts", 2}}},
          {"output", {{"trajectory_rollouts", 2}, {"trajectory_stride", kSteps}}}};
}

ExperimentConfig parsed() {
  return parse_config(foot_strike_config(), (fs::path(STEER_SOURCE_DIR) / "configs").string());
}

bool has_label(const json& rollout, const std::string& name) {
  for (const auto& l : rollout["labels"])
    if (l["label"] == name) return true;
  return false;
}

// the validator's per-rollout reports of a run of c on the CPU (its initial check)
json initial_check_rollouts(const ExperimentConfig& c) {
  steer::testing::TempDir d("steer_legged_test");
  RunOptions o;
  o.backend = "cpu";
  o.out_dir = d.path.string();
  o.progress = false;
  const RunOutcome r = run_experiment(c, o);
  return r.artifact["validation"][0]["rollouts"];
}

// the nominal θ with the level's contact stiffness and smoothing
std::vector<double> theta_of(const ExperimentConfig& c, const ArticulatedLegged& m, double w) {
  std::vector<double> p = c.theta;
  p[m.p_global(ArticulatedLegged::kContactStiffness)] = kStiff;
  p[m.p_global(ArticulatedLegged::kContactSmoothing)] = w;
  return p;
}

int knee_control(const ExperimentConfig& c) {
  const auto& n = c.info.control_names;
  const auto it = std::find(n.begin(), n.end(), "torque.FL_knee");
  return it == n.end() ? -1 : int(it - n.begin());
}

struct Rollout {
  double loss = 0;
  std::vector<std::vector<bool>> contact;  // [step 1..T][foot]
};

// the knee torque u held over the horizon, zero elsewhere; L = ½ z_T²
Rollout simulate(const ArticulatedLegged& m, const ExperimentConfig& c,
                 const std::vector<double>& p, double u_knee) {
  std::vector<double> x = c.x0, xn(x.size()), u(m.nu(), 0.0);
  u[knee_control(c)] = u_knee;
  Rollout r;
  for (int k = 0; k < kSteps; ++k) {
    double* out = xn.data();
    m.step<double>(k, x.data(), u.data(), p.data(), out);
    x = xn;
    std::vector<bool> in(m.num_contacts());
    for (int f = 0; f < m.num_contacts(); ++f)
      in[f] = bool(m.in_contact<double>(x.data(), p.data(), f));
    r.contact.push_back(in);
  }
  r.loss = 0.5 * x[2] * x[2];
  return r;
}

// dL/du by forward-mode dual numbers through every step (the dual-number reference)
double dual_derivative(const ArticulatedLegged& m, const ExperimentConfig& c,
                       const std::vector<double>& p) {
  using D = Dual<double, 1>;
  std::vector<D> x(c.x0.begin(), c.x0.end()), xn(x.size()), u(m.nu(), D(0.0)),
      pd(p.begin(), p.end());
  u[knee_control(c)] = D::variable(0.0, 0);
  for (int k = 0; k < kSteps; ++k) {
    D* out = xn.data();
    m.step<D>(k, x.data(), u.data(), pd.data(), out);
    x = xn;
  }
  return x[2].a * x[2].v[0];
}

// The validator on both levels: the stiff one fails with the adjoint's sign opposite to FD at
// ε = 10⁻² and 10⁻³ and is labelled contact_mode_switch; the smoothed one passes unlabelled.
TEST(FootStrike, StiffContactFlipsTheSignAndIsLabelledSmoothingRestoresIt) {
  const ExperimentConfig c = parsed();
  ASSERT_TRUE(c.model_state<ArticulatedSetup>().legged_tree);
  const json rs = initial_check_rollouts(c);
  ASSERT_EQ(rs.size(), 2u);
  for (const json& ro : rs) {
    std::printf("w = %g m: adjoint %+.6e, FD at eps 1e-2..1e-6:",
                ro["rollout"] == 0 ? kSharpW : kSmoothW, ro["directional_adjoint"].get<double>());
    for (const auto& f : ro["sweep_fd"]) std::printf(" %+.4e", f.get<double>());
    std::printf(", best relative error %.3e, labels:", ro["best_relative_error"].get<double>());
    for (const auto& l : ro["labels"])
      std::printf(" %s (%g)", l["label"].get<std::string>().c_str(), l["figure"].get<double>());
    std::printf("\n");
  }
  const json& stiff = rs[0];
  const double adj = stiff["directional_adjoint"].get<double>();
  // the adjoint's sign is wrong against the two widest stencils
  EXPECT_LT(adj * stiff["sweep_fd"][0].get<double>(), 0.0);
  EXPECT_LT(adj * stiff["sweep_fd"][1].get<double>(), 0.0);
  EXPECT_FALSE(stiff["passed"].get<bool>());
  EXPECT_GT(stiff["best_relative_error"].get<double>(), 1e-6);
  EXPECT_TRUE(has_label(stiff, "fd_mismatch"));
  EXPECT_TRUE(has_label(stiff, "contact_mode_switch"));

  const json& smooth = rs[1];
  EXPECT_TRUE(smooth["passed"].get<bool>());
  EXPECT_LE(smooth["best_relative_error"].get<double>(), 1e-6);
  // every ε of the sweep agrees, the widest included (relative 1e-4 at ε = 1e-2 and 1e-5
  // below: the centered difference's O(ε²) truncation)
  for (size_t e = 0; e < smooth["sweep_relative_error"].size(); ++e)
    EXPECT_LE(smooth["sweep_relative_error"][e].get<double>(), e == 0 ? 1e-4 : 1e-5)
        << "eps index " << e;
  EXPECT_FALSE(has_label(smooth, "contact_mode_switch"));
  EXPECT_FALSE(has_label(smooth, "fd_mismatch"));
}

// The penetration label sees the ground points (the deepest foot), not only a fingertip: on
// soft contact (k = 10³ N/m, w = 10 mm) the feet sink about 12 mm under the robot's weight,
// past a 5 mm bound; at k = 10⁵ N/m they sink well under a millimetre.
TEST(GroundPenetration, FeetSinkingPastTheBoundAreLabelled) {
  json j = foot_strike_config();
  j["batch"]["sweep"] = {{"theta.contact.stiffness", {1e3, 1e5}},
                         {"theta.contact.smoothing", {1e-2, 3e-4}}};
  j["validation"]["penetration_bound"] = 0.005;
  const ExperimentConfig c = parse_config(j, (fs::path(STEER_SOURCE_DIR) / "configs").string());
  const json rs = initial_check_rollouts(c);
  ASSERT_EQ(rs.size(), 2u);
  double soft_depth = 0;
  for (const auto& l : rs[0]["labels"])
    if (l["label"] == "penetration") soft_depth = l["figure"].get<double>();
  std::printf("k = 1e3 N/m: penetration label figure %.4g m (bound 0.005 m)\n", soft_depth);
  EXPECT_GT(soft_depth, 0.005);
  EXPECT_LT(soft_depth, 0.05);
  EXPECT_FALSE(has_label(rs[1], "penetration"));
}

// The same by hand: the ±ε rollouts' contact sets, the first step and foot where they differ,
// the dual-number derivative against the adjoint's magnitude and against centered FD.
TEST(FootStrike, StepAndFootOfTheSwitchAndTheDualReference) {
  const ExperimentConfig c = parsed();
  const ArticulatedLegged& m = c.model_state<ArticulatedSetup>().legged;
  ASSERT_EQ(m.num_contacts(), 4);
  ASSERT_GE(knee_control(c), 0);
  const double eps = 1e-2;  // N·m, the validator's primary ε here

  for (const double w : {kSharpW, kSmoothW}) {
    const std::vector<double> p = theta_of(c, m, w);
    const Rollout plus = simulate(m, c, p, eps), minus = simulate(m, c, p, -eps);
    int first_step = -1, first_foot = -1, differing = 0;
    for (int k = 0; k < kSteps; ++k)
      for (int f = 0; f < 4; ++f)
        if (plus.contact[k][f] != minus.contact[k][f]) {
          ++differing;
          if (first_step < 0) first_step = k + 1, first_foot = f;
        }
    const double fd = (plus.loss - minus.loss) / (2 * eps);
    const double dual = dual_derivative(m, c, p);
    const Rollout ps = simulate(m, c, p, 1e-6), ms = simulate(m, c, p, -1e-6);
    const double fd_small = (ps.loss - ms.loss) / 2e-6;
    const Rollout pm = simulate(m, c, p, 1e-3), mm = simulate(m, c, p, -1e-3);
    const double fd_mid = (pm.loss - mm.loss) / 2e-3;
    std::printf(
        "w = %g m: dL/du dual %+.6e, FD eps 1e-2 %+.6e, 1e-3 %+.6e, 1e-6 %+.6e; contact (step, "
        "foot) pairs "
        "that differ between +eps and -eps: %d",
        w, dual, fd, fd_mid, fd_small, differing);
    if (first_step >= 0)
      std::printf(", the first at step %d (t = %.3f s), foot %s", first_step, first_step * 0.002,
                  kFeet[first_foot]);
    std::printf("\n");
    if (w == kSharpW) {
      EXPECT_LT(dual * fd, 0.0) << "stiff: the derivative's sign against the ε = 1e-2 stencil";
      ASSERT_GE(first_step, 0) << "stiff: the ±ε rollouts must differ in contact";
      // the switch happens after the strike (about 64 ms = step 32), in stance
      EXPECT_GT(first_step, 25);
      // the rollout's derivative itself is exact: the small stencil agrees with it to
      // the stiff rollout's sensitivity (relative 1e-2; the λ growth is ~3·10⁴)
      EXPECT_NEAR(fd_small, dual, 1e-2 * std::fabs(dual));
    } else {
      EXPECT_EQ(differing, 0) << "smoothed: no contact switch inside the stencil";
      // the same sign at ε = 1e-2 and agreement to the O(ε²) truncation at ε = 1e-3
      EXPECT_GT(dual * fd, 0.0);
      EXPECT_NEAR(fd_mid, dual, 1e-5 * std::fabs(dual));
    }
  }
}

// The hand adjoint the validator used equals the dual-number derivative (|∇L·d| = |dL/du|:
// one variable, d = ±1), at both levels: the sign error is the rollout's, not the adjoint's.
TEST(FootStrike, AdjointEqualsTheDualReference) {
  const ExperimentConfig c = parsed();
  const ArticulatedLegged& m = c.model_state<ArticulatedSetup>().legged;
  const json rs = initial_check_rollouts(c);
  const double ws[2] = {kSharpW, kSmoothW};
  for (int i = 0; i < 2; ++i) {
    const double dual = dual_derivative(m, c, theta_of(c, m, ws[i]));
    const double adj = std::fabs(rs[i]["directional_adjoint"].get<double>());
    std::printf("w = %g m: |adjoint| %.12e, |dual| %.12e\n", ws[i], adj, std::fabs(dual));
    EXPECT_NEAR(adj, std::fabs(dual), 1e-10 * std::fabs(dual)) << "w = " << ws[i];
  }
}

}  // namespace
}  // namespace steer
