// Runs an experiment in process on the CPU as `steer run` or `steer check` would, nothing
// written, quiet; and a shipped identification config (configs/<name>.json, its
// loss.observations a recording under configs/data/) with the check off: the fit the
// identification tests hold to the recording's truth.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/experiment.h"

namespace steer::testing {

// the artifact of `steer <command>` ("run" or "check") on the config j
inline nlohmann::json run_in_process(const nlohmann::json& j, const std::string& command = "run") {
  ExperimentConfig c = parse_config(j);
  RunOptions o;
  o.command = command;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  apply_overrides(c, o);
  return run_experiment(c, o).artifact;
}

// configs/<config>.json with its observations from configs/data/<data>; batch_size > 0 keeps
// that many of the config's starts. Returns the artifact's "result".
inline nlohmann::json run_recorded_fit(const std::string& config, const std::string& data,
                                       int batch_size = 0) {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/" + config + ".json");
  nlohmann::json j = nlohmann::json::parse(in);
  if (batch_size > 0) j["batch"]["size"] = batch_size;
  j["validation"] = {{"enabled", false}};
  j["loss"]["observations"]["file"] = std::string(STEER_SOURCE_DIR) + "/configs/data/" + data;
  return run_in_process(j)["result"];
}

}  // namespace steer::testing
