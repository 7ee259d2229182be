// The benchmarks' `--set key.path=value` edit of a config, applied after model.include is
// expanded (bench_peer, mass_spring_stability).
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace steer::bench {

// "a.b.c=VALUE": sets j["a"]["b"]["c"] to VALUE parsed as JSON (a bare word is a string)
inline void apply_set(nlohmann::json& j, const std::string& kv) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("--set " + kv + ": expected key.path=value");
  const std::string path = kv.substr(0, eq), text = kv.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    value = text;
  }
  nlohmann::json* node = &j;
  std::stringstream ss(path);
  std::string key;
  std::vector<std::string> keys;
  while (std::getline(ss, key, '.')) keys.push_back(key);
  for (size_t i = 0; i + 1 < keys.size(); ++i) node = &(*node)[keys[i]];
  (*node)[keys.back()] = value;
}

}  // namespace steer::bench
