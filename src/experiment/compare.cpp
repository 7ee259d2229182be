// `steer compare` as a sequence of stages (compare_stages.h): plan, cost model, the repeats
// (each: gradient side, CMA-ES side, design checks), loss levels, artifact, summary, write.
// Also the curves' helpers: rollouts to reach a level and the SVG plot.
#include "experiment/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#include <time.h>

#include "experiment/compare_stages.h"
#include "experiment/run_stages.h"
#include "parallel/parallel.h"

namespace steer {

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
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << x0 << "\" y=\"24\" font-size=\"14\">" << title << "</text>\n";
  s << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << w << "\" height=\"" << h
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (int d = int(xmin); d <= int(xmax); ++d) {
    const double xx = x0 + w * (d - xmin) / (xmax - xmin);
    s << "<line x1=\"" << xx << "\" y1=\"" << y0 + h << "\" x2=\"" << xx << "\" y2=\"" << y0 + h + 5
      << "\" stroke=\"black\"/>";
    s << "<text x=\"" << xx - 12 << "\" y=\"" << y0 + h + 18 << "\">1e" << d << "</text>\n";
  }
  for (int t = 0; t <= 4; ++t) {
    const double l = ymin + (ymax - ymin) * t / 4.0;
    s << "<text x=\"" << 8 << "\" y=\"" << Y(l) + 4 << "\">" << fmt(l, 4) << "</text>\n";
  }
  s << "<text x=\"" << x0 + w / 2 - 120 << "\" y=\"" << H - 12
    << "\">simulated rollouts (forward-pass equivalents, log scale)</text>\n";
  // one colour per method (group); repeats of a method share it and its legend line
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  std::vector<int> labelled;
  for (const auto& c : curves) {
    const char* color = colors[c.group % 4];
    s << "<polyline fill=\"none\" stroke=\"" << color
      << "\" stroke-width=\"2\" stroke-opacity=\"0.8\" points=\"";
    for (size_t i = 0; i < c.rollouts.size(); ++i)
      if (c.rollouts[i] > 0 && std::isfinite(c.best_loss[i]))
        s << X(c.rollouts[i]) << "," << Y(c.best_loss[i]) << " ";
    s << "\"/>\n";
    if (std::find(labelled.begin(), labelled.end(), c.group) != labelled.end()) continue;
    s << "<text x=\"" << x0 + w - 200 << "\" y=\"" << y0 + 18 + 16 * labelled.size() << "\" fill=\""
      << color << "\">" << c.method << "</text>\n";
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

}  // namespace

void plan_compare(CompareState& run) {
  const ExperimentConfig& c = run.c;
  if (!c.has_compare)
    throw ConfigError("config: compare: missing; steer compare needs a compare section");
  run.backend = resolve_backend(c.backend, &run.backend_note);
  if (!run.backend_note.empty() && world().rank() == 0)
    std::cerr << "steer: " << run.backend_note << "\n";
  require_one_backend(run.backend);
  run.pg = std::make_unique<NormalizedProblem>(
      make_problem(replicate_rollout0(c, 1), run.backend, c.threads));
  run.nv = run.pg->num_vars();
  run.B = run.k.starts;
}

// every pass in forward rollouts of the real problem, r = t_backward / t_forward measured here
// on one rollout (median of 7); a continuation phase's gradient evaluation costs
// t_gradient(phase) / t_forward(real). Measured once, at repeat 0's start.
void measure_cost_model(CompareState& run) {
  const ExperimentConfig& c = run.c;
  std::vector<std::unique_ptr<NormalizedProblem>> phase1;
  std::vector<Problem*> timed = {run.pg.get()};
  for (const auto& ph : run.k.continuation) {
    phase1.push_back(variant_problem(c, 1, ph.steps, ph.ground_smoothing, run.backend, c.threads));
    timed.push_back(phase1.back().get());
  }
  CostModel& m = run.cost;
  m.cpu_time = run.backend == BackendKind::kCpu;
  // across ranks every rank counts cost with rank 0's clock, so all of them hold the same curves
  const std::vector<PassTimes> times = first_rank_values(time_passes(timed, m.cpu_time, 7));
  m.t_fwd = times[0].forward, m.t_grad = times[0].gradient;
  m.ratio = std::max(0.0, m.t_grad / m.t_fwd - 1.0);
  m.grad_cost = 1.0 + m.ratio;  // forward-rollout equivalents per gradient evaluation
  for (size_t i = 1; i < times.size(); ++i) m.phase_cost.push_back(times[i].gradient / m.t_fwd);
}

void run_repeats(CompareState& run) {
  for (int r = 0; r < run.k.repeats; ++r) {
    ExperimentConfig cr = run.c;
    cr.seed = run.c.seed + std::uint64_t(r);
    RepeatOutcome R;
    R.batch_seed = cr.seed;
    R.cmaes_seed = run.k.seed + std::uint64_t(r);
    // the repeat's start: rollout 0 of its batch
    NormalizedProblem pg(make_problem(replicate_rollout0(cr, 1), run.backend, cr.threads));
    gradient_side(run, cr, pg, R);
    cmaes_side(run, cr, pg, R);
    if (run.k.ga_rollouts > 0) ga_side(run, cr, pg, R);
    design_checks(run, cr, pg, R);
    run.reps.push_back(std::move(R));
  }
}

namespace {

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
std::vector<BudgetRow> budget_rows(const CompareCurve& cg, const CompareCurve& cc,
                                   const std::vector<double>& budgets) {
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

}  // namespace

nlohmann::json budget_json(const RepeatOutcome& R, const std::vector<double>& budgets) {
  nlohmann::json t = nlohmann::json::array();
  for (const BudgetRow& b : budget_rows(R.cg, R.cc, budgets))
    t.push_back({{"cmaes_rollouts", b.n},
                 {"cmaes_loss", b.cmaes_loss},
                 {"steer_rollouts", b.steer_rollouts},
                 {"ratio_steer_over_cmaes", b.steer_rollouts > 0 ? b.steer_rollouts / b.n : -1.0}});
  return t;
}

void compare_levels(CompareState& run) {
  const RepeatOutcome& R0 = run.reps[0];
  const CompareCurve &cg = R0.cg, &cc = R0.cc;
  // loss levels, all of the real problem: fractions of CMA-ES's improvement from the common
  // start, ending at its loss after the budget (repeat 0)
  std::vector<double> levels;
  for (double f : {0.25, 0.5, 0.75, 0.9, 1.0}) levels.push_back(R0.l0 + f * (R0.cma_final - R0.l0));
  run.table = nlohmann::json::array();
  for (double lv : levels) {
    const double rgr = rollouts_to_reach(cg, lv), rcm = rollouts_to_reach(cc, lv);
    run.table.push_back({{"loss_level", lv},
                         {"steer_rollouts", rgr},
                         {"cmaes_rollouts", rcm},
                         {"ratio_steer_over_cmaes", (rgr > 0 && rcm > 0) ? rgr / rcm : -1.0}});
  }
  run.budgets = cmaes_budgets(cc);
  const std::vector<double>& budgets = run.budgets;
  run.budget_table = budget_json(R0, budgets);

  // over the repeats: per budget N, each repeat's ratio (steer's rollouts to reach that
  // repeat's CMA-ES loss after N, over N) and their median
  run.over = nlohmann::json::array();
  run.med_ratio.assign(budgets.size(), INFINITY);
  run.reached.assign(budgets.size(), 0);
  for (size_t j = 0; j < budgets.size(); ++j) {
    std::vector<double> ratios, steer, cml;
    for (const RepeatOutcome& R : run.reps) {
      const auto rows = budget_rows(R.cg, R.cc, {budgets[j]});
      const double s = rows.empty() ? -1 : rows[0].steer_rollouts;
      cml.push_back(rows.empty() ? NAN : rows[0].cmaes_loss);
      steer.push_back(s);
      ratios.push_back(s > 0 ? s / budgets[j] : INFINITY);
      if (s > 0) ++run.reached[j];
    }
    run.med_ratio[j] = median_ratio(ratios);
    std::vector<double> ratios_json;
    for (double x : ratios) ratios_json.push_back(std::isfinite(x) ? x : -1.0);
    run.over.push_back(
        {{"cmaes_rollouts", budgets[j]},
         {"cmaes_loss_per_repeat", cml},
         {"steer_rollouts_per_repeat", steer},
         {"ratio_per_repeat", ratios_json},
         {"reached", run.reached[j]},
         {"median_ratio", std::isfinite(run.med_ratio[j]) ? run.med_ratio[j] : -1.0}});
  }
}

RunOutcome run_compare(const ExperimentConfig& c, const RunOptions& o) {
  if (!o.resume_dir.empty())
    throw ConfigError("--resume: only steer run resumes (this is steer compare)");
  check_physical_inputs(c, true);  // every repeat's batch is physical (problem.h)
  // output problems end the run here, before the first rollout
  if (o.write) prepare_output_dir(c.output.dir, o.out_dir.empty() ? "output.dir" : "--out");
  CompareState run(c, o);
  plan_compare(run);
  measure_cost_model(run);
  throw_if_stop_requested("after the cost model; nothing was written");
  run_repeats(run);
  throw_if_stop_requested("after the repeats; nothing was written");
  compare_levels(run);
  assemble_compare_artifact(run);
  summarize_compare(run);
  write_compare(run);
  return std::move(run.out);
}

}  // namespace steer
