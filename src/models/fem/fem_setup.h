// The FEM model's part of an ExperimentConfig (ExperimentConfig::model): the model struct, the
// mesh it was built from, and the arrays the struct reads (a runner keeps its own copies).
#pragma once

#include <string>
#include <vector>

#include "models/fem/fem_mesh.h"

namespace steer {

struct FemSetup {
  static constexpr const char* kModel = "fem";  // model.type
  Fem model;  // topo, rest unset: a runner points them at its own copies
  TetMesh mesh;
  std::vector<int> topology;  // pack_fem_topology
  std::vector<double> rest;   // fem_rest_data
  nlohmann::json mesh_json;   // model.mesh as given (the effective config echoes it)
  MeshFileInfo mesh_file;     // mesh.file's format and what the reader left out
};

}  // namespace steer
