#include "experiment/experiment.h"

#include "validate/analyses.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "experiment/artifact.h"
#include "optim/cmaes.h"
#include "optim/lbfgsb.h"
#include "optim/optimizer.h"
#include "models/registry.h"
#include "problem/problem.h"
#include "steer/backend.h"
#include "validate/validator.h"

namespace steer {

namespace {

std::string utc_now(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// named values of one rollout's slice, with units
nlohmann::json named(const std::vector<std::string>& names, const std::vector<std::string>& units, const double* v) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < names.size(); ++i) j[names[i]] = {{"value", v[i]}, {"unit", units[i]}};
  return j;
}

// the unit of each flattened variable
std::vector<std::string> variable_units(const ExperimentConfig& c) {
  std::vector<std::string> u;
  for (const auto& v : c.variables) {
    if (v.kind == VariableSpec::kControl)
      for (int k = 0; k < v.length(c.steps); ++k) u.push_back(c.info.control_units[v.index]);
    else
      u.push_back(v.kind == VariableSpec::kInitialState ? c.info.state_units[v.index] : c.info.param_units[v.index]);
  }
  return u;
}

std::string fmt(double v, int prec = 6) {
  std::ostringstream s;
  s << std::setprecision(prec) << v;
  return s.str();
}

}  // namespace

void apply_overrides(ExperimentConfig& c, const RunOptions& o) {
  if (!o.backend.empty()) {
    if (o.backend != "cpu" && o.backend != "cuda" && o.backend != "auto")
      throw ConfigError("--backend: '" + o.backend + "' is not one of cpu, cuda, auto");
    c.backend = o.backend;
  }
  if (!o.precision.empty()) {
    if (o.precision != "float32" && o.precision != "float64")
      throw ConfigError("--precision: '" + o.precision + "' is not one of float32, float64");
    c.precision = o.precision;
  }
  if (!o.out_dir.empty()) c.output.dir = o.out_dir;
  if (o.threads >= 0) c.threads = o.threads;
}

RunOutcome run_experiment(const ExperimentConfig& c, const RunOptions& o) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  RunOutcome out;
  if (o.command == "check" && c.variables.empty())
    throw ConfigError("config: variables: steer check needs at least one variable to differentiate against");
  std::string backend_note;
  const BackendKind backend = resolve_backend(c.backend, &backend_note);
  // a fallback or device choice is always said, even with --quiet
  if (!backend_note.empty()) std::cerr << "steer: " << backend_note << "\n";
  auto problem = make_problem(c, backend, c.threads);
  Problem& p = *problem;
  std::unique_ptr<Problem> problem64;  // a float32 run's problem in float64, for its gradient checks
  std::unique_ptr<Problem> half_step;  // the checked problem at h/2 (validation.timestep_check)
  const int B = p.batch_size(), nv = p.num_vars();
  const int listed = std::min(B, std::max(c.output.trajectory_rollouts, 1));
  const std::vector<std::string> vunits = variable_units(c);

  nlohmann::json art;
  art["format"] = "steer.artifact/1";
  art["steer_version"] = STEER_VERSION;
  art["command"] = o.command;
  art["created_utc"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
  art["config"] = c.raw;
  art["effective_config"] = c.to_json();
  art["seed"] = {{"batch", c.seed}, {"validation", c.validation.seed}};
  {
    nlohmann::json units;
    for (int i = 0; i < c.info.nx(); ++i) units["state"][c.info.state_names[i]] = c.info.state_units[i];
    for (int i = 0; i < c.info.nu(); ++i) units["control"][c.info.control_names[i]] = c.info.control_units[i];
    for (int i = 0; i < c.info.np(); ++i) units["parameter"][c.info.param_names[i]] = c.info.param_units[i];
    units["time"] = "s";
    units["loss"] = "as the loss terms (squared state units times weight)";
    art["units"] = units;
  }
  const CudaStatus cs = cuda_status();
  art["device"] = {{"backend", backend_name(backend)},
                   {"backend_requested", c.backend},
                   {"backend_note", backend_note},
                   {"threads", backend == BackendKind::kCpu ? (c.threads > 0 ? c.threads : cpu_default_threads()) : 0},
                   {"cpu", cpu_model()},
                   {"host", hostname()},
                   {"cuda", {{"compiled", cs.compiled}, {"available", cs.available}, {"device", cs.device}, {"reason", cs.reason}}}};
  // the checkpoint schedule (docs/design.md, Checkpointing): uniform K, or binomial s and r under simulation.checkpoint_memory_mb;
  // recompute_factor = forward steps one backward sweep executes / T
  art["checkpoint"] = c.checkpoint_plan().to_json();

  // the batch as simulated at the start: x0 and θ of the first rollouts
  Batch<double> nominal = build_batch(c);
  std::vector<double> v0 = p.initial();
  {
    std::vector<double> th = p.parameters(v0);
    nlohmann::json init = nlohmann::json::array();
    for (int b = 0; b < listed; ++b) {
      init.push_back({{"rollout", b},
                      {"state", named(c.info.state_names, c.info.state_units, nominal.x0_of(b))},
                      {"parameters", named(c.info.param_names, c.info.param_units, th.data() + size_t(b) * c.info.np())}});
    }
    art["initial"] = init;
  }

  // validation at the start
  nlohmann::json validations = nlohmann::json::array();
  std::map<std::string, int> label_totals;
  // per rollout, what the optimization gained, |L(start) − L(optimum)|: the timestep check's scale at
  // the final stage, where the gradient at h is ~0 by construction
  std::vector<double> gains, start_gradient;
  auto run_validation = [&](const std::vector<double>& v, const std::string& stage) {
    // `check` always validates at the start: that is what the user asked for
    const bool forced = o.command == "check" && stage == "initial";
    if (!forced && !c.validation.enabled) return;
    if (!forced && std::find(c.validation.at.begin(), c.validation.at.end(), stage) == c.validation.at.end()) return;
    if (o.progress) std::cerr << "steer: validating gradients (" << stage << ", " << std::min(B, c.validation.max_rollouts) << " rollouts)\n";
    // A float32 run is checked on its problem in float64: float32 central differences
    // (about 7 digits, less the ε² truncation) cannot resolve a 1e-6 tolerance, so a float32
    // check would flag every rollout. The run's float32 adjoint gradient is compared with the
    // float64 one at the same variables, and fails the check beyond validation.float32_tolerance.
    const bool f32 = c.precision == "float32";
    ExperimentConfig c64 = c;
    c64.precision = "float64";
    if (f32 && !problem64) problem64 = make_problem(c64, backend, c.threads);
    // the timestep check runs on the checked (float64) problem at h/2
    if (c.validation.timestep_check && !half_step) half_step = std::make_unique<HalfStepProblem>(c64, backend, c.threads);
    ValidationReport rep = validate(f32 ? *problem64 : p, v, c.validation, stage, f32 ? &p : nullptr, half_step.get(),
                                    stage == "final" && !gains.empty() ? &gains : nullptr,
                                    stage == "final" && !start_gradient.empty() ? &start_gradient : nullptr);
    out.check_passed = out.check_passed && rep.all_passed();
    for (const auto& [k, n] : rep.label_counts) label_totals[k] += n;
    nlohmann::json j = to_json(rep, listed);
    j["precision"] = "float64";
    if (f32) {
      j["precision_note"] = "this float32 run's gradients are checked on the same problem in float64 (float32 central "
                            "differences cannot resolve the tolerance); float32_vs_float64 compares the run's own "
                            "float32 adjoint gradient with the float64 one, and a rollout beyond its tolerance fails "
                            "(label float32_rounding)";
    }
    validations.push_back(j);
  };
  run_validation(v0, "initial");

  // initial loss and gradient
  Evaluation e0;
  p.evaluate(v0, true, e0);
  std::vector<double> vfinal = v0;
  Evaluation efinal = e0;
  nlohmann::json optj = nullptr;
  if (o.command == "run" && c.optimizer.method != "none" && c.optimizer.iterations > 0) {
    auto last = clock::now();
    auto progress = [&](int it, double mean) {
      if (!o.progress) return;
      auto now = clock::now();
      if (std::chrono::duration<double>(now - last).count() < 1.0 && it != c.optimizer.iterations) return;
      last = now;
      std::cerr << "steer: iteration " << it << "/" << c.optimizer.iterations << "  mean loss " << fmt(mean, 8) << "\n";
    };
    OptimizationResult r;
    // optimize in normalized variables when asked: the wrapper maps z ∈ [0, 1] onto the bounds
    std::unique_ptr<NormalizedProblem> zp;
    Problem* po = &p;
    std::vector<double> start = v0;
    if (c.optimizer.normalized) {
      zp = std::make_unique<NormalizedProblem>(make_problem(c, backend, c.threads));
      po = zp.get();
      start = zp->to_z(v0);
    }
    if (c.optimizer.method == "lbfgsb") {
      r = lbfgsb_optimize(*po, c.optimizer, start, progress);
    } else if (c.optimizer.method == "cmaes") {
      // the population is a batch of λ copies of this rollout, one generation per batched pass
      CmaesOptions co;
      co.sigma0 = c.optimizer.cmaes_sigma0;
      co.lambda = c.optimizer.cmaes_population > 0 ? c.optimizer.cmaes_population : cmaes_default_lambda(nv);
      co.max_evaluations = c.optimizer.cmaes_max_rollouts > 0 ? c.optimizer.cmaes_max_rollouts
                                                              : (long long)c.optimizer.iterations * co.lambda;
      co.seed = c.optimizer.seed;
      std::unique_ptr<Problem> pop = make_problem(replicate_rollout0(c, co.lambda), backend, c.threads);
      if (c.optimizer.normalized) pop = std::make_unique<NormalizedProblem>(std::move(pop));
      OptimizationResult rc = cmaes_optimize(*pop, co, start, [&](int g, double bf) { progress(g, bf); });
      r.vars.assign(rc.vars.begin(), rc.vars.begin() + nv);
      r.trace = rc.trace;
      r.iterations = rc.iterations;
      r.seconds = rc.seconds;
    } else {
      r = optimize(*po, c.optimizer, start, progress);
    }
    // back to variable units, evaluated on the run's own problem; the wrapper's simulations
    // count in the run's timings
    if (zp) {
      r.vars = zp->to_v(r.vars);
      const Problem& in = zp->inner();
      p.forward_rollout_steps += in.forward_rollout_steps;
      p.backward_rollout_steps += in.backward_rollout_steps;
      p.recomputed_rollout_steps += in.recomputed_rollout_steps;
      p.forward_seconds += in.forward_seconds;
      p.gradient_seconds += in.gradient_seconds;
      p.forward_calls += in.forward_calls;
      p.gradient_calls += in.gradient_calls;
    }
    p.evaluate(r.vars, true, r.final);
    vfinal = r.vars;
    efinal = r.final;
    optj = {{"method", c.optimizer.method}, {"iterations", r.iterations}, {"seconds", r.seconds},
            {"history", to_json(r.trace)}};
    gains.resize(size_t(B));
    start_gradient.assign(size_t(B), 0.0);
    for (int b = 0; b < B; ++b) {
      gains[size_t(b)] = std::abs(e0.loss[size_t(b)] - efinal.loss[size_t(b)]);
      for (int i = 0; i < nv; ++i) start_gradient[size_t(b)] += e0.grad[size_t(b) * nv + i] * e0.grad[size_t(b) * nv + i];
      start_gradient[size_t(b)] = std::sqrt(start_gradient[size_t(b)]);
    }
    run_validation(vfinal, "final");
  }
  art["optimization"] = optj;
  // analyses beyond optimize-and-validate (host/analyses.h), each with its own section
  std::ostringstream analyses;
  if (c.horizon_sweep.enabled) art["horizon_sweep"] = run_horizon_sweep(c, backend, analyses, label_totals);
  if (c.perturb.enabled) art["perturbation"] = run_perturbation(c, backend, vfinal, efinal.loss, analyses, label_totals);
  if (c.success_tolerance > 0) art["success"] = terminal_success(c, p, vfinal, analyses);
  art["validation"] = validations;
  art["labels"] = label_totals;

  // variables, losses and gradients of the first rollouts
  nlohmann::json per = nlohmann::json::array();
  for (int b = 0; b < listed; ++b) {
    nlohmann::json vars = nlohmann::json::object();
    for (int i = 0; i < nv && i < 64; ++i) {
      const size_t k = size_t(b) * nv + i;
      vars[p.var_names()[i]] = {{"initial", v0[k]}, {"final", vfinal[k]}, {"unit", vunits[i]},
                                {"gradient_initial", e0.grad[k]}, {"gradient_final", efinal.grad[k]}};
    }
    per.push_back({{"rollout", b}, {"loss_initial", e0.loss[b]}, {"loss_final", efinal.loss[b]},
                   {"event_step", efinal.diag[b].event_step}, {"contact_steps", efinal.diag[b].contact_steps},
                   {"variables", vars}});
  }
  nlohmann::json result;
  result["rollouts"] = per;
  result["variables_listed_per_rollout"] = std::min(nv, 64);
  {
    double sum0 = 0, sum1 = 0, best = INFINITY;
    int best_b = 0;
    for (int b = 0; b < B; ++b) {
      sum0 += e0.loss[b];
      sum1 += efinal.loss[b];
      if (efinal.loss[b] < best) best = efinal.loss[b], best_b = b;
    }
    result["loss_initial_mean"] = sum0 / B;
    result["loss_final_mean"] = sum1 / B;
    result["loss_final_best"] = best;
    result["best_rollout"] = best_b;
  }
  // ‖∇L_b‖ over the variables, summarized over the batch
  auto grad_stats = [&](const Evaluation& e) {
    double sum = 0, mx = 0, mn = INFINITY;
    for (int b = 0; b < B; ++b) {
      double n2 = 0;
      for (int i = 0; i < nv; ++i) n2 += e.grad[size_t(b) * nv + i] * e.grad[size_t(b) * nv + i];
      const double n = std::sqrt(n2);
      sum += n;
      mx = std::max(mx, n);
      mn = std::min(mn, n);
    }
    return nlohmann::json{{"mean", nv ? sum / B : 0.0}, {"min", nv ? mn : 0.0}, {"max", mx},
                          {"unit", "loss units per variable unit (mixed when variables differ in unit)"}};
  };
  result["gradient_norm_initial"] = grad_stats(e0);
  result["gradient_norm_final"] = grad_stats(efinal);
  result["check_passed"] = out.check_passed;
  // with many rollouts (sweeps of designs), rank them by final loss and keep the best design
  if (B > 1) {
    std::vector<int> order(B);
    for (int b = 0; b < B; ++b) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b2) {
      const double la = efinal.loss[a], lb = efinal.loss[b2];
      if (std::isfinite(la) != std::isfinite(lb)) return std::isfinite(la);
      return la < lb;
    });
    nlohmann::json rank = nlohmann::json::array();
    for (int i = 0; i < std::min(B, 32); ++i) rank.push_back({{"rank", i + 1}, {"rollout", order[i]}, {"loss_final", efinal.loss[order[i]]}, {"loss_initial", e0.loss[order[i]]}});
    result["ranking"] = {{"by", "final loss, ascending (non-finite last)"}, {"top", rank}};
    std::vector<double> th = p.parameters(vfinal);
    const int bb = order[0];
    result["best_design"] = {{"rollout", bb},
                             {"parameters", named(c.info.param_names, c.info.param_units, th.data() + size_t(bb) * c.info.np())}};
  }
  // the swept values of each listed rollout, so per-level tables read directly
  if (!c.overrides.empty()) {
    Batch<double> nb = build_batch(c);
    for (int b = 0; b < listed; ++b) {
      nlohmann::json sw = nlohmann::json::object();
      for (const auto& ov : c.overrides) {
        if (ov.draw != BatchOverride::kSweep) continue;
        for (int i : ov.indices)
          sw[ov.is_state ? c.info.state_names[i] : c.info.param_names[i]] = (ov.is_state ? nb.x0_of(b) : nb.theta_of(b))[i];
      }
      if (!sw.empty()) result["rollouts"][b]["swept"] = sw;
    }
  }

  // trajectories of the first rollouts at the final iterate: JSON subsampled, CSV full
  ArtifactFiles files;
  const int ntraj = std::min(B, c.output.trajectory_rollouts);
  nlohmann::json trajj = nullptr;
  std::vector<double> final_states;
  {
    // x_T of every listed rollout: a stride-T recording holds x_0 and x_T
    std::vector<double> ends = p.trajectories(vfinal, listed, c.steps);
    const int nx = c.info.nx();
    nlohmann::json fs = nlohmann::json::array();
    for (int b = 0; b < listed; ++b)
      fs.push_back({{"rollout", b}, {"state", named(c.info.state_names, c.info.state_units, ends.data() + (size_t(b) * 2 + 1) * nx)}});
    result["final_state"] = fs;
    final_states.assign(ends.begin(), ends.end());
  }
  if (ntraj > 0) {
    const int stride = c.output.trajectory_stride;
    std::vector<double> tr = p.trajectories(vfinal, ntraj, stride);
    const int nx = c.info.nx();
    const int slots = c.steps / stride + 1;
    std::ostringstream csv;
    csv << std::setprecision(17) << "rollout,step,time_s";
    for (int i = 0; i < nx; ++i) csv << "," << c.info.state_names[i] << "_" << c.info.state_units[i];
    csv << "\n";
    int jstride = std::max(1, (slots + c.output.json_trajectory_points - 1) / c.output.json_trajectory_points);
    nlohmann::json rolls = nlohmann::json::array();
    for (int b = 0; b < ntraj; ++b) {
      nlohmann::json steps = nlohmann::json::array(), states = nlohmann::json::array();
      for (int s = 0; s < slots; ++s) {
        const double* x = tr.data() + (size_t(b) * slots + s) * nx;
        csv << b << "," << s * stride << "," << s * stride * c.dt;
        for (int i = 0; i < nx; ++i) csv << "," << x[i];
        csv << "\n";
        if (s % jstride == 0 || s == slots - 1) {
          steps.push_back(s * stride);
          states.push_back(std::vector<double>(x, x + nx));
        }
      }
      rolls.push_back({{"rollout", b}, {"step", steps}, {"state", states}});
    }
    trajj = {{"state_names", c.info.state_names}, {"state_units", c.info.state_units}, {"dt", c.dt},
             {"recorded_every_steps", stride}, {"json_every_recorded", jstride},
             {"rollouts", rolls}, {"sidecar_csv", "trajectory.csv"}};
    files.sidecars.push_back({"trajectory.csv", csv.str()});
  }
  art["trajectory"] = trajj;
  art["result"] = result;

  // the centre of mass's travel before and after optimization (robots' figure of merit)
  std::vector<double> com_before, com_after;
  if (model_of(c).reports_com_travel_x) {
    com_before = p.com_displacement(v0, listed, 0);
    com_after = p.com_displacement(vfinal, listed, 0);
    nlohmann::json cd = nlohmann::json::array();
    for (int b = 0; b < listed; ++b) cd.push_back({{"rollout", b}, {"before", com_before[b]}, {"after", com_after[b]}});
    art["result"]["com_displacement_x"] = {{"unit", "m"}, {"rollouts", cd}};
  }

  // timings
  const double total = std::chrono::duration<double>(clock::now() - t_start).count();
  const double fwd_rate = p.forward_seconds > 0 ? double(p.forward_calls) * B * c.steps / p.forward_seconds : 0;
  const double grad_rate = p.gradient_seconds > 0 ? double(p.gradient_calls) * B * c.steps / p.gradient_seconds : 0;
  art["timings"] = {
      {"total_seconds", total},
      {"forward", {{"calls", p.forward_calls}, {"seconds", p.forward_seconds}, {"rollout_steps_per_second", fwd_rate},
                   {"latency_per_rollout_seconds", p.forward_calls ? p.forward_seconds / p.forward_calls / B : 0}}},
      {"forward_backward", {{"calls", p.gradient_calls}, {"seconds", p.gradient_seconds}, {"rollout_steps_per_second", grad_rate},
                            {"latency_per_rollout_seconds", p.gradient_calls ? p.gradient_seconds / p.gradient_calls / B : 0}}},
      {"rollout_steps_simulated_forward", p.forward_rollout_steps},
      {"rollout_steps_swept_backward", p.backward_rollout_steps},
      {"rollout_steps_recomputed_backward", p.recomputed_rollout_steps}};

  // summary for stdout
  std::ostringstream s;
  s << "steer " << o.command << ": " << c.name << " (" << c.model_type << ", B = " << B << ", T = " << c.steps
    << ", dt = " << c.dt << " s, " << c.precision << ", backend " << backend_name(backend) << ")\n";
  const int shown = std::min(B, 4);
  for (int b = 0; b < shown; ++b) {
    s << "  rollout " << b << ": loss " << fmt(e0.loss[b], 10) << " -> " << fmt(efinal.loss[b], 10) << "\n";
    for (int i = 0; i < nv && i < 6; ++i)
      // a dimensionless variable (unit "1", e.g. an activation) prints without a unit
      s << "    " << p.var_names()[i] << " = " << fmt(vfinal[size_t(b) * nv + i], 10)
        << (vunits[i] == "1" ? std::string() : " " + vunits[i]) << "  (dL/d = " << fmt(efinal.grad[size_t(b) * nv + i], 6) << ")\n";
    if (nv > 6) s << "    … " << nv - 6 << " more variables in the artifact\n";
    if (c.info.nx() <= 8) {
      s << "    x_T:";
      for (int i = 0; i < c.info.nx(); ++i)
        s << " " << c.info.state_names[i] << " = " << std::fixed << std::setprecision(4)
          << final_states[(size_t(b) * 2 + 1) * c.info.nx() + i] << std::defaultfloat;
      s << "\n";
    }
    if (com_before.size() > size_t(b))
      s << "    centre-of-mass x displacement: " << std::fixed << std::setprecision(4) << com_before[b] << " m -> "
        << com_after[b] << " m" << std::defaultfloat << "\n";
    if (c.loss.landing)
      s << "    landing step " << efinal.diag[b].event_step << (efinal.diag[b].event_step < 0 ? " (no crossing; x_T used)" : "") << "\n";
  }
  if (B > shown) s << "  … " << B - shown << " more rollouts; mean final loss " << fmt(result["loss_final_mean"].get<double>(), 8) << "\n";
  if (validations.empty()) {
    s << "  gradient check: off\n";
  } else {
    for (const auto& v : validations)
      s << "  gradient check (" << v["stage"].get<std::string>() << "): " << v["rollouts_passed"].get<int>() << "/"
        << v["rollouts_checked"].get<size_t>() << " passed, max relative error " << fmt(v["max_relative_error"].get<double>(), 3)
        << " (tolerance " << fmt(v["tolerance"].get<double>(), 3) << ")\n";
    for (const auto& v : validations)
      if (v.contains("float32_vs_float64")) {
        const auto& f = v["float32_vs_float64"];
        s << "  gradient check (" << v["stage"].get<std::string>() << ") ran in float64; the float32 gradient is within "
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
        s << "  timestep check (" << v["stage"].get<std::string>() << "): at h/2 "
          << (on_gain ? "the optimum's loss moves by " : "the gradient changes by ") << fmt(t["median"].get<double>(), 3)
          << " (median), " << fmt(t["max"].get<double>(), 3) << (on_gain ? " (largest) of what the optimization gained" : " (largest), relative");
        const int n = t["rollouts_labelled"].get<int>();
        if (n > 0)
          s << "; " << n << " rollout" << (n == 1 ? "" : "s") << " over " << fmt(t["tolerance"].get<double>(), 3)
            << " labelled timestep_sensitive";
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
          for (auto it = result["rollouts"][b]["swept"].begin(); it != result["rollouts"][b]["swept"].end(); ++it)
            s << " " << it.key() << " = " << fmt(it.value().get<double>(), 4);
        s << "  error " << fmt(r["best_relative_error"].get<double>(), 3) << " (at eps " << fmt(r["best_epsilon"].get<double>(), 2) << ")";
        for (const auto& l : r["labels"]) s << "  " << l["label"].get<std::string>() << "(" << fmt(l["figure"].get<double>(), 3) << ")";
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
  out.artifact = art;
  if (o.write) {
    files.artifact = art;
    out.artifact_dir = write_artifact(c.output.dir, c.name + "-" + utc_now("%Y%m%d-%H%M%S"), files);
    s << "  artifact: " << out.artifact_dir << "/artifact.json\n";
  }
  out.summary = s.str();
  return out;
}

}  // namespace steer
