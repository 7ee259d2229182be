// Physical validity of model inputs (docs/config.md, "Physical validity"): an inertia tensor
// must be positive definite and satisfy the triangle inequality on its principal moments, masses
// and rest lengths must be positive; a config that gives, includes or draws anything else is
// refused with exit 2 naming the key, the body and the violated condition, before any
// simulation and without writing to --out. Edge cases that are physical (a lamina, a thin rod)
// and every shipped config are accepted.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/inertia_check.h"
#include "problem/problem.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct TempDir : steer::testing::TempDir {
  TempDir() : steer::testing::TempDir("steer_physical_validity_test") {}
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(1); }

struct CliResult {
  int code = -1;
  std::string err;
};

// `steer run CONFIG --out OUT --quiet`, stderr captured
CliResult run_steer(const fs::path& config, const fs::path& out, const fs::path& dir) {
  const fs::path err = dir / "stderr.txt";
  const std::string cmd = std::string("'") + STEER_BINARY + "' run '" + config.string() +
                          "' --out '" + out.string() + "' --quiet --threads 1 >/dev/null 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err);
  fs::remove(err);
  return r;
}

bool empty_or_absent(const fs::path& p) { return !fs::exists(p) || fs::is_empty(p); }

// runs config j from dir and expects exit 2, every needle on stderr and nothing under --out
void expect_refused(const json& j, const std::vector<std::string>& needles, const fs::path& dir,
                    const std::string& name = "c.json") {
  const fs::path cfg = dir / name, out = dir / "out";
  write(cfg, j);
  const CliResult r = run_steer(cfg, out, dir);
  EXPECT_EQ(r.code, 2) << "stderr: " << r.err;
  for (const auto& n : needles)
    EXPECT_NE(r.err.find(n), std::string::npos) << "stderr: " << r.err << "\nmissing: " << n;
  EXPECT_TRUE(empty_or_absent(out)) << "a refused config wrote to --out";
  fs::remove_all(out);
}

// a two-link arm; body "b" (model.bodies[1]) carries the inertia under test
json arm(const json& inertia_b, double mass_b = 1.0) {
  json j = json::parse(R"({
    "name": "physical_validity",
    "model": {"type": "articulated", "integrator": "euler",
      "bodies": [
        {"name": "a", "pos": [0, 0, 1], "joint": {"name": "j0", "axis": [0, 1, 0], "damping": 0.1}, "mass": 1.0,
         "com": [0.1, 0, 0], "fullinertia": [0.01, 0.02, 0.02, 0, 0, 0]},
        {"name": "b", "parent": "a", "pos": [0.2, 0, 0], "joint": {"name": "j1", "axis": [0, 1, 0], "damping": 0.1}, "mass": 1.0,
         "com": [0.1, 0, 0], "fullinertia": [0.01, 0.02, 0.02, 0, 0, 0]}
      ]},
    "simulation": {"dt": 0.002, "steps": 5},
    "initial_state": {"q": [0.1, 0.2]},
    "loss": {"terminal": [{"state": "j1.q", "target": 0.1}]},
    "validation": {"enabled": false},
    "output": {"trajectory_rollouts": 1}
  })");
  j["model"]["bodies"][1]["fullinertia"] = inertia_b;
  j["model"]["bodies"][1]["mass"] = mass_b;
  return j;
}

// R diag(e) Rᵀ in fullinertia order, R the rotation by angle t about the unit axis n
std::vector<double> rotated(const double e[3], const double n[3], double t) {
  const double c = std::cos(t), s = std::sin(t), C = 1 - c;
  const double R[3][3] = {
      {c + n[0] * n[0] * C, n[0] * n[1] * C - n[2] * s, n[0] * n[2] * C + n[1] * s},
      {n[1] * n[0] * C + n[2] * s, c + n[1] * n[1] * C, n[1] * n[2] * C - n[0] * s},
      {n[2] * n[0] * C - n[1] * s, n[2] * n[1] * C + n[0] * s, c + n[2] * n[2] * C}};
  double A[3][3] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) A[i][j] += R[i][k] * e[k] * R[j][k];
  return {A[0][0], A[1][1], A[2][2], A[0][1], A[0][2], A[1][2]};
}

const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";

// a small Panda experiment over the shipped fragment, copied next to it as arm.json
json panda_on(const fs::path& dir, const json& fragment) {
  write(dir / "arm.json", fragment);
  return json::parse(R"({
    "name": "panda_physical",
    "model": {"type": "articulated", "include": "arm.json", "integrator": "implicitfast"},
    "simulation": {"dt": 0.002, "steps": 5},
    "initial_state": {"q": [0, 0, 0, -1.57079, 0, 1.57079, -0.7853]},
    "loss": {"terminal": [{"state": "joint1.q", "target": 0.1}]},
    "validation": {"enabled": false},
    "output": {"trajectory_rollouts": 1}
  })");
}

json panda_fragment() {
  std::ifstream f(kConfigs / "models" / "panda_arm.json");
  return json::parse(f);
}

// the ConfigError message of f(), or "" when it returns
template <class F>
std::string config_error(F f) {
  try {
    f();
  } catch (const steer::ConfigError& e) {
    return e.what();
  }
  return "";
}

// rollout 0's drawn Ixx of body b (model.bodies[1]) before its variable's bounds apply
double build_batch_start_xx(const steer::ExperimentConfig& c) {
  const int q = c.info.param_index("b.inertia.xx");
  return steer::build_batch(c).theta_of(0)[q];
}

}  // namespace

// The eigenvalues of R diag(e) Rᵀ are e: 200 random rotations and spectra spanning six decades,
// to 1e-14 of the largest (a few units of rounding; Jacobi is backward stable).
TEST(PhysicalValidity, EigenvaluesOfRotatedTensors) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  double worst = 0;
  for (int t = 0; t < 200; ++t) {
    double e[3] = {std::pow(10.0, -6 * u(rng)), std::pow(10.0, -6 * u(rng)),
                   std::pow(10.0, -6 * u(rng))};
    if (t % 10 == 0) e[1] = e[0];  // a repeated eigenvalue
    double n[3] = {u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
    const double nn = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (double& x : n) x /= nn;
    const std::vector<double> I = rotated(e, n, 2 * M_PI * u(rng));
    std::array<double, 3> got = steer::symmetric3_eigenvalues(I.data());
    std::sort(e, e + 3);
    const double scale = e[2];
    for (int k = 0; k < 3; ++k) worst = std::max(worst, std::fabs(got[k] - e[k]) / scale);
  }
  EXPECT_LE(worst, 1e-14);
  std::printf(
      "[ eigen ] largest eigenvalue error over 200 rotations: %.2e of the largest eigenvalue\n",
      worst);
}

// each violated condition of a given inertia or mass: exit 2, the key path, the body, the condition
TEST(PhysicalValidity, GivenInertiaAndMassRefused) {
  TempDir d;
  // [[1, 2], [2, 1]] ⊕ 1: eigenvalues −1, 1, 3 (the diagonal alone looks fine)
  expect_refused(arm({1, 1, 1, 2, 0, 0}),
                 {"model.bodies[1].fullinertia", "body 'b'",
                  "inertia is not positive definite: eigenvalues (-1, 1, 3) kg*m^2"},
                 d.path);
  // [[1, 1], [1, 1]] ⊕ 2: eigenvalues 0, 2, 2 (singular)
  expect_refused(arm({1, 1, 2, 1, 0, 0}),
                 {"model.bodies[1].fullinertia", "body 'b'",
                  "inertia is not positive definite: eigenvalues (0, 2, 2) kg*m^2"},
                 d.path);
  expect_refused(
      arm({0.1, 0.1, 0.5, 0, 0, 0}),
      {"model.bodies[1].fullinertia", "body 'b'", "violates the triangle inequality: I1 + I2 < I3",
       "principal moments (0.1, 0.1, 0.5) kg*m^2"},
      d.path);
  // principal moments (0.1, 0.2, 0.5) turned 45° about y: diagonal (0.3, 0.2, 0.3) would pass
  // a check on the diagonal alone
  expect_refused(
      arm({0.3, 0.2, 0.3, 0, -0.2, 0}),
      {"model.bodies[1].fullinertia", "body 'b'", "violates the triangle inequality: I1 + I2 < I3"},
      d.path);
  // a lamina (I3 = I1 + I2) with I3 raised by 1e-8 of the trace: beyond the 1e-9 tolerance
  const double tr = 0.01 + 0.02 + 0.03;
  expect_refused(arm({0.01, 0.02, 0.03 + 1e-8 * tr, 0, 0, 0}),
                 {"model.bodies[1].fullinertia", "violates the triangle inequality"}, d.path);
  expect_refused(arm({0.01, 0.02, 0.02, 0, 0, 0}, 0.0), {"model.bodies[1].mass", "out of range"},
                 d.path);
  expect_refused(arm({0.01, 0.02, 0.02, 0, 0, 0}, -1.0), {"model.bodies[1].mass", "out of range"},
                 d.path);
}

// physical edge cases pass, through the CLI (exit 0, an artifact) and the parser
TEST(PhysicalValidity, EdgeCasesAccepted) {
  TempDir d;
  const double e[3] = {0.01, 0.02, 0.03};  // a lamina: I1 + I2 = I3 exactly
  const double n[3] = {0.48, 0.6, 0.64};   // unit axis
  const std::vector<json> ok = {
      json{0.01, 0.02, 0.03, 0, 0, 0},  // lamina in principal axes
      json(rotated(e, n, 0.7)),         // the same lamina turned: rounding in every entry
      json{0.01, 0.02, 0.03 + 1e-10 * 0.06, 0, 0,
           0},                          // I3 above I1 + I2 by 1e-10 × trace, inside the tolerance
      json{1e-8, 0.01, 0.01, 0, 0, 0},  // a thin rod along x: I_axis / I = 1e-6
  };
  for (size_t i = 0; i < ok.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i) + ": " + ok[i].dump());
    EXPECT_NO_THROW(steer::parse_config(arm(ok[i])));
    const fs::path cfg = d.path / "ok.json", out = d.path / ("out" + std::to_string(i));
    write(cfg, arm(ok[i]));
    const CliResult r = run_steer(cfg, out, d.path);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(empty_or_absent(out));
  }
}

// values a batch sweep or draw reaches: refused naming the batch key, the rollout and the body
TEST(PhysicalValidity, BatchDrawsRefused) {
  TempDir d;
  // principal moments 0.3 ± xz and 0.2: the triangle inequality holds for |xz| ≤ 0.1
  json j = arm({0.3, 0.2, 0.3, 0, 0, 0});
  j["batch"] = {{"size", 4}, {"sweep", {{"theta.b.inertia.xz", {0, 0.05, 0.25, 0}}}}};
  expect_refused(
      j,
      {"config: batch.sweep.theta.b.inertia.xz: rollout 2 of 4", "model.bodies[1].fullinertia",
       "body 'b'", "violates the triangle inequality: I1 + I2 < I3"},
      d.path);
  // |xz| > 0.3: not positive definite in every rollout
  j = arm({0.3, 0.2, 0.3, 0, 0, 0});
  j["batch"] = {{"size", 8}, {"randomize", {{"theta.b.inertia.xz", {0.35, 0.4}}}}};
  expect_refused(j,
                 {"config: batch.randomize.theta.b.inertia.xz: rollout 0 of 8 (and 7 more)",
                  "model.bodies[1].fullinertia", "inertia is not positive definite"},
                 d.path);
  // a sweep and a draw on one mass, each inside the range alone: 0.1 + U(−0.95, 0.95) < 0 in
  // about 45% of the 32 rollouts
  j = arm({0.01, 0.02, 0.02, 0, 0, 0});
  j["batch"] = {{"size", 32},
                {"sweep", {{"theta.b.mass", std::vector<double>(32, 0.1)}}},
                {"randomize", {{"theta.b.mass", {{"jitter", 0.95}}}}}};
  expect_refused(j,
                 {"config: batch.randomize.theta.b.mass: rollout ", "reaches b.mass = -",
                  "outside its range (0",
                  "set by batch.sweep.theta.b.mass, batch.randomize.theta.b.mass (in that order)"},
                 d.path);
}

// the shipped Panda fragment (configs/models/panda_arm.json): a broken copy included, and a
// draw on the valid one
TEST(PhysicalValidity, IncludedPandaRefused) {
  TempDir d;
  json frag = panda_fragment();
  ASSERT_EQ(frag["bodies"][3]["name"], "link3");
  frag["bodies"][3]["fullinertia"] = {0.037242, 0.036155, 0.01083, -0.004761, -0.05, -0.012805};
  expect_refused(panda_on(d.path, frag),
                 {"model.bodies[3].fullinertia", "body 'link3'", "model.include 'arm.json'",
                  "inertia is not positive definite"},
                 d.path);
  frag = panda_fragment();
  frag["bodies"][3]["fullinertia"] = {0.01, 0.01, 0.05, 0, 0, 0};
  expect_refused(panda_on(d.path, frag),
                 {"model.bodies[3].fullinertia", "body 'link3'", "model.include 'arm.json'",
                  "violates the triangle inequality"},
                 d.path);
  // the valid fragment with link3's Ixz swept from its own value to −0.05 (Izz = 0.01083)
  json j = panda_on(d.path, panda_fragment());
  j["batch"] = {{"size", 2}, {"sweep", {{"theta.link3.inertia.xz", {-0.011396, -0.05}}}}};
  expect_refused(j,
                 {"config: batch.sweep.theta.link3.inertia.xz: rollout 1 of 2",
                  "model.bodies[3].fullinertia", "body 'link3'", "not positive definite"},
                 d.path);
}

// the perturbation analysis's scaled values, a variable's projected start and a compare
// repeat's draws are checked before the run (check_physical_inputs)
TEST(PhysicalValidity, PerturbationVariablesAndRepeatsCheckedUpFront) {
  TempDir d;
  // Ixx scaled by 0.1: 0.03 + 0.2 < 0.3
  json j = arm({0.3, 0.2, 0.3, 0, 0, 0});
  j["perturb"] = {{"parameter", "theta.b.inertia.xx"}, {"relative", {0.1, -0.9}}};
  steer::ExperimentConfig c = steer::parse_config(j);
  std::string msg = config_error([&] { steer::check_physical_inputs(c, false); });
  EXPECT_EQ(msg.rfind("config: perturb.relative: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("perturb.relative (theta.b.inertia.xx scaled by 0.1)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("violates the triangle inequality"), std::string::npos) << msg;
  EXPECT_EQ(config_error([&] { steer::check_physical_inputs(c, true); }),
            "");  // compare runs no perturbation
  expect_refused(j,
                 {"config: perturb.relative: rollout 0 of 1", "b.inertia.xx scaled by 0.1",
                  "violates the triangle inequality"},
                 d.path);

  // A parameter variable starts at its drawn value projected into its bounds. Each batch entry
  // is checked against the bounds alone, but a sweep and a draw on one slot compose: Ixx = 0.25 +
  // U(−0.05, 0.05) with Iyy = 0.2, Izz = 0.04 is valid for Ixx ≤ 0.24, and the bounds [0.25, 0.5]
  // lift such a start to 0.25, beyond Iyy + Izz. A seed whose one rollout draws a valid Ixx < 0.25.
  j = arm({0.3, 0.2, 0.3, 0, 0, 0});
  j["variables"] = {{"theta.b.inertia.xx", {{"lower", 0.25}, {"upper", 0.5}}}};
  bool lifted = false;
  for (int seed = 1; seed < 50 && !lifted; ++seed) {
    j["batch"] = {{"size", 1},
                  {"seed", seed},
                  {"sweep", {{"theta.b.inertia.xx", {0.25}}, {"theta.b.inertia.zz", {0.04}}}},
                  {"randomize", {{"theta.b.inertia.xx", {{"jitter", 0.05}}}}}};
    c = steer::parse_config(j);
    if (!config_error([&] { (void)steer::build_batch(c); }).empty()) continue;
    // a valid draw has Ixx ≤ Iyy + Izz = 0.24: below the lower bound
    EXPECT_LT(build_batch_start_xx(c), 0.25);
    msg = config_error([&] { steer::check_physical_inputs(c, false); });
    lifted = true;
    EXPECT_EQ(msg.rfind("config: variables.theta.b.inertia.xx: rollout 0 of 1", 0), 0u) << msg;
    EXPECT_NE(msg.find("variables.theta.b.inertia.xx (its bounds [0.25, 0.5] move the start)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("rollout 0 of 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("violates the triangle inequality"), std::string::npos) << msg;
  }
  EXPECT_TRUE(lifted) << "no seed in [1, 50) drew a valid Ixx below the lower bound";

  // compare repeat r draws with batch.seed + r: a seed whose own batch is valid while a later
  // repeat's draw (xz ~ U(0, 0.25), invalid above 0.1) is not
  j = arm({0.3, 0.2, 0.3, 0, 0, 0});
  j["variables"] = {{"theta.b.inertia.yy", {{"lower", 0.15}, {"upper", 0.25}}}};
  j["compare"] = {{"repeats", 10}, {"cmaes_rollouts", 10}};
  bool found = false;
  for (int seed = 1; seed < 50 && !found; ++seed) {
    j["batch"] = {{"size", 1}, {"seed", seed}, {"randomize", {{"theta.b.inertia.xz", {0, 0.25}}}}};
    c = steer::parse_config(j);
    if (!config_error([&] { (void)steer::build_batch(c); }).empty()) continue;
    EXPECT_EQ(config_error([&] { steer::check_physical_inputs(c, false); }),
              "");  // run does not run the repeats
    msg = config_error([&] { steer::check_physical_inputs(c, true); });
    if (msg.empty()) continue;
    found = true;
    EXPECT_NE(msg.find("batch.randomize.theta.b.inertia.xz"), std::string::npos) << msg;
    EXPECT_NE(msg.find("compare.repeats: repeat "), std::string::npos) << msg;
  }
  EXPECT_TRUE(found) << "no seed in [1, 50) gave a valid batch with an invalid later repeat";
}

// mass_spring, rest-position morphology: a spring's rest length |P_b − P_a| must be in (0, 1e3] m
TEST(PhysicalValidity, RestPositionSpringsRefused) {
  TempDir d;
  json j = json::parse(R"({
    "name": "rest_positions",
    "model": {"type": "mass_spring", "morphology": "rest_positions",
      "robot": {"particles": [[0.1, 0.2], [0.1, 0.2], [0.2, 0.2]], "springs": [[0, 1, 0.1, 1000, 0], [1, 2, 0.1, 1000, 0]]}},
    "simulation": {"dt": 0.004, "steps": 5},
    "loss": {"terminal": [{"state": "particle[0].position.x", "target": 0.0}]},
    "validation": {"enabled": false},
    "output": {"trajectory_rollouts": 1}
  })");
  expect_refused(j,
                 {"model.robot.particles", "spring[0] between particle[0] and particle[1]",
                  "rest length |P_b - P_a| = 0 m"},
                 d.path);
  j["model"]["robot"]["particles"][1] = {0.2, 0.3};
  EXPECT_NO_THROW(steer::parse_config(j));
  // a draw that stretches spring 1 beyond 1e3 m
  j["batch"] = {{"size", 2}, {"randomize", {{"theta.particle[2].rest_position.x", {2000, 3000}}}}};
  expect_refused(
      j,
      {"config: batch.randomize.theta.particle[2].rest_position.x: rollout 0 of 2 (and 1 more)",
       "spring[1]"},
      d.path);
}

// every shipped config is physically valid for every command (load and check only)
TEST(PhysicalValidity, ShippedConfigsAccepted) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kConfigs)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().filename().string());
    steer::ExperimentConfig c;
    ASSERT_NO_THROW(c = steer::load_config(e.path().string()));
    EXPECT_EQ(config_error([&] { steer::check_physical_inputs(c, false); }), "");
    if (c.has_compare) {
      EXPECT_EQ(config_error([&] { steer::check_physical_inputs(c, true); }), "");
    }
    ++n;
  }
  EXPECT_GE(n, 3);
}
