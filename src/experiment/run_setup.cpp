// clang-format off
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "experiment/report.h"
#include "experiment/run_stages.h"
#include "optim/cmaes.h"
#include "optim/ga.h"
#include "optim/lbfgsb.h"
#include "optim/optimizer.h"
#include "parallel/split_problem.h"
#include "problem/shared_problem.h"
#include "problem/windowed_problem.h"
#include "validate/analyses.h"
#include "validate/validator.h"

namespace steer {

namespace {

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

}  // namespace

std::string utc_now(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string fmt(double v, int prec) {
  std::ostringstream s;
  s << std::setprecision(prec) << v;
  return s.str();
}

void require_one_backend(BackendKind backend) {
  Communicator& w = world();
  if (w.size() == 1) return;
  // the CPU and CUDA paths agree to rounding, not bit for bit, so a job whose ranks resolved
  // "auto" differently (a node without a GPU) would not give the one-process artifact
  const std::vector<std::string> all = allgather_strings(backend_name(backend));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw ConfigError("simulation.backend: rank 0 runs on " + all[0] + " but rank " + std::to_string(r) + " on " +
                        all[r] + "; every rank must use the same backend (set simulation.backend or --backend to cpu or cuda)");
}

nlohmann::json parallel_json(int batch) {
  Communicator& w = world();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::vector<std::string> hosts = allgather_strings(hostname());
  const std::vector<std::string> devices = allgather_strings(visible ? visible : "");
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < w.size(); ++r) {
    nlohmann::json one = {{"rank", r}, {"host", hosts[size_t(r)]}, {"cuda_visible_devices", devices[size_t(r)]}};
    if (batch > 0) {
      const Block b = block_of(batch, r, w.size());
      one["rollouts"] = {b.begin, b.begin + b.count};  // [begin, end)
    }
    ranks.push_back(one);
  }
  return {{"ranks", w.size()}, {"library", w.library()}, {"per_rank", ranks}};
}

// named values of one rollout's slice, with units
nlohmann::json named(const std::vector<std::string>& names, const std::vector<std::string>& units, const double* v) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < names.size(); ++i) j[names[i]] = {{"value", v[i]}, {"unit", units[i]}};
  return j;
}

// the artifact's description of the shared variables (docs/artifact.md): the groups, the shared
// variables' names and, when batch.weights gave them, the normalized weights
nlohmann::json shared_json(const ExperimentConfig& c, const SharedLayout& l) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& v : c.variables)
    if (v.shared) names.push_back(v.name);
  nlohmann::json j = {{"groups", l.groups},
                      {"rollouts_per_group", l.members},
                      {"variables", names},
                      {"loss", "J_g = sum_m w_m L_(g*M+m), sum_m w_m = 1 in each group; the optimizer minimizes "
                               "every J_g, and the gradient of a shared variable is sum_m w_m dL_m/dv"}};
  if (!c.world_weights.empty()) j["weights"] = l.weight;
  return j;
}

void plan_run(RunState& run) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  if (o.command == "check" && c.variables.empty())
    throw ConfigError("config: variables: steer check needs at least one variable to differentiate against");
  run.backend = resolve_backend(c.backend, &run.backend_note);
  // a fallback or device choice is always said, even with --quiet
  if (!run.backend_note.empty() && world().rank() == 0) std::cerr << "steer: " << run.backend_note << "\n";
  require_one_backend(run.backend);
  // across ranks: every rank sees the whole batch, simulates its block (src/parallel/split_problem.h)
  run.problem = make_split_problem(c, run.backend, c.threads);
  run.B = run.problem->batch_size();
  run.nv = run.problem->num_vars();
  run.listed = std::min(run.B, std::max(c.output.trajectory_rollouts, 1));
  run.vunits = variable_units(c);
}

void describe_run(RunState& run) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  const BackendKind backend = run.backend;
  const std::string& backend_note = run.backend_note;
  Problem& p = *run.problem;
  const int listed = run.listed;
  nlohmann::json& art = run.art;
  art["format"] = "steer.artifact/1";
  art["steer_version"] = STEER_VERSION;
  art["command"] = o.command;
  art["created_utc"] = run.created_utc;
  art["config"] = c.raw;
  art["config_folder"] = absolute_config_folder(c);
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
  art["parallel"] = parallel_json(c.batch_size);
  // the checkpoint schedule (docs/design.md, Checkpointing): uniform K, or binomial s and r under simulation.checkpoint_memory_mb;
  // recompute_factor = forward steps one backward sweep executes / T
  art["checkpoint"] = c.checkpoint_plan().to_json();

  // the batch as simulated at the start: x0 and θ of the first rollouts
  Batch<double> nominal = build_batch(c);
  run.v0 = p.initial();
  // a shared variable starts at its group's first rollout's value in every member
  if (c.has_shared()) {
    const SharedLayout l = shared_layout(c, run.nv);
    run.v0 = l.expand(l.joint(run.v0));
    art["shared"] = shared_json(c, l);
  }
  const std::vector<double>& v0 = run.v0;
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
}

namespace {

// The shared variables' own check (validate_stage, after the per-rollout one): the groups'
// gradient ∂J_g/∂z_g against central differences of J_g, the group loss (SharedProblem), on
// the same problems as the per-rollout check (checked: float64; the run's own float32 one and
// the h/2 one when those run). At the final stage the timestep and float32 scales are the
// groups' gains |J_g(start) − J_g(final)| and ‖∂J_g/∂z_g‖ at the start.
void validate_shared(RunState& run, const std::vector<double>& v, const std::string& stage, Problem& checked) {
  const ExperimentConfig& c = run.c;
  const bool f32 = c.precision == "float32";
  const SharedLayout l = shared_layout(c, run.nv);
  SharedProblem groups(checked, l), own(*run.problem, l);
  std::unique_ptr<SharedProblem> half = run.half_step ? std::make_unique<SharedProblem>(*run.half_step, l) : nullptr;
  std::vector<double> gains, start_gradient;
  const bool at_final = stage == "final" && !run.gains.empty();
  if (at_final) {
    const std::vector<double> j0 = l.group_loss(run.e0.loss), j1 = l.group_loss(run.efinal.loss);
    const std::vector<double> g0 = l.reduce_gradient(run.e0.grad);
    const size_t nj = size_t(l.joint_vars());
    for (int g = 0; g < l.groups; ++g) {
      gains.push_back(std::abs(j0[size_t(g)] - j1[size_t(g)]));
      double n2 = 0;
      for (size_t i = 0; i < nj; ++i) n2 += g0[size_t(g) * nj + i] * g0[size_t(g) * nj + i];
      start_gradient.push_back(std::sqrt(n2));
    }
  }
  ProgressLine bar(run.o.progress,
                   "validating shared gradients (" + stage + ", " +
                       std::to_string(std::min(l.groups, c.validation.max_rollouts)) + " groups)",
                   0, "passes");
  ValidationReport rep =
      validate(groups, l.joint(v), c.validation, stage, f32 ? &own : nullptr, half.get(), at_final ? &gains : nullptr,
               at_final ? &start_gradient : nullptr, secant_check_of(c.validation), [&bar](long long done, long long total) {
                 bar.set_total(total);
                 bar.update(done);
               });
  bar.finish();
  run.out.check_passed = run.out.check_passed && rep.all_passed();
  for (const auto& [k, n] : rep.label_counts) run.label_totals[k] += n;
  nlohmann::json j = to_json(rep, c.validation.listed_rollouts);
  j["precision"] = "float64";
  j["shared"] = {{"rows", "groups"},
                 {"loss", "J_g, the weighted mean of the group's rollouts' losses"},
                 {"variables", groups.var_names().size() <= 64 ? nlohmann::json(groups.var_names()) : nlohmann::json()}};
  run.validations.push_back(j);
}

}  // namespace

void validate_stage(RunState& run, const std::vector<double>& v, const std::string& stage) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  const BackendKind backend = run.backend;
  Problem& p = *run.problem;
  const int B = run.B;
  RunOutcome& out = run.out;
  std::unique_ptr<Problem>& problem64 = run.problem64;
  std::unique_ptr<Problem>& half_step = run.half_step;
  const std::vector<double>& gains = run.gains;
  const std::vector<double>& start_gradient = run.start_gradient;
  std::map<std::string, int>& label_totals = run.label_totals;
  nlohmann::json& validations = run.validations;
  // `check` always validates at the start: that is what the user asked for
  const bool forced = o.command == "check" && stage == "initial";
  if (!forced && !c.validation.enabled) return;
  if (!forced && std::find(c.validation.at.begin(), c.validation.at.end(), stage) == c.validation.at.end()) return;
  // "steer: validating gradients (initial, 8 rollouts) 3/9 (33%)  1.5 passes/s  ETA 4 s": batched
  // passes of the check (gradient, ±ε per ε, secant), whose total the validator knows after its first
  ProgressLine bar(o.progress,
                   "validating gradients (" + stage + ", " + std::to_string(std::min(B, c.validation.max_rollouts)) + " rollouts)",
                   0, "passes");
  auto on_pass = [&bar](long long done, long long total) {
    bar.set_total(total);
    bar.update(done);
  };
  // A float32 run is checked on its problem in float64: float32 central differences
  // (about 7 digits, less the ε² truncation) cannot resolve a 1e-6 tolerance, so a float32
  // check would flag every rollout. The run's float32 adjoint gradient is compared with the
  // float64 one at the same variables, and fails the check beyond validation.float32_tolerance.
  const bool f32 = c.precision == "float32";
  ExperimentConfig c64 = c;
  c64.precision = "float64";
  if (f32 && !problem64) problem64 = make_split_problem(c64, backend, c.threads);
  // the timestep check runs on the checked (float64) problem at h/2
  if (c.validation.timestep_check && !half_step) half_step = make_split_half_step(c64, backend, c.threads);
  ValidationReport rep = validate(f32 ? *problem64 : p, v, c.validation, stage, f32 ? &p : nullptr, half_step.get(),
                                  stage == "final" && !gains.empty() ? &gains : nullptr,
                                  stage == "final" && !start_gradient.empty() ? &start_gradient : nullptr,
                                  secant_check_of(c.validation), on_pass);
  bar.finish();
  out.check_passed = out.check_passed && rep.all_passed();
  for (const auto& [k, n] : rep.label_counts) label_totals[k] += n;
  // validation's own listing (validation.listed_rollouts), not the trajectory recording's
  nlohmann::json j = to_json(rep, c.validation.listed_rollouts);
  j["precision"] = "float64";
  if (f32) {
    j["precision_note"] = "this float32 run's gradients are checked on the same problem in float64 (float32 central "
                          "differences cannot resolve the tolerance); float32_vs_float64 compares the run's own "
                          "float32 adjoint gradient with the float64 one, and a rollout beyond its tolerance fails "
                          "(label float32_rounding)";
  }
  validations.push_back(j);
  if (c.has_shared()) validate_shared(run, v, stage, f32 ? *problem64 : p);
}

namespace {

// Adam and gd across ranks (docs/scaling.md): every rollout's steps need only its own gradient,
// so each rank runs them on its block (BlockProblem) and nothing is gathered per evaluation but
// the ranks' agreement on failures; a logged iteration gathers the losses for the trace and the
// progress line, and the final variables are gathered once. start and the result's vars are the
// whole batch's [B·nv] (in z when normalized, as the caller's optimizer sees them); the result's
// final evaluation is left to the caller. A run with a checkpoint keeps the gathered path: its
// log replays whole-batch evaluations.
OptimizationResult optimize_blocks(SplitProblem& split, const OptimizerConfig& cfg, const std::vector<double>& start,
                                   bool normalized, const std::function<void(int, double)>& progress) {
  const size_t nv = size_t(split.num_vars());
  std::unique_ptr<Problem> block = std::make_unique<BlockProblem>(split);
  if (normalized) block = std::make_unique<NormalizedProblem>(std::move(block));
  BatchView view;
  view.gather = [&split](const std::vector<double>& rows, size_t per, int n) { return split.gather_rows(rows, per, n); };
  view.any = [](bool flag) { return any_rank(flag); };
  OptimizationResult r = optimize(*block, cfg, split.block_rows(start, nv), progress, view);
  split.settle_counters();
  r.vars = split.gather_rows(r.vars, nv, -1);
  r.final = Evaluation();
  return r;
}

// adds the cost counters of `from` (a copy of the run's problem the optimizer ran on) to `to`
void add_counters(Problem& to, const Problem& from) {
  to.forward_rollout_steps += from.forward_rollout_steps;
  to.backward_rollout_steps += from.backward_rollout_steps;
  to.recomputed_rollout_steps += from.recomputed_rollout_steps;
  to.forward_seconds += from.forward_seconds;
  to.gradient_seconds += from.gradient_seconds;
  to.forward_calls += from.forward_calls;
  to.gradient_calls += from.gradient_calls;
}

// The optimum r (in variable units; with shared variables the groups' joint rows, expanded here
// to one row per rollout) evaluated on the run's problem as the run's final variables, the
// groups' losses, each rollout's gain and start gradient norm (the final check's scales), and
// the artifact's optimization section, which it returns. names: the optimized variables' names
// (a row of the trace).
nlohmann::json record_optimum(RunState& run, OptimizationResult& r, const SharedLayout* layout,
                              const std::vector<std::string>& names, int lbfgsb_evaluations) {
  const ExperimentConfig& c = run.c;
  Problem& p = *run.problem;
  const int B = run.B, nv = run.nv;
  const Evaluation& e0 = run.e0;
  const bool shared = layout != nullptr;
  // the groups' joint rows back to one row per rollout
  if (shared) r.vars = layout->expand(r.vars);
  p.evaluate(r.vars, true, r.final);
  run.vfinal = r.vars;
  run.efinal = r.final;
  const Evaluation& efinal = run.efinal;
  if (shared) {
    // the groups' losses J_g at the start and the end (the first ≤ 64 groups)
    auto first = [](std::vector<double> v) {
      v.resize(std::min(v.size(), size_t(64)));
      return v;
    };
    run.art["shared"]["group_loss"] = {{"initial", first(layout->group_loss(e0.loss))},
                                     {"final", first(layout->group_loss(efinal.loss))}};
  }
  nlohmann::json optj = {{"method", c.optimizer.method}, {"iterations", r.iterations}, {"seconds", r.seconds},
                         {"history", to_json(r.trace)}};
  // L-BFGS-B's line searches evaluate more points than it takes steps (docs/artifact.md); the
  // other methods evaluate the batch once per iteration
  if (c.optimizer.method == "lbfgsb") optj["evaluations"] = lbfgsb_evaluations;
  // the names of the variables' paths, in the order of a row
  if (r.trace.vars_per_rollout > 0) optj["history"]["variable_names"] = names;
  // with shared variables the trace's rows are the groups' (their joint variables and J_g)
  if (shared) optj["history"]["rows"] = "groups";
  run.gains.resize(size_t(B));
  run.start_gradient.assign(size_t(B), 0.0);
  for (int b = 0; b < B; ++b) {
    run.gains[size_t(b)] = std::abs(e0.loss[size_t(b)] - efinal.loss[size_t(b)]);
    for (int i = 0; i < nv; ++i) run.start_gradient[size_t(b)] += e0.grad[size_t(b) * nv + i] * e0.grad[size_t(b) * nv + i];
    run.start_gradient[size_t(b)] = std::sqrt(run.start_gradient[size_t(b)]);
  }
  return optj;
}

}  // namespace

// the population of the black-box methods (cmaes, ga): optimizer.population, or the method's
// default for nv variables
int population_size(const ExperimentConfig& c, int nv) {
  if (c.optimizer.cmaes_population > 0) return c.optimizer.cmaes_population;
  return c.optimizer.method == "ga" ? ga_default_population(nv) : cmaes_default_lambda(nv);
}

// CMA-ES or the GA: the population is a batch of λ copies of the rollout, one generation per
// batched pass
OptimizationResult population_stage(const ExperimentConfig& c, BackendKind backend, int B, int nv, bool shared,
                                    const std::vector<double>& start, const std::function<Problem&(Problem&)>& logged,
                                    const std::function<void(int, double)>& progress) {
  const int lambda = population_size(c, nv);
  const long long budget =
      c.optimizer.cmaes_max_rollouts > 0 ? c.optimizer.cmaes_max_rollouts : (long long)c.optimizer.iterations * lambda;
  // with every variable shared, a candidate is one design on every world: λ copies of the
  // batch, each copy one group (the config refuses cmaes with other variables and B > 1)
  std::unique_ptr<Problem> pop =
      shared ? std::make_unique<SharedProblem>(make_split_problem(replicate_worlds(c, lambda), backend, c.threads),
                                               shared_layout(c, nv, lambda * B, lambda))
             : make_split_problem(replicate_rollout0(c, lambda), backend, c.threads);
  if (c.optimizer.normalized) pop = std::make_unique<NormalizedProblem>(std::move(pop));
  auto each = [&](int g, double bf) { progress(g, bf); };
  OptimizationResult rc;
  if (c.optimizer.method == "ga") {
    GaOptions go;
    go.sigma0 = c.optimizer.cmaes_sigma0;
    go.population = lambda;
    go.max_evaluations = budget;
    go.seed = c.optimizer.seed;
    rc = ga_optimize(logged(*pop), go, start, each);
  } else {
    CmaesOptions co;
    co.sigma0 = c.optimizer.cmaes_sigma0;
    co.lambda = lambda;
    co.max_evaluations = budget;
    co.seed = c.optimizer.seed;
    rc = cmaes_optimize(logged(*pop), co, start, each);
  }
  OptimizationResult r;
  r.vars.assign(rc.vars.begin(), rc.vars.begin() + pop->num_vars());
  r.trace = rc.trace;
  r.iterations = rc.iterations;
  r.seconds = rc.seconds;
  return r;
}

void optimize_stage(RunState& run) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  const BackendKind backend = run.backend;
  Problem& p = *run.problem;
  const int B = run.B, nv = run.nv;
  const std::vector<double>& v0 = run.v0;
  nlohmann::json& art = run.art;
  // initial loss and gradient
  p.evaluate(v0, true, run.e0);
  run.vfinal = v0;
  run.efinal = run.e0;
  nlohmann::json optj = nullptr;
  if (o.command == "run" && c.optimizer.method != "none" && c.optimizer.iterations > 0) {
    // "steer: iteration 40/200 (20%)  mean loss …  rate  ETA": the first iteration at once
    // (a stop or a look at stderr finds the run optimizing), then about once a second, and the last
    // Split across ranks, rank 0 counts the rollouts all ranks simulated (each iteration is one
    // batched pass over the whole batch, or a CMA-ES generation of λ): "steer: rollouts (2 ranks)
    // 40960/819200 (5%)  iteration 10, mean loss …  rate  ETA"
    // L-BFGS-B counts iterations as the artifact does (accepted steps, the most any rollout has
    // taken) and names its batched evaluations, which its line searches make more of:
    // "steer: iteration 40/200 (20%)  evaluations 47, mean loss …"
    const int ranks = world().size();
    const bool shared = c.has_shared();
    const long long per_iteration =
        ranks == 1 ? 1
                   : c.optimizer.method == "cmaes" || c.optimizer.method == "ga"
                         ? population_size(c, nv) * (shared ? B : 1)
                         : B;
    ProgressLine bar(o.progress, ranks == 1 ? "iteration" : "rollouts (" + std::to_string(ranks) + " ranks)",
                     c.optimizer.iterations * per_iteration, ranks == 1 ? "iterations" : "rollouts", 1.0);
    double last_mean = NAN;
    std::string evaluations_text;  // L-BFGS-B: "evaluations N, "
    auto progress = [&](int it, double mean) {
      last_mean = mean;
      bar.update(it * per_iteration, (ranks == 1 ? "" : "iteration " + std::to_string(it) + ", ") + evaluations_text +
                                         "mean loss " + fmt(mean, 8));
    };
    int lbfgsb_evaluations = 0;
    OptimizationResult r;
    // the problem the optimizer sees: in normalized variables when asked (the wrapper maps
    // z ∈ [0, 1] onto the bounds), over a copy of the run's problem; in the groups' joint
    // variables when some are shared (SharedProblem)
    std::unique_ptr<NormalizedProblem> zp;
    std::unique_ptr<SharedProblem> sp;
    // optimizer.window: the optimizer steps once per window of the worlds' carried states; the
    // run's problem (the whole horizon) still validates, records and reports
    std::unique_ptr<WindowedProblem> wp;
    if (c.optimizer.window_steps > 0) {
      // the worlds' carried states are not in the checkpoint: its evaluations are not logged
      // for a resume to replay, and a resume is refused
      if (!run.o.resume_dir.empty() || ranks > 1)
        throw ConfigError("optimizer.window: runs on one process and is not resumed (its worlds' "
                          "carried states are not checkpointed); run one rank, without --resume");
      wp = std::make_unique<WindowedProblem>(c, backend, c.threads);
    }
    Problem& trained = wp ? static_cast<Problem&>(*wp) : p;
    Problem* po = &trained;
    Problem* copy = nullptr;  // the per-rollout copy under the normalized wrapper
    const SharedLayout layout = shared ? shared_layout(c, nv) : SharedLayout();
    std::vector<double> start = shared ? layout.joint(v0) : v0;
    if (c.optimizer.normalized) {
      std::unique_ptr<Problem> q = make_split_problem(c, backend, c.threads);
      copy = q.get();
      if (shared) {
        sp = std::make_unique<SharedProblem>(std::move(q), layout);
        q.reset(sp.release());
      }
      zp = std::make_unique<NormalizedProblem>(std::move(q));
      po = zp.get();
      start = zp->to_z(start);
    } else if (shared) {
      sp = std::make_unique<SharedProblem>(trained, layout);
      po = sp.get();
    }
    // gd and Adam clip each world's gradient before the group's sum (SharedProblem::clip_members),
    // in the optimizer's units
    if (shared && c.optimizer.gradient_clip > 0 && (c.optimizer.method == "gd" || c.optimizer.method == "adam")) {
      std::vector<double> span;
      if (c.optimizer.normalized)
        for (int i = 0; i < nv; ++i) span.push_back(p.upper()[size_t(i)] - p.lower()[size_t(i)]);
      SharedProblem& s = zp ? static_cast<SharedProblem&>(zp->inner()) : *sp;
      s.clip_members(c.optimizer.gradient_clip, span);
    }
    // with a checkpoint, the optimizer's evaluations are logged (and replayed on resume);
    // the counters it saves are those the artifact reports
    std::unique_ptr<RecordedProblem> recorded;
    if (run.checkpoint) {
      std::vector<Problem*> counted{&p};
      if (copy) counted.push_back(copy);
      run.checkpoint->watch(counted, [&run] { return saved_run_state(run); });
    }
    auto logged = [&](Problem& q) -> Problem& {
      if (!run.checkpoint) return q;
      recorded = std::make_unique<RecordedProblem>(q, *run.checkpoint);
      return *recorded;
    };
    // "gathered": every evaluation gathers the whole batch's losses, gradients and diagnostics
    std::string path = "gathered";
    // rank 0 alone writes a fresh checkpoint, every rank replays one it resumes: the ranks agree
    // on whether one is kept, so that they all take the same path
    const bool checkpointed = any_rank(run.checkpoint != nullptr);
    const long long received_before = world().received_bytes;
    if (c.optimizer.method == "lbfgsb") {
      LbfgsbReport lr;
      r = lbfgsb_optimize(
          logged(*po), c.optimizer, start,
          [&](int it, int evaluations, double mean) {
            evaluations_text = "evaluations " + std::to_string(evaluations) + ", ";
            progress(it, mean);
          },
          LbfgsbOptions{}, &lr);
      lbfgsb_evaluations = lr.batched_evaluations;
    } else if (c.optimizer.method == "cmaes" || c.optimizer.method == "ga") {
      r = population_stage(c, backend, B, nv, shared, start, logged, progress);
    } else if (SplitProblem* split = checkpointed || shared || wp ? nullptr : dynamic_cast<SplitProblem*>(zp ? copy : &p)) {
      path = "per-rank blocks";
      r = optimize_blocks(*split, c.optimizer, start, zp != nullptr, progress);
    } else {
      r = optimize(wp ? *po : logged(*po), c.optimizer, start, progress);
    }
    // what the optimizer gathered into this rank (a run-description field: docs/scaling.md)
    if (ranks > 1)
      art["parallel"]["optimizer"] = {{"path", path}, {"iterations", r.iterations},
                                      {"bytes_received", world().received_bytes - received_before}};
    if (run.checkpoint) run.checkpoint->optimizer_finished();
    bar.finish(evaluations_text + "mean loss " + fmt(last_mean, 8));
    // back to variable units, evaluated on the run's own problem; the wrapper's simulations
    // count in the run's timings
    if (zp) {
      r.vars = zp->to_v(r.vars);
      // the trace's variables' paths in variable units too (rows of nv: to_v maps element i by i mod nv)
      for (auto& row : r.trace.vars) row = zp->to_v(row);
      add_counters(p, *copy);
    }
    optj = record_optimum(run, r, shared ? &layout : nullptr, po->var_names(), lbfgsb_evaluations);
    if (wp) {
      optj["window"] = wp->summary();
      add_counters(p, *wp);
    }
    validate_stage(run, run.vfinal, "final");
  }
  art["optimization"] = optj;
}

void analyses_stage(RunState& run) {
  const ExperimentConfig& c = run.c;
  const BackendKind backend = run.backend;
  Problem& p = *run.problem;
  const std::vector<double>& vfinal = run.vfinal;
  const Evaluation& efinal = run.efinal;
  std::ostringstream& analyses = run.analyses;
  std::map<std::string, int>& label_totals = run.label_totals;
  const nlohmann::json& validations = run.validations;
  nlohmann::json& art = run.art;
  // analyses beyond optimize-and-validate (src/validate/analyses.h), each with its own section
  // the perturbation is one forward pass per level: its start and duration are what progress says
  auto timed = [&](const char* what, size_t levels, auto&& fn) {
    if (run.o.progress) std::cerr << "steer: " << what << " (" << levels << " levels)\n";
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    if (run.o.progress)
      std::cerr << "steer: " << what << " done in "
                << duration_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) << "\n";
  };
  if (c.horizon_sweep.enabled) {
    // a gradient check per horizon: "steer: horizon sweep 1/3 (33%)  T = 20  0.50 horizons/s  ETA 4 s"
    ProgressLine bar(run.o.progress, "horizon sweep", (long long)c.horizon_sweep.steps.size(), "horizons", 1.0);
    bar.update(0);
    art["horizon_sweep"] = run_horizon_sweep(c, backend, analyses, label_totals, [&](long long done, long long) {
      bar.update(done, "T = " + std::to_string(c.horizon_sweep.steps[size_t(done - 1)]));
    });
    bar.finish();
  }
  if (c.perturb.enabled)
    timed("perturbation", c.perturb.relative.size(),
          [&] { art["perturbation"] = run_perturbation(c, backend, vfinal, efinal.loss, analyses, label_totals); });
  if (c.success_tolerance > 0) art["success"] = terminal_success(c, p, vfinal, analyses);
  art["validation"] = validations;
  art["labels"] = label_totals;
}

}  // namespace steer
// clang-format on
