// model.* for type mass_spring: the robot (explicit particles and springs, or grid cells),
// masses, damping, actuation, morphology mode and ground -> MassSpring, topology, nominal θ.
#include <cmath>
#include <cstdio>
#include <string>

#include "models/mass_spring/config_mass_spring.h"
#include "models/mass_spring/mass_spring_setup.h"

namespace steer {

namespace {

const char* kAxes[3] = {"x", "y", "z"};

// v as %g writes it, without the exponent's sign and leading zeros (1e9, not 1e+09)
std::string bound_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  const std::string s = b;
  const size_t e = s.find("e+");
  if (e == std::string::npos) return s;
  size_t d = e + 2;
  while (d + 1 < s.size() && s[d] == '0') ++d;
  return s.substr(0, e + 1) + s.substr(d);
}

// robot.particles / robot.springs, or robot.grid
Robot parse_robot(const JsonObject& r, int dim) {
  Robot robot;
  robot.dim = dim;
  if (r.has("grid")) {
    if (r.has("particles") || r.has("springs"))
      config_fail(r.key_path("grid"), "give either grid or particles + springs, not both");
    if (dim != 2) config_fail(r.key_path("grid"), "grid robots are 2-D; set model.dim to 2");
    JsonObject g = r.object("grid");
    const auto& cells = g.raw("cells");
    const std::string cp = g.key_path("cells");
    if (!cells.is_array() || cells.empty())
      config_fail(cp, "expected a non-empty array of [column, row] pairs");
    std::vector<std::array<int, 2>> cv;
    for (size_t i = 0; i < cells.size(); ++i) {
      const auto& e = cells[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer())
        config_fail(cp + "[" + std::to_string(i) + "]", "expected [column, row] as two integers");
      const int col = e[0].get<int>(), row = e[1].get<int>();
      if (col < 0 || col > 1000 || row < 0 || row > 1000)
        config_fail(cp + "[" + std::to_string(i) + "]", "column and row must be in [0, 1000]");
      for (const auto& prev : cv)
        if (prev[0] == col && prev[1] == row)
          config_fail(cp + "[" + std::to_string(i) + "]", "cell listed twice");
      cv.push_back({col, row});
    }
    const double size = g.number("cell_size", 0.1, Range{0, 1e3, true, false});
    std::vector<double> origin = g.numbers("origin", {0.1, 0.1}, Range::closed(-1e6, 1e6), 2);
    const double k = g.number("stiffness", 3e4, spring_stiffness_range());
    const double amp = g.number("actuation", 0.1, Range::closed(-1, 1));
    g.finish();
    robot = grid_robot(cv, size, {origin[0], origin[1]}, k, amp);
    return robot;
  }
  if (!r.has("particles") || !r.has("springs"))
    config_fail(r.path(), "expected grid, or particles and springs");
  const auto& ps = r.raw("particles");
  const std::string pp = r.key_path("particles");
  if (!ps.is_array() || ps.size() < 2) config_fail(pp, "expected an array of at least 2 positions");
  for (size_t i = 0; i < ps.size(); ++i) {
    const auto& e = ps[i];
    if (!e.is_array() || int(e.size()) != dim)
      config_fail(pp + "[" + std::to_string(i) + "]",
                  "expected " + std::to_string(dim) + " numbers (model.dim)");
    std::array<double, 3> q{0, 0, 0};
    for (int c = 0; c < dim; ++c) {
      if (!e[c].is_number()) config_fail(pp + "[" + std::to_string(i) + "]", "expected numbers");
      q[c] = e[c].get<double>();
    }
    robot.particles.push_back(q);
  }
  const auto& ss = r.raw("springs");
  const std::string sp = r.key_path("springs");
  if (!ss.is_array() || ss.empty())
    config_fail(sp, "expected an array of [a, b, rest_length, stiffness, actuation]");
  const int N = int(robot.particles.size());
  for (size_t s = 0; s < ss.size(); ++s) {
    const auto& e = ss[s];
    const std::string path = sp + "[" + std::to_string(s) + "]";
    if (!e.is_array() || e.size() != 5 || !e[0].is_number_integer() || !e[1].is_number_integer())
      config_fail(
          path, "expected [a, b, rest_length, stiffness, actuation] with integer particle indices");
    for (int c = 2; c < 5; ++c)
      if (!e[c].is_number())
        config_fail(path, "rest_length, stiffness and actuation must be numbers");
    RobotSpring q{e[0].get<int>(), e[1].get<int>(), e[2].get<double>(), e[3].get<double>(),
                  e[4].get<double>()};
    if (q.a < 0 || q.a >= N || q.b < 0 || q.b >= N || q.a == q.b)
      config_fail(path, "particle indices must be two different values in [0, " +
                            std::to_string(N - 1) + "]");
    if (!(q.rest_length > 0)) config_fail(path, "rest_length must be > 0");
    if (!spring_stiffness_range().contains(q.stiffness))
      config_fail(path, "stiffness must be in (0, " + bound_text(kMaxSpringStiffness) + "]");
    if (q.actuation < -1 || q.actuation > 1) config_fail(path, "actuation must be in [-1, 1]");
    robot.springs.push_back(q);
  }
  return robot;
}

}  // namespace

ModelInfo mass_spring_info(const MassSpring& m) {
  ModelInfo info;
  info.type = "mass_spring";
  const int N = m.n_particles, S = m.n_springs, A = m.n_actuators, D = m.dim;
  info.state_names.resize(m.nx());
  info.state_units.resize(m.nx());
  info.state_ranges.assign(m.nx(), Range::closed(-1e6, 1e6));
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < D; ++c) {
      const std::string pi = "particle[" + std::to_string(i) + "].";
      info.state_names[m.x_pos(i) + c] = pi + "position." + kAxes[c];
      info.state_units[m.x_pos(i) + c] = "m";
      info.state_names[m.x_vel(i) + c] = pi + "velocity." + kAxes[c];
      info.state_units[m.x_vel(i) + c] = "m/s";
      info.state_groups["particle.position"].push_back(m.x_pos(i) + c);
      info.state_groups["particle.velocity"].push_back(m.x_vel(i) + c);
    }
  for (int a = 0; a < m.nu(); ++a) {
    info.control_names.push_back("actuator[" + std::to_string(a) + "]");
    info.control_units.push_back("1");
  }
  info.resize_params(m.np());
  auto slot = [&](int q, const std::string& name, const std::string& unit, Range r,
                  const std::string& group) { info.set_param(q, name, unit, r, group); };
  for (int s = 0; s < S; ++s) {
    const std::string ps = "spring[" + std::to_string(s) + "].";
    slot(m.p_stiffness(s), ps + "stiffness", "N/m", spring_stiffness_range(), "spring.stiffness");
    slot(m.p_damping(s), ps + "damping", "N*s/m", Range::closed(0, 1e6), "spring.damping");
    slot(m.p_rest_length(s), ps + "rest_length", "m", Range{0, 1e3, true, false},
         "spring.rest_length");
    slot(m.p_amplitude(s), ps + "actuation", "1", Range::closed(-1, 1), "spring.actuation");
  }
  for (int i = 0; i < N; ++i) {
    const std::string pi = "particle[" + std::to_string(i) + "].";
    slot(m.p_mass(i), pi + "mass", "kg", Range{0, 1e6, true, false}, "particle.mass");
    for (int c = 0; c < D; ++c)
      slot(m.p_rest_position(i) + c, pi + "rest_position." + kAxes[c], "m",
           Range::closed(-1e6, 1e6), "particle.rest_position");
  }
  for (int a = 0; a < A; ++a) {
    const std::string pa = "actuator[" + std::to_string(a) + "].";
    for (int j = 0; j < m.n_phases; ++j)
      slot(m.p_weight(a, j), pa + "weight[" + std::to_string(j) + "]", "1",
           Range::closed(-1e3, 1e3), "actuator.weight");
    slot(m.p_bias(a), pa + "bias", "1", Range::closed(-1e3, 1e3), "actuator.bias");
  }
  slot(m.p_global(MassSpring::kGravity), "gravity", "m/s^2", Range::closed(-1e4, 1e4), "");
  slot(m.p_global(MassSpring::kVelocityDamping), "velocity_damping", "1/s", Range::closed(0, 1e4),
       "");
  slot(m.p_global(MassSpring::kGroundHeight), "ground.height", "m", Range::closed(-1e6, 1e6), "");
  slot(m.p_global(MassSpring::kGroundStiffness), "ground.stiffness", "N/m",
       Range{0, 1e12, true, false}, "");
  slot(m.p_global(MassSpring::kGroundDamping), "ground.damping", "N*s/m", Range::closed(0, 1e9),
       "");
  slot(m.p_global(MassSpring::kGroundSmoothing), "ground.smoothing", "m",
       Range{0, 1e3, true, false}, "");
  slot(m.p_global(MassSpring::kFriction), "ground.friction", "1", Range::closed(0, 10), "");
  slot(m.p_global(MassSpring::kFrictionSmoothing), "ground.friction_smoothing", "m/s",
       Range{0, 1e3, true, false}, "");
  slot(m.p_global(MassSpring::kActuationFrequency), "actuation.frequency", "rad/s",
       Range::closed(0, 1e4), "");
  slot(m.p_global(MassSpring::kRestitution), "ground.restitution", "1", Range::closed(0, 1), "");
  return info;
}

void parse_mass_spring_model(const JsonObject& m, ExperimentConfig& c) {
  const int dim = int(m.integer("dim", 2, 2, 3));
  if (!m.has("robot"))
    config_fail(m.key_path("robot"), "missing; expected grid, or particles and springs");
  JsonObject r = m.object("robot");
  MassSpringSetup& s = c.model.emplace<MassSpringSetup>();
  s.robot = parse_robot(r, dim);
  r.finish();
  JsonObject act = m.object("actuation");
  const std::string type = act.choice("type", "sinusoid", {"sinusoid", "raw"});
  const int phases = int(act.integer("phases", 10, 1, 64));
  const double omega = act.number("frequency", 10.0, Range::closed(0, 1e4));
  act.finish();
  JsonObject g = m.object("ground");
  // penalty: compliant softplus force; impact: time-of-impact projection with restitution;
  // stick: DiffTaichi's time of impact, the particle stopped at the ground
  const std::string gt = g.choice("type", "penalty", {"penalty", "impact", "stick", "none"});
  if (gt == "stick")
    for (const char* key :
         {"stiffness", "damping", "smoothing", "friction", "friction_smoothing", "restitution"})
      if (g.has(key))
        config_fail(g.key_path(key),
                    "has no effect on the stick ground (a particle reaching the "
                    "ground stops there); remove it or use type \"impact\"");
  s.model = make_mass_spring(
      s.robot, phases, type == "raw" ? MassSpring::kRaw : MassSpring::kSinusoid, gt != "none", 0.0);
  s.model.impact = gt == "impact" || gt == "stick";
  s.model.impact_stick = gt == "stick";
  s.model.rest_from_positions = m.choice("morphology", "rest_lengths",
                                         {"rest_lengths", "rest_positions"}) == "rest_positions";
  s.topology = pack_topology(s.robot);
  // the integrator: symplectic Euler (explicit), or backward Euler solved by Newton's method
  // (include/steer/models/mass_spring/implicit.h), which needs the robot to fit its band storage
  const std::string integ =
      m.choice("integrator", "symplectic_euler", {"symplectic_euler", "backward_euler"});
  s.model.integrator =
      integ == "backward_euler" ? MassSpring::kBackwardEuler : MassSpring::kSymplecticEuler;
  if (m.has("newton_iterations") && s.model.integrator != MassSpring::kBackwardEuler)
    config_fail(m.key_path("newton_iterations"),
                "applies to model.integrator \"backward_euler\" only");
  s.model.newton_iterations = int(m.integer("newton_iterations", 40, 1, 500));
  s.model.length_offset = m.number("spring_length_offset", 0.0, Range::closed(0, 1));
  if (s.model.length_offset != 0 && s.model.integrator == MassSpring::kBackwardEuler)
    config_fail(m.key_path("spring_length_offset"),
                "applies to model.integrator \"symplectic_euler\" only (backward Euler's step "
                "minimizes the springs' energy ½ k (ℓ − L)², which has no offset)");
  if (s.model.integrator == MassSpring::kBackwardEuler) {
    if (s.model.impact)
      config_fail(m.key_path("integrator"),
                  "\"backward_euler\" needs model.ground.type \"penalty\" or \"none\" "
                  "(the impact ground steps by time of impact)");
    MassSpring probe = s.model;
    probe.topo = s.topology.data();
    const int N = probe.n_particles, D = probe.dim, bw = probe.implicit_band();
    switch (probe.implicit_fits()) {
      case 1:
        config_fail(m.key_path("integrator"), "\"backward_euler\" takes at most " +
                                                  std::to_string(MassSpring::kImplicitDofs) +
                                                  " particle coordinates "
                                                  "(particles x dim); this robot has " +
                                                  std::to_string(N * D));
      case 2:
        config_fail(m.key_path("integrator"), "\"backward_euler\" takes at most " +
                                                  std::to_string(MassSpring::kImplicitSprings) +
                                                  " springs; this robot has " +
                                                  std::to_string(probe.n_springs));
      case 3:
        config_fail(
            m.key_path("integrator"),
            "\"backward_euler\" stores the Hessian's band in at most " +
                std::to_string(MassSpring::kImplicitBand) +
                " entries, (particles x dim) x (bandwidth + 1) = " + std::to_string(N * D) + " x " +
                std::to_string(bw + 1) +
                " here (bandwidth = dim x (largest |a - b| over springs + 1) - 1); "
                "number the particles so that springs join nearby indices, or use fewer particles");
      default:
        break;
    }
  }
  c.info = mass_spring_info(s.model);
  const auto& R = c.info.param_ranges;
  const MassSpring& ms = s.model;
  std::vector<double> gl(MassSpring::kNumGlobals, 0.0);
  auto global = [&](const JsonObject& o, const char* key, int slot, double def) {
    gl[slot] = o.number(key, def, R[ms.p_global(slot)]);
  };
  // defaults: the DiffTaichi mass-spring example's settings (gravity 4.8, damping 15 /s, ground at
  // 0.1 m)
  global(m, "gravity", MassSpring::kGravity, 4.8);
  global(m, "velocity_damping", MassSpring::kVelocityDamping, 15.0);
  gl[MassSpring::kActuationFrequency] = omega;
  global(g, "height", MassSpring::kGroundHeight, 0.1);
  global(g, "stiffness", MassSpring::kGroundStiffness, 1e4);
  global(g, "damping", MassSpring::kGroundDamping, 50.0);
  global(g, "smoothing", MassSpring::kGroundSmoothing, 2e-3);
  global(g, "friction", MassSpring::kFriction, 1.0);
  global(g, "friction_smoothing", MassSpring::kFrictionSmoothing, 0.01);
  global(g, "restitution", MassSpring::kRestitution, 0.0);
  g.finish();
  const double mass = m.number("particle_mass", 1.0, R[ms.p_mass(0)]);
  const double damping = m.number("spring_damping", 0.0, R[ms.p_damping(0)]);
  c.theta = nominal_parameters(ms, s.robot, mass, gl, damping);
}

}  // namespace steer
