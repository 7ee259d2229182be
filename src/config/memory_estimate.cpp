// The host memory a run needs (estimate_memory) and parse_config's refusal of a run whose
// estimate exceeds simulation.memory_limit_gb (check_memory).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include <unistd.h>

#include "config/config.h"

namespace steer {

int cpu_default_threads();  // src/backend/backend.cpp: the CPU backend's default thread count

double MemoryEstimate::total() const { return batch + trajectory + penetration + inversion; }

// Host bytes by where they go (src/problem/sim_problem.h, src/experiment/run_setup.cpp and
// run_report.cpp, src/validate/). One SimProblem of b rollouts over T steps in s-byte scalars
// holds its nominal and working batches and the backend's gradient arrays, 3 s b (nx + T nu +
// np), plus its start and gradient over the nv variable entries; it is built from a float64
// batch. The problems alive at once: the run's; its normalized and CMA-ES population copies;
// under validation the float64 twin of a float32 run and the half-step problem (2T steps), and
// their copies cut to validation.max_rollouts; one horizon-sweep or perturbation problem at a
// time. Each CPU thread keeps a SIMD pack's checkpoints and stored forward pass. The recorded
// trajectory is held as the backend's states, a float64 copy, its CSV text (stream and string,
// ~20 bytes a number and a row's step and time) and its JSON (a 16-byte node and ~24 bytes of
// text a number, in the tree and in the artifact's text).
MemoryEstimate estimate_memory(const ExperimentConfig& c) {
  MemoryEstimate e;
  const double B = c.batch_size, T = c.steps, nx = c.info.nx(), nu = c.info.nu(), np = c.info.np();
  const bool f32 = c.precision == "float32";
  const double sz = f32 ? 4 : 8;
  double nv = 0;
  for (const auto& v : c.variables) nv += v.length(c.steps);
  auto row = [&](double steps) { return nx + steps * nu + np; };
  auto problem = [&](double b, double steps, double s) {
    return b * (3 * s * row(steps) + 8 * row(steps) + 16 * nv + 4 * 8 * nx);
  };
  // the run's problem; the evaluations, the optimizer's moments, best and trial iterates
  e.batch = problem(B, T, sz) + 8 * B * (8 * nv + 16);
  if (c.optimizer.normalized) e.batch += problem(B, T, sz);
  if (c.optimizer.method == "cmaes" || c.optimizer.method == "ga") {
    // the GA's default population is 4 times CMA-ES's (optim/ga.h)
    const double lambda = c.optimizer.cmaes_population > 0
                              ? c.optimizer.cmaes_population
                              : (c.optimizer.method == "ga" ? 4 : 1) *
                                    (4 + std::floor(3 * std::log(std::max(nv, 1.0))));
    e.batch += problem(lambda, T, sz) + 8 * lambda * nv * 4;
  }
  // the tracking table (loss.reference / loss.observations): 2 doubles per step and channel in
  // the config, the run's problem and, under validation, the half-step problem (2T steps)
  double channels = 0;
  for (const auto& src : c.tracking) channels += double(src.channel.size());
  e.batch += 16 * channels * ((T + 1) * 2 + (2 * T + 1));
  const double n = std::min<double>(B, c.validation.max_rollouts);
  const double lanes = 64 / sz;  // rollouts in one SIMD pack (a 512-bit register of scalars)
  if (c.validation.enabled && !c.variables.empty()) {
    if (f32) e.batch += problem(B, T, 8);
    if (c.validation.timestep_check) e.batch += problem(B, 2 * T, 8);
    if (n < B)
      e.batch += problem(n, T, 8) * (f32 ? 2 : 1) +
                 (c.validation.timestep_check ? problem(n, 2 * T, 8) : 0);
    // the chatter count keeps every state of ≤ 64 MiB of rollouts at a time
    if (c.validation.chatter_fraction > 0)
      e.batch += std::min(64.0 * 1048576.0, n * (T + 1) * nx * sz) + lanes * row(T) * sz;
    if (c.validation.penetration_bound > 0)
      e.penetration = n * (T + 1) * nx * (sz + 8) + n * row(T) * sz;
    if (c.validation.inversion_check) e.inversion = n * (T + 1) * nx * (sz + 8) + n * row(T) * sz;
  }
  double one_at_a_time = 0;
  if (c.horizon_sweep.enabled)
    for (int h : c.horizon_sweep.steps)
      one_at_a_time = std::max(one_at_a_time, problem(B, h, sz) + (f32 ? problem(B, h, 8) : 0));
  if (c.perturb.enabled) one_at_a_time = std::max(one_at_a_time, problem(B, T, sz));
  e.batch += one_at_a_time;
  // per thread: a pack's checkpoint scratch and its stored forward pass (at least its states)
  const CheckpointPlan plan = c.checkpoint_plan();
  const double threads = c.threads > 0 ? c.threads : std::max(1, cpu_default_threads());
  const double workers = std::min(threads, std::ceil(B / lanes));
  e.batch +=
      workers * (lanes * double(plan.scratch_bytes) +
                 std::min(double(plan.shape.store_forward_bytes), lanes * (T + 1) * nx * sz));
  // the recorded trajectories (output.trajectory_rollouts every output.trajectory_stride steps)
  const double ntraj = std::min<double>(B, c.output.trajectory_rollouts);
  const double slots = std::floor(T / c.output.trajectory_stride) + 1;
  const double json_slots = std::min<double>(slots, c.output.json_trajectory_points + 1);
  e.trajectory = ntraj * (slots * nx * (sz + 8) + row(T) * sz + 2 * slots * (20 + 20 * nx) +
                          json_slots * nx * (16 + 2 * 24));
  // x_0 and x_T of every rollout (analyses) and of the listed ones (the report)
  e.batch += 2 * B * 2 * nx * (sz + 8);
  return e;
}

void check_memory(const ExperimentConfig& c) {
  const MemoryEstimate e = estimate_memory(c);
  double limit_gb = c.memory_limit_gb;
  if (limit_gb <= 0) {
    const double phys = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    limit_gb = phys > 0 ? 0.8 * phys / 1e9 : 1e9;
  }
  const double need_gb = e.total() / 1e9;
  if (!(need_gb > limit_gb)) return;
  auto gb = [](double bytes) {
    std::ostringstream s;
    s << std::setprecision(3) << bytes / 1e9 << " GB";
    return s.str();
  };
  struct Part {
    double bytes;
    std::string key, what, advice;
  };
  const Part parts[] = {
      {e.batch, "simulation.steps",
       "batch.size × simulation.steps " + gb(e.batch) +
           " (batches, gradients and the optimizer's and validator's copies, per-thread "
           "checkpoints)",
       "lower batch.size or simulation.steps"},
      {e.trajectory, "output.trajectory_rollouts",
       "trajectory recording " + gb(e.trajectory) +
           " (output.trajectory_rollouts × simulation.steps / output.trajectory_stride "
           "states, their CSV and JSON text)",
       "lower output.trajectory_rollouts or raise output.trajectory_stride"},
      {e.penetration, "validation.penetration_bound",
       "the penetration check " + gb(e.penetration) +
           " (every state of validation.max_rollouts rollouts)",
       "lower validation.max_rollouts or set validation.penetration_bound to 0"},
      {e.inversion, "validation.inversion_check",
       "the element inversion check " + gb(e.inversion) +
           " (every state of validation.max_rollouts rollouts)",
       "lower validation.max_rollouts or set validation.inversion_check to false"}};
  const Part* top = &parts[0];
  std::string list;
  for (const Part& q : parts) {
    if (q.bytes > top->bytes) top = &q;
    if (q.bytes >= 0.01 * e.total()) list += (list.empty() ? "" : ", ") + q.what;
  }
  std::ostringstream m;
  m << (top == &parts[0] ? "batch.size × simulation.steps needs" : "the run needs") << " about "
    << gb(e.total()) << " of host memory, more than the limit of " << std::setprecision(3)
    << limit_gb << " GB (simulation.memory_limit_gb, default 80% of physical memory): " << list
    << "; " << top->advice;
  config_fail(top->key, m.str());
}

}  // namespace steer
