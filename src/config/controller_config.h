// The `controller` section of a config (controller_config.cpp; docs/config.md, "Controllers").
#pragma once

#include "config/config.h"

namespace steer {

// controller.* -> c.policy and its θ slots (controller.*) after the model's; called after the
// model, the timestep and the initial state are parsed, before the batch and the variables
void parse_controller(const JsonObject& k, ExperimentConfig& c);
// after variables.*: refuses the noise seed slot as a variable
void check_controller_variables(const ExperimentConfig& c);
// the policy's weights in one rollout's θ (c.info.np() values) as a weight file,
// {"layers": [{"weight": [[…] × out], "bias": […]}, …]}: what controller.init.file reads
nlohmann::json controller_weight_file(const ExperimentConfig& c, const double* theta);

}  // namespace steer
