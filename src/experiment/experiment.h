// Running an experiment end to end: config -> problem -> (validate, optimize, validate)
// -> artifact. Shared by `steer run` and `steer check` and by the tests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace steer {

struct RunOptions {
  std::string command = "run";  // run | check
  std::string backend;          // overrides simulation.backend when set
  std::string out_dir;          // overrides output.dir when set
  std::string precision;        // overrides simulation.precision when set
  int threads = -1;             // overrides simulation.threads when >= 0
  bool progress = true;         // progress lines on stderr
  bool write = true;            // write the artifact folder
};

struct RunOutcome {
  nlohmann::json artifact;
  std::string artifact_dir;   // empty when nothing was written
  std::string summary;        // short human summary for stdout
  bool check_passed = true;   // every validated rollout passed (true when validation is off)
};

// applies CLI overrides to a parsed config (ConfigError for bad values)
void apply_overrides(ExperimentConfig& c, const RunOptions& o);

RunOutcome run_experiment(const ExperimentConfig& c, const RunOptions& o);

}  // namespace steer
