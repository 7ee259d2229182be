// The articulated model's part of an ExperimentConfig (ExperimentConfig::model): the model
// struct and the names the config gave its bodies and joints.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/json_reader.h"
#include "steer/batch.h"
#include "models/articulated/morphology.h"
#include "steer/models/articulated.h"

namespace steer {

// an articulated model's names, joint ranges and which PD targets the config gave
struct ArticulatedNames {
  std::vector<std::string> bodies, joints;
  std::vector<std::string> sites;    // per site (Articulated::site_*), in index order
  std::vector<std::string> pairs;    // per contact pair (model.pairs), in index order
  std::vector<std::string> tendons;  // per fixed tendon, in index order
  // per ground point (model.contacts), in index order: its name, the model.geoms entry it
  // belongs to (empty: none) and its end along that geom's axis (−1, 0, +1)
  std::vector<std::string> points, point_geoms;
  std::vector<int> point_ends;
  std::vector<std::array<double, 2>> ranges;  // per joint [rad or m]
  // per joint, its PD target's range (θ's <joint>.target bounds): the joint's range, or the
  // narrower target_range (an imported servo's ctrlrange)
  std::vector<std::array<double, 2>> target_ranges;
  // per fixed tendon, its springlength's range (an imported tendon servo's ctrlrange)
  std::vector<std::array<double, 2>> springlength_ranges;
  std::vector<bool> target_given;  // per joint
  // per body: its index in model.bodies, or −1 for a massless frame steer adds (a free root's
  // five, and one per joint but the last of a body with several joints: model.h)
  std::vector<int> entry;
  bool is_frame(int b) const { return b < int(entry.size()) && entry[size_t(b)] < 0; }
  // per body: the model.bodies entry whose pos it carries (θ's <body>.pos slots: the body itself,
  // or the first frame of its joints or ball), empty where the position is fixed at 0 (a free
  // joint's frames and body, a chain's later frames, a chain's or a ball's body itself)
  std::vector<std::string> pos_owner;
  std::string pos_owner_of(int b) const {
    return b < int(pos_owner.size()) ? pos_owner[size_t(b)] : std::string();
  }
  // per free joint (the free root's first, Articulated::free_base): its name, its first dof
  // and the default initial q of its seven slots, p [m] and the unit quaternion (w, x, y, z),
  // from its body's pos and quat
  struct FreeJoint {
    std::string name;
    int dof = 0;
    std::array<double, 7> q0 = {0, 0, 0, 1, 0, 0, 0};
  };
  std::vector<FreeJoint> free_joints;
  // the free joint whose six dofs hold dof j, or null
  const FreeJoint* free_joint_of(int j) const {
    for (const FreeJoint& f : free_joints)
      if (j >= f.dof && j < f.dof + 6) return &f;
    return nullptr;
  }
  // per ball group (Articulated::ball_dof; a free root's rotation first), its joint's name
  std::vector<std::string> balls;
  // named poses (model.keyframes, an imported file's <keyframe>s): q (nq) and q̇ (n_dof)
  struct Keyframe {
    std::string name;
    std::vector<double> q, v;
  };
  std::vector<Keyframe> keyframes;
  std::string included_from;                // model.include's file, empty when none (for messages)
  std::string imported_key, imported_from;  // model.mjcf / model.urdf and its file, empty when none
  nlohmann::json import_record;             // the import's record (mjcf_import.h), null when none
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
  // model.morphology's design slots (morphology.h)
  Morphology morphology;
  // site s's index by name (model.sites or an imported model's sites), −1 when there is none
  int site_index(const std::string& name) const {
    for (size_t s = 0; s < names.sites.size(); ++s)
      if (names.sites[s] == name) return int(s);
    return -1;
  }
};

// Calls f(model) with the tree at the smallest capacity that fits and runs on `backend`, and
// returns what f returns. The one place the capacity is chosen: a tree within Articulated's
// runs as Articulated, one within ArticulatedLegged's (a quadruped on a free root) as
// ArticulatedLegged, both on every backend; a larger one as ArticulatedLarge on the CPU only
// (model.h: no CUDA kernels are compiled for it), and the cuda backend refuses it by name.
template <class F>
decltype(auto) with_articulated(const ArticulatedSetup& s, BackendKind backend, F&& f) {
  if (!s.large_tree) return f(s.model);
  if (s.legged_tree) return f(s.legged);
  if (backend != BackendKind::kCpu)
    throw ConfigError(
        "model.bodies: a tree of " + std::to_string(s.large.n_bodies) + " bodies, " +
        std::to_string(s.large.n_dof) + " joints, " + std::to_string(s.large.n_sites) +
        " sites and " + std::to_string(s.large.ground.n_points) +
        " ground contact points runs on the CPU backend only; the CUDA backend takes at most " +
        std::to_string(Articulated::kMaxBodies) + " bodies, " +
        std::to_string(Articulated::kMaxDof) + " joints, " +
        std::to_string(Articulated::kMaxSites) + " sites and " +
        std::to_string(Articulated::kMaxGroundPoints) + " points (Articulated), or " +
        std::to_string(ArticulatedLegged::kMaxBodies) + " bodies, " +
        std::to_string(ArticulatedLegged::kMaxDof) + " joints, " +
        std::to_string(ArticulatedLegged::kMaxSites) + " sites and " +
        std::to_string(ArticulatedLegged::kMaxGroundPoints) +
        " points (ArticulatedLegged; the frames of a free root and of a body with several joints "
        "count as bodies) (set \"backend\": \"cpu\")");
  return f(s.large);
}

}  // namespace steer
