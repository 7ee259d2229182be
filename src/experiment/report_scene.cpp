// The pieces of the motion drawn in report.html (report_scene.h) and the dispatch to the
// model's own drawing, its ModelDef::report_scene hook (registry.h): the arm's body origins by
// Articulated::forward_kinematics, the robot's particles at MassSpring::x_pos, each computed
// in the model's folder.
#include "experiment/report_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "models/registry.h"

namespace steer {

double r5(double v) {
  if (!std::isfinite(v)) return 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", v);
  return std::strtod(buf, nullptr);
}

std::vector<size_t> kept_frames(size_t n, int max_frames) {
  std::vector<size_t> idx;
  if (n == 0) return idx;
  const size_t k =
      std::max<size_t>(1, (n + size_t(max_frames) - 1) / size_t(std::max(1, max_frames)));
  for (size_t i = 0; i < n; i += k) idx.push_back(i);
  if (idx.back() != n - 1) idx.push_back(n - 1);
  return idx;
}

nlohmann::json terminal_target(const nlohmann::json& art, const std::string& state) {
  const nlohmann::json* loss = nullptr;
  if (art.contains("effective_config") && art["effective_config"].contains("loss"))
    loss = &art["effective_config"]["loss"];
  if (!loss || !loss->contains("terminal") || !(*loss)["terminal"].is_array()) return nullptr;
  for (const auto& t : (*loss)["terminal"])
    if (t.value("state", std::string()) == state && t.contains("target") && t["target"].is_number())
      return t["target"];
  return nullptr;
}

bool is_compare(const nlohmann::json& art) {
  return art.is_object() && art.value("command", std::string()) == "compare";
}

namespace {

void caption_compare(nlohmann::json& s, const nlohmann::json& art) {
  if (!is_compare(art)) return;
  const char* names[3] = {"start", "steer's best design", "CMA-ES's best design"};
  for (auto& r : s["rollouts"]) {
    const int b = r["rollout"];
    if (b >= 0 && b < 3) r["caption"] = names[b];
  }
}

}  // namespace

std::vector<FreeMotionRollout> free_motion_rollouts(const ExperimentConfig& c,
                                                    const nlohmann::json& art,
                                                    const RecordedTrajectory& tr,
                                                    int max_rollouts) {
  std::vector<int> free;
  if (art.contains("validation") && art["validation"].is_array() && !art["validation"].empty())
    for (const auto& r : art["validation"][0].value("rollouts", nlohmann::json::array()))
      if (r.value("energy_drift_relative", 0.0) > 0) free.push_back(r.value("rollout", -1));
  std::vector<FreeMotionRollout> out;
  if (free.empty() || is_compare(art)) return out;
  const Batch<double> batch = build_batch(c);
  for (size_t r = 0; r < tr.rollouts.size() && int(r) < max_rollouts; ++r) {
    const auto& ro = tr.rollouts[r];
    if (std::find(free.begin(), free.end(), ro.rollout) == free.end() || ro.rollout >= batch.size)
      continue;
    std::vector<double> th(batch.theta_of(ro.rollout), batch.theta_of(ro.rollout) + batch.np);
    bool known = true;
    const nlohmann::json* rows = art.contains("result") ? &art["result"]["rollouts"] : nullptr;
    for (const VariableSpec& v : c.variables) {
      if (v.kind != VariableSpec::kParameter) continue;
      const nlohmann::json* vars = rows && rows->is_array() && size_t(ro.rollout) < rows->size()
                                       ? &(*rows)[ro.rollout]["variables"]
                                       : nullptr;
      if (!vars || !vars->contains(v.name)) {
        known = false;
        break;
      }
      const double final_value = (*vars)[v.name]["final"].get<double>();
      for (const auto& [j, a] : v.moves)  // the slots it moves (VariableSpec::moves)
        th[size_t(j)] += a * (final_value - batch.theta_of(ro.rollout)[v.index]);
      th[v.index] = final_value;
    }
    if (known) out.push_back({int(r), std::move(th)});
  }
  return out;
}

nlohmann::json report_scene(const ExperimentConfig* c, const nlohmann::json& artifact,
                            const RecordedTrajectory& tr, int max_frames) {
  if (!c || tr.rollouts.empty()) return nullptr;
  if (tr.columns.size() != size_t(c->info.nx()))
    throw std::runtime_error("trajectory.csv has " + std::to_string(tr.columns.size()) +
                             " state columns, the model " + std::to_string(c->info.nx()) +
                             " states");
  const ModelDef& def = model_of(*c);
  if (!def.report_scene)
    throw std::runtime_error("the " + def.name +
                             " model registers no drawing (ModelDef::report_scene)");
  nlohmann::json s = def.report_scene(*c, artifact, tr, max_frames);
  if (s.is_object()) caption_compare(s, artifact);
  return s;
}

RecordedTrajectory parse_trajectory_csv(const std::string& text) {
  RecordedTrajectory tr;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  size_t fields = 0;  // the header's
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::string cur;
    for (char ch : l) {
      if (ch == ',')
        f.push_back(cur), cur.clear();
      else if (ch != '\r')
        cur += ch;
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
      fields = f.size();
      auto end = f.begin() + 3;
      while (end != f.end() && end->rfind("site.", 0) != 0 && end->rfind("tendon.", 0) != 0) ++end;
      tr.columns.assign(f.begin() + 3, end);
      continue;
    }
    if (f.size() != fields)
      throw std::runtime_error("trajectory.csv: line " + std::to_string(line_no) + " has " +
                               std::to_string(f.size()) + " fields, the header " +
                               std::to_string(fields));
    std::vector<double> v(f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      char* end = nullptr;
      v[i] = std::strtod(f[i].c_str(), &end);
      if (end == f[i].c_str())
        throw std::runtime_error("trajectory.csv: line " + std::to_string(line_no) + ": '" +
                                 f[i].substr(0, 40) + "' is not a number");
    }
    const int b = int(v[0]);
    if (tr.rollouts.empty() || tr.rollouts.back().rollout != b) {
      tr.rollouts.emplace_back();
      tr.rollouts.back().rollout = b;
    }
    auto& ro = tr.rollouts.back();
    ro.step.push_back(int(v[1]));
    ro.time_s.push_back(v[2]);
    ro.state.emplace_back(v.begin() + 3, v.begin() + 3 + long(tr.columns.size()));
  }
  return tr;
}

TrajectoryExtras trajectory_extras(const ExperimentConfig& c) {
  const ModelDef& def = model_of(c);
  TrajectoryExtras e;
  if (def.site_names && def.site_positions)
    for (const std::string& name : def.site_names(c)) {
      for (const char* axis : {"x", "y", "z"})
        e.columns.push_back("site." + name + "." + axis + "_m");
      ++e.n_sites;
    }
  if (def.output_columns && def.output_values)
    for (const std::string& name : def.output_columns(c)) {
      e.columns.push_back(name);
      ++e.n_outputs;
    }
  return e;
}

void write_trajectory_extras(std::ostream& out, const ExperimentConfig& c,
                             const TrajectoryExtras& e, const double* theta, const double* x) {
  const ModelDef& def = model_of(c);
  std::vector<double> v(3 * size_t(e.n_sites) + size_t(e.n_outputs));
  if (e.n_sites > 0) def.site_positions(c, theta, x, v.data());
  if (e.n_outputs > 0) def.output_values(c, theta, x, v.data() + 3 * e.n_sites);
  for (double a : v) out << "," << a;
}

}  // namespace steer
