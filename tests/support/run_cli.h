// Runs the steer CLI (STEER_BINARY, set by tests/CMakeLists.txt's steer_test) as a user would
// and captures its exit code, stdout and stderr; shared by the CLI-level tests.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace steer::testing {

struct CliResult {
  int code = -1;
  std::string out, err;
};

// runs `steer ARGS` with stdout and stderr captured into files under dir (removed afterwards)
inline CliResult run_steer(const std::string& args, const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = std::string("'") + STEER_BINARY + "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  auto read = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read(out);
  r.err = read(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace steer::testing
