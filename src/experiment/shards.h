// Per-rank artifact shards (docs/artifact.md, "Per-rank shards"; docs/scaling.md). Split across
// ranks, a run whose two whole gradient files (2·B·nv·8 B) would exceed --shard-bytes writes
// them as shards instead: rank r writes gradient_initial.rank<rrrr>.npy and gradient.rank<rrrr>.npy
// with its block's rows into rank 0's temporary artifact folder, and rank 0 publishes the folder
// once every rank has written (the one rename of src/experiment/artifact.h). The output folder
// must then be on a file system every rank sees at the same path.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "experiment/run_stages.h"

namespace steer {

// Collective. When the run is sharded, lists the shards in run.result["gradient_file"], puts
// this rank's shard files in run.shard_files and returns true; false: the caller writes the
// whole files. vunits: each variable's unit.
bool gradient_shards(RunState& run, const std::vector<std::string>& vunits);

// rank 0's hook for write_artifact: writes its own shards into the temporary folder, sends the
// folder to every rank and waits until each has written its shards (null when not sharded)
std::function<void(const std::string&)> shard_writer(RunState& run);

// a rank other than 0's side of shard_writer: receives the folder and writes its shards there;
// nothing when not sharded. Collective with shard_writer.
void write_own_shard(RunState& run);

// "gradient.rank0003.npy" for base "gradient" and rank 3
std::string shard_name(const std::string& base, int rank);

}  // namespace steer
