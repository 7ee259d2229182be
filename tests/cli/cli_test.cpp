// apps/steer/main.cpp: the steer command-line program, run as a child process. Exit codes:
// 0 success, 1 failed gradient check or runtime failure, 2 usage or config error; a
// config error names the key on stderr and leaves the output folder untouched.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_cli.h"
#include "steer/backend.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;

using steer::testing::CliResult;
using steer::testing::run_steer;

namespace {

// a temporary folder named after this test file
struct TempDir : steer::testing::TempDir {
  TempDir() : steer::testing::TempDir("steer_cli_test") {}
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// a folder that is absent or holds nothing at all (no artifact, no hidden temp folder)
bool empty_or_absent(const fs::path& p) { return !fs::exists(p) || fs::is_empty(p); }

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

json good_config() {
  return json::parse(R"({
    "name": "cli_good",
    "model": {"type": "projectile", "dim": 2},
    "simulation": {"dt": 0.01, "steps": 50},
    "initial_state": {"position": [0.0, 0.0], "velocity": [2.5, 1.0]},
    "loss": {"terminal": [{"state": "position.x", "target": 1.0}]},
    "variables": {"x0.velocity.x": {"lower": -10.0, "upper": 10.0}},
    "optimizer": {"method": "gd", "learning_rate": 0.1, "iterations": 5},
    "validation": {"enabled": true, "at": ["initial"], "tolerance": 1e-6}
  })");
}

const fs::path kProjectile = fs::path(STEER_SOURCE_DIR) / "configs" / "projectile.json";

}  // namespace

TEST(CliTest, BadConfigsExit2NameTheKeyAndWriteNothing) {
  TempDir d;
  struct Case {
    std::string name;
    std::string text;  // the config file's contents
    std::string key;   // must appear on stderr
  };
  std::vector<Case> cases;
  auto with = [&](const std::string& name, auto edit, const std::string& key) {
    json j = good_config();
    edit(j);
    cases.push_back({name, j.dump(2), key});
  };
  with(
      "dt_zero", [](json& j) { j["simulation"]["dt"] = 0.0; }, "simulation.dt");
  with(
      "unknown_nested",
      [](json& j) {
        j["model"]["ground"] = {{"type", "penalty"}, {"stifness", 1.0}};
      },
      "model.ground.stifness");
  with(
      "bad_state", [](json& j) { j["loss"]["terminal"][0]["state"] = "position.w"; },
      "loss.terminal[0].state");
  with(
      "bad_slot", [](json& j) { j["variables"]["x0.velocity.q"] = json::object(); },
      "variables.x0.velocity.q");
  with(
      "precision", [](json& j) { j["simulation"]["precision"] = "float16"; },
      "simulation.precision");
  with(
      "backend", [](json& j) { j["simulation"]["backend"] = "tpu"; }, "simulation.backend");
  with(
      "sizes", [](json& j) { j["initial_state"]["position"] = {0.0}; }, "initial_state.position");
  cases.push_back({"not_json", "{\"name\": \"x\",", "not valid JSON"});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path cfg = d.path / (c.name + ".json");
    std::ofstream(cfg) << c.text;
    const fs::path out = d.path / ("out_" + c.name);
    fs::create_directories(out);
    CliResult r =
        run_steer("run " + quote(cfg) + " --backend cpu --quiet --out " + quote(out), d.path);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.key), std::string::npos) << "stderr: " << r.err;
    EXPECT_TRUE(empty_or_absent(out)) << "the output folder was written to";
    // the same config under `check`
    CliResult k =
        run_steer("check " + quote(cfg) + " --backend cpu --quiet --out " + quote(out), d.path);
    EXPECT_EQ(k.code, 2) << k.err;
    EXPECT_TRUE(empty_or_absent(out));
  }
}

TEST(CliTest, MissingConfigFileExits2) {
  TempDir d;
  const fs::path out = d.path / "out";
  CliResult r =
      run_steer("run " + quote(d.path / "nope.json") + " --quiet --out " + quote(out), d.path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.json"), std::string::npos) << r.err;
  EXPECT_TRUE(empty_or_absent(out));
}

TEST(CliTest, BadUsageExits2) {
  TempDir d;
  const std::string cfg = quote(kProjectile), out = quote(d.path / "out");
  EXPECT_EQ(run_steer("", d.path).code, 2);                 // no subcommand
  EXPECT_EQ(run_steer("simulate " + cfg, d.path).code, 2);  // unknown subcommand
  EXPECT_EQ(run_steer("run", d.path).code, 2);              // no config
  EXPECT_EQ(run_steer("run " + cfg + " --frobnicate --out " + out, d.path).code,
            2);  // unknown flag
  CliResult tpu = run_steer("run " + cfg + " --backend tpu --out " + out, d.path);
  EXPECT_EQ(tpu.code, 2);
  EXPECT_NE(tpu.err.find("backend"), std::string::npos) << tpu.err;
  EXPECT_EQ(run_steer("run " + cfg + " --precision float16 --out " + out, d.path).code, 2);
  EXPECT_EQ(run_steer("run " + cfg + " --threads -1 --out " + out, d.path).code, 2);
  EXPECT_TRUE(empty_or_absent(d.path / "out"));
}

TEST(CliTest, HelpExits0) {
  TempDir d;
  CliResult r = run_steer("--help", d.path);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("run"), std::string::npos);
  EXPECT_NE(r.out.find("check"), std::string::npos);
}

TEST(CliTest, CheckPassesOnGoodConfig) {
  TempDir d;
  const fs::path out = d.path / "out";
  CliResult r = run_steer(
      "check " + quote(kProjectile) + " --backend cpu --quiet --out " + quote(out), d.path);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gradient check (initial): 1/1 passed"), std::string::npos) << r.out;
  // check does not optimize: no "final" stage
  EXPECT_EQ(r.out.find("gradient check (final)"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << "--quiet printed: " << r.err;
}

// A float32 run's gradient check runs on the same problem in float64: float32 central
// differences cannot resolve the 1e-6 tolerance (checked in float32 the projectile's relative
// error was 1.7e-4, so every float32 run failed its check). The artifact says so and reports
// the float32 adjoint gradient's distance from the float64 one: non-zero (float32 rounding,
// measured 1.2e-5) and below 1e-3 on this smooth 300-step flight.
TEST(CliTest, Float32RunIsCheckedInFloat64) {
  TempDir d;
  for (const std::string precision : {"float32", "float64"}) {
    SCOPED_TRACE(precision);
    const fs::path out = d.path / ("out_" + precision);
    CliResult r = run_steer("check " + quote(kProjectile) + " --backend cpu --precision " +
                                precision + " --out " + quote(out),
                            d.path);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("gradient check (initial): 1/1 passed"), std::string::npos) << r.out;
    const std::string tag = "artifact: ";
    const size_t at = r.out.find(tag);
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string path = r.out.substr(at + tag.size());
    path = path.substr(0, path.find('\n'));
    const json a = json::parse(slurp(path));
    ASSERT_EQ(a["validation"].size(), 1u);
    const json& v = a["validation"][0];
    EXPECT_EQ(v["precision"], "float64");
    EXPECT_LT(v["max_relative_error"].get<double>(), 1e-6);
    if (precision == "float32") {
      ASSERT_TRUE(v.contains("float32_vs_float64")) << v.dump();
      const double dev = v["float32_vs_float64"]["gradient_relative_deviation_max"].get<double>();
      EXPECT_GT(dev, 0.0);
      EXPECT_LT(dev, 1e-3);
      EXPECT_EQ(v["float32_vs_float64"]["tolerance"].get<double>(), 1e-2);
      EXPECT_EQ(v["float32_vs_float64"]["rollouts_over_tolerance"].get<int>(), 0);
      // the timestep check runs by default, on the float64 twin
      ASSERT_TRUE(v.contains("timestep_check")) << v.dump();
      EXPECT_EQ(v["timestep_check"]["rollouts_labelled"].get<int>(), 0);
      EXPECT_NE(r.out.find("timestep check (initial): at h/2 the gradient changes by"),
                std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("ran in float64"), std::string::npos) << r.out;
    } else {
      EXPECT_FALSE(v.contains("float32_vs_float64"));
      EXPECT_EQ(r.out.find("ran in float64"), std::string::npos) << r.out;
    }
  }
}

// The float32 gate at the CLI: the projectile's float32 gradient is ~1e-5 from the float64 one
// (test above), so validation.float32_tolerance = 1e-7 fails its check: exit 1, the summary says
// why and what to do, the artifact counts float32_rounding. A float64 run of the same config
// has nothing to compare and passes.
TEST(CliTest, Float32GradientBeyondItsToleranceFailsTheCheck) {
  TempDir d;
  json j = json::parse(slurp(kProjectile));
  j["validation"]["float32_tolerance"] = 1e-7;
  const fs::path cfg = d.path / "tight.json";
  std::ofstream(cfg) << j.dump(2);
  const fs::path out = d.path / "out";
  CliResult r = run_steer(
      "check " + quote(cfg) + " --backend cpu --precision float32 --quiet --out " + quote(out),
      d.path);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("gradient check (initial): 0/1 passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed (float32_rounding: run in float64)"), std::string::npos) << r.out;
  for (const auto& e : fs::directory_iterator(out)) {
    const json a = json::parse(slurp(e.path() / "artifact.json"));
    EXPECT_EQ(a["labels"].value("float32_rounding", 0), 1);
    EXPECT_EQ(a["validation"][0]["float32_vs_float64"]["rollouts_over_tolerance"].get<int>(), 1);
  }
  EXPECT_EQ(run_steer("check " + quote(cfg) + " --backend cpu --precision float64 --quiet --out " +
                          quote(out),
                      d.path)
                .code,
            0);
}

// A converged float32 run: at the optimum the float64 gradient is ~0 (3.6e-5) and the float32
// one is rounding (−7.2e-6), 1.2 apart relative to each other but 9.6e-6 of the gradient where
// the optimization started (4.5), which is the scale the final check measures against. The run
// passes its final check, with no float32_rounding label.
TEST(CliTest, ConvergedFloat32RunPassesItsFinalCheck) {
  TempDir d;
  const fs::path out = d.path / "out";
  CliResult r = run_steer("run " + quote(kProjectile) +
                              " --backend cpu --precision float32 --quiet --out " + quote(out),
                          d.path);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gradient check (final): 1/1 passed"), std::string::npos) << r.out;
  for (const auto& e : fs::directory_iterator(out)) {
    const json a = json::parse(slurp(e.path() / "artifact.json"));
    ASSERT_EQ(a["validation"].size(), 2u);
    EXPECT_LT(
        a["validation"][1]["float32_vs_float64"]["gradient_relative_deviation_max"].get<double>(),
        1e-3);
    EXPECT_EQ(a["labels"].value("float32_rounding", 0), 0);
  }
}

// validation.timestep_check false: no run at h/2, nothing in the artifact or the summary
TEST(CliTest, TimestepCheckCanBeTurnedOff) {
  TempDir d;
  json j = json::parse(slurp(kProjectile));
  j["validation"]["timestep_check"] = false;
  const fs::path cfg = d.path / "no_timestep.json";
  std::ofstream(cfg) << j.dump(2);
  const fs::path out = d.path / "out";
  CliResult r =
      run_steer("check " + quote(cfg) + " --backend cpu --quiet --out " + quote(out), d.path);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("timestep check"), std::string::npos) << r.out;
  for (const auto& e : fs::directory_iterator(out)) {
    const json a = json::parse(slurp(e.path() / "artifact.json"));
    EXPECT_FALSE(a["validation"][0].contains("timestep_check"));
    EXPECT_FALSE(a["effective_config"]["validation"]["timestep_check"].get<bool>());
  }
}

// A gradient check that must fail, for a physical reason, not a contrived one: the
// penalty ground at stiffness k = 1e6 N/m with m = 1 kg has ω = √(k/m) = 1000 rad/s, so
// with dt = 0.002 s the contact runs at ω·dt = 2, the stability limit of symplectic
// Euler. The bounce then amplifies perturbations enormously (dL/dvy ≈ 3e6 for a loss of
// 0.17; the validator labels it gradient_exploding and contact_mode_switch), and no ε in
// the sweep 1e-2 … 1e-9 brings the centered difference within even 1e-6 of ∇L·d
// (measured: best relative error ≈ 3e-2). The adjoint is the exact derivative of the
// discrete map, but the loss is not smooth on the scale of any usable ε. The 1e-12
// tolerance makes the verdict doubly certain; the same physics at 1e-6 also fails, as the
// last assertion shows.
TEST(CliTest, CheckFailsOnStiffContact) {
  TempDir d;
  json j = json::parse(R"({
    "name": "stiff_check",
    "model": {"type": "projectile", "dim": 2, "gravity": 9.81, "drag": 0.1, "mass": 1.0,
              "ground": {"type": "penalty", "stiffness": 1000000.0, "damping": 5.0, "smoothing": 0.001}},
    "simulation": {"dt": 0.002, "steps": 1000},
    "initial_state": {"position": [0.0, 1.0], "velocity": [1.5, 0.5]},
    "loss": {"terminal": [{"state": "position.x", "target": 3.0}, {"state": "position.y", "target": 0.5}]},
    "variables": {"x0.velocity.x": {"lower": -20, "upper": 20}, "x0.velocity.y": {"lower": -20, "upper": 20}},
    "validation": {"enabled": true, "at": ["initial"], "tolerance": 1e-12}
  })");
  const fs::path cfg = d.path / "stiff.json";
  std::ofstream(cfg) << j.dump(2);
  const fs::path out = d.path / "out";
  CliResult r =
      run_steer("check " + quote(cfg) + " --backend cpu --quiet --out " + quote(out), d.path);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("gradient check (initial): 0/1 passed"), std::string::npos) << r.out;
  // the artifact of a failed check is still written, and records the failure
  ASSERT_TRUE(fs::exists(out));
  int folders = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    ++folders;
    json a = json::parse(slurp(e.path() / "artifact.json"));
    EXPECT_FALSE(a["result"]["check_passed"].get<bool>());
    EXPECT_GT(a["validation"][0]["max_relative_error"].get<double>(), 1e-6);
    EXPECT_GE(a["labels"].value("fd_mismatch", 0), 1);
  }
  EXPECT_EQ(folders, 1);
  // not an artefact of the tight tolerance: a loose one fails as well
  j["validation"]["tolerance"] = 1e-6;
  std::ofstream(cfg) << j.dump(2);
  EXPECT_EQ(
      run_steer("check " + quote(cfg) + " --backend cpu --quiet --out " + quote(out), d.path).code,
      1);
}

TEST(CliTest, RunWritesArtifact) {
  TempDir d;
  const fs::path out = d.path / "out";
  CliResult r = run_steer(
      "run " + quote(kProjectile) + " --backend cpu --out " + quote(out) + " --quiet", d.path);
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string tag = "artifact: ";
  const size_t at = r.out.find(tag);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string path = r.out.substr(at + tag.size());
  path = path.substr(0, path.find('\n'));
  EXPECT_TRUE(fs::is_regular_file(path)) << path;
  EXPECT_EQ(fs::path(path).parent_path().parent_path(), out);
  EXPECT_TRUE(fs::is_regular_file(fs::path(path).parent_path() / "trajectory.csv"));
  json a = json::parse(slurp(path));
  EXPECT_EQ(a["format"], "steer.artifact/1");
  EXPECT_EQ(a["command"], "run");
  EXPECT_EQ(a["device"]["backend"], "cpu");
  // the worked example's optimum: its gradient at h is ~0, so the final timestep check measures
  // how much of the optimization's gain re-simulating at h/2 moves (x_T is linear in v0 and the
  // same at h/2: nothing), and labels nothing
  ASSERT_EQ(a["validation"].size(), 2u);
  EXPECT_EQ(a["validation"][0]["timestep_check"]["measure"], "gradient_change");
  EXPECT_EQ(a["validation"][1]["timestep_check"]["measure"], "gain_moved");
  EXPECT_LT(a["validation"][1]["timestep_check"]["max"].get<double>(), 1e-6);
  EXPECT_EQ(a["labels"].value("timestep_sensitive", 0), 0);
  // exactly one entry in out: the run folder, no leftover temporary folder
  int entries = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    ++entries;
    EXPECT_NE(e.path().filename().string().front(), '.') << e.path();
  }
  EXPECT_EQ(entries, 1);
}

// the stdout summary prints each variable with its unit, and a dimensionless one (unit "1",
// the walker's raw activations) with none: "= 0.17  (dL/d …", not "= 0.17 1  (dL/d …"
TEST(CliTest, SummaryPrintsUnitsButNoneForDimensionless) {
  TempDir d;
  json j = json::parse(slurp(fs::path(STEER_SOURCE_DIR) / "configs" / "soft_walker_knots.json"));
  j["simulation"]["steps"] = 32;
  j["optimizer"]["iterations"] = 1;
  j["validation"]["enabled"] = false;
  const fs::path cfg = d.path / "knots_short.json";
  std::ofstream(cfg) << j.dump();
  CliResult r = run_steer(
      "run " + quote(cfg) + " --backend cpu --out " + quote(d.path / "out") + " --quiet", d.path);
  ASSERT_EQ(r.code, 0) << r.err;
  // the first six variables in name order are the activations (controls sort before theta.)
  EXPECT_NE(r.out.find("controls.actuator[0][0] = "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" 1  (dL/d"), std::string::npos) << r.out;
  // a variable with a unit keeps it: the walker's stiffnesses in N/m (shown for a run whose
  // first variable is a stiffness)
  j["variables"].erase("controls");
  std::ofstream(cfg) << j.dump();
  r = run_steer("run " + quote(cfg) + " --backend cpu --out " + quote(d.path / "out2") + " --quiet",
                d.path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" N/m  (dL/d"), std::string::npos) << r.out;
}

// steer --version, without a subcommand: four lines (version, commit, MuJoCo, CUDA), exit 0,
// nothing on stderr
TEST(CliTest, VersionNamesVersionCommitMujocoAndCuda) {
  TempDir d;
  const CliResult r = run_steer("--version", d.path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], std::string("steer ") + STEER_VERSION);
  // the project's version is the one pyproject.toml reads from CMakeLists.txt's project()
  const std::string cmake = slurp(fs::path(STEER_SOURCE_DIR) / "CMakeLists.txt");
  EXPECT_NE(cmake.find(std::string("project(steer VERSION ") + STEER_VERSION + " "),
            std::string::npos);
  // 12 hex digits of the configured commit, or "unknown" outside a git checkout
  const std::string commit = lines[1].substr(lines[1].find(' ') + 1);
  EXPECT_EQ(lines[1].rfind("commit: ", 0), 0u) << lines[1];
  EXPECT_TRUE(
      commit == "unknown" ||
      (commit.size() == 12 && commit.find_first_not_of("0123456789abcdef") == std::string::npos))
      << lines[1];
#ifdef STEER_TEST_MUJOCO_IMPORT
  EXPECT_EQ(lines[2].rfind("MuJoCo import: on (MuJoCo ", 0), 0u) << lines[2];
#else
  EXPECT_EQ(lines[2].rfind("MuJoCo import: off", 0), 0u) << lines[2];
#endif
  const steer::CudaStatus s = steer::cuda_status();
  const std::string cuda = !s.compiled   ? "CUDA: off: "
                           : s.available ? "CUDA: on, device "
                                         : "CUDA: on, no CUDA device: ";
  EXPECT_EQ(lines[3].rfind(cuda, 0), 0u) << lines[3];
}

TEST(CliTest, CudaBackendWithoutDeviceExits1) {
  const steer::CudaStatus s = steer::cuda_status();
  if (s.available) GTEST_SKIP() << "a CUDA device is present: " << s.device;
  TempDir d;
  const fs::path out = d.path / "out";
  CliResult r = run_steer(
      "run " + quote(kProjectile) + " --backend cuda --quiet --out " + quote(out), d.path);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const bool named = r.err.find("no CUDA device") != std::string::npos ||
                     r.err.find("no CUDA backend") != std::string::npos;
  EXPECT_TRUE(named) << "stderr: " << r.err;
  EXPECT_TRUE(empty_or_absent(out));
}
