// Strict reading of JSON config objects: every access names its key path, every value
// is type- and range-checked, and keys nobody read are rejected as unknown. Errors are
// ConfigError, which the CLI turns into exit code 2.
#pragma once

#include <cstddef>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace steer {

// A message longer than kMaxConfigErrorBytes is cut there (with "…"): every message quotes
// user values as excerpts (excerpt() below), and this bound keeps a missed one from printing
// megabytes.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& m);
};
constexpr std::size_t kMaxConfigErrorBytes = 1500;

// a user value for a message: at most max_bytes bytes of s (never splitting a UTF-8 sequence)
// followed by "…" when cut; control characters are shown escaped (\n, \u001b) so that a value
// cannot move the cursor or recolour the terminal
std::string excerpt(const std::string& s, std::size_t max_bytes = 60);
// a number for a message, to 9 significant digits (%.9g): enough to tell two limits apart
std::string number_text(double v);

// a closed interval with optional open ends, used to check and to describe a range
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  static Range positive() { return Range{0, std::numeric_limits<double>::infinity(), true, false}; }
  static Range nonnegative() {
    return Range{0, std::numeric_limits<double>::infinity(), false, false};
  }
  static Range closed(double a, double b) { return Range{a, b, false, false}; }
  bool contains(double v) const {
    if (!(v == v)) return false;
    if (lo_open ? !(v > lo) : !(v >= lo)) return false;
    if (hi_open ? !(v < hi) : !(v <= hi)) return false;
    return true;
  }
  std::string describe() const;
};

class JsonObject {
 public:
  // j must be an object; path is its key path for messages ("" for the root)
  JsonObject(const nlohmann::json& j, std::string path);

  bool has(const std::string& key) const;
  // whether key was asked for (has, raw or a typed read) since construction
  bool was_read(const std::string& key) const { return read_.count(key) != 0; }
  const nlohmann::json& raw(const std::string& key) const;  // marks the key as read
  std::string key_path(const std::string& key) const;

  double number(const std::string& key, double def, Range r) const;
  double number_required(const std::string& key, Range r) const;
  long integer(const std::string& key, long def, long lo, long hi) const;
  bool boolean(const std::string& key, bool def) const;
  std::string choice(const std::string& key, const std::string& def,
                     const std::vector<std::string>& allowed) const;
  std::string string(const std::string& key, const std::string& def) const;
  // a list of numbers, each in r; size checked when expected_size >= 0
  std::vector<double> numbers(const std::string& key, const std::vector<double>& def, Range r,
                              long expected_size = -1) const;
  JsonObject object(const std::string& key) const;  // {} when absent

  // throws for every key that was never read
  void finish() const;
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json* j_;
  std::string path_;
  mutable std::set<std::string> read_;
};

[[noreturn]] void config_fail(const std::string& path, const std::string& what);

// describes a JSON value's type in words for messages
std::string json_type_name(const nlohmann::json& v);

}  // namespace steer
