// The runner of a model with a controller (steer/controller.h): Controlled<Model> behind the
// model's own runner hooks. The model's hooks see the model part of the struct and a config
// whose parameter variables are the model's own (the controller's θ slots come after the
// model's np(), and hooks that size per-variable tables, as the articulated adjoint's list of
// differentiated parameters, must not see them); a parameter map applies to the model's slots
// and passes the controller's through.
#pragma once

#include <memory>

#include "problem/model_runner.h"
#include "steer/controller.h"

namespace steer {

template <class Model, class InnerHooks>
struct ControlledHooks : RunnerHooks<Controlled<Model>> {
  InnerHooks inner;
  int theta0 = 0, np = 0;  // the controller's first θ slot, and θ's size

  void bind(const ExperimentConfig& c, Controlled<Model>& m, const RunnerOptions& options) {
    ExperimentConfig own = c;
    own.variables.clear();
    for (const auto& v : c.variables)
      if (!(v.kind == VariableSpec::kParameter && v.index >= m.policy.theta0))
        own.variables.push_back(v);
    inner.bind(own, static_cast<Model&>(m), options);
    theta0 = m.policy.theta0;
    np = m.np();
  }
  static bool measures_penetration(const Controlled<Model>& m) {
    return InnerHooks::measures_penetration(m);
  }
  static double penetration(const Controlled<Model>& m, View<const double> x,
                            View<const double> p) {
    return InnerHooks::penetration(m, x, p);
  }
  static bool measures_inversion(const Controlled<Model>& m) {
    return InnerHooks::measures_inversion(m);
  }
  static double min_volume_ratio(const Controlled<Model>& m, View<const double> x,
                                 View<const double> p) {
    return InnerHooks::min_volume_ratio(m, x, p);
  }
  bool maps_parameters() const { return inner.maps_parameters(); }
  void map_parameters(const double* theta, double* out) const {
    inner.map_parameters(theta, out);
    for (int q = theta0; q < np; ++q) out[q] = theta[q];
  }
  void adj_map_parameters(const double* theta, const double* grad_eff, double* grad) const {
    inner.adj_map_parameters(theta, grad_eff, grad);
    for (int q = theta0; q < np; ++q) grad[q] += grad_eff[q];
  }
};

// the runner of m with c's controller when the config has one, of m itself otherwise
template <class Model, class Hooks = RunnerHooks<Model>>
std::unique_ptr<BatchRunner> make_runner_with_controller(const ExperimentConfig& c, const Model& m,
                                                         BackendKind backend,
                                                         const RunnerOptions& options) {
  if (!c.has_controller) return make_model_runner<Model, Hooks>(c, m, backend, options);
  if (backend == BackendKind::kCuda && !has_cuda_kernels<Controlled<Model>>::value)
    throw ConfigError(
        "simulation.backend: a controller runs on the cuda backend with the "
        "mass_spring model only so far; run this " +
        c.model_type + " model with its controller on the cpu backend (\"backend\": \"cpu\")");
  Policy policy = c.policy;
  policy.dt = c.dt;  // this config's step (the half-step twin's dt/2): a phase's t = k h
  return make_model_runner<Controlled<Model>, ControlledHooks<Model, Hooks>>(
      c, Controlled<Model>(m, policy), backend, options);
}

}  // namespace steer
