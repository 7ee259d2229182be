// The articulated tree's drawing in report.html (its ModelDef::report_scene hook): the body
// origins by forward kinematics, links between jointed bodies, the tip, and the path of the tip
// (of the root body on a free root, which moves with no link to the world).
#include <vector>

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
  // the bodies drawn: all but the massless frames steer adds (a free root's, and those of a body
  // with several joints, which sit on their body's joint anchors); point i + 1 is drawn[i]
  std::vector<int> drawn, point(size_t(nb), 0);
  for (int b = 0; b < nb; ++b)
    if (!as.names.is_frame(b)) {
      drawn.push_back(b);
      point[size_t(b)] = int(drawn.size());
    }
  const int shown = int(drawn.size());
  const bool has_tip = m.tip_body >= 0;
  nlohmann::json names = nlohmann::json::array({"world"});
  for (int b : drawn)
    names.push_back(b < int(as.names.bodies.size()) ? as.names.bodies[b]
                                                    : "body" + std::to_string(b));
  if (has_tip) names.push_back("tip");
  nlohmann::json edges = nlohmann::json::array();
  for (int b : drawn) {
    int pa = m.parent[b];
    while (pa >= 0 && as.names.is_frame(pa)) pa = m.parent[pa];
    if (pa < 0 && m.parent[b] >= 0 && as.names.free_joint_of(m.dof[b]))
      continue;  // a free body: moved by its free joint, not a link
    edges.push_back({pa < 0 ? 0 : point[size_t(pa)], point[size_t(b)]});
  }
  if (has_tip) edges.push_back({point[size_t(m.tip_body)], shown + 1});
  auto fk = [&](int, const std::vector<double>& x) {
    ArticulatedLarge::Kin<double> K;
    m.forward_kinematics(x.data(), c.theta.data(), K);  // q = the state's first nq slots
    std::vector<double> p = {0, 0, 0};
    for (int b : drawn) p.insert(p.end(), K.P[b], K.P[b] + 3);
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
  s["trail_point"] = m.free_base ? point[size_t(Articulated::kFreeFrames)]
                     : has_tip   ? shown + 1
                                 : shown;  // the root's path, else the tip's or last body's
  s["trail"] = true;
  // the energies of the bodies as they ran: after model.morphology's map
  s["energy"] =
      free_motion_energy(c, m, art, tr, 4, max_frames, [&](const std::vector<double>& th) {
        std::vector<double> out(th);
        if (m.morphology) morphology_map(as.morphology, m, th.data(), out.data());
        return out;
      });
  return s;
}

}  // namespace steer
