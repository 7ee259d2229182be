// report.html: one self-contained page per run folder (docs/report.md). The page is built from
// what the folder holds (artifact.json, trajectory.csv, compare.csv) plus the drawing of the
// motion (a "scene"), which the model's own code computes from the recorded states: particle
// positions and springs of a mass-spring robot, the arm's body origins by its forward
// kinematics, the projectile's path and target. The data goes into the page as JSON; a little
// inline JavaScript draws it as SVG. Nothing is loaded from anywhere else.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace steer {

// the size the page must stay under for the shipped configs [bytes]; the trajectory is
// subsampled (frames, rollouts, digits) to keep it there
constexpr std::size_t kReportBudgetBytes = 2000000;

// one run's recorded states as trajectory.csv holds them
struct RecordedTrajectory {
  std::vector<std::string> columns;  // the state columns, "<state>_<unit>"
  struct Rollout {
    int rollout = 0;
    std::vector<int> step;
    std::vector<double> time_s;
    std::vector<std::vector<double>> state;  // one vector of nx values per recorded step
  };
  std::vector<Rollout> rollouts;
};

// parses trajectory.csv text (empty text: no rollouts); std::runtime_error naming the line.
// The state columns are those before the first site or output column (site.<name>.x_m …,
// tendon.<name>.length_<unit> …), which the drawing does not read
RecordedTrajectory parse_trajectory_csv(const std::string& text);

// trajectory.csv's columns after the states: site.<name>.x_m, .y_m, .z_m for each site of the
// model of c (the registry's site_names and site_positions), then the model's output columns
// (its output_columns and output_values: an articulated model's tendon lengths); none without
// them. Built once per file; write_trajectory_extras writes one row's values.
struct TrajectoryExtras {
  std::vector<std::string> columns;
  int n_sites = 0;    // the site columns are the first 3 n_sites
  int n_outputs = 0;  // the output columns follow them
  bool empty() const { return columns.empty(); }
};
TrajectoryExtras trajectory_extras(const ExperimentConfig& c);
// one row's extra values at state x [nx] with parameters theta [np], each written as ",value"
void write_trajectory_extras(std::ostream& out, const ExperimentConfig& c,
                             const TrajectoryExtras& e, const double* theta, const double* x);

// the drawing of the motion for the model of c (nullptr: none), with at most max_frames frames
// per rollout; null JSON when the model offers none
nlohmann::json report_scene(const ExperimentConfig* c, const nlohmann::json& artifact,
                            const RecordedTrajectory& tr, int max_frames);

// the page: the artifact (any command), the trajectory and compare sidecars' text (empty when
// absent), and the config the run was made from (nullptr: no motion is drawn)
std::string render_report(const nlohmann::json& artifact, const std::string& trajectory_csv,
                          const std::string& compare_csv, const ExperimentConfig* c);

// `steer report RUN_DIR`: rebuilds RUN_DIR/report.html from its artifact.json and sidecars,
// written atomically; the config is parsed back from the artifact's "config". ConfigError
// naming RUN_DIR when the folder is not a run folder. Returns the page's path.
std::string rebuild_report(const std::string& run_dir);

// Progress of long work on stderr: with a terminal, one line rewritten in place (\r);
// otherwise a plain line at the start, then at most every `every_s` seconds, and at the end.
// Each line says what, done/total, the rate and the time left at that rate.
class ProgressLine {
 public:
  // tty: 1 or 0 forces the terminal or the plain form, −1 asks isatty(stderr)
  ProgressLine(bool enabled, std::string what, long long total, std::string unit,
               double every_s = 2.0, int tty = -1);
  ~ProgressLine();
  // the total when it is known only once the work has started (a gradient check's passes)
  void set_total(long long total) { total_ = total; }
  // done units so far; extra is appended ("mean loss 0.31")
  void update(long long done, const std::string& extra = "");
  // the final line (the terminal's line ends with a newline)
  void finish(const std::string& extra = "");

 private:
  using clock = std::chrono::steady_clock;
  void print(long long done, const std::string& extra, bool last);
  bool enabled_, tty_;
  std::string what_, unit_;
  long long total_, done_ = 0;
  double every_s_;
  clock::time_point t0_, last_;
  bool printed_ = false, finished_ = false;
  std::size_t width_ = 0;
};

// "1 h 02 min", "3 min 05 s", "12 s" (rounded)
std::string duration_text(double seconds);

}  // namespace steer
