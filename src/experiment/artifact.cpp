#include "experiment/artifact.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace steer {

namespace fs = std::filesystem;

namespace {

// writes and flushes to disk before returning, so a later rename publishes complete data
void write_and_sync(const fs::path& p, const std::string& contents) {
  FILE* f = std::fopen(p.c_str(), "wb");
  if (!f) throw std::runtime_error("artifact: cannot create " + p.string());
  const size_t n = std::fwrite(contents.data(), 1, contents.size(), f);
  const bool ok = n == contents.size() && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("artifact: cannot write " + p.string());
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& contents) {
  fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(getpid());
  try {
    write_and_sync(tmp, contents);
    fs::rename(tmp, target);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

std::string write_artifact(const std::string& out_dir, const std::string& run_name, const ArtifactFiles& files) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw std::runtime_error("artifact: cannot create output folder '" + out_dir + "': " + ec.message());
  fs::path tmp = fs::path(out_dir) / ("." + run_name + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec) throw std::runtime_error("artifact: cannot create '" + tmp.string() + "': " + ec.message());
  try {
    for (const auto& [name, contents] : files.sidecars) write_and_sync(tmp / name, contents);
    write_and_sync(tmp / "artifact.json", files.artifact.dump(1) + "\n");
    // pick a free final name, then publish the folder with one rename
    fs::path final_dir = fs::path(out_dir) / run_name;
    for (int i = 1; fs::exists(final_dir); ++i) final_dir = fs::path(out_dir) / (run_name + "-" + std::to_string(i));
    fs::rename(tmp, final_dir);
    return final_dir.string();
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

nlohmann::json read_artifact(const std::string& folder) {
  std::ifstream f(fs::path(folder) / "artifact.json");
  if (!f) throw std::runtime_error("artifact: cannot open " + (fs::path(folder) / "artifact.json").string());
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace steer
