// The projectile's slot table (model.type "projectile"; registration in projectile_model.cpp).
#pragma once

#include "config/config.h"

namespace steer {

// position.<axis> [m], velocity.<axis> [m/s], force.<axis> [N] for dim axes, and the six
// parameters (gravity, drag, mass, ground.stiffness, ground.damping, ground.smoothing)
ModelInfo projectile_info(int dim);

}  // namespace steer
