// Small projectile and mass-spring batches for the emulated-device tests
// (emulated_scheduling_test.cpp, emulated_faults_test.cpp): the rollouts of
// cuda_parity_test.cpp in miniature, and bitwise comparison of two results.
#pragma once

#include <gtest/gtest.h>

#include <random>

#include "mass_spring_draws.h"
#include "steer/backend.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"

namespace steer::emulated {

// a 2D projectile on the penalty ground, landing and terminal terms, drag and effort
inline Projectile projectile() {
  Projectile m;
  m.dim = 2;
  m.dt = 0.01;
  m.ground = Projectile::kGroundPenalty;
  return m;
}

inline Loss projectile_loss() {
  Loss l;
  l.n_terminal = 1;
  l.terminal_index[0] = 0;  // ½ (x_T − 6)²
  l.terminal_target[0] = 6.0;
  l.terminal_weight[0] = 1.0;
  l.effort_weight = 1e-3;
  l.landing = true;
  l.vertical = 1;
  l.n_landing = 1;
  l.landing_index[0] = 0;
  l.landing_target[0] = 5.0;
  l.landing_weight = 2.0;
  return l;
}

// B rollouts launched from 0.2–3 m at up to 3 m/s sideways and 5 m/s up, random gravity,
// drag, mass, moderate ground stiffness (100–400 N/m) and controls (±2 N)
inline Batch<double> projectile_batch(const Projectile& m, int B, int T, unsigned seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  Batch<double> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  for (int r = 0; r < B; ++r) {
    double* x = b.x0_of(r);
    x[0] = uni(-1, 1);
    x[1] = uni(0.2, 3.0);
    x[2] = uni(-3, 3);
    x[3] = uni(0, 5);
    double* p = b.theta_of(r);
    p[Projectile::kGravity] = uni(9.0, 10.5);
    p[Projectile::kDrag] = uni(0.0, 0.2);
    p[Projectile::kMass] = uni(0.5, 2.0);
    p[Projectile::kGroundStiffness] = uni(100, 400);
    p[Projectile::kGroundDamping] = uni(1, 5);
    p[Projectile::kGroundSmoothing] = uni(1e-2, 3e-2);
    for (int k = 0; k < T * m.nu(); ++k) b.u_of(r)[k] = uni(-2, 2);
  }
  return b;
}

// the wide grid robot (33 particles, more than a warp's lanes) with raw actuation, walking
struct MassSpringCase {
  Robot robot = testing::wide_grid_robot();
  MassSpring model =
      testing::bind_topology(make_mass_spring(robot, 10, MassSpring::kRaw, true, 0.004), robot);
  Loss loss = [] {
    Loss l;
    l.com = true;
    l.com_axis = 0;
    l.com_weight = -1;
    l.effort_weight = 1e-3;
    return l;
  }();
  Batch<double> batch(int B, int T, unsigned seed) const {
    std::mt19937_64 rng(seed);
    Batch<double> b;
    b.resize(B, model.nx(), model.nu(), model.np(), T);
    for (int k = 0; k < B; ++k)
      testing::draw_mass_spring_rollout<double>(model, robot, T, rng, b.x0_of(k), b.u_of(k),
                                                b.theta_of(k));
    return b;
  }
};

// every array and diagnostic of two results, bit for bit
inline void expect_same_bits(const BatchResult<double>& a, const BatchResult<double>& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.grad_x0, b.grad_x0);
  EXPECT_EQ(a.grad_u, b.grad_u);
  EXPECT_EQ(a.grad_theta, b.grad_theta);
  EXPECT_EQ(a.traj, b.traj);
  ASSERT_EQ(a.diag.size(), b.diag.size());
  for (std::size_t r = 0; r < a.diag.size(); ++r) {
    EXPECT_EQ(a.diag[r].event_step, b.diag[r].event_step) << r;
    EXPECT_EQ(a.diag[r].contact_steps, b.diag[r].contact_steps) << r;
    EXPECT_EQ(a.diag[r].contact_hash, b.diag[r].contact_hash) << r;
    EXPECT_EQ(a.diag[r].energy0, b.diag[r].energy0) << r;
    EXPECT_EQ(a.diag[r].adj_x0_norm, b.diag[r].adj_x0_norm) << r;
  }
}

}  // namespace steer::emulated
