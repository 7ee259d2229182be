// Owning handles of MuJoCo's model and data for the cross-check tests that link MuJoCo:
// std::unique_ptr with MuJoCo's own deleters, so every early test exit frees them.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>

namespace steer::testing {

struct ModelFree {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataFree {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

}  // namespace steer::testing
