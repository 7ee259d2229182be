// include/steer/rollout.h: checkpointed forward and segment-recompute backward.
// Gradients must be bitwise identical for every checkpoint interval K in float64 on the
// CPU, because the recompute repeats the forward arithmetic exactly.
#include "steer/rollout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "steer/backend.h"
#include "steer/models/projectile.h"

namespace steer {
namespace {

struct BouncingBatch {
  Projectile m;
  Loss loss;
  Batch<double> batch;
};

// a batch of bouncing, dragged, pushed projectiles with terminal, effort and landing terms
BouncingBatch make_setup(int B, int T) {
  BouncingBatch s;
  s.m.dim = 2;
  s.m.dt = 0.004;
  s.m.ground = Projectile::kGroundPenalty;
  s.loss.n_terminal = 2;
  s.loss.terminal_index[0] = 0, s.loss.terminal_target[0] = 1.0, s.loss.terminal_weight[0] = 1.0;
  s.loss.terminal_index[1] = 3, s.loss.terminal_target[1] = 0.0, s.loss.terminal_weight[1] = 0.2;
  s.loss.effort_weight = 1e-3;
  s.batch.resize(B, 4, 2, 6, T);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uni(-1, 1);
  for (int b = 0; b < B; ++b) {
    double* x = s.batch.x0_of(b);
    x[0] = 0.1 * uni(rng), x[1] = 0.5 + 0.2 * uni(rng), x[2] = 1 + uni(rng), x[3] = uni(rng);
    double* p = s.batch.theta_of(b);
    p[0] = 9.81, p[1] = 0.2 + 0.1 * uni(rng), p[2] = 1.0 + 0.2 * uni(rng), p[3] = 2e3, p[4] = 3.0,
    p[5] = 5e-3;
    double* u = s.batch.u_of(b);
    for (int i = 0; i < T * 2; ++i) u[i] = 0.5 * uni(rng);
  }
  return s;
}

BatchResult<double> run(const BouncingBatch& s, int K, bool reference = false) {
  RolloutShape sh;
  sh.steps = s.batch.steps;
  sh.checkpoint_every = K;
  sh.reference_adjoint = reference;
  BatchResult<double> out;
  cpu_run_batch<Projectile, double>(s.m, s.loss, sh, s.batch, true, out);
  return out;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  // (an empty vector's data() may be null, which memcmp must not get even for 0 bytes)
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

TEST(Rollout, GradientsBitwiseIdenticalAcrossCheckpointIntervals) {
  const int T = 500;
  BouncingBatch s = make_setup(6, T);
  const BatchResult<double> ref = run(s, 1);
  const int sqrtT = int(std::ceil(std::sqrt(double(T))));
  for (int K : {2, 7, sqrtT, T}) {
    const BatchResult<double> r = run(s, K);
    EXPECT_TRUE(bitwise_equal(r.loss, ref.loss)) << "K = " << K;
    EXPECT_TRUE(bitwise_equal(r.grad_x0, ref.grad_x0)) << "K = " << K;
    EXPECT_TRUE(bitwise_equal(r.grad_u, ref.grad_u)) << "K = " << K;
    EXPECT_TRUE(bitwise_equal(r.grad_theta, ref.grad_theta)) << "K = " << K;
  }
  // the run is not trivial: contacts happened and gradients are nonzero
  EXPECT_GT(ref.diag[0].contact_steps, 0);
  EXPECT_GT(std::fabs(ref.grad_theta[Projectile::kGroundStiffness]), 0.0);
}

// a segment length that does not divide T leaves a short last segment
TEST(Rollout, ShortLastSegmentIsHandled) {
  BouncingBatch s = make_setup(2, 101);
  const BatchResult<double> a = run(s, 1), b = run(s, 10), c = run(s, 100);
  EXPECT_TRUE(bitwise_equal(a.grad_u, b.grad_u));
  EXPECT_TRUE(bitwise_equal(a.grad_u, c.grad_u));
  EXPECT_TRUE(bitwise_equal(a.grad_theta, c.grad_theta));
}

// the dual-number reference adjoint gives the hand adjoint's gradient to rounding
TEST(Rollout, ReferenceAdjointAgreesWithHandAdjoint) {
  BouncingBatch s = make_setup(3, 200);
  const BatchResult<double> h = run(s, 14), d = run(s, 14, true);
  for (size_t i = 0; i < h.grad_u.size(); ++i)
    EXPECT_NEAR(h.grad_u[i], d.grad_u[i], 1e-12 * std::max(1.0, std::fabs(d.grad_u[i])));
  for (size_t i = 0; i < h.grad_theta.size(); ++i)
    EXPECT_NEAR(h.grad_theta[i], d.grad_theta[i],
                1e-12 * std::max(1.0, std::fabs(d.grad_theta[i])));
  for (size_t i = 0; i < h.grad_x0.size(); ++i)
    EXPECT_NEAR(h.grad_x0[i], d.grad_x0[i], 1e-12 * std::max(1.0, std::fabs(d.grad_x0[i])));
}

// rollouts are independent: the result of rollout b does not depend on the batch around it
TEST(Rollout, RolloutsAreIndependentOfTheirBatch) {
  BouncingBatch s = make_setup(5, 120);
  const BatchResult<double> all = run(s, 11);
  BouncingBatch one = s;
  one.batch.resize(1, 4, 2, 6, 120);
  std::copy(s.batch.x0_of(3), s.batch.x0_of(3) + 4, one.batch.x0.begin());
  std::copy(s.batch.u_of(3), s.batch.u_of(3) + 240, one.batch.u.begin());
  std::copy(s.batch.theta_of(3), s.batch.theta_of(3) + 6, one.batch.theta.begin());
  const BatchResult<double> r = run(one, 11);
  EXPECT_EQ(r.loss[0], all.loss[3]);
  for (int i = 0; i < 240; ++i) EXPECT_EQ(r.grad_u[i], all.grad_u[3 * 240 + i]);
}

// memory: K = ⌈√T⌉ keeps ⌈T/K⌉ + 1 checkpoints and K + 1 segment states, ≤ 2√T + 3 states
TEST(Rollout, CheckpointSlotCounts) {
  RolloutShape sh;
  sh.steps = 300;
  sh.checkpoint_every = 18;
  EXPECT_EQ(sh.segments(), 17);
  EXPECT_EQ(sh.checkpoint_slots(), 18);
  EXPECT_EQ(sh.segment_slots(), 19);
  EXPECT_LE(sh.checkpoint_slots() + sh.segment_slots(), 2 * std::sqrt(300.0) + 3);
  sh.checkpoint_every = 1;
  EXPECT_EQ(sh.checkpoint_slots() + sh.segment_slots(), 303);
}

// the float32 build of the same code agrees with float64 to float32 rounding
TEST(Rollout, Float32AgreesWithFloat64) {
  BouncingBatch s = make_setup(2, 100);
  s.m.ground = Projectile::kGroundNone;
  const BatchResult<double> d = run(s, 10);
  Batch<float> bf;
  bf.resize(2, 4, 2, 6, 100);
  for (size_t i = 0; i < bf.x0.size(); ++i) bf.x0[i] = float(s.batch.x0[i]);
  for (size_t i = 0; i < bf.u.size(); ++i) bf.u[i] = float(s.batch.u[i]);
  for (size_t i = 0; i < bf.theta.size(); ++i) bf.theta[i] = float(s.batch.theta[i]);
  RolloutShape sh;
  sh.steps = 100;
  sh.checkpoint_every = 10;
  BatchResult<float> f;
  cpu_run_batch<Projectile, float>(s.m, s.loss, sh, bf, true, f);
  for (int b = 0; b < 2; ++b)
    EXPECT_NEAR(f.loss[b], d.loss[b], 1e-4 * std::max(1.0, std::fabs(d.loss[b])));
  for (size_t i = 0; i < d.grad_x0.size(); ++i)
    EXPECT_NEAR(f.grad_x0[i], d.grad_x0[i], 1e-4 * std::max(1.0, std::fabs(d.grad_x0[i])));
}

// inconsistent inputs are refused before anything runs
TEST(Rollout, BadShapesAreRejected) {
  BouncingBatch s = make_setup(1, 10);
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 11;
  BatchResult<double> out;
  EXPECT_THROW((cpu_run_batch<Projectile, double>(s.m, s.loss, sh, s.batch, true, out)),
               std::invalid_argument);
  sh.checkpoint_every = 2;
  sh.steps = 9;
  EXPECT_THROW((cpu_run_batch<Projectile, double>(s.m, s.loss, sh, s.batch, true, out)),
               std::invalid_argument);
}

}  // namespace
}  // namespace steer
