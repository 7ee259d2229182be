// L-BFGS-B (LBFGS++'s LBFGSBSolver, Debian liblbfgspp-dev) on every rollout of a batch.
// LBFGS++ is serial: it calls f(x, ∇f) and waits. Each rollout gets its own solver on its
// own thread; the threads meet at a rendezvous where the calling thread runs ONE batched
// p.evaluate(vars, true, ·) for all solvers that are waiting, then hands each its row.
// Cost: batched evaluations = max_b (evaluations of rollout b) when all rollouts fit in
// max_solvers (threads), instead of Σ_b for rollouts optimized one after another. Rollouts
// not inside a solver at that moment are evaluated too, at their start or final point.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/config.h"
#include "optim/optimizer.h"
#include "problem/problem.h"

namespace steer {

struct LbfgsbOptions {
  int memory = 6;  // m: correction pairs kept; each solver holds about (2m + 8)·nv doubles
  // stop when ‖P(x − ∇f) − x‖_∞ ≤ max(epsilon, epsilon_rel ‖x‖₂), P = projection onto the box
  double epsilon = 1e-8;
  double epsilon_rel = 0;
  // stop when |f_{k−past} − f_k| ≤ delta · max(1, |f_k|, |f_{k−past}|); past = 0 disables
  int past = 1;
  double delta = 1e-12;
  int max_linesearch = 20;  // trials per line search (bracketing strong-Wolfe search)
  // dual iterations of the subspace minimization; 0 projects the unconstrained subspace step
  // instead. Debian's LBFGS++ 0.1.0 omits the θI term of B in those iterations (LBFGSpp
  // issue #15, fixed upstream in PR #25), so they are off by default.
  int max_submin = 0;
  long long max_evaluations = 0;  // per rollout; 0 = unlimited
  int max_solvers = 4096;         // rollouts in flight at once, one thread each
};

// What is counted. An iteration is an accepted step: a line search that ended with a new
// point x_{k+1} (one L-BFGS-B iteration). An evaluation is one computation of f and ∇f; every
// trial point of a line search is one, so a rollout makes at least as many evaluations as
// iterations (plus one at its start). A batched evaluation is one forward and backward pass over
// the whole batch, serving every solver that waits for an evaluation at that moment.
//
// per rollout: L-BFGS-B iterations, evaluations of f and ∇f, and why it stopped:
// converged | max_iterations | max_evaluations | nonfinite (f or ∇f not finite at the start;
// later non-finite trial points only shorten the line search) | line_search: <message> (no
// step with sufficient decrease, e.g. rounding noise at the minimum; the best point is kept)
struct LbfgsbReport {
  std::vector<int> iterations;         // accepted steps (0 when the start already meets epsilon)
  std::vector<long long> evaluations;  // f and ∇f evaluations, line-search trials included
  std::vector<std::string> status;
  int batched_evaluations = 0;  // batched evaluations, the final one at the result excluded
};

// progress(iterations, batched evaluations, mean best loss): iterations are the most any
// rollout has accepted so far (the count cfg.iterations bounds), evaluations the batched
// evaluations made so far
using LbfgsbProgress = std::function<void(int, int, double)>;

// Minimizes every rollout's loss over the box [p.lower(), p.upper()] from start [B·nv]
// (projected first) with at most cfg.iterations L-BFGS-B iterations per rollout
// (cfg.iterations = 0: no iterations, like optimize()). The result holds each rollout's best
// point and its evaluation; result.iterations = the most iterations any rollout took
// (≤ cfg.iterations), and report->batched_evaluations the batched evaluations that cost. The
// trace has one entry per batched evaluation (every cfg.log_every-th, plus the final one), its
// `iteration` the evaluation's index, with each rollout's best loss so far.
// progress is called on every logged entry.
OptimizationResult lbfgsb_optimize(Problem& p, const OptimizerConfig& cfg,
                                   const std::vector<double>& start, const LbfgsbProgress& progress,
                                   const LbfgsbOptions& options = {},
                                   LbfgsbReport* report = nullptr);

nlohmann::json to_json(const LbfgsbReport& r);

}  // namespace steer
