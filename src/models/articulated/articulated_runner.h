// The articulated tree's BatchRunner at each capacity (model.h: Articulated, ArticulatedLegged,
// ArticulatedLarge), one translation unit each (articulated_runner_<capacity>.cpp), so that a
// parallel build compiles the three instantiations of the rollout side by side.
#pragma once

#include <memory>

#include "problem/batch_runner.h"
#include "steer/models/articulated.h"

namespace steer {

std::unique_ptr<BatchRunner> articulated_runner(const ExperimentConfig& c, const Articulated& m,
                                                BackendKind backend, const RunnerOptions& options);
std::unique_ptr<BatchRunner> articulated_runner(const ExperimentConfig& c,
                                                const ArticulatedLegged& m, BackendKind backend,
                                                const RunnerOptions& options);
std::unique_ptr<BatchRunner> articulated_runner(const ExperimentConfig& c,
                                                const ArticulatedLarge& m, BackendKind backend,
                                                const RunnerOptions& options);

}  // namespace steer
