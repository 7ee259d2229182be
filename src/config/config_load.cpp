// A config from its file: the text read with the reader's caps, model.include merged, and the
// folder its relative file names are read from.
#include <filesystem>

#include "config/config.h"
#include "config/json_text.h"

namespace steer {

std::string absolute_config_folder(const ExperimentConfig& c) {
  std::error_code ec;
  const std::filesystem::path folder =
      std::filesystem::absolute(c.base_dir.empty() ? "." : c.base_dir, ec);
  return ec ? c.base_dir : folder.lexically_normal().string();
}

namespace {

// model.include into out (moved in and out: a config is never copied here). The include file
// gets the same caps as the config (json_text.h); it must be a JSON object of model keys, not
// the config itself (config_id) nor another whole config, and may not include further: one
// level, so there is no cycle to follow.
nlohmann::json expand_model_include(nlohmann::json out, const std::string& base_dir,
                                    const FileIdentity& config_id) {
  if (!out.is_object() || !out.contains("model") || !out["model"].is_object() ||
      !out["model"].contains("include"))
    return out;
  nlohmann::json& m = out["model"];
  if (!m["include"].is_string())
    config_fail("model.include", "expected a file name relative to the config's folder, got " +
                                     json_type_name(m["include"]));
  const std::string rel = m["include"].get<std::string>();
  const std::string shown = "'" + excerpt(rel, 160) + "'";
  if (rel.empty())
    config_fail("model.include",
                "expected a file name relative to the config's folder, got an empty string");
  // the C library would read the name up to its first NUL: another file than the one written
  if (rel.find('\0') != std::string::npos)
    config_fail("model.include", shown + " holds a NUL character (\\u0000)");
  // relative to the config's folder; an absolute path as it is
  const std::string path =
      rel[0] == '/' ? rel : (base_dir.empty() ? std::string(".") : base_dir) + "/" + rel;
  FileIdentity id;
  const std::string text = read_bounded_file(path, "config: model.include", &id);
  if (id.same(config_id))
    config_fail("model.include", shown + " is this config itself; include a file of model keys");
  nlohmann::json frag = parse_json_text(text, "config: model.include", rel);
  if (!frag.is_object())
    config_fail("model.include",
                shown + " must hold a JSON object of model keys, not " + json_type_name(frag));
  if (frag.contains("include"))
    config_fail(
        "model.include",
        shown +
            " has an include of its own; includes do not nest (one file of model keys per config)");
  if (frag.contains("model") || frag.contains("simulation"))
    config_fail("model.include", shown + " is a whole config (it has a " +
                                     std::string(frag.contains("model") ? "model" : "simulation") +
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

}  // namespace steer
