// The timestep check (validation.timestep_check: the same variables at h/2 over 2T steps) on
// loss.observations with interpolation "none" (src/config/loss_data.cpp, build_track_table).
// Without interpolation the term is a sum over the observation times, one term per observation
// at any timestep, so the half-step run keeps each weight and uses the steps that are also steps
// of the run at h: both runs compare the same observations. (Halving the weights, as an
// interpolated source's Riemann sum needs, would halve that loss: a change of 0.5 on every
// rollout.)
//   - the tables: at h/2, a "none" source's rows 2k equal its rows k at h (value and weight) and
//     its odd rows carry weight 0; a "linear" source's weights are halved at every half step;
//   - end to end (`steer check` on a drag-free projectile fitted to observations of another
//     launch, at every step and at every 10th step): the loss changes at h/2 by the Euler
//     step's O(h) only, below 0.05 (limit stated here; the figures are printed), and no rollout
//     is labelled timestep_sensitive; the linear source, unchanged by this, stays below it too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"
#include "experiment/experiment.h"
#include "recorded_fit.h"

namespace steer {
namespace {

using nlohmann::json;

constexpr int kSteps = 200;
constexpr double kDt = 0.002;  // [s]

// a drag-free projectile from (0, 1) m at (1.5, 0.5) m/s, a batch of 3 launch speeds, fitted
// to observations of a launch at (1.2, 0.8) m/s every `every` steps
json projectile_config(const std::string& interpolation, int every) {
  json rows = json::array();
  for (int k = 0; k <= kSteps; k += every) {
    const double t = k * kDt;
    rows.push_back({t, 1.2 * t, 1.0 + 0.8 * t - 0.5 * 9.81 * t * t});
  }
  return {{"name", "obs"},
          {"model", {{"type", "projectile"}, {"dim", 2}, {"gravity", 9.81}, {"drag", 0.0}}},
          {"simulation", {{"dt", kDt}, {"steps", kSteps}, {"backend", "cpu"}}},
          {"initial_state", {{"position", {0, 1.0}}, {"velocity", {1.5, 0.5}}}},
          {"batch", {{"size", 3}, {"sweep", {{"x0.velocity.x", {1.4, 1.5, 1.6}}}}}},
          {"loss",
           {{"observations",
             {{"columns", {"t", "position.x", "position.y"}},
              {"values", rows},
              {"weight", 100.0},
              {"interpolation", interpolation}}}}},
          {"variables", {{"x0.velocity.x", json::object()}, {"x0.velocity.y", json::object()}}},
          {"validation",
           {{"at", {"initial"}}, {"epsilon_sweep", {1e-3, 1e-5}}, {"secant_check", false}}}};
}

// (value, weight) of channel ch at row k of c's bound tracking table
std::pair<double, double> cell(const ExperimentConfig& c, int k, int ch) {
  const std::vector<double>& t = *c.track_table;
  const size_t at = (size_t(k) * c.loss.n_track + ch) * 2;
  return {t[at], t[at + 1]};
}

TEST(ObservationTimestep, HalfStepTableKeepsTheObservations) {
  for (int every : {1, 10}) {
    SCOPED_TRACE("observations every " + std::to_string(every) + " steps");
    const ExperimentConfig c = parse_config(projectile_config("none", every));
    const ExperimentConfig f = halved_timestep(c);
    ASSERT_EQ(c.loss.track_rows, kSteps + 1);
    ASSERT_EQ(f.loss.track_rows, 2 * kSteps + 1);
    ASSERT_EQ(f.loss.n_track, c.loss.n_track);
    int observed_h = 0, observed_half = 0;
    for (int k = 0; k <= 2 * kSteps; ++k)
      for (int ch = 0; ch < c.loss.n_track; ++ch) {
        const auto [v, w] = cell(f, k, ch);
        if (w != 0) ++observed_half;
        if (k % 2 == 1) {
          EXPECT_EQ(w, 0.0) << "half step " << k << " lies between the run's steps";
          continue;
        }
        const auto [v0, w0] = cell(c, k / 2, ch);
        EXPECT_EQ(w, w0) << "row " << k << " channel " << ch;
        EXPECT_EQ(v, v0) << "row " << k << " channel " << ch;
        if (w0 != 0) ++observed_h;
      }
    EXPECT_EQ(observed_half, observed_h);
    EXPECT_EQ(observed_h, 2 * (kSteps / every + 1));
  }
  // an interpolated source stays a Riemann sum: half the weight at every half step
  const ExperimentConfig c = parse_config(projectile_config("linear", 10));
  const ExperimentConfig f = halved_timestep(c);
  for (int k = 0; k <= 2 * kSteps; ++k)
    for (int ch = 0; ch < c.loss.n_track; ++ch)
      EXPECT_EQ(cell(f, k, ch).second, 0.5 * cell(c, 0, ch).second) << k;
}

json timestep_check(const json& j) { return testing::run_in_process(j, "check")["validation"][0]; }

TEST(ObservationTimestep, CheckComparesLikeWithLike) {
  // the Euler step's O(h) change: y's error a h t / 2 (a = 9.81 m/s², h = 2 ms) against the
  // mismatch's 0.3 m/s moves the loss by a few per cent; halved weights would give 0.5
  constexpr double kLimit = 0.05;
  for (const char* interpolation : {"none", "linear"})
    for (int every : {1, 10}) {
      const std::string what =
          std::string(interpolation) + ", observations every " + std::to_string(every) + " steps";
      const json v = timestep_check(projectile_config(interpolation, every));
      ASSERT_TRUE(v.contains("timestep_check")) << what;
      const json& t = v["timestep_check"];
      ASSERT_EQ(t["loss_change"].size(), 3u) << what;
      for (size_t b = 0; b < 3; ++b) {
        const double dl = t["loss_change"][b].get<double>(),
                     dg = t["gradient_change"][b].get<double>();
        std::printf("%s, rollout %zu: loss change %.3e, gradient change %.3e at h/2\n",
                    what.c_str(), b, dl, dg);
        EXPECT_LT(dl, kLimit) << what << " rollout " << b;
        EXPECT_LT(dg, kLimit) << what << " rollout " << b;
      }
      EXPECT_EQ(t["rollouts_labelled"].get<int>(), 0) << what;
      EXPECT_TRUE(v["all_passed"].get<bool>()) << what;
    }
}

}  // namespace
}  // namespace steer
