// The mass-spring robot's config section and slot table (model.type "mass_spring";
// registration in mass_spring_model.cpp).
#pragma once

#include "config/config.h"

namespace steer {

ModelInfo mass_spring_info(const MassSpring& m);
// model.* -> c.robot, c.mass_spring, c.topology, c.info, nominal θ
void parse_mass_spring_model(const JsonObject& m, ExperimentConfig& c);

}  // namespace steer
