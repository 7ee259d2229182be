// configs/mjcf/two_spheres.xml: two spheres on slides driven at each other at ±1 m/s. MuJoCo
// collides them; the import maps the pair to model.pairs, and steer collides them too (before,
// the pair was dropped and they passed through each other). Both laws are soft but different
// (MuJoCo's solref 0.02 constraint, steer's penalty law), so the check is the bounce itself,
// with the figures printed side by side: after 0.5 s both engines have the balls on their own
// sides, moving apart, and steer's positions within 0.1 m of MuJoCo's. Label crosscheck.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
#include "articulated_steps.h"
#include "mujoco_handles.h"

using namespace steer;
using steer::testing::DataFree;
using steer::testing::ModelFree;
using steer::testing::stepped;

namespace {

namespace fs = std::filesystem;
const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";

TEST(ContactPairMujoco, TwoSpheresBounceAsInMujoco) {
  nlohmann::json j = {{"name", "two_spheres"},
                      {"model", {{"type", "articulated"}, {"mjcf", "mjcf/two_spheres.xml"}}},
                      {"simulation", {{"steps", 500}, {"precision", "float64"}}},
                      {"initial_state", {{"v", {1.0, -1.0}}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  const ExperimentConfig c = parse_config(j, kConfigs.string());
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  ASSERT_EQ(s.large.n_pairs, 1) << "the sphere pair must be modelled, not dropped";
  const ArticulatedLarge& m = s.large;
  const std::vector<double> x = stepped(m, c.x0, {0.0, 0.0}, c.theta, 500);
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> mm(
      mj_loadXML((kConfigs / "mjcf/two_spheres.xml").string().c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(mm) << err;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  d->qvel[0] = 1.0, d->qvel[1] = -1.0;
  for (int k = 0; k < 500; ++k) mj_step(mm.get(), d.get());
  std::printf(
      "[ two_spheres.xml ] after 0.5 s  steer: q = (%.4f, %.4f) m, v = (%.3f, %.3f) m/s;  "
      "MuJoCo: q = (%.4f, %.4f) m, v = (%.3f, %.3f) m/s\n",
      x[0], x[1], x[2], x[3], d->qpos[0], d->qpos[1], d->qvel[0], d->qvel[1]);
  // both bounced: the left ball moves left, the right ball right, each on its own side
  EXPECT_LT(x[2], 0.0);
  EXPECT_GT(x[3], 0.0);
  EXPECT_LT(d->qvel[0], 0.0);
  EXPECT_GT(d->qvel[1], 0.0);
  EXPECT_LT(-0.5 + x[0], 0.5 + x[1]);
  EXPECT_NEAR(x[0], d->qpos[0], 0.1);
  EXPECT_NEAR(x[1], d->qpos[1], 0.1);
}

}  // namespace
