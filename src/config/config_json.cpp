// The effective config: every setting of an ExperimentConfig as the run used it, with units,
// for the artifact (ExperimentConfig::to_json).
#include "config/config.h"
#include "models/registry.h"

namespace steer {

nlohmann::json ExperimentConfig::to_json() const {
  nlohmann::json j;
  j["name"] = name;
  j["description"] = description;
  nlohmann::json m = {{"type", model_type}};
  model_of(*this).model_json(*this, m);
  nlohmann::json params = nlohmann::json::object();
  for (int q = 0; q < info.np(); ++q)
    params[info.param_names[q]] = {{"value", theta[q]}, {"unit", info.param_units[q]}};
  m["parameters"] = params;
  j["model"] = m;
  if (has_controller) j["controller"] = controller_json;
  nlohmann::json x = nlohmann::json::object();
  for (int i = 0; i < info.nx(); ++i)
    x[info.state_names[i]] = {{"value", x0[i]}, {"unit", info.state_units[i]}};
  j["initial_state"] = x;
  nlohmann::json u = nlohmann::json::object();
  for (int i = 0; i < info.nu(); ++i)
    u[info.control_names[i]] = {{"value", u_init[i]}, {"unit", info.control_units[i]}};
  j["controls_initial"] = u;
  if (u_rows > 0)
    j["controls_initial_file"] = {
        {"file", u_file},
        {"file_fnv1a64", u_digest},
        {"rows", u_rows},
        {"columns", u_columns.empty() ? info.control_names : u_columns},
        {"note",
         "row k is u_k; steps past the last row hold it; controls_initial is its first row"}};
  if (u_rows > 0 && !u_columns.empty())
    j["controls_initial_file"]["mapped_to"] = {{"controls", info.control_names},
                                               {"how", info.foreign_controls.note}};
  j["simulation"] = {
      {"dt", {{"value", dt}, {"unit", "s"}}},
      {"steps", steps},
      {"horizon", {{"value", dt * steps}, {"unit", "s"}}},
      {"precision", precision},
      {"checkpoint_every", resolved_checkpoint()},
      {"checkpoint_schedule", checkpoint_plan().shape.binomial() ? "binomial" : "uniform"},
      {"checkpoint_memory_mb",
       checkpoint_memory_mb > 0 ? nlohmann::json(checkpoint_memory_mb) : nlohmann::json()},
      {"store_forward_mb", store_forward_mb},
      {"backend_requested", backend},
      {"threads", threads}};
  nlohmann::json ov = nlohmann::json::array();
  for (const auto& o : overrides) {
    nlohmann::json e = {{"slot", o.name}, {"slots", o.indices.size()}};
    switch (o.draw) {
      case BatchOverride::kSweep:
        e["values"] = o.values;
        break;
      case BatchOverride::kUniform:
        e["uniform"] = {o.lo, o.hi};
        break;
      case BatchOverride::kRelative:
        e["relative"] = o.hi;
        break;
      case BatchOverride::kJitter:
        e["jitter"] = o.hi;
        break;
    }
    ov.push_back(e);
  }
  j["batch"] = {{"size", batch_size}, {"seed", seed}, {"overrides", ov}};
  if (has_shared()) {
    j["batch"]["groups"] = share_groups;
    if (!world_weights.empty()) j["batch"]["weights"] = world_weights;
  }
  j["loss"] = loss_json;
  nlohmann::json vars = nlohmann::json::array();
  for (const auto& v : variables) {
    std::string unit = v.kind == VariableSpec::kInitialState ? info.state_units[v.index]
                       : v.kind == VariableSpec::kParameter  ? info.param_units[v.index]
                                                             : info.control_units[v.index];
    nlohmann::json e = {{"name", v.name},
                        {"lower", v.lower},
                        {"upper", v.upper},
                        {"unit", unit},
                        {"per_step", v.kind == VariableSpec::kControl},
                        {"hold", v.hold},
                        {"entries", v.length(steps)}};
    if (v.shared) e["shared"] = true;
    if (!v.moves.empty()) {
      nlohmann::json mv = nlohmann::json::object();
      for (const auto& [j, a] : v.moves) mv["theta." + info.param_names[size_t(j)]] = a;
      e["moves"] = mv;
    }
    vars.push_back(e);
  }
  j["variables"] = vars;
  j["optimizer"] = {{"method", optimizer.method},
                    {"learning_rate", optimizer.learning_rate},
                    {"iterations", optimizer.iterations},
                    {"beta1", optimizer.beta1},
                    {"beta2", optimizer.beta2},
                    {"epsilon", optimizer.adam_eps},
                    {"gradient_clip", optimizer.gradient_clip},
                    {"normalize_gradient", optimizer.normalize_gradient},
                    {"learning_rate_schedule", optimizer.lr_schedule},
                    {"learning_rate_final", optimizer.learning_rate_final},
                    {"bounds", "projected onto [lower, upper] after every step"}};
  if (optimizer.window_steps > 0) {
    nlohmann::json resets = nlohmann::json::array();
    for (const auto& r : optimizer.window_resets)
      resets.push_back({{"state", r.name}, {r.below ? "below" : "above", r.value}});
    nlohmann::json ends = nlohmann::json::array();
    for (const auto& t : optimizer.window_terminal)
      ends.push_back({{"state", t.name},
                      {"target", t.target},
                      {"weight", t.weight},
                      {"term",
                       "0.5 * weight * (x_e[state] - target)^2 at each window's end "
                       "(training only)"}});
    j["optimizer"]["window"] = {
        {"steps", optimizer.window_steps}, {"reset", resets}, {"terminal", ends}};
  }
  j["validation"] = {{"enabled", validation.enabled},
                     {"at", validation.at},
                     {"epsilon", validation.epsilon},
                     {"epsilon_sweep", validation.epsilon_sweep},
                     {"tolerance", validation.tolerance},
                     {"abs_tolerance", validation.abs_tolerance},
                     {"seed", validation.seed},
                     {"energy_drift_bound", validation.energy_drift_bound},
                     {"horizon_ratio_bound", validation.horizon_ratio_bound},
                     {"horizon_measure", validation.horizon_measure},
                     {"penetration_bound_m", validation.penetration_bound},
                     {"inversion_check", validation.inversion_check},
                     {"max_rollouts", validation.max_rollouts},
                     {"listed_rollouts", validation.listed_rollouts},
                     {"float32_tolerance", validation.float32_tolerance},
                     {"timestep_check", validation.timestep_check},
                     {"timestep_tolerance", validation.timestep_tolerance},
                     {"chatter_fraction", validation.chatter_fraction},
                     {"secant_check", validation.secant_check},
                     {"secant_epsilon", validation.secant_epsilon},
                     {"secant_tolerance", validation.secant_tolerance}};
  j["output"] = {{"dir", output.dir},
                 {"trajectory_stride", output.trajectory_stride},
                 {"trajectory_rollouts", output.trajectory_rollouts},
                 {"json_trajectory_points", output.json_trajectory_points}};
  return j;
}

}  // namespace steer
