// src/experiment/artifact.h: atomic artifact folders (write, read back, no temporary left behind on
// success or failure) and, end to end, the artifact of the worked example (docs/design.md, "From
// config to artifact").
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "experiment/artifact.h"
#include "config/config.h"
#include "temp_dir.h"
#include "experiment/experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// a temporary folder named after this test file
struct TempDir : steer::testing::TempDir {
  TempDir() : steer::testing::TempDir("steer_artifact_test") {}
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// names of the entries of a folder, hidden ones included
std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> s;
  for (const auto& e : fs::directory_iterator(dir)) s.insert(e.path().filename().string());
  return s;
}

steer::ArtifactFiles sample_files() {
  steer::ArtifactFiles f;
  f.artifact = {{"format", "steer.artifact/1"},
                {"numbers", {0.1, 1e-300, -2.5e17, 3.0}},
                {"nested", {{"unit", "m/s"}, {"ok", true}, {"none", nullptr}}},
                {"text", "ünïcode ω"}};
  f.sidecars.push_back({"trajectory.csv", "rollout,step,x\n0,0,0.5\n0,1,0.75\n"});
  // binary sidecar: every byte value, NULs included
  std::string bin;
  for (int i = 0; i < 512; ++i) bin.push_back(char(i & 0xff));
  f.sidecars.push_back({"states.bin", bin});
  return f;
}

}  // namespace

TEST(ArtifactTest, RoundTrip) {
  TempDir d;
  const steer::ArtifactFiles f = sample_files();
  const std::string dir = steer::write_artifact(d.path.string(), "run", f);
  EXPECT_EQ(fs::path(dir), d.path / "run");
  EXPECT_EQ(steer::read_artifact(dir), f.artifact);
  for (const auto& [name, contents] : f.sidecars) {
    ASSERT_TRUE(fs::is_regular_file(fs::path(dir) / name)) << name;
    EXPECT_EQ(slurp(fs::path(dir) / name), contents) << name;
  }
  EXPECT_EQ(entries(dir), (std::set<std::string>{"artifact.json", "trajectory.csv", "states.bin"}));
  // only the published folder in out_dir: no hidden temporary folder left
  EXPECT_EQ(entries(d.path), (std::set<std::string>{"run"}));
}

TEST(ArtifactTest, CreatesMissingOutDir) {
  TempDir d;
  const fs::path out = d.path / "a" / "b";
  const std::string dir = steer::write_artifact(out.string(), "run", sample_files());
  EXPECT_EQ(fs::path(dir), out / "run");
  EXPECT_TRUE(fs::is_regular_file(out / "run" / "artifact.json"));
}

TEST(ArtifactTest, SameRunNameTwiceGivesTwoFolders) {
  TempDir d;
  steer::ArtifactFiles a = sample_files(), b = sample_files();
  a.artifact["which"] = 1;
  b.artifact["which"] = 2;
  const std::string da = steer::write_artifact(d.path.string(), "run", a);
  const std::string db = steer::write_artifact(d.path.string(), "run", b);
  EXPECT_NE(da, db);
  EXPECT_EQ(entries(d.path), (std::set<std::string>{"run", "run-1"}));
  // the first is not overwritten by the second
  EXPECT_EQ(steer::read_artifact(da)["which"], 1);
  EXPECT_EQ(steer::read_artifact(db)["which"], 2);
}

TEST(ArtifactTest, WriteFileAtomicLeavesNoTemporary) {
  TempDir d;
  const fs::path p = d.path / "file.txt";
  steer::write_file_atomic(p.string(), "first\n");
  EXPECT_EQ(slurp(p), "first\n");
  steer::write_file_atomic(p.string(), std::string("second\0x", 8));  // replaces, binary-safe
  EXPECT_EQ(slurp(p), std::string("second\0x", 8));
  EXPECT_EQ(entries(d.path), (std::set<std::string>{"file.txt"}));
}

TEST(ArtifactTest, WriteFileAtomicFailureThrowsAndLeavesNothing) {
  TempDir d;
  const fs::path p = d.path / "missing_folder" / "file.txt";
  EXPECT_THROW(steer::write_file_atomic(p.string(), "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_empty(d.path));
  // the destination is a folder: the rename fails after the temporary was written
  fs::create_directory(d.path / "dest");
  fs::create_directory(d.path / "dest" / "inner");  // non-empty, so rename over it fails
  EXPECT_ANY_THROW(steer::write_file_atomic((d.path / "dest").string(), "x"));
  EXPECT_EQ(entries(d.path), (std::set<std::string>{"dest"}));
}

TEST(ArtifactTest, OutDirUnderRegularFileThrowsAndLeavesNothing) {
  TempDir d;
  const fs::path file = d.path / "plain";
  std::ofstream(file) << "not a folder";
  EXPECT_THROW(steer::write_artifact((file / "runs").string(), "run", sample_files()),
               std::runtime_error);
  EXPECT_EQ(entries(d.path), (std::set<std::string>{"plain"}));
  EXPECT_EQ(slurp(file), "not a folder");
}

TEST(ArtifactTest, FailureMidWriteRemovesTemporaryFolder) {
  TempDir d;
  steer::ArtifactFiles f = sample_files();
  // the first sidecar is written into the temporary folder, the second cannot be created
  // (its folder does not exist), so the failure happens with a half-filled temporary
  f.sidecars.push_back({"no_such_folder/late.csv", "x"});
  EXPECT_THROW(steer::write_artifact(d.path.string(), "run", f), std::runtime_error);
  EXPECT_TRUE(fs::is_empty(d.path)) << "left: " << *entries(d.path).begin();
}

TEST(ArtifactTest, ReadMissingArtifactThrows) {
  TempDir d;
  EXPECT_THROW(steer::read_artifact(d.path.string()), std::runtime_error);
}

// ---- end to end: the worked example's artifact

TEST(ArtifactTest, WorkedExampleEndToEnd) {
  TempDir d;
  const fs::path cfg_path = fs::path(STEER_SOURCE_DIR) / "configs" / "projectile.json";
  const json input = json::parse(slurp(cfg_path));
  steer::ExperimentConfig c = steer::load_config(cfg_path.string());
  steer::RunOptions o;
  o.backend = "cpu";
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  ASSERT_FALSE(r.artifact_dir.empty());
  EXPECT_EQ(fs::path(r.artifact_dir).parent_path(), d.path);
  EXPECT_TRUE(r.check_passed);
  EXPECT_NE(r.summary.find("artifact: " + r.artifact_dir), std::string::npos) << r.summary;

  const json a = steer::read_artifact(r.artifact_dir);
  EXPECT_EQ(a, r.artifact);  // what was written is what the run returned
  EXPECT_EQ(a["format"], "steer.artifact/1");
  EXPECT_EQ(a["command"], "run");
  EXPECT_TRUE(a["steer_version"].is_string());
  EXPECT_EQ(a["config"], input);

  // effective config: values with units
  const json& e = a["effective_config"];
  EXPECT_EQ(e["simulation"]["dt"]["unit"], "s");
  EXPECT_DOUBLE_EQ(e["simulation"]["dt"]["value"].get<double>(), 0.01);
  EXPECT_EQ(e["simulation"]["checkpoint_every"], 18);
  EXPECT_EQ(e["simulation"]["backend_requested"], "cpu");
  ASSERT_FALSE(e["model"]["parameters"].empty());
  for (const auto& [name, v] : e["model"]["parameters"].items()) {
    EXPECT_TRUE(v.contains("unit")) << name;
    EXPECT_TRUE(v["value"].is_number()) << name;
  }
  EXPECT_EQ(e["model"]["parameters"]["gravity"]["unit"], "m/s^2");

  // units of every slot
  EXPECT_EQ(a["units"]["state"]["position.x"], "m");
  EXPECT_EQ(a["units"]["state"]["velocity.y"], "m/s");
  EXPECT_EQ(a["units"]["control"]["force.x"], "N");
  EXPECT_EQ(a["units"]["parameter"]["mass"], "kg");
  EXPECT_EQ(a["units"]["state"].size(), 4u);
  EXPECT_EQ(a["units"]["control"].size(), 2u);
  EXPECT_EQ(a["units"]["parameter"].size(), 6u);

  // seed and initial state
  EXPECT_EQ(a["seed"]["batch"], 1);
  EXPECT_TRUE(a["seed"]["validation"].is_number_integer());
  ASSERT_EQ(a["initial"].size(), 1u);
  EXPECT_DOUBLE_EQ(a["initial"][0]["state"]["velocity.x"]["value"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(a["initial"][0]["state"]["velocity.y"]["value"].get<double>(), 1.0);
  EXPECT_EQ(a["initial"][0]["state"]["velocity.x"]["unit"], "m/s");
  EXPECT_DOUBLE_EQ(a["initial"][0]["parameters"]["gravity"]["value"].get<double>(), 9.81);

  // trajectory: JSON subsampled to ≤ 200 points, CSV sidecar complete
  const json& t = a["trajectory"];
  EXPECT_EQ(t["state_names"], json({"position.x", "position.y", "velocity.x", "velocity.y"}));
  EXPECT_EQ(t["state_units"], json({"m", "m", "m/s", "m/s"}));
  ASSERT_EQ(t["rollouts"].size(), 1u);
  const json& steps = t["rollouts"][0]["step"];
  EXPECT_LE(steps.size(), 201u);
  EXPECT_EQ(steps.front(), 0);
  EXPECT_EQ(steps.back(), 300);
  EXPECT_EQ(t["rollouts"][0]["state"].size(), steps.size());
  EXPECT_EQ(t["sidecar_csv"], "trajectory.csv");
  const std::string csv = slurp(fs::path(r.artifact_dir) / "trajectory.csv");
  const long lines = std::count(csv.begin(), csv.end(), '\n');
  EXPECT_EQ(lines, 300 + 1 + 1);  // T+1 states plus the header
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "rollout,step,time_s,position.x_m,position.y_m,velocity.x_m/s,velocity.y_m/s");
  // the last CSV row is x_T: x_T = 3 s · vx with vx → 2 m/s after optimization
  {
    std::string last = csv.substr(0, csv.size() - 1);
    last = last.substr(last.rfind('\n') + 1);
    EXPECT_EQ(last.rfind("0,300,", 0), 0u) << last;
    std::stringstream ss(last);
    std::string cell;
    std::vector<double> v;
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 7u);
    EXPECT_NEAR(v[2], 3.0, 1e-9);  // time_s
    EXPECT_NEAR(v[3], 6.0, 5e-5);  // position.x
  }

  // validation before and after optimization, labels, optimization history
  ASSERT_EQ(a["validation"].size(), 2u);
  EXPECT_EQ(a["validation"][0]["stage"], "initial");
  EXPECT_EQ(a["validation"][1]["stage"], "final");
  for (const auto& v : a["validation"]) {
    EXPECT_TRUE(v["all_passed"].get<bool>());
    EXPECT_LE(v["max_relative_error"].get<double>(), 1e-6);
  }
  // labels: the run total is the sum of the stages' label counts; at the start (free flight,
  // exact gradients, |ΔE|/|E0| = 1.44 J / 3.625 J = 0.40 < 0.5) there is nothing to label
  ASSERT_TRUE(a.contains("labels"));
  ASSERT_TRUE(a["labels"].is_object());
  EXPECT_TRUE(a["validation"][0]["label_counts"].empty()) << a["validation"][0]["label_counts"];
  json total = json::object();
  for (const auto& v : a["validation"])
    for (const auto& [k, n] : v["label_counts"].items())
      total[k] = total.value(k, 0) + n.get<int>();
  EXPECT_EQ(a["labels"], total);
  EXPECT_EQ(a["optimization"]["iterations"], 200);
  EXPECT_FALSE(a["optimization"]["history"]["loss_mean"].empty());

  // timings and device
  const json& tm = a["timings"];
  EXPECT_GT(tm["forward_backward"]["rollout_steps_per_second"].get<double>(), 0.0);
  EXPECT_GT(tm["forward"]["rollout_steps_per_second"].get<double>(), 0.0);
  EXPECT_GT(tm["forward_backward"]["latency_per_rollout_seconds"].get<double>(), 0.0);
  EXPECT_GT(tm["total_seconds"].get<double>(), 0.0);
  // 201 gradient evaluations of 300 steps in the optimizer (200 iterations + final) at least
  EXPECT_GE(tm["rollout_steps_swept_backward"].get<long long>(), 201LL * 300);
  EXPECT_EQ(a["device"]["backend"], "cpu");
  EXPECT_EQ(a["device"]["backend_requested"], "cpu");

  // the only entry in out_dir is the published run folder
  EXPECT_EQ(entries(d.path), (std::set<std::string>{fs::path(r.artifact_dir).filename().string()}));
}

namespace {

// an articulated model's sites follow the states in trajectory.csv: site.<name>.x|y|z_m, the
// site's world position (a body's site moves with it, a world site stays), with the rollout's θ
TEST(ArtifactTest, TrajectoryCsvHasTheSites) {
  TempDir d;
  const json cfg = json::parse(R"({
    "name": "sites",
    "model": {"type": "articulated", "gravity": 9.81,
      "bodies": [{"name": "arm", "pos": [0, 0, 1], "mass": 1.0, "com": [0.2, 0, 0],
                  "fullinertia": [0.002, 0.01, 0.01, 0, 0, 0],
                  "joint": {"name": "shoulder", "axis": [0, 1, 0]}}],
      "sites": [{"name": "tip", "body": "arm", "pos": [0.4, 0, 0]},
                {"name": "mark", "body": "world", "pos": [1, 2, 3]}]},
    "simulation": {"dt": 0.01, "steps": 20, "precision": "float64", "backend": "cpu"},
    "initial_state": {"q": [0.3]},
    "loss": {"control_effort": 1},
    "validation": {"enabled": false},
    "output": {"trajectory_rollouts": 1}
  })");
  steer::ExperimentConfig c = steer::parse_config(cfg);
  steer::RunOptions o;
  o.backend = "cpu";
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  const std::string csv = slurp(fs::path(r.artifact_dir) / "trajectory.csv");
  std::stringstream in(csv);
  std::string header, line, last;
  std::getline(in, header);
  EXPECT_EQ(header,
            "rollout,step,time_s,shoulder.q_rad,shoulder.v_rad/s,site.tip.x_m,site.tip.y_m,"
            "site.tip.z_m,site.mark.x_m,site.mark.y_m,site.mark.z_m");
  int rows = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 11u) << line;
    // the tip 0.4 m along the arm turned by q about y: (0.4 cos q, 0, 1 − 0.4 sin q)
    EXPECT_NEAR(v[5], 0.4 * std::cos(v[3]), 1e-15) << line;
    EXPECT_NEAR(v[6], 0.0, 1e-15) << line;
    EXPECT_NEAR(v[7], 1 - 0.4 * std::sin(v[3]), 1e-15) << line;
    EXPECT_EQ(v[8], 1.0);
    EXPECT_EQ(v[9], 2.0);
    EXPECT_EQ(v[10], 3.0);
    ++rows;
  }
  EXPECT_EQ(rows, 21);
  // report.html still draws from the state columns
  EXPECT_TRUE(fs::is_regular_file(fs::path(r.artifact_dir) / "report.html"));
}

// the tendons' lengths follow the sites: tendon.<name>.length_<unit>, a fixed tendon's Σ c q
// (rad over hinges only), a spatial one's segments between its sites (m)
TEST(ArtifactTest, TrajectoryCsvHasTheTendonLengths) {
  TempDir d;
  const json cfg = json::parse(R"({
    "name": "tendons",
    "model": {"type": "articulated", "gravity": 9.81,
      "bodies": [{"name": "upper", "pos": [0, 0, 1], "mass": 1.0, "com": [0.2, 0, 0],
                  "fullinertia": [0.002, 0.01, 0.01, 0, 0, 0],
                  "joint": {"name": "shoulder", "axis": [0, 1, 0]}},
                 {"name": "lower", "parent": "upper", "pos": [0.4, 0, 0], "mass": 0.5,
                  "com": [0.15, 0, 0], "fullinertia": [0.001, 0.004, 0.004, 0, 0, 0],
                  "joint": {"name": "elbow", "axis": [0, 1, 0]}}],
      "sites": [{"name": "anchor", "body": "world", "pos": [0, 0, 1.5]},
                {"name": "hand", "body": "lower", "pos": [0.3, 0, 0]}],
      "tendons": [{"name": "sum", "joints": [{"joint": "shoulder", "coef": 1},
                                             {"joint": "elbow", "coef": 0.5}]},
                  {"name": "cable", "sites": ["anchor", "hand"]}]},
    "simulation": {"dt": 0.01, "steps": 10, "precision": "float64", "backend": "cpu"},
    "initial_state": {"q": [0.3, -0.2]},
    "loss": {"control_effort": 1},
    "validation": {"enabled": false},
    "output": {"trajectory_rollouts": 1}
  })");
  steer::ExperimentConfig c = steer::parse_config(cfg);
  steer::RunOptions o;
  o.backend = "cpu";
  o.out_dir = d.path.string();
  o.progress = false;
  steer::apply_overrides(c, o);
  const steer::RunOutcome r = steer::run_experiment(c, o);
  std::stringstream in(slurp(fs::path(r.artifact_dir) / "trajectory.csv"));
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header,
            "rollout,step,time_s,shoulder.q_rad,elbow.q_rad,shoulder.v_rad/s,elbow.v_rad/s,"
            "site.anchor.x_m,site.anchor.y_m,site.anchor.z_m,site.hand.x_m,site.hand.y_m,"
            "site.hand.z_m,tendon.sum.length_rad,tendon.cable.length_m");
  int rows = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 15u) << line;
    EXPECT_NEAR(v[13], v[3] + 0.5 * v[4], 1e-15) << line;
    const double dx = v[10] - v[7], dy = v[11] - v[8], dz = v[12] - v[9];
    EXPECT_NEAR(v[14], std::sqrt(dx * dx + dy * dy + dz * dz), 1e-12) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 11);
}

}  // namespace
