// The loss and control keys that read per-step data: loss.sites, loss.reference,
// loss.observations and controls.initial_file (docs/config.md). Called by parse_config.
#pragma once

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"

namespace steer {

// loss.sites into c.loss's site terms; returns their effective description
nlohmann::json parse_site_terms(const JsonObject& l, ExperimentConfig& c);
// loss.reference and loss.observations into c.tracking (and c.track_dt); returns their
// effective descriptions by key (null when neither is given)
nlohmann::json parse_track_sources(const JsonObject& l, ExperimentConfig& c);
// controls.initial_file into c.u_steps / c.u_rows / c.u_dt
void parse_control_file(const JsonObject& ctl, ExperimentConfig& c);

}  // namespace steer
