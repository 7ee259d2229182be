// parse_config: the config's sections, each checked key by key against its range, in the
// order they depend on each other. What is derived from a parsed config has a file of its own:
// the memory estimate (memory_estimate.cpp), the effective config (config_json.cpp), the
// checkpoint schedule (checkpoint_plan.cpp), the half-step twin (halved_timestep.cpp); reading
// a config file and its model.include is config_load.cpp.
#include "config/config.h"
#include "config/controller_config.h"

#include "config/loss_data.h"
#include "models/registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace steer {

namespace {

int index_of(const std::vector<std::string>& v, const std::string& n) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == n) return int(i);
  return -1;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Range slot_range(const ModelInfo& info, bool is_state, int index) {
  return is_state ? info.state_ranges[index] : info.param_ranges[index];
}

// the narrowest range that holds every slot's range (for messages and array checks)
Range common_range(const ModelInfo& info, bool is_state, const std::vector<int>& idx) {
  Range r = slot_range(info, is_state, idx[0]);
  for (int i : idx) {
    Range q = slot_range(info, is_state, i);
    if (q.lo > r.lo || (q.lo == r.lo && q.lo_open)) r.lo = q.lo, r.lo_open = q.lo_open;
    if (q.hi < r.hi || (q.hi == r.hi && q.hi_open)) r.hi = q.hi, r.hi_open = q.hi_open;
  }
  return r;
}

// the [min, max] of the start values an override can give the slot with nominal value v
void override_span(const BatchOverride& o, double v, double& lo, double& hi) {
  switch (o.draw) {
    case BatchOverride::kSweep:
      lo = *std::min_element(o.values.begin(), o.values.end());
      hi = *std::max_element(o.values.begin(), o.values.end());
      break;
    case BatchOverride::kUniform:
      lo = o.lo, hi = o.hi;
      break;
    case BatchOverride::kRelative:
      lo = std::min(v * (1 + o.lo), v * (1 + o.hi)), hi = std::max(v * (1 + o.lo), v * (1 + o.hi));
      break;
    case BatchOverride::kJitter:
      lo = v + o.lo, hi = v + o.hi;
      break;
  }
}

void parse_batch(const JsonObject& b, ExperimentConfig& c) {
  c.batch_size = int(b.integer("size", 1, 1, 1 << 24));
  c.seed = std::uint64_t(b.integer("seed", 1, 0, (1L << 62)));
  if (b.has("sweep")) {
    JsonObject sw = b.object("sweep");
    for (auto it = b.raw("sweep").begin(); it != b.raw("sweep").end(); ++it) {
      BatchOverride o;
      o.name = it.key();
      o.indices = resolve_slots(c.info, sw.key_path(it.key()), o.name, o.is_state);
      o.values =
          sw.numbers(it.key(), {}, common_range(c.info, o.is_state, o.indices), c.batch_size);
      c.overrides.push_back(o);
    }
    sw.finish();
  }
  if (b.has("randomize")) {
    JsonObject rz = b.object("randomize");
    for (auto it = b.raw("randomize").begin(); it != b.raw("randomize").end(); ++it) {
      BatchOverride o;
      o.name = it.key();
      const std::string path = rz.key_path(it.key());
      o.indices = resolve_slots(c.info, path, o.name, o.is_state);
      if (it.value().is_object()) {
        // {"relative": r}: v (1 + U(−r, r));  {"jitter": a}: v + U(−a, a)
        JsonObject form = rz.object(it.key());
        if (form.has("relative") == form.has("jitter"))
          config_fail(path, "expected [low, high], {\"relative\": r} or {\"jitter\": a}");
        if (form.has("relative")) {
          const double r = form.number_required("relative", Range{0, 1, false, true});
          o.draw = BatchOverride::kRelative, o.lo = -r, o.hi = r;
        } else {
          const double a = form.number_required("jitter", Range::nonnegative());
          o.draw = BatchOverride::kJitter, o.lo = -a, o.hi = a;
        }
        form.finish();
      } else {
        std::vector<double> lh =
            rz.numbers(it.key(), {}, common_range(c.info, o.is_state, o.indices), 2);
        if (lh[0] > lh[1]) config_fail(path, "expected [low, high] with low <= high");
        o.draw = BatchOverride::kUniform, o.lo = lh[0], o.hi = lh[1];
      }
      // relative and additive draws must keep every slot inside its physical range
      for (int i : o.indices) {
        double lo = 0, hi = 0;
        override_span(o, o.is_state ? c.x0[i] : c.theta[i], lo, hi);
        const Range r = slot_range(c.info, o.is_state, i);
        if (!r.contains(lo) || !r.contains(hi))
          config_fail(path, "draws span [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "] for slot " +
                                (o.is_state ? c.info.state_names[i] : c.info.param_names[i]) +
                                ", outside its range " + r.describe());
      }
      c.overrides.push_back(o);
    }
    rz.finish();
  }
  // the worlds of shared variables; checked against the variables in check_shared
  c.share_groups = int(b.integer("groups", 1, 1, c.batch_size));
  if (c.batch_size % c.share_groups != 0)
    config_fail(b.key_path("groups"), std::to_string(c.share_groups) +
                                          " does not divide batch.size " +
                                          std::to_string(c.batch_size) +
                                          "; accepted: a divisor of batch.size (equal groups)");
  if (b.has("weights"))
    c.world_weights = b.numbers("weights", {}, Range{0, 1e300, true, false}, c.batch_size);
  b.finish();
}

// o.state: a state name of the model, its slot returned and its name in `name`; refused naming
// the key with the accepted names
int named_state(const JsonObject& o, const ExperimentConfig& c, std::string& name) {
  name = o.string("state", "");
  const int idx = c.info.state_index(name);
  if (idx < 0)
    config_fail(o.key_path("state"), "'" + excerpt(name) + "' is not a state of model " +
                                         c.info.type + "; accepted: " + join(c.info.state_names));
  return idx;
}

// loss.terminal_linear: Σ_j w_j x_T[state_j], a distance travelled by one slot (DiffTaichi's
// mass_spring.py rewards −x_T of its head particle). Each term is written into the Loss as two
// quadratic terminal terms of opposite weights, ½ w (x + ½)² − ½ w (x − ½)² = w x, so that the
// kernels' loss code (and their register budget) is the quadratic terms' alone; they follow
// loss.terminal's terms.
nlohmann::json parse_terminal_linear(const JsonObject& l, ExperimentConfig& c) {
  const auto& arr = l.raw("terminal_linear");
  const std::string path = l.key_path("terminal_linear");
  if (!arr.is_array() || arr.empty())
    config_fail(path, "expected a non-empty array of {state, weight}, got " + json_type_name(arr));
  Loss& loss = c.loss;
  const size_t room = size_t(Loss::kMaxTerms - loss.n_terminal) / 2;
  if (arr.size() > room)
    config_fail(path, "at most " + std::to_string(room) + " linear terms beside " +
                          std::to_string(loss.n_terminal) + " terminal terms (each takes two of " +
                          std::to_string(Loss::kMaxTerms) + " slots), got " +
                          std::to_string(arr.size()));
  nlohmann::json terms = nlohmann::json::array();
  for (size_t j = 0; j < arr.size(); ++j) {
    JsonObject term(arr[j], path + "[" + std::to_string(j) + "]");
    std::string st;
    const int idx = named_state(term, c, st);
    const double w = term.number_required("weight", Range::closed(-1e12, 1e12));
    term.finish();
    for (const double sign : {1.0, -1.0}) {
      const int t = loss.n_terminal++;
      loss.terminal_index[t] = idx;
      loss.terminal_target[t] = -0.5 * sign;
      loss.terminal_weight[t] = sign * w;
      loss.terminal_param[t] = -1;
    }
    terms.push_back({{"state", st},
                     {"weight", w},
                     {"unit", c.info.state_units[idx]},
                     {"term", "weight * x_T[state]"}});
  }
  return terms;
}

void parse_loss(const JsonObject& l, ExperimentConfig& c) {
  Loss& loss = c.loss;
  loss = Loss{};
  c.loss_json = nlohmann::json::object();
  if (l.has("terminal")) {
    const auto& arr = l.raw("terminal");
    const std::string path = l.key_path("terminal");
    if (!arr.is_array())
      config_fail(path, "expected an array of {state, target, weight}, got " + json_type_name(arr));
    if (arr.size() > size_t(Loss::kMaxTerms))
      config_fail(path, "at most " + std::to_string(Loss::kMaxTerms) + " terminal terms, got " +
                            std::to_string(arr.size()));
    nlohmann::json terms = nlohmann::json::array();
    for (size_t t = 0; t < arr.size(); ++t) {
      JsonObject term(arr[t], path + "[" + std::to_string(t) + "]");
      std::string st;
      const int idx = named_state(term, c, st);
      loss.terminal_index[t] = idx;
      // the target is a number, or a parameter slot ("theta.<name>") so that each rollout
      // can have its own (drawn) target and the target can itself be a variable
      if (term.has("target") && term.raw("target").is_string()) {
        const std::string tn = term.raw("target").get<std::string>();
        const int pi = tn.rfind("theta.", 0) == 0 ? c.info.param_index(tn.substr(6)) : -1;
        if (pi < 0)
          config_fail(term.key_path("target"),
                      "'" + excerpt(tn) +
                          "' is not a number or a parameter theta.<name> of model " + c.info.type);
        loss.terminal_param[t] = pi;
      } else {
        loss.terminal_target[t] = term.number_required("target", Range::closed(-1e12, 1e12));
      }
      loss.terminal_weight[t] = term.number("weight", 1.0, Range::nonnegative());
      term.finish();
      nlohmann::json tgt =
          loss.terminal_param[t] >= 0
              ? nlohmann::json("theta." + c.info.param_names[loss.terminal_param[t]])
              : nlohmann::json(loss.terminal_target[t]);
      terms.push_back({{"state", st},
                       {"target", tgt},
                       {"weight", loss.terminal_weight[t]},
                       {"unit", c.info.state_units[idx]},
                       {"term", "0.5 * weight * (x_T[state] - target)^2"}});
    }
    loss.n_terminal = int(arr.size());
    c.loss_json["terminal"] = terms;
  }
  c.n_terminal_quadratic = loss.n_terminal;
  if (l.has("terminal_linear")) c.loss_json["terminal_linear"] = parse_terminal_linear(l, c);
  loss.effort_weight = l.number("control_effort", 0.0, Range::nonnegative());
  c.loss_json["control_effort"] = {{"weight", loss.effort_weight},
                                   {"term", "sum_k 0.5 * weight * |u_k|^2"}};
  if (l.has("landing")) {
    JsonObject ld = l.object("landing");
    const ModelDef& def = model_of(c);
    if (!def.landing_dims)
      config_fail(ld.path(),
                  "the landing loss is defined for model " + model_names([](const ModelDef& d) {
                    return d.landing_dims != nullptr;
                  }) + " only");
    const int D = def.landing_dims(c);
    std::vector<double> tgt = ld.numbers("target", {}, Range::closed(-1e12, 1e12), D - 1);
    loss.landing = true;
    loss.vertical = 1;
    loss.n_landing = D - 1;
    int j = 0;
    for (int i = 0; i < D; ++i) {
      if (i == 1) continue;
      loss.landing_index[j] = i;
      loss.landing_target[j] = tgt[j];
      ++j;
    }
    loss.landing_weight = ld.number("weight", 1.0, Range::nonnegative());
    ld.finish();
    c.loss_json["landing"] = {{"target", tgt},
                              {"weight", loss.landing_weight},
                              {"unit", "m"},
                              {"term",
                               "0.5 * weight * |x_land - target|^2, x_land interpolated at y = 0 "
                               "inside the crossing step"}};
  }
  if (l.has("com_displacement")) {
    JsonObject cd = l.object("com_displacement");
    const std::string axis = cd.choice("axis", "x", {"x", "y", "z"});
    loss.com = true;
    loss.com_axis = axis == "x" ? 0 : axis == "y" ? 1 : 2;
    const ModelDef& def = model_of(c);
    const std::string axis_error =
        def.com_axis_error ? def.com_axis_error(c, axis, loss.com_axis) : std::string();
    if (!axis_error.empty()) config_fail(cd.key_path("axis"), axis_error);
    loss.com_weight = cd.number("weight", -1.0, Range::closed(-1e12, 1e12));
    cd.finish();
    c.loss_json["com_displacement"] = {
        {"axis", axis},
        {"weight", loss.com_weight},
        {"unit", "m"},
        {"term", "weight * (c(x_T) - c(x_0)), c = sum m_i x_i / sum m_i along axis"}};
  }
  if (l.has("com_target")) {
    JsonObject ct = l.object("com_target");
    const ModelDef& def = model_of(c);
    const std::vector<double> tgt = ct.numbers("target", {}, Range::closed(-1e6, 1e6));
    if (tgt.empty() || tgt.size() > 3)
      config_fail(ct.key_path("target"), "expected [x, y] or [x, y, z] [m]");
    static const char* kNames[3] = {"x", "y", "z"};
    for (size_t a = 0; a < tgt.size(); ++a) {
      const std::string err = def.com_axis_error ? def.com_axis_error(c, kNames[a], int(a)) : "";
      if (!err.empty()) config_fail(ct.key_path("target"), err);
      loss.com_target_point[a] = tgt[a];
    }
    loss.com_target = true;
    loss.com_target_axes = int(tgt.size());
    loss.com_target_weight = ct.number("weight", 1.0, Range::nonnegative());
    ct.finish();
    c.loss_json["com_target"] = {
        {"target", tgt},
        {"weight", loss.com_target_weight},
        {"unit", "m"},
        {"term", "0.5 * weight * |c(x_T) - target|^2, c = sum m_i x_i / sum m_i"}};
  }
  const nlohmann::json sites = parse_site_terms(l, c);
  if (!sites.is_null()) c.loss_json["sites"] = sites;
  const nlohmann::json track = parse_track_sources(l, c);
  if (!track.is_null())
    for (auto it = track.begin(); it != track.end(); ++it) c.loss_json[it.key()] = it.value();
  if (loss.n_terminal == 0 && loss.effort_weight == 0.0 && !loss.landing && !loss.com &&
      !loss.com_target && loss.n_site == 0 && c.tracking.empty())
    config_fail(l.path(),
                "the loss has no terms; give terminal, terminal_linear, control_effort, landing, "
                "com_displacement, com_target, sites, reference or observations");
  l.finish();
}

}  // namespace

// "x0.<state or group>" / "theta.<param or group>" -> slots, or a ConfigError at path
std::vector<int> resolve_slots(const ModelInfo& info, const std::string& path,
                               const std::string& name, bool& is_state) {
  std::vector<int> out;
  if (name.rfind("x0.", 0) == 0) {
    is_state = true;
    const std::string n = name.substr(3);
    const int i = info.state_index(n);
    if (i >= 0) out.push_back(i);
    auto g = info.state_groups.find(n);
    if (i < 0 && g != info.state_groups.end()) out = g->second;
  } else if (name.rfind("theta.", 0) == 0) {
    is_state = false;
    const std::string n = name.substr(6);
    const int i = info.param_index(n);
    if (i >= 0) out.push_back(i);
    auto g = info.param_groups.find(n);
    if (i < 0 && g != info.param_groups.end()) out = g->second;
  }
  if (out.empty()) {
    std::vector<std::string> all;
    for (const auto& [k, v] : info.state_groups) all.push_back("x0." + k);
    for (const auto& [k, v] : info.param_groups) all.push_back("theta." + k);
    if (info.nx() + info.np() <= 40) {
      for (const auto& n : info.state_names) all.push_back("x0." + n);
      for (const auto& n : info.param_names) all.push_back("theta." + n);
    } else {
      all.push_back("or one slot such as x0." + info.state_names[0] + " / theta." +
                    info.param_names[0]);
    }
    config_fail(path, "'" + excerpt(name) + "' is not a slot or group of model " + info.type +
                          "; accepted: " + join(all));
  }
  return out;
}

namespace {

// variables.<name>.moves: {"theta.<slot>": a, …}, the slots a parameter variable of one slot
// also moves, a per unit of it (VariableSpec::moves)
std::vector<std::pair<int, double>> parse_moves(const JsonObject& spec, const ExperimentConfig& c,
                                                const VariableSpec& var, size_t slots) {
  const std::string mp = spec.key_path("moves");
  if (var.kind != VariableSpec::kParameter || slots != 1)
    config_fail(mp, "applies to a variable of one θ slot (\"theta.<parameter>\"); '" +
                        excerpt(var.name) + "' is " +
                        (var.kind == VariableSpec::kParameter ? "a group" : "not a θ slot"));
  const nlohmann::json& raw = spec.raw("moves");
  if (!raw.is_object() || raw.empty())
    config_fail(mp, "expected {\"theta.<parameter>\": coefficient, …}, at least one");
  JsonObject mo(raw, mp);
  std::vector<std::pair<int, double>> out;
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const std::string key = it.key();
    const int j = key.rfind("theta.", 0) == 0 ? c.info.param_index(key.substr(6)) : -1;
    if (j < 0)
      config_fail(mo.key_path(key),
                  "'" + excerpt(key) + "' is not one θ slot of the model (theta.<parameter>)");
    if (j == c.info.param_index(var.name.substr(6)))
      config_fail(mo.key_path(key), "a variable does not move itself");
    out.push_back({j, mo.number(key, 0.0, Range::closed(-1e6, 1e6))});
  }
  mo.finish();
  return out;
}

void parse_variables(const JsonObject& v, const nlohmann::json& raw, ExperimentConfig& c) {
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const std::string name = it.key();
    const std::string path = v.key_path(name);
    JsonObject spec = v.object(name);
    VariableSpec var;
    var.name = name;
    std::vector<VariableSpec> expanded;
    if (name == "controls" || name.rfind("controls.", 0) == 0) {
      var.kind = VariableSpec::kControl;
      if (name == "controls") {
        for (int j = 0; j < c.info.nu(); ++j) {
          VariableSpec e = var;
          e.name = "controls." + c.info.control_names[j];
          e.index = j;
          expanded.push_back(e);
        }
      } else {
        var.index = c.info.control_index(name.substr(9));
        if (var.index < 0) {
          std::vector<std::string> all{"controls"};
          for (const auto& n : c.info.control_names) all.push_back("controls." + n);
          config_fail(path, "'" + excerpt(name) + "' is not a control of model " + c.info.type +
                                "; accepted: " + join(all));
        }
        expanded.push_back(var);
      }
    } else {
      bool is_state = true;
      const std::vector<int> idx = resolve_slots(c.info, path, name, is_state);
      var.kind = is_state ? VariableSpec::kInitialState : VariableSpec::kParameter;
      for (int i : idx) {
        VariableSpec e = var;
        e.index = i;
        e.name = (is_state ? "x0." + c.info.state_names[i] : "theta." + c.info.param_names[i]);
        expanded.push_back(e);
      }
    }
    // bounds default to the slot's physical range and must lie within it
    Range phys = Range::closed(-1e300, 1e300);
    if (var.kind != VariableSpec::kControl) {
      std::vector<int> idx;
      for (const auto& e : expanded) idx.push_back(e.index);
      phys = common_range(c.info, var.kind == VariableSpec::kInitialState, idx);
    }
    if (phys.lo_open && !spec.has("lower"))
      config_fail(path + ".lower", "required: this parameter must stay > " +
                                       std::to_string(phys.lo) + ", give a lower bound inside " +
                                       phys.describe());
    const double lo = spec.number("lower", phys.lo, phys);
    const double hi = spec.number("upper", phys.hi, phys);
    if (lo > hi)
      config_fail(
          path, "lower (" + std::to_string(lo) + ") must be <= upper (" + std::to_string(hi) + ")");
    if (spec.has("hold") && var.kind != VariableSpec::kControl)
      config_fail(path + ".hold", "applies to controls (steps per piecewise-constant knot); '" +
                                      excerpt(name) + "' is one value");
    const int hold = int(spec.integer("hold", 1, 1, c.steps));
    std::vector<std::pair<int, double>> moves;
    if (spec.has("moves")) moves = parse_moves(spec, c, var, expanded.size());
    const bool shared = spec.boolean("shared", false);
    spec.finish();
    for (auto& e : expanded) {
      e.lower = lo;
      e.upper = hi;
      e.hold = hold;
      e.moves = moves;
      e.shared = shared;
      // the nominal starting value must lie inside the bounds
      double nominal = e.kind == VariableSpec::kInitialState ? c.x0[e.index]
                       : e.kind == VariableSpec::kParameter  ? c.theta[e.index]
                                                             : c.u_init[e.index];
      if (nominal < lo || nominal > hi)
        config_fail(path, "the starting value " + std::to_string(nominal) +
                              " lies outside the bounds [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
      // every row of controls.initial_file starts a knot or a step
      if (e.kind == VariableSpec::kControl)
        for (int r = 0; r < c.u_rows; ++r) {
          const double v = c.u_steps[size_t(r) * c.info.nu() + e.index];
          if (v < lo || v > hi)
            config_fail(path, "controls.initial_file row " + std::to_string(r) + " gives " +
                                  number_text(v) + ", outside the bounds [" + number_text(lo) +
                                  ", " + number_text(hi) + "]");
        }
      for (const auto& prev : c.variables)
        if (prev.kind == e.kind && prev.index == e.index)
          config_fail(path, "'" + excerpt(e.name) + "' is already a variable (named twice)");
      c.variables.push_back(e);
    }
  }
  // per-rollout start values from sweeps and draws must lie inside the variable's bounds too
  for (const auto& o : c.overrides) {
    for (const auto& e : c.variables) {
      if (e.kind == VariableSpec::kControl || o.is_state != (e.kind == VariableSpec::kInitialState))
        continue;
      if (std::find(o.indices.begin(), o.indices.end(), e.index) == o.indices.end()) continue;
      const std::string key = std::string("batch.") +
                              (o.draw == BatchOverride::kSweep ? "sweep." : "randomize.") + o.name;
      double lo = 0, hi = 0;
      override_span(o, o.is_state ? c.x0[e.index] : c.theta[e.index], lo, hi);
      if (lo < e.lower || hi > e.upper)
        config_fail(key, "start values span [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "], outside the bounds of variable " + e.name + " [" +
                             std::to_string(e.lower) + ", " + std::to_string(e.upper) + "]");
    }
  }
  // a moved slot is not a variable (the moves of several variables on one slot add up)
  for (const auto& e : c.variables)
    for (const auto& [j, a] : e.moves)
      for (const auto& o : c.variables)
        if (o.kind == VariableSpec::kParameter && o.index == j)
          config_fail(v.key_path(e.name) + ".moves",
                      "theta." + c.info.param_names[size_t(j)] +
                          " is a variable itself; a variable moves other slots only");
  // parameter variables that also set initial-state slots (the model decides which)
  const ModelDef& def = model_of(c);
  if (def.tie_variables) def.tie_variables(c);
}

void parse_simulation(const JsonObject& s, ExperimentConfig& c) {
  if (c.model_dt > 0 && !s.has("dt"))
    c.dt = s.number("dt", c.model_dt, Range{0, 10, true, false});  // the model file's timestep
  else
    c.dt = s.number_required("dt", Range{0, 10, true, false});
  c.steps = int(s.integer("steps", 100, 1, 100000000));
  c.precision = s.choice("precision", "float64", {"float64", "float32"});
  if (s.has("checkpoint_every")) {
    const auto& v = s.raw("checkpoint_every");
    if (v.is_string() && v.get<std::string>() == "sqrt")
      c.checkpoint_every = 0;
    else if (v.is_string())
      config_fail(s.key_path("checkpoint_every"),
                  "'" + excerpt(v.get<std::string>()) +
                      "' is not accepted; expected \"sqrt\" or an integer in [1, " +
                      std::to_string(c.steps) + "]");
    else
      c.checkpoint_every = int(s.integer("checkpoint_every", 0, 1, c.steps));
  }
  c.checkpoint_memory_mb =
      s.number("checkpoint_memory_mb", 0.0, Range{0, 1e6, true, false});  // absent: 0, no budget
  c.store_forward_mb = s.number("store_forward_mb", 256.0, Range::closed(0, 1e6));
  c.backend = s.choice("backend", "auto", {"auto", "cpu", "cuda"});
  c.threads = int(s.integer("threads", 0, 0, 4096));
  c.memory_limit_gb = s.number("memory_limit_gb", 0.0, Range::closed(0, 1e6));
  s.finish();
  c.checkpoint_plan();  // a budget too small for any schedule is refused here
}

// learning_rate_schedule / learning_rate_final of an optimizer or compare section: the step
// size decays from learning_rate to learning_rate_final over the run's iterations
void parse_lr_schedule(const JsonObject& o, double learning_rate, std::string& schedule,
                       double& final_rate) {
  schedule = o.choice("learning_rate_schedule", "constant", {"constant", "cosine", "exponential"});
  if (schedule == "constant") {
    if (o.has("learning_rate_final"))
      config_fail(
          o.key_path("learning_rate_final"),
          "applies to learning_rate_schedule cosine or exponential; the schedule is constant");
    final_rate = learning_rate;
    return;
  }
  if (!o.has("learning_rate_final"))
    config_fail(o.key_path("learning_rate_final"),
                "missing; learning_rate_schedule " + schedule +
                    " decays to it (a number in [0, learning_rate])");
  final_rate = o.number("learning_rate_final", 0,
                        schedule == "exponential" ? Range{0, learning_rate, true, false}
                                                  : Range::closed(0, learning_rate));
}

// optimizer.window: {steps, reset, terminal}. A window restarts the step index at 0 from the
// carried state, so what reads the step's time (phases, observation noise, a time-dependent
// actuation), what is not a design (x0 or per-step controls as variables) and what is measured at
// the horizon's end (terminal targets, landing, tracking tables) is refused by name
void parse_window(const JsonObject& w, ExperimentConfig& c) {
  OptimizerConfig& op = c.optimizer;
  const std::string path = w.path();
  op.window_steps = int(w.integer("steps", 0, 1, c.steps));
  // absent, it reads as 0: no window length to tile the horizon with (and no divisor)
  if (op.window_steps < 1)
    config_fail(w.key_path("steps"),
                "missing; expected the window's length in steps, an integer in [1, " +
                    std::to_string(c.steps) + "] that divides simulation.steps");
  if (c.steps % op.window_steps != 0)
    config_fail(w.key_path("steps"),
                std::to_string(op.window_steps) + " does not divide simulation.steps (" +
                    std::to_string(c.steps) + "): the windows tile the horizon");
  if (w.has("reset")) {
    const auto& arr = w.raw("reset");
    if (!arr.is_array())
      config_fail(w.key_path("reset"),
                  "expected an array of {state, below | above}, got " + json_type_name(arr));
    for (size_t i = 0; i < arr.size(); ++i) {
      JsonObject r(arr[i], w.key_path("reset") + "[" + std::to_string(i) + "]");
      OptimizerConfig::WindowReset wr;
      wr.slot = named_state(r, c, wr.name);
      if (r.has("below") == r.has("above"))
        config_fail(r.path(), "give one of below or above (the reset's threshold)");
      wr.below = r.has("below");
      wr.value = r.number_required(wr.below ? "below" : "above", Range::closed(-1e12, 1e12));
      r.finish();
      op.window_resets.push_back(wr);
    }
  }
  if (w.has("terminal")) {
    const auto& arr = w.raw("terminal");
    const size_t room = size_t(Loss::kMaxTerms - c.loss.n_terminal);
    if (!arr.is_array() || arr.empty() || arr.size() > room)
      config_fail(
          w.key_path("terminal"),
          "expected an array of 1 to " + std::to_string(room) +
              " {state, target, weight} (the loss's terminal slots left), got " +
              (arr.is_array() ? std::to_string(arr.size()) + " terms" : json_type_name(arr)));
    for (size_t i = 0; i < arr.size(); ++i) {
      JsonObject t(arr[i], w.key_path("terminal") + "[" + std::to_string(i) + "]");
      OptimizerConfig::WindowTerminal wt;
      wt.slot = named_state(t, c, wt.name);
      wt.target = t.number_required("target", Range::closed(-1e12, 1e12));
      wt.weight = t.number("weight", 1.0, Range::closed(0, 1e12));
      t.finish();
      op.window_terminal.push_back(wt);
    }
  }
  w.finish();
  auto refuse = [&](const std::string& why) { config_fail(path, why); };
  if (op.method != "gd" && op.method != "adam")
    refuse("trains with methods gd and adam (one step per window); method is " + op.method);
  if (op.normalized) refuse("is not combined with optimizer.normalized yet");
  for (const auto& v : c.variables)
    if (v.kind != VariableSpec::kParameter)
      refuse("optimizes θ variables (a policy, a design); " + v.name +
             " is not one: a window starts from the state carried in");
  if (c.n_terminal_quadratic > 0 || c.loss.landing || c.loss.has_terminal_sites() ||
      c.loss.com_target || !c.tracking.empty())
    refuse(
        "takes the loss terms a window can measure: control_effort, com_displacement, "
        "terminal_linear and running sites; drop loss.terminal, landing, com_target, terminal "
        "sites, reference and observations");
  if (c.has_controller) {
    for (int i = 0; i < c.policy.n_obs; ++i)
      if (c.policy.feature[i] == Policy::kPhase)
        refuse(
            "restarts the step index at 0 in every window: controller phase observations "
            "read the time; observe the state instead");
    if (c.policy.noise) refuse("restarts the step index: controller.observation_noise reads it");
    if (op.window_steps % c.policy.hold != 0)
      refuse("restarts the step index at 0 in every window: window.steps (" +
             std::to_string(op.window_steps) + ") must be a multiple of controller.action_hold (" +
             std::to_string(c.policy.hold) + ")");
  }
  const ModelDef& def = model_of(c);
  const std::string timed = def.step_reads_time ? def.step_reads_time(c) : "";
  if (!timed.empty()) refuse("restarts the step index at 0 in every window: " + timed);
}

void parse_optimizer(const JsonObject& o, ExperimentConfig& c) {
  OptimizerConfig& op = c.optimizer;
  op.method = o.choice("method", "none", {"none", "gd", "adam", "lbfgsb", "cmaes", "ga"});
  op.learning_rate =
      o.number("learning_rate", op.method == "gd" ? 0.01 : 1e-3, Range{0, 1e9, true, false});
  op.iterations = int(o.integer("iterations", op.method == "none" ? 0 : 100, 0, 10000000));
  op.beta1 = o.number("beta1", 0.9, Range{0, 1, false, true});
  op.beta2 = o.number("beta2", 0.999, Range{0, 1, false, true});
  op.adam_eps = o.number("epsilon", 1e-8, Range{0, 1, true, false});
  parse_lr_schedule(o, op.learning_rate, op.lr_schedule, op.learning_rate_final);
  if (op.lr_schedule != "constant" && op.method != "gd" && op.method != "adam")
    config_fail(o.key_path("learning_rate_schedule"),
                "applies to methods gd and adam; method is " + op.method);
  op.gradient_clip = o.number("gradient_clip", 0, Range{0, 1e300, false, false});
  op.normalize_gradient = o.boolean("normalize_gradient", false);
  if (op.normalize_gradient && op.method != "gd")
    config_fail(o.key_path("normalize_gradient"), "applies to method gd; method is " + op.method);
  op.log_every = int(o.integer("log_every", 1, 1, 1000000));
  // CMA-ES: σ0 and λ in the variables' own units; the batch must be one rollout (the
  // population is built from it)
  op.normalized = o.boolean("normalized", false);
  op.cmaes_sigma0 = o.number("sigma0", op.cmaes_sigma0, Range{0, 1e12, true, false});
  op.cmaes_population = int(o.integer("population", 0, 0, 100000));
  op.cmaes_max_rollouts = o.integer("max_rollouts", 0, 0, 1000000000L);
  op.seed = std::uint64_t(o.integer("seed", 1, 0, (1L << 62)));
  if (op.method == "none" && o.has("iterations") && op.iterations > 0)
    config_fail(o.key_path("iterations"),
                "method none runs no iterations; set method to gd or adam, or drop iterations");
  if (o.has("window")) parse_window(o.object("window"), c);
  o.finish();
  if (op.normalized)
    for (const auto& v : c.variables)
      if (!(v.lower > -1e299 && v.upper < 1e299) || !(v.upper > v.lower))
        config_fail(o.key_path("normalized"),
                    "needs finite lower < upper for every variable; " + v.name + " has none");
  // with every variable shared by the whole batch, a candidate is one design evaluated on every
  // world (the population is λ copies of the batch)
  bool all_shared = !c.variables.empty() && c.share_groups == 1;
  for (const auto& v : c.variables) all_shared = all_shared && v.shared;
  const bool population = op.method == "cmaes" || op.method == "ga";
  if (population && c.batch_size != 1 && !all_shared)
    config_fail("batch.size",
                "optimizer " + op.method +
                    " builds its population from one rollout; set batch.size to 1, or share every "
                    "variable by the whole batch (variables.<name>.shared, batch.groups 1)");
  if (op.method == "ga" && op.cmaes_population > 0 && op.cmaes_population < 3)
    config_fail(o.key_path("population"), "the GA keeps 2 elites: 0 (its default) or at least 3");
  if (op.method == "ga")
    for (const auto& v : c.variables)
      if (!(v.lower > -1e299 && v.upper < 1e299) || !(v.upper > v.lower))
        config_fail("variables." + v.name,
                    "optimizer ga breeds within the variables' bounds: give finite lower < upper");
  if (op.method != "none" && c.variables.empty())
    config_fail(o.key_path("method"),
                "optimizer '" + op.method + "' needs at least one entry in variables");
}

void parse_validation(const JsonObject& v, ExperimentConfig& c) {
  ValidationConfig& vc = c.validation;
  vc.enabled = v.boolean("enabled", true);
  if (v.has("at")) {
    const auto& a = v.raw("at");
    if (!a.is_array())
      config_fail(v.key_path("at"),
                  "expected an array of \"initial\" / \"final\", got " + json_type_name(a));
    vc.at.clear();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string() || (a[i] != "initial" && a[i] != "final"))
        config_fail(v.key_path("at") + "[" + std::to_string(i) + "]",
                    "expected \"initial\" or \"final\"");
      vc.at.push_back(a[i].get<std::string>());
    }
  }
  vc.epsilon = v.number("epsilon", vc.epsilon, Range{0, 1, true, false});
  vc.epsilon_sweep = v.numbers("epsilon_sweep", vc.epsilon_sweep, Range{0, 1, true, false});
  vc.tolerance = v.number("tolerance", vc.tolerance, Range{0, 1, true, false});
  vc.abs_tolerance = v.number("abs_tolerance", vc.abs_tolerance, Range::nonnegative());
  vc.seed = std::uint64_t(v.integer("seed", long(vc.seed), 0, (1L << 62)));
  vc.energy_drift_bound = v.number("energy_drift_bound", vc.energy_drift_bound, Range::positive());
  vc.horizon_ratio_bound =
      v.number("horizon_ratio_bound", vc.horizon_ratio_bound, Range{1, 1e300, true, false});
  vc.horizon_measure = v.choice("horizon_measure", vc.horizon_measure, {"state", "controls"});
  if (vc.horizon_measure == "controls" && c.info.nu() == 0)
    config_fail(v.key_path("horizon_measure"),
                "\"controls\" needs a model with controls; use \"state\"");
  vc.penetration_bound = v.number("penetration_bound", 0.0, Range::closed(0, 1e3));
  if (vc.penetration_bound > 0 && !model_of(c).penetration_label)
    config_fail(v.key_path("penetration_bound"),
                "the penetration label is measured for model " + model_names([](const ModelDef& d) {
                  return d.penetration_label;
                }) + " only; remove it or set 0");
  if (v.has("inversion_check") && v.boolean("inversion_check", true) &&
      !model_of(c).inversion_label)
    config_fail(v.key_path("inversion_check"),
                "the inverted_element label is measured for model " +
                    model_names([](const ModelDef& d) { return d.inversion_label; }) +
                    " only; remove it");
  vc.inversion_check = v.boolean("inversion_check", true) && model_of(c).inversion_label;
  vc.max_rollouts = int(v.integer("max_rollouts", vc.max_rollouts, 1, 1 << 24));
  vc.listed_rollouts = int(v.integer("listed_rollouts", vc.listed_rollouts, 0, 1 << 24));
  vc.float32_tolerance = v.number("float32_tolerance", vc.float32_tolerance, Range::positive());
  vc.timestep_check = v.boolean("timestep_check", vc.timestep_check);
  vc.timestep_tolerance = v.number("timestep_tolerance", vc.timestep_tolerance, Range::positive());
  vc.chatter_fraction = v.number("chatter_fraction", vc.chatter_fraction, Range::closed(0, 1));
  vc.secant_check = v.boolean("secant_check", vc.secant_check);
  vc.secant_epsilon = v.number("secant_epsilon", vc.secant_epsilon, Range{0, 1, true, false});
  vc.secant_tolerance = v.number("secant_tolerance", vc.secant_tolerance, Range::positive());
  v.finish();
  if (vc.enabled && c.variables.empty())
    config_fail(
        v.key_path("enabled"),
        "gradient validation needs at least one entry in variables (or set enabled to false)");
}

void parse_output(const JsonObject& o, ExperimentConfig& c) {
  c.output.dir = o.string("dir", c.output.dir);
  if (c.output.dir.empty()) config_fail(o.key_path("dir"), "must not be empty");
  c.output.trajectory_stride = int(o.integer("trajectory_stride", 1, 1, c.steps));
  c.output.trajectory_rollouts = int(o.integer("trajectory_rollouts", 8, 0, 1 << 20));
  c.output.json_trajectory_points = int(o.integer("json_trajectory_points", 200, 2, 1000000));
  o.finish();
}

}  // namespace

int ModelInfo::state_index(const std::string& n) const { return index_of(state_names, n); }
int ModelInfo::control_index(const std::string& n) const { return index_of(control_names, n); }
int ModelInfo::param_index(const std::string& n) const { return index_of(param_names, n); }
void ModelInfo::resize_params(int np) {
  param_names.resize(np);
  param_units.resize(np);
  param_ranges.resize(np);
}
void ModelInfo::set_param(int q, const std::string& name, const std::string& unit, Range r,
                          const std::string& group) {
  param_names[q] = name;
  param_units[q] = unit;
  param_ranges[q] = r;
  if (!group.empty()) param_groups[group].push_back(q);
}

// The chatter label's suggestion: a period-2 oscillation (a stiff spring or contact at
// ω·dt ≈ 2) needs a smaller step, or what the model's hook adds (a softer law, an implicit servo).
static std::string chatter_remedy(const ExperimentConfig& c) {
  const std::string smaller_dt =
      "a smaller simulation.dt (the step resolves ω only while ω·dt < 2)";
  const ModelDef& def = model_of(c);
  return def.chatter_remedy ? def.chatter_remedy(c, smaller_dt) : smaller_dt;
}

namespace {

// name and description; the name's length is checked first, so that a name of megabytes is
// refused without being scanned or quoted
void parse_name(const JsonObject& root, ExperimentConfig& c) {
  if (root.has("name") && root.raw("name").is_string() &&
      root.raw("name").get_ref<const std::string&>().size() > kMaxNameLength)
    config_fail("name", std::to_string(root.raw("name").get_ref<const std::string&>().size()) +
                            " characters, more than the limit of " +
                            std::to_string(kMaxNameLength) +
                            " (it names the run folder, whose name with its time stamp, "
                            "collision suffix and temporary prefix must stay under the file-name "
                            "limit of 255 bytes)");
  c.name = root.string("name", "experiment");
  for (char ch : c.name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
      config_fail(
          "name",
          "'" + excerpt(c.name) +
              "' may hold only letters, digits, '_', '-' and '.' (it names the run folder)");
  if (c.name.empty()) config_fail("name", "must not be empty");
  c.description = root.string("description", "");
}

// model.type among the registered models, then the model's own section (its parse_model hook)
void parse_model(const JsonObject& root, const nlohmann::json& j, ExperimentConfig& c) {
  if (!root.has("model"))
    config_fail("model",
                "missing; expected an object with a type (accepted: " + model_names() + ")");
  JsonObject m = root.object("model");
  std::vector<std::string> names;
  for (const ModelDef* d : registered_models()) names.push_back(d->name);
  c.model_type = m.choice("type", "", names);
  if (c.model_type.empty()) config_fail("model.type", "missing; accepted: " + model_names());
  model_of(c).parse_model(m, c);
  // model.include leaves model.included_from (expand_includes); a model that does not read it
  // takes no include file, and the user is told about the key they wrote
  if (j.at("model").is_object() && j.at("model").contains("included_from") &&
      !m.was_read("included_from"))
    config_fail("model.include",
                "model " + c.model_type + " takes no include file; remove model.include");
  m.finish();
}

// initial_state (the model's hook) and controls (controls.initial_file, controls.initial)
void parse_start(const JsonObject& root, ExperimentConfig& c) {
  {
    JsonObject st = root.object("initial_state");
    model_of(c).parse_initial_state(st, c);
    st.finish();
  }
  JsonObject ctl = root.object("controls");
  parse_control_file(ctl, c);
  c.u_init = ctl.numbers("initial", std::vector<double>(c.info.nu(), 0.0),
                         Range::closed(-1e12, 1e12), c.info.nu());
  if (c.u_rows > 0)  // the first row, where a single value per control is asked for
    c.u_init.assign(c.u_steps.begin(), c.u_steps.begin() + c.info.nu());
  ctl.finish();
}

// compare.continuation: phases on an easier problem before the real one (horizon, ground
// smoothing)
void parse_continuation(const JsonObject& cp, ExperimentConfig& c) {
  CompareConfig& k = c.compare;
  const auto& arr = cp.raw("continuation");
  const std::string path = cp.key_path("continuation");
  if (!arr.is_array())
    config_fail(path,
                "expected an array of {steps, ground_smoothing, iterations, evaluate_every}, got " +
                    json_type_name(arr));
  if (!arr.empty() && k.gradient_method == "lbfgsb")
    config_fail(path, "continuation phases run adam or gd; set gradient_method to one of them");
  const int smooth_slot = c.info.param_index("ground.smoothing");
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonObject ph(arr[i], path + "[" + std::to_string(i) + "]");
    ContinuationPhase f;
    f.steps = int(ph.integer("steps", 0, 0, c.steps));
    // a shorter horizon would have fewer control entries than the real problem's variables
    if (f.steps > 0 && f.steps < c.steps)
      for (const auto& v : c.variables)
        if (v.kind == VariableSpec::kControl)
          config_fail(ph.key_path("steps"),
                      "a shorter horizon cannot carry the control variable '" + v.name +
                          "' (one entry per step or knot of all " + std::to_string(c.steps) +
                          " steps); use 0 (the full horizon) with controls");
    if (ph.has("ground_smoothing") && smooth_slot < 0)
      config_fail(ph.key_path("ground_smoothing"),
                  "model " + c.info.type + " has no ground.smoothing");
    f.ground_smoothing =
        ph.number("ground_smoothing", 0,
                  smooth_slot < 0 ? Range::nonnegative() : c.info.param_ranges[smooth_slot]);
    f.iterations = int(ph.integer("iterations", f.iterations, 1, 10000000));
    f.evaluate_every = int(ph.integer("evaluate_every", f.evaluate_every, 1, 10000000));
    ph.finish();
    k.continuation.push_back(f);
  }
}

// `steer compare`'s section: the gradient side, its continuation, the CMA-ES side, repeats
void parse_compare(const JsonObject& cp, ExperimentConfig& c) {
  CompareConfig& k = c.compare;
  c.has_compare = true;
  k.gradient_method = cp.choice("gradient_method", k.gradient_method, {"adam", "gd", "lbfgsb"});
  k.learning_rate = cp.number("learning_rate", k.learning_rate, Range{0, 1e3, true, false});
  k.iterations = int(cp.integer("iterations", k.iterations, 1, 10000000));
  k.beta1 = cp.number("beta1", k.beta1, Range{0, 1, false, true});
  k.beta2 = cp.number("beta2", k.beta2, Range{0, 1, false, true});
  parse_lr_schedule(cp, k.learning_rate, k.lr_schedule, k.learning_rate_final);
  if (k.lr_schedule != "constant" && k.gradient_method == "lbfgsb")
    config_fail(cp.key_path("learning_rate_schedule"),
                "applies to adam and gd; L-BFGS-B chooses its steps by line search");
  k.gradient_clip = cp.number("gradient_clip", k.gradient_clip, Range{0, 1e300, false, false});
  if (k.gradient_clip > 0 && k.gradient_method == "lbfgsb")
    config_fail(cp.key_path("gradient_clip"),
                "applies to adam and gd; L-BFGS-B needs the true gradient for its line search");
  k.starts = int(cp.integer("starts", k.starts, 1, 100000));
  k.start_spread = cp.number("start_spread", k.start_spread, Range{0, 1, true, false});
  if (cp.has("continuation")) parse_continuation(cp, c);
  k.cmaes_rollouts = cp.integer("cmaes_rollouts", k.cmaes_rollouts, 1, 1000000000L);
  k.cmaes_sigma0 = cp.number("cmaes_sigma0", k.cmaes_sigma0, Range{0, 1, true, false});
  k.cmaes_population = int(cp.integer("cmaes_population", 0, 0, 100000));
  k.ga_rollouts = cp.integer("ga_rollouts", 0, 0, 1000000000L);
  k.ga_sigma0 = cp.number("ga_sigma0", k.ga_sigma0, Range{0, 1, true, false});
  k.ga_population = int(cp.integer("ga_population", 0, 0, 100000));
  if (k.ga_population > 0 && k.ga_population < 3)
    config_fail(cp.key_path("ga_population"),
                "0 (the default, 4 (4 + floor(3 ln n))) or at least 3: the GA keeps 2 elites");
  if ((cp.has("ga_sigma0") || cp.has("ga_population")) && k.ga_rollouts == 0)
    config_fail(cp.key_path("ga_rollouts"),
                "missing: the GA side runs with a budget ga_rollouts >= 1");
  k.seed = std::uint64_t(cp.integer("seed", 1, 0, (1L << 62)));
  k.repeats = int(cp.integer("repeats", k.repeats, 1, 1000));
  cp.finish();
  if (c.variables.empty()) config_fail("compare", "needs at least one entry in variables");
  // compare races one rollout's gradient starts against CMA-ES on that rollout; a shared
  // variable's design serves a batch of worlds, which compare does not race yet
  for (const auto& v : c.variables)
    if (v.shared)
      config_fail("compare", "does not run shared variables (" + v.name +
                                 " is shared); run them with steer run");
  for (const auto& v : c.variables)
    if (!(v.lower > -1e299 && v.upper < 1e299) || !(v.upper > v.lower))
      config_fail("variables." + v.name,
                  "compare normalizes variables by their bounds: give finite lower < upper");
}

void parse_perturb(const JsonObject& pt, ExperimentConfig& c) {
  PerturbConfig& k = c.perturb;
  k.enabled = true;
  k.name = pt.string("parameter", "");
  bool is_state = false;
  if (k.name.rfind("theta.", 0) != 0)
    config_fail(pt.key_path("parameter"),
                "expected a parameter theta.<name or group>, got '" + excerpt(k.name) + "'");
  k.indices = resolve_slots(c.info, pt.key_path("parameter"), k.name, is_state);
  k.relative = pt.numbers("relative", k.relative, Range{-1, 10, true, false});
  k.factor = pt.number("factor", k.factor, Range{1, 1e300, false, false});
  k.absolute = pt.number("absolute", k.absolute, Range::nonnegative());
  pt.finish();
  for (const auto& v : c.variables)
    if (v.kind == VariableSpec::kParameter &&
        std::find(k.indices.begin(), k.indices.end(), v.index) != k.indices.end())
      config_fail("perturb.parameter",
                  "'" + v.name + "' is a variable: perturb a parameter the optimizer does not set");
  for (double r : k.relative)
    for (int i : k.indices)
      if (!c.info.param_ranges[i].contains(c.theta[i] * (1 + r)))
        config_fail("perturb.relative", "scaling " + c.info.param_names[i] + " by " +
                                            std::to_string(1 + r) + " leaves its range " +
                                            c.info.param_ranges[i].describe());
}

void parse_horizon_sweep(const JsonObject& hs, ExperimentConfig& c) {
  c.horizon_sweep.enabled = true;
  for (double v : hs.numbers("steps", {}, Range::closed(1, 1e7))) {
    if (v != std::floor(v))
      config_fail(hs.key_path("steps"), "expected whole step counts in [1, 1e7]");
    c.horizon_sweep.steps.push_back(int(v));
  }
  if (c.horizon_sweep.steps.empty())
    config_fail(hs.key_path("steps"), "expected a non-empty list of step counts");
  hs.finish();
}

// the sections in the order they depend on each other: the model first (everything else
// refers to its slots), the simulation (the model's timestep), the loss and variables before
// the optimizer and validation that need them
// batch.groups and batch.weights describe the worlds of shared variables: without one they
// would change nothing, so they are refused rather than ignored
void check_shared(const ExperimentConfig& c) {
  if (c.has_shared()) return;
  if (c.share_groups != 1)
    config_fail("batch.groups",
                "applies to shared variables (variables.<name>.shared: true); no "
                "variable is shared");
  if (!c.world_weights.empty())
    config_fail("batch.weights",
                "applies to shared variables (variables.<name>.shared: true); no "
                "variable is shared");
}

ExperimentConfig parse_config_unguarded(const nlohmann::json& j, const std::string& base_dir) {
  ExperimentConfig c;
  c.base_dir = base_dir;
  JsonObject root(j, "");
  c.raw = j;
  parse_name(root, c);
  parse_model(root, j, c);
  if (!root.has("simulation"))
    config_fail("simulation", "missing; expected an object with dt and steps");
  parse_simulation(root.object("simulation"), c);
  model_of(c).set_dt(c, c.dt);
  parse_start(root, c);
  if (root.has("controller")) parse_controller(root.object("controller"), c);
  parse_batch(root.object("batch"), c);
  if (!root.has("loss"))
    config_fail("loss", "missing; expected an object with terminal, control_effort or landing");
  parse_loss(root.object("loss"), c);
  if (root.has("variables")) parse_variables(root.object("variables"), root.raw("variables"), c);
  check_controller_variables(c);
  parse_optimizer(root.object("optimizer"), c);
  check_shared(c);
  parse_validation(root.object("validation"), c);
  parse_output(root.object("output"), c);
  if (root.has("compare")) parse_compare(root.object("compare"), c);
  if (root.has("perturb")) parse_perturb(root.object("perturb"), c);
  if (root.has("horizon_sweep")) parse_horizon_sweep(root.object("horizon_sweep"), c);
  c.success_tolerance = root.number("success_tolerance", 0.0, Range::nonnegative());
  if (c.success_tolerance > 0 && c.n_terminal_quadratic == 0)
    config_fail("success_tolerance",
                "success is judged on the loss's terminal terms; give loss.terminal or remove it");
  root.finish();
  bind_track_table(c);
  check_memory(c);
  c.validation.chatter_remedy = chatter_remedy(c);
  return c;
}

}  // namespace

ExperimentConfig parse_config(const nlohmann::json& j) { return parse_config(j, ""); }

ExperimentConfig parse_config(const nlohmann::json& j, const std::string& base_dir) {
  try {
    return parse_config_unguarded(j, base_dir);
  } catch (const nlohmann::json::exception& e) {
    // a value read past the checks above (a model parser's direct access): still a config
    // error, exit 2, though without the key path the checked reads give
    throw ConfigError("config: " + excerpt(e.what(), 300));
  }
}

}  // namespace steer
