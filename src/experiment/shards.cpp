// Per-rank artifact shards (src/experiment/shards.h).
#include "experiment/shards.h"

#include <cstdio>
#include <filesystem>

#include "config/data_file.h"
#include "parallel/parallel.h"

namespace steer {

namespace fs = std::filesystem;

std::string shard_name(const std::string& base, int rank) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%04d", rank);
  return base + ".rank" + digits + ".npy";
}

bool gradient_shards(RunState& run, const std::vector<std::string>& vunits) {
  Communicator& w = world();
  if (w.size() < 2) return false;
  const long long B = run.B, nv = run.nv;
  // the four whole files' payload (gradients and variables, initial and final), 8 B per value
  const long long whole_bytes = 4 * B * nv * 8;
  // rank 0 alone writes (o.write): the ranks agree that it does, so they all decide alike
  run.sharded = any_rank(run.o.write) && whole_bytes > run.o.shard_bytes;
  if (!run.sharded) return false;
  nlohmann::json shards = nlohmann::json::array();
  for (int r = 0; r < w.size(); ++r) {
    const Block b = block_of(run.B, r, w.size());
    if (b.count == 0) continue;  // a rank without rollouts writes no shard
    shards.push_back({{"rank", r},
                      {"rollouts", {b.begin, b.begin + b.count}},  // [begin, end)
                      {"initial", shard_name("gradient_initial", r)},
                      {"final", shard_name("gradient", r)},
                      {"variables_initial", shard_name("variables_initial", r)},
                      {"variables_final", shard_name("variables", r)},
                      {"shape", {b.count, nv}}});
  }
  run.result["gradient_file"] = {{"shards", shards},   {"shape", {B, nv}},
                                 {"dtype", "float64"}, {"variables", run.problem->var_names()},
                                 {"units", vunits},    {"shard_bytes", run.o.shard_bytes}};
  const Block mine = block_of(run.B, w.rank(), w.size());
  if (mine.count > 0) {
    auto rows = [&](const std::vector<double>& g) {
      return std::vector<double>(g.begin() + size_t(mine.begin) * size_t(nv),
                                 g.begin() + size_t(mine.begin + mine.count) * size_t(nv));
    };
    run.shard_files.push_back({shard_name("gradient_initial", w.rank()),
                               npy_bytes(rows(run.e0.grad), {long(mine.count), long(nv)})});
    run.shard_files.push_back({shard_name("gradient", w.rank()),
                               npy_bytes(rows(run.efinal.grad), {long(mine.count), long(nv)})});
    run.shard_files.push_back({shard_name("variables_initial", w.rank()),
                               npy_bytes(rows(run.v0), {long(mine.count), long(nv)})});
    run.shard_files.push_back({shard_name("variables", w.rank()),
                               npy_bytes(rows(run.vfinal), {long(mine.count), long(nv)})});
  }
  return true;
}

namespace {

// writes this rank's shard files into `folder`; returns the error ("" when written)
std::string write_shards(const RunState& run, const std::string& folder) {
  try {
    injected_shard_failure();
    for (const auto& [name, contents] : run.shard_files)
      write_file_atomic((fs::path(folder) / name).string(), contents);
  } catch (const std::exception& e) {
    return std::string("writing its artifact shard: ") + e.what();
  }
  return "";
}

// this rank's rollouts, for a failure's message
std::string my_rollouts(const RunState& run) {
  return rollouts_text(block_of(run.B, world().rank(), world().size()));
}

}  // namespace

std::function<void(const std::string&)> shard_writer(RunState& run) {
  if (!run.sharded) return nullptr;
  return [&run](const std::string& folder) {
    // rank 0's folder to every rank (the others pass an empty string)
    allgather_strings(folder);
    // every rank's shards written, or every rank raises the same RankFailure (write_artifact then
    // removes the temporary folder and nothing is published)
    agree(write_shards(run, folder), my_rollouts(run));
  };
}

void write_own_shard(RunState& run) {
  if (!run.sharded) return;
  const std::string folder = allgather_strings("")[0];
  agree(write_shards(run, folder), my_rollouts(run));
}

}  // namespace steer
