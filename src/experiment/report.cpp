#include "experiment/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "experiment/artifact.h"
#include "experiment/report_page.h"

namespace steer {

namespace fs = std::filesystem;

namespace {

// each label's meaning and remedy in one line (docs/validation.md has the whole story)
nlohmann::json label_docs() {
  auto d = [](const char* meaning, const char* todo, const char* anchor) {
    return nlohmann::json{{"meaning", meaning}, {"todo", todo}, {"anchor", anchor}};
  };
  return {
      {"fd_mismatch", d("the adjoint gradient and centred finite differences disagree beyond the "
                        "tolerance at every ε of the sweep",
                        "do not use this rollout's gradient; a V-shaped ε curve with a high floor "
                        "means a non-smooth loss, a flat high one a wrong adjoint",
                        "fd_mismatch")},
      {"nonfinite",
       d("a loss, state or gradient is inf or NaN",
         "look for a blow-up: smaller dt, softer contact, bounds on the variables", "nonfinite")},
      {"contact_mode_switch",
       d("the set of active contacts differs between the +ε and −ε rollouts, so the FD straddles a "
         "contact event",
         "the FD is no reference here; read the smaller ε of the sweep, or smooth the contact",
         "contact_mode_switch")},
      {"gradient_vanishing", d("the adjoint shrinks by more than the bound over the horizon: early "
                               "inputs barely reach the loss",
                               "shorten the horizon, lower the damping, or optimize in stages",
                               "gradient_vanishing-gradient_exploding")},
      {"gradient_exploding", d("the adjoint grows by more than the bound over the horizon: the "
                               "loss is chaotic in early inputs",
                               "shorten the horizon, add damping or smoothing, or use continuation",
                               "gradient_vanishing-gradient_exploding")},
      {"penetration", d("the contact point sinks deeper than validation.penetration_bound",
                        "stiffer contact or a smaller dt", "penetration")},
      {"inverted_element",
       d("an element turns inside out or flat (J = det F <= 0)",
         "a smaller dt, stiffer material or softer actuation", "inverted_element")},
      {"energy_drift", d("in free motion the integrator's energy error exceeds the bound",
                         "a smaller dt or a more accurate integrator", "energy_drift")},
      {"float32_rounding",
       d("the float32 gradient differs from the float64 one beyond validation.float32_tolerance",
         "run in float64", "float32_rounding")},
      {"timestep_sensitive",
       d("at half the timestep the gradient (or the optimum's loss) changes beyond "
         "validation.timestep_tolerance",
         "the result belongs to the discretization: halve dt and run again before trusting it",
         "timestep_sensitive")},
      {"secant_mismatch",
       d("on a contact rollout the gradient disagrees with a wide secant of the loss",
         "the local gradient misleads across contact events: smooth the contact or compare with a "
         "black-box search",
         "secant_mismatch")},
      {"chatter", d("a velocity turns back at more than validation.chatter_fraction of the steps: "
                    "an oscillation the timestep does not resolve",
                    "a smaller dt, more damping, or the implicit integrator", "chatter")},
      {"narrow_valley",
       d("perturbing the named parameter raises the optimum's loss sharply",
         "the optimum is fragile in that parameter: widen the batch's draws", "narrow_valley")},
  };
}

// compare.csv -> per (repeat, method) curve, at most max_points points spread evenly in log
// rollouts (the curves are monotone steps, so the kept points keep their shape)
nlohmann::json compare_curves(const std::string& text, int max_points) {
  struct Curve {
    int repeat;
    std::string method;
    std::vector<double> x, y;
  };
  std::vector<Curve> cs;
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    if (line.empty()) continue;
    // repeat,"method",rollouts,best_loss (the method is quoted and may hold commas)
    const size_t q1 = line.find('"'), q2 = line.rfind('"');
    if (q1 == std::string::npos || q2 <= q1) continue;
    const int rep = std::atoi(line.substr(0, q1).c_str());
    const std::string method = line.substr(q1 + 1, q2 - q1 - 1);
    double x = 0, y = 0;
    if (std::sscanf(line.c_str() + q2 + 1, ",%lf,%lf", &x, &y) != 2) continue;
    if (cs.empty() || cs.back().repeat != rep || cs.back().method != method)
      cs.push_back({rep, method, {}, {}});
    cs.back().x.push_back(x);
    cs.back().y.push_back(y);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const Curve& c : cs) {
    nlohmann::json xs = nlohmann::json::array(), ys = nlohmann::json::array();
    const double lx0 = std::log10(std::max(1.0, c.x.empty() ? 1.0 : c.x.front()));
    const double lx1 = std::log10(std::max(1.0, c.x.empty() ? 1.0 : c.x.back()));
    const double gap = (lx1 - lx0) / std::max(1, max_points);
    double next = -1e300;
    for (size_t i = 0; i < c.x.size(); ++i) {
      const double lx = std::log10(std::max(1.0, c.x[i]));
      if (lx < next && i + 1 != c.x.size()) continue;
      next = lx + gap;
      xs.push_back(c.x[i]);
      ys.push_back(std::isfinite(c.y[i]) ? nlohmann::json(c.y[i]) : nlohmann::json(nullptr));
    }
    out.push_back({{"repeat", c.repeat}, {"method", c.method}, {"x", xs}, {"y", ys}});
  }
  return out;
}

// JSON that can sit inside <script>: '<', '>' and '&' only occur inside strings in JSON
// text, where \u escapes mean the same characters, so no "</script>" or "<!--" survives
std::string script_safe_json(const nlohmann::json& j) {
  const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string o;
  o.reserve(s.size() + 64);
  for (char ch : s) {
    if (ch == '<')
      o += "\\u003c";
    else if (ch == '>')
      o += "\\u003e";
    else if (ch == '&')
      o += "\\u0026";
    else
      o += ch;
  }
  return o;
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += ch;
    }
  }
  return o;
}

std::string page(const nlohmann::json& data, const std::string& title) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  // nothing may load from elsewhere: the page's own inline style and script only
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n";
  h += "<title>" + html_escape(title) + "</title>\n<style>" + std::string(kReportStyle) +
       "</style>\n";
  // errors anywhere on the page, collected for the page's self-check (docs/report.md)
  h += "<script>window.__steerErrors=[];window.addEventListener('error',function(e){window.__"
       "steerErrors.push(String(e.message)+' line '+e.lineno);});</script>\n";
  h += "</head><body><div id=\"main\"></div>\n<pre id=\"selftest\" class=\"small\"></pre>\n";
  h += "<script type=\"application/json\" id=\"steer-data\">" + script_safe_json(data) +
       "</script>\n";
  h += "<script>" + std::string(kReportScript) + "</script>\n";
  h += "<noscript>This report draws its figures with JavaScript; artifact.json holds the same "
       "data.</noscript>\n";
  h += "</body></html>\n";
  return h;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::string();
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

std::string render_report(const nlohmann::json& artifact, const std::string& trajectory_csv,
                          const std::string& compare_csv, const ExperimentConfig* c) {
  // the page carries the artifact without what it draws otherwise: the raw config (the
  // effective config says the same with defaults) and the trajectory (the scene has the motion)
  nlohmann::json art = artifact;
  if (art.is_object()) {
    art.erase("config");
    if (art.contains("trajectory") && art["trajectory"].is_object()) {
      nlohmann::json t = art["trajectory"];
      t.erase("rollouts");
      art["trajectory"] = t;
    }
  }
  RecordedTrajectory tr;
  std::vector<std::string> notes;
  try {
    tr = parse_trajectory_csv(trajectory_csv);
  } catch (const std::exception& e) {
    notes.push_back(std::string("the motion is not drawn: ") + e.what());
  }
  if (!c && !tr.rollouts.empty())
    notes.push_back(
        "the motion is not drawn: the run's model could not be rebuilt from its config");
  const nlohmann::json docs = label_docs();
  const nlohmann::json curves = compare_curves(compare_csv, 400);
  // fewer frames until the page fits its budget; then the effective config goes
  std::string html;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int frames = 240 >> std::min(attempt, 5);
    nlohmann::json data = {{"artifact", art}, {"label_docs", docs}, {"compare_curves", curves}};
    // the page must not cost the run its folder: a drawing that fails leaves a note instead
    nlohmann::json scene;
    std::string scene_error;
    try {
      scene = report_scene(c, artifact, tr, frames);
    } catch (const std::exception& e) {
      scene = nullptr;
      scene_error = std::string("the motion is not drawn: ") + e.what();
    }
    if (!scene.is_null() && !tr.rollouts.empty()) {
      const size_t recorded = tr.rollouts.front().state.size();
      scene["frames_note"] = std::to_string(scene["rollouts"][0]["p"].size()) + " of " +
                             std::to_string(recorded) + " recorded states per rollout shown, and " +
                             std::to_string(scene["rollouts"].size()) + " of " +
                             std::to_string(tr.rollouts.size()) + " recorded rollouts";
    }
    data["scene"] = scene;
    // last resorts, for batches far beyond the shipped configs: the listed initial states,
    // then the per-rollout checks
    nlohmann::json page_notes = notes;
    if (!scene_error.empty()) page_notes.push_back(scene_error);
    if (attempt >= 6) data["artifact"].erase("initial");
    if (attempt >= 7) {
      data["artifact"].erase("validation");
      page_notes.push_back(
          "the gradient checks are left out to keep the page under its size budget; artifact.json "
          "has them");
    }
    data["notes"] = page_notes;
    const std::string title = "steer " + artifact.value("command", std::string("run")) + ": " +
                              (artifact.contains("effective_config")
                                   ? artifact["effective_config"].value("name", std::string())
                                   : std::string());
    html = page(data, title);
    if (html.size() < kReportBudgetBytes) break;
  }
  return html;
}

std::string rebuild_report(const std::string& run_dir) {
  const fs::path dir(run_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ConfigError("RUN_DIR: '" + run_dir +
                      "' is not a folder (expected a run folder holding artifact.json)");
  if (!fs::is_regular_file(dir / "artifact.json", ec))
    throw ConfigError("RUN_DIR: '" + run_dir + "' is not a run folder: it has no artifact.json");
  nlohmann::json art;
  try {
    art = nlohmann::json::parse(read_text(dir / "artifact.json"));
  } catch (const std::exception& e) {
    throw ConfigError("RUN_DIR: '" + run_dir +
                      "/artifact.json' is not valid JSON: " + std::string(e.what()).substr(0, 200));
  }
  if (!art.is_object() || art.value("format", std::string()) != "steer.artifact/1")
    throw ConfigError(
        "RUN_DIR: '" + run_dir +
        "/artifact.json' is not a steer artifact (format must be \"steer.artifact/1\")");
  // the config the run was made from, for the model's drawing; without it the page still
  // shows everything else
  std::unique_ptr<ExperimentConfig> cfg;
  if (art.contains("config") && art["config"].is_object()) {
    try {
      // data and model files named relative to the config are read from its folder
      const std::string folder = art.value("config_folder", std::string());
      cfg = std::make_unique<ExperimentConfig>(parse_config(art["config"], folder));
    } catch (const std::exception&) {
      cfg.reset();
    }
  }
  const std::string html = render_report(art, read_text(dir / "trajectory.csv"),
                                         read_text(dir / "compare.csv"), cfg.get());
  const std::string out = (dir / "report.html").string();
  write_file_atomic(out, html);
  return out;
}

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[64];
  const long long t = (long long)std::llround(s);
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lld h %02lld min", t / 3600, (t % 3600) / 60);
  else if (t >= 60)
    std::snprintf(buf, sizeof buf, "%lld min %02lld s", t / 60, t % 60);
  else if (s >= 10)
    std::snprintf(buf, sizeof buf, "%lld s", t);
  else
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

ProgressLine::ProgressLine(bool enabled, std::string what, long long total, std::string unit,
                           double every_s, int tty)
    : enabled_(enabled),
      tty_(enabled && (tty < 0 ? isatty(STDERR_FILENO) != 0 : tty == 1)),
      what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      every_s_(every_s),
      t0_(clock::now()),
      last_(t0_) {}

ProgressLine::~ProgressLine() {
  // a line left open by an exception still ends, so the error message starts on its own line
  if (tty_ && printed_ && !finished_) std::cerr << "\n";
}

void ProgressLine::update(long long done, const std::string& extra) {
  if (!enabled_ || finished_) return;
  done_ = done;
  const auto now = clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  // a terminal line is cheap to rewrite: a few times a second; plain lines at every_s
  if (printed_ && since < (tty_ ? 0.25 : every_s_)) return;
  last_ = now;
  print(done, extra, false);
}

void ProgressLine::finish(const std::string& extra) {
  if (!enabled_ || finished_) return;
  print(done_ < total_ ? done_ : total_, extra, true);
  finished_ = true;
}

void ProgressLine::print(long long done, const std::string& extra, bool last) {
  const double el = std::chrono::duration<double>(clock::now() - t0_).count();
  std::ostringstream s;
  s << "steer: " << what_ << " " << done << "/" << total_;
  if (total_ > 0) s << " (" << int(100.0 * double(done) / double(total_)) << "%)";
  if (!extra.empty()) s << "  " << extra;
  const double rate = el > 0 && done > 0 ? double(done) / el : 0;
  if (rate > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, rate >= 100 ? "%.0f" : rate >= 1 ? "%.2f" : "%.3f", rate);
    s << "  " << buf << " " << unit_ << "/s";
  }
  if (last)
    s << "  done in " << duration_text(el);
  else if (rate > 0 && total_ > done)
    s << "  ETA " << duration_text(double(total_ - done) / rate);
  std::string line = s.str();
  if (tty_) {
    // rewrite in place; pad over a longer previous line
    const size_t w = line.size();
    if (w < width_) line += std::string(width_ - w, ' ');
    width_ = w;
    std::cerr << "\r" << line << (last ? "\n" : "") << std::flush;
  } else {
    std::cerr << line << "\n";
  }
  printed_ = true;
}

}  // namespace steer
