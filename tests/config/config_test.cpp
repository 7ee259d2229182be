// src/config/config.h: every class of config error is a ConfigError whose message names the
// offending key path (and, for range errors, the accepted range); the shipped worked
// example parses to the documented numbers.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>

#include <unistd.h>

#include "config/config.h"
#include "config_errors.h"
#include "config/json_reader.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "models/projectile/projectile_setup.h"

using nlohmann::json;
using steer::ConfigError;
using steer::parse_config;
using steer::testing::expect_config_error;

namespace fs = std::filesystem;

namespace {

// a temporary folder removed on destruction
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() /
           ("steer_config_test_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// a small valid experiment; each test breaks one thing in a copy of it
json base() {
  return json::parse(R"({
    "name": "base",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "mass": 1.0,
              "ground": {"type": "penalty", "stiffness": 1000.0, "damping": 1.0, "smoothing": 0.001}},
    "simulation": {"dt": 0.01, "steps": 100, "precision": "float64", "checkpoint_every": 10},
    "initial_state": {"position": [0.0, 1.0], "velocity": [2.5, 1.0]},
    "batch": {"size": 1, "seed": 1},
    "loss": {"terminal": [{"state": "position.x", "target": 6.0, "weight": 1.0}]},
    "variables": {"x0.velocity.x": {"lower": -100.0, "upper": 100.0}},
    "optimizer": {"method": "gd", "learning_rate": 0.05, "iterations": 10},
    "validation": {"enabled": true}
  })");
}

// parses j, expects a ConfigError whose message contains every needle
std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(ConfigTest, BaseConfigIsValid) {
  // the fixture every error test starts from must itself parse, or those tests prove nothing
  steer::ExperimentConfig c = parse_config(base());
  EXPECT_EQ(c.steps, 100);
  EXPECT_EQ(c.resolved_checkpoint(), 10);
  ASSERT_EQ(c.variables.size(), 1u);
}

// ---- invalid JSON text and missing files (load_config)

TEST(ConfigTest, InvalidJsonText) {
  TempDir d;
  const fs::path p = d.path / "broken.json";
  std::ofstream(p) << "{\"name\": \"x\", \"model\": {\"type\": \"projectile\",,}";
  try {
    steer::load_config(p.string());
    FAIL() << "no ConfigError for invalid JSON";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
  }
}

TEST(ConfigTest, MissingFile) {
  TempDir d;
  const fs::path p = d.path / "does_not_exist.json";
  try {
    steer::load_config(p.string());
    FAIL() << "no ConfigError for a missing file";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  }
}

TEST(ConfigTest, LoadConfigReadsAValidFile) {
  TempDir d;
  const fs::path p = d.path / "ok.json";
  std::ofstream(p) << base().dump(2);
  steer::ExperimentConfig c = steer::load_config(p.string());
  EXPECT_DOUBLE_EQ(c.dt, 0.01);
  EXPECT_EQ(c.raw, base());
}

// ---- unknown keys

TEST(ConfigTest, UnknownKeyAtRoot) {
  json j = base();
  j["simulaton"] = {{"dt", 0.01}};
  expect_config_error(j, {"config: simulaton:", "unknown key"});
}

TEST(ConfigTest, UnknownKeyNested) {
  json j = base();
  j["model"]["ground"]["stifness"] = 5.0;
  expect_config_error(j, {"model.ground.stifness", "unknown key", "stiffness"});
  json k = base();
  k["loss"]["terminal"][0]["wieght"] = 1.0;
  expect_config_error(k, {"loss.terminal[0].wieght", "unknown key"});
  json l = base();
  l["variables"]["x0.velocity.x"]["uper"] = 3.0;
  expect_config_error(l, {"variables.x0.velocity.x.uper", "unknown key"});
}

TEST(ConfigTest, RootMustBeAnObject) {
  expect_config_error(json::array({1, 2}), {"(root)", "expected an object"});
}

// ---- wrong types

TEST(ConfigTest, StringWhereNumberExpected) {
  json j = base();
  j["simulation"]["dt"] = "0.01";
  expect_config_error(j, {"simulation.dt", "expected a number", "a string"});
  json k = base();
  k["model"]["ground"]["stiffness"] = "1000";
  expect_config_error(k, {"model.ground.stiffness", "expected a number", "a string"});
}

TEST(ConfigTest, NumberWhereArrayExpected) {
  json j = base();
  j["initial_state"]["position"] = 1.0;
  expect_config_error(j, {"initial_state.position", "expected an array", "a number"});
}

TEST(ConfigTest, WrongTypeInsideArray) {
  json j = base();
  j["initial_state"]["velocity"] = {2.5, "fast"};
  expect_config_error(j, {"initial_state.velocity[1]", "expected a number"});
}

TEST(ConfigTest, FractionalWhereIntegerExpected) {
  json j = base();
  j["simulation"]["steps"] = 100.5;
  expect_config_error(j, {"simulation.steps", "expected an integer"});
}

TEST(ConfigTest, ObjectExpected) {
  json j = base();
  j["model"]["ground"] = "penalty";
  expect_config_error(j, {"model.ground", "expected an object"});
}

// ---- out of range

TEST(ConfigTest, DtNotPositive) {
  json j = base();
  j["simulation"]["dt"] = 0.0;
  expect_config_error(j, {"simulation.dt", "out of range", "(0, 10]"});
  j["simulation"]["dt"] = -0.01;
  expect_config_error(j, {"simulation.dt", "out of range", "(0, 10]"});
}

TEST(ConfigTest, StepsZero) {
  json j = base();
  j["simulation"]["steps"] = 0;
  expect_config_error(j, {"simulation.steps", "out of range", "[1, 100000000]"});
}

TEST(ConfigTest, NegativeStiffness) {
  json j = base();
  j["model"]["ground"]["stiffness"] = -5.0;
  expect_config_error(j, {"model.ground.stiffness", "out of range", "(0, 1e+12]"});
}

TEST(ConfigTest, CheckpointEveryAboveSteps) {
  json j = base();
  j["simulation"]["checkpoint_every"] = 101;
  expect_config_error(j, {"simulation.checkpoint_every", "out of range", "[1, 100]"});
  j["simulation"]["checkpoint_every"] = 100;  // the edge is accepted
  EXPECT_EQ(parse_config(j).resolved_checkpoint(), 100);
}

TEST(ConfigTest, CheckpointEveryStringOtherThanSqrt) {
  json j = base();
  j["simulation"]["checkpoint_every"] = "auto";
  expect_config_error(j, {"simulation.checkpoint_every", "'auto'", "\"sqrt\"", "[1, 100]"});
  j["simulation"]["checkpoint_every"] = "sqrt";
  EXPECT_EQ(parse_config(j).resolved_checkpoint(), 10);  // ⌈√100⌉
}

TEST(ConfigTest, HugeUnsignedIntegerReportedAsGiven) {
  // 2^64 − 1 must not wrap to −1 in the message
  json j = base();
  j["batch"]["seed"] = 18446744073709551615ULL;
  expect_config_error(
      j, {"batch.seed", "value 18446744073709551615 is out of range", "[0, 4611686018427387904]"});
  j["batch"]["seed"] = 4611686018427387904ULL;  // the upper edge is accepted
  EXPECT_EQ(parse_config(j).seed, 4611686018427387904ULL);
}

TEST(ConfigTest, NegativeMass) {
  json j = base();
  j["model"]["mass"] = 0.0;
  expect_config_error(j, {"model.mass", "out of range", "(0, 1e+09]"});
}

// ---- inconsistent sizes

TEST(ConfigTest, InitialPositionWrongLengthForDim) {
  json j = base();
  j["initial_state"]["position"] = {0.0, 1.0, 2.0};
  expect_config_error(j, {"initial_state.position", "expected 2 numbers, got 3"});
  json k = base();
  k["model"]["dim"] = 3;  // the 2-vectors of the base no longer fit
  expect_config_error(k, {"initial_state.position", "expected 3 numbers, got 2"});
}

TEST(ConfigTest, SweepLengthDiffersFromBatchSize) {
  json j = base();
  j["batch"]["size"] = 3;
  j["batch"]["sweep"] = {{"theta.ground.stiffness", {100.0, 1000.0}}};
  expect_config_error(j, {"batch.sweep.theta.ground.stiffness", "expected 3 numbers, got 2"});
}

TEST(ConfigTest, LandingTargetLength) {
  json j = base();
  j["loss"] = {{"landing", {{"target", {1.0, 2.0}}}}};
  expect_config_error(j, {"loss.landing.target", "expected 1 numbers, got 2"});
}

// ---- missing required

TEST(ConfigTest, MissingModel) {
  json j = base();
  j.erase("model");
  expect_config_error(j, {"config: model:", "missing"});
}

TEST(ConfigTest, MissingDt) {
  json j = base();
  j["simulation"].erase("dt");
  expect_config_error(j, {"simulation.dt", "missing", "(0, 10]"});
}

TEST(ConfigTest, TerminalTermWithoutTarget) {
  json j = base();
  j["loss"]["terminal"][0].erase("target");
  expect_config_error(j, {"loss.terminal[0].target", "missing"});
}

TEST(ConfigTest, LossWithoutTerms) {
  json j = base();
  j["loss"] = json::object();
  expect_config_error(j, {"loss", "no terms"});
}

// loss.terminal_linear: w x_T[state] alone makes a loss, written as the two quadratic terms
// ½ w (x + ½)² − ½ w (x − ½)²: their value is w x and their gradient w (to rounding, here 1e-15)
// for x either side of the targets; the artifact records the term as given; a missing weight, an
// unknown state, an empty list and too many terms are refused naming the key
TEST(ConfigTest, TerminalLinearTerm) {
  json j = base();
  j["loss"] = {{"terminal_linear", {{{"state", "position.x"}, {"weight", -1.5}}}}};
  const steer::ExperimentConfig c = steer::parse_config(j);
  ASSERT_EQ(c.loss.n_terminal, 2);
  EXPECT_EQ(c.n_terminal_quadratic, 0);
  const int ix = c.info.state_index("position.x");
  std::vector<double> x(size_t(c.info.nx()), 0.25), th(size_t(c.info.np()), 0.0);
  for (const double xv : {-3.0, 0.1, 0.5, 7.25}) {
    x[size_t(ix)] = xv;
    EXPECT_NEAR(c.loss.terminal<double>(x.data(), th.data()), -1.5 * xv, 1e-14 * (1 + xv * xv));
    std::vector<double> gx(x.size(), 0.0), gp(th.size(), 0.0);
    c.loss.adj_terminal<double>(x.data(), th.data(), gx, gp, 1.0);
    for (size_t i = 0; i < gx.size(); ++i)
      EXPECT_NEAR(gx[i], int(i) == ix ? -1.5 : 0.0, 1e-14 * (1 + std::fabs(xv))) << i;
  }
  const json e = c.to_json();
  EXPECT_EQ(e["loss"]["terminal_linear"][0]["unit"], "m");
  EXPECT_DOUBLE_EQ(e["loss"]["terminal_linear"][0]["weight"].get<double>(), -1.5);
  json k = j;
  k["loss"]["terminal_linear"][0].erase("weight");
  expect_config_error(k, {"loss.terminal_linear[0].weight", "missing"});
  k = j;
  k["loss"]["terminal_linear"][0]["state"] = "position.w";
  expect_config_error(k, {"loss.terminal_linear[0].state", "'position.w'", "position.x"});
  k = j;
  k["loss"]["terminal_linear"] = json::array();
  expect_config_error(k, {"loss.terminal_linear", "non-empty array"});
  k = j;
  for (int t = 0; t < 8; ++t)
    k["loss"]["terminal_linear"].push_back(j["loss"]["terminal_linear"][0]);
  expect_config_error(k, {"loss.terminal_linear", "at most 8 linear terms", "got 9"});
  // success is judged on loss.terminal's terms only
  k = j;
  k["success_tolerance"] = 0.1;
  expect_config_error(k, {"success_tolerance", "loss.terminal"});
}

// ---- bad names

TEST(ConfigTest, UnknownStateInLoss) {
  json j = base();
  j["loss"]["terminal"][0]["state"] = "position.w";
  expect_config_error(j, {"loss.terminal[0].state", "'position.w'", "position.x"});
}

TEST(ConfigTest, UnknownVariableSlot) {
  json j = base();
  j["variables"]["x0.velocity.q"] = {{"lower", -1.0}, {"upper", 1.0}};
  expect_config_error(j, {"variables.x0.velocity.q", "not a slot", "x0.velocity.x"});
  json k = base();
  k["variables"]["controls.torque"] = json::object();
  expect_config_error(k, {"variables.controls.torque", "not a control"});
}

TEST(ConfigTest, UnknownSweepSlot) {
  json j = base();
  j["batch"]["sweep"] = {{"theta.friction", {1.0}}};
  expect_config_error(j, {"batch.sweep.theta.friction", "not a slot"});
}

// ---- bounds

TEST(ConfigTest, LowerAboveUpper) {
  json j = base();
  j["variables"]["x0.velocity.x"] = {{"lower", 5.0}, {"upper", -5.0}};
  expect_config_error(j, {"variables.x0.velocity.x", "lower", "upper"});
}

TEST(ConfigTest, StartValueOutsideBounds) {
  json j = base();
  j["variables"]["x0.velocity.x"] = {{"lower", 3.0}, {"upper", 10.0}};  // v0.x = 2.5
  expect_config_error(j, {"variables.x0.velocity.x", "starting value", "outside the bounds"});
}

TEST(ConfigTest, MassVariableLowerNotPositive) {
  json j = base();
  j["variables"]["theta.mass"] = {{"lower", 0.0}, {"upper", 10.0}};
  expect_config_error(j, {"variables.theta.mass.lower", "(0, 1e+09]"});
  json k = base();
  k["variables"]["theta.mass"] = {{"upper", 10.0}};  // an open range needs an explicit lower bound
  expect_config_error(k, {"variables.theta.mass.lower", "required", "> 0"});
  json ok = base();
  ok["variables"]["theta.mass"] = {{"lower", 0.1}, {"upper", 10.0}};
  EXPECT_EQ(parse_config(ok).variables.size(), 2u);
}

// parameter bounds must stay inside the parameter's physical range (drag ≥ 0)
TEST(ConfigTest, ParameterBoundsOutsidePhysicalRange) {
  json j = base();
  j["variables"]["theta.drag"] = {{"lower", -10.0}, {"upper", 1.0}};
  expect_config_error(j, {"variables.theta.drag.lower", "[0, 1000]"});
  json k = base();
  k["variables"]["theta.drag"] = json::object();  // defaults to the physical range
  steer::ExperimentConfig c = steer::parse_config(k);
  // variables come in key order (nlohmann::json objects are sorted): theta.drag first
  ASSERT_EQ(c.variables.front().name, "theta.drag");
  EXPECT_EQ(c.variables.front().lower, 0.0);
  EXPECT_EQ(c.variables.front().upper, 1000.0);
}

// per-rollout values from sweeps and draws are checked against the slot's range
TEST(ConfigTest, SweptParameterOutsidePhysicalRange) {
  json j = base();
  j["batch"] = {{"size", 2}, {"sweep", {{"theta.mass", {1.0, 0.0}}}}};
  expect_config_error(j, {"batch.sweep.theta.mass[1]", "(0, 1e+09]"});
  json k = base();
  k["batch"] = {{"size", 2}, {"randomize", {{"theta.ground.smoothing", {-1.0, 1.0}}}}};
  expect_config_error(k, {"batch.randomize.theta.ground.smoothing[0]", "(0, 1000]"});
}

// per-rollout start values of a variable must lie inside its bounds
TEST(ConfigTest, SweptStartOutsideVariableBounds) {
  json j = base();
  j["variables"]["x0.velocity.x"] = {{"lower", -100.0}, {"upper", 100.0}};
  j["batch"] = {{"size", 2}, {"sweep", {{"x0.velocity.x", {1.0, 500.0}}}}};
  expect_config_error(j, {"batch.sweep.x0.velocity.x", "outside the bounds"});
}

// iterations with method none would be silently ignored
TEST(ConfigTest, IterationsWithoutMethod) {
  json j = base();
  j["optimizer"] = {{"method", "none"}, {"iterations", 10}};
  expect_config_error(j, {"optimizer.iterations", "method none"});
}

// a run whose host arrays cannot fit is refused up front, naming the keys to lower
TEST(ConfigTest, RunTooLargeForMemory) {
  json j = base();
  j["simulation"]["steps"] = 100000000;
  j["simulation"]["memory_limit_gb"] = 1.0;
  j["batch"] = {{"size", 4}};
  expect_config_error(j, {"simulation.steps", "batch.size", "GB"});
}

TEST(ConfigTest, VariableNamedTwice) {
  json j = base();
  j["variables"]["controls"] = json::object();
  j["variables"]["controls.force.x"] = json::object();
  expect_config_error(j, {"variables.controls", "named twice"});
}

// ---- optimizer and validation need variables

TEST(ConfigTest, GradientDescentWithoutVariables) {
  json j = base();
  j.erase("variables");
  j["validation"]["enabled"] = false;
  expect_config_error(j, {"optimizer.method", "'gd'", "variables"});
}

TEST(ConfigTest, ValidationWithoutVariables) {
  json j = base();
  j.erase("variables");
  j["optimizer"] = {{"method", "none"}};
  expect_config_error(j, {"validation.enabled", "variables"});
  j["validation"]["enabled"] = false;  // nothing to optimize or check is fine: a plain simulation
  EXPECT_TRUE(parse_config(j).variables.empty());
}

TEST(ConfigTest, Float32ToleranceNotPositive) {
  json j = base();
  j["validation"]["float32_tolerance"] = 0.0;
  expect_config_error(j, {"validation.float32_tolerance", "(0, inf"});
}

TEST(ConfigTest, TimestepToleranceNotPositive) {
  json j = base();
  j["validation"]["timestep_tolerance"] = -0.1;
  expect_config_error(j, {"validation.timestep_tolerance", "(0, inf"});
}

TEST(ConfigTest, ChatterFractionAboveOne) {
  json j = base();
  j["validation"]["chatter_fraction"] = 1.5;
  expect_config_error(j, {"validation.chatter_fraction", "[0, 1]"});
}

TEST(ConfigTest, TimestepCheckNotBoolean) {
  json j = base();
  j["validation"]["timestep_check"] = "yes";
  expect_config_error(j, {"validation.timestep_check"});
}

// ---- bad enums

TEST(ConfigTest, BadPrecision) {
  json j = base();
  j["simulation"]["precision"] = "float16";
  expect_config_error(j, {"simulation.precision", "'float16'", "float64, float32"});
}

TEST(ConfigTest, BadBackend) {
  json j = base();
  j["simulation"]["backend"] = "tpu";
  expect_config_error(j, {"simulation.backend", "'tpu'", "auto, cpu, cuda"});
}

TEST(ConfigTest, BadModelType) {
  json j = base();
  j["model"]["type"] = "pendulum";
  expect_config_error(j, {"model.type", "'pendulum'", "projectile"});
}

TEST(ConfigTest, BadOptimizerMethod) {
  json j = base();
  j["optimizer"]["method"] = "lbfgs";
  expect_config_error(j, {"optimizer.method", "'lbfgs'", "none, gd, adam"});
}

// ---- the shipped worked example

// the model's own part of the config is read back by its setup type only: asking for another
// model's is a logic error naming both, and a copied config owns its model struct
TEST(ConfigTest, ModelStateIsTypedAndCopiedWithTheConfig) {
  const fs::path p = fs::path(STEER_SOURCE_DIR) / "configs" / "projectile.json";
  steer::ExperimentConfig c = steer::load_config(p.string());
  EXPECT_EQ(c.model.model(), "projectile");
  auto expect_logic_error = [](const steer::ExperimentConfig& cfg,
                               const std::vector<std::string>& words) {
    try {
      (void)cfg.model_state<steer::MassSpringSetup>();
      ADD_FAILURE() << "another model's setup was returned";
    } catch (const std::logic_error& e) {
      for (const auto& w : words)
        EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    }
  };
  expect_logic_error(c, {"mass_spring", "projectile"});
  expect_logic_error(steer::ExperimentConfig{}, {"mass_spring", "none"});
  steer::ExperimentConfig d = c;
  d.model_state<steer::ProjectileSetup>().model.dt = 0.5;
  d.model_state<steer::ProjectileSetup>().model.dim = 3;
  EXPECT_DOUBLE_EQ(c.model_state<steer::ProjectileSetup>().model.dt, 0.01);
  EXPECT_EQ(c.model_state<steer::ProjectileSetup>().model.dim, 2);
}

TEST(ConfigTest, WorkedExampleParses) {
  const fs::path p = fs::path(STEER_SOURCE_DIR) / "configs" / "projectile.json";
  steer::ExperimentConfig c = steer::load_config(p.string());
  EXPECT_EQ(c.raw, json::parse(slurp(p)));
  EXPECT_EQ(c.model_type, "projectile");
  EXPECT_EQ(c.model_state<steer::ProjectileSetup>().model.dim, 2);
  EXPECT_DOUBLE_EQ(c.dt, 0.01);
  EXPECT_EQ(c.steps, 300);
  EXPECT_EQ(c.checkpoint_every, 0);        // "sqrt"
  EXPECT_EQ(c.resolved_checkpoint(), 18);  // ⌈√300⌉ = ⌈17.32⌉
  ASSERT_EQ(c.x0.size(), 4u);              // (x, y, vx, vy)
  EXPECT_DOUBLE_EQ(c.x0[0], 0.0);
  EXPECT_DOUBLE_EQ(c.x0[1], 0.0);
  EXPECT_DOUBLE_EQ(c.x0[2], 2.5);
  EXPECT_DOUBLE_EQ(c.x0[3], 1.0);
  EXPECT_DOUBLE_EQ(c.theta[steer::Projectile::kGravity], 9.81);
  EXPECT_DOUBLE_EQ(c.theta[steer::Projectile::kMass], 1.0);
  EXPECT_EQ(c.loss.n_terminal, 1);
  EXPECT_EQ(c.loss.terminal_index[0], c.info.state_index("position.x"));
  EXPECT_DOUBLE_EQ(c.loss.terminal_target[0], 6.0);
  ASSERT_EQ(c.variables.size(), 2u);
  EXPECT_EQ(c.variables[0].name, "x0.velocity.x");
  EXPECT_EQ(c.variables[0].index, c.info.state_index("velocity.x"));
  EXPECT_DOUBLE_EQ(c.variables[0].lower, -100.0);
  EXPECT_DOUBLE_EQ(c.variables[0].upper, 100.0);
  EXPECT_EQ(c.optimizer.method, "gd");
  EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.05);
  EXPECT_EQ(c.optimizer.iterations, 200);
  EXPECT_TRUE(c.validation.enabled);
  EXPECT_DOUBLE_EQ(c.validation.tolerance, 1e-6);
}

TEST(ConfigTest, EffectiveConfigCarriesUnits) {
  const fs::path p = fs::path(STEER_SOURCE_DIR) / "configs" / "projectile.json";
  const json e = steer::load_config(p.string()).to_json();
  EXPECT_EQ(e["simulation"]["dt"]["unit"], "s");
  EXPECT_DOUBLE_EQ(e["simulation"]["dt"]["value"].get<double>(), 0.01);
  EXPECT_EQ(e["simulation"]["horizon"]["unit"], "s");
  EXPECT_NEAR(e["simulation"]["horizon"]["value"].get<double>(), 3.0, 1e-12);
  EXPECT_EQ(e["simulation"]["checkpoint_every"], 18);
  EXPECT_EQ(e["initial_state"]["position.x"]["unit"], "m");
  EXPECT_EQ(e["initial_state"]["velocity.x"]["unit"], "m/s");
  EXPECT_DOUBLE_EQ(e["initial_state"]["velocity.x"]["value"].get<double>(), 2.5);
  EXPECT_EQ(e["controls_initial"]["force.x"]["unit"], "N");
  EXPECT_EQ(e["model"]["parameters"]["gravity"]["unit"], "m/s^2");
  EXPECT_EQ(e["model"]["parameters"]["mass"]["unit"], "kg");
  EXPECT_EQ(e["model"]["parameters"]["ground.stiffness"]["unit"], "N/m");
  for (const auto& [name, v] : e["model"]["parameters"].items())
    EXPECT_TRUE(v.contains("unit")) << name;
  ASSERT_EQ(e["variables"].size(), 2u);
  EXPECT_EQ(e["variables"][0]["unit"], "m/s");
  EXPECT_EQ(e["loss"]["terminal"][0]["unit"], "m");
}
