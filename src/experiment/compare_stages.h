// The stages of run_compare (src/experiment/compare.cpp), each a function over the state a
// comparison accumulates: the backend, the cost model, each repeat's two sides and design
// checks, the loss-level tables, the artifact and the summary text. The sides of one repeat
// are in compare_sides.cpp, the artifact and the summary in compare_report.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/artifact.h"
#include "experiment/compare.h"
#include "experiment/experiment.h"
#include "problem/problem.h"
#include "steer/backend.h"

namespace steer {

// every pass in forward rollouts of the real problem: a gradient evaluation costs
// 1 + t_backward / t_forward, a continuation phase's t_gradient(phase) / t_forward(real)
struct CostModel {
  bool cpu_time = true;            // thread CPU time (CPU backend) or wall time
  double t_fwd = 0, t_grad = 0;    // seconds per forward / forward + backward call, one rollout
  double ratio = 0;                // max(0, t_grad / t_fwd − 1)
  double grad_cost = 0;            // 1 + ratio
  std::vector<double> phase_cost;  // per continuation phase
};

// one comparison: both methods from one start (rollout 0 of the repeat's batch), CMA-ES seeded
// with compare.seed + r
struct RepeatOutcome {
  std::uint64_t batch_seed = 0, cmaes_seed = 0;  // the GA is seeded as CMA-ES is
  CompareCurve cg, cc, cga;  // gradient, CMA-ES and (compare.ga_rollouts > 0) GA curves
  double l0 = NAN, best = INFINITY, cma_final = INFINITY, cost = 0;
  std::vector<double> best_z, cma_z, start_best;  // normalized variables
  int gradient_evaluations = 0, lambda = 0;
  long long clipped = 0, steps_taken = 0;
  double secs_grad = 0, secs_cma = 0;
  // the GA's side, when it runs (empty ga_z otherwise)
  double ga_final = INFINITY, secs_ga = 0, com_ga = NAN, half_ga = NAN;
  std::vector<double> ga_z;
  int ga_population = 0;
  double com_start = NAN, com_steer = NAN,
         com_cmaes = NAN;  // CoM x travel [m], models that report it
  // each method's best design run again at h/2 over the same horizon (HalfStepProblem): a
  // gait that depends on the timestep loses or gains much of its travel there
  double half_steer = NAN, half_cmaes = NAN;
};

struct CompareState {
  CompareState(const ExperimentConfig& cfg, const RunOptions& opt)
      : c(cfg), o(opt), k(cfg.compare) {}
  const ExperimentConfig& c;
  const RunOptions& o;
  const CompareConfig& k;
  std::string backend_note;
  BackendKind backend = BackendKind::kCpu;
  // one rollout of the real problem (repeat 0's start): the cost model's yardstick and the
  // best design's report
  std::unique_ptr<NormalizedProblem> pg;
  int nv = 0, B = 0;  // variables, gradient starts
  CostModel cost;
  std::vector<RepeatOutcome> reps;
  // loss levels (fractions of CMA-ES's improvement, repeat 0), CMA-ES budgets and the ratios
  // over the repeats
  nlohmann::json table, budget_table, over;
  std::vector<double> budgets, med_ratio;
  std::vector<int> reached;
  nlohmann::json art;  // the artifact under construction
  ArtifactFiles files;
  std::ostringstream summary;
  RunOutcome out;
};

// refuses a config without a compare section, picks the backend, builds the start's problem
void plan_compare(CompareState& run);
// times one forward and one gradient evaluation of the real problem and of each continuation
// phase (median of 7, interleaved), once for all repeats
void measure_cost_model(CompareState& run);
// each repeat r: the config with batch seed batch.seed + r, then its two sides and design checks
void run_repeats(CompareState& run);
// the sides of one repeat (compare_sides.cpp); cr is the repeat's config, pg its rollout 0
void gradient_side(const CompareState& run, const ExperimentConfig& cr, const NormalizedProblem& pg,
                   RepeatOutcome& R);
void cmaes_side(const CompareState& run, const ExperimentConfig& cr, const NormalizedProblem& pg,
                RepeatOutcome& R);
// the genetic algorithm from the same start, with its own budget (compare.ga_rollouts)
void ga_side(const CompareState& run, const ExperimentConfig& cr, const NormalizedProblem& pg,
             RepeatOutcome& R);
// each method's best design at h/2, and the centre of mass's travel for models that report it
void design_checks(const CompareState& run, const ExperimentConfig& cr, NormalizedProblem& pg,
                   RepeatOutcome& R);
// rollouts to reach loss levels and CMA-ES budgets, per repeat and over the repeats
void compare_levels(CompareState& run);
// the artifact, its curves (CSV, SVG) and settings (compare_report.cpp)
void assemble_compare_artifact(CompareState& run);
// the stdout summary
void summarize_compare(CompareState& run);
// the artifact folder (when asked) and the outcome
void write_compare(CompareState& run);

// helpers shared by the stages
// the compared problem with another horizon (steps > 0) and ground smoothing (> 0), as a batch
// of `size` copies of rollout 0 in normalized variables
std::unique_ptr<NormalizedProblem> variant_problem(const ExperimentConfig& c, int size, int steps,
                                                   double smoothing, BackendKind backend,
                                                   int threads);
// |L(h/2) − L(h)| of a design over what the optimization gained from the start, |L(h) − L0|
double moved_of_gain(double l_half, double l_h, double l0);
// per CMA-ES budget of `budgets`: its loss then and the rollouts the gradient side needs for it
nlohmann::json budget_json(const RepeatOutcome& R, const std::vector<double>& budgets);

}  // namespace steer
