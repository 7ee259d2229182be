// clang-format off
// The report stages of `steer compare`: the artifact (curves as CSV and SVG, the cost model,
// each side's settings and results, the loss-level tables, the repeats, the best designs),
// the stdout summary and the artifact folder.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "experiment/compare_stages.h"
#include "experiment/report.h"
#include "experiment/run_stages.h"
#include "models/registry.h"
#include "optim/cmaes.h"

namespace steer {

namespace {

nlohmann::json timestep_json(const RepeatOutcome& R) {
  nlohmann::json t = {{"steer", {{"loss", R.best}, {"loss_half_step", R.half_steer}, {"moved_of_gain", moved_of_gain(R.half_steer, R.best, R.l0)}}},
          {"cmaes", {{"loss", R.cma_final}, {"loss_half_step", R.half_cmaes}, {"moved_of_gain", moved_of_gain(R.half_cmaes, R.cma_final, R.l0)}}},
          {"note", "each method's best design run again at half the timestep over the same horizon (2T steps, each control knot held over twice the steps); moved_of_gain = |L(h/2) - L(h)| / |L(h) - L(start)|; not counted in the cost"}};
  if (!R.ga_z.empty())
    t["ga"] = {{"loss", R.ga_final}, {"loss_half_step", R.half_ga}, {"moved_of_gain", moved_of_gain(R.half_ga, R.ga_final, R.l0)}};
  return t;
}

// the CoM travel of the start and of each method's design [m]
nlohmann::json com_json(const RepeatOutcome& R) {
  nlohmann::json j = {{"start", R.com_start}, {"steer", R.com_steer}, {"cmaes", R.com_cmaes}};
  if (!R.ga_z.empty()) j["ga"] = R.com_ga;
  return j;
}

std::string ratio_text(double r) { return std::isfinite(r) ? fmt(r, 3) : std::string("not reached"); }

}  // namespace

void assemble_compare_artifact(CompareState& run) {
  const ExperimentConfig& c = run.c;
  const CompareConfig& k = run.k;
  const CostModel& m = run.cost;
  const std::vector<RepeatOutcome>& reps = run.reps;
  const RepeatOutcome& R0 = reps[0];
  const CompareCurve& cc = R0.cc;
  const NormalizedProblem& pg = *run.pg;
  const int nv = run.nv;

  // curves as CSV and SVG
  std::ostringstream csv;
  csv << std::setprecision(12) << "repeat,method,rollouts,best_loss\n";
  std::vector<CompareCurve> plotted;
  for (size_t r = 0; r < reps.size(); ++r)
    for (const auto* cv : {&reps[r].cg, &reps[r].cc, &reps[r].cga}) {
      if (cv->rollouts.empty()) continue;
      for (size_t i = 0; i < cv->rollouts.size(); ++i)
        csv << r << ",\"" << cv->method << "\"," << cv->rollouts[i] << "," << cv->best_loss[i] << "\n";
      plotted.push_back(*cv);
    }
  nlohmann::json& art = run.art;
  art["format"] = "steer.artifact/1";
  art["steer_version"] = STEER_VERSION;
  art["command"] = "compare";
  art["config"] = c.raw;
  art["config_folder"] = absolute_config_folder(c);
  art["effective_config"] = c.to_json();
  art["device"] = {{"backend", backend_name(run.backend)}, {"backend_note", run.backend_note}, {"threads", c.threads > 0 ? c.threads : cpu_default_threads()}};
  // compare splits each batch it simulates (the starts, each CMA-ES generation) across the ranks
  art["parallel"] = parallel_json(0);
  art["cost_model"] = {{"forward_seconds_per_rollout", m.t_fwd},
                       {"forward_backward_seconds_per_rollout", m.t_grad},
                       {"backward_over_forward", m.ratio},
                       {"rollouts_per_gradient_evaluation", m.grad_cost},
                       {"clock", m.cpu_time ? "thread CPU time (one rollout runs on the calling thread)" : "wall time"},
                       {"continuation_rollouts_per_gradient_evaluation", m.phase_cost},
                       {"note", "a gradient evaluation is counted as 1 + t_backward/t_forward forward rollouts, a continuation phase's as t_gradient(phase)/t_forward(real), a scoring pass as 1; timed on one rollout on this machine in this run (median of 7, interleaved), once for all repeats; every start of a batch pays in full"}};
  nlohmann::json phases = nlohmann::json::array();
  for (size_t f = 0; f < k.continuation.size(); ++f)
    phases.push_back({{"steps", k.continuation[f].steps > 0 ? k.continuation[f].steps : c.steps},
                      {"ground_smoothing", k.continuation[f].ground_smoothing},
                      {"iterations", k.continuation[f].iterations},
                      {"evaluate_every", k.continuation[f].evaluate_every},
                      {"rollouts_per_gradient_evaluation", m.phase_cost[f]}});
  // the top-level gradient, cmaes, levels and best-design entries are repeat 0's
  art["gradient"] = {{"method", k.gradient_method}, {"learning_rate_normalized", k.learning_rate},
                     {"learning_rate_schedule", k.lr_schedule}, {"learning_rate_final_normalized", k.learning_rate_final},
                     {"beta1", k.beta1}, {"beta2", k.beta2}, {"gradient_clip", k.gradient_clip},
                     {"starts", run.B}, {"start_spread", k.start_spread}, {"continuation", phases},
                     {"iterations", k.iterations}, {"gradient_evaluations", R0.gradient_evaluations},
                     {"clipped_fraction", R0.steps_taken > 0 ? double(R0.clipped) / double(R0.steps_taken) : 0.0},
                     {"seconds", R0.secs_grad}, {"loss_start", R0.l0}, {"loss_best", R0.best},
                     {"loss_best_per_start", R0.start_best},
                     {"rollouts_total", R0.cost}};
  art["cmaes"] = {{"lambda", R0.lambda}, {"sigma0_normalized", k.cmaes_sigma0}, {"budget_rollouts", k.cmaes_rollouts},
                  {"rollouts_used", cc.rollouts.empty() ? 0.0 : cc.rollouts.back()}, {"seconds", R0.secs_cma},
                  {"loss_best", R0.cma_final}, {"bounds", Cmaes::method()}, {"seed", k.seed}};
  if (!R0.ga_z.empty())
    art["ga"] = {{"population", R0.ga_population}, {"sigma0_normalized", k.ga_sigma0}, {"budget_rollouts", k.ga_rollouts},
                 {"rollouts_used", R0.cga.rollouts.empty() ? 0.0 : R0.cga.rollouts.back()}, {"seconds", R0.secs_ga},
                 {"loss_best", R0.ga_final}, {"seed", k.seed},
                 {"method", "real-coded GA (src/optim/ga.h): binary tournament, bounded SBX (eta_c 15, p 0.9), bounded polynomial mutation (eta_m 20, p 1/n), 2 elites; the start is individual 0, the others uniform within +-sqrt(3) sigma0 of it"}};
  art["timestep_check"] = timestep_json(R0);
  art["variables"] = {{"count", nv}, {"normalization", "z = (v - lower) / (upper - lower), both methods optimize z in [0, 1]"}};
  art["levels"] = run.table;
  art["levels_at_cmaes_budgets"] = run.budget_table;
  nlohmann::json rep_json = nlohmann::json::array();
  for (const RepeatOutcome& R : reps) {
    nlohmann::json e = {{"batch_seed", R.batch_seed}, {"cmaes_seed", R.cmaes_seed}, {"loss_start", R.l0},
                        {"steer_loss_best", R.best}, {"steer_rollouts_total", R.cost}, {"steer_seconds", R.secs_grad},
                        {"cmaes_loss_best", R.cma_final}, {"cmaes_seconds", R.secs_cma},
                        {"levels_at_cmaes_budgets", budget_json(R, run.budgets)}, {"timestep_check", timestep_json(R)}};
    if (!R.ga_z.empty()) {
      e["ga_loss_best"] = R.ga_final;
      e["ga_seconds"] = R.secs_ga;
    }
    if (model_of(c).reports_com_travel_x) e["com_displacement_x_m"] = com_json(R);
    rep_json.push_back(e);
  }
  art["repeats"] = rep_json;
  art["over_repeats"] = {{"count", k.repeats},
                         {"note", "repeat r: batch seed batch.seed + r (its rollout 0 is the start), CMA-ES seed compare.seed + r; median of the per-repeat ratios with 'not reached' as +infinity (-1 in this file: no finite median)"},
                         {"at_cmaes_budgets", run.over}};
  art["curves"] = {{"sidecar_csv", "compare.csv"}, {"plot_svg", "compare.svg"}};
  art["trajectory"] = {{"sidecar_csv", "trajectory.csv"}, {"recorded_every_steps", std::max(1, c.output.trajectory_stride)},
                       {"rollouts", R0.ga_z.empty() ? nlohmann::json{"start", "steer", "cmaes"} : nlohmann::json{"start", "steer", "cmaes", "ga"}}};
  {
    // the best designs found (repeat 0), in variable units
    std::vector<double> vg = pg.to_v(R0.best_z), vc = pg.to_v(R0.cma_z);
    std::vector<double> va = R0.ga_z.empty() ? std::vector<double>() : pg.to_v(R0.ga_z);
    nlohmann::json best = nlohmann::json::object();
    for (int i = 0; i < nv && i < 256; ++i) {
      best[pg.var_names()[i]] = {{"steer", vg[i]}, {"cmaes", vc[i]}};
      if (!va.empty()) best[pg.var_names()[i]]["ga"] = va[i];
    }
    art["best_variables"] = best;
    if (model_of(c).reports_com_travel_x) art["com_displacement_x_m"] = com_json(R0);
  }
  run.files.sidecars.push_back({"compare.csv", csv.str()});
  run.files.sidecars.push_back({"compare.svg", svg_plot(plotted, c.name + ": best loss vs simulated rollouts")});
  {
    // the motion of repeat 0's start and of each method's best design, as trajectory.csv
    // (rollout 0 the start, 1 steer's design, 2 CMA-ES's, 3 the GA's), for report.html
    const int stride = std::max(1, c.output.trajectory_stride), nx = c.info.nx(), slots = c.steps / stride + 1;
    std::ostringstream tc;
    const TrajectoryExtras extras = trajectory_extras(c);
    tc << std::setprecision(17) << "rollout,step,time_s";
    for (int i = 0; i < nx; ++i) tc << "," << c.info.state_names[i] << "_" << c.info.state_units[i];
    for (const std::string& col : extras.columns) tc << "," << col;
    tc << "\n";
    const std::vector<double>* designs[4] = {&pg.initial(), &R0.best_z, &R0.cma_z, &R0.ga_z};
    for (int d = 0; d < (R0.ga_z.empty() ? 3 : 4); ++d) {
      const std::vector<double> z(designs[d]->begin(), designs[d]->begin() + nv);
      const std::vector<double> tr = run.pg->trajectories(z, 1, stride);
      const std::vector<double> theta =
          extras.empty() ? std::vector<double>() : run.pg->parameters(z);  // rollout 0 first
      for (int s2 = 0; s2 < slots; ++s2) {
        tc << d << "," << s2 * stride << "," << s2 * stride * c.dt;
        for (int i = 0; i < nx; ++i) tc << "," << tr[size_t(s2) * nx + i];
        if (!extras.empty()) write_trajectory_extras(tc, c, extras, theta.data(), &tr[size_t(s2) * nx]);
        tc << "\n";
      }
    }
    run.files.sidecars.push_back({"trajectory.csv", tc.str()});
  }
  run.files.artifact = art;
}

void summarize_compare(CompareState& run) {
  const ExperimentConfig& c = run.c;
  const CompareConfig& k = run.k;
  const CostModel& m = run.cost;
  const int B = run.B;
  std::ostringstream& s = run.summary;
  s << "steer compare: " << c.name << " (" << c.model_type << ", " << run.nv << " variables, T = " << c.steps << ", backend "
    << backend_name(run.backend) << (k.repeats > 1 ? ", " + std::to_string(k.repeats) + " repeats" : std::string()) << ")\n";
  s << "  cost model: backward/forward = " << fmt(m.ratio, 3) << ", one gradient evaluation = " << fmt(m.grad_cost, 3) << " rollouts";
  for (size_t f = 0; f < m.phase_cost.size(); ++f) s << (f == 0 ? " (continuation: " : ", ") << fmt(m.phase_cost[f], 3);
  s << (m.phase_cost.empty() ? "" : ")") << "\n";
  for (size_t r = 0; r < run.reps.size(); ++r) {
    const RepeatOutcome& R = run.reps[r];
    const std::string tag = k.repeats > 1 ? "[" + std::to_string(r) + "] " : "";
    s << "  " << tag << "steer " << k.gradient_method << " (" << B << " start" << (B > 1 ? "s" : "") << ", clip "
      << fmt(k.gradient_clip, 3) << ", " << k.continuation.size() << " continuation phase"
      << (k.continuation.size() == 1 ? "" : "s") << "): loss " << fmt(R.l0, 8) << " -> " << fmt(R.best, 8) << " in "
      << fmt(R.cost, 6) << " rollouts (" << fmt(R.secs_grad, 3) << " s)\n";
    s << "  " << tag << "CMA-ES: loss -> " << fmt(R.cma_final, 8) << " in "
      << fmt(R.cc.rollouts.empty() ? 0 : R.cc.rollouts.back(), 8) << " rollouts (" << fmt(R.secs_cma, 3) << " s)\n";
    if (!R.ga_z.empty())
      s << "  " << tag << "GA: loss -> " << fmt(R.ga_final, 8) << " in " << fmt(R.cga.rollouts.empty() ? 0 : R.cga.rollouts.back(), 8)
        << " rollouts (" << fmt(R.secs_ga, 3) << " s)\n";
    s << "  " << tag << "at h/2 (the designs' timestep check): steer " << fmt(R.best, 5) << " -> " << fmt(R.half_steer, 5)
      << " (moves " << fmt(100 * moved_of_gain(R.half_steer, R.best, R.l0), 3) << "% of its gain), CMA-ES "
      << fmt(R.cma_final, 5) << " -> " << fmt(R.half_cmaes, 5) << " (" << fmt(100 * moved_of_gain(R.half_cmaes, R.cma_final, R.l0), 3)
      << "%)";
    if (!R.ga_z.empty())
      s << ", GA " << fmt(R.ga_final, 5) << " -> " << fmt(R.half_ga, 5) << " (" << fmt(100 * moved_of_gain(R.half_ga, R.ga_final, R.l0), 3) << "%)";
    s << "\n";
  }
  s << "  rollouts to reach a loss level (steer / CMA-ES" << (k.repeats > 1 ? ", repeat 0" : "") << "):\n";
  for (const auto& row : run.table) {
    const double a = row["steer_rollouts"], b = row["cmaes_rollouts"];
    s << "    " << std::setw(12) << fmt(row["loss_level"].get<double>(), 6) << ": " << (a < 0 ? std::string("not reached") : fmt(a, 6))
      << " / " << (b < 0 ? std::string("not reached") : fmt(b, 6));
    if (a > 0 && b > 0) s << "  (ratio " << fmt(a / b, 3) << ")";
    s << "\n";
  }
  s << "  rollouts steer needs to reach CMA-ES's best loss after N rollouts" << (k.repeats > 1 ? " (repeat 0)" : "") << ":\n";
  for (const auto& row : run.budget_table) {
    const double a = row["steer_rollouts"];
    s << "    N = " << std::setw(6) << fmt(row["cmaes_rollouts"].get<double>(), 6) << " (" << fmt(row["cmaes_loss"].get<double>(), 5)
      << "): " << (a < 0 ? std::string("not reached") : fmt(a, 6));
    if (a > 0) s << "  (ratio " << fmt(row["ratio_steer_over_cmaes"].get<double>(), 3) << ")";
    s << "\n";
  }
  if (k.repeats > 1) {
    s << "  over " << k.repeats << " repeats, steer's rollouts / N to reach each repeat's CMA-ES loss after N:\n";
    for (size_t j = 0; j < run.budgets.size(); ++j) {
      s << "    N = " << std::setw(6) << fmt(run.budgets[j], 6) << ": median " << ratio_text(run.med_ratio[j]) << " (reached "
        << run.reached[j] << "/" << k.repeats << "; per repeat";
      for (double x : run.over[j]["ratio_per_repeat"]) s << " " << (x < 0 ? std::string("-") : fmt(x, 3));
      s << ")\n";
    }
  }
}

void write_compare(CompareState& run) {
  run.out.artifact = run.art;
  if (run.o.write) {
    std::string curves, traj;
    for (const auto& [name, text] : run.files.sidecars) {
      if (name == "compare.csv") curves = text;
      if (name == "trajectory.csv") traj = text;
    }
    run.files.sidecars.push_back({"report.html", render_report(run.art, traj, curves, &run.c)});
    run.out.artifact_dir = write_artifact(run.c.output.dir, run.c.name + "-compare-" + utc_now("%Y%m%d-%H%M%S"), run.files);
    run.summary << "  artifact: " << run.out.artifact_dir << "/artifact.json (curves: compare.csv, compare.svg)\n";
    run.summary << "  report: " << run.out.artifact_dir << "/report.html\n";
  }
  run.out.summary = run.summary.str();
}

}  // namespace steer
// clang-format on
