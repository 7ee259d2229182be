// The binomial (Revolve) checkpoint schedule of include/steer/rollout.h and its config key
// simulation.checkpoint_memory_mb (src/config/checkpoint_plan.cpp): gradients bitwise identical to
// storing every state (K = 1) for every snapshot count, the forward steps the sweep executes equal
// to Griewank & Walther's r·T − β(s + 1, r − 1) (the optimum, checked against a brute-force
// recursion), scratch memory within the budget, and budgets too small refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_errors.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "problem/problem.h"
#include "steer/backend.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"
#include "steer/rollout.h"

namespace steer {
namespace {

RolloutShape uniform_shape(int T, int K) {
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K;
  return sh;
}

RolloutShape binomial_shape(int T, int s) {
  RolloutShape sh;
  sh.steps = T;
  sh.schedule = CheckpointSchedule::kBinomial;
  sh.snapshots = s;
  return sh;
}

// β(s, r) = C(s + r, s) by the multiplicative formula in 128 bits, independent of
// binomial_reach's recurrence
long long beta(int s, int r) {
  if (r < 0) return 0;
  const int n = s + r, k = std::min(s, r);
  unsigned __int128 c = 1;
  for (int i = 0; i < k; ++i) c = c * unsigned(n - i) / unsigned(i + 1);
  return (long long)c;
}

template <class S>
bool bitwise_equal(const std::vector<S>& a, const std::vector<S>& b) {
  // (an empty vector's data() may be null, which memcmp must not get even for 0 bytes)
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(S)) == 0);
}

// every result the backward sweep writes, element by element
template <class S>
void expect_same_gradients(const BatchResult<S>& ref, const BatchResult<S>& r,
                           const std::string& what) {
  ASSERT_EQ(ref.grad_u.size(), r.grad_u.size()) << what;
  EXPECT_TRUE(bitwise_equal(ref.loss, r.loss)) << what;
  for (size_t i = 0; i < ref.grad_x0.size(); ++i)
    EXPECT_EQ(ref.grad_x0[i], r.grad_x0[i]) << what << ", x0 slot " << i;
  for (size_t i = 0; i < ref.grad_theta.size(); ++i)
    EXPECT_EQ(ref.grad_theta[i], r.grad_theta[i]) << what << ", θ slot " << i;
  EXPECT_TRUE(bitwise_equal(ref.grad_u, r.grad_u)) << what;
  for (size_t b = 0; b < ref.diag.size(); ++b) {
    EXPECT_EQ(ref.diag[b].adj_seed_norm, r.diag[b].adj_seed_norm) << what;
    EXPECT_EQ(ref.diag[b].adj_x0_norm, r.diag[b].adj_x0_norm) << what;
    EXPECT_EQ(ref.diag[b].event_step, r.diag[b].event_step) << what;
  }
}

// ---- the schedule's arithmetic ----

TEST(BinomialSchedule, ReachIsTheLeastRepetitionCount) {
  for (int s = 1; s <= 8; ++s)
    for (long long l = 1; l <= 400; ++l) {
      const BinomialReach q = binomial_reach(l, s);
      EXPECT_EQ(q.beta, beta(s, q.r)) << "s " << s << " l " << l;
      EXPECT_EQ(q.beta_prev, beta(s, q.r - 1)) << "s " << s << " l " << l;
      EXPECT_GE(q.beta, l);
      if (q.r > 0) {
        EXPECT_LT(q.beta_prev, l);
      }
    }
  EXPECT_EQ(binomial_reach(10, 2).r, 3);  // β(2, 3) = C(5, 2) = 10
  EXPECT_EQ(binomial_reach(11, 2).r, 4);
  EXPECT_EQ(binomial_reach(1, 5).r, 0);
  // large horizons stay exact in 64 bits: β(2, r) ≥ 10^8 at r = 14141
  EXPECT_EQ(binomial_reach(100000000, 2).r, 14141);
  EXPECT_EQ(binomial_forward_steps(100000000, 2), 14141LL * 100000000 - beta(3, 14140));
}

// the closed form r·T − β(s + 1, r − 1) is the optimum of the recursion
// C(l, s) = min_m m + C(m, s) + C(l − m, s − 1), C(1, s) = 0, C(l, 1) = l(l − 1)/2
TEST(BinomialSchedule, ClosedFormIsTheOptimalRecomputeCount) {
  const int L = 70, Smax = 7;
  std::vector<std::vector<long long>> C(L + 1, std::vector<long long>(Smax + 1, 0));
  for (int l = 1; l <= L; ++l)
    for (int s = 1; s <= Smax; ++s) {
      if (l == 1) continue;
      if (s == 1) {
        C[l][s] = (long long)l * (l - 1) / 2;
        continue;
      }
      long long best = -1;
      for (int m = 1; m < l; ++m) {
        const long long c = m + C[m][s] + C[l - m][s - 1];
        if (best < 0 || c < best) best = c;
      }
      C[l][s] = best;
    }
  for (int l = 1; l <= L; ++l)
    for (int s = 1; s <= Smax; ++s) {
      EXPECT_EQ(binomial_forward_steps(l, s), C[l][s]) << "l " << l << " s " << s;
      // and the split rule stays inside the range that keeps it optimal
      if (l >= 2 && s >= 2) {
        const long long m = binomial_split(l, s);
        EXPECT_EQ(m + C[m][s] + C[l - m][s - 1], C[l][s]) << "l " << l << " s " << s << " m " << m;
      }
    }
}

// ---- the projectile: bouncing on the penalty ground, landing, terminal and effort terms ----

struct ProjectileCase {
  Projectile m;
  Loss loss;
  Batch<double> batch;
};

ProjectileCase projectile_case(int B, int T, unsigned seed = 5) {
  ProjectileCase c;
  c.m.dim = 2;
  c.m.dt = 0.004;
  c.m.ground = Projectile::kGroundPenalty;
  c.loss.n_terminal = 2;
  c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = 1.0, c.loss.terminal_weight[0] = 1.0;
  c.loss.terminal_index[1] = 3, c.loss.terminal_target[1] = 0.0, c.loss.terminal_weight[1] = 0.2;
  c.loss.effort_weight = 1e-3;
  c.loss.landing = true;
  c.loss.vertical = 1;
  c.loss.n_landing = 1;
  c.loss.landing_index[0] = 0;
  c.loss.landing_target[0] = 0.7;
  c.loss.landing_weight = 2.0;
  c.batch.resize(B, 4, 2, 6, T);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1, 1);
  for (int b = 0; b < B; ++b) {
    double* x = c.batch.x0_of(b);
    x[0] = 0.1 * uni(rng), x[1] = 0.3 + 0.1 * uni(rng), x[2] = 1 + uni(rng), x[3] = uni(rng);
    double* p = c.batch.theta_of(b);
    p[0] = 9.81, p[1] = 0.2 + 0.1 * uni(rng), p[2] = 1.0 + 0.2 * uni(rng), p[3] = 2e3, p[4] = 3.0,
    p[5] = 5e-3;
    double* u = c.batch.u_of(b);
    for (int i = 0; i < T * 2; ++i) u[i] = 0.5 * uni(rng);
  }
  return c;
}

BatchResult<double> run(const ProjectileCase& c, const RolloutShape& sh) {
  BatchResult<double> out;
  cpu_run_batch<Projectile, double>(c.m, c.loss, sh, c.batch, true, out, 1);
  return out;
}

TEST(BinomialSchedule, ProjectileGradientsBitwiseIdenticalToStoringEveryState) {
  // (T, s): one step; the smallest budget; β(s, r) exactly T (β(2, 3) = 10, β(3, 3) = 20,
  // β(4, 3) = 35, β(2, 30) = 496); more snapshots than steps; T ≫ s
  const std::vector<std::pair<int, int>> cases = {
      {1, 1},   {1, 2},   {2, 2},    {10, 2},    {20, 3}, {35, 4},   {496, 2},
      {500, 2}, {500, 5}, {500, 40}, {300, 600}, {97, 1}, {3000, 3}, {3000, 12}};
  for (const auto& [T, s] : cases) {
    const ProjectileCase c = projectile_case(3, T);
    const BatchResult<double> ref = run(c, uniform_shape(T, 1));
    const RolloutShape sh = binomial_shape(T, s);
    const BatchResult<double> r = run(c, sh);
    const std::string what = "T " + std::to_string(T) + " s " + std::to_string(s);
    expect_same_gradients(ref, r, what);
    const int slots = std::min(s, T);
    const int reps = binomial_reach(T, slots).r;
    for (const RolloutDiag& d : r.diag) {
      EXPECT_EQ(d.recompute_steps, binomial_forward_steps(T, slots)) << what;
      EXPECT_LE(d.recompute_steps, (long long)reps * T) << what;
    }
    if (T >= 300) {
      // not trivial: the projectiles landed and bounced, the gradients are nonzero
      EXPECT_GE(ref.diag[0].event_step, 0) << what;
      EXPECT_GT(ref.diag[0].contact_steps, 0) << what;
      EXPECT_GT(std::fabs(ref.grad_theta[Projectile::kGroundStiffness]), 0.0) << what;
    }
  }
}

// the landing crossing in the last step: the landing adjoint reads x_T there
TEST(BinomialSchedule, LandingInTheLastStepReadsTheFinalState) {
  const ProjectileCase probe = projectile_case(1, 400, 11);
  const BatchResult<double> p = run(probe, uniform_shape(400, 1));
  const int e = p.diag[0].event_step;
  ASSERT_GT(e, 10);
  for (int T : {e + 1, e + 2}) {
    const ProjectileCase c = projectile_case(1, T, 11);
    const BatchResult<double> ref = run(c, uniform_shape(T, 1));
    ASSERT_EQ(ref.diag[0].event_step, e);
    for (int s : {2, 3, 7})
      expect_same_gradients(ref, run(c, binomial_shape(T, s)),
                            "T " + std::to_string(T) + " s " + std::to_string(s));
  }
}

// the uniform schedule recomputes every segment once: T forward steps
TEST(BinomialSchedule, UniformScheduleRecomputesEachStepOnce) {
  const ProjectileCase c = projectile_case(2, 101);
  for (int K : {1, 10, 11, 101}) {
    const BatchResult<double> r = run(c, uniform_shape(101, K));
    EXPECT_EQ(r.diag[0].recompute_steps, 101) << "K " << K;
  }
}

TEST(BinomialSchedule, Float32IsBitwiseIdenticalToItsOwnK1) {
  const int T = 400;
  const ProjectileCase c = projectile_case(2, T);
  Batch<float> bf;
  bf.resize(2, 4, 2, 6, T);
  for (size_t i = 0; i < bf.x0.size(); ++i) bf.x0[i] = float(c.batch.x0[i]);
  for (size_t i = 0; i < bf.u.size(); ++i) bf.u[i] = float(c.batch.u[i]);
  for (size_t i = 0; i < bf.theta.size(); ++i) bf.theta[i] = float(c.batch.theta[i]);
  BatchResult<float> ref, r;
  cpu_run_batch<Projectile, float>(c.m, c.loss, uniform_shape(T, 1), bf, true, ref, 1);
  cpu_run_batch<Projectile, float>(c.m, c.loss, binomial_shape(T, 4), bf, true, r, 1);
  expect_same_gradients(ref, r, "float32 T 400 s 4");
}

// the forward pass alone (no gradient) gives the same loss and diagnostics
TEST(BinomialSchedule, ForwardOnlyMatchesUniform) {
  const ProjectileCase c = projectile_case(3, 250);
  BatchResult<double> a, b;
  cpu_run_batch<Projectile, double>(c.m, c.loss, uniform_shape(250, 16), c.batch, false, a, 1);
  cpu_run_batch<Projectile, double>(c.m, c.loss, binomial_shape(250, 3), c.batch, false, b, 1);
  EXPECT_TRUE(bitwise_equal(a.loss, b.loss));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.diag[i].contact_hash, b.diag[i].contact_hash);
}

// scratch per rollout: s snapshots + x_T + 3 working states + λ, λ_prev, and s ints
TEST(BinomialSchedule, ScratchIsFixedBySnapshotsNotByHorizon) {
  const int nx = 4;
  for (int T : {1000, 100000}) {
    const RolloutShape sh = binomial_shape(T, 10);
    EXPECT_EQ(sh.checkpoint_slots(), 11);
    EXPECT_EQ(sh.segment_slots(), 3);
    EXPECT_EQ(sh.stack_slots(), 10);
    EXPECT_EQ(rollout_scratch_bytes<double>(sh, nx), (10 + 1 + 3 + 2) * nx * 8 + 10 * 4);
  }
  // snapshots beyond T are never filled and not allocated
  EXPECT_EQ(binomial_shape(5, 10).checkpoint_slots(), 6);
  // the uniform ⌈√T⌉ schedule grows with T
  EXPECT_EQ(rollout_scratch_bytes<double>(uniform_shape(10000, 100), nx), (101 + 101 + 2) * nx * 8);
}

TEST(BinomialSchedule, BadShapesAreRejected) {
  const ProjectileCase c = projectile_case(1, 10);
  BatchResult<double> out;
  RolloutShape sh = binomial_shape(10, 0);
  EXPECT_THROW((cpu_run_batch<Projectile, double>(c.m, c.loss, sh, c.batch, true, out)),
               std::invalid_argument);
  sh.snapshots = 1;
  sh.checkpoint_every = 0;  // unused by the binomial schedule
  EXPECT_NO_THROW((cpu_run_batch<Projectile, double>(c.m, c.loss, sh, c.batch, true, out)));
}

// ---- the stored forward pass (RolloutShape::store_forward): every state kept, no recompute ----

// a model without a step tape (the projectile: penalty ground, landing, terminal and effort
// terms) gives the bits of K = 1 and K = ⌈√T⌉ with nothing recomputed, also when the landing
// crossing is in the last step (its adjoint reads x_T from the stored states)
TEST(StoredForward, ProjectileGradientsBitwiseIdenticalWithoutRecompute) {
  for (int T : {1, 2, 37, 500}) {
    const ProjectileCase c = projectile_case(3, T);
    RolloutShape stored = uniform_shape(T, int(std::ceil(std::sqrt(double(T)))));
    stored.store_forward_bytes = 1 << 20;
    const BatchResult<double> ref = run(c, uniform_shape(T, 1));
    const BatchResult<double> r = run(c, stored);
    const std::string what = "T " + std::to_string(T);
    expect_same_gradients(ref, r, what);
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(ref.diag[b].recompute_steps, T) << what;
      EXPECT_EQ(r.diag[b].recompute_steps, 0) << what;
      EXPECT_EQ(ref.diag[b].contact_hash, r.diag[b].contact_hash) << what;
    }
  }
}

// the budget counts T + 1 states per thread: one byte short and the sweep recomputes
TEST(StoredForward, ABudgetBelowTheStatesFallsBackToTheRecompute) {
  const int T = 120;
  const ProjectileCase c = projectile_case(2, T);
  const long long need = stored_forward_bytes<Projectile, double>(c.m, T);
  EXPECT_EQ(need, (T + 1) * 4 * 8LL);  // no step tape
  RolloutShape sh = uniform_shape(T, 11);
  sh.store_forward_bytes = need;
  EXPECT_EQ(run(c, sh).diag[0].recompute_steps, 0);
  sh.store_forward_bytes = need - 1;
  EXPECT_EQ(run(c, sh).diag[0].recompute_steps, T);
  // the binomial schedule never stores the forward pass
  RolloutShape bin = binomial_shape(T, 3);
  bin.store_forward_bytes = 1 << 20;
  EXPECT_EQ(run(c, bin).diag[0].recompute_steps, binomial_forward_steps(T, 3));
  EXPECT_FALSE((cpu_working_shape<Projectile, double>(c.m, bin, true).store_forward));
  // nor a forward pass without a gradient
  EXPECT_FALSE((cpu_working_shape<Projectile, double>(c.m, sh, false).store_forward));
}

// store_forward is the CPU backend's working shape: given by hand, it must have one segment
TEST(StoredForward, AShapeWithStoreForwardNeedsOneSegment) {
  const ProjectileCase c = projectile_case(1, 10);
  BatchResult<double> out;
  RolloutShape sh = uniform_shape(10, 3);
  sh.store_forward = true;
  EXPECT_THROW((cpu_run_batch<Projectile, double>(c.m, c.loss, sh, c.batch, true, out)),
               std::invalid_argument);
  sh.checkpoint_every = 10;
  EXPECT_NO_THROW((cpu_run_batch<Projectile, double>(c.m, c.loss, sh, c.batch, true, out)));
}

// ---- the mass-spring model: DiffTaichi robot A as shipped ----

struct RobotA {
  ExperimentConfig c;
  MassSpring m;
  Batch<double> batch;
  RobotA() {
    c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/difftaichi_robot_a.json");
    c = replicate_rollout0(c, 2);
    m = c.model_state<MassSpringSetup>().model;
    m.topo = c.model_state<MassSpringSetup>().topology.data();
    batch = build_batch(c);
    // distinct actuation per rollout so that the two rollouts differ
    for (int a = 0; a < m.n_actuators; ++a)
      for (int j = 0; j < m.n_phases; ++j) {
        batch.theta_of(0)[m.p_weight(a, j)] = 0.2 * std::sin(1.3 * a + 0.7 * j);
        batch.theta_of(1)[m.p_weight(a, j)] = 0.3 * std::cos(0.9 * a + 1.1 * j);
      }
  }
  BatchResult<double> run(const RolloutShape& sh) const {
    BatchResult<double> out;
    cpu_run_batch<MassSpring, double>(m, c.loss, sh, batch, true, out, 1);
    return out;
  }
};

TEST(BinomialSchedule, MassSpringRobotAGradientsBitwiseIdenticalToStoringEveryState) {
  const RobotA a;
  const int T = a.c.steps;
  ASSERT_EQ(T, 681);
  const BatchResult<double> ref = a.run(uniform_shape(T, 1));
  for (int s : {2, 5, 27, 681}) {
    const BatchResult<double> r = a.run(binomial_shape(T, s));
    expect_same_gradients(ref, r, "robot A s " + std::to_string(s));
    EXPECT_EQ(r.diag[0].recompute_steps, binomial_forward_steps(T, s));
    EXPECT_LE(r.diag[0].recompute_steps, (long long)binomial_reach(T, s).r * T);
  }
  EXPECT_GT(ref.diag[0].contact_steps, 0);
  double g = 0;
  for (double v : ref.grad_theta) g = std::max(g, std::fabs(v));
  EXPECT_GT(g, 0.0);
}

// ---- simulation.checkpoint_memory_mb ----

nlohmann::json projectile_config(int steps) {
  return nlohmann::json::parse(R"({
    "name": "budget",
    "model": {"type": "projectile", "dim": 2, "ground": {"type": "penalty", "stiffness": 2000.0, "damping": 3.0, "smoothing": 0.005}},
    "simulation": {"dt": 0.004, "steps": )" +
                               std::to_string(steps) + R"(},
    "initial_state": {"position": [0.0, 0.4], "velocity": [1.5, 0.5]},
    "controls": {"initial": [0.2, -0.1]},
    "batch": {"size": 2, "seed": 3, "randomize": {"x0.velocity.x": [1.0, 2.0]}},
    "loss": {"terminal": [{"state": "position.x", "target": 1.0}], "control_effort": 0.001,
             "landing": {"target": [0.8], "weight": 1.0}},
    "variables": {"x0.velocity.x": {"lower": 0.0, "upper": 10.0}, "theta.drag": {"lower": 0.0, "upper": 1.0},
                  "controls": {}},
    "validation": {"enabled": false}
  })");
}

TEST(CheckpointBudget, WithoutABudgetTheUniformSquareRootScheduleRuns) {
  const ExperimentConfig c = parse_config(projectile_config(10000));
  const CheckpointPlan p = c.checkpoint_plan();
  EXPECT_FALSE(p.shape.binomial());
  EXPECT_EQ(p.shape.checkpoint_every, 100);
  EXPECT_EQ(p.recompute_factor, 1.0);
  EXPECT_EQ(p.scratch_bytes, (101 + 101 + 2) * 4 * 8);
}

TEST(CheckpointBudget, ABudgetThatHoldsTheUniformScheduleKeepsIt) {
  nlohmann::json j = projectile_config(10000);
  j["simulation"]["checkpoint_memory_mb"] = 1.0;
  const CheckpointPlan p = parse_config(j).checkpoint_plan();
  EXPECT_FALSE(p.shape.binomial());
  EXPECT_EQ(p.shape.checkpoint_every, 100);
}

TEST(CheckpointBudget, ATightBudgetChoosesTheBinomialScheduleWithinIt) {
  for (double mb : {0.004, 0.002, 0.0005, 0.0003}) {
    for (const char* precision : {"float64", "float32"}) {
      nlohmann::json j = projectile_config(10000);
      j["simulation"]["checkpoint_memory_mb"] = mb;
      j["simulation"]["precision"] = precision;
      const ExperimentConfig c = parse_config(j);
      const CheckpointPlan p = c.checkpoint_plan();
      const std::string what = std::to_string(mb) + " MiB " + precision;
      const long long budget = (long long)std::floor(mb * 1048576.0);
      const long long state = 4LL * (std::string(precision) == "float32" ? 4 : 8);
      if (state * 204 <= budget) {  // the uniform K = 100 schedule fits
        EXPECT_FALSE(p.shape.binomial()) << what;
        continue;
      }
      ASSERT_TRUE(p.shape.binomial()) << what;
      EXPECT_LE(p.scratch_bytes, budget) << what;
      // the largest s that fits: one more snapshot would not
      EXPECT_GT(p.scratch_bytes + state + 4, budget) << what;
      EXPECT_EQ(p.shape.snapshots, (budget - 6 * state) / (state + 4)) << what;
      EXPECT_EQ(p.repetitions, binomial_reach(10000, p.shape.snapshots).r) << what;
      EXPECT_EQ(p.recompute_steps, binomial_forward_steps(10000, p.shape.snapshots)) << what;
      EXPECT_DOUBLE_EQ(p.recompute_factor, double(p.recompute_steps) / 10000) << what;
      EXPECT_LE(p.recompute_factor, p.repetitions) << what;
      const nlohmann::json e = c.to_json();
      EXPECT_EQ(e["simulation"]["checkpoint_schedule"], "binomial");
      EXPECT_EQ(e["simulation"]["checkpoint_memory_mb"], mb);
      const nlohmann::json pj = p.to_json();
      EXPECT_EQ(pj["schedule"], "binomial");
      EXPECT_EQ(pj["snapshots"], p.shape.snapshots);
      EXPECT_EQ(pj["repetitions"], p.repetitions);
    }
  }
}

TEST(CheckpointBudget, BudgetsBelowTwoSnapshotsAreRefusedByName) {
  // projectile float64: a state is 32 bytes; x_T, 3 working states, λ, λ_prev = 192 bytes,
  // each snapshot 36: the least budget is 264 bytes = 0.000251770 MiB
  nlohmann::json j = projectile_config(1000);
  j["simulation"]["checkpoint_memory_mb"] = 0.0002;  // 209 bytes
  testing::expect_config_error(j, {"config: simulation.checkpoint_memory_mb", "2 snapshots",
                                   "accepted range [0.00025177, 1e6] MiB"});
  j["simulation"]["checkpoint_memory_mb"] = 263.0 / 1048576.0;
  testing::expect_config_error(j, {"simulation.checkpoint_memory_mb", "accepted range"});
  j["simulation"]["checkpoint_memory_mb"] = 264.0 / 1048576.0;  // the edge is accepted
  const CheckpointPlan p = parse_config(j).checkpoint_plan();
  EXPECT_TRUE(p.shape.binomial());
  EXPECT_EQ(p.shape.snapshots, 2);
  EXPECT_EQ(p.scratch_bytes, 264);
  j["simulation"]["checkpoint_memory_mb"] = 0;
  testing::expect_config_error(j,
                               {"simulation.checkpoint_memory_mb", "out of range", "(0, 1e+06]"});
  j["simulation"]["checkpoint_memory_mb"] = "1";
  testing::expect_config_error(j, {"simulation.checkpoint_memory_mb", "expected a number"});
}

TEST(CheckpointBudget, AnExplicitIntervalThatDoesNotFitIsRefused) {
  nlohmann::json j = projectile_config(1000);
  j["simulation"]["checkpoint_memory_mb"] = 0.001;  // 1048 bytes = 32 states
  j["simulation"]["checkpoint_every"] = 10;         // 101 + 11 + 2 states
  testing::expect_config_error(
      j, {"config: simulation.checkpoint_every", "K = 10", "simulation.checkpoint_memory_mb"});
  j["simulation"]["checkpoint_every"] = 1000;  // 2 + 1001 + 2 states
  testing::expect_config_error(j, {"simulation.checkpoint_every"});
}

// simulation.store_forward_mb: 256 MiB per thread by default, 0 turns it off, a per-rollout
// checkpoint budget turns it off; out of range and wrong types are refused by name
TEST(StoredForward, ConfigBudgetAndErrors) {
  nlohmann::json j = projectile_config(400);
  EXPECT_EQ(parse_config(j).checkpoint_plan().shape.store_forward_bytes, 256LL << 20);
  j["simulation"]["store_forward_mb"] = 0.5;
  EXPECT_EQ(parse_config(j).checkpoint_plan().shape.store_forward_bytes, 512LL << 10);
  j["simulation"]["store_forward_mb"] = 0;
  EXPECT_EQ(parse_config(j).checkpoint_plan().shape.store_forward_bytes, 0);
  j["simulation"]["store_forward_mb"] = 64;
  j["simulation"]["checkpoint_memory_mb"] = 1.0;
  EXPECT_EQ(parse_config(j).checkpoint_plan().shape.store_forward_bytes, 0);
  j["simulation"].erase("checkpoint_memory_mb");
  j["simulation"]["store_forward_mb"] = -1;
  testing::expect_config_error(j, {"simulation.store_forward_mb", "[0, 1e+06]"});
  j["simulation"]["store_forward_mb"] = "lots";
  testing::expect_config_error(j, {"simulation.store_forward_mb"});
}

// end to end: the Problem's gradient with the stored forward pass is the recomputed one's, and
// the recomputed steps it counts (the artifact's timings) are 0 and T
TEST(StoredForward, ProblemGradientsAreBitwiseTheSameAndCountNoRecompute) {
  nlohmann::json j = projectile_config(300);
  const ExperimentConfig cs = parse_config(j);
  j["simulation"]["store_forward_mb"] = 0;
  const ExperimentConfig cr = parse_config(j);
  auto ps = make_problem(cs, BackendKind::kCpu, 1);
  auto pr = make_problem(cr, BackendKind::kCpu, 1);
  Evaluation es, er;
  ps->evaluate(ps->initial(), true, es);
  pr->evaluate(pr->initial(), true, er);
  EXPECT_TRUE(bitwise_equal(es.loss, er.loss));
  EXPECT_TRUE(bitwise_equal(es.grad, er.grad));
  EXPECT_EQ(ps->recomputed_rollout_steps, 0);
  EXPECT_EQ(pr->recomputed_rollout_steps, (long long)pr->batch_size() * 300);
}

// end to end through the Problem: the binomial config's gradient is bitwise the uniform one's
TEST(CheckpointBudget, ProblemGradientsAreBitwiseTheSameUnderABudget) {
  nlohmann::json j = projectile_config(2000);
  const ExperimentConfig cu = parse_config(j);
  j["simulation"]["checkpoint_memory_mb"] = 0.0005;  // 524 bytes: s = 9
  const ExperimentConfig cb = parse_config(j);
  ASSERT_TRUE(cb.checkpoint_plan().shape.binomial());
  EXPECT_EQ(cb.checkpoint_plan().shape.snapshots, 9);
  auto pu = make_problem(cu, BackendKind::kCpu, 1);
  auto pb = make_problem(cb, BackendKind::kCpu, 1);
  Evaluation eu, eb;
  pu->evaluate(pu->initial(), true, eu);
  pb->evaluate(pb->initial(), true, eb);
  EXPECT_TRUE(bitwise_equal(eu.loss, eb.loss));
  EXPECT_TRUE(bitwise_equal(eu.grad, eb.grad));
  EXPECT_EQ(eb.diag[0].recompute_steps, cb.checkpoint_plan().recompute_steps);
  EXPECT_GE(eu.diag[0].event_step, 0);
}

}  // namespace
}  // namespace steer
