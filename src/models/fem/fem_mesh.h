// A tetrahedral mesh for the FEM model (include/steer/models/fem.h): vertices, elements, pinned
// vertices, and what the model struct reads of it (the packed topology and the rest data).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "steer/models/fem.h"

namespace steer {

struct TetMesh {
  std::vector<std::array<double, 3>> vertices;  // rest positions [m]
  std::vector<std::array<int, 4>> elements;     // vertex indices, positively oriented
  std::vector<bool> pinned;                     // per vertex
};

// a box of nx × ny × nz cubes of edge `cell` [m] (per axis) from `origin`, each cut into 5
// tetrahedra (alternating with the parity of i + j + k, so that faces match) or 6 (Freudenthal's
// cut along the cube's main diagonal); vertex (i, j, k) is index i + (nx + 1)(j + (ny + 1) k)
TetMesh grid_mesh(const std::array<int, 3>& cells, const std::array<double, 3>& cell,
                  const std::array<double, 3>& origin, int tets_per_cell);

// Orients every element positively (swapping two vertices where det D_m < 0). Returns an empty
// string, or what is wrong: an element with a repeated or out-of-range vertex, a degenerate
// element (|det D_m| ≤ 1e-12 · its edge length cubed), a vertex in no element.
std::string check_and_orient(TetMesh& mesh);

// the vertices on the boundary (of a face that belongs to one element only), ascending
std::vector<int> surface_vertices(const TetMesh& mesh);

// the model struct's topology (Fem::topo's layout) and rest data (Fem::rest's)
std::vector<int> pack_fem_topology(const TetMesh& mesh, const std::vector<int>& surface);
std::vector<double> fem_rest_data(const TetMesh& mesh);

}  // namespace steer
