#include "compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "artifact.h"
#include "cmaes.h"
#include "lbfgsb.h"
#include "optimizer.h"
#include "problem.h"
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
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  int k = 0;
  for (const auto& c : curves) {
    s << "<polyline fill=\"none\" stroke=\"" << colors[k % 4] << "\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < c.rollouts.size(); ++i)
      if (c.rollouts[i] > 0 && std::isfinite(c.best_loss[i])) s << X(c.rollouts[i]) << "," << Y(c.best_loss[i]) << " ";
    s << "\"/>\n";
    s << "<text x=\"" << x0 + w - 200 << "\" y=\"" << y0 + 18 + 16 * k << "\" fill=\"" << colors[k % 4] << "\">" << c.method << "</text>\n";
    ++k;
  }
  s << "</svg>\n";
  return s.str();
}

RunOutcome run_compare(const ExperimentConfig& c, const RunOptions& o) {
  using clock = std::chrono::steady_clock;
  if (!c.has_compare) throw ConfigError("config: compare: missing; steer compare needs a compare section");
  const CompareConfig& k = c.compare;
  std::string note;
  const BackendKind backend = resolve_backend(c.backend, &note);
  if (!note.empty()) std::cerr << "steer: " << note << "\n";

  // gradient side: one rollout
  ExperimentConfig c1 = replicate_rollout0(c, 1);
  NormalizedProblem pg(make_problem(c1, backend, c.threads));
  const int nv = pg.num_vars();

  // r = t_backward / t_forward on this rollout, measured here (median of repeated timings)
  auto time_eval = [&](bool grad) {
    std::vector<double> t;
    Evaluation e;
    for (int rep = 0; rep < 7; ++rep) {
      auto t0 = clock::now();
      pg.evaluate(pg.initial(), grad, e);
      t.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const double t_fwd = time_eval(false), t_grad = time_eval(true);
  const double ratio = std::max(0.0, t_grad / t_fwd - 1.0);
  const double grad_cost = 1.0 + ratio;  // forward-rollout equivalents per gradient evaluation

  OptimizerConfig oc;
  oc.method = k.gradient_method;
  oc.learning_rate = k.learning_rate;
  oc.iterations = k.iterations;
  oc.log_every = 1;
  if (o.progress) std::cerr << "steer: " << k.gradient_method << " on the adjoint gradient, " << k.iterations << " iterations\n";
  auto tg0 = clock::now();
  OptimizationResult rg = k.gradient_method == "lbfgsb" ? lbfgsb_optimize(pg, oc, pg.initial(), nullptr)
                                                        : optimize(pg, oc, pg.initial(), nullptr);
  const double secs_grad = std::chrono::duration<double>(clock::now() - tg0).count();
  CompareCurve cg;
  cg.method = "steer " + k.gradient_method + " (adjoint gradient)";
  double best = INFINITY;
  for (size_t i = 0; i < rg.trace.loss_min.size(); ++i) {
    best = std::min(best, rg.trace.loss_min[i]);
    cg.rollouts.push_back(double(i + 1) * grad_cost);
    cg.best_loss.push_back(best);
  }

  // CMA-ES side: a batch of λ copies of the same rollout, one generation per batched pass
  CmaesOptions co;
  co.sigma0 = k.cmaes_sigma0;
  co.lambda = k.cmaes_population > 0 ? k.cmaes_population : 4 + int(std::floor(3 * std::log(double(nv))));
  co.max_evaluations = k.cmaes_rollouts;
  co.seed = k.seed;
  ExperimentConfig cl = replicate_rollout0(c, co.lambda);
  NormalizedProblem pc(make_problem(cl, backend, c.threads));
  std::vector<double> start(pg.initial().begin(), pg.initial().begin() + nv);
  if (o.progress) std::cerr << "steer: CMA-ES, λ = " << co.lambda << ", up to " << k.cmaes_rollouts << " rollouts\n";
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
  const double secs_cma = std::chrono::duration<double>(clock::now() - tc0).count();
  CompareCurve cc;
  cc.method = "CMA-ES (black box), lambda = " + std::to_string(co.lambda);
  for (size_t i = 0; i < hist.evaluations.size(); ++i) {
    cc.rollouts.push_back(double(hist.evaluations[i]));
    cc.best_loss.push_back(hist.best_f[i]);
  }

  // loss levels: fractions of CMA-ES's improvement, ending at its loss after the budget
  const double l0 = cg.best_loss.empty() ? 0 : rg.trace.loss_min.front();
  const double cma_final = cc.best_loss.empty() ? INFINITY : cc.best_loss.back();
  std::vector<double> levels;
  for (double f : {0.25, 0.5, 0.75, 0.9, 1.0}) levels.push_back(l0 + f * (cma_final - l0));
  nlohmann::json table = nlohmann::json::array();
  for (double lv : levels) {
    const double rgr = rollouts_to_reach(cg, lv), rcm = rollouts_to_reach(cc, lv);
    table.push_back({{"loss_level", lv}, {"steer_rollouts", rgr}, {"cmaes_rollouts", rcm},
                     {"ratio_steer_over_cmaes", (rgr > 0 && rcm > 0) ? rgr / rcm : -1.0}});
  }

  // artifact: curves as CSV and SVG, the table and the settings
  std::ostringstream csv;
  csv << std::setprecision(12) << "method,rollouts,best_loss\n";
  for (const auto* cv : {&cg, &cc})
    for (size_t i = 0; i < cv->rollouts.size(); ++i)
      csv << "\"" << cv->method << "\"," << cv->rollouts[i] << "," << cv->best_loss[i] << "\n";
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
                       {"note", "a gradient evaluation is counted as 1 + t_backward/t_forward forward rollouts, timed on this machine in this run (median of 7)"}};
  art["gradient"] = {{"method", k.gradient_method}, {"learning_rate_normalized", k.learning_rate},
                     {"iterations", rg.iterations}, {"seconds", secs_grad},
                     {"loss_start", l0}, {"loss_best", cg.best_loss.empty() ? l0 : cg.best_loss.back()},
                     {"rollouts_total", cg.rollouts.empty() ? 0.0 : cg.rollouts.back()}};
  art["cmaes"] = {{"lambda", co.lambda}, {"sigma0_normalized", co.sigma0}, {"budget_rollouts", k.cmaes_rollouts},
                  {"rollouts_used", cc.rollouts.empty() ? 0.0 : cc.rollouts.back()}, {"seconds", secs_cma},
                  {"loss_best", cma_final}, {"bounds", Cmaes::method()}, {"seed", k.seed}};
  art["variables"] = {{"count", nv}, {"normalization", "z = (v - lower) / (upper - lower), both methods optimize z in [0, 1]"}};
  art["levels"] = table;
  art["curves"] = {{"sidecar_csv", "compare.csv"}, {"plot_svg", "compare.svg"}};
  {
    // the best designs found, in variable units
    std::vector<double> vg = pg.to_v(rg.vars), vc = pc.to_v(rc.vars);
    nlohmann::json best = nlohmann::json::object();
    for (int i = 0; i < nv && i < 256; ++i) best[pg.var_names()[i]] = {{"steer", vg[i]}, {"cmaes", vc[i]}};
    art["best_variables"] = best;
    if (c.model_type == "mass_spring") {
      art["com_displacement_x_m"] = {{"start", pg.com_displacement(pg.initial(), 1, 0)[0]},
                                     {"steer", pg.com_displacement(rg.vars, 1, 0)[0]},
                                     {"cmaes", pc.com_displacement(rc.vars, 1, 0)[0]}};
    }
  }
  ArtifactFiles files;
  files.sidecars.push_back({"compare.csv", csv.str()});
  files.sidecars.push_back({"compare.svg", svg_plot({cg, cc}, c.name + ": best loss vs simulated rollouts")});
  files.artifact = art;

  std::ostringstream s;
  s << "steer compare: " << c.name << " (" << c.model_type << ", " << nv << " variables, T = " << c.steps << ", backend "
    << backend_name(backend) << ")\n";
  s << "  cost model: backward/forward = " << fmt(ratio, 3) << ", one gradient evaluation = " << fmt(grad_cost, 3) << " rollouts\n";
  s << "  steer " << k.gradient_method << ": loss " << fmt(l0, 8) << " -> " << fmt(cg.best_loss.back(), 8) << " in "
    << fmt(cg.rollouts.back(), 6) << " rollouts (" << fmt(secs_grad, 3) << " s)\n";
  s << "  CMA-ES: loss -> " << fmt(cma_final, 8) << " in " << fmt(cc.rollouts.empty() ? 0 : cc.rollouts.back(), 8) << " rollouts ("
    << fmt(secs_cma, 3) << " s)\n";
  s << "  rollouts to reach a loss level (steer / CMA-ES):\n";
  for (const auto& row : table) {
    const double a = row["steer_rollouts"], b = row["cmaes_rollouts"];
    s << "    " << std::setw(12) << fmt(row["loss_level"].get<double>(), 6) << ": " << (a < 0 ? std::string("not reached") : fmt(a, 6))
      << " / " << (b < 0 ? std::string("not reached") : fmt(b, 6));
    if (a > 0 && b > 0) s << "  (ratio " << fmt(a / b, 3) << ")";
    s << "\n";
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
