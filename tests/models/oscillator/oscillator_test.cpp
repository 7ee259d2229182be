// The test-only model (tests/models/oscillator/), registered the documented way: a folder and
// one line of the registered-models list (tests/models/oscillator/CMakeLists.txt). Its hand adjoint
// passes the generic gradient suite; its derivative converges to the closed form as dt shrinks; and
// the CLI, the report and the benchmark, built from their unchanged sources, run it
// (tests/python/test_oscillator.py runs it from Python).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "config/config.h"
#include "gradient_suite.h"
#include "models/oscillator/oscillator.h"
#include "models/registry.h"
#include "problem/problem.h"

namespace steer {
namespace {

using steer::testing::RolloutCase;
using steer::testing::StepCase;

struct OscillatorCases {
  using Model = Oscillator;
  static std::vector<StepCase<Oscillator>> step_cases() {
    std::vector<StepCase<Oscillator>> out;
    StepCase<Oscillator> c;
    c.name = "damped, pushed";
    c.model.dt = 0.01;
    c.x = {0.2, -0.3};
    c.u = {1.5};
    c.p = {40.0, 0.5, 1.3};
    out.push_back(c);
    c.name = "undamped, coarse step";
    c.model.dt = 0.1;
    c.p = {9.0, 0.0, 0.7};
    out.push_back(c);
    return out;
  }
  static std::vector<RolloutCase<Oscillator>> rollout_cases() {
    RolloutCase<Oscillator> c;
    c.name = "terminal position and velocity";
    c.model.dt = 0.01;
    c.steps = 120;
    c.checkpoint_every = 11;
    c.x0 = {0.2, 0.0};
    c.p = {40.0, 0.5, 1.0};
    c.u.assign(size_t(c.steps), 0.0);
    for (int k = 0; k < c.steps; ++k) c.u[size_t(k)] = 0.3 * std::sin(0.05 * k);
    c.loss.n_terminal = 2;
    c.loss.terminal_index[0] = 0, c.loss.terminal_target[0] = -0.1, c.loss.terminal_weight[0] = 1.0;
    c.loss.terminal_index[1] = 1, c.loss.terminal_target[1] = 0.0, c.loss.terminal_weight[1] = 0.5;
    return {c};
  }
};

}  // namespace
}  // namespace steer

namespace steer::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Oscillator, GradientSuite, ::testing::Types<steer::OscillatorCases>);
}

namespace steer {
namespace {

// The registry lists the model after the shipped ones, and a config names it like any other.
TEST(OscillatorModel, RegisteredByItsOneLine) {
  ASSERT_NE(find_model("oscillator"), nullptr);
  EXPECT_EQ(registered_models().back()->name, "oscillator");
  const ExperimentConfig c =
      load_config(STEER_SOURCE_DIR "/tests/models/oscillator/oscillator.json");
  EXPECT_EQ(c.model_type, "oscillator");
  EXPECT_EQ(c.info.nx(), 2);
}

// Undamped, unforced: q(T) = q0 cos(ωT), ω = √(k/m), so ∂q_T/∂q0 = cos(ωT) and ∂q_T/∂k =
// −q0 T sin(ωT) / (2 √(k m)). The discrete gradient of the loss ½ q_T² (run through the problem,
// as the CLI runs it) converges to the closed form at first order: each error below 0.6 of the
// previous one as dt halves.
TEST(OscillatorModel, GradientConvergesToTheClosedForm) {
  const double q0 = 0.2, k = 40.0, m = 1.0, T = 1.0, w = std::sqrt(k / m);
  const double qT = q0 * std::cos(w * T);
  const double dq0 = qT * std::cos(w * T),
               dk = qT * (-q0 * T * std::sin(w * T) / (2 * std::sqrt(k * m)));
  double prev0 = 1e300, prevk = 1e300;
  for (int steps : {200, 400, 800, 1600}) {
    nlohmann::json j = {
        {"name", "oscillator_convergence"},
        {"model", {{"type", "oscillator"}, {"stiffness", k}, {"damping", 0.0}, {"mass", m}}},
        {"simulation", {{"dt", T / steps}, {"steps", steps}, {"precision", "float64"}}},
        {"initial_state", {{"position", q0}, {"velocity", 0.0}}},
        {"loss", {{"terminal", {{{"state", "position"}, {"target", 0.0}, {"weight", 1.0}}}}}},
        {"variables",
         {{"x0.position", {{"lower", -1.0}, {"upper", 1.0}}},
          {"theta.stiffness", {{"lower", 1.0}, {"upper", 100.0}}}}},
        {"validation", {{"enabled", false}}}};
    auto p = make_problem(parse_config(j), BackendKind::kCpu, 1);
    Evaluation e;
    p->evaluate(p->initial(), true, e);
    // the variables in the problem's order (the config object's keys come sorted)
    const auto& names = p->var_names();
    const size_t iq = size_t(std::find(names.begin(), names.end(), "x0.position") - names.begin());
    const size_t ik =
        size_t(std::find(names.begin(), names.end(), "theta.stiffness") - names.begin());
    ASSERT_LT(std::max(iq, ik), names.size());
    const double err0 = std::fabs(e.grad[iq] - dq0), errk = std::fabs(e.grad[ik] - dk);
    EXPECT_LT(err0, 0.6 * prev0) << steps << " steps";
    EXPECT_LT(errk, 0.6 * prevk) << steps << " steps";
    prev0 = err0, prevk = errk;
  }
  EXPECT_LT(prev0, 2e-3);
  EXPECT_LT(prevk, 2e-4);
}

struct Cmd {
  int code = -1;
  std::string out;
};

// runs a command with stdout and stderr captured together
Cmd run(const std::string& cmd, const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "output.txt";
  const int status = std::system((cmd + " >'" + out.string() + "' 2>&1").c_str());
  std::ifstream f(out, std::ios::binary);
  Cmd r;
  r.out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() /
                 ("steer_oscillator_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

const std::string kConfig = STEER_SOURCE_DIR "/tests/models/oscillator/oscillator.json";

// The CLI built from apps/steer/main.cpp unchanged checks the gradient (every rollout passes,
// no label), optimizes, and writes the artifact and a report that draws the model's scene.
TEST(OscillatorModel, TheCliChecksRunsAndReportsIt) {
  const auto dir = fresh_dir("cli");
  const Cmd check = run(std::string("'") + STEER_OSCILLATOR_CLI + "' check '" + kConfig +
                            "' --quiet --out '" + (dir / "check").string() + "'",
                        dir);
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("gradient check (initial): 2/2 passed"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("labels:"), std::string::npos) << check.out;
  const Cmd r = run(std::string("'") + STEER_OSCILLATOR_CLI + "' run '" + kConfig +
                        "' --quiet --out '" + (dir / "runs").string() + "'",
                    dir);
  ASSERT_EQ(r.code, 0) << r.out;
  std::filesystem::path run_dir;
  for (const auto& e : std::filesystem::directory_iterator(dir / "runs")) run_dir = e.path();
  ASSERT_FALSE(run_dir.empty());
  std::ifstream a(run_dir / "artifact.json");
  const nlohmann::json art = nlohmann::json::parse(a);
  EXPECT_EQ(art["effective_config"]["model"]["type"], "oscillator");
  std::ifstream h(run_dir / "report.html");
  const std::string page((std::istreambuf_iterator<char>(h)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("phase (q, v)"), std::string::npos)
      << "the report does not draw the model's scene";
  EXPECT_EQ(page.find("the motion is not drawn"), std::string::npos);
  std::filesystem::remove_all(dir);
}

#ifdef STEER_OSCILLATOR_BENCH
// The benchmark built from bench/bench_rollout.cpp unchanged measures it.
TEST(OscillatorModel, TheBenchmarkRunsIt) {
  const auto dir = fresh_dir("bench");
  const Cmd b = run(std::string("'") + STEER_OSCILLATOR_BENCH + "' --config '" + kConfig +
                        "' --batches 1,4 --precision both --min-time 0 --threads 1 --markdown",
                    dir);
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_NE(b.out.find("cpu float64 B=4"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("cpu float32 B=4"), std::string::npos) << b.out;
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace steer
