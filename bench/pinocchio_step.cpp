// One step of steer's articulated model and its vector–Jacobian product against Pinocchio's ABA
// and its analytical ABA derivatives (Carpentier & Mansard, RSS 2018), the fastest CPU
// reference for what steer's backward pass does one step at a time. One thread, the same states.
//
//   steer forward:   x⁺ = f(x, u) (BatchRunner::step: kinematics, M(q), c(q, v), the damped
//                    Cholesky solve (M + h D) v⁺ = M v + h (τ − c), q⁺ = q + h v⁺)
//   steer VJP:       (x̄, ū) = (∂f/∂x)ᵀ λ, (∂f/∂u)ᵀ λ (BatchRunner::adj_step: the forward step
//                    recomputed, then the hand adjoint): the adjoint's unit of work per step
//   Pinocchio:       aba(q, v, τ) (q̈ only), computeABADerivatives(q, v, τ) (q̈ and the dense
//                    ∂q̈/∂q, ∂q̈/∂v, M⁻¹), and aba + derivatives, the per-step work of a
//                    derivative-based adjoint built on Pinocchio.
//
// The work is not identical: Pinocchio's derivatives are whole Jacobians (3 n² entries), steer's
// VJP is one row combination of the step's Jacobian. That is the comparison the reverse sweep
// makes: an adjoint built on Pinocchio would call computeABADerivatives once per step.
//
// Pinocchio is compiled here from its headers (the `pin` wheel's include folder) with the same
// compiler and flags as steer's scalar path, unless STEER_PINOCCHIO_LIBRARY is defined: then its
// algorithms come from the wheel's prebuilt libpinocchio_default (explicit instantiations). The
// model is the one Pinocchio's MJCF parser builds from the same file, serialized by its Python
// API (bench/pinocchio_step.sh), since the wheel ships its parsers without urdfdom's headers.
//
// Usage: bench_pinocchio --config bench/configs/pinocchio_panda.json --pinocchio-model panda.bin
//        [--states 100] [--min-time 0.2] [--repeats 5]
// Prints one JSON object: per-call nanoseconds (the fastest of the repeats) and the ratios.
#include <CLI/CLI.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "problem/batch_runner.h"
#include "problem/problem.h"

namespace {

// the fastest of `repeats` timings of `calls` calls of op over the states, each timing at least
// min_time seconds (the count of passes doubled until it is) [ns per call]
double time_per_call(const std::function<void(int)>& op, int states, double min_time, int repeats) {
  using clock = std::chrono::steady_clock;
  long passes = 1;
  for (;;) {
    const auto t0 = clock::now();
    for (long p = 0; p < passes; ++p)
      for (int i = 0; i < states; ++i) op(i);
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (s >= min_time || passes > (1L << 30)) break;
    passes *= 2;
  }
  double best = INFINITY;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = clock::now();
    for (long p = 0; p < passes; ++p)
      for (int i = 0; i < states; ++i) op(i);
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    best = std::min(best, s / double(passes * states) * 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"steer's step and VJP vs Pinocchio's ABA and ABA derivatives, one thread"};
  std::string config_path, model_path;
  int states = 100, repeats = 5;
  double min_time = 0.2;
  app.add_option("--config", config_path, "steer config of the arm (model.mjcf)")->required();
  app.add_option("--pinocchio-model", model_path,
                 "Pinocchio's model of the same file (Model.saveToBinary)")
      ->required();
  app.add_option("--states", states, "random states timed in turn")->check(CLI::Range(1, 100000));
  app.add_option("--min-time", min_time, "seconds per timing [s]")->check(CLI::Range(0.0, 60.0));
  app.add_option("--repeats", repeats, "timings; the fastest is reported")
      ->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);

  const steer::ExperimentConfig c = steer::load_config(config_path);
  const auto runner = steer::make_runner(c, steer::BackendKind::kCpu, steer::RunnerOptions{});
  const steer::Batch<double> batch = steer::build_batch(c);
  const int nx = runner->nx(), nu = runner->nu(), np = runner->np();

  pinocchio::Model model;
  model.loadFromBinary(model_path);
  pinocchio::Data data(model);
  if (model.nq != model.nv || 2 * model.nv != nx || model.nv != nu) {
    std::cerr << "bench_pinocchio: --pinocchio-model has nq " << model.nq << ", nv " << model.nv
              << "; the config's arm has nx " << nx << ", nu " << nu
              << " (an arm of revolute and prismatic joints, u the joint torques, is expected)\n";
    return 2;
  }
  const int n = model.nv;

  // the states: q within 90 % of each range, q̇ in ±2, τ in ±5, λ in ±1 (seeded)
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const size_t ns = size_t(states);
  std::vector<Eigen::VectorXd> q(ns), v(ns), tau(ns);
  std::vector<std::vector<double>> x(ns), u(ns), lam(ns);
  for (int i = 0; i < states; ++i) {
    q[size_t(i)].resize(n), v[size_t(i)].resize(n), tau[size_t(i)].resize(n);
    for (int j = 0; j < n; ++j) {
      const double lo = model.lowerPositionLimit[j], hi = model.upperPositionLimit[j];
      const bool bounded = std::isfinite(lo) && std::isfinite(hi) && hi - lo < 1e3;
      q[size_t(i)][j] = bounded ? 0.5 * (lo + hi) + 0.45 * (hi - lo) * unit(rng) : M_PI * unit(rng);
      v[size_t(i)][j] = 2.0 * unit(rng);
      tau[size_t(i)][j] = 5.0 * unit(rng);
    }
    x[size_t(i)].assign(size_t(nx), 0.0);
    for (int j = 0; j < n; ++j) x[size_t(i)][size_t(j)] = q[size_t(i)][j];
    for (int j = 0; j < n; ++j) x[size_t(i)][size_t(n + j)] = v[size_t(i)][j];
    u[size_t(i)].assign(tau[size_t(i)].data(), tau[size_t(i)].data() + n);
    lam[size_t(i)].resize(size_t(nx));
    for (double& l : lam[size_t(i)]) l = unit(rng);
  }
  const double* theta = batch.theta.data();  // rollout 0's parameters
  const size_t nxs = size_t(nx), nus = size_t(nu), nps = size_t(np);
  std::vector<double> xn(nxs), ax(nxs), au(nus), ap(nps);
  double sink = 0;  // read after the timings so that no call is optimized away

  // the two models are one: with the damping off (the config's all_joints), steer's step is
  // v⁺ = v + h q̈, so (v⁺ − v)/h is Pinocchio's q̈ to round-off (max relative difference printed)
  double qdd_difference = 0;
  for (int i = 0; i < states; ++i) {
    runner->step(0, x[size_t(i)].data(), u[size_t(i)].data(), theta, xn.data());
    pinocchio::aba(model, data, q[size_t(i)], v[size_t(i)], tau[size_t(i)]);
    for (int j = 0; j < n; ++j) {
      const double qdd = (xn[size_t(n + j)] - v[size_t(i)][j]) / c.dt;
      qdd_difference = std::max(
          qdd_difference, std::fabs(qdd - data.ddq[j]) / std::max(1.0, std::fabs(data.ddq[j])));
    }
  }

  const double steer_step = time_per_call(
      [&](int i) {
        runner->step(0, x[size_t(i)].data(), u[size_t(i)].data(), theta, xn.data());
        sink += xn[0];
      },
      states, min_time, repeats);
  const double steer_vjp = time_per_call(
      [&](int i) {
        std::fill(ax.begin(), ax.end(), 0.0);
        std::fill(au.begin(), au.end(), 0.0);
        std::fill(ap.begin(), ap.end(), 0.0);
        runner->adj_step(0, x[size_t(i)].data(), u[size_t(i)].data(), theta, lam[size_t(i)].data(),
                         ax.data(), au.data(), ap.data());
        sink += ax[0];
      },
      states, min_time, repeats);
  const double pin_aba = time_per_call(
      [&](int i) {
        pinocchio::aba(model, data, q[size_t(i)], v[size_t(i)], tau[size_t(i)]);
        sink += data.ddq[0];
      },
      states, min_time, repeats);
  const double pin_derivatives = time_per_call(
      [&](int i) {
        pinocchio::computeABADerivatives(model, data, q[size_t(i)], v[size_t(i)], tau[size_t(i)]);
        sink += data.ddq_dq(0, 0);
      },
      states, min_time, repeats);

  nlohmann::json out;
  out["config"] = config_path;
  out["nv"] = n;
  out["states"] = states;
#ifdef STEER_PINOCCHIO_LIBRARY
  out["pinocchio_build"] = "the pin wheel's libpinocchio_default";
#else
  out["pinocchio_build"] = "headers, steer's compiler and flags";
#endif
  out["pinocchio_version"] = PINOCCHIO_VERSION;
  out["ns_per_call"] = {{"steer_step", steer_step},
                        {"steer_vjp", steer_vjp},
                        {"pinocchio_aba", pin_aba},
                        {"pinocchio_aba_derivatives", pin_derivatives},
                        {"pinocchio_aba_plus_derivatives", pin_aba + pin_derivatives}};
  // > 1: steer is faster
  out["ratio_step_vs_aba"] = pin_aba / steer_step;
  out["ratio_vjp_vs_aba_plus_derivatives"] = (pin_aba + pin_derivatives) / steer_vjp;
  out["ratio_vjp_vs_derivatives"] = pin_derivatives / steer_vjp;
  out["max_qdd_difference"] = qdd_difference;
  out["checksum"] = sink;
  std::cout << out.dump(2) << "\n";
  return 0;
}
