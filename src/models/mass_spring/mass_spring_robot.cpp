#include "models/mass_spring/mass_spring_robot.h"

#include <cmath>
#include <map>
#include <stdexcept>

namespace steer {

int Robot::actuators() const {
  int n = 0;
  for (const auto& s : springs) n += s.actuation != 0.0 ? 1 : 0;
  return n;
}

Robot grid_robot(const std::vector<std::array<int, 2>>& cells, double cell,
                 std::array<double, 2> origin, double stiffness, double amplitude) {
  Robot r;
  r.dim = 2;
  std::map<std::pair<int, int>, int> corner;  // lattice point -> particle
  auto particle = [&](int i, int j) {
    auto key = std::make_pair(i, j);
    auto it = corner.find(key);
    if (it != corner.end()) return it->second;
    const int id = int(r.particles.size());
    r.particles.push_back({origin[0] + i * cell, origin[1] + j * cell, 0.0});
    corner[key] = id;
    return id;
  };
  std::map<std::pair<int, int>, int> spring_of;  // particle pair -> spring
  auto spring = [&](int a, int b, bool actuated) {
    auto key = std::make_pair(std::min(a, b), std::max(a, b));
    if (spring_of.count(key)) return;
    const auto& pa = r.particles[a];
    const auto& pb = r.particles[b];
    const double L = std::hypot(pb[0] - pa[0], pb[1] - pa[1]);
    spring_of[key] = int(r.springs.size());
    r.springs.push_back({a, b, L, stiffness, actuated ? amplitude : 0.0});
  };
  for (const auto& c : cells) {
    const int p00 = particle(c[0], c[1]), p10 = particle(c[0] + 1, c[1]);
    const int p01 = particle(c[0], c[1] + 1), p11 = particle(c[0] + 1, c[1] + 1);
    spring(p00, p10, false);  // bottom
    spring(p01, p11, false);  // top
    spring(p00, p01, true);   // left (vertical, actuated)
    spring(p10, p11, true);   // right (vertical, actuated)
    spring(p00, p11, false);  // diagonals
    spring(p10, p01, false);
  }
  return r;
}

std::vector<int> pack_topology(const Robot& r) {
  const int S = int(r.springs.size()), N = int(r.particles.size());
  std::vector<int> t(size_t(5 * S + N + 1), 0);
  int act = 0;
  std::vector<std::vector<int>> adj(N);
  for (int s = 0; s < S; ++s) {
    const auto& sp = r.springs[s];
    if (sp.a < 0 || sp.a >= N || sp.b < 0 || sp.b >= N || sp.a == sp.b)
      throw std::invalid_argument("spring " + std::to_string(s) +
                                  ": ends must be two different particles in [0, " +
                                  std::to_string(N - 1) + "]");
    t[s] = sp.a;
    t[S + s] = sp.b;
    t[2 * S + s] = sp.actuation != 0.0 ? act++ : -1;
    adj[sp.a].push_back(s);
    adj[sp.b].push_back(s);
  }
  // CSR: particle i's springs in increasing spring order (fixes the summation order)
  int e = 0;
  for (int i = 0; i < N; ++i) {
    t[3 * S + i] = e;
    for (int s : adj[i]) t[3 * S + N + 1 + e++] = s;
  }
  t[3 * S + N] = e;
  return t;
}

MassSpring make_mass_spring(const Robot& r, int n_phases, int actuation, bool ground, double dt) {
  MassSpring m;
  m.dim = r.dim;
  m.n_particles = int(r.particles.size());
  m.n_springs = int(r.springs.size());
  m.n_actuators = r.actuators();
  m.n_phases = n_phases;
  m.actuation = actuation;
  m.ground = ground;
  m.dt = dt;
  return m;
}

std::vector<double> nominal_parameters(const MassSpring& m, const Robot& r, double mass,
                                       const std::vector<double>& globals, double spring_damping) {
  std::vector<double> p(size_t(m.np()), 0.0);
  for (int s = 0; s < m.n_springs; ++s) {
    p[m.p_stiffness(s)] = r.springs[s].stiffness;
    p[m.p_damping(s)] = spring_damping;
    p[m.p_rest_length(s)] = r.springs[s].rest_length;
    p[m.p_amplitude(s)] = r.springs[s].actuation;
  }
  for (int i = 0; i < m.n_particles; ++i) {
    p[m.p_mass(i)] = mass;
    for (int c = 0; c < m.dim; ++c) p[m.p_rest_position(i) + c] = r.particles[i][c];
  }
  for (int g = 0; g < MassSpring::kNumGlobals && g < int(globals.size()); ++g)
    p[m.p_global(g)] = globals[g];
  return p;
}

std::vector<double> rest_state(const MassSpring& m, const Robot& r) {
  std::vector<double> x(size_t(m.nx()), 0.0);
  for (int i = 0; i < m.n_particles; ++i)
    for (int c = 0; c < m.dim; ++c) x[m.x_pos(i) + c] = r.particles[i][c];
  return x;
}

}  // namespace steer
