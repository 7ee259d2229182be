// bench_rollout: throughput of batched rollouts, forward and forward+backward, on the CPU or
// CUDA backend, over batch sizes, precisions and checkpoint schedules: uniform intervals
// (--checkpoint K), binomial snapshot counts (--snapshots s), and per-rollout memory budgets
// (--memory-mb: the uniform ⌈√T⌉ schedule when it fits, else the binomial one with the most
// snapshots that fit, as simulation.checkpoint_memory_mb chooses). Each row reports the
// recompute factor (forward steps the backward sweep executed / T, from the rollouts'
// diagnostics) and the scratch bytes per rollout of its schedule.
//
// --config FILE (default bench/configs/projectile_throughput.json, the worked example; also
// bench/configs/mass_spring_throughput.json, a DiffTaichi-sized soft robot, and any steer
// config, e.g. configs/difftaichi_robot_a.json, configs/panda_reach.json): the config's model,
// loss, controls and rollout 0's x0 and θ (after its draws), replicated B times; T from the
// config unless --steps. The model runs behind its BatchRunner (src/problem/batch_runner.h),
// as in a run: any registered model is benchmarked without a line here, and an articulated
// model's adjoint covers x, u and the config's parameter variables, as in a run.
// Work per rollout-step (docs/design.md, "Benchmarks and work counting") is counted, not
// estimated: the model's step and adj_step run on Counted<S> (steer/op_count.h, through
// BatchRunner::count_work) at 8 states spread over rollout 0's trajectory, giving
// flops (add, mul, div, sqrt; special functions apart) and the distinct bytes a step reads and
// writes. A forward+backward rollout-step does (1 + recompute) forward steps and one adjoint
// step (on the CPU with the uniform schedule, a model's taped adjoint: rollout.h). Achieved
// GFLOP/s and GB/s follow from the times; on CUDA, from the kernel times, as a
// percentage of the device's FP32/FP64 and DRAM ceilings (CudaStatus).
// Throughput is rollout-steps per second: B·T / wall time of one run_batch call
// (on CUDA this includes the host<->device copies; kernel-only figures come from CUDA
// events). Each figure repeats its measurement until it has taken ≥ --min-time seconds
// after one warm-up call, and reports the median and the best run.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "config/config.h"
#include "problem/batch_runner.h"
#include "problem/problem.h"
#include "steer/backend.h"
#include "steer/cuda_backend.h"

namespace {

using steer::BackendKind;
using steer::Batch;
using steer::BatchResult;
using steer::BatchRunner;
using steer::RolloutDiag;
using steer::RolloutShape;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string backend = "cpu";
  std::string precision = "both";
  std::vector<long> batches = {1, 16, 256, 4096, 65536, 262144, 1048576};  // the default config
  double max_mem_gb = 8.0;
  int steps = 300;  // from the config unless --steps
  std::vector<std::string> checkpoints = {"sqrt"};
  std::vector<int> snapshots;     // binomial snapshot counts
  std::vector<double> memory_mb;  // per-rollout scratch budgets [MiB]
  double store_forward_mb = 256;  // per-thread budget of --checkpoint stored [MiB]
  std::string config_path = STEER_SOURCE_DIR "/bench/configs/projectile_throughput.json";
  int threads = 0;
  double min_time = 0.2;  // [s] per measured figure
  std::string json_path;
  bool markdown = false;
};

// one measured configuration
struct Row {
  std::string backend, precision;
  int threads = 0;
  long batch = 0;
  int steps = 0;
  std::string schedule;  // "K=18", "s=9 r=3"
  int checkpoint = 0;    // K (uniform), 0 for binomial
  int snapshots = 0;     // s (binomial), 0 for uniform
  int repetitions = 1;   // r (binomial)
  double budget_mb = 0;  // --memory-mb that chose the schedule, 0 = none
  double recompute = 0;  // forward steps of the backward sweep / T (measured)
  long scratch = 0;      // [bytes per rollout] of this schedule
  double fwd_median_s = 0, fwd_best_s = 0, fb_median_s = 0, fb_best_s = 0;
  int fwd_reps = 0, fb_reps = 0;
  double kernel_fwd_s = -1, kernel_fb_s = -1, transfer_s = -1;  // CUDA only (median run)
  long scratch_k1 = 0, scratch_ksqrt = 0;                       // [bytes per rollout]
  long peak_rss_kb = 0;
  // counted work per rollout-step (mean over sampled states of rollout 0)
  double flops_fwd = 0, flops_adj = 0, special_fwd = 0, special_adj = 0;  // per step
  double bytes_fwd = 0, bytes_adj = 0;                                    // per step [B]
  // per forward+backward rollout-step: (1 + recompute) forward steps and one adjoint step
  double flops_fb() const { return flops_fwd * (1 + recompute) + flops_adj; }
  double bytes_fb() const { return bytes_fwd * (1 + recompute) + bytes_adj; }
};

int sqrt_interval(int T) { return int(std::ceil(std::sqrt(double(T)))); }

// scratch state memory of one rollout [bytes]: checkpoints + segment recompute + λ, λ_prev
template <class S>
long scratch_bytes(int T, int K, int nx) {
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K;
  return long(steer::rollout_scratch_bytes<S>(sh, nx));
}

// one checkpoint schedule to measure
struct Schedule {
  RolloutShape shape;
  double budget_mb = 0;
};

// the schedules asked for, for precision S and nx states: uniform intervals, binomial snapshot
// counts, and what each memory budget chooses (uniform ⌈√T⌉ if it fits, else the most
// binomial snapshots that fit; fewer than 2 is an error, as for simulation.checkpoint_memory_mb)
template <class S>
std::vector<Schedule> schedules_for(const Options& opt, int nx) {
  std::vector<Schedule> out;
  const int T = opt.steps;
  for (const std::string& c : opt.checkpoints) {
    Schedule q;
    q.shape.steps = T;
    // stored: the CPU backend's stored forward pass within --store-forward-mb per thread (else,
    // and on CUDA, K = ⌈√T⌉); the recompute column shows which ran
    if (c == "stored")
      q.shape.store_forward_bytes = (long long)std::floor(opt.store_forward_mb * 1048576.0);
    q.shape.checkpoint_every = c == "sqrt" || c == "stored" ? sqrt_interval(T) : std::stoi(c);
    if (q.shape.checkpoint_every < 1 || q.shape.checkpoint_every > T)
      throw std::invalid_argument("--checkpoint: " + c + " is not in [1, steps]");
    out.push_back(q);
  }
  for (int sn : opt.snapshots) {
    if (sn < 1) throw std::invalid_argument("--snapshots: " + std::to_string(sn) + " is not >= 1");
    Schedule q;
    q.shape.steps = T;
    q.shape.schedule = steer::CheckpointSchedule::kBinomial;
    q.shape.snapshots = sn;
    out.push_back(q);
  }
  for (double mb : opt.memory_mb) {
    Schedule q;
    q.budget_mb = mb;
    q.shape.steps = T;
    q.shape.checkpoint_every = sqrt_interval(T);
    const long long budget = (long long)std::floor(mb * 1048576.0);
    if (steer::rollout_scratch_bytes<S>(q.shape, nx) > budget) {
      const int sn = steer::binomial_snapshots_within<S>(budget, T, nx);
      if (sn < 2 && sn < T)
        throw std::invalid_argument("--memory-mb: " + std::to_string(mb) +
                                    " MiB holds fewer than 2 binomial snapshots of this model");
      q.shape.schedule = steer::CheckpointSchedule::kBinomial;
      q.shape.snapshots = sn;
    }
    out.push_back(q);
  }
  return out;
}

// host memory of one configuration [bytes]: batch inputs + results with gradients
template <class S>
double host_bytes(long B, int T, int nx, int nu, int np) {
  const double per =
      double(sizeof(S)) * 2.0 * (nx + double(T) * nu + np) + sizeof(S) + sizeof(RolloutDiag);
  return per * double(B);
}

// peak resident set size of this process so far [kB], from /proc/self/status VmHWM
long peak_rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// a model from a steer config: rollout 0 of its batch (x0 and θ after draws), the config's
// constant controls and loss, replicated B times; its BatchRunner per precision
struct ConfigScene {
  steer::ExperimentConfig c;
  std::vector<double> x0, p0, u0;
  int nx = 0, nu = 0, np = 0;
  explicit ConfigScene(const steer::ExperimentConfig& config) : c(config), u0(config.u_init) {
    const Batch<double> nominal = steer::build_batch(steer::replicate_rollout0(c, 1));
    x0.assign(nominal.x0_of(0), nominal.x0_of(0) + nominal.nx);
    p0.assign(nominal.theta_of(0), nominal.theta_of(0) + nominal.np);
    nx = nominal.nx, nu = nominal.nu, np = nominal.np;
  }
  // the model in precision S on `kind`; as a run differentiates (the config's variables)
  template <class S>
  std::unique_ptr<BatchRunner> runner(BackendKind kind) const {
    steer::ExperimentConfig cs = c;
    cs.precision = sizeof(S) == 4 ? "float32" : "float64";
    return steer::make_runner(cs, kind);
  }
  template <class S>
  Batch<S> batch(long B, int T) const {
    Batch<S> b;
    b.resize(int(B), nx, nu, np, T);
    for (long r = 0; r < B; ++r) {
      for (int i = 0; i < nx; ++i) b.x0_of(int(r))[i] = S(x0[i]);
      for (int q = 0; q < np; ++q) b.theta_of(int(r))[q] = S(p0[q]);
      for (int k = 0; k < T; ++k)
        for (int j = 0; j < nu; ++j) b.u_of(int(r))[size_t(k) * nu + j] = S(u0[j]);
    }
    return b;
  }
  nlohmann::json describe() const {
    return {{"config", c.name}, {"model", c.model_type}, {"nx", nx}, {"nu", nu}, {"np", np},
            {"dt", c.dt}};
  }
};

// times one call of run_batch; on CUDA also its kernel and transfer times [s]
struct Timed {
  double wall = 0, kernel = -1, transfer = -1;
};

template <class S>
Timed run_once(const BatchRunner& runner, const RolloutShape& sh, const Batch<S>& batch,
               bool want_grad, BatchResult<S>& out, int threads) {
  Timed t;
  steer::CudaRunStats st;
  const bool cuda = runner.backend() == BackendKind::kCuda;
  const auto t0 = Clock::now();
  runner.run(batch, sh, want_grad, out, threads, cuda ? &st : nullptr);
  t.wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (cuda) {
    t.kernel = 1e-3 * (st.forward_ms + st.backward_ms);
    t.transfer = 1e-3 * (st.upload_ms + st.download_ms);
  }
  return t;
}

// one warm-up, then repeats until min_time has passed; returns every timed run
template <class S>
std::vector<Timed> measure(const BatchRunner& runner, const RolloutShape& sh, const Batch<S>& batch,
                           bool want_grad, int threads, double min_time,
                           long long* recompute_steps = nullptr) {
  BatchResult<S> out;
  run_once(runner, sh, batch, want_grad, out, threads);  // page faults, CUDA context
  if (recompute_steps) *recompute_steps = out.diag.empty() ? 0 : out.diag[0].recompute_steps;
  std::vector<Timed> runs;
  double total = 0;
  while (total < min_time || runs.empty()) {
    runs.push_back(run_once(runner, sh, batch, want_grad, out, threads));
    total += runs.back().wall;
  }
  return runs;
}

template <class S>
Row bench_one(const Options& opt, const ConfigScene& scene, const BatchRunner& runner, long B,
              const Schedule& q) {
  const BackendKind kind = runner.backend();
  const int nx = runner.nx();
  const RolloutShape& sh = q.shape;
  const Batch<S> batch = scene.template batch<S>(B, opt.steps);

  Row r;
  r.backend = steer::backend_name(kind);
  r.precision = sizeof(S) == 4 ? "float32" : "float64";
  r.threads = kind == BackendKind::kCpu
                  ? (opt.threads > 0 ? opt.threads : steer::cpu_default_threads())
                  : 0;
  r.batch = B;
  r.steps = opt.steps;
  if (sh.binomial()) {
    r.snapshots = sh.snapshot_slots();
    r.repetitions = steer::binomial_reach(opt.steps, r.snapshots).r;
    r.schedule = "s=" + std::to_string(r.snapshots) + " r=" + std::to_string(r.repetitions);
  } else {
    r.checkpoint = sh.checkpoint_every;
    r.schedule = "K=" + std::to_string(r.checkpoint);
    if (sh.store_forward_bytes > 0)
      r.schedule = "stored (else K=" + std::to_string(r.checkpoint) + ")";
  }
  r.budget_mb = q.budget_mb;
  r.scratch = long(steer::rollout_scratch_bytes<S>(sh, nx));
  auto summarize = [](const std::vector<Timed>& runs, double& med, double& best, int& reps) {
    std::vector<double> w;
    for (const auto& t : runs) w.push_back(t.wall);
    med = median(w);
    best = *std::min_element(w.begin(), w.end());
    reps = int(w.size());
  };
  const auto fwd = measure(runner, sh, batch, false, opt.threads, opt.min_time);
  summarize(fwd, r.fwd_median_s, r.fwd_best_s, r.fwd_reps);
  long long recompute_steps = 0;
  const auto fb = measure(runner, sh, batch, true, opt.threads, opt.min_time, &recompute_steps);
  r.recompute = double(recompute_steps) / opt.steps;
  if (sh.store_forward_bytes > 0 && recompute_steps == 0 && kind == BackendKind::kCpu) {
    // the stored forward ran: T + 1 states, λ, λ_prev, x_0 and x_T slots, and T step tapes per
    // rollout
    RolloutShape w = sh;
    w.checkpoint_every = opt.steps;
    r.scratch = long(steer::rollout_scratch_bytes<S>(w, nx) +
                     (long long)opt.steps * runner.step_tape_bytes());
  }
  summarize(fb, r.fb_median_s, r.fb_best_s, r.fb_reps);
  if (kind == BackendKind::kCuda) {
    std::vector<double> kf, kfb, tr;
    for (const auto& t : fwd) kf.push_back(t.kernel);
    for (const auto& t : fb) {
      kfb.push_back(t.kernel);
      tr.push_back(t.transfer);
    }
    r.kernel_fwd_s = median(kf);
    r.kernel_fb_s = median(kfb);
    r.transfer_s = median(tr);
  }
  r.scratch_k1 = scratch_bytes<S>(opt.steps, 1, nx);
  r.scratch_ksqrt = scratch_bytes<S>(opt.steps, sqrt_interval(opt.steps), nx);
  r.peak_rss_kb = peak_rss_kb();
  // the adjoint as the CPU's uniform schedule runs it (from the step's tape, rollout.h)
  const steer::StepWorkCounts w =
      runner.count_work(scene.template batch<double>(1, opt.steps), opt.steps, 8,
                        kind == BackendKind::kCpu && !sh.binomial());
  r.flops_fwd = w.flops_fwd;
  r.flops_adj = w.flops_adj;
  r.special_fwd = w.special_fwd;
  r.special_adj = w.special_adj;
  r.bytes_fwd = w.elements_fwd * sizeof(S);
  r.bytes_adj = w.elements_adj * sizeof(S);
  return r;
}

double steps_per_s(const Row& r, double seconds) { return double(r.batch) * r.steps / seconds; }

nlohmann::json to_json(const Row& r) {
  nlohmann::json j = {
      {"backend", r.backend},
      {"precision", r.precision},
      {"threads", r.threads},
      {"batch", r.batch},
      {"steps", r.steps},
      {"checkpoint_every", r.checkpoint},
      {"schedule", r.snapshots > 0 ? "binomial" : "uniform"},
      {"snapshots", r.snapshots},
      {"repetitions", r.repetitions},
      {"memory_budget_mb", r.budget_mb},
      {"recompute_factor", r.recompute},
      {"scratch_bytes_per_rollout_schedule", r.scratch},
      {"forward_backward_ms_per_rollout", 1e3 * r.fb_median_s / double(r.batch)},
      {"forward",
       {{"median_s", r.fwd_median_s},
        {"best_s", r.fwd_best_s},
        {"reps", r.fwd_reps},
        {"rollout_steps_per_s_median", steps_per_s(r, r.fwd_median_s)},
        {"rollout_steps_per_s_best", steps_per_s(r, r.fwd_best_s)}}},
      {"forward_backward",
       {{"median_s", r.fb_median_s},
        {"best_s", r.fb_best_s},
        {"reps", r.fb_reps},
        {"rollout_steps_per_s_median", steps_per_s(r, r.fb_median_s)},
        {"rollout_steps_per_s_best", steps_per_s(r, r.fb_best_s)}}},
      {"bwd_over_fwd", (r.fb_median_s - r.fwd_median_s) / r.fwd_median_s},
      {"scratch_bytes_per_rollout", {{"K=1", r.scratch_k1}, {"K=ceil(sqrt(T))", r.scratch_ksqrt}}},
      {"peak_rss_kb", r.peak_rss_kb},
  };
  // achieved rates from the median times (kernel times on CUDA)
  const double t_f = r.kernel_fwd_s >= 0 ? r.kernel_fwd_s : r.fwd_median_s;
  const double t_fb = r.kernel_fb_s >= 0 ? r.kernel_fb_s : r.fb_median_s;
  j["work_per_rollout_step"] = {{"forward_flops", r.flops_fwd},
                                {"forward_special_functions", r.special_fwd},
                                {"forward_bytes", r.bytes_fwd},
                                {"adjoint_flops", r.flops_adj},
                                {"adjoint_special_functions", r.special_adj},
                                {"adjoint_bytes", r.bytes_adj},
                                {"forward_backward_flops", r.flops_fb()},
                                {"forward_backward_bytes", r.bytes_fb()}};
  j["achieved"] = {{"forward_gflops", r.flops_fwd * steps_per_s(r, t_f) * 1e-9},
                   {"forward_gbs", r.bytes_fwd * steps_per_s(r, t_f) * 1e-9},
                   {"forward_backward_gflops", r.flops_fb() * steps_per_s(r, t_fb) * 1e-9},
                   {"forward_backward_gbs", r.bytes_fb() * steps_per_s(r, t_fb) * 1e-9},
                   {"timed", r.kernel_fwd_s >= 0 ? "cuda kernels" : "wall"}};
  if (r.kernel_fwd_s >= 0)
    j["cuda"] = {{"kernel_forward_s", r.kernel_fwd_s},
                 {"kernel_forward_backward_s", r.kernel_fb_s},
                 {"transfer_s", r.transfer_s},
                 {"kernel_forward_rollout_steps_per_s", steps_per_s(r, r.kernel_fwd_s)},
                 {"kernel_forward_backward_rollout_steps_per_s", steps_per_s(r, r.kernel_fb_s)}};
  return j;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_markdown(const std::vector<Row>& rows, std::ostream& os) {
  const bool cuda =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.kernel_fwd_s >= 0; });
  const steer::CudaStatus cs = steer::cuda_status();
  // the counted work per rollout-step, once per precision
  os << "| precision | fwd flops/step | fwd special fns/step | fwd bytes/step | adj flops/step | "
        "adj special "
        "fns/step | adj bytes/step |\n|---|---:|---:|---:|---:|---:|---:|\n";
  std::vector<std::string> seen;
  for (const Row& r : rows) {
    if (std::find(seen.begin(), seen.end(), r.precision) != seen.end()) continue;
    seen.push_back(r.precision);
    os << "| " << r.precision << " | " << fmt("%.0f", r.flops_fwd) << " | "
       << fmt("%.0f", r.special_fwd) << " | " << fmt("%.0f", r.bytes_fwd) << " | "
       << fmt("%.0f", r.flops_adj) << " | " << fmt("%.0f", r.special_adj) << " | "
       << fmt("%.0f", r.bytes_adj) << " |\n";
  }
  os << "\n";
  os << "| backend | precision | threads | B | T | schedule | budget [MiB] | fwd Msteps/s (median "
        "/ best) | fwd+bwd "
        "Msteps/s (median / best) | bwd/fwd | recompute | fwd+bwd [ms/rollout] | fwd GFLOP/s, GB/s "
        "| fwd+bwd "
        "GFLOP/s, GB/s |";
  if (cuda)
    os << " kernel fwd Msteps/s | kernel fwd+bwd Msteps/s | copies [ms] | kernel fwd+bwd: % FP "
          "peak, % DRAM |";
  os << " scratch/rollout [B] | scratch/rollout K=1 [B] | peak RSS [MiB] |\n";
  os << "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|";
  if (cuda) os << "---:|---:|---:|---:|";
  os << "---:|---:|---:|\n";
  for (const Row& r : rows) {
    const double t_f = r.kernel_fwd_s >= 0 ? r.kernel_fwd_s : r.fwd_median_s;
    const double t_fb = r.kernel_fb_s >= 0 ? r.kernel_fb_s : r.fb_median_s;
    os << "| " << r.backend << " | " << r.precision << " | "
       << (r.threads > 0 ? std::to_string(r.threads) : "—") << " | " << r.batch << " | " << r.steps
       << " | " << r.schedule << " | " << (r.budget_mb > 0 ? fmt("%.4g", r.budget_mb) : "—")
       << " | " << fmt("%.3g", steps_per_s(r, r.fwd_median_s) * 1e-6) << " / "
       << fmt("%.3g", steps_per_s(r, r.fwd_best_s) * 1e-6) << " | "
       << fmt("%.3g", steps_per_s(r, r.fb_median_s) * 1e-6) << " / "
       << fmt("%.3g", steps_per_s(r, r.fb_best_s) * 1e-6) << " | "
       << fmt("%.2f", (r.fb_median_s - r.fwd_median_s) / r.fwd_median_s) << " | "
       << fmt("%.3f", r.recompute) << " | " << fmt("%.3g", 1e3 * r.fb_median_s / double(r.batch))
       << " | " << fmt("%.3g", r.flops_fwd * steps_per_s(r, t_f) * 1e-9) << ", "
       << fmt("%.3g", r.bytes_fwd * steps_per_s(r, t_f) * 1e-9) << " | "
       << fmt("%.3g", r.flops_fb() * steps_per_s(r, t_fb) * 1e-9) << ", "
       << fmt("%.3g", r.bytes_fb() * steps_per_s(r, t_fb) * 1e-9) << " |";
    if (cuda) {
      if (r.kernel_fwd_s >= 0) {
        const double peak_fp = r.precision == "float32" ? cs.peak_fp32_gflops : cs.peak_fp64_gflops;
        const double gflops = r.flops_fb() * steps_per_s(r, r.kernel_fb_s) * 1e-9;
        const double gbs = r.bytes_fb() * steps_per_s(r, r.kernel_fb_s) * 1e-9;
        os << " " << fmt("%.3g", steps_per_s(r, r.kernel_fwd_s) * 1e-6) << " | "
           << fmt("%.3g", steps_per_s(r, r.kernel_fb_s) * 1e-6) << " | "
           << fmt("%.1f", r.transfer_s * 1e3) << " | "
           << (peak_fp > 0 ? fmt("%.2g", 100 * gflops / peak_fp) : std::string("?")) << ", "
           << (cs.peak_bandwidth_gbs > 0 ? fmt("%.2g", 100 * gbs / cs.peak_bandwidth_gbs)
                                         : std::string("?"))
           << " |";
      } else {
        os << " — | — | — | — |";
      }
    }
    os << " " << r.scratch << " | " << r.scratch_k1 << " | " << fmt("%.0f", r.peak_rss_kb / 1024.0)
       << " |\n";
  }
  if (cuda && cs.available)
    os << "\nDevice ceilings: " << cs.device << ", " << cs.sm_count << " SMs at "
       << fmt("%.3g", cs.sm_clock_ghz) << " GHz: FP32 " << fmt("%.4g", cs.peak_fp32_gflops)
       << " GFLOP/s, FP64 " << fmt("%.4g", cs.peak_fp64_gflops) << " GFLOP/s, DRAM "
       << fmt("%.4g", cs.peak_bandwidth_gbs) << " GB/s.\n";
}

template <class S>
void bench_precision(const Options& opt, const ConfigScene& scene, BackendKind kind,
                     std::vector<Row>& rows) {
  const std::unique_ptr<BatchRunner> runner = scene.template runner<S>(kind);
  for (long B : opt.batches) {
    const double gb = host_bytes<S>(B, opt.steps, runner->nx(), runner->nu(), runner->np()) / 1e9;
    if (gb > opt.max_mem_gb) {
      std::cerr << "bench_rollout: stopping at B = " << B << ": about " << fmt("%.1f", gb)
                << " GB of host memory > --max-mem-gb " << opt.max_mem_gb << "\n";
      break;
    }
    for (const Schedule& q : schedules_for<S>(opt, runner->nx())) {
      Row r = bench_one<S>(opt, scene, *runner, B, q);
      std::cerr << r.backend << " " << r.precision << " B=" << B << " " << r.schedule << ": fwd "
                << fmt("%.3g", steps_per_s(r, r.fwd_median_s)) << " fwd+bwd "
                << fmt("%.3g", steps_per_s(r, r.fb_median_s)) << " rollout-steps/s, recompute "
                << fmt("%.3f", r.recompute) << "\n";
      rows.push_back(r);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"bench_rollout: batched rollout throughput, forward and forward+backward"};
  app.add_option("--backend", opt.backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--precision", opt.precision, "float32, float64 or both")
      ->check(CLI::IsMember({"float32", "float64", "both"}));
  auto* batches_opt =
      app.add_option("--batches", opt.batches, "batch sizes B, comma separated")->delimiter(',');
  app.add_option("--max-mem-gb", opt.max_mem_gb, "stop growing B past this host memory [GB]");
  auto* steps_opt =
      app.add_option("--steps", opt.steps, "horizon T (default: the config's simulation.steps)")
          ->check(CLI::PositiveNumber);
  auto* checkpoint_opt =
      app.add_option("--checkpoint", opt.checkpoints,
                     "checkpoint intervals K: sqrt, a number, or stored (the CPU keeps the whole "
                     "forward pass "
                     "within --store-forward-mb per thread, else K = sqrt), comma separated")
          ->delimiter(',');
  app.add_option("--store-forward-mb", opt.store_forward_mb,
                 "per-thread budget of --checkpoint stored [MiB]")
      ->check(CLI::PositiveNumber);
  app.add_option("--snapshots", opt.snapshots,
                 "binomial schedules: snapshot counts s, comma separated")
      ->delimiter(',');
  app.add_option("--memory-mb", opt.memory_mb,
                 "per-rollout scratch budgets [MiB], comma separated: uniform sqrt(T) if it fits, "
                 "else binomial")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  auto* config_opt = app.add_option("--config", opt.config_path,
                                    "take model, loss, x0 and θ from this steer config (default: "
                                    "bench/configs/projectile_throughput.json)")
                         ->check(CLI::ExistingFile);
  app.add_option("--threads", opt.threads, "CPU threads (0 = default)");
  app.add_option("--min-time", opt.min_time, "seconds of repeats per figure");
  app.add_option("--json", opt.json_path, "write results as JSON to this file");
  app.add_flag("--markdown", opt.markdown, "print a Markdown table on stdout");
  CLI11_PARSE(app, argc, argv);
  // --snapshots / --memory-mb alone measure only those schedules
  if (checkpoint_opt->count() == 0 && (!opt.snapshots.empty() || !opt.memory_mb.empty()))
    opt.checkpoints.clear();
  std::unique_ptr<ConfigScene> scene;
  try {
    scene = std::make_unique<ConfigScene>(steer::load_config(opt.config_path));
  } catch (const std::exception& e) {
    std::cerr << "bench_rollout: " << e.what() << "\n";
    return 1;
  }
  if (steps_opt->count() == 0) opt.steps = scene->c.steps;
  // the default batches (up to 2^20) suit the default scene, the worked example; a config named
  // with --config is usually heavier
  if (batches_opt->count() == 0 && config_opt->count() > 0) opt.batches = {1, 64, 1024};
  try {
    std::string note;
    const BackendKind kind = steer::resolve_backend(opt.backend, &note);
    if (!note.empty()) std::cerr << "bench_rollout: " << note << "\n";
    std::vector<Row> rows;
    const nlohmann::json model_info = scene->describe();
    if (opt.precision != "float64") bench_precision<float>(opt, *scene, kind, rows);
    if (opt.precision != "float32") bench_precision<double>(opt, *scene, kind, rows);

    std::ostringstream cmd;
    for (int i = 0; i < argc; ++i) cmd << (i ? " " : "") << argv[i];
    if (opt.markdown) print_markdown(rows, std::cout);
    if (!opt.json_path.empty()) {
      const steer::CudaStatus cs = steer::cuda_status();
      nlohmann::json j = {{"command", cmd.str()},
                          {"model", scene->c.model_type},
                          {"config", opt.config_path},
                          {"model_info", model_info},
                          {"cpu", cpu_model()},
                          {"cuda_device", cs.available ? cs.device : cs.reason},
                          {"cuda_ceilings",
                           {{"sm_count", cs.sm_count},
                            {"sm_clock_ghz", cs.sm_clock_ghz},
                            {"peak_fp32_gflops", cs.peak_fp32_gflops},
                            {"peak_fp64_gflops", cs.peak_fp64_gflops},
                            {"peak_bandwidth_gbs", cs.peak_bandwidth_gbs}}},
                          {"results", nlohmann::json::array()}};
      for (const Row& r : rows) j["results"].push_back(to_json(r));
      std::ofstream(opt.json_path) << j.dump(2) << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_rollout: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
