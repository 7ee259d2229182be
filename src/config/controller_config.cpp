// The `controller` section (docs/config.md, "Controllers"): the observations, the network and
// its initial weights, turned into c.policy (steer/controller.h) and θ slots appended after the
// model's, named controller.* so that variables, batch draws and the artifact address them as
// any other parameter.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/json_text.h"
#include "config/controller_config.h"
#include "models/registry.h"

namespace steer {

namespace {

// one observation as parsed, before it becomes a Policy entry and two θ slots
struct ObservationSpec {
  int feature = Policy::kState, index = 0, axis = 0;
  double scale = 1, center = 0, noise = 0;
  std::string name;  // what it observes, for the effective config and the slot names
};

int axis_code(const std::string& a) { return a == "x" ? 0 : a == "y" ? 1 : a == "z" ? 2 : -1; }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

// a string or a list of strings
std::vector<std::string> names_of(const JsonObject& e, const std::string& key) {
  const nlohmann::json& v = e.raw(key);
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array() && !v.empty()) {
    for (const auto& n : v) {
      if (!n.is_string())
        config_fail(e.key_path(key), "expected names (strings), found " + json_type_name(n));
      out.push_back(n.get<std::string>());
    }
  } else {
    config_fail(e.key_path(key),
                "expected a name or a non-empty list of names, found " + json_type_name(v));
  }
  return out;
}

// "scale" / "center" of an entry of n observations: one number for all, or n numbers
void per_entry_numbers(const JsonObject& e, const std::string& key, double def,
                       std::vector<ObservationSpec>& out, size_t first) {
  const size_t n = out.size() - first;
  std::vector<double> v;
  if (!e.has(key)) {
    v.assign(n, def);
  } else if (e.raw(key).is_number()) {
    v.assign(n, e.number(key, def, Range::closed(-1e12, 1e12)));
  } else {
    v = e.numbers(key, {}, Range::closed(-1e12, 1e12), long(n));
  }
  for (size_t i = 0; i < n; ++i)
    (key == "scale" ? out[first + i].scale : out[first + i].center) = v[i];
}

void parse_state_features(const JsonObject& e, const ExperimentConfig& c,
                          std::vector<ObservationSpec>& out) {
  const bool from_center = e.boolean("minus_center", false);
  for (const std::string& n : names_of(e, "state")) {
    std::vector<int> slots;
    if (c.info.state_index(n) >= 0)
      slots.push_back(c.info.state_index(n));
    else if (c.info.state_groups.count(n))
      slots = c.info.state_groups.at(n);
    else
      config_fail(e.key_path("state"),
                  "'" + excerpt(n) + "' is not a state slot or group of model " + c.info.type +
                      "; accepted: " + joined(c.info.state_names));
    for (int s : slots) {
      ObservationSpec o;
      o.feature = from_center ? Policy::kStateFromCenter : Policy::kState;
      o.index = s;
      o.name = c.info.state_names[size_t(s)];
      if (from_center) {
        // the slot's axis from its name's last part (particle.3.position.x)
        const std::string& sn = o.name;
        o.axis =
            sn.size() > 2 && sn[sn.size() - 2] == '.' ? axis_code(sn.substr(sn.size() - 1)) : -1;
        if (o.axis < 0 || c.info.state_units[size_t(s)] != "m")
          config_fail(e.key_path("minus_center"),
                      "'" + sn +
                          "' is not a position along x, y or z (a slot in m whose name "
                          "ends in .x, .y or .z); observe it without minus_center");
        const ModelDef& def = model_of(c);
        const std::string err =
            def.com_axis_error ? def.com_axis_error(c, sn.substr(sn.size() - 1), o.axis) : "";
        if (!err.empty()) config_fail(e.key_path("minus_center"), err);
        o.name += " - center_of_mass." + sn.substr(sn.size() - 1);
      }
      out.push_back(o);
    }
  }
}

void parse_observation(const JsonObject& e, const ExperimentConfig& c,
                       std::vector<ObservationSpec>& out, double& frequency) {
  const std::vector<std::string> kinds = {"state", "center_of_mass", "phase", "site"};
  int given = 0;
  for (const auto& k : kinds) given += e.has(k) ? 1 : 0;
  if (given != 1)
    config_fail(e.path(), "expected exactly one of state, center_of_mass, phase, site");
  const size_t first = out.size();
  const ModelDef& def = model_of(c);
  if (e.has("state")) parse_state_features(e, c, out);
  if (e.has("center_of_mass")) {
    for (const std::string& a : names_of(e, "center_of_mass")) {
      ObservationSpec o;
      o.feature = Policy::kCenter;
      o.axis = axis_code(a);
      if (o.axis < 0)
        config_fail(e.key_path("center_of_mass"), "'" + excerpt(a) + "': expected x, y or z");
      const std::string err = def.com_axis_error ? def.com_axis_error(c, a, o.axis) : "";
      if (!err.empty()) config_fail(e.key_path("center_of_mass"), err);
      o.name = "center_of_mass." + a;
      out.push_back(o);
    }
  }
  if (e.has("phase")) {
    JsonObject ph = e.object("phase");
    const int n = int(ph.integer("count", 0, 1, 64));
    const double w = ph.number_required("frequency", Range::closed(-1e6, 1e6));
    if (frequency == frequency && frequency != w)
      config_fail(ph.key_path("frequency"), number_text(w) +
                                                " differs from an earlier phase "
                                                "observation's " +
                                                number_text(frequency) +
                                                " rad/s; the controller takes one phase frequency");
    frequency = w;
    ph.finish();
    for (int j = 0; j < n; ++j) {
      ObservationSpec o;
      o.feature = Policy::kPhase;
      o.index = j;
      o.axis = n;
      o.name = "phase." + std::to_string(j) + " = sin(w t + 2 pi " + std::to_string(j) + "/" +
               std::to_string(n) + ")";
      out.push_back(o);
    }
  }
  if (e.has("site")) {
    if (!def.site_names)
      config_fail(e.key_path("site"), "model " + c.model_type + " has no sites to observe");
    const std::vector<std::string> sites = def.site_names(c);
    const std::string axes = e.string("axes", "xyz");
    for (const std::string& n : names_of(e, "site")) {
      int s = -1;
      for (size_t i = 0; i < sites.size(); ++i)
        if (sites[i] == n) s = int(i);
      if (s < 0)
        config_fail(e.key_path("site"),
                    "'" + excerpt(n) + "' is not a site of this model; accepted: " + joined(sites));
      for (char a : axes) {
        ObservationSpec o;
        o.feature = Policy::kSite;
        o.index = s;
        o.axis = axis_code(std::string(1, a));
        if (o.axis < 0)
          config_fail(e.key_path("axes"),
                      "'" + excerpt(axes) + "': expected letters among x, y, z");
        o.name = "site." + n + "." + a;
        out.push_back(o);
      }
    }
  }
  per_entry_numbers(e, "scale", 1.0, out, first);
  per_entry_numbers(e, "center", 0.0, out, first);
  e.finish();
}

int activation_code(const std::string& a) {
  return a == "tanh"   ? Policy::kTanh
         : a == "relu" ? Policy::kRelu
         : a == "elu"  ? Policy::kElu
                       : Policy::kLinear;
}
const char* activation_name(int a) {
  return a == Policy::kTanh   ? "tanh"
         : a == Policy::kRelu ? "relu"
         : a == Policy::kElu  ? "elu"
                              : "linear";
}

// N(0, 1) from splitmix64 by Box–Muller: the same numbers on every platform and library
struct NormalStream {
  std::uint64_t s;
  double uniform() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double(z >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
  }
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

// controller.init.file: {"layers": [{"weight": [[…] × out], "bias": […]}, …]} for the policy's
// widths, into θ (the layers' slots)
void read_weight_file(const std::string& key, const std::string& file, const ExperimentConfig& c,
                      std::vector<double>& theta) {
  const Policy& P = c.policy;
  const std::string path =
      file.empty() || file[0] == '/' || c.base_dir.empty() ? file : c.base_dir + "/" + file;
  nlohmann::json j;
  try {
    j = read_config_text(read_bounded_file(path, key), path);
  } catch (const ConfigError& e) {
    config_fail(key, e.what());
  }
  if (!j.is_object() || !j.contains("layers") || !j["layers"].is_array() ||
      int(j["layers"].size()) != P.n_layers)
    config_fail(key, "'" + excerpt(file) +
                         "': expected {\"layers\": [{\"weight\": …, \"bias\": …}, …]} with " +
                         std::to_string(P.n_layers) + " layers");
  for (int l = 0; l < P.n_layers; ++l) {
    const nlohmann::json& L = j["layers"][size_t(l)];
    const int nin = P.width[l], nout = P.width[l + 1], q0 = P.layer_begin(l);
    const std::string where = "'" + excerpt(file) + "' layers[" + std::to_string(l) + "]";
    if (!L.is_object() || !L.contains("weight") || !L.contains("bias") || !L["weight"].is_array() ||
        int(L["weight"].size()) != nout || !L["bias"].is_array() || int(L["bias"].size()) != nout)
      config_fail(key, where + ": expected weight [" + std::to_string(nout) + "][" +
                           std::to_string(nin) + "] and bias [" + std::to_string(nout) + "]");
    for (int r = 0; r < nout; ++r) {
      const nlohmann::json& row = L["weight"][size_t(r)];
      if (!row.is_array() || int(row.size()) != nin)
        config_fail(key, where + ".weight[" + std::to_string(r) + "]: expected " +
                             std::to_string(nin) + " numbers");
      for (int col = 0; col < nin; ++col) {
        if (!row[size_t(col)].is_number() || !std::isfinite(row[size_t(col)].get<double>()))
          config_fail(key, where + ".weight[" + std::to_string(r) + "][" + std::to_string(col) +
                               "]: not a finite number");
        theta[size_t(q0 + r * nin + col)] = row[size_t(col)].get<double>();
      }
      if (!L["bias"][size_t(r)].is_number() || !std::isfinite(L["bias"][size_t(r)].get<double>()))
        config_fail(key, where + ".bias[" + std::to_string(r) + "]: not a finite number");
      theta[size_t(q0 + nout * nin + r)] = L["bias"][size_t(r)].get<double>();
    }
  }
}

// the θ slots of the controller: names, groups, nominal values
void add_controller_slots(const std::vector<ObservationSpec>& obs,
                          const std::vector<double>& action_scale, ExperimentConfig& c) {
  const Policy& P = c.policy;
  const int np0 = c.info.np(), n = np0 + P.size();
  c.info.resize_params(n);
  c.theta.resize(size_t(n), 0.0);
  const Range any{};
  for (int i = 0; i < P.n_obs; ++i) {
    const std::string o = "controller.observation." + std::to_string(i);
    c.info.set_param(P.obs_scale(i), o + ".scale", "1/unit", any, "controller.observation.scale");
    c.info.set_param(P.obs_center(i), o + ".center", "unit", any, "controller.observation.center");
    c.theta[size_t(P.obs_scale(i))] = obs[size_t(i)].scale;
    c.theta[size_t(P.obs_center(i))] = obs[size_t(i)].center;
  }
  for (int l = 0; l < P.n_layers; ++l) {
    const int nin = P.width[l], nout = P.width[l + 1], q0 = P.layer_begin(l);
    const std::string L = "controller.layer" + std::to_string(l);
    for (int r = 0; r < nout; ++r) {
      for (int col = 0; col < nin; ++col) {
        const int q = q0 + r * nin + col;
        c.info.set_param(q, L + ".weight." + std::to_string(r) + "." + std::to_string(col), "1",
                         any, L + ".weight");
        c.info.param_groups["controller.weights"].push_back(q);
      }
    }
    for (int r = 0; r < nout; ++r) {
      const int q = q0 + nout * nin + r;
      c.info.set_param(q, L + ".bias." + std::to_string(r), "1", any, L + ".bias");
      c.info.param_groups["controller.weights"].push_back(q);
    }
  }
  for (int a = 0; a < P.n_actions(); ++a) {
    c.info.set_param(P.action_scale(a),
                     "controller.action_scale." + c.info.control_names[size_t(a)],
                     c.info.control_units[size_t(a)], any, "controller.action_scale");
    c.theta[size_t(P.action_scale(a))] = action_scale[size_t(a)];
  }
  if (!P.noise) return;
  for (int i = 0; i < P.n_obs; ++i) {
    c.info.set_param(P.obs_noise(i), "controller.observation." + std::to_string(i) + ".noise",
                     "unit", Range::nonnegative(), "controller.observation.noise");
    c.theta[size_t(P.obs_noise(i))] = obs[size_t(i)].noise;
  }
  // the rollout's noise seed: set per rollout by the batch (build_batch), a sweep may set it
  c.info.set_param(P.noise_seed(), "controller.noise_seed", "1", any, "");
}

// the d pending actions (or the held one) after the model's state slots, zero at the start
void add_pending_slots(ExperimentConfig& c) {
  const Policy& P = c.policy;
  if (P.hold > 1)
    for (int a = 0; a < P.n_actions(); ++a) {
      c.info.state_names.push_back("controller.held." + c.info.control_names[size_t(a)]);
      c.info.state_units.push_back(c.info.control_units[size_t(a)]);
      c.info.state_ranges.push_back(Range{});
      c.info.state_groups["controller.held"].push_back(P.held(a));
      c.x0.push_back(0.0);
    }
  for (int j = 0; j < P.delay; ++j)
    for (int a = 0; a < P.n_actions(); ++a) {
      c.info.state_names.push_back("controller.pending." + std::to_string(j) + "." +
                                   c.info.control_names[size_t(a)]);
      c.info.state_units.push_back(c.info.control_units[size_t(a)]);
      c.info.state_ranges.push_back(Range{});
      c.info.state_groups["controller.pending"].push_back(P.pending(j, a));
      c.x0.push_back(0.0);
    }
}

// controller.policy -> the layers of P (width[0] = n_obs already set) and σ; type: mlp | linear
std::vector<double> parse_policy(const JsonObject& pol, int n_act, Policy& P, std::string& type) {
  type = pol.choice("type", "mlp", {"mlp", "linear"});
  std::vector<double> hidden;
  if (type == "mlp")
    hidden = pol.numbers("hidden", {64.0, 64.0}, Range::closed(1, Policy::kMaxWidth));
  else if (pol.has("hidden"))
    config_fail(pol.key_path("hidden"), "a linear policy has no hidden layers; use type \"mlp\"");
  if (int(hidden.size()) + 1 > Policy::kMaxLayers)
    config_fail(pol.key_path("hidden"), std::to_string(hidden.size()) + " hidden layers, at most " +
                                            std::to_string(Policy::kMaxLayers - 1));
  const std::vector<std::string> acts = {"tanh", "relu", "elu", "linear"};
  const int hidden_act = activation_code(pol.choice("activation", "tanh", acts));
  const int out_act =
      activation_code(pol.choice("output_activation", type == "mlp" ? "tanh" : "linear", acts));
  P.n_layers = int(hidden.size()) + 1;
  P.width[0] = P.n_obs;
  for (size_t l = 0; l < hidden.size(); ++l) {
    if (hidden[l] != std::floor(hidden[l]))
      config_fail(pol.key_path("hidden"),
                  number_text(hidden[l]) + " is not a whole number of units");
    P.width[l + 1] = int(hidden[l]);
    P.activation[l] = hidden_act;
  }
  P.width[P.n_layers] = n_act;
  P.activation[P.n_layers - 1] = out_act;
  int units = 0;
  for (int l = 0; l <= P.n_layers; ++l) units += P.width[l];
  if (units > Policy::kMaxUnits)
    config_fail(pol.key_path("hidden"),
                std::to_string(units) +
                    " units over the observations, layers and actions, more than " +
                    std::to_string(Policy::kMaxUnits));
  std::vector<double> action_scale(size_t(n_act), 1.0);
  if (pol.has("action_scale")) {
    if (pol.raw("action_scale").is_number())
      action_scale.assign(size_t(n_act),
                          pol.number("action_scale", 1.0, Range::closed(-1e12, 1e12)));
    else
      action_scale = pol.numbers("action_scale", {}, Range::closed(-1e12, 1e12), n_act);
  }
  if (pol.has("clamp")) {
    const std::vector<double> cl = pol.numbers("clamp", {}, Range::closed(-1e12, 1e12), 2);
    if (!(cl[0] < cl[1])) config_fail(pol.key_path("clamp"), "expected [lo, hi] with lo < hi");
    P.clamp_lo = cl[0], P.clamp_hi = cl[1];
  }
  pol.finish();
  return action_scale;
}

// controller.init: every weight from N(0, gain² 2/(fan_in + fan_out)), biases zero; or a file.
// Returns the effective section's init entry
nlohmann::json initial_weights(const JsonObject& in, ExperimentConfig& c) {
  const std::string file = in.string("file", "");
  const long seed = in.integer("seed", 0, 0, (1L << 53));
  const double gain = in.number("gain", 1.0, Range::nonnegative());
  if (!file.empty() && (in.has("seed") || in.has("gain")))
    config_fail(in.key_path("file"), "takes the weights from the file; remove seed and gain");
  in.finish();
  const Policy& P = c.policy;
  if (!file.empty()) {
    read_weight_file(in.key_path("file"), file, c, c.theta);
  } else {
    NormalStream g{std::uint64_t(seed)};
    for (int l = 0; l < P.n_layers; ++l) {
      const int nin = P.width[l], nout = P.width[l + 1], q0 = P.layer_begin(l);
      const double sd = gain * std::sqrt(2.0 / double(nin + nout));
      for (int q = 0; q < nin * nout; ++q) c.theta[size_t(q0 + q)] = sd * g.normal();
    }
  }
  return file.empty() ? nlohmann::json({{"seed", seed}, {"gain", gain}})
                      : nlohmann::json({{"file", file}});
}

}  // namespace

nlohmann::json controller_weight_file(const ExperimentConfig& c, const double* theta) {
  const Policy& P = c.policy;
  nlohmann::json layers = nlohmann::json::array();
  for (int l = 0; l < P.n_layers; ++l) {
    const int nin = P.width[l], nout = P.width[l + 1], q0 = P.layer_begin(l);
    nlohmann::json weight = nlohmann::json::array(), bias = nlohmann::json::array();
    for (int r = 0; r < nout; ++r) {
      weight.push_back(std::vector<double>(theta + q0 + r * nin, theta + q0 + (r + 1) * nin));
      bias.push_back(theta[q0 + nout * nin + r]);
    }
    layers.push_back({{"weight", weight}, {"bias", bias}});
  }
  return {{"layers", layers}};
}

void parse_controller(const JsonObject& k, ExperimentConfig& c) {
  const ModelDef& def = model_of(c);
  if (!def.accepts_controller)
    config_fail("controller",
                "the " + c.model_type + " model takes no controller (accepted by: " +
                    model_names([](const ModelDef& d) { return d.accepts_controller; }) + ")");
  const int n_act = c.info.nu();
  if (n_act == 0)
    config_fail("controller",
                "the model has no controls for the controller to drive (a "
                "mass_spring robot: model.actuation.type \"raw\"; an articulated "
                "model: actuators)");
  if (n_act > Policy::kMaxWidth)
    config_fail("controller", std::to_string(n_act) + " controls, more than the controller's " +
                                  std::to_string(Policy::kMaxWidth) + " actions");
  Policy& P = c.policy;
  P = Policy{};
  P.theta0 = c.info.np();
  P.dt = c.dt;
  // observations
  const nlohmann::json& ol = k.raw("observations");
  if (!ol.is_array() || ol.empty())
    config_fail(k.key_path("observations"),
                "expected a non-empty list of observations, found " + json_type_name(ol));
  std::vector<ObservationSpec> obs;
  double frequency = std::nan("");
  for (size_t i = 0; i < ol.size(); ++i) {
    const std::string path = k.key_path("observations") + "[" + std::to_string(i) + "]";
    if (!ol[i].is_object()) config_fail(path, "expected an object, found " + json_type_name(ol[i]));
    parse_observation(JsonObject(ol[i], path), c, obs, frequency);
  }
  if (int(obs.size()) > Policy::kMaxObs)
    config_fail(
        k.key_path("observations"),
        std::to_string(obs.size()) + " observations, more than " + std::to_string(Policy::kMaxObs));
  P.n_obs = int(obs.size());
  P.phase_frequency = frequency == frequency ? frequency : 0.0;
  // observation noise ν_i (one number, or one per observation) and the action delay
  if (k.has("observation_noise")) {
    std::vector<double> nu;
    if (k.raw("observation_noise").is_number())
      nu.assign(obs.size(), k.number("observation_noise", 0.0, Range::closed(0, 1e12)));
    else
      nu = k.numbers("observation_noise", {}, Range::closed(0, 1e12), long(obs.size()));
    for (size_t i = 0; i < obs.size(); ++i) obs[i].noise = nu[i];
    P.noise = true;
  }
  P.delay = int(k.integer("delay_steps", 0, 0, 64));
  P.hold = int(k.integer("action_hold", 1, 1, 64));
  if (P.hold > 1 && P.delay > 0)
    config_fail(k.key_path("action_hold"),
                "is not combined with delay_steps yet: give one of the two");
  if (P.hold > 1 && !def.holds_controller_actions)
    config_fail(k.key_path("action_hold"),
                "the " + c.model_type +
                    " model's controlled step does not hold actions (its "
                    "CUDA kernels are at their register budget); accepted by: " +
                    model_names([](const ModelDef& d) { return d.holds_controller_actions; }));
  P.nx_model = c.info.nx();
  for (int i = 0; i < P.n_obs; ++i) {
    P.feature[i] = short(obs[size_t(i)].feature);
    P.index[i] = short(obs[size_t(i)].index);
    P.axis[i] = short(obs[size_t(i)].axis);
  }
  std::string type;
  const std::vector<double> action_scale = parse_policy(k.object("policy"), n_act, P, type);
  if (long(P.nx_model) + long(P.delay) * n_act > 32767)
    config_fail(k.key_path("delay_steps"), std::to_string(P.delay) + " steps of " +
                                               std::to_string(n_act) +
                                               " pending actions exceed the state's size limit");
  add_controller_slots(obs, action_scale, c);
  add_pending_slots(c);
  const nlohmann::json init = initial_weights(k.object("init"), c);
  k.finish();
  c.has_controller = true;
  // the effective section
  nlohmann::json oj = nlohmann::json::array();
  for (const auto& o : obs) {
    oj.push_back({{"observes", o.name}, {"scale", o.scale}, {"center", o.center}});
    if (P.noise) oj.back()["noise"] = o.noise;
  }
  nlohmann::json widths = nlohmann::json::array(), layer_acts = nlohmann::json::array();
  for (int l = 0; l <= P.n_layers; ++l) widths.push_back(P.width[l]);
  for (int l = 0; l < P.n_layers; ++l) layer_acts.push_back(activation_name(P.activation[l]));
  c.controller_json = {
      {"observations", oj},
      {"phase_frequency", {{"value", P.phase_frequency}, {"unit", "rad/s"}}},
      {"policy",
       {{"type", type},
        {"widths", widths},
        {"activations", layer_acts},
        {"action_scale", action_scale},
        {"clamp",
         P.clamp_lo > -1e300 ? nlohmann::json({P.clamp_lo, P.clamp_hi}) : nlohmann::json()}}},
      {"init", init},
      {"theta_slots", {{"first", P.theta0}, {"count", P.size()}}},
      {"delay_steps", P.delay},
      {"action_hold", P.hold},
      {"observation_noise", P.noise ? "scale * (observation + noise * N(0, 1) draw of (rollout's "
                                      "controller.noise_seed, step, observation) - center)"
                                    : "none"},
      {"law",
       "u_k = u_open,k + clamp(action_scale * a_L), a_l = act_l(W_l a_(l-1) + b_l), "
       "a_0 = scale * (observation - center)"}};
}

void check_controller_variables(const ExperimentConfig& c) {
  if (!c.has_controller || !c.policy.noise) return;
  for (const auto& v : c.variables)
    if (v.kind == VariableSpec::kParameter && v.index == c.policy.noise_seed())
      config_fail("variables." + v.name,
                  "controller.noise_seed seeds the rollout's observation "
                  "noise (its draws have no derivative); it is not a variable");
}

}  // namespace steer
