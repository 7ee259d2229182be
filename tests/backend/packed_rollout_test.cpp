// include/steer/cpu_packed.h: the CPU backend's SIMD path runs cpu_pack_width() rollouts per
// pass, in float64 (PackD) and in float32 (PackF), and must give every rollout the bits the
// scalar path of its precision gives it alone: the loss, every
// gradient, the recorded trajectory and every diagnostic, compared bit for bit (memcmp), for
// batches with full groups and a tail group (spare lanes), and rollouts whose lanes take
// different arms of the model's branches (ground contact in some lanes only, a zero-length
// spring in one lane, rest-position morphology, 3D, raw actuation with a running cost, and
// conservative motion with its energy diagnostics); and the same for the Panda (Articulated:
// euler and implicitfast, torque saturation in some lanes, fingertip contact at different
// plane heights, joint limits, a centre-of-mass loss, a parameter subset, a free swing).
#include "steer/cpu_packed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mass_spring_draws.h"
#include "models/mass_spring/mass_spring_robot.h"
#include "steer/cpu_backend.h"
#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
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

template <class R>
bool same_bits(R a, R b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class R>
void expect_same_bits(const std::vector<R>& a, const std::vector<R>& b, const std::string& what) {
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
    draw_mass_spring_rollout<double>(m, c.r, T, rng, batch.x0_of(b), batch.u_of(b),
                                     batch.theta_of(b));
    double* x = batch.x0_of(b);
    double* p = batch.theta_of(b);
    p[m.p_global(MassSpring::kActuationFrequency)] = 6.0 + 0.5 * b;  // ω differs per lane [rad/s]
    if (b % 3 == 0)
      for (int i = 0; i < m.n_particles; ++i) x[m.x_pos(i) + 1] += 0.05;  // starts 5 cm higher
    if (b % 3 == 1)
      for (int i = 0; i < m.n_particles; i += 2)
        x[m.x_pos(i) + 1] -= 0.004;  // 4 mm into the ground
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
  out.push_back(
      {"wide grid, sinusoid",
       bind_topology(make_mass_spring(wide, 10, MassSpring::kSinusoid, true, 0.004), wide), wide});
  out.push_back({"two cells, raw actuation",
                 bind_topology(make_mass_spring(two, 10, MassSpring::kRaw, true, 0.004), two),
                 two});
  {
    Case c{"two cells, rest-position morphology, a zero-length spring in one lane",
           bind_topology(make_mass_spring(two, 6, MassSpring::kSinusoid, true, 0.004), two), two};
    c.m.rest_from_positions = true;
    c.zero_length = true;
    out.push_back(c);
  }
  out.push_back({"3d tetrahedron, sinusoid",
                 bind_topology(make_mass_spring(tet, 10, MassSpring::kSinusoid, true, 0.004), tet),
                 tet});
  {
    Case c{"two cells, no ground, conservative",
           bind_topology(make_mass_spring(two, 10, MassSpring::kSinusoid, false, 0.004), two), two};
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

// the batch's inputs in precision R (float32: each value rounded)
template <class R>
Batch<R> in_precision(const Batch<double>& b) {
  Batch<R> r;
  r.resize(b.size, b.nx, b.nu, b.np, b.steps);
  std::transform(b.x0.begin(), b.x0.end(), r.x0.begin(), [](double v) { return R(v); });
  std::transform(b.u.begin(), b.u.end(), r.u.begin(), [](double v) { return R(v); });
  std::transform(b.theta.begin(), b.theta.end(), r.theta.begin(), [](double v) { return R(v); });
  return r;
}

// Runs the batch in precision R on the packed path and every rollout alone (B = 1: the scalar
// path), and compares the loss, the diagnostics, the trajectory and, with grad, every gradient
// bit for bit. Returns each rollout's contact steps from its scalar run.
template <class Model, class R = double>
std::vector<int> expect_packed_matches_scalar(const Model& m, const Loss& loss,
                                              const RolloutShape& sh, const Batch<double>& batch64,
                                              bool grad) {
  const Batch<R> batch = in_precision<R>(batch64);
  const int B = batch.size, T = sh.steps;
  EXPECT_TRUE((use_packed_path<Model, R>(m, sh, B)));
  EXPECT_FALSE((use_packed_path<Model, R>(m, sh, 1)));
  BatchResult<R> packed;
  cpu_run_batch<Model, R>(m, loss, sh, batch, grad, packed, 2);
  std::vector<int> contact_steps(B);
  for (int b = 0; b < B; ++b) {
    const std::string what =
        "rollout " + std::to_string(b) + (grad ? " (with gradients)" : " (forward)");
    Batch<R> one;
    one.resize(1, m.nx(), m.nu(), m.np(), T);
    std::copy(batch.x0_of(b), batch.x0_of(b) + m.nx(), one.x0.begin());
    std::copy(batch.u_of(b), batch.u_of(b) + T * m.nu(), one.u.begin());
    std::copy(batch.theta_of(b), batch.theta_of(b) + m.np(), one.theta.begin());
    BatchResult<R> alone;
    cpu_run_batch<Model, R>(m, loss, sh, one, grad, alone, 1);
    EXPECT_TRUE(same_bits(packed.loss[b], alone.loss[0]))
        << what << ": " << packed.loss[b] << " vs " << alone.loss[0];
    EXPECT_TRUE(std::isfinite(alone.loss[0])) << what;
    expect_same_diag(packed.diag[b], alone.diag[0], what);
    const int ts = sh.traj_slots();
    expect_same_bits(std::vector<R>(packed.traj.begin() + size_t(b) * ts * m.nx(),
                                    packed.traj.begin() + size_t(b + 1) * ts * m.nx()),
                     alone.traj, what + ": trajectory");
    contact_steps[b] = alone.diag[0].contact_steps;
    if (!grad) continue;
    auto slice = [](const std::vector<R>& v, int b, size_t n) {
      return std::vector<R>(v.begin() + size_t(b) * n, v.begin() + size_t(b + 1) * n);
    };
    expect_same_bits(slice(packed.grad_x0, b, m.nx()), alone.grad_x0, what + ": dL/dx0");
    expect_same_bits(slice(packed.grad_u, b, size_t(T) * m.nu()), alone.grad_u, what + ": dL/du");
    expect_same_bits(slice(packed.grad_theta, b, m.np()), alone.grad_theta, what + ": dL/dθ");
    bool any_nonzero = false;
    for (const std::vector<R>* g : {&alone.grad_x0, &alone.grad_u, &alone.grad_theta})
      for (R v : *g) any_nonzero = any_nonzero || v != R(0);
    EXPECT_TRUE(any_nonzero) << what << ": all-zero gradients would make the comparison vacuous";
  }
  return contact_steps;
}

TEST(PackedRollout, EveryRolloutGetsTheBitsOfItsScalarRun) {
  const int T = 60, K = 8;                 // 8 segments, the last one short
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
    for (bool grad : {false, true})
      for (bool f32 : {false, true}) {
        SCOPED_TRACE(f32 ? "float32" : "float64");
        const std::vector<int> contact =
            f32 ? expect_packed_matches_scalar<MassSpring, float>(m, loss, sh, batch, grad)
                : expect_packed_matches_scalar<MassSpring, double>(m, loss, sh, batch, grad);
        const int contact_min = *std::min_element(contact.begin(), contact.end());
        const int contact_max = *std::max_element(contact.begin(), contact.end());
        // the draws must put lanes in and out of contact at different steps (the ground's select
        // arms then differ across a pack), or have no ground at all
        if (m.ground) {
          EXPECT_GT(contact_max, 0);
          EXPECT_LT(contact_min, contact_max)
              << "every lane touched the ground as often: the lanes never diverge";
        }
      }
    if (!m.ground) {
      BatchResult<double> out;
      cpu_run_batch<MassSpring, double>(m, loss, sh, batch, false, out, 1);
      EXPECT_EQ(out.diag[0].conservative, 1);
      EXPECT_GT(out.diag[0].energy_max_dev, 0.0);
    }
  }
}

// ---- the Panda (Articulated, euler and implicitfast, the implicit servo) on the packed path ----

struct PandaCase {
  std::string name;
  Articulated m;
  std::vector<double> theta;  // nominal θ
  Loss loss;
  bool saturate = false;      // some lanes push joints 1-4 far past their force limits
  bool conservative = false;  // gains, damping and controls off: the energy diagnostics run
};

std::vector<PandaCase> panda_cases() {
  const ExperimentConfig c = load_config(std::string(STEER_SOURCE_DIR) + "/configs/panda.json");
  std::vector<PandaCase> out;
  PandaCase base{"", c.model_state<ArticulatedSetup>().model, c.theta, c.loss};
  base.loss.effort_weight = 1e-6;
  {
    PandaCase k = base;
    k.name = "implicitfast, torque limits, saturated lanes";
    k.saturate = true;
    out.push_back(k);
  }
  {
    // fingertip contact: the plane's height differs per lane (in contact from the start, at
    // onset, never), and joint limits 4 mrad around the nominal PD targets (the lanes start
    // within 5 mrad of theirs: some inside the range, some beyond)
    PandaCase k = base;
    k.name = "euler, fingertip contact and joint limits, centre-of-mass loss";
    k.m.integrator = Articulated::kEuler;
    k.m.contact = true;
    k.m.joint_limits = true;
    k.m.limit_stiffness = 300.0;
    k.m.limit_smoothing = 0.01;
    for (int j = 0; j < 7; ++j) {
      const double target = k.theta[k.m.p_joint(j, Articulated::kTarget)];  // [rad]
      k.m.limit_lower[j] = target - 0.004, k.m.limit_upper[j] = target + 0.004;
    }
    k.loss.com = true;
    k.loss.com_axis = 2;
    k.loss.com_weight = 0.5;
    k.saturate = true;
    out.push_back(k);
  }
  {
    PandaCase k = out.back();
    k.name = "implicitfast, contact and joint limits, three parameters' gradient";
    k.m.integrator = Articulated::kImplicitFast;
    k.m.n_grad_params = 3;
    k.m.grad_params[0] = short(k.m.p_body(3, Articulated::kMass));
    k.m.grad_params[1] = short(k.m.p_joint(1, Articulated::kKp));
    k.m.grad_params[2] = short(k.m.p_global(Articulated::kSharpness));
    out.push_back(k);
  }
  {
    // the servo implicit through the saturation, lanes deep in saturation beside lanes within
    // the limits: a pack's lanes may stop iterating at different counts (servo_solve freezes
    // a lane once its Newton step is below rounding)
    PandaCase k = base;
    k.name = "implicitfast, implicit servo (6 Newton iterations), saturated lanes";
    k.m.servo_newton = 6;
    k.saturate = true;
    out.push_back(k);
    k = out[2];
    k.name = "implicitfast, implicit servo, contact and joint limits";
    k.m.servo_newton = 3;
    out.push_back(k);
  }
  {
    PandaCase k = base;
    k.name = "implicitfast, free swing (conservative)";
    k.m.torque_limits = false;
    k.conservative = true;
    for (int j = 0; j < 7; ++j)
      for (int q : {Articulated::kDamping, Articulated::kKp, Articulated::kKv})
        k.theta[k.m.p_joint(j, q)] = 0.0;
    out.push_back(k);
  }
  {
    // rk4 (every force explicit in its four stages; its hand adjoint recomputes them) with the
    // fingertip contact, the joint limits and saturated lanes of the euler case
    PandaCase k = out[1];
    k.name = "rk4, fingertip contact and joint limits, saturated lanes";
    k.m.integrator = Articulated::kRk4;
    out.push_back(k);
  }
  return out;
}

Batch<double> draw_panda_batch(const PandaCase& c, int B, int T, unsigned seed) {
  const Articulated& m = c.m;
  Batch<double> batch;
  batch.resize(B, m.nx(), m.nu(), m.np(), T);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> torque(0.0, 2.0);  // [N·m]
  for (int b = 0; b < B; ++b) {
    // near the PD targets, so that the PD torque alone stays below the force limits
    // (k_p ≤ 4500 N·m/rad: 3 mrad and 0.02 rad/s give ≤ 25 N·m against limits of 12-87 N·m)
    double* p = batch.theta_of(b);
    std::copy(c.theta.begin(), c.theta.end(), p);
    for (int j = 0; j < 7; ++j)
      p[m.p_joint(j, Articulated::kTarget)] += 0.002 * std::sin(3.0 + j + b);
    double* x = batch.x0_of(b);
    for (int j = 0; j < 7; ++j) {
      x[j] = p[m.p_joint(j, Articulated::kTarget)] + 0.003 * std::sin(1.0 + j + 0.9 * b);  // [rad]
      x[7 + j] = 0.02 * std::cos(2.0 + j + 0.7 * b);  // [rad/s]
    }
    if (b % 3 == 2) x[1] += 0.01;  // joint 2 beyond the test's joint-limit range (4 mrad)
    // planes from 0.47 to 0.57 m (the fingertip sits near z = 0.52 m at home)
    p[m.p_global(Articulated::kPlaneHeight)] = 0.47 + 0.02 * (b % 6);
    double* u = batch.u_of(b);
    for (int q = 0; q < T * m.nu(); ++q) u[q] = c.conservative ? 0.0 : torque(rng);
    if (c.saturate && b % 4 == 1)
      for (int k = 0; k < T; ++k)
        for (int j = 0; j < 4; ++j) u[k * m.nu() + j] += (j % 2 ? -150.0 : 150.0);  // limits 87 N·m
  }
  return batch;
}

TEST(PackedRollout, PandaRolloutsGetTheBitsOfTheirScalarRuns) {
  const int T = 40, K = 6;  // 7 segments, the last one short
  const int B = 2 * cpu_pack_width() + 3;
  for (const PandaCase& c : panda_cases()) {
    SCOPED_TRACE(c.name);
    RolloutShape sh;
    sh.steps = T;
    sh.checkpoint_every = K;
    sh.traj_stride = 7;
    const Batch<double> batch = draw_panda_batch(c, B, T, 4321);
    for (bool grad : {false, true})
      for (bool f32 : {false, true}) {
        SCOPED_TRACE(f32 ? "float32" : "float64");
        const std::vector<int> contact =
            f32 ? expect_packed_matches_scalar<Articulated, float>(c.m, c.loss, sh, batch, grad)
                : expect_packed_matches_scalar<Articulated, double>(c.m, c.loss, sh, batch, grad);
        if (c.m.contact) {
          EXPECT_GT(*std::max_element(contact.begin(), contact.end()), 0);
          EXPECT_LT(*std::min_element(contact.begin(), contact.end()),
                    *std::max_element(contact.begin(), contact.end()));
        }
      }
    if (c.m.joint_limits) {
      // some lanes start inside every joint's range and some beyond a limit
      int inside = 0, beyond = 0;
      for (int b = 0; b < B; ++b) {
        bool out_of_range = false;
        for (int j = 0; j < 7; ++j)
          out_of_range = out_of_range || batch.x0_of(b)[j] < c.m.limit_lower[j] ||
                         batch.x0_of(b)[j] > c.m.limit_upper[j];
        (out_of_range ? beyond : inside) += 1;
      }
      EXPECT_GT(inside, 0);
      EXPECT_GT(beyond, 0);
    }
    if (c.conservative) {
      BatchResult<double> out;
      cpu_run_batch<Articulated, double>(c.m, c.loss, sh, batch, false, out, 1);
      EXPECT_EQ(out.diag[0].conservative, 1);
      EXPECT_GT(out.diag[0].energy_max_dev, 0.0);
    }
    if (c.saturate) {
      // at step 0 lane 1's joints 1-4 are on the saturated side of the smooth clamp (the PD
      // torque plus u beyond the force limit by > 10/β) and lane 0's are not, so a pack's
      // lanes take both sides of saturate()'s selects
      const Articulated& m = c.m;
      auto raw0 = [&](int b, int j) {
        const double *x = batch.x0_of(b), *p = batch.theta_of(b);
        return p[m.p_joint(j, Articulated::kKp)] * (p[m.p_joint(j, Articulated::kTarget)] - x[j]) -
               p[m.p_joint(j, Articulated::kKv)] * x[7 + j] + batch.u_of(b)[j];
      };
      const double beta = batch.theta_of(0)[m.p_global(Articulated::kSharpness)];
      for (int j = 0; j < 4; ++j) {
        const double lim = batch.theta_of(0)[m.p_joint(j, Articulated::kForceLimit)];
        EXPECT_GT(std::abs(raw0(1, j)), lim + 10.0 / beta) << "joint " << j;
        EXPECT_LT(std::abs(raw0(0, j)), lim - 10.0 / beta) << "joint " << j;
      }
    }
  }
}

// ---- the stored forward pass (rollout.h, RolloutShape::store_forward) ----

// every output of two runs bit for bit, the recompute count apart
template <class R>
void expect_same_results(const BatchResult<R>& a, const BatchResult<R>& b,
                         const std::string& what) {
  expect_same_bits(a.loss, b.loss, what + ": loss");
  expect_same_bits(a.traj, b.traj, what + ": trajectory");
  expect_same_bits(a.grad_x0, b.grad_x0, what + ": dL/dx0");
  expect_same_bits(a.grad_u, b.grad_u, what + ": dL/du");
  expect_same_bits(a.grad_theta, b.grad_theta, what + ": dL/dθ");
  ASSERT_EQ(a.diag.size(), b.diag.size()) << what;
  for (size_t i = 0; i < a.diag.size(); ++i) {
    RolloutDiag da = a.diag[i], db = b.diag[i];
    da.recompute_steps = db.recompute_steps = 0;
    expect_same_diag(da, db, what + ", rollout " + std::to_string(i));
  }
}

// With a stored forward pass (every state and step tape kept, no recompute) the CPU backend
// gives the bits of the checkpointed sweep: on the packed path (B > 1) and the scalar path
// (B = 1), float64 and float32, for every mass-spring and Panda case; a budget below what the
// pass needs falls back to the recompute.
template <class Model, class R>
void expect_stored_forward_matches_recompute(const Model& m, const Loss& loss,
                                             const Batch<double>& batch64, int K) {
  const int T = batch64.steps;
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = K;
  sh.traj_stride = 7;
  RolloutShape stored = sh;
  stored.store_forward_bytes = 1LL << 30;
  RolloutShape tight = sh;
  tight.store_forward_bytes =
      stored_forward_bytes<Model, R>(m, T) - 1;  // one byte short (scalar path)
  for (int B : {batch64.size, 1}) {
    Batch<double> b64 = batch64;
    if (B == 1) {  // rollout 0 alone
      b64.resize(1, m.nx(), m.nu(), m.np(), T);
      std::copy(batch64.x0_of(0), batch64.x0_of(0) + m.nx(), b64.x0.begin());
      std::copy(batch64.u_of(0), batch64.u_of(0) + size_t(T) * m.nu(), b64.u.begin());
      std::copy(batch64.theta_of(0), batch64.theta_of(0) + m.np(), b64.theta.begin());
    }
    const Batch<R> batch = in_precision<R>(b64);
    const std::string what = "B = " + std::to_string(B);
    BatchResult<R> ref, out, fallback;
    cpu_run_batch<Model, R>(m, loss, sh, batch, true, ref, 2);
    cpu_run_batch<Model, R>(m, loss, stored, batch, true, out, 2);
    expect_same_results(ref, out, what);
    for (int i = 0; i < B; ++i) {
      EXPECT_EQ(ref.diag[i].recompute_steps, T) << what;
      EXPECT_EQ(out.diag[i].recompute_steps, 0) << what << ": the stored forward pass did not run";
    }
    // a forward pass alone is the same run with or without the budget
    BatchResult<R> fwd_ref, fwd;
    cpu_run_batch<Model, R>(m, loss, sh, batch, false, fwd_ref, 2);
    cpu_run_batch<Model, R>(m, loss, stored, batch, false, fwd, 2);
    expect_same_results(fwd_ref, fwd, what + " (forward)");
    if (B == 1) {
      cpu_run_batch<Model, R>(m, loss, tight, batch, true, fallback, 1);
      expect_same_results(ref, fallback, what + " (budget one byte short)");
      EXPECT_EQ(fallback.diag[0].recompute_steps, T)
          << "a budget too small must fall back to the recompute";
    }
  }
}

TEST(PackedRollout, StoredForwardGivesTheRecomputedBits) {
  const int T = 45, K = 8;
  const int B = cpu_pack_width() + 3;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Batch<double> batch = draw_batch(c, B, T, 777);
    expect_stored_forward_matches_recompute<MassSpring, double>(c.m, com_loss(), batch, K);
    expect_stored_forward_matches_recompute<MassSpring, float>(c.m, com_loss(), batch, K);
  }
  for (const PandaCase& c : panda_cases()) {
    SCOPED_TRACE(c.name);
    const Batch<double> batch = draw_panda_batch(c, B, 30, 4321);
    expect_stored_forward_matches_recompute<Articulated, double>(c.m, c.loss, batch, 7);
    expect_stored_forward_matches_recompute<Articulated, float>(c.m, c.loss, batch, 7);
  }
}

// the mass-spring tape's entries lie in one run per buffer (TapeStorage), sized to the robot
TEST(PackedRollout, MassSpringTapesAreSizedToTheRobot) {
  const Case c = cases()[0];
  const MassSpring& m = c.m;
  StepTapes<MassSpring, double> tapes(m, 3);
  ASSERT_EQ(tapes.size(), 3);
  EXPECT_EQ(tapes[1].particle, tapes[0].particle + m.n_particles);
  EXPECT_EQ(tapes[2].spring, tapes[1].spring + m.n_springs);
  EXPECT_EQ(m.step_tape_bytes<double>(),
            (long long)(sizeof(MassSpring::StepTape<double>) +
                        m.n_particles * sizeof(MassSpring::ParticleTape<double>) +
                        m.n_springs * sizeof(MassSpring::SpringTape<double>)));
  const long long inline_arrays =
      MassSpring::kTapeParticles * sizeof(MassSpring::ParticleTape<double>) +
      MassSpring::kTapeSprings * sizeof(MassSpring::SpringTape<double>);  // 80 kB
  EXPECT_LT(5 * m.step_tape_bytes<double>(), inline_arrays)
      << "a small robot's tape must not be sized for the largest";
  EXPECT_EQ((stored_forward_bytes<MassSpring, double>(m, 10)),
            11LL * m.nx() * 8 + 10 * m.step_tape_bytes<double>());
}

// every integrator runs on packs: rk4 too, with its hand adjoint (its bits are the scalar
// path's: the rk4 case of PandaRolloutsGetTheBitsOfTheirScalarRuns)
TEST(PackedRollout, PandaRk4TakesThePackedPath) {
  std::vector<PandaCase> cs = panda_cases();
  Articulated m = cs[0].m;
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 3;
  for (int integ :
       {int(Articulated::kEuler), int(Articulated::kImplicitFast), int(Articulated::kRk4)}) {
    m.integrator = integ;
    EXPECT_TRUE((use_packed_path<Articulated, double>(m, sh, 64))) << integ;
    EXPECT_TRUE((use_packed_path<Articulated, float>(m, sh, 64))) << integ;
  }
}

// the zero-length lane really is at zero length at step 0, and its gradient stays finite
TEST(PackedRollout, ZeroLengthSpringLaneStaysFinite) {
  std::vector<Case> cs = cases();
  const Case& c = cs[2];
  ASSERT_TRUE(c.zero_length);
  const MassSpring& m = c.m;
  const int T = 20, B = std::max(4, cpu_pack_width());  // rollout 3 is the zero-length lane
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

// what the packed path does not take: one rollout, the binomial schedule, the dual-number
// adjoint, the impact ground (and it takes float32 as well as float64)
TEST(PackedRollout, TakenOnlyWhereItApplies) {
  const Robot two = grid_robot({{0, 0}, {1, 0}}, 0.1, {0.1, 0.1}, 1e3, 0.15);
  MassSpring m = bind_topology(make_mass_spring(two, 10, MassSpring::kSinusoid, true, 0.004), two);
  RolloutShape sh;
  sh.steps = 10;
  sh.checkpoint_every = 3;
  EXPECT_TRUE((use_packed_path<MassSpring, double>(m, sh, 2)));
  EXPECT_FALSE((use_packed_path<MassSpring, double>(m, sh, 1)));
  EXPECT_TRUE((use_packed_path<MassSpring, float>(m, sh, 64)));
  EXPECT_FALSE((use_packed_path<MassSpring, float>(m, sh, 1)));
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
  pack_rows(rows.data(), n, nb, packs.data());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < nb; ++j) EXPECT_EQ(packs[i][j], rows[size_t(j) * n + i]);
    EXPECT_EQ(packs[i][3], rows[size_t(nb - 1) * n + i]);  // the spare lane repeats the last row
  }
  const View<PackD<W>> v{packs.data(), 1};
  const View<double> lane1 = lane_view(v, 1);
  for (int i = 0; i < n; ++i) EXPECT_EQ(lane1[i], rows[size_t(1) * n + i]);
  std::vector<double> back(size_t(nb) * n, -1.0);
  unpack_rows(packs.data(), n, nb, back.data());
  EXPECT_EQ(back, rows);
}

}  // namespace
}  // namespace steer::testing
