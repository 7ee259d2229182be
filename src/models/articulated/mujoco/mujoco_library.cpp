#include "models/articulated/mujoco/mujoco_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace steer {
namespace {

struct Loaded {
  MujocoLibrary fns;
  bool ok = false;
  std::string why;
};

template <class Fn>
bool resolve(void* handle, const char* name, Fn& fn, std::string& why) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!fn) why = std::string("the library has no ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded out;
  std::vector<std::string> candidates;
  const char* env = std::getenv("STEER_MUJOCO_LIBRARY");
  if (env && *env) {
    candidates.push_back(env);
  } else {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // PyPI's libmujoco (the build's) stops with SIGILL on a CPU without AVX as it loads: say so
    // instead. A MuJoCo built for such a CPU can be named in STEER_MUJOCO_LIBRARY.
    if (!__builtin_cpu_supports("avx")) {
      out.why =
          "this CPU has no AVX, which the MuJoCo this build found needs (PyPI's build); "
          "STEER_MUJOCO_LIBRARY=<libmujoco.so> names one built without it";
      return out;
    }
#endif
  }
#ifdef STEER_MUJOCO_LIBRARY_PATH
  candidates.push_back(STEER_MUJOCO_LIBRARY_PATH);
#endif
#ifdef STEER_MUJOCO_LIBRARY_NAME
  candidates.push_back(STEER_MUJOCO_LIBRARY_NAME);
#endif
  std::string tried;
  for (const std::string& path : candidates) {
    // RTLD_LOCAL: MuJoCo's symbols stay out of the global namespace of the program
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + path + ": " + (e ? e : "not loadable");
      continue;
    }
    MujocoLibrary& f = out.fns;
    std::string missing;
    if (resolve(handle, "mj_loadXML", f.load_xml, missing) &&
        resolve(handle, "mj_deleteModel", f.delete_model, missing) &&
        resolve(handle, "mj_id2name", f.id2name, missing) &&
        resolve(handle, "mj_version", f.version, missing) &&
        resolve(handle, "mj_versionString", f.version_string, missing)) {
      out.ok = true;
      return out;
    }
    tried += (tried.empty() ? "" : "; ") + path + ": " + missing;
    dlclose(handle);
  }
  out.why = candidates.empty() ? "no MuJoCo library was configured"
                               : "MuJoCo's library did not load (" + tried + ")";
  return out;
}

}  // namespace

const MujocoLibrary* mujoco_library(std::string* why) {
  static const Loaded loaded = load();  // C++11: initialized once, thread-safe
  if (!loaded.ok) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.fns;
}

}  // namespace steer
