// The motion drawn in report.html: each model's geometry computed from the recorded states by
// the model's own code (the arm's body origins by Articulated::forward_kinematics, the robot's
// particles at MassSpring::x_pos), so the page draws points and lines and knows no physics.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "experiment/report.h"
#include "models/articulated/articulated_setup.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "models/projectile/projectile_setup.h"
#include "problem/problem.h"
#include "steer/models/articulated.h"

namespace steer {

namespace {

// 5 significant digits: 10 µm on a robot a metre across, and a third of the characters of
// a full double in the page
double r5(double v) {
  if (!std::isfinite(v)) return 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", v);
  return std::strtod(buf, nullptr);
}

// the recorded frames kept: every k-th so that at most max_frames remain, and always the last
std::vector<size_t> kept_frames(size_t n, int max_frames) {
  std::vector<size_t> idx;
  if (n == 0) return idx;
  const size_t k = std::max<size_t>(1, (n + size_t(max_frames) - 1) / size_t(std::max(1, max_frames)));
  for (size_t i = 0; i < n; i += k) idx.push_back(i);
  if (idx.back() != n - 1) idx.push_back(n - 1);
  return idx;
}

// per drawn rollout: its index, the kept frames' times and a flat coordinate list per frame
// computed by coords(state) -> vector
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

// the terminal loss terms' numeric targets on the named state ("position.x" -> 6.0)
nlohmann::json terminal_target(const nlohmann::json& art, const std::string& state) {
  const nlohmann::json* loss = nullptr;
  if (art.contains("effective_config") && art["effective_config"].contains("loss")) loss = &art["effective_config"]["loss"];
  if (!loss || !loss->contains("terminal") || !(*loss)["terminal"].is_array()) return nullptr;
  for (const auto& t : (*loss)["terminal"])
    if (t.value("state", std::string()) == state && t.contains("target") && t["target"].is_number()) return t["target"];
  return nullptr;
}

// a comparison records its start and the two methods' best designs (compare_report.cpp)
bool is_compare(const nlohmann::json& art) { return art.is_object() && art.value("command", std::string()) == "compare"; }

void caption_compare(nlohmann::json& s, const nlohmann::json& art) {
  if (!is_compare(art)) return;
  const char* names[3] = {"start", "steer's best design", "CMA-ES's best design"};
  for (auto& r : s["rollouts"]) {
    const int b = r["rollout"];
    if (b >= 0 && b < 3) r["caption"] = names[b];
  }
}

// Free-motion rollouts (the validator reports an energy drift only for them): the model's own
// mechanical energy E and kinetic energy KE [J] at each kept frame, with each rollout's θ: the
// batch's draws with the final values of θ variables written over them. A rollout whose θ
// variables the artifact does not list by slot name is left out.
template <class Model>
nlohmann::json free_motion_energy(const ExperimentConfig& c, const Model& m, const nlohmann::json& art,
                                  const RecordedTrajectory& tr, int max_rollouts, int max_frames) {
  std::vector<int> free;
  if (art.contains("validation") && art["validation"].is_array() && !art["validation"].empty())
    for (const auto& r : art["validation"][0].value("rollouts", nlohmann::json::array()))
      if (r.value("energy_drift_relative", 0.0) > 0) free.push_back(r.value("rollout", -1));
  nlohmann::json out = nlohmann::json::array();
  if (free.empty() || is_compare(art)) return out;
  const Batch<double> batch = build_batch(c);
  for (size_t r = 0; r < tr.rollouts.size() && int(r) < max_rollouts; ++r) {
    const auto& ro = tr.rollouts[r];
    if (std::find(free.begin(), free.end(), ro.rollout) == free.end() || ro.rollout >= batch.size) continue;
    std::vector<double> th(batch.theta_of(ro.rollout), batch.theta_of(ro.rollout) + batch.np);
    bool known = true;
    const nlohmann::json* rows = art.contains("result") ? &art["result"]["rollouts"] : nullptr;
    for (const VariableSpec& v : c.variables) {
      if (v.kind != VariableSpec::kParameter) continue;
      const nlohmann::json* vars = rows && rows->is_array() && size_t(ro.rollout) < rows->size() ? &(*rows)[ro.rollout]["variables"] : nullptr;
      if (!vars || !vars->contains(v.name)) {
        known = false;
        break;
      }
      th[v.index] = (*vars)[v.name]["final"].get<double>();
    }
    if (!known) continue;
    nlohmann::json t = nlohmann::json::array(), e = nlohmann::json::array(), ke = nlohmann::json::array();
    for (size_t i : kept_frames(ro.state.size(), max_frames)) {
      t.push_back(r5(ro.time_s[i]));
      e.push_back(r5(m.template energy<double>(ro.state[i].data(), th.data())));
      ke.push_back(r5(m.template kinetic_energy<double>(ro.state[i].data(), th.data())));
    }
    out.push_back({{"rollout", ro.rollout}, {"t", t}, {"E", e}, {"KE", ke}});
  }
  return out;
}

nlohmann::json projectile_scene(const ExperimentConfig& c, const nlohmann::json& art, const RecordedTrajectory& tr,
                                int max_frames) {
  const Projectile& m = c.model_state<ProjectileSetup>().model;
  const int D = m.dim;
  // the state's first D slots are the position (projectile.h)
  nlohmann::json s = {{"kind", "point"}, {"dim", D}, {"axes", D == 3 ? nlohmann::json{"x", "y", "z"} : nlohmann::json{"x", "y"}}};
  s["rollouts"] = frames_of(tr, 8, max_frames, [&](int, const std::vector<double>& x) {
    return std::vector<double>(x.begin(), x.begin() + std::min<size_t>(D, x.size()));
  });
  s["edges"] = nlohmann::json::array();
  s["ground"] = m.ground != Projectile::kGroundNone ? nlohmann::json(0.0) : nlohmann::json(nullptr);
  s["target"] = {{"x", terminal_target(art, "position.x")}, {"y", terminal_target(art, "position.y")}};
  s["views"] = {{{"name", "path (x, y)"}, {"h", 0}, {"v", 1}}};
  if (D == 3) s["views"].push_back({{"name", "from above (x, z)"}, {"h", 0}, {"v", 2}});
  s["trail"] = true;
  s["equal_aspect"] = false;  // a throw is much wider or taller than the point: each axis its own scale
  s["energy"] = free_motion_energy(c, m, art, tr, 8, max_frames);
  return s;
}

nlohmann::json mass_spring_scene(const ExperimentConfig& c, const nlohmann::json& art, const RecordedTrajectory& tr,
                                 int max_frames) {
  const MassSpringSetup& ms = c.model_state<MassSpringSetup>();
  const MassSpring& m = ms.model;
  const int N = m.n_particles;
  const Batch<double> batch = build_batch(c);  // each rollout's drawn θ and x0 (stiffness, rest shape)
  auto positions = [&](const double* x) {
    // 2-D robots as they are; a 3-D robot is drawn in its x–y plane (y up)
    std::vector<double> p(size_t(N) * 2);
    for (int i = 0; i < N; ++i) p[2 * i] = x[m.x_pos(i)], p[2 * i + 1] = x[m.x_pos(i) + 1];
    return p;
  };
  nlohmann::json s = {{"kind", "robot"}, {"dim", 2}, {"axes", {"x", "y"}}};
  s["rollouts"] = frames_of(tr, 4, max_frames, [&](int, const std::vector<double>& x) { return positions(x.data()); });
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
      k.push_back(b < batch.size ? r5(batch.theta_of(b)[m.p_stiffness(e)]) : r5(c.theta[m.p_stiffness(e)]));
    stiff.push_back(k);
  }
  s["edge_stiffness"] = stiff;
  s["ground"] = m.ground ? nlohmann::json(r5(c.theta[m.p_global(MassSpring::kGroundHeight)])) : nlohmann::json(nullptr);
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
      gal.push_back({{"rank", r["rank"]}, {"rollout", b}, {"loss_final", r["loss_final"]}, {"p", p}});
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

nlohmann::json articulated_scene(const ExperimentConfig& c, const nlohmann::json& art, const RecordedTrajectory& tr,
                                 int max_frames) {
  const ArticulatedSetup& as = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = as.large;  // the tree as parsed, whichever capacity runs it
  // points: the world origin, every body's origin, the tip; the body origins do not depend on
  // θ (only the centres of mass do), so the nominal θ serves every rollout. A free root's
  // massless frames (model.h) are not drawn: the root joins the world directly.
  const int nb = m.n_bodies;
  const int first = m.free_base ? Articulated::kFreeFrames : 0;
  const int shown = nb - first;
  const bool has_tip = m.tip_body >= 0;
  nlohmann::json names = nlohmann::json::array({"world"});
  for (int b = first; b < nb; ++b) names.push_back(b < int(as.names.bodies.size()) ? as.names.bodies[b] : "body" + std::to_string(b));
  if (has_tip) names.push_back("tip");
  nlohmann::json edges = nlohmann::json::array();
  for (int b = first; b < nb; ++b) edges.push_back({m.parent[b] < first ? 0 : m.parent[b] - first + 1, b - first + 1});
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
  nlohmann::json s = {{"kind", "arm"}, {"dim", 3}, {"axes", {"x", "y", "z"}}, {"point_names", names}, {"edges", edges}};
  s["rollouts"] = frames_of(tr, 4, max_frames, fk);
  s["ground"] = nullptr;
  s["views"] = {{{"name", "side (x, z)"}, {"h", 0}, {"v", 2}}, {{"name", "front (y, z)"}, {"h", 1}, {"v", 2}},
                {{"name", "top (x, y)"}, {"h", 0}, {"v", 1}}};
  s["trail_point"] = has_tip ? shown + 1 : shown;
  s["trail"] = true;
  s["energy"] = free_motion_energy(c, m, art, tr, 4, max_frames);
  return s;
}

}  // namespace

nlohmann::json report_scene(const ExperimentConfig* c, const nlohmann::json& artifact, const RecordedTrajectory& tr,
                            int max_frames) {
  if (!c || tr.rollouts.empty()) return nullptr;
  if (tr.columns.size() != size_t(c->info.nx()))
    throw std::runtime_error("trajectory.csv has " + std::to_string(tr.columns.size()) + " state columns, the model " +
                             std::to_string(c->info.nx()) + " states");
  const std::string& model = c->model.model();
  nlohmann::json s;
  if (model == ProjectileSetup::kModel) s = projectile_scene(*c, artifact, tr, max_frames);
  if (model == MassSpringSetup::kModel) s = mass_spring_scene(*c, artifact, tr, max_frames);
  if (model == ArticulatedSetup::kModel) s = articulated_scene(*c, artifact, tr, max_frames);
  if (s.is_object()) caption_compare(s, artifact);
  return s;
}

RecordedTrajectory parse_trajectory_csv(const std::string& text) {
  RecordedTrajectory tr;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::string cur;
    for (char ch : l) {
      if (ch == ',') f.push_back(cur), cur.clear();
      else if (ch != '\r') cur += ch;
    }
    f.push_back(cur);
    return f;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> f = split(line);
    if (line_no == 1) {
      if (f.size() < 3 || f[0] != "rollout" || f[1] != "step" || f[2] != "time_s")
        throw std::runtime_error("trajectory.csv: line 1 is not the header rollout,step,time_s,…");
      tr.columns.assign(f.begin() + 3, f.end());
      continue;
    }
    if (f.size() != tr.columns.size() + 3)
      throw std::runtime_error("trajectory.csv: line " + std::to_string(line_no) + " has " + std::to_string(f.size()) +
                               " fields, the header " + std::to_string(tr.columns.size() + 3));
    std::vector<double> v(f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      char* end = nullptr;
      v[i] = std::strtod(f[i].c_str(), &end);
      if (end == f[i].c_str()) throw std::runtime_error("trajectory.csv: line " + std::to_string(line_no) + ": '" + f[i].substr(0, 40) + "' is not a number");
    }
    const int b = int(v[0]);
    if (tr.rollouts.empty() || tr.rollouts.back().rollout != b) {
      tr.rollouts.emplace_back();
      tr.rollouts.back().rollout = b;
    }
    auto& ro = tr.rollouts.back();
    ro.step.push_back(int(v[1]));
    ro.time_s.push_back(v[2]);
    ro.state.emplace_back(v.begin() + 3, v.end());
  }
  return tr;
}

}  // namespace steer
