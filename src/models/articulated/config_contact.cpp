// model.tip, model.contact and model.contacts for type articulated: the fingertip point and the
// ground points (spheres fixed in bodies) against the plane z = contact.height, their laws'
// parameters as θ slots (contact_law.h, docs/contact.md).
#include "models/articulated/config_contact.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace steer {

namespace {

std::string shown(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// the θ slots of the ground points' laws: name, unit, range (contact_law.h's GroundContactParam
// order)
struct ContactSlot {
  int k;
  const char* name;
  const char* unit;
  Range range;
};
const ContactSlot kContactSlots[] = {
    {kContactFriction, "contact.friction", "1", Range::closed(0, 1e3)},
    {kContactSlipVelocity, "contact.slip_velocity", "m/s", Range{0, 1e3, true, false}},
    {kContactImpD0, "contact.solimp_d0", "1", Range{0, 1, true, true}},
    {kContactImpDWidth, "contact.solimp_dwidth", "1", Range{0, 1, true, true}},
    {kContactImpWidth, "contact.solimp_width", "m", Range{0, 1e3, true, false}},
    {kContactRefTimeconst, "contact.solref_timeconst", "s", Range{0, 1e3, true, false}},
    {kContactRefDampratio, "contact.solref_dampratio", "1", Range{0, 1e3, true, false}},
    {kContactImpMass, "contact.impedance_mass", "kg", Range{0, 1e6, true, false}},
    {kContactRestitution, "contact.restitution", "1", Range{0, 1, true, true}},
};

// model.contacts: [{"name", "body", "pos", "radius"}], at most ArticulatedLarge::kMaxGroundPoints
void parse_ground_points(const JsonObject& m, const std::map<std::string, int>& body_index,
                         ArticulatedLarge& a, ArticulatedNames& names) {
  a.ground.n_points = 0;
  names.points.clear(), names.point_geoms.clear(), names.point_ends.clear();
  if (!m.has("contacts")) return;
  const auto& list = m.raw("contacts");
  const std::string lp = m.key_path("contacts");
  const std::string kMax = std::to_string(ArticulatedLarge::kMaxGroundPoints);
  if (!list.is_array())
    config_fail(lp, "expected an array of {\"name\", \"body\", \"pos\", \"radius\"} (at most " +
                        kMax + ")");
  if (list.size() > size_t(ArticulatedLarge::kMaxGroundPoints))
    config_fail(lp, "at most " + kMax + " contact points, got " + std::to_string(list.size()));
  std::set<std::string> seen;
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string path = lp + "[" + std::to_string(k) + "]";
    if (!list[k].is_object())
      config_fail(path, "expected an object, got " + json_type_name(list[k]));
    JsonObject co(list[k], path);
    const std::string cn = co.string("name", "");
    if (cn.empty()) config_fail(co.key_path("name"), "required: a unique contact name");
    if (!seen.insert(cn).second)
      config_fail(co.key_path("name"), "'" + excerpt(cn) + "' is used twice");
    if (!co.has("body"))
      config_fail(co.key_path("body"), "required: the name of the body the point is fixed in");
    const std::string cb = co.string("body", "");
    auto it = body_index.find(cb);
    if (it == body_index.end())
      config_fail(co.key_path("body"), "'" + excerpt(cb) + "' is not a body of model.bodies");
    std::vector<double> pos = co.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
    const double radius = co.number("radius", 0.0, Range::closed(0, 1e3));
    // the model.geoms entry the point belongs to (model.morphology moves it with the geom's size)
    names.points.push_back(cn);
    names.point_geoms.push_back(co.string("geom", ""));
    names.point_ends.push_back(int(co.integer("end", 0, -1, 1)));
    co.finish();
    const int c = a.ground.n_points++;
    a.ground.body[c] = it->second;
    for (int i = 0; i < 3; ++i) a.ground.pos[c][i] = pos[i];
    a.ground.radius[c] = radius;
  }
}

// one side of a pair, all in the body's frame ("world": fixed in the world): {"body", "type",
// …}, by type
//   sphere: "pos" (its centre), "radius";  capsule: "from", "to" (its axis' ends), "radius";
//   plane: "pos" (a point of it), "normal" (normalized; the solid is below it);
//   box: "pos" (its centre), "size" (half-sizes, > 0), "quat" (its axes, w x y z; normalized)
void parse_pair_side(const JsonObject& so, const std::map<std::string, int>& body_index,
                     ArticulatedLarge& a, int c, int k) {
  if (!so.has("body"))
    config_fail(so.key_path("body"), "required: the body the geom is fixed in (or \"world\")");
  const std::string sb = so.string("body", "");
  int b = -1;
  if (sb != "world") {
    auto it = body_index.find(sb);
    if (it == body_index.end())
      config_fail(so.key_path("body"),
                  "'" + excerpt(sb) + "' is not a body of model.bodies (or \"world\")");
    b = it->second;
  }
  const std::string type = so.choice("type", "sphere", {"sphere", "capsule", "plane", "box"});
  const Range length = Range::closed(-1e3, 1e3);
  std::vector<double> e0, e1;
  double rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (type == "sphere") {
    e0 = e1 = so.numbers("pos", {0, 0, 0}, length, 3);
  } else if (type == "capsule") {
    if (!so.has("from") || !so.has("to"))
      config_fail(so.key_path(so.has("from") ? "to" : "from"),
                  "required for a capsule: the two ends of its axis [m, body frame]");
    e0 = so.numbers("from", {}, length, 3);
    e1 = so.numbers("to", {}, length, 3);
    const double len2 = (e1[0] - e0[0]) * (e1[0] - e0[0]) + (e1[1] - e0[1]) * (e1[1] - e0[1]) +
                        (e1[2] - e0[2]) * (e1[2] - e0[2]);
    if (!(len2 > 1e-18))
      config_fail(so.key_path("to"), "a capsule's axis must have a length (use a sphere)");
  } else if (type == "plane") {
    e0 = so.numbers("pos", {0, 0, 0}, length, 3);
    if (!so.has("normal"))
      config_fail(so.key_path("normal"), "required for a plane: its normal [body frame]");
    e1 = so.numbers("normal", {}, length, 3);
    const double n = std::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    if (!(n > 1e-12)) config_fail(so.key_path("normal"), "must not be zero (it is normalized)");
    for (double& v : e1) v /= n;
  } else {
    e0 = so.numbers("pos", {0, 0, 0}, length, 3);
    if (!so.has("size"))
      config_fail(so.key_path("size"), "required for a box: its three half-sizes [m]");
    e1 = so.numbers("size", {}, Range{0, 1e3, true, false}, 3);
    const std::vector<double> quat = so.numbers("quat", {1, 0, 0, 0}, length, 4);
    if (quat[0] == 0 && quat[1] == 0 && quat[2] == 0 && quat[3] == 0)
      config_fail(so.key_path("quat"), "must not be zero (it is normalized)");
    quat_to_matrix(quat, rot);
  }
  a.pair_radius[c][k] =
      type == "sphere" || type == "capsule" ? so.number("radius", 0.0, Range::closed(0, 1e3)) : 0.0;
  so.finish();
  a.pair_body[c][k] = b;
  a.pair_shape[c][k] = type == "sphere"    ? kPairSphere
                       : type == "capsule" ? kPairCapsule
                       : type == "plane"   ? kPairPlane
                                           : kPairBox;
  for (int i = 0; i < 3; ++i) a.pair_end[c][k][0][i] = e0[i], a.pair_end[c][k][1][i] = e1[i];
  for (int i = 0; i < 9; ++i) a.pair_rot[c][k][i] = rot[i];
}

// the shapes a pair may join (pair_geometry.h): two spheres or capsules, a sphere or capsule and
// a box, a sphere and a plane
void check_pair_shapes(const JsonObject& po, const ArticulatedLarge& a, int c) {
  const int s0 = a.pair_shape[c][0], s1 = a.pair_shape[c][1];
  const bool solid0 = s0 >= kPairPlane, solid1 = s1 >= kPairPlane;
  if (solid0 && solid1)
    config_fail(po.key_path("geoms"),
                "two planes or boxes: steer pairs a plane or a box with a sphere or a capsule "
                "(a box's corners against a plane are spheres of radius 0)");
  const int round = solid0 ? s1 : s0, solid = solid0 ? s0 : s1;
  if (solid == kPairPlane && round == kPairCapsule)
    config_fail(po.key_path("geoms"),
                "a plane pairs with a sphere: give a capsule's two end caps as two sphere pairs");
}

// model.pairs: [{"name", "geoms": [side 0, side 1]}], contact between two geoms on different
// bodies (contact.h), at most ArticulatedLarge::kMaxPairs; a model with pairs runs on the CPU's
// scalar capacity (its adjoint is the dual-number one)
void parse_pairs(const JsonObject& m, const std::map<std::string, int>& body_index,
                 ArticulatedLarge& a, ArticulatedNames& names) {
  a.n_pairs = 0;
  if (!m.has("pairs")) return;
  const auto& list = m.raw("pairs");
  const std::string lp = m.key_path("pairs");
  const std::string kMax = std::to_string(ArticulatedLarge::kMaxPairs);
  if (!list.is_array())
    config_fail(lp,
                "expected an array of {\"name\", \"geoms\": [two geoms]} (at most " + kMax + ")");
  if (list.size() > size_t(ArticulatedLarge::kMaxPairs))
    config_fail(lp, "at most " + kMax + " contact pairs, got " + std::to_string(list.size()));
  std::set<std::string> seen;
  for (size_t c = 0; c < list.size(); ++c) {
    const std::string path = lp + "[" + std::to_string(c) + "]";
    if (!list[c].is_object())
      config_fail(path, "expected an object, got " + json_type_name(list[c]));
    JsonObject po(list[c], path);
    const std::string pn = po.string("name", "");
    if (pn.empty()) config_fail(po.key_path("name"), "required: a unique pair name");
    if (!seen.insert(pn).second)
      config_fail(po.key_path("name"), "'" + excerpt(pn) + "' is used twice");
    const nlohmann::json& g = po.raw("geoms");
    if (!g.is_array() || g.size() != 2)
      config_fail(po.key_path("geoms"), "expected two geoms, [{\"body\", \"type\", …}, {…}]");
    for (int k = 0; k < 2; ++k) {
      const std::string gp = po.key_path("geoms") + "[" + std::to_string(k) + "]";
      if (!g[size_t(k)].is_object())
        config_fail(gp, "expected an object, got " + json_type_name(g[size_t(k)]));
      parse_pair_side(JsonObject(g[size_t(k)], gp), body_index, a, int(c), k);
    }
    check_pair_shapes(po, a, int(c));
    // its own friction (MuJoCo's per-pair mix), made a ratio to contact.friction once that is read
    a.pair_friction_scale[c] =
        po.has("friction") ? po.number("friction", 0.0, Range::closed(0, 1e3)) : -1;
    po.finish();
    if (a.pair_body[c][0] == a.pair_body[c][1])
      config_fail(po.key_path("geoms"), "both geoms are on the same body; a pair is between two");
    names.pairs.push_back(pn);
    ++a.n_pairs;
  }
}

}  // namespace

void quat_to_matrix(std::vector<double> qv, double* R) {
  const double n = std::sqrt(qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2] + qv[3] * qv[3]);
  const double w = qv[0] / n, x = qv[1] / n, y = qv[2] / n, z = qv[3] / n;
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

void parse_articulated_contact(const JsonObject& m, const std::map<std::string, int>& body_index,
                               ArticulatedLarge& a, ArticulatedNames& names,
                               ArticulatedContactValues& values) {
  JsonObject tip = m.object("tip");
  const std::string tb = tip.string("body", names.bodies.back());
  auto it = body_index.find(tb);
  if (it == body_index.end())
    config_fail(tip.key_path("body"), "'" + excerpt(tb) + "' is not a body of model.bodies");
  a.tip_body = it->second;
  std::vector<double> to = tip.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  for (int i = 0; i < 3; ++i) a.tip_offset[i] = to[i];
  tip.finish();
  parse_ground_points(m, body_index, a, names);
  parse_pairs(m, body_index, a, names);
  JsonObject ct = m.object("contact");
  a.contact = ct.boolean("enabled", false);
  values.height = ct.number("height", 0.0, Range::closed(-1e3, 1e3));
  values.stiffness = ct.number("stiffness", 1e4, Range::closed(0, 1e12));
  values.damping = ct.number("damping", 10.0, Range::closed(0, 1e9));
  values.smoothing = ct.number("smoothing", 1e-3, Range{0, 1e3, true, false});
  const std::string law = ct.choice("law", "softplus", {"softplus", "impedance"});
  a.ground.law = law == "impedance" ? GroundContacts::kImpedance : GroundContacts::kSoftplus;
  values.friction = ct.number("friction", values.friction, kContactSlots[kContactFriction].range);
  for (int c = 0; c < a.n_pairs; ++c) {
    double& scale = a.pair_friction_scale[c];
    if (scale < 0) {
      scale = 1;
    } else if (values.friction > 0) {
      scale /= values.friction;
    } else if (scale > 0) {
      config_fail(ct.key_path("friction"),
                  "must be positive when a pair gives its own friction (model.pairs[" +
                      std::to_string(c) + "].friction, kept as a ratio to it), got 0");
    }
  }
  values.slip_velocity =
      ct.number("slip_velocity", values.slip_velocity, kContactSlots[kContactSlipVelocity].range);
  std::vector<double> si = ct.numbers("solimp", {0.9, 0.95, 0.001}, Range{0, 1e3, true, false}, 3);
  for (int i = 0; i < 2; ++i)
    if (!(si[i] < 1))
      config_fail(ct.key_path("solimp"),
                  "[d0, dwidth, width]: d0 and dwidth must be in (0, 1), got " + shown(si[i]));
  std::vector<double> sr = ct.numbers("solref", {0.02, 1.0}, Range{0, 1e3, true, false}, 2);
  for (int i = 0; i < 3; ++i) values.solimp[i] = si[i];
  for (int i = 0; i < 2; ++i) values.solref[i] = sr[i];
  values.impedance_mass = ct.number("impedance_mass", 0.0, Range::closed(0, 1e6));
  // contact.impact "time_of_impact": the ground points take impulses with restitution e where
  // they cross the plane within a step (impact.h); the normal law keeps contact.damping
  const std::string impact = ct.choice("impact", "none", {"none", "time_of_impact"});
  a.ground.impact = impact == "time_of_impact" ? 1 : 0;
  a.ground.impact_sweeps =
      int(ct.integer("impact_sweeps", a.ground.impact_sweeps, 1, GroundContacts::kMaxImpactSweeps));
  if (a.ground.impact) {
    const std::string ik = ct.key_path("impact");
    if (a.ground.n_points == 0)
      config_fail(
          ik, "\"time_of_impact\" acts on the ground points; give model.contacts (none are given)");
    if (a.integrator == Articulated::kRk4)
      config_fail(
          ik,
          "\"time_of_impact\" needs model.integrator \"euler\" or \"implicitfast\" (got \"rk4\")");
    if (!ct.has("restitution"))
      config_fail(ct.key_path("restitution"),
                  "required with contact.impact \"time_of_impact\": the impulses' "
                  "coefficient of restitution e in (0, 1)");
  }
  a.ground.impact_speed =
      ct.number("impact_speed", a.ground.impact_speed, Range{0, 1e3, true, false});
  for (const char* k : {"impact_sweeps", "impact_speed"})
    if (!a.ground.impact && ct.has(k))
      config_fail(ct.key_path(k),
                  "applies to contact.impact \"time_of_impact\" only (got \"none\")");
  // without the impact, restitution e replaces the ground points' softplus damping by
  // d_c = 2 ζ(e) sqrt(k m_c) (contact_law.h's restitution_damping); without the key the slot
  // holds an unused 0.5
  a.ground.restitution = ct.has("restitution") && !a.ground.impact ? 1 : 0;
  values.restitution = ct.number("restitution", 0.5, kContactSlots[kContactRestitution].range);
  if (a.ground.restitution) {
    const std::string rk = ct.key_path("restitution");
    if (a.ground.law != GroundContacts::kSoftplus)
      config_fail(rk,
                  "applies to the softplus law only; the impedance law's damping is "
                  "contact.solref's dampratio");
    if (ct.has("damping"))
      config_fail(rk,
                  "give contact.damping or contact.restitution, not both (restitution sets the "
                  "points' damping)");
    if (a.contact)
      config_fail(rk,
                  "sets the ground points' damping only; the tip (contact.enabled) needs "
                  "contact.damping instead");
  }
  ct.finish();
}

void articulated_contact_theta(const ArticulatedLarge& a, const ArticulatedContactValues& values,
                               double* theta) {
  theta[a.p_global(Articulated::kPlaneHeight)] = values.height;
  theta[a.p_global(Articulated::kContactStiffness)] = values.stiffness;
  theta[a.p_global(Articulated::kContactDamping)] = values.damping;
  theta[a.p_global(Articulated::kContactSmoothing)] = values.smoothing;
  theta[a.p_contact(kContactFriction)] = values.friction;
  theta[a.p_contact(kContactSlipVelocity)] = values.slip_velocity;
  theta[a.p_contact(kContactImpD0)] = values.solimp[0];
  theta[a.p_contact(kContactImpDWidth)] = values.solimp[1];
  theta[a.p_contact(kContactImpWidth)] = values.solimp[2];
  theta[a.p_contact(kContactRefTimeconst)] = values.solref[0];
  theta[a.p_contact(kContactRefDampratio)] = values.solref[1];
  double mass = values.impedance_mass;
  if (!(mass > 0)) {
    // the body masses are in θ already (config_articulated.cpp sets them first)
    mass = 0;
    for (int b = 0; b < a.n_bodies; ++b) mass += theta[a.p_body(b, Articulated::kMass)];
  }
  theta[a.p_contact(kContactImpMass)] = mass;
  theta[a.p_contact(kContactRestitution)] = values.restitution;
}

void articulated_contact_slots(const ArticulatedLarge& a, const ArticulatedNames&,
                               ModelInfo& info) {
  info.set_param(a.p_global(Articulated::kPlaneHeight), "contact.height", "m",
                 Range::closed(-1e3, 1e3), "contact");
  info.set_param(a.p_global(Articulated::kContactStiffness), "contact.stiffness", "N/m",
                 Range::closed(0, 1e12), "contact");
  info.set_param(a.p_global(Articulated::kContactDamping), "contact.damping", "N*s/m",
                 Range::closed(0, 1e9), "contact");
  info.set_param(a.p_global(Articulated::kContactSmoothing), "contact.smoothing", "m",
                 Range{0, 1e3, true, false}, "contact");
  for (const ContactSlot& s : kContactSlots)
    info.set_param(a.p_contact(s.k), s.name, s.unit, s.range, "contact");
}

void articulated_contact_json(const ArticulatedLarge& a, const ArticulatedNames& names,
                              nlohmann::json& m) {
  m["contact"] = a.contact ? "penalty plane z = contact.height at the tip point" : "off";
  m["tip"] = {{"body", names.bodies[a.tip_body]},
              {"pos_m", std::vector<double>(a.tip_offset, a.tip_offset + 3)}};
  if (a.n_pairs > 0) {
    nlohmann::json ps = nlohmann::json::array();
    for (int c = 0; c < a.n_pairs; ++c) {
      nlohmann::json sides = nlohmann::json::array();
      for (int k = 0; k < 2; ++k) {
        const int b = a.pair_body[c][k];
        static const char* kShape[] = {"capsule", "sphere", "plane", "box"};
        const int shape = a.pair_shape[c][k];
        nlohmann::json e = {{"body", b < 0 ? std::string("world") : names.bodies[b]},
                            {"type", kShape[shape]}};
        const std::vector<double> e0(a.pair_end[c][k][0], a.pair_end[c][k][0] + 3);
        const std::vector<double> e1(a.pair_end[c][k][1], a.pair_end[c][k][1] + 3);
        if (shape == kPairSphere || shape == kPairCapsule) e["radius_m"] = a.pair_radius[c][k];
        if (shape == kPairCapsule) {
          e["from_m"] = e0;
          e["to_m"] = e1;
        } else {
          e["pos_m"] = e0;
        }
        if (shape == kPairPlane) e["normal"] = e1;
        if (shape == kPairBox) {
          e["size_m"] = e1;
          e["axes"] = std::vector<double>(a.pair_rot[c][k], a.pair_rot[c][k] + 9);
        }
        sides.push_back(e);
      }
      ps.push_back({{"name", names.pairs[size_t(c)]},
                    {"geoms", sides},
                    {"friction_over_contact_friction", a.pair_friction_scale[c]}});
    }
    m["pairs"] = ps;
    m["pairs_law"] =
        "the ground points' normal law and friction on the overlap of the two geoms (spheres, "
        "capsules, planes, boxes: depth r0 + r1 - gap between their cores), equal and opposite on "
        "the two bodies; adjoint by dual numbers";
  }
  if (a.ground.n_points == 0) return;
  nlohmann::json pts = nlohmann::json::array();
  for (int c = 0; c < a.ground.n_points; ++c)
    pts.push_back({{"body", names.bodies[a.ground.body[c]]},
                   {"pos_m", std::vector<double>(a.ground.pos[c], a.ground.pos[c] + 3)},
                   {"radius_m", a.ground.radius[c]}});
  m["contacts"] = pts;
  m["contacts_law"] =
      a.ground.law == GroundContacts::kImpedance
          ? "impedance (MuJoCo solimp/solref as a penalty force) + smoothed Coulomb friction"
      : a.ground.restitution
          ? "softplus spring-damper, damping from contact.restitution and contact.impedance_mass, "
            "+ smoothed Coulomb friction"
          : "softplus spring-damper + smoothed Coulomb friction";
  if (a.ground.impact)
    m["contacts_impact"] = {
        {"law",
         "time_of_impact: an impulse with restitution contact.restitution where a point "
         "crosses the plane within a step, at the crossing time"},
        {"sweeps", a.ground.impact_sweeps},
        {"impact_speed_m_per_s", a.ground.impact_speed}};
}

}  // namespace steer
