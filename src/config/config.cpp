#include "config/config.h"

#include "config/json_text.h"
#include "config/loss_data.h"
#include "models/registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include <unistd.h>

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
    case BatchOverride::kUniform: lo = o.lo, hi = o.hi; break;
    case BatchOverride::kRelative: lo = std::min(v * (1 + o.lo), v * (1 + o.hi)), hi = std::max(v * (1 + o.lo), v * (1 + o.hi)); break;
    case BatchOverride::kJitter: lo = v + o.lo, hi = v + o.hi; break;
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
      o.values = sw.numbers(it.key(), {}, common_range(c.info, o.is_state, o.indices), c.batch_size);
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
        std::vector<double> lh = rz.numbers(it.key(), {}, common_range(c.info, o.is_state, o.indices), 2);
        if (lh[0] > lh[1]) config_fail(path, "expected [low, high] with low <= high");
        o.draw = BatchOverride::kUniform, o.lo = lh[0], o.hi = lh[1];
      }
      // relative and additive draws must keep every slot inside its physical range
      for (int i : o.indices) {
        double lo = 0, hi = 0;
        override_span(o, o.is_state ? c.x0[i] : c.theta[i], lo, hi);
        const Range r = slot_range(c.info, o.is_state, i);
        if (!r.contains(lo) || !r.contains(hi))
          config_fail(path, "draws span [" + std::to_string(lo) + ", " + std::to_string(hi) + "] for slot " +
                                (o.is_state ? c.info.state_names[i] : c.info.param_names[i]) + ", outside its range " +
                                r.describe());
      }
      c.overrides.push_back(o);
    }
    rz.finish();
  }
  b.finish();
}

void parse_loss(const JsonObject& l, ExperimentConfig& c) {
  Loss& loss = c.loss;
  loss = Loss{};
  c.loss_json = nlohmann::json::object();
  if (l.has("terminal")) {
    const auto& arr = l.raw("terminal");
    const std::string path = l.key_path("terminal");
    if (!arr.is_array()) config_fail(path, "expected an array of {state, target, weight}, got " + json_type_name(arr));
    if (arr.size() > size_t(Loss::kMaxTerms))
      config_fail(path, "at most " + std::to_string(Loss::kMaxTerms) + " terminal terms, got " + std::to_string(arr.size()));
    nlohmann::json terms = nlohmann::json::array();
    for (size_t t = 0; t < arr.size(); ++t) {
      JsonObject term(arr[t], path + "[" + std::to_string(t) + "]");
      const std::string st = term.string("state", "");
      const int idx = c.info.state_index(st);
      if (idx < 0) config_fail(term.key_path("state"), "'" + excerpt(st) + "' is not a state of model " + c.info.type + "; accepted: " + join(c.info.state_names));
      loss.terminal_index[t] = idx;
      // the target is a number, or a parameter slot ("theta.<name>") so that each rollout
      // can have its own (drawn) target and the target can itself be a variable
      if (term.has("target") && term.raw("target").is_string()) {
        const std::string tn = term.raw("target").get<std::string>();
        const int pi = tn.rfind("theta.", 0) == 0 ? c.info.param_index(tn.substr(6)) : -1;
        if (pi < 0) config_fail(term.key_path("target"), "'" + excerpt(tn) + "' is not a number or a parameter theta.<name> of model " + c.info.type);
        loss.terminal_param[t] = pi;
      } else {
        loss.terminal_target[t] = term.number_required("target", Range::closed(-1e12, 1e12));
      }
      loss.terminal_weight[t] = term.number("weight", 1.0, Range::nonnegative());
      term.finish();
      nlohmann::json tgt = loss.terminal_param[t] >= 0 ? nlohmann::json("theta." + c.info.param_names[loss.terminal_param[t]])
                                                       : nlohmann::json(loss.terminal_target[t]);
      terms.push_back({{"state", st}, {"target", tgt}, {"weight", loss.terminal_weight[t]},
                       {"unit", c.info.state_units[idx]}, {"term", "0.5 * weight * (x_T[state] - target)^2"}});
    }
    loss.n_terminal = int(arr.size());
    c.loss_json["terminal"] = terms;
  }
  loss.effort_weight = l.number("control_effort", 0.0, Range::nonnegative());
  c.loss_json["control_effort"] = {{"weight", loss.effort_weight}, {"term", "sum_k 0.5 * weight * |u_k|^2"}};
  if (l.has("landing")) {
    JsonObject ld = l.object("landing");
    const ModelDef& def = model_of(c);
    if (!def.landing_dims)
      config_fail(ld.path(), "the landing loss is defined for model " + model_names([](const ModelDef& d) { return d.landing_dims != nullptr; }) + " only");
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
    c.loss_json["landing"] = {{"target", tgt}, {"weight", loss.landing_weight}, {"unit", "m"},
                              {"term", "0.5 * weight * |x_land - target|^2, x_land interpolated at y = 0 inside the crossing step"}};
  }
  if (l.has("com_displacement")) {
    JsonObject cd = l.object("com_displacement");
    const std::string axis = cd.choice("axis", "x", {"x", "y", "z"});
    loss.com = true;
    loss.com_axis = axis == "x" ? 0 : axis == "y" ? 1 : 2;
    const ModelDef& def = model_of(c);
    const std::string axis_error = def.com_axis_error ? def.com_axis_error(c, axis, loss.com_axis) : std::string();
    if (!axis_error.empty()) config_fail(cd.key_path("axis"), axis_error);
    loss.com_weight = cd.number("weight", -1.0, Range::closed(-1e12, 1e12));
    cd.finish();
    c.loss_json["com_displacement"] = {{"axis", axis}, {"weight", loss.com_weight}, {"unit", "m"},
                                       {"term", "weight * (c(x_T) - c(x_0)), c = sum m_i x_i / sum m_i along axis"}};
  }
  const nlohmann::json sites = parse_site_terms(l, c);
  if (!sites.is_null()) c.loss_json["sites"] = sites;
  const nlohmann::json track = parse_track_sources(l, c);
  if (!track.is_null())
    for (auto it = track.begin(); it != track.end(); ++it) c.loss_json[it.key()] = it.value();
  if (loss.n_terminal == 0 && loss.effort_weight == 0.0 && !loss.landing && !loss.com && loss.n_site == 0 && c.tracking.empty())
    config_fail(l.path(), "the loss has no terms; give terminal, control_effort, landing, com_displacement, sites, reference or observations");
  l.finish();
}

}  // namespace

// "x0.<state or group>" / "theta.<param or group>" -> slots, or a ConfigError at path
std::vector<int> resolve_slots(const ModelInfo& info, const std::string& path, const std::string& name,
                               bool& is_state) {
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
      all.push_back("or one slot such as x0." + info.state_names[0] + " / theta." + info.param_names[0]);
    }
    config_fail(path, "'" + excerpt(name) + "' is not a slot or group of model " + info.type + "; accepted: " + join(all));
  }
  return out;
}

namespace {

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
          config_fail(path, "'" + excerpt(name) + "' is not a control of model " + c.info.type + "; accepted: " + join(all));
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
      config_fail(path + ".lower", "required: this parameter must stay > " + std::to_string(phys.lo) + ", give a lower bound inside " + phys.describe());
    const double lo = spec.number("lower", phys.lo, phys);
    const double hi = spec.number("upper", phys.hi, phys);
    if (lo > hi) config_fail(path, "lower (" + std::to_string(lo) + ") must be <= upper (" + std::to_string(hi) + ")");
    if (spec.has("hold") && var.kind != VariableSpec::kControl)
      config_fail(path + ".hold", "applies to controls (steps per piecewise-constant knot); '" + excerpt(name) + "' is one value");
    const int hold = int(spec.integer("hold", 1, 1, c.steps));
    spec.finish();
    for (auto& e : expanded) {
      e.lower = lo;
      e.upper = hi;
      e.hold = hold;
      // the nominal starting value must lie inside the bounds
      double nominal = e.kind == VariableSpec::kInitialState ? c.x0[e.index]
                       : e.kind == VariableSpec::kParameter  ? c.theta[e.index]
                                                             : c.u_init[e.index];
      if (nominal < lo || nominal > hi)
        config_fail(path, "the starting value " + std::to_string(nominal) + " lies outside the bounds [" +
                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
      // every row of controls.initial_file starts a knot or a step
      if (e.kind == VariableSpec::kControl)
        for (int r = 0; r < c.u_rows; ++r) {
          const double v = c.u_steps[size_t(r) * c.info.nu() + e.index];
          if (v < lo || v > hi)
            config_fail(path, "controls.initial_file row " + std::to_string(r) + " gives " + number_text(v) + ", outside the bounds [" +
                                  number_text(lo) + ", " + number_text(hi) + "]");
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
      if (e.kind == VariableSpec::kControl || o.is_state != (e.kind == VariableSpec::kInitialState)) continue;
      if (std::find(o.indices.begin(), o.indices.end(), e.index) == o.indices.end()) continue;
      const std::string key = std::string("batch.") + (o.draw == BatchOverride::kSweep ? "sweep." : "randomize.") + o.name;
      double lo = 0, hi = 0;
      override_span(o, o.is_state ? c.x0[e.index] : c.theta[e.index], lo, hi);
      if (lo < e.lower || hi > e.upper)
        config_fail(key, "start values span [" + std::to_string(lo) + ", " + std::to_string(hi) +
                             "], outside the bounds of variable " + e.name + " [" + std::to_string(e.lower) + ", " +
                             std::to_string(e.upper) + "]");
    }
  }
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
      config_fail(s.key_path("checkpoint_every"), "'" + excerpt(v.get<std::string>()) + "' is not accepted; expected \"sqrt\" or an integer in [1, " + std::to_string(c.steps) + "]");
    else
      c.checkpoint_every = int(s.integer("checkpoint_every", 0, 1, c.steps));
  }
  c.checkpoint_memory_mb = s.number("checkpoint_memory_mb", 0.0, Range{0, 1e6, true, false});  // absent: 0, no budget
  c.store_forward_mb = s.number("store_forward_mb", 256.0, Range::closed(0, 1e6));
  c.backend = s.choice("backend", "auto", {"auto", "cpu", "cuda"});
  c.threads = int(s.integer("threads", 0, 0, 4096));
  c.memory_limit_gb = s.number("memory_limit_gb", 0.0, Range::closed(0, 1e6));
  s.finish();
  c.checkpoint_plan();  // a budget too small for any schedule is refused here
}

// learning_rate_schedule / learning_rate_final of an optimizer or compare section: the step
// size decays from learning_rate to learning_rate_final over the run's iterations
void parse_lr_schedule(const JsonObject& o, double learning_rate, std::string& schedule, double& final_rate) {
  schedule = o.choice("learning_rate_schedule", "constant", {"constant", "cosine", "exponential"});
  if (schedule == "constant") {
    if (o.has("learning_rate_final"))
      config_fail(o.key_path("learning_rate_final"), "applies to learning_rate_schedule cosine or exponential; the schedule is constant");
    final_rate = learning_rate;
    return;
  }
  if (!o.has("learning_rate_final"))
    config_fail(o.key_path("learning_rate_final"), "missing; learning_rate_schedule " + schedule + " decays to it (a number in [0, learning_rate])");
  final_rate = o.number("learning_rate_final", 0, schedule == "exponential" ? Range{0, learning_rate, true, false} : Range::closed(0, learning_rate));
}

void parse_optimizer(const JsonObject& o, ExperimentConfig& c) {
  OptimizerConfig& op = c.optimizer;
  op.method = o.choice("method", "none", {"none", "gd", "adam", "lbfgsb", "cmaes"});
  op.learning_rate = o.number("learning_rate", op.method == "gd" ? 0.01 : 1e-3, Range{0, 1e9, true, false});
  op.iterations = int(o.integer("iterations", op.method == "none" ? 0 : 100, 0, 10000000));
  op.beta1 = o.number("beta1", 0.9, Range{0, 1, false, true});
  op.beta2 = o.number("beta2", 0.999, Range{0, 1, false, true});
  op.adam_eps = o.number("epsilon", 1e-8, Range{0, 1, true, false});
  parse_lr_schedule(o, op.learning_rate, op.lr_schedule, op.learning_rate_final);
  if (op.lr_schedule != "constant" && op.method != "gd" && op.method != "adam")
    config_fail(o.key_path("learning_rate_schedule"), "applies to methods gd and adam; method is " + op.method);
  op.gradient_clip = o.number("gradient_clip", 0, Range{0, 1e300, false, false});
  op.log_every = int(o.integer("log_every", 1, 1, 1000000));
  // CMA-ES: σ0 and λ in the variables' own units; the batch must be one rollout (the
  // population is built from it)
  op.normalized = o.boolean("normalized", false);
  op.cmaes_sigma0 = o.number("sigma0", op.cmaes_sigma0, Range{0, 1e12, true, false});
  op.cmaes_population = int(o.integer("population", 0, 0, 100000));
  op.cmaes_max_rollouts = o.integer("max_rollouts", 0, 0, 1000000000L);
  op.seed = std::uint64_t(o.integer("seed", 1, 0, (1L << 62)));
  if (op.method == "none" && o.has("iterations") && op.iterations > 0)
    config_fail(o.key_path("iterations"), "method none runs no iterations; set method to gd or adam, or drop iterations");
  o.finish();
  if (op.normalized)
    for (const auto& v : c.variables)
      if (!(v.lower > -1e299 && v.upper < 1e299) || !(v.upper > v.lower))
        config_fail(o.key_path("normalized"), "needs finite lower < upper for every variable; " + v.name + " has none");
  if (op.method == "cmaes" && c.batch_size != 1)
    config_fail("batch.size", "optimizer cmaes builds its population from one rollout; set batch.size to 1");
  if (op.method != "none" && c.variables.empty())
    config_fail(o.key_path("method"), "optimizer '" + op.method + "' needs at least one entry in variables");
}

void parse_validation(const JsonObject& v, ExperimentConfig& c) {
  ValidationConfig& vc = c.validation;
  vc.enabled = v.boolean("enabled", true);
  if (v.has("at")) {
    const auto& a = v.raw("at");
    if (!a.is_array()) config_fail(v.key_path("at"), "expected an array of \"initial\" / \"final\", got " + json_type_name(a));
    vc.at.clear();
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string() || (a[i] != "initial" && a[i] != "final"))
        config_fail(v.key_path("at") + "[" + std::to_string(i) + "]", "expected \"initial\" or \"final\"");
      vc.at.push_back(a[i].get<std::string>());
    }
  }
  vc.epsilon = v.number("epsilon", vc.epsilon, Range{0, 1, true, false});
  vc.epsilon_sweep = v.numbers("epsilon_sweep", vc.epsilon_sweep, Range{0, 1, true, false});
  vc.tolerance = v.number("tolerance", vc.tolerance, Range{0, 1, true, false});
  vc.abs_tolerance = v.number("abs_tolerance", vc.abs_tolerance, Range::nonnegative());
  vc.seed = std::uint64_t(v.integer("seed", long(vc.seed), 0, (1L << 62)));
  vc.energy_drift_bound = v.number("energy_drift_bound", vc.energy_drift_bound, Range::positive());
  vc.horizon_ratio_bound = v.number("horizon_ratio_bound", vc.horizon_ratio_bound, Range{1, 1e300, true, false});
  vc.horizon_measure = v.choice("horizon_measure", vc.horizon_measure, {"state", "controls"});
  if (vc.horizon_measure == "controls" && c.info.nu() == 0)
    config_fail(v.key_path("horizon_measure"), "\"controls\" needs a model with controls; use \"state\"");
  vc.penetration_bound = v.number("penetration_bound", 0.0, Range::closed(0, 1e3));
  if (vc.penetration_bound > 0 && !model_of(c).penetration_label)
    config_fail(v.key_path("penetration_bound"), "the penetration label is measured for model " +
                                                     model_names([](const ModelDef& d) { return d.penetration_label; }) +
                                                     " only; remove it or set 0");
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
    config_fail(v.key_path("enabled"), "gradient validation needs at least one entry in variables (or set enabled to false)");
}

void parse_output(const JsonObject& o, ExperimentConfig& c) {
  c.output.dir = o.string("dir", c.output.dir);
  if (c.output.dir.empty()) config_fail(o.key_path("dir"), "must not be empty");
  c.output.trajectory_stride = int(o.integer("trajectory_stride", 1, 1, c.steps));
  c.output.trajectory_rollouts = int(o.integer("trajectory_rollouts", 8, 0, 1 << 20));
  c.output.json_trajectory_points = int(o.integer("json_trajectory_points", 200, 2, 1000000));
  o.finish();
}

// refuses a run whose host memory (estimate_memory) exceeds the limit, naming the key of the
// largest part
void check_memory(const ExperimentConfig& c) {
  const MemoryEstimate e = estimate_memory(c);
  double limit_gb = c.memory_limit_gb;
  if (limit_gb <= 0) {
    const double phys = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    limit_gb = phys > 0 ? 0.8 * phys / 1e9 : 1e9;
  }
  const double need_gb = e.total() / 1e9;
  if (!(need_gb > limit_gb)) return;
  auto gb = [](double bytes) {
    std::ostringstream s;
    s << std::setprecision(3) << bytes / 1e9 << " GB";
    return s.str();
  };
  struct Part {
    double bytes;
    std::string key, what, advice;
  };
  const Part parts[] = {
      {e.batch, "simulation.steps", "batch.size × simulation.steps " + gb(e.batch) +
                                        " (batches, gradients and the optimizer's and validator's copies, per-thread checkpoints)",
       "lower batch.size or simulation.steps"},
      {e.trajectory, "output.trajectory_rollouts", "trajectory recording " + gb(e.trajectory) +
                                                       " (output.trajectory_rollouts × simulation.steps / output.trajectory_stride "
                                                       "states, their CSV and JSON text)",
       "lower output.trajectory_rollouts or raise output.trajectory_stride"},
      {e.penetration, "validation.penetration_bound", "the penetration check " + gb(e.penetration) +
                                                          " (every state of validation.max_rollouts rollouts)",
       "lower validation.max_rollouts or set validation.penetration_bound to 0"}};
  const Part* top = &parts[0];
  std::string list;
  for (const Part& q : parts) {
    if (q.bytes > top->bytes) top = &q;
    if (q.bytes >= 0.01 * e.total()) list += (list.empty() ? "" : ", ") + q.what;
  }
  std::ostringstream m;
  m << (top == &parts[0] ? "batch.size × simulation.steps needs" : "the run needs") << " about " << gb(e.total())
    << " of host memory, more than the limit of " << std::setprecision(3) << limit_gb
    << " GB (simulation.memory_limit_gb, default 80% of physical memory): " << list << "; " << top->advice;
  config_fail(top->key, m.str());
}

}  // namespace

int cpu_default_threads();  // src/backend/backend.cpp: the CPU backend's default thread count

double MemoryEstimate::total() const { return batch + trajectory + penetration; }

// Host bytes by where they go (src/problem/model_problem.h, src/experiment/run_setup.cpp and
// run_report.cpp, src/validate/). One SimProblem of b rollouts over T steps in s-byte scalars
// holds its nominal and working batches and the backend's gradient arrays, 3 s b (nx + T nu +
// np), plus its start and gradient over the nv variable entries; it is built from a float64
// batch. The problems alive at once: the run's; its normalized and CMA-ES population copies;
// under validation the float64 twin of a float32 run and the half-step problem (2T steps), and
// their copies cut to validation.max_rollouts; one horizon-sweep or perturbation problem at a
// time. Each CPU thread keeps a SIMD pack's checkpoints and stored forward pass. The recorded
// trajectory is held as the backend's states, a float64 copy, its CSV text (stream and string,
// ~20 bytes a number and a row's step and time) and its JSON (a 16-byte node and ~24 bytes of
// text a number, in the tree and in the artifact's text).
MemoryEstimate estimate_memory(const ExperimentConfig& c) {
  MemoryEstimate e;
  const double B = c.batch_size, T = c.steps, nx = c.info.nx(), nu = c.info.nu(), np = c.info.np();
  const bool f32 = c.precision == "float32";
  const double sz = f32 ? 4 : 8;
  double nv = 0;
  for (const auto& v : c.variables) nv += v.length(c.steps);
  auto row = [&](double steps) { return nx + steps * nu + np; };
  auto problem = [&](double b, double steps, double s) { return b * (3 * s * row(steps) + 8 * row(steps) + 16 * nv + 4 * 8 * nx); };
  // the run's problem; the evaluations, the optimizer's moments, best and trial iterates
  e.batch = problem(B, T, sz) + 8 * B * (8 * nv + 16);
  if (c.optimizer.normalized) e.batch += problem(B, T, sz);
  if (c.optimizer.method == "cmaes") {
    const double lambda = c.optimizer.cmaes_population > 0 ? c.optimizer.cmaes_population
                                                            : 4 + std::floor(3 * std::log(std::max(nv, 1.0)));
    e.batch += problem(lambda, T, sz) + 8 * lambda * nv * 4;
  }
  // the tracking table (loss.reference / loss.observations): 2 doubles per step and channel in
  // the config, the run's problem and, under validation, the half-step problem (2T steps)
  double channels = 0;
  for (const auto& src : c.tracking) channels += double(src.channel.size());
  e.batch += 16 * channels * ((T + 1) * 2 + (2 * T + 1));
  const double n = std::min<double>(B, c.validation.max_rollouts);
  const double lanes = 64 / sz;  // rollouts in one SIMD pack (a 512-bit register of scalars)
  if (c.validation.enabled && !c.variables.empty()) {
    if (f32) e.batch += problem(B, T, 8);
    if (c.validation.timestep_check) e.batch += problem(B, 2 * T, 8);
    if (n < B) e.batch += problem(n, T, 8) * (f32 ? 2 : 1) + (c.validation.timestep_check ? problem(n, 2 * T, 8) : 0);
    // the chatter count keeps every state of ≤ 64 MiB of rollouts at a time
    if (c.validation.chatter_fraction > 0) e.batch += std::min(64.0 * 1048576.0, n * (T + 1) * nx * sz) + lanes * row(T) * sz;
    if (c.validation.penetration_bound > 0) e.penetration = n * (T + 1) * nx * (sz + 8) + n * row(T) * sz;
  }
  double one_at_a_time = 0;
  if (c.horizon_sweep.enabled)
    for (int h : c.horizon_sweep.steps) one_at_a_time = std::max(one_at_a_time, problem(B, h, sz) + (f32 ? problem(B, h, 8) : 0));
  if (c.perturb.enabled) one_at_a_time = std::max(one_at_a_time, problem(B, T, sz));
  e.batch += one_at_a_time;
  // per thread: a pack's checkpoint scratch and its stored forward pass (at least its states)
  const CheckpointPlan plan = c.checkpoint_plan();
  const double threads = c.threads > 0 ? c.threads : std::max(1, cpu_default_threads());
  const double workers = std::min(threads, std::ceil(B / lanes));
  e.batch += workers * (lanes * double(plan.scratch_bytes) +
                        std::min(double(plan.shape.store_forward_bytes), lanes * (T + 1) * nx * sz));
  // the recorded trajectories (output.trajectory_rollouts every output.trajectory_stride steps)
  const double ntraj = std::min<double>(B, c.output.trajectory_rollouts);
  const double slots = std::floor(T / c.output.trajectory_stride) + 1;
  const double json_slots = std::min<double>(slots, c.output.json_trajectory_points + 1);
  e.trajectory = ntraj * (slots * nx * (sz + 8) + row(T) * sz + 2 * slots * (20 + 20 * nx) + json_slots * nx * (16 + 2 * 24));
  // x_0 and x_T of every rollout (analyses) and of the listed ones (the report)
  e.batch += 2 * B * 2 * nx * (sz + 8);
  return e;
}

int ModelInfo::state_index(const std::string& n) const { return index_of(state_names, n); }
int ModelInfo::control_index(const std::string& n) const { return index_of(control_names, n); }
int ModelInfo::param_index(const std::string& n) const { return index_of(param_names, n); }
void ModelInfo::resize_params(int np) {
  param_names.resize(np);
  param_units.resize(np);
  param_ranges.resize(np);
}
void ModelInfo::set_param(int q, const std::string& name, const std::string& unit, Range r, const std::string& group) {
  param_names[q] = name;
  param_units[q] = unit;
  param_ranges[q] = r;
  if (!group.empty()) param_groups[group].push_back(q);
}

// The chatter label's suggestion: a period-2 oscillation (a stiff spring or contact at
// ω·dt ≈ 2) needs a smaller step, or what the model's hook adds (a softer law, an implicit servo).
static std::string chatter_remedy(const ExperimentConfig& c) {
  const std::string smaller_dt = "a smaller simulation.dt (the step resolves ω only while ω·dt < 2)";
  const ModelDef& def = model_of(c);
  return def.chatter_remedy ? def.chatter_remedy(c, smaller_dt) : smaller_dt;
}

std::string absolute_config_folder(const ExperimentConfig& c) {
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(c.base_dir.empty() ? "." : c.base_dir, ec);
  return ec ? c.base_dir : folder.lexically_normal().string();
}

namespace {

ExperimentConfig parse_config_unguarded(const nlohmann::json& j, const std::string& base_dir) {
  ExperimentConfig c;
  c.base_dir = base_dir;
  JsonObject root(j, "");
  c.raw = j;
  // the length first: a name of megabytes is refused without being scanned or quoted
  if (root.has("name") && root.raw("name").is_string() && root.raw("name").get_ref<const std::string&>().size() > kMaxNameLength)
    config_fail("name", std::to_string(root.raw("name").get_ref<const std::string&>().size()) + " characters, more than the limit of " +
                            std::to_string(kMaxNameLength) + " (it names the run folder, whose name with its time stamp, "
                            "collision suffix and temporary prefix must stay under the file-name limit of 255 bytes)");
  c.name = root.string("name", "experiment");
  for (char ch : c.name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
      config_fail("name", "'" + excerpt(c.name) + "' may hold only letters, digits, '_', '-' and '.' (it names the run folder)");
  if (c.name.empty()) config_fail("name", "must not be empty");
  c.description = root.string("description", "");
  // model first: everything else refers to its slots
  if (!root.has("model")) config_fail("model", "missing; expected an object with a type (accepted: " + model_names() + ")");
  JsonObject m = root.object("model");
  std::vector<std::string> names;
  for (const ModelDef* d : registered_models()) names.push_back(d->name);
  c.model_type = m.choice("type", "", names);
  if (c.model_type.empty()) config_fail("model.type", "missing; accepted: " + model_names());
  const ModelDef& def = model_of(c);
  def.parse_model(m, c);
  // model.include leaves model.included_from (expand_includes); a model that does not read it
  // takes no include file, and the user is told about the key they wrote
  if (j.at("model").is_object() && j.at("model").contains("included_from") && !m.was_read("included_from"))
    config_fail("model.include", "model " + c.model_type + " takes no include file; remove model.include");
  m.finish();
  if (!root.has("simulation")) config_fail("simulation", "missing; expected an object with dt and steps");
  parse_simulation(root.object("simulation"), c);
  def.set_dt(c, c.dt);
  {
    JsonObject st = root.object("initial_state");
    def.parse_initial_state(st, c);
    st.finish();
  }
  {
    JsonObject ctl = root.object("controls");
    parse_control_file(ctl, c);
    c.u_init = ctl.numbers("initial", std::vector<double>(c.info.nu(), 0.0), Range::closed(-1e12, 1e12), c.info.nu());
    if (c.u_rows > 0)  // the first row, where a single value per control is asked for
      c.u_init.assign(c.u_steps.begin(), c.u_steps.begin() + c.info.nu());
    ctl.finish();
  }
  parse_batch(root.object("batch"), c);
  if (!root.has("loss")) config_fail("loss", "missing; expected an object with terminal, control_effort or landing");
  parse_loss(root.object("loss"), c);
  if (root.has("variables")) parse_variables(root.object("variables"), root.raw("variables"), c);
  parse_optimizer(root.object("optimizer"), c);
  parse_validation(root.object("validation"), c);
  parse_output(root.object("output"), c);
  if (root.has("compare")) {
    JsonObject cp = root.object("compare");
    CompareConfig& k = c.compare;
    c.has_compare = true;
    k.gradient_method = cp.choice("gradient_method", k.gradient_method, {"adam", "gd", "lbfgsb"});
    k.learning_rate = cp.number("learning_rate", k.learning_rate, Range{0, 1e3, true, false});
    k.iterations = int(cp.integer("iterations", k.iterations, 1, 10000000));
    k.beta1 = cp.number("beta1", k.beta1, Range{0, 1, false, true});
    k.beta2 = cp.number("beta2", k.beta2, Range{0, 1, false, true});
    parse_lr_schedule(cp, k.learning_rate, k.lr_schedule, k.learning_rate_final);
    if (k.lr_schedule != "constant" && k.gradient_method == "lbfgsb")
      config_fail(cp.key_path("learning_rate_schedule"), "applies to adam and gd; L-BFGS-B chooses its steps by line search");
    k.gradient_clip = cp.number("gradient_clip", k.gradient_clip, Range{0, 1e300, false, false});
    if (k.gradient_clip > 0 && k.gradient_method == "lbfgsb")
      config_fail(cp.key_path("gradient_clip"), "applies to adam and gd; L-BFGS-B needs the true gradient for its line search");
    k.starts = int(cp.integer("starts", k.starts, 1, 100000));
    k.start_spread = cp.number("start_spread", k.start_spread, Range{0, 1, true, false});
    if (cp.has("continuation")) {
      // phases on an easier problem before the real one (horizon, ground smoothing)
      const auto& arr = cp.raw("continuation");
      const std::string path = cp.key_path("continuation");
      if (!arr.is_array()) config_fail(path, "expected an array of {steps, ground_smoothing, iterations, evaluate_every}, got " + json_type_name(arr));
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
              config_fail(ph.key_path("steps"), "a shorter horizon cannot carry the control variable '" + v.name +
                                                    "' (one entry per step or knot of all " + std::to_string(c.steps) +
                                                    " steps); use 0 (the full horizon) with controls");
        if (ph.has("ground_smoothing") && smooth_slot < 0)
          config_fail(ph.key_path("ground_smoothing"), "model " + c.info.type + " has no ground.smoothing");
        f.ground_smoothing = ph.number("ground_smoothing", 0, smooth_slot < 0 ? Range::nonnegative() : c.info.param_ranges[smooth_slot]);
        f.iterations = int(ph.integer("iterations", f.iterations, 1, 10000000));
        f.evaluate_every = int(ph.integer("evaluate_every", f.evaluate_every, 1, 10000000));
        ph.finish();
        k.continuation.push_back(f);
      }
    }
    k.cmaes_rollouts = cp.integer("cmaes_rollouts", k.cmaes_rollouts, 1, 1000000000L);
    k.cmaes_sigma0 = cp.number("cmaes_sigma0", k.cmaes_sigma0, Range{0, 1, true, false});
    k.cmaes_population = int(cp.integer("cmaes_population", 0, 0, 100000));
    k.seed = std::uint64_t(cp.integer("seed", 1, 0, (1L << 62)));
    k.repeats = int(cp.integer("repeats", k.repeats, 1, 1000));
    cp.finish();
    if (c.variables.empty()) config_fail("compare", "needs at least one entry in variables");
    for (const auto& v : c.variables)
      if (!(v.lower > -1e299 && v.upper < 1e299) || !(v.upper > v.lower))
        config_fail("variables." + v.name, "compare normalizes variables by their bounds: give finite lower < upper");
  }
  if (root.has("perturb")) {
    JsonObject pt = root.object("perturb");
    PerturbConfig& k = c.perturb;
    k.enabled = true;
    k.name = pt.string("parameter", "");
    bool is_state = false;
    if (k.name.rfind("theta.", 0) != 0) config_fail(pt.key_path("parameter"), "expected a parameter theta.<name or group>, got '" + excerpt(k.name) + "'");
    k.indices = resolve_slots(c.info, pt.key_path("parameter"), k.name, is_state);
    k.relative = pt.numbers("relative", k.relative, Range{-1, 10, true, false});
    k.factor = pt.number("factor", k.factor, Range{1, 1e300, false, false});
    k.absolute = pt.number("absolute", k.absolute, Range::nonnegative());
    pt.finish();
    for (const auto& v : c.variables)
      if (v.kind == VariableSpec::kParameter && std::find(k.indices.begin(), k.indices.end(), v.index) != k.indices.end())
        config_fail("perturb.parameter", "'" + v.name + "' is a variable: perturb a parameter the optimizer does not set");
    for (double r : k.relative)
      for (int i : k.indices)
        if (!c.info.param_ranges[i].contains(c.theta[i] * (1 + r)))
          config_fail("perturb.relative", "scaling " + c.info.param_names[i] + " by " + std::to_string(1 + r) + " leaves its range " + c.info.param_ranges[i].describe());
  }
  if (root.has("horizon_sweep")) {
    JsonObject hs = root.object("horizon_sweep");
    c.horizon_sweep.enabled = true;
    for (double v : hs.numbers("steps", {}, Range::closed(1, 1e7))) {
      if (v != std::floor(v)) config_fail(hs.key_path("steps"), "expected whole step counts in [1, 1e7]");
      c.horizon_sweep.steps.push_back(int(v));
    }
    if (c.horizon_sweep.steps.empty()) config_fail(hs.key_path("steps"), "expected a non-empty list of step counts");
    hs.finish();
  }
  c.success_tolerance = root.number("success_tolerance", 0.0, Range::nonnegative());
  if (c.success_tolerance > 0 && c.loss.n_terminal == 0)
    config_fail("success_tolerance", "success is judged on the loss's terminal terms; give loss.terminal or remove it");
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

namespace {

// model.include into out (moved in and out: a config is never copied here). The include file
// gets the same caps as the config (json_text.h); it must be a JSON object of model keys, not
// the config itself (config_id) nor another whole config, and may not include further: one
// level, so there is no cycle to follow.
nlohmann::json expand_model_include(nlohmann::json out, const std::string& base_dir, const FileIdentity& config_id) {
  if (!out.is_object() || !out.contains("model") || !out["model"].is_object() || !out["model"].contains("include"))
    return out;
  nlohmann::json& m = out["model"];
  if (!m["include"].is_string()) config_fail("model.include", "expected a file name relative to the config's folder, got " + json_type_name(m["include"]));
  const std::string rel = m["include"].get<std::string>();
  const std::string shown = "'" + excerpt(rel, 160) + "'";
  if (rel.empty()) config_fail("model.include", "expected a file name relative to the config's folder, got an empty string");
  // the C library would read the name up to its first NUL: another file than the one written
  if (rel.find('\0') != std::string::npos) config_fail("model.include", shown + " holds a NUL character (\\u0000)");
  // relative to the config's folder; an absolute path as it is
  const std::string path = rel[0] == '/' ? rel : (base_dir.empty() ? std::string(".") : base_dir) + "/" + rel;
  FileIdentity id;
  const std::string text = read_bounded_file(path, "config: model.include", &id);
  if (id.same(config_id)) config_fail("model.include", shown + " is this config itself; include a file of model keys");
  nlohmann::json frag = parse_json_text(text, "config: model.include", rel);
  if (!frag.is_object()) config_fail("model.include", shown + " must hold a JSON object of model keys, not " + json_type_name(frag));
  if (frag.contains("include"))
    config_fail("model.include", shown + " has an include of its own; includes do not nest (one file of model keys per config)");
  if (frag.contains("model") || frag.contains("simulation"))
    config_fail("model.include", shown + " is a whole config (it has a " + std::string(frag.contains("model") ? "model" : "simulation") +
                                     " key); include a file of model keys only");
  frag.erase("description");  // the fragment's own documentation (its source)
  m.erase("include");
  for (auto it = frag.begin(); it != frag.end(); ++it)
    if (!m.contains(it.key())) m[it.key()] = std::move(it.value());  // the config's own keys win
  m["included_from"] = rel;
  return out;
}

}  // namespace

nlohmann::json expand_includes(const nlohmann::json& j, const std::string& base_dir) {
  return expand_model_include(j, base_dir, FileIdentity{});
}

nlohmann::json read_config_text(const std::string& text, const std::string& source) {
  return parse_json_text(text, "config", source);
}

ExperimentConfig load_config(const std::string& path) {
  FileIdentity id;
  nlohmann::json j = read_config_text(read_bounded_file(path, "config", &id), path);
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return parse_config(expand_model_include(std::move(j), dir, id), dir);
}

nlohmann::json ExperimentConfig::to_json() const {
  nlohmann::json j;
  j["name"] = name;
  j["description"] = description;
  nlohmann::json m = {{"type", model_type}};
  model_of(*this).model_json(*this, m);
  nlohmann::json params = nlohmann::json::object();
  for (int q = 0; q < info.np(); ++q) params[info.param_names[q]] = {{"value", theta[q]}, {"unit", info.param_units[q]}};
  m["parameters"] = params;
  j["model"] = m;
  nlohmann::json x = nlohmann::json::object();
  for (int i = 0; i < info.nx(); ++i) x[info.state_names[i]] = {{"value", x0[i]}, {"unit", info.state_units[i]}};
  j["initial_state"] = x;
  nlohmann::json u = nlohmann::json::object();
  for (int i = 0; i < info.nu(); ++i) u[info.control_names[i]] = {{"value", u_init[i]}, {"unit", info.control_units[i]}};
  j["controls_initial"] = u;
  if (u_rows > 0)
    j["controls_initial_file"] = {{"file", u_file}, {"file_fnv1a64", u_digest}, {"rows", u_rows}, {"columns", info.control_names},
                                  {"note", "row k is u_k; steps past the last row hold it; controls_initial is its first row"}};
  j["simulation"] = {{"dt", {{"value", dt}, {"unit", "s"}}},
                     {"steps", steps},
                     {"horizon", {{"value", dt * steps}, {"unit", "s"}}},
                     {"precision", precision},
                     {"checkpoint_every", resolved_checkpoint()},
                     {"checkpoint_schedule", checkpoint_plan().shape.binomial() ? "binomial" : "uniform"},
                     {"checkpoint_memory_mb", checkpoint_memory_mb > 0 ? nlohmann::json(checkpoint_memory_mb) : nlohmann::json()},
                     {"store_forward_mb", store_forward_mb},
                     {"backend_requested", backend},
                     {"threads", threads}};
  nlohmann::json ov = nlohmann::json::array();
  for (const auto& o : overrides) {
    nlohmann::json e = {{"slot", o.name}, {"slots", o.indices.size()}};
    switch (o.draw) {
      case BatchOverride::kSweep: e["values"] = o.values; break;
      case BatchOverride::kUniform: e["uniform"] = {o.lo, o.hi}; break;
      case BatchOverride::kRelative: e["relative"] = o.hi; break;
      case BatchOverride::kJitter: e["jitter"] = o.hi; break;
    }
    ov.push_back(e);
  }
  j["batch"] = {{"size", batch_size}, {"seed", seed}, {"overrides", ov}};
  j["loss"] = loss_json;
  nlohmann::json vars = nlohmann::json::array();
  for (const auto& v : variables) {
    std::string unit = v.kind == VariableSpec::kInitialState ? info.state_units[v.index]
                       : v.kind == VariableSpec::kParameter  ? info.param_units[v.index]
                                                             : info.control_units[v.index];
    vars.push_back({{"name", v.name}, {"lower", v.lower}, {"upper", v.upper}, {"unit", unit},
                    {"per_step", v.kind == VariableSpec::kControl}, {"hold", v.hold}, {"entries", v.length(steps)}});
  }
  j["variables"] = vars;
  j["optimizer"] = {{"method", optimizer.method}, {"learning_rate", optimizer.learning_rate},
                    {"iterations", optimizer.iterations}, {"beta1", optimizer.beta1},
                    {"beta2", optimizer.beta2}, {"epsilon", optimizer.adam_eps},
                    {"gradient_clip", optimizer.gradient_clip},
                    {"learning_rate_schedule", optimizer.lr_schedule},
                    {"learning_rate_final", optimizer.learning_rate_final},
                    {"bounds", "projected onto [lower, upper] after every step"}};
  j["validation"] = {{"enabled", validation.enabled}, {"at", validation.at}, {"epsilon", validation.epsilon},
                     {"epsilon_sweep", validation.epsilon_sweep}, {"tolerance", validation.tolerance},
                     {"abs_tolerance", validation.abs_tolerance}, {"seed", validation.seed},
                     {"energy_drift_bound", validation.energy_drift_bound},
                     {"horizon_ratio_bound", validation.horizon_ratio_bound},
                     {"horizon_measure", validation.horizon_measure},
                     {"penetration_bound_m", validation.penetration_bound},
                     {"max_rollouts", validation.max_rollouts},
                     {"listed_rollouts", validation.listed_rollouts},
                     {"float32_tolerance", validation.float32_tolerance},
                     {"timestep_check", validation.timestep_check},
                     {"timestep_tolerance", validation.timestep_tolerance},
                     {"chatter_fraction", validation.chatter_fraction},
                     {"secant_check", validation.secant_check},
                     {"secant_epsilon", validation.secant_epsilon},
                     {"secant_tolerance", validation.secant_tolerance}};
  j["output"] = {{"dir", output.dir}, {"trajectory_stride", output.trajectory_stride},
                 {"trajectory_rollouts", output.trajectory_rollouts},
                 {"json_trajectory_points", output.json_trajectory_points}};
  return j;
}

int ExperimentConfig::resolved_checkpoint() const {
  if (checkpoint_every > 0) return checkpoint_every;
  int k = int(std::ceil(std::sqrt(double(steps))));
  return k < 1 ? 1 : k;
}

CheckpointPlan ExperimentConfig::checkpoint_plan() const {
  const bool f32 = precision == "float32";
  const int nx = info.nx();
  auto scratch = [&](const RolloutShape& sh) {
    return f32 ? rollout_scratch_bytes<float>(sh, nx) : rollout_scratch_bytes<double>(sh, nx);
  };
  CheckpointPlan p;
  p.shape.steps = steps;
  p.shape.checkpoint_every = resolved_checkpoint();
  p.budget_mb = checkpoint_memory_mb;
  const double budget = std::floor(checkpoint_memory_mb * 1048576.0);  // [bytes]
  if (checkpoint_memory_mb > 0 && double(scratch(p.shape)) > budget) {
    const std::string key = "simulation.checkpoint_memory_mb";
    std::ostringstream need;
    need << "the uniform schedule with K = " << p.shape.checkpoint_every << " needs " << scratch(p.shape)
         << " bytes per rollout (" << double(scratch(p.shape)) / 1048576.0 << " MiB)";
    if (checkpoint_every > 0) {
      need << ", more than " << key << " = " << checkpoint_memory_mb
           << " MiB; drop checkpoint_every to let the budget choose the binomial schedule, or raise the budget";
      config_fail("simulation.checkpoint_every", need.str());
    }
    // binomial: x_T, three working states and λ, λ_prev are fixed; each snapshot costs a state and its index
    RolloutShape b = p.shape;
    b.schedule = CheckpointSchedule::kBinomial;
    b.snapshots = 0;
    const double fixed = double(scratch(b)), per_snapshot = double(nx) * (f32 ? 4 : 8) + double(sizeof(int));
    const long long bytes = (long long)budget;
    const int s = f32 ? binomial_snapshots_within<float>(bytes, steps, nx) : binomial_snapshots_within<double>(bytes, steps, nx);
    if (double(bytes) < fixed + 2 * per_snapshot) {
      const double least_mb = (fixed + 2 * per_snapshot) / 1048576.0;
      std::ostringstream m;
      m << checkpoint_memory_mb << " MiB holds fewer than the 2 snapshots of the smallest binomial schedule (" << need.str()
        << "; the binomial one needs " << fixed << " bytes for x_T, 3 working states and 2 adjoint vectors plus "
        << per_snapshot << " bytes per snapshot: a state of " << nx << " " << precision << " values and its step index); accepted range ["
        << least_mb << ", 1e6] MiB";
      config_fail(key, m.str());
    }
    b.snapshots = s;
    p.shape = b;
  }
  // the CPU backend's stored forward pass (rollout.h): per thread, and not where the user bounds
  // the memory per rollout
  if (checkpoint_memory_mb <= 0 && store_forward_mb > 0) {
    p.store_forward_mb = store_forward_mb;
    p.shape.store_forward_bytes = (long long)std::floor(store_forward_mb * 1048576.0);
  }
  if (p.shape.binomial()) {
    p.repetitions = binomial_reach(steps, p.shape.snapshot_slots()).r;
    p.recompute_steps = binomial_forward_steps(steps, p.shape.snapshot_slots());
  } else {
    p.repetitions = 1;
    p.recompute_steps = steps;  // each segment recomputed once from its checkpoint
  }
  p.recompute_factor = double(p.recompute_steps) / double(steps);
  p.scratch_bytes = scratch(p.shape);
  return p;
}

nlohmann::json CheckpointPlan::to_json() const {
  nlohmann::json j = {{"schedule", shape.binomial() ? "binomial" : "uniform"},
                      {"repetitions", repetitions},
                      {"recompute_steps", recompute_steps},
                      {"recompute_factor", recompute_factor},
                      {"scratch_bytes_per_rollout", scratch_bytes},
                      {"memory_budget_mb", budget_mb > 0 ? nlohmann::json(budget_mb) : nlohmann::json()},
                      {"cpu_store_forward_mb", store_forward_mb},
                      {"cpu_store_forward_note",
                       store_forward_mb > 0
                           ? "the CPU backend keeps each rollout's whole forward pass (states and step tapes, per "
                             "thread) when it fits this budget, and its backward sweep then recomputes nothing "
                             "(timings.rollout_steps_recomputed_backward); the schedule above is the GPU's and the "
                             "fallback's"
                           : "off: the backward sweep recomputes from the checkpoints"}};
  if (shape.binomial())
    j["snapshots"] = shape.snapshot_slots();
  else
    j["checkpoint_every"] = shape.checkpoint_every;
  return j;
}

ExperimentConfig halved_timestep(const ExperimentConfig& c) {
  ExperimentConfig f = c;
  f.dt = c.dt / 2;
  f.steps = 2 * c.steps;
  model_of(f).set_dt(f, f.dt);
  f.loss.effort_weight = c.loss.effort_weight / 2;
  // the running site terms and the tracking table are sums over the steps too
  for (int t = 0; t < f.loss.n_site; ++t)
    if (f.loss.site_running[t]) {
      f.loss.site_weight[t] = c.loss.site_weight[t] / 2;
      f.loss.site_rot_weight[t] = c.loss.site_rot_weight[t] / 2;
    }
  bind_track_table(f);
  f.checkpoint_every = 0;
  f.checkpoint_memory_mb = 0;  // (store_forward_mb stays: the same bits either way)
  f.horizon_sweep.enabled = false;
  // a knot keeps its span of time: 2·hold half steps, so both problems have the same variables
  for (auto& v : f.variables) v.hold *= 2;
  return f;
}

}  // namespace steer
