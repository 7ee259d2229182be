#include "config/json_reader.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace steer {

namespace {
std::string fmt(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

std::string Range::describe() const {
  return std::string(lo_open ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + (hi_open ? ")" : "]");
}

std::string json_type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

namespace {
// the length of the UTF-8 prefix of s that is at most n bytes and ends on a character boundary
std::size_t utf8_prefix(const std::string& s, std::size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}
}  // namespace

std::string excerpt(const std::string& s, std::size_t max_bytes) {
  const std::size_t n = utf8_prefix(s, max_bytes);
  std::string out;
  out.reserve(n + 8);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch == '\n') {
      out += "\\n";
    } else if (ch < 0x20 || ch == 0x7F) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    } else {
      out += char(ch);
    }
  }
  if (n < s.size()) out += "…";
  return out;
}

namespace {
std::string bounded_message(const std::string& m) {
  if (m.size() <= kMaxConfigErrorBytes) return m;
  return m.substr(0, utf8_prefix(m, kMaxConfigErrorBytes - 3)) + "…";
}
}  // namespace

ConfigError::ConfigError(const std::string& m) : std::runtime_error(bounded_message(m)) {}

void config_fail(const std::string& path, const std::string& what) {
  // a key path holds user-written keys (an unknown key, a variable's name): shown as an excerpt
  throw ConfigError("config: " + (path.empty() ? std::string("(root)") : excerpt(path, 160)) +
                    ": " + what);
}

JsonObject::JsonObject(const nlohmann::json& j, std::string path) : j_(&j), path_(std::move(path)) {
  if (!j.is_object()) config_fail(path_, "expected an object, got " + json_type_name(j));
}

std::string JsonObject::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

// every key asked about is a known key of this object, present or not
bool JsonObject::has(const std::string& key) const {
  read_.insert(key);
  return j_->contains(key);
}

const nlohmann::json& JsonObject::raw(const std::string& key) const {
  read_.insert(key);
  return j_->at(key);
}

double JsonObject::number(const std::string& key, double def, Range r) const {
  if (!has(key)) return def;
  return number_required(key, r);
}

double JsonObject::number_required(const std::string& key, Range r) const {
  if (!has(key)) config_fail(key_path(key), "missing; expected a number in " + r.describe());
  const auto& v = raw(key);
  if (!v.is_number())
    config_fail(key_path(key),
                "expected a number in " + r.describe() + ", got " + json_type_name(v));
  double x = v.get<double>();
  if (!r.contains(x))
    config_fail(key_path(key), "value " + fmt(x) + " is out of range; accepted " + r.describe());
  return x;
}

long JsonObject::integer(const std::string& key, long def, long lo, long hi) const {
  if (!has(key)) return def;
  const auto& v = raw(key);
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer())
    config_fail(key_path(key), "expected an integer in " + range + ", got " + json_type_name(v));
  // an unsigned value above LONG_MAX would wrap to a negative long and be misreported
  if (v.is_number_unsigned() &&
      (hi < 0 || v.get<unsigned long long>() > static_cast<unsigned long long>(hi)))
    config_fail(key_path(key), "value " + v.dump() + " is out of range; accepted " + range);
  long x = v.get<long>();
  if (x < lo || x > hi)
    config_fail(key_path(key),
                "value " + std::to_string(x) + " is out of range; accepted " + range);
  return x;
}

bool JsonObject::boolean(const std::string& key, bool def) const {
  if (!has(key)) return def;
  const auto& v = raw(key);
  if (!v.is_boolean())
    config_fail(key_path(key), "expected true or false, got " + json_type_name(v));
  return v.get<bool>();
}

std::string JsonObject::string(const std::string& key, const std::string& def) const {
  if (!has(key)) return def;
  const auto& v = raw(key);
  if (!v.is_string()) config_fail(key_path(key), "expected a string, got " + json_type_name(v));
  return v.get<std::string>();
}

std::string JsonObject::choice(const std::string& key, const std::string& def,
                               const std::vector<std::string>& allowed) const {
  std::string all;
  for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
  if (!has(key)) return def;
  const auto& v = raw(key);
  if (!v.is_string())
    config_fail(key_path(key), "expected one of " + all + ", got " + json_type_name(v));
  std::string s = v.get<std::string>();
  for (const auto& a : allowed)
    if (s == a) return s;
  config_fail(key_path(key), "'" + excerpt(s) + "' is not one of " + all);
}

std::vector<double> JsonObject::numbers(const std::string& key, const std::vector<double>& def,
                                        Range r, long expected_size) const {
  std::vector<double> out = def;
  if (has(key)) {
    const auto& v = raw(key);
    if (!v.is_array())
      config_fail(key_path(key),
                  "expected an array of numbers in " + r.describe() + ", got " + json_type_name(v));
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string p = key_path(key) + "[" + std::to_string(i) + "]";
      if (!v[i].is_number())
        config_fail(p, "expected a number in " + r.describe() + ", got " + json_type_name(v[i]));
      double x = v[i].get<double>();
      if (!r.contains(x))
        config_fail(p, "value " + fmt(x) + " is out of range; accepted " + r.describe());
      out.push_back(x);
    }
  }
  if (expected_size >= 0 && long(out.size()) != expected_size)
    config_fail(key_path(key), "expected " + std::to_string(expected_size) + " numbers, got " +
                                   std::to_string(out.size()));
  return out;
}

JsonObject JsonObject::object(const std::string& key) const {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!has(key)) return JsonObject(empty, key_path(key));
  return JsonObject(raw(key), key_path(key));
}

void JsonObject::finish() const {
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    if (!read_.count(it.key())) {
      std::string known;
      for (const auto& k : read_) known += (known.empty() ? "" : ", ") + excerpt(k);
      config_fail(key_path(it.key()), "unknown key; accepted keys here: " +
                                          (known.empty() ? std::string("none") : known));
    }
  }
}

}  // namespace steer
