#include "config/data_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "config/json_reader.h"

namespace steer {

namespace {

std::string read_whole(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) config_fail(key, "cannot open '" + excerpt(path, 160) + "': " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const long long size = (long long)in.tellg();
  if (size < 0) config_fail(key, "cannot read '" + excerpt(path, 160) + "'");
  if (size > kMaxDataFileBytes)
    config_fail(key, "'" + excerpt(path, 160) + "' has " + std::to_string(size) +
                         " bytes, more than the limit of " + std::to_string(kMaxDataFileBytes));
  in.seekg(0);
  std::string s(size_t(size), '\0');
  in.read(&s[0], size);
  if (!in) config_fail(key, "cannot read '" + excerpt(path, 160) + "'");
  return s;
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return s.substr(a, b - a);
}

// a CSV field as a number: true and v set, NaN for a missing value ("" or nan); false otherwise
bool field_value(const std::string& f, double& v) {
  if (f.empty() || f == "nan" || f == "NaN" || f == "NAN") {
    v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const char* b = f.c_str();
  char* e = nullptr;
  errno = 0;
  v = std::strtod(b, &e);
  return e != b && *e == '\0' && std::isfinite(v);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  size_t a = 0;
  for (;;) {
    const size_t c = line.find(',', a);
    out.push_back(trim(line.substr(a, c == std::string::npos ? std::string::npos : c - a)));
    if (c == std::string::npos) break;
    a = c + 1;
  }
  return out;
}

DataTable read_csv(const std::string& text, const std::string& path, const std::string& key) {
  DataTable t;
  std::istringstream in(text);
  std::string line;
  long line_no = 0;
  bool first = true;
  const std::string where = "'" + excerpt(path, 160) + "' line ";
  while (std::getline(in, line)) {
    ++line_no;
    const std::string l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    const std::vector<std::string> f = split(l);
    if (first) {
      first = false;
      t.cols = int(f.size());
      bool header = false;
      double v;
      for (const auto& x : f) header = header || (!field_value(x, v) && !x.empty());
      if (header) {
        for (const auto& x : f) {
          if (x.empty())
            config_fail(key,
                        where + std::to_string(line_no) + ": the header has an empty column name");
          for (const auto& y : t.columns)
            if (y == x)
              config_fail(key, where + std::to_string(line_no) + ": the header names column '" +
                                   excerpt(x) + "' twice");
          t.columns.push_back(x);
        }
        continue;
      }
    }
    if (int(f.size()) != t.cols)
      config_fail(key, where + std::to_string(line_no) + ": " + std::to_string(f.size()) +
                           " fields, expected " + std::to_string(t.cols) + " (as the first row)");
    for (const auto& x : f) {
      double v;
      if (!field_value(x, v))
        config_fail(key,
                    where + std::to_string(line_no) + ": '" + excerpt(x) +
                        "' is not a finite number (an empty field or nan marks a missing value)");
      t.values.push_back(v);
    }
    ++t.rows;
  }
  if (t.rows == 0) config_fail(key, "'" + excerpt(path, 160) + "' has no data rows");
  return t;
}

// a value of the NPY header dict: the text after 'name': up to the next top-level ',' or '}'
std::string npy_field(const std::string& h, const std::string& name, const std::string& key,
                      const std::string& path) {
  size_t p = h.find("'" + name + "'");
  if (p == std::string::npos) p = h.find("\"" + name + "\"");
  if (p == std::string::npos)
    config_fail(key,
                "'" + excerpt(path, 160) + "' is not a valid .npy file: its header has no " + name);
  p = h.find(':', p);
  if (p == std::string::npos)
    config_fail(key, "'" + excerpt(path, 160) + "' is not a valid .npy file: malformed header");
  ++p;
  int depth = 0;
  size_t e = p;
  for (; e < h.size(); ++e) {
    const char ch = h[e];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
  }
  return trim(h.substr(p, e - p));
}

DataTable read_npy(const std::string& s, const std::string& path, const std::string& key,
                   int max_dims) {
  const std::string bad = "'" + excerpt(path, 160) + "' is not a valid .npy file: ";
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) config_fail(key, bad + "no NUMPY magic");
  const int major = (unsigned char)s[6];
  size_t hlen = 0, off = 0;
  if (major == 1) {
    hlen = (unsigned char)s[8] | ((unsigned char)s[9] << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (s.size() < 12) config_fail(key, bad + "truncated header");
    hlen = size_t((unsigned char)s[8]) | (size_t((unsigned char)s[9]) << 8) |
           (size_t((unsigned char)s[10]) << 16) | (size_t((unsigned char)s[11]) << 24);
    off = 12;
  } else {
    config_fail(key, bad + "format version " + std::to_string(major) + " (1, 2 and 3 are read)");
  }
  if (off + hlen > s.size()) config_fail(key, bad + "truncated header");
  const std::string h = s.substr(off, hlen);
  std::string descr = npy_field(h, "descr", key, path);
  const std::string fortran = npy_field(h, "fortran_order", key, path);
  const std::string shape = npy_field(h, "shape", key, path);
  if (descr.size() >= 2 && (descr[0] == '\'' || descr[0] == '"'))
    descr = descr.substr(1, descr.size() - 2);
  int size = 0;
  char kind = 0;
  if (descr == "<f8" || descr == "=f8" || descr == "float64")
    size = 8, kind = 'f';
  else if (descr == "<f4" || descr == "=f4")
    size = 4, kind = 'f';
  else if (descr == "<i8" || descr == "=i8")
    size = 8, kind = 'i';
  else if (descr == "<i4" || descr == "=i4")
    size = 4, kind = 'i';
  else
    config_fail(
        key, "'" + excerpt(path, 160) + "' holds dtype " + excerpt(descr) +
                 "; accepted: little-endian float64, float32, int64, int32 (<f8, <f4, <i8, <i4)");
  // shape: "(r,)" or "(r, c)"
  std::vector<long> dims;
  {
    std::string in = shape;
    if (in.size() < 2 || in.front() != '(' || in.back() != ')')
      config_fail(key, bad + "malformed shape " + excerpt(shape));
    in = in.substr(1, in.size() - 2);
    for (const std::string& f : split(in)) {
      if (f.empty()) continue;
      char* e = nullptr;
      const long v = std::strtol(f.c_str(), &e, 10);
      if (*e != '\0' || v < 0) config_fail(key, bad + "malformed shape " + excerpt(shape));
      dims.push_back(v);
    }
  }
  if (dims.empty() || int(dims.size()) > max_dims)
    config_fail(
        key, "'" + excerpt(path, 160) + "' has " + std::to_string(dims.size()) +
                 " dimensions; expected a 1-D " +
                 (max_dims == 2 ? std::string("or 2-D") : "to " + std::to_string(max_dims) + "-D") +
                 " array");
  DataTable t;
  t.shape = dims;
  t.rows = int(dims[0]);
  t.cols = 1;
  for (size_t d = 1; d < dims.size(); ++d) t.cols *= int(dims[d]);
  if (t.rows == 0 || t.cols == 0)
    config_fail(key, "'" + excerpt(path, 160) + "' is an empty array");
  const size_t n = size_t(t.rows) * size_t(t.cols);
  const size_t data = off + hlen;
  if (s.size() - data != n * size_t(size))
    config_fail(key, bad + std::to_string(s.size() - data) + " data bytes for shape " +
                         excerpt(shape) + ", expected " + std::to_string(n * size_t(size)));
  const bool f_order = fortran == "True";
  t.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const char* p = s.data() + data + i * size_t(size);
    double v;
    if (kind == 'f' && size == 8) {
      std::memcpy(&v, p, 8);
    } else if (kind == 'f') {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (size == 8) {
      std::int64_t q;
      std::memcpy(&q, p, 8);
      v = double(q);
    } else {
      std::int32_t q;
      std::memcpy(&q, p, 4);
      v = double(q);
    }
    if (std::isinf(v))
      config_fail(key,
                  "'" + excerpt(path, 160) + "' holds an infinite value (NaN marks a missing one)");
    // element i of a Fortran-order array has its first index varying fastest: its C-order place
    // is the same multi-index read in the other order
    size_t at = i;
    if (f_order) {
      size_t rest = i;
      at = 0;
      std::vector<size_t> strides(dims.size(), 1);
      for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * size_t(dims[d]);
      for (size_t d = 0; d < dims.size(); ++d) {
        const size_t idx = rest % size_t(dims[d]);
        rest /= size_t(dims[d]);
        at += idx * strides[d];
      }
    }
    t.values[at] = v;
  }
  return t;
}

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

}  // namespace

std::string resolve_data_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

DataTable read_data_file(const std::string& path, const std::string& key) {
  if (path.empty()) config_fail(key, "expected a file name, got an empty string");
  if (path.find('\0') != std::string::npos) config_fail(key, "the file name holds a NUL character");
  const std::string text = read_whole(path, key);
  DataTable t = ends_with(path, ".npy") ? read_npy(text, path, key, 2) : read_csv(text, path, key);
  // which bytes the run read, so that an artifact names its data by content as well as by path
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)h);
  t.digest = hex;
  return t;
}

DataTable read_npy_array(const std::string& path, const std::string& key, int max_dims) {
  if (path.empty()) config_fail(key, "expected a file name, got an empty string");
  if (!ends_with(path, ".npy"))
    config_fail(key, "'" + excerpt(path, 160) + "': expected a .npy file");
  const std::string text = read_whole(path, key);
  return read_npy(text, path, key, max_dims);
}

std::string npy_bytes(const std::vector<double>& values, const std::vector<long>& shape) {
  std::string dims;
  for (long d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(header.size() & 0xff);
  out += char((header.size() >> 8) & 0xff);
  out += header;
  const size_t at = out.size();
  out.resize(at + values.size() * sizeof(double));
  if (!values.empty()) std::memcpy(&out[at], values.data(), values.size() * sizeof(double));
  return out;
}

}  // namespace steer
