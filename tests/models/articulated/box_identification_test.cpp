// The sliding box and the softplus law's restitution (contact_law.h, contact.h; docs/contact.md,
// docs/legged.md "The box"):
//   - restitution_damping alone: hand adjoint vs dual numbers (≤ 1e-12 relative) and centered
//     FD (≤ 1e-7 relative) for e from 0.05 to 0.95; the damped oscillator it defines leaves at
//     the speed ratio e (closed form, ≤ 1e-12);
//   - the gradient suite (tests/support/gradient_suite.h) on the box on a free root with
//   restitution:
//     landing flat, sliding on an edge, at contact onset; a 30-step rollout;
//   - restitution gives the same forces as the damping it names (≤ 1e-12 relative);
//   - physics: a ball thrown at the plane without gravity leaves at e times its approach speed,
//     converging as dt shrinks (≤ 5e-3 at 1e-4 s, ≤ 5e-4 at 1e-5 s); dropped under gravity,
//     within 0.03 (gravity's bias is about g/(ω v), see the test);
//   - configs/box_slide.json parses and `steer run` recovers friction and restitution from the
//     shipped recording (configs/data/box_slide_recorded.csv): within 0.005 of μ and 0.01 of e;
//   - the config's refusals name the key (and the CLI exits 2).
#include "steer/models/articulated.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "config_errors.h"
#include "experiment/experiment.h"
#include "gradient_suite.h"
#include "recorded_fit.h"
#include "models/articulated/articulated_setup.h"

namespace steer::testing {
namespace {

namespace fs = std::filesystem;

// ---- the law alone ----

TEST(Restitution, DampingAdjointMatchesDualAndFiniteDifferences) {
  const double adc = 0.83;
  for (double e : {0.05, 0.3, 0.5, 0.7, 0.95})
    for (double k : {2e4, 1e6})
      for (double m : {0.25, 3.0}) {
        const double z[3] = {e, k, m};
        double hand[3] = {0, 0, 0};
        adj_restitution_damping(e, k, m, adc, hand[0], hand[1], hand[2]);
        using D = Dual<double, 3>;
        const D dc = restitution_damping(D::variable(e, 0), D::variable(k, 1), D::variable(m, 2));
        for (int i = 0; i < 3; ++i) {
          const double dual = adc * dc.v[i];
          EXPECT_NEAR(hand[i], dual, 1e-12 * std::max(1.0, std::fabs(dual)))
              << "e " << e << " input " << i;
          // centered FD, ε = 1e-6 of the input (e: of min(e, 1 − e), inside (0, 1))
          const double eps = 1e-6 * (i == 0 ? std::min(e, 1 - e) : z[i]);
          double zp[3] = {e, k, m}, zm[3] = {e, k, m};
          zp[i] += eps;
          zm[i] -= eps;
          const double fd = adc *
                            (restitution_damping(zp[0], zp[1], zp[2]) -
                             restitution_damping(zm[0], zm[1], zm[2])) /
                            (2 * eps);
          EXPECT_NEAR(hand[i], fd, 1e-7 * std::max(1.0, std::fabs(fd)))
              << "e " << e << " input " << i;
        }
        // the damping ratio ζ = d_c / (2 sqrt(k m)) gives back e = exp(−ζπ / sqrt(1 − ζ²))
        const double zeta = restitution_damping(e, k, m) / (2 * std::sqrt(k * m));
        EXPECT_LT(zeta, 1.0);
        EXPECT_NEAR(std::exp(-zeta * M_PI / std::sqrt(1 - zeta * zeta)), e, 1e-12);
      }
}

// ---- the box on a free root, corners as spheres, restitution ----

// configs/box_slide.json's model under euler, its contact keys replaced by `contact`
ExperimentConfig box_config(const nlohmann::json& contact) {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/box_slide.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["model"]["contact"] = contact;
  j["model"]["integrator"] = "euler";  // the hand adjoint (rk4's is the dual one)
  j["loss"] = nlohmann::json::parse(R"({"terminal": [{"state": "root.p.x", "target": 0.3}]})");
  j.erase("variables");
  j.erase("batch");
  j.erase("optimizer");
  j["validation"] = {{"enabled", false}};
  return parse_config(j);
}

const Articulated& model_of(const ExperimentConfig& c) {
  return c.model_state<ArticulatedSetup>().model;
}

std::vector<double> box_state(const std::vector<double>& q, const std::vector<double>& v) {
  std::vector<double> x = q;
  x.insert(x.end(), v.begin(), v.end());
  return x;
}

// θ with the plane moved so that the deepest contact is `depth` [m] below it
std::vector<double> plane_at_depth(const Articulated& m, const std::vector<double>& x,
                                   std::vector<double> p, double depth) {
  double deepest = -1e9;
  for (int c = 0; c < m.num_contacts(); ++c)
    deepest = std::max(deepest, contact_state(m, x.data(), p.data(), c).depth);
  p[m.p_global(Articulated::kPlaneHeight)] += depth - deepest;
  return p;
}

const nlohmann::json kRestitutionContact = {{"stiffness", 2e4},   {"smoothing", 1e-3},
                                            {"friction", 0.5},    {"slip_velocity", 0.05},
                                            {"restitution", 0.4}, {"impedance_mass", 0.3}};

struct BoxRestitutionProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const ExperimentConfig c = box_config(kRestitutionContact);
    auto add = [&](const std::string& name, const std::vector<double>& x, double depth,
                   int integrator = Articulated::kEuler) {
      Articulated m = model_of(c);
      m.integrator = integrator;
      const std::vector<double> u(m.nu(), 0.2);
      out.push_back(
          StepCase<Articulated>{name, m, x, u, plane_at_depth(m, x, c.theta, depth), 1e-3, 3});
    };
    const double s = std::sin(0.15), co = std::cos(0.15);
    // flat (4 corners 0.5 mm in), landing at 1 m/s, sliding at 2 m/s, spinning
    add("box landing flat", box_state({0, 0, 0.05, 1, 0, 0, 0}, {2.0, 0.3, -1.0, 0, 0, 3.0}), 5e-4);
    add("box landing flat, implicitfast",
        box_state({0, 0, 0.05, 1, 0, 0, 0}, {2.0, 0.3, -1.0, 0, 0, 3.0}), 5e-4,
        Articulated::kImplicitFast);
    // rolled 0.3 rad about x: one edge's 2 corners in, sliding and rocking
    add("box on an edge", box_state({0, 0, 0.07, co, s, 0, 0}, {0.5, 0.1, -0.2, 1.0, 0.2, -0.5}),
        3e-4);
    // the lowest corner at the plane
    add("box at contact onset",
        box_state({0, 0, 0.07, co, 0.05, 0.1, 0}, {0.3, 0, -0.3, 0.2, 0.5, 0}), 0.0);
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    // a softer plane and wider smoothing (w = 2 mm, v_s = 0.1 m/s) keep the FD's ε far below
    // the laws' scales
    nlohmann::json soft = kRestitutionContact;
    soft["stiffness"] = 5e3;
    soft["smoothing"] = 2e-3;
    soft["slip_velocity"] = 0.1;
    const ExperimentConfig c = box_config(soft);
    RolloutCase<Articulated> r;
    r.name = "box landing and sliding, 30 steps";
    r.model = model_of(c);
    r.loss = c.loss;
    r.steps = 30;
    r.checkpoint_every = 7;
    r.x0 = box_state({0, 0, 0.05, 1, 0.01, -0.02, 0}, {1.0, 0.3, -0.5, 0.3, -0.2, 2.0});
    r.p = plane_at_depth(r.model, r.x0, c.theta, 2e-4);
    r.u.assign(size_t(r.steps) * r.model.nu(), 0.0);
    return {r};
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(BoxRestitution, GradientSuite,
                               ::testing::Types<BoxRestitutionProvider>);

// run m from x for T steps with zero controls, calling f(x) after each step
template <class F>
void simulate(const Articulated& m, std::vector<double> x, const std::vector<double>& p, int T,
              F f) {
  std::vector<double> u(m.nu(), 0.0), xn(x.size());
  for (int k = 0; k < T; ++k) {
    double* out = xn.data();
    m.step<double>(k, x.data(), u.data(), p.data(), out);
    x = xn;
    if (!f(x)) return;
  }
}

// restitution e and the damping restitution_damping(e, k, m_c) give the same motion
TEST(Restitution, SetsTheDampingItNames) {
  const ExperimentConfig r = box_config(kRestitutionContact);
  nlohmann::json d = kRestitutionContact;
  d.erase("restitution");
  d["damping"] = restitution_damping(0.4, 2e4, 0.3);
  const ExperimentConfig c = box_config(d);
  EXPECT_EQ(model_of(r).ground.restitution, 1);
  EXPECT_EQ(model_of(c).ground.restitution, 0);
  const std::vector<double> x0 = box_state({0, 0, 0.06, 1, 0, 0, 0}, {1.0, 0.2, -1.0, 0, 0, 2.0});
  std::vector<double> xr, xc;
  simulate(model_of(r), x0, r.theta, 200,
           [&](const std::vector<double>& x) { return xr = x, true; });
  simulate(model_of(c), x0, c.theta, 200,
           [&](const std::vector<double>& x) { return xc = x, true; });
  ASSERT_LT(xr[2], 0.06) << "the box landed";
  for (size_t i = 0; i < xr.size(); ++i)
    EXPECT_NEAR(xr[i], xc[i], 1e-12 * std::max(1.0, std::fabs(xc[i]))) << i;
}

// ---- physics: a ball bounces back at e times its speed ----

// a 1 kg ball (radius 5 cm) on a free root, its contact the sphere; m_c = 1 kg (the default:
// the bodies' mass), one point, no rotation coupling: the linear spring-damper's assumptions
ExperimentConfig ball_config(double e) {
  nlohmann::json j = nlohmann::json::parse(
      R"({"name": "ball", "model": {"type": "articulated", "integrator": "euler",
    "bodies": [{"name": "ball", "joint": {"name": "root", "type": "free"}, "mass": 1, "fullinertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]}],
    "contacts": [{"name": "ball", "body": "ball", "radius": 0.05}],
    "contact": {"stiffness": 1e5, "smoothing": 1e-5, "friction": 0}},
    "simulation": {"dt": 1e-4, "steps": 10}, "loss": {"terminal": [{"state": "root.p.z", "target": 0}]},
    "validation": {"enabled": false}})");
  j["model"]["contact"]["restitution"] = e;
  return parse_config(j);
}

// the ball's gap above the plane starts at h = 1 mm, approaching at v0; returns v_out / v_in with
// both taken at the plane from the speeds at the gap h by the ballistic relation v² + 2 g h
double bounce_ratio(double e, double dt, double gravity, double v0) {
  const ExperimentConfig c = ball_config(e);
  Articulated m = model_of(c);
  m.dt = dt;
  std::vector<double> p = c.theta;
  p[m.p_global(Articulated::kGravity)] = gravity;
  EXPECT_DOUBLE_EQ(p[m.p_contact(kContactImpMass)], 1.0);
  const double h = 1e-3;
  const std::vector<double> x0 = box_state({0, 0, 0.05 + h, 1, 0, 0, 0}, {0, 0, -v0, 0, 0, 0});
  bool touched = false;
  double vout = -1;
  simulate(m, x0, p, int(1.0 / dt), [&](const std::vector<double>& x) {
    const double gap = x[2] - 0.05;
    if (gap < 0) touched = true;
    if (touched && gap >= h && x[9] > 0) {
      vout = std::sqrt(x[9] * x[9] + 2 * gravity * h);
      return false;
    }
    return true;
  });
  EXPECT_GT(vout, 0) << "the ball left the plane";
  return vout / std::sqrt(v0 * v0 + 2 * gravity * h);
}

// without gravity the contact is the linear spring-damper (w = 10 μm ≪ the 6 mm it goes in):
// the ratio is e up to the step's error, O(ω h) with ω = sqrt(k/m) = 316 rad/s
TEST(Restitution, BallThrownAtThePlaneLeavesAtERatio) {
  for (double e : {0.2, 0.5, 0.8}) {
    const double coarse = std::fabs(bounce_ratio(e, 1e-4, 0.0, 2.0) - e);
    const double fine = std::fabs(bounce_ratio(e, 1e-5, 0.0, 2.0) - e);
    // the figures (in --gtest_output=xml): |ratio − e| at both steps
    RecordProperty("error_e" + std::to_string(int(e * 10)) + "_dt1e-4", std::to_string(coarse));
    RecordProperty("error_e" + std::to_string(int(e * 10)) + "_dt1e-5", std::to_string(fine));
    EXPECT_LT(coarse, 5e-3) << "e " << e << ", dt 1e-4 s";
    EXPECT_LT(fine, 5e-4) << "e " << e << ", dt 1e-5 s";
    EXPECT_LT(fine, coarse / 4) << "e " << e << ": the error shrinks with dt";
  }
}

// under gravity the spring's rest point moves to −m g / k during the contact, which biases the
// ratio by about g / (ω v_in) (1 % at v_in = 3 m/s); the ratio stays within 0.03 of e
TEST(Restitution, BallDroppedBouncesBackAtAboutE) {
  for (double e : {0.3, 0.7}) {
    const double r = bounce_ratio(e, 1e-4, 9.81, 3.0);
    RecordProperty("ratio_e" + std::to_string(int(e * 10)), std::to_string(r));
    EXPECT_NEAR(r, e, 0.03) << "e " << e;
  }
}

// ---- the config and the identification ----

TEST(BoxSlide, ConfigParsesWithRestitutionSlots) {
  const ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/box_slide.json");
  const Articulated& m = model_of(c);
  EXPECT_EQ(m.ground.n_points, 8);
  EXPECT_EQ(m.ground.restitution, 1);
  EXPECT_EQ(m.np(), m.p_global(Articulated::kGlobalParams) + GroundContacts::kParams);
  EXPECT_EQ(c.info.param_names[m.p_contact(kContactRestitution)], "contact.restitution");
  EXPECT_EQ(c.theta[m.p_contact(kContactRestitution)], 0.5);
  EXPECT_EQ(c.theta[m.p_contact(kContactImpMass)], 0.25);
  EXPECT_EQ(c.variables.size(), 2u);
  // the corners of the box at rest are 5 mm spheres whose surfaces are flush with its faces
  const std::vector<double> x = box_state({0, 0, 0.05, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 0});
  for (int k = 0; k < 4; ++k)
    EXPECT_NEAR(contact_state(m, x.data(), c.theta.data(), k).depth, 0.0, 1e-15);
}

// the shipped recording (examples/legged/record_box.py: μ = 0.5, e = 0.3, σ = 1e-4, rk4 at
// dt/4) and the first of the config's 4 starts (μ 0.87, e 0.61), the check off:
// the start lands within 0.005 of μ and 0.01 of e (what is left is rk4's error at dt
// against dt/4, and the noise; the run gives 0.50004 and 0.30018)
TEST(BoxSlide, RunRecoversFrictionAndRestitution) {
  const nlohmann::json res = run_recorded_fit("box_slide", "box_slide_recorded.csv", 1);
  ASSERT_EQ(res["rollouts"].size(), 1u) << res.dump().substr(0, 2000);
  const nlohmann::json& v = res["rollouts"][0]["variables"];
  EXPECT_NEAR(v["theta.contact.friction"]["final"].get<double>(), 0.5, 0.005);
  EXPECT_NEAR(v["theta.contact.restitution"]["final"].get<double>(), 0.3, 0.01);
  // the fit reaches the noise floor: ½ w σ² per observed value, 501 rows × 5 columns
  EXPECT_LT(res["loss_final_best"].get<double>(), 1.5 * 0.5 * 1e4 * 1e-8 * 501 * 5);
}

TEST(BoxSlide, RestitutionRefusalsNameTheKey) {
  auto bad = [](const nlohmann::json& contact, const std::vector<std::string>& needles) {
    std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/box_slide.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j["model"]["contact"] = contact;
    j.erase("variables");
    j.erase("batch");
    j.erase("optimizer");
    j["loss"] = nlohmann::json::parse(R"({"terminal": [{"state": "root.p.x", "target": 0}]})");
    expect_config_error(j, needles);
  };
  bad({{"restitution", 0.0}}, {"model.contact.restitution", "(0, 1)"});
  bad({{"restitution", 1.0}}, {"model.contact.restitution", "(0, 1)"});
  bad({{"restitution", 1.5}}, {"model.contact.restitution"});
  bad({{"restitution", 0.5}, {"damping", 20}}, {"model.contact.restitution", "contact.damping"});
  bad({{"restitution", 0.5}, {"law", "impedance"}}, {"model.contact.restitution", "softplus"});
  bad({{"restitution", 0.5}, {"enabled", true}}, {"model.contact.restitution", "contact.enabled"});
  bad({{"restitutoin", 0.5}}, {"model.contact.restitutoin"});
  // the CLI exits 2 on it, naming the key
  const fs::path dir = fs::temp_directory_path() / ("steer_box_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/box_slide.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["model"]["contact"]["damping"] = 20;
  j["loss"]["observations"]["file"] =
      std::string(STEER_SOURCE_DIR) + "/configs/data/box_slide_recorded.csv";
  std::ofstream(dir / "bad.json") << j.dump();
  const std::string cmd = std::string(STEER_BINARY) + " run " + (dir / "bad.json").string() +
                          " --out " + dir.string() + " > " + (dir / "out.txt").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream o(dir / "out.txt");
  const std::string text((std::istreambuf_iterator<char>(o)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2) << text;
  EXPECT_NE(text.find("model.contact.restitution"), std::string::npos) << text;
}

}  // namespace
}  // namespace steer::testing
