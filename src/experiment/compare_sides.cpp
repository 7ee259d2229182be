// The two sides of one repeat of `steer compare` and the checks of the designs they found:
// the gradient side (starts, continuation phases, the real problem), CMA-ES on a batch of λ
// copies of the start, each best design again at h/2 and the centre of mass's travel.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include "experiment/compare_stages.h"
#include "experiment/report.h"
#include "experiment/run_stages.h"
#include "models/registry.h"
#include "optim/cmaes.h"
#include "optim/ga.h"
#include "optim/lbfgsb.h"
#include "optim/optimizer.h"
#include "parallel/split_problem.h"

namespace steer {

std::unique_ptr<NormalizedProblem> variant_problem(const ExperimentConfig& c, int size, int steps,
                                                   double smoothing, BackendKind backend,
                                                   int threads) {
  ExperimentConfig v = replicate_rollout0(c, size);
  if (steps > 0) v.steps = steps;
  if (smoothing > 0) v.theta[v.info.param_index("ground.smoothing")] = smoothing;
  return std::make_unique<NormalizedProblem>(make_split_problem(v, backend, threads));
}

double moved_of_gain(double l_half, double l_h, double l0) {
  const double gain = std::abs(l_h - l0);
  return gain > 0 ? std::abs(l_half - l_h) / gain : NAN;
}

void gradient_side(const CompareState& run, const ExperimentConfig& c, const NormalizedProblem& pg,
                   RepeatOutcome& R) {
  using clock = std::chrono::steady_clock;
  const CompareConfig& k = run.k;
  const BackendKind backend = run.backend;
  const double grad_cost = run.cost.grad_cost;
  const std::vector<double>& phase_cost = run.cost.phase_cost;
  const int nv = pg.num_vars();
  const int B = k.starts;

  OptimizerConfig oc;
  oc.method = k.gradient_method;
  oc.learning_rate = k.learning_rate;
  oc.iterations = k.iterations;
  oc.beta1 = k.beta1;
  oc.beta2 = k.beta2;
  oc.gradient_clip = k.gradient_clip;
  oc.lr_schedule = k.lr_schedule;
  oc.learning_rate_final = k.learning_rate_final;
  oc.log_every = 1;
  if (run.o.progress)
    std::cerr << "steer: " << k.gradient_method << " on the adjoint gradient, " << B
              << " start(s), " << k.continuation.size() << " continuation phase(s), "
              << k.iterations << " iterations (batch seed " << c.seed << ")\n";

  // the starts: row 0 is CMA-ES's start, rows 1.. are drawn uniformly in start ± spread
  NormalizedProblem pr(make_split_problem(replicate_rollout0(c, B), backend, c.threads));
  std::vector<double> z(size_t(B) * nv);
  {
    std::mt19937_64 rng(k.seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < nv; ++i)
        z[size_t(b) * nv + i] =
            b == 0 ? pg.initial()[i]
                   : std::clamp(pg.initial()[i] + k.start_spread * u(rng), 0.0, 1.0);
  }

  // the curve: cumulative cost against the best REAL loss over all starts so far;
  // continuation phases add cost, and their iterates count once scored on the real problem
  auto tg0 = clock::now();
  CompareCurve& cg = R.cg;
  cg.method = "steer " + k.gradient_method + " (adjoint gradient" +
              (B > 1 ? ", " + std::to_string(B) + " starts" : "") + ")";
  double& cost = R.cost;
  double& best = R.best;
  double& l0 = R.l0;
  R.best_z.assign(pg.initial().begin(), pg.initial().begin() + nv);
  R.start_best.assign(B, INFINITY);
  auto score = [&](const std::vector<double>& loss, const std::vector<double>& zz) {
    if (std::isnan(l0)) l0 = loss[0];
    for (int b = 0; b < B; ++b) {
      if (!std::isfinite(loss[b])) continue;
      R.start_best[b] = std::min(R.start_best[b], loss[b]);
      if (loss[b] < best) {
        best = loss[b];
        R.best_z.assign(zz.begin() + size_t(b) * nv, zz.begin() + size_t(b + 1) * nv);
      }
    }
  };
  auto mark = [&] {
    cg.rollouts.push_back(cost);
    cg.best_loss.push_back(best);
  };
  Evaluation ev, er;
  if (k.gradient_method == "lbfgsb") {
    OptimizationResult rg = lbfgsb_optimize(pr, oc, z, nullptr);
    // one trace entry per batched evaluation (each start's best so far), the last one the
    // final evaluation at each start's best point (rg.vars)
    l0 = rg.trace.loss_rollouts.front().front();
    for (size_t i = 0; i < rg.trace.loss_min.size(); ++i) {
      cost += B * grad_cost;
      best = std::min(best, rg.trace.loss_min[i]);
      mark();
    }
    R.gradient_evaluations = int(rg.trace.loss_min.size());
    best = INFINITY;
    score(rg.final.loss, rg.vars);
  } else {
    if (!k.continuation.empty()) {
      // the start's real loss (the levels are fractions of the improvement from it)
      pr.evaluate(z, false, er);
      cost += B;
      score(er.loss, z);
      mark();
    }
    long long steps_total = k.iterations;
    for (const ContinuationPhase& ph : k.continuation) steps_total += ph.iterations;
    ProgressLine bar(run.o.progress, "gradient step", steps_total, "steps");
    long long steps_done = 0;
    for (size_t f = 0; f < k.continuation.size(); ++f) {
      const ContinuationPhase& ph = k.continuation[f];
      auto pp = variant_problem(c, B, ph.steps, ph.ground_smoothing, backend, c.threads);
      OptimizerConfig op = oc;  // a phase steps at the constant learning_rate
      op.lr_schedule = "constant";
      GradientStepper st(op, B, nv);
      for (int it = 0; it < ph.iterations; ++it) {
        pp->evaluate(z, true, ev);
        cost += B * phase_cost[f];
        ++R.gradient_evaluations;
        st.step(*pp, z, ev.grad);
        if ((it + 1) % ph.evaluate_every == 0 || it + 1 == ph.iterations) {
          pr.evaluate(z, false, er);
          cost += B;
          score(er.loss, z);
        }
        mark();
        bar.update(++steps_done,
                   "continuation phase " + std::to_string(f + 1) + ", best " + fmt(best, 8));
      }
      R.clipped += st.clipped_rows();
      R.steps_taken += (long long)st.steps_taken() * B;
    }
    GradientStepper st(oc, B, nv);
    for (int it = 0; it < k.iterations; ++it) {
      pr.evaluate(z, true, ev);
      cost += B * grad_cost;
      ++R.gradient_evaluations;
      score(ev.loss, z);
      mark();
      st.step(pr, z, ev.grad);
      bar.update(++steps_done, "best " + fmt(best, 8));
    }
    R.clipped += st.clipped_rows();
    R.steps_taken += (long long)st.steps_taken() * B;
    // the last iterate is scored by a forward pass
    pr.evaluate(z, false, er);
    cost += B;
    score(er.loss, z);
    mark();
    bar.finish("best " + fmt(best, 8));
  }
  R.secs_grad = std::chrono::duration<double>(clock::now() - tg0).count();
}

namespace {

// a batch of λ copies of the repeat's start, one generation per batched pass, each generation's
// candidates split across the ranks
std::unique_ptr<NormalizedProblem> population_problem(const CompareState& run,
                                                      const ExperimentConfig& c, int lambda) {
  return std::make_unique<NormalizedProblem>(
      make_split_problem(replicate_rollout0(c, lambda), run.backend, c.threads));
}

// a black-box method's curve: best loss after each generation's rollouts
void fill_curve(CompareCurve& cv, const std::string& method, const std::vector<long long>& evals,
                const std::vector<double>& best) {
  cv.method = method;
  cv.group = 1;
  for (size_t i = 0; i < evals.size(); ++i) {
    cv.rollouts.push_back(double(evals[i]));
    cv.best_loss.push_back(best[i]);
  }
}

}  // namespace

void cmaes_side(const CompareState& run, const ExperimentConfig& c, const NormalizedProblem& pg,
                RepeatOutcome& R) {
  using clock = std::chrono::steady_clock;
  const CompareConfig& k = run.k;
  const int nv = pg.num_vars();
  CmaesOptions co;
  co.sigma0 = k.cmaes_sigma0;
  co.lambda =
      k.cmaes_population > 0 ? k.cmaes_population : 4 + int(std::floor(3 * std::log(double(nv))));
  co.max_evaluations = k.cmaes_rollouts;
  co.seed = R.cmaes_seed;
  R.lambda = co.lambda;
  std::unique_ptr<NormalizedProblem> pc = population_problem(run, c, co.lambda);
  std::vector<double> start(pg.initial().begin(), pg.initial().begin() + nv);
  if (run.o.progress)
    std::cerr << "steer: CMA-ES, λ = " << co.lambda << ", up to " << k.cmaes_rollouts
              << " rollouts (seed " << R.cmaes_seed << ")\n";
  CmaesHistory hist;
  auto tc0 = clock::now();
  // progress in rollouts against the budget: "CMA-ES rollouts 4800/50000 ... generation 300"
  ProgressLine bar(run.o.progress, "CMA-ES rollouts", k.cmaes_rollouts, "rollouts");
  double best_seen = INFINITY;
  OptimizationResult rc = cmaes_optimize(
      *pc, co, start,
      [&](int gen, double bf) {
        best_seen = bf;
        bar.update((long long)gen * co.lambda,
                   "generation " + std::to_string(gen) + ", best " + fmt(bf, 8));
      },
      &hist);
  bar.finish("best " + fmt(best_seen, 8));
  R.secs_cma = std::chrono::duration<double>(clock::now() - tc0).count();
  fill_curve(R.cc, "CMA-ES (black box), lambda = " + std::to_string(co.lambda), hist.evaluations,
             hist.best_f);
  R.cma_final = R.cc.best_loss.empty() ? INFINITY : R.cc.best_loss.back();
  R.cma_z = rc.vars;
}

void ga_side(const CompareState& run, const ExperimentConfig& c, const NormalizedProblem& pg,
             RepeatOutcome& R) {
  using clock = std::chrono::steady_clock;
  const CompareConfig& k = run.k;
  const int nv = pg.num_vars();
  GaOptions go;
  go.sigma0 = k.ga_sigma0;
  go.population = k.ga_population > 0 ? k.ga_population : ga_default_population(nv);
  go.max_evaluations = k.ga_rollouts;
  go.seed = R.cmaes_seed;
  R.ga_population = go.population;
  std::unique_ptr<NormalizedProblem> pa = population_problem(run, c, go.population);
  std::vector<double> start(pg.initial().begin(), pg.initial().begin() + nv);
  if (run.o.progress)
    std::cerr << "steer: GA, population " << go.population << ", up to " << k.ga_rollouts
              << " rollouts (seed " << go.seed << ")\n";
  GaHistory hist;
  auto t0 = clock::now();
  ProgressLine bar(run.o.progress, "GA rollouts", k.ga_rollouts, "rollouts");
  double best_seen = INFINITY;
  OptimizationResult ra = ga_optimize(
      *pa, go, start,
      [&](int gen, double bf) {
        best_seen = bf;
        bar.update((long long)gen * go.population,
                   "generation " + std::to_string(gen) + ", best " + fmt(bf, 8));
      },
      &hist);
  bar.finish("best " + fmt(best_seen, 8));
  R.secs_ga = std::chrono::duration<double>(clock::now() - t0).count();
  fill_curve(R.cga, "GA (black box), population " + std::to_string(go.population), hist.evaluations,
             hist.best_f);
  R.ga_final = R.cga.best_loss.empty() ? INFINITY : R.cga.best_loss.back();
  R.ga_z = ra.vars;
}

void design_checks(const CompareState& run, const ExperimentConfig& c, NormalizedProblem& pg,
                   RepeatOutcome& R) {
  const int nv = pg.num_vars();
  {
    // not counted in either method's cost: a diagnostic of the designs, like the CoM travel
    NormalizedProblem half(
        std::make_unique<HalfStepProblem>(replicate_rollout0(c, 1), run.backend, c.threads));
    Evaluation eh;
    // (CMA-ES returns its best point replicated to each of its λ rows)
    half.evaluate(std::vector<double>(R.best_z.begin(), R.best_z.begin() + nv), false, eh);
    R.half_steer = eh.loss[0];
    half.evaluate(std::vector<double>(R.cma_z.begin(), R.cma_z.begin() + nv), false, eh);
    R.half_cmaes = eh.loss[0];
    if (!R.ga_z.empty()) {
      half.evaluate(std::vector<double>(R.ga_z.begin(), R.ga_z.begin() + nv), false, eh);
      R.half_ga = eh.loss[0];
    }
  }
  if (model_of(c).reports_com_travel_x) {
    R.com_start = pg.com_displacement(pg.initial(), 1, 0)[0];
    R.com_steer = pg.com_displacement(R.best_z, 1, 0)[0];
    R.com_cmaes = pg.com_displacement(R.cma_z, 1, 0)[0];
    if (!R.ga_z.empty()) R.com_ga = pg.com_displacement(R.ga_z, 1, 0)[0];
  }
}

}  // namespace steer
