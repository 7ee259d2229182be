#include "config/loss_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "config/data_file.h"
#include "models/registry.h"

namespace steer {

namespace {

std::string join(const std::vector<std::string>& v, size_t max_items = 40) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max_items; ++i) s += (s.empty() ? "" : ", ") + v[i];
  if (v.size() > max_items) s += ", … (" + std::to_string(v.size()) + " in all)";
  return s;
}

std::vector<std::string> sites_of(const ExperimentConfig& c) {
  const ModelDef& def = model_of(c);
  return def.site_names ? def.site_names(c) : std::vector<std::string>{};
}

bool has_sites(const ModelDef& d) { return d.site_names != nullptr; }

std::vector<ModelDef::LinearColumn> linear_columns_of(const ExperimentConfig& c) {
  const ModelDef& def = model_of(c);
  return def.linear_columns ? def.linear_columns(c) : std::vector<ModelDef::LinearColumn>{};
}

// a linear column of the model (a fixed tendon's length, "tendon.<name>") -> Loss's code
// kLinearChannel − ℓ and its unit; 0 when the name is none; ConfigError at path when the model
// refuses it as a column
int linear_channel(const std::string& name, const ExperimentConfig& c, const std::string& path,
                   std::string& unit) {
  const std::vector<ModelDef::LinearColumn> cols = linear_columns_of(c);
  for (size_t l = 0; l < cols.size(); ++l) {
    if (cols[l].name != name) continue;
    if (!cols[l].refused.empty())
      config_fail(path, "column '" + excerpt(name) + "': " + cols[l].refused);
    unit = cols[l].unit;
    return Loss::kLinearChannel - int(l);
  }
  return 0;
}

// the refusal of a site for a model without sites
[[noreturn]] void no_sites(const std::string& path, const ExperimentConfig& c) {
  const std::string with = model_names(has_sites);
  config_fail(path, "model " + c.info.type + " has no sites" +
                        (with.empty() ? std::string()
                                      : " (site losses are offered by model " + with + ")"));
}

// "site.<name>.<x|y|z>" -> Loss::track_channel's code −(1 + 3 s + a); 0 when the name is not of
// that form; ConfigError at path when the site is unknown
int site_channel(const std::string& name, const ExperimentConfig& c, const std::string& path) {
  if (name.rfind("site.", 0) != 0 || name.size() < 8 || name[name.size() - 2] != '.') return 0;
  const char ax = name.back();
  if (ax != 'x' && ax != 'y' && ax != 'z') return 0;
  const std::string site = name.substr(5, name.size() - 7);
  const std::vector<std::string> names = sites_of(c);
  if (!model_of(c).site_names) no_sites(path, c);
  const auto it = std::find(names.begin(), names.end(), site);
  if (it == names.end())
    config_fail(path,
                "'" + excerpt(site) + "' is not a site of the model; accepted: " + join(names));
  return -(1 + 3 * int(it - names.begin()) + (ax - 'x'));
}

// the accepted column names, for messages
std::string accepted_columns(const ExperimentConfig& c, const std::string& time_column) {
  std::vector<std::string> all;
  if (!time_column.empty()) all.push_back(time_column + " (time [s])");
  all.insert(all.end(), c.info.state_names.begin(), c.info.state_names.end());
  for (const auto& s : sites_of(c)) all.push_back("site." + s + ".x|y|z");
  for (const auto& l : linear_columns_of(c))
    if (l.refused.empty()) all.push_back(l.name);
  return join(all);
}

// loss.<key>.weight: one number for every column, or {column: weight} (the rest 1)
std::vector<double> column_weights(const JsonObject& o, const std::vector<std::string>& names) {
  std::vector<double> w(names.size(), 1.0);
  if (!o.has("weight")) return w;
  if (o.raw("weight").is_object()) {
    JsonObject wo = o.object("weight");
    for (auto it = o.raw("weight").begin(); it != o.raw("weight").end(); ++it) {
      const auto f = std::find(names.begin(), names.end(), it.key());
      if (f == names.end())
        config_fail(wo.key_path(it.key()),
                    "is not a column of this table; its columns: " + join(names));
      w[size_t(f - names.begin())] = wo.number(it.key(), 1.0, Range::nonnegative());
    }
    wo.finish();
    return w;
  }
  const double v = o.number("weight", 1.0, Range::nonnegative());
  std::fill(w.begin(), w.end(), v);
  return w;
}

// the table given inline: "values": [[...], ...], null for a missing value
DataTable inline_table(const JsonObject& o) {
  const auto& v = o.raw("values");
  const std::string path = o.key_path("values");
  if (!v.is_array() || v.empty())
    config_fail(path, "expected a non-empty array of rows (arrays of numbers)");
  DataTable t;
  for (size_t r = 0; r < v.size(); ++r) {
    const std::string rp = path + "[" + std::to_string(r) + "]";
    if (!v[r].is_array())
      config_fail(rp, "expected an array of numbers, got " + json_type_name(v[r]));
    if (r == 0) t.cols = int(v[r].size());
    if (int(v[r].size()) != t.cols || t.cols == 0)
      config_fail(rp, std::to_string(v[r].size()) + " values, expected " + std::to_string(t.cols) +
                          " (as row 0)");
    for (size_t i = 0; i < v[r].size(); ++i) {
      const auto& x = v[r][i];
      if (x.is_null()) {
        t.values.push_back(std::numeric_limits<double>::quiet_NaN());
      } else if (x.is_number() && std::isfinite(x.get<double>()) &&
                 std::fabs(x.get<double>()) <= 1e12) {
        t.values.push_back(x.get<double>());
      } else {
        config_fail(rp + "[" + std::to_string(i) + "]",
                    "expected a number in [-1e12, 1e12] or null (not observed)");
      }
    }
    ++t.rows;
  }
  return t;
}

// one source: its table, columns by name, time, channels and weights
TrackSource read_source(const JsonObject& o, ExperimentConfig& c, bool timed) {
  TrackSource src;
  src.key = o.path();
  if (o.has("file") == o.has("values"))
    config_fail(o.path(), "give exactly one of file (CSV or .npy) and values (an array of rows)");
  DataTable t;
  if (o.has("file")) {
    src.file = o.string("file", "");
    t = read_data_file(resolve_data_path(src.file, c.base_dir), o.key_path("file"));
    src.digest = t.digest;
  } else {
    t = inline_table(o);
  }
  const std::string time_column = timed ? o.string("time_column", "t") : std::string();
  // the columns: the CSV header's, or the config's list (which may also select from a header)
  std::vector<std::string> names = t.columns;
  std::vector<int> pick;
  if (o.has("columns")) {
    const auto& cols = o.raw("columns");
    const std::string cp = o.key_path("columns");
    if (!cols.is_array() || cols.empty())
      config_fail(cp, "expected a non-empty array of column names");
    std::vector<std::string> want;
    for (const auto& x : cols) {
      if (!x.is_string())
        config_fail(cp, "expected column names (strings), got " + json_type_name(x));
      want.push_back(x.get<std::string>());
    }
    if (t.columns.empty()) {
      if (int(want.size()) != t.cols)
        config_fail(cp, std::to_string(want.size()) + " names for a table of " +
                            std::to_string(t.cols) + " columns");
      names = want;
      pick.resize(want.size());
      std::iota(pick.begin(), pick.end(), 0);
    } else {
      for (const auto& w : want) {
        const auto f = std::find(t.columns.begin(), t.columns.end(), w);
        if (f == t.columns.end())
          config_fail(cp, "'" + excerpt(w) + "' is not a column of the file's header (" +
                              join(t.columns) + ")");
        pick.push_back(int(f - t.columns.begin()));
      }
      names = want;
    }
  } else {
    if (t.columns.empty())
      config_fail(o.path(), "the table has no header row; name its " + std::to_string(t.cols) +
                                " columns with columns (accepted names: " +
                                accepted_columns(c, time_column) + ")");
    pick.resize(names.size());
    std::iota(pick.begin(), pick.end(), 0);
  }
  const std::string where = o.has("file") ? o.key_path("file") : o.key_path("values");
  // the time column, then every other column is a channel
  int tcol = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    if (timed && names[i] == time_column) {
      tcol = pick[i];
      continue;
    }
    const std::string& n = names[i];
    for (const auto& m : src.names)
      if (m == n) config_fail(where, "column '" + excerpt(n) + "' is given twice");
    int code = c.info.state_index(n);
    std::string unit = code >= 0 ? c.info.state_units[size_t(code)] : "m";
    if (code < 0) {
      code = site_channel(n, c, where);
      if (code == 0) code = linear_channel(n, c, where, unit);
      if (code == 0)
        config_fail(where, "column '" + excerpt(n) +
                               "' is not a state slot, site or tendon of model " + c.info.type +
                               "; accepted: " + accepted_columns(c, time_column));
    }
    src.names.push_back(n);
    src.units.push_back(unit);
    src.channel.push_back(code);
  }
  if (timed && tcol < 0)
    config_fail(where, "no time column '" + excerpt(time_column) +
                           "' (the observation times [s]; time_column names it)");
  if (src.names.empty())
    config_fail(where, "no column besides the time names a state slot or site");
  const int nc = int(src.names.size());
  std::vector<int> vcols;
  for (size_t i = 0; i < names.size(); ++i)
    if (!(timed && names[i] == time_column)) vcols.push_back(pick[i]);
  src.values.resize(size_t(t.rows) * nc);
  for (int r = 0; r < t.rows; ++r)
    for (int j = 0; j < nc; ++j) src.values[size_t(r) * nc + j] = t.at(r, vcols[size_t(j)]);
  if (timed) {
    for (int r = 0; r < t.rows; ++r) {
      const double tr = t.at(r, tcol);
      if (!std::isfinite(tr))
        config_fail(where, "row " + std::to_string(r) + ": the time is missing or not finite");
      if (r > 0 && !(tr > src.time.back()))
        config_fail(where, "row " + std::to_string(r) + ": time " + number_text(tr) +
                               " s does not follow " + number_text(src.time.back()) +
                               " s; the times must increase strictly");
      src.time.push_back(tr);
    }
    const double horizon = c.dt * c.steps;
    if (src.time.back() < 0 || src.time.front() > horizon)
      config_fail(where, "the observation times [" + number_text(src.time.front()) + ", " +
                             number_text(src.time.back()) + "] s miss the horizon [0, " +
                             number_text(horizon) + "] s");
  } else {
    if (t.rows != c.steps + 1)
      config_fail(where, std::to_string(t.rows) + " rows, expected simulation.steps + 1 = " +
                             std::to_string(c.steps + 1) + " (one per state x_0 … x_T) of " +
                             std::to_string(nc) + " columns");
    for (int r = 0; r < t.rows; ++r) src.time.push_back(r * c.dt);
  }
  src.weight = column_weights(o, src.names);
  if (timed) src.interpolate = o.choice("interpolation", "linear", {"linear", "none"}) == "linear";
  return src;
}

}  // namespace

nlohmann::json parse_site_terms(const JsonObject& l, ExperimentConfig& c) {
  if (!l.has("sites")) return nullptr;
  const auto& arr = l.raw("sites");
  const std::string path = l.key_path("sites");
  if (!model_of(c).site_names) no_sites(path, c);
  if (!arr.is_array())
    config_fail(path,
                "expected an array of {site, target, weight, running}, got " + json_type_name(arr));
  if (arr.size() > size_t(Loss::kMaxSiteTerms))
    config_fail(path, "at most " + std::to_string(Loss::kMaxSiteTerms) + " site terms, got " +
                          std::to_string(arr.size()));
  const std::vector<std::string> names = sites_of(c);
  Loss& loss = c.loss;
  nlohmann::json terms = nlohmann::json::array();
  for (size_t t = 0; t < arr.size(); ++t) {
    JsonObject term(arr[t], path + "[" + std::to_string(t) + "]");
    const std::string site = term.string("site", "");
    const auto it = std::find(names.begin(), names.end(), site);
    if (it == names.end())
      config_fail(term.key_path("site"),
                  "'" + excerpt(site) + "' is not a site of the model; accepted: " + join(names));
    loss.site_index[t] = int(it - names.begin());
    // each coordinate's target: a number, or a parameter slot "theta.<name>" (drawn per
    // rollout, or itself a variable)
    const std::string tp = term.key_path("target");
    const bool has_pos = term.has("target"), has_rot = term.has("orientation");
    if (!has_pos && !has_rot)
      config_fail(tp, "missing; give target ([x, y, z] [m]), orientation ([w, x, y, z]) or both");
    if (has_pos && (!term.raw("target").is_array() || term.raw("target").size() != 3))
      config_fail(tp, "expected [x, y, z] [m], each a number or a parameter theta.<name>");
    if (!has_pos && term.has("weight"))
      config_fail(
          term.key_path("weight"),
          "weighs the position target; give target, or orientation_weight for the orientation");
    nlohmann::json tgt = has_pos ? nlohmann::json::array() : nlohmann::json(nullptr);
    for (int a = 0; a < 3; ++a) {
      loss.site_param[t][a] = -1;
      loss.site_target[t][a] = 0;
      if (!has_pos) continue;
      const auto& v = term.raw("target")[size_t(a)];
      if (v.is_string()) {
        const std::string tn = v.get<std::string>();
        const int pi = tn.rfind("theta.", 0) == 0 ? c.info.param_index(tn.substr(6)) : -1;
        if (pi < 0)
          config_fail(tp + "[" + std::to_string(a) + "]",
                      "'" + excerpt(tn) +
                          "' is not a number or a parameter theta.<name> of model " + c.info.type);
        loss.site_param[t][a] = pi;
        tgt.push_back(tn);
      } else if (v.is_number() && std::isfinite(v.get<double>()) &&
                 std::fabs(v.get<double>()) <= 1e12) {
        loss.site_target[t][a] = v.get<double>();
        tgt.push_back(v.get<double>());
      } else {
        config_fail(tp + "[" + std::to_string(a) + "]",
                    "expected a number in [-1e12, 1e12] [m] or a parameter theta.<name>");
      }
    }
    loss.site_weight[t] = has_pos ? term.number("weight", 1.0, Range::nonnegative()) : 0.0;
    // orientation: a unit quaternion (w, x, y, z) of the site's frame in the world, normalized
    // here, as the rotation matrix R* the term compares the site's rotation with
    nlohmann::json quat = nullptr;
    loss.site_rot_weight[t] = 0;
    if (has_rot) {
      std::vector<double> q = term.numbers("orientation", {}, Range::closed(-1e6, 1e6), 4);
      const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      if (!(n > 1e-12))
        config_fail(term.key_path("orientation"),
                    "expected a quaternion [w, x, y, z] of non-zero length");
      for (double& v : q) v /= n;
      const double w = q[0], x = q[1], y = q[2], z = q[3];
      const double R[9] = {
          1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
      for (int i = 0; i < 9; ++i) loss.site_rot_target[t][i] = R[i];
      loss.site_rot_weight[t] = term.number("orientation_weight", 1.0, Range::nonnegative());
      quat = q;
    } else if (term.has("orientation_weight")) {
      config_fail(term.key_path("orientation_weight"),
                  "weighs an orientation target; give orientation too");
    }
    loss.site_running[t] = term.boolean("running", false);
    term.finish();
    const std::string at = loss.site_running[t] ? "x_k" : "x_T";
    std::string what = has_pos ? "0.5 * weight * |p_site(" + at + ") - target|^2" : "";
    if (has_rot)
      what += std::string(has_pos ? " + " : "") + "0.5 * orientation_weight * |R_site(" + at +
              ") - R(orientation)|_F^2";
    terms.push_back({{"site", site},
                     {"target", tgt},
                     {"weight", loss.site_weight[t]},
                     {"running", bool(loss.site_running[t])},
                     {"unit", "m"},
                     {"orientation", quat},
                     {"orientation_weight", loss.site_rot_weight[t]},
                     {"term", loss.site_running[t] ? "sum_k=0..T " + what : what}});
  }
  loss.n_site = int(arr.size());
  return terms;
}

nlohmann::json parse_track_sources(const JsonObject& l, ExperimentConfig& c) {
  nlohmann::json out = nlohmann::json::object();
  c.tracking.clear();
  c.track_dt = c.dt;
  int channels = 0;
  for (const char* key : {"reference", "observations"}) {
    if (!l.has(key)) continue;
    const bool timed = std::string(key) == "observations";
    JsonObject o = l.object(key);
    TrackSource src = read_source(o, c, timed);
    o.finish();
    channels += int(src.names.size());
    if (channels > Loss::kMaxTrack)
      config_fail(o.path(), "the tracking table would have " + std::to_string(channels) +
                                " channels, more than the limit of " +
                                std::to_string(Loss::kMaxTrack) +
                                " (loss.reference and loss.observations together)");
    nlohmann::json cols = nlohmann::json::array();
    for (size_t i = 0; i < src.names.size(); ++i)
      cols.push_back({{"column", src.names[i]}, {"weight", src.weight[i]}, {"unit", src.units[i]}});
    out[key] = {
        {"file", src.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(src.file)},
        {"file_fnv1a64", src.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(src.digest)},
        {"rows", src.time.size()},
        {"time_span_s", {src.time.front(), src.time.back()}},
        {"columns", cols},
        {"interpolation",
         timed ? nlohmann::json(src.interpolate ? "linear" : "none") : nlohmann::json(nullptr)},
        {"term", timed ? "sum_k=0..T sum_c 0.5 * weight_c * (y_c(x_k) - obs_c(k dt))^2, obs "
                         "interpolated linearly "
                         "between observation times (interpolation linear) or taken at them only "
                         "(none); steps "
                         "outside them or next to a missing value add nothing"
                       : "sum_k=0..T sum_c 0.5 * weight_c * (y_c(x_k) - ref_c[k])^2"}};
    c.tracking.push_back(std::move(src));
  }
  return out.empty() ? nlohmann::json(nullptr) : out;
}

namespace {

// the rows of a control file: at most simulation.steps of them (the last is held), recorded
// with the file's digest at the config's dt
void keep_control_rows(const DataTable& t, const std::string& key, const std::string& shape,
                       ExperimentConfig& c) {
  if (t.rows > c.steps)
    config_fail(key,
                std::to_string(t.rows) + " rows; " + shape + " (fewer rows: the last is held)");
  c.u_rows = t.rows;
  c.u_digest = t.digest;
  c.u_dt = c.dt;
}

// row r of column k, named `name`: a finite number within ±1e12
double control_value(const DataTable& t, int r, int k, const std::string& name,
                     const std::string& key) {
  const double v = t.at(r, k);
  if (!std::isfinite(v) || std::fabs(v) > 1e12)
    config_fail(key,
                "row " + std::to_string(r) + ", " + name + ": expected a number in [-1e12, 1e12]");
  return v;
}

// controls.initial_file in the model's foreign units (ModelInfo::ForeignControls: an imported
// file's ctrl.<actuator> columns, every one present, in any order): each row clamped and mapped
// to the model's controls, u = offset + gain · clamp(ctrl)
void read_foreign_controls(const DataTable& t, const std::string& key, ExperimentConfig& c) {
  const ModelInfo::ForeignControls& f = c.info.foreign_controls;
  const int nu = c.info.nu(), na = int(f.names.size());
  if (na == 0)
    config_fail(key, "the header names '" + t.columns[0] +
                         "': ctrl.<actuator> columns are an imported MJCF's controls, and this "
                         "model has none; name the model's controls (" +
                         join(c.info.control_names) + ")");
  const std::string shape =
      "expected a table of at most simulation.steps = " + std::to_string(c.steps) +
      " rows and the " + std::to_string(na) + " columns of MuJoCo's ctrl (" + join(f.names) + ")";
  std::vector<int> col(size_t(na), -1);
  for (int k = 0; k < t.cols; ++k) {
    const auto at = std::find(f.names.begin(), f.names.end(), t.columns[size_t(k)]);
    if (at == f.names.end())
      config_fail(key, "the header names '" + t.columns[size_t(k)] +
                           "', not an actuator of the model; " + shape);
    col[size_t(at - f.names.begin())] = k;
  }
  for (int a = 0; a < na; ++a)
    if (col[size_t(a)] < 0)
      config_fail(key, "the header has no column '" + f.names[size_t(a)] + "'; " + shape);
  keep_control_rows(t, key, shape, c);
  c.u_columns = f.names;
  c.u_steps.assign(size_t(t.rows) * nu, 0.0);
  for (int r = 0; r < t.rows; ++r) {
    double* u = c.u_steps.data() + size_t(r) * nu;
    for (int j = 0; j < nu; ++j) u[j] = f.offset[size_t(j)];
    for (int a = 0; a < na; ++a) {
      const double v = control_value(t, r, col[size_t(a)], f.names[size_t(a)], key);
      const double clamped = std::min(std::max(v, f.lo[size_t(a)]), f.hi[size_t(a)]);
      for (int j = 0; j < nu; ++j) u[j] += f.gain[size_t(j) * na + a] * clamped;
    }
  }
}

}  // namespace

void parse_control_file(const JsonObject& ctl, ExperimentConfig& c) {
  c.u_steps.clear();
  c.u_rows = 0;
  c.u_file.clear();
  c.u_columns.clear();
  if (!ctl.has("initial_file")) return;
  const std::string key = ctl.key_path("initial_file");
  const int nu = c.info.nu();
  if (ctl.has("initial"))
    config_fail(key,
                "give controls.initial (one value per control) or controls.initial_file, not both");
  if (nu == 0) config_fail(key, "model " + c.info.type + " has no controls");
  c.u_file = ctl.string("initial_file", "");
  const DataTable t = read_data_file(resolve_data_path(c.u_file, c.base_dir), key);
  if (!t.columns.empty() && t.columns[0].rfind("ctrl.", 0) == 0) {
    read_foreign_controls(t, key, c);
    return;
  }
  const std::string shape =
      "expected a table of at most simulation.steps = " + std::to_string(c.steps) + " rows and " +
      std::to_string(nu) + " columns (" + join(c.info.control_names) + ")";
  std::vector<int> col(static_cast<size_t>(nu));
  if (!t.columns.empty()) {
    if (t.cols != nu)
      config_fail(key, "the header names " + std::to_string(t.cols) + " columns; " + shape);
    for (int j = 0; j < nu; ++j) {
      const auto f = std::find(t.columns.begin(), t.columns.end(), c.info.control_names[size_t(j)]);
      if (f == t.columns.end())
        config_fail(key,
                    "the header has no column '" + c.info.control_names[size_t(j)] + "'; " + shape);
      col[size_t(j)] = int(f - t.columns.begin());
    }
  } else {
    if (t.cols != nu)
      config_fail(key,
                  std::to_string(t.rows) + " x " + std::to_string(t.cols) + " values; " + shape);
    std::iota(col.begin(), col.end(), 0);
  }
  keep_control_rows(t, key, shape, c);
  c.u_steps.resize(size_t(t.rows) * nu);
  for (int r = 0; r < t.rows; ++r)
    for (int j = 0; j < nu; ++j)
      c.u_steps[size_t(r) * nu + j] =
          control_value(t, r, col[size_t(j)], c.info.control_names[size_t(j)], key);
}

void build_track_table(const ExperimentConfig& c, double dt, int steps, Loss& loss,
                       std::vector<double>& table) {
  loss.n_track = 0;
  loss.track_rows = 0;
  loss.track_extra = 0;
  loss.track = nullptr;
  table.clear();
  if (c.tracking.empty()) return;
  // channel order: state slots in source order, then sites by site index and axis, so that a
  // site's coordinates are adjacent (Loss::track_row computes its position once)
  struct Ch {
    int src, col, code;
  };
  std::vector<Ch> ch;
  for (size_t s = 0; s < c.tracking.size(); ++s)
    for (size_t j = 0; j < c.tracking[s].channel.size(); ++j)
      ch.push_back({int(s), int(j), c.tracking[s].channel[j]});
  std::stable_sort(ch.begin(), ch.end(), [](const Ch& a, const Ch& b) {
    const bool sa = a.code < 0, sb = b.code < 0;
    if (sa != sb) return !sa;
    return sa && (-a.code < -b.code);
  });
  const int n = int(ch.size()), rows = steps + 1;
  loss.n_track = n;
  loss.track_rows = rows;
  for (int i = 0; i < n; ++i) loss.track_channel[i] = ch[size_t(i)].code;
  table.assign(size_t(2) * rows * n, 0.0);
  const double scale = c.track_dt > 0 ? dt / c.track_dt : 1.0;
  for (int i = 0; i < n; ++i) {
    const TrackSource& src = c.tracking[size_t(ch[size_t(i)].src)];
    const int j = ch[size_t(i)].col, nc = int(src.channel.size()), m = int(src.time.size());
    // An interpolated source is a Riemann sum over the steps, Σ_k h w (…)² / track_dt, so at
    // another timestep its weight scales by dt/track_dt. Without interpolation the term is a sum
    // over the observation times, one term per observation whatever the timestep: its weight
    // stays, and at a finer dt (the timestep check's h/2) only the steps that are also steps of
    // the run at track_dt count, so that both runs compare the same observations.
    const bool per_observation = !src.interpolate;
    const double w = src.weight[size_t(j)] * (per_observation ? 1.0 : scale);
    const bool thinned = per_observation && c.track_dt > 0 && dt < c.track_dt;
    int seg = 0;  // the interval [time[seg], time[seg + 1]] holding t (t increases with k)
    for (int k = 0; k < rows; ++k) {
      const double t = k * dt;
      const double tol = 1e-9 * std::max(dt, std::fabs(t));
      double* cell = &table[(size_t(k) * n + i) * 2];
      if (t < src.time.front() - tol || t > src.time.back() + tol) continue;
      if (thinned && std::fabs(t - std::round(t / c.track_dt) * c.track_dt) > tol)
        continue;  // between the run's steps
      while (seg + 1 < m && src.time[size_t(seg + 1)] <= t + tol) ++seg;
      const double v0 = src.values[size_t(seg) * nc + j];
      double v;
      if (std::fabs(t - src.time[size_t(seg)]) <= tol || seg + 1 >= m) {
        v = v0;  // at an observation (the last one included)
      } else if (!src.interpolate) {
        continue;  // between observations, and interpolation off
      } else {
        const double v1 = src.values[size_t(seg + 1) * nc + j];
        const double s =
            (t - src.time[size_t(seg)]) / (src.time[size_t(seg + 1)] - src.time[size_t(seg)]);
        v = v0 + s * (v1 - v0);
      }
      if (std::isnan(v)) continue;  // a missing neighbour: the step is not observed
      cell[0] = v;
      cell[1] = w;
    }
  }
  // the linear channels' terms after the rows (Loss::kLinearChannel): one offset per column of
  // the model, then each column's count and (slot, coefficient) pairs
  bool linear = false;
  for (int i = 0; i < n; ++i) linear = linear || Loss::linear_code(loss.track_channel[i]);
  if (!linear) return;
  const std::vector<ModelDef::LinearColumn> cols = linear_columns_of(c);
  const size_t start = table.size();
  table.resize(start + cols.size(), 0.0);
  for (size_t l = 0; l < cols.size(); ++l) {
    table[start + l] = double(table.size() - start);
    table.push_back(double(cols[l].terms.size()));
    for (const auto& [slot, coef] : cols[l].terms)
      table.push_back(double(slot)), table.push_back(coef);
  }
  loss.track_extra = int(table.size() - start);
}

void bind_track_table(ExperimentConfig& c) {
  auto table = std::make_shared<std::vector<double>>();
  build_track_table(c, c.dt, c.steps, c.loss, *table);
  c.loss.track = table->empty() ? nullptr : table->data();
  c.track_table = table;
}

}  // namespace steer
