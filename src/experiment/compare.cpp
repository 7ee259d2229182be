#include "experiment/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

#include <time.h>

#include "experiment/artifact.h"
#include "optim/cmaes.h"
#include "optim/lbfgsb.h"
#include "optim/optimizer.h"
#include "models/registry.h"
#include "problem/problem.h"
#include "steer/backend.h"

namespace steer {

namespace {

std::string fmt(double v, int prec = 6) {
  std::ostringstream s;
  s << std::setprecision(prec) << v;
  return s.str();
}

}  // namespace

double rollouts_to_reach(const CompareCurve& c, double level) {
  for (size_t i = 0; i < c.best_loss.size(); ++i)
    if (c.best_loss[i] <= level) return c.rollouts[i];
  return -1;
}

std::string svg_plot(const std::vector<CompareCurve>& curves, const std::string& title) {
  const double W = 720, H = 440, x0 = 80, y0 = 40, w = 600, h = 330;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& c : curves)
    for (size_t i = 0; i < c.rollouts.size(); ++i) {
      if (!(c.rollouts[i] > 0) || !std::isfinite(c.best_loss[i])) continue;
      xmin = std::min(xmin, std::log10(c.rollouts[i]));
      xmax = std::max(xmax, std::log10(c.rollouts[i]));
      ymin = std::min(ymin, c.best_loss[i]);
      ymax = std::max(ymax, c.best_loss[i]);
    }
  if (!(xmax > xmin)) xmax = xmin + 1;
  if (!(ymax > ymin)) ymax = ymin + 1;
  xmin = std::floor(xmin), xmax = std::ceil(xmax);
  auto X = [&](double r) { return x0 + w * (std::log10(r) - xmin) / (xmax - xmin); };
  auto Y = [&](double l) { return y0 + h * (ymax - l) / (ymax - ymin); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << x0 << "\" y=\"24\" font-size=\"14\">" << title << "</text>\n";
  s << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << w << "\" height=\"" << h << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (int d = int(xmin); d <= int(xmax); ++d) {
    const double xx = x0 + w * (d - xmin) / (xmax - xmin);
    s << "<line x1=\"" << xx << "\" y1=\"" << y0 + h << "\" x2=\"" << xx << "\" y2=\"" << y0 + h + 5 << "\" stroke=\"black\"/>";
    s << "<text x=\"" << xx - 12 << "\" y=\"" << y0 + h + 18 << "\">1e" << d << "</text>\n";
  }
  for (int t = 0; t <= 4; ++t) {
    const double l = ymin + (ymax - ymin) * t / 4.0;
    s << "<text x=\"" << 8 << "\" y=\"" << Y(l) + 4 << "\">" << fmt(l, 4) << "</text>\n";
  }
  s << "<text x=\"" << x0 + w / 2 - 120 << "\" y=\"" << H - 12 << "\">simulated rollouts (forward-pass equivalents, log scale)</text>\n";
  // one colour per method (group); repeats of a method share it and its legend line
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  std::vector<int> labelled;
  for (const auto& c : curves) {
    const char* color = colors[c.group % 4];
    s << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" stroke-opacity=\"0.8\" points=\"";
    for (size_t i = 0; i < c.rollouts.size(); ++i)
      if (c.rollouts[i] > 0 && std::isfinite(c.best_loss[i])) s << X(c.rollouts[i]) << "," << Y(c.best_loss[i]) << " ";
    s << "\"/>\n";
    if (std::find(labelled.begin(), labelled.end(), c.group) != labelled.end()) continue;
    s << "<text x=\"" << x0 + w - 200 << "\" y=\"" << y0 + 18 + 16 * labelled.size() << "\" fill=\"" << color << "\">" << c.method << "</text>\n";
    labelled.push_back(c.group);
  }
  s << "</svg>\n";
  return s.str();
}

namespace {

// seconds of work one evaluation of p takes (median of `reps`, interleaved so both kinds see
// the same machine load): the calling thread's CPU time on the CPU backend, where a batch of
// one rollout runs on that thread and a contended machine would otherwise bill the
// scheduler's time slices to the shorter pass; wall time on a GPU
struct PassTimes {
  double forward = 0, gradient = 0;  // per call of evaluate(·, false / true)
};

double now_seconds(bool cpu_time) {
  if (cpu_time) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<PassTimes> time_passes(const std::vector<Problem*>& ps, bool cpu_time, int reps) {
  std::vector<std::vector<double>> tf(ps.size()), tg(ps.size());
  Evaluation e;
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < ps.size(); ++i) {
      const double t0 = now_seconds(cpu_time);
      ps[i]->evaluate(ps[i]->initial(), false, e);
      const double t1 = now_seconds(cpu_time);
      ps[i]->evaluate(ps[i]->initial(), true, e);
      const double t2 = now_seconds(cpu_time);
      tf[i].push_back(t1 - t0);
      tg[i].push_back(t2 - t1);
    }
  std::vector<PassTimes> out(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    std::sort(tf[i].begin(), tf[i].end());
    std::sort(tg[i].begin(), tg[i].end());
    out[i] = {tf[i][tf[i].size() / 2], tg[i][tg[i].size() / 2]};
  }
  return out;
}

// the compared problem with another horizon and ground smoothing, as a batch of `size`
// copies of rollout 0 in normalized variables
std::unique_ptr<NormalizedProblem> variant_problem(const ExperimentConfig& c, int size, int steps, double smoothing,
                                                   BackendKind backend, int threads) {
  ExperimentConfig v = replicate_rollout0(c, size);
  if (steps > 0) v.steps = steps;
  if (smoothing > 0) v.theta[v.info.param_index("ground.smoothing")] = smoothing;
  return std::make_unique<NormalizedProblem>(make_problem(v, backend, threads));
}

}  // namespace

namespace {

// one comparison: both methods from one start (rollout 0 of c's batch), CMA-ES seeded with
// cmaes_seed; grad_cost and phase_cost are the cost model's, measured once per command
struct RepeatOutcome {
  std::uint64_t batch_seed = 0, cmaes_seed = 0;
  CompareCurve cg, cc;
  double l0 = NAN, best = INFINITY, cma_final = INFINITY, cost = 0;
  std::vector<double> best_z, cma_z, start_best;  // normalized variables
  int gradient_evaluations = 0, lambda = 0;
  long long clipped = 0, steps_taken = 0;
  double secs_grad = 0, secs_cma = 0;
  double com_start = NAN, com_steer = NAN, com_cmaes = NAN;  // mass_spring: CoM x travel [m]
  // each method's best design run again at h/2 over the same horizon (HalfStepProblem): a
  // gait that depends on the timestep loses or gains much of its travel there
  double half_steer = NAN, half_cmaes = NAN;
};

// |L(h/2) − L(h)| of a design over what the optimization gained from the start, |L(h) − L0|
double moved_of_gain(double l_half, double l_h, double l0) {
  const double gain = std::abs(l_h - l0);
  return gain > 0 ? std::abs(l_half - l_h) / gain : NAN;
}

RepeatOutcome compare_once(const ExperimentConfig& c, BackendKind backend, double grad_cost,
                           const std::vector<double>& phase_cost, std::uint64_t cmaes_seed,
                           const RunOptions& o) {
  using clock = std::chrono::steady_clock;
  const CompareConfig& k = c.compare;
  RepeatOutcome R;
  R.batch_seed = c.seed;
  R.cmaes_seed = cmaes_seed;
  NormalizedProblem pg(make_problem(replicate_rollout0(c, 1), backend, c.threads));
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
  if (o.progress)
    std::cerr << "steer: " << k.gradient_method << " on the adjoint gradient, " << B << " start(s), "
              << k.continuation.size() << " continuation phase(s), " << k.iterations << " iterations (batch seed "
              << c.seed << ")\n";

  // the starts: row 0 is CMA-ES's start, rows 1.. are drawn uniformly in start ± spread
  NormalizedProblem pr(make_problem(replicate_rollout0(c, B), backend, c.threads));
  std::vector<double> z(size_t(B) * nv);
  {
    std::mt19937_64 rng(k.seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < nv; ++i)
        z[size_t(b) * nv + i] = b == 0 ? pg.initial()[i] : std::clamp(pg.initial()[i] + k.start_spread * u(rng), 0.0, 1.0);
  }

  // the gradient side's curve: cumulative cost against the best REAL loss over all starts so
  // far; continuation phases add cost, and their iterates count once scored on the real problem
  auto tg0 = clock::now();
  CompareCurve& cg = R.cg;
  cg.method = "steer " + k.gradient_method + " (adjoint gradient" + (B > 1 ? ", " + std::to_string(B) + " starts" : "") + ")";
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
    }
    R.clipped += st.clipped_rows();
    R.steps_taken += (long long)st.steps_taken() * B;
    // the last iterate is scored by a forward pass
    pr.evaluate(z, false, er);
    cost += B;
    score(er.loss, z);
    mark();
  }
  R.secs_grad = std::chrono::duration<double>(clock::now() - tg0).count();

  // CMA-ES side: a batch of λ copies of the same rollout, one generation per batched pass
  CmaesOptions co;
  co.sigma0 = k.cmaes_sigma0;
  co.lambda = k.cmaes_population > 0 ? k.cmaes_population : 4 + int(std::floor(3 * std::log(double(nv))));
  co.max_evaluations = k.cmaes_rollouts;
  co.seed = cmaes_seed;
  R.lambda = co.lambda;
  NormalizedProblem pc(make_problem(replicate_rollout0(c, co.lambda), backend, c.threads));
  std::vector<double> start(pg.initial().begin(), pg.initial().begin() + nv);
  if (o.progress) std::cerr << "steer: CMA-ES, λ = " << co.lambda << ", up to " << k.cmaes_rollouts << " rollouts (seed " << cmaes_seed << ")\n";
  CmaesHistory hist;
  auto tc0 = clock::now();
  auto last = tc0;
  OptimizationResult rc = cmaes_optimize(
      pc, co, start,
      [&](int gen, double bf) {
        if (!o.progress) return;
        auto now = clock::now();
        if (std::chrono::duration<double>(now - last).count() < 2.0) return;
        last = now;
        std::cerr << "steer: CMA-ES generation " << gen << ", " << gen * co.lambda << " rollouts, best " << fmt(bf, 8) << "\n";
      },
      &hist);
  R.secs_cma = std::chrono::duration<double>(clock::now() - tc0).count();
  R.cc.method = "CMA-ES (black box), lambda = " + std::to_string(co.lambda);
  R.cc.group = 1;
  for (size_t i = 0; i < hist.evaluations.size(); ++i) {
    R.cc.rollouts.push_back(double(hist.evaluations[i]));
    R.cc.best_loss.push_back(hist.best_f[i]);
  }
  R.cma_final = R.cc.best_loss.empty() ? INFINITY : R.cc.best_loss.back();
  R.cma_z = rc.vars;
  {
    // not counted in either method's cost: a diagnostic of the designs, like the CoM travel
    NormalizedProblem half(std::make_unique<HalfStepProblem>(replicate_rollout0(c, 1), backend, c.threads));
    Evaluation eh;
    // (CMA-ES returns its best point replicated to each of its λ rows)
    half.evaluate(std::vector<double>(R.best_z.begin(), R.best_z.begin() + nv), false, eh);
    R.half_steer = eh.loss[0];
    half.evaluate(std::vector<double>(R.cma_z.begin(), R.cma_z.begin() + nv), false, eh);
    R.half_cmaes = eh.loss[0];
  }
  if (model_of(c).reports_com_travel_x) {
    R.com_start = pg.com_displacement(pg.initial(), 1, 0)[0];
    R.com_steer = pg.com_displacement(R.best_z, 1, 0)[0];
    R.com_cmaes = pg.com_displacement(R.cma_z, 1, 0)[0];
  }
  return R;
}

nlohmann::json timestep_json(const RepeatOutcome& R) {
  return {{"steer", {{"loss", R.best}, {"loss_half_step", R.half_steer}, {"moved_of_gain", moved_of_gain(R.half_steer, R.best, R.l0)}}},
          {"cmaes", {{"loss", R.cma_final}, {"loss_half_step", R.half_cmaes}, {"moved_of_gain", moved_of_gain(R.half_cmaes, R.cma_final, R.l0)}}},
          {"note", "each method's best design run again at half the timestep over the same horizon (2T steps, each control knot held over twice the steps); moved_of_gain = |L(h/2) - L(h)| / |L(h) - L(start)|; not counted in the cost"}};
}

// CMA-ES's best loss after each of the budgets N (100, 500, 1000, ... and its whole run), and
// the rollouts the gradient side needs to reach it (−1: not reached)
struct BudgetRow {
  double n, cmaes_loss, steer_rollouts;
};
std::vector<double> cmaes_budgets(const CompareCurve& cc) {
  std::vector<double> budgets;
  if (cc.rollouts.empty()) return budgets;
  for (double n : {100.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0, 1e6})
    if (n < cc.rollouts.back()) budgets.push_back(n);
  budgets.push_back(cc.rollouts.back());
  return budgets;
}
std::vector<BudgetRow> budget_rows(const CompareCurve& cg, const CompareCurve& cc, const std::vector<double>& budgets) {
  std::vector<BudgetRow> rows;
  for (double n : budgets) {
    double lv = INFINITY;
    for (size_t i = 0; i < cc.rollouts.size() && cc.rollouts[i] <= n; ++i) lv = cc.best_loss[i];
    if (!std::isfinite(lv)) continue;
    rows.push_back({n, lv, rollouts_to_reach(cg, lv)});
  }
  return rows;
}

// the median of per-repeat ratios, "not reached" counting as +∞ (so a median is finite only
// when more than half of the repeats reached the level)
double median_ratio(std::vector<double> r) {
  std::sort(r.begin(), r.end());
  const size_t m = r.size();
  return m % 2 ? r[m / 2] : 0.5 * (r[m / 2 - 1] + r[m / 2]);
}

std::string ratio_text(double r) { return std::isfinite(r) ? fmt(r, 3) : std::string("not reached"); }

}  // namespace

RunOutcome run_compare(const ExperimentConfig& c, const RunOptions& o) {
  if (!c.has_compare) throw ConfigError("config: compare: missing; steer compare needs a compare section");
  const CompareConfig& k = c.compare;
  std::string note;
  const BackendKind backend = resolve_backend(c.backend, &note);
  if (!note.empty()) std::cerr << "steer: " << note << "\n";

  // one rollout of the real problem: the cost model's yardstick and the best design's report
  NormalizedProblem pg(make_problem(replicate_rollout0(c, 1), backend, c.threads));
  const int nv = pg.num_vars();
  const int B = k.starts;

  // the cost model: every pass in forward rollouts of the real problem, r = t_backward /
  // t_forward measured here on one rollout (median of 7); a continuation phase's gradient
  // evaluation costs t_gradient(phase) / t_forward(real). Measured once, at repeat 0's start.
  std::vector<std::unique_ptr<NormalizedProblem>> phase1;
  std::vector<Problem*> timed = {&pg};
  for (const auto& ph : k.continuation) {
    phase1.push_back(variant_problem(c, 1, ph.steps, ph.ground_smoothing, backend, c.threads));
    timed.push_back(phase1.back().get());
  }
  const bool cpu_time = backend == BackendKind::kCpu;
  const std::vector<PassTimes> times = time_passes(timed, cpu_time, 7);
  const double t_fwd = times[0].forward, t_grad = times[0].gradient;
  const double ratio = std::max(0.0, t_grad / t_fwd - 1.0);
  const double grad_cost = 1.0 + ratio;  // forward-rollout equivalents per gradient evaluation
  std::vector<double> phase_cost;
  for (size_t i = 1; i < times.size(); ++i) phase_cost.push_back(times[i].gradient / t_fwd);

  std::vector<RepeatOutcome> reps;
  for (int r = 0; r < k.repeats; ++r) {
    ExperimentConfig cr = c;
    cr.seed = c.seed + std::uint64_t(r);
    reps.push_back(compare_once(cr, backend, grad_cost, phase_cost, k.seed + std::uint64_t(r), o));
  }
  const RepeatOutcome& R0 = reps[0];
  const CompareCurve &cg = R0.cg, &cc = R0.cc;

  // loss levels, all of the real problem: fractions of CMA-ES's improvement from the common
  // start, ending at its loss after the budget (repeat 0)
  std::vector<double> levels;
  for (double f : {0.25, 0.5, 0.75, 0.9, 1.0}) levels.push_back(R0.l0 + f * (R0.cma_final - R0.l0));
  nlohmann::json table = nlohmann::json::array();
  for (double lv : levels) {
    const double rgr = rollouts_to_reach(cg, lv), rcm = rollouts_to_reach(cc, lv);
    table.push_back({{"loss_level", lv}, {"steer_rollouts", rgr}, {"cmaes_rollouts", rcm},
                     {"ratio_steer_over_cmaes", (rgr > 0 && rcm > 0) ? rgr / rcm : -1.0}});
  }
  const std::vector<double> budgets = cmaes_budgets(cc);
  auto budget_json = [&](const RepeatOutcome& R) {
    nlohmann::json t = nlohmann::json::array();
    for (const BudgetRow& b : budget_rows(R.cg, R.cc, budgets))
      t.push_back({{"cmaes_rollouts", b.n}, {"cmaes_loss", b.cmaes_loss}, {"steer_rollouts", b.steer_rollouts},
                   {"ratio_steer_over_cmaes", b.steer_rollouts > 0 ? b.steer_rollouts / b.n : -1.0}});
    return t;
  };
  const nlohmann::json budget_table = budget_json(R0);

  // over the repeats: per budget N, each repeat's ratio (steer's rollouts to reach that
  // repeat's CMA-ES loss after N, over N) and their median
  nlohmann::json over = nlohmann::json::array();
  std::vector<double> med_ratio(budgets.size(), INFINITY);
  std::vector<int> reached(budgets.size(), 0);
  for (size_t j = 0; j < budgets.size(); ++j) {
    std::vector<double> ratios, steer, cml;
    for (const RepeatOutcome& R : reps) {
      const auto rows = budget_rows(R.cg, R.cc, {budgets[j]});
      const double s = rows.empty() ? -1 : rows[0].steer_rollouts;
      cml.push_back(rows.empty() ? NAN : rows[0].cmaes_loss);
      steer.push_back(s);
      ratios.push_back(s > 0 ? s / budgets[j] : INFINITY);
      if (s > 0) ++reached[j];
    }
    med_ratio[j] = median_ratio(ratios);
    std::vector<double> ratios_json;
    for (double x : ratios) ratios_json.push_back(std::isfinite(x) ? x : -1.0);
    over.push_back({{"cmaes_rollouts", budgets[j]}, {"cmaes_loss_per_repeat", cml}, {"steer_rollouts_per_repeat", steer},
                    {"ratio_per_repeat", ratios_json}, {"reached", reached[j]},
                    {"median_ratio", std::isfinite(med_ratio[j]) ? med_ratio[j] : -1.0}});
  }

  // artifact: curves as CSV and SVG, the table and the settings
  std::ostringstream csv;
  csv << std::setprecision(12) << "repeat,method,rollouts,best_loss\n";
  std::vector<CompareCurve> plotted;
  for (size_t r = 0; r < reps.size(); ++r)
    for (const auto* cv : {&reps[r].cg, &reps[r].cc}) {
      for (size_t i = 0; i < cv->rollouts.size(); ++i)
        csv << r << ",\"" << cv->method << "\"," << cv->rollouts[i] << "," << cv->best_loss[i] << "\n";
      plotted.push_back(*cv);
    }
  double secs_grad = 0, secs_cma = 0;
  for (const RepeatOutcome& R : reps) secs_grad += R.secs_grad, secs_cma += R.secs_cma;
  nlohmann::json art;
  art["format"] = "steer.artifact/1";
  art["steer_version"] = STEER_VERSION;
  art["command"] = "compare";
  art["config"] = c.raw;
  art["effective_config"] = c.to_json();
  art["device"] = {{"backend", backend_name(backend)}, {"backend_note", note}, {"threads", c.threads > 0 ? c.threads : cpu_default_threads()}};
  art["cost_model"] = {{"forward_seconds_per_rollout", t_fwd},
                       {"forward_backward_seconds_per_rollout", t_grad},
                       {"backward_over_forward", ratio},
                       {"rollouts_per_gradient_evaluation", grad_cost},
                       {"clock", cpu_time ? "thread CPU time (one rollout runs on the calling thread)" : "wall time"},
                       {"continuation_rollouts_per_gradient_evaluation", phase_cost},
                       {"note", "a gradient evaluation is counted as 1 + t_backward/t_forward forward rollouts, a continuation phase's as t_gradient(phase)/t_forward(real), a scoring pass as 1; timed on one rollout on this machine in this run (median of 7, interleaved), once for all repeats; every start of a batch pays in full"}};
  nlohmann::json phases = nlohmann::json::array();
  for (size_t f = 0; f < k.continuation.size(); ++f)
    phases.push_back({{"steps", k.continuation[f].steps > 0 ? k.continuation[f].steps : c.steps},
                      {"ground_smoothing", k.continuation[f].ground_smoothing},
                      {"iterations", k.continuation[f].iterations},
                      {"evaluate_every", k.continuation[f].evaluate_every},
                      {"rollouts_per_gradient_evaluation", phase_cost[f]}});
  // the top-level gradient, cmaes, levels and best-design entries are repeat 0's
  art["gradient"] = {{"method", k.gradient_method}, {"learning_rate_normalized", k.learning_rate},
                     {"learning_rate_schedule", k.lr_schedule}, {"learning_rate_final_normalized", k.learning_rate_final},
                     {"beta1", k.beta1}, {"beta2", k.beta2}, {"gradient_clip", k.gradient_clip},
                     {"starts", B}, {"start_spread", k.start_spread}, {"continuation", phases},
                     {"iterations", k.iterations}, {"gradient_evaluations", R0.gradient_evaluations},
                     {"clipped_fraction", R0.steps_taken > 0 ? double(R0.clipped) / double(R0.steps_taken) : 0.0},
                     {"seconds", R0.secs_grad}, {"loss_start", R0.l0}, {"loss_best", R0.best},
                     {"loss_best_per_start", R0.start_best},
                     {"rollouts_total", R0.cost}};
  art["cmaes"] = {{"lambda", R0.lambda}, {"sigma0_normalized", k.cmaes_sigma0}, {"budget_rollouts", k.cmaes_rollouts},
                  {"rollouts_used", cc.rollouts.empty() ? 0.0 : cc.rollouts.back()}, {"seconds", R0.secs_cma},
                  {"loss_best", R0.cma_final}, {"bounds", Cmaes::method()}, {"seed", k.seed}};
  art["timestep_check"] = timestep_json(R0);
  art["variables"] = {{"count", nv}, {"normalization", "z = (v - lower) / (upper - lower), both methods optimize z in [0, 1]"}};
  art["levels"] = table;
  art["levels_at_cmaes_budgets"] = budget_table;
  nlohmann::json rep_json = nlohmann::json::array();
  for (const RepeatOutcome& R : reps) {
    nlohmann::json e = {{"batch_seed", R.batch_seed}, {"cmaes_seed", R.cmaes_seed}, {"loss_start", R.l0},
                        {"steer_loss_best", R.best}, {"steer_rollouts_total", R.cost}, {"steer_seconds", R.secs_grad},
                        {"cmaes_loss_best", R.cma_final}, {"cmaes_seconds", R.secs_cma},
                        {"levels_at_cmaes_budgets", budget_json(R)}, {"timestep_check", timestep_json(R)}};
    if (model_of(c).reports_com_travel_x)
      e["com_displacement_x_m"] = {{"start", R.com_start}, {"steer", R.com_steer}, {"cmaes", R.com_cmaes}};
    rep_json.push_back(e);
  }
  art["repeats"] = rep_json;
  art["over_repeats"] = {{"count", k.repeats},
                         {"note", "repeat r: batch seed batch.seed + r (its rollout 0 is the start), CMA-ES seed compare.seed + r; median of the per-repeat ratios with 'not reached' as +infinity (-1 in this file: no finite median)"},
                         {"at_cmaes_budgets", over}};
  art["curves"] = {{"sidecar_csv", "compare.csv"}, {"plot_svg", "compare.svg"}};
  {
    // the best designs found (repeat 0), in variable units
    std::vector<double> vg = pg.to_v(R0.best_z), vc = pg.to_v(R0.cma_z);
    nlohmann::json best = nlohmann::json::object();
    for (int i = 0; i < nv && i < 256; ++i) best[pg.var_names()[i]] = {{"steer", vg[i]}, {"cmaes", vc[i]}};
    art["best_variables"] = best;
    if (model_of(c).reports_com_travel_x)
      art["com_displacement_x_m"] = {{"start", R0.com_start}, {"steer", R0.com_steer}, {"cmaes", R0.com_cmaes}};
  }
  ArtifactFiles files;
  files.sidecars.push_back({"compare.csv", csv.str()});
  files.sidecars.push_back({"compare.svg", svg_plot(plotted, c.name + ": best loss vs simulated rollouts")});
  files.artifact = art;

  std::ostringstream s;
  s << "steer compare: " << c.name << " (" << c.model_type << ", " << nv << " variables, T = " << c.steps << ", backend "
    << backend_name(backend) << (k.repeats > 1 ? ", " + std::to_string(k.repeats) + " repeats" : std::string()) << ")\n";
  s << "  cost model: backward/forward = " << fmt(ratio, 3) << ", one gradient evaluation = " << fmt(grad_cost, 3) << " rollouts";
  for (size_t f = 0; f < phase_cost.size(); ++f) s << (f == 0 ? " (continuation: " : ", ") << fmt(phase_cost[f], 3);
  s << (phase_cost.empty() ? "" : ")") << "\n";
  for (size_t r = 0; r < reps.size(); ++r) {
    const RepeatOutcome& R = reps[r];
    const std::string tag = k.repeats > 1 ? "[" + std::to_string(r) + "] " : "";
    s << "  " << tag << "steer " << k.gradient_method << " (" << B << " start" << (B > 1 ? "s" : "") << ", clip "
      << fmt(k.gradient_clip, 3) << ", " << k.continuation.size() << " continuation phase"
      << (k.continuation.size() == 1 ? "" : "s") << "): loss " << fmt(R.l0, 8) << " -> " << fmt(R.best, 8) << " in "
      << fmt(R.cost, 6) << " rollouts (" << fmt(R.secs_grad, 3) << " s)\n";
    s << "  " << tag << "CMA-ES: loss -> " << fmt(R.cma_final, 8) << " in "
      << fmt(R.cc.rollouts.empty() ? 0 : R.cc.rollouts.back(), 8) << " rollouts (" << fmt(R.secs_cma, 3) << " s)\n";
    s << "  " << tag << "at h/2 (the designs' timestep check): steer " << fmt(R.best, 5) << " -> " << fmt(R.half_steer, 5)
      << " (moves " << fmt(100 * moved_of_gain(R.half_steer, R.best, R.l0), 3) << "% of its gain), CMA-ES "
      << fmt(R.cma_final, 5) << " -> " << fmt(R.half_cmaes, 5) << " (" << fmt(100 * moved_of_gain(R.half_cmaes, R.cma_final, R.l0), 3)
      << "%)\n";
  }
  s << "  rollouts to reach a loss level (steer / CMA-ES" << (k.repeats > 1 ? ", repeat 0" : "") << "):\n";
  for (const auto& row : table) {
    const double a = row["steer_rollouts"], b = row["cmaes_rollouts"];
    s << "    " << std::setw(12) << fmt(row["loss_level"].get<double>(), 6) << ": " << (a < 0 ? std::string("not reached") : fmt(a, 6))
      << " / " << (b < 0 ? std::string("not reached") : fmt(b, 6));
    if (a > 0 && b > 0) s << "  (ratio " << fmt(a / b, 3) << ")";
    s << "\n";
  }
  s << "  rollouts steer needs to reach CMA-ES's best loss after N rollouts" << (k.repeats > 1 ? " (repeat 0)" : "") << ":\n";
  for (const auto& row : budget_table) {
    const double a = row["steer_rollouts"];
    s << "    N = " << std::setw(6) << fmt(row["cmaes_rollouts"].get<double>(), 6) << " (" << fmt(row["cmaes_loss"].get<double>(), 5)
      << "): " << (a < 0 ? std::string("not reached") : fmt(a, 6));
    if (a > 0) s << "  (ratio " << fmt(row["ratio_steer_over_cmaes"].get<double>(), 3) << ")";
    s << "\n";
  }
  if (k.repeats > 1) {
    s << "  over " << k.repeats << " repeats, steer's rollouts / N to reach each repeat's CMA-ES loss after N:\n";
    for (size_t j = 0; j < budgets.size(); ++j) {
      s << "    N = " << std::setw(6) << fmt(budgets[j], 6) << ": median " << ratio_text(med_ratio[j]) << " (reached "
        << reached[j] << "/" << k.repeats << "; per repeat";
      for (double x : over[j]["ratio_per_repeat"]) s << " " << (x < 0 ? std::string("-") : fmt(x, 3));
      s << ")\n";
    }
  }
  RunOutcome out;
  out.artifact = art;
  if (o.write) {
    out.artifact_dir = write_artifact(c.output.dir, c.name + "-compare-" + [] {
      std::time_t t = std::time(nullptr);
      std::tm tm{};
      gmtime_r(&t, &tm);
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
      return std::string(buf);
    }(), files);
    s << "  artifact: " << out.artifact_dir << "/artifact.json (curves: compare.csv, compare.svg)\n";
  }
  out.summary = s.str();
  return out;
}

}  // namespace steer
