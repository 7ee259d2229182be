// The articulated runner's hooks (model_runner.h's RunnerHooks), instantiated per capacity by
// articulated_runner_<capacity>.cpp.
#pragma once

#include <memory>

#include "models/articulated/articulated_runner.h"
#include "problem/model_runner.h"

namespace steer {

// Model: Articulated, ArticulatedLegged or ArticulatedLarge (model.h)
template <class Model>
struct ArticulatedRunnerHooks : RunnerHooks<Model> {
  // the adjoint differentiates only the parameters that are variables, unless every θ slot's
  // gradient is asked for (n_grad_params = −1, as parsed)
  void bind(const ExperimentConfig& c, Model& m, const RunnerOptions& options) {
    if (options.every_parameter_gradient) return;
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

template <class Model>
std::unique_ptr<BatchRunner> make_articulated_runner(const ExperimentConfig& c, const Model& m,
                                                     BackendKind backend,
                                                     const RunnerOptions& options) {
  return make_model_runner<Model, ArticulatedRunnerHooks<Model>>(c, m, backend, options);
}

}  // namespace steer
