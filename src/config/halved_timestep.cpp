// The experiment at half its timestep over the same horizon, for the timestep check.
#include "config/config.h"
#include "models/registry.h"

namespace steer {

ExperimentConfig halved_timestep(const ExperimentConfig& c) {
  ExperimentConfig f = c;
  f.dt = c.dt / 2;
  f.steps = 2 * c.steps;
  model_of(f).set_dt(f, f.dt);
  f.loss.effort_weight = c.loss.effort_weight / 2;
  // the running site terms and the tracking table are sums over the steps too
  for (int t = 0; t < f.loss.n_site; ++t)
    if (f.loss.site_running[t]) {
      f.loss.site_weight[t] = c.loss.site_weight[t] / 2;
      f.loss.site_rot_weight[t] = c.loss.site_rot_weight[t] / 2;
    }
  bind_track_table(f);
  f.checkpoint_every = 0;
  f.checkpoint_memory_mb = 0;  // (store_forward_mb stays: the same bits either way)
  f.horizon_sweep.enabled = false;
  // a knot keeps its span of time: 2·hold half steps, so both problems have the same variables
  for (auto& v : f.variables) v.hold *= 2;
  if (f.policy.hold > 1) f.policy.hold *= 2;  // a held action too (controller.action_hold)
  return f;
}

}  // namespace steer
