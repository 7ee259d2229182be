#include "problem/sim_problem.h"

#include "models/registry.h"

namespace steer {

template class SimProblem<float>;
template class SimProblem<double>;

std::unique_ptr<BatchRunner> make_runner(const ExperimentConfig& c, BackendKind backend,
                                         const RunnerOptions& options) {
  return model_of(c).make_runner(c, backend, options);
}

std::unique_ptr<Problem> make_problem(const ExperimentConfig& c, BackendKind backend, int threads) {
  std::shared_ptr<const BatchRunner> runner = make_runner(c, backend);
  if (runner->float32()) return std::make_unique<SimProblem<float>>(c, std::move(runner), threads);
  return std::make_unique<SimProblem<double>>(c, std::move(runner), threads);
}

}  // namespace steer
