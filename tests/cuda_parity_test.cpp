// CUDA backend vs CPU backend on the same batches: losses, every gradient, trajectories and
// the per-rollout diagnostics. Both backends run the same STEER_HD rollout code, so any
// difference beyond rounding is a layout, indexing or launch bug in kernels/.
//
// Tolerances, per rollout and per array (vector max-norm, relative to the CPU's):
//   float64: 1e-12   (the GPU contracts a·b + c into FMAs and has its own exp/log1p, both
//                     within an ulp of the CPU's; 200 steps with contact stay far below this)
//   float32: 1e-4
// Integer diagnostics (event step, contact counts and hash, flags) must match exactly.
// Without a CUDA device every test here skips with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "steer/backend.h"
#include "steer/cuda_backend.h"
#include "steer/models/projectile.h"

namespace steer {
namespace {

#define STEER_SKIP_WITHOUT_CUDA()                                 \
  do {                                                            \
    const CudaStatus cs = cuda_status();                          \
    if (!cs.available) GTEST_SKIP() << cs.reason;                 \
  } while (0)

struct Case {
  int dim = 2;
  int ground = Projectile::kGroundNone;
  bool landing = false;
};

// a projectile problem whose rollouts fly, land and (with ground) bounce within the horizon
Loss make_loss(const Case& c) {
  Loss loss;
  loss.n_terminal = 2;
  loss.terminal_index[0] = 0;  // ½ (x_T − 6)²
  loss.terminal_target[0] = 6.0;
  loss.terminal_weight[0] = 1.0;
  loss.terminal_index[1] = c.dim + 1;  // ¼ v_y,T²
  loss.terminal_target[1] = 0.0;
  loss.terminal_weight[1] = 0.5;
  loss.effort_weight = 1e-3;  // ½·1e-3 |u_k|² [N²]
  loss.landing = c.landing;
  loss.vertical = 1;
  loss.n_landing = c.dim - 1;  // horizontal axes: 0 (and 2 in 3D)
  loss.landing_index[0] = 0;
  loss.landing_target[0] = 5.0;
  loss.landing_index[1] = 2;
  loss.landing_target[1] = -0.5;
  loss.landing_weight = 2.0;
  return loss;
}

// random x0, θ and controls per rollout; fixed seed so a failure reproduces
template <class S>
Batch<S> make_batch(const Projectile& m, int B, int T, unsigned seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  Batch<S> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  const int D = m.dim;
  for (int r = 0; r < B; ++r) {
    S* x = b.x0_of(r);
    for (int i = 0; i < D; ++i) x[i] = S(uni(-1.0, 1.0));       // position [m]
    x[1] = S(uni(0.2, 3.0));                                      // start above ground
    for (int i = 0; i < D; ++i) x[D + i] = S(uni(-3.0, 3.0));   // velocity [m/s]
    x[D + 1] = S(uni(0.0, 5.0));
    S* p = b.theta_of(r);
    p[Projectile::kGravity] = S(uni(9.0, 10.5));                 // [m/s²]
    p[Projectile::kDrag] = r % 4 == 0 ? S(0) : S(uni(0.0, 0.2)); // [1/m], some drag-free
    p[Projectile::kMass] = S(uni(0.5, 2.0));                     // [kg]
    p[Projectile::kGroundStiffness] = S(uni(500.0, 5000.0));     // [N/m]
    p[Projectile::kGroundDamping] = S(uni(1.0, 20.0));           // [N·s/m]
    p[Projectile::kGroundSmoothing] = S(uni(1e-3, 2e-2));        // [m]
    S* u = b.u_of(r);
    for (int k = 0; k < T * m.nu(); ++k) u[k] = S(uni(-2.0, 2.0));  // [N]
  }
  return b;
}

// max_i |a_i − b_i| ≤ tol · max(max_i |b_i|, floor) over each rollout's slice of length n
template <class S>
void expect_rollouts_near(const std::vector<S>& got, const std::vector<S>& want, int B, long n,
                          double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_EQ(want.size(), std::size_t(B) * n) << what;
  int bad = 0;
  for (int b = 0; b < B && bad < 5; ++b) {
    double err = 0, scale = 1e-300;
    for (long i = 0; i < n; ++i) {
      const double g = got[b * n + i], w = want[b * n + i];
      err = std::max(err, std::abs(g - w));
      scale = std::max(scale, std::abs(w));
    }
    if (!(err <= tol * scale)) {
      ++bad;
      ADD_FAILURE() << what << ": rollout " << b << " relative error " << err / scale
                    << " > " << tol << " (max |cpu| = " << scale << ")";
    }
  }
}

void expect_diag_equal(const std::vector<RolloutDiag>& got, const std::vector<RolloutDiag>& want,
                       double tol, bool with_grad) {
  ASSERT_EQ(got.size(), want.size());
  auto rel = [](double a, double b) { return std::abs(a - b) / std::max({std::abs(b), 1e-300}); };
  int bad = 0;
  for (std::size_t b = 0; b < want.size() && bad < 5; ++b) {
    const RolloutDiag &g = got[b], &w = want[b];
    const bool same_ints = g.event_step == w.event_step && g.contact_steps == w.contact_steps &&
                           g.contact_hash == w.contact_hash && g.nonfinite == w.nonfinite &&
                           g.conservative == w.conservative;
    // energies are sums over the whole state: compare on the scale of E(x0)
    const double escale = std::max(std::abs(w.energy0), 1.0);
    bool same_reals = std::abs(g.energy0 - w.energy0) <= tol * escale &&
                      std::abs(g.energy_max_dev - w.energy_max_dev) <= tol * escale;
    if (with_grad)
      same_reals = same_reals && rel(g.adj_seed_norm, w.adj_seed_norm) <= tol &&
                   rel(g.adj_x0_norm, w.adj_x0_norm) <= tol &&
                   std::abs(g.grad_u_first_norm - w.grad_u_first_norm) <=
                       tol * std::max(w.grad_u_first_norm, w.adj_x0_norm) &&
                   std::abs(g.grad_u_last_norm - w.grad_u_last_norm) <=
                       tol * std::max(w.grad_u_last_norm, w.adj_x0_norm);
    if (!same_ints || !same_reals) {
      ++bad;
      ADD_FAILURE() << "diag of rollout " << b << ": cuda (event " << g.event_step << ", contacts "
                    << g.contact_steps << ", hash " << g.contact_hash << ", nonfinite "
                    << g.nonfinite << ", E0 " << g.energy0 << ", dE " << g.energy_max_dev
                    << ", |λ0| " << g.adj_x0_norm << ") vs cpu (event " << w.event_step
                    << ", contacts " << w.contact_steps << ", hash " << w.contact_hash
                    << ", nonfinite " << w.nonfinite << ", E0 " << w.energy0 << ", dE "
                    << w.energy_max_dev << ", |λ0| " << w.adj_x0_norm << ")";
    }
  }
}

template <class S>
double parity_tol() {
  return sizeof(S) == sizeof(double) ? 1e-12 : 1e-4;
}

// (x0, u, θ) -> (L, ∇L, diag) on both backends, compared
template <class S>
void check_parity(const Case& c, int B = 257, int T = 200, int K = 0, int traj_stride = 0) {
  Projectile m;
  m.dim = c.dim;
  m.dt = 0.01;
  m.ground = c.ground;
  const Loss loss = make_loss(c);
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K > 0 ? K : int(std::ceil(std::sqrt(double(T))));
  sh.traj_stride = traj_stride;
  const Batch<S> batch = make_batch<S>(m, B, T, 20261129u + 97u * c.dim + 7u * c.ground + c.landing);
  const double tol = parity_tol<S>();
  for (bool want_grad : {false, true}) {
    SCOPED_TRACE(want_grad ? "forward+backward" : "forward only");
    BatchResult<S> cpu, gpu;
    run_batch(BackendKind::kCpu, m, loss, sh, batch, want_grad, cpu);
    run_batch(BackendKind::kCuda, m, loss, sh, batch, want_grad, gpu);
    expect_rollouts_near(gpu.loss, cpu.loss, B, 1, tol, "loss");
    expect_diag_equal(gpu.diag, cpu.diag, tol, want_grad);
    EXPECT_EQ(gpu.grad_x0.size(), cpu.grad_x0.size());
    if (want_grad) {
      expect_rollouts_near(gpu.grad_x0, cpu.grad_x0, B, m.nx(), tol, "dL/dx0");
      expect_rollouts_near(gpu.grad_u, cpu.grad_u, B, long(T) * m.nu(), tol, "dL/du");
      expect_rollouts_near(gpu.grad_theta, cpu.grad_theta, B, m.np(), tol, "dL/dtheta");
    }
    if (traj_stride > 0)
      expect_rollouts_near(gpu.traj, cpu.traj, B, long(sh.traj_slots()) * m.nx(), tol, "traj");
    else
      EXPECT_TRUE(gpu.traj.empty());
  }
}

constexpr int kNone = Projectile::kGroundNone;
constexpr int kPenalty = Projectile::kGroundPenalty;

TEST(CudaParity, Float64NoGround) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<double>({2, kNone, false});
}
TEST(CudaParity, Float64NoGroundLanding) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<double>({2, kNone, true});
}
TEST(CudaParity, Float64Penalty) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<double>({2, kPenalty, false});
}
TEST(CudaParity, Float64PenaltyLanding) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<double>({2, kPenalty, true});
}
TEST(CudaParity, Float64PenaltyLanding3D) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<double>({3, kPenalty, true});
}
TEST(CudaParity, Float32NoGround) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<float>({2, kNone, false});
}
TEST(CudaParity, Float32NoGroundLanding) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<float>({2, kNone, true});
}
TEST(CudaParity, Float32Penalty) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<float>({2, kPenalty, false});
}
TEST(CudaParity, Float32PenaltyLanding) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<float>({2, kPenalty, true});
}
TEST(CudaParity, Float32PenaltyLanding3D) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<float>({3, kPenalty, true});
}

// every checkpoint interval, from storing all states to one segment, and a trajectory
TEST(CudaParity, Float64CheckpointIntervalsAndTrajectory) {
  STEER_SKIP_WITHOUT_CUDA();
  for (int K : {1, 7, 200}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    check_parity<double>({2, kPenalty, true}, 65, 200, K, 10);
  }
}

// a batch smaller than a block, and one rollout
TEST(CudaParity, Float64TinyBatches) {
  STEER_SKIP_WITHOUT_CUDA();
  check_parity<double>({2, kPenalty, true}, 1, 50);
  check_parity<double>({2, kPenalty, true}, 3, 50);
}

// the dual-number reference adjoint runs on the device too
TEST(CudaParity, Float64ReferenceAdjoint) {
  STEER_SKIP_WITHOUT_CUDA();
  Projectile m;
  m.ground = kPenalty;
  const Loss loss = make_loss({2, kPenalty, true});
  RolloutShape sh;
  sh.steps = 120;
  sh.checkpoint_every = 11;
  sh.reference_adjoint = true;
  const Batch<double> batch = make_batch<double>(m, 129, sh.steps, 7u);
  BatchResult<double> cpu, gpu;
  run_batch(BackendKind::kCpu, m, loss, sh, batch, true, cpu);
  run_batch(BackendKind::kCuda, m, loss, sh, batch, true, gpu);
  expect_rollouts_near(gpu.grad_x0, cpu.grad_x0, 129, m.nx(), 1e-12, "dL/dx0");
  expect_rollouts_near(gpu.grad_u, cpu.grad_u, 129, long(sh.steps) * m.nu(), 1e-12, "dL/du");
  expect_rollouts_near(gpu.grad_theta, cpu.grad_theta, 129, m.np(), 1e-12, "dL/dtheta");
}

// splitting a batch into device passes changes nothing: same code, same rollouts, bitwise
TEST(CudaParity, ChunkedPassesAreBitwiseIdentical) {
  STEER_SKIP_WITHOUT_CUDA();
  Projectile m;
  m.ground = kPenalty;
  const Loss loss = make_loss({2, kPenalty, true});
  RolloutShape sh;
  sh.steps = 100;
  sh.checkpoint_every = 10;
  sh.traj_stride = 25;
  const Batch<double> batch = make_batch<double>(m, 1000, sh.steps, 11u);
  BatchResult<double> whole, chunked;
  CudaRunStats s_whole, s_chunked;
  cuda_run_batch_ex(m, loss, sh, batch, true, whole, CudaRunOptions{}, &s_whole);
  CudaRunOptions opt;
  opt.max_chunk = 300;  // 300 + 300 + 300 + 100
  cuda_run_batch_ex(m, loss, sh, batch, true, chunked, opt, &s_chunked);
  EXPECT_EQ(s_whole.chunks, 1);
  EXPECT_EQ(s_chunked.chunks, 4);
  EXPECT_EQ(s_chunked.chunk_rollouts, 300);
  EXPECT_EQ(whole.loss, chunked.loss);
  EXPECT_EQ(whole.grad_x0, chunked.grad_x0);
  EXPECT_EQ(whole.grad_u, chunked.grad_u);
  EXPECT_EQ(whole.grad_theta, chunked.grad_theta);
  EXPECT_EQ(whole.traj, chunked.traj);
  for (std::size_t b = 0; b < whole.diag.size(); ++b) {
    EXPECT_EQ(whole.diag[b].event_step, chunked.diag[b].event_step) << b;
    EXPECT_EQ(whole.diag[b].contact_hash, chunked.diag[b].contact_hash) << b;
    EXPECT_EQ(whole.diag[b].adj_x0_norm, chunked.diag[b].adj_x0_norm) << b;
  }
}

// a bad batch is rejected before anything reaches the device
TEST(CudaParity, MismatchedBatchThrows) {
  STEER_SKIP_WITHOUT_CUDA();
  Projectile m;
  RolloutShape sh;
  sh.steps = 10;
  Batch<double> batch;
  batch.resize(4, m.nx(), m.nu(), m.np(), 11);  // steps differ from the shape
  BatchResult<double> out;
  EXPECT_THROW(run_batch(BackendKind::kCuda, m, Loss{}, sh, batch, true, out),
               std::invalid_argument);
}

}  // namespace
}  // namespace steer
