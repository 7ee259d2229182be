// The projectile's part of an ExperimentConfig (ExperimentConfig::model): its model struct.
#pragma once

#include "steer/models/projectile.h"

namespace steer {

struct ProjectileSetup {
  static constexpr const char* kModel = "projectile";  // model.type
  Projectile model;
};

}  // namespace steer
