// A batch problem split across the job's ranks (docs/scaling.md). Every rank holds the whole
// Problem interface — B rollouts, the whole variable vector — so optimizers, the validator and
// the analyses run unchanged and identically on every rank; only the simulation is split. A
// rank simulates its contiguous block of rollouts (block_of), and each evaluation gathers the
// blocks' losses, gradients and diagnostics to every rank in rollout order.
//
// Same bits as one process: the batch is drawn whole on every rank from the config's one seeded
// stream (build_batch), and a rank's problem is built from a config whose batch is exactly its
// block's rows of that draw. A rollout's arithmetic does not depend on its batch (docs/design.md,
// "Precision and bitwise parity"), so every rollout computes the bits it computes in the whole
// batch, and every batch-level sum, mean, ranking and random draw after the gather runs on the
// same values in the same order as in one process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "parallel/parallel.h"
#include "problem/problem.h"
#include "steer/batch.h"

namespace steer {

// the problem of rollouts [begin, begin + count) of the whole batch
using BlockProblemFactory = std::function<std::unique_ptr<Problem>(int begin, int count)>;

class SplitProblem : public Problem {
 public:
  // a batch of `batch` rollouts over the world's ranks; what is the block of rollouts this rank
  // simulates names it in a failure message
  SplitProblem(int batch, BlockProblemFactory make);
  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override;
  std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) override;
  std::vector<double> parameters(const std::vector<double>& vars) override;
  std::vector<double> com_displacement(const std::vector<double>& vars, int n, int axis) override;
  std::vector<double> max_penetration(const std::vector<double>& vars, int n) override;
  std::vector<double> min_volume_ratio(const std::vector<double>& vars, int n) override;
  std::vector<VelocityReversals> velocity_reversals(const std::vector<double>& vars,
                                                    int n) override;
  std::unique_ptr<Problem> leading(int n) const override;
  Block block() const { return block_; }

  // The block's side of an optimizer that treats every rollout alone (BlockProblem): the
  // block's loss, gradient and diagnostics at the block's variables, gathered nowhere. The
  // ranks still agree on the outcome (a failure ends every rank together) and the evaluation
  // counts toward the injected-failure hook as evaluate() does; its rollout-steps wait in this
  // rank's pending counters until settle_counters(). Collective.
  void evaluate_block(const std::vector<double>& vars, bool want_grad, Evaluation& out);
  // adds every rank's pending rollout-steps to the whole problem's counters. Collective.
  void settle_counters();
  // this rank's rows of a whole-batch vector of `per` values per rollout
  std::vector<double> block_rows(const std::vector<double>& all, size_t per) const {
    return mine(all, per);
  }
  // the whole batch's rows [0, n) (n < 0: all) from each rank's block rows `rows` of `per`
  // values per rollout, in rollout order, on every rank. Collective.
  std::vector<double> gather_rows(const std::vector<double>& rows, size_t per, int n) const;

 private:
  // this rank's rows of a whole-batch vector of `per` values per rollout
  std::vector<double> mine(const std::vector<double>& all, size_t per) const;
  // rollouts of [0, n) in this block
  int leading_here(int n) const;
  // runs fn on this rank's problem and agrees on the outcome with the other ranks
  template <class Fn>
  void guarded(const char* what, Fn&& fn);
  // fn() counted as one evaluation call, its seconds added to the call's kind
  template <class Fn>
  void timed_call(bool want_grad, Fn&& fn);
  // this rank's evaluation of its block's vars, guarded (collective), its rollout-steps added to
  // pending_
  void run_block(const std::vector<double>& vars, bool want_grad, Evaluation& out);
  // fn(local problem, this block's vars, its rollouts of [0, n)) on every rank, concatenated
  template <class Fn>
  std::vector<double> gather_leading(const std::vector<double>& vars, int n, const char* what,
                                     Fn&& fn);

  BlockProblemFactory make_;
  Block block_;
  std::unique_ptr<Problem> local_;  // null when this rank has no rollouts
  long long evaluations_ = 0;
  long long pending_[3] = {0, 0, 0};  // forward, backward, recomputed rollout-steps this rank
                                      // simulated, not yet in the counters
};

// This rank's block of a SplitProblem as a problem of its own: batch = the block's rollouts,
// the same variables and bounds, evaluate() = SplitProblem::evaluate_block. A per-rollout
// optimizer (Adam, gd) runs on it without gathering gradients (docs/scaling.md). A rank
// without rollouts has a batch of 0 and still takes part in every evaluation's agreement.
// Only evaluate() is served; the other queries belong to the whole problem.
class BlockProblem : public Problem {
 public:
  explicit BlockProblem(SplitProblem& whole);
  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override {
    whole_.evaluate_block(vars, want_grad, out);
  }
  std::vector<double> trajectories(const std::vector<double>&, int, int) override;
  std::vector<double> parameters(const std::vector<double>&) override;

 private:
  SplitProblem& whole_;
};

// The config of rollouts [begin, begin + count) of c's batch, whose build_batch gives exactly
// those rows of build_batch(c): the rows that differ from the nominal x0 and θ become sweeps of
// their values, and nothing is drawn or scaled again. nominal = build_batch(c) (x0 and θ).
ExperimentConfig block_config(const ExperimentConfig& c, const Batch<double>& nominal, int begin,
                              int count);

// make_problem(c), split across the ranks when the job has several and c's batch more than one
// rollout; the one-process problem otherwise
std::unique_ptr<Problem> make_split_problem(const ExperimentConfig& c, BackendKind backend,
                                            int threads);
// HalfStepProblem(c), split the same way
std::unique_ptr<Problem> make_split_half_step(const ExperimentConfig& c, BackendKind backend,
                                              int threads);

}  // namespace steer
