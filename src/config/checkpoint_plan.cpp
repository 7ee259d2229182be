// The checkpoint schedule of a run (ExperimentConfig::checkpoint_plan): uniform every K steps,
// or binomial with as many snapshots as simulation.checkpoint_memory_mb holds.
#include <cmath>
#include <sstream>

#include "config/config.h"

namespace steer {

int ExperimentConfig::resolved_checkpoint() const {
  if (checkpoint_every > 0) return checkpoint_every;
  int k = int(std::ceil(std::sqrt(double(steps))));
  return k < 1 ? 1 : k;
}

CheckpointPlan ExperimentConfig::checkpoint_plan() const {
  const bool f32 = precision == "float32";
  const int nx = info.nx();
  auto scratch = [&](const RolloutShape& sh) {
    return f32 ? rollout_scratch_bytes<float>(sh, nx) : rollout_scratch_bytes<double>(sh, nx);
  };
  CheckpointPlan p;
  p.shape.steps = steps;
  p.shape.checkpoint_every = resolved_checkpoint();
  p.budget_mb = checkpoint_memory_mb;
  const double budget = std::floor(checkpoint_memory_mb * 1048576.0);  // [bytes]
  if (checkpoint_memory_mb > 0 && double(scratch(p.shape)) > budget) {
    const std::string key = "simulation.checkpoint_memory_mb";
    std::ostringstream need;
    need << "the uniform schedule with K = " << p.shape.checkpoint_every << " needs "
         << scratch(p.shape) << " bytes per rollout (" << double(scratch(p.shape)) / 1048576.0
         << " MiB)";
    if (checkpoint_every > 0) {
      need << ", more than " << key << " = " << checkpoint_memory_mb
           << " MiB; drop checkpoint_every to let the budget choose the binomial schedule, or "
              "raise the budget";
      config_fail("simulation.checkpoint_every", need.str());
    }
    // binomial: x_T, three working states and λ, λ_prev are fixed; each snapshot costs a state and
    // its index
    RolloutShape b = p.shape;
    b.schedule = CheckpointSchedule::kBinomial;
    b.snapshots = 0;
    const double fixed = double(scratch(b)),
                 per_snapshot = double(nx) * (f32 ? 4 : 8) + double(sizeof(int));
    const long long bytes = (long long)budget;
    const int s = f32 ? binomial_snapshots_within<float>(bytes, steps, nx)
                      : binomial_snapshots_within<double>(bytes, steps, nx);
    if (double(bytes) < fixed + 2 * per_snapshot) {
      const double least_mb = (fixed + 2 * per_snapshot) / 1048576.0;
      std::ostringstream m;
      m << checkpoint_memory_mb
        << " MiB holds fewer than the 2 snapshots of the smallest binomial schedule (" << need.str()
        << "; the binomial one needs " << fixed
        << " bytes for x_T, 3 working states and 2 adjoint vectors plus " << per_snapshot
        << " bytes per snapshot: a state of " << nx << " " << precision
        << " values and its step index); accepted range [" << least_mb << ", 1e6] MiB";
      config_fail(key, m.str());
    }
    b.snapshots = s;
    p.shape = b;
  }
  // the CPU backend's stored forward pass (rollout.h): per thread, and not where the user bounds
  // the memory per rollout
  if (checkpoint_memory_mb <= 0 && store_forward_mb > 0) {
    p.store_forward_mb = store_forward_mb;
    p.shape.store_forward_bytes = (long long)std::floor(store_forward_mb * 1048576.0);
  }
  if (p.shape.binomial()) {
    p.repetitions = binomial_reach(steps, p.shape.snapshot_slots()).r;
    p.recompute_steps = binomial_forward_steps(steps, p.shape.snapshot_slots());
  } else {
    p.repetitions = 1;
    p.recompute_steps = steps;  // each segment recomputed once from its checkpoint
  }
  p.recompute_factor = double(p.recompute_steps) / double(steps);
  p.scratch_bytes = scratch(p.shape);
  return p;
}

nlohmann::json CheckpointPlan::to_json() const {
  nlohmann::json j = {
      {"schedule", shape.binomial() ? "binomial" : "uniform"},
      {"repetitions", repetitions},
      {"recompute_steps", recompute_steps},
      {"recompute_factor", recompute_factor},
      {"scratch_bytes_per_rollout", scratch_bytes},
      {"memory_budget_mb", budget_mb > 0 ? nlohmann::json(budget_mb) : nlohmann::json()},
      {"cpu_store_forward_mb", store_forward_mb},
      {"cpu_store_forward_note",
       store_forward_mb > 0
           ? "the CPU backend keeps each rollout's whole forward pass (states and step tapes, per "
             "thread) when it fits this budget, and its backward sweep then recomputes nothing "
             "(timings.rollout_steps_recomputed_backward); the schedule above is the GPU's and the "
             "fallback's"
           : "off: the backward sweep recomputes from the checkpoints"}};
  if (shape.binomial())
    j["snapshots"] = shape.snapshot_slots();
  else
    j["checkpoint_every"] = shape.checkpoint_every;
  return j;
}

}  // namespace steer
