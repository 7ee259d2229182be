// include/steer/cpu_packed.h: the CPU backend's SIMD path runs cpu_pack_width() float64 rollouts per
// pass and must give every rollout the bits the scalar path gives it alone: the loss, every
// gradient, the recorded trajectory and every diagnostic, compared bit for bit (memcmp), for
// batches with full groups and a tail group (spare lanes), and rollouts whose lanes take
// different arms of the model's branches (ground contact in some lanes only, a zero-length
// spring in one lane, rest-position morphology, 3D, raw actuation with a running cost, and
// conservative motion with its energy diagnostics).
#include "steer/cpu_packed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mass_spring_draws.h"
#include "mass_spring_robot.h"
#include "steer/cpu_backend.h"
#include "steer/models/mass_spring.h"

namespace steer::testing {
namespace {

Robot tetrahedron() {
  Robot r;
  r.dim = 3;
  r.particles = {{0.0, 0.1, 0.0}, {0.1, 0.1, 0.0}, {0.0, 0.1, 0.1}, {0.03, 0.2, 0.03}};
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) r.springs.push_back({a, b, 0.1, 800.0, b == 3 ? 0.1 : 0.0});
  return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i]) && bad++ < 3)
      ADD_FAILURE() << what << "[" << i << "]: packed " << a[i] << " vs scalar " << b[i];
  EXPECT_EQ(bad, 0) << what;
}

struct Case {
  std::string name;
  MassSpring m;
  Robot r;
  bool conservative = false;  // no ground, no damping, no actuation
  bool zero_length = false;   // rollout 3 starts with particles 0 and 1 at one point
};

// B rollouts of random θ, x0 (some lanes in contact, others above the ground) and u
Batch<double> draw_batch(const Case& c, int B, int T, unsigned seed) {
  const MassSpring& m = c.m;
  Batch<double> batch;
  batch.resize(B, m.nx(), m.nu(), m.np(), T);
  std::mt19937_64 rng(seed);
  for (int b = 0; b < B; ++b) {
    draw_mass_spring_rollout<double>(m, c.r, T, rng, batch.x0_of(b), batch.u_of(b), batch.theta_of(b));
    double* x = batch.x0_of(b);
    double* p = batch.theta_of(b);
    p[m.p_global(MassSpring::kActuationFrequency)] = 6.0 + 0.5 * b;  // ω differs per lane [rad/s]
    if (b % 3 == 0)
      for (int i = 0; i < m.n_particles; ++i) x[m.x_pos(i) + 1] += 0.05;  // starts 5 cm higher
    if (b % 3 == 1)
      for (int i = 0; i < m.n_particles; i += 2) x[m.x_pos(i) + 1] -= 0.004;  // 4 mm into the ground
    if (c.zero_length && b == 3)
      for (int d = 0; d < m.dim; ++d) x[m.x_pos(1) + d] = x[m.x_pos(0) + d];
    if (c.conservative) {
      for (int s = 0; s < m.n_springs; ++s) p[m.p_damping(s)] = 0, p[m.p_amplitude(s)] = 0;
      p[m.p_global(MassSpring::kVelocityDamping)] = 0;
      for (int q = 0; q < T * m.nu(); ++q) batch.u_of(b)[q] = 0;
    }
  }
  return batch;
}

Loss com_loss() {
  Loss loss;
  loss.com = true;
  loss.com_axis = 0;
  loss.com_weight = -1.0;
  loss.effort_weight = 1e-3;  // a running cost in raw-actuation mode
  return loss;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const Robot wide = wide_grid_robot(), tet = tetrahedron();
  const Robot two = grid_robot({{0, 0}, {1, 0}}, 0.1, {0.1, 0.1}, 1e3, 0.15);
  out.push_back({"wide grid, sinusoid", bind_topology(make_mass_spring(wide, 10, MassSpring::kSinusoid, true, 0.004), wide), wide});
  out.push_back({"two cells, raw actuation", bind_topology(make_mass_spring(two, 10, MassSpring::kRaw, true, 0.004), two), two});
  {
    Case c{"two cells, rest-position morphology, a zero-length spring in one lane",
           bind_topology(make_mass_spring(two, 6, MassSpring::kSinusoid, true, 0.004), two), two};
    c.m.rest_from_positions = true;
    c.zero_length = true;
    out.push_back(c);
  }
  out.push_back({"3d tetrahedron, sinusoid", bind_topology(make_mass_spring(tet, 10, MassSpring::kSinusoid, true, 0.004), tet), tet});
  {
    Case c{"two cells, no ground, conservative", bind_topology(make_mass_spring(two, 10, MassSpring::kSinusoid, false, 0.004), two),
           two};
    c.conservative = true;
    out.push_back(c);
  }
  return out;
}

void expect_same_diag(const RolloutDiag& a, const RolloutDiag& b, const std::string& what) {
  EXPECT_EQ(a.event_step, b.event_step) << what;
  EXPECT_EQ(a.contact_steps, b.contact_steps) << what;
  EXPECT_EQ(a.contact_hash, b.contact_hash) << what;
  EXPECT_EQ(a.nonfinite, b.nonfinite) << what;
  EXPECT_EQ(a.conservative, b.conservative) << what;
  EXPECT_EQ(a.recompute_steps, b.recompute_steps) << what;
  EXPECT_TRUE(same_bits(a.energy0, b.energy0)) << what;
  EXPECT_TRUE(same_bits(a.energy_max_dev, b.energy_max_dev)) << what;
  EXPECT_TRUE(same_bits(a.kinetic_max, b.kinetic_max)) << what;
  EXPECT_TRUE(same_bits(a.adj_seed_norm, b.adj_seed_norm)) << what;
  EXPECT_TRUE(same_bits(a.adj_x0_norm, b.adj_x0_norm)) << what;
  EXPECT_TRUE(same_bits(a.grad_u_first_norm, b.grad_u_first_norm)) << what;
  EXPECT_TRUE(same_bits(a.grad_u_last_norm, b.grad_u_last_norm)) << what;
}

TEST(PackedRollout, EveryRolloutGetsTheBitsOfItsScalarRun) {
  const int T = 60, K = 8;  // 8 segments, the last one short
  const int B = 2 * cpu_pack_width() + 3;  // full groups and a tail group with spare lanes
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const MassSpring& m = c.m;
    RolloutShape sh;
    sh.steps = T;
    sh.checkpoint_every = K;
    sh.traj_stride = 7;
    const Loss loss = com_loss();
    const Batch<double> batch = draw_batch(c, B, T, 1234);
    ASSERT_TRUE((use_packed_path<MassSpring, double>(m, sh, B)));
    for (bool grad : {false, true}) {
      BatchResult<double> packed;
      cpu_run_batch<MassSpring, double>(m, loss, sh, batch, grad, packed, 2);
      int contact_min = 1 << 30, contact_max = 0;  // contact steps over the lanes
      for (int b = 0; b < B; ++b) {
        const std::string what = "rollout " + std::to_string(b) + (grad ? " (with gradients)" : " (forward)");
        // the same rollout alone: B = 1 takes the scalar path
        Batch<double> one;
        one.resize(1, m.nx(), m.nu(), m.np(), T);
        std::copy(batch.x0_of(b), batch.x0_of(b) + m.nx(), one.x0.begin());
        std::copy(batch.u_of(b), batch.u_of(b) + T * m.nu(), one.u.begin());
        std::copy(batch.theta_of(b), batch.theta_of(b) + m.np(), one.theta.begin());
        ASSERT_FALSE((use_packed_path<MassSpring, double>(m, sh, 1)));
        BatchResult<double> alone;
        cpu_run_batch<MassSpring, double>(m, loss, sh, one, grad, alone, 1);
        EXPECT_TRUE(same_bits(packed.loss[b], alone.loss[0])) << what << ": " << packed.loss[b] << " vs " << alone.loss[0];
        EXPECT_TRUE(std::isfinite(alone.loss[0])) << what;
        expect_same_diag(packed.diag[b], alone.diag[0], what);
        const int ts = sh.traj_slots();
        expect_same_bits(std::vector<double>(packed.traj.begin() + size_t(b) * ts * m.nx(),
                                             packed.traj.begin() + size_t(b + 1) * ts * m.nx()),
                         alone.traj, what + ": trajectory");
        contact_min = std::min(contact_min, alone.diag[0].contact_steps);
        contact_max = std::max(contact_max, alone.diag[0].contact_steps);
        if (!grad) continue;
        auto slice = [](const std::vector<double>& v, int b, size_t n) {
          return std::vector<double>(v.begin() + size_t(b) * n, v.begin() + size_t(b + 1) * n);
        };
        expect_same_bits(slice(packed.grad_x0, b, m.nx()), alone.grad_x0, what + ": dL/dx0");
        expect_same_bits(slice(packed.grad_u, b, size_t(T) * m.nu()), alone.grad_u, what + ": dL/du");
        expect_same_bits(slice(packed.grad_theta, b, m.np()), alone.grad_theta, what + ": dL/dθ");
      }
      // the draws must put lanes in and out of contact at different steps (the ground's select
      // arms then differ across a pack), or have no ground at all
      if (m.ground) {
        EXPECT_GT(contact_max, 0);
        EXPECT_LT(contact_min, contact_max) << "every lane touched the ground as often: the lanes never diverge";
      } else {
        EXPECT_EQ(packed.diag[0].conservative, 1);
        EXPECT_GT(packed.diag[0].energy_max_dev, 0.0);
      }
    }
  }
}

// the zero-length lane really is at zero length at step 0, and its gradient stays finite
TEST(PackedRollout, ZeroLengthSpringLaneStaysFinite) {
  std::vector<Case> cs = cases();
  const Case& c = cs[2];
  ASSERT_TRUE(c.zero_length);
  const MassSpring& m = c.m;
  const int T = 20, B = cpu_pack_width();
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 5;
  const Batch<double> batch = draw_batch(c, B, T, 99);
  const double* x = batch.x0_of(3);
  EXPECT_EQ(x[m.x_pos(0)], x[m.x_pos(1)]);
  EXPECT_EQ(x[m.x_pos(0) + 1], x[m.x_pos(1) + 1]);
  BatchResult<double> out;
  cpu_run_batch<MassSpring, double>(m, com_loss(), sh, batch, true, out, 1);
  for (double v : out.grad_theta) ASSERT_TRUE(std::isfinite(v));
  for (double v : out.grad_x0) ASSERT_TRUE(std::isfinite(v));
}

// what the packed path does not take: one rollout, float, the binomial schedule, the
// dual-number adjoint, the impact ground
TEST(PackedRollout, TakenOnlyWhereItApplies) {
  const Robot two = grid_robot({{0, 0}, {1, 0}}, 0.1, {0.1, 0.1}, 1e3, 0.15);
  MassSpring m = bind_topology(make_mass_spring(two, 10, MassSpring::kSinusoid, true, 0.004), two);
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 3;
  EXPECT_TRUE((use_packed_path<MassSpring, double>(m, sh, 2)));
  EXPECT_FALSE((use_packed_path<MassSpring, double>(m, sh, 1)));
  EXPECT_FALSE((use_packed_path<MassSpring, float>(m, sh, 64)));
  RolloutShape bin = sh;
  bin.schedule = CheckpointSchedule::kBinomial;
  EXPECT_FALSE((use_packed_path<MassSpring, double>(m, bin, 64)));
  RolloutShape ref = sh;
  ref.reference_adjoint = true;
  EXPECT_FALSE((use_packed_path<MassSpring, double>(m, ref, 64)));
  MassSpring mi = m;
  mi.impact = true;
  EXPECT_FALSE((use_packed_path<MassSpring, double>(mi, sh, 64)));
}

// a pack's lanes as strided views, and the transposes in and out
TEST(PackedRollout, PackRowsRoundTrip) {
  constexpr int W = 4;
  const int n = 5, nb = 3;
  std::vector<double> rows(size_t(nb) * n);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.5 + double(i);
  std::vector<PackD<W>> packs(n);
  pack_rows<W>(rows.data(), n, nb, packs.data());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < nb; ++j) EXPECT_EQ(packs[i][j], rows[size_t(j) * n + i]);
    EXPECT_EQ(packs[i][3], rows[size_t(nb - 1) * n + i]);  // the spare lane repeats the last row
  }
  const View<PackD<W>> v{packs.data(), 1};
  const View<double> lane1 = lane_view<W>(v, 1);
  for (int i = 0; i < n; ++i) EXPECT_EQ(lane1[i], rows[size_t(1) * n + i]);
  std::vector<double> back(size_t(nb) * n, -1.0);
  unpack_rows<W>(packs.data(), n, nb, back.data());
  EXPECT_EQ(back, rows);
}

}  // namespace
}  // namespace steer::testing
