// model.type "oscillator" (oscillator.h): its config section, slot table, effective-config keys,
// runner, drawing and registration. Everything the pipeline needs of the model is here; the
// one other line is its entry in the registered-models list
// (tests/models/oscillator/CMakeLists.txt).
#include <memory>
#include <string>
#include <vector>

#include "experiment/report_scene.h"
#include "models/registry.h"
#include "oscillator.h"
#include "problem/model_runner.h"

namespace steer {

namespace {

// the oscillator's part of an ExperimentConfig (ExperimentConfig::model)
struct OscillatorSetup {
  static constexpr const char* kModel = "oscillator";  // model.type
  Oscillator model;
};

ModelInfo oscillator_info() {
  ModelInfo m;
  m.type = OscillatorSetup::kModel;
  m.state_names = {"position", "velocity"};
  m.state_units = {"m", "m/s"};
  m.control_names = {"force"};
  m.control_units = {"N"};
  m.param_names = {"stiffness", "damping", "mass"};
  m.param_units = {"N/m", "N*s/m", "kg"};
  // the mass divides: > 0; a negative stiffness or damping is not a spring or a damper
  m.param_ranges = {Range::closed(0, 1e9), Range::closed(0, 1e9), Range{0, 1e9, true, false}};
  m.state_ranges.assign(2, Range::closed(-1e9, 1e9));
  return m;
}

// model.stiffness, model.damping, model.mass
void parse_model(const JsonObject& m, ExperimentConfig& c) {
  c.model.emplace<OscillatorSetup>();
  c.info = oscillator_info();
  const auto& R = c.info.param_ranges;
  c.theta.assign(Oscillator::kNumParams, 0.0);
  c.theta[Oscillator::kStiffness] = m.number("stiffness", 1.0, R[Oscillator::kStiffness]);
  c.theta[Oscillator::kDamping] = m.number("damping", 0.0, R[Oscillator::kDamping]);
  c.theta[Oscillator::kMass] = m.number("mass", 1.0, R[Oscillator::kMass]);
}

// initial_state.position [m], initial_state.velocity [m/s]
void parse_initial_state(const JsonObject& s, ExperimentConfig& c) {
  c.x0 = {s.number("position", 0.0, c.info.state_ranges[0]),
          s.number("velocity", 0.0, c.info.state_ranges[1])};
}

void model_json(const ExperimentConfig&, nlohmann::json& m) {
  m["integrator"] = "symplectic_euler";
}

void set_dt(ExperimentConfig& c, double dt) { c.model_state<OscillatorSetup>().model.dt = dt; }

std::unique_ptr<BatchRunner> new_runner(const ExperimentConfig& c, BackendKind backend,
                                        const RunnerOptions& options) {
  return make_model_runner(c, c.model_state<OscillatorSetup>().model, backend, options);
}

// the phase portrait: (q, v) at each kept frame, with its path
nlohmann::json phase_scene(const ExperimentConfig& c, const nlohmann::json& art,
                           const RecordedTrajectory& tr, int max_frames) {
  nlohmann::json s = {{"kind", "point"}, {"dim", 2}, {"axes", {"position q", "velocity v"}}};
  s["rollouts"] = frames_of(tr, 8, max_frames, [](int, const std::vector<double>& x) { return x; });
  s["edges"] = nlohmann::json::array();
  s["ground"] = nullptr;
  s["target"] = {{"x", terminal_target(art, "position")}, {"y", terminal_target(art, "velocity")}};
  s["views"] = {{{"name", "phase (q, v)"}, {"h", 0}, {"v", 1}}};
  s["trail"] = true;
  s["equal_aspect"] = false;
  s["energy"] =
      free_motion_energy(c, c.model_state<OscillatorSetup>().model, art, tr, 8, max_frames);
  return s;
}

}  // namespace

const ModelDef& oscillator_model() {
  static const ModelDef def = [] {
    ModelDef d;
    d.name = OscillatorSetup::kModel;
    d.parse_model = parse_model;
    d.parse_initial_state = parse_initial_state;
    d.model_json = model_json;
    d.set_dt = set_dt;
    d.make_runner = new_runner;
    d.report_scene = phase_scene;
    return d;
  }();
  return def;
}

}  // namespace steer
