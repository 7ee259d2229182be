// The articulated tree's drawing in report.html (its ModelDef::report_scene hook): the body
// origins by forward kinematics, links between jointed bodies, the tip, and the path of the tip
// (of the root body on a free root, which moves with no link to the world).
#include "experiment/report_scene.h"
#include "models/articulated/articulated_report.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"

namespace steer {

nlohmann::json articulated_scene(const ExperimentConfig& c, const nlohmann::json& art,
                                 const RecordedTrajectory& tr, int max_frames) {
  const ArticulatedSetup& as = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = as.large;  // the tree as parsed, whichever capacity runs it
  // points: the world origin, every body's origin, the tip; the body origins do not depend on
  // θ (only the centres of mass do), so the nominal θ serves every rollout. A free root's
  // massless frames (model.h) are not drawn, and nothing links the root to the world: links
  // join jointed bodies only, and the root's path is drawn instead.
  const int nb = m.n_bodies;
  const int first = m.free_base ? Articulated::kFreeFrames : 0;
  const int shown = nb - first;
  const bool has_tip = m.tip_body >= 0;
  nlohmann::json names = nlohmann::json::array({"world"});
  for (int b = first; b < nb; ++b)
    names.push_back(b < int(as.names.bodies.size()) ? as.names.bodies[b]
                                                    : "body" + std::to_string(b));
  if (has_tip) names.push_back("tip");
  nlohmann::json edges = nlohmann::json::array();
  for (int b = first; b < nb; ++b) {
    if (m.free_base && m.parent[b] < first)
      continue;  // the free root: moved by its free joint, not a link
    edges.push_back({m.parent[b] < first ? 0 : m.parent[b] - first + 1, b - first + 1});
  }
  if (has_tip) edges.push_back({m.tip_body - first + 1, shown + 1});
  auto fk = [&](int, const std::vector<double>& x) {
    ArticulatedLarge::Kin<double> K;
    m.forward_kinematics(x.data(), c.theta.data(), K);  // q = the state's first nq slots
    std::vector<double> p = {0, 0, 0};
    for (int b = first; b < nb; ++b) p.insert(p.end(), K.P[b], K.P[b] + 3);
    if (has_tip) {
      double t[3];
      m.tip_position(K, t);
      p.insert(p.end(), t, t + 3);
    }
    return p;
  };
  nlohmann::json s = {{"kind", "arm"},
                      {"dim", 3},
                      {"axes", {"x", "y", "z"}},
                      {"point_names", names},
                      {"edges", edges}};
  s["rollouts"] = frames_of(tr, 4, max_frames, fk);
  s["ground"] = nullptr;
  s["views"] = {{{"name", "side (x, z)"}, {"h", 0}, {"v", 2}},
                {{"name", "front (y, z)"}, {"h", 1}, {"v", 2}},
                {{"name", "top (x, y)"}, {"h", 0}, {"v", 1}}};
  s["trail_point"] = m.free_base ? 1
                     : has_tip   ? shown + 1
                                 : shown;  // the root's path, else the tip's or last body's
  s["trail"] = true;
  s["energy"] = free_motion_energy(c, m, art, tr, 4, max_frames);
  return s;
}

}  // namespace steer
