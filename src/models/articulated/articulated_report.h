// The articulated model's drawing in report.html, its ModelDef::report_scene hook
// (src/models/registry.h; the pieces in src/experiment/report_scene.h).
#pragma once

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/report.h"

namespace steer {

nlohmann::json articulated_scene(const ExperimentConfig& c, const nlohmann::json& artifact,
                                 const RecordedTrajectory& tr, int max_frames);

}  // namespace steer
