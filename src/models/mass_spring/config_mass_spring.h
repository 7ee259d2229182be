// The mass-spring robot's config section and slot table (model.type "mass_spring";
// registration in mass_spring_model.cpp).
#pragma once

#include "config/config.h"
#include "steer/models/mass_spring.h"

namespace steer {

// a spring's stiffness k is accepted in (0, kMaxSpringStiffness]: model.robot's springs and
// grid.stiffness, and the range of the spring[i].stiffness slots (sweeps, draws, variables)
constexpr double kMaxSpringStiffness = 1e9;  // [N/m]
inline Range spring_stiffness_range() { return Range{0, kMaxSpringStiffness, true, false}; }

ModelInfo mass_spring_info(const MassSpring& m);
// model.* -> the config's MassSpringSetup (model, robot, topology), c.info, nominal θ
void parse_mass_spring_model(const JsonObject& m, ExperimentConfig& c);

}  // namespace steer
