// Articulated trees beyond the arm's capacity (model.h): a 32-hinge chain and a branching tree
// of 32 bodies, written as JSON configs, run as ArticulatedLarge. Checked here:
//   - the generic gradient suite (gradient_suite.h; hand vs dual ≤ 1e-12 relative, dual vs
//     centered FD per step ≤ 1e-6, rollout vs centered FD ≤ 1e-6 relative + 1e-9), float64;
//   - the large capacity gives the same bits as Articulated on trees that fit both;
//   - `steer check` on the 32-hinge chain passes its gradient check (the CLI path);
//   - a tree of 33 bodies is refused (exit 2, naming model.bodies and the limit 32), and the
//     CUDA backend is refused for a large tree (naming model.bodies and Articulated's capacity);
//   - with the MuJoCo import, an MJCF chain of 32 hinges imports as a large tree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "problem/problem.h"
#include "run_cli.h"
#include "steer/models/articulated.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace steer;
using namespace steer::testing;

namespace {

// one body of a test tree: a hinge (or, every 8th joint from the 6th, a slide along its z)
// whose axis cycles through y, x, z and a skew direction, a joint anchor off the origin on
// every third body, and slightly rotated frames so that no axis lines up with its parent's
nlohmann::json test_body(int k, const std::string& parent, const std::vector<double>& pos) {
  static const std::vector<std::vector<double>> axes = {
      {0, 1, 0}, {1, 0, 0}, {0, 0, 1}, {0.6, 0.8, 0}};
  const double s = 0.0436;  // sin(2.5°): a 5° turn
  nlohmann::json joint = {{"name", "j" + std::to_string(k)},
                          {"damping", 0.02 + 0.001 * k},
                          {"armature", 0.002},
                          {"kp", 3.0},
                          {"kv", 0.3},
                          {"force_limit", 4.0},
                          {"target", 0.01 * std::sin(0.5 * k)}};
  if (k % 8 == 5) {
    joint["type"] = "slide", joint["axis"] = {0, 0, 1}, joint["range"] = {-0.05, 0.05};
  } else {
    joint["axis"] = axes[k % 4];
  }
  if (k % 3 == 2) joint["pos"] = {0.01, -0.005, 0.0};
  nlohmann::json b = {
      {"name", "b" + std::to_string(k)},
      {"pos", pos},
      {"quat",
       {std::sqrt(1 - s * s), k % 3 == 0 ? s : 0.0, k % 3 == 1 ? s : 0.0, k % 3 == 2 ? s : 0.0}},
      {"joint", joint},
      {"mass", 0.1 + 0.005 * k},
      {"com", {0.005, 0.0, 0.04}},
      // ~10⁻³ kg·m²: the step FD's ε = 10⁻⁶ then moves an inertia by 0.1%
      {"fullinertia", {2e-3, 2.2e-3, 1e-3, 1e-4, 0.0, 0.0}}};
  if (!parent.empty()) b["parent"] = parent;
  return b;
}

// a chain of n bodies, b0 at 1 m up, each 10 cm above its parent; the tip and a site on the last
nlohmann::json chain_model(int n) {
  nlohmann::json bodies = nlohmann::json::array();
  for (int k = 0; k < n; ++k)
    bodies.push_back(
        test_body(k, k == 0 ? "" : "b" + std::to_string(k - 1),
                  k == 0 ? std::vector<double>{0, 0, 1} : std::vector<double>{0, 0.02, 0.1}));
  const std::string last = "b" + std::to_string(n - 1);
  return {{"type", "articulated"},
          {"integrator", "euler"},
          {"bodies", bodies},
          {"tip", {{"body", last}, {"pos", {0, 0, 0.05}}}},
          {"sites", {{{"name", "end"}, {"body", last}, {"pos", {0.01, 0, 0.05}}}}}};
}

// a branching tree of 32 bodies: a torso (b0) with a head (b1) and five limbs of six bodies
// each hanging from it; the tip (contact point) at the end of the first limb, a site at each end
nlohmann::json tree_model() {
  nlohmann::json bodies = nlohmann::json::array();
  bodies.push_back(test_body(0, "", {0, 0, 1}));
  bodies.push_back(test_body(1, "b0", {0, 0, 0.3}));
  nlohmann::json sites = nlohmann::json::array();
  int k = 2;
  for (int limb = 0; limb < 5; ++limb) {
    const double a = 2 * M_PI * limb / 5;
    for (int i = 0; i < 6; ++i, ++k) {
      const std::string parent = i == 0 ? "b0" : "b" + std::to_string(k - 1);
      bodies.push_back(
          test_body(k, parent,
                    i == 0 ? std::vector<double>{0.15 * std::cos(a), 0.15 * std::sin(a), 0.1}
                           : std::vector<double>{0.01, 0, -0.08}));
    }
    sites.push_back({{"name", "hand" + std::to_string(limb)},
                     {"body", "b" + std::to_string(k - 1)},
                     {"pos", {0, 0, -0.05}}});
  }
  return {{"type", "articulated"},
          {"integrator", "euler"},
          {"bodies", bodies},
          {"tip", {{"body", "b7"}, {"pos", {0, 0, -0.05}}}},
          {"sites", sites},
          {"contact", {{"height", 0.4}, {"stiffness", 2000}, {"damping", 5}, {"smoothing", 0.01}}}};
}

// a small initial state for n joints (slides move a few millimetres)
std::vector<double> test_state(int n) {
  std::vector<double> x(2 * size_t(n));
  for (int j = 0; j < n; ++j) x[j] = 0.02 * std::sin(j + 1.0), x[n + j] = 0.3 * std::cos(j + 1.0);
  return x;
}

nlohmann::json config_json(const nlohmann::json& model, int steps) {
  const int n = int(model.at("bodies").size());
  const std::vector<double> x = test_state(n);
  return {
      {"name", "large_tree"},
      {"model", model},
      {"simulation", {{"dt", 0.002}, {"steps", steps}}},
      {"initial_state", {{"q", std::vector<double>(x.begin(), x.begin() + n)}}},
      {"loss", {{"terminal", {{{"state", "j" + std::to_string(n - 1) + ".q"}, {"target", 0.1}}}}}},
      {"validation", {{"enabled", false}}}};
}

ExperimentConfig parse_json(const nlohmann::json& j) { return parse_config(j); }

// the rollout case of config c's large model: terminal errors of the first three joints and
// the last, plus control effort, with controls that excite every joint
RolloutCase<ArticulatedLarge> large_case(const std::string& name, const ExperimentConfig& c,
                                         int integrator, int steps) {
  RolloutCase<ArticulatedLarge> r;
  r.name = name;
  r.model = c.model_state<ArticulatedSetup>().large;
  r.model.integrator = integrator;
  const int n = r.model.n_dof;
  r.p = c.theta;
  r.steps = steps;
  r.checkpoint_every = 5;
  r.x0 = test_state(n);
  r.u.assign(size_t(steps) * n, 0.0);
  for (size_t i = 0; i < r.u.size(); ++i) r.u[i] = 0.5 * std::cos(0.37 * double(i));
  r.loss.n_terminal = 4;
  const int idx[4] = {0, 1, 2, n - 1};
  for (int t = 0; t < 4; ++t)
    r.loss.terminal_index[t] = idx[t], r.loss.terminal_target[t] = 0.05 * t,
    r.loss.terminal_weight[t] = 1.0;
  r.loss.effort_weight = 1e-3;
  return r;
}

struct LargeProvider {
  using Model = ArticulatedLarge;
  static std::vector<StepCase<ArticulatedLarge>> step_cases() {
    std::vector<StepCase<ArticulatedLarge>> out;
    const char* names[] = {"euler", "implicitfast", "rk4"};
    const ExperimentConfig chain = parse_json(config_json(chain_model(32), 10));
    const ExperimentConfig tree = parse_json(config_json(tree_model(), 10));
    for (int integ :
         {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
      std::vector<double> u(32);
      for (int j = 0; j < 32; ++j) u[j] = std::sin(0.7 * j);
      ArticulatedLarge m = chain.model_state<ArticulatedSetup>().large;
      m.integrator = integ;
      out.push_back(StepCase<ArticulatedLarge>{std::string("32-hinge chain ") + names[integ], m,
                                               test_state(32), u, chain.theta});
      // the tree with its tip 3 mm into the plane: the contact force is on
      ArticulatedLarge t = tree.model_state<ArticulatedSetup>().large;
      t.integrator = integ;
      t.contact = true;
      std::vector<double> p = tree.theta, x = test_state(32);
      p[t.p_global(Articulated::kPlaneHeight)] -=
          t.penetration<double>(view(x.data()), view(p.data())) - 0.003;
      out.push_back(StepCase<ArticulatedLarge>{
          std::string("32-body tree with contact ") + names[integ], t, x, u, p, 1e-2, 1});
    }
    // the servo implicit through its force limit (servo_solve) at the large capacity
    ArticulatedLarge s = chain.model_state<ArticulatedSetup>().large;
    s.integrator = Articulated::kImplicitFast;
    s.servo_newton = 2;
    std::vector<double> us(32, 3.0);
    out.push_back(StepCase<ArticulatedLarge>{"32-hinge chain implicit servo", s, test_state(32), us,
                                             chain.theta});
    return out;
  }
  static std::vector<RolloutCase<ArticulatedLarge>> rollout_cases() {
    const ExperimentConfig chain = parse_json(config_json(chain_model(32), 12));
    const ExperimentConfig tree = parse_json(config_json(tree_model(), 12));
    return {
        large_case("32-hinge chain implicitfast, 12 steps", chain, Articulated::kImplicitFast, 12),
        large_case("32-body tree with contact euler, 12 steps", tree, Articulated::kEuler, 12),
        large_case("32-hinge chain rk4, 6 steps", chain, Articulated::kRk4, 6)};
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(ArticulatedLarge, GradientSuite, ::testing::Types<LargeProvider>);

namespace {

TEST(ArticulatedLarge, ParserPicksTheCapacity) {
  const ExperimentConfig small = parse_json(config_json(chain_model(8), 10));
  const ArticulatedSetup& ss = small.model_state<ArticulatedSetup>();
  EXPECT_FALSE(ss.large_tree);
  EXPECT_EQ(ss.model.n_dof, 8);
  EXPECT_EQ(ss.large.n_dof, 8);
  const ExperimentConfig nine =
      parse_json(config_json(chain_model(9), 10));  // 9 joints: beyond kMaxDof = 8
  EXPECT_TRUE(nine.model_state<ArticulatedSetup>().large_tree);
  EXPECT_EQ(nine.model_state<ArticulatedSetup>().model.n_bodies, 0);
  const ExperimentConfig tree = parse_json(config_json(tree_model(), 10));
  const ArticulatedSetup& ts = tree.model_state<ArticulatedSetup>();
  EXPECT_TRUE(ts.large_tree);
  EXPECT_EQ(ts.large.n_bodies, 32);
  EXPECT_EQ(ts.large.n_dof, 32);
  EXPECT_EQ(ts.large.n_sites, 5);
  // per body 10 inertial slots and 3 of its position, per dof 8 joint slots, 6 global, the
  // ground contact law's slots (no tendons)
  EXPECT_EQ(int(tree.theta.size()), 32 * 13 + 32 * 8 + 6 + GroundContacts::kParams);
}

// The same tree at both capacities gives the same bits: losses and every gradient, on the
// scalar path (one rollout each) and with Articulated on its packed path (four rollouts)
// against ArticulatedLarge on the scalar path.
TEST(ArticulatedLarge, SameBitsAsArticulatedOnTreesThatFitBoth) {
  const ExperimentConfig panda =
      load_config((fs::path(STEER_SOURCE_DIR) / "configs" / "panda.json").string());
  nlohmann::json six = chain_model(6);
  six["contact"] = {{"height", 0.9}, {"stiffness", 2000}, {"damping", 5}, {"smoothing", 0.01}};
  const ExperimentConfig chain = parse_json(config_json(six, 10));
  struct Fit {
    std::string name;
    const ExperimentConfig* c;
    int integrator;
  };
  for (const Fit& f : {Fit{"panda implicitfast", &panda, Articulated::kImplicitFast},
                       Fit{"6-chain euler", &chain, Articulated::kEuler},
                       Fit{"6-chain rk4", &chain, Articulated::kRk4}}) {
    SCOPED_TRACE(f.name);
    const ArticulatedSetup& s = f.c->model_state<ArticulatedSetup>();
    ASSERT_FALSE(s.large_tree);
    Articulated small = s.model;
    ArticulatedLarge large = s.large;
    small.integrator = large.integrator = f.integrator;
    const int n = small.n_dof, T = 20, B = 4;
    Batch<double> b;
    b.resize(B, small.nx(), small.nu(), small.np(), T);
    for (int r = 0; r < B; ++r) {
      const std::vector<double> x = test_state(n);
      for (int i = 0; i < 2 * n; ++i) b.x0_of(r)[i] = x[i] * (1 + 0.1 * r);
      for (int i = 0; i < T * n; ++i) b.u_of(r)[i] = 0.5 * std::cos(0.37 * i + r);
      std::copy(f.c->theta.begin(), f.c->theta.end(), b.theta_of(r));
    }
    Loss loss;
    loss.n_terminal = 2;
    loss.terminal_index[0] = 0, loss.terminal_target[0] = 0.1, loss.terminal_weight[0] = 1;
    loss.terminal_index[1] = n + 1, loss.terminal_target[1] = 0.0, loss.terminal_weight[1] = 0.5;
    loss.effort_weight = 1e-3;
    RolloutShape sh;
    sh.steps = T;
    sh.checkpoint_every = 6;
    auto same = [](const std::vector<double>& a, const std::vector<double>& c, const char* what) {
      ASSERT_EQ(a.size(), c.size()) << what;
      EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * sizeof(double)), 0)
          << what << " differ in their bits";
    };
    for (int batch : {1, B}) {
      SCOPED_TRACE("rollouts " + std::to_string(batch));
      Batch<double> bb = b;
      bb.resize(batch, small.nx(), small.nu(), small.np(), T);
      for (int r = 0; r < batch; ++r) {
        std::copy(b.x0_of(r), b.x0_of(r) + small.nx(), bb.x0_of(r));
        std::copy(b.u_of(r), b.u_of(r) + T * n, bb.u_of(r));
        std::copy(b.theta_of(r), b.theta_of(r) + small.np(), bb.theta_of(r));
      }
      BatchResult<double> os, ol;
      cpu_run_batch<Articulated, double>(small, loss, sh, bb, true, os, 1);
      cpu_run_batch<ArticulatedLarge, double>(large, loss, sh, bb, true, ol, 1);
      same(os.loss, ol.loss, "losses");
      same(os.grad_x0, ol.grad_x0, "∂L/∂x0");
      same(os.grad_u, ol.grad_u, "∂L/∂u");
      same(os.grad_theta, ol.grad_theta, "∂L/∂θ");
      EXPECT_GT(os.loss[0], 0.0);
    }
    // a site's position and its adjoint
    std::vector<double> x = test_state(n), p = f.c->theta;
    if (small.n_sites > 0) {
      double ps[3], pl[3];
      small.site_position<double>(view(x.data()), view(p.data()), 0, ps);
      large.site_position<double>(view(x.data()), view(p.data()), 0, pl);
      EXPECT_EQ(std::memcmp(ps, pl, sizeof ps), 0);
    }
  }
}

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// `steer check` on a 32-hinge chain: the CLI's gradient check (centered FD, float64, its
// tolerance 1e-6) over the controls and the PD gains passes
TEST(ArticulatedLarge, CliCheckPassesOn32HingeChain) {
  TempDir d;
  nlohmann::json j = config_json(chain_model(32), 20);
  j["variables"] = {{"controls", {{"lower", -20}, {"upper", 20}}},
                    {"theta.kp", {{"lower", 0}, {"upper", 100}}}};
  j["optimizer"] = {{"method", "none"}};
  j["validation"] = {{"at", {"initial"}}, {"tolerance", 1e-6}, {"max_rollouts", 1}};
  const fs::path cfg = d.path / "chain32.json";
  std::ofstream(cfg) << j.dump(2);
  const CliResult r = run_steer(
      "check " + quote(cfg) + " --backend cpu --quiet --out " + quote(d.path / "out"), d.path);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gradient check (initial): 1/1 passed"), std::string::npos) << r.out;
}

// 33 bodies (33 joints) is beyond the large capacity: refused, naming the key and the limit
TEST(ArticulatedLarge, OverCapacityTreeRefusedWithExit2) {
  TempDir d;
  const fs::path cfg = d.path / "chain33.json";
  std::ofstream(cfg) << config_json(chain_model(33), 10).dump(2);
  const CliResult r = run_steer(
      "check " + quote(cfg) + " --backend cpu --quiet --out " + quote(d.path / "out"), d.path);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("model.bodies"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at most 32 bodies, got 33"), std::string::npos) << r.err;
}

// the CUDA backend has no kernels for the large capacity: its problem is refused by name
TEST(ArticulatedLarge, CudaBackendRefusedForLargeTree) {
  const ExperimentConfig c = parse_json(config_json(chain_model(32), 10));
  try {
    (void)make_problem(c, BackendKind::kCuda, 1);
    ADD_FAILURE() << "a 32-joint tree was accepted for the cuda backend";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model.bodies"), std::string::npos) << what;
    EXPECT_NE(what.find("at most 10 bodies, 8 joints"), std::string::npos) << what;
  }
  // the CPU backend takes it
  EXPECT_TRUE(make_problem(c, BackendKind::kCpu, 1) != nullptr);
}

#ifdef STEER_TEST_MJCF
// an MJCF chain of n hinges, each body 10 cm above its parent
std::string mjcf_chain(int n) {
  std::string xml =
      "<mujoco model=\"chain\"><option timestep=\"0.002\" integrator=\"Euler\"/><worldbody>";
  for (int k = 0; k < n; ++k)
    xml += "<body name=\"b" + std::to_string(k) + "\" pos=\"0 0 " + (k == 0 ? "1" : "0.1") +
           "\"><joint name=\"j" + std::to_string(k) + "\" type=\"hinge\" axis=\"" +
           (k % 2 ? "1 0 0" : "0 1 0") +
           "\" damping=\"0.05\"/><inertial pos=\"0 0 0.05\" mass=\"0.1\" diaginertia=\"2e-4 2e-4 "
           "1e-4\"/>";
  for (int k = 0; k < n; ++k) xml += "</body>";
  return xml + "</worldbody></mujoco>";
}

TEST(ArticulatedLarge, MjcfChainOf32HingesImports) {
  TempDir d;
  for (int n : {32, 33}) {
    SCOPED_TRACE(n);
    std::ofstream(d.path / "chain.xml") << mjcf_chain(n);
    const nlohmann::json j = {{"name", "mjcf_chain"},
                              {"model", {{"type", "articulated"}, {"mjcf", "chain.xml"}}},
                              {"simulation", {{"dt", 0.002}, {"steps", 10}}},
                              {"loss", {{"control_effort", 1.0}}},
                              {"validation", {{"enabled", false}}}};
    if (n == 32) {
      const ExperimentConfig c = parse_config(j, d.path.string());
      const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
      EXPECT_TRUE(s.large_tree);
      EXPECT_EQ(s.large.n_dof, 32);
      EXPECT_EQ(s.large.n_bodies, 32);
    } else {
      try {
        (void)parse_config(j, d.path.string());
        ADD_FAILURE() << "an MJCF chain of 33 hinges was accepted";
      } catch (const ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("model.mjcf"), std::string::npos) << what;
        EXPECT_NE(what.find("at most 32"), std::string::npos) << what;
      }
    }
  }
}
#endif

}  // namespace
