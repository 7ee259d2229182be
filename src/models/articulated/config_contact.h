// The articulated model's contact keys (model.tip, model.contact, model.contacts): parsed into the
// model's contact fields, their θ slots named, their nominal values set, and their effective-config
// keys written. config_articulated.cpp calls these.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"

namespace steer {

// the contact laws' nominal parameter values, read before θ is sized
struct ArticulatedContactValues {
  double height = 0, stiffness = 1e4, damping = 10, smoothing = 1e-3;
  // the ground points' laws (contact_law.h): friction, and the impedance law's solimp, solref
  // and mass (0: the sum of the bodies' masses)
  double friction = 1, slip_velocity = 0.01;
  double solimp[3] = {0.9, 0.95, 0.001}, solref[2] = {0.02, 1};
  double impedance_mass = 0;
  double restitution = 0.5;  // e in (0, 1); used where GroundContacts::restitution is set
};

// a quaternion (w, x, y, z), normalized -> the row-major rotation matrix R [9] (the bodies', sites'
// and boxes' "quat" keys)
void quat_to_matrix(std::vector<double> qv, double* R);
// model.tip, model.contact and model.contacts -> a's contact fields and the values of their θ slots
void parse_articulated_contact(const JsonObject& m, const std::map<std::string, int>& body_index,
                               ArticulatedLarge& a, ArticulatedNames& names,
                               ArticulatedContactValues& values);
// the nominal values into θ [np]
void articulated_contact_theta(const ArticulatedLarge& a, const ArticulatedContactValues& values,
                               double* theta);
// the contact slots' names, units and ranges
void articulated_contact_slots(const ArticulatedLarge& a, const ArticulatedNames& names,
                               ModelInfo& info);
// the effective config's contact and tip keys
void articulated_contact_json(const ArticulatedLarge& a, const ArticulatedNames& names,
                              nlohmann::json& m);

}  // namespace steer
