// What a model's drawing in report.html is made of (its ModelDef::report_scene hook, registry.h):
// the recorded frames kept, coordinates rounded for the page, the loss's targets, and the
// energies of free-motion rollouts. Each model's folder draws its own scene with these
// (src/models/<name>/<name>_report.cpp); the page (report_page.cpp) draws points and lines and
// knows no physics.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "experiment/report.h"
#include "problem/problem.h"

namespace steer {

// v to 5 significant digits: 10 µm on a robot a metre across, and a third of the characters
// of a full double in the page
double r5(double v);

// the recorded frames kept: every k-th so that at most max_frames remain, and always the last
std::vector<size_t> kept_frames(size_t n, int max_frames);

// per drawn rollout: its index, the kept frames' times and a flat coordinate list per frame
// computed by coords(rollout, state) -> vector
template <class F>
nlohmann::json frames_of(const RecordedTrajectory& tr, int max_rollouts, int max_frames, F coords) {
  nlohmann::json rolls = nlohmann::json::array();
  for (size_t r = 0; r < tr.rollouts.size() && int(r) < max_rollouts; ++r) {
    const auto& ro = tr.rollouts[r];
    nlohmann::json t = nlohmann::json::array(), p = nlohmann::json::array();
    for (size_t i : kept_frames(ro.state.size(), max_frames)) {
      t.push_back(r5(ro.time_s[i]));
      std::vector<double> xs = coords(ro.rollout, ro.state[i]);
      for (double& x : xs) x = r5(x);
      p.push_back(xs);
    }
    rolls.push_back({{"rollout", ro.rollout}, {"t", t}, {"p", p}});
  }
  return rolls;
}

// the terminal loss terms' numeric target on the named state ("position.x" -> 6.0), null if none
nlohmann::json terminal_target(const nlohmann::json& art, const std::string& state);

// a comparison records its start and the two methods' best designs (compare_report.cpp)
bool is_compare(const nlohmann::json& art);

// The rollouts the validator checked in free motion (it reports an energy drift only for
// them), and each one's θ: the batch's draws with the final values of θ variables written over
// them. A rollout whose θ variables the artifact does not list by slot name is left out.
struct FreeMotionRollout {
  int index = 0;  // into tr.rollouts
  std::vector<double> theta;
};
std::vector<FreeMotionRollout> free_motion_rollouts(const ExperimentConfig& c,
                                                    const nlohmann::json& art,
                                                    const RecordedTrajectory& tr, int max_rollouts);

// Free-motion rollouts' mechanical energy E and kinetic energy KE [J] at each kept frame, by
// the model's own energy functions; map_theta(θ) gives the θ the model reads, where the runner
// maps it (RunnerHooks::map_parameters)
template <class Model, class MapTheta>
nlohmann::json free_motion_energy(const ExperimentConfig& c, const Model& m,
                                  const nlohmann::json& art, const RecordedTrajectory& tr,
                                  int max_rollouts, int max_frames, const MapTheta& map_theta) {
  nlohmann::json out = nlohmann::json::array();
  for (FreeMotionRollout f : free_motion_rollouts(c, art, tr, max_rollouts)) {
    f.theta = map_theta(f.theta);
    const auto& ro = tr.rollouts[size_t(f.index)];
    nlohmann::json t = nlohmann::json::array(), e = nlohmann::json::array(),
                   ke = nlohmann::json::array();
    for (size_t i : kept_frames(ro.state.size(), max_frames)) {
      t.push_back(r5(ro.time_s[i]));
      e.push_back(r5(m.template energy<double>(ro.state[i].data(), f.theta.data())));
      ke.push_back(r5(m.template kinetic_energy<double>(ro.state[i].data(), f.theta.data())));
    }
    out.push_back({{"rollout", ro.rollout}, {"t", t}, {"E", e}, {"KE", ke}});
  }
  return out;
}
template <class Model>
nlohmann::json free_motion_energy(const ExperimentConfig& c, const Model& m,
                                  const nlohmann::json& art, const RecordedTrajectory& tr,
                                  int max_rollouts, int max_frames) {
  return free_motion_energy(c, m, art, tr, max_rollouts, max_frames,
                            [](const std::vector<double>& th) { return th; });
}

}  // namespace steer
