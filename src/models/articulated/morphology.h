// model.morphology: design slots that are not read by the step but mapped onto the θ slots it
// reads, once per rollout before a batch runs (the runner, articulated_runner_hooks.h), with the
// gradient taken back through the map after it:
//   <body>.scale σ_b             the body's mass and inertia times σ_b (its centre of mass stays)
//   <geom>.size.radius r_g,      an imported sphere's or capsule's radius and a capsule's
//   <geom>.size.half_length h_g, half-length, and its centre c_g in its body's frame: its ground
//   <geom>.offset.x|y|z c_g      points move with them (by c_g − c_g0, a capsule's end caps by
//                                ±(h_g − h_g0) along its axis too, every point's radius by
//                                r_g − r_g0), and, where the body's inertia is its geoms' at one
//                                density ρ (MuJoCo's inertiafromgeom), the body's mass, centre and
//                                inertia lose the nominal solid and gain the new one (ρ each).
// With every design slot at its nominal value the map leaves θ's bits as they are.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/json_reader.h"
#include "steer/models/articulated.h"

namespace steer {

// a geom of model.geoms: a sphere or a capsule fixed in a body, the ground points it carries
struct MorphologyGeom {
  std::string name;
  int body = -1;
  bool capsule = false;
  double pos[3] = {};          // its centre, body frame [m]
  double axis[3] = {0, 0, 1};  // a capsule's axis, body frame, unit
  double radius = 0;           // nominal r_g0 [m]
  double half_length = 0;      // nominal h_g0 [m] (a capsule's)
  double density = 0;          // ρ [kg/m³]; 0: the body's mass and inertia do not follow it
  int slot_radius = -1;        // its design slots (ArticulatedCap::p_design), −1: none
  int slot_half_length = -1;
  int slot_offset = -1;           // its centre's three (x, y, z)
  std::vector<int> points, ends;  // the ground points it carries, each one's end (−1, 0, +1)
};

struct Morphology {
  bool on = false;
  std::vector<MorphologyGeom> geoms;
};

// the mass m [kg] and the inertia about its centre, I_a across its axis and I_z along it
// [kg·m²], of a sphere (capsule false: I_a = I_z) or a capsule of radius r and half-length h at
// density ρ: MuJoCo's (a cylinder of length 2h and two half-balls whose centres of mass sit
// 3r/8 beyond its ends)
template <class S>
void geom_mass_properties(bool capsule, const S& r, const S& h, double density, S& mass, S& ia,
                          S& iz);

// θ_eff = D(θ) for model m (np slots each; theta and out may not alias)
template <class S>
void morphology_map(const Morphology& g, const ArticulatedLarge& m, const S* theta, S* out);

// grad += (∂D/∂θ)ᵀ grad_eff at θ (np slots each)
void morphology_adjoint(const Morphology& g, const ArticulatedLarge& m, const double* theta,
                        const double* grad_eff, double* grad);

// model.morphology and model.geoms (a.morphology, a.n_design and g); the ground points'
// geom and end keys were read with model.contacts (point_geoms, point_ends)
void parse_morphology(const JsonObject& model, const std::map<std::string, int>& body_index,
                      const std::vector<std::string>& point_geoms,
                      const std::vector<int>& point_ends, ArticulatedLarge& a, Morphology& g);

// the design slots' names, units, ranges and groups, and the ground points' (info's)
struct ModelInfo;
struct ArticulatedNames;
void morphology_slots(const ArticulatedLarge& a, const ArticulatedNames& names, const Morphology& g,
                      ModelInfo& info);
// their nominal values into θ
void morphology_theta(const ArticulatedLarge& a, const Morphology& g, double* theta);
// the effective config's model.geoms and model.morphology, into m
void morphology_json(const ArticulatedLarge& a, const ArticulatedNames& names, const Morphology& g,
                     nlohmann::json& m);

}  // namespace steer
