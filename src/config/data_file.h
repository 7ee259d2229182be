// Numeric tables from files a config names (per-step references, observations, control
// sequences): CSV with an optional header row of column names, or NumPy .npy (1-D or 2-D,
// float64, float32 or int32/int64, little-endian, C or Fortran order). Every error is a
// ConfigError naming the config key that gave the file.
#pragma once

#include <string>
#include <vector>

namespace steer {

struct DataTable {
  std::vector<std::string>
      columns;  // the CSV header's names; empty without a header (and for .npy)
  int rows = 0, cols = 0;
  std::vector<double> values;  // row-major [rows][cols]; NaN marks a missing value
  std::string digest;  // FNV-1a 64 of the file's bytes, 16 hex digits (the artifact records it)
  std::vector<long> shape;  // a .npy array's shape (values in C order: the last index fastest)
  double at(int r, int c) const { return values[size_t(r) * cols + c]; }
};

// the largest data file read [bytes]
constexpr long long kMaxDataFileBytes = 1LL << 30;

// path as given, or relative to base_dir when it is relative (base_dir "" = the working folder)
std::string resolve_data_path(const std::string& path, const std::string& base_dir);

// reads a .npy file (by its extension) or a CSV file (any other name). CSV: fields separated by
// commas, blank lines and lines starting with '#' skipped, the first row a header when any of
// its fields is not a number; an empty field or "nan" is a missing value. key names the config
// key in messages.
DataTable read_data_file(const std::string& path, const std::string& key);

// reads a .npy array of up to max_dims dimensions (shape in .shape; rows = the first, cols = the
// product of the others; values in C order)
DataTable read_npy_array(const std::string& path, const std::string& key, int max_dims);

// the NPY bytes of a float64 array of the given shape (C order), for the artifact's side files
std::string npy_bytes(const std::vector<double>& values, const std::vector<long>& shape);

}  // namespace steer
