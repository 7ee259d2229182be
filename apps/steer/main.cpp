// The steer command-line program.
//   steer run CONFIG    simulate, validate and optimize; write the artifact
//   steer check CONFIG  validate gradients only; exit 0 when every rollout passes, 1 otherwise
//   steer compare CONFIG  gradient-based optimization vs CMA-ES on the same rollout (compare
//   section) steer run CONFIG --resume DIR  carry on an interrupted run from its checkpoint folder
//   steer report RUN_DIR  rebuild RUN_DIR/report.html from the folder's artifact (docs/report.md)
//   steer --version  steer's version, its commit, the MuJoCo it links and whether CUDA is on
//   mpirun -np N steer run|check|compare CONFIG  the batch split across N ranks, one artifact
//   written by rank 0, equal to the one-process artifact (docs/scaling.md)
// Exit codes: 0 success, 1 gradient check failed (check) or runtime failure, 2 usage or config
// error, 130 / 143 stopped by SIGINT / SIGTERM (docs/robustness.md).
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <sstream>
#include <thread>

#include "build_info.h"
#include "experiment/compare.h"
#include "experiment/experiment.h"
#include "experiment/report.h"
#include "config/json_reader.h"
#include "parallel/parallel.h"
#ifdef STEER_WITH_MPI
#include "parallel/mpi_world.h"
#endif

namespace {

// MPI_Finalize on every way out of main
struct WorldGuard {
  ~WorldGuard() {
#ifdef STEER_WITH_MPI
    steer::stop_mpi_world();
#endif
  }
};

// A failure during a run split across ranks. A RankFailure is known to every rank (agree()):
// rank 0 says it and all ranks exit with `code`. Any other exception may be this rank's alone
// while the others wait in a collective, so it ends the whole job (MPI_Abort); ranks other than
// 0 wait a moment first, so that an error every rank hit (a config refused while the run is
// set up) is said once, by rank 0, whose abort ends them.
int job_failure(const std::string& text, int code, bool known_to_all) {
  steer::Communicator& w = steer::world();
  if (w.size() == 1 || known_to_all) {
    if (w.rank() == 0) std::cerr << text << "\n";
    return code;
  }
  if (w.rank() != 0) std::this_thread::sleep_for(std::chrono::seconds(2));
  std::cerr << text << " [rank " << w.rank() << " of " << w.size() << "; the job is aborted]\n";
  w.abort(code);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef STEER_WITH_MPI
  steer::start_mpi_world(argc, argv);
#endif
  WorldGuard finalize;
  const bool rank0 = steer::world().rank() == 0;
  std::ostringstream
      silent;  // usage messages of ranks other than 0 (every rank parses the same line)
  CLI::App app{"steer: batched differentiable physics with checked gradients"};
  app.require_subcommand(1);
  // parsed before the subcommand is required: `steer --version` alone exits 0
  app.set_version_flag(
      "--version", [] { return steer_cli::version_text(); },
      "print steer's version and commit, the MuJoCo version and whether CUDA is on, and exit");
  std::string config_path;
  steer::RunOptions opt;
  bool quiet = false;
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("CONFIG", config_path, "experiment config (JSON)")->required();
    sub->add_option("--backend", opt.backend, "cpu, cuda or auto (overrides simulation.backend)")
        ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
    sub->add_option("--out", opt.out_dir, "folder for run artifacts (overrides output.dir)");
    sub->add_option("--precision", opt.precision,
                    "float32 or float64 (overrides simulation.precision)")
        ->check(CLI::IsMember({"float32", "float64"}));
    sub->add_option("--threads", opt.threads, "CPU threads (0 = all)")->check(CLI::Range(0, 4096));
    sub->add_flag("--quiet", quiet, "no progress on stderr");
  };
  CLI::App* run =
      app.add_subcommand("run", "simulate, validate gradients, optimize, write the artifact");
  CLI::App* check = app.add_subcommand(
      "check", "validate gradients only (exit 0 when all rollouts pass, 1 otherwise)");
  CLI::App* compare = app.add_subcommand(
      "compare", "gradient-based optimization vs CMA-ES, cost in simulated rollouts");
  add_common(run);
  add_common(check);
  add_common(compare);
  for (CLI::App* sub : {run, check})
    sub->add_option("--shard-bytes", opt.shard_bytes,
                    "across MPI ranks, write the gradient files as per-rank shards when the whole "
                    "files would "
                    "exceed this many bytes (default 2147483648 = 2 GiB)")
        ->check(CLI::Range(1LL, (long long)9e18));
  run->add_option(
      "--resume", opt.resume_dir,
      "carry on the interrupted run whose checkpoint folder is DIR (<out>/<run name>.checkpoint)");
  run->add_option("--checkpoint-seconds", opt.checkpoint_seconds,
                  "save a resumable checkpoint at least this often during the optimization, in "
                  "seconds (0 = by count only; "
                  "default 60; across MPI ranks, Adam and gd keep one only when this or "
                  "--checkpoint-evaluations is given)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--checkpoint-evaluations", opt.checkpoint_evaluations,
                  "... and after this many optimizer evaluations (0 = by time only; default 0)")
      ->check(CLI::Range(0, 1000000000));
  CLI::App* report = app.add_subcommand(
      "report", "rebuild report.html of a run folder from its artifact.json and sidecars");
  std::string run_dir;
  report
      ->add_option("RUN_DIR", run_dir,
                   "a run folder (holding artifact.json) written by run, check or compare")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return rank0 ? app.exit(e) : app.exit(e, silent, silent);
  } catch (const CLI::CallForAllHelp& e) {
    return rank0 ? app.exit(e) : app.exit(e, silent, silent);
  } catch (const CLI::CallForVersion& e) {
    if (rank0) std::cout << e.what();  // version_text's lines end in newlines
    return 0;
  } catch (const CLI::ParseError& e) {
    if (rank0)
      app.exit(e);
    else
      app.exit(e, silent, silent);
    return 2;  // every usage error exits 2
  }
  if (report->parsed()) {
    try {
      std::cout << "steer report: " << steer::rebuild_report(run_dir) << "\n";
      return 0;
    } catch (const steer::ConfigError& e) {
      std::cerr << "steer: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "steer: error: " << e.what() << "\n";
      return 1;
    }
  }
  opt.command = run->parsed() ? "run" : compare->parsed() ? "compare" : "check";
  opt.checkpoint_chosen =
      run->count("--checkpoint-seconds") + run->count("--checkpoint-evaluations") > 0;
  // across ranks, rank 0 alone shows progress and writes (the artifact, checkpoints); the others
  // compute their blocks and follow the same stages
  opt.progress = !quiet && rank0;
  opt.write = rank0;
  opt.config_path = config_path;
  steer::install_stop_handlers();
  steer::ExperimentConfig cfg;
  try {
    // the same file and options on every rank: an error here is every rank's, said by rank 0
    cfg = steer::load_config(config_path);
    steer::apply_overrides(cfg, opt);
  } catch (const steer::ConfigError& e) {
    if (rank0) std::cerr << "steer: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    if (rank0) std::cerr << "steer: error: " << e.what() << "\n";
    return 1;
  }
  try {
    steer::RunOutcome r =
        opt.command == "compare" ? steer::run_compare(cfg, opt) : steer::run_experiment(cfg, opt);
    if (rank0) std::cout << r.summary;
    if (opt.command == "check") return r.check_passed ? 0 : 1;
    return 0;
  } catch (const steer::ConfigError& e) {
    return job_failure(std::string("steer: ") + e.what(), 2, false);
  } catch (const steer::RunStopped& e) {
    return job_failure(std::string("steer: ") + e.what(), e.exit_code(), false);
  } catch (const steer::RankFailure& e) {
    return job_failure(std::string("steer: error: ") + e.what() + "; nothing was published", 1,
                       true);
  } catch (const std::exception& e) {
    return job_failure(std::string("steer: error: ") + e.what(), 1, false);
  }
}
