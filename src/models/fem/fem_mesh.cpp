// The FEM model's meshes: the grid, orientation and checks, the surface, the packed arrays.
#include "models/fem/fem_mesh.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace steer {

namespace {

// D_m = [X₁ − X₀, X₂ − X₀, X₃ − X₀] (columns)
Mat3<double> rest_shape(const TetMesh& m, const std::array<int, 4>& t) {
  Mat3<double> D;
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) D.a[r][j] = m.vertices[t[j + 1]][r] - m.vertices[t[0]][r];
  return D;
}

// the cube's tetrahedra (corners v[b], bit 0: +x, bit 1: +y, bit 2: +z) as grid_mesh cuts cell
// (i, j, k)
void cut_cube(const int (&v)[8], int i, int j, int k, int tets_per_cell, int cut_phase,
              std::vector<std::array<int, 4>>& out) {
  if (tets_per_cell == 6) {
    // the six paths from corner 0 to corner 7 along the axes, one per axis order
    const int order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (const auto& o : order) {
      const int a = 1 << o[0], b = a | (1 << o[1]);
      out.push_back({v[0], v[a], v[b], v[7]});
    }
  } else if ((i + j + k + cut_phase) % 2 == 0) {
    // the corner tetrahedra at 0, 3, 5, 6 and the centre one 1, 2, 4, 7
    out.push_back({v[0], v[1], v[2], v[4]});
    out.push_back({v[3], v[1], v[2], v[7]});
    out.push_back({v[5], v[1], v[4], v[7]});
    out.push_back({v[6], v[2], v[4], v[7]});
    out.push_back({v[1], v[2], v[4], v[7]});
  } else {
    // mirrored: the corners 1, 2, 4, 7 and the centre 0, 3, 5, 6
    out.push_back({v[1], v[0], v[3], v[5]});
    out.push_back({v[2], v[0], v[3], v[6]});
    out.push_back({v[4], v[0], v[5], v[6]});
    out.push_back({v[7], v[3], v[5], v[6]});
    out.push_back({v[0], v[3], v[5], v[6]});
  }
}

}  // namespace

void TetMesh::reset_element_data() {
  material.assign(elements.size(), 0);
  actuator.assign(elements.size(), -1);
  fibre.assign(elements.size(), {0, 0, 0});
  actuator_kinds.clear();
}

std::array<double, 3> TetMesh::centroid(int e) const {
  std::array<double, 3> c{0, 0, 0};
  for (int a = 0; a < 4; ++a)
    for (int d = 0; d < 3; ++d) c[d] += 0.25 * vertices[elements[e][a]][d];
  return c;
}

TetMesh voxel_mesh(const std::vector<std::array<int, 4>>& cells, const std::array<double, 3>& cell,
                   const std::array<double, 3>& origin, int tets_per_cell, int cut_phase) {
  TetMesh m;
  std::map<std::array<int, 3>, int> lattice;  // (k, j, i) -> vertex
  for (const auto& c : cells)
    for (int b = 0; b < 8; ++b)
      lattice[{c[2] + ((b >> 2) & 1), c[1] + ((b >> 1) & 1), c[0] + (b & 1)}] = 0;
  for (auto& [key, index] : lattice) {
    index = int(m.vertices.size());
    m.vertices.push_back(
        {origin[0] + key[2] * cell[0], origin[1] + key[1] * cell[1], origin[2] + key[0] * cell[2]});
  }
  m.pinned.assign(m.vertices.size(), false);
  std::vector<int> material;
  for (const auto& c : cells) {
    int v[8];
    for (int b = 0; b < 8; ++b)
      v[b] = lattice[{c[2] + ((b >> 2) & 1), c[1] + ((b >> 1) & 1), c[0] + (b & 1)}];
    const size_t before = m.elements.size();
    cut_cube(v, c[0], c[1], c[2], tets_per_cell, cut_phase, m.elements);
    material.insert(material.end(), m.elements.size() - before, c[3]);
  }
  m.reset_element_data();
  m.material = material;
  return m;
}

TetMesh grid_mesh(const std::array<int, 3>& cells, const std::array<double, 3>& cell,
                  const std::array<double, 3>& origin, int tets_per_cell, int cut_phase) {
  TetMesh m;
  const int nx = cells[0], ny = cells[1], nz = cells[2];
  auto id = [&](int i, int j, int k) { return i + (nx + 1) * (j + (ny + 1) * k); };
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i)
        m.vertices.push_back(
            {origin[0] + i * cell[0], origin[1] + j * cell[1], origin[2] + k * cell[2]});
  m.pinned.assign(m.vertices.size(), false);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        // the cube's corners, bit 0: +x, bit 1: +y, bit 2: +z
        int v[8];
        for (int b = 0; b < 8; ++b) v[b] = id(i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1));
        cut_cube(v, i, j, k, tets_per_cell, cut_phase, m.elements);
      }
  m.reset_element_data();
  return m;
}

std::string check_and_orient(TetMesh& mesh) {
  const int N = int(mesh.vertices.size());
  std::vector<bool> used(N, false);
  for (size_t e = 0; e < mesh.elements.size(); ++e) {
    auto& t = mesh.elements[e];
    const std::string where = "element " + std::to_string(e);
    for (int a = 0; a < 4; ++a) {
      if (t[a] < 0 || t[a] >= N)
        return where + " has vertex " + std::to_string(t[a]) + " outside [0, " +
               std::to_string(N - 1) + "]";
      for (int b = 0; b < a; ++b)
        if (t[a] == t[b]) return where + " lists vertex " + std::to_string(t[a]) + " twice";
      used[t[a]] = true;
    }
    const double det = mat3_det(rest_shape(mesh, t));
    double edge = 0;
    for (int a = 1; a < 4; ++a)
      for (int c = 0; c < 3; ++c)
        edge = std::max(edge, std::abs(mesh.vertices[t[a]][c] - mesh.vertices[t[0]][c]));
    if (!(std::abs(det) > 1e-12 * edge * edge * edge))
      return where + " is degenerate (its four vertices are coplanar)";
    if (det < 0) std::swap(t[2], t[3]);
  }
  for (int i = 0; i < N; ++i)
    if (!used[i]) return "vertex " + std::to_string(i) + " belongs to no element";
  return "";
}

std::vector<std::array<int, 3>> surface_triangles(const TetMesh& mesh) {
  // each face under its sorted key, with its count and its vertices in the element's order
  std::map<std::array<int, 3>, std::pair<int, std::array<int, 3>>> faces;
  for (const auto& t : mesh.elements)
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f;
      int n = 0;
      for (int a = 0; a < 4; ++a)
        if (a != skip) f[n++] = t[a];
      std::array<int, 3> key = f;
      std::sort(key.begin(), key.end());
      auto& entry = faces[key];
      ++entry.first;
      entry.second = f;
    }
  std::vector<std::array<int, 3>> out;
  for (const auto& [key, entry] : faces)
    if (entry.first == 1) out.push_back(entry.second);
  return out;
}

std::vector<int> surface_vertices(const TetMesh& mesh) {
  std::vector<bool> on(mesh.vertices.size(), false);
  for (const auto& f : surface_triangles(mesh))
    for (int v : f) on[v] = true;
  std::vector<int> s;
  for (size_t i = 0; i < on.size(); ++i)
    if (on[i]) s.push_back(int(i));
  return s;
}

std::vector<double> membrane_rest_data(const TetMesh& mesh,
                                       const std::vector<std::array<int, 3>>& triangles) {
  std::vector<double> r;
  for (const auto& t : triangles) {
    // the rest edges in the frame e1 = q̂, e2 = n̂ × e1 of the triangle's own normal n = q × r
    std::array<double, 3> q, w;
    for (int c = 0; c < 3; ++c) {
      q[c] = mesh.vertices[t[1]][c] - mesh.vertices[t[0]][c];
      w[c] = mesh.vertices[t[2]][c] - mesh.vertices[t[0]][c];
    }
    const std::array<double, 3> n = {q[1] * w[2] - q[2] * w[1], q[2] * w[0] - q[0] * w[2],
                                     q[0] * w[1] - q[1] * w[0]};
    const double ql = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    const double nl = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    // D = [[e1·q, e1·w], [e2·q, e2·w]] = [[|q|, q̂·w], [0, |n|/|q|]], det D = |n| = 2 area
    const double d00 = ql, d01 = (q[0] * w[0] + q[1] * w[1] + q[2] * w[2]) / ql, d11 = nl / ql;
    const double det = d00 * d11;
    r.insert(r.end(), {d11 / det, -d01 / det, 0.0, d00 / det, 0.5 * det});
  }
  return r;
}

std::vector<int> pack_fem_topology(const TetMesh& mesh, const std::vector<int>& surface,
                                   const std::vector<std::array<int, 3>>& triangles) {
  std::vector<int> t;
  for (const auto& e : mesh.elements) t.insert(t.end(), e.begin(), e.end());
  t.insert(t.end(), mesh.actuator.begin(), mesh.actuator.end());
  for (size_t i = 0; i < mesh.vertices.size(); ++i)
    t.push_back(mesh.pinned[i] ? Fem::kFlagPinned : 0);
  t.insert(t.end(), surface.begin(), surface.end());
  t.insert(t.end(), mesh.actuator_kinds.begin(), mesh.actuator_kinds.end());
  for (const auto& f : triangles) t.insert(t.end(), f.begin(), f.end());
  return t;
}

std::vector<double> fem_rest_data(const TetMesh& mesh) {
  std::vector<double> r;
  for (const auto& t : mesh.elements) {
    const Mat3<double> D = rest_shape(mesh, t);
    const double det = mat3_det(D);
    // B = D⁻¹ = Cᵀ / det (C the cofactor matrix)
    const Mat3<double> C = mat3_cofactor(D);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.push_back(C.a[j][i] / det);
    r.push_back(std::abs(det) / 6.0);
    const size_t e = &t - mesh.elements.data();
    for (int c = 0; c < 3; ++c) r.push_back(mesh.fibre[e][c]);
  }
  return r;
}

}  // namespace steer
