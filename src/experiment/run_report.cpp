#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "config/controller_config.h"
#include "config/data_file.h"
#include "experiment/report.h"
#include "experiment/run_stages.h"
#include "experiment/shards.h"
#include "models/registry.h"

namespace steer {

namespace {

// a gradient check's name in the summary: its stage, and for the shared variables' check of the
// groups' loss (validate_shared) that it is theirs
std::string check_name(const nlohmann::json& v) {
  return v["stage"].get<std::string>() + (v.contains("shared") ? ", groups' J_g" : "");
}

// variables, losses and gradients of the listed rollouts; every rollout's whole gradient, at
// the start and at the end, as NPY side files [B, nv] (rollout-major, the variables in
// var_names order): the listing stops at 64 variables
void list_rollouts(RunState& run) {
  Problem& p = *run.problem;
  const int B = run.B, nv = run.nv;
  const std::vector<std::string>& vunits = run.vunits;
  const Evaluation& e0 = run.e0;
  const Evaluation& efinal = run.efinal;
  nlohmann::json per = nlohmann::json::array();
  for (int b = 0; b < run.listed; ++b) {
    nlohmann::json vars = nlohmann::json::object();
    for (int i = 0; i < nv && i < 64; ++i) {
      const size_t k = size_t(b) * nv + i;
      vars[p.var_names()[i]] = {{"initial", run.v0[k]},
                                {"final", run.vfinal[k]},
                                {"unit", vunits[i]},
                                {"gradient_initial", e0.grad[k]},
                                {"gradient_final", efinal.grad[k]}};
    }
    per.push_back({{"rollout", b},
                   {"loss_initial", e0.loss[b]},
                   {"loss_final", efinal.loss[b]},
                   {"event_step", efinal.diag[b].event_step},
                   {"contact_steps", efinal.diag[b].contact_steps},
                   {"variables", vars}});
  }
  nlohmann::json& result = run.result;
  result["rollouts"] = per;
  result["variables_listed_per_rollout"] = std::min(nv, 64);
  if (nv > 0 && e0.grad.size() == size_t(B) * nv && efinal.grad.size() == size_t(B) * nv &&
      !gradient_shards(run, vunits)) {
    result["gradient_file"] = {{"initial", "gradient_initial.npy"},
                               {"final", "gradient.npy"},
                               {"shape", {B, nv}},
                               {"dtype", "float64"},
                               {"variables", p.var_names()},
                               {"units", vunits}};
    run.files.sidecars.push_back({"gradient_initial.npy", npy_bytes(e0.grad, {long(B), long(nv)})});
    run.files.sidecars.push_back({"gradient.npy", npy_bytes(efinal.grad, {long(B), long(nv)})});
    // and the variables themselves at the start and the end: every rollout's design (the listing
    // above stops at output.trajectory_rollouts rollouts and 64 variables)
    result["gradient_file"]["variables_initial"] = "variables_initial.npy";
    result["gradient_file"]["variables_final"] = "variables.npy";
    run.files.sidecars.push_back({"variables_initial.npy", npy_bytes(run.v0, {long(B), long(nv)})});
    run.files.sidecars.push_back({"variables.npy", npy_bytes(run.vfinal, {long(B), long(nv)})});
  }
}

// the batch's losses and gradient norms: the means over the rollouts whose figure is finite,
// with how many were not beside them (one diverged rollout must not turn the batch's figure
// into NaN), and the best rollout
void batch_figures(RunState& run) {
  const int B = run.B, nv = run.nv;
  const Evaluation& e0 = run.e0;
  const Evaluation& efinal = run.efinal;
  nlohmann::json& result = run.result;
  double sum0 = 0, sum1 = 0, best = INFINITY;
  int best_b = 0, finite0 = 0, finite1 = 0;
  for (int b = 0; b < B; ++b) {
    if (std::isfinite(e0.loss[b])) sum0 += e0.loss[b], ++finite0;
    if (std::isfinite(efinal.loss[b])) sum1 += efinal.loss[b], ++finite1;
    if (efinal.loss[b] < best) best = efinal.loss[b], best_b = b;
  }
  result["loss_initial_mean"] = finite0 ? nlohmann::json(sum0 / finite0) : nlohmann::json(nullptr);
  result["loss_final_mean"] = finite1 ? nlohmann::json(sum1 / finite1) : nlohmann::json(nullptr);
  result["loss_initial_nonfinite_rollouts"] = B - finite0;
  result["loss_final_nonfinite_rollouts"] = B - finite1;
  result["loss_final_best"] = best;
  result["best_rollout"] = best_b;
  // ‖∇L_b‖ over the variables, summarized over the batch
  auto grad_stats = [&](const Evaluation& e) {
    double sum = 0, mx = 0, mn = INFINITY;
    int finite = 0;
    for (int b = 0; b < B; ++b) {
      double n2 = 0;
      for (int i = 0; i < nv; ++i) n2 += e.grad[size_t(b) * nv + i] * e.grad[size_t(b) * nv + i];
      const double n = std::sqrt(n2);
      if (!std::isfinite(n)) continue;  // over the finite gradients, as the loss means
      ++finite;
      sum += n;
      mx = std::max(mx, n);
      mn = std::min(mn, n);
    }
    return nlohmann::json{
        {"mean", nv && finite ? sum / finite : 0.0},
        {"min", nv && finite ? mn : 0.0},
        {"max", mx},
        {"nonfinite_rollouts", B - finite},
        {"unit", "loss units per variable unit (mixed when variables differ in unit)"}};
  };
  result["gradient_norm_initial"] = grad_stats(e0);
  result["gradient_norm_final"] = grad_stats(efinal);
}

// with many rollouts (sweeps of designs), rank them by final loss and keep the best design;
// and the swept values of each listed rollout, so per-level tables read directly
void rank_designs(RunState& run) {
  const ExperimentConfig& c = run.c;
  Problem& p = *run.problem;
  const int B = run.B;
  const Evaluation& e0 = run.e0;
  const Evaluation& efinal = run.efinal;
  nlohmann::json& result = run.result;
  if (B > 1) {
    std::vector<int> order(B);
    for (int b = 0; b < B; ++b) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b2) {
      const double la = efinal.loss[a], lb = efinal.loss[b2];
      if (std::isfinite(la) != std::isfinite(lb)) return std::isfinite(la);
      return la < lb;
    });
    nlohmann::json rank = nlohmann::json::array();
    for (int i = 0; i < std::min(B, 32); ++i)
      rank.push_back({{"rank", i + 1},
                      {"rollout", order[i]},
                      {"loss_final", efinal.loss[order[i]]},
                      {"loss_initial", e0.loss[order[i]]}});
    result["ranking"] = {{"by", "final loss, ascending (non-finite last)"}, {"top", rank}};
    std::vector<double> th = p.parameters(run.vfinal);
    const int bb = order[0];
    result["best_design"] = {{"rollout", bb},
                             {"parameters", named(c.info.param_names, c.info.param_units,
                                                  th.data() + size_t(bb) * c.info.np())}};
  }
  if (!c.overrides.empty()) {
    Batch<double> nb = build_batch(c);
    for (int b = 0; b < run.listed; ++b) {
      nlohmann::json sw = nlohmann::json::object();
      for (const auto& ov : c.overrides) {
        if (ov.draw != BatchOverride::kSweep) continue;
        for (int i : ov.indices)
          sw[ov.is_state ? c.info.state_names[i] : c.info.param_names[i]] =
              (ov.is_state ? nb.x0_of(b) : nb.theta_of(b))[i];
      }
      if (!sw.empty()) result["rollouts"][b]["swept"] = sw;
    }
  }
}

// x_T of every listed rollout: a stride-T recording holds x_0 and x_T
void record_final_states(RunState& run) {
  const ExperimentConfig& c = run.c;
  std::vector<double> ends = run.problem->trajectories(run.vfinal, run.listed, c.steps);
  const int nx = c.info.nx();
  nlohmann::json fs = nlohmann::json::array();
  for (int b = 0; b < run.listed; ++b)
    fs.push_back({{"rollout", b},
                  {"state", named(c.info.state_names, c.info.state_units,
                                  ends.data() + (size_t(b) * 2 + 1) * nx)}});
  run.result["final_state"] = fs;
  run.final_states.assign(ends.begin(), ends.end());
}

// trajectories of the first rollouts at the final iterate: JSON subsampled, CSV full
nlohmann::json record_trajectories(RunState& run) {
  const ExperimentConfig& c = run.c;
  const int ntraj = std::min(run.B, c.output.trajectory_rollouts);
  if (ntraj <= 0) return nullptr;
  const int stride = c.output.trajectory_stride;
  std::vector<double> tr = run.problem->trajectories(run.vfinal, ntraj, stride);
  const int nx = c.info.nx();
  const int slots = c.steps / stride + 1;
  // the model's sites and outputs after the states, at each rollout's θ
  const TrajectoryExtras extras = trajectory_extras(c);
  const std::vector<double> theta =
      extras.empty() ? std::vector<double>() : run.problem->parameters(run.vfinal);
  const int np = c.info.np();
  std::ostringstream csv;
  csv << std::setprecision(17) << "rollout,step,time_s";
  for (int i = 0; i < nx; ++i) csv << "," << c.info.state_names[i] << "_" << c.info.state_units[i];
  for (const std::string& col : extras.columns) csv << "," << col;
  csv << "\n";
  int jstride =
      std::max(1, (slots + c.output.json_trajectory_points - 1) / c.output.json_trajectory_points);
  nlohmann::json rolls = nlohmann::json::array();
  for (int b = 0; b < ntraj; ++b) {
    nlohmann::json steps = nlohmann::json::array(), states = nlohmann::json::array();
    for (int s = 0; s < slots; ++s) {
      const double* x = tr.data() + (size_t(b) * slots + s) * nx;
      csv << b << "," << s * stride << "," << s * stride * c.dt;
      for (int i = 0; i < nx; ++i) csv << "," << x[i];
      if (!extras.empty())
        write_trajectory_extras(csv, c, extras, theta.data() + size_t(b) * np, x);
      csv << "\n";
      if (s % jstride == 0 || s == slots - 1) {
        steps.push_back(s * stride);
        states.push_back(std::vector<double>(x, x + nx));
      }
    }
    rolls.push_back({{"rollout", b}, {"step", steps}, {"state", states}});
  }
  run.files.sidecars.push_back({"trajectory.csv", csv.str()});
  return {
      {"state_names", c.info.state_names}, {"state_units", c.info.state_units}, {"dt", c.dt},
      {"recorded_every_steps", stride},    {"json_every_recorded", jstride},    {"rollouts", rolls},
      {"sidecar_csv", "trajectory.csv"}};
}

// a controller's final weights as a weight file (controller.init.file reads it): the best
// rollout's, which with shared weights are every rollout's
void record_controller_weights(RunState& run) {
  const ExperimentConfig& c = run.c;
  if (!c.has_controller) return;
  const int b = run.result["best_rollout"].get<int>();
  const std::vector<double> theta = run.problem->parameters(run.vfinal);
  nlohmann::json file = controller_weight_file(c, theta.data() + size_t(b) * c.info.np());
  file["rollout"] = b;
  file["config"] = c.name;
  run.files.sidecars.push_back({"controller_weights.json", file.dump() + "\n"});
  run.result["controller_weights"] = {
      {"file", "controller_weights.json"},
      {"rollout", b},
      {"use", "controller.init: {\"file\": \"<run folder>/controller_weights.json\"}"}};
}

}  // namespace

void assemble_result(RunState& run) {
  list_rollouts(run);
  batch_figures(run);
  run.result["check_passed"] = run.out.check_passed;
  rank_designs(run);
  record_controller_weights(run);
  record_final_states(run);
  run.art["trajectory"] = record_trajectories(run);
  run.art["result"] = run.result;
}

void com_travel_stage(RunState& run) {
  const ExperimentConfig& c = run.c;
  Problem& p = *run.problem;
  const int listed = run.listed;
  const std::vector<double>& v0 = run.v0;
  const std::vector<double>& vfinal = run.vfinal;
  nlohmann::json& art = run.art;
  // the centre of mass's travel before and after optimization (robots' figure of merit)
  std::vector<double>& com_before = run.com_before;
  std::vector<double>& com_after = run.com_after;
  if (model_of(c).reports_com_travel_x) {
    com_before = p.com_displacement(v0, listed, 0);
    com_after = p.com_displacement(vfinal, listed, 0);
    nlohmann::json cd = nlohmann::json::array();
    for (int b = 0; b < listed; ++b)
      cd.push_back({{"rollout", b}, {"before", com_before[b]}, {"after", com_after[b]}});
    art["result"]["com_displacement_x"] = {{"unit", "m"}, {"rollouts", cd}};
  }
}

void timings_stage(RunState& run) {
  using clock = RunState::clock;
  const ExperimentConfig& c = run.c;
  const Problem& p = *run.problem;
  const int B = run.B;
  const auto t_start = run.t_start;
  nlohmann::json& art = run.art;
  // timings
  const double total = std::chrono::duration<double>(clock::now() - t_start).count();
  const double fwd_rate =
      p.forward_seconds > 0 ? double(p.forward_calls) * B * c.steps / p.forward_seconds : 0;
  const double grad_rate =
      p.gradient_seconds > 0 ? double(p.gradient_calls) * B * c.steps / p.gradient_seconds : 0;
  art["timings"] = {
      {"total_seconds", total},
      {"forward",
       {{"calls", p.forward_calls},
        {"seconds", p.forward_seconds},
        {"rollout_steps_per_second", fwd_rate},
        {"latency_per_rollout_seconds",
         p.forward_calls ? p.forward_seconds / p.forward_calls / B : 0}}},
      {"forward_backward",
       {{"calls", p.gradient_calls},
        {"seconds", p.gradient_seconds},
        {"rollout_steps_per_second", grad_rate},
        {"latency_per_rollout_seconds",
         p.gradient_calls ? p.gradient_seconds / p.gradient_calls / B : 0}}},
      {"rollout_steps_simulated_forward", p.forward_rollout_steps},
      {"rollout_steps_swept_backward", p.backward_rollout_steps},
      {"rollout_steps_recomputed_backward", p.recomputed_rollout_steps},
      // logging evaluations and saving checkpoints (docs/robustness.md), in this process
      {"checkpoint_seconds", run.checkpoint ? run.checkpoint->seconds_spent() : 0.0}};
}

void summarize(RunState& run) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  const BackendKind backend = run.backend;
  Problem& p = *run.problem;
  const int B = run.B, nv = run.nv;
  const std::vector<std::string>& vunits = run.vunits;
  const std::vector<double>& vfinal = run.vfinal;
  const Evaluation& e0 = run.e0;
  const Evaluation& efinal = run.efinal;
  const nlohmann::json& validations = run.validations;
  const std::map<std::string, int>& label_totals = run.label_totals;
  const nlohmann::json& result = run.result;
  const std::vector<double>& final_states = run.final_states;
  const std::vector<double>& com_before = run.com_before;
  const std::vector<double>& com_after = run.com_after;
  const std::ostringstream& analyses = run.analyses;
  // summary for stdout
  std::ostringstream& s = run.summary;
  s << "steer " << o.command << ": " << c.name << " (" << c.model_type << ", B = " << B
    << ", T = " << c.steps << ", dt = " << c.dt << " s, " << c.precision << ", backend "
    << backend_name(backend) << ")\n";
  const int shown = std::min(B, 4);
  for (int b = 0; b < shown; ++b) {
    s << "  rollout " << b << ": loss " << fmt(e0.loss[b], 10) << " -> " << fmt(efinal.loss[b], 10)
      << "\n";
    for (int i = 0; i < nv && i < 6; ++i)
      // a dimensionless variable (unit "1", e.g. an activation) prints without a unit
      s << "    " << p.var_names()[i] << " = " << fmt(vfinal[size_t(b) * nv + i], 10)
        << (vunits[i] == "1" ? std::string() : " " + vunits[i])
        << "  (dL/d = " << fmt(efinal.grad[size_t(b) * nv + i], 6) << ")\n";
    if (nv > 6) s << "    … " << nv - 6 << " more variables in the artifact\n";
    if (c.info.nx() <= 8) {
      s << "    x_T:";
      for (int i = 0; i < c.info.nx(); ++i)
        s << " " << c.info.state_names[i] << " = " << std::fixed << std::setprecision(4)
          << final_states[(size_t(b) * 2 + 1) * c.info.nx() + i] << std::defaultfloat;
      s << "\n";
    }
    if (com_before.size() > size_t(b))
      s << "    centre-of-mass x displacement: " << std::fixed << std::setprecision(4)
        << com_before[b] << " m -> " << com_after[b] << " m" << std::defaultfloat << "\n";
    if (c.loss.landing)
      s << "    landing step " << efinal.diag[b].event_step
        << (efinal.diag[b].event_step < 0 ? " (no crossing; x_T used)" : "") << "\n";
  }
  if (B > shown) {
    const int bad = result["loss_final_nonfinite_rollouts"].get<int>();
    s << "  … " << B - shown << " more rollouts; mean final loss "
      << (result["loss_final_mean"].is_null() ? std::string("(none finite)")
                                              : fmt(result["loss_final_mean"].get<double>(), 8));
    if (bad > 0) s << " over the " << B - bad << " finite rollouts (" << bad << " non-finite)";
    s << "\n";
  }
  if (run.art.contains("shared") && run.art["shared"].contains("group_loss")) {
    // shared variables: the groups' losses J_g, which the optimizer minimized
    const nlohmann::json& sh = run.art["shared"];
    const auto& j0 = sh["group_loss"]["initial"];
    const auto& j1 = sh["group_loss"]["final"];
    s << "  shared variables: " << sh["groups"].get<int>() << " group(s) of "
      << sh["rollouts_per_group"].get<int>() << " rollouts; group 0's weighted mean loss J_0 "
      << fmt(j0[0].get<double>(), 10) << " -> " << fmt(j1[0].get<double>(), 10) << "\n";
  }
  if (validations.empty()) {
    s << "  gradient check: off\n";
  } else {
    for (const auto& v : validations)
      s << "  gradient check (" << check_name(v) << "): " << v["rollouts_passed"].get<int>() << "/"
        << v["rollouts_checked"].get<size_t>() << " passed, max relative error "
        << fmt(v["max_relative_error"].get<double>(), 3) << " (tolerance "
        << fmt(v["tolerance"].get<double>(), 3) << ")\n";
    for (const auto& v : validations)
      if (v.contains("float32_vs_float64")) {
        const auto& f = v["float32_vs_float64"];
        s << "  gradient check (" << check_name(v)
          << ") ran in float64; the float32 gradient is within "
          << fmt(f["gradient_relative_deviation_max"].get<double>(), 3)
          << " (relative, largest over the checked rollouts) of the float64 one";
        const int over = f["rollouts_over_tolerance"].get<int>();
        if (over > 0)
          s << "; " << over << " rollout" << (over == 1 ? "" : "s") << " over the tolerance "
            << fmt(f["tolerance"].get<double>(), 3) << " failed (float32_rounding: run in float64)";
        s << "\n";
      }
    for (const auto& v : validations)
      if (v.contains("timestep_check")) {
        const auto& t = v["timestep_check"];
        const bool on_gain = t["measure"] == "gain_moved";
        s << "  timestep check (" << check_name(v) << "): at h/2 "
          << (on_gain ? "the optimum's loss moves by " : "the gradient changes by ")
          << fmt(t["median"].get<double>(), 3) << " (median), " << fmt(t["max"].get<double>(), 3)
          << (on_gain ? " (largest) of what the optimization gained" : " (largest), relative");
        const int n = t["rollouts_labelled"].get<int>();
        if (n > 0)
          s << "; " << n << " rollout" << (n == 1 ? "" : "s") << " over "
            << fmt(t["tolerance"].get<double>(), 3) << " labelled timestep_sensitive";
        s << "\n";
      }
    // per-level table for swept batches: what was swept, the FD error, and the labels
    bool swept = false;
    for (const auto& ov : c.overrides) swept = swept || ov.draw == BatchOverride::kSweep;
    if (swept) {
      const auto& v = validations.front();
      s << "  per rollout (" << v["stage"].get<std::string>() << " check):\n";
      for (const auto& r : v["rollouts"]) {
        const int b = r["rollout"];
        s << "    " << b << ":";
        if (result["rollouts"].size() > size_t(b) && result["rollouts"][b].contains("swept"))
          for (auto it = result["rollouts"][b]["swept"].begin();
               it != result["rollouts"][b]["swept"].end(); ++it)
            s << " " << it.key() << " = " << fmt(it.value().get<double>(), 4);
        s << "  error " << fmt(r["best_relative_error"].get<double>(), 3) << " (at eps "
          << fmt(r["best_epsilon"].get<double>(), 2) << ")";
        for (const auto& l : r["labels"])
          s << "  " << l["label"].get<std::string>() << "(" << fmt(l["figure"].get<double>(), 3)
            << ")";
        s << "\n";
      }
    }
  }
  s << analyses.str();
  {
    if (!label_totals.empty()) {
      s << "  labels:";
      for (const auto& [k, n] : label_totals) s << " " << k << " x" << n;
      s << "\n";
    }
  }
}

void write_stage(RunState& run) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  RunOutcome& out = run.out;
  const nlohmann::json& art = run.art;
  ArtifactFiles& files = run.files;
  std::ostringstream& s = run.summary;
  out.artifact = art;
  if (o.write) {
    files.artifact = art;
    // report.html goes into the folder with the rest, before it is published (docs/report.md)
    std::string traj;
    for (const auto& [name, text] : files.sidecars)
      if (name == "trajectory.csv") traj = text;
    files.sidecars.push_back({"report.html", render_report(art, traj, "", &c)});
    out.artifact_dir = write_artifact(c.output.dir, run.run_name, files, shard_writer(run));
    s << "  artifact: " << out.artifact_dir << "/artifact.json\n";
    s << "  report: " << out.artifact_dir << "/report.html\n";
  }
  if (!o.write) write_own_shard(run);
  out.summary = s.str();
}

}  // namespace steer
