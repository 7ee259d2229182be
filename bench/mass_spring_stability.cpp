// mass_spring_stability: the explicit (symplectic Euler) and implicit (backward Euler) mass-spring
// steps side by side over a grid of spring stiffness k × timestep h, on three scenes:
//
//   chain        4 particles (1 kg) in a row joined by 3 springs of rest length 0.1 m, started
//                stretched and bent (x0 below), no gravity, no ground, no damping of any kind,
//                no actuation: conservative, the energy E = KE + Σ ½ k (ℓ − L)² is a constant of
//                the exact motion.
//   walker_free  the four-cell grid walker of configs/morphology_sweep.json (10 particles,
//                21 springs), its particles' start positions jittered by U(−5, 5) mm (seed 3),
//                no gravity, no ground, no damping, no actuation: conservative as well.
//   walker       that walker as the sweep runs it (gravity 4.8 m/s², velocity damping 15 /s,
//                penalty ground k_g 1e4 N/m, d_g 50 N·s/m, w_g 0.01 m, μ 1, v_ε 0.05 m/s, sinusoid
//                actuation with the actuator weights drawn as the sweep draws them, seed 11),
//                every spring at the cell's k; loss −(c_x(x_T) − c_x(x_0)), the walked distance.
//
// Every cell is an experiment config built here (and edited by --set), loaded by parse_config and
// simulated through the library's Problem on the CPU backend, as `steer run` would; the only model
// internals used are the config key model.integrator and, to count Newton iterations, the
// implicit step's own solver (MassSpring::implicit_solve), rerun at every state of the
// trajectory. For each cell, over a horizon of --horizon seconds (T = horizon / h steps):
//   stable     every state finite and max_k |v_k|∞ ≤ 10 · max(the reference's max |v|∞, 1 mm/s);
//              otherwise "unstable" (with the first step past the bound), or, for the implicit
//              step, "NaN: Newton not converged" when that step's Newton iteration hit
//              model.newton_iterations (the step then returns NaN by design)
//   energy     conservative scenes: E(x_T)/E(x_0) and max_k |E(x_k) − E(x_0)| / E(x_0);
//              walker: the travel c_x(x_T) − c_x(x_0) [mm] (the reference's in the header line)
//   error      max over the common times t = j·Δ (Δ = the largest h of the grid) of
//              max_i |x_i(t) − x_i^ref(t)| [mm], against a reference of the same scene and k
//              stepped by symplectic Euler at h_ref = (smallest h) / --ref-divisor over the same
//              physical time (its ωh is far inside the explicit limit for every k of the grid)
//   reversals  the validator's chatter measure: the velocity component that turns back most
//              often, its reversals / (T − 1) (the `chatter` label fires above 0.25)
//   FD         centered FD of the loss along a random direction (each variable scaled by
//              max(|v|, 1)), ε ∈ {1e-4, 1e-6, 1e-8}, the best relative error against the adjoint,
//              in float64, as validation runs it (chain, walker_free: ∂L/∂θ.spring.stiffness of
//              L = ½ (x_T[particle 3 or 0].x − x_0[…].x − 1 cm)²; walker: the actuator weights and
//              biases)
//   cost       one forward and one forward+gradient Problem::evaluate over --batch rollouts on
//              --threads threads, per rollout-step [µs]: the least process CPU time of a call
//              (the table; with one thread the figure least disturbed by other processes) and
//              the median wall time (JSON); one warm-up, then repeats for --min-time seconds
//   Newton     implicit step only: iterations per step, mean and largest over the trajectory,
//              and steps that did not converge within model.newton_iterations
// Output: a Markdown table per scene on stdout (and --json FILE).
//
//   mass_spring_stability                                   # the default grid, about a minute
//   mass_spring_stability --scenes chain --stiffness 2e6 --dt-ms 16 --horizon 0.064 --no-timing
//   mass_spring_stability --set model.ground.friction_smoothing=0.1 --scenes walker
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_set.h"
#include "models/mass_spring/mass_spring_setup.h"
#include "problem/problem.h"
#include "steer/backend.h"
#include "steer/models/mass_spring.h"

namespace {

using nlohmann::json;
using steer::bench::apply_set;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<std::string> scenes = {"chain", "walker_free", "walker"};
  std::vector<std::string> integrators = {"symplectic_euler", "backward_euler"};
  std::vector<double> stiffness = {2e3, 2e4, 2e5, 2e6};  // [N/m]
  std::vector<double> dt_ms = {1, 2, 4, 8, 16};          // [ms]
  double horizon = 1.024;                                // [s]
  int ref_divisor = 64;
  int batch = 8;
  int threads = 1;
  double min_time = 0.05;  // [s] per timed figure
  bool timing = true, fd = true;
  std::vector<std::string> sets;
  std::string json_path;
};

json grid_walker_robot(double k, double actuation) {
  return {{"grid",
           {{"cells", json::array({{0, 0}, {1, 0}, {2, 0}, {3, 0}})},
            {"cell_size", 0.1},
            {"origin", {0.1, 0.1}},
            {"stiffness", k},
            {"actuation", actuation}}}};
}

// one cell's experiment config: scene, integrator, spring stiffness k [N/m], timestep h [s], T
// steps
json scene_config(const std::string& scene, const std::string& integrator, double k, double h,
                  int T, int batch, const std::vector<std::string>& sets) {
  json j;
  j["name"] = "stability_" + scene;
  j["simulation"] = {{"dt", h}, {"steps", T}, {"precision", "float64"}, {"backend", "cpu"}};
  j["validation"] = {{"enabled", false}};
  j["batch"] = {{"size", batch}};
  json m = {
      {"type", "mass_spring"}, {"dim", 2}, {"integrator", integrator}, {"particle_mass", 1.0}};
  if (scene == "chain" || scene == "walker_free") {
    m["gravity"] = 0.0;
    m["velocity_damping"] = 0.0;
    m["spring_damping"] = 0.0;
    m["ground"] = {{"type", "none"}};
    // L = ½ (x_T − x_0 − 1 cm)² of one end particle's x: smooth in k and nonzero at the start
    const std::string end = scene == "chain" ? "particle[3].position.x" : "particle[0].position.x";
    const double x0 = scene == "chain" ? 0.41 : 0.1;
    j["variables"] = {{"theta.spring.stiffness", {{"lower", 1.0}, {"upper", 1e9}}}};
    j["loss"] = {
        {"terminal", json::array({{{"state", end}, {"target", x0 + 0.01}, {"weight", 1.0}}})}};
    if (scene == "chain") {
      // stretched by 5, 5 and 10 mm and bent by ±1 cm: every spring starts strained
      m["robot"] = {
          {"particles", json::array({{0.1, 0.5}, {0.205, 0.51}, {0.3, 0.495}, {0.41, 0.5}})},
          {"springs",
           json::array({{0, 1, 0.1, k, 0.0}, {1, 2, 0.1, k, 0.0}, {2, 3, 0.1, k, 0.0}})}};
    } else {
      m["robot"] = grid_walker_robot(k, 0.0);
      j["batch"]["seed"] = 3;
      j["batch"]["randomize"] = {{"x0.particle.position", {{"jitter", 0.005}}}};
    }
  } else if (scene == "walker") {
    m["robot"] = grid_walker_robot(k, 0.15);
    m["gravity"] = 4.8;
    m["velocity_damping"] = 15.0;
    m["actuation"] = {{"type", "sinusoid"}, {"phases", 10}, {"frequency", 10.0}};
    m["ground"] = {{"type", "penalty"},         {"height", 0.1},     {"stiffness", 1e4},
                   {"damping", 50.0},           {"smoothing", 0.01}, {"friction", 1.0},
                   {"friction_smoothing", 0.05}};
    j["batch"]["seed"] = 11;
    j["batch"]["randomize"] = {{"theta.actuator.weight", {{"jitter", 0.3}}}};
    j["loss"] = {{"com_displacement", {{"axis", "x"}, {"weight", -1.0}}}};
    j["variables"] = {{"theta.actuator.weight", {{"lower", -3.0}, {"upper", 3.0}}},
                      {"theta.actuator.bias", {{"lower", -3.0}, {"upper", 3.0}}}};
  } else {
    throw std::invalid_argument("--scenes: " + scene + " is not one of chain, walker_free, walker");
  }
  j["model"] = m;
  for (const auto& s : sets) apply_set(j, s);
  return j;
}

bool conservative_scene(const std::string& scene) { return scene != "walker"; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// one warm-up call, then repeats for min_time seconds: the median wall time and the least
// process CPU time of a call [s] (std::clock, all threads: on a shared machine the CPU time of
// a one-thread call is the figure other processes disturb least)
struct Timing {
  double wall = 0, cpu = 0;
};
Timing time_evaluate(steer::Problem& p, const std::vector<double>& vars, bool grad,
                     double min_time) {
  steer::Evaluation ev;
  p.evaluate(vars, grad, ev);
  std::vector<double> w;
  double total = 0, cpu = INFINITY;
  while (total < min_time || w.empty()) {
    const std::clock_t c0 = std::clock();
    const auto t0 = Clock::now();
    p.evaluate(vars, grad, ev);
    w.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    cpu = std::min(cpu, double(std::clock() - c0) / CLOCKS_PER_SEC);
    total += w.back();
  }
  return {median(w), cpu};
}

// the model of a config, its topology owned here
struct ModelOf {
  std::vector<int> topo;
  steer::MassSpring m;
  explicit ModelOf(const steer::ExperimentConfig& c) {
    m = c.model_state<steer::MassSpringSetup>().model;
    topo = c.model_state<steer::MassSpringSetup>().topology;
    m.topo = topo.data();
  }
};

// the reference of a scene and k: states at the common times, its largest |v|∞, its travel
struct Reference {
  std::vector<double> states;  // [(horizon/Δ + 1)][nx]
  double vmax = 0, travel = 0, energy0 = 0;
};

struct Cell {
  std::string scene, integrator;
  double k = 0, h = 0;
  int steps = 0;
  bool stable = false;
  int bound_step = -1;      // first step non-finite or past the speed bound
  bool nonfinite = false;   // ... and that state is non-finite
  bool newton_nan = false;  // implicit: NaN because Newton did not converge in the step before
  double energy_final = NAN, energy_dev = NAN;  // E_T/E_0, max |E_k − E_0|/E_0
  double travel = NAN;                          // [m]
  double error = NAN;                           // [m]
  double reversals = NAN;                       // count / (T − 1)
  double fd_error = NAN;                        // best relative error over the ε sweep
  double fwd_us = NAN, fb_us = NAN;             // per rollout-step, process CPU time [µs]
  double fwd_wall_us = NAN, fb_wall_us = NAN;   // per rollout-step, wall time [µs]
  double newton_mean = NAN;
  int newton_max = -1, newton_failed = -1;
};

steer::ExperimentConfig load(const json& j) { return steer::parse_config(j); }

Reference make_reference(const Options& o, const std::string& scene, double k, double h_ref,
                         double delta) {
  const int T = int(std::lround(o.horizon / h_ref));
  const int stride = int(std::lround(delta / h_ref));
  const steer::ExperimentConfig c =
      load(scene_config(scene, "symplectic_euler", k, h_ref, T, 1, o.sets));
  ModelOf mo(c);
  auto p = steer::make_problem(c, steer::BackendKind::kCpu, 1);
  const int nv = p->num_vars();
  const std::vector<double> vars(p->initial().begin(), p->initial().begin() + nv);
  Reference r;
  const std::vector<double> all = p->trajectories(vars, 1, 1);  // every state: the largest speed
  const int nx = p->nx(), n = mo.m.n_particles, dim = mo.m.dim;
  const std::vector<double> theta = p->parameters(vars);
  for (int s = 0; s <= T; ++s) {
    for (int i = 0; i < n * dim; ++i)
      r.vmax = std::max(r.vmax, std::abs(all[size_t(s) * nx + mo.m.x_vel(0) + i]));
    if (s % stride == 0)
      r.states.insert(r.states.end(), all.begin() + size_t(s) * nx,
                      all.begin() + size_t(s + 1) * nx);
  }
  r.energy0 = mo.m.energy<double>(r.states.data(), theta.data());
  const std::vector<double> cd = p->com_displacement(vars, 1, 0);
  r.travel = cd.empty() ? NAN : cd[0];
  return r;
}

Cell run_cell(const Options& o, const std::string& scene, const std::string& integ, double k,
              double h, double delta, const Reference& ref) {
  Cell cell;
  cell.scene = scene;
  cell.integrator = integ;
  cell.k = k;
  cell.h = h;
  const int T = int(std::lround(o.horizon / h));
  cell.steps = T;
  const steer::ExperimentConfig c = load(scene_config(scene, integ, k, h, T, 1, o.sets));
  ModelOf mo(c);
  const steer::MassSpring& m = mo.m;
  auto p = steer::make_problem(c, steer::BackendKind::kCpu, 1);
  const int nv = p->num_vars(), nx = p->nx(), n = m.n_particles, dim = m.dim;
  const std::vector<double> vars(p->initial().begin(), p->initial().begin() + nv);
  const std::vector<double> traj = p->trajectories(vars, 1, 1);  // [(T+1)][nx]
  const std::vector<double> theta = p->parameters(vars);
  const double bound = 10 * std::max(ref.vmax, 1e-3);
  cell.stable = true;
  for (int s = 0; s <= T && cell.stable; ++s) {
    const double* x = traj.data() + size_t(s) * nx;
    for (int q = 0; q < nx; ++q) {
      const bool vel = q >= m.x_vel(0);
      if (!std::isfinite(x[q]) || (vel && std::abs(x[q]) > bound)) {
        cell.stable = false;
        cell.bound_step = s;
        cell.nonfinite = !std::isfinite(x[q]);
        break;
      }
    }
  }
  const double* xT = traj.data() + size_t(T) * nx;
  if (conservative_scene(scene)) {
    const double e0 = m.energy<double>(traj.data(), theta.data());
    double dev = 0;
    for (int s = 0; s <= T; ++s)
      dev = std::max(dev,
                     std::abs(m.energy<double>(traj.data() + size_t(s) * nx, theta.data()) - e0));
    cell.energy_final = m.energy<double>(xT, theta.data()) / e0;
    cell.energy_dev = dev / e0;
  } else {
    const std::vector<double> cd = p->com_displacement(vars, 1, 0);
    cell.travel = cd.empty() ? NAN : cd[0];
  }
  // the position error at the common times t = j·Δ
  const int stride = int(std::lround(delta / h));
  double err = 0;
  for (int s = 0, j = 0; s <= T; s += stride, ++j) {
    const double* x = traj.data() + size_t(s) * nx;
    const double* xr = ref.states.data() + size_t(j) * nx;
    for (int i = 0; i < n; ++i) {
      double d2 = 0;
      for (int a = 0; a < dim; ++a)
        d2 += (x[m.x_pos(i) + a] - xr[m.x_pos(i) + a]) * (x[m.x_pos(i) + a] - xr[m.x_pos(i) + a]);
      err = std::isfinite(d2) ? std::max(err, std::sqrt(d2)) : INFINITY;
    }
  }
  cell.error = err;
  const std::vector<steer::VelocityReversals> vr = p->velocity_reversals(vars, 1);
  if (!vr.empty() && T > 1) cell.reversals = double(vr[0].count) / double(T - 1);
  // Newton's effort at every state the implicit step started from (up to the first bad state)
  if (m.integrator == steer::MassSpring::kBackwardEuler) {
    const int last = cell.stable ? T : cell.bound_step;
    auto W = std::make_unique<steer::MassSpring::ImplicitWork<double>>();
    std::vector<double> u(size_t(std::max(m.nu(), 1)), 0.0);
    long total = 0;
    cell.newton_max = 0;
    cell.newton_failed = 0;
    for (int s = 0; s < last; ++s) {
      m.implicit_solve<double>(s, traj.data() + size_t(s) * nx, u.data(), theta.data(), *W);
      total += W->iterations;
      cell.newton_max = std::max(cell.newton_max, W->iterations);
      if (!W->converged) ++cell.newton_failed;
      if (!W->converged && s + 1 == last && cell.nonfinite) cell.newton_nan = true;
    }
    cell.newton_mean = last > 0 ? double(total) / last : NAN;
  }
  // the gradient against centered FD along one random direction (the validator's measure)
  if (o.fd) {
    steer::Evaluation e0, ep, em;
    p->evaluate(vars, true, e0);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> U(-1, 1);
    std::vector<double> d(nv);
    double norm = 0;
    for (int i = 0; i < nv; ++i) {
      d[i] = U(rng) * std::max(std::abs(vars[i]), 1.0);
      norm += (d[i] / std::max(std::abs(vars[i]), 1.0)) * (d[i] / std::max(std::abs(vars[i]), 1.0));
    }
    double gd = 0;
    for (int i = 0; i < nv; ++i) {
      d[i] /= std::sqrt(norm);
      gd += e0.grad[i] * d[i];
    }
    double best = INFINITY;
    for (double eps : {1e-4, 1e-6, 1e-8}) {
      std::vector<double> vp = vars, vm = vars;
      for (int i = 0; i < nv; ++i) {
        vp[i] += eps * d[i];
        vm[i] -= eps * d[i];
      }
      p->evaluate(vp, false, ep);
      p->evaluate(vm, false, em);
      const double fd = (ep.loss[0] - em.loss[0]) / (2 * eps);
      const double rel = std::abs(fd - gd) / std::max({std::abs(fd), std::abs(gd), 1e-300});
      if (std::isfinite(rel)) best = std::min(best, rel);
    }
    cell.fd_error = std::isfinite(best) ? best : NAN;
  }
  if (o.timing) {
    const steer::ExperimentConfig cb = load(scene_config(scene, integ, k, h, T, o.batch, o.sets));
    auto pb = steer::make_problem(cb, steer::BackendKind::kCpu, o.threads);
    const std::vector<double> vb(pb->initial().begin(), pb->initial().end());
    const double per = 1e6 / (double(o.batch) * T);
    const Timing tf = time_evaluate(*pb, vb, false, o.min_time),
                 tb = time_evaluate(*pb, vb, true, o.min_time);
    cell.fwd_us = tf.cpu * per;
    cell.fb_us = tb.cpu * per;
    cell.fwd_wall_us = tf.wall * per;
    cell.fb_wall_us = tb.wall * per;
  }
  return cell;
}

std::string num(double v, const char* fmt = "%.3g") {
  if (std::isnan(v)) return "—";
  if (std::isinf(v)) return "inf";
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string short_name(const std::string& integ) {
  return integ == "backward_euler" ? "implicit" : "explicit";
}

json cell_json(const Cell& c) {
  auto jn = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"scene", c.scene},
          {"integrator", c.integrator},
          {"stiffness", c.k},
          {"dt", c.h},
          {"steps", c.steps},
          {"stable", c.stable},
          {"bound_step", c.bound_step},
          {"newton_nan", c.newton_nan},
          {"energy_final_over_initial", jn(c.energy_final)},
          {"energy_max_deviation_relative", jn(c.energy_dev)},
          {"travel_m", jn(c.travel)},
          {"position_error_m", jn(c.error)},
          {"reversal_fraction", jn(c.reversals)},
          {"fd_relative_error", jn(c.fd_error)},
          {"forward_us_per_rollout_step", jn(c.fwd_us)},
          {"forward_gradient_us_per_rollout_step", jn(c.fb_us)},
          {"forward_wall_us_per_rollout_step", jn(c.fwd_wall_us)},
          {"forward_gradient_wall_us_per_rollout_step", jn(c.fb_wall_us)},
          {"newton_mean", jn(c.newton_mean)},
          {"newton_max", c.newton_max},
          {"newton_not_converged", c.newton_failed}};
}

std::vector<double> parse_list(const std::string& s, const char* what) {
  std::vector<double> v;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(tok, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != tok.size() || !(x > 0))
      throw std::invalid_argument(std::string(what) + ": " + tok + " is not a positive number");
    v.push_back(x);
  }
  if (v.empty()) throw std::invalid_argument(std::string(what) + ": empty list");
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) v.push_back(tok);
  return v;
}

// n = a / b when it is an integer to rounding, else 0
long ratio(double a, double b) {
  const double r = a / b;
  const long n = std::lround(r);
  return n >= 1 && std::abs(r - double(n)) <= 1e-9 * r ? n : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string scenes = "chain,walker_free,walker", integrators = "symplectic_euler,backward_euler",
              ks = "2e3,2e4,2e5,2e6", dts = "1,2,4,8,16";
  bool no_timing = false, no_fd = false;
  CLI::App app{
      "mass_spring_stability: explicit vs implicit mass-spring steps over stiffness x timestep"};
  app.add_option("--scenes", scenes, "comma list of chain, walker_free, walker");
  app.add_option("--integrators", integrators, "comma list of symplectic_euler, backward_euler");
  app.add_option("--stiffness", ks, "comma list of spring stiffnesses [N/m]");
  app.add_option("--dt-ms", dts,
                 "comma list of timesteps [ms]; each must divide the largest and the horizon");
  app.add_option("--horizon", o.horizon, "simulated time [s]")->check(CLI::PositiveNumber);
  app.add_option("--ref-divisor", o.ref_divisor, "reference timestep = smallest dt / this")
      ->check(CLI::Range(1, 4096));
  app.add_option("--batch", o.batch, "rollouts of the timed evaluations")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--threads", o.threads, "CPU threads of the timed evaluations (0 = all)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--min-time", o.min_time, "seconds of timed repeats per cost figure")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--set", o.sets, "edit every cell's config: key.path=JSON value (repeatable)");
  app.add_option("--json", o.json_path, "also write every cell as JSON to this file");
  app.add_flag("--no-timing", no_timing, "skip the cost columns");
  app.add_flag("--no-fd", no_fd, "skip the FD column");
  CLI11_PARSE(app, argc, argv);
  o.timing = !no_timing;
  o.fd = !no_fd;

  try {
    o.scenes = split(scenes);
    o.integrators = split(integrators);
    for (const auto& s : o.integrators)
      if (s != "symplectic_euler" && s != "backward_euler")
        throw std::invalid_argument("--integrators: " + s +
                                    " is not symplectic_euler or backward_euler");
    o.stiffness = parse_list(ks, "--stiffness");
    o.dt_ms = parse_list(dts, "--dt-ms");
    const double hmin = *std::min_element(o.dt_ms.begin(), o.dt_ms.end()) * 1e-3;
    const double delta =
        *std::max_element(o.dt_ms.begin(), o.dt_ms.end()) * 1e-3;  // the common-time spacing
    for (double d : o.dt_ms)
      if (!ratio(delta, d * 1e-3) || !ratio(o.horizon, d * 1e-3))
        throw std::invalid_argument(
            "--dt-ms: " + num(d) + " ms does not divide the largest timestep (" + num(delta * 1e3) +
            " ms) and the horizon (" + num(o.horizon) + " s) into whole steps");
    const double h_ref = hmin / o.ref_divisor;

    std::printf(
        "# mass_spring_stability\n\nhorizon %s s, reference: symplectic Euler at h_ref = %s ms, "
        "positions compared every %s ms; "
        "cost: %d rollouts on %d thread(s), process CPU time per rollout-step\n",
        num(o.horizon).c_str(), num(h_ref * 1e3, "%.4g").c_str(), num(delta * 1e3).c_str(), o.batch,
        o.threads);
    if (!o.sets.empty()) {
      std::printf("edits:");
      for (const auto& s : o.sets) std::printf(" --set %s", s.c_str());
      std::printf("\n");
    }
    json all = json::array();
    for (const std::string& scene : o.scenes) {
      const bool cons = conservative_scene(scene);
      std::printf("\n## %s\n\n", scene.c_str());
      std::vector<std::string> lines;
      std::printf(
          "| k [N/m] | h [ms] | step | stable | %s | error [mm] | reversals | FD rel. err | fwd "
          "CPU [µs] | fwd+grad CPU [µs] | Newton mean / max |\n",
          cons ? "E_T/E_0, max drift" : "travel [mm]");
      std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (double k : o.stiffness) {
        const Reference ref = make_reference(o, scene, k, h_ref, delta);
        if (!cons)
          lines.push_back("k " + num(k) + ": reference travel " + num(ref.travel * 1e3) + " mm");
        for (double dms : o.dt_ms)
          for (const std::string& integ : o.integrators) {
            const Cell c = run_cell(o, scene, integ, k, dms * 1e-3, delta, ref);
            all.push_back(cell_json(c));
            const std::string stable =
                c.stable ? "stable"
                : c.newton_nan
                    ? "**NaN**: Newton not converged (step " + std::to_string(c.bound_step) + ")"
                    : "**unstable** (step " + std::to_string(c.bound_step) + ")";
            const std::string energy =
                cons ? num(c.energy_final) + ", " + num(c.energy_dev) : num(c.travel * 1e3);
            const std::string newton =
                c.newton_max >= 0
                    ? num(c.newton_mean) + " / " + std::to_string(c.newton_max) +
                          (c.newton_failed > 0 ? " (" + std::to_string(c.newton_failed) + " failed)"
                                               : "")
                    : "—";
            std::printf(
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", num(k).c_str(),
                num(dms).c_str(), short_name(integ).c_str(), stable.c_str(),
                c.stable ? energy.c_str() : "—", c.stable ? num(c.error * 1e3).c_str() : "—",
                num(c.reversals, "%.2f").c_str(), c.stable ? num(c.fd_error, "%.1e").c_str() : "—",
                num(c.fwd_us).c_str(), num(c.fb_us).c_str(), newton.c_str());
            std::fflush(stdout);
            // one plain line per cell for scripts and tests
            char buf[256];
            std::snprintf(buf, sizeof buf, "cell %s k=%s dt=%sms %s %s reversals=%s", scene.c_str(),
                          num(k).c_str(), num(dms).c_str(), integ.c_str(),
                          c.stable       ? "stable"
                          : c.newton_nan ? "newton_failed"
                                         : "unstable",
                          num(c.reversals, "%.2f").c_str());
            lines.push_back(buf);
          }
      }
      std::printf("\n");
      for (const auto& l : lines) std::printf("%s\n", l.c_str());
    }
    if (!o.json_path.empty()) {
      std::ofstream f(o.json_path);
      if (!f) throw std::invalid_argument("--json: cannot write " + o.json_path);
      f << json({{"horizon_s", o.horizon},
                 {"reference_dt_s", h_ref},
                 {"compare_every_s", delta},
                 {"batch", o.batch},
                 {"threads", o.threads},
                 {"sets", o.sets},
                 {"cells", all}})
               .dump(1)
        << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "mass_spring_stability: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
