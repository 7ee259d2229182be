// The FEM model's drawing in report.html (its ModelDef::report_scene hook).
#pragma once

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace steer {

struct RecordedTrajectory;

// the surface's edges seen from the side (x, y) at each kept frame, actuated elements' edges
// marked, each edge coloured by its elements' mean first modulus (E or μ)
nlohmann::json fem_scene(const ExperimentConfig& c, const nlohmann::json& art,
                         const RecordedTrajectory& tr, int max_frames);

}  // namespace steer
