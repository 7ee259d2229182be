// CUDA backend vs CPU backend on the same batches: losses, every gradient, trajectories and
// the per-rollout diagnostics. Both backends run the same STEER_HD rollout code, so any
// difference beyond rounding is a layout, indexing or launch bug in kernels/.
//
// The GPU rounds differently from the CPU (nvcc contracts a·b + c into FMAs; its exp and
// log1p differ by an ulp), and a rollout amplifies rounding by its own conditioning: contact
// makes some rollouts much more sensitive than others. A host build with -mfma
// -ffp-contract=fast, compared with the plain one on these batches, stands in for the GPU:
// float64 worst 1.1e-13 (stiffer ground, k up to 5000 N/m, gave 3e-11, hence the moderate
// contact below); float32 worst 6.6e-5 against the plain float32 build, because float32
// itself is only ~1e-4 accurate on the worst rollouts. So, per rollout and per array
// (max-norm of the difference over max-norm of the reference):
//   float64: |cuda − cpu| ≤ 1e-12
//   float32: |cuda − ref64| ≤ 1e-4 + 2 |cpu32 − ref64|, ref64 = the CPU in float64 on the
//            same (float-valued) inputs: the GPU must be as accurate as the CPU in float32.
// Integer diagnostics (event step, contact counts and hash, flags) must match exactly in
// float64; in float32 a state within ~1e-7 of the ground may land on the other side, so at
// most 1% of rollouts may differ there. The mass-spring tests at the end (a warp per
// rollout) state their own tolerances. Without a CUDA device every test here skips, except
// the two that check argument errors raised before the device is asked for.
//
// The same file is built a second time against the emulated device of tests/backend/cuda_emulation
// (tests/backend/gpu_emulation.cmake, tests named Emulated.*), where it never skips: the real
// kernel and launcher sources run as host code, one block at a time, each thread a fiber. There the
// transcendentals (exp, log1p, tanh, sin, cos in model_math.h) are the host's, the ones the
// CPU backend calls, and no multiply-add is contracted (-ffp-contract=off). Measured there:
// every projectile array and the mass-spring loss, trajectories, ∂L/∂x0 and ∂L/∂u equal the
// CPU's bit for bit; the mass-spring ∂L/∂θ, which the warp's lanes sum in another order than
// the CPU's one-lane path, within 3e-18 (float64) and 2e-9 (float32) relative. The tolerances
// above, stated for the GPU's FMAs and its own exp, log1p and tanh, hold there with a wide
// margin; what the emulator checks is everything else: indexing, layouts, transposes, chunk
// boundaries, barriers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "mass_spring_draws.h"
#include "models/mass_spring/mass_spring_robot.h"
#include "steer/backend.h"
#include "steer/controller.h"
#include "steer/cuda_backend.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"

namespace steer {
namespace {

#if defined(STEER_CUDA_EMULATION)
// the emulated device is always present: a skip would hide the whole suite
#define STEER_SKIP_WITHOUT_CUDA() ASSERT_TRUE(cuda_status().available) << cuda_status().reason
#else
#define STEER_SKIP_WITHOUT_CUDA()                 \
  do {                                            \
    const CudaStatus cs = cuda_status();          \
    if (!cs.available) GTEST_SKIP() << cs.reason; \
  } while (0)
#endif

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
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  Batch<S> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  const int D = m.dim;
  for (int r = 0; r < B; ++r) {
    S* x = b.x0_of(r);
    for (int i = 0; i < D; ++i) x[i] = S(uni(-1.0, 1.0));      // position [m]
    x[1] = S(uni(0.2, 3.0));                                   // start above ground
    for (int i = 0; i < D; ++i) x[D + i] = S(uni(-3.0, 3.0));  // velocity [m/s]
    x[D + 1] = S(uni(0.0, 5.0));
    S* p = b.theta_of(r);
    p[Projectile::kGravity] = S(uni(9.0, 10.5));                  // [m/s²]
    p[Projectile::kDrag] = r % 4 == 0 ? S(0) : S(uni(0.0, 0.2));  // [1/m], some drag-free
    p[Projectile::kMass] = S(uni(0.5, 2.0));                      // [kg]
    // moderate contact: ω = √(k/m) ≤ 28 rad/s keeps ω·dt ≤ 0.3, far from the
    // symplectic-Euler limit of 2 where rounding is amplified without bound
    p[Projectile::kGroundStiffness] = S(uni(100.0, 400.0));  // [N/m]
    p[Projectile::kGroundDamping] = S(uni(1.0, 5.0));        // [N·s/m]
    p[Projectile::kGroundSmoothing] = S(uni(1e-2, 3e-2));    // [m]
    S* u = b.u_of(r);
    for (int k = 0; k < T * m.nu(); ++k) u[k] = S(uni(-2.0, 2.0));  // [N]
  }
  return b;
}

// per rollout: max_i |a_i − b_i| / max(max_i |b_i|, 1e-300) over its slice of length n
template <class A, class R>
std::vector<double> rollout_errors(const std::vector<A>& got, const std::vector<R>& ref, int B,
                                   long n) {
  std::vector<double> err(B, 0.0);
  if (got.size() != ref.size() || ref.size() != std::size_t(B) * n) {
    ADD_FAILURE() << "array sizes differ: " << got.size() << " vs " << ref.size() << ", want "
                  << std::size_t(B) * n;
    return err;
  }
  for (int b = 0; b < B; ++b) {
    double e = 0, scale = 1e-300;
    for (long i = 0; i < n; ++i) {
      const double g = double(got[b * n + i]), r = double(ref[b * n + i]);
      e = std::max(e, std::abs(g - r));
      scale = std::max(scale, std::abs(r));
    }
    err[b] = e / scale;
  }
  return err;
}

void expect_errors_within(const std::vector<double>& err, const std::vector<double>& tol,
                          const char* what) {
  int bad = 0;
  for (std::size_t b = 0; b < err.size(); ++b)
    if (!(err[b] <= tol[b]) && ++bad <= 5)
      ADD_FAILURE() << what << ": rollout " << b << " relative error " << err[b] << " > " << tol[b];
  EXPECT_EQ(bad, 0) << what << ": rollouts out of tolerance";
}

// float64: CUDA vs CPU at 1e-12. float32: CUDA vs the float64 reference, within 1e-4 plus
// twice the CPU float32's own error on that rollout (see the top of the file).
template <class S>
void expect_match(const std::vector<S>& cuda, const std::vector<S>& cpu,
                  const std::vector<double>* ref64, int B, long n, const char* what) {
  if (std::is_same<S, double>::value) {
    expect_errors_within(rollout_errors(cuda, cpu, B, n), std::vector<double>(B, 1e-12), what);
    return;
  }
  ASSERT_NE(ref64, nullptr);
  const std::vector<double> e_cpu = rollout_errors(cpu, *ref64, B, n);
  std::vector<double> tol(B);
  for (int b = 0; b < B; ++b) tol[b] = 1e-4 + 2.0 * e_cpu[b];
  expect_errors_within(rollout_errors(cuda, *ref64, B, n), tol, what);
}

// integers exactly (float32: up to 1% of rollouts may differ), reals to `tol` relative
void expect_diag_match(const std::vector<RolloutDiag>& got, const std::vector<RolloutDiag>& want,
                       double tol, int allowed_int_mismatches, bool with_grad) {
  ASSERT_EQ(got.size(), want.size());
  auto close = [tol](double a, double b, double scale) {
    return std::abs(a - b) <= tol * std::max({std::abs(b), scale, 1e-300});
  };
  int int_mismatch = 0, real_mismatch = 0;
  for (std::size_t b = 0; b < want.size(); ++b) {
    const RolloutDiag &g = got[b], &w = want[b];
    const bool same_ints = g.event_step == w.event_step && g.contact_steps == w.contact_steps &&
                           g.contact_hash == w.contact_hash && g.nonfinite == w.nonfinite &&
                           g.conservative == w.conservative;
    // energies [J] on the scale of E(x0), at least 1 J; the adjoint norms on their own scale
    const double escale = std::max(std::abs(w.energy0), 1.0);
    bool same_reals =
        close(g.energy0, w.energy0, escale) && close(g.energy_max_dev, w.energy_max_dev, escale);
    if (with_grad)
      same_reals = same_reals && close(g.adj_seed_norm, w.adj_seed_norm, 0) &&
                   close(g.adj_x0_norm, w.adj_x0_norm, 0) &&
                   close(g.grad_u_first_norm, w.grad_u_first_norm, 0) &&
                   close(g.grad_u_last_norm, w.grad_u_last_norm, 0);
    if (!same_ints) ++int_mismatch;
    if (!same_reals) ++real_mismatch;
    if ((!same_ints && int_mismatch > allowed_int_mismatches) ||
        (!same_reals && real_mismatch <= 5))
      ADD_FAILURE() << "diag of rollout " << b << ": cuda (event " << g.event_step << ", contacts "
                    << g.contact_steps << ", hash " << g.contact_hash << ", nonfinite "
                    << g.nonfinite << ", E0 " << g.energy0 << ", dE " << g.energy_max_dev
                    << ", |λ0| " << g.adj_x0_norm << ") vs cpu (event " << w.event_step
                    << ", contacts " << w.contact_steps << ", hash " << w.contact_hash
                    << ", nonfinite " << w.nonfinite << ", E0 " << w.energy0 << ", dE "
                    << w.energy_max_dev << ", |λ0| " << w.adj_x0_norm << ")";
  }
  EXPECT_LE(int_mismatch, allowed_int_mismatches);
  EXPECT_EQ(real_mismatch, 0);
}

template <class S>
Batch<double> to_float64(const Batch<S>& b) {
  Batch<double> d;
  d.resize(b.size, b.nx, b.nu, b.np, b.steps);
  std::copy(b.x0.begin(), b.x0.end(), d.x0.begin());
  std::copy(b.u.begin(), b.u.end(), d.u.begin());
  std::copy(b.theta.begin(), b.theta.end(), d.theta.begin());
  return d;
}

// (x0, u, θ) -> (L, ∇L, diag) on both backends, compared
template <class S>
void check_parity(const Case& c, int B = 257, int T = 200, int K = 0, int traj_stride = 0) {
  constexpr bool f64 = std::is_same<S, double>::value;
  Projectile m;
  m.dim = c.dim;
  m.dt = 0.01;
  m.ground = c.ground;
  const Loss loss = make_loss(c);
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K > 0 ? K : int(std::ceil(std::sqrt(double(T))));
  sh.traj_stride = traj_stride;
  const Batch<S> batch =
      make_batch<S>(m, B, T, 20261129u + 97u * c.dim + 7u * c.ground + c.landing);
  for (bool want_grad : {false, true}) {
    SCOPED_TRACE(want_grad ? "forward+backward" : "forward only");
    BatchResult<S> cpu, gpu;
    BatchResult<double> ref;  // float32 only: the CPU in float64 on the same inputs
    run_batch(BackendKind::kCpu, m, loss, sh, batch, want_grad, cpu);
    run_batch(BackendKind::kCuda, m, loss, sh, batch, want_grad, gpu);
    if (!f64) run_batch(BackendKind::kCpu, m, loss, sh, to_float64(batch), want_grad, ref);
    expect_match(gpu.loss, cpu.loss, &ref.loss, B, 1, "loss");
    expect_diag_match(gpu.diag, cpu.diag, f64 ? 1e-11 : 1e-3, f64 ? 0 : std::max(1, B / 100),
                      want_grad);
    EXPECT_EQ(gpu.grad_x0.size(), cpu.grad_x0.size());
    if (want_grad) {
      expect_match(gpu.grad_x0, cpu.grad_x0, &ref.grad_x0, B, m.nx(), "dL/dx0");
      expect_match(gpu.grad_u, cpu.grad_u, &ref.grad_u, B, long(T) * m.nu(), "dL/du");
      expect_match(gpu.grad_theta, cpu.grad_theta, &ref.grad_theta, B, m.np(), "dL/dtheta");
    }
    if (traj_stride > 0)
      expect_match(gpu.traj, cpu.traj, &ref.traj, B, long(sh.traj_slots()) * m.nx(), "traj");
    else
      EXPECT_TRUE(gpu.traj.empty());
  }
}

constexpr int kNone = Projectile::kGroundNone;
constexpr int kPenalty = Projectile::kGroundPenalty;

// the projectile cases, each in float64 and float32: a flight, a landing, with the penalty
// ground, and in 3-D
struct ProjectileParity {
  bool f64 = true;
  Case c;
};

// Float64PenaltyLanding3D: the test's name, and the parameter as a failure prints it
std::string name_of(const ProjectileParity& p) {
  return std::string(p.f64 ? "Float64" : "Float32") +
         (p.c.ground == kPenalty ? "Penalty" : "NoGround") + (p.c.landing ? "Landing" : "") +
         (p.c.dim == 3 ? "3D" : "");
}
void PrintTo(const ProjectileParity& p, std::ostream* os) { *os << name_of(p); }

class CudaParityCase : public ::testing::TestWithParam<ProjectileParity> {};

TEST_P(CudaParityCase, MatchesCpu) {
  STEER_SKIP_WITHOUT_CUDA();
  const ProjectileParity& p = GetParam();
  if (p.f64)
    check_parity<double>(p.c);
  else
    check_parity<float>(p.c);
}

std::vector<ProjectileParity> projectile_parity_cases() {
  std::vector<ProjectileParity> cases;
  for (bool f64 : {true, false})
    for (const Case& c : {Case{2, kNone, false}, Case{2, kNone, true}, Case{2, kPenalty, false},
                          Case{2, kPenalty, true}, Case{3, kPenalty, true}})
      cases.push_back({f64, c});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(CudaParity, CudaParityCase, ::testing::ValuesIn(projectile_parity_cases()),
                         [](const ::testing::TestParamInfo<ProjectileParity>& info) {
                           return name_of(info.param);
                         });

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
  expect_match(gpu.grad_x0, cpu.grad_x0, nullptr, 129, m.nx(), "dL/dx0");
  expect_match(gpu.grad_u, cpu.grad_u, nullptr, 129, long(sh.steps) * m.nu(), "dL/du");
  expect_match(gpu.grad_theta, cpu.grad_theta, nullptr, 129, m.np(), "dL/dtheta");
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

// ---- mass_spring: one warp per rollout, rollout-major layout, topology on the device ----
//
// A grid robot walking on the compliant ground, CoM loss (−(c_T − c_0) along x), per-rollout
// random spring stiffness and damping, masses, actuator weights and biases, drop height and
// initial velocities; sinusoid actuation, and raw actuation with an effort term. Two robots:
// 18 particles / 41 springs (fewer than a warp's 32 lanes) and 33 / 92 (the lane-strided
// loops go round more than once).
//
// Tolerances, from the same stand-in for the GPU's rounding as above (host -mfma
// -ffp-contract=fast vs the plain build, these batches, T = 200):
//   float64: worst 1.1e-11 over all rollouts and arrays -> |cuda − cpu| ≤ 1e-10 per rollout.
//   float32: per rollout the CPU's own float32 error (vs float64 on the same inputs) reaches
//            1e-2 on the worst rollouts (200 steps of contact, and the loss is a difference of
//            two centres of mass), and the FMA build's error exceeds twice the CPU's by up to
//            3.1e-3 on rollouts where the CPU happens to be accurate; the median over rollouts
//            is the same for both (~1e-5). So: each rollout within 1e-2 + 2 |cpu32 − ref64|,
//            and the batch median within 2 × the CPU's median + 1e-6 (a layout or indexing
//            bug is O(1) and fails both).
// The friction here (μ 0.3, v_ε 0.2 m/s) keeps the explicit friction update stable
// (h μ F_n / (m v_ε) < 2 for normal forces up to ~300 N): with μ 0.8, v_ε 0.05 m/s the
// bottom particles of the robot stick-slip chaotically and float64 rollouts of different
// rounding differ by 1e-2 after 200 steps, which no tolerance can sensibly cover.
struct MsCase {
  int actuation = MassSpring::kSinusoid;
  bool wide = false;  // 10 × 2 cells, 33 particles
};

// topology arrays outlive the models that point at them
std::vector<int>& keep_topology(std::vector<int> t) {
  static std::vector<std::vector<int>> kept;
  kept.push_back(std::move(t));
  return kept.back();
}

Robot ms_robot(const MsCase& c) {
  if (c.wide) return testing::wide_grid_robot();
  // a frame on two legs: cells (column, row)
  return grid_robot({{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {3, 1}, {0, 2}, {3, 2}}, 0.1,
                    {0.1, 0.12}, 1e3, 0.15);
}

MassSpring ms_model(const MsCase& c, const Robot& r) {
  MassSpring m = make_mass_spring(r, 10, c.actuation, true, 0.004);
  const std::vector<int>& topo = keep_topology(pack_topology(r));
  m.topo = topo.data();
  return m;
}

Loss ms_loss(const MsCase& c) {
  Loss l;
  l.com = true;
  l.com_axis = 0;
  l.com_weight = -1;
  if (c.actuation == MassSpring::kRaw) l.effort_weight = 1e-3;
  return l;
}

template <class S>
Batch<S> ms_batch(const MassSpring& m, const Robot& r, int B, int T, unsigned seed) {
  std::mt19937_64 rng(seed);
  Batch<S> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  for (int k = 0; k < B; ++k)
    testing::draw_mass_spring_rollout<S>(m, r, T, rng, b.x0_of(k), b.u_of(k), b.theta_of(k));
  return b;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// float64: |cuda − cpu| ≤ 1e-10; float32: see the tolerances above
template <class S>
void expect_ms_match(const std::vector<S>& cuda, const std::vector<S>& cpu,
                     const std::vector<double>& ref64, int B, long n, const char* what) {
  if (std::is_same<S, double>::value) {
    expect_errors_within(rollout_errors(cuda, cpu, B, n), std::vector<double>(B, 1e-10), what);
    return;
  }
  const std::vector<double> e_cpu = rollout_errors(cpu, ref64, B, n);
  const std::vector<double> e_gpu = rollout_errors(cuda, ref64, B, n);
  std::vector<double> tol(B);
  for (int b = 0; b < B; ++b) tol[b] = 1e-2 + 2.0 * e_cpu[b];
  expect_errors_within(e_gpu, tol, what);
  EXPECT_LE(median_of(e_gpu), 2.0 * median_of(e_cpu) + 1e-6) << what << ": median error";
}

template <class S>
void check_ms_parity(const MsCase& c, int B = 100, int T = 200, int K = 0, int traj_stride = 0) {
  constexpr bool f64 = std::is_same<S, double>::value;
  const Robot r = ms_robot(c);
  const MassSpring m = ms_model(c, r);
  const Loss loss = ms_loss(c);
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K > 0 ? K : int(std::ceil(std::sqrt(double(T))));
  sh.traj_stride = traj_stride;
  const Batch<S> batch =
      ms_batch<S>(m, r, B, T, 20261129u + 13u * c.actuation + (c.wide ? 101u : 0u));
  for (bool want_grad : {false, true}) {
    SCOPED_TRACE(want_grad ? "forward+backward" : "forward only");
    BatchResult<S> cpu, gpu;
    BatchResult<double> ref;  // float32 only: the CPU in float64 on the same inputs
    run_batch(BackendKind::kCpu, m, loss, sh, batch, want_grad, cpu);
    run_batch(BackendKind::kCuda, m, loss, sh, batch, want_grad, gpu);
    if (!f64) run_batch(BackendKind::kCpu, m, loss, sh, to_float64(batch), want_grad, ref);
    expect_ms_match(gpu.loss, cpu.loss, ref.loss, B, 1, "loss");
    // the adjoint norms in the diagnostics carry the gradients' float32 error
    expect_diag_match(gpu.diag, cpu.diag, f64 ? 1e-10 : 5e-2, f64 ? 0 : std::max(1, B / 100),
                      want_grad);
    EXPECT_EQ(gpu.grad_x0.size(), cpu.grad_x0.size());
    if (want_grad) {
      expect_ms_match(gpu.grad_x0, cpu.grad_x0, ref.grad_x0, B, m.nx(), "dL/dx0");
      expect_ms_match(gpu.grad_u, cpu.grad_u, ref.grad_u, B, long(T) * m.nu(), "dL/du");
      expect_ms_match(gpu.grad_theta, cpu.grad_theta, ref.grad_theta, B, m.np(), "dL/dtheta");
    }
    if (traj_stride > 0)
      expect_ms_match(gpu.traj, cpu.traj, ref.traj, B, long(sh.traj_slots()) * m.nx(), "traj");
    else
      EXPECT_TRUE(gpu.traj.empty());
  }
}

constexpr int kSinusoid = MassSpring::kSinusoid;
constexpr int kRaw = MassSpring::kRaw;

// the mass-spring cases: float64 and float32, sinusoidal and raw actuation, the small and the
// wide robot
struct MassSpringParity {
  bool f64 = true;
  MsCase c;
};

// Float32RawWide: the test's name, and the parameter as a failure prints it
std::string name_of(const MassSpringParity& p) {
  return std::string(p.f64 ? "Float64" : "Float32") + (p.c.actuation == kRaw ? "Raw" : "Sinusoid") +
         (p.c.wide ? "Wide" : "");
}
void PrintTo(const MassSpringParity& p, std::ostream* os) { *os << name_of(p); }

class CudaParityMassSpringCase : public ::testing::TestWithParam<MassSpringParity> {};

TEST_P(CudaParityMassSpringCase, MatchesCpu) {
  STEER_SKIP_WITHOUT_CUDA();
  const MassSpringParity& p = GetParam();
  if (p.f64)
    check_ms_parity<double>(p.c);
  else
    check_ms_parity<float>(p.c);
}

std::vector<MassSpringParity> mass_spring_parity_cases() {
  std::vector<MassSpringParity> cases;
  for (bool f64 : {true, false})
    for (int actuation : {kSinusoid, kRaw})
      for (bool wide : {false, true}) cases.push_back({f64, MsCase{actuation, wide}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(CudaParityMassSpring, CudaParityMassSpringCase,
                         ::testing::ValuesIn(mass_spring_parity_cases()),
                         [](const ::testing::TestParamInfo<MassSpringParity>& info) {
                           return name_of(info.param);
                         });

// storing every state, one segment, and a recorded trajectory
// The robot with a controller in its step (Controlled<MassSpring>, steer/controller.h): one
// lane per rollout, the network's layers in the thread. Observations: two phases, every position
// minus the centre of mass, every velocity, the centre of mass along x; a 6-unit tanh layer and
// tanh actions clamped to ±0.8, observation noise and a delay of 2 steps; weights drawn per
// rollout (N(0, 0.5²)), so that every rollout walks differently. Tolerances as for the robot
// without one.
template <class S>
void check_controlled_parity(int B = 64, int T = 150) {
  const MsCase c{kRaw, false};
  const Robot r = ms_robot(c);
  const MassSpring inner = ms_model(c, r);
  Policy pol;
  pol.theta0 = inner.np();
  pol.nx_model = inner.nx();
  pol.dt = inner.dt;
  pol.phase_frequency = 10.0;
  for (int j = 0; j < 2; ++j)
    pol.feature[pol.n_obs] = Policy::kPhase, pol.index[pol.n_obs] = short(j),
    pol.axis[pol.n_obs++] = 2;
  for (int i = 0; i < inner.n_particles; ++i)
    for (int a = 0; a < 2; ++a)
      pol.feature[pol.n_obs] = Policy::kStateFromCenter,
      pol.index[pol.n_obs] = short(inner.x_pos(i) + a), pol.axis[pol.n_obs++] = short(a);
  for (int i = 0; i < 2 * inner.n_particles; ++i)
    pol.feature[pol.n_obs] = Policy::kState, pol.index[pol.n_obs++] = short(inner.x_vel(0) + i);
  pol.feature[pol.n_obs] = Policy::kCenter, pol.axis[pol.n_obs++] = 0;
  pol.n_layers = 2;
  pol.width[0] = pol.n_obs, pol.width[1] = 6, pol.width[2] = inner.nu();
  pol.activation[0] = pol.activation[1] = Policy::kTanh;
  pol.clamp_lo = -0.8, pol.clamp_hi = 0.8;
  pol.noise = true;  // ν = 0.01 on every observation, each rollout its own seed
  pol.delay = 2;     // two pending actions in the state
  const Controlled<MassSpring> m(inner, pol);
  const Loss loss = ms_loss(c);
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 12;
  const Batch<S> inner_batch = ms_batch<S>(inner, r, B, T, 20261206u);
  Batch<S> batch;
  batch.resize(B, m.nx(), m.nu(), m.np(), T);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> w(0.0, 0.5);
  for (int b = 0; b < B; ++b) {
    std::copy(inner_batch.x0_of(b), inner_batch.x0_of(b) + inner.nx(), batch.x0_of(b));
    std::copy(inner_batch.u_of(b), inner_batch.u_of(b) + long(T) * m.nu(), batch.u_of(b));
    std::copy(inner_batch.theta_of(b), inner_batch.theta_of(b) + inner.np(), batch.theta_of(b));
    S* p = batch.theta_of(b);
    for (int i = 0; i < pol.n_obs; ++i)
      p[pol.obs_scale(i)] = S(i < 2 ? 1.0 : 2.0), p[pol.obs_center(i)] = S(0);
    for (int q = pol.layer_begin(0); q < pol.action_scale(0); ++q) p[q] = S(w(rng));
    for (int a = 0; a < pol.n_actions(); ++a) p[pol.action_scale(a)] = S(1);
    for (int i = 0; i < pol.n_obs; ++i) p[pol.obs_noise(i)] = S(0.01);
    p[pol.noise_seed()] = S(b);
  }
  constexpr bool f64 = std::is_same<S, double>::value;
  for (bool want_grad : {false, true}) {
    SCOPED_TRACE(want_grad ? "forward+backward" : "forward only");
    BatchResult<S> cpu, gpu;
    BatchResult<double> ref;
    run_batch(BackendKind::kCpu, m, loss, sh, batch, want_grad, cpu);
    run_batch(BackendKind::kCuda, m, loss, sh, batch, want_grad, gpu);
    if (!f64) run_batch(BackendKind::kCpu, m, loss, sh, to_float64(batch), want_grad, ref);
    expect_ms_match(gpu.loss, cpu.loss, ref.loss, B, 1, "loss");
    if (want_grad) {
      expect_ms_match(gpu.grad_x0, cpu.grad_x0, ref.grad_x0, B, m.nx(), "dL/dx0");
      expect_ms_match(gpu.grad_u, cpu.grad_u, ref.grad_u, B, long(T) * m.nu(), "dL/du");
      expect_ms_match(gpu.grad_theta, cpu.grad_theta, ref.grad_theta, B, m.np(), "dL/dtheta");
      double wnorm = 0;  // the controller's weights get a gradient
      for (int q = pol.layer_begin(0); q < pol.action_scale(0); ++q)
        wnorm = std::max(wnorm, std::fabs(double(cpu.grad_theta[size_t(q)])));
      EXPECT_GT(wnorm, 1e-6);
    }
  }
}

TEST(CudaParityMassSpring, ControlledFloat64MatchesCpu) {
  STEER_SKIP_WITHOUT_CUDA();
  check_controlled_parity<double>();
}
TEST(CudaParityMassSpring, ControlledFloat32MatchesCpu) {
  STEER_SKIP_WITHOUT_CUDA();
  check_controlled_parity<float>();
}

TEST(CudaParityMassSpring, Float64CheckpointIntervalsAndTrajectory) {
  STEER_SKIP_WITHOUT_CUDA();
  for (int K : {1, 200}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    check_ms_parity<double>({kRaw, true}, 33, 200, K, 20);
  }
}

// one rollout, and fewer rollouts than a block has warps
TEST(CudaParityMassSpring, Float64TinyBatches) {
  STEER_SKIP_WITHOUT_CUDA();
  check_ms_parity<double>({kSinusoid, false}, 1, 50);
  check_ms_parity<double>({kSinusoid, true}, 3, 50);
}

// device passes of 30 + 30 + 30 + 10 rollouts give the whole batch's results, bitwise
TEST(CudaParityMassSpring, ChunkedPassesAreBitwiseIdentical) {
  STEER_SKIP_WITHOUT_CUDA();
  const MsCase c{kRaw, true};
  const Robot r = ms_robot(c);
  const MassSpring m = ms_model(c, r);
  RolloutShape sh;
  sh.steps = 100;
  sh.checkpoint_every = 10;
  sh.traj_stride = 25;
  const Batch<double> batch = ms_batch<double>(m, r, 100, sh.steps, 5u);
  BatchResult<double> whole, chunked;
  CudaRunStats s_whole, s_chunked;
  cuda_run_batch_ex(m, ms_loss(c), sh, batch, true, whole, CudaRunOptions{}, &s_whole);
  CudaRunOptions opt;
  opt.max_chunk = 30;
  cuda_run_batch_ex(m, ms_loss(c), sh, batch, true, chunked, opt, &s_chunked);
  EXPECT_EQ(s_whole.chunks, 1);
  EXPECT_EQ(s_chunked.chunks, 4);
  EXPECT_EQ(whole.loss, chunked.loss);
  EXPECT_EQ(whole.grad_x0, chunked.grad_x0);
  EXPECT_EQ(whole.grad_u, chunked.grad_u);
  EXPECT_EQ(whole.grad_theta, chunked.grad_theta);
  EXPECT_EQ(whole.traj, chunked.traj);
  for (std::size_t b = 0; b < whole.diag.size(); ++b) {
    EXPECT_EQ(whole.diag[b].contact_hash, chunked.diag[b].contact_hash) << b;
    EXPECT_EQ(whole.diag[b].adj_x0_norm, chunked.diag[b].adj_x0_norm) << b;
  }
}

// the mass-spring reference adjoint is host-only, and a model without its topology cannot
// run: both are argument errors, reported before the device is asked for (so these run on
// machines without a GPU too)
TEST(CudaParityMassSpring, ReferenceAdjointIsRejected) {
  const MsCase c{kSinusoid, false};
  const Robot r = ms_robot(c);
  const MassSpring m = ms_model(c, r);
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 5;
  sh.reference_adjoint = true;
  const Batch<double> batch = ms_batch<double>(m, r, 4, sh.steps, 3u);
  BatchResult<double> out;
  try {
    run_batch(BackendKind::kCuda, m, ms_loss(c), sh, batch, true, out);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host-only"), std::string::npos) << e.what();
  }
}
// loss.com_target is host-only (not compiled into the kernels, loss.h): the cuda backend refuses
// it by name before the device is asked for
TEST(CudaParityMassSpring, ComTargetIsRejected) {
  const MsCase c{kSinusoid, false};
  const Robot r = ms_robot(c);
  const MassSpring m = ms_model(c, r);
  Loss loss = ms_loss(c);
  loss.com_target = true;
  loss.com_target_axes = 2;
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 5;
  const Batch<double> batch = ms_batch<double>(m, r, 4, sh.steps, 3u);
  BatchResult<double> out;
  try {
    run_batch(BackendKind::kCuda, m, loss, sh, batch, true, out);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("loss.com_target"), std::string::npos) << e.what();
  }
}
TEST(CudaParityMassSpring, MissingTopologyIsRejected) {
  const MsCase c{kSinusoid, false};
  const Robot r = ms_robot(c);
  MassSpring m = ms_model(c, r);
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 5;
  const Batch<double> batch = ms_batch<double>(m, r, 4, sh.steps, 3u);
  m.topo = nullptr;
  BatchResult<double> out;
  EXPECT_THROW(run_batch(BackendKind::kCuda, m, ms_loss(c), sh, batch, true, out),
               std::invalid_argument);
}

}  // namespace
}  // namespace steer
