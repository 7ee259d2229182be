// model.type "articulated": a kinematic tree of hinge and slide joints under PD servos, with
// optional torque saturation, joint limits and a fingertip contact plane
// (include/steer/models/articulated.h). Its problem factory, the chatter advice for saturated
// servos and the registration; the model section's parser, initial state, slot table and
// effective-config keys are in config_articulated.cpp.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/json_reader.h"
#include "models/articulated/config_articulated.h"
#include "models/registry.h"
#include "problem/model_problem.h"

namespace steer {

#ifdef STEER_WITH_CUDA
// ArticulatedLarge has no CUDA kernels (model.h) and new_problem refuses the cuda backend for
// it; these stand in for the instantiations run_batch (backend.h) names, never reached.
template <>
void cuda_run_batch<ArticulatedLarge, double>(const ArticulatedLarge&, const Loss&, const RolloutShape&,
                                              const Batch<double>&, bool, BatchResult<double>&) {
  throw std::logic_error("ArticulatedLarge has no CUDA kernels");
}
template <>
void cuda_run_batch<ArticulatedLarge, float>(const ArticulatedLarge&, const Loss&, const RolloutShape&,
                                             const Batch<float>&, bool, BatchResult<float>&) {
  throw std::logic_error("ArticulatedLarge has no CUDA kernels");
}
#ifndef STEER_CUDA_LEGGED
// ArticulatedLegged's kernels (kernels/rollout_articulated_legged_*.cu) are compiled where the
// CUDA build lists them and defines STEER_CUDA_LEGGED (src/CMakeLists.txt); until then the
// cuda backend refuses a legged tree by name (new_problem), and these stand in.
template <>
void cuda_run_batch<ArticulatedLegged, double>(const ArticulatedLegged&, const Loss&, const RolloutShape&,
                                               const Batch<double>&, bool, BatchResult<double>&) {
  throw std::logic_error("this CUDA build has no ArticulatedLegged kernels");
}
template <>
void cuda_run_batch<ArticulatedLegged, float>(const ArticulatedLegged&, const Loss&, const RolloutShape&,
                                              const Batch<float>&, bool, BatchResult<float>&) {
  throw std::logic_error("this CUDA build has no ArticulatedLegged kernels");
}
#endif
#endif

namespace {

// the tree as parsed (articulated_setup.h), whichever capacity runs it
const ArticulatedLarge& articulated(const ExperimentConfig& c) { return c.model_state<ArticulatedSetup>().large; }

void model_json(const ExperimentConfig& c, nlohmann::json& m) { m.update(articulated_model_json(c)); }

void set_dt(ExperimentConfig& c, double dt) {
  ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  s.model.dt = dt, s.large.dt = dt, s.legged.dt = dt;
}

// Model: Articulated, ArticulatedLegged or ArticulatedLarge (model.h)
template <class Model>
struct ArticulatedProblemHooks : ProblemHooks<Model> {
  // the adjoint differentiates only the parameters that are variables
  void bind(const ExperimentConfig& c, Model& m) {
    m.n_grad_params = 0;
    for (const auto& v : c.variables)
      if (v.kind == VariableSpec::kParameter) m.grad_params[m.n_grad_params++] = short(v.index);
  }
  // the deepest contact's depth below the plane [m] (diagnostics.h): the fingertip's when it
  // is on, else the ground points'
  static bool measures_penetration(const Model& m) { return m.contact || m.ground.n_points > 0; }
  static double penetration(const Model& m, View<const double> x, View<const double> p) {
    return m.template penetration<double>(x, p);
  }
};

// The smallest capacity that fits: a tree within Articulated's runs as Articulated, one within
// ArticulatedLegged's (a quadruped on a free root) as ArticulatedLegged, both on every backend;
// a larger one as ArticulatedLarge on the CPU only (model.h: no CUDA kernels are compiled for it).
std::unique_ptr<Problem> new_problem(const ExperimentConfig& c, BackendKind backend, int threads) {
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  if (!s.large_tree) return make_model_problem<Articulated, ArticulatedProblemHooks<Articulated>>(c, s.model, backend, threads);
#if defined(STEER_WITH_CUDA) && !defined(STEER_CUDA_LEGGED)
  const bool legged_backend = backend == BackendKind::kCpu;
#else
  const bool legged_backend = true;
#endif
  if (s.legged_tree && legged_backend)
    return make_model_problem<ArticulatedLegged, ArticulatedProblemHooks<ArticulatedLegged>>(c, s.legged, backend, threads);
  if (backend != BackendKind::kCpu)
    throw ConfigError("model.bodies: a tree of " + std::to_string(s.large.n_bodies) + " bodies, " +
                      std::to_string(s.large.n_dof) + " joints and " + std::to_string(s.large.n_sites) +
                      " sites runs on the CPU backend only; the CUDA backend takes at most " +
                      std::to_string(Articulated::kMaxBodies) + " bodies, " + std::to_string(Articulated::kMaxDof) +
                      " joints and " + std::to_string(Articulated::kMaxSites) + " sites (Articulated), or " +
                      std::to_string(ArticulatedLegged::kMaxBodies) + " bodies, " + std::to_string(ArticulatedLegged::kMaxDof) +
                      " joints and " + std::to_string(ArticulatedLegged::kMaxSites) +
                      " sites (ArticulatedLegged; a free root's 5 frames count as bodies) (set \"backend\": \"cpu\")");
  return make_model_problem<ArticulatedLarge, ArticulatedProblemHooks<ArticulatedLarge>>(c, s.large, backend, threads);
}

// A saturated servo under implicitfast chatters because its k_v acts explicitly at the clamp
// (README, "Saturated servos"); the servo made implicit through the saturation removes that.
std::string chatter_remedy(const ExperimentConfig& c, const std::string& smaller_dt) {
  const ArticulatedLarge& a = articulated(c);
  if (a.torque_limits && a.servo_newton == 0) {
    const std::string servo = "model.torque_limits.newton_iterations ≥ 1 makes the servo implicit through its force limit";
    return a.integrator == Articulated::kImplicitFast ? servo + "; or " + smaller_dt
                                                                  : "model.integrator \"implicitfast\" with " + servo + "; or " + smaller_dt;
  }
  return smaller_dt;
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
    // no com_axis_error: c = Σ m_b c_b / Σ m_b is measured along any world axis x, y, z
    // (center_of_mass and its adjoint take the axis; tests/com_axis_test.cpp)
    d.check_physical = articulated_check_physical;
    d.site_names = site_names;
    d.penetration_label = true;
    return d;
  }();
  return def;
}

}  // namespace steer
