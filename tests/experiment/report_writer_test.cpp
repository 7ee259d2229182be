// report.html's writer (src/experiment/report*.cpp, docs/report.md): a self-contained page with
// the run's data embedded, no reference to anything outside it, user strings that cannot break
// out of the embedded data, the size budget held by subsampling, the model drawings computed by
// the models' own code, `steer report` rebuilding the same page, and the progress lines.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <iostream>
#include <thread>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_cli.h"
#include "config/config.h"
#include "experiment/report.h"
#include "optim/optimizer.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;

using steer::testing::CliResult;
using steer::testing::run_steer;

namespace {

struct TempDir : steer::testing::TempDir {
  TempDir() : steer::testing::TempDir("steer_report_test") {}
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string config_path(const std::string& name) {
  return std::string(STEER_SOURCE_DIR) + "/configs/" + name + ".json";
}

// the JSON between <script type="application/json" id="steer-data"> and its </script>
json embedded(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"steer-data\">";
  const size_t a = html.find(open);
  EXPECT_NE(a, std::string::npos);
  if (a == std::string::npos) return nullptr;
  const size_t b = html.find("</script>", a);
  return json::parse(html.substr(a + open.size(), b - a - open.size()));
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// self-contained: no address to load anything from, no element that loads a file. The one
// "http://" allowed is the SVG namespace, a name that document.createElementNS needs and that
// no browser fetches.
void expect_self_contained(const std::string& html) {
  std::string rest = html;
  const std::string ns = "http://www.w3.org/2000/svg";
  for (size_t p = rest.find(ns); p != std::string::npos; p = rest.find(ns))
    rest.erase(p, ns.size());
  EXPECT_EQ(rest.find("http://"), std::string::npos);
  EXPECT_EQ(rest.find("https://"), std::string::npos);
  EXPECT_EQ(rest.find("//cdn"), std::string::npos);
  EXPECT_EQ(rest.find(" src="), std::string::npos);
  EXPECT_EQ(rest.find("<link"), std::string::npos);
  EXPECT_EQ(rest.find("@import"), std::string::npos);
  EXPECT_EQ(rest.find("url("), std::string::npos);
  EXPECT_EQ(rest.find("fetch("), std::string::npos);
  EXPECT_EQ(rest.find("XMLHttpRequest"), std::string::npos);
  // the page's policy forbids any load the code above might miss
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // three scripts: the error collector, the data, the drawing code
  EXPECT_EQ(count(html, "<script"), 3u);
  EXPECT_EQ(count(html, "</script>"), 3u);
}

// a run's folder from the summary's "artifact: <dir>/artifact.json" line
fs::path folder_of(const CliResult& r) {
  const std::string tag = "artifact: ";
  const size_t at = r.out.find(tag);
  EXPECT_NE(at, std::string::npos) << r.out;
  if (at == std::string::npos) return {};
  std::string p = r.out.substr(at + tag.size());
  p = p.substr(0, p.find('\n'));
  return fs::path(p).parent_path();
}

}  // namespace

// The projectile's run folder holds report.html: self-contained, under the budget, with the
// artifact's result and the motion embedded; `steer report` rebuilds the same bytes
TEST(ReportWriter, ProjectileRunFolderAndRebuild) {
  TempDir d;
  json cfg = json::parse(slurp(config_path("projectile")));
  cfg["optimizer"]["iterations"] = 20;
  cfg["output"]["trajectory_rollouts"] = 1;
  const fs::path cp = d.path / "p.json";
  std::ofstream(cp) << cfg.dump();
  const CliResult r = run_steer(
      "run '" + cp.string() + "' --backend cpu --quiet --out '" + (d.path / "out").string() + "'",
      d.path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // --quiet: no progress
  const fs::path dir = folder_of(r);
  ASSERT_TRUE(fs::is_regular_file(dir / "report.html"));
  EXPECT_NE(r.out.find("report: " + (dir / "report.html").string()), std::string::npos) << r.out;
  const std::string html = slurp(dir / "report.html");
  expect_self_contained(html);
  EXPECT_LT(html.size(), steer::kReportBudgetBytes);
  const json data = embedded(html);
  const json art = json::parse(slurp(dir / "artifact.json"));
  EXPECT_EQ(data["artifact"]["result"], art["result"]);
  EXPECT_EQ(data["artifact"]["validation"], art["validation"]);
  EXPECT_EQ(data["artifact"]["labels"], art["labels"]);
  EXPECT_EQ(data["artifact"]["optimization"]["history"], art["optimization"]["history"]);
  // the motion: the point's path, frame 0 at the launch point and the last frame at x_T,
  // within the page's 5 significant digits; the target x = 6 m from the loss
  const json& sc = data["scene"];
  ASSERT_TRUE(sc.is_object());
  EXPECT_EQ(sc["kind"], "point");
  EXPECT_EQ(sc["target"]["x"], 6.0);
  const json& p = sc["rollouts"][0]["p"];
  ASSERT_GE(p.size(), 2u);
  EXPECT_LE(p.size(), 241u);
  const json& xT = art["result"]["final_state"][0]["state"];
  EXPECT_NEAR(p[0][0].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(p.back()[0].get<double>(), xT["position.x"]["value"].get<double>(), 1e-4);
  EXPECT_NEAR(p.back()[1].get<double>(), xT["position.y"]["value"].get<double>(),
              1e-4 * std::abs(xT["position.y"]["value"].get<double>()) + 1e-9);
  // free motion: the model's energy per drawn frame; its largest change over the largest KE is
  // the validator's energy drift (symplectic Euler under constant gravity drifts steadily, so
  // the largest change is at the last step, which is always drawn), within the 5 digits
  const json& en = sc["energy"];
  ASSERT_EQ(en.size(), 1u);
  double de = 0, ke = 0;
  for (size_t i = 0; i < en[0]["E"].size(); ++i) {
    de = std::max(de, std::abs(en[0]["E"][i].get<double>() - en[0]["E"][0].get<double>()));
    ke = std::max(ke, en[0]["KE"][i].get<double>());
  }
  const double drift = art["validation"][0]["rollouts"][0]["energy_drift_relative"].get<double>();
  ASSERT_GT(drift, 0.0);
  EXPECT_NEAR(de / ke, drift, 0.05 * drift);
  // rebuilt from the folder alone: the same page
  const std::string before = html;
  fs::remove(dir / "report.html");
  const CliResult rb = run_steer("report '" + dir.string() + "'", d.path);
  ASSERT_EQ(rb.code, 0) << rb.err;
  EXPECT_EQ(slurp(dir / "report.html"), before);
  // nothing but report.html is left behind by the atomic write
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    n += e.path().filename().string().find(".tmp") != std::string::npos;
  EXPECT_EQ(n, 0);
}

// A config that names a data file relative to its own folder: `steer report`, run from another
// working folder, reads the file from the folder the artifact records and rebuilds the same
// page (without it the config cannot be parsed again and the page loses the motion)
TEST(ReportWriter, RebuildReadsDataFilesFromTheConfigsFolder) {
  TempDir d;
  fs::create_directories(d.path / "cfg");
  fs::create_directories(d.path / "elsewhere");
  std::ofstream(d.path / "cfg" / "obs.csv") << "t,position.x\n0,0\n0.1,0.5\n0.2,1.1\n";
  json cfg = json::parse(slurp(config_path("projectile")));
  cfg["optimizer"]["iterations"] = 5;
  cfg["output"]["trajectory_rollouts"] = 1;
  cfg["loss"] = {{"observations", {{"file", "obs.csv"}}}};
  const fs::path cp = d.path / "cfg" / "p.json";
  std::ofstream(cp) << cfg.dump();
  const CliResult r = run_steer(
      "run '" + cp.string() + "' --backend cpu --quiet --out '" + (d.path / "out").string() + "'",
      d.path);
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path dir = folder_of(r);
  const json art = json::parse(slurp(dir / "artifact.json"));
  EXPECT_EQ(fs::path(art["config_folder"].get<std::string>()),
            fs::absolute(d.path / "cfg").lexically_normal());
  const std::string before = slurp(dir / "report.html");
  ASSERT_TRUE(embedded(before)["scene"].is_object());
  fs::remove(dir / "report.html");
  const CliResult rb = run_steer("report '" + dir.string() + "'", d.path / "elsewhere");
  ASSERT_EQ(rb.code, 0) << rb.err;
  EXPECT_EQ(slurp(dir / "report.html"), before);
}

// `steer report` refuses what is not a run folder with exit 2, naming RUN_DIR
TEST(ReportWriter, ReportCommandRefusesNonRunFolders) {
  TempDir d;
  CliResult r = run_steer("report '" + (d.path / "absent").string() + "'", d.path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RUN_DIR"), std::string::npos) << r.err;
  r = run_steer("report '" + d.path.string() + "'", d.path);  // a folder without artifact.json
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RUN_DIR"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("artifact.json"), std::string::npos) << r.err;
  std::ofstream(d.path / "artifact.json") << "{\"format\": \"other\"}";
  r = run_steer("report '" + d.path.string() + "'", d.path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("steer.artifact/1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d.path / "report.html"));
  r = run_steer("report", d.path);  // the argument is required
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RUN_DIR"), std::string::npos) << r.err;
}

// a name and description that try to close the data script and run their own: they stay
// data (escaped in the JSON, HTML-escaped in the title) and come back unchanged from the JSON
TEST(ReportWriter, UserStringsCannotInjectMarkup) {
  const std::string evil = "x</script><script>alert(1)</script><!-- & \"q\" 'a' </SCRIPT >";
  json art = {{"format", "steer.artifact/1"},
              {"command", "check"},
              {"effective_config", {{"name", evil}, {"description", evil}}},
              {"labels", {{evil, 1}}},
              {"result", {{"check_passed", true}}}};
  const std::string html = steer::render_report(art, "", "", nullptr);
  expect_self_contained(html);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<!-- &"), std::string::npos);
  EXPECT_NE(html.find("<title>steer check: x&lt;/script&gt;&lt;script&gt;"), std::string::npos);
  const json data = embedded(html);
  EXPECT_EQ(data["artifact"]["effective_config"]["name"], evil);
  EXPECT_EQ(data["artifact"]["effective_config"]["description"], evil);
  EXPECT_TRUE(data["scene"].is_null());
}

// A long recording of a robot batch stays under the budget: frames are subsampled (the last
// kept), coordinates carry 5 significant digits, and the springs are the robot's own
TEST(ReportWriter, RobotPageKeepsItsBudget) {
  steer::ExperimentConfig c = steer::load_config(config_path("difftaichi_robot_a"));
  const int nx = c.info.nx(), rollouts = 8, frames = 20000;
  std::ostringstream csv;
  csv.precision(17);
  csv << "rollout,step,time_s";
  for (int i = 0; i < nx; ++i) csv << ",s" << i;
  csv << "\n";
  for (int b = 0; b < rollouts; ++b)
    for (int k = 0; k < frames; ++k) {
      csv << b << "," << k << "," << k * c.dt;
      // the rest shape moved right by 1 mm per frame: frame k's first particle at x0 + k·1e-3
      for (int i = 0; i < nx; ++i)
        csv << "," << c.x0[i] + (i < nx / 2 && i % 2 == 0 ? k * 1e-3 : 0.0);
      csv << "\n";
    }
  ASSERT_GT(csv.str().size(), 4 * steer::kReportBudgetBytes);  // the recording alone is far over
  json art = {
      {"format", "steer.artifact/1"}, {"command", "run"}, {"effective_config", c.to_json()}};
  const std::string html = steer::render_report(art, csv.str(), "", &c);
  EXPECT_LT(html.size(), steer::kReportBudgetBytes);
  expect_self_contained(html);
  const json sc = embedded(html)["scene"];
  ASSERT_TRUE(sc.is_object());
  EXPECT_EQ(sc["kind"], "robot");
  EXPECT_LE(sc["rollouts"].size(), 4u);
  const json& p = sc["rollouts"][0]["p"];
  EXPECT_LE(p.size(), 241u);
  EXPECT_GE(p.size(), 2u);
  EXPECT_NEAR(p.back()[0].get<double>(), c.x0[0] + (frames - 1) * 1e-3,
              1e-4 * (1 + std::abs(c.x0[0]) + frames * 1e-3));
  const auto& robot = c.model_state<steer::MassSpringSetup>().robot;
  ASSERT_EQ(sc["edges"].size(), robot.springs.size());
  for (size_t s = 0; s < robot.springs.size(); ++s) {
    EXPECT_EQ(sc["edges"][s][0], robot.springs[s].a);
    EXPECT_EQ(sc["edges"][s][1], robot.springs[s].b);
    EXPECT_EQ(sc["edge_actuated"][s], robot.springs[s].actuation != 0 ? 1 : 0);
  }
  EXPECT_NEAR(sc["ground"].get<double>(), 0.1, 1e-12);  // DiffTaichi's ground at 0.1 m
}

// The arm's stick figure comes from the model's forward kinematics: the links are rigid (the
// distance between a body's origin and its parent's does not change with q) and the joints
// move the tip
TEST(ReportWriter, ArmFiguresAreRigid) {
  steer::ExperimentConfig c = steer::load_config(config_path("panda"));
  const int nx = c.info.nx(), nq = nx / 2;
  std::ostringstream csv;
  csv.precision(17);
  csv << "rollout,step,time_s";
  for (int i = 0; i < nx; ++i) csv << ",s" << i;
  csv << "\n";
  for (int k = 0; k < 3; ++k) {
    csv << "0," << k << "," << k * c.dt;
    for (int i = 0; i < nx; ++i)
      csv << "," << (i < nq ? c.x0[i] + 0.4 * k * (i % 2 ? -1 : 1) : 0.0);
    csv << "\n";
  }
  json art = {{"format", "steer.artifact/1"}, {"command", "run"}};
  const json sc = embedded(steer::render_report(art, csv.str(), "", &c))["scene"];
  ASSERT_TRUE(sc.is_object());
  EXPECT_EQ(sc["kind"], "arm");
  const json& p = sc["rollouts"][0]["p"];
  ASSERT_EQ(p.size(), 3u);
  const size_t npts = sc["point_names"].size();
  EXPECT_EQ(sc["point_names"].back(), "tip");
  auto dist = [&](int f, int a, int b) {
    double s = 0;
    for (int i = 0; i < 3; ++i)
      s += std::pow(p[f][3 * a + i].get<double>() - p[f][3 * b + i].get<double>(), 2);
    return std::sqrt(s);
  };
  for (const auto& e : sc["edges"])
    for (int f = 1; f < 3; ++f)
      EXPECT_NEAR(dist(f, e[0], e[1]), dist(0, e[0], e[1]), 1e-4) << e.dump();
  double moved = 0;  // the tip between frames 0 and 2
  for (int i = 0; i < 3; ++i)
    moved += std::pow(
        p[2][3 * (npts - 1) + i].get<double>() - p[0][3 * (npts - 1) + i].get<double>(), 2);
  EXPECT_GT(std::sqrt(moved), 0.05);
}

// a recording that does not fit the model (a folder edited by hand) costs the motion, not the
// page: the rest is drawn, with a note that says why
TEST(ReportWriter, MismatchedRecordingLeavesANote) {
  steer::ExperimentConfig c = steer::load_config(config_path("difftaichi_robot_a"));
  json art = {{"format", "steer.artifact/1"}, {"command", "run"}};
  const std::string html =
      steer::render_report(art, "rollout,step,time_s,x_m\n0,0,0,1\n0,1,0.1,2\n", "", &c);
  const json data = embedded(html);
  EXPECT_TRUE(data["scene"].is_null());
  ASSERT_FALSE(data["notes"].empty());
  EXPECT_NE(data["notes"].back().get<std::string>().find("1 state columns"), std::string::npos)
      << data["notes"].dump();
}

TEST(ReportWriter, TrajectoryCsvErrorsNameTheLine) {
  EXPECT_THROW(steer::parse_trajectory_csv("a,b\n1,2\n"), std::runtime_error);
  try {
    steer::parse_trajectory_csv("rollout,step,time_s,x_m\n0,0,0,1\n0,1,0.1\n");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  const steer::RecordedTrajectory t =
      steer::parse_trajectory_csv("rollout,step,time_s,x_m\n0,0,0,1\n0,1,0.1,2\n1,0,0,3\n");
  ASSERT_EQ(t.rollouts.size(), 2u);
  EXPECT_EQ(t.rollouts[0].state[1][0], 2.0);
  EXPECT_EQ(t.rollouts[1].rollout, 1);  // the site columns after the states are not state columns
  const steer::RecordedTrajectory s = steer::parse_trajectory_csv(
      "rollout,step,time_s,x_m,site.a.x_m,site.a.y_m,site.a.z_m\n0,0,0,1,4,5,6\n");
  EXPECT_EQ(s.columns, std::vector<std::string>{"x_m"});
  EXPECT_EQ(s.rollouts[0].state[0], std::vector<double>{1.0});
}

// Progress on stderr when it is not a terminal: plain lines with done/total, rate and ETA,
// and the last one with the total time; --quiet gives none
TEST(ReportWriter, ProgressLinesWithEta) {
  TempDir d;
  json cfg = json::parse(slurp(config_path("projectile")));
  cfg["optimizer"]["iterations"] = 200;
  const fs::path cp = d.path / "p.json";
  std::ofstream(cp) << cfg.dump();
  const CliResult r = run_steer(
      "run '" + cp.string() + "' --backend cpu --out '" + (d.path / "out").string() + "'", d.path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("steer: iteration 0/200 (0%)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("steer: iteration 200/200 (100%)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("done in"), std::string::npos) << r.err;
  // the gradient check: its batched passes with rate, ending at the total with the time taken
  const size_t v = r.err.find("steer: validating gradients (initial, 1 rollouts) ");
  ASSERT_NE(v, std::string::npos) << r.err;
  const std::string last_check =
      r.err.substr(r.err.rfind("steer: validating gradients (initial", r.err.find("done in", v)));
  const std::string check_line = last_check.substr(0, last_check.find('\n'));
  EXPECT_NE(check_line.find("(100%)"), std::string::npos) << check_line;
  EXPECT_NE(check_line.find("passes/s"), std::string::npos) << check_line;
  EXPECT_NE(check_line.find("done in"), std::string::npos) << check_line;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no terminal: no carriage returns";
  EXPECT_EQ(steer::duration_text(3725), "1 h 02 min");
  EXPECT_EQ(steer::duration_text(185), "3 min 05 s");
  EXPECT_EQ(steer::duration_text(4.26), "4.3 s");
}

// the progress line itself: rate and ETA while running, the total time at the end; on a
// terminal one line rewritten with \r and ended once
TEST(ReportWriter, ProgressLineForms) {
  for (int tty : {0, 1}) {
    std::ostringstream cap;
    std::streambuf* old = std::cerr.rdbuf(cap.rdbuf());
    {
      steer::ProgressLine bar(true, "thing", 10, "things", 0.0, tty);
      for (int i = 1; i <= 5; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(tty ? 260 : 20));
        bar.update(i, "note");
      }
      bar.finish();
    }
    std::cerr.rdbuf(old);
    const std::string s = cap.str();
    EXPECT_NE(s.find("steer: thing 5/10 (50%)  note"), std::string::npos) << s;
    EXPECT_NE(s.find("things/s  ETA "), std::string::npos) << s;
    EXPECT_NE(s.find("done in"), std::string::npos) << s;
    if (tty) {
      EXPECT_NE(s.find('\r'), std::string::npos);
      EXPECT_EQ(count(s, "\n"), 1u) << s;  // one line, ended at the finish
    } else {
      EXPECT_EQ(s.find('\r'), std::string::npos);
      EXPECT_EQ(count(s, "\n"), 6u) << s;  // every update (every_s 0) and the finish
    }
  }
  std::ostringstream cap;
  std::streambuf* old = std::cerr.rdbuf(cap.rdbuf());
  {
    steer::ProgressLine quiet(false, "thing", 10, "things", 0.0, 0);
    quiet.update(3);
    quiet.finish();
  }
  std::cerr.rdbuf(old);
  EXPECT_TRUE(cap.str().empty());
}

// record_losses: the batch median over the finite losses (the mean of the two middle ones for
// an even count), and the variables of the first ≤ 8 rollouts only when nv ≤ 32
TEST(ReportWriter, TraceMedianAndVariablesLimits) {
  steer::OptimizationTrace t;
  // finite {3, 1, 2, 10}: median (2 + 3)/2; the NaN is left out as it is from the mean
  const std::vector<double> vars10(size_t(10) * 2, 0.5);
  std::vector<double> v = vars10;
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  steer::record_losses(t, 0, {3, NAN, 1, 2, 10}, std::vector<double>(v.begin(), v.begin() + 10), 2);
  steer::record_losses(t, 5, {4, 1, 7}, v, 2);  // 10 rows given, 8 kept
  steer::record_losses(t, 10, {NAN, INFINITY}, v, 2);
  ASSERT_EQ(t.loss_median.size(), 3u);
  EXPECT_EQ(t.loss_median[0], 2.5);
  EXPECT_EQ(t.loss_median[1], 4.0);
  EXPECT_TRUE(std::isnan(t.loss_median[2]));
  EXPECT_EQ(t.vars_per_rollout, 2);
  ASSERT_EQ(t.vars.size(), 3u);
  EXPECT_EQ(t.vars[0], std::vector<double>(v.begin(), v.begin() + 10));  // 5 rollouts: all kept
  EXPECT_EQ(t.vars[1], std::vector<double>(v.begin(), v.begin() + 16));  // first 8 rollouts
  const json j = steer::to_json(t);
  EXPECT_EQ(j["loss_median"].size(), 3u);
  EXPECT_EQ(j["loss_median"][0], 2.5);
  EXPECT_TRUE(std::isnan(j["loss_median"][2].get<double>()));
  EXPECT_TRUE(json::parse(j.dump())["loss_median"][2].is_null());  // NaN is written null
  EXPECT_EQ(j["vars_per_rollout"], 2);
  EXPECT_EQ(j["vars_first_rollouts"][1].size(), 16u);
  // above kTraceMaxVars variables per rollout: no paths, and no fields in the JSON
  steer::OptimizationTrace big;
  steer::record_losses(big, 0, {1, 2},
                       std::vector<double>(size_t(2) * (steer::kTraceMaxVars + 1), 0.0),
                       steer::kTraceMaxVars + 1);
  EXPECT_EQ(big.vars_per_rollout, 0);
  EXPECT_TRUE(big.vars.empty());
  EXPECT_FALSE(steer::to_json(big).contains("vars_first_rollouts"));
  EXPECT_EQ(big.loss_median, std::vector<double>{1.5});
  // exactly kTraceMaxVars: kept
  steer::OptimizationTrace edge;
  steer::record_losses(edge, 0, {1}, std::vector<double>(steer::kTraceMaxVars, 0.25),
                       steer::kTraceMaxVars);
  EXPECT_EQ(edge.vars_per_rollout, steer::kTraceMaxVars);
}

// artifact.json's history and the page's data for gd, Adam, L-BFGS-B and CMA-ES: the median per
// logged iteration equals the median of that entry's losses (batch ≤ 16: all of them are in
// loss_first_rollouts), and the variables' paths start at the start values and end at the
// result's final values of the same rollouts
TEST(ReportWriter, HistoryMedianAndVariablePaths) {
  for (const std::string method : {"gd", "adam", "lbfgsb", "cmaes"}) {
    SCOPED_TRACE(method);
    TempDir d;
    json cfg = json::parse(slurp(config_path("projectile")));
    const bool cmaes = method == "cmaes";
    const int B = cmaes ? 1 : 10;
    cfg["batch"]["size"] = B;
    if (!cmaes) {
      json speeds = json::array();
      for (int b = 0; b < B; ++b) speeds.push_back(1.0 + 0.5 * b);
      cfg["batch"]["sweep"] = {{"x0.velocity.x", speeds}};
    }
    cfg["optimizer"]["method"] = method;
    cfg["optimizer"]["iterations"] = 12;
    cfg["optimizer"]["log_every"] = 4;
    cfg["validation"]["enabled"] = false;
    cfg["output"]["trajectory_rollouts"] = B;
    const fs::path cp = d.path / "p.json";
    std::ofstream(cp) << cfg.dump();
    const CliResult r = run_steer(
        "run '" + cp.string() + "' --backend cpu --quiet --out '" + (d.path / "out").string() + "'",
        d.path);
    ASSERT_EQ(r.code, 0) << r.err;
    const fs::path dir = folder_of(r);
    const json art = json::parse(slurp(dir / "artifact.json"));
    const json& h = art["optimization"]["history"];
    ASSERT_TRUE(h.contains("loss_median")) << h.dump();
    const size_t n = h["iteration"].size();
    ASSERT_GE(n, 2u);
    ASSERT_EQ(h["loss_median"].size(), n);
    for (size_t k = 0; k < n; ++k) {
      std::vector<double> l = h["loss_first_rollouts"][k].get<std::vector<double>>();
      ASSERT_EQ(l.size(), size_t(cmaes ? h["loss_first_rollouts"][k].size() : B));
      std::sort(l.begin(), l.end());
      const double med =
          l.size() % 2 ? l[l.size() / 2] : 0.5 * (l[l.size() / 2 - 1] + l[l.size() / 2]);
      EXPECT_EQ(h["loss_median"][k].get<double>(), med) << "entry " << k;
      EXPECT_LE(h["loss_min"][k].get<double>(), med);
      EXPECT_GE(h["loss_max"][k].get<double>(), med);
    }
    // the paths: rows of the first min(B, 8) rollouts (CMA-ES: the distribution's mean, one row)
    ASSERT_EQ(h["vars_per_rollout"], 2);
    EXPECT_EQ(h["variable_names"], json({"x0.velocity.x", "x0.velocity.y"}));
    const int rows = cmaes ? 1 : std::min(B, 8);
    ASSERT_EQ(h["vars_first_rollouts"].size(), n);
    const json& rr = art["result"]["rollouts"];
    ASSERT_GE(int(rr.size()), rows);
    for (size_t k = 0; k < n; ++k)
      ASSERT_EQ(h["vars_first_rollouts"][k].size(), size_t(rows) * 2) << "entry " << k;
    for (int b = 0; b < rows; ++b) {
      const char* names[2] = {"x0.velocity.x", "x0.velocity.y"};
      for (int i = 0; i < 2; ++i) {
        const json& var = rr[b]["variables"][names[i]];
        EXPECT_EQ(h["vars_first_rollouts"][0][size_t(b) * 2 + i].get<double>(),
                  var["initial"].get<double>())
            << "rollout " << b << " " << names[i];
        EXPECT_EQ(h["vars_first_rollouts"][n - 1][size_t(b) * 2 + i].get<double>(),
                  var["final"].get<double>())
            << "rollout " << b << " " << names[i];
      }
    }
    // the optimizer moved them: the path is not a constant
    EXPECT_NE(h["vars_first_rollouts"][0], h["vars_first_rollouts"][n - 1]);
    // the page carries the same history
    const json data = embedded(slurp(dir / "report.html"));
    EXPECT_EQ(data["artifact"]["optimization"]["history"], h);
  }
}
