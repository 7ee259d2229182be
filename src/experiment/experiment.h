// Running an experiment end to end: config -> problem -> (validate, optimize, validate)
// -> artifact. Shared by `steer run` and `steer check` and by the tests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/stop_request.h"

namespace steer {

struct RunOptions {
  std::string command = "run";  // run | check
  std::string backend;          // overrides simulation.backend when set
  std::string out_dir;          // overrides output.dir when set
  std::string precision;        // overrides simulation.precision when set
  int threads = -1;             // overrides simulation.threads when >= 0
  bool progress = true;         // progress lines on stderr
  bool write = true;            // write the artifact folder
  std::string resume_dir;       // --resume: the checkpoint folder of an interrupted run
  double checkpoint_seconds =
      60;  // a checkpoint at least this often during the optimization (0: by count only)
  int checkpoint_evaluations =
      0;  // ... and after this many optimizer evaluations (0: by time only)
  // --checkpoint-seconds or --checkpoint-evaluations given: across ranks, Adam and gd then keep the
  // checkpoint (and gather every evaluation for its log) rather than run per-rank blocks
  bool checkpoint_chosen = false;
  // --shard-bytes: across ranks, the gradient files are written as per-rank shards when the two
  // whole files (2·B·nv·8 B) would exceed this (docs/artifact.md, "Per-rank shards"); 2 GiB
  long long shard_bytes = 2147483648LL;
  std::string config_path;  // for the resume hint in messages
};

struct RunOutcome {
  nlohmann::json artifact;
  std::string artifact_dir;  // empty when nothing was written
  std::string summary;       // short human summary for stdout
  bool check_passed = true;  // every validated rollout passed (true when validation is off)
};

// applies CLI overrides to a parsed config (ConfigError for bad values)
void apply_overrides(ExperimentConfig& c, const RunOptions& o);

RunOutcome run_experiment(const ExperimentConfig& c, const RunOptions& o);

}  // namespace steer
