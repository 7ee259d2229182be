// bench_peer: steer's side of the peer benchmarks (bench/peers/). Loads an experiment config,
// optionally edits it (--set), puts the given variable values into every rollout, and
// reports, as one JSON object on stdout:
//   - the loss and the gradient ∂L/∂vars of rollout 0 (the numbers a peer must reproduce),
//   - the wall time of one forward and of one forward+backward call of the problem over the
//     batch (one warm-up call, then repeats until --min-time has passed; best and median),
//     and the same per rollout (divided by B; --forward-only: the forward call alone, for peers
//     without an adjoint); also the process CPU time of the call with the
//     least CPU time (std::clock, summed over threads: on a shared machine the CPU time of a
//     one-thread run is the figure least disturbed by other processes),
//   - with --fd EPS, centered finite differences of every variable on rollout 0 in float64
//     ((L(v + ε_i e_i) − L(v − ε_i e_i)) / 2ε_i, ε_i = EPS · max(1, |v_i|)) next to the
//     adjoint, with the relative error |adj − fd| / max(|adj|, |fd|, 1e-12).
// The timed call is Problem::evaluate: variables scattered into the batch, run_batch on the
// CPU backend (forward with checkpoints, then the checkpointed adjoint sweep), gradients
// gathered; the scatter and gather are O(B·nv) copies, negligible next to the rollouts.
//
//   bench_peer configs/difftaichi_robot_a.json --batch 64 --threads 2 --vars-file w.txt
//   bench_peer configs/warp_bounce.json --fd 1e-6
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_set.h"
#include "problem/problem.h"
#include "steer/backend.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using steer::bench::apply_set;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> read_numbers(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::invalid_argument("--vars-file: cannot open " + path);
  std::vector<double> v;
  double x;
  while (f >> x) v.push_back(x);
  return v;
}

struct Timing {
  double best = 0, median = 0;  // wall [s]
  double cpu_best = 0;          // process CPU time [s] (all threads), of the fastest call by CPU
  int reps = 0;
};

// one warm-up call, then repeats until min_time seconds have passed (at least `min_reps`)
Timing time_calls(steer::Problem& p, const std::vector<double>& vars, bool grad, double min_time,
                  int min_reps) {
  steer::Evaluation ev;
  p.evaluate(vars, grad, ev);
  std::vector<double> w, cpu;
  double total = 0;
  while (total < min_time || int(w.size()) < min_reps) {
    const std::clock_t c0 = std::clock();
    const auto t0 = Clock::now();
    p.evaluate(vars, grad, ev);
    w.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    cpu.push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
    total += w.back();
  }
  Timing t;
  t.best = *std::min_element(w.begin(), w.end());
  t.cpu_best = *std::min_element(cpu.begin(), cpu.end());
  t.median = median(w);
  t.reps = int(w.size());
  return t;
}

json timing_json(const Timing& t, int B) {
  return {{"best_s", t.best},
          {"median_s", t.median},
          {"reps", t.reps},
          {"cpu_best_s", t.cpu_best},
          {"per_rollout_cpu_best_s", t.cpu_best / B},
          {"per_rollout_best_s", t.best / B},
          {"per_rollout_median_s", t.median / B}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path, vars_csv, vars_file, vars_json, precision;
  std::vector<std::string> sets;
  int batch = 1, threads = 1, min_reps = 3;
  double min_time = 1.0, fd_eps = 0;
  bool no_timing = false, forward_only = false;
  CLI::App app{
      "bench_peer: steer's loss, gradient and fwd/fwd+bwd time on a config, for the peer "
      "benchmarks"};
  app.add_option("CONFIG", config_path, "experiment config (JSON)")->required();
  app.add_option("--set", sets, "edit the config before parsing: key.path=JSON value (repeatable)");
  app.add_option("--batch", batch, "rollouts B (every one gets the same variables)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads (0 = all)")->check(CLI::NonNegativeNumber);
  app.add_option("--precision", precision, "float32 or float64 (default: the config's)")
      ->check(CLI::IsMember({"float32", "float64"}));
  app.add_option("--vars", vars_csv, "variable values, comma separated, in the problem's order");
  app.add_option("--vars-file", vars_file,
                 "variable values, whitespace separated, in the problem's order");
  app.add_option("--vars-json", vars_json,
                 "variable values as a JSON object {name: value} naming every variable");
  app.add_option("--min-time", min_time, "seconds of timed repeats per figure");
  app.add_option("--min-reps", min_reps, "at least this many timed repeats per figure");
  app.add_option("--fd", fd_eps,
                 "also check ∂L/∂vars of rollout 0 by centered FD with this relative step");
  app.add_flag("--no-timing", no_timing, "loss and gradient only");
  app.add_flag("--forward-only", forward_only,
               "time the forward call only (for peers without an adjoint)");
  CLI11_PARSE(app, argc, argv);

  try {
    std::ifstream f(config_path);
    if (!f) throw std::invalid_argument("cannot open " + config_path);
    json j = json::parse(f);
    // model.include resolves against the config's folder, as `steer run` does (load_config)
    const size_t slash = config_path.find_last_of('/');
    j = steer::expand_includes(j, slash == std::string::npos ? "." : config_path.substr(0, slash));
    for (const auto& s : sets) apply_set(j, s);
    if (!precision.empty()) j["simulation"]["precision"] = precision;
    j["simulation"]["backend"] = "cpu";
    json j1 = j;  // batch 1, float64: loss, gradient and FD reference
    j1["batch"]["size"] = 1;
    j1["simulation"]["precision"] = "float64";
    j["batch"]["size"] = batch;
    const steer::ExperimentConfig c = steer::parse_config(j), c1 = steer::parse_config(j1);

    auto prob = steer::make_problem(c, steer::BackendKind::kCpu, threads);
    auto ref = steer::make_problem(c1, steer::BackendKind::kCpu, 1);
    const int nv = prob->num_vars();
    std::vector<double> v0(ref->initial().begin(), ref->initial().begin() + nv);
    if (!vars_csv.empty()) {
      std::vector<double> v;
      std::stringstream ss(vars_csv);
      std::string tok;
      while (std::getline(ss, tok, ',')) v.push_back(std::stod(tok));
      v0 = v;
    } else if (!vars_file.empty()) {
      v0 = read_numbers(vars_file);
    } else if (!vars_json.empty()) {
      std::ifstream vf(vars_json);
      if (!vf) throw std::invalid_argument("--vars-json: cannot open " + vars_json);
      const json vj = json::parse(vf);
      for (int i = 0; i < nv; ++i) {
        const std::string& n = ref->var_names()[i];
        if (!vj.contains(n)) throw std::invalid_argument("--vars-json: no value for variable " + n);
        v0[i] = vj.at(n).get<double>();
      }
    }
    if (int(v0.size()) != nv)
      throw std::invalid_argument("expected " + std::to_string(nv) + " variable values, got " +
                                  std::to_string(v0.size()));
    std::vector<double> vars(size_t(batch) * nv);
    for (int b = 0; b < batch; ++b) std::copy(v0.begin(), v0.end(), vars.begin() + size_t(b) * nv);

    // loss and gradient: float64 batch-1 reference, and rollout 0 of the timed problem
    steer::Evaluation e_ref, e_run;
    ref->evaluate(v0, true, e_ref);
    prob->evaluate(vars, true, e_run);
    json out = {
        {"config", config_path},
        {"name", c.name},
        {"sets", sets},
        {"batch", batch},
        {"threads", threads > 0 ? threads : steer::cpu_default_threads()},
        {"precision", c.precision},
        {"steps", c.steps},
        {"checkpoint_every", c.resolved_checkpoint()},
        {"var_names", ref->var_names()},
        {"vars", v0},
        {"loss", e_ref.loss[0]},
        {"grad", e_ref.grad},
        {"loss_run_precision", e_run.loss[0]},
        {"grad_run_precision", std::vector<double>(e_run.grad.begin(), e_run.grad.begin() + nv)}};

    if (fd_eps > 0) {
      std::vector<double> fd(nv), err(nv);
      double max_err = 0;
      steer::Evaluation ep, em;
      for (int i = 0; i < nv; ++i) {
        const double h = fd_eps * std::max(1.0, std::abs(v0[i]));
        std::vector<double> vp = v0, vm = v0;
        vp[i] += h;
        vm[i] -= h;
        ref->evaluate(vp, false, ep);
        ref->evaluate(vm, false, em);
        fd[i] = (ep.loss[0] - em.loss[0]) / (2 * h);
        err[i] = std::abs(e_ref.grad[i] - fd[i]) /
                 std::max({std::abs(e_ref.grad[i]), std::abs(fd[i]), 1e-12});
        max_err = std::max(max_err, err[i]);
      }
      out["fd"] = {{"eps", fd_eps}, {"fd", fd}, {"rel_err", err}, {"max_rel_err", max_err}};
    }

    if (!no_timing) {
      const Timing tf = time_calls(*prob, vars, false, min_time, min_reps);
      out["forward"] = timing_json(tf, batch);
      if (!forward_only)
        out["forward_backward"] =
            timing_json(time_calls(*prob, vars, true, min_time, min_reps), batch);
    }
    std::cout << out.dump(1) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_peer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
