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
  // per element: its voxel's material index (voxel meshes; 0 otherwise), its actuator (−1: none)
  // and its unit fibre in the rest frame (a muscle's direction; zero otherwise)
  std::vector<int> material, actuator;
  std::vector<std::array<double, 3>> fibre;
  std::vector<int> actuator_kinds;  // per actuator, ActiveStress::Kind
  // every element passive, material 0 (after the elements are listed)
  void reset_element_data();
  std::array<double, 3> centroid(int e) const;
};

// a box of nx × ny × nz cubes of edge `cell` [m] (per axis) from `origin`, each cut into 5
// tetrahedra (alternating with the parity of i + j + k + cut_phase, so that faces match: at
// even parity the centre tetrahedron has the corners +x, +y, +z and +x+y+z, at odd parity the
// other four; cut_phase 1 is warp.sim's add_soft_grid's cut) or 6 (Freudenthal's cut along the
// cube's main diagonal); vertex (i, j, k) is index i + (nx + 1)(j + (ny + 1) k), the cells in the
// order of (k, j, i)
TetMesh grid_mesh(const std::array<int, 3>& cells, const std::array<double, 3>& cell,
                  const std::array<double, 3>& origin, int tets_per_cell, int cut_phase = 0);

// the cells [i, j, k] listed (each with its material index m: [i, j, k, m]), each cut as
// grid_mesh cuts; vertices shared between neighbouring cells, numbered in the order of
// (k, j, i); mesh.material[e] is the cell's m
TetMesh voxel_mesh(const std::vector<std::array<int, 4>>& cells, const std::array<double, 3>& cell,
                   const std::array<double, 3>& origin, int tets_per_cell, int cut_phase = 0);

// A tetrahedral mesh from a file: gmsh's ASCII .msh (format 2.2 or 4.1; its 4-node
// tetrahedra, element type 4) or tetgen's .node + .ele pair (name either; 4 nodes per
// tetrahedron). Lower-dimensional elements of a .msh (points, lines, triangles: boundary and
// physical-group markers) are skipped and counted in `skipped`; other volume elements
// (higher-order tetrahedra, hexahedra, prisms, pyramids), binary .msh files and 10-node tetgen
// files are refused by name. Nodes no tetrahedron uses are left out. Every error is a
// ConfigError naming `key`.
struct MeshFileInfo {
  std::string format;        // "gmsh 2.2", "gmsh 4.1", "tetgen"
  int skipped_elements = 0;  // lower-dimensional .msh elements
  int unused_nodes = 0;
};
TetMesh read_tet_mesh_file(const std::string& path, const std::string& key, MeshFileInfo& info);

// Orients every element positively (swapping two vertices where det D_m < 0). Returns an empty
// string, or what is wrong: an element with a repeated or out-of-range vertex, a degenerate
// element (|det D_m| ≤ 1e-12 · its edge length cubed), a vertex in no element.
std::string check_and_orient(TetMesh& mesh);

// the boundary faces (those that belong to one element only), each with its vertices in the
// order its element lists them, in the order of their sorted vertex triples
std::vector<std::array<int, 3>> surface_triangles(const TetMesh& mesh);
// the vertices on the boundary, ascending
std::vector<int> surface_vertices(const TetMesh& mesh);

// the model struct's topology (Fem::topo's layout: with the membrane's triangles, if any) and
// rest data (Fem::rest's elements; the obstacles and the membrane's records follow it)
std::vector<int> pack_fem_topology(const TetMesh& mesh, const std::vector<int>& surface,
                                   const std::vector<std::array<int, 3>>& triangles = {});
std::vector<double> fem_rest_data(const TetMesh& mesh);
// per membrane triangle (fem/membrane.h): D_m row-major [1/m] and the rest area [m²]
std::vector<double> membrane_rest_data(const TetMesh& mesh,
                                       const std::vector<std::array<int, 3>>& triangles);

}  // namespace steer
