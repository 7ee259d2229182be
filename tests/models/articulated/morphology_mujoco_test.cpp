// Body positions as θ slots against MuJoCo with the same bodies moved: configs/mjcf/offset_arm.xml
// (joints off their bodies' origins, rotated bodies) and configs/mjcf/joint_tree.xml (a body with
// three joints and one with two: their pos on the first frame), both with explicit inertials (no
// mass derived from geoms, so moving a body changes nothing else) and no constraint ever active.
// Steer's <body>.pos slots and MuJoCo's body_pos are moved by the same offsets, and 500 ms at the
// files' 2 ms under Euler, kicked, must agree on every q and q̇ within 1e-10, while differing from
// the unmoved run by more than 1e-3 (the offsets matter). Built where MuJoCo is found (label
// crosscheck).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
#include "mujoco_files.h"

using namespace steer;
using steer::testing::imported_config;
using steer::testing::mujoco_model;
using steer::testing::side_by_side;

namespace {

constexpr int kSteps = 250;

struct Move {
  const char* body;
  double d[3];
};

// max |x_steer − x_mujoco| over the run with the moves applied, and max |x_moved − x_unmoved|
// of steer's own run
void run(const char* file, const std::vector<Move>& moves, double& worst, double& moved) {
  // offset_arm's elbow has a force limit: steer's smooth saturation is raised to β = 10³ /(N·m),
  // as import_mujoco_test does, so that it is MuJoCo's clamp to rounding well inside the limit
  const ExperimentConfig c = imported_config(
      file, "euler", kSteps, nlohmann::json::parse(R"({"torque_limits": {"sharpness": 1000}})"));
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  std::unique_ptr<mjModel, steer::testing::ModelFree> mm = mujoco_model(file);
  ASSERT_TRUE(mm);
  std::vector<double> p = c.theta;
  for (const Move& mv : moves) {
    const int id = mj_name2id(mm.get(), mjOBJ_BODY, mv.body);
    ASSERT_GE(id, 0) << mv.body;
    for (int i = 0; i < 3; ++i) {
      const int q = c.info.param_index(std::string(mv.body) + ".pos." + "xyz"[i]);
      ASSERT_GE(q, 0) << mv.body;
      ASSERT_EQ(p[size_t(q)], mm->body_pos[3 * id + i]) << mv.body << " " << i;
      p[size_t(q)] += mv.d[i];
      mm->body_pos[3 * id + i] += mv.d[i];
    }
  }
  side_by_side(m, c.x0, p, c.theta, mm.get(), kSteps, 0.5, worst, moved);
}

TEST(MorphologyMujoco, MovedBodiesMatchMujoco) {
  struct Case {
    const char* file;
    std::vector<Move> moves;
  };
  const Case cases[] = {
      {"mjcf/offset_arm.xml", {{"upper", {0.03, -0.02, 0.05}}, {"fore", {0.1, 0.0, -0.04}}}},
      {"mjcf/joint_tree.xml", {{"torso", {0.0, 0.0, 0.2}}, {"leg", {0.02, 0.01, -0.1}}}}};
  for (const Case& cs : cases) {
    double worst = 0, moved = 0;
    run(cs.file, cs.moves, worst, moved);
    EXPECT_LE(worst, 1e-10) << cs.file;
    EXPECT_GT(moved, 1e-3) << cs.file << ": moving the bodies should change the motion";
    std::printf("[ %s ] bodies moved, 500 ms euler: max |x_steer − x_mujoco| = %.3g (moved %.3g)\n",
                cs.file, worst, moved);
  }
}

}  // namespace
