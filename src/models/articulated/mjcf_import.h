// model.mjcf / model.urdf for type articulated: a robot file compiled by MuJoCo's own
// compiler (mj_loadXML reads both formats) and mapped onto steer's articulated model as the
// same JSON keys a hand-written arm uses (model.bodies, model.sites, model.tip, ...), so that
// the config's own keys override imported values and every imported parameter has the slot
// name a JSON arm's would. Built only with MuJoCo (cmake/mujoco_import.cmake defines
// STEER_MUJOCO_IMPORT and compiles mujoco/mjcf_import.cpp); docs/import.md lists what is
// mapped and what is refused.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace steer {

// What an import produced besides the model keys: recorded in the artifact's model section
// (model.imported_from) so that a run can be reproduced and its mapping read.
struct ImportedModel {
  nlohmann::json model;  // model keys: integrator, gravity, bodies, sites, tip, contact,
                         // torque_limits, joint_limits
  nlohmann::json
      record;  // file, format, sha256, bytes, timestep, per-control scale to MuJoCo's ctrl, notes
  double timestep = 0;  // MuJoCo's opt.timestep [s]
};

// Compiles `path` (key: "mjcf" or "urdf", for messages and the record) and maps it; any
// element steer does not model is refused by config_fail(model.<key>, ...) naming it.
// Defined only when STEER_MUJOCO_IMPORT is set.
ImportedModel import_mujoco_model(const std::string& path, const std::string& shown,
                                  const std::string& key);

}  // namespace steer
