// Runs a shipped identification config (configs/<name>.json, its loss.observations a recording
// under configs/data/) in process on the CPU, the check off, nothing written: the fit the
// identification tests hold to the recording's truth.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/experiment.h"

namespace steer::testing {

// configs/<config>.json with its observations from configs/data/<data>; batch_size > 0 keeps
// that many of the config's starts. Returns the artifact's "result".
inline nlohmann::json run_recorded_fit(const std::string& config, const std::string& data, int batch_size = 0) {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/" + config + ".json");
  nlohmann::json j = nlohmann::json::parse(in);
  if (batch_size > 0) j["batch"]["size"] = batch_size;
  j["validation"] = {{"enabled", false}};
  j["loss"]["observations"]["file"] = std::string(STEER_SOURCE_DIR) + "/configs/data/" + data;
  ExperimentConfig c = parse_config(j);
  RunOptions o;
  o.backend = "cpu";
  o.progress = false;
  o.write = false;
  apply_overrides(c, o);
  return run_experiment(c, o).artifact["result"];
}

}  // namespace steer::testing
