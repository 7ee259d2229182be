// The mass-spring robot's part of an ExperimentConfig (ExperimentConfig::model): the model
// struct, the robot it was built from and the robot's packed topology.
#pragma once

#include <vector>

#include "models/mass_spring/mass_spring_robot.h"
#include "steer/models/mass_spring.h"

namespace steer {

struct MassSpringSetup {
  static constexpr const char* kModel = "mass_spring";  // model.type
  MassSpring model;  // topo unset: a problem points it at its own copy of `topology`
  Robot robot;       // particles and springs as configured (the effective config echoes them)
  std::vector<int> topology;  // pack_topology(robot): spring ends, actuators, adjacency
};

}  // namespace steer
