#include "models/articulated/morphology.h"

#include <cmath>
#include <set>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/dual.h"

namespace steer {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr const char* kAxes[3] = {"x", "y", "z"};
using D1 = Dual<double, 1>;

double value_of(double v) { return v; }
double value_of(const D1& v) { return v.a; }

// The body's inertial slots after its geoms' changes and its scale: in[10] = (m, c (3), I_c (6:
// xx, yy, zz, xy, xz, yz, tensor elements about c, body frame)). Each geom of density ρ adds
// its new solid (m_g(r, h) at c_g, J_g(r, h) about it, J_g = I_a E + (I_z − I_a) a aᵀ) and
// takes away its nominal one (r0, h0, c_g0). About the body's origin masses, first moments
// and inertias add:
//   m' = m + Σ ±m_g,  c' = (m c + Σ ±m_g c_g) / m',
//   I_o' = I_c + m (|c|² E − c cᵀ) + Σ ±[J_g + m_g (|c_g|² E − c_g c_gᵀ)],
//   I_c' = I_o' − m' (|c'|² E − c' c'ᵀ);
// then m'' = σ m', I'' = σ I_c'. With every size at its nominal value (in value, not in a
// dual's partials) the geom part is skipped, so the slots keep their bits.
// sign × a solid of mass m and moments ia (across its axis a), iz (along it) centred at c into
// a body's mass, first moment m c and inertia about its origin (xx, yy, zz, xy, xz, yz):
// J = ia E + (iz − ia) a aᵀ about c, plus m (|c|² E − c cᵀ)
template <class S>
void add_solid(const S& m, const S& ia, const S& iz, const S* c, const double* a, const S& sign,
               S& mass, S* first, S* Io) {
  const S n2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
  const S J[6] = {ia + (iz - ia) * a[0] * a[0] + m * (n2 - c[0] * c[0]),
                  ia + (iz - ia) * a[1] * a[1] + m * (n2 - c[1] * c[1]),
                  ia + (iz - ia) * a[2] * a[2] + m * (n2 - c[2] * c[2]),
                  (iz - ia) * a[0] * a[1] - m * c[0] * c[1],
                  (iz - ia) * a[0] * a[2] - m * c[0] * c[2],
                  (iz - ia) * a[1] * a[2] - m * c[1] * c[2]};
  mass += sign * m;
  for (int i = 0; i < 3; ++i) first[i] += sign * m * c[i];
  for (int i = 0; i < 6; ++i) Io[i] += sign * J[i];
}

template <class S>
void map_body(const Morphology& g, int b, const S* in, const S& scale, const S* design, S* out) {
  for (int k = 0; k < 10; ++k) out[k] = in[k];
  // a body without a dense geom keeps its slots (a massless joint frame too: recomposing its
  // centre c = first moment / m would be 0/0); with one, the dual pass (S not double) always
  // recomposes, so that the derivatives flow, and the float64 map only when a size moved
  bool dense = false, moved = false;
  for (const MorphologyGeom& e : g.geoms) {
    if (e.body != b || !(e.density > 0)) continue;
    dense = true;
    moved = moved || !std::is_same<S, double>::value ||
            value_of(design[e.slot_radius]) != e.radius ||
            (e.slot_half_length >= 0 && value_of(design[e.slot_half_length]) != e.half_length);
    for (int i = 0; i < 3; ++i) moved = moved || value_of(design[e.slot_offset + i]) != e.pos[i];
  }
  if (dense && moved) {
    auto outer = [](const S* v, S* o) {  // |v|² E − v vᵀ as (xx, yy, zz, xy, xz, yz)
      const S n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      o[0] = n2 - v[0] * v[0], o[1] = n2 - v[1] * v[1], o[2] = n2 - v[2] * v[2];
      o[3] = -(v[0] * v[1]), o[4] = -(v[0] * v[2]), o[5] = -(v[1] * v[2]);
    };
    S mass = in[0], first[3], Io[6], t[6];
    const S c[3] = {in[1], in[2], in[3]};
    outer(c, t);
    for (int i = 0; i < 3; ++i) first[i] = mass * c[i];
    for (int i = 0; i < 6; ++i) Io[i] = in[4 + i] + mass * t[i];
    for (const MorphologyGeom& e : g.geoms) {
      if (e.body != b || !(e.density > 0)) continue;
      const S r = e.slot_radius >= 0 ? design[e.slot_radius] : S(e.radius);
      const S h = e.slot_half_length >= 0 ? design[e.slot_half_length] : S(e.half_length);
      S m1, ia1, iz1, m0, ia0, iz0;
      geom_mass_properties<S>(e.capsule, r, h, e.density, m1, ia1, iz1);
      geom_mass_properties<S>(e.capsule, S(e.radius), S(e.half_length), e.density, m0, ia0, iz0);
      const S c1[3] = {design[e.slot_offset], design[e.slot_offset + 1], design[e.slot_offset + 2]};
      const S c0[3] = {S(e.pos[0]), S(e.pos[1]), S(e.pos[2])};
      // + the new solid (m1, J1 about c1), − the nominal one (m0, J0 about c0)
      add_solid(m1, ia1, iz1, c1, e.axis, S(1), mass, first, Io);
      add_solid(m0, ia0, iz0, c0, e.axis, S(-1), mass, first, Io);
    }
    S cn[3];
    for (int i = 0; i < 3; ++i) cn[i] = first[i] / mass;
    outer(cn, t);
    out[0] = mass;
    for (int i = 0; i < 3; ++i) out[1 + i] = cn[i];
    for (int i = 0; i < 6; ++i) out[4 + i] = Io[i] - mass * t[i];
  }
  out[0] = out[0] * scale;
  for (int i = 0; i < 6; ++i) out[4 + i] = out[4 + i] * scale;
}

// the ground point's centre and radius after its geom's change:
// c + (c_g − c_g0) + e (h − h0) a,  r + (r_g − r_g0)
template <class S>
void map_point(const MorphologyGeom& e, int end, const S* in, const S* design, S* out) {
  for (int i = 0; i < 3; ++i) out[i] = in[i] + (design[e.slot_offset + i] - S(e.pos[i]));
  if (e.slot_half_length >= 0 && end != 0) {
    const S dh = design[e.slot_half_length] - S(e.half_length);
    for (int i = 0; i < 3; ++i) out[i] = out[i] + S(double(end) * e.axis[i]) * dh;
  }
  out[3] = in[3] + (design[e.slot_radius] - S(e.radius));
}

// the design slots of body b's map: its scale, then each of its geoms' sizes (indices into the
// design block)
std::vector<int> body_design_slots(const Morphology& g, int b) {
  std::vector<int> s = {b};
  for (const MorphologyGeom& e : g.geoms)
    if (e.body == b && e.density > 0) {
      s.push_back(e.slot_radius);
      if (e.slot_half_length >= 0) s.push_back(e.slot_half_length);
      for (int i = 0; i < 3; ++i) s.push_back(e.slot_offset + i);
    }
  return s;
}

}  // namespace

template <class S>
void geom_mass_properties(bool capsule, const S& r, const S& h, double density, S& mass, S& ia,
                          S& iz) {
  const S r2 = r * r;
  const S ball = S(density * 4.0 / 3.0 * kPi) * r2 * r;  // the two half-balls' mass
  if (!capsule) {
    mass = ball;
    ia = iz = S(0.4) * ball * r2;
    return;
  }
  const S cyl = S(density * kPi) * r2 * (S(2) * h);
  mass = cyl + ball;
  // cylinder: m (3 r² + L²)/12 across, m r²/2 along (L = 2h); the half-balls about the
  // capsule's centre: m_b (2 r²/5 + h² + 3 h r / 4) across, 2 m_b r²/5 along
  ia = cyl * (S(3) * r2 + S(4) * h * h) / S(12) + ball * (S(0.4) * r2 + h * h + S(0.75) * h * r);
  iz = cyl * r2 / S(2) + S(0.4) * ball * r2;
}

template <class S>
void morphology_map(const Morphology& g, const ArticulatedLarge& a, const S* theta, S* out) {
  const int np = a.np();
  for (int i = 0; i < np; ++i) out[i] = theta[i];
  if (!a.morphology) return;
  const S* design = theta + a.p_design(0);
  for (int b = 0; b < a.n_bodies; ++b)
    map_body<S>(g, b, theta + a.p_body(b, 0), design[b], design, out + a.p_body(b, 0));
  for (const MorphologyGeom& e : g.geoms)
    for (size_t k = 0; k < e.points.size(); ++k)
      map_point<S>(e, e.ends[k], theta + a.p_ground(e.points[k], 0), design,
                   out + a.p_ground(e.points[k], 0));
}

template void morphology_map<double>(const Morphology&, const ArticulatedLarge&, const double*,
                                     double*);
template void geom_mass_properties<double>(bool, const double&, const double&, double, double&,
                                           double&, double&);

void morphology_adjoint(const Morphology& g, const ArticulatedLarge& a, const double* theta,
                        const double* grad_eff, double* grad) {
  const int np = a.np();
  if (!a.morphology) {
    for (int i = 0; i < np; ++i) grad[i] += grad_eff[i];
    return;
  }
  // every slot but the bodies' inertial ones and the points' passes through
  std::vector<char> mapped(size_t(np), 0);
  for (int b = 0; b < a.n_bodies; ++b)
    for (int k = 0; k < 10; ++k) mapped[size_t(a.p_body(b, k))] = 1;
  for (int c = 0; c < a.ground.n_points; ++c)
    for (int k = 0; k < 4; ++k) mapped[size_t(a.p_ground(c, k))] = 1;
  for (int i = 0; i < np; ++i)
    if (!mapped[size_t(i)]) grad[i] += grad_eff[i];
  const int nd = a.n_design;
  const double* design = theta + a.p_design(0);
  double* gdesign = grad + a.p_design(0);
  // a body's map is a function of its 10 slots and its design slots: one dual pass per input
  std::vector<D1> dd(static_cast<size_t>(nd));
  for (int b = 0; b < a.n_bodies; ++b) {
    const std::vector<int> ds = body_design_slots(g, b);
    const double* ge = grad_eff + a.p_body(b, 0);
    for (int j = 0; j < 10 + int(ds.size()); ++j) {
      D1 in[10], out[10];
      for (int k = 0; k < 10; ++k) in[k] = D1(theta[a.p_body(b, k)]);
      for (int i = 0; i < nd; ++i) dd[size_t(i)] = D1(design[i]);
      if (j < 10)
        in[j] = D1::variable(theta[a.p_body(b, j)], 0);
      else
        dd[size_t(ds[size_t(j - 10)])] = D1::variable(design[ds[size_t(j - 10)]], 0);
      map_body<D1>(g, b, in, dd[size_t(b)], dd.data(), out);
      double s = 0;
      for (int k = 0; k < 10; ++k) s += ge[k] * out[k].v[0];
      if (j < 10)
        grad[a.p_body(b, j)] += s;
      else
        gdesign[ds[size_t(j - 10)]] += s;
    }
  }
  // a point's map is linear: c̄ and r̄ pass through; h̄ += e a · c̄, r̄_g += r̄
  std::vector<char> seen(size_t(a.ground.n_points), 0);
  for (const MorphologyGeom& e : g.geoms)
    for (size_t k = 0; k < e.points.size(); ++k) {
      const int c = e.points[k];
      seen[size_t(c)] = 1;
      const double* ge = grad_eff + a.p_ground(c, 0);
      for (int i = 0; i < 4; ++i) grad[a.p_ground(c, i)] += ge[i];
      for (int i = 0; i < 3; ++i) gdesign[e.slot_offset + i] += ge[i];
      if (e.slot_half_length >= 0 && e.ends[k] != 0)
        for (int i = 0; i < 3; ++i)
          gdesign[e.slot_half_length] += double(e.ends[k]) * e.axis[i] * ge[i];
      gdesign[e.slot_radius] += ge[3];
    }
  for (int c = 0; c < a.ground.n_points; ++c)
    if (!seen[size_t(c)])
      for (int i = 0; i < 4; ++i) grad[a.p_ground(c, i)] += grad_eff[a.p_ground(c, i)];
}

void parse_morphology(const JsonObject& m, const std::map<std::string, int>& body_index,
                      const std::vector<std::string>& point_geoms,
                      const std::vector<int>& point_ends, ArticulatedLarge& a, Morphology& g) {
  g = Morphology{};
  g.on = m.boolean("morphology", false);
  if (m.has("geoms")) {
    const auto& list = m.raw("geoms");
    const std::string lp = m.key_path("geoms");
    if (!list.is_array())
      config_fail(lp,
                  "expected an array of {\"name\", \"body\", \"type\", \"pos\", \"axis\", "
                  "\"radius\", \"half_length\", \"density\"}");
    if (list.size() > size_t(ArticulatedLarge::kMaxGroundPoints))
      config_fail(lp, "at most " + std::to_string(ArticulatedLarge::kMaxGroundPoints) +
                          " geoms, got " + std::to_string(list.size()));
    std::set<std::string> seen;
    for (size_t k = 0; k < list.size(); ++k) {
      const std::string path = lp + "[" + std::to_string(k) + "]";
      if (!list[k].is_object())
        config_fail(path, "expected an object, got " + json_type_name(list[k]));
      JsonObject go(list[k], path);
      MorphologyGeom e;
      e.name = go.string("name", "");
      if (e.name.empty()) config_fail(go.key_path("name"), "required: a unique geom name");
      if (!seen.insert(e.name).second)
        config_fail(go.key_path("name"), "'" + excerpt(e.name) + "' is used twice");
      const std::string bn = go.string("body", "");
      auto it = body_index.find(bn);
      if (it == body_index.end())
        config_fail(go.key_path("body"), "'" + excerpt(bn) + "' is not a body of model.bodies");
      e.body = it->second;
      e.capsule = go.choice("type", "sphere", {"sphere", "capsule"}) == "capsule";
      const std::vector<double> pos = go.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
      for (int i = 0; i < 3; ++i) e.pos[i] = pos[size_t(i)];
      e.radius = go.number_required("radius", Range::closed(0, 1e3));
      if (e.capsule) {
        const std::vector<double> ax = go.numbers("axis", {0, 0, 1}, Range::closed(-1e3, 1e3), 3);
        const double n = std::sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
        if (!(n > 1e-12)) config_fail(go.key_path("axis"), "a capsule's axis must not be zero");
        for (int i = 0; i < 3; ++i) e.axis[i] = ax[size_t(i)] / n;
        e.half_length = go.number("half_length", 0.0, Range::closed(0, 1e3));
      }
      e.density = go.number("density", 0.0, Range::closed(0, 1e12));
      go.finish();
      g.geoms.push_back(e);
    }
  }
  for (size_t c = 0; c < point_geoms.size(); ++c) {
    if (point_geoms[c].empty()) continue;
    bool found = false;
    for (MorphologyGeom& e : g.geoms)
      if (e.name == point_geoms[c]) {
        if (e.body != a.ground.body[c])
          config_fail("model.contacts[" + std::to_string(c) + "].geom",
                      "geom '" + excerpt(e.name) + "' is in another body than the point");
        if (!e.capsule && point_ends[c] != 0)
          config_fail("model.contacts[" + std::to_string(c) + "].end",
                      "a sphere's point has end 0 (its centre)");
        e.points.push_back(int(c)), e.ends.push_back(point_ends[c]);
        found = true;
      }
    if (!found)
      config_fail("model.contacts[" + std::to_string(c) + "].geom",
                  "'" + excerpt(point_geoms[c]) + "' is not a geom of model.geoms");
  }
  a.morphology = g.on;
  a.n_design = 0;
  if (!g.on) return;
  a.n_design = a.n_bodies;  // the scales
  for (MorphologyGeom& e : g.geoms) {
    e.slot_radius = a.n_design++;
    if (e.capsule) e.slot_half_length = a.n_design++;
    e.slot_offset = a.n_design;
    a.n_design += 3;
  }
}

void morphology_slots(const ArticulatedLarge& a, const ArticulatedNames& names, const Morphology& g,
                      ModelInfo& info) {
  if (!a.morphology) return;
  for (int c = 0; c < a.ground.n_points; ++c) {
    const std::string& pn = names.points[size_t(c)];
    for (int i = 0; i < 3; ++i) {
      info.set_param(a.p_ground(c, i), pn + ".center." + kAxes[i], "m", Range::closed(-1e3, 1e3),
                     "contact_centers");
      info.param_groups[pn + ".center"].push_back(a.p_ground(c, i));
    }
    info.set_param(a.p_ground(c, 3), pn + ".radius", "m", Range::closed(0, 1e3), "contact_radii");
  }
  for (int b = 0; b < a.n_bodies; ++b)
    info.set_param(a.p_design(b), names.bodies[size_t(b)] + ".scale", "1",
                   names.is_frame(b) ? Range::closed(1, 1) : Range{0, 1e3, true, false},
                   names.is_frame(b) ? "frame_scales" : "scale");
  for (const MorphologyGeom& e : g.geoms) {
    info.set_param(a.p_design(e.slot_radius), e.name + ".size.radius", "m", Range::closed(0, 1e3),
                   "geom_radius");
    if (e.slot_half_length >= 0)
      info.set_param(a.p_design(e.slot_half_length), e.name + ".size.half_length", "m",
                     Range::closed(0, 1e3), "geom_half_length");
    for (int i = 0; i < 3; ++i) {
      info.set_param(a.p_design(e.slot_offset + i), e.name + ".offset." + kAxes[i], "m",
                     Range::closed(-1e3, 1e3), "geom_offset");
      info.param_groups[e.name + ".offset"].push_back(a.p_design(e.slot_offset + i));
    }
  }
}

void morphology_theta(const ArticulatedLarge& a, const Morphology& g, double* theta) {
  if (!a.morphology) return;
  for (int c = 0; c < a.ground.n_points; ++c) {
    for (int i = 0; i < 3; ++i) theta[a.p_ground(c, i)] = a.ground.pos[c][i];
    theta[a.p_ground(c, 3)] = a.ground.radius[c];
  }
  for (int b = 0; b < a.n_bodies; ++b) theta[a.p_design(b)] = 1.0;
  for (const MorphologyGeom& e : g.geoms) {
    theta[a.p_design(e.slot_radius)] = e.radius;
    if (e.slot_half_length >= 0) theta[a.p_design(e.slot_half_length)] = e.half_length;
    for (int i = 0; i < 3; ++i) theta[a.p_design(e.slot_offset + i)] = e.pos[i];
  }
}

void morphology_json(const ArticulatedLarge& a, const ArticulatedNames& names, const Morphology& g,
                     nlohmann::json& m) {
  if (a.morphology)
    m["morphology"] =
        "design slots mapped onto theta per rollout: <body>.scale (mass and inertia), "
        "<geom>.size.radius|half_length and <geom>.offset.x|y|z (the geom's ground points, and "
        "the body's mass and inertia at the geom's density where mass_follows_size); the ground "
        "points' centres and radii are slots";
  if (g.geoms.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  for (const MorphologyGeom& e : g.geoms) {
    nlohmann::json pts = nlohmann::json::array();
    for (size_t k = 0; k < e.points.size(); ++k)
      pts.push_back({{"point", names.points[size_t(e.points[k])]}, {"end", e.ends[k]}});
    nlohmann::json j = {{"name", e.name},
                        {"body", names.bodies[size_t(e.body)]},
                        {"type", e.capsule ? "capsule" : "sphere"},
                        {"pos_m", std::vector<double>(e.pos, e.pos + 3)},
                        {"radius_m", e.radius},
                        {"density_kg_per_m3", e.density},
                        {"mass_follows_size", e.density > 0},
                        {"points", pts}};
    if (e.capsule) {
      j["axis"] = std::vector<double>(e.axis, e.axis + 3);
      j["half_length_m"] = e.half_length;
    }
    list.push_back(j);
  }
  m["geoms"] = list;
}

}  // namespace steer
