// MuJoCo's library, loaded when an import first needs it (dlopen) rather than when a program
// starts. PyPI's build of libmujoco executes AVX instructions in its initializers, so a program
// linked to it could not start on a CPU without AVX, not even for a run that imports nothing
// (tests/backend/portable_cpu.cmake runs the CLI on such a CPU). Loaded this way, only an
// MJCF/URDF import needs what MuJoCo needs.
#pragma once

#include <mujoco/mujoco.h>

#include <string>

namespace steer {

// The MuJoCo functions steer calls, resolved from the loaded library
struct MujocoLibrary {
  decltype(&::mj_loadXML) load_xml = nullptr;
  decltype(&::mj_deleteModel) delete_model = nullptr;
  decltype(&::mj_id2name) id2name = nullptr;
  decltype(&::mj_version) version = nullptr;
  decltype(&::mj_versionString) version_string = nullptr;
};

// The library, loaded once (thread-safe): from the environment's STEER_MUJOCO_LIBRARY when set,
// else from the file the build found (STEER_MUJOCO_LIBRARY_PATH), else by its file name on the
// loader's search path. nullptr when none loads or a function is missing; *why then says what
// was tried and the loader's message.
const MujocoLibrary* mujoco_library(std::string* why);

}  // namespace steer
