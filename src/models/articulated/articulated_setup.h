// The articulated model's part of an ExperimentConfig (ExperimentConfig::model): the model
// struct and the names the config gave its bodies and joints.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "steer/models/articulated.h"

namespace steer {

// an articulated model's names, joint ranges and which PD targets the config gave
struct ArticulatedNames {
  std::vector<std::string> bodies, joints;
  std::vector<std::string> sites;             // per site (Articulated::site_*), in index order
  std::vector<std::array<double, 2>> ranges;  // per joint [rad or m]
  std::vector<bool> target_given;             // per joint
  // a free root (Articulated::free_base): its joint's name and the default initial q of its
  // seven slots, p [m] and the unit quaternion (w, x, y, z), from the root body's pos and quat
  std::string free_joint;
  std::array<double, 7> free_q0 = {0, 0, 0, 1, 0, 0, 0};
  std::string included_from;                  // model.include's file, empty when none (for messages)
  std::string imported_key, imported_from;    // model.mjcf / model.urdf and its file, empty when none
  nlohmann::json import_record;               // the import's record (mjcf_import.h), null when none
};

struct ArticulatedSetup {
  static constexpr const char* kModel = "articulated";  // model.type
  // The tree as parsed, at the large capacity: always filled, and what the config's readers
  // (slot table, effective config, physical check, report scene) read.
  ArticulatedLarge large;
  // The tree exceeds Articulated's capacity (10 bodies, 8 joints, 8 sites): its problem runs
  // `large` on the CPU and `model` is left empty. Otherwise `model` is `large` at the arm's
  // capacity, the model every backend runs.
  bool large_tree = false;
  Articulated model;
  // A tree beyond Articulated that fits ArticulatedLegged (20 bodies, 18 joints, 8 sites; a
  // quadruped on a free root): `legged` is `large` at that capacity, which every backend runs.
  bool legged_tree = false;
  ArticulatedLegged legged;
  ArticulatedNames names;
  // site s's index by name (model.sites or an imported model's sites), −1 when there is none
  int site_index(const std::string& name) const {
    for (size_t s = 0; s < names.sites.size(); ++s)
      if (names.sites[s] == name) return int(s);
    return -1;
  }
};

}  // namespace steer
