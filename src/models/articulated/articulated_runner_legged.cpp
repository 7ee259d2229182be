// The articulated runner at the ArticulatedLegged capacity (articulated_runner.h).
#include "models/articulated/articulated_runner_hooks.h"

namespace steer {

std::unique_ptr<BatchRunner> articulated_runner(const ExperimentConfig& c,
                                                const ArticulatedLegged& m, BackendKind backend,
                                                const RunnerOptions& options) {
  return make_articulated_runner(c, m, backend, options);
}

// the CPU path's one copy (declared extern in the model's header, steer/cpu_backend.h)
STEER_CPU_RUN_BATCH(, ArticulatedLegged, double);
STEER_CPU_RUN_BATCH(, ArticulatedLegged, float);

}  // namespace steer
