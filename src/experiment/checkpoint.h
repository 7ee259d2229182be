// Resumable runs. A run's optimizer is deterministic: given the same evaluations (loss,
// gradient, diagnostics at the points it asks for) it takes the same path, whatever its
// internal state (Adam moments, L-BFGS-B curvature pairs, CMA-ES covariance and random
// stream). So a checkpoint does not serialize optimizer internals: it is the log of every
// batched evaluation the optimizer asked for, plus the run's state before the optimizer
// (gradient validations, labels, cost counters). `steer run CONFIG --resume DIR` rebuilds the
// run, feeds the optimizer the logged evaluations without simulating (each checked against the
// point asked for, by a hash of the variables' bits), then carries on simulating; the result is
// bit for bit the uninterrupted run's.
//
// Folder <out>/<run name>.checkpoint/:
//   state.json       identity (effective config, steer version), the run's saved state, the
//                    number of logged evaluations and the log's valid length; written to a
//                    temporary file and renamed, after the log is flushed to disk
//   evaluations.bin  the log: per evaluation a header (magic, want_grad, the variables' hash,
//                    sizes) and the loss [B], gradient [B·nv] and diagnostics [B] as raw bytes;
//                    bytes past the length state.json records (a kill mid-append) are ignored
//   lock             flock()ed while a process runs or resumes the checkpoint
// The log grows by B·(nv + 1)·8 bytes plus B diagnostics per evaluation; the folder is removed
// when the run's artifact is published.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem/problem.h"

namespace steer {

struct CheckpointOptions {
  double seconds = 60;  // save when this much wall time has passed since the last save (0: off)
  int evaluations = 0;  // ... or after this many optimizer evaluations (0: off)
  bool enabled =
      true;  // false: no checkpoint is ever written (--checkpoint-seconds 0 and no count)
};

class RunCheckpoint {
 public:
  // a fresh run named run_name writing into out_dir; the folder is created at the first save
  RunCheckpoint(std::string out_dir, std::string run_name, nlohmann::json identity,
                CheckpointOptions options);
  // opens dir for resuming: refuses (ConfigError naming --resume) a folder that is not a
  // checkpoint, one in use by another process, and one written for a different config. A
  // follower (a rank other than 0 of a job split across ranks, docs/scaling.md) only reads the
  // log to replay the same evaluations as rank 0: it takes no lock, never writes, never removes.
  static std::unique_ptr<RunCheckpoint> open_for_resume(const std::string& dir,
                                                        const nlohmann::json& identity,
                                                        CheckpointOptions options,
                                                        bool follower = false);
  ~RunCheckpoint();
  RunCheckpoint(const RunCheckpoint&) = delete;
  RunCheckpoint& operator=(const RunCheckpoint&) = delete;

  const std::string& run_name() const { return run_name_; }
  bool resuming() const { return resuming_; }
  const std::string& folder() const { return dir_; }  // empty until the first save
  // the run state saved with the checkpoint being resumed (null for a fresh run)
  const nlohmann::json& saved_run() const { return saved_run_; }
  long long logged_evaluations() const { return logged_; }
  // wall time this process spent logging evaluations and saving checkpoints [s]
  double seconds_spent() const { return seconds_spent_; }

  // what the checkpoint saves and restores around the optimizer: the problems whose cost
  // counters the artifact reports, and the run's state before the optimizer (as JSON)
  void watch(std::vector<Problem*> counted, std::function<nlohmann::json()> run_state);

  // the optimizer's evaluations: replay() fills `out` from the log and returns true while
  // logged evaluations remain (and, when the log runs out, restores the counters saved with
  // it); record() appends a fresh evaluation and saves when one is due
  bool replay(const std::vector<double>& vars, bool want_grad, Evaluation& out);
  void record(const std::vector<double>& vars, bool want_grad, const Evaluation& ev);
  // the optimizer has returned: restores the saved counters if the log covered the whole
  // optimization, and saves a checkpoint that holds the whole optimization if one exists
  void optimizer_finished();
  // saves now (a stop request inside the optimizer); false when checkpoints are off
  bool save_now();
  // the artifact is published: the folder is no longer needed
  void remove();

 private:
  RunCheckpoint() = default;
  void save();
  void restore_counters();
  nlohmann::json counters() const;

  std::string out_dir_, run_name_, dir_;
  nlohmann::json identity_, saved_run_, saved_counters_;
  CheckpointOptions options_;
  bool resuming_ = false, replay_done_ = true, dirty_ = false, follower_ = false;
  int lock_fd_ = -1;
  std::vector<Problem*> counted_;
  std::function<nlohmann::json()> run_state_;
  // the log: what is on disk (valid_bytes_ of it, logged_ evaluations), and what is buffered
  std::vector<char> replay_log_;  // the log being replayed
  size_t replay_pos_ = 0;
  long long replayed_ = 0, replay_count_ = 0, logged_ = 0;
  std::uint64_t valid_bytes_ = 0;
  std::vector<char> pending_;  // records not yet on disk
  long long since_save_ = 0;
  double seconds_spent_ = 0;
  std::chrono::steady_clock::time_point last_save_ = std::chrono::steady_clock::now();
};

// the optimizer's view of a problem whose evaluations are logged (and, on resume, replayed)
class RecordedProblem : public Problem {
 public:
  RecordedProblem(Problem& inner, RunCheckpoint& checkpoint);
  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override;
  std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) override {
    return inner_.trajectories(vars, n, stride);
  }
  std::vector<double> parameters(const std::vector<double>& vars) override {
    return inner_.parameters(vars);
  }

 private:
  Problem& inner_;
  RunCheckpoint& checkpoint_;
};

// the identity a checkpoint is resumed against: the command, steer's version and the
// effective config without output.dir (a resumed run may publish elsewhere)
nlohmann::json checkpoint_identity(const nlohmann::json& effective_config,
                                   const std::string& command);

}  // namespace steer
