// model.type "articulated": a kinematic tree of hinge and slide joints under PD servos, with
// optional torque saturation, joint limits and a fingertip contact plane
// (include/steer/models/articulated.h). Its problem factory, the chatter advice for saturated
// servos and the registration; the model section's parser, initial state, slot table and
// effective-config keys are in config_articulated.cpp.
#include <memory>
#include <string>
#include <vector>

#include "models/articulated/config_articulated.h"
#include "models/registry.h"
#include "problem/model_problem.h"

namespace steer {

namespace {

const Articulated& articulated(const ExperimentConfig& c) { return c.model_state<ArticulatedSetup>().model; }

void model_json(const ExperimentConfig& c, nlohmann::json& m) { m.update(articulated_model_json(c)); }

void set_dt(ExperimentConfig& c, double dt) { c.model_state<ArticulatedSetup>().model.dt = dt; }

struct ArticulatedProblemHooks : ProblemHooks<Articulated> {
  // the adjoint differentiates only the parameters that are variables
  void bind(const ExperimentConfig& c, Articulated& m) {
    m.n_grad_params = 0;
    for (const auto& v : c.variables)
      if (v.kind == VariableSpec::kParameter) m.grad_params[m.n_grad_params++] = short(v.index);
  }
  // the contact point's depth below the plane [m], when the model has a contact plane
  static bool measures_penetration(const Articulated& m) { return m.contact; }
  static double penetration(const Articulated& m, View<const double> x, View<const double> p) {
    return m.penetration<double>(x, p);
  }
};

std::unique_ptr<Problem> new_problem(const ExperimentConfig& c, BackendKind backend, int threads) {
  return make_model_problem<Articulated, ArticulatedProblemHooks>(c, articulated(c), backend, threads);
}

// A saturated servo under implicitfast chatters because its k_v acts explicitly at the clamp
// (README, "Saturated servos"); the servo made implicit through the saturation removes that.
std::string chatter_remedy(const ExperimentConfig& c, const std::string& smaller_dt) {
  const Articulated& a = articulated(c);
  if (a.torque_limits && a.servo_newton == 0) {
    const std::string servo = "model.torque_limits.newton_iterations ≥ 1 makes the servo implicit through its force limit";
    return a.integrator == Articulated::kImplicitFast ? servo + "; or " + smaller_dt
                                                                  : "model.integrator \"implicitfast\" with " + servo + "; or " + smaller_dt;
  }
  return smaller_dt;
}

// the articulated model measures its centre of mass along the vertical z only
std::string com_axis_error(const ExperimentConfig&, const std::string& axis, int index) {
  if (index == 2) return "";
  return "'" + axis + "': for model articulated only the vertical axis z is offered";
}

// the sites (model.sites, or an imported file's), in site_position's order
std::vector<std::string> site_names(const ExperimentConfig& c) { return c.model_state<ArticulatedSetup>().names.sites; }

}  // namespace

const ModelDef& articulated_model() {
  static const ModelDef def = [] {
    ModelDef d;
    d.name = ArticulatedSetup::kModel;
    d.parse_model = parse_articulated_model;
    d.parse_initial_state = parse_articulated_initial_state;
    d.model_json = model_json;
    d.set_dt = set_dt;
    d.make_problem = new_problem;
    d.chatter_remedy = chatter_remedy;
    d.com_axis_error = com_axis_error;
    d.check_physical = articulated_check_physical;
    d.site_names = site_names;
    d.penetration_label = true;
    return d;
  }();
  return def;
}

}  // namespace steer
