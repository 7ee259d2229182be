// The run's output folder, name and checkpoint, prepared before any work (src/experiment/
// checkpoint.h), and what a checkpoint keeps of the stages before the optimizer.
#include <iostream>

#include "experiment/run_stages.h"
#include "parallel/parallel.h"

namespace steer {

void prepare_run(RunState& run) {
  const ExperimentConfig& c = run.c;
  const RunOptions& o = run.o;
  const bool optimizes =
      o.command == "run" && c.optimizer.method != "none" && c.optimizer.iterations > 0;
  if (!o.resume_dir.empty() && o.command != "run")
    throw ConfigError("--resume: only steer run resumes (this is steer " + o.command + ")");
  if (!o.resume_dir.empty() && !optimizes)
    throw ConfigError(
        "--resume: this config runs no optimizer (optimizer.method none or 0 iterations), so it "
        "keeps no checkpoint");
  // output problems end the run here, before the first rollout
  if (o.write) prepare_output_dir(c.output.dir, o.out_dir.empty() ? "output.dir" : "--out");
  CheckpointOptions co;
  co.seconds = o.checkpoint_seconds;
  co.evaluations = o.checkpoint_evaluations;
  co.enabled = o.write && (co.seconds > 0 || co.evaluations > 0);
  // across ranks, Adam and gd run on per-rank blocks without gathering evaluations, which a
  // checkpoint's whole-batch log would need (docs/scaling.md): they keep one only when asked
  if (world().size() > 1 && c.batch_size > 1 && !o.checkpoint_chosen &&
      (c.optimizer.method == "adam" || c.optimizer.method == "gd"))
    co.enabled = false;
  const nlohmann::json identity = checkpoint_identity(c.to_json(), o.command);
  if (!o.resume_dir.empty()) {
    // across ranks, rank 0 (the writer) owns the folder and the others replay the same log
    run.checkpoint =
        RunCheckpoint::open_for_resume(o.resume_dir, identity, co, world().rank() != 0);
    run.run_name = run.checkpoint->run_name();
    run.created_utc = run.checkpoint->saved_run().value("created_utc", std::string());
    // said even with --quiet: what is replayed rather than simulated
    if (world().rank() == 0)
      std::cerr << "steer: resuming " << run.run_name << " from " << o.resume_dir << ": "
                << run.checkpoint->logged_evaluations()
                << " logged optimizer evaluations to replay\n";
    return;
  }
  run.created_utc = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.run_name = c.name + (o.command == "compare" ? "-compare-" : "-") + utc_now("%Y%m%d-%H%M%S");
  if (optimizes && co.enabled)
    run.checkpoint = std::make_unique<RunCheckpoint>(c.output.dir, run.run_name, identity, co);
}

nlohmann::json saved_run_state(const RunState& run) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, n] : run.label_totals) labels[k] = n;
  return {{"created_utc", run.created_utc},
          {"validations", run.validations},
          {"label_totals", labels},
          {"check_passed", run.out.check_passed}};
}

void restore_run_state(RunState& run, const nlohmann::json& saved) {
  if (!saved.is_object() || !saved.contains("validations") || !saved.contains("label_totals"))
    throw std::runtime_error("checkpoint: the saved run state is incomplete");
  run.validations = saved["validations"];
  run.label_totals.clear();
  for (auto it = saved["label_totals"].begin(); it != saved["label_totals"].end(); ++it)
    run.label_totals[it.key()] = it.value().get<int>();
  run.out.check_passed = saved.value("check_passed", true);
}

void stop_point(const RunState& run, const std::string& where) {
  const int sig = stop_requested();
  if (sig == 0) return;
  std::string m = std::string("stopped by ") + stop_signal_name(sig) + " " + where;
  if (run.checkpoint && run.checkpoint->save_now() && !run.checkpoint->folder().empty())
    m += "; resume with --resume " + run.checkpoint->folder();
  else
    m += "; nothing was written";
  throw RunStopped(sig, m);
}

}  // namespace steer
