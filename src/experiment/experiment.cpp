#include "experiment/experiment.h"

#include "experiment/run_stages.h"

namespace steer {

void apply_overrides(ExperimentConfig& c, const RunOptions& o) {
  if (!o.backend.empty()) {
    if (o.backend != "cpu" && o.backend != "cuda" && o.backend != "auto")
      throw ConfigError("--backend: '" + o.backend + "' is not one of cpu, cuda, auto");
    c.backend = o.backend;
  }
  if (!o.precision.empty()) {
    if (o.precision != "float32" && o.precision != "float64")
      throw ConfigError("--precision: '" + o.precision + "' is not one of float32, float64");
    c.precision = o.precision;
  }
  if (!o.out_dir.empty()) c.output.dir = o.out_dir;
  if (o.threads >= 0) c.threads = o.threads;
}

// The run as a sequence of stages (src/experiment/run_stages.h), in the order their results
// depend on each other: the final validation needs the optimum, the analyses the final
// iterate, the summary everything before it.
RunOutcome run_experiment(const ExperimentConfig& c, const RunOptions& o) {
  check_physical_inputs(c, false);  // every batch this run simulates is physical (problem.h)
  RunState run(c, o);
  prepare_run(run);  // output folder, run name, checkpoint: refused here, before any work
  plan_run(run);
  describe_run(run);
  if (run.checkpoint && run.checkpoint->resuming())
    restore_run_state(run, run.checkpoint->saved_run());  // the initial validation, as it came out
  else
    validate_stage(run, run.v0, "initial");
  stop_point(run, "after the initial validation");
  optimize_stage(run);  // the start's loss and gradient, the optimizer, the final validation
  stop_point(run, "after the optimization");
  analyses_stage(run);
  stop_point(run, "after the analyses");
  assemble_result(run);
  com_travel_stage(run);
  timings_stage(run);
  summarize(run);
  write_stage(run);
  if (run.checkpoint) run.checkpoint->remove();
  return run.out;
}

}  // namespace steer
