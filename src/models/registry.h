// The model registry: everything the pipeline needs to know about one model type, in one
// table. Config parsing, the effective config, the problem factory, the half-timestep twin,
// the validation labels and the reports ask the registry for the model's hooks; none of them
// compares the model type by name. A model lives in src/models/<name>/ and appears here as
// one entry of registered_models() (src/models/registry.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "steer/batch.h"

namespace steer {

class BatchRunner;
struct RecordedTrajectory;
struct RunnerOptions;

// a physically invalid model value (check_physical): where it is written and what it violates
struct PhysicalViolation {
  std::string key;  // the config key that gives it ("model.bodies[3].fullinertia")
  std::string
      what;  // the violated condition with the values ("inertia is not positive definite: …")
  std::vector<int>
      slots;  // the θ slots it is made of, so that a batch draw that reached it can be named
};

struct ModelDef {
  std::string name;  // the value of model.type

  // --- required hooks ---
  // model.* -> the model's setup in c.model (c.model.emplace<its Setup>(), the type in its
  // folder's <name>_setup.h), c.info (slot names, units, ranges, groups) and the nominal θ;
  // ConfigError naming the key path
  void (*parse_model)(const JsonObject& m, ExperimentConfig& c) = nullptr;
  // initial_state.* -> c.x0 (and θ slots tied to the initial state); called after
  // simulation.*, so the model's dt is set
  void (*parse_initial_state)(const JsonObject& s, ExperimentConfig& c) = nullptr;
  // effective_config.model: the model's own keys next to "type" and "parameters"
  void (*model_json)(const ExperimentConfig& c, nlohmann::json& m) = nullptr;
  // the timestep into the model's struct in its setup [s] (parse, and halved_timestep's dt/2)
  void (*set_dt)(ExperimentConfig& c, double dt) = nullptr;
  // the model of c in c.precision on `backend`, behind BatchRunner (src/problem/batch_runner.h):
  // make_model_runner (model_runner.h) over the folder's model struct and RunnerHooks. The CLI's
  // problem, Python and the benchmark run batches through it. The CUDA instantiations are in
  // kernels/rollout_<model>_<precision>.cu; a struct without them is refused on cuda.
  std::unique_ptr<BatchRunner> (*make_runner)(const ExperimentConfig& c, BackendKind backend,
                                              const RunnerOptions& options) = nullptr;

  // --- optional hooks (nullptr / false: the model does not offer it) ---
  // what the chatter label suggests; smaller_dt is the generic advice (nullptr: only that)
  std::string (*chatter_remedy)(const ExperimentConfig& c, const std::string& smaller_dt) = nullptr;
  // loss.landing: the number D of position slots 0 … D−1, slot 1 vertical (nullptr: no landing
  // loss)
  int (*landing_dims)(const ExperimentConfig& c) = nullptr;
  // loss.com_displacement.axis: a message when the axis (index 0, 1, 2 for x, y, z) is not
  // offered, empty when it is (nullptr: every axis)
  std::string (*com_axis_error)(const ExperimentConfig& c, const std::string& axis,
                                int index) = nullptr;
  // after variables.*: ties parameter variables to initial-state slots (VariableSpec::tied_state)
  void (*tie_variables)(ExperimentConfig& c) = nullptr;
  // after the batch's sweeps and draws: state slots that follow drawn parameters
  void (*finish_batch)(const ExperimentConfig& c, Batch<double>& b) = nullptr;
  // Physical validity beyond each slot's own range (docs/config.md, "Physical validity"): a
  // condition that ties several θ slots together (an inertia tensor positive definite and within
  // the triangle inequality; a spring's rest length from its ends' rest positions). θ [np] is
  // the nominal θ or one rollout's; fills v with the first violation and returns false, true
  // when every value is valid. Parsing refuses a nominal violation, build_batch a drawn one.
  bool (*check_physical)(const ExperimentConfig& c, const double* theta,
                         PhysicalViolation& v) = nullptr;
  // the model's named points in its site order (s of site_position): loss.sites and the
  // site.<name>.<x|y|z> columns of loss.reference / loss.observations name them (nullptr: the
  // model has no sites, and those keys are refused)
  std::vector<std::string> (*site_names)(const ExperimentConfig& c) = nullptr;
  // the world positions [m] of those sites at state x with parameters θ: 3 per site, in
  // site_names' order (run's and compare's trajectory.csv columns site.<name>.x|y|z_m)
  void (*site_positions)(const ExperimentConfig& c, const double* theta, const double* x,
                         double* out) = nullptr;
  // named linear combinations of state slots that loss.reference and loss.observations take as
  // columns (an articulated model's fixed tendon lengths, "tendon.<name>", Σ_j c_j q_j): each
  // with its unit and its terms (state slot, coefficient); `refused` non-empty: a name the
  // model knows but cannot offer as a column, and why (a spatial tendon). nullptr: none
  struct LinearColumn {
    std::string name, unit, refused;
    std::vector<std::pair<int, double>> terms;
  };
  std::vector<LinearColumn> (*linear_columns)(const ExperimentConfig& c) = nullptr;
  // quantities of the model that run's and compare's trajectory.csv report after the sites,
  // each a column named with its unit (an articulated model's tendon.<name>.length_<unit>), and
  // their values at state x with parameters θ, in output_columns' order (nullptr: none)
  std::vector<std::string> (*output_columns)(const ExperimentConfig& c) = nullptr;
  void (*output_values)(const ExperimentConfig& c, const double* theta, const double* x,
                        double* out) = nullptr;
  // report.html's drawing of the motion from the recorded states, as src/experiment/report_scene.h
  // describes it (nullptr: the page says that this model draws nothing, and shows the rest)
  nlohmann::json (*report_scene)(const ExperimentConfig& c, const nlohmann::json& artifact,
                                 const RecordedTrajectory& tr, int max_frames) = nullptr;
  // what makes the model's step read its step index k (the time k·h), as a message naming the
  // config key, empty when the step does not; optimizer.window, whose windows restart k at 0, is
  // refused with it (nullptr: the step never reads k)
  std::string (*step_reads_time)(const ExperimentConfig& c) = nullptr;
  // validation.penetration_bound: Problem::max_penetration measures this model's contact depth
  bool penetration_label = false;
  // validation.inversion_check: Problem::min_volume_ratio measures this model's element volume
  // ratios J = det F (the inverted_element label)
  bool inversion_label = false;
  // run and compare report the centre of mass's travel along x before and after optimization
  // (the figure of merit of a walking robot)
  bool reports_com_travel_x = false;
  // the `controller` section (src/config/controller_config.cpp) drives the model's controls; its
  // make_runner then runs Controlled<its struct> (steer/controller.h) when c.has_controller
  bool accepts_controller = false;
  // controller.action_hold > 1 (Controlled<its struct>::kActionHold): its controlled step holds
  // an action for n steps
  bool holds_controller_actions = false;
};

// every registered model, in the order messages list them
const std::vector<const ModelDef*>& registered_models();
// the names of the registered models, or of those for which has(def) holds, joined by ", "
std::string model_names(bool (*has)(const ModelDef&) = nullptr);
// nullptr when no model has this name
const ModelDef* find_model(const std::string& name);
// the config's model; std::invalid_argument when c.model_type is not registered (a config
// from parse_config always is)
const ModelDef& model_of(const ExperimentConfig& c);

// The registered models, in the order messages list them: the one line a new model adds.
// Each name N stands for the registration `const ModelDef& N_model()` that its folder
// src/models/N/ defines. A model with a SIMD path also lists its struct in packed_models.h.
#define STEER_REGISTERED_MODELS(X) X(projectile) X(mass_spring) X(articulated) X(fem)

// Models a build adds from outside src/models (the test-only model, tests/models/oscillator):
// the same list, one X(N) each, in a header the build names with STEER_EXTRA_MODELS_HEADER
// (tests/models/oscillator/CMakeLists.txt); registry.cpp appends them to the registered models.
#ifdef STEER_EXTRA_MODELS_HEADER
#include STEER_EXTRA_MODELS_HEADER
#endif
#ifndef STEER_EXTRA_MODELS
#define STEER_EXTRA_MODELS(X)
#endif

#define STEER_DECLARE_MODEL(name) const ModelDef& name##_model();
STEER_REGISTERED_MODELS(STEER_DECLARE_MODEL)
STEER_EXTRA_MODELS(STEER_DECLARE_MODEL)
#undef STEER_DECLARE_MODEL

}  // namespace steer
