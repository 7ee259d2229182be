// The articulated runner's hooks (model_runner.h's RunnerHooks), instantiated per capacity by
// articulated_runner_<capacity>.cpp.
#pragma once

#include <memory>
#include <type_traits>

#include "models/articulated/articulated_runner.h"
#include "models/articulated/articulated_setup.h"
#include "problem/controlled_runner.h"

namespace steer {

// Model: Articulated, ArticulatedLegged or ArticulatedLarge (model.h)
template <class Model>
struct ArticulatedRunnerHooks : RunnerHooks<Model> {
  // the adjoint differentiates only the parameters that are variables, unless every θ slot's
  // gradient is asked for (n_grad_params = −1, as parsed)
  void bind(const ExperimentConfig& c, Model& m, const RunnerOptions& options) {
    if constexpr (std::is_same<Model, ArticulatedLarge>::value) {
      if (m.morphology) {
        morphology_ = c.model_state<ArticulatedSetup>().morphology;
        model_ = &m;
        // a design slot's gradient is the mapped slots' (the bodies' and the points'), so the
        // adjoint computes every slot's
        return;
      }
    }
    if (options.every_parameter_gradient) return;
    m.n_grad_params = 0;
    for (const auto& v : c.variables)
      if (v.kind == VariableSpec::kParameter) {
        m.grad_params[m.n_grad_params++] = short(v.index);
        for (const auto& mv : v.moves) {  // each moved slot once (several may move one)
          bool listed = false;
          for (int g = 0; g < m.n_grad_params; ++g) listed = listed || m.grad_params[g] == mv.first;
          if (!listed) m.grad_params[m.n_grad_params++] = short(mv.first);
        }
      }
  }
  // the deepest contact's depth below the plane [m] (diagnostics.h): the fingertip's when it
  // is on, else the ground points'
  static bool measures_penetration(const Model& m) { return m.contact || m.ground.n_points > 0; }
  static double penetration(const Model& m, View<const double> x, View<const double> p) {
    return m.template penetration<double>(x, p);
  }
  // model.morphology's design slots (morphology.h), on the large capacity only
  bool maps_parameters() const { return model_ != nullptr; }
  void map_parameters(const double* theta, double* out) const {
    if constexpr (std::is_same<Model, ArticulatedLarge>::value)
      morphology_map(morphology_, *model_, theta, out);
  }
  void adj_map_parameters(const double* theta, const double* grad_eff, double* grad) const {
    if constexpr (std::is_same<Model, ArticulatedLarge>::value)
      morphology_adjoint(morphology_, *model_, theta, grad_eff, grad);
  }

 private:
  Morphology morphology_;
  const ArticulatedLarge* model_ = nullptr;
};

template <class Model>
std::unique_ptr<BatchRunner> make_articulated_runner(const ExperimentConfig& c, const Model& m,
                                                     BackendKind backend,
                                                     const RunnerOptions& options) {
  // rk4's adjoint is the dual-number one, which the CUDA kernels leave out (docs/design.md,
  // "The kernel budget"); refused here so that the config's key is named
  if (backend == BackendKind::kCuda && m.integrator == Model::kRk4)
    throw ConfigError(
        "model.integrator: rk4 on an articulated model is host-only (not compiled into the CUDA "
        "kernels); run this config on the cpu backend (\"backend\": \"cpu\") or choose euler or "
        "implicitfast");
  return make_runner_with_controller<Model, ArticulatedRunnerHooks<Model>>(c, m, backend, options);
}

}  // namespace steer
