// model.type "projectile": a point mass under gravity, quadratic drag, an optional penalty
// ground and an optional penalty wall, in 2-D or 3-D (include/steer/models/projectile.h). Its
// config section, slot table, effective-config keys, problem factory and registration.
#include <memory>
#include <string>
#include <vector>

#include "models/projectile/projectile_model.h"
#include "models/projectile/projectile_setup.h"
#include "models/projectile/projectile_report.h"
#include "models/registry.h"
#include "problem/model_runner.h"

namespace steer {

namespace {

const char* kAxes[3] = {"x", "y", "z"};

const Projectile& projectile(const ExperimentConfig& c) {
  return c.model_state<ProjectileSetup>().model;
}

// model.* -> Projectile, slot table, nominal θ
void parse_model(const JsonObject& m, ExperimentConfig& c) {
  const int dim = int(m.integer("dim", 2, 2, 3));
  Projectile& p = c.model.emplace<ProjectileSetup>().model;
  p.dim = dim;
  c.info = projectile_info(dim);
  c.theta.assign(Projectile::kNumParams, 0.0);
  const auto& R = c.info.param_ranges;
  c.theta[Projectile::kGravity] = m.number("gravity", 9.81, R[Projectile::kGravity]);
  c.theta[Projectile::kDrag] = m.number("drag", 0.0, R[Projectile::kDrag]);
  c.theta[Projectile::kMass] = m.number("mass", 1.0, R[Projectile::kMass]);
  // the particle's radius: the contact planes act on its surface, not its centre
  p.radius = m.number("radius", 0.0, Range::closed(0, 1e3));
  JsonObject g = m.object("ground");
  const std::string type = g.choice("type", "none", {"none", "penalty"});
  p.ground = type == "penalty" ? Projectile::kGroundPenalty : Projectile::kGroundNone;
  // ground parameters are kept in θ even without a ground so that θ has one layout; they are
  // the contact law of the wall too
  c.theta[Projectile::kGroundStiffness] =
      g.number("stiffness", 1e4, R[Projectile::kGroundStiffness]);
  c.theta[Projectile::kGroundDamping] = g.number("damping", 0.0, R[Projectile::kGroundDamping]);
  c.theta[Projectile::kGroundSmoothing] =
      g.number("smoothing", 1e-3, R[Projectile::kGroundSmoothing]);
  const std::string law = g.choice("damping_law", "always", {"always", "approach"});
  p.damping_law = law == "approach" ? Projectile::kDampApproach : Projectile::kDampAlways;
  p.contact = g.choice("contact", "smooth", {"smooth", "hard"}) == "hard"
                  ? Projectile::kContactHard
                  : Projectile::kContactSmooth;
  g.finish();
  JsonObject w = m.object("wall");
  const std::string wtype = w.choice("type", "none", {"none", "penalty"});
  p.wall = wtype == "penalty" ? Projectile::kGroundPenalty : Projectile::kGroundNone;
  p.wall_position = w.number("position", 0.0, Range::closed(-1e9, 1e9));
  p.wall_normal = w.choice("normal", "-x", {"-x", "+x"}) == "+x" ? 1 : -1;
  w.finish();
}

// initial_state.position / velocity, one value per axis
void parse_initial_state(const JsonObject& s, ExperimentConfig& c) {
  const int D = projectile(c).dim;
  std::vector<double> pos =
      s.numbers("position", std::vector<double>(D, 0.0), c.info.state_ranges[0], D);
  std::vector<double> vel =
      s.numbers("velocity", std::vector<double>(D, 0.0), c.info.state_ranges[D], D);
  c.x0.assign(2 * D, 0.0);
  for (int i = 0; i < D; ++i) {
    c.x0[i] = pos[i];
    c.x0[D + i] = vel[i];
  }
}

void model_json(const ExperimentConfig& c, nlohmann::json& m) {
  const Projectile& p = projectile(c);
  m["dim"] = p.dim;
  m["ground"] = p.ground == Projectile::kGroundPenalty ? "penalty" : "none";
  m["ground_damping_law"] = p.damping_law == Projectile::kDampApproach ? "approach" : "always";
  m["ground_contact"] = p.contact == Projectile::kContactHard ? "hard" : "smooth";
  m["radius"] = p.radius;
  if (p.wall == Projectile::kGroundPenalty)
    m["wall"] = {{"position", p.wall_position}, {"normal", p.wall_normal > 0 ? "+x" : "-x"}};
  else
    m["wall"] = "none";
  m["integrator"] = "symplectic_euler";
}

void set_dt(ExperimentConfig& c, double dt) { c.model_state<ProjectileSetup>().model.dt = dt; }

std::unique_ptr<BatchRunner> new_runner(const ExperimentConfig& c, BackendKind backend,
                                        const RunnerOptions& options) {
  return make_model_runner(c, projectile(c), backend, options);
}

// a period-2 oscillation of a projectile is a stiff ground contact at ω·dt ≈ 2
std::string chatter_remedy(const ExperimentConfig&, const std::string& smaller_dt) {
  return smaller_dt + ", or a softer or more damped ground (model.ground)";
}

// the landing point lies in the position slots x (, z), y = slot 1 vertical
int landing_dims(const ExperimentConfig& c) { return projectile(c).dim; }

std::string com_axis_error(const ExperimentConfig& c, const std::string& axis, int index) {
  if (index < projectile(c).dim) return "";
  return "'" + axis + "' is not an axis of this " + std::to_string(index) + "-D model";
}

}  // namespace

ModelInfo projectile_info(int dim) {
  ModelInfo m;
  m.type = projectile_model().name;
  for (int i = 0; i < dim; ++i) {
    m.state_names.push_back(std::string("position.") + kAxes[i]);
    m.state_units.push_back("m");
  }
  for (int i = 0; i < dim; ++i) {
    m.state_names.push_back(std::string("velocity.") + kAxes[i]);
    m.state_units.push_back("m/s");
  }
  for (int i = 0; i < dim; ++i) {
    m.control_names.push_back(std::string("force.") + kAxes[i]);
    m.control_units.push_back("N");
  }
  m.param_names = {"gravity",          "drag",           "mass",
                   "ground.stiffness", "ground.damping", "ground.smoothing"};
  m.param_units = {"m/s^2", "1/m", "kg", "N/m", "N*s/m", "m"};
  // mass and the smoothing width divide, the stiffness scales a softplus of −c/w: all > 0
  m.param_ranges = {Range::closed(-1e4, 1e4),    Range::closed(0, 1e3), Range{0, 1e9, true, false},
                    Range{0, 1e12, true, false}, Range::closed(0, 1e9), Range{0, 1e3, true, false}};
  m.state_ranges.assign(2 * dim, Range::closed(-1e9, 1e9));
  return m;
}

const ModelDef& projectile_model() {
  static const ModelDef def = [] {
    ModelDef d;
    d.name = ProjectileSetup::kModel;
    d.parse_model = parse_model;
    d.parse_initial_state = parse_initial_state;
    d.model_json = model_json;
    d.set_dt = set_dt;
    d.make_runner = new_runner;
    d.report_scene = projectile_scene;
    d.chatter_remedy = chatter_remedy;
    d.landing_dims = landing_dims;
    d.com_axis_error = com_axis_error;
    return d;
  }();
  return def;
}

// the CPU path's one copy (declared extern in the model's header, steer/cpu_backend.h)
STEER_CPU_RUN_BATCH(, Projectile, double);
STEER_CPU_RUN_BATCH(, Projectile, float);

}  // namespace steer
