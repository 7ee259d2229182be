// `steer --version` (build_info.h). The MuJoCo line asks the library at run time
// (mj_versionString, through mujoco_library.h's loader), since the shared libmujoco may be newer
// than the headers the build saw, or missing.
#include <sstream>
#include <string>

#include "build_info.h"
#include "steer/backend.h"
#ifdef STEER_CLI_MUJOCO
#include "models/articulated/mujoco/mujoco_library.h"
#endif
#if !defined(STEER_CLI_MUJOCO) && __has_include("steer_mujoco_status.h")
#include "steer_mujoco_status.h"  // STEER_MUJOCO_OFF_REASON, why not (cmake/mujoco_import.cmake)
#endif

namespace steer_cli {

std::string version_text() {
  std::ostringstream s;
  s << "steer " << STEER_VERSION << "\n";
  s << "commit: " << kGitCommit << "\n";
#ifdef STEER_CLI_MUJOCO
  std::string why;
  if (const steer::MujocoLibrary* mj = steer::mujoco_library(&why)) {
    s << "MuJoCo import: on (MuJoCo " << mj->version_string();
    // mj_version() is encoded as mjVERSION_HEADER (10⁶·major + 10³·minor + patch since MuJoCo 3.5)
    if (mj->version() != mjVERSION_HEADER) s << ", built against headers " << mjVERSION_HEADER;
    s << ")\n";
  } else {
    s << "MuJoCo import: on, but " << why << "\n";
  }
#else
#ifdef STEER_MUJOCO_OFF_REASON
  s << "MuJoCo import: off (" STEER_MUJOCO_OFF_REASON "; model.mjcf and model.urdf are refused)\n";
#else
  s << "MuJoCo import: off (model.mjcf and model.urdf are refused)\n";
#endif
#endif
  const steer::CudaStatus cuda = steer::cuda_status();
  // "CUDA: off: this build has no CUDA backend (…)", "CUDA: on, no CUDA device: …" or
  // "CUDA: on, device NVIDIA H200 (…)"
  if (!cuda.compiled)
    s << "CUDA: off: " << cuda.reason << "\n";
  else if (cuda.available)
    s << "CUDA: on, device " << cuda.device << "\n";
  else
    s << "CUDA: on, " << cuda.reason << "\n";
  return s.str();
}

}  // namespace steer_cli
