#include "experiment/artifact.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "config/json_reader.h"

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

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "host";
  std::string h(buf);
  for (char& ch : h)
    if (ch == '/' || ch == '.') ch = '_';  // the suffix must stay one path component without dots
  return h.empty() ? "host" : h;
}

}  // namespace

bool rename_no_replace(const std::string& from_path, const std::string& to_path) {
  const fs::path from(from_path), to(to_path);
#ifdef RENAME_NOREPLACE
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS)
    throw std::runtime_error("artifact: cannot rename '" + from.string() + "' to '" + to.string() +
                             "': " + std::strerror(errno));
#endif
  // without RENAME_NOREPLACE: reserve the name with mkdir (atomic, fails when it exists), then
  // rename onto the empty folder, which POSIX rename(2) allows for directories
  if (mkdir(to.c_str(), 0777) != 0) {
    if (errno == EEXIST) return false;
    throw std::runtime_error("artifact: cannot create '" + to.string() +
                             "': " + std::strerror(errno));
  }
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw std::runtime_error("artifact: cannot rename '" + from.string() + "' to '" + to.string() +
                             "': " + std::strerror(errno));
  return true;
}

namespace {

// a ".<anything>.tmp-<host>-<pid>" entry (or the older ".<anything>.tmp-<pid>") whose process
// on this host no longer exists
bool is_stale_temp(const std::string& name, const std::string& host) {
  if (name.empty() || name[0] != '.') return false;
  const size_t t = name.rfind(".tmp-");
  if (t == std::string::npos || t == 0) return false;
  const std::string tail = name.substr(t + 5);
  const size_t dash = tail.rfind('-');
  const std::string pid_text = dash == std::string::npos ? tail : tail.substr(dash + 1);
  const std::string h = dash == std::string::npos ? host : tail.substr(0, dash);
  if (h != host || pid_text.empty() || pid_text.size() > 9) return false;
  for (char ch : pid_text)
    if (ch < '0' || ch > '9') return false;
  const pid_t pid = pid_t(std::atol(pid_text.c_str()));
  if (pid <= 0) return false;
  return kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string temp_suffix() { return ".tmp-" + host_name() + "-" + std::to_string(getpid()); }

void prepare_output_dir(const std::string& out_dir, const std::string& key) {
  auto fail = [&](const std::string& what) {
    std::string shown = out_dir.size() > 120 ? out_dir.substr(0, 120) + "…" : out_dir;
    throw ConfigError(key + ": '" + shown + "' " + what);
  };
  std::error_code ec;
  const fs::file_status st = fs::status(out_dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) fail("is not a folder");
  if (!fs::exists(st)) {
    fs::create_directories(out_dir, ec);
    if (ec) fail("cannot be created: " + ec.message());
  }
  // a probe file proves the folder takes new files (permissions, read-only mounts, quotas)
  // The random part goes before the ".tmp-<host>-<pid>" tail so that a probe left by a run
  // killed between create and unlink is recognised as stale below by the next run.
  const std::string tail = temp_suffix();
  std::string probe = (fs::path(out_dir) / (".steer-probe-XXXXXX" + tail)).string();
  std::vector<char> buf(probe.begin(), probe.end());
  buf.push_back('\0');
  const int fd = mkstemps(buf.data(), int(tail.size()));
  if (fd < 0) fail(std::string("is not writable: ") + std::strerror(errno));
  close(fd);
  unlink(buf.data());
  // what killed runs of this host left behind
  const std::string host = host_name();
  for (fs::directory_iterator it(out_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_stale_temp(name, host)) {
      std::error_code rm;
      fs::remove_all(it->path(), rm);
    }
  }
}

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

std::string write_artifact(const std::string& out_dir, const std::string& run_name,
                           const ArtifactFiles& files) {
  return write_artifact(out_dir, run_name, files, nullptr);
}

std::string write_artifact(const std::string& out_dir, const std::string& run_name,
                           const ArtifactFiles& files,
                           const std::function<void(const std::string&)>& before_publish) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec)
    throw std::runtime_error("artifact: cannot create output folder '" + out_dir +
                             "': " + ec.message());
  fs::path tmp = fs::path(out_dir) / ("." + run_name + temp_suffix());
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec)
    throw std::runtime_error("artifact: cannot create '" + tmp.string() + "': " + ec.message());
  try {
    for (const auto& [name, contents] : files.sidecars) write_and_sync(tmp / name, contents);
    write_and_sync(tmp / "artifact.json", files.artifact.dump(1) + "\n");
    if (before_publish) before_publish(tmp.string());
    // publish under the first free name; a name another run takes between our tries only
    // moves us on to the next suffix
    fs::path final_dir = fs::path(out_dir) / run_name;
    for (int i = 1; !rename_no_replace(tmp.string(), final_dir.string()); ++i) {
      if (i > 100000)
        throw std::runtime_error("artifact: no free folder name for '" + run_name + "' in '" +
                                 out_dir + "'");
      final_dir = fs::path(out_dir) / (run_name + "-" + std::to_string(i));
    }
    return final_dir.string();
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

nlohmann::json read_artifact(const std::string& folder) {
  std::ifstream f(fs::path(folder) / "artifact.json");
  if (!f)
    throw std::runtime_error("artifact: cannot open " +
                             (fs::path(folder) / "artifact.json").string());
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace steer
