// model.type "mass_spring": a soft robot of particles and actuated springs on a ground
// (include/steer/models/mass_spring/). Its initial state, effective-config keys, the
// rest-position morphology's ties, problem factory and registration; the model section's
// parser and slot table are in config_mass_spring.cpp.
#include <cmath>

#include "config/json_reader.h"
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "models/mass_spring/config_mass_spring.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "models/mass_spring/mass_spring_report.h"
#include "models/registry.h"
#include "problem/controlled_runner.h"

namespace steer {

namespace {

const MassSpringSetup& setup(const ExperimentConfig& c) { return c.model_state<MassSpringSetup>(); }

// ModelDef::check_physical. Each slot's range keeps masses, stiffnesses, damping and rest
// lengths positive; what no single slot holds is the rest-position morphology's rest length
// L0 = |P_b − P_a|, which must lie in the rest-length range (0, 1e3] m as a given one does (a
// zero-length spring has no direction, springs.h).
bool check_physical(const ExperimentConfig& c, const double* theta, PhysicalViolation& v) {
  const MassSpring& m = setup(c).model;
  if (!m.rest_from_positions) return true;
  const Robot& robot = setup(c).robot;
  const Range range = c.info.param_ranges[m.p_rest_length(0)];
  for (int s = 0; s < int(robot.springs.size()); ++s) {
    const int a = robot.springs[s].a, b = robot.springs[s].b;
    double l2 = 0;
    for (int d = 0; d < m.dim; ++d) {
      const double e = theta[m.p_rest_position(b) + d] - theta[m.p_rest_position(a) + d];
      l2 += e * e;
    }
    const double l0 = std::sqrt(l2);
    if (range.contains(l0)) continue;
    v.key = "model.robot.particles";
    v.what = "spring[" + std::to_string(s) + "] between particle[" + std::to_string(a) +
             "] and particle[" + std::to_string(b) +
             "] has the rest length |P_b - P_a| = " + number_text(l0) +
             " m from their rest positions (model.morphology "
             "\"rest_positions\"), outside " +
             range.describe() + " m";
    v.slots.clear();
    for (int d = 0; d < m.dim; ++d)
      v.slots.push_back(m.p_rest_position(a) + d), v.slots.push_back(m.p_rest_position(b) + d);
    return false;
  }
  return true;
}

// the robot starts at rest in its rest shape, optionally shifted and moving as a whole
void parse_initial_state(const JsonObject& s, ExperimentConfig& c) {
  const MassSpring& m = setup(c).model;
  c.x0 = rest_state(m, setup(c).robot);
  std::vector<double> shift =
      s.numbers("offset", std::vector<double>(m.dim, 0.0), Range::closed(-1e6, 1e6), m.dim);
  std::vector<double> vel =
      s.numbers("velocity", std::vector<double>(m.dim, 0.0), Range::closed(-1e6, 1e6), m.dim);
  for (int i = 0; i < m.n_particles; ++i)
    for (int d = 0; d < m.dim; ++d) {
      c.x0[m.x_pos(i) + d] += shift[d];
      c.x0[m.x_vel(i) + d] = vel[d];
    }
  if (m.rest_from_positions)
    for (int i = 0; i < m.n_particles; ++i)
      for (int d = 0; d < m.dim; ++d) c.theta[m.p_rest_position(i) + d] = c.x0[m.x_pos(i) + d];
  PhysicalViolation bad;
  if (!check_physical(c, c.theta.data(), bad)) config_fail(bad.key, bad.what);
}

void model_json(const ExperimentConfig& c, nlohmann::json& m) {
  const MassSpring& ms = setup(c).model;
  const Robot& robot = setup(c).robot;
  m["dim"] = ms.dim;
  m["particles"] = ms.n_particles;
  m["springs"] = ms.n_springs;
  m["actuators"] = ms.n_actuators;
  m["actuation"] = ms.actuation == MassSpring::kRaw ? "raw" : "sinusoid";
  m["phases"] = ms.n_phases;
  m["ground"] = !ms.ground ? "none" : ms.impact_stick ? "stick" : ms.impact ? "impact" : "penalty";
  m["morphology"] = ms.rest_from_positions ? "rest_positions" : "rest_lengths";
  m["spring_length_offset"] = {{"value", ms.length_offset}, {"unit", "m"}};
  m["integrator"] =
      ms.integrator == MassSpring::kBackwardEuler ? "backward_euler" : "symplectic_euler";
  if (ms.integrator == MassSpring::kBackwardEuler) m["newton_iterations"] = ms.newton_iterations;
  nlohmann::json sp = nlohmann::json::array();
  for (const auto& q : robot.springs)
    sp.push_back({q.a, q.b, q.rest_length, q.stiffness, q.actuation});
  nlohmann::json pt = nlohmann::json::array();
  for (const auto& q : robot.particles)
    pt.push_back(std::vector<double>(q.begin(), q.begin() + robot.dim));
  m["robot"] = {{"particles", pt},
                {"springs", sp},
                {"spring_columns", {"a", "b", "rest_length_m", "stiffness_N_per_m", "actuation"}}};
}

void set_dt(ExperimentConfig& c, double dt) { c.model_state<MassSpringSetup>().model.dt = dt; }

// a runner owns a copy of the robot's topology and points its model at it (the model struct
// only holds the pointer, so that it stays a plain value on the device)
struct MassSpringRunnerHooks : RunnerHooks<MassSpring> {
  std::vector<int> topology;
  void bind(const ExperimentConfig& c, MassSpring& m, const RunnerOptions&) {
    topology = setup(c).topology;
    m.topo = topology.data();
  }
};

std::unique_ptr<BatchRunner> new_runner(const ExperimentConfig& c, BackendKind backend,
                                        const RunnerOptions& options) {
  return make_runner_with_controller<MassSpring, MassSpringRunnerHooks>(c, setup(c).model, backend,
                                                                        options);
}

// a period-2 oscillation of a robot is a stiff spring or ground contact at ω·dt ≈ 2
std::string chatter_remedy(const ExperimentConfig& c, const std::string& smaller_dt) {
  if (setup(c).model.integrator == MassSpring::kSymplecticEuler && !setup(c).model.impact)
    return smaller_dt +
           ", softer springs or ground (model.robot, model.ground), or model.integrator "
           "\"backward_euler\"";
  return smaller_dt + ", or softer springs or ground (model.robot, model.ground)";
}

std::string com_axis_error(const ExperimentConfig& c, const std::string& axis, int index) {
  if (index < setup(c).model.dim) return "";
  return "'" + axis + "' is not an axis of this " + std::to_string(index) + "-D model";
}

// rest-position morphology: a rest position variable also moves the initial position
// A rest shape slot the configured morphology does not read is refused as a variable or a draw:
// rest positions under rest_lengths (the default), spring rest lengths under rest_positions
// (there L0 is the positions' distance). Optimizing or drawing it would change nothing.
void refuse_unread_rest_slots(const ExperimentConfig& c, const MassSpring& m) {
  const int pos0 = m.p_rest_position(0), pos1 = m.p_rest_position(m.n_particles - 1) + m.dim;
  const int len0 = m.p_rest_length(0), len1 = m.p_rest_length(m.n_springs - 1) + 1;
  auto unread = [&](int i) {
    return m.rest_from_positions ? (i >= len0 && i < len1) : (i >= pos0 && i < pos1);
  };
  const std::string why =
      m.rest_from_positions
          ? std::string(
                " is not read under model.morphology \"rest_positions\" (a spring's rest "
                "length is its particles' distance there); use theta.particle.rest_position")
          : std::string(
                " is not read under model.morphology \"rest_lengths\" (the default: the "
                "springs' rest lengths are θ); set model.morphology to \"rest_positions\"");
  for (const auto& e : c.variables)
    if (e.kind == VariableSpec::kParameter && unread(e.index))
      config_fail("variables." + e.name, e.name + why);
  for (const auto& o : c.overrides)
    if (!o.is_state)
      for (int i : o.indices)
        if (unread(i))
          config_fail(std::string("batch.") +
                          (o.draw == BatchOverride::kSweep ? "sweep." : "randomize.") + o.name,
                      "theta." + c.info.param_names[size_t(i)] + why);
}

void tie_variables(ExperimentConfig& c) {
  const MassSpring& m = setup(c).model;
  refuse_unread_rest_slots(c, m);
  if (!m.rest_from_positions) return;
  for (auto& e : c.variables) {
    if (e.kind != VariableSpec::kParameter) continue;
    const int first = m.p_rest_position(0), last = m.p_rest_position(m.n_particles - 1) + m.dim;
    if (e.index >= first && e.index < last)
      e.tied_state = (e.index - first);  // x_pos(i) + c = dim·i + c
  }
}

// rest-position morphology: the robot starts at rest in its (possibly drawn) rest shape
void finish_batch(const ExperimentConfig& c, Batch<double>& b) {
  const MassSpring& m = setup(c).model;
  refuse_unread_rest_slots(c, m);  // a draw in a config without variables reaches here first
  if (!m.rest_from_positions) return;
  for (int r = 0; r < c.batch_size; ++r)
    for (int i = 0; i < m.n_particles; ++i)
      for (int d = 0; d < m.dim; ++d)
        b.x0_of(r)[m.x_pos(i) + d] = b.theta_of(r)[m.p_rest_position(i) + d];
}

// the sinusoid actuation's act = tanh(Σ_j w_j sin(ω k h + 2πj/n) + b) reads k
std::string step_reads_time(const ExperimentConfig& c) {
  return setup(c).model.actuation == MassSpring::kSinusoid
             ? "model.actuation.type 'sinusoid' is a function of the step's time k h"
             : "";
}

}  // namespace

const ModelDef& mass_spring_model() {
  static const ModelDef def = [] {
    ModelDef d;
    d.name = MassSpringSetup::kModel;
    d.parse_model = parse_mass_spring_model;
    d.parse_initial_state = parse_initial_state;
    d.model_json = model_json;
    d.set_dt = set_dt;
    d.make_runner = new_runner;
    d.accepts_controller = true;
    d.report_scene = mass_spring_scene;
    d.chatter_remedy = chatter_remedy;
    d.com_axis_error = com_axis_error;
    d.tie_variables = tie_variables;
    d.finish_batch = finish_batch;
    d.check_physical = check_physical;
    d.reports_com_travel_x = true;
    d.step_reads_time = step_reads_time;
    return d;
  }();
  return def;
}

// the CPU path's one copy (declared extern in the model's header, steer/cpu_backend.h)
STEER_CPU_RUN_BATCH(, MassSpring, double);
STEER_CPU_RUN_BATCH(, MassSpring, float);

}  // namespace steer
