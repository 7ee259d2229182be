#include "validate/analyses.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "parallel/split_problem.h"
#include "validate/validator.h"

namespace steer {

namespace {

std::string short_num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double a : v) s += a;
  return v.empty() ? 0 : s / double(v.size());
}

}  // namespace

nlohmann::json run_horizon_sweep(const ExperimentConfig& c, BackendKind backend,
                                 std::ostringstream& summary, std::map<std::string, int>& labels,
                                 const std::function<void(long long, long long)>& progress) {
  nlohmann::json rows = nlohmann::json::array();
  const long long levels = (long long)c.horizon_sweep.steps.size();
  summary << "  horizon sweep (T steps of " << c.dt
          << " s): ‖dL/du_0‖/‖dL/du_T-1‖, ‖λ_0‖/‖λ_seed‖, FD check, labels\n";
  for (int T : c.horizon_sweep.steps) {
    ExperimentConfig ct = c;
    ct.steps = T;
    ct.checkpoint_every = 0;  // ⌈√T⌉ at every horizon
    const auto t0 = std::chrono::steady_clock::now();
    auto p = make_split_problem(ct, backend, ct.threads);
    Evaluation e;
    p->evaluate(p->initial(), true, e);
    std::vector<double> ctrl_ratio, state_ratio;
    for (const auto& d : e.diag) {
      ctrl_ratio.push_back(d.grad_u_last_norm > 0 ? d.grad_u_first_norm / d.grad_u_last_norm : NAN);
      state_ratio.push_back(d.adj_seed_norm > 0 ? d.adj_x0_norm / d.adj_seed_norm : NAN);
    }
    nlohmann::json row = {{"steps", T},
                          {"horizon_s", T * c.dt},
                          {"grad_u_ratio_first_over_last", ctrl_ratio},
                          {"adjoint_ratio_x0_over_seed", state_ratio},
                          {"loss", e.loss}};
    std::map<std::string, int> here;
    if (c.validation.enabled && !c.variables.empty()) {
      // float32 is checked on its float64 twin, as the run's own checks are (experiment.cpp)
      std::unique_ptr<Problem> p64;
      if (ct.precision == "float32") {
        ExperimentConfig c64 = ct;
        c64.precision = "float64";
        p64 = make_split_problem(c64, backend, ct.threads);
      }
      ValidationReport rep =
          p64 ? validate(*p64, p->initial(), c.validation, "horizon " + std::to_string(T), p.get(),
                         nullptr, nullptr, nullptr, secant_check_of(c.validation))
              : validate(*p, p->initial(), c.validation, "horizon " + std::to_string(T), nullptr,
                         nullptr, nullptr, nullptr, secant_check_of(c.validation));
      for (const auto& [k, n] : rep.label_counts) here[k] += n, labels[k] += n;
      row["validation"] = to_json(rep, c.validation.listed_rollouts);
      row["max_relative_error"] = rep.max_error;
    }
    row["labels"] = here;
    row["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    summary << "    T = " << T << " (" << T * c.dt << " s): " << short_num(mean_of(ctrl_ratio))
            << ", " << short_num(mean_of(state_ratio));
    if (row.contains("max_relative_error"))
      summary << ", max error " << short_num(row["max_relative_error"].get<double>());
    for (const auto& [k, n] : here) summary << "  " << k << " x" << n;
    summary << "\n";
    rows.push_back(row);
    if (progress) progress((long long)rows.size(), levels);
  }
  return {{"measure",
           "per rollout at the start: ||dL/du_0|| / ||dL/du_{T-1}|| and ||lambda_0|| / "
           "||lambda_seed||; "
           "labels from the validator with its horizon_measure and bound"},
          {"bound", c.validation.horizon_ratio_bound},
          {"rows", rows}};
}

nlohmann::json run_perturbation(const ExperimentConfig& c, BackendKind backend,
                                const std::vector<double>& vars,
                                const std::vector<double>& loss_opt, std::ostringstream& summary,
                                std::map<std::string, int>& labels) {
  const PerturbConfig& k = c.perturb;
  nlohmann::json levels = nlohmann::json::array();
  const int B = c.batch_size;
  std::vector<int> flagged(B, 0);
  summary << "  perturbation of " << k.name
          << " at the optimum (narrow_valley when the loss rises by > "
          << "(factor − 1)|L| + " << short_num(k.absolute) << ", factor " << k.factor << "):\n";
  for (double r : k.relative) {
    // the same scaling check_physical_inputs (problem.h) checked before the run
    const ExperimentConfig cp = perturbed_config(c, r);
    auto p = make_split_problem(cp, backend, cp.threads);
    Evaluation e;
    p->evaluate(vars, false, e);
    int n_flag = 0;
    double worst = 0;
    for (int b = 0; b < B; ++b) {
      const double rise = e.loss[b] - loss_opt[b];
      const double allowed = (k.factor - 1) * std::fabs(loss_opt[b]) + k.absolute;
      // a non-finite perturbed loss is the narrowest valley of all
      if (!(rise <= allowed)) ++n_flag, flagged[b] = 1;
      worst = std::max(worst, rise / std::max(std::fabs(loss_opt[b]), 1e-300));
    }
    labels["narrow_valley"] += n_flag;
    const int shown = std::min(B, 16);
    levels.push_back(
        {{"relative", r},
         {"loss_mean", mean_of(e.loss)},
         {"loss_optimum_mean", mean_of(loss_opt)},
         {"rollouts_labelled_narrow_valley", n_flag},
         {"largest_relative_rise", worst},
         {"loss_first_rollouts", std::vector<double>(e.loss.begin(), e.loss.begin() + shown)}});
    summary << "    " << (r >= 0 ? "+" : "") << r * 100 << "%: mean loss "
            << short_num(mean_of(e.loss)) << " (optimum " << short_num(mean_of(loss_opt))
            << "), narrow_valley x" << n_flag << " of " << B << "\n";
  }
  int total = 0;
  for (int f : flagged) total += f;
  return {{"parameter", k.name},
          {"relative", k.relative},
          {"factor", k.factor},
          {"absolute", k.absolute},
          {"rule",
           "narrow_valley when L(theta scaled by 1 + r) - L_opt > (factor - 1)|L_opt| + absolute"},
          {"levels", levels},
          {"rollouts_labelled", total}};
}

nlohmann::json terminal_success(const ExperimentConfig& c, Problem& p,
                                const std::vector<double>& vars, std::ostringstream& summary) {
  const int B = p.batch_size(), nx = c.info.nx(), np = c.info.np();
  const std::vector<double> ends = p.trajectories(vars, B, c.steps);  // x_0, x_T per rollout
  const std::vector<double> th = p.parameters(vars);
  std::vector<double> worst(B, 0.0);
  int ok = 0;
  for (int b = 0; b < B; ++b) {
    const double* xT = ends.data() + (size_t(b) * 2 + 1) * nx;
    for (int t = 0; t < c.n_terminal_quadratic; ++t) {
      const double target = c.loss.terminal_param[t] >= 0
                                ? th[size_t(b) * np + c.loss.terminal_param[t]]
                                : c.loss.terminal_target[t];
      const double err = std::fabs(xT[c.loss.terminal_index[t]] - target);
      worst[b] = std::isfinite(err) ? std::max(worst[b], err) : INFINITY;
    }
    if (worst[b] <= c.success_tolerance) ++ok;
  }
  std::vector<double> sorted = worst;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2],
               p95 = sorted[std::min(sorted.size() - 1, sorted.size() * 95 / 100)];
  summary << "  success: " << ok << "/" << B << " rollouts within " << c.success_tolerance
          << " of every terminal target (max error median " << short_num(median)
          << ", 95th percentile " << short_num(p95) << ", worst " << short_num(sorted.back())
          << ")\n";
  const int shown = std::min(B, 64);
  return {{"tolerance", c.success_tolerance},
          {"rule", "max over terminal terms of |x_T[state] - target| <= tolerance"},
          {"succeeded", ok},
          {"rollouts", B},
          {"success_rate", double(ok) / B},
          {"max_error_median", median},
          {"max_error_p95", p95},
          {"max_error_worst", sorted.back()},
          {"max_error_first_rollouts", std::vector<double>(worst.begin(), worst.begin() + shown)}};
}

}  // namespace steer
