// An experiment as read from a JSON config: model, simulation settings, batch, loss,
// variables with bounds, optimizer, validation and output settings. Defaults live in
// the member initializers; parse_config() checks everything (docs/config.md) and
// to_json() dumps the effective config into the artifact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/json_reader.h"
#include "config/model_slot.h"
#include "steer/controller.h"
#include "steer/loss.h"
#include "steer/rollout.h"

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
  // named groups of slots ("spring.stiffness" -> every spring's stiffness slot)
  std::map<std::string, std::vector<int>> state_groups, param_groups;
  int nx() const { return int(state_names.size()); }
  int nu() const { return int(control_names.size()); }
  int np() const { return int(param_names.size()); }
  int state_index(const std::string& n) const;    // −1 if absent
  int control_index(const std::string& n) const;  // −1 if absent
  int param_index(const std::string& n) const;    // −1 if absent
  // sizes the parameter tables for np slots, then names slot q (and adds it to a group
  // unless group is empty)
  void resize_params(int np);
  void set_param(int q, const std::string& name, const std::string& unit, Range r,
                 const std::string& group);
  // Controls in a file's own units (an imported MJCF's ctrl, one column per actuator,
  // "ctrl.<actuator>"): u = offset + gain · clamp(ctrl, lo, hi), gain [nu][n] row-major. Empty
  // for a model without them; controls.initial_file then takes the model's controls only.
  struct ForeignControls {
    std::vector<std::string> names;  // the columns, "ctrl.<actuator>"
    std::vector<double> lo, hi;      // the clamp of each column (±inf: none)
    std::vector<double> gain, offset;
    std::string note;  // how they map, for the effective config
  };
  ForeignControls foreign_controls;
};

// one optimization variable block: an x0 slot, a θ slot, or one control component over
// all T steps
struct VariableSpec {
  enum Kind { kInitialState, kParameter, kControl };
  std::string name;  // as written in the config ("x0.velocity.x", "theta.drag", "controls.x")
  Kind kind = kInitialState;
  int index = 0;  // state, parameter or control component index
  double lower = -1e300, upper = 1e300;
  // a control is piecewise constant: knot j sets u_k for steps k in [j·hold, (j+1)·hold), so
  // the block has ⌈T/hold⌉ entries and ∂L/∂knot_j = Σ_k ∂L/∂u_k over its steps (hold 1:
  // one entry per step)
  int hold = 1;
  // entries this block flattens to: ⌈T/hold⌉ knots for a control, 1 otherwise
  int length(int steps) const { return kind == kControl ? (steps + hold - 1) / hold : 1; }
  // a parameter variable that also sets this initial-state slot (a robot starts at rest in
  // its rest shape: its rest positions are its initial positions); −1 = none
  int tied_state = -1;
  // θ slots a parameter variable v also moves (variables.<name>.moves): slot j is
  // θ0_j + Σ_v a_vj (v − v0), θ0 and v0 the rollout's values before the variables, summed over
  // the variables that move it (a link's length moving the link below it and its geom's
  // centre; a left leg following the right), and ∂L/∂v gains Σ_j a_vj ∂L/∂θ_j
  std::vector<std::pair<int, double>> moves;
  // one value for every rollout of a group (variables.<name>.shared, batch.groups): the
  // optimizer sees one copy, whose loss is the group's weighted mean and whose gradient is the
  // weighted sum of the members' (src/problem/shared_problem.h)
  bool shared = false;
};

// per-rollout values of a slot or a group of slots: given explicitly (sweep, one value per
// rollout for every slot of the group) or drawn uniformly per rollout and slot (randomize):
// absolute in [lo, hi], or around the nominal value, relative (v (1 + U(−r, r))) or
// additive (v + U(−a, a))
struct BatchOverride {
  enum Draw { kSweep, kUniform, kRelative, kJitter };
  std::string name;  // "x0.<state or group>" or "theta.<param or group>"
  bool is_state = true;
  std::vector<int> indices;
  Draw draw = kSweep;
  std::vector<double> values;  // sweep: one per rollout
  double lo = 0, hi = 0;       // uniform bounds, or ±r / ±a in lo = −hi
};

struct ValidationConfig {
  bool enabled = true;
  std::vector<std::string> at = {"initial", "final"};
  double epsilon = 1e-6;  // primary ε of the directional check (absolute, in variable units)
  std::vector<double> epsilon_sweep = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9};
  double tolerance = 1e-6;  // relative error bound for a pass
  // |∇L·d| below this is compared absolutely: a pass then needs |fd − ∇L·d| ≤ tolerance ·
  // abs_tolerance (1e-12 by default), above the rounding floor of a gradient that vanishes at
  // an optimum while its terms (e.g. 3 x_T) stay of order one
  double abs_tolerance = 1e-6;
  std::uint64_t seed = 12345;
  // max_k |E_k − E_0| / max_k KE_k in free motion: the integrator's energy error as a
  // fraction of the kinetic energy the motion exchanges (independent of the height datum)
  double energy_drift_bound = 0.01;
  double horizon_ratio_bound = 1e3;  // the horizon ratio outside [1/bound, bound] is labelled
  // "state": ‖λ_0‖/‖λ_seed‖; "controls": ‖∂L/∂u_0‖/‖∂L/∂u_{T−1}‖ (models with controls)
  std::string horizon_measure = "state";
  double penetration_bound = 0;  // [m]; > 0: label rollouts whose contact point sinks deeper
  // label rollouts in which an element inverts or flattens (J = det F ≤ 0; models with
  // ModelDef::inversion_label): one forward pass keeping every state
  bool inversion_check = false;  // parse_config: true by default where the model measures it
  int max_rollouts = 4096;       // rollouts checked (the first ones of the batch)
  // checked rollouts whose per-rollout entries (FD, adjoint, sweep, labels) the artifact lists
  // in validation[].rollouts, the first ones; the counts, label totals and the timestep,
  // secant and float32 arrays cover every checked rollout whatever this is. Its own key, apart
  // from output.trajectory_rollouts: recording no trajectory must not hide the check's detail
  int listed_rollouts = 8;
  // float32 runs: the largest ‖g32 − g64‖/‖g64‖ of the run's own adjoint gradient against its
  // float64 twin's that still passes. 1e-2 keeps the descent direction (cosine ≥ 0.9999) and
  // is 9× or more above what smooth rollouts show (projectile 1.2e-5, DiffTaichi robots ≤ 1.1e-3,
  // free-swinging Panda 2.3e-4); chattering or chaotic rollouts exceed it by orders
  double float32_tolerance = 1e-2;
  // timestep_sensitive: the checked rollouts again at h/2 (2T steps, controls held over both
  // half steps); the label when ‖g_{h/2} − g_h‖/‖g_h‖ exceeds timestep_tolerance. A first-order
  // integrator's gradient changes by O(h): a few per cent where the motion is resolved, up to
  // ~0.15 for per-step controls whose gradient sits in the last steps (u_{T−1} reaches q_T as
  // h²/M at h and ¾h²/M at h/2: the Panda reach, 0.14–0.15, 0.02–0.07 without the last 5
  // steps); chatter, stiff contact and chaos give 0.4–1
  bool timestep_check = true;
  double timestep_tolerance = 0.3;
  // chatter: a velocity component that turns back at more than this fraction of the steps
  // (VelocityReversals) oscillates with a period of ≤ 2/fraction steps (8 at 0.25), which the
  // timestep does not resolve; 0 turns the count off
  double chatter_fraction = 0.25;
  // secant_mismatch (src/validate/validator.h, SecantCheckConfig): the gradient against a
  // secant of the loss over a wide ε on contact rollouts; ε in the direction's scaled units
  bool secant_check = true;
  double secant_epsilon = 0.05;
  double secant_tolerance = 0.2;
  // what the chatter label's detail suggests for this model (set by parse_config; empty: nothing)
  std::string chatter_remedy;
};

struct OptimizerConfig {
  std::string method = "none";  // none | gd | adam
  double learning_rate = 0.01;
  int iterations = 0;
  double beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8;
  // gd/adam step size over the run, from learning_rate at step 0 to learning_rate_final at
  // the last of `iterations` steps: constant (learning_rate_final unused), cosine
  // η_t = η_f + (η_0 − η_f)·½(1 + cos(π t/(N−1))), or exponential η_t = η_0 (η_f/η_0)^(t/(N−1))
  std::string lr_schedule = "constant";
  double learning_rate_final = 0;
  // gd/adam: a rollout's gradient longer than this (L2, in the optimized variables) is
  // scaled down to it before the step; 0 = no clipping
  double gradient_clip = 0;
  // gd: each row steps η g/(‖g‖ + 10⁻⁶), a step of length η whatever the gradient's size
  // (DiffTaichi's mass_spring.py update, η = 0.2)
  bool normalize_gradient = false;
  int log_every = 10;  // loss history sampling
  // optimize z = (v − lower)/(upper − lower) ∈ [0, 1] instead of v, so one step size suits
  // variables of different units (stiffness in N/m next to actuation weights)
  bool normalized = false;
  // the black-box methods (cmaes, ga: optimizer.sigma0, population, max_rollouts)
  double cmaes_sigma0 = 0.3;         // CMA-ES's initial step, the GA's initial spread [variable
                                     // units, or normalized]
  int cmaes_population = 0;          // λ; 0 = 4 + ⌊3 ln n⌋ (CMA-ES), 4 times that (GA)
  long long cmaes_max_rollouts = 0;  // 0 = iterations · λ
  std::uint64_t seed = 1;
  // optimizer.window: train over windows of window_steps steps (0 = the whole horizon), one
  // step of the optimizer per window, each world's state carried from one window into the next
  // and reset to its start at the horizon's end or when a window_resets condition holds
  // (src/problem/windowed_problem.h)
  int window_steps = 0;
  struct WindowReset {
    int slot = 0;       // state slot
    bool below = true;  // reset when x[slot] < value (false: when x[slot] > value)
    double value = 0;   // in the slot's unit
    std::string name;   // the state's name, for messages and the artifact
  };
  std::vector<WindowReset> window_resets;
  // optimizer.window.terminal: Σ ½ w (x_e[slot] − target)² at each window's end x_e, a cost of
  // the training alone (a hand-written stand-in for the value of the horizon's rest); the
  // horizon's loss, its validation and the report leave it out
  struct WindowTerminal {
    int slot = 0;
    double target = 0, weight = 0;
    std::string name;
  };
  std::vector<WindowTerminal> window_terminal;
};

struct OutputConfig {
  std::string dir = "runs";
  int trajectory_stride = 1;         // JSON keeps every stride-th state; CSV sidecar keeps all
  int trajectory_rollouts = 8;       // rollouts whose trajectories are written
  int json_trajectory_points = 200;  // cap on states per rollout in the JSON
};

// `steer compare`: gradient-based optimization against CMA-ES on the same rollout, both in
// variables normalized to [0, 1] by their bounds
// a continuation phase of `steer compare`'s gradient side: the same robot and loss on an
// easier problem (a shorter horizon, a smoother ground) before the real one
struct ContinuationPhase {
  int steps = 0;                // horizon [steps]; 0 = simulation.steps
  double ground_smoothing = 0;  // ground smoothing width [m]; 0 = the model's
  int iterations = 1;           // gradient steps in this phase (per start)
  int evaluate_every = 5;       // the iterate is scored on the real problem every n steps
};

struct CompareConfig {
  std::string gradient_method = "adam";  // adam | gd | lbfgsb
  double learning_rate = 0.02;           // in normalized units
  int iterations = 200;                  // gradient steps per start on the real problem
  double beta1 = 0.9, beta2 = 0.999;     // Adam's moment decays
  std::string lr_schedule = "constant";  // constant | cosine | exponential, over `iterations`
  double learning_rate_final = 0;        // the schedule's last step size (normalized units)
  double gradient_clip = 0;              // per start, L2 in normalized units; 0 = off
  int starts = 1;                        // gradient starts run as one batch; costs add up
  double start_spread = 0.3;             // starts 1.. drawn in start ± spread (normalized)
  std::vector<ContinuationPhase> continuation;  // run in order before the real problem
  long long cmaes_rollouts = 50000;
  double cmaes_sigma0 = 0.2;  // normalized units
  int cmaes_population = 0;   // 0 = 4 + ⌊3 ln n⌋
  // the genetic algorithm's side (optim/ga.h): its budget (0: no GA side), the spread of its
  // initial population around the start and its population (0 = 4 (4 + ⌊3 ln n⌋))
  long long ga_rollouts = 0;
  double ga_sigma0 = 0.2;  // normalized units
  int ga_population = 0;
  std::uint64_t seed = 1;
  // independent repetitions of the whole comparison: repeat r draws the batch with
  // batch.seed + r (its rollout 0 is both methods' start) and seeds CMA-ES with seed + r, so
  // one chaotic run does not decide the ratio; the report gives each repeat and the median
  int repeats = 1;
};

// the checkpoint schedule of a run (docs/design.md, Checkpointing): uniform every K steps, or
// binomial with s snapshots when simulation.checkpoint_memory_mb cannot hold the uniform schedule
struct CheckpointPlan {
  RolloutShape shape;             // steps, schedule, K (uniform) or s (binomial)
  int repetitions = 1;            // r: most recomputes of one step in the backward sweep
  long long recompute_steps = 0;  // forward steps one backward sweep executes
  double recompute_factor = 0;    // recompute_steps / T
  long long scratch_bytes = 0;    // per rollout: stored states, λ, λ_prev, index stack
  double budget_mb = 0;           // simulation.checkpoint_memory_mb, 0 = none
  double store_forward_mb =
      0;  // simulation.store_forward_mb as applied (0 under a checkpoint budget)
  nlohmann::json to_json() const;
};

// `perturb`: after optimization the optimum is re-evaluated with parameter slots scaled by
// (1 + r) for each r; a rollout whose loss rises by more than (factor − 1)|L| + absolute is
// labelled narrow_valley (the optimum lies in a valley the simulator's nominal values carve)
struct PerturbConfig {
  bool enabled = false;
  std::string name;          // "theta.<param or group>"
  std::vector<int> indices;  // θ slots
  std::vector<double> relative = {-0.2, 0.2};
  double factor = 2.0;
  double absolute = 1e-12;
};

// `horizon_sweep`: the experiment's gradient and its validation at several horizons
struct HorizonSweepConfig {
  bool enabled = false;
  std::vector<int> steps;
};

// One source of the loss's tracking table (loss.reference, loss.observations): columns of
// values at times, each column a state slot or one coordinate of a site, interpolated
// linearly to the steps (build_track_table)
struct TrackSource {
  std::string key;                 // the config key ("loss.reference", "loss.observations")
  std::string file;                // as written in the config; "" for values given inline
  std::string digest;              // the file's FNV-1a 64 (DataTable::digest)
  std::vector<std::string> names;  // per column: a state slot or site.<name>.<x|y|z>
  std::vector<std::string> units;  // per column
  std::vector<int> channel;        // per column: Loss::track_channel's code
  std::vector<double> weight;      // per column: W of ½ W (y − R)² at a step with a value
  std::vector<double> time;        // [rows] strictly increasing [s]
  std::vector<double> values;      // [rows][columns]; NaN: not observed
  // between two observation times: interpolate linearly (true), or leave the steps there
  // unobserved (false: only steps at an observation time count)
  bool interpolate = true;
};

struct ExperimentConfig {
  nlohmann::json raw;  // the config as given
  // the folder relative data file names are read from: the config's own (load_config), or
  // the working folder for a config given as JSON ("")
  std::string base_dir;
  std::string name = "experiment";
  std::string description;

  // model: model_type names its entry in the registry (src/models/registry.h); the model's
  // own part of the config (its struct and what else its folder parses) is in `model`, as the
  // setup type of its folder (src/models/<name>/<name>_setup.h), filled by its parse_model hook
  std::string model_type;  // set by parse_config to a registered name
  ModelSlot model;
  ModelInfo info;
  std::vector<double> x0;      // nominal initial state [nx]
  std::vector<double> theta;   // nominal parameters [np]
  std::vector<double> u_init;  // initial control, the same at every step [nu]
  // controls.initial_file: per-step initial controls [u_rows][nu] for the steps k·u_dt, k =
  // 0..u_rows − 1 (the last row held to the horizon); u_rows = 0: u_init at every step
  std::vector<double> u_steps;
  int u_rows = 0;
  double u_dt = 0;
  std::string u_file, u_digest;  // as written, and the file's FNV-1a 64
  // the file's columns when they are the model's foreign controls (ModelInfo::ForeignControls,
  // mapped to u_steps); empty when they name the model's own
  std::vector<std::string> u_columns;

  // simulation
  double dt = 0.01;
  // the timestep a model file gives (an imported MJCF's option timestep) [s]; 0 = none. It is
  // the default of simulation.dt, which the config may still set.
  double model_dt = 0;
  int steps = 100;
  std::string precision = "float64";
  int checkpoint_every = 0;         // 0 = ⌈√T⌉
  double checkpoint_memory_mb = 0;  // per-rollout budget for stored states [MiB]; 0 = none
  // CPU backend: per-thread memory for a stored forward pass (every state and step tape, so the
  // backward sweep recomputes nothing) [MiB]; 0 = always recompute; unused under
  // checkpoint_memory_mb
  double store_forward_mb = 256;
  std::string backend = "auto";
  int threads = 0;
  double memory_limit_gb = 0;  // 0 = 80% of physical memory

  // batch
  int batch_size = 1;
  std::uint64_t seed = 1;
  std::vector<BatchOverride> overrides;
  // the worlds shared variables serve (batch.groups, batch.weights): rollouts
  // [g·B/G, (g+1)·B/G) form group g; a group's loss is Σ w_b L_b / Σ w_b over its rollouts
  // (world_weights empty: equal weights)
  int share_groups = 1;
  std::vector<double> world_weights;
  bool has_shared() const {
    for (const auto& v : variables)
      if (v.shared) return true;
    return false;
  }

  // controller (src/config/controller_config.cpp): a feedback policy inside the step
  // (steer/controller.h); its θ slots (controller.*) follow the model's, from policy.theta0
  bool has_controller = false;
  Policy policy;
  nlohmann::json controller_json;  // the effective section

  Loss loss;
  nlohmann::json loss_json;  // effective loss description for the artifact
  // the tracking table's sources and the timestep their weights are per (the running sums
  // Σ_k over T + 1 steps scale with 1/dt: a table built for another dt scales W by dt/track_dt;
  // observations without interpolation are a sum over their times and keep W)
  std::vector<TrackSource> tracking;
  double track_dt = 0;
  // the table loss.track points at, built for this config's dt and steps (bind_track_table);
  // shared by copies of the config, which never change it in place
  std::shared_ptr<const std::vector<double>> track_table;
  std::vector<VariableSpec> variables;
  OptimizerConfig optimizer;
  ValidationConfig validation;
  OutputConfig output;
  CompareConfig compare;
  bool has_compare = false;
  PerturbConfig perturb;
  HorizonSweepConfig horizon_sweep;
  // a rollout succeeds when every terminal term's |x_T[i] − target| ≤ this (0 = not reported)
  double success_tolerance = 0;
  // loss.terminal's terms are loss.terminal_* [0, n_terminal_quadratic); loss.terminal_linear's
  // follow, two per term (parse_terminal_linear)
  int n_terminal_quadratic = 0;
  // θ slots scaled after the batch is built (the perturbation check's re-evaluation)
  std::vector<std::pair<int, double>> theta_scale;

  // the model's setup as T (e.g. ProjectileSetup); std::logic_error naming the expected and
  // the held model when this config is another model's
  template <class T>
  T& model_state() {
    return model.get<T>();
  }
  template <class T>
  const T& model_state() const {
    return model.get<T>();
  }

  int resolved_checkpoint() const;
  // the schedule for T, nx, precision and the memory budget; ConfigError when the budget
  // cannot hold the smallest schedule or the given checkpoint_every
  CheckpointPlan checkpoint_plan() const;
  nlohmann::json to_json() const;  // effective config
};

// the slots named by "x0.<name>" / "theta.<name>" (a slot or a group); ConfigError at path
std::vector<int> resolve_slots(const ModelInfo& info, const std::string& path,
                               const std::string& name, bool& is_state);

// the longest `name` accepted [bytes]: the run folder is named name-<UTC time>[-NNN] and
// written first as .<that>.tmp-<host>-<pid>, which must stay under NAME_MAX (255 bytes) with a
// host name of up to 64 bytes
constexpr std::size_t kMaxNameLength = 100;

// The host memory a run needs [bytes], by what it is for; parse_config refuses a config whose
// total exceeds simulation.memory_limit_gb (default 80% of physical memory), naming the key of
// the largest part
struct MemoryEstimate {
  double batch = 0;        // batch arrays and gradients of every problem alive at once, the
                           // optimizer's and validator's copies, per-thread checkpoint scratch
  double trajectory = 0;   // the recorded trajectories: states, CSV and JSON text
  double penetration = 0;  // every state of the checked rollouts (validation.penetration_bound)
  double inversion = 0;    // every state of the checked rollouts (validation.inversion_check)
  double total() const;
};
MemoryEstimate estimate_memory(const ExperimentConfig& c);
// ConfigError when estimate_memory(c)'s total exceeds the limit, naming the key of the largest
// part and what lowers it (parse_config's last check)
void check_memory(const ExperimentConfig& c);

// reads and validates; throws ConfigError naming the key path and the accepted range (an
// nlohmann exception from a direct read becomes a ConfigError too); data files the config
// names are read relative to base_dir
ExperimentConfig parse_config(const nlohmann::json& j);
ExperimentConfig parse_config(const nlohmann::json& j, const std::string& base_dir);
// the absolute folder c's relative file names are read from (base_dir, or the working folder
// when it is empty), as the artifact records it so that `steer report` can parse the config again
std::string absolute_config_folder(const ExperimentConfig& c);

// The tracking table of c.tracking for timestep dt and `steps` steps: rows k = 0..steps at
// t_k = k·dt, per channel (states first, then sites, a site's coordinates adjacent) the
// reference interpolated linearly between the source's times and the weight
// W = w·dt/c.track_dt where both neighbouring values are observed, else 0 (also outside the
// source's time span). A source without interpolation ("none") weighs only the steps at its
// observation times, with W = w at any dt; at a dt below c.track_dt only the steps that are also
// steps at c.track_dt, so the timestep check's h/2 run sums the same observations as the run.
// Sets loss's n_track, track_rows, track_channel; loss.track is the caller's to point at table.
void build_track_table(const ExperimentConfig& c, double dt, int steps, Loss& loss,
                       std::vector<double>& table);
// c.loss.track at a table for c.dt and c.steps, held by c.track_table (nothing without tracking)
void bind_track_table(ExperimentConfig& c);

// the same experiment at half the timestep over the same horizon: dt/2 (in the config and in
// every model), 2T steps, the control-effort weight halved (Σ over 2T half steps of ½ w |u|²
// with each u_k held twice is twice the sum at h), the checkpoint interval back to ⌈√(2T)⌉ and
// no memory budget; used by the timestep check (HalfStepProblem, validator)
ExperimentConfig halved_timestep(const ExperimentConfig& c);
// model.include: merges the model keys of a JSON file (relative to base_dir) into model,
// the config's own keys winning, and records the file as model.included_from. The file is read
// with the reader's caps (config/json_text.h) and may not include another (one level).
nlohmann::json expand_includes(const nlohmann::json& j, const std::string& base_dir);
// the config's JSON text parsed with the reader's caps: nesting depth, duplicate keys, every
// parser error as a ConfigError (source names the text in messages)
nlohmann::json read_config_text(const std::string& text, const std::string& source);
// reads a file (at most kMaxConfigBytes; ConfigError if it is missing, too large or not JSON),
// expands its include (not the config itself, no nesting) and parses it
ExperimentConfig load_config(const std::string& path);

}  // namespace steer
