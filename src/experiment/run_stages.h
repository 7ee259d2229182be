// The stages of run_experiment (src/experiment/experiment.cpp), each a function over the
// state a run accumulates: the problem, the artifact under construction, the evaluations at
// the start and at the optimum, the validations and labels, the summary text.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/artifact.h"
#include "experiment/checkpoint.h"
#include "experiment/experiment.h"
#include "problem/problem.h"
#include "steer/backend.h"

namespace steer {

struct RunState {
  using clock = std::chrono::steady_clock;
  RunState(const ExperimentConfig& cfg, const RunOptions& opt) : c(cfg), o(opt) {}
  const ExperimentConfig& c;
  const RunOptions& o;
  clock::time_point t_start = clock::now();
  RunOutcome out;
  std::string backend_note;
  BackendKind backend = BackendKind::kCpu;
  std::unique_ptr<Problem> problem;  // the run's problem
  std::unique_ptr<Problem>
      problem64;  // a float32 run's problem in float64, for its gradient checks
  std::unique_ptr<Problem> half_step;  // the checked problem at h/2 (validation.timestep_check)
  int B = 0, nv = 0;
  // rollouts the artifact lists in initial, the final states and the com travel (the first
  // output.trajectory_rollouts, at least 1); the gradient check lists validation.listed_rollouts
  int listed = 0;
  std::vector<std::string> vunits;  // the unit of each flattened variable
  nlohmann::json art;               // the artifact under construction
  std::vector<double> v0, vfinal;   // variables at the start and at the optimum [B·nv]
  Evaluation e0, efinal;
  nlohmann::json validations = nlohmann::json::array();
  std::map<std::string, int> label_totals;
  // per rollout, what the optimization gained, |L(start) − L(optimum)|: the timestep check's
  // scale at the final stage, where the gradient at h is ~0 by construction; and ‖∇L‖ at the start
  std::vector<double> gains, start_gradient;
  std::ostringstream analyses;       // the analyses' summary lines
  nlohmann::json result;             // the artifact's "result" section
  ArtifactFiles files;               // artifact.json and the sidecars
  std::vector<double> final_states;  // x_0 and x_T of each listed rollout
  std::vector<double> com_before, com_after;
  std::ostringstream summary;  // the stdout summary
  std::string run_name;        // the artifact folder's name: <name>-<start time, UTC>
  std::string created_utc;     // the run's start
  std::unique_ptr<RunCheckpoint> checkpoint;  // null: the run keeps no checkpoint
  // the gradient files as per-rank shards (src/experiment/shards.h): every rank writes its own
  // shard_files into rank 0's temporary artifact folder before rank 0 publishes it
  bool sharded = false;
  std::vector<std::pair<std::string, std::string>> shard_files;
};

// refuses what the command cannot run, picks the backend and builds the problem
void plan_run(RunState& run);
// the artifact's header: format, config, units, device, checkpoint schedule, initial batch
void describe_run(RunState& run);
// the gradient check at vars, when the config (or `steer check` at the start) asks for it at stage
void validate_stage(RunState& run, const std::vector<double>& vars, const std::string& stage);
// the loss and gradient at the start, the optimizer's run and the final validation
void optimize_stage(RunState& run);
// horizon sweep, perturbation, terminal success (src/validate/analyses.h); validations and labels
void analyses_stage(RunState& run);
// per-rollout losses and variables, ranking, swept values, final states and trajectories
void assemble_result(RunState& run);
// the centre of mass's travel before and after, for models that report it
void com_travel_stage(RunState& run);
// cost accounting and throughput
void timings_stage(RunState& run);
// the stdout summary
void summarize(RunState& run);
// the artifact folder (when asked) and the outcome
void write_stage(RunState& run);
// the output folder, the run's name and its checkpoint (fresh, or the one --resume names)
void prepare_run(RunState& run);
// the run's state before the optimizer, as a checkpoint saves it, and its restoration
nlohmann::json saved_run_state(const RunState& run);
void restore_run_state(RunState& run, const nlohmann::json& saved);
// a safe point between stages: stops the run (RunStopped) when SIGINT or SIGTERM has arrived
void stop_point(const RunState& run, const std::string& where);

// helpers shared by the stages
std::string utc_now(const char* format);
std::string fmt(double v, int prec = 6);
// across ranks: refuses (ConfigError on every rank) a job whose ranks resolved different backends;
// collective
void require_one_backend(BackendKind backend);
// the job's ranks, their hosts and (batch > 0) blocks of a batch of `batch` rollouts (artifact
// "parallel", a run-description field: docs/scaling.md); collective
nlohmann::json parallel_json(int batch);
// named values of one rollout's slice, with units
nlohmann::json named(const std::vector<std::string>& names, const std::vector<std::string>& units,
                     const double* v);

}  // namespace steer
