// The articulated model's config section, initial state, slot table and effective-config
// keys (model.type "articulated"; registration in articulated_model.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/registry.h"

namespace steer {

ModelInfo articulated_info(const ArticulatedLarge& m, const ArticulatedNames& names);
// model.* -> the config's ArticulatedSetup (model, names), c.info, nominal θ
void parse_articulated_model(const JsonObject& m, ExperimentConfig& c);
// initial_state.q / v; a PD target the model section did not give holds the initial pose
void parse_articulated_initial_state(const JsonObject& s, ExperimentConfig& c);
nlohmann::json articulated_model_json(const ExperimentConfig& c);
// ModelDef::check_physical: every body's mass positive and its inertia tensor positive definite
// within the triangle inequality (inertia_check.h), for parameters theta [np]
bool articulated_check_physical(const ExperimentConfig& c, const double* theta,
                                PhysicalViolation& v);

}  // namespace steer
