// The GPU's warp-per-rollout mapping (docs/design.md, "CUDA: lanes per rollout"), run on the
// CPU: the W lanes of one rollout become W host threads that share the rollout's arrays and meet at
// a barrier wherever the device code calls __syncwarp (Lanes::sync). The CUDA backend runs the
// mass-spring model with 32 lanes per rollout (LanesPerRollout<MassSpring>), the CPU backend with
// one; the two take different branches of the model's lane-strided loops (the one-lane adjoint
// folds the spring and leader passes into the particle gather), so this test is the only place
// without a GPU where the device branch runs. It checks, per rollout:
//   - every output (loss, checkpoints, trajectory, ∂L/∂x0, ∂L/∂u, ∂L/∂θ, diagnostics) of the
//     W-lane run equals the one-lane run to 1e-12 relative in float64 (both sum each particle's
//     and spring's terms in the same order; the observed difference is 0 or a few ulps),
//   - every lane reaches the same number of sync points (a lane that skips a __syncwarp its
//     warp-mates reach hangs or races on the GPU; here it fails the test instead),
//   - repeated W-lane runs are bitwise identical (a read of another lane's write without a
//     sync between them would make the result depend on the threads' timing).
// Robots with fewer particles than lanes and with more (33 particles: lanes wrap around),
// sinusoid and raw actuation, uniform and binomial checkpoint schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "mass_spring_draws.h"
#include "warp_lanes.h"
#include "models/mass_spring/mass_spring_robot.h"
#include "steer/loss.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"
#include "steer/rollout.h"

namespace steer::testing {
namespace {

// one rollout's arrays, contiguous (stride 1, the device's rollout-major layout for W > 1)
template <class S>
struct RolloutBuffers {
  std::vector<S> x0, u, p, ckpt, seg, lam, lam_prev, grad_x0, grad_u, grad_p, traj;
  std::vector<int> stack;
  S loss = S(0);
  RolloutDiag diag{};

  template <class Model>
  RolloutBuffers(const Model& m, const RolloutShape& sh, std::vector<S> x, std::vector<S> uu,
                 std::vector<S> pp)
      : x0(std::move(x)), u(std::move(uu)), p(std::move(pp)) {
    const int nx = m.nx();
    ckpt.assign(size_t(sh.checkpoint_slots()) * nx, S(0));
    seg.assign(size_t(sh.segment_slots()) * nx, S(0));
    lam.assign(nx, S(0));
    lam_prev.assign(nx, S(0));
    grad_x0.assign(nx, S(0));
    grad_u.assign(size_t(sh.steps) * m.nu(), S(0));
    grad_p.assign(m.np(), S(0));
    traj.assign(size_t(sh.traj_slots()) * nx, S(0));
    stack.assign(std::max(1, sh.stack_slots()), 0);
  }
  RolloutRefs<S> refs() {
    RolloutRefs<S> r;
    r.x0 = {x0.data(), 1};
    r.u = {u.data(), 1};
    r.p = {p.data(), 1};
    r.ckpt = {ckpt.data(), 1};
    r.seg = {seg.data(), 1};
    r.lam = {lam.data(), 1};
    r.lam_prev = {lam_prev.data(), 1};
    r.grad_x0 = {grad_x0.data(), 1};
    r.grad_u = {grad_u.data(), 1};
    r.grad_p = {grad_p.data(), 1};
    r.traj = {traj.empty() ? nullptr : traj.data(), 1};
    r.stack = {stack.data(), 1};
    r.loss = &loss;
    r.diag = &diag;
    return r;
  }
};

// forward then backward pass of one rollout on `width` lanes (width 1: the calling thread,
// as the CPU backend runs it); returns false if the lanes disagreed on the sync points
template <class Model, class S>
bool run_rollout(const Model& m, const Loss& loss, const RolloutShape& sh, RolloutBuffers<S>& buf,
                 int width, std::vector<long>* syncs = nullptr) {
  const RolloutRefs<S> r = buf.refs();
  if (width == 1) {
    forward_rollout<Model, S>(m, loss, sh, r);
    backward_rollout<Model, S>(m, loss, sh, r);
    return true;
  }
  return run_as_warp(
      width,
      [&](const Lanes& ln) {
        forward_rollout<Model, S>(m, loss, sh, r, ln);
        ln.sync();  // the kernels end here; the backward kernel starts on a fresh warp
        backward_rollout<Model, S>(m, loss, sh, r, ln);
      },
      syncs);
}

// max over i of |a_i − b_i| / max(1, |b_i|)
template <class S>
double max_rel_diff(const std::vector<S>& a, const std::vector<S>& b) {
  EXPECT_EQ(a.size(), b.size());
  double e = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d =
        std::fabs(double(a[i]) - double(b[i])) / std::max(1.0, std::fabs(double(b[i])));
    e = std::max(e, std::isnan(d) ? INFINITY : d);
  }
  return e;
}

template <class S>
bool bitwise_equal(const std::vector<S>& a, const std::vector<S>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](S x, S y) {
           return x == y || (std::isnan(double(x)) && std::isnan(double(y)));
         });
}

template <class Model, class S>
void expect_lanes_match_one_lane(const Model& m, const Loss& loss, const RolloutShape& sh,
                                 const RolloutBuffers<S>& in, int width, double tol) {
  RolloutBuffers<S> one = in, warp = in, again = in;
  run_rollout(m, loss, sh, one, 1);
  std::vector<long> syncs;
  ASSERT_TRUE(run_rollout(m, loss, sh, warp, width, &syncs))
      << "the " << width << " lanes did not reach the same sync points";
  for (int l = 1; l < width; ++l) EXPECT_EQ(syncs[l], syncs[0]) << "lane " << l << "'s sync count";
  EXPECT_GT(syncs[0], sh.steps) << "a sync per step at least";

  ASSERT_TRUE(std::isfinite(double(one.loss)));
  EXPECT_LE(
      std::fabs(double(warp.loss) - double(one.loss)) / std::max(1.0, std::fabs(double(one.loss))),
      tol)
      << "loss";
  EXPECT_LE(max_rel_diff(warp.ckpt, one.ckpt), tol) << "checkpoints and x_T";
  EXPECT_LE(max_rel_diff(warp.traj, one.traj), tol) << "trajectory";
  EXPECT_LE(max_rel_diff(warp.grad_x0, one.grad_x0), tol) << "dL/dx0";
  EXPECT_LE(max_rel_diff(warp.grad_u, one.grad_u), tol) << "dL/du";
  EXPECT_LE(max_rel_diff(warp.grad_p, one.grad_p), tol) << "dL/dtheta";
  EXPECT_EQ(warp.diag.recompute_steps, one.diag.recompute_steps);
  EXPECT_EQ(warp.diag.event_step, one.diag.event_step);
  EXPECT_LE(
      std::fabs(warp.diag.adj_x0_norm - one.diag.adj_x0_norm) / std::max(1.0, one.diag.adj_x0_norm),
      tol);
  const double worst =
      std::max({max_rel_diff(warp.ckpt, one.ckpt), max_rel_diff(warp.grad_x0, one.grad_x0),
                max_rel_diff(warp.grad_u, one.grad_u), max_rel_diff(warp.grad_p, one.grad_p)});
  std::printf(
      "  %d lanes vs 1: largest relative difference %.3g over x_T, checkpoints and gradients\n",
      width, worst);
  // the gradient is not trivially zero (a test that cannot fail otherwise)
  double gmax = 0;
  for (S g : one.grad_p) gmax = std::max(gmax, std::fabs(double(g)));
  EXPECT_GT(gmax, 1e-8) << "dL/dtheta is zero: the comparison would be vacuous";

  // timing-independent: a second W-lane run gives the same bits
  ASSERT_TRUE(run_rollout(m, loss, sh, again, width));
  EXPECT_EQ(again.loss, warp.loss);
  EXPECT_TRUE(bitwise_equal(again.grad_p, warp.grad_p))
      << "dL/dtheta differs between two runs of the same warp";
  EXPECT_TRUE(bitwise_equal(again.grad_u, warp.grad_u))
      << "dL/du differs between two runs of the same warp";
  EXPECT_TRUE(bitwise_equal(again.grad_x0, warp.grad_x0))
      << "dL/dx0 differs between two runs of the same warp";
}

// ---------------------------------------------------------------------------------------
// mass-spring robots (the CUDA backend's 32-lane model)

std::vector<int>& keep_topology(std::vector<int> t) {
  static std::vector<std::vector<int>> kept;
  kept.reserve(16);
  kept.push_back(std::move(t));
  return kept.back();
}

struct MsSetup {
  bool wide = false;  // 10 × 2 cells of 5 cm: 33 particles, more than a warp's 32 lanes
  int actuation = MassSpring::kSinusoid;
};

Robot ms_robot(const MsSetup& c) {
  if (c.wide) return wide_grid_robot();
  return grid_robot({{0, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}}, 0.1, {0.1, 0.1}, 1e3, 0.15);
}

template <class S>
RolloutBuffers<S> ms_rollout(const MassSpring& m, const Robot& r, const RolloutShape& sh,
                             unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<S> x(m.nx()), u(size_t(sh.steps) * m.nu()), p(m.np());
  draw_mass_spring_rollout<S>(m, r, sh.steps, rng, x.data(), u.data(), p.data());
  return RolloutBuffers<S>(m, sh, std::move(x), std::move(u), std::move(p));
}

template <class S>
void check_mass_spring(const MsSetup& c, RolloutShape sh, int width, double tol) {
  const Robot r = ms_robot(c);
  MassSpring m = make_mass_spring(r, 10, c.actuation, true, 0.004);
  m.topo = keep_topology(pack_topology(r)).data();
  Loss loss;
  loss.com = true;
  loss.com_axis = 0;
  loss.com_weight = -1;
  if (c.actuation == MassSpring::kRaw) loss.effort_weight = 1e-3;
  for (unsigned seed : {11u, 12u}) {
    SCOPED_TRACE("rollout seed " + std::to_string(seed));
    expect_lanes_match_one_lane<MassSpring, S>(m, loss, sh, ms_rollout<S>(m, r, sh, seed), width,
                                               tol);
  }
}

RolloutShape uniform_shape(int T, int K, int traj_stride = 0) {
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K;
  sh.traj_stride = traj_stride;
  return sh;
}

TEST(LaneEmulation, MassSpringWarpOf32SinusoidFloat64) {
  check_mass_spring<double>({false, MassSpring::kSinusoid}, uniform_shape(120, 11, 10), 32, 1e-12);
}

TEST(LaneEmulation, MassSpringWarpOf32MoreParticlesThanLanesFloat64) {
  check_mass_spring<double>({true, MassSpring::kSinusoid}, uniform_shape(100, 10), 32, 1e-12);
}

TEST(LaneEmulation, MassSpringWarpOf32RawActuationFloat64) {
  check_mass_spring<double>({true, MassSpring::kRaw}, uniform_shape(100, 10), 32, 1e-12);
}

TEST(LaneEmulation, MassSpringWarpOf32BinomialScheduleFloat64) {
  RolloutShape sh = uniform_shape(90, 1);
  sh.schedule = CheckpointSchedule::kBinomial;
  sh.snapshots = 4;
  check_mass_spring<double>({false, MassSpring::kSinusoid}, sh, 32, 1e-12);
}

// float32: the same bits are expected as in float64 (same operations in the same order per
// particle and spring); the bound allows a few ulps over 100 steps of contact
TEST(LaneEmulation, MassSpringWarpOf32Float32) {
  check_mass_spring<float>({true, MassSpring::kSinusoid}, uniform_shape(100, 10), 32, 1e-4);
}

// an odd width wraps the lane-strided loops differently (7 lanes over 33 particles)
TEST(LaneEmulation, MassSpringSevenLanesFloat64) {
  check_mass_spring<double>({true, MassSpring::kSinusoid}, uniform_shape(60, 8), 7, 1e-12);
}

// the projectile runs one lane per rollout on the GPU, but its step and adjoint keep to the
// leader-only convention, so any width must give the one-lane result
TEST(LaneEmulation, ProjectileAnyWidthFloat64) {
  Projectile m;
  m.dim = 2;
  m.dt = 0.01;
  m.ground = Projectile::kGroundPenalty;
  Loss loss;
  loss.n_terminal = 1;
  loss.terminal_index[0] = 0;
  loss.terminal_target[0] = 6.0;
  loss.terminal_weight[0] = 1.0;
  const RolloutShape sh = uniform_shape(150, 13, 5);
  // θ = (g [m/s²], drag c [1/m], m [kg], ground k [N/m], d [N·s/m], w [m]); the throw lands
  std::vector<double> p = {9.81, 0.05, 1.0, 1e4, 10.0, 1e-3};
  std::vector<double> x = {0.0, 0.5, 3.0, 2.0};
  std::vector<double> u(size_t(sh.steps) * m.nu());
  for (size_t i = 0; i < u.size(); ++i) u[i] = 0.1 * std::sin(0.3 * double(i));
  expect_lanes_match_one_lane<Projectile, double>(m, loss, sh,
                                                  RolloutBuffers<double>(m, sh, x, u, p), 4, 1e-14);
}

}  // namespace
}  // namespace steer::testing
