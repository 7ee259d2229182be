// The FEM model's drawing in report.html: the surface's edges in a side view (x, y; y up), the
// same "robot" drawing the mass-spring model uses (report_page.cpp), with the ground.
#include "models/fem/fem_report.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>
#include <vector>

#include "experiment/report_scene.h"
#include "models/fem/fem_setup.h"

namespace steer {

nlohmann::json fem_scene(const ExperimentConfig& c, const nlohmann::json& art,
                         const RecordedTrajectory& tr, int max_frames) {
  const FemSetup& st = c.model_state<FemSetup>();
  const Fem& m = st.model;
  const TetMesh& mesh = st.mesh;
  const int N = m.n_vertices;
  // the edges of the boundary faces (a face of one element only), each with its elements
  std::map<std::array<int, 3>, std::pair<int, int>> faces;  // sorted face -> (count, element)
  for (int e = 0; e < m.n_elements; ++e)
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f;
      int n = 0;
      for (int a = 0; a < 4; ++a)
        if (a != skip) f[n++] = mesh.elements[e][a];
      std::sort(f.begin(), f.end());
      auto& slot = faces[f];
      ++slot.first;
      slot.second = e;
    }
  std::map<std::pair<int, int>, std::vector<int>> edges;  // edge -> boundary elements along it
  for (const auto& [f, ce] : faces) {
    if (ce.first != 1) continue;
    for (int a = 0; a < 3; ++a) {
      auto& list = edges[{f[a], f[(a + 1) % 3]}];
      list.push_back(ce.second);
    }
  }
  const Batch<double> batch = build_batch(c);
  auto positions = [&](const double* x) {
    std::vector<double> p(size_t(N) * 2);
    for (int i = 0; i < N; ++i) p[2 * i] = x[m.x_pos(i)], p[2 * i + 1] = x[m.x_pos(i) + 1];
    return p;
  };
  nlohmann::json s = {{"kind", "robot"}, {"dim", 2}, {"axes", {"x", "y"}}};
  s["rollouts"] = frames_of(tr, 4, max_frames,
                            [&](int, const std::vector<double>& x) { return positions(x.data()); });
  nlohmann::json ej = nlohmann::json::array(), act = nlohmann::json::array();
  for (const auto& [e, els] : edges) {
    ej.push_back({e.first, e.second});
    bool actuated = false;
    for (int el : els) actuated = actuated || mesh.actuator[el] >= 0;
    act.push_back(actuated ? 1 : 0);
  }
  s["edges"] = ej;
  s["edge_actuated"] = act;
  nlohmann::json stiff = nlohmann::json::array();
  for (const auto& ro : s["rollouts"]) {
    const int b = is_compare(art) ? 0 : ro["rollout"].get<int>();
    const double* th = b < batch.size ? batch.theta_of(b) : c.theta.data();
    nlohmann::json k = nlohmann::json::array();
    for (const auto& [e, els] : edges) {
      double sum = 0;
      for (int el : els) sum += th[m.p_element(el, Fem::kModulus1)];
      k.push_back(r5(sum / double(els.size())));
    }
    stiff.push_back(k);
  }
  s["edge_stiffness"] = stiff;
  s["ground"] = m.ground ? nlohmann::json(r5(c.theta[m.p_global(Fem::kGroundHeight)]))
                         : nlohmann::json(nullptr);
  s["views"] = {{{"name", "side (x, y)"}, {"h", 0}, {"v", 1}}};
  Fem mt = m;  // the energy reads the mesh
  mt.topo = st.topology.data();
  mt.rest = st.rest.data();
  s["energy"] = free_motion_energy(c, mt, art, tr, 4, max_frames);
  return s;
}

}  // namespace steer
