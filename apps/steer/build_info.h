// What `steer --version` prints: steer's version, the commit it was built from, the MuJoCo it
// links for MJCF/URDF import, and whether the CUDA backend is in and a device answers.
#pragma once

#include <string>

namespace steer_cli {

// the commit the build folder was configured from (git rev-parse HEAD, 12 hex digits), or
// "unknown" outside a git checkout; defined in the source CMake generates from build_info.cpp.in
extern const char* const kGitCommit;

// the lines of `steer --version`, each ending in a newline
std::string version_text();

}  // namespace steer_cli
