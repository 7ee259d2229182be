// model.mjcf / model.urdf: MuJoCo's compiler reads the file (includes, defaults, URDF, inertia
// from geoms, principal axes), and the compiled mjModel is mapped onto steer's articulated
// model as JSON model keys (mjcf_import.h). Mapping, per element of the compiled model:
//   body b (≠ world):  pos = body_pos, quat = body_quat (parent frame), mass = body_mass,
//                      com = body_ipos, fullinertia = R(iquat) diag(body_inertia) R(iquat)ᵀ
//                      (about the centre of mass, body axes);
//   hinge / slide:     axis = jnt_axis, pos = jnt_pos (body frame), range = jnt_range when
//                      limited, damping = dof_damping, armature = dof_armature, ref = qpos0,
//                      stiffness = jnt_stiffness, springref = qpos_spring; a body's several
//                      joints as "joints" in MuJoCo's order (one massless frame per joint but
//                      the last: config_articulated.cpp);
//   free joint:        on a child of worldbody only (a floating base): "type": "free", the
//                      body's pos and quat (MuJoCo's qpos0 for it) the initial pose, damping
//                      and armature when equal on its six dofs;
//   actuator on joint j with gear g, gain G and affine bias (b0, b1, b2) on length g q and
//   velocity g q̇: joint force τ = g (G ctrl + b1 g q + b2 g q̇), so
//                      kp = −g² b1, kv = −g² b2, and the control term g G ctrl goes to the
//                      PD target q* = g G ctrl / kp when kp > 0 (a position servo), else to
//                      the feed-forward torque u_ff = g G ctrl (a motor or velocity servo);
//                      a symmetric forcerange ±F (or a motor's ctrlrange ±c) is the joint's
//                      force limit |g| F (|g G| c), under steer's smooth saturation, and so
//                      is a joint's symmetric actuatorfrcrange ±F (F);
//                      a servo's ctrlrange [c₀, c₁] is its target's range (MuJoCo clamps
//                      ctrl): target_range = scale · [c₀, c₁] within the joint's range;
//   actuator on a fixed tendon over one joint (coefficient c): the joint's actuator with the
//                      gear g c (the tendon's length is c q); over several joints or on a
//                      spatial tendon, a position servo only: the tendon's spring, stiffness K =
//                      −g² b1, damping + −g² b2, springlength its target L* = g G ctrl / K
//                      (springlength_range from the ctrlrange);
//   spatial tendon t:  model.tendons entry with sites = its site wraps in order (straight
//                      segments; wrapping geoms and pulleys refused), the rest as a fixed one's;
//   fixed tendon t:    model.tendons entry: joints = its joint wraps with coef = wrap_prm,
//                      stiffness = tendon_stiffness, springlength = tendon_lengthspring (one
//                      value), damping = tendon_damping, range = tendon_range when limited
//                      (steer's smooth penalty, model.joint_limits' law);
//   joint frictionloss: the joint's frictionloss under steer's smooth law (joint_friction.h);
//   joint and tendon equality (linear polycoef): a coupling tendon '<name>_equality' over
//                      the joints, its spring and damper from solref (import_equality);
//   sites:             site_pos, site_quat in their body's frame ("world" for the world body's);
//   contact:           the geom pairs MuJoCo would collide (contype/conaffinity, welded and
//                      parent–child bodies, <exclude>: collidable()), each a world plane
//                      (horizontal) against a sphere or capsule on a moving body; one sphere: the
//                      contact point is the sphere's centre and the plane height is raised by its
//                      radius (d = z_plane + r − z_centre); more than one such geom, or capsules,
//                      boxes or cylinders: every sphere, each capsule's two end caps, each box's
//                      8 corners and 12 points on each of a cylinder's two rims (radius 0) that
//                      can collide with the plane become the ground points of model.contacts
//                      ({name, body, pos (body frame), radius}; at most
//                      ArticulatedLarge::kMaxGroundPoints), the plane's
//                      height contact.height and, when every pair's is the same, MuJoCo's pair
//                      friction max(μ_plane, μ_geom) contact.friction;
//   options:           gravity (any direction), timestep, integrator Euler / RK4, and density,
//                      viscosity and wind as model.fluid (MuJoCo's inertia-box model; each
//                      body's inertia_frame = body_iquat, the box's axes).
// Refused, naming the element: free joints below the root or beside other joints, ball joints,
// a free joint's spring or frictionloss, spatial tendons around geoms or pulleys, a motor (or a
// second servo, or a servo
// beside a spring) on a tendon over several joints, a fixed tendon's
// deadband, frictionloss, armature or plasticity, equality constraints other than linear joint
// and tendon couplings, explicit
// contact pairs, mocap bodies, actuators with dynamics or non-affine gain / bias or a
// constant bias, two actuators sharing a limited joint, asymmetric limits, any other collidable
// pair (naming both geoms: a box or cylinder against anything but the plane, ellipsoids and
// meshes, tilted or second planes), the ellipsoid fluid model (fluidshape), the implicit,
// implicitfast and discrete integrators; and what MuJoCo 3 and 4 added: gravity compensation,
// polynomial stiffness and damping, an actuator's damping, armature, delay, several controls or
// outputs, plugins, flexes, sleeping, eulerdamp disabled with damping, disabled actuator groups,
// surface velocity and adhesion on colliding geoms. Written against MuJoCo ≥ 3.3's mjModel
// (cmake/mujoco_import.cmake; tested with 4.0.1): controls (ctrlrange) are addressed by
// actuator_ctrladr and gears by actuator_outadr.
#include "models/articulated/mjcf_import.h"
#include "models/articulated/morphology.h"
#include "models/articulated/mujoco/mujoco_library.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/json_reader.h"
#include "steer/models/articulated/model.h"

namespace steer {

namespace {

// SHA-256 (FIPS 180-4) of a byte string, lowercase hex: the artifact names the exact file a
// run compiled
std::string sha256_hex(const std::string& data) {
  static const uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg = data;
  const uint64_t bits = uint64_t(data.size()) * 8;
  msg.push_back(char(0x80));
  while (msg.size() % 64 != 56) msg.push_back(char(0));
  for (int i = 7; i >= 0; --i) msg.push_back(char((bits >> (8 * i)) & 0xff));
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(uint8_t(msg[off + 4 * i])) << 24 |
             uint32_t(uint8_t(msg[off + 4 * i + 1])) << 16 |
             uint32_t(uint8_t(msg[off + 4 * i + 2])) << 8 | uint32_t(uint8_t(msg[off + 4 * i + 3]));
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 =
          hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  char out[65];
  for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return std::string(out, 64);
}

// MuJoCo's compiler message as text: its lines (the error, then "Element name ..., line N") as
// lines indented under steer's, blank ones dropped, other control characters dropped; at most
// 600 bytes of it
std::string compiler_text(const std::string& err) {
  size_t n = std::min(err.size(), size_t(600));
  while (n < err.size() && n > 0 && (static_cast<unsigned char>(err[n]) & 0xC0) == 0x80) --n;
  std::string out, line;
  auto flush = [&] {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) out += (out.empty() ? "  " : "\n  ") + line;
    line.clear();
  };
  for (const char ch : err.substr(0, n)) {
    if (ch == '\n')
      flush();
    else if (static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7F)
      line += ch;
  }
  flush();
  return out + (n < err.size() ? "…" : "");
}

// the loaded library (mujoco_library.h); import_mujoco_model checks that it loads before any
// mjModel exists, so the functions below find it loaded
const MujocoLibrary& mj() { return *mujoco_library(nullptr); }

struct ModelFree {
  void operator()(mjModel* m) const { mj().delete_model(m); }
};

// whether s is valid UTF-8 (every name reaches JSON, which holds UTF-8 only)
bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // the continuation bytes a lead byte announces: 0 (ASCII), 1, 2, 3; −1: not a lead byte
    const int n = c < 0x80           ? 0
                  : (c >> 5) == 0x6  ? 1
                  : (c >> 4) == 0xE  ? 2
                  : (c >> 3) == 0x1E ? 3
                                     : -1;
    if (n < 0 || i + size_t(n) >= s.size() + (n == 0 ? 1u : 0u)) return false;
    for (int k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + size_t(k)]) >> 6) != 0x2) return false;
    i += size_t(n) + 1;
  }
  return true;
}

// an element's name; one that is not UTF-8 is refused (naming the element by its index)
std::string name_of(const mjModel* m, int type, int id, const std::string& fallback) {
  const char* n = mj().id2name(m, type, id);
  const std::string name = n && *n ? std::string(n) : fallback;
  if (!valid_utf8(name))
    throw ConfigError("config: model.mjcf: the name of element #" + std::to_string(id) + " (" +
                      fallback + ") is not valid UTF-8; steer's names are UTF-8 text");
  return name;
}

std::string num(double v) { return number_text(v); }
// a derived figure for a note, to 4 significant digits (the model keys keep every digit)
std::string num4(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// row-major rotation of the unit quaternion (w, x, y, z)
void quat_matrix(const double* q, double* R) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

std::vector<double> vec(const double* v, int n) { return std::vector<double>(v, v + n); }

// One import: the compiled model, what its option flags switch on, and the model keys built so
// far, shared by the stages below (one per kind of MuJoCo element).
struct MjcfImport {
  const mjModel* m = nullptr;
  std::string shown, kp;  // the file as the config names it; its key, model.<mjcf|urdf>
  int dis = 0;            // opt.disableflags
  bool spring_on = false, damper_on = false, contact_on = false, limits_on = false,
       friction_on = false, equality_on = false;
  nlohmann::json notes = nlohmann::json::array();
  std::string integrator;
  bool fluid = false;         // option density or viscosity: model.fluid
  bool frictionloss = false;  // a hinge or slide with frictionloss: steer's smooth law
  // bodies and joints
  nlohmann::json bodies = nlohmann::json::array();
  std::vector<int>
      dof_body;  // steer dof → MuJoCo joint id (hinges and slides; a free root's six come first)
  std::vector<int> joint_of_dof_mj;  // MuJoCo dof → steer's hinge/slide index, −1 for none
  int free_dofs = 0;                 // 6 per free joint
  int ball_dofs = 0;                 // 3 per ball joint
  bool any_limited_joint = false;
  // fixed tendons (model.tendons)
  nlohmann::json tendons = nlohmann::json::array();
  bool any_limited_tendon = false;
  // actuators, per steer hinge/slide joint
  std::vector<std::vector<int>> on_joint;  // the actuators on it
  std::vector<double> control_scale;       // u_ff = scale · ctrl of the joint's control actuator
  std::vector<std::string> control_actuator;
  std::vector<double> target_scale;  // q* = scale · ctrl of the joint's servo
  // position servos on tendons over several joints: {tendon, actuator, springlength_per_ctrl}
  nlohmann::json tendon_servos = nlohmann::json::array();
  std::vector<std::string> target_actuator;
  // per steer hinge/slide: the activation its control takes (activation.h; null: none) and the
  // first actuator that set it (actuator_activation, drive_activation)
  std::vector<nlohmann::json> activation;
  std::vector<std::string> activation_actuator;
  // per actuator, in MuJoCo's ctrl order: what its control drives ({actuator, ctrlrange when
  // MuJoCo clamps it, and joint with torque_per_ctrl or target_per_ctrl, or tendon with
  // springlength_per_ctrl}), the record's "ctrl" (controls in MuJoCo's units)
  nlohmann::json ctrl_map = nlohmann::json::array();
  bool any_force_limit = false;
  // sites and contact
  nlohmann::json sites = nlohmann::json::array();
  nlohmann::json contact = {{"enabled", false}};
  nlohmann::json geoms = nlohmann::json::array();  // model.geoms: the points' spheres and capsules
  nlohmann::json tip;
  nlohmann::json points = nlohmann::json::array();
  nlohmann::json pairs = nlohmann::json::array();  // model.pairs: geom-geom contact
  std::vector<std::pair<int, int>> contact_pairs;  // every collidable geom pair steer models
  std::vector<std::string> box_box_pairs;  // "a|b": two boxes, as each one's corners (a note)

  [[noreturn]] void refuse(const std::string& what) const {
    config_fail(kp, "'" + excerpt(shown) + "': " + what);
  }
  std::string body_name(int b) const {
    return name_of(m, mjOBJ_BODY, b, "body" + std::to_string(b));
  }
  std::string geom_name(int g) const {
    return "geom '" + name_of(m, mjOBJ_GEOM, g, "#" + std::to_string(g)) + "'";
  }
  std::string tendon_name(int t) const {
    return "tendon '" + name_of(m, mjOBJ_TENDON, t, "#" + std::to_string(t)) + "'";
  }
  std::string actuator_name(int a) const { return "actuator '" + plain_actuator(a) + "'"; }
  std::string plain_actuator(int a) const {
    return name_of(m, mjOBJ_ACTUATOR, a, "#" + std::to_string(a));
  }
  // the joint keys of MuJoCo joint j (in its body's entry, "joints" in MuJoCo's order until
  // imported_model writes a body's only joint as "joint"; bodies are MuJoCo's less the world)
  nlohmann::json& joint_json(int j) {
    const int b = m->jnt_bodyid[j];
    return bodies[size_t(b - 1)]["joints"][size_t(j - m->body_jntadr[b])];
  }
};

// ---- values the compiler passed but steer refuses by the element's name ----
// A non-finite number anywhere steer reads from (MuJoCo compiles nan and inf in many places),
// a timestep outside (0, 10] s, and negative joint damping, armature or stiffness: each refused
// naming the element, not the model key it would map to
void refuse_nonfinite(MjcfImport& im) {
  const mjModel* m = im.m;
  auto check = [&](const double* v, int n, const std::string& what) {
    for (int i = 0; i < n; ++i)
      if (!std::isfinite(v[i])) im.refuse(what + " has a non-finite value (" + num(v[i]) + ")");
  };
  const mjOption& o = m->opt;
  if (!(std::isfinite(o.timestep) && o.timestep > 0 && o.timestep <= 10))
    im.refuse("option timestep " + num(o.timestep) + " s is outside (0, 10] s");
  check(o.gravity, 3, "option gravity");
  check(o.wind, 3, "option wind");
  check(&o.density, 1, "option density");
  check(&o.viscosity, 1, "option viscosity");
  for (int b = 1; b < m->nbody; ++b) {
    const std::string bw = "body '" + im.body_name(b) + "'";
    check(m->body_pos + 3 * b, 3, bw + ": pos");
    check(m->body_quat + 4 * b, 4, bw + ": quat");
    check(m->body_ipos + 3 * b, 3, bw + ": inertial pos");
    check(m->body_iquat + 4 * b, 4, bw + ": inertial quat");
    check(m->body_mass + b, 1, bw + ": mass");
    check(m->body_inertia + 3 * b, 3, bw + ": inertia");
  }
  for (int j = 0; j < m->njnt; ++j) {
    const std::string jw = "joint '" + name_of(m, mjOBJ_JOINT, j, "#" + std::to_string(j)) + "'";
    check(m->jnt_axis + 3 * j, 3, jw + ": axis");
    check(m->jnt_pos + 3 * j, 3, jw + ": pos");
    check(m->jnt_range + 2 * j, 2, jw + ": range");
    check(m->jnt_stiffness + j, 1, jw + ": stiffness");
    if (m->jnt_stiffness[j] < 0)
      im.refuse(jw + ": stiffness " + num(m->jnt_stiffness[j]) + " is negative");
    const int dof = m->jnt_dofadr[j];
    const int nv = m->jnt_type[j] == mjJNT_FREE ? 6 : m->jnt_type[j] == mjJNT_BALL ? 3 : 1;
    const int nqj = m->jnt_type[j] == mjJNT_FREE ? 7 : m->jnt_type[j] == mjJNT_BALL ? 4 : 1;
    check(m->qpos0 + m->jnt_qposadr[j], nqj, jw + ": ref (its qpos0)");
    check(m->qpos_spring + m->jnt_qposadr[j], nqj, jw + ": springref");
    check(m->dof_damping + dof, nv, jw + ": damping");
    check(m->dof_armature + dof, nv, jw + ": armature");
    check(m->dof_frictionloss + dof, nv, jw + ": frictionloss");
    for (int k = 0; k < nv; ++k) {
      if (m->dof_damping[dof + k] < 0)
        im.refuse(jw + ": damping " + num(m->dof_damping[dof + k]) + " is negative");
      if (m->dof_armature[dof + k] < 0)
        im.refuse(jw + ": armature " + num(m->dof_armature[dof + k]) + " is negative");
    }
  }
  for (int a = 0; a < m->nactuator; ++a) {
    const std::string aw =
        "actuator '" + name_of(m, mjOBJ_ACTUATOR, a, "#" + std::to_string(a)) + "'";
    check(m->actuator_gear + 6 * a, 6, aw + ": gear");
    check(m->actuator_gainprm + mjNGAIN * a, mjNGAIN, aw + ": gain");
    check(m->actuator_biasprm + mjNBIAS * a, mjNBIAS, aw + ": bias");
    check(m->actuator_forcerange + 2 * a, 2, aw + ": forcerange");
  }
  for (int c = 0; c < m->nu; ++c) check(m->actuator_ctrlrange + 2 * c, 2, "a ctrlrange");
  for (int g = 0; g < m->ngeom; ++g) {
    const std::string gw = "geom '" + name_of(m, mjOBJ_GEOM, g, "#" + std::to_string(g)) + "'";
    check(m->geom_pos + 3 * g, 3, gw + ": pos");
    check(m->geom_quat + 4 * g, 4, gw + ": quat");
    check(m->geom_size + 3 * g, 3, gw + ": size");
    check(m->geom_friction + 3 * g, 3, gw + ": friction");
  }
  for (int s = 0; s < m->nsite; ++s) {
    const std::string sw = "site '" + name_of(m, mjOBJ_SITE, s, "#" + std::to_string(s)) + "'";
    check(m->site_pos + 3 * s, 3, sw + ": pos");
    check(m->site_quat + 4 * s, 4, sw + ": quat");
  }
  for (int k = 0; k < m->nkey; ++k) {
    const std::string kw = "keyframe '" + name_of(m, mjOBJ_KEY, k, "#" + std::to_string(k)) + "'";
    check(m->key_qpos + k * m->nq, m->nq, kw + ": qpos");
    check(m->key_qvel + k * m->nv, m->nv, kw + ": qvel");
  }
}

// ---- options and the global elements steer does not model ----
// the elements of the compiled model that steer has no counterpart for, refused when present
void refuse_global_elements(MjcfImport& im) {
  const mjModel* m = im.m;
  if (m->nmocap > 0)
    im.refuse(std::to_string(m->nmocap) + " mocap body(ies): mocap bodies are not modelled");
  if (im.contact_on && m->npair > 0)
    im.refuse(
        "contact pair #0 (<contact><pair>): explicit geom-geom contact pairs are not modelled");
  if (m->nflex > 0)
    im.refuse(std::to_string(m->nflex) + " flex(es), first '" + name_of(m, mjOBJ_FLEX, 0, "#0") +
              "': deformable bodies (flex, flexcomp) are not modelled");
  if (m->nplugin > 0)
    im.refuse(std::to_string(m->nplugin) +
              " plugin instance(s) (<extension><plugin>): engine plugins are not modelled");
}

// fluid forces: MuJoCo computes them when density or viscosity is positive, per body with mass
// by its inertia box unless one of its geoms asks for the ellipsoid model (fluidshape); the
// box's axes are the body's principal axes, body_iquat (fluid.h)
void import_fluid(MjcfImport& im) {
  const mjModel* m = im.m;
  const mjOption& o = m->opt;
  if (!(o.density > 0 || o.viscosity > 0)) {
    if (o.wind[0] != 0 || o.wind[1] != 0 || o.wind[2] != 0)
      im.notes.push_back(
          "option wind: without density or viscosity MuJoCo applies no fluid "
          "force, nor does steer");
    return;
  }
  if (o.density < 0 || o.viscosity < 0)
    im.refuse("option density " + num(o.density) + ", viscosity " + num(o.viscosity) +
              ": a negative density or viscosity is not modelled");
  if (!im.spring_on && !im.damper_on)
    im.refuse(
        "option density/viscosity with the spring and damper flags disabled: MuJoCo then "
        "skips the passive forces, fluid ones included; steer does not model that switch");
  for (int g = 0; g < m->ngeom; ++g)
    if (m->geom_fluid[mjNFLUID * g] > 0)
      im.refuse("geom '" + name_of(m, mjOBJ_GEOM, g, "#" + std::to_string(g)) + "' (body '" +
                im.body_name(m->geom_bodyid[g]) +
                "'): fluidshape=\"ellipsoid\" (MuJoCo's ellipsoid fluid model) is not "
                "modelled; steer models the inertia-box one");
  im.fluid = true;
  im.notes.push_back(
      "fluid forces: MuJoCo's inertia-box model (model.fluid; θ slots fluid.density, "
      "fluid.viscosity, fluid.wind), explicit in the step as in MuJoCo's Euler and RK4");
}

// the integrator: MuJoCo's Euler (joint damping implicit unless eulerdamp is disabled) and RK4
// are steer's euler and rk4
void import_integrator(MjcfImport& im) {
  const mjOption& o = im.m->opt;
  if (o.integrator == mjINT_EULER) {
    im.integrator = "euler";
    if ((im.dis & mjDSBL_EULERDAMP) && im.damper_on)
      for (int i = 0; i < im.m->nv; ++i)
        if (im.m->dof_damping[i] != 0)
          im.refuse(
              "option flag eulerdamp=\"disable\" with joint damping: steer's Euler integrates "
              "joint damping implicitly, as MuJoCo's does by default");
    return;
  }
  if (o.integrator == mjINT_RK4) {
    im.integrator = "rk4";
    return;
  }
  const char* name = o.integrator == mjINT_IMPLICIT       ? "implicit"
                     : o.integrator == mjINT_IMPLICITFAST ? "implicitfast"
                     : o.integrator == mjINT_DISCRETE     ? "discrete"
                                                          : "unknown";
  im.refuse(std::string("option integrator=\"") + name +
            "\": not one of the integrators the import maps (Euler → euler, RK4 → rk4); use one "
            "of those in the file and set model.integrator in the config to choose steer's");
}

void import_options(MjcfImport& im) {
  const mjModel* m = im.m;
  const mjOption& o = m->opt;
  const int dis = im.dis = o.disableflags;
  const bool constraints = !(dis & mjDSBL_CONSTRAINT);
  im.spring_on = !(dis & mjDSBL_SPRING);
  im.damper_on = !(dis & mjDSBL_DAMPER);
  im.contact_on = constraints && !(dis & mjDSBL_CONTACT);
  im.limits_on = constraints && !(dis & mjDSBL_LIMIT);
  im.friction_on = constraints && !(dis & mjDSBL_FRICTIONLOSS);
  im.equality_on = constraints && !(dis & mjDSBL_EQUALITY);
  if (dis & mjDSBL_ACTUATION)
    im.refuse("option flag actuation=\"disable\": steer always applies its joint torques");
  for (int a = 0; a < m->nactuator; ++a) {
    const int grp = m->actuator_group[a];
    if (grp >= 0 && grp < 31 && (o.disableactuator & (1 << grp)))
      im.refuse("option actuatorgroupdisable disables group " + std::to_string(grp) + " of " +
                "actuator '" + name_of(m, mjOBJ_ACTUATOR, a, "#" + std::to_string(a)) +
                "': disabled actuators are not modelled");
  }
  if (o.enableflags & mjENBL_SLEEP)
    im.refuse("option flag sleep=\"enable\": sleeping bodies are not modelled");
  refuse_global_elements(im);
  import_fluid(im);
  import_integrator(im);
}

// body b's pose and inertia: pos, quat, mass, com, fullinertia = R(iquat) diag(inertia) R(iquat)ᵀ
nlohmann::json body_entry(const MjcfImport& im, int b) {
  const mjModel* m = im.m;
  if (m->body_gravcomp[b] != 0 && !(im.dis & mjDSBL_GRAVITY))
    im.refuse("body '" + im.body_name(b) + "': gravcomp " + num(m->body_gravcomp[b]) +
              " (gravity compensation) is not modelled");
  nlohmann::json e;
  e["name"] = im.body_name(b);
  e["parent"] = m->body_parentid[b] == 0 ? std::string("world") : im.body_name(m->body_parentid[b]);
  e["pos"] = vec(m->body_pos + 3 * b, 3);
  e["quat"] = vec(m->body_quat + 4 * b, 4);
  e["mass"] = m->body_mass[b];
  e["com"] = vec(m->body_ipos + 3 * b, 3);
  double R[9];
  quat_matrix(m->body_iquat + 4 * b, R);
  const double* d = m->body_inertia + 3 * b;
  double I[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      I[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                     R[3 * i + 2] * d[2] * R[3 * j + 2];
  e["fullinertia"] = {I[0], I[4], I[8], I[1], I[2], I[5]};
  if (im.fluid) e["inertia_frame"] = vec(m->body_iquat + 4 * b, 4);  // the fluid's box
  return e;
}

// MuJoCo's quadratic and cubic damping terms (damping="d1 d2 d3"): steer's joint damping is linear
void refuse_polynomial_damping(const MjcfImport& im, int dof, const std::string& jw) {
  for (int k = 0; k < mjNPOLY; ++k)
    if (im.damper_on && im.m->dof_dampingpoly[mjNPOLY * dof + k] != 0)
      im.refuse(jw + ": damping polynomial coefficient " +
                num(im.m->dof_dampingpoly[mjNPOLY * dof + k]) +
                " (quadratic or cubic damping) is not modelled; steer's joint damping is linear");
}

// what a free joint and a ball joint (n = 6 or 3 dofs, kind "free" or "ball") share: one
// damping and armature on all their dofs, linear damping, no spring and no frictionloss, and room
// for their dofs and their ball group in steer's largest capacity; then counts the dofs
void import_quaternion_joint(MjcfImport& im, int j, int n, const std::string& kind,
                             const std::string& jw) {
  const mjModel* m = im.m;
  const int dof = m->jnt_dofadr[j];
  for (int k = 1; k < n; ++k)
    if (m->dof_damping[dof + k] != m->dof_damping[dof] ||
        m->dof_armature[dof + k] != m->dof_armature[dof])
      im.refuse(jw + ": damping and armature must be the same on the " + kind + " joint's " +
                std::to_string(n) + " dofs");
  for (int k = 0; k < n; ++k) refuse_polynomial_damping(im, dof + k, jw);
  if (im.spring_on && m->jnt_stiffness[j] != 0)
    im.refuse(jw + ": stiffness " + num(m->jnt_stiffness[j]) + " on a " + kind +
              " joint (a spring to its reference pose) is not modelled");
  for (int k = 0; k < mjNPOLY; ++k)
    if (im.spring_on && m->jnt_stiffnesspoly[mjNPOLY * j + k] != 0)
      im.refuse(jw + ": stiffness polynomial coefficient " +
                num(m->jnt_stiffnesspoly[mjNPOLY * j + k]) + " is not modelled");
  for (int k = 0; k < n; ++k)
    if (im.friction_on && m->dof_frictionloss[dof + k] != 0)
      im.refuse(jw + ": frictionloss " + num(m->dof_frictionloss[dof + k]) + " on a " + kind +
                " joint is not modelled");
  if (int(im.dof_body.size()) + im.free_dofs + im.ball_dofs + n > ArticulatedLarge::kMaxDof)
    im.refuse("more than " + std::to_string(ArticulatedLarge::kMaxDof) + " joints (a " + kind +
              " joint counts " + std::to_string(n) + "); steer's articulated model takes at most " +
              std::to_string(ArticulatedLarge::kMaxDof));
  if (im.ball_dofs / 3 + im.free_dofs / 6 == ArticulatedLarge::kMaxBalls)
    im.refuse("more than " + std::to_string(ArticulatedLarge::kMaxBalls) +
              " free and ball joints; steer takes at most " +
              std::to_string(ArticulatedLarge::kMaxBalls));
  (n == 6 ? im.free_dofs : im.ball_dofs) += n;
}

// a free joint: steer's initial pose is the body's pos/quat (MuJoCo's qpos0 for it)
nlohmann::json free_joint_entry(MjcfImport& im, int j, const std::string& jn,
                                const std::string& jw) {
  const mjModel* m = im.m;
  import_quaternion_joint(im, j, 6, "free", jw);
  return {{"name", jn},
          {"type", "free"},
          {"damping", im.damper_on ? m->dof_damping[m->jnt_dofadr[j]] : 0.0},
          {"armature", m->dof_armature[m->jnt_dofadr[j]]}};
}

// a hinge or slide: axis, pos, range when limited, damping, armature; no servo or force limit
// until an actuator sets them
nlohmann::json hinge_or_slide_entry(MjcfImport& im, int j, const std::string& jn,
                                    const std::string& jw) {
  const mjModel* m = im.m;
  const int t = m->jnt_type[j];
  const int dof = m->jnt_dofadr[j];
  for (int k = 0; k < mjNPOLY; ++k)
    if (im.spring_on && m->jnt_stiffnesspoly[mjNPOLY * j + k] != 0)
      im.refuse(jw + ": stiffness polynomial coefficient " +
                num(m->jnt_stiffnesspoly[mjNPOLY * j + k]) + " (a joint spring) is not modelled");
  refuse_polynomial_damping(im, dof, jw);
  if (int(im.dof_body.size()) + im.free_dofs + im.ball_dofs == ArticulatedLarge::kMaxDof)
    im.refuse("more than " + std::to_string(ArticulatedLarge::kMaxDof) +
              " joints; steer's articulated model takes at most " +
              std::to_string(ArticulatedLarge::kMaxDof));
  nlohmann::json jo;
  jo["name"] = jn;
  jo["type"] = t == mjJNT_HINGE ? "hinge" : "slide";
  jo["axis"] = vec(m->jnt_axis + 3 * j, 3);
  jo["pos"] = vec(m->jnt_pos + 3 * j, 3);
  if (m->jnt_limited[j]) jo["range"] = vec(m->jnt_range + 2 * j, 2);
  jo["damping"] = im.damper_on ? m->dof_damping[dof] : 0.0;
  jo["armature"] = m->dof_armature[dof];
  jo["kp"] = 0.0;
  jo["kv"] = 0.0;
  jo["force_limit"] = 1e9;  // no limit unless an actuator sets one
  // ref (qpos0): the file's pose is the joint's at q = ref; the spring −k (q − springref)
  jo["ref"] = m->qpos0[m->jnt_qposadr[j]];
  jo["stiffness"] = im.spring_on ? m->jnt_stiffness[j] : 0.0;
  jo["springref"] = m->qpos_spring[m->jnt_qposadr[j]];
  if (im.friction_on && m->dof_frictionloss[dof] != 0) {
    jo["frictionloss"] = m->dof_frictionloss[dof];  // steer's smooth law (joint_friction.h)
    im.frictionloss = true;
  }
  im.joint_of_dof_mj[size_t(dof)] = int(im.dof_body.size());
  im.dof_body.push_back(j);
  return jo;
}

// a ball joint (its body's only joint): anchor, damping and armature; its cone limit (range) is
// refused, as are what import_quaternion_joint refuses
nlohmann::json ball_joint_entry(MjcfImport& im, int j, const std::string& jn,
                                const std::string& jw) {
  const mjModel* m = im.m;
  if (im.limits_on && m->jnt_limited[j])
    im.refuse(jw + ": a ball joint's range (a cone limit on its rotation) is not modelled");
  import_quaternion_joint(im, j, 3, "ball", jw);
  return {{"name", jn},
          {"type", "ball"},
          {"pos", vec(m->jnt_pos + 3 * j, 3)},
          {"damping", im.damper_on ? m->dof_damping[m->jnt_dofadr[j]] : 0.0},
          {"armature", m->dof_armature[m->jnt_dofadr[j]]}};
}

// ---- bodies and joints: one joint per body at most; a free joint only on a child of the world
// ----
void import_bodies(MjcfImport& im) {
  const mjModel* m = im.m;
  if (m->nbody - 1 > ArticulatedLarge::kMaxBodies)
    im.refuse(std::to_string(m->nbody - 1) + " bodies; steer's articulated model takes at most " +
              std::to_string(ArticulatedLarge::kMaxBodies));
  im.joint_of_dof_mj.assign(size_t(m->nv), -1);
  for (int b = 1; b < m->nbody; ++b) {
    const std::string bn = im.body_name(b);
    nlohmann::json e = body_entry(im, b);
    // a body's joints in MuJoCo's order (config_articulated.cpp chains one massless frame per
    // joint but the last, as MuJoCo applies them)
    const int nj = m->body_jntnum[b];
    e["joints"] = nlohmann::json::array();
    for (int k = 0; k < nj; ++k) {
      const int j = m->body_jntadr[b] + k;
      const std::string jn =
          name_of(m, mjOBJ_JOINT, j, bn + (nj == 1 ? ".joint" : ".joint" + std::to_string(k)));
      const std::string jw = "joint '" + jn + "' of body '" + bn + "'";
      const bool free = m->jnt_type[j] == mjJNT_FREE;
      if (free && m->body_parentid[b] != 0)
        im.refuse(jw +
                  ": a free joint is modelled only on a child of <worldbody> (a floating base), "
                  "not below another body");
      if (free && nj > 1)
        im.refuse(jw + ": a free joint together with other joints in one body is not modelled");
      const bool ball = m->jnt_type[j] == mjJNT_BALL;
      if (ball && nj > 1)
        im.refuse(jw + ": a ball joint together with other joints in one body is not modelled");
      e["joints"].push_back(free   ? free_joint_entry(im, j, jn, jw)
                            : ball ? ball_joint_entry(im, j, jn, jw)
                                   : hinge_or_slide_entry(im, j, jn, jw));
    }
    im.bodies.push_back(e);
  }
  if (im.dof_body.empty() && im.free_dofs == 0 && im.ball_dofs == 0)
    im.refuse(
        "no hinge, slide or ball joint and no free joint at the root; steer's articulated model "
        "needs at least one");
  if (im.limits_on)
    for (int j : im.dof_body) im.any_limited_joint = im.any_limited_joint || m->jnt_limited[j];
  if (im.any_limited_joint)
    im.notes.push_back(
        "limited joints: MuJoCo's limit constraint (solref/solimp) is replaced by steer's smooth "
        "penalty "
        "torque outside each range (model.joint_limits; set its stiffness and smoothing in the "
        "config)");
}

// ---- fixed tendons: L = Σ coef q over joints, with a spring, a damper and a range ----
// tendon t as model.tendons' entry: a fixed tendon's joint wraps (mjWRAP_JOINT: wrap_objid the
// joint, wrap_prm its coefficient; repeated joints summed) or a spatial tendon's sites
// (mjWRAP_SITE, in path order), stiffness, springlength (MuJoCo's compiled
// tendon_lengthspring, qpos0's length where the file gives none), damping, range when limited.
// Refused by name: a spatial tendon wrapping a geom or through a pulley, a spring deadband
// (lengthspring lo ≠ hi), polynomial stiffness or damping, frictionloss, armature, plasticity.
void import_tendon(MjcfImport& im, int t) {
  const mjModel* m = im.m;
  const std::string tw = im.tendon_name(t);
  const bool spatial = m->tendon_type[t] != mjTENDON_FIXED;
  std::vector<int> joints;
  std::vector<double> coefs;
  nlohmann::json path = nlohmann::json::array();
  for (int w = m->tendon_adr[t]; spatial && w < m->tendon_adr[t] + m->tendon_num[t]; ++w) {
    const int wt = m->wrap_type[w];
    if (wt == mjWRAP_SITE) {
      const int sid = m->wrap_objid[w];
      path.push_back(name_of(m, mjOBJ_SITE, sid, "site" + std::to_string(sid)));
      continue;
    }
    im.refuse("spatial " + tw + ": " +
              (wt == mjWRAP_PULLEY ? std::string("a pulley (branching path)")
                                   : "wrapping around geom '" +
                                         name_of(m, mjOBJ_GEOM, m->wrap_objid[w],
                                                 "#" + std::to_string(m->wrap_objid[w])) +
                                         "'") +
              " is not modelled; steer's spatial tendon runs straight from site to site");
  }
  if (spatial && path.size() > size_t(ArticulatedLarge::kMaxPath))
    im.refuse("spatial " + tw + ": " + std::to_string(path.size()) +
              " sites; steer's spatial tendon takes at most " +
              std::to_string(ArticulatedLarge::kMaxPath));
  for (int w = m->tendon_adr[t]; !spatial && w < m->tendon_adr[t] + m->tendon_num[t]; ++w) {
    if (m->wrap_type[w] != mjWRAP_JOINT)
      im.refuse(tw + ": a fixed tendon's wrap that is not a joint is not modelled");
    const int j = m->wrap_objid[w];
    if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE)
      im.refuse(tw + " spans joint '" + name_of(m, mjOBJ_JOINT, j, "#" + std::to_string(j)) +
                "': a fixed tendon is modelled over hinges and slides only");
    const auto at = std::find(joints.begin(), joints.end(), j);
    if (at == joints.end()) {
      joints.push_back(j);
      coefs.push_back(m->wrap_prm[w]);
    } else {
      coefs[size_t(at - joints.begin())] += m->wrap_prm[w];
    }
  }
  nlohmann::json js = nlohmann::json::array();
  for (size_t k = 0; k < joints.size(); ++k)
    if (coefs[k] != 0)
      js.push_back({{"joint", im.joint_json(joints[k])["name"]}, {"coef", coefs[k]}});
  if (js.empty() && !spatial) im.refuse(tw + ": no joint with a nonzero coefficient");
  const double k = im.spring_on ? m->tendon_stiffness[t] : 0.0;
  const double* ls = m->tendon_lengthspring + 2 * t;
  if (k != 0 && ls[0] != ls[1])
    im.refuse(tw + ": springlength [" + num(ls[0]) + ", " + num(ls[1]) +
              "] (a spring with a deadband) is not modelled; steer's tendon spring has one rest "
              "length");
  for (int c = 0; c < mjNPOLY; ++c) {
    if (im.spring_on && m->tendon_stiffnesspoly[mjNPOLY * t + c] != 0)
      im.refuse(tw + ": stiffness polynomial coefficient " +
                num(m->tendon_stiffnesspoly[mjNPOLY * t + c]) + " is not modelled");
    if (im.damper_on && m->tendon_dampingpoly[mjNPOLY * t + c] != 0)
      im.refuse(tw + ": damping polynomial coefficient " +
                num(m->tendon_dampingpoly[mjNPOLY * t + c]) +
                " is not modelled; steer's tendon damping is linear");
  }
  if (im.friction_on && m->tendon_frictionloss[t] != 0)
    im.refuse(tw + ": frictionloss " + num(m->tendon_frictionloss[t]) + " is not modelled");
  if (m->tendon_armature[t] != 0)
    im.refuse(tw + ": armature " + num(m->tendon_armature[t]) + " is not modelled");
  if (m->tendon_plasticadr[t] >= 0) im.refuse(tw + ": plasticity (springyield) is not modelled");
  nlohmann::json e = {{"name", name_of(m, mjOBJ_TENDON, t, "tendon" + std::to_string(t))},
                      {"stiffness", k},
                      {"springlength", ls[0]},
                      {"damping", im.damper_on ? m->tendon_damping[t] : 0.0}};
  if (spatial)
    e["sites"] = path;
  else
    e["joints"] = js;
  if (im.limits_on && m->tendon_limited[t]) {
    e["range"] = vec(m->tendon_range + 2 * t, 2);
    im.any_limited_tendon = true;
  }
  im.tendons.push_back(e);
}

void import_tendons(MjcfImport& im) {
  const mjModel* m = im.m;
  if (m->ntendon > ArticulatedLarge::kMaxTendons)
    im.refuse(std::to_string(m->ntendon) + " tendons; steer takes at most " +
              std::to_string(ArticulatedLarge::kMaxTendons));
  for (int t = 0; t < m->ntendon; ++t) import_tendon(im, t);
  if (im.any_limited_tendon)
    im.notes.push_back(
        "limited tendons: MuJoCo's tendon limit constraint (solref/solimp) is replaced by "
        "steer's smooth penalty force outside each range (model.joint_limits' law on the "
        "tendon's length)");
}

// what MuJoCo 3 and 4 added to an actuator that steer's joint torque has no term for: more than
// one control, a control delay, damping and armature reflected onto the joint, plugins
void refuse_actuator_extras(const MjcfImport& im, int a, const std::string& an) {
  const mjModel* m = im.m;
  if (m->actuator_ctrlnum[a] != 1 || m->actuator_outnum[a] != 1)
    im.refuse(an + ": " + std::to_string(m->actuator_ctrlnum[a]) + " controls and " +
              std::to_string(m->actuator_outnum[a]) +
              " force outputs; only actuators with one control and one output are modelled");
  if (m->actuator_plugin[a] >= 0) im.refuse(an + ": plugin actuators are not modelled");
  if (m->actuator_delay[a] != 0)
    im.refuse(an + ": delay " + num(m->actuator_delay[a]) +
              " s (a delayed control) is not modelled");
  if (im.damper_on && m->actuator_damping[a] != 0)
    im.refuse(an + ": damping " + num(m->actuator_damping[a]) +
              " (reflected onto its joint) is not modelled; give the joint the damping g²·d, or "
              "use kv");
  for (int k = 0; k < mjNPOLY; ++k)
    if (im.damper_on && m->actuator_dampingpoly[mjNPOLY * a + k] != 0)
      im.refuse(an + ": damping polynomial coefficient " +
                num(m->actuator_dampingpoly[mjNPOLY * a + k]) + " is not modelled");
  if (m->actuator_armature[a] != 0)
    im.refuse(an + ": armature " + num(m->actuator_armature[a]) +
              " (reflected onto its joint) is not modelled; give the joint the armature g²·a");
}

// actuator a's dynamics as a joint activation (activation.h): null for none; filter, filterexact
// and integrator with their time constant (dynprm[0]) and actearly. Refused: muscle and user
// dynamics, an activation range (actlimited: a hard clamp of act), a time constant ≤ 0, and any
// dynamics under RK4 (MuJoCo integrates act inside its stages; steer steps it once per step)
nlohmann::json actuator_activation(const MjcfImport& im, int a) {
  const mjModel* m = im.m;
  const std::string an = im.actuator_name(a);
  const int dyn = m->actuator_dyntype[a];
  if (dyn == mjDYN_NONE) return nullptr;
  if (dyn != mjDYN_FILTER && dyn != mjDYN_FILTEREXACT && dyn != mjDYN_INTEGRATOR)
    im.refuse(an + ": " + (dyn == mjDYN_MUSCLE ? "muscle" : "user-defined") +
              " activation dynamics (dyntype) are not modelled; filter, filterexact and "
              "integrator are");
  if (m->actuator_actnum[a] != 1)
    im.refuse(an + ": " + std::to_string(m->actuator_actnum[a]) +
              " activation states; steer's joint has one");
  if (m->actuator_actlimited[a])
    im.refuse(an + ": an activation range (actlimited, actrange [" +
              num(m->actuator_actrange[2 * a]) + ", " + num(m->actuator_actrange[2 * a + 1]) +
              "]) is not modelled");
  if (im.integrator == "rk4")
    im.refuse(an +
              ": activation dynamics under integrator=\"RK4\" are not modelled (MuJoCo "
              "integrates act inside the RK4 stages); use Euler");
  nlohmann::json e = {{"dynamics", dyn == mjDYN_FILTER        ? "filter"
                                   : dyn == mjDYN_FILTEREXACT ? "filterexact"
                                                              : "integrator"},
                      {"early", m->actuator_actearly[a] != 0}};
  if (dyn != mjDYN_INTEGRATOR) {
    const double tau = m->actuator_dynprm[mjNDYN * a];
    if (!(tau > 0))
      im.refuse(an + ": dynprm[0] = " + num(tau) + ", a filter's time constant must be > 0 s");
    e["time_constant"] = tau;
  }
  return e;
}

// actuator a's control drives MuJoCo joint j (through the ctrl map): the joint's control takes
// the actuator's activation. Every actuator whose control reaches one joint must have the same
// dynamics (steer filters the joint's control once; the filter's linearity does the rest)
void drive_activation(MjcfImport& im, int a, int j) {
  const size_t d = size_t(im.joint_of_dof_mj[size_t(im.m->jnt_dofadr[j])]);
  const nlohmann::json act = actuator_activation(im, a);
  if (im.activation_actuator[d].empty()) {
    im.activation[d] = act;
    im.activation_actuator[d] = im.plain_actuator(a);
    return;
  }
  if (im.activation[d] != act)
    im.refuse(im.actuator_name(a) + " and actuator '" + im.activation_actuator[d] +
              "' both drive joint '" + im.joint_json(j)["name"].get<std::string>() +
              "' with different activation dynamics (dyntype, dynprm, actearly); steer's joint "
              "filters its control once");
}

// fixed tendon t's joints with a nonzero coefficient (repeated wraps summed), in wrap order
std::vector<std::pair<int, double>> tendon_joints(const mjModel* m, int t) {
  std::vector<std::pair<int, double>> out;
  for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; ++w) {
    const int j = m->wrap_objid[w];
    auto at = std::find_if(out.begin(), out.end(), [j](const auto& e) { return e.first == j; });
    if (at == out.end())
      out.push_back({j, m->wrap_prm[w]});
    else
      at->second += m->wrap_prm[w];
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& e) { return e.second == 0; }),
            out.end());
  return out;
}

// the mass m_p [kg or kg·m²] that a penalty of natural frequency ω [rad/s] and damping ratio ζ
// acts on, so that its explicit step of h stays stable: m, or less where the spring's ω h or the
// damper's 2 ζ ω h is large (capped at ω_p h = 1/2 and h D / m = 1, D = 2 ζ ω m_p); `bound`
// names the cap that applied (left unchanged when none did)
double stable_penalty_mass(double m, double omega, double zeta, double h, std::string& bound) {
  double mp = m;
  const double spring_cap = m * (0.5 / (omega * h)) * (0.5 / (omega * h));
  const double damper_cap = m / (2 * zeta * omega * h);
  if (spring_cap < mp) mp = spring_cap, bound = "the step's spring bound";
  if (damper_cap < mp) mp = damper_cap, bound = "the step's damper bound";
  return mp;
}

// a motor (or velocity servo) on a fixed tendon t over several joints: its force on the tendon's
// length L = Σ c_j q_j, s ctrl − D L̇ (s = g G, D = −g² b2), is the torque c_j s ctrl on each of its
// joints and a damper D on the tendon. The joints' torque controls torque.<joint> carry it (none
// of them may have a control of its own); ctrl.<actuator> drives them together (the ctrl map's
// "joints"), while steer's own controls may also move them apart. Refused: a force limit (it
// clamps the tendon's force, not a joint's torque).
void import_tendon_motor(MjcfImport& im, int a, int t, double s, double D) {
  const mjModel* m = im.m;
  const std::string an = im.actuator_name(a), tw = im.tendon_name(t);
  if (m->actuator_forcelimited[a])
    im.refuse(an + ": a force limit on a motor on " + tw +
              " (several joints) is not modelled; steer limits each joint's torque");
  nlohmann::json& te = im.tendons[size_t(t)];
  te["damping"] = te["damping"].get<double>() + D;
  nlohmann::json joints = nlohmann::json::array();
  std::string listed;
  for (const auto& [j, coef] : tendon_joints(m, t)) {
    if (m->jnt_type[j] == mjJNT_FREE || m->jnt_type[j] == mjJNT_BALL)
      im.refuse(an + " drives " + tw + " over a ball or free joint; not modelled");
    const size_t d = size_t(im.joint_of_dof_mj[size_t(m->jnt_dofadr[j])]);
    const std::string jn = im.joint_json(j)["name"].get<std::string>();
    if (!im.control_actuator[d].empty())
      im.refuse(an + " (on " + tw + ") and actuator '" + im.control_actuator[d] +
                "' both drive joint '" + jn +
                "' with their controls; steer's joint has one "
                "torque control");
    im.on_joint[d].push_back(a);
    drive_activation(im, a, j);
    im.control_actuator[d] = im.plain_actuator(a);
    im.control_scale[d] = coef * s;
    joints.push_back({{"joint", jn}, {"torque_per_ctrl", coef * s}});
    listed += (listed.empty() ? "" : ", ") + jn;
  }
  im.ctrl_map.back()["tendon"] = te["name"];
  im.ctrl_map.back()["joints"] = joints;
  im.notes.push_back(an + " is a motor on " + tw + ": its force is the torques coef × " + num(s) +
                     " × ctrl on " + listed + " (their torque controls; ctrl." +
                     im.plain_actuator(a) +
                     " drives them together, steer's torque controls may also differ)" +
                     (D > 0 ? ", and its velocity gain the tendon's damping " + num(D) : ""));
}

// a position servo on a fixed tendon t over several joints, or on a spatial tendon: its force on
// the tendon's length L,
// g (G ctrl + b1 g L + b2 g L̇) = −K (L − L*) − D L̇ with K = −g² b1, D = −g² b2 and
// L* = g G ctrl / K, is the tendon's spring and damper (model.tendons: stiffness K,
// springlength L* its target, damping + D), the target's range scale · ctrlrange as MuJoCo
// clamps ctrl. Refused: a motor (K = 0), a tendon with a spring of its own, a force limit.
void import_tendon_servo(MjcfImport& im, int a, int t, double b1, double b2) {
  const mjModel* m = im.m;
  const std::string an = im.actuator_name(a), tw = im.tendon_name(t);
  const double g = m->actuator_gear[6 * m->actuator_outadr[a]];
  const double G = m->actuator_gainprm[mjNGAIN * a];
  const double K = -g * g * b1, D = -g * g * b2;
  const int c = m->actuator_ctrladr[a];
  nlohmann::json& te = im.tendons[size_t(t)];
  if (K == 0 && D >= 0 && G != 0 && m->tendon_type[t] == mjTENDON_FIXED) {
    import_tendon_motor(im, a, t, g * G, D);
    return;
  }
  if (!(K > 0) || D < 0 || G == 0)
    im.refuse(an + " drives " + tw +
              (m->tendon_type[t] == mjTENDON_FIXED ? ", which spans several joints"
                                                   : ", a spatial tendon") +
              ": a position servo (kp > 0) is modelled there, as the tendon's spring, and on a "
              "fixed tendon a motor or velocity servo; not this actuator");
  for (const auto& other : im.tendon_servos)
    if (other["tendon"] == te["name"])
      im.refuse(an + " and actuator '" + other["actuator"].get<std::string>() +
                "' are both position servos on " + tw + "; steer's tendon has one spring");
  if (te["stiffness"].get<double>() != 0)
    im.refuse(an + " is a position servo on " + tw +
              ", which has a spring of its own; steer's tendon has one spring");
  if (m->actuator_forcelimited[a])
    im.refuse(an + ": a force limit on a tendon's servo is not modelled");
  if (m->tendon_type[t] != mjTENDON_FIXED && !actuator_activation(im, a).is_null())
    im.refuse(an + ": activation dynamics on a servo on " + tw +
              " (a spatial tendon) are not "
              "modelled");
  if (m->tendon_type[t] == mjTENDON_FIXED)
    for (const auto& [j, coef] : tendon_joints(m, t)) {
      (void)coef;
      drive_activation(im, a, j);
    }
  const double scale = g * G / K;
  te["stiffness"] = K;
  te["damping"] = te["damping"].get<double>() + D;
  te["springlength"] = 0.0;
  if (m->actuator_ctrllimited[c] && !(im.dis & mjDSBL_CLAMPCTRL)) {
    double lo = scale * m->actuator_ctrlrange[2 * c], hi = scale * m->actuator_ctrlrange[2 * c + 1];
    if (lo > hi) std::swap(lo, hi);
    te["springlength_range"] = {lo, hi};
    if (lo > 0 || hi < 0) te["springlength"] = lo > 0 ? lo : hi;
  }
  im.tendon_servos.push_back({{"tendon", te["name"]},
                              {"actuator", im.plain_actuator(a)},
                              {"springlength_per_ctrl", scale}});
  im.ctrl_map.back()["tendon"] = te["name"];
  im.ctrl_map.back()["springlength_per_ctrl"] = scale;
}

// actuator a on its joint: kp = −g² b1, kv = −g² b2 added to the joint's gains; the control
// term g G ctrl becomes the PD target's scale (a position servo, kp > 0) or the feed-forward
// torque's (a motor or velocity servo)
void import_actuator(MjcfImport& im, int a) {
  const mjModel* m = im.m;
  const std::string an = im.actuator_name(a);
  const int trn = m->actuator_trntype[a];
  if (trn != mjTRN_JOINT && trn != mjTRN_JOINTINPARENT && trn != mjTRN_TENDON)
    im.refuse(an +
              ": only joint and tendon transmissions are modelled (not site, slider-crank, body "
              "or SO3)");
  refuse_actuator_extras(im, a, an);
  {
    nlohmann::json e = {{"actuator", im.plain_actuator(a)}};
    const int ca = m->actuator_ctrladr[a];
    if (m->actuator_ctrllimited[ca] && !(im.dis & mjDSBL_CLAMPCTRL))
      e["ctrlrange"] = vec(m->actuator_ctrlrange + 2 * ca, 2);
    im.ctrl_map.push_back(e);
  }
  if (m->actuator_gaintype[a] != mjGAIN_FIXED)
    im.refuse(an + ": only a fixed gain is modelled (gaintype)");
  const int bt = m->actuator_biastype[a];
  if (bt != mjBIAS_NONE && bt != mjBIAS_AFFINE)
    im.refuse(an + ": only no bias or an affine bias is modelled (biastype)");
  const double* gp = m->actuator_gainprm + mjNGAIN * a;
  const double* bp = m->actuator_biasprm + mjNBIAS * a;
  const double b0 = bt == mjBIAS_AFFINE ? bp[0] : 0.0, b1 = bt == mjBIAS_AFFINE ? bp[1] : 0.0,
               b2 = bt == mjBIAS_AFFINE ? bp[2] : 0.0;
  if (b0 != 0) im.refuse(an + ": a constant bias biasprm[0] = " + num(b0) + " is not modelled");
  const int c = m->actuator_ctrladr[a];
  // the joint it drives and its gear there: a tendon over one joint (coefficient c_t) is that
  // joint with the gear g c_t (its length is c_t q); over several joints, a tendon servo
  int j = m->actuator_trnid[2 * a];
  double g = m->actuator_gear[6 * m->actuator_outadr[a]];
  if (trn == mjTRN_TENDON) {
    const std::vector<std::pair<int, double>> wraps = m->tendon_type[j] == mjTENDON_FIXED
                                                          ? tendon_joints(m, j)
                                                          : std::vector<std::pair<int, double>>{};
    if (wraps.size() != 1) {
      import_tendon_servo(im, a, j, b1, b2);
      return;
    }
    g *= wraps[0].second;
    j = wraps[0].first;
  }
  if (m->jnt_type[j] == mjJNT_FREE)
    im.refuse(an +
              ": an actuator on the free joint is not modelled (the free root's controls are its "
              "forces and torques)");
  if (m->jnt_type[j] == mjJNT_BALL)
    im.refuse(an + " drives ball joint '" + name_of(m, mjOBJ_JOINT, j, "#" + std::to_string(j)) +
              "': an actuator on a ball joint is not modelled (a ball's controls are its "
              "body-frame torques)");
  const size_t d = size_t(im.joint_of_dof_mj[size_t(m->jnt_dofadr[j])]);
  const double kp = -g * g * b1, kv = -g * g * b2;
  if (kp < 0 || kv < 0)
    im.refuse(an + ": bias gives kp = " + num(kp) + ", kv = " + num(kv) +
              "; steer's servo gains must be ≥ 0");
  im.on_joint[d].push_back(a);
  if (kp > 0 || gp[0] != 0) drive_activation(im, a, j);
  nlohmann::json& jo = im.joint_json(j);
  const std::string jn = jo["name"].get<std::string>();
  jo["kp"] = jo["kp"].get<double>() + kp;
  jo["kv"] = jo["kv"].get<double>() + kv;
  if (kp > 0) {
    if (!im.target_actuator[d].empty())
      im.refuse(an + " and actuator '" + im.target_actuator[d] +
                "' are both position servos on joint '" + jn +
                "'; steer's joint has one PD target");
    im.target_actuator[d] = im.plain_actuator(a);
    im.target_scale[d] = g * gp[0] / kp;
    im.ctrl_map.back()["joint"] = jn;
    im.ctrl_map.back()["target_per_ctrl"] = im.target_scale[d];
    // MuJoCo clamps ctrl to ctrlrange, so the target stays in scale · ctrlrange (within the
    // joint's range, which bounds steer's target): the target's range
    if (m->actuator_ctrllimited[c] && !(im.dis & mjDSBL_CLAMPCTRL)) {
      double lo = im.target_scale[d] * m->actuator_ctrlrange[2 * c],
             hi = im.target_scale[d] * m->actuator_ctrlrange[2 * c + 1];
      if (lo > hi) std::swap(lo, hi);
      if (m->jnt_limited[j]) {
        lo = std::max(lo, m->jnt_range[2 * j]);
        hi = std::min(hi, m->jnt_range[2 * j + 1]);
      }
      if (!(lo < hi))
        im.refuse(an + ": ctrlrange [" + num(m->actuator_ctrlrange[2 * c]) + ", " +
                  num(m->actuator_ctrlrange[2 * c + 1]) + "] leaves no target within joint '" + jn +
                  "''s range");
      jo["target_range"] = {lo, hi};
    }
  } else if (gp[0] != 0) {
    if (!im.control_actuator[d].empty())
      im.refuse(an + " and actuator '" + im.control_actuator[d] + "' both drive joint '" + jn +
                "' with their controls; steer's joint has one torque control");
    im.control_actuator[d] = im.plain_actuator(a);
    im.control_scale[d] = g * gp[0];
    im.ctrl_map.back()["joint"] = jn;
    im.ctrl_map.back()["torque_per_ctrl"] = im.control_scale[d];
  }
}

// hinge/slide d's force limit: the smallest of its actuators' symmetric forcerange |g| F and,
// for a motor, ctrlrange |g G| c (steer saturates the joint's total torque smoothly)
void import_force_limit(MjcfImport& im, int d) {
  const mjModel* m = im.m;
  nlohmann::json& jo = im.joint_json(im.dof_body[size_t(d)]);
  const std::string jn = jo["name"].get<std::string>();
  const std::vector<int>& actuators = im.on_joint[size_t(d)];
  double limit = 1e9;
  const int j = im.dof_body[size_t(d)];
  if (m->jnt_actfrclimited[j]) {
    const double* r = m->jnt_actfrcrange + 2 * j;
    if (!(r[0] == -r[1]))
      im.refuse("joint '" + jn + "': actuatorfrcrange [" + num(r[0]) + ", " + num(r[1]) +
                "] is not symmetric; steer's force limit is ±τ_max");
    limit = std::min(limit, r[1]);  // MuJoCo clamps the joint's total actuator force, as steer
  }
  for (int a : actuators) {
    const std::string an = im.actuator_name(a);
    const int c = m->actuator_ctrladr[a];
    const double g = std::fabs(m->actuator_gear[6 * m->actuator_outadr[a]]);
    const bool servo = im.plain_actuator(a) == im.target_actuator[size_t(d)];
    auto sym = [&](const double* r, const char* what) {
      if (!(r[0] == -r[1]))
        im.refuse(an + ": " + what + " [" + num(r[0]) + ", " + num(r[1]) +
                  "] is not symmetric; steer's force limit is ±τ_max");
      if (actuators.size() > 1)
        im.refuse(an + ": its " + what + " limits one of several actuators on joint '" + jn +
                  "'; steer saturates the joint's total torque only");
      return r[1];
    };
    if (m->actuator_forcelimited[a])
      limit = std::min(limit, g * sym(m->actuator_forcerange + 2 * a, "forcerange"));
    if (m->actuator_ctrllimited[c] && !servo && !(im.dis & mjDSBL_CLAMPCTRL))
      limit = std::min(limit, std::fabs(im.control_scale[size_t(d)]) *
                                  sym(m->actuator_ctrlrange + 2 * c, "ctrlrange"));
  }
  if (limit < 1e9) {
    jo["force_limit"] = limit;
    im.any_force_limit = true;
  }
  if (actuators.empty())
    im.notes.push_back("joint '" + jn + "' has no actuator: its control torque." + jn +
                       " is an extra input (0 reproduces the file)");
}

// ---- actuators: joint transmissions with a fixed gain and no or an affine bias ----
void import_actuators(MjcfImport& im) {
  const size_t nd = im.dof_body.size();
  im.on_joint.assign(nd, {});
  im.control_scale.assign(nd, 0.0);
  im.control_actuator.assign(nd, {});
  im.target_scale.assign(nd, 0.0);
  im.target_actuator.assign(nd, {});
  im.activation.assign(nd, nullptr);
  im.activation_actuator.assign(nd, {});
  for (int a = 0; a < im.m->nactuator; ++a) import_actuator(im, a);
  for (size_t d = 0; d < nd; ++d) {
    if (im.activation[d].is_null()) continue;
    nlohmann::json& jo = im.joint_json(im.dof_body[d]);
    jo["activation"] = im.activation[d];
    const std::string jn = jo["name"].get<std::string>();
    im.notes.push_back("joint '" + jn + "': actuator '" + im.activation_actuator[d] + "''s " +
                       im.activation[d]["dynamics"].get<std::string>() +
                       " dynamics filter the joint's control; its activation is the state " + jn +
                       ".act (MuJoCo's act 0 is the ctrl map's offset there)");
  }
  for (int d = 0; d < int(nd); ++d) import_force_limit(im, d);
  if (im.any_force_limit)
    im.notes.push_back(
        "actuator force limits: MuJoCo's hard clamp is steer's smooth saturation "
        "(model.torque_limits.sharpness)");
}

// ---- sites: site_pos, site_quat in their body's frame ----
void import_sites(MjcfImport& im) {
  const mjModel* m = im.m;
  if (m->nsite > ArticulatedLarge::kMaxSites)
    im.refuse(std::to_string(m->nsite) + " sites; steer takes at most " +
              std::to_string(ArticulatedLarge::kMaxSites));
  for (int s = 0; s < m->nsite; ++s) {
    const std::string sn = name_of(m, mjOBJ_SITE, s, "site" + std::to_string(s));
    im.sites.push_back(
        {{"name", sn},
         {"body", m->site_bodyid[s] == 0 ? std::string("world") : im.body_name(m->site_bodyid[s])},
         {"pos", vec(m->site_pos + 3 * s, 3)},
         {"quat", vec(m->site_quat + 4 * s, 4)}});
  }
}

// Whether MuJoCo would test geoms a and b for contact (its filters before the narrow phase,
// bounding volumes aside): on different welded bodies; not a parent's and its child's (unless
// filterparent is disabled; the world is never the parent here); contype of one matching
// conaffinity of the other; their bodies not named in an <exclude>
bool collidable(const MjcfImport& im, int a, int b) {
  const mjModel* m = im.m;
  if (!(m->geom_contype[a] & m->geom_conaffinity[b]) &&
      !(m->geom_contype[b] & m->geom_conaffinity[a]))
    return false;
  const int ba = m->geom_bodyid[a], bb = m->geom_bodyid[b];
  const int wa = m->body_weldid[ba], wb = m->body_weldid[bb];
  if (wa == wb) return false;
  const int pa = m->body_weldid[m->body_parentid[wa]], pb = m->body_weldid[m->body_parentid[wb]];
  if (!(im.dis & mjDSBL_FILTERPARENT) && wa != 0 && wb != 0 && (wa == pb || wb == pa)) return false;
  const int signature = (std::min(ba, bb) << 16) + std::max(ba, bb);
  for (int e = 0; e < m->nexclude; ++e)
    if (m->exclude_signature[e] == signature) return false;
  return true;
}

// MuJoCo's margin of the pair (a, b): the larger geom margin, the distance below which its
// contact acts (the constraint's gap is dist − margin). A gap (a contact kept in the list but
// inactive until dist < margin − gap) is not modelled, and refused by name.
double pair_margin(const MjcfImport& im, int a, int b) {
  const mjModel* m = im.m;
  for (int g : {a, b})
    if (m->geom_gap[g] != 0)
      im.refuse(im.geom_name(g) + ": gap " + num(m->geom_gap[g]) +
                " (a contact included but inactive within it) is not modelled");
  return std::max(m->geom_margin[a], m->geom_margin[b]);
}

// The points a box or a cylinder touches a plane with, in the body frame, each a ground point of
// radius 0: a box's 8 corners, geom_pos + R_geom (±a, ±b, ±c) (half-sizes size[0..2]); a
// cylinder's two rims (axis the geom's z, radius size[0], half-length size[1]) as
// kCylinderRimPoints points each at angles 2πk/N about the axis. A plane touches a convex body
// first at a vertex of it, so the corners are exact for a box; the rim polygon is exact for a
// cylinder standing on a cap and, lying on its side, sits at most r (1 − cos(π/N)) lower than
// the cylinder (N = 12: 3.4 % of r) where no rim point is at the bottom (docs/contact.md).
constexpr int kCylinderRimPoints = 12;
std::vector<nlohmann::json> flat_geom_points(const mjModel* m, int g) {
  double R[9];
  quat_matrix(m->geom_quat + 4 * g, R);
  const double* c = m->geom_pos + 3 * g;
  const double* sz = m->geom_size + 3 * g;
  auto point = [&](const std::string& name, double lx, double ly, double lz) {
    const double p[3] = {c[0] + R[0] * lx + R[1] * ly + R[2] * lz,
                         c[1] + R[3] * lx + R[4] * ly + R[5] * lz,
                         c[2] + R[6] * lx + R[7] * ly + R[8] * lz};
    return nlohmann::json{{"name", name}, {"pos", vec(p, 3)}, {"radius", 0.0}};
  };
  std::vector<nlohmann::json> out;
  if (m->geom_type[g] == mjGEOM_BOX) {
    for (int k = 0; k < 8; ++k)
      out.push_back(point("corner" + std::to_string(k), (k & 1 ? 1 : -1) * sz[0],
                          (k & 2 ? 1 : -1) * sz[1], (k & 4 ? 1 : -1) * sz[2]));
    return out;
  }
  const double pi = 3.14159265358979323846;
  for (int e = 0; e < 2; ++e)
    for (int k = 0; k < kCylinderRimPoints; ++k) {
      const double a = 2 * pi * k / kCylinderRimPoints;
      out.push_back(point("rim" + std::to_string(e) + "." + std::to_string(k), sz[0] * std::cos(a),
                          sz[0] * std::sin(a), (e == 0 ? -1 : 1) * sz[1]));
    }
  return out;
}

// a geom as one side of model.pairs: its body ("world" for the world's) and, in the body frame,
// a sphere's centre; a capsule's or cylinder's axis ends (the geom's z, half-length size[1]); a
// plane's point and normal (the geom's z); a box's centre, half-sizes and axes (its quat). A
// cylinder (radius r, half-length h) is the capsule of the same axis, r and h: exact wherever
// the nearest point lies on its curved side, its flat ends rounded out by up to r
// (docs/contact.md)
nlohmann::json pair_side(const MjcfImport& im, int g) {
  const mjModel* m = im.m;
  const int b = m->geom_bodyid[g];
  nlohmann::json e = {{"body", b == 0 ? std::string("world") : im.body_name(b)}};
  const double* c = m->geom_pos + 3 * g;
  double R[9];
  quat_matrix(m->geom_quat + 4 * g, R);
  switch (m->geom_type[g]) {
    case mjGEOM_SPHERE:
      e["type"] = "sphere";
      e["pos"] = vec(c, 3);
      e["radius"] = m->geom_size[3 * g];
      break;
    case mjGEOM_PLANE: {
      const double normal[3] = {R[2], R[5], R[8]};
      e["type"] = "plane";
      e["pos"] = vec(c, 3);
      e["normal"] = vec(normal, 3);
      break;
    }
    case mjGEOM_BOX:
      e["type"] = "box";
      e["pos"] = vec(c, 3);
      e["size"] = vec(m->geom_size + 3 * g, 3);
      e["quat"] = vec(m->geom_quat + 4 * g, 4);
      break;
    default: {  // capsule, cylinder
      const double hl = m->geom_size[3 * g + 1];
      const double e0[3] = {c[0] - hl * R[2], c[1] - hl * R[5], c[2] - hl * R[8]};
      const double e1[3] = {c[0] + hl * R[2], c[1] + hl * R[5], c[2] + hl * R[8]};
      e["type"] = "capsule";
      e["from"] = vec(e0, 3);
      e["to"] = vec(e1, 3);
      e["radius"] = m->geom_size[3 * g];
    }
  }
  return e;
}

// the pair of geoms a and b as model.pairs entries: MuJoCo's margin (the larger of the two)
// widens the round side's radius, so that the force starts where MuJoCo's contact does (dist <
// margin). Two spheres, capsules or cylinders, or one of them and a box, are one pair (the
// round geom side 0); a sphere and a plane one pair. Against a plane, a capsule's (or
// cylinder-capsule's) end caps, a box's corners and a cylinder's rim points are one pair each
// (spheres of the capsule's radius, or of radius 0), as the ground points are; two boxes are
// each box's 8 corners against the other box (16 pairs)
void add_pairs(MjcfImport& im, int a, int b) {
  const mjModel* m = im.m;
  const double margin = pair_margin(im, a, b);
  auto gname = [&](int g) { return name_of(m, mjOBJ_GEOM, g, "geom" + std::to_string(g)); };
  auto type = [&](int g) { return m->geom_type[g]; };
  // MuJoCo's friction of the pair: the larger of the two geoms' sliding frictions
  const double mu = std::max(m->geom_friction[3 * a], m->geom_friction[3 * b]);
  // geom g's points (a capsule's end caps, a box's corners, a cylinder's rims) as spheres against
  // geom `other`
  auto point_pairs = [&](int g, int other) {
    const nlohmann::json gs = pair_side(im, g);
    std::vector<nlohmann::json> spheres;  // {name suffix, pos, radius} in g's body frame
    if (type(g) == mjGEOM_CAPSULE) {
      for (int e = 0; e < 2; ++e)
        spheres.push_back({{"name", e == 0 ? "end0" : "end1"},
                           {"pos", gs[e == 0 ? "from" : "to"]},
                           {"radius", gs["radius"].get<double>() + margin}});
    } else {
      for (nlohmann::json p : flat_geom_points(m, g)) {
        p["radius"] = margin;
        spheres.push_back(p);
      }
    }
    for (const nlohmann::json& p : spheres)
      im.pairs.push_back(
          {{"name", gname(g) + "." + p["name"].get<std::string>() + "|" + gname(other)},
           {"geoms",
            {{{"body", gs["body"]}, {"type", "sphere"}, {"pos", p["pos"]}, {"radius", p["radius"]}},
             pair_side(im, other)}},
           {"friction", mu}});
  };
  if (type(a) == mjGEOM_BOX && type(b) == mjGEOM_BOX) {
    point_pairs(a, b);
    point_pairs(b, a);
    im.box_box_pairs.push_back(gname(a) + "|" + gname(b));
    return;
  }
  // the plane or box (side 1), and the geom against it (side 0)
  const int solid = type(a) == mjGEOM_PLANE || type(a) == mjGEOM_BOX
                        ? (type(b) == mjGEOM_PLANE ? b : a)
                        : (type(b) == mjGEOM_PLANE || type(b) == mjGEOM_BOX ? b : -1);
  const int round = solid < 0 || solid == b ? a : b;
  const int other = round == a ? b : a;
  if (type(other) == mjGEOM_PLANE && type(round) != mjGEOM_SPHERE) {
    point_pairs(round, other);
    return;
  }
  nlohmann::json rs = pair_side(im, round);
  rs["radius"] = rs.value("radius", 0.0) + margin;
  im.pairs.push_back({{"name", gname(round) + "|" + gname(other)},
                      {"geoms", {rs, pair_side(im, other)}},
                      {"friction", mu}});
}

// the note on box–box pairs: each box's corners against the other box
std::vector<std::string> box_box_note(const MjcfImport& im) {
  if (im.box_box_pairs.empty()) return {};
  std::string list;
  for (const std::string& p : im.box_box_pairs) list += (list.empty() ? "" : ", ") + p;
  return {"contact: two boxes (" + list +
          ") touch at each box's 8 corners against the other (16 pairs each): exact where a "
          "corner meets a face (a box resting on, or tipped against, another), blind to two "
          "edges crossing (docs/contact.md)"};
}

// whether geom g is a plane in <worldbody> facing straight up: the ground of the ground points
bool ground_plane(const mjModel* m, int g) {
  const double* q = m->geom_quat + 4 * g;
  return m->geom_type[g] == mjGEOM_PLANE && m->geom_bodyid[g] == 0 && std::fabs(q[1]) < 1e-12 &&
         std::fabs(q[2]) < 1e-12;
}

// The pairs MuJoCo would collide. The ground: the first plane in <worldbody> facing up that can
// touch a geom on a moving body; its spheres, capsules, boxes and cylinders become ground points
// (`shapes`), as before. Every other pair is a contact pair (model.pairs, pair_geometry.h): two
// spheres, capsules or cylinders; one of them and a box; a sphere, capsule, box or cylinder and
// any other plane (a wall, a tilted floor, a plane on a body; add_pairs). Two planes never
// collide in MuJoCo. Any other pair (box–box, ellipsoids, height fields, meshes) is refused
// naming both geoms: steer drops none silently
int contact_geoms(MjcfImport& im, std::vector<int>& shapes) {
  const mjModel* m = im.m;
  int plane = -1;
  std::vector<char> in_pair(size_t(m->ngeom), 0);
  std::vector<std::string> cylinder_pairs;  // cylinders in a pair, named in a note
  auto where = [&](int g) {
    const int b = m->geom_bodyid[g];
    return im.geom_name(g) +
           (b == 0 ? std::string(" (world)") : " (body '" + im.body_name(b) + "')");
  };
  auto type = [&](int g) { return m->geom_type[g]; };
  auto round = [&](int g) {
    return type(g) == mjGEOM_SPHERE || type(g) == mjGEOM_CAPSULE || type(g) == mjGEOM_CYLINDER;
  };
  for (int a = 0; a < m->ngeom && plane < 0; ++a)
    for (int b = 0; b < m->ngeom && plane < 0; ++b)
      if (a != b && ground_plane(m, a) && m->body_weldid[m->geom_bodyid[b]] != 0 &&
          collidable(im, a, b) && (round(b) || type(b) == mjGEOM_BOX))
        plane = a;
  for (int a = 0; a < m->ngeom; ++a)
    for (int b = a + 1; b < m->ngeom; ++b) {
      if (!collidable(im, a, b)) continue;
      if (type(a) == mjGEOM_PLANE && type(b) == mjGEOM_PLANE) continue;  // MuJoCo has no such test
      const int pl = type(a) == mjGEOM_PLANE ? a : (type(b) == mjGEOM_PLANE ? b : -1);
      const int bx = type(a) == mjGEOM_BOX ? a : (type(b) == mjGEOM_BOX ? b : -1);
      const int other = pl >= 0 ? (pl == a ? b : a) : (bx == a ? b : a);
      const bool modelled = (round(a) && round(b)) ||
                            (pl >= 0 && (round(other) || type(other) == mjGEOM_BOX)) ||
                            (pl < 0 && bx >= 0 && (round(other) || type(other) == mjGEOM_BOX));
      if (!modelled)
        im.refuse(where(a) + " and " + where(b) +
                  " can collide (contype/conaffinity, no <exclude>): steer models contact between "
                  "spheres, capsules, cylinders and boxes, and between planes and spheres, "
                  "capsules, boxes or cylinders, not between these (set "
                  "contype=\"0\" conaffinity=\"0\" or add an <exclude> where they should not "
                  "collide)");
      in_pair[size_t(a)] = in_pair[size_t(b)] = 1;
      if (pl < 0)  // a cylinder as its capsule (against a plane, its rim points)
        for (int g : {a, b})
          if (type(g) == mjGEOM_CYLINDER) cylinder_pairs.push_back(im.geom_name(g));
      im.contact_pairs.emplace_back(a, b);
      if (pl >= 0 && pl == plane) {
        if (std::find(shapes.begin(), shapes.end(), other) == shapes.end()) shapes.push_back(other);
        continue;
      }
      add_pairs(im, a, b);
    }
  for (int g = 0; g < m->ngeom; ++g) {
    if (!in_pair[size_t(g)]) continue;
    for (int k = 0; k < 6; ++k)
      if (m->geom_surfacevel[6 * g + k] != 0)
        im.refuse(im.geom_name(g) + ": surfacevel (a moving contact surface) is not modelled");
    if (m->geom_adhesion[g] != 0)
      im.refuse(im.geom_name(g) + ": adhesion " + num(m->geom_adhesion[g]) +
                " (an adhesive contact force) is not modelled");
  }
  if (im.pairs.size() > size_t(ArticulatedLarge::kMaxPairs))
    im.refuse(std::to_string(im.pairs.size()) +
              " contact pairs (the geom pairs MuJoCo would collide, a capsule's end caps and a "
              "box's corners against a plane counted one by one); steer takes at most " +
              std::to_string(ArticulatedLarge::kMaxPairs));
  std::sort(shapes.begin(), shapes.end());  // the file's order
  std::sort(cylinder_pairs.begin(), cylinder_pairs.end());
  cylinder_pairs.erase(std::unique(cylinder_pairs.begin(), cylinder_pairs.end()),
                       cylinder_pairs.end());
  for (const std::string& ab : box_box_note(im)) im.notes.push_back(ab);
  for (const std::string& g : cylinder_pairs)
    im.notes.push_back("contact: " + g +
                       " is a cylinder in a contact pair: there it is the capsule of its axis, "
                       "radius and half-length (exact on its curved side, its flat ends rounded "
                       "out by up to its radius)");
  return plane;
}

// The density ρ [kg/m³] at which body b's compiled mass, centre of mass and inertia are those of
// its geoms (MuJoCo's inertiafromgeom: each geom a solid of one density, summed): ρ = m_b / Σ V_g,
// then the geoms' masses ρ V_g, their centres and inertias (sphere, capsule, cylinder, box,
// ellipsoid about their centres, turned by their quats) summed about the body's centre must give
// body_ipos and R(iquat) diag(body_inertia) R(iquat)ᵀ within 10⁻⁸ of the inertia's trace. 0 when
// they do not (an <inertial> element, a mesh, geoms of other densities or with their own mass,
// a density beyond 10¹² kg/m³): the body's mass and inertia then stay as the file gives them
// when a geom's size changes.
double geom_density(const mjModel* m, int b) {
  struct Part {
    double mass, c[3], J[9];
  };
  std::vector<Part> parts;
  double volume = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    if (m->geom_bodyid[g] != b) continue;
    const double* sz = m->geom_size + 3 * g;
    const double r = sz[0];
    double v = 0, d[3] = {0, 0, 0};  // volume and principal moments per unit mass
    switch (m->geom_type[g]) {
      case mjGEOM_SPHERE:
        v = 4.0 / 3.0 * M_PI * r * r * r;
        d[0] = d[1] = d[2] = 0.4 * r * r;
        break;
      case mjGEOM_CAPSULE: {
        double mass, ia, iz;
        geom_mass_properties<double>(true, r, sz[1], 1.0, mass, ia, iz);
        v = mass, d[0] = d[1] = ia / mass, d[2] = iz / mass;
        break;
      }
      case mjGEOM_CYLINDER:
        v = M_PI * r * r * 2 * sz[1];
        d[0] = d[1] = (3 * r * r + 4 * sz[1] * sz[1]) / 12, d[2] = r * r / 2;
        break;
      case mjGEOM_BOX:
        v = 8 * sz[0] * sz[1] * sz[2];
        for (int i = 0; i < 3; ++i)
          d[i] = (sz[(i + 1) % 3] * sz[(i + 1) % 3] + sz[(i + 2) % 3] * sz[(i + 2) % 3]) / 3;
        break;
      case mjGEOM_ELLIPSOID:
        v = 4.0 / 3.0 * M_PI * sz[0] * sz[1] * sz[2];
        for (int i = 0; i < 3; ++i)
          d[i] = (sz[(i + 1) % 3] * sz[(i + 1) % 3] + sz[(i + 2) % 3] * sz[(i + 2) % 3]) / 5;
        break;
      default:
        return 0;  // a plane, mesh, heightfield: not a solid of the kinds above
    }
    Part p;
    p.mass = v;
    for (int i = 0; i < 3; ++i) p.c[i] = m->geom_pos[3 * g + i];
    double R[9];
    quat_matrix(m->geom_quat + 4 * g, R);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        p.J[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                         R[3 * i + 2] * d[2] * R[3 * j + 2];
    parts.push_back(p);
    volume += v;
  }
  if (parts.empty() || !(volume > 0) || !(m->body_mass[b] > 0)) return 0;
  const double rho = m->body_mass[b] / volume;
  const double* com = m->body_ipos + 3 * b;
  double I[9] = {}, c[3] = {};
  for (const Part& p : parts)
    for (int i = 0; i < 3; ++i) c[i] += rho * p.mass * p.c[i] / m->body_mass[b];
  for (const Part& p : parts) {
    const double dv[3] = {p.c[0] - com[0], p.c[1] - com[1], p.c[2] - com[2]};
    const double n2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        I[3 * i + j] += rho * p.mass * (p.J[3 * i + j] + (i == j ? n2 : 0) - dv[i] * dv[j]);
  }
  double R[9];
  quat_matrix(m->body_iquat + 4 * b, R);
  const double* dg = m->body_inertia + 3 * b;
  const double scale = dg[0] + dg[1] + dg[2];
  double err = 0;
  for (int i = 0; i < 3; ++i) err = std::max(err, std::fabs(c[i] - com[i]));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double f = R[3 * i] * dg[0] * R[3 * j] + R[3 * i + 1] * dg[1] * R[3 * j + 1] +
                       R[3 * i + 2] * dg[2] * R[3 * j + 2];
      err = std::max(err, std::fabs(f - I[3 * i + j]) / scale);
    }
  // (a density beyond model.geoms' range, 10¹² kg/m³, is a solid steer would not take: 0)
  return err < 1e-8 && std::isfinite(rho) && rho <= 1e12 ? rho : 0;
}

// model.geoms' entry of a sphere or capsule that carries ground points (model.morphology's
// design slots: its size moves them, and its mass where the body's inertia is its geoms')
nlohmann::json morphology_geom(const mjModel* m, int g, const std::string& name,
                               const std::string& body) {
  nlohmann::json e = {{"name", name},
                      {"body", body},
                      {"pos", vec(m->geom_pos + 3 * g, 3)},
                      {"radius", m->geom_size[3 * g]},
                      {"density", geom_density(m, m->geom_bodyid[g])}};
  if (m->geom_type[g] == mjGEOM_CAPSULE) {
    double R[9];
    quat_matrix(m->geom_quat + 4 * g, R);
    e["type"] = "capsule";
    e["axis"] = {R[2], R[5], R[8]};
    e["half_length"] = m->geom_size[3 * g + 1];
  } else {
    e["type"] = "sphere";
  }
  return e;
}

// ground points against the plane at height z: a sphere at its centre, a capsule at the
// centres of its two end caps (its axis is the geom's z, half-length size[1]); radius size[0];
// contact.friction MuJoCo's pair friction max(μ_plane, μ_geom) when every pair's is the same
void import_ground_points(MjcfImport& im, int plane, const std::vector<int>& touching, double z) {
  const mjModel* m = im.m;
  double mu = -1;
  bool same_mu = true;
  for (int g : touching) {
    const std::string gn =
        name_of(m, mjOBJ_GEOM, g, im.body_name(m->geom_bodyid[g]) + ".geom" + std::to_string(g));
    const std::string bn = im.body_name(m->geom_bodyid[g]);
    // the radius includes MuJoCo's margin: the force starts where MuJoCo's contact does
    const double margin = pair_margin(im, plane, g);
    const double r = m->geom_size[3 * g] + margin;
    const double* c = m->geom_pos + 3 * g;
    if (m->geom_type[g] == mjGEOM_SPHERE) {
      im.points.push_back(
          {{"name", gn}, {"body", bn}, {"pos", vec(c, 3)}, {"radius", r}, {"geom", gn}});
      im.geoms.push_back(morphology_geom(m, g, gn, bn));
    } else if (m->geom_type[g] == mjGEOM_BOX || m->geom_type[g] == mjGEOM_CYLINDER) {
      for (const nlohmann::json& pt : flat_geom_points(m, g)) {
        nlohmann::json e = pt;
        e["name"] = gn + "." + pt["name"].get<std::string>();
        e["body"] = bn;
        e["radius"] = margin;
        im.points.push_back(e);
      }
    } else {
      double R[9];
      quat_matrix(m->geom_quat + 4 * g, R);
      const double hl = m->geom_size[3 * g + 1];
      for (int e = 0; e < 2; ++e) {
        const double sgn = e == 0 ? -1.0 : 1.0;
        const double pe[3] = {c[0] + sgn * hl * R[2], c[1] + sgn * hl * R[5],
                              c[2] + sgn * hl * R[8]};
        im.points.push_back({{"name", gn + (e == 0 ? ".end0" : ".end1")},
                             {"body", bn},
                             {"pos", vec(pe, 3)},
                             {"radius", r},
                             {"geom", gn},
                             {"end", e == 0 ? -1 : 1}});
      }
      im.geoms.push_back(morphology_geom(m, g, gn, bn));
    }
    const double pm = std::max(m->geom_friction[3 * plane], m->geom_friction[3 * g]);
    same_mu = same_mu && (mu < 0 || pm == mu);
    mu = pm;
  }
  if (im.points.size() > size_t(ArticulatedLarge::kMaxGroundPoints))
    im.refuse(std::to_string(im.points.size()) +
              " contact points (spheres and capsule end caps that can touch " +
              im.geom_name(plane) + "); steer takes at most " +
              std::to_string(ArticulatedLarge::kMaxGroundPoints));
  im.contact = {{"height", z}};
  if (same_mu) im.contact["friction"] = mu;
  im.notes.push_back(
      "contact: " + std::to_string(im.points.size()) + " ground points (model.contacts) against " +
      im.geom_name(plane) +
      " under steer's contact laws (model.contact; docs/contact.md), not MuJoCo's soft "
      "constraints" +
      (same_mu ? "; friction " + num(mu) + " is MuJoCo's pair friction max(plane, geom)"
               : "; the pairs' frictions differ, so contact.friction keeps steer's default"));
}

// MuJoCo's mixing weight of geom a in the pair (a, b): solmix_a / (solmix_a + solmix_b), ½ when
// both are zero (a pair's solref and solimp are a's × mix + b's × (1 − mix))
double solmix_weight(const mjModel* m, int a, int b) {
  const double sa = m->geom_solmix[a], sb = m->geom_solmix[b];
  if (sa < mjMINVAL && sb < mjMINVAL) return 0.5;
  if (sa < mjMINVAL) return 0.0;
  if (sb < mjMINVAL) return 1.0;
  return sa / (sa + sb);
}

// The softplus law's stiffness k, damping d_c and friction slip speed v_s from the file's soft
// contact (docs/contact.md, "From MuJoCo's solref"). A MuJoCo contact with solref (τ, ζ) and
// solimp's d_w (the impedance at full depth) moves its gap r as r̈ = −d_w (b ṙ + k r) with
// k = 1/(d_w² τ² ζ²), b = 2/(d_w τ): a spring-damper of frequency ω = 1/(τ ζ √d_w) and damping
// ratio ζ_e = ζ √d_w on whatever mass the contact carries (the solve scales each contact's force
// by its inverse weight). steer's law is one spring-damper per point, the same k [N/m] and d_c
// [N·s/m] for all, so it takes a mass m_p: k = m_p ω², d_c = 2 ζ_e m_p ω, with m_p the tree's
// mass M (ω for the whole robot's load), capped so that the file's step h integrates the
// lightest contact explicitly (its effective mass m_min along the normal, from MuJoCo's
// body_invweight0 at qpos0 below; a pair sums its two sides): ω √(m_p/m_min) h ≤ ½ for the spring,
// h d_c / m_min ≤ 1 for the damper; and v_s such that friction's viscous branch μ N / v_s with N =
// m_p g is as stable on that body: v_s = max(0.01 m/s, μ m_p g h / m_min). One (τ, ζ, d_w) for all
// pairs: their mean (MuJoCo mixes per pair; a file whose pairs differ is noted). A pair with
// MuJoCo's direct solref (negative: stiffness and damping given) keeps steer's default law, noted.
constexpr double kImportedContactSmoothing = 1e-4;  // [m]
void contact_law_from_solref(MjcfImport& im) {
  const mjModel* m = im.m;
  if (im.contact_pairs.empty()) return;
  double tau = 0, zeta = 0, dw = 0, tau_lo = 1e300, tau_hi = 0, mu = 0, m_min = 1e300;
  // the lightest tree in contact (the subtree of a child of the world: a robot, a ball, a box;
  // each one's points carry its own weight), the mass the law is tuned on
  double tree_mass = 1e300;
  std::string lightest, lightest_tree;
  for (const auto& [a, b] : im.contact_pairs) {
    const double w = solmix_weight(m, a, b);
    const double* ra = m->geom_solref + mjNREF * a;
    const double* rb = m->geom_solref + mjNREF * b;
    if (ra[0] <= 0 || rb[0] <= 0) {
      im.notes.push_back("contact: " + im.geom_name(a) + " and " + im.geom_name(b) +
                         " give solref as direct stiffness and damping (negative); the contact "
                         "keeps steer's default law (model.contact)");
      return;
    }
    const double t = w * ra[0] + (1 - w) * rb[0];
    tau += t, zeta += w * ra[1] + (1 - w) * rb[1];
    dw += w * m->geom_solimp[mjNIMP * a + 1] + (1 - w) * m->geom_solimp[mjNIMP * b + 1];
    tau_lo = std::min(tau_lo, t), tau_hi = std::max(tau_hi, t);
    mu = std::max(mu, std::max(m->geom_friction[3 * a], m->geom_friction[3 * b]));
    // a point's inverse mass along the normal, J M⁻¹ Jᵀ, from MuJoCo's inverse weights of the
    // body at qpos0 (translation w_t, rotation w_r): w_t + w_r ρ², ρ the geom's farthest surface
    // point from the body's centre of mass (its centre's distance plus its bounding radius)
    double inv = 0, lighter_inv = -1;
    int lighter = a;
    for (int gg : {a, b}) {
      const int bb = m->geom_bodyid[gg];
      if (m->body_weldid[bb] == 0) continue;
      int root = bb;
      while (m->body_parentid[root] != 0) root = m->body_parentid[root];
      if (m->body_subtreemass[root] < tree_mass)
        tree_mass = m->body_subtreemass[root], lightest_tree = im.body_name(root);
      double d2 = 0;
      for (int i = 0; i < 3; ++i) {
        const double di = m->geom_pos[3 * gg + i] - m->body_ipos[3 * bb + i];
        d2 += di * di;
      }
      const double rho = std::sqrt(d2) + m->geom_rbound[gg];
      const double wg = m->body_invweight0[2 * bb] + m->body_invweight0[2 * bb + 1] * rho * rho;
      inv += wg;
      if (wg > lighter_inv) lighter_inv = wg, lighter = gg;
    }
    if (inv > 0 && 1 / inv < m_min) {
      m_min = 1 / inv;
      lightest = im.body_name(m->geom_bodyid[lighter]);
    }
  }
  const double n = double(im.contact_pairs.size());
  tau /= n, zeta /= n, dw /= n;
  const double omega = 1 / (tau * zeta * std::sqrt(dw)), zeta_e = zeta * std::sqrt(dw);
  const double h = m->opt.timestep, total = m->body_subtreemass[0];
  const double g = im.dis & mjDSBL_GRAVITY ? 0.0
                                           : std::sqrt(m->opt.gravity[0] * m->opt.gravity[0] +
                                                       m->opt.gravity[1] * m->opt.gravity[1] +
                                                       m->opt.gravity[2] * m->opt.gravity[2]);
  double mp = tree_mass < 1e300 ? tree_mass : total;
  const bool one_tree = tree_mass >= total - 1e-12 * total;
  std::string bound = one_tree ? "the tree's mass"
                               : "the mass of body '" + lightest_tree +
                                     "' and what it carries, the lightest tree "
                                     "in contact";
  if (m_min < 1e300) {
    std::string cap;
    const double capped = stable_penalty_mass(m_min, omega, zeta_e, h, cap);
    if (!cap.empty() && capped < mp) mp = capped, bound = cap;
  }
  const double k = mp * omega * omega, dc = 2 * zeta_e * mp * omega;
  const double vs = m_min < 1e300 ? std::max(0.01, mu * mp * g * h / m_min) : 0.01;
  im.contact["stiffness"] = k;
  im.contact["damping"] = dc;
  im.contact["slip_velocity"] = vs;
  // the onset layer w well inside the sag (MuJoCo's contact has none): k w ln 2 is the force at
  // zero depth, which with steer's default w = 1 mm would hold a light point above the plane
  im.contact["smoothing"] = kImportedContactSmoothing;
  im.notes.push_back(
      "contact law from the file's solref: tau " + num4(tau) + " s, dampratio " + num4(zeta) +
      ", solimp width-end impedance " + num4(dw) + " (omega " + num4(omega) + " rad/s) on m_p " +
      num4(mp) + " kg (" + bound +
      (bound.rfind("the ", 0) == 0 ? ""
                                   : " at timestep " + num(h) + " s for body '" + lightest + "', " +
                                         num4(m_min) + " kg at qpos0") +
      "): contact.stiffness " + num4(k) + " N/m, contact.damping " + num4(dc) +
      " N*s/m, contact.slip_velocity " + num4(vs) + " m/s, contact.smoothing " +
      num(kImportedContactSmoothing) +
      " m; a penalty per point, where MuJoCo solves its soft constraints implicitly " +
      "(docs/contact.md)" +
      (tau_hi > tau_lo ? "; the pairs' solref timeconst differ (" + num4(tau_lo) + " to " +
                             num4(tau_hi) + " s): their mean is taken"
                       : std::string()));
}

// ---- geoms: the pairs MuJoCo collides, each a world plane against one sphere on the arm (the
// tip) or several spheres and capsules (ground points) ----
void import_contact(MjcfImport& im) {
  if (!im.contact_on) return;
  const mjModel* m = im.m;
  std::vector<int> touching;  // spheres and capsules on moving bodies that can touch the plane
  const int plane = contact_geoms(im, touching);
  const double z = plane >= 0 ? m->geom_pos[3 * plane + 2] : 0.0;
  if (touching.size() == 1 && m->geom_type[touching[0]] == mjGEOM_SPHERE) {
    // the tip: the sphere's centre, the plane height raised by its radius (d = z_plane + r −
    // z_centre)
    const int sphere = touching[0];
    // the radius includes MuJoCo's margin, as a ground point's does (a gap is refused)
    const double r = m->geom_size[3 * sphere] + pair_margin(im, plane, sphere);
    im.contact = {{"enabled", true}, {"height", z + r}};
    im.tip = {{"body", im.body_name(m->geom_bodyid[sphere])},
              {"pos", vec(m->geom_pos + 3 * sphere, 3)}};
    im.notes.push_back(
        "contact: " + im.geom_name(sphere) + " against " + im.geom_name(plane) +
        " is steer's frictionless penalty law (model.contact: stiffness, damping, smoothing), not "
        "MuJoCo's "
        "soft constraint with friction; the plane height includes the sphere's radius (and "
        "MuJoCo's margin) " +
        num(r) + " m");
  } else {
    if (!touching.empty()) import_ground_points(im, plane, touching, z);
    contact_law_from_solref(im);
  }
  if (!im.pairs.empty())
    im.notes.push_back(
        "contact pairs: " + std::to_string(im.pairs.size()) +
        " pairs of spheres, capsules, boxes and planes that MuJoCo would collide (model.pairs; a "
        "capsule's end caps and a box's corners against a plane one by one) take steer's contact "
        "law on their overlap (model.contact's stiffness, damping, smoothing; docs/contact.md), "
        "not MuJoCo's soft constraints, each with MuJoCo's friction of its pair (the larger "
        "geom friction; pairs[].friction, kept as a ratio to contact.friction)");
}

// the model keys, and the record: the file, its digest, the compiler, per joint the actuators
// and their scales to MuJoCo's ctrl, the notes
ImportedModel imported_model(MjcfImport& im, const std::string& key, const std::string& bytes) {
  const mjModel* m = im.m;
  const mjOption& o = m->opt;
  ImportedModel out;
  out.timestep = o.timestep;
  out.model["integrator"] = im.integrator;
  // g along −z as a number; any other direction as the vector (model.gravity)
  if (im.dis & mjDSBL_GRAVITY)
    out.model["gravity"] = 0.0;
  else if (o.gravity[0] != 0 || o.gravity[1] != 0 || o.gravity[2] > 0)
    out.model["gravity"] = vec(o.gravity, 3);
  else
    out.model["gravity"] = -o.gravity[2];
  out.model["sites"] = im.sites;
  if (im.fluid)
    out.model["fluid"] = {
        {"density", o.density}, {"viscosity", o.viscosity}, {"wind", vec(o.wind, 3)}};
  if (im.frictionloss)
    im.notes.push_back(
        "frictionloss: MuJoCo's dry-friction constraint becomes steer's smooth law "
        "-frictionloss tanh(dq/dt / v_f) on each joint, explicit in the step "
        "(model.frictionloss_velocity v_f = 0.1 rad/s or m/s unless the config sets it; θ slots "
        "<joint>.frictionloss)");
  // <keyframe>s: qpos and qvel are steer's q and q̇ (the same order: bodies depth first, a
  // body's joints in order, a free root's p and quaternion first); a keyframe's ctrl, act and
  // mocap poses are not a state of steer's
  if (m->nkey > 0) {
    nlohmann::json keys = nlohmann::json::array();
    for (int k = 0; k < m->nkey; ++k) {
      keys.push_back({{"name", name_of(m, mjOBJ_KEY, k, "key" + std::to_string(k))},
                      {"q", vec(m->key_qpos + k * m->nq, m->nq)},
                      {"v", vec(m->key_qvel + k * m->nv, m->nv)}});
      for (int i = 0; i < m->nu; ++i)
        if (m->key_ctrl[k * m->nu + i] != 0) {
          im.notes.push_back("keyframe '" + keys.back()["name"].get<std::string>() +
                             "': its ctrl is not part of initial_state (give the controls or "
                             "targets in the config)");
          break;
        }
    }
    out.model["keyframes"] = keys;
  }
  out.model["contact"] = im.contact;
  if (!im.tip.is_null()) out.model["tip"] = im.tip;
  if (!im.points.empty()) out.model["contacts"] = im.points;
  if (!im.geoms.empty()) out.model["geoms"] = im.geoms;
  if (!im.pairs.empty()) out.model["pairs"] = im.pairs;
  out.model["torque_limits"] = {{"enabled", im.any_force_limit}};
  out.model["joint_limits"] = {{"enabled", im.any_limited_joint || im.any_limited_tendon}};
  if (!im.tendons.empty()) out.model["tendons"] = im.tendons;
  nlohmann::json ctl = nlohmann::json::array();
  for (size_t d = 0; d < im.dof_body.size(); ++d) {
    nlohmann::json e = {{"joint", im.joint_json(im.dof_body[d])["name"]}};
    if (!im.control_actuator[d].empty())
      e["control"] = {{"actuator", im.control_actuator[d]},
                      {"torque_per_ctrl", im.control_scale[d]}};
    if (!im.target_actuator[d].empty())
      e["target"] = {{"actuator", im.target_actuator[d]}, {"target_per_ctrl", im.target_scale[d]}};
    ctl.push_back(e);
  }
  // a body's only joint as "joint" (what configs override), several as "joints"
  for (auto& b : im.bodies) {
    if (b["joints"].size() == 1) b["joint"] = b["joints"][0];
    if (b["joints"].size() <= 1) b.erase("joints");
  }
  out.model["bodies"] = im.bodies;
  out.record = {{"file", im.shown},
                {"format", key},
                {"sha256", sha256_hex(bytes)},
                {"bytes", bytes.size()},
                {"compiler", std::string("MuJoCo ") + mj().version_string()},
                {"timestep", o.timestep},
                {"actuators", ctl},
                {"ctrl", im.ctrl_map},
                {"tendon_servos", im.tendon_servos},
                {"notes", im.notes}};
  return out;
}

// ---- equality constraints: joint and tendon couplings as stiff penalty tendons ----
// MuJoCo's joint equality y − y0 = a0 + a1 (x − x0) (y, x joint1's and joint2's positions, y0,
// x0 theirs at qpos0; without joint2, y − y0 = a0) and tendon equality (the same on two fixed
// tendons' lengths, y0 and x0 at tendon_length0) with a linear polynomial (a2 = a3 = a4 = 0)
// make a residual r = Σ_j c_j q_j − r0 that is linear in q. It becomes a fixed tendon over those
// joints (c: joint1's or tendon1's coefficients minus a1 times joint2's or tendon2's;
// springlength r0 = y0 + a0 − a1 x0) whose spring and damper are MuJoCo's soft constraint on r:
// r̈ = −ω² r − 2 ζ_e ω ṙ with ω = 1/(τ ζ √d), ζ_e = ζ √d (solref (τ, ζ), solimp's d_max = d),
// on the mass m = 1/(w1 + w2) that MuJoCo's constraint uses (w the inverse weights at qpos0,
// dof_invweight0 or tendon_invweight0), capped where the explicit step would not be stable
// (stable_penalty_mass): stiffness K = m ω², damping D = 2 ζ_e m ω. Refused by name: other
// equality types (connect, weld, flex, distance), a nonlinear polynomial, a spatial tendon, a
// ball or free joint, solref given as direct stiffness and damping (negative). An equality
// inactive at the start (active="false") is left out with a note: steer cannot switch it on.
void import_equality(MjcfImport& im, int e) {
  const mjModel* m = im.m;
  const std::string en = name_of(m, mjOBJ_EQUALITY, e, "equality" + std::to_string(e));
  const std::string ew = "equality constraint '" + en + "'";
  const int type = m->eq_type[e];
  if (type != mjEQ_JOINT && type != mjEQ_TENDON)
    im.refuse(ew +
              ": only joint and tendon equalities are modelled (as stiff couplings); "
              "connect, weld, flex and distance constraints are not");
  if (!m->eq_active0[e]) {
    im.notes.push_back(ew +
                       " is inactive at the start (active=\"false\"): left out, steer "
                       "cannot switch a constraint on during a run");
    return;
  }
  const double* poly = m->eq_data + mjNEQDATA * e;
  for (int k = 2; k < 5; ++k)
    if (poly[k] != 0)
      im.refuse(ew + ": polycoef[" + std::to_string(k) + "] = " + num(poly[k]) +
                " (a nonlinear coupling) is not modelled; steer's coupling is linear");
  const double* ref = m->eq_solref + mjNREF * e;
  if (!(ref[0] > 0 && ref[1] > 0))
    im.refuse(ew + ": solref " + num(ref[0]) + " " + num(ref[1]) +
              " (direct stiffness and damping) is not modelled; give a time constant and a "
              "damping ratio");
  // each side (obj1, obj2): its joints' coefficients, its position at qpos0, its inverse weight
  std::map<int, double> coef;
  double r0 = poly[0], w = 0;
  for (int side = 0; side < 2; ++side) {
    const int id = side == 0 ? m->eq_obj1id[e] : m->eq_obj2id[e];
    if (id < 0) continue;
    const double s = side == 0 ? 1.0 : -poly[1];
    if (type == mjEQ_JOINT) {
      const int jt = m->jnt_type[id];
      if (jt != mjJNT_HINGE && jt != mjJNT_SLIDE)
        im.refuse(ew + ": joint '" + name_of(m, mjOBJ_JOINT, id, "#" + std::to_string(id)) +
                  "' is not a hinge or slide");
      coef[id] += s;
      r0 += s * m->qpos0[m->jnt_qposadr[id]];
      w += m->dof_invweight0[m->jnt_dofadr[id]];
    } else {
      if (m->tendon_type[id] != mjTENDON_FIXED)
        im.refuse(ew + ": " + im.tendon_name(id) +
                  " is spatial; a coupling is modelled on fixed tendons only");
      for (const auto& [j, c] : tendon_joints(m, id)) coef[j] += s * c;
      r0 += s * m->tendon_length0[id];
      w += m->tendon_invweight0[id];
    }
  }
  nlohmann::json js = nlohmann::json::array();
  for (const auto& [j, c] : coef)
    if (c != 0) js.push_back({{"joint", im.joint_json(j)["name"]}, {"coef", c}});
  if (js.empty()) im.refuse(ew + ": its coupling has no joint with a nonzero coefficient");
  const double d = m->eq_solimp[mjNIMP * e + 1];
  const double omega = 1 / (ref[0] * ref[1] * std::sqrt(d)), zeta_e = ref[1] * std::sqrt(d);
  std::string bound;
  const double mass = stable_penalty_mass(1 / w, omega, zeta_e, m->opt.timestep, bound);
  const std::string tn = en + "_equality";
  im.tendons.push_back({{"name", tn},
                        {"joints", js},
                        {"stiffness", mass * omega * omega},
                        {"springlength", r0},
                        {"damping", 2 * zeta_e * mass * omega}});
  im.notes.push_back(ew + ": MuJoCo's soft constraint becomes the stiff coupling of tendon '" + tn +
                     "' (its residual's spring and damper from solref: omega " + num4(omega) +
                     " rad/s, damping ratio " + num4(zeta_e) + " on " + num4(mass) + " kg" +
                     (bound.empty() ? "" : ", " + bound) + "; θ slots " + tn +
                     ".stiffness, .damping)");
}

void import_equalities(MjcfImport& im) {
  if (!im.equality_on) return;
  for (int e = 0; e < im.m->neq; ++e) import_equality(im, e);
  if (im.tendons.size() > size_t(ArticulatedLarge::kMaxTendons))
    im.refuse(std::to_string(im.tendons.size()) +
              " tendons with the equality constraints' couplings; steer takes at most " +
              std::to_string(ArticulatedLarge::kMaxTendons));
}

}  // namespace

ImportedModel import_mujoco_model(const std::string& path, const std::string& shown,
                                  const std::string& key) {
  const std::string kp = "model." + key;
  // a folder, a device or a pipe would block the read or never end
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    config_fail(kp,
                "'" + excerpt(shown) + "' is not a regular file (a folder, a device or a pipe)");
  std::ifstream f(path, std::ios::binary);
  if (!f)
    config_fail(kp, "cannot read '" + excerpt(shown) + "' (resolved to '" + excerpt(path, 200) +
                        "'; paths are relative to the config's folder)");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string why;
  if (!mujoco_library(&why)) config_fail(kp, "cannot import '" + excerpt(shown) + "': " + why);
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> owner(mj().load_xml(path.c_str(), nullptr, err, sizeof err));
  if (!owner)
    config_fail(kp, "MuJoCo's compiler refused '" + excerpt(shown) + "':\n" + compiler_text(err));
  MjcfImport im;
  im.m = owner.get();
  im.shown = shown;
  im.kp = kp;
  refuse_nonfinite(im);
  import_options(im);
  import_bodies(im);
  import_tendons(im);
  import_actuators(im);
  import_equalities(im);
  import_sites(im);
  import_contact(im);
  return imported_model(im, key, bytes);
}

}  // namespace steer
