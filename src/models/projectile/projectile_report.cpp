// The projectile's drawing in report.html (its ModelDef::report_scene hook): the point's path
// in the plane of its first two axes (and from above in 3-D), the ground and the loss's target.
#include "experiment/report_scene.h"
#include "models/projectile/projectile_report.h"
#include "models/projectile/projectile_setup.h"

namespace steer {

nlohmann::json projectile_scene(const ExperimentConfig& c, const nlohmann::json& art,
                                const RecordedTrajectory& tr, int max_frames) {
  const Projectile& m = c.model_state<ProjectileSetup>().model;
  const int D = m.dim;
  // the state's first D slots are the position (projectile.h)
  nlohmann::json s = {{"kind", "point"},
                      {"dim", D},
                      {"axes", D == 3 ? nlohmann::json{"x", "y", "z"} : nlohmann::json{"x", "y"}}};
  s["rollouts"] = frames_of(tr, 8, max_frames, [&](int, const std::vector<double>& x) {
    return std::vector<double>(x.begin(), x.begin() + std::min<size_t>(D, x.size()));
  });
  s["edges"] = nlohmann::json::array();
  s["ground"] = m.ground != Projectile::kGroundNone ? nlohmann::json(0.0) : nlohmann::json(nullptr);
  s["target"] = {{"x", terminal_target(art, "position.x")},
                 {"y", terminal_target(art, "position.y")}};
  s["views"] = {{{"name", "path (x, y)"}, {"h", 0}, {"v", 1}}};
  if (D == 3) s["views"].push_back({{"name", "from above (x, z)"}, {"h", 0}, {"v", 2}});
  s["trail"] = true;
  s["equal_aspect"] =
      false;  // a throw is much wider or taller than the point: each axis its own scale
  s["energy"] = free_motion_energy(c, m, art, tr, 8, max_frames);
  return s;
}

}  // namespace steer
