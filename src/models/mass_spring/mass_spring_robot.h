// Mass-spring robots on the host: a robot description (particles, springs with rest length,
// stiffness and actuation amplitude), the grid-robot generator, and the packing of a robot
// into the model's topology array and nominal parameters.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "steer/models/mass_spring.h"

namespace steer {

struct RobotSpring {
  int a = 0, b = 0;
  double rest_length = 0;  // [m]
  double stiffness = 0;    // [N/m]
  double actuation = 0;    // relative amplitude α; 0 = passive
};

struct Robot {
  int dim = 2;
  std::vector<std::array<double, 3>> particles;  // rest positions [m]
  std::vector<RobotSpring> springs;
  int actuators() const;  // springs with actuation != 0, each its own actuator
};

// cells of a grid robot: (column, row) of unit squares of side `cell` [m], lower-left corner
// of cell (0, 0) at `origin`. Each cell gives the 6 springs among its 4 corners (4 edges, 2
// diagonals); an edge shared by two cells is one spring; vertical edges are actuated with
// amplitude `amplitude`.
Robot grid_robot(const std::vector<std::array<int, 2>>& cells, double cell,
                 std::array<double, 2> origin, double stiffness, double amplitude);

// the model's topology array (see MassSpring::topo) for a robot
std::vector<int> pack_topology(const Robot& r);

// a MassSpring with sizes set from the robot (topo left null: point it at pack_topology's data)
MassSpring make_mass_spring(const Robot& r, int n_phases, int actuation, bool ground, double dt);

// nominal θ: robot stiffness, rest lengths, amplitudes; unit masses; rest positions;
// zero actuator weights and biases; globals as given (indexed by MassSpring::Global)
std::vector<double> nominal_parameters(const MassSpring& m, const Robot& r, double mass,
                                       const std::vector<double>& globals, double spring_damping);

// initial state: particles at their rest positions, at rest
std::vector<double> rest_state(const MassSpring& m, const Robot& r);

}  // namespace steer
