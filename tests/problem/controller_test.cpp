// The controller inside the step (steer/controller.h, the `controller` config section):
//  - its hand adjoint against the dual-number reference through whole rollouts (float64,
//    ≤ 1e-11 relative to max(1, ‖g‖∞): the two differ in rounding order only) and against
//    centered FD of the rollout loss along random directions (fourth order, ε = 1e-6 on
//    directions of size 1e-2 max(|v|, 1); |fd − g·d| ≤ 1e-6 max(|fd|, 1e-3)), for every activation,
//    the clamp, every observation feature, on the mass-spring robot and on articulated models (the
//    Panda with a site observed, the planar walker in contact);
//  - an independent reference: a linear tanh policy of phases alone is the mass-spring robot's
//    own sinusoid actuation act = tanh(Σ_j w_j sin(ω t + 2πj/n) + b), so the two rollouts and
//    their gradients agree (to 1e-12);
//  - controller.action_hold: the held policy is the open-loop tape of its applied actions (states
//    to 1e-12), and its adjoint passes the reference and FD checks above;
//  - the SIMD path against the scalar path, bit for bit;
//  - the config: slots, initial weights from a seed and from a file, refusals by key.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "problem/batch_runner.h"
#include "problem/problem.h"

namespace {

using nlohmann::json;

json robot_a() {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/difftaichi_robot_a.json");
  json c = json::parse(f);
  c["model"]["actuation"] = {{"type", "raw"}};
  c["simulation"]["steps"] = 40;
  c["simulation"]["checkpoint_every"] = 7;
  c["batch"] = {{"size", 1}, {"seed", 3}};
  c["variables"] = json::object();
  c.erase("optimizer");
  c["validation"] = {{"enabled", false}};
  c["controller"] = {{"observations",
                      {{{"phase", {{"count", 4}, {"frequency", 10.0}}}},
                       {{"state", "particle.position"}, {"minus_center", true}, {"scale", 2.0}},
                       {{"state", "particle.velocity"}, {"scale", 0.5}},
                       {{"center_of_mass", {"x", "y"}}, {"scale", -1.0}, {"center", {0.9, 0.2}}}}},
                     {"policy", {{"hidden", {12, 7}}, {"activation", "tanh"}}},
                     {"init", {{"seed", 5}, {"gain", 2.0}}}};
  return c;
}

json panda(const char* file = "panda_reach.json") {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/" + file);
  json c = json::parse(f);
  c["simulation"]["steps"] = 40;
  c["simulation"]["checkpoint_every"] = 6;
  c["batch"] = {{"size", 1}, {"seed", 3}};
  c["variables"] = json::object();
  c.erase("optimizer");
  c["validation"] = {{"enabled", false}};
  c["controller"] = {{"observations", {{{"state", "q"}}, {{"state", "v"}, {"scale", 0.3}}}},
                     {"policy", {{"hidden", {9}}, {"activation", "elu"}, {"action_scale", 5.0}}},
                     {"init", {{"seed", 2}}}};
  return c;
}

steer::ExperimentConfig parse(const json& j) {
  const std::string base = std::string(STEER_SOURCE_DIR) + "/configs";
  return steer::parse_config(steer::expand_includes(j, base), base);
}

struct Gradient {
  std::vector<double> loss, x0, u, p;
};

Gradient run(const steer::ExperimentConfig& c, bool reference,
             const steer::Batch<double>* given = nullptr) {
  steer::RunnerOptions o;
  o.every_parameter_gradient = true;
  const auto r = steer::make_runner(c, steer::BackendKind::kCpu, o);
  const steer::Batch<double> b = given ? *given : steer::build_batch(c);
  steer::RolloutShape sh = c.checkpoint_plan().shape;
  sh.reference_adjoint = reference;
  steer::BatchResult<double> out;
  r->run(b, sh, true, out, 1, nullptr);
  return {out.loss, out.grad_x0, out.grad_u, out.grad_theta};
}

double inf_norm(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::fabs(e));
  return m;
}

void expect_hand_matches_reference(const steer::ExperimentConfig& c, const std::string& what) {
  const Gradient h = run(c, false), d = run(c, true);
  ASSERT_EQ(h.p.size(), d.p.size());
  EXPECT_EQ(h.loss[0], d.loss[0]) << what;
  const double tol = 1e-11 * std::max(1.0, inf_norm(d.p));
  double controller_norm = 0;
  for (size_t q = 0; q < h.p.size(); ++q) {
    EXPECT_NEAR(h.p[q], d.p[q], tol) << what << ": theta." << c.info.param_names[q];
    if (int(q) >= c.policy.theta0) controller_norm = std::max(controller_norm, std::fabs(d.p[q]));
  }
  EXPECT_GT(controller_norm, 1e-8) << what << ": the controller's gradient vanishes";
  for (size_t i = 0; i < h.x0.size(); ++i)
    EXPECT_NEAR(h.x0[i], d.x0[i], 1e-11 * std::max(1.0, inf_norm(d.x0))) << what << " x0 " << i;
  for (size_t i = 0; i < h.u.size(); ++i)
    EXPECT_NEAR(h.u[i], d.u[i], 1e-11 * std::max(1.0, inf_norm(d.u))) << what << " u " << i;
}

// the rollout's loss gradient along random directions in θ and x0 against centered FD
void expect_matches_fd(const steer::ExperimentConfig& c, const std::string& what) {
  steer::RunnerOptions o;
  o.every_parameter_gradient = true;
  const auto r = steer::make_runner(c, steer::BackendKind::kCpu, o);
  const steer::Batch<double> b0 = steer::build_batch(c);
  const Gradient g = run(c, false);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  for (int trial = 0; trial < 3; ++trial) {
    // trial 0: the controller's slots alone; 1: and x0; 2: every θ slot (the model's by 1e-3
    // of its size) and x0
    std::vector<double> dp(g.p.size(), 0.0), dx(g.x0.size(), 0.0);
    for (size_t q = 0; q < dp.size(); ++q) {
      const double size = std::max(std::fabs(b0.theta_of(0)[q]), 1.0);
      if (c.policy.noise && int(q) == c.policy.noise_seed()) continue;  // the draws' seed
      if (int(q) >= c.policy.theta0)
        dp[q] = n01(rng) * size * 1e-2;
      else if (trial == 2)
        dp[q] = n01(rng) * size * 1e-3;
    }
    if (trial > 0)
      for (size_t i = 0; i < dx.size(); ++i) dx[i] = n01(rng) * 1e-3;
    double gd = 0;
    for (size_t q = 0; q < dp.size(); ++q) gd += g.p[q] * dp[q];
    for (size_t i = 0; i < dx.size(); ++i) gd += g.x0[i] * dx[i];
    auto loss_at = [&](double e) {
      steer::Batch<double> b = b0;
      for (size_t q = 0; q < dp.size(); ++q) b.theta_of(0)[q] += e * dp[q];
      for (size_t i = 0; i < dx.size(); ++i) b.x0_of(0)[i] += e * dx[i];
      steer::BatchResult<double> out;
      r->run(b, c.checkpoint_plan().shape, false, out, 1, nullptr);
      return out.loss[0];
    };
    // fourth-order central difference: the contact's stiffness (10⁴ N/m over 60 steps) leaves
    // the second-order one's ε² term near 1e-6 relative
    const double eps = 1e-6, fd = (8 * (loss_at(eps) - loss_at(-eps)) -
                                   (loss_at(2 * eps) - loss_at(-2 * eps))) /
                                  (12 * eps);
    EXPECT_NEAR(gd, fd, 1e-6 * std::max(std::fabs(fd), 1e-3)) << what << ", direction " << trial;
  }
}

void expect_refused(const json& j, const std::string& key) {
  try {
    parse(j);
    ADD_FAILURE() << "accepted; expected a refusal naming " << key;
  } catch (const steer::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(Controller, MassSpringHandAdjointMatchesReferenceAndFd) {
  for (const char* act : {"tanh", "relu", "elu", "linear"}) {
    json j = robot_a();
    j["controller"]["policy"]["activation"] = act;
    if (std::string(act) == "relu") j["controller"]["policy"]["clamp"] = {-0.4, 0.3};
    const steer::ExperimentConfig c = parse(j);
    expect_hand_matches_reference(c, std::string("robot A, ") + act);
    expect_matches_fd(c, std::string("robot A, ") + act);
  }
  json late = robot_a();  // a delay of 3 steps and observation noise
  late["controller"]["delay_steps"] = 3;
  late["controller"]["observation_noise"] = 0.02;
  const steer::ExperimentConfig cl = parse(late);
  expect_hand_matches_reference(cl, "robot A, delay and noise");
  expect_matches_fd(cl, "robot A, delay and noise");
  json lin = robot_a();
  lin["controller"]["policy"] = {
      {"type", "linear"}, {"output_activation", "tanh"}, {"action_scale", 0.7}};
  const steer::ExperimentConfig c = parse(lin);
  expect_hand_matches_reference(c, "robot A, linear feedback");
  expect_matches_fd(c, "robot A, linear feedback");
}

TEST(Controller, ArticulatedHandAdjointMatchesReferenceAndFd) {
  const steer::ExperimentConfig arm = parse(panda());
  expect_hand_matches_reference(arm, "Panda, joint states");
  expect_matches_fd(arm, "Panda, joint states");
  json site = panda("panda_mjcf_reach.json");
  site["controller"]["observations"].push_back(
      {{"site", "gripper"}, {"scale", 2.0}, {"center", 0.1}});
  site["controller"]["observations"].push_back({{"center_of_mass", "z"}});
  const steer::ExperimentConfig c = parse(site);
  expect_hand_matches_reference(c, "Panda, site and centre of mass");
  expect_matches_fd(c, "Panda, site and centre of mass");
}

// controller.action_hold n (Gymnasium's frame_skip): the network runs at steps k ≡ 0 (mod n) and
// its clamped action is held for n steps. The hand adjoint against the dual-number reference and
// FD; and an independent reference: the same arm driven open-loop by the tape of the applied
// actions (read from the trajectory's controller.held slots) has the same states, to round-off
TEST(Controller, ActionHoldIsItsRecordedTape) {
  json j = panda();
  j["loss"]["control_effort"] = 0.0;  // the effort term sees the open-loop tape alone
  j["controller"]["action_hold"] = 3;
  j["controller"]["policy"]["clamp"] = {-4.0, 4.0};
  const steer::ExperimentConfig c = parse(j);
  const steer::Policy& P = c.policy;
  const int nu = P.n_actions(), nxm = P.nx_model, nx = c.info.nx(), T = c.steps;
  ASSERT_EQ(nx, nxm + nu);
  ASSERT_EQ(c.info.state_index("controller.held." + c.info.control_names[0]), P.held(0));
  expect_hand_matches_reference(c, "Panda, action hold 3");
  expect_matches_fd(c, "Panda, action hold 3");
  auto trajectory = [](const steer::ExperimentConfig& cf, const steer::Batch<double>& b) {
    const auto r = steer::make_runner(cf, steer::BackendKind::kCpu, steer::RunnerOptions{});
    steer::RolloutShape sh = cf.checkpoint_plan().shape;
    sh.traj_stride = 1;
    steer::BatchResult<double> out;
    r->run(b, sh, false, out, 1, nullptr);
    return std::make_pair(out.traj, out.loss[0]);
  };
  const steer::Batch<double> b = steer::build_batch(c);
  const auto [held, loss_held] = trajectory(c, b);
  json open = j;
  open.erase("controller");
  const steer::ExperimentConfig co = parse(open);
  steer::Batch<double> bo = steer::build_batch(co);
  int fresh_changes = 0;
  for (int k = 0; k < T; ++k)
    for (int a = 0; a < nu; ++a) {
      // x_{k+1}'s held slot is the action applied during step k
      const double now = held[size_t(k + 1) * nx + P.held(a)],
                   before = held[size_t(k) * nx + P.held(a)];
      bo.u_of(0)[size_t(k) * nu + a] = b.u_of(0)[size_t(k) * nu + a] + now;
      if (k % 3 != 0) {
        EXPECT_EQ(now, before) << "step " << k << ", action " << a;
      } else {
        fresh_changes += now != before;
      }
      EXPECT_LE(std::fabs(now), 4.0);
    }
  EXPECT_GT(fresh_changes, T / 3);
  const auto [tape, loss_tape] = trajectory(co, bo);
  for (int k = 0; k <= T; ++k)
    for (int i = 0; i < nxm; ++i)
      EXPECT_NEAR(tape[size_t(k) * nxm + i], held[size_t(k) * nx + i], 1e-12)
          << "step " << k << ", " << c.info.state_names[size_t(i)];
  EXPECT_NEAR(loss_tape, loss_held, 1e-12 * std::max(1.0, std::fabs(loss_held)));
}

// robot A with its own sinusoid actuation at ω (n = 10 phases, weights drawn), 120 steps, and
// its twin with raw actuation driven by a linear tanh policy of the same 10 phases, delayed by
// d steps
std::pair<json, json> sinusoid_and_phase_policy(double w, int d) {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/difftaichi_robot_a.json");
  json s = json::parse(f);
  s["model"]["actuation"]["frequency"] = w;
  s["simulation"]["steps"] = 120;
  s["batch"] = {
      {"size", 1}, {"seed", 3}, {"randomize", {{"theta.actuator.weight", {{"jitter", 0.8}}}}}};
  s["variables"] = json::object();
  s.erase("optimizer");
  s["validation"] = {{"enabled", false}};
  json k = s;
  k["model"]["actuation"] = {{"type", "raw"}};
  k["batch"] = {{"size", 1}, {"seed", 3}};
  k["controller"] = {{"observations", {{{"phase", {{"count", 10}, {"frequency", w}}}}}},
                     {"policy", {{"type", "linear"}, {"output_activation", "tanh"}}},
                     {"delay_steps", d}};
  return {s, k};
}

// act = tanh(Σ_j w_j sin(ω t + 2πj/n) + b): the model's sinusoid actuation and a linear tanh
// policy of the n phases give the same rollout and the same ∂L/∂w, ∂L/∂b
TEST(Controller, PhasePolicyIsTheSinusoidActuation) {
  const auto [s, k] = sinusoid_and_phase_policy(10.0, 0);
  const steer::ExperimentConfig cs = parse(s), ck = parse(k);
  const steer::Batch<double> bs = steer::build_batch(cs);
  steer::Batch<double> bk = steer::build_batch(ck);
  const steer::MassSpring& m = cs.model_state<steer::MassSpringSetup>().model;
  const steer::Policy& P = ck.policy;
  ASSERT_EQ(P.n_actions(), m.n_actuators);
  for (int a = 0; a < m.n_actuators; ++a) {
    for (int j = 0; j < 10; ++j)
      bk.theta_of(0)[P.layer_begin(0) + a * 10 + j] = bs.theta_of(0)[m.p_weight(a, j)];
    bk.theta_of(0)[P.layer_begin(0) + m.n_actuators * 10 + a] = bs.theta_of(0)[m.p_bias(a)];
  }
  const Gradient gs = run(cs, false), gk = run(ck, false, &bk);
  EXPECT_NEAR(gs.loss[0], gk.loss[0], 1e-12 * std::max(1.0, std::fabs(gs.loss[0])));
  EXPECT_GT(std::fabs(gs.loss[0]), 1e-4);
  const double tol = 1e-10 * std::max(1.0, inf_norm(gs.p));
  for (int a = 0; a < m.n_actuators; ++a) {
    for (int j = 0; j < 10; ++j)
      EXPECT_NEAR(gk.p[size_t(P.layer_begin(0) + a * 10 + j)], gs.p[size_t(m.p_weight(a, j))], tol);
    EXPECT_NEAR(gk.p[size_t(P.layer_begin(0) + m.n_actuators * 10 + a)], gs.p[size_t(m.p_bias(a))],
                tol);
  }
}

// With a delay of d steps the action used at step k is the one computed at k − d: a phase
// policy delayed by d with ω d h = 2π m/n is the sinusoid actuation with its weights rotated by
// m phases, once the pending actions start at the sinusoid's values at steps 0 … d − 1
TEST(Controller, DelayedPhasePolicyIsTheRotatedSinusoid) {
  const int n = 10, d = 5, m = 1;
  const double h = 0.004, w = 6.283185307179586 * m / (n * d * h);
  const auto [s, k] = sinusoid_and_phase_policy(w, d);
  const steer::ExperimentConfig cs = parse(s), ck = parse(k);
  const steer::Batch<double> bs = steer::build_batch(cs);
  steer::Batch<double> bk = steer::build_batch(ck);
  const steer::MassSpring& ms = cs.model_state<steer::MassSpringSetup>().model;
  const steer::Policy& P = ck.policy;
  ASSERT_EQ(ck.info.nx(), ms.nx() + d * ms.n_actuators);
  const double* th = bs.theta_of(0);
  auto act = [&](int a, int step) {  // the sinusoid actuation's act_a at step `step`
    double z = th[ms.p_bias(a)];
    for (int i = 0; i < n; ++i)
      z += th[ms.p_weight(a, i)] * std::sin(w * step * h + 6.283185307179586 * i / n);
    return std::tanh(z);
  };
  for (int a = 0; a < ms.n_actuators; ++a) {
    // act(k − d) = tanh(Σ_j w_j sin(ω k h − 2π m/n + 2πj/n) + b) = tanh(Σ_j w_{j+m} sin(ω k h +
    // 2πj/n) + b)
    for (int j = 0; j < n; ++j)
      bk.theta_of(0)[P.layer_begin(0) + a * n + j] = th[ms.p_weight(a, (j + n - m) % n)];
    bk.theta_of(0)[P.layer_begin(0) + ms.n_actuators * n + a] = th[ms.p_bias(a)];
    for (int j = 0; j < d; ++j)  // pending at the start: the sinusoid's act at steps 0 … d − 1
      bk.x0_of(0)[P.pending(j, a)] = act(a, j);
  }
  const Gradient gs = run(cs, false), gk = run(ck, false, &bk);
  EXPECT_NEAR(gs.loss[0], gk.loss[0], 1e-11 * std::max(1.0, std::fabs(gs.loss[0])));
  EXPECT_GT(std::fabs(gs.loss[0]), 1e-4);
  // ∂L/∂w_i of the sinusoid = ∂L/∂W_{i+m} + Σ_{j<d} ∂L/∂pending_j (1 − act_j²) sin(ω j h + 2πi/n):
  // the delay's adjoint carries the first d steps into x̄ of the pending slots
  for (int a = 0; a < ms.n_actuators; ++a)
    for (int i = 0; i < n; ++i) {
      double g = gk.p[size_t(P.layer_begin(0) + a * n + (i + m) % n)];
      for (int j = 0; j < d; ++j)
        g += gk.x0[size_t(P.pending(j, a))] * (1 - act(a, j) * act(a, j)) *
             std::sin(w * j * h + 6.283185307179586 * i / n);
      EXPECT_NEAR(g, gs.p[size_t(ms.p_weight(a, i))], 1e-9 * std::max(1.0, inf_norm(gs.p)));
    }
}

// ξ ~ N(0, 1) per (seed, step, observation); a rollout's noise is its seed slot's alone
TEST(Controller, ObservationNoiseIsEachRolloutsOwn) {
  double s1 = 0, s2 = 0;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    const double v = steer::policy_normal(12345.0, i / 37, i % 37);
    s1 += v, s2 += v * v;
  }
  EXPECT_NEAR(s1 / n, 0.0, 0.02);  // 4 standard errors
  EXPECT_NEAR(std::sqrt(s2 / n), 1.0, 0.02);
  EXPECT_NE(steer::policy_normal(1.0, 3, 4), steer::policy_normal(2.0, 3, 4));
  EXPECT_NE(steer::policy_normal(1.0, 3, 4), steer::policy_normal(1.0, 4, 3));
  json j = robot_a();
  j["controller"]["observation_noise"] = 0.05;
  j["batch"] = {{"size", 3}, {"seed", 3}};
  const steer::ExperimentConfig c = parse(j);
  const steer::Batch<double> b = steer::build_batch(c);
  const Gradient all = run(c, false, &b);
  EXPECT_NE(all.loss[0], all.loss[1]);  // the same weights, their own noise
  steer::Batch<double> one;
  one.resize(1, c.info.nx(), c.info.nu(), c.info.np(), c.steps);
  std::copy(b.x0_of(2), b.x0_of(2) + c.info.nx(), one.x0_of(0));
  std::copy(b.theta_of(2), b.theta_of(2) + c.info.np(), one.theta_of(0));
  EXPECT_EQ(run(c, false, &one).loss[0], all.loss[2]);
  json v = j;
  v["variables"] = {{"theta.controller.noise_seed", json::object()}};
  expect_refused(v, "variables.theta.controller.noise_seed");
}

TEST(Controller, PackedPathIsTheScalarPathBitForBit) {
  json j = robot_a();
  j["controller"]["delay_steps"] = 2;
  j["controller"]["observation_noise"] = 0.01;
  j["batch"] = {
      {"size", 11}, {"seed", 3}, {"randomize", {{"theta.controller.weights", {{"jitter", 0.3}}}}}};
  const steer::ExperimentConfig c = parse(j);
  const steer::Batch<double> b = steer::build_batch(c);
  const Gradient packed = run(c, false, &b);
  const int np = c.info.np(), nx = c.info.nx();
  for (int r = 0; r < b.size; r += 5) {
    steer::Batch<double> one;
    one.resize(1, nx, c.info.nu(), np, c.steps);
    std::copy(b.x0_of(r), b.x0_of(r) + nx, one.x0_of(0));
    std::copy(b.theta_of(r), b.theta_of(r) + np, one.theta_of(0));
    const Gradient alone = run(c, false, &one);
    EXPECT_EQ(alone.loss[0], packed.loss[size_t(r)]) << "rollout " << r;
    for (int q = 0; q < np; ++q)
      ASSERT_EQ(alone.p[size_t(q)], packed.p[size_t(r) * np + q])
          << "rollout " << r << " slot " << q;
  }
}

TEST(Controller, SlotsAndInitialWeights) {
  const steer::ExperimentConfig c = parse(robot_a());
  const steer::Policy& P = c.policy;
  // 4 phases + 12 positions + 12 velocities + 2 centre coordinates -> 12 -> 7 -> 11 springs
  EXPECT_EQ(P.n_obs, 30);
  EXPECT_EQ(P.width[1], 12);
  EXPECT_EQ(P.width[3], 11);
  EXPECT_EQ(c.info.np(), P.theta0 + 2 * 30 + (30 + 1) * 12 + (12 + 1) * 7 + (7 + 1) * 11 + 11);
  EXPECT_EQ(c.info.param_groups.at("controller.weights").size(),
            size_t((30 + 1) * 12 + (12 + 1) * 7 + (7 + 1) * 11));
  EXPECT_EQ(c.theta[size_t(P.obs_scale(4))], 2.0);
  EXPECT_EQ(c.theta[size_t(P.obs_center(29))], 0.2);
  // weights ~ N(0, gain² 2/(fan_in + fan_out)): layer 0's sample deviation within 15 % of 2·√(2/42)
  double s2 = 0;
  for (int q = 0; q < 30 * 12; ++q)
    s2 += c.theta[size_t(P.layer_begin(0) + q)] * c.theta[size_t(P.layer_begin(0) + q)];
  EXPECT_NEAR(std::sqrt(s2 / 360), 2.0 * std::sqrt(2.0 / 42.0), 0.15 * 2.0 * std::sqrt(2.0 / 42.0));
  for (int r = 0; r < 12; ++r) EXPECT_EQ(c.theta[size_t(P.layer_begin(0) + 360 + r)], 0.0);
  EXPECT_EQ(parse(robot_a()).theta, c.theta);  // the same seed, the same weights

  // a weight file
  json lin = robot_a();
  lin["controller"]["policy"] = {{"type", "linear"}};
  const std::string path = ::testing::TempDir() + "/controller_weights.json";
  json w = {{"layers", json::array()}};
  json rows = json::array();
  for (int r = 0; r < 11; ++r) {
    json row = json::array();
    for (int col = 0; col < 30; ++col) row.push_back(0.01 * r - 0.001 * col);
    rows.push_back(row);
  }
  json bias = json::array();
  for (int r = 0; r < 11; ++r) bias.push_back(0.5 * r);
  w["layers"].push_back({{"weight", rows}, {"bias", bias}});
  std::ofstream(path) << w.dump();
  lin["controller"]["init"] = {{"file", path}};
  const steer::ExperimentConfig cf = parse(lin);
  EXPECT_EQ(cf.theta[size_t(cf.policy.layer_begin(0) + 3 * 30 + 7)], 0.01 * 3 - 0.001 * 7);
  EXPECT_EQ(cf.theta[size_t(cf.policy.layer_begin(0) + 11 * 30 + 4)], 2.0);
  w["layers"][0]["bias"].erase(0);
  std::ofstream(path) << w.dump();
  EXPECT_THROW(parse(lin), steer::ConfigError);
  std::remove(path.c_str());
}

TEST(Controller, RefusalsNameTheKey) {
  json sin = robot_a();
  sin["model"]["actuation"] = {{"type", "sinusoid"}, {"phases", 10}, {"frequency", 10.0}};
  expect_refused(sin, "controller: the model has no controls");
  json j = robot_a();
  j["controller"]["observations"][1]["state"] = "particle.mass";
  expect_refused(j, "controller.observations[1].state");
  j = robot_a();
  j["controller"]["observations"][2]["minus_center"] = true;
  expect_refused(j, "controller.observations[2].minus_center");
  j = robot_a();
  j["controller"]["observations"][0]["phase"]["count"] = 0;
  expect_refused(j, "controller.observations[0].phase.count");
  j = robot_a();
  j["controller"]["observations"][3]["center_of_mass"] = "z";
  expect_refused(j, "controller.observations[3].center_of_mass");
  j = robot_a();
  j["controller"]["observations"].push_back({{"site", "tip"}});
  expect_refused(j, "controller.observations[4].site");
  j = robot_a();
  j["controller"]["observations"][2]["scale"] = {1.0, 2.0};
  expect_refused(j, "controller.observations[2].scale");
  j = robot_a();
  j["controller"]["policy"]["hidden"] = {8, 8, 8, 8};
  expect_refused(j, "controller.policy.hidden");
  j = robot_a();
  j["controller"]["policy"]["activation"] = "sigmoid";
  expect_refused(j, "controller.policy.activation");
  j = robot_a();
  j["controller"]["policy"]["clamp"] = {1.0, -1.0};
  expect_refused(j, "controller.policy.clamp");
  j = robot_a();
  j["controller"]["init"] = {{"file", "no_such_weights.json"}};
  expect_refused(j, "controller.init.file");
  j = robot_a();
  j["controller"]["policy"]["widths"] = {3};
  expect_refused(j, "controller.policy.widths");
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/configs/projectile.json");
  json pj = json::parse(f);
  pj["controller"] = robot_a()["controller"];
  expect_refused(pj, "controller: the projectile model takes no controller");
  j = robot_a();
  j["controller"]["action_hold"] = 4;
  expect_refused(j, "controller.action_hold");  // the mass-spring kernels' register budget
  json arm = panda();
  arm["controller"]["action_hold"] = 65;
  expect_refused(arm, "controller.action_hold");
  arm["controller"]["action_hold"] = 2;
  arm["controller"]["delay_steps"] = 1;
  expect_refused(arm, "controller.action_hold");
  arm = panda();  // a window restarts k at 0: its steps are whole holds
  arm["controller"]["action_hold"] = 3;
  arm["loss"] = {{"terminal_linear", {{{"state", "joint1.q"}, {"weight", 1.0}}}}};
  arm["optimizer"] = {{"method", "adam"}, {"iterations", 2}, {"window", {{"steps", 20}}}};
  expect_refused(arm, "multiple of controller.action_hold (3)");
}

}  // namespace
