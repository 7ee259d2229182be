// model.type "articulated": a kinematic tree of hinge, slide and free joints under PD servos,
// with optional torque saturation, joint limits, a fingertip contact plane and ground contact
// points (include/steer/models/articulated.h). Its runner, the chatter advice for saturated
// servos and the registration; the model section's parser, initial state, slot table and
// effective-config keys are in config_articulated.cpp.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/json_reader.h"
#include "models/articulated/config_articulated.h"
#include "models/articulated/articulated_report.h"
#include "models/registry.h"
#include "models/articulated/articulated_runner.h"
#include "problem/batch_runner.h"
#include "steer/models/articulated.h"

namespace steer {

namespace {

// the tree as parsed (articulated_setup.h), whichever capacity runs it
const ArticulatedLarge& articulated(const ExperimentConfig& c) {
  return c.model_state<ArticulatedSetup>().large;
}

void model_json(const ExperimentConfig& c, nlohmann::json& m) {
  m.update(articulated_model_json(c));
}

void set_dt(ExperimentConfig& c, double dt) {
  ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  s.model.dt = dt, s.large.dt = dt, s.legged.dt = dt;
}

std::unique_ptr<BatchRunner> new_runner(const ExperimentConfig& c, BackendKind backend,
                                        const RunnerOptions& options) {
  return with_articulated(c.model_state<ArticulatedSetup>(), backend, [&](const auto& m) {
    return articulated_runner(c, m, backend, options);
  });
}

// A saturated servo under implicitfast chatters because its k_v acts explicitly at the clamp
// (README, "Saturated servos"); the servo made implicit through the saturation removes that.
std::string chatter_remedy(const ExperimentConfig& c, const std::string& smaller_dt) {
  const ArticulatedLarge& a = articulated(c);
  if (a.torque_limits && a.servo_newton == 0) {
    const std::string servo =
        "model.torque_limits.newton_iterations ≥ 1 makes the servo implicit through its force "
        "limit";
    return a.integrator == Articulated::kImplicitFast
               ? servo + "; or " + smaller_dt
               : "model.integrator \"implicitfast\" with " + servo + "; or " + smaller_dt;
  }
  return smaller_dt;
}

// the sites (model.sites, or an imported file's), in site_position's order
std::vector<std::string> site_names(const ExperimentConfig& c) {
  return c.model_state<ArticulatedSetup>().names.sites;
}

// site s's world position p_b + R_b (pos − j_b) at x, θ, for each site in order
void site_positions(const ExperimentConfig& c, const double* theta, const double* x, double* out) {
  const ArticulatedLarge& a = articulated(c);
  for (int s = 0; s < a.n_sites; ++s)
    a.site_position<double>(View<const double>{x, 1}, View<const double>{theta, 1}, s, out + 3 * s);
}

// trajectory.csv's tendon columns: tendon.<name>.length_<unit>, the unit its springlength
// slot's (rad, m, or L for a fixed tendon over hinges and slides, whose coefficients carry the
// units); an equality's coupling tendon reports its residual plus its springlength
std::vector<std::string> tendon_columns(const ExperimentConfig& c) {
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  std::vector<std::string> cols;
  for (int t = 0; t < s.large.n_tendons; ++t)
    cols.push_back(
        "tendon." + s.names.tendons[size_t(t)] + ".length_" +
        c.info.param_units[size_t(s.large.p_tendon(t, Articulated::kTendonSpringLength))]);
  return cols;
}

// each tendon's length at x, θ: Σ_j c_tj q_j for a fixed one, the straight segments between its
// sites for a spatial one
void tendon_lengths(const ExperimentConfig& c, const double* theta, const double* x, double* out) {
  const ArticulatedLarge& a = articulated(c);
  ArticulatedLarge::Kin<double> K;
  if (a.n_spatial > 0) a.forward_kinematics(x, theta, K);
  for (int t = 0; t < a.n_tendons; ++t) {
    double rate = 0;
    out[t] = a.tendon_spatial(t)
                 ? spatial_tendon_length<ArticulatedLarge, double>(a, K, t, x + a.nq(), rate)
                 : a.tendon_length<double>(t, x);
  }
}

// loss.reference / observations columns tendon.<name>: a fixed tendon's length Σ_j c_tj q_j (an
// equality's coupling tendon: its residual plus its springlength); a spatial one's is refused
std::vector<ModelDef::LinearColumn> tendon_length_columns(const ExperimentConfig& c) {
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& a = s.large;
  std::vector<ModelDef::LinearColumn> out;
  for (int t = 0; t < a.n_tendons; ++t) {
    ModelDef::LinearColumn col;
    col.name = "tendon." + s.names.tendons[size_t(t)];
    col.unit = c.info.param_units[size_t(a.p_tendon(t, Articulated::kTendonSpringLength))];
    if (a.tendon_spatial(t)) {
      col.refused =
          "a spatial tendon's length (its path through sites) is not a loss column; "
          "its sites' positions are (site.<name>.x|y|z)";
    } else {
      for (int j = 0; j < a.n_dof; ++j)
        if (a.tendon_c(t, j) != 0) col.terms.push_back({a.qadr(j), a.tendon_c(t, j)});
    }
    out.push_back(col);
  }
  return out;
}

}  // namespace

const ModelDef& articulated_model() {
  static const ModelDef def = [] {
    ModelDef d;
    d.name = ArticulatedSetup::kModel;
    d.parse_model = parse_articulated_model;
    d.parse_initial_state = parse_articulated_initial_state;
    d.model_json = model_json;
    d.set_dt = set_dt;
    d.make_runner = new_runner;
    d.accepts_controller = true;
    d.holds_controller_actions = true;
    d.report_scene = articulated_scene;
    d.chatter_remedy = chatter_remedy;
    // no com_axis_error: c = Σ m_b c_b / Σ m_b is measured along any world axis x, y, z
    // (center_of_mass and its adjoint take the axis; tests/models/articulated/com_axis_test.cpp)
    d.check_physical = articulated_check_physical;
    d.site_names = site_names;
    d.site_positions = site_positions;
    d.output_columns = tendon_columns;
    d.linear_columns = tendon_length_columns;
    d.output_values = tendon_lengths;
    d.penetration_label = true;
    return d;
  }();
  return def;
}

}  // namespace steer
