// Random mass-spring rollouts shared by the tests that compare two ways of running the same
// rollout (CUDA vs CPU in cuda_parity_test, 32 emulated lanes vs one in lane_emulation_test):
// a wide grid robot with more particles than a warp has lanes, and per-rollout draws of
// stiffness, damping, masses, actuator weights, a drop height and raw actuation.
#pragma once

#include <array>
#include <cmath>
#include <deque>
#include <random>
#include <vector>

#include "models/mass_spring/mass_spring_robot.h"
#include "steer/models/mass_spring.h"

namespace steer::testing {

// m with the CSR topology of r bound; the topology arrays are kept for the whole test program
// (they must outlive the models that point at them)
inline MassSpring bind_topology(MassSpring m, const Robot& r) {
  static std::deque<std::vector<int>> kept;
  kept.push_back(pack_topology(r));
  m.topo = kept.back().data();
  return m;
}

// 10 × 2 cells of 5 cm: 33 particles, more than a warp's 32 lanes
inline Robot wide_grid_robot() {
  std::vector<std::array<int, 2>> cells;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 2; ++j) cells.push_back({i, j});
  return grid_robot(cells, 0.05, {0.1, 0.12}, 1e3, 0.15);
}

// the ground and globals of these tests: g [m/s²], ζ [1/s], y_g [m], k_g [N/m], d_g [N·s/m],
// w_g [m], μ, v_ε [m/s], ω [rad/s]. Friction smoothed over 0.2 m/s keeps the explicit
// friction update stable (h μ F_n / (m v_ε) < 2 for normal forces up to ~300 N); with μ 0.8,
// v_ε 0.05 m/s the bottom particles stick-slip chaotically and rollouts of different rounding
// part by 1e-2 after 200 steps.
inline std::vector<double> mass_spring_test_globals() {
  return {9.81, 2.0, 0.1, 3e3, 20.0, 1e-2, 0.3, 0.2, 10.0};
}

// one rollout's θ [np], x0 [nx] and raw actuation u [T·nu], drawn from rng: stiffness × U(0.6,
// 1.6), damping U(0.2, 0.8) N·s/m, masses U(0.8, 1.2) kg, weights U(−0.5, 0.5), biases
// U(−0.2, 0.2); at rest, dropped U(0, 2) cm, velocities U(−0.1, 0.1) m/s; u a sinusoid of
// random phase plus U(−0.2, 0.2) noise per actuator
template <class S>
void draw_mass_spring_rollout(const MassSpring& m, const Robot& r, int T, std::mt19937_64& rng,
                              S* x, S* u, S* p) {
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const std::vector<double> p0 = nominal_parameters(m, r, 1.0, mass_spring_test_globals(), 0.5);
  const std::vector<double> rest = rest_state(m, r);
  for (int q = 0; q < m.np(); ++q) p[q] = S(p0[q]);
  for (int s = 0; s < m.n_springs; ++s) {
    p[m.p_stiffness(s)] = S(p0[m.p_stiffness(s)] * uni(0.6, 1.6));  // [N/m]
    p[m.p_damping(s)] = S(uni(0.2, 0.8));                           // [N·s/m]
  }
  for (int i = 0; i < m.n_particles; ++i) p[m.p_mass(i)] = S(uni(0.8, 1.2));  // [kg]
  for (int a = 0; a < m.n_actuators; ++a) {
    for (int j = 0; j < m.n_phases; ++j) p[m.p_weight(a, j)] = S(uni(-0.5, 0.5));
    p[m.p_bias(a)] = S(uni(-0.2, 0.2));
  }
  const double drop = uni(0.0, 0.02);  // [m] above the rest height
  for (int i = 0; i < m.n_particles; ++i)
    for (int c = 0; c < m.dim; ++c) {
      x[m.x_vel(i) + c] = S(uni(-0.1, 0.1));  // [m/s]
      x[m.x_pos(i) + c] = S(rest[m.x_pos(i) + c] + (c == 1 ? drop : 0.0));
    }
  std::vector<double> phase(m.nu());
  for (double& ph : phase) ph = uni(0.0, 6.283185307179586);
  for (int t = 0; t < T; ++t)
    for (int a = 0; a < m.nu(); ++a)
      u[t * m.nu() + a] = S(0.8 * std::sin(10.0 * m.dt * t + phase[a]) + uni(-0.2, 0.2));
}

// θ of r with globals gl, unit-ish masses 1 + 0.1 i and actuator weights and biases set so
// that the actuation is active
inline std::vector<double> actuated_parameters(const MassSpring& m, const Robot& r,
                                               const std::vector<double>& gl) {
  std::vector<double> p = nominal_parameters(m, r, 1.0, gl, 0.5);
  for (int a = 0; a < m.n_actuators; ++a) {
    for (int j = 0; j < m.n_phases; ++j) p[m.p_weight(a, j)] = 0.3 * std::sin(1.7 * a + 0.9 * j);
    p[m.p_bias(a)] = 0.1 * a;
  }
  for (int i = 0; i < m.n_particles; ++i) p[m.p_mass(i)] = 1.0 + 0.1 * i;
  return p;
}

// a deformed, moving state of r: positions jittered by ~1 cm, velocities ~0.3 m/s, and every
// other particle `dip` [m] below a ground at y_g = 0.1 m (negative: above it)
inline std::vector<double> moving_state(const MassSpring& m, const Robot& r, double dip) {
  std::vector<double> x = rest_state(m, r);
  for (int i = 0; i < m.n_particles; ++i) {
    for (int c = 0; c < m.dim; ++c) {
      x[m.x_pos(i) + c] += 0.01 * std::sin(1.3 * i + 2.1 * c);
      x[m.x_vel(i) + c] = 0.3 * std::cos(0.7 * i + 1.1 * c);
    }
    if (i % 2 == 0) x[m.x_pos(i) + 1] = 0.1 - dip;
  }
  return x;
}

}  // namespace steer::testing
