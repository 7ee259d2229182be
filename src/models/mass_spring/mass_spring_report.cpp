// The mass-spring robot's drawing in report.html (its ModelDef::report_scene hook): particles and
// springs at each kept frame, actuated springs marked, each rollout's drawn stiffness, the
// ground, and a gallery of the best designs' rest shapes when a sweep drew different shapes.
#include "experiment/report_scene.h"
#include "models/mass_spring/mass_spring_report.h"
#include "models/mass_spring/mass_spring_setup.h"

namespace steer {

nlohmann::json mass_spring_scene(const ExperimentConfig& c, const nlohmann::json& art,
                                 const RecordedTrajectory& tr, int max_frames) {
  const MassSpringSetup& ms = c.model_state<MassSpringSetup>();
  const MassSpring& m = ms.model;
  const int N = m.n_particles;
  const Batch<double> batch =
      build_batch(c);  // each rollout's drawn θ and x0 (stiffness, rest shape)
  auto positions = [&](const double* x) {
    // 2-D robots as they are; a 3-D robot is drawn in its x–y plane (y up)
    std::vector<double> p(size_t(N) * 2);
    for (int i = 0; i < N; ++i) p[2 * i] = x[m.x_pos(i)], p[2 * i + 1] = x[m.x_pos(i) + 1];
    return p;
  };
  nlohmann::json s = {{"kind", "robot"}, {"dim", 2}, {"axes", {"x", "y"}}};
  s["rollouts"] = frames_of(tr, 4, max_frames,
                            [&](int, const std::vector<double>& x) { return positions(x.data()); });
  nlohmann::json edges = nlohmann::json::array(), act = nlohmann::json::array();
  for (const RobotSpring& sp : ms.robot.springs) {
    edges.push_back({sp.a, sp.b});
    act.push_back(sp.actuation != 0 ? 1 : 0);
  }
  s["edges"] = edges;
  s["edge_actuated"] = act;
  // each drawn rollout's spring stiffness [N/m] (drawn per rollout in a morphology sweep)
  nlohmann::json stiff = nlohmann::json::array();
  for (const auto& ro : s["rollouts"]) {
    // a comparison's designs all start from rollout 0's θ
    const int b = is_compare(art) ? 0 : ro["rollout"].get<int>();
    nlohmann::json k = nlohmann::json::array();
    for (int e = 0; e < m.n_springs; ++e)
      k.push_back(b < batch.size ? r5(batch.theta_of(b)[m.p_stiffness(e)])
                                 : r5(c.theta[m.p_stiffness(e)]));
    stiff.push_back(k);
  }
  s["edge_stiffness"] = stiff;
  s["ground"] = m.ground ? nlohmann::json(r5(c.theta[m.p_global(MassSpring::kGroundHeight)]))
                         : nlohmann::json(nullptr);
  s["views"] = {{{"name", "side (x, y)"}, {"h", 0}, {"v", 1}}};
  // a batch of designs: the best ones, ranked by final loss, in their rest shape (x0 is the
  // rest shape: a robot starts at rest in it)
  if (art.contains("result") && art["result"].contains("ranking")) {
    nlohmann::json gal = nlohmann::json::array();
    for (const auto& r : art["result"]["ranking"]["top"]) {
      if (gal.size() >= 8) break;
      const int b = r["rollout"];
      if (b < 0 || b >= batch.size) continue;
      std::vector<double> p = positions(batch.x0_of(b));
      for (double& v : p) v = r5(v);
      gal.push_back(
          {{"rank", r["rank"]}, {"rollout", b}, {"loss_final", r["loss_final"]}, {"p", p}});
    }
    // only a batch of different shapes (a morphology sweep) makes a gallery
    bool differ = false;
    for (size_t g = 1; g < gal.size() && !differ; ++g) differ = gal[g]["p"] != gal[0]["p"];
    if (differ) s["gallery"] = gal;
  }
  MassSpring mt = m;  // the springs' potential reads the topology
  mt.topo = ms.topology.data();
  s["energy"] = free_motion_energy(c, mt, art, tr, 4, max_frames);
  return s;
}

}  // namespace steer
