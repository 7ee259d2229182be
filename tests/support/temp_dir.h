// A temporary folder for one test, removed with everything in it when the test ends.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

namespace steer::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "steer_test") {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           (prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace steer::testing
