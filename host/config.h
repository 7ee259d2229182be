// An experiment as read from a JSON config: model, simulation settings, batch, loss,
// variables with bounds, optimizer, validation and output settings. Defaults live in
// the member initializers; parse_config() checks everything (DESIGN §8) and
// to_json() dumps the effective config into the artifact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "steer/loss.h"
#include "steer/models/projectile.h"

namespace steer {

// names and units of a model's state, control and parameter slots
struct ModelInfo {
  std::string type;
  std::vector<std::string> state_names, state_units;
  std::vector<std::string> control_names, control_units;
  std::vector<std::string> param_names, param_units;
  // the physical range of each slot: model keys, batch sweeps and draws, and variable
  // bounds are all checked against it
  std::vector<Range> state_ranges, param_ranges;
  int nx() const { return int(state_names.size()); }
  int nu() const { return int(control_names.size()); }
  int np() const { return int(param_names.size()); }
  int state_index(const std::string& n) const;    // −1 if absent
  int control_index(const std::string& n) const;  // −1 if absent
  int param_index(const std::string& n) const;    // −1 if absent
};

ModelInfo projectile_info(int dim);

// one optimization variable block: an x0 slot, a θ slot, or one control component over
// all T steps
struct VariableSpec {
  enum Kind { kInitialState, kParameter, kControl };
  std::string name;  // as written in the config ("x0.velocity.x", "theta.drag", "controls.x")
  Kind kind = kInitialState;
  int index = 0;       // state, parameter or control component index
  double lower = -1e300, upper = 1e300;
};

// per-rollout values of one slot: given explicitly (sweep) or drawn uniformly (randomize)
struct BatchOverride {
  std::string name;  // "x0.<state>" or "theta.<param>"
  bool is_state = true;
  int index = 0;
  std::vector<double> values;  // sweep: one per rollout
  double lo = 0, hi = 0;       // randomize: uniform in [lo, hi]
  bool random = false;
};

struct ValidationConfig {
  bool enabled = true;
  std::vector<std::string> at = {"initial", "final"};
  double epsilon = 1e-6;  // primary ε of the directional check (absolute, in variable units)
  std::vector<double> epsilon_sweep = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9};
  double tolerance = 1e-6;      // relative error bound for a pass
  double abs_tolerance = 1e-8;  // |∇L·d| below this is compared absolutely
  std::uint64_t seed = 12345;
  // max_k |E_k − E_0| / max_k KE_k in free motion: the integrator's energy error as a
  // fraction of the kinetic energy the motion exchanges (independent of the height datum)
  double energy_drift_bound = 0.01;
  double horizon_ratio_bound = 1e3;  // ‖λ_0‖/‖λ_seed‖ outside [1/bound, bound] is labelled
  int max_rollouts = 4096;           // rollouts checked (the first ones of the batch)
};

struct OptimizerConfig {
  std::string method = "none";  // none | gd | adam
  double learning_rate = 0.01;
  int iterations = 0;
  double beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8;
  int log_every = 10;  // loss history sampling
};

struct OutputConfig {
  std::string dir = "runs";
  int trajectory_stride = 1;      // JSON keeps every stride-th state; CSV sidecar keeps all
  int trajectory_rollouts = 8;    // rollouts whose trajectories are written
  int json_trajectory_points = 200;  // cap on states per rollout in the JSON
};

struct ExperimentConfig {
  nlohmann::json raw;  // the config as given
  std::string name = "experiment";
  std::string description;

  // model
  std::string model_type = "projectile";
  Projectile projectile;
  ModelInfo info;
  std::vector<double> x0;      // nominal initial state [nx]
  std::vector<double> theta;   // nominal parameters [np]
  std::vector<double> u_init;  // initial control, the same at every step [nu]

  // simulation
  double dt = 0.01;
  int steps = 100;
  std::string precision = "float64";
  int checkpoint_every = 0;  // 0 = ⌈√T⌉
  std::string backend = "auto";
  int threads = 0;
  double memory_limit_gb = 0;  // 0 = 80% of physical memory

  // batch
  int batch_size = 1;
  std::uint64_t seed = 1;
  std::vector<BatchOverride> overrides;

  Loss loss;
  nlohmann::json loss_json;  // effective loss description for the artifact
  std::vector<VariableSpec> variables;
  OptimizerConfig optimizer;
  ValidationConfig validation;
  OutputConfig output;

  int resolved_checkpoint() const;
  nlohmann::json to_json() const;  // effective config
};

// reads and validates; throws ConfigError naming the key path and the accepted range
ExperimentConfig parse_config(const nlohmann::json& j);
// reads a file (ConfigError if it is missing or not JSON) and parses it
ExperimentConfig load_config(const std::string& path);

}  // namespace steer
