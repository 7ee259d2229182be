// model.* for type articulated: the kinematic tree (bodies with pose, joint, mass, centre of
// mass, inertia), joint damping/armature/PD gains/force limits, integrator, torque
// saturation, the optional fingertip contact and the ground contact points -> Articulated, slot
// names, nominal θ.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "models/articulated/config_articulated.h"
#include "models/articulated/config_contact.h"
#include "models/articulated/inertia_check.h"
#include "models/articulated/mjcf_import.h"
#if !defined(STEER_MUJOCO_IMPORT) && __has_include("steer_mujoco_status.h")
#include "steer_mujoco_status.h"  // STEER_MUJOCO_OFF_REASON, why not (cmake/mujoco_import.cmake)
#endif

namespace steer {

namespace {

const char* kAxisNames[3] = {"x", "y", "z"};
// model.fluid's bounds: beyond mercury's density [kg/m³] and honey's viscosity [Pa·s] tenfold
constexpr double kMaxFluidDensity = 1e5;
constexpr double kMaxFluidViscosity = 1e3;
// a joint's frictionloss [N·m or N] and the law's smoothing speed [rad/s or m/s]: the joint
// parameters' bound and a speed beyond any joint's
constexpr double kMaxFrictionLoss = 1e6;
constexpr double kMaxFrictionLossVelocity = 1e3;
// an activation's time constant [s]: beyond any actuator's
constexpr double kMaxActivationTime = 1e3;
const char* kInertiaNames[6] = {"xx", "yy", "zz", "xy", "xz", "yz"};
const char* kJointParamNames[8] = {"damping", "armature",    "kp",        "kv",
                                   "target",  "force_limit", "stiffness", "springref"};
const char* kJointParamUnitsHinge[8] = {"N*m*s/rad", "kg*m^2", "N*m/rad", "N*m*s/rad",
                                        "rad",       "N*m",    "N*m/rad", "rad"};
const char* kJointParamUnitsSlide[8] = {"N*s/m", "kg", "N/m", "N*s/m", "m", "N", "N/m", "m"};
static_assert(Articulated::kJointParams == 8, "one name and unit per joint parameter");

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// the state's and the controls' names, units and ranges: q (nq slots), q̇ (n_dof), u (n_dof)
void articulated_state_names(const ArticulatedLarge& m, const ArticulatedNames& names,
                             ModelInfo& info) {
  const int n = m.n_dof, nq = m.nq();
  // a free root's slots: q = p.x, p.y, p.z [m], quat.w … quat.z; q̇ = v.x … [m/s] (world),
  // w.x … [rad/s] (body frame); its controls force.x … [N] (world), torque.x … [N·m] (body).
  // A ball's: q = quat.w … quat.z, q̇ = w.x … (body frame), controls torque.x … (body frame).
  static const char* kQuat[4] = {"quat.w", "quat.x", "quat.y", "quat.z"};
  static const char* kAxis[3] = {"x", "y", "z"};
  // dof j's slot name when it belongs to a ball group ("<joint>.<ball_word>.<axis>") or to a
  // free joint's slides ("<joint>.<free_word>.<axis>"); empty for a hinge or slide of its own
  auto grouped = [&](int j, const char* ball_word, const char* free_word) -> std::string {
    for (int k = 0; k < m.n_balls; ++k)
      if (j >= m.ball_dof[k] && j < m.ball_dof[k] + 3)
        return names.balls[size_t(k)] + "." + ball_word + "." + kAxis[j - m.ball_dof[k]];
    if (const ArticulatedNames::FreeJoint* fj = names.free_joint_of(j))
      return fj->name + "." + free_word + "." + kAxis[j - fj->dof];
    return "";
  };
  for (int j = 0, k = 0; j < n; ++j) {
    if (k < m.n_balls && j == m.ball_dof[k]) {
      for (int i = 0; i < 4; ++i) {
        info.state_names.push_back(names.balls[size_t(k)] + "." + kQuat[i]);
        info.state_units.push_back("1");
        info.state_ranges.push_back(Range::closed(-2, 2));
      }
      j += 2, ++k;
      continue;
    }
    const bool hinge = m.joint[m.body_of_dof[j]] == Articulated::kHinge;
    // a free joint's p, else the joint's angle or displacement; not the joint's range: a start
    // outside it is accepted, as MuJoCo accepts it, and the limit (model.joint_limits) pushes
    // back
    const std::string g = grouped(j, "", "p");
    info.state_names.push_back(g.empty() ? names.joints[j] + ".q" : g);
    info.state_units.push_back(hinge ? "rad" : "m");
    info.state_ranges.push_back(Range::closed(-1e3, 1e3));
  }
  for (int i = 0; i < nq; ++i) info.state_groups["q"].push_back(i);
  for (int j = 0; j < n; ++j) {
    const bool hinge = m.joint[m.body_of_dof[j]] == Articulated::kHinge;
    const std::string g = grouped(j, "w", "v");
    info.state_names.push_back(g.empty() ? names.joints[j] + ".v" : g);
    info.state_units.push_back(hinge ? "rad/s" : "m/s");
    info.state_ranges.push_back(Range::closed(-1e6, 1e6));
    info.state_groups["v"].push_back(nq + j);
  }
  // the activations (activation.h): <joint>.act in the joint's control unit
  for (int j = 0; j < n; ++j) {
    if (m.act_kind[j] == Articulated::kActNone) continue;
    const bool hinge = m.joint[m.body_of_dof[j]] == Articulated::kHinge;
    info.state_names.push_back(names.joints[j] + ".act");
    info.state_units.push_back(hinge ? "N*m" : "N");
    info.state_ranges.push_back(Range::closed(-1e9, 1e9));
    info.state_groups["act"].push_back(nq + n + m.act_slot[j]);
  }
  for (int j = 0; j < n; ++j) {
    const bool hinge = m.joint[m.body_of_dof[j]] == Articulated::kHinge;
    const std::string g = grouped(j, "torque", "force");
    info.control_names.push_back(g.empty() ? "torque." + names.joints[j] : g);
    info.control_units.push_back(hinge ? "N*m" : "N");
  }
}

}  // namespace

ModelInfo articulated_info(const ArticulatedLarge& m, const ArticulatedNames& names) {
  ModelInfo info;
  info.type = "articulated";
  const int n = m.n_dof;
  articulated_state_names(m, names, info);
  info.resize_params(m.np());
  auto slot = [&](int q, const std::string& name, const std::string& unit, Range r,
                  const std::string& group) { info.set_param(q, name, unit, r, group); };
  for (int b = 0; b < m.n_bodies; ++b) {
    const std::string& bn = names.bodies[b];
    // the body's origin in its parent's frame: <body>.pos on the body (or frame) that carries
    // model.bodies' pos, a morphology variable; fixed at 0 elsewhere (<name>.pos_on_frame)
    const std::string owner = names.pos_owner_of(b);
    for (int i = 0; i < 3; ++i) {
      const int q = m.p_body(b, Articulated::kPosX + i);
      if (owner.empty()) {
        slot(q, bn + ".pos_on_frame." + kAxisNames[i], "m", Range::closed(0, 0), "frame_offsets");
      } else {
        slot(q, owner + ".pos." + kAxisNames[i], "m", Range::closed(-1e3, 1e3), "pos");
        info.param_groups[owner + ".pos"].push_back(q);
      }
    }
    if (names.is_frame(b)) {
      // a free root's or a multi-joint body's massless frames (model.h): zero, in a group of
      // their own
      for (int k = 0; k < Articulated::kPosX; ++k)
        slot(m.p_body(b, k),
             bn + "." +
                 (k == 0  ? std::string("mass")
                  : k < 4 ? std::string("com.") + kAxisNames[k - 1]
                          : std::string("inertia.") + kInertiaNames[k - 4]),
             k == 0  ? "kg"
             : k < 4 ? "m"
                     : "kg*m^2",
             Range::closed(0, 0),
             bn.find(".free_frame.") != std::string::npos ? "free_frames" : "joint_frames");
      continue;
    }
    slot(m.p_body(b, Articulated::kMass), bn + ".mass", "kg", Range{0, 1e6, true, false}, "mass");
    for (int i = 0; i < 3; ++i) {
      slot(m.p_body(b, Articulated::kComX + i), bn + ".com." + kAxisNames[i], "m",
           Range::closed(-1e3, 1e3), "com");
      info.param_groups[bn + ".com"].push_back(m.p_body(b, Articulated::kComX + i));
    }
    for (int i = 0; i < 6; ++i) {
      // principal moments must stay positive; products of inertia may have either sign
      const Range r = i < 3 ? Range{0, 1e6, true, false} : Range::closed(-1e6, 1e6);
      // groups split by range, so that one pair of bounds fits each
      const std::string part = i < 3 ? "inertia.diagonal" : "inertia.products";
      slot(m.p_body(b, Articulated::kIxx + i), bn + ".inertia." + kInertiaNames[i], "kg*m^2", r,
           part);
      info.param_groups[bn + "." + part].push_back(m.p_body(b, Articulated::kIxx + i));
    }
  }
  for (int j = 0; j < n; ++j) {
    const bool hinge = m.joint[m.body_of_dof[j]] == Articulated::kHinge;
    const Range ranges[8] = {Range::closed(0, 1e6),
                             Range::closed(0, 1e6),
                             Range::closed(0, 1e9),
                             Range::closed(0, 1e9),
                             Range::closed(names.target_ranges[j][0], names.target_ranges[j][1]),
                             Range{0, 1e9, true, false},
                             Range::closed(0, 1e9),
                             Range::closed(-1e3, 1e3)};
    for (int k = 0; k < Articulated::kJointParams; ++k)
      slot(m.p_joint(j, k), names.joints[j] + "." + kJointParamNames[k],
           hinge ? kJointParamUnitsHinge[k] : kJointParamUnitsSlide[k], ranges[k],
           kJointParamNames[k]);
  }
  slot(m.p_global(Articulated::kGravity), "gravity", "m/s^2", Range::closed(-1e3, 1e3), "");
  slot(m.p_global(Articulated::kSharpness), "saturation.sharpness", "1/(N*m)",
       Range{0, 1e6, true, false}, "");
  articulated_contact_slots(m, names, info);
  // the fixed tendons' slots; a tendon's length is in rad over hinges only, m over slides only,
  // and in the units of Σ c q otherwise (the coefficients carry them)
  for (int t = 0; t < m.n_tendons; ++t) {
    bool hinges = false, slides = false;
    for (int j = 0; j < n; ++j)
      if (m.tendon_c(t, j) != 0)
        (m.joint[m.body_of_dof[j]] == Articulated::kHinge ? hinges : slides) = true;
    const bool spatial = m.tendon_spatial(t);  // a path through sites: metres and newtons
    const char* len = spatial ? "m" : hinges && !slides ? "rad" : slides && !hinges ? "m" : "L";
    const char* force = spatial ? "N" : hinges && !slides ? "N*m" : slides && !hinges ? "N" : "F";
    const std::string tn = names.tendons[size_t(t)];
    slot(m.p_tendon(t, Articulated::kTendonStiffness), tn + ".stiffness",
         std::string(force) + "/" + len, Range::closed(0, 1e9), "tendon_stiffness");
    const std::array<double, 2>& lr = names.springlength_ranges[size_t(t)];
    slot(m.p_tendon(t, Articulated::kTendonSpringLength), tn + ".springlength", len,
         Range::closed(lr[0], lr[1]), "tendon_springlength");
    slot(m.p_tendon(t, Articulated::kTendonDamping), tn + ".damping",
         std::string(force) + "*s/" + len, Range::closed(0, 1e6), "tendon_damping");
  }
  if (m.joint_friction)
    for (int j = 0; j < n; ++j)
      slot(m.p_frictionloss(j), names.joints[j] + ".frictionloss",
           m.joint[m.body_of_dof[j]] == Articulated::kHinge ? "N*m" : "N",
           Range::closed(0, kMaxFrictionLoss), "frictionloss");
  if (m.fluid) {
    slot(m.p_fluid(Articulated::kFluidDensity), "fluid.density", "kg/m^3",
         Range::closed(0, kMaxFluidDensity), "");
    slot(m.p_fluid(Articulated::kFluidViscosity), "fluid.viscosity", "Pa*s",
         Range::closed(0, kMaxFluidViscosity), "");
    for (int i = 0; i < 3; ++i) {
      slot(m.p_fluid(Articulated::kFluidWindX + i), std::string("fluid.wind.") + kAxisNames[i],
           "m/s", Range::closed(-1e3, 1e3), "");
      info.param_groups["fluid.wind"].push_back(m.p_fluid(Articulated::kFluidWindX + i));
    }
  }
  return info;
}

namespace {

void parse_articulated_arm(const JsonObject& m, ExperimentConfig& c);

#ifdef STEER_MUJOCO_IMPORT
// A value of the file that steer's model keys refuse (a mass beyond 10⁶ kg, a position beyond
// 10³ m, …): the error names the file and its element (the body, joint, contact point or
// keyframe the mapped key came from) ahead of the mapped key's own message. A key the config
// overrides keeps its message as it is (the config, not the file, gave the value).
[[noreturn]] void rethrow_for_the_file(const ConfigError& e, const nlohmann::json& merged,
                                       const nlohmann::json& overrides, const std::string& key,
                                       const std::string& rel) {
  const std::string msg = e.what();
  const std::string head = "config: model.";
  if (msg.rfind(head, 0) != 0) throw e;
  const std::string rest = msg.substr(head.size());
  const size_t dot = rest.find_first_of(".[:");
  const std::string top = rest.substr(0, dot);
  for (const auto& o : overrides)
    if (o == top) throw e;
  std::string element = "its value";
  auto index_after = [&](const std::string& prefix) -> long {
    if (rest.rfind(prefix + "[", 0) != 0) return -1;
    return std::strtol(rest.c_str() + prefix.size() + 1, nullptr, 10);
  };
  const long bi = index_after("bodies"), ci = index_after("contacts"),
             ki = index_after("keyframes");
  if (bi >= 0 && size_t(bi) < merged["bodies"].size()) {
    const nlohmann::json& b = merged["bodies"][size_t(bi)];
    element = "body '" + b.value("name", std::string("?")) + "'";
    const size_t jp = rest.find("].joint");
    if (jp != std::string::npos && b.contains("joint") && b["joint"].is_object())
      element += ", joint '" + b["joint"].value("name", std::string("?")) + "'";
    const size_t jsp = rest.find("].joints[");
    if (jsp != std::string::npos && b.contains("joints")) {
      const long k = std::strtol(rest.c_str() + jsp + 9, nullptr, 10);
      if (k >= 0 && size_t(k) < b["joints"].size())
        element += ", joint '" + b["joints"][size_t(k)].value("name", std::string("?")) + "'";
    }
  } else if (ci >= 0 && merged.contains("contacts") && size_t(ci) < merged["contacts"].size()) {
    element =
        "contact geom '" + merged["contacts"][size_t(ci)].value("name", std::string("?")) + "'";
  } else if (ki >= 0 && merged.contains("keyframes") && size_t(ki) < merged["keyframes"].size()) {
    element = "keyframe '" + merged["keyframes"][size_t(ki)].value("name", std::string("?")) + "'";
  } else if (top == "gravity" || top == "contact" || top == "tip" || top == "tendons" ||
             top == "pairs" || top == "sites" || top == "fluid") {
    element = "the " + top + " it maps to";
  }
  config_fail("model." + key, "'" + excerpt(rel) + "': " + element +
                                  ", not accepted as steer's model: " + msg.substr(8));
}
#endif

#ifdef STEER_MUJOCO_IMPORT
// An imported file's controls in MuJoCo's units (ModelInfo::ForeignControls): per actuator a,
// in the record's "ctrl" order, its column ctrl.<actuator>, clamped to its ctrlrange where MuJoCo
// clamps it, drives
//   a motor on joint j (torque_per_ctrl s):          u_j += s ctrl_a;
//   a motor on a tendon over several joints:          u_j += s_j ctrl_a on each (its "joints");
//   a position servo on joint j (target_per_ctrl s): u_j += k_p,j (s ctrl_a − q*_j), so that the
//     servo's k_p (q* − q) + u_j is MuJoCo's k_p (s ctrl_a − q) whatever θ's target q*;
//   a servo on tendon t (springlength_per_ctrl s):  u_j += c_tj K_t (s ctrl_a − L*_t) on each
//     of its joints, so that the spring −K_t (L − L*_t) becomes −K_t (L − s ctrl_a).
// k_p, q*, K_t and L*_t are θ's values in the config: a recorded ctrl sequence replays MuJoCo's
// rollout at them. With activations (activation.h) joint j's activation a_j stands for
// offset_j + Σ_a G_ja act_a, so MuJoCo's act = 0 is a_j = offset_j: act_start receives it. An
// integrator would integrate the offset with the control, so its offset is left out of u and
// kept in the activation only.
void imported_foreign_controls(ExperimentConfig& c, std::vector<double>& act_start) {
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& a = s.large;
  const ArticulatedNames& names = s.names;
  const nlohmann::json& ctrl = names.import_record.value("ctrl", nlohmann::json::array());
  ModelInfo::ForeignControls& f = c.info.foreign_controls;
  const int nu = c.info.nu(), na = int(ctrl.size());
  act_start.assign(size_t(a.n_dof), 0.0);
  if (na == 0) return;
  f.gain.assign(size_t(nu) * na, 0.0);
  f.offset.assign(size_t(nu), 0.0);
  auto joint_index = [&](const std::string& jn) {
    for (int j = 0; j < a.n_dof; ++j)
      if (names.joints[size_t(j)] == jn) return j;
    return -1;
  };
  for (int k = 0; k < na; ++k) {
    const nlohmann::json& e = ctrl[size_t(k)];
    f.names.push_back("ctrl." + e["actuator"].get<std::string>());
    const bool clamped = e.contains("ctrlrange");
    f.lo.push_back(clamped ? e["ctrlrange"][0].get<double>() : -HUGE_VAL);
    f.hi.push_back(clamped ? e["ctrlrange"][1].get<double>() : HUGE_VAL);
    const int j = e.contains("joint") ? joint_index(e["joint"].get<std::string>()) : -1;
    if (e.contains("joints")) {  // a motor on a tendon over several joints
      for (const nlohmann::json& jt : e["joints"]) {
        const int jj = joint_index(jt["joint"].get<std::string>());
        if (jj >= 0) f.gain[size_t(jj) * na + k] = jt["torque_per_ctrl"].get<double>();
      }
    } else if (e.contains("torque_per_ctrl") && j >= 0) {
      f.gain[size_t(j) * na + k] = e["torque_per_ctrl"].get<double>();
    } else if (e.contains("target_per_ctrl") && j >= 0) {
      const double kp = c.theta[size_t(a.p_joint(j, Articulated::kKp))];
      f.gain[size_t(j) * na + k] = kp * e["target_per_ctrl"].get<double>();
      f.offset[size_t(j)] -= kp * c.theta[size_t(a.p_joint(j, Articulated::kTarget))];
    } else if (e.contains("springlength_per_ctrl")) {
      int t = -1;
      for (int i = 0; i < a.n_tendons; ++i)
        if (names.tendons[size_t(i)] == e["tendon"].get<std::string>()) t = i;
      if (t < 0) continue;
      const double K = c.theta[size_t(a.p_tendon(t, Articulated::kTendonStiffness))];
      const double L = c.theta[size_t(a.p_tendon(t, Articulated::kTendonSpringLength))];
      const double scale = e["springlength_per_ctrl"].get<double>();
      for (int jj = 0; jj < a.n_dof; ++jj) {
        f.gain[size_t(jj) * na + k] += a.tendon_c(t, jj) * K * scale;
        f.offset[size_t(jj)] -= a.tendon_c(t, jj) * K * L;
      }
    }
  }
  act_start.assign(size_t(a.n_dof), 0.0);
  for (int j = 0; j < a.n_dof; ++j) {
    if (a.act_kind[j] == Articulated::kActNone) continue;
    act_start[size_t(j)] = f.offset[size_t(j)];
    if (a.act_kind[j] == Articulated::kActIntegrator) f.offset[size_t(j)] = 0;
  }
  f.note =
      "controls given as MuJoCo's ctrl (one column ctrl.<actuator> per actuator, clamped to "
      "its ctrlrange where MuJoCo clamps it) become the joints' torques: a motor's gear "
      "(times a tendon's coef on each of its joints) times ctrl, a position servo's kp "
      "(target_per_ctrl ctrl - target), a tendon servo's "
      "coef K (springlength_per_ctrl ctrl - springlength), at the config's parameter values";
}
#endif

// model.mjcf / model.urdf: the file's model (mjcf_import.h) as model keys, the config's own
// keys over them, parsed as a JSON arm. Overrides: a top-level key replaces the imported one,
// objects (torque_limits, contact, joint_limits, tip, all_joints) merged key by key;
// model.bodies entries name an imported body and replace the keys they give (joint keys
// merged into its joint, or into each of its joints); model.sites are added to the imported sites.
void parse_imported_model(const JsonObject& m, ExperimentConfig& c) {
  if (m.has("mjcf") && m.has("urdf"))
    config_fail(m.key_path("urdf"), "give model.mjcf or model.urdf, not both");
  const std::string key = m.has("mjcf") ? "mjcf" : "urdf";
  const nlohmann::json& v = m.raw(key);
  if (!v.is_string() || v.get<std::string>().empty())
    config_fail(m.key_path(key),
                "expected a file name relative to the config's folder, got " + json_type_name(v));
  const std::string rel = v.get<std::string>();
#ifndef STEER_MUJOCO_IMPORT
  (void)c;
#ifndef STEER_MUJOCO_OFF_REASON
#define STEER_MUJOCO_OFF_REASON "MuJoCo was not found"
#endif
  config_fail(m.key_path(key), "'" + excerpt(rel) +
                                   "': steer was built without MuJoCo's compiler (" +
                                   STEER_MUJOCO_OFF_REASON + "), so it cannot compile " + key +
                                   " files; rebuild with a MuJoCo ≥ 3.3 (tools/bootstrap.sh "
                                   "fetches one; docs/import.md) or describe the arm in "
                                   "model.bodies");
#else
  const std::string path =
      rel[0] == '/' ? rel : (c.base_dir.empty() ? std::string(".") : c.base_dir) + "/" + rel;
  ImportedModel im = import_mujoco_model(path, rel, key);
  c.model_dt = im.timestep;  // simulation.dt defaults to the file's timestep
  nlohmann::json merged = im.model;
  nlohmann::json overrides = nlohmann::json::array();
  for (const char* k : {"integrator", "gravity", "all_joints", "targets", "torque_limits", "tip",
                        "keyframes", "contact", "contacts", "pairs", "joint_limits", "tendons",
                        "fluid", "frictionloss_velocity", "morphology", "geoms", "included_from"}) {
    if (!m.has(k)) continue;
    const nlohmann::json& o = m.raw(k);
    if (o.is_object() && merged.contains(k) && merged[k].is_object())
      merged[k].merge_patch(o);
    else
      merged[k] = o;
    if (std::string(k) != "included_from") overrides.push_back(k);
  }
  if (m.has("bodies")) {
    const nlohmann::json& ob = m.raw("bodies");
    const std::string bp = m.key_path("bodies");
    if (!ob.is_array())
      config_fail(bp, "with model." + key +
                          ": expected an array of {\"name\": <imported body>, <keys to override>}");
    for (size_t i = 0; i < ob.size(); ++i) {
      const std::string path_i = bp + "[" + std::to_string(i) + "]";
      if (!ob[i].is_object() || !ob[i].contains("name") || !ob[i]["name"].is_string())
        config_fail(path_i, "expected an object with the name of a body of '" + excerpt(rel) + "'");
      const std::string bn = ob[i]["name"].get<std::string>();
      nlohmann::json* target = nullptr;
      for (auto& b : merged["bodies"])
        if (b["name"] == bn) target = &b;
      if (!target)
        config_fail(path_i + ".name",
                    "'" + excerpt(bn) + "' is not a body of '" + excerpt(rel) + "'");
      for (auto it = ob[i].begin(); it != ob[i].end(); ++it) {
        if (it.key() == "joint") {
          if (!target->contains("joint"))
            config_fail(path_i + ".joint", "body '" + excerpt(bn) + "' has no joint in '" +
                                               excerpt(rel) + "'; an import's tree is the file's");
          if (!it.value().is_object())
            config_fail(path_i + ".joint", "expected an object of joint keys to override");
          (*target)["joint"].merge_patch(it.value());
        } else if (it.key() == "joints") {
          // a body with several joints: one object per joint, in the file's order
          const std::string jp = path_i + ".joints";
          if (!target->contains("joints"))
            config_fail(jp, "body '" + excerpt(bn) + "' does not have several joints in '" +
                                excerpt(rel) + "'; override its \"joint\"");
          nlohmann::json& tj = (*target)["joints"];
          if (!it.value().is_array() || it.value().size() != tj.size())
            config_fail(jp, "expected an array of " + std::to_string(tj.size()) +
                                " objects of joint keys to override, one per joint of body '" +
                                excerpt(bn) + "' in the file's order");
          for (size_t k = 0; k < tj.size(); ++k) {
            if (!it.value()[k].is_object())
              config_fail(jp + "[" + std::to_string(k) + "]",
                          "expected an object of joint keys to override");
            tj[k].merge_patch(it.value()[k]);
          }
        } else if (it.key() == "parent") {
          config_fail(path_i + ".parent",
                      "an import's tree is the file's; the parent cannot be overridden");
        } else {
          (*target)[it.key()] = it.value();
        }
      }
    }
    overrides.push_back("bodies");
  }
  if (m.has("sites")) {
    const nlohmann::json& os = m.raw("sites");
    if (!os.is_array())
      config_fail(m.key_path("sites"), "expected an array of sites to add to the imported ones");
    for (const auto& s : os) merged["sites"].push_back(s);
    overrides.push_back("sites");
  }
  JsonObject inner(merged, m.path());
  try {
    parse_articulated_arm(inner, c);
    inner.finish();
  } catch (const ConfigError& e) {
    rethrow_for_the_file(e, merged, overrides, key, rel);
  }
  ArticulatedNames& names = c.model_state<ArticulatedSetup>().names;
  names.imported_key = key;
  names.imported_from = rel;
  names.import_record = im.record;
  names.import_record["overridden_keys"] = overrides;
  // (the controls in MuJoCo's units, imported_foreign_controls, follow the initial state, which
  // sets the PD targets not given)
#endif
}

}  // namespace

void parse_articulated_model(const JsonObject& m, ExperimentConfig& c) {
  if (m.has("mjcf") || m.has("urdf"))
    parse_imported_model(m, c);
  else
    parse_articulated_arm(m, c);
}

namespace {

// what a body gives θ: mass, centre of mass, inertia and its joint's parameters
struct BodyValues {
  double mass;
  std::vector<double> com, inertia;
  std::vector<double> inertia_frame;  // the principal axes' quaternion, when given
  double jp[Articulated::kJointParams];
  bool has_target = false;
  double frictionloss = -1;  // the joint's friction F [N·m or N]; −1: the key is absent
};

// The arm as parsed so far, shared by the stages below (one per element of model.*): the tree
// at the large capacity, its names, and per body (a free root's frames included) its values.
struct ArmParse {
  ArticulatedLarge& a;
  ArticulatedNames& names;
  std::vector<BodyValues> vals;
  std::map<std::string, int> body_index;  // a body's name → its index in a
  // per fixed tendon: stiffness, springlength, damping (θ's kTendon* slots)
  std::vector<std::array<double, Articulated::kTendonParams>> tendon_vals;
  // model.fluid: density, viscosity, wind (θ's kFluid* slots)
  std::array<double, Articulated::kFluidParams> fluid_vals{};
  // per body: its origin in its parent's frame [m] (θ's kPos* slots)
  std::vector<std::array<double, 3>> pos{};
};

// body b's origin in its parent's frame [m] (θ's pos slots) and the model.bodies entry it places
// (ArticulatedNames::pos_owner; empty where it stays 0)
void set_body_pos(ArmParse& p, int b, const double* xyz, const std::string& owner) {
  if (p.pos.size() <= size_t(b)) {
    p.pos.resize(size_t(b) + 1, {0, 0, 0});
    p.names.pos_owner.resize(size_t(b) + 1);
  }
  for (int i = 0; i < 3; ++i) p.pos[size_t(b)][size_t(i)] = xyz ? xyz[i] : 0.0;
  p.names.pos_owner[size_t(b)] = owner;
}

// a free joint ("joint": {"type": "free"} on a body whose parent is the world) takes 5 massless
// frames ahead of its body and 6 joints (model.h)
bool is_free(const nlohmann::json& b) {
  return b.is_object() && b.contains("joint") && b["joint"].is_object() &&
         b["joint"].contains("type") && b["joint"]["type"] == "free";
}

// a free joint's frames, named after its body: slides along world x, y, z, then hinges about the
// body's own x, y (the body itself turns about its z); all at the world origin, R from q's
// quaternion. Returns the last frame, the body's parent.
int add_free_frames(ArmParse& p, const std::string& name, const std::string& path) {
  ArticulatedLarge& a = p.a;
  const int b0 = a.n_bodies, d0 = a.n_dof;
  if (a.n_balls == ArticulatedLarge::kMaxBalls)
    config_fail(path, "at most " + std::to_string(ArticulatedLarge::kMaxBalls) +
                          " free and ball joints in all (a free joint's rotation counts as one)");
  if (b0 + Articulated::kFreeDofs > ArticulatedLarge::kMaxBodies ||
      d0 + Articulated::kFreeDofs > ArticulatedLarge::kMaxDof)
    config_fail(path, "a free joint takes 6 bodies (five massless frames) and 6 joints; at most " +
                          std::to_string(ArticulatedLarge::kMaxBodies) + " bodies and " +
                          std::to_string(ArticulatedLarge::kMaxDof) + " joints in all");
  if (b0 == 0) a.free_base = true;
  static const char* kFrame[5] = {"x", "y", "z", "rx", "ry"};
  for (int f = 0; f < Articulated::kFreeFrames; ++f) {
    const int fb = b0 + f;
    a.parent[fb] = f == 0 ? -1 : fb - 1;
    a.joint[fb] = f < 3 ? Articulated::kSlide : Articulated::kHinge;
    for (int i = 0; i < 3; ++i) a.axis[fb][i] = (f % 3 == i) ? 1.0 : 0.0, a.joint_pos[fb][i] = 0;
    set_body_pos(p, fb, nullptr, "");
    for (int i = 0; i < 9; ++i) a.rot[fb][i] = i % 4 == 0 ? 1.0 : 0.0;
    a.dof[fb] = d0 + f;
    a.body_of_dof[d0 + f] = fb;
    if (f < 3) a.free_slide[d0 + f] = f + 1;
    BodyValues fv{};
    fv.mass = 0;
    fv.com = {0, 0, 0};
    fv.inertia = {0, 0, 0, 0, 0, 0};
    fv.jp[Articulated::kForceLimit] = 1e3;
    p.vals.push_back(fv);
    p.names.bodies.push_back(name + ".free_frame." + kFrame[f]);
    p.names.entry.push_back(-1);
  }
  a.n_bodies = b0 + Articulated::kFreeFrames;
  a.n_dof = d0 + Articulated::kFreeFrames;
  // its rotation is a ball group: frames 3 and 4, then the body (parse_free_joint)
  a.ball_dof[a.n_balls++] = d0 + 3;
  a.turn[b0 + 3] = 1, a.turn[b0 + 4] = 2;
  p.names.balls.push_back(name);
  p.names.free_joints.push_back({name, d0, {0, 0, 0, 1, 0, 0, 0}});
  return a.n_bodies - 1;
}

// a free joint: its body turns about its own z (its frames carry the other five dofs); damping
// and armature apply to all six, which have no servo (their controls are forces and torques)
void parse_free_joint(const JsonObject& jo, const std::string& jn, int bi, BodyValues& v,
                      ArmParse& p) {
  ArticulatedLarge& a = p.a;
  const int b0 = bi - Articulated::kFreeFrames, d0 = a.n_dof - Articulated::kFreeFrames;
  p.names.free_joints.back().name = jn;
  static const char* kDofName[6] = {"x", "y", "z", "rx", "ry", "rz"};
  for (int f = 0; f < Articulated::kFreeDofs; ++f) {
    p.names.joints.push_back(jn + "." + kDofName[f]);
    p.names.ranges.push_back({-1e3, 1e3});
    p.names.target_ranges.push_back({-1e3, 1e3});
  }
  const double damping = jo.number("damping", 0.0, Range::closed(0, 1e6));
  const double armature = jo.number("armature", 0.0, Range::closed(0, 1e6));
  jo.finish();
  for (int f = 0; f < Articulated::kFreeFrames; ++f)
    p.vals[size_t(b0 + f)].jp[Articulated::kDamping] = damping,
                       p.vals[size_t(b0 + f)].jp[Articulated::kArmature] = armature;
  v.jp[Articulated::kDamping] = damping, v.jp[Articulated::kArmature] = armature;
  v.jp[Articulated::kForceLimit] = 1e3;
  a.joint[bi] = Articulated::kHinge;
  a.axis[bi][0] = a.axis[bi][1] = 0, a.axis[bi][2] = 1;
  a.dof[bi] = d0 + Articulated::kFreeDofs - 1;
  a.body_of_dof[d0 + Articulated::kFreeDofs - 1] = bi;
  a.turn[bi] = 3;
  a.n_dof = d0 + Articulated::kFreeDofs;
  p.names.balls.back() = jn;
}

// a ball joint (MuJoCo's ball: a body's only joint): its anchor and the damping and armature
// of its three dofs; no servo, limit or spring (its controls are body-frame torques)
struct BallJointValues {
  std::string name;
  double pos[3] = {0, 0, 0};
  double damping = 0, armature = 0;
};

BallJointValues parse_ball_joint(const JsonObject& jo, const std::string& default_name) {
  BallJointValues b;
  b.name = jo.string("name", default_name);
  jo.choice("type", "ball", {"ball"});
  const std::vector<double> pos = jo.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  for (int i = 0; i < 3; ++i) b.pos[i] = pos[size_t(i)];
  b.damping = jo.number("damping", 0.0, Range::closed(0, 1e6));
  b.armature = jo.number("armature", 0.0, Range::closed(0, 1e6));
  jo.finish();
  return b;
}

// the ball's three hinge dofs about x, y, z of its frame (model.h): two massless frames, the
// first with the body's pos and quat, then the body itself (set_ball_body); all three at the
// joint's anchor. Returns the second frame, the body's parent.
int add_ball_frames(ArmParse& p, const std::string& body, const BallJointValues& bj, int parent,
                    const std::vector<double>& pos, const std::vector<double>& quat,
                    const std::string& path) {
  ArticulatedLarge& a = p.a;
  if (a.n_balls == ArticulatedLarge::kMaxBalls)
    config_fail(path, "at most " + std::to_string(ArticulatedLarge::kMaxBalls) +
                          " ball joints (a free root's rotation counts as one)");
  if (a.n_bodies + 3 > ArticulatedLarge::kMaxBodies || a.n_dof + 3 > ArticulatedLarge::kMaxDof)
    config_fail(path, "a ball joint takes 3 bodies (two massless frames) and 3 joints; at most " +
                          std::to_string(ArticulatedLarge::kMaxBodies) + " bodies and " +
                          std::to_string(ArticulatedLarge::kMaxDof) + " joints in all");
  a.ball_dof[a.n_balls++] = a.n_dof;
  static const char* kFrame[2] = {"rx", "ry"};
  for (int f = 0; f < 2; ++f) {
    const int fi = a.n_bodies;
    a.parent[fi] = parent;
    a.joint[fi] = Articulated::kHinge;
    for (int i = 0; i < 3; ++i) a.axis[fi][i] = f == i ? 1.0 : 0.0, a.joint_pos[fi][i] = bj.pos[i];
    set_body_pos(p, fi, f == 0 ? pos.data() : nullptr, f == 0 ? body : "");
    if (f == 0)
      quat_to_matrix(quat, a.rot[fi]);
    else
      for (int i = 0; i < 9; ++i) a.rot[fi][i] = i % 4 == 0 ? 1.0 : 0.0;
    a.turn[fi] = f + 1;
    a.dof[fi] = a.n_dof;
    a.body_of_dof[a.n_dof++] = fi;
    BodyValues fv{};
    fv.com = {0, 0, 0};
    fv.inertia = {0, 0, 0, 0, 0, 0};
    fv.jp[Articulated::kDamping] = bj.damping, fv.jp[Articulated::kArmature] = bj.armature;
    fv.jp[Articulated::kForceLimit] = 1e3;
    p.vals.push_back(fv);
    p.names.bodies.push_back(body + ".ball_frame." + kFrame[f]);
    p.names.entry.push_back(-1);
    p.names.joints.push_back(bj.name + "." + kFrame[f]);
    p.names.ranges.push_back({-1e3, 1e3});
    p.names.target_ranges.push_back({-1e3, 1e3});
    ++a.n_bodies;
    parent = fi;
  }
  p.names.balls.push_back(bj.name);
  return parent;
}

// the ball's body: its third dof, about z, at the anchor
void set_ball_body(ArmParse& p, const BallJointValues& bj, int bi, BodyValues& v) {
  ArticulatedLarge& a = p.a;
  a.joint[bi] = Articulated::kHinge;
  for (int i = 0; i < 3; ++i) a.axis[bi][i] = i == 2 ? 1.0 : 0.0, a.joint_pos[bi][i] = bj.pos[i];
  a.turn[bi] = 3;
  a.dof[bi] = a.n_dof;
  a.body_of_dof[a.n_dof++] = bi;
  v.jp[Articulated::kDamping] = bj.damping, v.jp[Articulated::kArmature] = bj.armature;
  v.jp[Articulated::kForceLimit] = 1e3;
  p.names.joints.push_back(bj.name + ".rz");
  p.names.ranges.push_back({-1e3, 1e3});
  p.names.target_ranges.push_back({-1e3, 1e3});
}

// body's ball joint: "joint" {"type": "ball"}, or the only entry of "joints"; null when none
const nlohmann::json* ball_joint_of(const nlohmann::json& body) {
  if (!body.is_object()) return nullptr;
  const nlohmann::json* j = nullptr;
  if (body.contains("joint") && body["joint"].is_object())
    j = &body["joint"];
  else if (body.contains("joints") && body["joints"].is_array() && body["joints"].size() == 1 &&
           body["joints"][0].is_object())
    j = &body["joints"][0];
  return j && j->contains("type") && (*j)["type"] == "ball" ? j : nullptr;
}

// a joint's actuator activation (activation.h): "dynamics" filter | filterexact | integrator, the
// filters' "time_constant" τ [s] and "early" (the torque takes a⁺, MuJoCo's actearly); its state
// slot is given once every joint is parsed (parse_activation_slots)
void parse_activation(const JsonObject& ao, ArticulatedLarge& a, int j) {
  const std::string dyn = ao.choice("dynamics", "", {"filter", "filterexact", "integrator"});
  if (dyn.empty())
    config_fail(ao.key_path("dynamics"), "missing; accepted: filter, filterexact, integrator");
  a.act_kind[j] = dyn == "filter"        ? Articulated::kActFilter
                  : dyn == "filterexact" ? Articulated::kActFilterExact
                                         : Articulated::kActIntegrator;
  if (dyn == "integrator") {
    if (ao.has("time_constant"))
      config_fail(ao.key_path("time_constant"),
                  "an integrator (da/dt = u) has no time constant; remove it");
    a.act_tau[j] = 0;
  } else {
    a.act_tau[j] = ao.number_required("time_constant", Range{0, kMaxActivationTime, true, false});
  }
  a.act_early[j] = ao.boolean("early", false) ? 1 : 0;
  ao.finish();
}

// the activation block of x (after q̇), in joint order; refused with rk4, whose MuJoCo
// counterpart integrates the activation inside its stages (steer holds it over the step)
void parse_activation_slots(const JsonObject& m, ArticulatedLarge& a,
                            const ArticulatedNames& names) {
  a.n_act = 0;
  for (int j = 0; j < a.n_dof; ++j) {
    if (a.act_kind[j] == Articulated::kActNone) continue;
    if (a.integrator == Articulated::kRk4)
      config_fail(m.key_path("integrator"),
                  "rk4 with joint '" + names.joints[size_t(j)] +
                      "''s activation is not modelled (MuJoCo's RK4 integrates the activation "
                      "inside its stages); use euler or implicitfast");
    a.act_slot[j] = a.n_act++;
  }
}

// a hinge or slide: axis (normalized), pos, range, ref, and its parameters: damping, armature,
// the servo's kp, kv and target, the force limit, the spring's stiffness and springref
void parse_hinge_or_slide(const JsonObject& jo, const std::string& jn, const std::string& type,
                          int bi, BodyValues& v, ArmParse& p) {
  ArticulatedLarge& a = p.a;
  std::vector<double> ax = jo.numbers("axis", {0, 0, 1}, Range::closed(-1e3, 1e3), 3);
  const double an = std::sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
  if (an < 1e-9) config_fail(jo.key_path("axis"), "must not be zero (it is normalized)");
  for (int i = 0; i < 3; ++i) a.axis[bi][i] = ax[i] / an;
  std::vector<double> jpos = jo.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  for (int i = 0; i < 3; ++i) a.joint_pos[bi][i] = jpos[i];
  std::vector<double> range = jo.numbers("range", {-1e3, 1e3}, Range::closed(-1e3, 1e3), 2);
  if (!(range[0] < range[1]))
    config_fail(jo.key_path("range"), "expected [low, high] with low < high");
  a.joint[bi] = type == "hinge" ? Articulated::kHinge : Articulated::kSlide;
  // the pose the tree describes is the joint's at q = ref (MuJoCo's ref; the default initial q)
  a.joint_ref[a.n_dof] = jo.number("ref", 0.0, Range::closed(-1e3, 1e3));
  a.dof[bi] = a.n_dof;
  a.body_of_dof[a.n_dof] = bi;
  p.names.joints.push_back(jn);
  p.names.ranges.push_back({range[0], range[1]});
  std::vector<double> tr = range;
  if (jo.has("target_range")) {
    tr = jo.numbers("target_range", {}, Range::closed(range[0], range[1]), 2);
    if (!(tr[0] < tr[1]))
      config_fail(jo.key_path("target_range"), "expected [low, high] with low < high");
  }
  p.names.target_ranges.push_back({tr[0], tr[1]});
  v.jp[Articulated::kDamping] = jo.number("damping", 0.0, Range::closed(0, 1e6));
  v.jp[Articulated::kArmature] = jo.number("armature", 0.0, Range::closed(0, 1e6));
  v.jp[Articulated::kKp] = jo.number("kp", 0.0, Range::closed(0, 1e9));
  v.jp[Articulated::kKv] = jo.number("kv", 0.0, Range::closed(0, 1e9));
  v.has_target = jo.has("target");
  v.jp[Articulated::kTarget] =
      jo.number("target", std::min(std::max(0.0, tr[0]), tr[1]), Range::closed(tr[0], tr[1]));
  v.jp[Articulated::kForceLimit] = jo.number("force_limit", 1e3, Range{0, 1e9, true, false});
  v.jp[Articulated::kStiffness] = jo.number("stiffness", 0.0, Range::closed(0, 1e9));
  v.jp[Articulated::kSpringRef] = jo.number("springref", 0.0, Range::closed(-1e3, 1e3));
  if (jo.has("frictionloss"))
    v.frictionloss = jo.number("frictionloss", 0.0, Range::closed(0, kMaxFrictionLoss));
  if (jo.has("activation")) parse_activation(jo.object("activation"), a, a.n_dof);
  jo.finish();
  ++a.n_dof;
}

// one joint of body bi: the body's "joint", or an entry of its "joints"
void parse_one_joint(const JsonObject& jo, const std::string& default_name, bool free_allowed,
                     int bi, BodyValues& v, ArmParse& p) {
  ArticulatedLarge& a = p.a;
  if (a.n_dof == ArticulatedLarge::kMaxDof)
    config_fail(jo.path(), "at most " + std::to_string(ArticulatedLarge::kMaxDof) + " joints");
  const std::string jn = jo.string("name", default_name);
  const std::string type = jo.choice("type", "hinge", {"hinge", "slide", "free", "ball"});
  if (type == "free" && !free_allowed)
    config_fail(jo.key_path("type"),
                "\"free\" must be its body's only joint (give it as \"joint\", not in \"joints\")");
  if (type == "ball")
    config_fail(
        jo.key_path("type"),
        "\"ball\" must be its body's only joint (a \"joint\", or \"joints\" with one entry)");
  if (type == "free")
    parse_free_joint(jo, jn, bi, v, p);
  else
    parse_hinge_or_slide(jo, jn, type, bi, v, p);
}

// body b's joint (none, or null: a fixed body), or the last of its "joints" (add_joint_frames
// took the others)
void parse_body_joint(const JsonObject& o, const std::string& name, int bi, BodyValues& v,
                      ArmParse& p) {
  ArticulatedLarge& a = p.a;
  a.joint[bi] = Articulated::kFixed;
  a.dof[bi] = -1;
  if (o.has("joints")) {
    const nlohmann::json& js = o.raw("joints");
    const size_t last = js.size() - 1;
    parse_one_joint(JsonObject(js[last], o.key_path("joints") + "[" + std::to_string(last) + "]"),
                    name + ".joint" + std::to_string(last), false, bi, v, p);
    return;
  }
  if (!o.has("joint")) return;
  if (o.raw("joint").is_null()) return;  // a fixed body
  parse_one_joint(o.object("joint"), name + ".joint", true, bi, v, p);
}

// A body with several joints (MuJoCo's joints of one body, applied in order, each about its own
// anchor and axis in the body frame as the earlier ones left it): every joint but the last
// turns a massless frame of its own, chained from the body's parent; the first frame takes the
// body's pos and quat, the others sit on their parent's origin (offset 0, unrotated), and the
// body itself, with the last joint, on the last frame's. A joint's anchor and axis then are
// those of the frame as the joints before it moved it, as in MuJoCo. Returns the last frame.
int add_joint_frames(const JsonObject& o, const std::string& name, int parent,
                     const std::vector<double>& pos, const std::vector<double>& quat, ArmParse& p) {
  ArticulatedLarge& a = p.a;
  const nlohmann::json& js = o.raw("joints");
  const std::string jp = o.key_path("joints");
  if (o.has("joint")) config_fail(o.key_path("joint"), "give \"joint\" or \"joints\", not both");
  if (!js.is_array() || js.empty())
    config_fail(jp, "expected a non-empty array of joints (in the order they apply)");
  for (size_t k = 0; k < js.size(); ++k)
    if (!js[k].is_object())
      config_fail(jp + "[" + std::to_string(k) + "]",
                  "expected a joint object, got " + json_type_name(js[k]));
  for (size_t k = 0; k + 1 < js.size(); ++k) {
    if (a.n_bodies == ArticulatedLarge::kMaxBodies)
      config_fail(jp, "at most " + std::to_string(ArticulatedLarge::kMaxBodies) +
                          " bodies, counting one massless frame per joint but the last of a "
                          "body with several joints");
    const int fi = a.n_bodies;
    a.parent[fi] = parent;
    set_body_pos(p, fi, k == 0 ? pos.data() : nullptr, k == 0 ? name : "");
    if (k == 0)
      quat_to_matrix(quat, a.rot[fi]);
    else
      for (int i = 0; i < 9; ++i) a.rot[fi][i] = i % 4 == 0 ? 1.0 : 0.0;
    BodyValues fv{};
    fv.com = {0, 0, 0};
    fv.inertia = {0, 0, 0, 0, 0, 0};
    const JsonObject jo(js[k], jp + "[" + std::to_string(k) + "]");
    parse_one_joint(jo, name + ".joint" + std::to_string(k), false, fi, fv, p);
    p.vals.push_back(fv);
    p.names.bodies.push_back(name + ".joint_frame." + p.names.joints.back());
    p.names.entry.push_back(-1);
    ++a.n_bodies;
    parent = fi;
  }
  return parent;
}

// model.bodies[b]: name, parent (world or an earlier body), pose, mass, centre of mass, inertia
// and joint; the first body's free joint puts the free root's frames ahead of it
void parse_body(const nlohmann::json& body, const std::string& path, size_t b, ArmParse& p) {
  ArticulatedLarge& a = p.a;
  if (!body.is_object()) config_fail(path, "expected an object, got " + json_type_name(body));
  JsonObject o(body, path);
  const std::string name = o.string("name", "");
  if (name.empty()) config_fail(o.key_path("name"), "required: a unique body name");
  if (p.body_index.count(name))
    config_fail(o.key_path("name"), "'" + excerpt(name) + "' is used twice");
  const std::string par = o.string("parent", "world");
  int pi = -1;
  if (par != "world") {
    auto it = p.body_index.find(par);
    if (it == p.body_index.end())
      config_fail(o.key_path("parent"),
                  "'" + excerpt(par) +
                      "' is not 'world' or an earlier body (list parents before children)");
    pi = it->second;
  }
  const bool free = is_free(body);
  if (free && pi != -1)
    config_fail(o.key_path("joint") + ".type",
                "\"free\" is only for a body whose parent is world (a floating body); body '" +
                    excerpt(name) + "' has parent '" + excerpt(par) + "'");
  if (free) pi = add_free_frames(p, name, o.key_path("joint"));
  std::vector<double> pos = o.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  std::vector<double> quat = o.numbers("quat", {1, 0, 0, 0}, Range::closed(-1e3, 1e3), 4);
  if (std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]) <
      1e-9)
    config_fail(o.key_path("quat"), "must not be zero (it is normalized)");
  const nlohmann::json* ball = ball_joint_of(body);
  BallJointValues bj;
  if (ball) {
    // the ball's two frames carry the body's pose; the body sits on the second
    const bool listed = o.has("joints");
    if (listed && o.has("joint"))
      config_fail(o.key_path("joint"), "give \"joint\" or \"joints\", not both");
    o.raw(listed ? "joints" : "joint");
    const std::string jp = listed ? o.key_path("joints") + "[0]" : o.key_path("joint");
    bj = parse_ball_joint(JsonObject(*ball, jp), name + ".joint");
    pi = add_ball_frames(p, name, bj, pi, pos, quat, jp);
    pos = {0, 0, 0};
    quat = {1, 0, 0, 0};
  } else if (o.has("joints")) {
    // the frames of all joints but the last carry the body's pose; the body sits on the last
    pi = add_joint_frames(o, name, pi, pos, quat, p);
    pos = {0, 0, 0};
    quat = {1, 0, 0, 0};
  }
  if (a.n_bodies == ArticulatedLarge::kMaxBodies)
    config_fail(o.path(), "at most " + std::to_string(ArticulatedLarge::kMaxBodies) +
                              " bodies, counting the frames steer adds (a free root's 5, one per "
                              "joint but the last of a body with several joints)");
  const int bi = a.n_bodies;
  a.parent[bi] = pi;
  // a body after a ball's or its joints' frames sits on the last (pos zeroed above)
  set_body_pos(p, bi, pos.data(), ball || o.has("joints") ? "" : name);
  quat_to_matrix(quat, a.rot[bi]);
  if (free) {
    // the body's pos and quat become its initial p and orientation (initial_state.q's
    // default); its frame sits on the free joint's (the origin, unrotated)
    const double qn =
        std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    p.names.free_joints.back().q0 = {pos[0],       pos[1],       pos[2],      quat[0] / qn,
                                     quat[1] / qn, quat[2] / qn, quat[3] / qn};
    set_body_pos(p, bi, nullptr, "");
    for (int i = 0; i < 9; ++i) a.rot[bi][i] = i % 4 == 0 ? 1.0 : 0.0;
  }
  BodyValues v{};
  v.mass = o.number_required("mass", Range{0, 1e6, true, false});
  v.com = o.numbers("com", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  v.inertia = o.numbers("fullinertia", {}, Range::closed(-1e6, 1e6), 6);
  if (!(v.inertia[0] > 0 && v.inertia[1] > 0 && v.inertia[2] > 0))
    config_fail(o.key_path("fullinertia"),
                "(Ixx, Iyy, Izz, Ixy, Ixz, Iyz): the principal entries must be > 0");
  if (o.has("inertia_frame")) {
    v.inertia_frame = o.numbers("inertia_frame", {}, Range::closed(-1e3, 1e3), 4);
    const std::vector<double>& f = v.inertia_frame;
    if (!(f[0] * f[0] + f[1] * f[1] + f[2] * f[2] + f[3] * f[3] > 1e-18))
      config_fail(o.key_path("inertia_frame"), "must not be zero (it is normalized)");
  }
  if (ball)
    set_ball_body(p, bj, bi, v);
  else
    parse_body_joint(o, name, bi, v, p);
  o.finish();
  p.body_index[name] = bi;
  p.names.bodies.push_back(name);
  p.names.entry.push_back(int(b));
  p.vals.push_back(v);
  ++a.n_bodies;
}

// model.bodies: the tree, parents listed before their children
void parse_bodies(const JsonObject& m, ArmParse& p) {
  if (!m.has("bodies"))
    config_fail(
        m.key_path("bodies"),
        "missing; expected an array of bodies (or model.include naming a file that has them)");
  const auto& bodies = m.raw("bodies");
  const std::string bp = m.key_path("bodies");
  if (!bodies.is_array() || bodies.empty())
    config_fail(bp, "expected a non-empty array of bodies (at most " +
                        std::to_string(ArticulatedLarge::kMaxBodies) + ")");
  if (bodies.size() > size_t(ArticulatedLarge::kMaxBodies))
    config_fail(bp, "at most " + std::to_string(ArticulatedLarge::kMaxBodies) + " bodies, got " +
                        std::to_string(bodies.size()));
  const int n_frames =
      Articulated::kFreeFrames * int(std::count_if(bodies.begin(), bodies.end(), is_free));
  if (bodies.size() + n_frames > size_t(ArticulatedLarge::kMaxBodies))
    config_fail(bp, "at most " + std::to_string(ArticulatedLarge::kMaxBodies - n_frames) +
                        " bodies with these free joints (each takes " +
                        std::to_string(Articulated::kFreeFrames) + " frames), got " +
                        std::to_string(bodies.size()));
  for (size_t b = 0; b < bodies.size(); ++b)
    parse_body(bodies[b], bp + "[" + std::to_string(b) + "]", b, p);
  p.a.set_q_layout();
  if (p.a.n_dof == 0)
    config_fail(bp, "no body has a joint; give at least one hinge or slide joint");
}

// body b's joint is a free root's or a ball's dof (no servo, limit, spring or friction)
bool direct_body(const ArticulatedLarge& a, int b) { return a.dof[b] >= 0 && a.free_dof(a.dof[b]); }

// model.all_joints: values that replace every joint's own (a free swing: no damping, no gains)
void parse_all_joints(const JsonObject& m, ArmParse& p) {
  JsonObject aj = m.object("all_joints");
  const Range r8[8] = {Range::closed(0, 1e6), Range::closed(0, 1e6),    Range::closed(0, 1e9),
                       Range::closed(0, 1e9), Range::closed(-1e3, 1e3), Range{0, 1e9, true, false},
                       Range::closed(0, 1e9), Range::closed(-1e3, 1e3)};
  for (int k = 0; k < Articulated::kJointParams; ++k) {
    if (k == Articulated::kTarget || !aj.has(kJointParamNames[k])) continue;
    const double v = aj.number(kJointParamNames[k], 0.0, r8[k]);
    // a free root's and a ball's dofs keep their own (the joint's damping and armature; no
    // servo)
    for (size_t b = 0; b < p.vals.size(); ++b)
      if (!direct_body(p.a, int(b))) p.vals[b].jp[k] = v;
  }
  if (aj.has("frictionloss")) {
    const double f = aj.number("frictionloss", 0.0, Range::closed(0, kMaxFrictionLoss));
    for (size_t b = 0; b < p.vals.size(); ++b)
      if (!direct_body(p.a, int(b))) p.vals[b].frictionloss = f;
  }
  aj.finish();
}

// model.targets: the PD targets q* of every joint, replacing the joints' own; one per joint
// after a free root's six (which have no servo)
void parse_targets(const JsonObject& m, ArmParse& p) {
  if (!m.has("targets")) return;
  const ArticulatedLarge& a = p.a;
  const ArticulatedNames& names = p.names;
  // entry k of targets: the k-th dof with a servo (a free root's and balls' have none)
  std::vector<int> entry(size_t(a.n_dof), -1);
  int n_servo = 0;
  for (int j = 0; j < a.n_dof; ++j)
    if (!a.free_dof(j)) entry[size_t(j)] = n_servo++;
  std::vector<double> t = m.numbers("targets", {}, Range::closed(-1e3, 1e3), n_servo);
  for (int b = 0; b < a.n_bodies; ++b) {
    const int j = a.dof[b];
    if (j < 0 || entry[size_t(j)] < 0) continue;
    const int k = entry[size_t(j)];
    if (!(t[k] >= names.target_ranges[j][0] && t[k] <= names.target_ranges[j][1]))
      config_fail(m.key_path("targets") + "[" + std::to_string(k) + "]",
                  fmt(t[k]) + " is outside the target range of " + names.joints[j] + " [" +
                      fmt(names.target_ranges[j][0]) + ", " + fmt(names.target_ranges[j][1]) + "]");
    p.vals[b].jp[Articulated::kTarget] = t[k];
    p.vals[b].has_target = true;
  }
}

// model.torque_limits: the smooth saturation on or off, and the servo's solve; the
// saturation's sharpness [1/(N·m)] is returned (a parameter slot)
double parse_torque_limits(const JsonObject& m, ArticulatedLarge& a, const std::string& integ) {
  JsonObject tl = m.object("torque_limits");
  a.torque_limits = tl.boolean("enabled", true);
  const double sharp = tl.number("sharpness", 5.0, Range{0, 1e6, true, false});
  // 0: MuJoCo's implicitfast (the servo linearized at q̇); n ≥ 1: the servo implicit through
  // the saturation, solved by a predictor and n Newton iterations (articulated.h, servo_solve)
  a.servo_newton = int(tl.integer("newton_iterations", 0, 0, 8));
  if (a.servo_newton > 0 && a.integrator != Articulated::kImplicitFast)
    config_fail(tl.key_path("newton_iterations"),
                std::to_string(a.servo_newton) +
                    " needs model.integrator \"implicitfast\" (got \"" + integ +
                    "\"); use 0 with " + integ);
  if (a.servo_newton > 0 && a.n_balls > 0)
    config_fail(tl.key_path("newton_iterations"),
                std::to_string(a.servo_newton) +
                    " is not available with a free root or a ball joint (joint type \"free\" or "
                    "\"ball\"); use 0");
  tl.finish();
  return sharp;
}

// model.sites: named points fixed in a body, for Cartesian losses
void parse_sites(const JsonObject& m, ArmParse& p) {
  if (!m.has("sites")) return;
  ArticulatedLarge& a = p.a;
  const auto& sites = m.raw("sites");
  const std::string sp = m.key_path("sites");
  if (!sites.is_array())
    config_fail(sp, "expected an array of {\"name\", \"body\", \"pos\", \"quat\"} (at most " +
                        std::to_string(ArticulatedLarge::kMaxSites) + ")");
  if (sites.size() > size_t(ArticulatedLarge::kMaxSites))
    config_fail(sp, "at most " + std::to_string(ArticulatedLarge::kMaxSites) + " sites, got " +
                        std::to_string(sites.size()));
  for (size_t k = 0; k < sites.size(); ++k) {
    const std::string path = sp + "[" + std::to_string(k) + "]";
    if (!sites[k].is_object())
      config_fail(path, "expected an object, got " + json_type_name(sites[k]));
    JsonObject so(sites[k], path);
    const std::string sn = so.string("name", "");
    if (sn.empty()) config_fail(so.key_path("name"), "required: a unique site name");
    for (const auto& other : p.names.sites)
      if (other == sn) config_fail(so.key_path("name"), "'" + excerpt(sn) + "' is used twice");
    if (!so.has("body"))
      config_fail(so.key_path("body"), "required: the name of the body the site is fixed in");
    const std::string sb = so.string("body", "");
    if (sb != "world" && !p.body_index.count(sb))
      config_fail(so.key_path("body"),
                  "'" + excerpt(sb) + "' is not a body of model.bodies (or \"world\")");
    std::vector<double> pos = so.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
    std::vector<double> quat = so.numbers("quat", {1, 0, 0, 0}, Range::closed(-1e3, 1e3), 4);
    if (std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]) <
        1e-9)
      config_fail(so.key_path("quat"), "must not be zero (it is normalized)");
    so.finish();
    const int si = a.n_sites++;
    a.site_body[si] = sb == "world" ? -1 : p.body_index[sb];  // −1: fixed in the world
    for (int i = 0; i < 3; ++i) a.site_pos[si][i] = pos[i];
    quat_to_matrix(quat, a.site_rot[si]);
    p.names.sites.push_back(sn);
  }
}

// model.keyframes: named poses [{"name", "q" (nq numbers), "v" (n_dof numbers)}], for
// initial_state.keyframe (an imported file's <keyframe>s arrive here)
void parse_keyframes(const JsonObject& m, ArmParse& p) {
  if (!m.has("keyframes")) return;
  const nlohmann::json& ks = m.raw("keyframes");
  const std::string kp = m.key_path("keyframes");
  if (!ks.is_array()) config_fail(kp, "expected an array of {\"name\", \"q\", \"v\"}");
  const int nq = p.a.nq(), n = p.a.n_dof;
  for (size_t k = 0; k < ks.size(); ++k) {
    const std::string path = kp + "[" + std::to_string(k) + "]";
    if (!ks[k].is_object()) config_fail(path, "expected an object, got " + json_type_name(ks[k]));
    JsonObject ko(ks[k], path);
    ArticulatedNames::Keyframe f;
    f.name = ko.string("name", "");
    if (f.name.empty()) config_fail(ko.key_path("name"), "required: a unique keyframe name");
    for (const auto& other : p.names.keyframes)
      if (other.name == f.name)
        config_fail(ko.key_path("name"), "'" + excerpt(f.name) + "' is used twice");
    f.q = ko.numbers("q", std::vector<double>(size_t(nq), 0.0), Range::closed(-1e3, 1e3), nq);
    f.v = ko.numbers("v", std::vector<double>(size_t(n), 0.0), Range::closed(-1e6, 1e6), n);
    ko.finish();
    p.names.keyframes.push_back(f);
  }
}

// model.joint_limits: a smooth penalty torque outside each joint's range (articulated.h)
void parse_joint_limits(const JsonObject& m, ArticulatedLarge& a, const ArticulatedNames& names) {
  JsonObject jl = m.object("joint_limits");
  a.joint_limits = jl.boolean("enabled", false);
  a.limit_stiffness = jl.number("stiffness", 1e4, Range{0, 1e9, true, false});
  a.limit_smoothing = jl.number("smoothing", 1e-3, Range{0, 1e3, true, false});
  jl.finish();
  for (int j = 0; j < a.n_dof; ++j)
    a.limit_lower[j] = names.ranges[j][0], a.limit_upper[j] = names.ranges[j][1];
}

// a spatial tendon's path: "sites", 2 … kMaxPath names of model.sites (spatial_tendon.h)
void parse_spatial_path(const JsonObject& to, ArmParse& p, int t) {
  ArticulatedLarge& a = p.a;
  const std::string sp = to.key_path("sites");
  const auto& ss = to.raw("sites");
  if (!ss.is_array() || ss.size() < 2 || ss.size() > size_t(ArticulatedLarge::kMaxPath))
    config_fail(sp, "expected an array of 2 to " + std::to_string(ArticulatedLarge::kMaxPath) +
                        " site names (the tendon's path)");
  for (size_t i = 0; i < ss.size(); ++i) {
    const std::string ip = sp + "[" + std::to_string(i) + "]";
    if (!ss[i].is_string()) config_fail(ip, "expected a site name, got " + json_type_name(ss[i]));
    const std::string sn = ss[i].get<std::string>();
    int s = -1;
    for (int k = 0; k < a.n_sites; ++k)
      if (p.names.sites[size_t(k)] == sn) s = k;
    if (s < 0) config_fail(ip, "'" + excerpt(sn) + "' is not a site of model.sites");
    a.tendon_path[t][i] = s;
  }
  a.tendon_path_n[t] = int(ss.size());
  ++a.n_spatial;
}

// model.tendons: fixed tendons, each a length L = Σ c_j q_j over named hinges and slides with a
// spring (stiffness, springlength), a damper and an optional range (actuator.h)
void parse_tendons(const JsonObject& m, ArmParse& p) {
  if (!m.has("tendons")) return;
  ArticulatedLarge& a = p.a;
  const auto& tendons = m.raw("tendons");
  const std::string tp = m.key_path("tendons");
  const std::string form =
      "{\"name\", \"joints\": [{\"joint\", \"coef\"}, …], \"stiffness\", \"springlength\", "
      "\"damping\", \"range\"}";
  if (!tendons.is_array())
    config_fail(tp, "expected an array of " + form + ", got " + json_type_name(tendons));
  if (tendons.size() > size_t(ArticulatedLarge::kMaxTendons))
    config_fail(tp, "at most " + std::to_string(ArticulatedLarge::kMaxTendons) + " tendons, got " +
                        std::to_string(tendons.size()));
  for (size_t k = 0; k < tendons.size(); ++k) {
    const std::string path = tp + "[" + std::to_string(k) + "]";
    if (!tendons[k].is_object())
      config_fail(path, "expected an object " + form + ", got " + json_type_name(tendons[k]));
    JsonObject to(tendons[k], path);
    const std::string tn = to.string("name", "");
    if (tn.empty()) config_fail(to.key_path("name"), "required: a unique tendon name");
    for (const auto& other : p.names.tendons)
      if (other == tn) config_fail(to.key_path("name"), "'" + excerpt(tn) + "' is used twice");
    const int t = a.n_tendons;
    for (int j = 0; j < a.n_dof; ++j) a.tendon_coef[t * a.n_dof + j] = 0;
    a.tendon_path_n[t] = 0;
    if (to.has("sites")) {
      if (to.has("joints"))
        config_fail(to.key_path("sites"),
                    "give \"joints\" (a fixed tendon) or \"sites\" (a "
                    "spatial one), not both");
      parse_spatial_path(to, p, t);
    } else if (!to.has("joints") || !to.raw("joints").is_array() || to.raw("joints").empty()) {
      config_fail(to.key_path("joints"),
                  "required: a non-empty array of {\"joint\": <hinge or slide>, \"coef\": c} "
                  "(a fixed tendon), or \"sites\" (a spatial one)");
    }
    const nlohmann::json no_joints = nlohmann::json::array();
    const auto& js = to.has("joints") ? to.raw("joints") : no_joints;
    for (size_t e = 0; e < js.size(); ++e) {
      const std::string jp = to.key_path("joints") + "[" + std::to_string(e) + "]";
      if (!js[e].is_object())
        config_fail(jp, "expected {\"joint\": <name>, \"coef\": c}, got " + json_type_name(js[e]));
      JsonObject jo(js[e], jp);
      const std::string jn = jo.string("joint", "");
      int d = -1;
      for (int j = 0; j < a.n_dof; ++j)
        if (p.names.joints[size_t(j)] == jn) d = j;
      if (d < 0)
        config_fail(jo.key_path("joint"),
                    "'" + excerpt(jn) + "' is not a hinge or slide joint of model.bodies");
      if (a.free_dof(d))
        config_fail(jo.key_path("joint"), "'" + excerpt(jn) +
                                              "' is a dof of the free root or a ball joint; a "
                                              "fixed tendon spans hinges and slides only");
      if (a.tendon_coef[t * a.n_dof + d] != 0)
        config_fail(jo.key_path("joint"), "joint '" + excerpt(jn) + "' is listed twice");
      const double coef = jo.number("coef", 1.0, Range::closed(-1e3, 1e3));
      if (coef == 0) config_fail(jo.key_path("coef"), "must not be zero");
      jo.finish();
      a.tendon_coef[t * a.n_dof + d] = coef;
    }
    std::array<double, Articulated::kTendonParams> vals{};
    vals[Articulated::kTendonStiffness] = to.number("stiffness", 0.0, Range::closed(0, 1e9));
    std::vector<double> lr = {-1e3, 1e3};
    if (to.has("springlength_range")) {
      lr = to.numbers("springlength_range", {}, Range::closed(-1e3, 1e3), 2);
      if (!(lr[0] < lr[1]))
        config_fail(to.key_path("springlength_range"), "expected [low, high] with low < high");
    }
    vals[Articulated::kTendonSpringLength] = to.number(
        "springlength", std::min(std::max(0.0, lr[0]), lr[1]), Range::closed(lr[0], lr[1]));
    p.names.springlength_ranges.push_back({lr[0], lr[1]});
    vals[Articulated::kTendonDamping] = to.number("damping", 0.0, Range::closed(0, 1e6));
    a.tendon_limited[t] = to.has("range") ? 1 : 0;
    if (a.tendon_limited[t]) {
      const std::vector<double> r = to.numbers("range", {}, Range::closed(-1e3, 1e3), 2);
      if (!(r[0] < r[1])) config_fail(to.key_path("range"), "expected [low, high] with low < high");
      a.tendon_lower[t] = r[0], a.tendon_upper[t] = r[1];
    }
    to.finish();
    p.tendon_vals.push_back(vals);
    p.names.tendons.push_back(tn);
    ++a.n_tendons;
  }
  if (a.n_spatial > 0 && a.integrator == Articulated::kImplicitFast)
    config_fail(tp,
                "spatial tendons with model.integrator \"implicitfast\" are not available "
                "(steer integrates their forces explicitly); use \"euler\" or \"rk4\"");
  if (a.servo_newton > 0)
    config_fail(tp, "fixed tendons with model.torque_limits.newton_iterations " +
                        std::to_string(a.servo_newton) +
                        " are not available (the implicit servo's system leaves out the tendons' "
                        "implicit damping); use 0");
}

// model.fluid: MuJoCo's inertia-box fluid forces (fluid.h) with density, viscosity and wind;
// every body with mass takes them, its box on its principal axes: inertia_frame when the body
// gives it (an imported file's), else the eigenvectors of its nominal fullinertia
void parse_fluid(const JsonObject& m, ArmParse& p) {
  if (!m.has("fluid")) return;
  ArticulatedLarge& a = p.a;
  const std::string fp = m.key_path("fluid");
  if (!m.raw("fluid").is_object())
    config_fail(fp, "expected {\"density\", \"viscosity\", \"wind\"}, got " +
                        json_type_name(m.raw("fluid")));
  JsonObject fo(m.raw("fluid"), fp);
  p.fluid_vals[Articulated::kFluidDensity] =
      fo.number("density", 0.0, Range::closed(0, kMaxFluidDensity));
  p.fluid_vals[Articulated::kFluidViscosity] =
      fo.number("viscosity", 0.0, Range::closed(0, kMaxFluidViscosity));
  const std::vector<double> wind = fo.numbers("wind", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  for (int i = 0; i < 3; ++i) p.fluid_vals[Articulated::kFluidWindX + i] = wind[size_t(i)];
  fo.finish();
  if (a.integrator == Articulated::kImplicitFast)
    config_fail(fp,
                "fluid forces with model.integrator \"implicitfast\" are not available (steer "
                "integrates them explicitly, MuJoCo's implicit integrators do not); use "
                "\"euler\" or \"rk4\"");
  a.fluid = true;
  for (int b = 0; b < a.n_bodies; ++b) {
    const BodyValues& v = p.vals[size_t(b)];
    a.fluid_body[b] = p.names.is_frame(b) || !(v.mass > 0) ? 0 : 1;
    if (!v.inertia_frame.empty()) {
      quat_to_matrix(v.inertia_frame, a.fluid_frame[b]);
    } else {
      double I[6];
      for (int i = 0; i < 6; ++i) I[i] = v.inertia[size_t(i)];
      symmetric3_eigen(I, a.fluid_frame[b]);
    }
  }
}

// joint friction (joint_friction.h): on when a joint gives `frictionloss` (its θ slot
// <joint>.frictionloss, every joint then having one, 0 where not given) or the model gives
// `frictionloss_velocity`, the law's smoothing speed v_f
void parse_joint_friction(const JsonObject& m, ArmParse& p) {
  ArticulatedLarge& a = p.a;
  bool any = m.has("frictionloss_velocity");
  for (int b = 0; b < a.n_bodies; ++b)
    if (a.dof[b] >= 0 && p.vals[size_t(b)].frictionloss >= 0) any = true;
  a.frictionloss_velocity =
      m.number("frictionloss_velocity", 0.1, Range{0, kMaxFrictionLossVelocity, true, false});
  a.joint_friction = any;
}

// model.gravity: g [m/s²] acting along −z, or the vector (g_x, g_y, g_z) [m/s²] (MuJoCo's
// opt.gravity): its magnitude is θ's gravity slot and its direction the model's gravity_dir
double parse_gravity(const JsonObject& m, ArticulatedLarge& a) {
  if (!m.has("gravity") || !m.raw("gravity").is_array())
    return m.number("gravity", 9.81, Range::closed(-1e3, 1e3));
  const std::vector<double> g = m.numbers("gravity", {}, Range::closed(-1e3, 1e3), 3);
  const double mag = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  if (mag > 0)
    for (int i = 0; i < 3; ++i) a.gravity_dir[i] = g[i] / mag;
  return mag;
}

// the nominal θ: each body's values, gravity, the saturation's sharpness, the contact's values
void fill_theta(ExperimentConfig& c, ArmParse& p, double gravity, double sharp,
                const ArticulatedContactValues& contact_values) {
  const ArticulatedLarge& a = p.a;
  c.theta.assign(a.np(), 0.0);
  for (int b = 0; b < a.n_bodies; ++b) {
    c.theta[a.p_body(b, Articulated::kMass)] = p.vals[b].mass;
    for (int i = 0; i < 3; ++i) c.theta[a.p_body(b, Articulated::kComX + i)] = p.vals[b].com[i];
    for (int i = 0; i < 6; ++i) c.theta[a.p_body(b, Articulated::kIxx + i)] = p.vals[b].inertia[i];
    for (int i = 0; i < 3; ++i) c.theta[a.p_body(b, Articulated::kPosX + i)] = p.pos[b][i];
    if (a.dof[b] >= 0) {
      for (int k = 0; k < Articulated::kJointParams; ++k)
        c.theta[a.p_joint(a.dof[b], k)] = p.vals[b].jp[k];
      p.names.target_given.push_back(p.vals[b].has_target);
    }
  }
  c.theta[a.p_global(Articulated::kGravity)] = gravity;
  c.theta[a.p_global(Articulated::kSharpness)] = sharp;
  articulated_contact_theta(a, contact_values, c.theta.data());
  for (int t = 0; t < a.n_tendons; ++t)
    for (int k = 0; k < Articulated::kTendonParams; ++k)
      c.theta[a.p_tendon(t, k)] = p.tendon_vals[size_t(t)][size_t(k)];
  if (a.fluid)
    for (int k = 0; k < Articulated::kFluidParams; ++k)
      c.theta[a.p_fluid(k)] = p.fluid_vals[size_t(k)];
  if (a.joint_friction)
    for (int b = 0; b < a.n_bodies; ++b)
      if (a.dof[b] >= 0)
        c.theta[a.p_frictionloss(a.dof[b])] = std::max(0.0, p.vals[b].frictionloss);
}

// A JSON arm (model.bodies and the rest), parsed at the large capacity and copied to the
// arm-sized or legged model when the tree fits it
void parse_articulated_arm(const JsonObject& m, ExperimentConfig& c) {
  ArticulatedSetup& setup = c.model.emplace<ArticulatedSetup>();
  ArticulatedLarge& a = setup.large;
  ArticulatedNames& names = setup.names;
  names.included_from =
      m.string("included_from", "");  // set by expand_includes, echoed in the artifact
  const std::string integ = m.choice("integrator", "euler", {"euler", "implicitfast", "rk4"});
  a.integrator = integ == "euler"          ? Articulated::kEuler
                 : integ == "implicitfast" ? Articulated::kImplicitFast
                                           : Articulated::kRk4;
  ArmParse p{a, names, {}, {}, {}};
  parse_bodies(m, p);
  parse_all_joints(m, p);
  parse_targets(m, p);
  const double sharp = parse_torque_limits(m, a, integ);
  ArticulatedContactValues contact_values;
  parse_articulated_contact(m, p.body_index, a, names, contact_values);
  parse_sites(m, p);
  parse_keyframes(m, p);
  parse_joint_limits(m, a, names);
  parse_tendons(m, p);
  parse_fluid(m, p);
  parse_joint_friction(m, p);
  parse_activation_slots(m, a, names);
  const double gravity = parse_gravity(m, a);
  parse_morphology(m, p.body_index, names.point_geoms, names.point_ends, a, setup.morphology);

  c.info = articulated_info(a, names);
  morphology_slots(a, names, setup.morphology, c.info);
  fill_theta(c, p, gravity, sharp, contact_values);
  morphology_theta(a, setup.morphology, c.theta.data());
  setup.large_tree = !articulated_fits<Articulated>(a);
  if (!setup.large_tree) articulated_copy(a, setup.model);
  setup.legged_tree = setup.large_tree && articulated_fits<ArticulatedLegged>(a);
  if (setup.legged_tree) articulated_copy(a, setup.legged);
  PhysicalViolation bad;
  if (!articulated_check_physical(c, c.theta.data(), bad)) config_fail(bad.key, bad.what);
}

}  // namespace

bool articulated_check_physical(const ExperimentConfig& c, const double* theta,
                                PhysicalViolation& v) {
  const ArticulatedLarge& a = c.model_state<ArticulatedSetup>().large;
  const ArticulatedNames& names = c.model_state<ArticulatedSetup>().names;
  // with model.morphology the bodies are judged as they run: after their scale and geom sizes
  std::vector<double> mapped;
  if (a.morphology) {
    mapped.resize(size_t(a.np()));
    morphology_map(c.model_state<ArticulatedSetup>().morphology, a, theta, mapped.data());
    theta = mapped.data();
  }
  for (int b = 0; b < a.n_bodies; ++b) {
    // (the frames steer adds are massless by construction: names.entry)
    if (names.is_frame(b)) continue;
    const std::string body = "model.bodies[" + std::to_string(names.entry[size_t(b)]) + "]";
    const std::string where =
        "body '" + excerpt(names.bodies[b]) + "'" +
        (names.included_from.empty() ? std::string()
                                     : " (model.include '" + excerpt(names.included_from) + "')") +
        (names.imported_from.empty()
             ? std::string()
             : " (model." + names.imported_key + " '" + excerpt(names.imported_from) + "')");
    const int qm = a.p_body(b, Articulated::kMass);
    // the range check covers one slot; this repeats it so that a body is judged whole
    if (!(theta[qm] > 0) || !std::isfinite(theta[qm])) {
      v = {body + ".mass", where + ": mass " + fmt(theta[qm]) + " kg is not positive", {qm}};
      return false;
    }
    double I[6];
    for (int i = 0; i < 6; ++i) I[i] = theta[a.p_body(b, Articulated::kIxx + i)];
    std::string bad = inertia_violation(I);
    if (!bad.empty()) {
      v.key = body + ".fullinertia";
      v.what = where + ": " + bad + "; fullinertia (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) = (" + fmt(I[0]) +
               ", " + fmt(I[1]) + ", " + fmt(I[2]) + ", " + fmt(I[3]) + ", " + fmt(I[4]) + ", " +
               fmt(I[5]) + ")";
      v.slots.clear();
      for (int i = 0; i < 6; ++i) v.slots.push_back(a.p_body(b, Articulated::kIxx + i));
      return false;
    }
  }
  return true;
}

namespace {

// initial_state.act: the activations (activation.h), n_act values; by default MuJoCo's act = 0,
// which for an imported file is act_start (imported_foreign_controls: the ctrl map's offset on
// the joint), else 0
void parse_initial_activations(const JsonObject& s, ExperimentConfig& c,
                               const std::vector<double>& act_start) {
  const ArticulatedLarge& a = c.model_state<ArticulatedSetup>().large;
  const int base = a.nq() + a.n_dof;
  std::vector<double> act0(size_t(a.n_act), 0.0);
  for (int j = 0; j < a.n_dof; ++j)
    if (a.act_kind[j] != Articulated::kActNone && size_t(j) < act_start.size())
      act0[size_t(a.act_slot[j])] = act_start[size_t(j)];
  if (a.n_act == 0 && s.has("act"))
    config_fail(s.key_path("act"),
                "the model has no actuator activations (model.joints[]."
                "activation); remove initial_state.act");
  const std::vector<double> act = s.numbers("act", act0, Range::closed(-1e9, 1e9), a.n_act);
  for (int k = 0; k < a.n_act; ++k) c.x0[size_t(base + k)] = act[size_t(k)];
}

}  // namespace

void parse_articulated_initial_state(const JsonObject& s, ExperimentConfig& c) {
  const ArticulatedLarge& a = c.model_state<ArticulatedSetup>().large;
  const ArticulatedNames& names = c.model_state<ArticulatedSetup>().names;
  const int n = a.n_dof, nq = a.nq();
  // q: nq entries (a free root's p and quaternion first, the quaternion normalized here); v: n
  // the default: the pose the tree describes, each hinge and slide at its ref (MuJoCo's qpos0)
  // (a ball's quaternion the identity)
  std::vector<double> q0(nq, 0.0);
  for (int k = 0; k < a.n_balls; ++k) q0[size_t(a.qadr(a.ball_dof[k]))] = 1.0;
  for (const ArticulatedNames::FreeJoint& f : names.free_joints)
    for (int i = 0; i < 7; ++i) q0[size_t(a.qadr(f.dof) + i)] = f.q0[size_t(i)];
  for (int j = 0; j < n; ++j)
    if (!a.free_dof(j)) q0[a.qadr(j)] = a.joint_ref[j];
  std::vector<double> v0(size_t(n), 0.0);
  // initial_state.keyframe: a named pose of model.keyframes (an imported file's <keyframe>) as
  // the defaults of q and v
  if (s.has("keyframe")) {
    const std::string kn = s.string("keyframe", "");
    const ArticulatedNames::Keyframe* found = nullptr;
    std::string known;
    for (const auto& f : names.keyframes) {
      if (f.name == kn) found = &f;
      known += (known.empty() ? "" : ", ") + ("'" + excerpt(f.name) + "'");
    }
    if (!found)
      config_fail(s.key_path("keyframe"),
                  "'" + excerpt(kn) + "' is not a keyframe of the model (" +
                      (known.empty() ? std::string("it has none") : "it has " + known) + ")");
    q0 = found->q;
    v0 = found->v;
  }
  std::vector<double> q = s.numbers("q", q0, Range::closed(-1e3, 1e3), nq);
  std::vector<double> v = s.numbers("v", v0, Range::closed(-1e6, 1e6), n);
  for (int k = 0; k < a.n_balls; ++k) {
    const int qa = a.qadr(a.ball_dof[k]);
    double* n4 = q.data() + qa;
    const double qn = std::sqrt(n4[0] * n4[0] + n4[1] * n4[1] + n4[2] * n4[2] + n4[3] * n4[3]);
    if (!(qn > 1e-9))
      config_fail(s.key_path("q") + "[" + std::to_string(qa) + ".." + std::to_string(qa + 3) + "]",
                  "the quaternion (w, x, y, z) of " +
                      (names.free_joint_of(a.ball_dof[k]) ? std::string("free joint '")
                                                          : std::string("ball joint '")) +
                      names.balls[size_t(k)] + "' must not be zero (it is normalized)");
    for (int i = 0; i < 4; ++i) n4[i] /= qn;
  }
  c.x0.assign(size_t(a.nx()), 0.0);
  for (int i = 0; i < nq; ++i) {
    const Range& r = c.info.state_ranges[i];
    if (!r.contains(q[i]))
      config_fail(
          s.key_path("q") + "[" + std::to_string(i) + "]",
          fmt(q[i]) + " is outside the range of " + c.info.state_names[i] + ", " + r.describe());
    c.x0[i] = q[i];
  }
  for (int j = 0; j < n; ++j) {
    c.x0[nq + j] = v[j];
    // a PD target not given holds the initial pose (the nearest pose within the target's range
    // when the start is outside it, as the target's range requires)
    if (!a.free_dof(j) && !names.target_given[j])
      c.theta[a.p_joint(j, Articulated::kTarget)] =
          std::min(std::max(q[a.qadr(j)], names.target_ranges[j][0]), names.target_ranges[j][1]);
  }
  std::vector<double> act_start;
#ifdef STEER_MUJOCO_IMPORT
  if (!names.imported_key.empty()) imported_foreign_controls(c, act_start);
#endif
  parse_initial_activations(s, c, act_start);
}

nlohmann::json articulated_model_json(const ExperimentConfig& c) {
  const ArticulatedLarge& a = c.model_state<ArticulatedSetup>().large;
  const ArticulatedNames& names = c.model_state<ArticulatedSetup>().names;
  nlohmann::json m;
  m["integrator"] = a.integrator == Articulated::kEuler          ? "euler"
                    : a.integrator == Articulated::kImplicitFast ? "implicitfast"
                                                                 : "rk4";
  m["torque_limits"] = a.torque_limits ? "smooth saturation tau - (softplus(beta (tau - lim)) - "
                                         "softplus(beta (-tau - lim)))/beta"
                                       : "off";
  if (a.integrator == Articulated::kImplicitFast)
    m["servo_solve"] = a.servo_newton == 0
                           ? std::string("linearized at the step's velocity (MuJoCo implicitfast)")
                           : "implicit through the saturation: unsaturated predictor + " +
                                 std::to_string(a.servo_newton) + " Newton iterations";
  articulated_contact_json(a, names, m);
  morphology_json(a, names, c.model_state<ArticulatedSetup>().morphology, m);
  if (a.joint_limits)
    m["joint_limits"] = {
        {"law", "k w [softplus((lo - q)/w) - softplus((q - hi)/w)], lo/hi = each joint's range"},
        {"stiffness", a.limit_stiffness},
        {"smoothing", a.limit_smoothing}};
  else
    m["joint_limits"] = "off";
  if (!(a.gravity_dir[0] == 0 && a.gravity_dir[1] == 0 && a.gravity_dir[2] == -1))
    m["gravity_direction"] = std::vector<double>(a.gravity_dir, a.gravity_dir + 3);
  m["dof"] = a.n_dof;
  nlohmann::json bs = nlohmann::json::array();
  auto joint_json = [&](int b) {
    const int j = a.dof[b];
    nlohmann::json e = {{"name", names.joints[j]},
                        {"type", a.joint[b] == Articulated::kHinge ? "hinge" : "slide"},
                        {"axis", std::vector<double>(a.axis[b], a.axis[b] + 3)},
                        {"pos_m", std::vector<double>(a.joint_pos[b], a.joint_pos[b] + 3)},
                        {"range", {names.ranges[j][0], names.ranges[j][1]}}};
    if (a.joint_ref[j] != 0) e["ref"] = a.joint_ref[j];
    if (names.target_ranges[j] != names.ranges[j])
      e["target_range"] = {names.target_ranges[j][0], names.target_ranges[j][1]};
    if (a.act_kind[j] != Articulated::kActNone) {
      static const char* kDynamics[4] = {"", "filter", "filterexact", "integrator"};
      e["activation"] = {{"dynamics", kDynamics[a.act_kind[j]]},
                         {"state", names.joints[j] + ".act"},
                         {"early", a.act_early[j] != 0}};
      if (a.act_kind[j] != Articulated::kActIntegrator)
        e["activation"]["time_constant_s"] = a.act_tau[j];
    }
    return e;
  };
  for (int b = 0; b < a.n_bodies; ++b) {
    if (names.is_frame(b)) continue;  // the frames steer adds are listed with their body
    if (const ArticulatedNames::FreeJoint* fj = names.free_joint_of(a.dof[b])) {
      // a free joint's body (its frames are not listed)
      bs.push_back({{"name", names.bodies[b]},
                    {"parent", "world"},
                    {"joint", {{"name", fj->name}, {"type", "free"}, {"nq", 7}, {"nv", 6}}}});
      continue;
    }
    // a body with several joints: its frames (model.h) above it, the first of which has its pose;
    // a ball's body: its two frames, the first with its pose
    int top = b;
    nlohmann::json joints = nlohmann::json::array();
    if (a.turn[b] == 3) {
      top = b - 2;
      joints.push_back(
          {{"name", names.balls[size_t(std::find(a.ball_dof, a.ball_dof + a.n_balls, a.dof[top]) -
                                       a.ball_dof)]},
           {"type", "ball"},
           {"pos_m", std::vector<double>(a.joint_pos[b], a.joint_pos[b] + 3)},
           {"nq", 4},
           {"nv", 3}});
    }
    while (a.turn[b] == 0 && a.parent[top] >= 0 && names.is_frame(a.parent[top])) {
      top = a.parent[top];
      joints.insert(joints.begin(), joint_json(top));
    }
    nlohmann::json e = {
        {"name", names.bodies[b]},
        {"parent", a.parent[top] < 0 ? std::string("world") : names.bodies[a.parent[top]]},
        {"pos_m", std::vector<double>(c.theta.begin() + a.p_body(top, Articulated::kPosX),
                                      c.theta.begin() + a.p_body(top, Articulated::kPosX) + 3)},
        {"rotation_row_major", std::vector<double>(a.rot[top], a.rot[top] + 9)}};
    if (a.dof[b] >= 0 && a.turn[b] == 0) joints.push_back(joint_json(b));
    if (joints.size() == 1) e["joint"] = joints[0];
    if (joints.size() > 1) e["joints"] = joints;
    bs.push_back(e);
  }
  m["bodies"] = bs;
  nlohmann::json ss = nlohmann::json::array();
  for (int s = 0; s < a.n_sites; ++s)
    ss.push_back(
        {{"name", names.sites[s]},
         {"body", a.site_body[s] < 0 ? std::string("world") : names.bodies[a.site_body[s]]},
         {"pos_m", std::vector<double>(a.site_pos[s], a.site_pos[s] + 3)},
         {"rotation_row_major", std::vector<double>(a.site_rot[s], a.site_rot[s] + 9)}});
  m["sites"] = ss;
  if (a.n_tendons > 0) {
    nlohmann::json ts = nlohmann::json::array();
    for (int t = 0; t < a.n_tendons; ++t) {
      nlohmann::json js = nlohmann::json::array();
      for (int j = 0; j < a.n_dof; ++j)
        if (a.tendon_c(t, j) != 0)
          js.push_back({{"joint", names.joints[j]}, {"coef", a.tendon_c(t, j)}});
      nlohmann::json path = nlohmann::json::array();
      for (int i = 0; i < (a.tendon_spatial(t) ? a.tendon_path_n[t] : 0); ++i)
        path.push_back(names.sites[size_t(a.tendon_path[t][i])]);
      nlohmann::json e = {
          {"name", names.tendons[size_t(t)]},
          {"joints", js},
          {"length", a.tendon_spatial(t) ? "the straight segments' lengths between its sites"
                                         : "sum of coef * q over its joints"},
          {"force",
           "-stiffness (L - springlength) - damping dL/dt (+ the limit's), "
           "coef * force on each joint; θ slots <name>.stiffness, "
           ".springlength, .damping"},
          {"damping_integration", a.integrator == Articulated::kImplicitFast
                                      ? "implicit (in the step's matrix)"
                                      : "explicit"}};
      const std::array<double, 2>& lr = names.springlength_ranges[size_t(t)];
      if (lr[0] != -1e3 || lr[1] != 1e3) e["springlength_range"] = {lr[0], lr[1]};
      if (a.tendon_spatial(t)) {
        e["sites"] = path;
        e.erase("joints");
        e["damping_integration"] = "explicit";
      }
      if (a.tendon_limited[t]) {
        e["range"] = {a.tendon_lower[t], a.tendon_upper[t]};
        e["limit"] = a.joint_limits ? "model.joint_limits' law on the tendon's length"
                                    : "off (model.joint_limits is disabled)";
      }
      ts.push_back(e);
    }
    m["tendons"] = ts;
  }
  if (a.fluid)
    m["fluid"] = {{"model",
                   "MuJoCo's inertia-box model: each body with mass is the box of its "
                   "mass and principal moments, on its principal axes"},
                  {"slots", "fluid.density [kg/m^3], fluid.viscosity [Pa*s], fluid.wind [m/s]"},
                  {"integration", "explicit"}};
  if (a.joint_friction)
    m["frictionloss"] = {{"law", "-frictionloss tanh(dq/dt / frictionloss_velocity) on each joint"},
                         {"frictionloss_velocity", a.frictionloss_velocity},
                         {"slots", "<joint>.frictionloss [N*m or N]"},
                         {"integration", "explicit"}};
  if (!names.import_record.is_null()) m["imported_from"] = names.import_record;
  return m;
}

}  // namespace steer
