// model.type "fem": a volumetric soft body of linear tetrahedra (include/steer/models/fem.h).
// Its model section (the mesh, the material, pinned vertices, gravity, damping, the ground), slot
// table, initial state, effective-config keys, runner and registration (docs/fem.md).
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/data_file.h"
#include "config/json_reader.h"
#include "models/fem/fem_report.h"
#include "models/fem/fem_setup.h"
#include "models/registry.h"
#include "problem/controlled_runner.h"

namespace steer {

namespace {

const char* kAxes[3] = {"x", "y", "z"};

const FemSetup& setup(const ExperimentConfig& c) { return c.model_state<FemSetup>(); }

std::string idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::array<double, 3> vec3(const JsonObject& o, const std::string& key, std::array<double, 3> def,
                           Range r) {
  const std::vector<double> v = o.numbers(key, {def[0], def[1], def[2]}, r, 3);
  return {v[0], v[1], v[2]};
}

// cell_size (one number, or one per axis), origin and tets_per_cell of a grid or voxel layout
struct CellLayout {
  std::array<double, 3> size{}, origin{};
  int per = 5;
  int phase = 0;  // the 5-tetrahedron cut's alternation (grid_mesh)
};
CellLayout parse_cell_layout(const JsonObject& o) {
  CellLayout l;
  const Range positive{0, 1e3, true, false};
  if (o.has("cell_size") && o.raw("cell_size").is_array()) {
    l.size = vec3(o, "cell_size", {0.1, 0.1, 0.1}, positive);
  } else {
    const double s = o.number("cell_size", 0.1, positive);
    l.size = {s, s, s};
  }
  l.origin = vec3(o, "origin", {0, 0, 0}, Range::closed(-1e6, 1e6));
  l.per = int(o.integer("tets_per_cell", 5, 5, 6));
  if (o.has("cut_phase") && l.per != 5)
    config_fail(o.key_path("cut_phase"), "applies to tets_per_cell 5 only");
  l.phase = int(o.integer("cut_phase", 0, 0, 1));
  return l;
}

// mesh.voxels.layout: a 3-D integer .npy array [nx][ny][nz], 0 where there is no voxel and
// m + 1 for a voxel of material m (relative to the config's folder)
std::vector<std::array<int, 4>> voxel_layout_file(const JsonObject& vox, int n_materials,
                                                  const std::string& base_dir) {
  const std::string key = vox.key_path("layout");
  const auto& f = vox.raw("layout");
  if (!f.is_string()) config_fail(key, "expected a .npy file name");
  const DataTable t = read_npy_array(resolve_data_path(f.get<std::string>(), base_dir), key, 3);
  if (t.shape.size() != 3) config_fail(key, "expected a 3-D array [nx][ny][nz]");
  std::vector<std::array<int, 4>> cells;
  const long ny = t.shape[1], nz = t.shape[2];
  for (size_t q = 0; q < t.values.size(); ++q) {
    const double v = t.values[q];
    if (!(v >= 0 && v <= n_materials && v == std::floor(v)))
      config_fail(key, "entry " + std::to_string(q) + " is " + number_text(v) +
                           "; expected integers in [0, " + std::to_string(n_materials) +
                           "] (0: empty, m + 1: a voxel of material m)");
    if (v == 0) continue;
    const long i = long(q) / (ny * nz), j = (long(q) / nz) % ny, k = long(q) % nz;
    cells.push_back({int(i), int(j), int(k), int(v) - 1});
  }
  if (cells.empty()) config_fail(key, "the layout holds no voxel");
  return cells;
}

// mesh.voxels: {cells: [[i, j, k] or [i, j, k, material]] or layout: "file.npy", cell_size,
// origin, tets_per_cell}
TetMesh parse_voxels(const JsonObject& g, int n_materials, const std::string& base_dir) {
  JsonObject vox = g.object("voxels");
  if (vox.has("layout") == vox.has("cells"))
    config_fail(vox.path(), "give either cells or layout (a .npy file)");
  if (vox.has("layout")) {
    const std::vector<std::array<int, 4>> cv = voxel_layout_file(vox, n_materials, base_dir);
    const CellLayout l = parse_cell_layout(vox);
    vox.finish();
    TetMesh mesh = voxel_mesh(cv, l.size, l.origin, l.per, l.phase);
    if (int(mesh.vertices.size()) > Fem::kMaxVertices)
      config_fail(vox.key_path("layout"),
                  "the voxels have " + std::to_string(mesh.vertices.size()) +
                      " vertices; the model takes at most " + std::to_string(Fem::kMaxVertices));
    return mesh;
  }
  const auto& cells = vox.raw("cells");
  const std::string cp = vox.key_path("cells");
  if (!cells.is_array() || cells.empty())
    config_fail(cp, "expected a non-empty array of [i, j, k] or [i, j, k, material] cells");
  std::vector<std::array<int, 4>> cv;
  std::map<std::array<int, 3>, size_t> seen;
  for (size_t q = 0; q < cells.size(); ++q) {
    const auto& e = cells[q];
    if (!e.is_array() || (e.size() != 3 && e.size() != 4))
      config_fail(idx(cp, q), "expected [i, j, k] or [i, j, k, material], integers");
    std::array<int, 4> c{0, 0, 0, 0};
    for (size_t a = 0; a < e.size(); ++a) {
      const long hi = a < 3 ? 1000 : n_materials - 1;
      if (!e[a].is_number_integer() || e[a].get<long>() < 0 || e[a].get<long>() > hi)
        config_fail(idx(cp, q),
                    a < 3 ? "cell indices must be integers in [0, 1000]"
                          : "the material must be an index in [0, " + std::to_string(hi) +
                                "] (0: model.material, m >= 1: model.voxel_materials[m - 1])");
      c[a] = e[a].get<int>();
    }
    if (!seen.emplace(std::array<int, 3>{c[0], c[1], c[2]}, q).second)
      config_fail(idx(cp, q), "cell listed twice (first at index " +
                                  std::to_string(seen[{c[0], c[1], c[2]}]) + ")");
    cv.push_back(c);
  }
  const CellLayout l = parse_cell_layout(vox);
  vox.finish();
  TetMesh mesh = voxel_mesh(cv, l.size, l.origin, l.per, l.phase);
  if (int(mesh.vertices.size()) > Fem::kMaxVertices)
    config_fail(cp, "the voxels have " + std::to_string(mesh.vertices.size()) +
                        " vertices; the model takes at most " + std::to_string(Fem::kMaxVertices));
  return mesh;
}

// mesh.file (gmsh .msh, tetgen .node / .ele; relative to the config's folder), scaled by
// mesh.scale and moved by mesh.offset
TetMesh parse_mesh_file(const JsonObject& g, const std::string& base_dir, MeshFileInfo& info) {
  const std::string key = g.key_path("file");
  const auto& f = g.raw("file");
  if (!f.is_string() || f.get<std::string>().empty()) config_fail(key, "expected a file name");
  TetMesh mesh = read_tet_mesh_file(resolve_data_path(f.get<std::string>(), base_dir), key, info);
  const double scale = g.number("scale", 1.0, Range{0, 1e6, true, false});
  const auto offset = vec3(g, "offset", {0, 0, 0}, Range::closed(-1e6, 1e6));
  for (auto& v : mesh.vertices)
    for (int c = 0; c < 3; ++c) v[c] = scale * v[c] + offset[c];
  if (int(mesh.vertices.size()) > Fem::kMaxVertices)
    config_fail(key, "the mesh has " + std::to_string(mesh.vertices.size()) +
                         " vertices; the model takes at most " + std::to_string(Fem::kMaxVertices));
  return mesh;
}

// model.mesh: {grid: {cells, cell_size, origin, tets_per_cell}}, {voxels: …}, {file, scale,
// offset} or {vertices, tetrahedra}
TetMesh parse_mesh(const JsonObject& g, int n_materials, const std::string& base_dir,
                   MeshFileInfo& info) {
  TetMesh mesh;
  const int kinds = int(g.has("grid")) + int(g.has("voxels")) + int(g.has("file")) +
                    int(g.has("vertices") || g.has("tetrahedra"));
  if (kinds > 1) config_fail(g.path(), "give one of grid, voxels, file, or vertices + tetrahedra");
  if (n_materials > 1 && !g.has("voxels"))
    config_fail(g.path(), "model.voxel_materials needs mesh.voxels (its cells name the materials)");
  if (g.has("voxels")) return parse_voxels(g, n_materials, base_dir);
  if (g.has("file")) return parse_mesh_file(g, base_dir, info);
  if (g.has("grid")) {
    JsonObject grid = g.object("grid");
    const auto& cells = grid.raw("cells");
    const std::string cp = grid.key_path("cells");
    if (!cells.is_array() || cells.size() != 3)
      config_fail(cp, "expected [nx, ny, nz], three integers in [1, 1000]");
    std::array<int, 3> n{};
    for (int a = 0; a < 3; ++a) {
      if (!cells[a].is_number_integer() || cells[a].get<long>() < 1 || cells[a].get<long>() > 1000)
        config_fail(cp, "expected [nx, ny, nz], three integers in [1, 1000]");
      n[a] = cells[a].get<int>();
    }
    const CellLayout l = parse_cell_layout(grid);
    grid.finish();
    const long vertices = long(n[0] + 1) * (n[1] + 1) * (n[2] + 1);
    if (vertices > Fem::kMaxVertices)
      config_fail(cp, "the grid has " + std::to_string(vertices) +
                          " vertices; the model takes at most " +
                          std::to_string(Fem::kMaxVertices));
    return grid_mesh(n, l.size, l.origin, l.per, l.phase);
  }
  if (!g.has("vertices") || !g.has("tetrahedra"))
    config_fail(g.path(), "expected grid, voxels, file, or vertices and tetrahedra");
  const auto& vs = g.raw("vertices");
  const std::string vp = g.key_path("vertices");
  if (!vs.is_array() || vs.size() < 4 || vs.size() > size_t(Fem::kMaxVertices))
    config_fail(vp, "expected an array of 4 to " + std::to_string(Fem::kMaxVertices) +
                        " [x, y, z] positions");
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& e = vs[i];
    if (!e.is_array() || e.size() != 3 || !e[0].is_number() || !e[1].is_number() ||
        !e[2].is_number())
      config_fail(idx(vp, i), "expected [x, y, z], three numbers");
    mesh.vertices.push_back({e[0].get<double>(), e[1].get<double>(), e[2].get<double>()});
  }
  const auto& ts = g.raw("tetrahedra");
  const std::string tp = g.key_path("tetrahedra");
  if (!ts.is_array() || ts.empty())
    config_fail(tp, "expected a non-empty array of [a, b, c, d] vertex indices");
  for (size_t e = 0; e < ts.size(); ++e) {
    const auto& t = ts[e];
    if (!t.is_array() || t.size() != 4)
      config_fail(idx(tp, e), "expected [a, b, c, d], four vertex indices");
    std::array<int, 4> q{};
    for (int a = 0; a < 4; ++a) {
      if (!t[a].is_number_integer() || t[a].get<long>() < 0 || t[a].get<long>() >= long(vs.size()))
        config_fail(idx(tp, e), "vertex indices must be integers in [0, " +
                                    std::to_string(vs.size() - 1) + "]");
      q[a] = t[a].get<int>();
    }
    mesh.elements.push_back(q);
  }
  mesh.pinned.assign(mesh.vertices.size(), false);
  mesh.reset_element_data();
  return mesh;
}

// model.pinned: [indices], or {min: [x, y, z], max: [x, y, z]} (the vertices inside the box)
void parse_pinned(const JsonObject& m, TetMesh& mesh) {
  if (!m.has("pinned")) return;
  const auto& pj = m.raw("pinned");
  const std::string pp = m.key_path("pinned");
  const int N = int(mesh.vertices.size());
  if (pj.is_array()) {
    for (size_t q = 0; q < pj.size(); ++q) {
      if (!pj[q].is_number_integer() || pj[q].get<long>() < 0 || pj[q].get<long>() >= N)
        config_fail(idx(pp, q), "expected a vertex index in [0, " + std::to_string(N - 1) + "]");
      mesh.pinned[pj[q].get<int>()] = true;
    }
    return;
  }
  if (!pj.is_object())
    config_fail(pp, "expected [vertex indices] or {\"min\": [x, y, z], \"max\": [x, y, z]}");
  JsonObject box = m.object("pinned");
  const Range any = Range::closed(-1e9, 1e9);
  const auto lo = vec3(box, "min", {-1e9, -1e9, -1e9}, any),
             hi = vec3(box, "max", {1e9, 1e9, 1e9}, any);
  box.finish();
  int count = 0;
  for (int i = 0; i < N; ++i) {
    bool in = true;
    for (int c = 0; c < 3; ++c)
      in = in && mesh.vertices[i][c] >= lo[c] && mesh.vertices[i][c] <= hi[c];
    if (in) mesh.pinned[i] = true, ++count;
  }
  if (count == 0) config_fail(pp, "the box holds no vertex of the mesh");
}

// model.obstacles: [{type: "plane", normal, point} or {type: "box", center, half_extents}],
// each as a kFemObstacleStride record (fem/contact.h)
std::vector<double> parse_obstacles(const JsonObject& m) {
  std::vector<double> out;
  if (!m.has("obstacles")) return out;
  const std::string path = m.key_path("obstacles");
  const auto& list = m.raw("obstacles");
  if (!list.is_array()) config_fail(path, "expected an array of {type: plane or box, ...}");
  if (int(list.size()) > Fem::kMaxObstacles)
    config_fail(path, "at most " + std::to_string(Fem::kMaxObstacles) + " obstacles; got " +
                          std::to_string(list.size()));
  const Range any = Range::closed(-1e6, 1e6);
  for (size_t q = 0; q < list.size(); ++q) {
    if (!list[q].is_object()) config_fail(idx(path, q), "expected {type: plane or box, ...}");
    JsonObject o(list[q], idx(path, q));
    const std::string type = o.choice("type", "plane", {"plane", "box"});
    double rec[kFemObstacleStride] = {};
    if (type == "plane") {
      const auto n = vec3(o, "normal", {0, 1, 0}, Range::closed(-1e6, 1e6));
      const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      if (!(len > 1e-12)) config_fail(o.key_path("normal"), "must not be the zero vector");
      const auto pt = vec3(o, "point", {0, 0, 0}, any);
      rec[0] = kFemPlane;
      for (int c = 0; c < 3; ++c) rec[1 + c] = n[c] / len;
      rec[4] = rec[1] * pt[0] + rec[2] * pt[1] + rec[3] * pt[2];
    } else {
      const auto ctr = vec3(o, "center", {0, 0, 0}, any);
      const auto h = vec3(o, "half_extents", {0.5, 0.5, 0.5}, Range{0, 1e6, true, false});
      rec[0] = kFemBox;
      for (int c = 0; c < 3; ++c) rec[1 + c] = ctr[c], rec[4 + c] = h[c];
    }
    o.finish();
    out.insert(out.end(), rec, rec + kFemObstacleStride);
  }
  return out;
}

// ground.contact ("softplus" or "hard") and ground.damping_law ("always" or "approach", the hard
// law's)
void parse_contact_law(const JsonObject& gr, Fem& f) {
  const std::string law = gr.choice("contact", "softplus", {"softplus", "hard"});
  f.contact_law = law == "hard" ? FemContactLaw<double>::kHard : FemContactLaw<double>::kSoftplus;
  const std::string damping = gr.choice("damping_law", "always", {"always", "approach"});
  if (damping == "approach" && law != "hard")
    config_fail(gr.key_path("damping_law"), "\"approach\" applies to contact \"hard\" only");
  f.contact_approach_only = damping == "approach";
}

// what the implicit step (fem/implicit.h) does not model is refused by name
void refuse_for_implicit(const JsonObject& m, const JsonObject& gr, const Fem& f) {
  auto refuse = [](const std::string& key) {
    config_fail(key,
                "is not built for model.integrator \"backward_euler\" (its Newton solve "
                "knows the softplus ground, lumped masses and point vertices); use "
                "\"symplectic_euler\"");
  };
  if (f.n_obstacles > 0) refuse(m.key_path("obstacles"));
  if (f.contact_law != FemContactLaw<double>::kSoftplus) refuse(gr.key_path("contact"));
  if (f.vertex_radius > 0) refuse(m.key_path("vertex_radius"));
  if (f.vertex_mass > 0) refuse(m.key_path("vertex_mass"));
  if (f.n_triangles > 0) refuse(m.key_path("surface_membrane"));
}

ModelInfo fem_info(const Fem& m) {
  ModelInfo info;
  info.type = FemSetup::kModel;
  const int N = m.n_vertices;
  info.state_names.resize(m.nx());
  info.state_units.resize(m.nx());
  info.state_ranges.assign(m.nx(), Range::closed(-1e6, 1e6));
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < 3; ++c) {
      const std::string pv = "vertex[" + std::to_string(i) + "].";
      info.state_names[m.x_pos(i) + c] = pv + "position." + kAxes[c];
      info.state_units[m.x_pos(i) + c] = "m";
      info.state_names[m.x_vel(i) + c] = pv + "velocity." + kAxes[c];
      info.state_units[m.x_vel(i) + c] = "m/s";
      info.state_groups["vertex.position"].push_back(m.x_pos(i) + c);
      info.state_groups["vertex.velocity"].push_back(m.x_vel(i) + c);
    }
  for (int a = 0; a < m.n_actuators; ++a) {
    info.control_names.push_back("actuator[" + std::to_string(a) + "]");
    info.control_units.push_back("1");
  }
  info.resize_params(m.np());
  const bool warp = m.law == Fem::kNeoHookeanWarp;
  const char* n1 = m.lame_parameters ? "mu" : "young";
  const char* n2 = m.lame_parameters ? "lambda" : "poisson";
  const Range modulus{0, 1e12, true, false};
  // ν < ½ (incompressible at ½); the stable neo-Hookean needs no more, λ_l ≥ 0 here
  const Range poisson = Range::closed(0, 0.499);
  for (int e = 0; e < m.n_elements; ++e) {
    const std::string pe = "element[" + std::to_string(e) + "].";
    info.set_param(m.p_element(e, Fem::kModulus1), pe + n1, "Pa", modulus,
                   std::string("element.") + n1);
    info.set_param(m.p_element(e, Fem::kModulus2), pe + n2, m.lame_parameters ? "Pa" : "1",
                   m.lame_parameters ? (warp ? modulus : Range::closed(0, 1e12)) : poisson,
                   std::string("element.") + n2);
    info.set_param(m.p_element(e, Fem::kDensity), pe + "density", "kg/m^3",
                   Range{0, 1e6, true, false}, "element.density");
    info.set_param(m.p_element(e, Fem::kDamping), pe + "damping", warp ? "Pa*s" : "s",
                   Range::closed(0, 1e9), "element.damping");
    // a fill of 0 would leave a vertex massless: SIMP's usual floor 10⁻³
    info.set_param(m.p_element(e, Fem::kFill), pe + "fill", "1", Range::closed(1e-3, 1),
                   "element.fill");
    info.set_param(m.p_element(e, Fem::kActuation), pe + "actuation", "Pa", Range::closed(0, 1e9),
                   "element.actuation");
  }
  auto global = [&](int g, const char* name, const char* unit, Range r) {
    info.set_param(m.p_global(g), name, unit, r, "");
  };
  global(Fem::kGravity, "gravity", "m/s^2", Range::closed(-1e4, 1e4));
  global(Fem::kMassDamping, "mass_damping", "1/s", Range::closed(0, 1e4));
  global(Fem::kGroundHeight, "ground.height", "m", Range::closed(-1e6, 1e6));
  global(Fem::kGroundStiffness, "ground.stiffness", "N/m", Range{0, 1e12, true, false});
  global(Fem::kGroundDamping, "ground.damping", "N*s/m", Range::closed(0, 1e9));
  global(Fem::kGroundSmoothing, "ground.smoothing", "m", Range{0, 1e3, true, false});
  global(Fem::kFriction, "ground.friction", "1", Range::closed(0, 10));
  // the membrane's k_λ divides k_μ in its rest area ratio α = 1 + k_μ/k_λ (fem/membrane.h)
  global(Fem::kMembraneMu, "surface_membrane.mu", "Pa*m", Range::closed(0, 1e12));
  global(Fem::kMembraneLambda, "surface_membrane.lambda", "Pa*m", Range{0, 1e12, true, false});
  global(Fem::kMembraneDamping, "surface_membrane.damping", "Pa*m*s", Range::closed(0, 1e9));
  global(Fem::kFrictionSmoothing, "ground.friction_smoothing", "m/s", Range{0, 1e3, true, false});
  return info;
}

// one material's element slots: the two moduli, density, damping
struct MaterialSpec {
  double a = 0, b = 0, rho = 0, damping = 0;
};
// model.material or model.voxel_materials[i]: the parameterization (E, ν or μ, λ) is the base
// material's, and the law is set once, in model.material
MaterialSpec parse_material(JsonObject& mat, const Fem& f, const std::vector<Range>& R) {
  if (f.lame_parameters ? (mat.has("young") || mat.has("poisson"))
                        : (mat.has("mu") || mat.has("lambda")))
    config_fail(mat.key_path(f.lame_parameters ? (mat.has("young") ? "young" : "poisson")
                                               : (mat.has("mu") ? "mu" : "lambda")),
                "give either young and poisson, or mu and lambda, the same pair in every material "
                "(model.material sets it)");
  MaterialSpec q;
  const Range& r1 = R[f.p_element(0, Fem::kModulus1)];
  const Range& r2 = R[f.p_element(0, Fem::kModulus2)];
  q.a = f.lame_parameters ? mat.number("mu", 1e5, r1) : mat.number("young", 1e6, r1);
  q.b = f.lame_parameters ? mat.number("lambda", 1e5, r2) : mat.number("poisson", 0.3, r2);
  q.rho = mat.number("density", 1000.0, R[f.p_element(0, Fem::kDensity)]);
  q.damping = mat.number("damping", 0.0, R[f.p_element(0, Fem::kDamping)]);
  return q;
}

// model.actuators: [{kind, strength, fibre, region: {min, max}} or {…, material: m}]: the
// elements whose rest centroid lies in the region, or whose voxel has material m; returns each
// actuator's strength [Pa]
std::vector<double> parse_actuators(const JsonObject& m, TetMesh& mesh, int n_materials) {
  std::vector<double> strength;
  if (!m.has("actuators")) return strength;
  const auto& list = m.raw("actuators");
  const std::string ap = m.key_path("actuators");
  if (!list.is_array() || list.empty() || list.size() > 64)
    config_fail(ap, "expected an array of 1 to 64 actuators");
  const int E = int(mesh.elements.size());
  for (size_t q = 0; q < list.size(); ++q) {
    JsonObject a(list[q], idx(ap, q));
    const std::string kind = a.choice("kind", "muscle", {"muscle", "pneumatic"});
    strength.push_back(a.number("strength", 1e4, Range::closed(0, 1e9)));
    std::array<double, 3> fibre{0, 0, 0};
    if (kind == "muscle") {
      fibre = vec3(a, "fibre", {1, 0, 0}, Range::closed(-1e6, 1e6));
      const double n = std::sqrt(fibre[0] * fibre[0] + fibre[1] * fibre[1] + fibre[2] * fibre[2]);
      if (!(n > 0)) config_fail(a.key_path("fibre"), "must not be the zero vector");
      for (double& v : fibre) v /= n;
    } else if (a.has("fibre")) {
      config_fail(a.key_path("fibre"), "applies to kind \"muscle\" only");
    }
    const bool by_region = a.has("region"), by_material = a.has("material");
    if (by_region == by_material) config_fail(a.path(), "give either region or material");
    std::array<double, 3> lo{}, hi{};
    int material = -1;
    if (by_region) {
      JsonObject box = a.object("region");
      lo = vec3(box, "min", {-1e9, -1e9, -1e9}, Range::closed(-1e9, 1e9));
      hi = vec3(box, "max", {1e9, 1e9, 1e9}, Range::closed(-1e9, 1e9));
      box.finish();
    } else {
      material = int(a.integer("material", 0, 0, n_materials - 1));
    }
    a.finish();
    int count = 0;
    for (int e = 0; e < E; ++e) {
      bool in = material >= 0 ? mesh.material[e] == material : true;
      if (by_region) {
        const auto c = mesh.centroid(e);
        for (int d = 0; d < 3; ++d) in = in && c[d] >= lo[d] && c[d] <= hi[d];
      }
      if (!in) continue;
      if (mesh.actuator[e] >= 0)
        config_fail(idx(ap, q), "element " + std::to_string(e) + " belongs to actuators[" +
                                    std::to_string(mesh.actuator[e]) +
                                    "] too; an element has one actuator");
      mesh.actuator[e] = int(q);
      mesh.fibre[e] = fibre;
      ++count;
    }
    if (count == 0) config_fail(idx(ap, q), "holds no element");
    mesh.actuator_kinds.push_back(kind == "muscle" ? ActiveStress<double>::kMuscle
                                                   : ActiveStress<double>::kPneumatic);
  }
  return strength;
}

void parse_model(const JsonObject& m, ExperimentConfig& c) {
  FemSetup& s = c.model.emplace<FemSetup>();
  const int n_materials = 1 + (m.has("voxel_materials") && m.raw("voxel_materials").is_array()
                                   ? int(m.raw("voxel_materials").size())
                                   : 0);
  if (!m.has("mesh"))
    config_fail(m.key_path("mesh"),
                "missing; expected grid, voxels, file, or vertices and tetrahedra");
  s.mesh_json = m.raw("mesh");
  JsonObject g = m.object("mesh");
  s.mesh = parse_mesh(g, n_materials, c.base_dir, s.mesh_file);
  g.finish();
  const std::string bad = check_and_orient(s.mesh);
  if (!bad.empty()) config_fail(m.key_path("mesh"), bad);
  parse_pinned(m, s.mesh);
  const std::vector<double> strength = parse_actuators(m, s.mesh, n_materials);
  const std::vector<int> surface = surface_vertices(s.mesh);
  // warp.sim's surface membrane: a triangle on every boundary face
  const std::vector<std::array<int, 3>> triangles =
      m.has("surface_membrane") ? surface_triangles(s.mesh) : std::vector<std::array<int, 3>>();
  s.topology = pack_fem_topology(s.mesh, surface, triangles);
  s.rest = fem_rest_data(s.mesh);
  Fem& f = s.model;
  f.n_triangles = int(triangles.size());
  f.n_vertices = int(s.mesh.vertices.size());
  f.n_elements = int(s.mesh.elements.size());
  f.n_surface = int(surface.size());
  f.n_actuators = int(strength.size());
  f.simp_penalty = m.number("simp_penalty", 3.0, Range::closed(1, 10));
  // the integrator: symplectic Euler, or backward Euler solved by Newton's method
  // (include/steer/models/fem/implicit.h), which needs the mesh to fit its band storage
  const std::string integ =
      m.choice("integrator", "symplectic_euler", {"symplectic_euler", "backward_euler"});
  f.integrator = integ == "backward_euler" ? Fem::kBackwardEuler : Fem::kSymplecticEuler;
  if (m.has("newton_iterations") && f.integrator != Fem::kBackwardEuler)
    config_fail(m.key_path("newton_iterations"),
                "applies to model.integrator \"backward_euler\" only");
  f.newton_iterations = int(m.integer("newton_iterations", 40, 1, 500));
  if (f.integrator == Fem::kBackwardEuler) {
    Fem probe = f;
    probe.topo = s.topology.data();
    switch (probe.implicit_fits()) {
      case 1:
        config_fail(m.key_path("integrator"),
                    "\"backward_euler\" takes at most " + std::to_string(Fem::kImplicitVertices) +
                        " vertices; this mesh has " + std::to_string(f.n_vertices));
      case 2:
        config_fail(
            m.key_path("integrator"),
            "\"backward_euler\" stores the Hessian's band in at most " +
                std::to_string(Fem::kImplicitBand) +
                " entries, 3 x vertices x (bandwidth + 1) = " + std::to_string(3 * f.n_vertices) +
                " x " + std::to_string(probe.implicit_band() + 1) +
                " here (bandwidth = 3 x (largest vertex-index gap within an element + 1) - 1); "
                "number the vertices so that elements join nearby indices, or use fewer vertices");
      default:
        break;
    }
  }

  JsonObject mat = m.object("material");
  const std::string law = mat.choice("law", "stable_neo_hookean",
                                     {"stable_neo_hookean", "neo_hookean_warp", "corotated"});
  f.law = law == "neo_hookean_warp" ? Fem::kNeoHookeanWarp
          : law == "corotated"      ? Fem::kCorotated
                                    : Fem::kStableNeoHookean;
  f.lame_parameters = mat.has("mu") || mat.has("lambda");
  JsonObject gr = m.object("ground");
  f.ground = gr.choice("type", "penalty", {"penalty", "none"}) == "penalty";
  parse_contact_law(gr, f);
  const std::vector<double> obstacles = parse_obstacles(m);
  f.n_obstacles = int(obstacles.size()) / kFemObstacleStride;
  s.rest.insert(s.rest.end(), obstacles.begin(), obstacles.end());
  const std::vector<double> membrane = membrane_rest_data(s.mesh, triangles);
  s.rest.insert(s.rest.end(), membrane.begin(), membrane.end());
  f.vertex_radius = m.number("vertex_radius", 0.0, Range::closed(0, 1e3));
  f.vertex_mass =
      m.has("vertex_mass") ? m.number("vertex_mass", 0.0, Range{0, 1e6, true, false}) : 0.0;
  if (f.integrator == Fem::kBackwardEuler) refuse_for_implicit(m, gr, f);
  c.info = fem_info(f);
  const auto& R = c.info.param_ranges;
  std::vector<MaterialSpec> materials{parse_material(mat, f, R)};
  mat.finish();
  if (n_materials > 1) {
    const std::string vp = m.key_path("voxel_materials");
    for (int q = 1; q < n_materials; ++q) {
      JsonObject vm(m.raw("voxel_materials")[q - 1], idx(vp, q - 1));
      if (vm.has("law"))
        config_fail(vm.key_path("law"), "the law is model.material.law, for every material");
      materials.push_back(parse_material(vm, f, R));
      vm.finish();
    }
  } else if (m.has("voxel_materials") && !m.raw("voxel_materials").is_array()) {
    config_fail(m.key_path("voxel_materials"), "expected an array of materials");
  }
  c.theta.assign(f.np(), 0.0);
  for (int e = 0; e < f.n_elements; ++e) {
    const MaterialSpec& q = materials[s.mesh.material[e]];
    c.theta[f.p_element(e, Fem::kModulus1)] = q.a;
    c.theta[f.p_element(e, Fem::kModulus2)] = q.b;
    c.theta[f.p_element(e, Fem::kDensity)] = q.rho;
    c.theta[f.p_element(e, Fem::kDamping)] = q.damping;
    c.theta[f.p_element(e, Fem::kFill)] = 1.0;
    c.theta[f.p_element(e, Fem::kActuation)] =
        s.mesh.actuator[e] >= 0 ? strength[s.mesh.actuator[e]] : 0.0;
  }
  auto global = [&](const JsonObject& o, const char* key, int g, double def) {
    c.theta[f.p_global(g)] = o.number(key, def, R[f.p_global(g)]);
  };
  global(m, "gravity", Fem::kGravity, 9.81);
  global(m, "mass_damping", Fem::kMassDamping, 0.0);
  global(gr, "height", Fem::kGroundHeight, 0.0);
  global(gr, "stiffness", Fem::kGroundStiffness, 1e4);
  global(gr, "damping", Fem::kGroundDamping, 10.0);
  global(gr, "smoothing", Fem::kGroundSmoothing, 1e-3);
  global(gr, "friction", Fem::kFriction, 0.5);
  global(gr, "friction_smoothing", Fem::kFrictionSmoothing, 0.01);
  gr.finish();
  JsonObject mem = m.object("surface_membrane");
  global(mem, "mu", Fem::kMembraneMu, 0.0);
  global(mem, "lambda", Fem::kMembraneLambda, 1.0);
  global(mem, "damping", Fem::kMembraneDamping, 0.0);
  mem.finish();
}

// the body starts at rest in its rest shape, optionally shifted and moving as a whole (pinned
// vertices keep still)
void parse_initial_state(const JsonObject& s, ExperimentConfig& c) {
  const FemSetup& st = setup(c);
  const Fem& m = st.model;
  const auto shift = s.numbers("offset", {0, 0, 0}, Range::closed(-1e6, 1e6), 3);
  const auto vel = s.numbers("velocity", {0, 0, 0}, Range::closed(-1e6, 1e6), 3);
  c.x0.assign(m.nx(), 0.0);
  for (int i = 0; i < m.n_vertices; ++i)
    for (int d = 0; d < 3; ++d) {
      c.x0[m.x_pos(i) + d] = st.mesh.vertices[i][d] + shift[d];
      c.x0[m.x_vel(i) + d] = st.mesh.pinned[i] ? 0.0 : vel[d];
    }
}

void model_json(const ExperimentConfig& c, nlohmann::json& j) {
  const FemSetup& s = setup(c);
  const Fem& m = s.model;
  j["mesh"] = s.mesh_json;
  if (!s.mesh_file.format.empty())
    j["mesh_file"] = {{"format", s.mesh_file.format},
                      {"skipped_lower_dimensional_elements", s.mesh_file.skipped_elements},
                      {"unused_nodes", s.mesh_file.unused_nodes}};
  j["vertices"] = m.n_vertices;
  j["elements"] = m.n_elements;
  j["surface_vertices"] = m.n_surface;
  int pinned = 0;
  for (bool p : s.mesh.pinned) pinned += p;
  j["pinned_vertices"] = pinned;
  j["law"] = m.law == Fem::kNeoHookeanWarp ? "neo_hookean_warp"
             : m.law == Fem::kCorotated    ? "corotated"
                                           : "stable_neo_hookean";
  j["material_parameters"] = m.lame_parameters ? "lame" : "young_poisson";
  j["ground"] = m.ground ? "penalty" : "none";
  j["contact"] = m.contact_law == FemContactLaw<double>::kHard ? "hard" : "softplus";
  j["damping_law"] = m.contact_approach_only ? "approach" : "always";
  j["obstacles"] = m.n_obstacles;
  j["vertex_radius"] = m.vertex_radius;
  j["membrane_triangles"] = m.n_triangles;
  j["integrator"] = m.integrator == Fem::kBackwardEuler ? "backward_euler" : "symplectic_euler";
  if (m.integrator == Fem::kBackwardEuler) j["newton_iterations"] = m.newton_iterations;
  j["lumped_mass"] = m.vertex_mass <= 0;
  if (m.vertex_mass > 0) j["vertex_mass"] = m.vertex_mass;
}

void set_dt(ExperimentConfig& c, double dt) { c.model_state<FemSetup>().model.dt = dt; }

// a runner owns copies of the mesh arrays and points its model at them
struct FemRunnerHooks : RunnerHooks<Fem> {
  std::vector<int> topology;
  std::vector<double> rest;
  void bind(const ExperimentConfig& c, Fem& m, const RunnerOptions&) {
    topology = setup(c).topology;
    rest = setup(c).rest;
    m.topo = topology.data();
    m.rest = rest.data();
  }
  static bool measures_penetration(const Fem& m) { return m.n_contact_bodies() > 0; }
  static bool measures_inversion(const Fem&) { return true; }
  static double min_volume_ratio(const Fem& m, View<const double> x, View<const double>) {
    double j = 1e300;
    for (int e = 0; e < m.n_elements; ++e)
      j = std::min(j, mat3_det(tet_gradient(m.gather<double>(x, e).x, m.rest_inverse<double>(e))));
    return j;
  }
  // the deepest contact's depth [m] (a surface vertex in the ground or an obstacle)
  static double penetration(const Fem& m, View<const double> x, View<const double> p) {
    double worst = -1e300;
    for (int c = 0; c < m.num_contacts(); ++c)
      worst = std::max(
          worst,
          m.contact_frame<double>(c / m.n_surface, m.surface_vertex(c % m.n_surface), x, p).d);
    return worst;
  }
};

std::unique_ptr<BatchRunner> new_runner(const ExperimentConfig& c, BackendKind backend,
                                        const RunnerOptions& options) {
  return make_runner_with_controller<Fem, FemRunnerHooks>(c, setup(c).model, backend, options);
}

}  // namespace

const ModelDef& fem_model() {
  static const ModelDef def = [] {
    ModelDef d;
    d.name = FemSetup::kModel;
    d.parse_model = parse_model;
    d.parse_initial_state = parse_initial_state;
    d.model_json = model_json;
    d.set_dt = set_dt;
    d.make_runner = new_runner;
    d.penetration_label = true;
    d.inversion_label = true;
    d.reports_com_travel_x = true;
    d.report_scene = fem_scene;
    d.accepts_controller = true;
    d.holds_controller_actions = true;
    return d;
  }();
  return def;
}

}  // namespace steer
