// configs/mjcf/two_spheres.xml: two spheres on slides driven at each other at ±1 m/s. MuJoCo
// collides them; the import maps the pair to model.pairs, and steer collides them too (before,
// the pair was dropped and they passed through each other). Both laws are soft but different
// (MuJoCo's solref 0.02 constraint, steer's penalty law), so the check is the bounce itself,
// with the figures printed side by side: after 0.5 s both engines have the balls on their own
// sides, moving apart, and steer's positions within 0.1 m of MuJoCo's.
// configs/mjcf/box_and_wall.xml: planes at any angle and boxes (pair_geometry.h). The geometry
// is the same in both engines, so it is checked to round-off: at 200 random poses of its three
// free bodies (a ball, a rod, a crate) near a tilted wall and a turned block, every geom pair's
// deepest contact in steer (depth, normal, contact point) against MuJoCo's collision detection
// (mj_collision with every margin raised to 1 m, so that separated pairs report their distance
// too) within 1e-9 m, but where the rod's axis is inside a box (steer takes its deepest candidate
// point there, MuJoCo its own construction; both are approximations of the deepest point).
// configs/mjcf/box_stack.xml: a box dropped onto another (each box's corners against the other,
// 16 pairs) comes to rest on it in both engines: after 1 s, the base's height within 6 mm of
// MuJoCo's (the laws differ: steer's penalty sags by its documented M g / (n k), 4.7 mm here),
// the top box's height above the base within 1 mm of MuJoCo's, both nearly at rest, and the top
// box never falling into the base.
// configs/mjcf/capsule_chain.xml: three hinged capsules, the middle one on a free joint, dropped
// across a block settle over it in both engines: after 2 s, the middle link's height within
// 6 mm of MuJoCo's (the penalty's sag) and its x within 1 cm, the outer links' hinges within
// 0.1 rad (the left one pressed against the block's side) and 0.05 rad (the right one hanging
// past it). Label crosscheck.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
#include "articulated_steps.h"
#include "mujoco_files.h"
#include "mujoco_handles.h"

using namespace steer;
using steer::testing::configs_dir;
using steer::testing::DataFree;
using steer::testing::imported_config;
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

// a unit quaternion from three uniform numbers (Shoemake)
void random_quat(std::mt19937& rng, double* q) {
  std::uniform_real_distribution<double> u(0, 1);
  const double a = u(rng), b = 2 * M_PI * u(rng), c = 2 * M_PI * u(rng);
  q[0] = std::sqrt(1 - a) * std::sin(b), q[1] = std::sqrt(1 - a) * std::cos(b);
  q[2] = std::sqrt(a) * std::sin(c), q[3] = std::sqrt(a) * std::cos(c);
}

// a pair's geoms by name: "ball|wall", "rod.end0|wall" (a capsule's end cap against a plane),
// "crate.corner3|wall" (a box's corner)
std::pair<std::string, std::string> pair_geoms(const std::string& name) {
  const size_t bar = name.find('|');
  std::string a = name.substr(0, bar);
  if (a.find('.') != std::string::npos) a = a.substr(0, a.find('.'));
  return {a, name.substr(bar + 1)};
}

TEST(ContactPairMujoco, PlanesAndBoxesMatchMujocoGeometry) {
  const ExperimentConfig c = imported_config("mjcf/box_and_wall.xml", "euler", 1);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = s.large;
  // the ball, the rod's 2 end caps and the crate's 8 corners against the wall; ball–block,
  // rod–block, ball–rod, ball–crate, rod–crate
  ASSERT_EQ(m.n_pairs, 16);
  std::unique_ptr<mjModel, ModelFree> mm = steer::testing::mujoco_model("mjcf/box_and_wall.xml");
  ASSERT_TRUE(mm);
  for (int g = 0; g < mm->ngeom; ++g) mm->geom_margin[g] = 1.0;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ux(-0.4, 0.55), uy(-0.25, 0.25), uz(0.05, 0.45);
  int compared = 0, touching = 0, cores_inside = 0;
  double worst_depth = 0, worst_normal = 0, worst_point = 0;
  for (int pose = 0; pose < 200; ++pose) {
    for (int b = 0; b < 3; ++b) {
      double* q = d->qpos + 7 * b;
      q[0] = ux(rng), q[1] = uy(rng), q[2] = uz(rng);
      random_quat(rng, q + 3);
    }
    mj_kinematics(mm.get(), d.get());
    mj_collision(mm.get(), d.get());
    std::vector<double> q(d->qpos, d->qpos + mm->nq);
    ArticulatedLarge::Kin<double> K;
    m.forward_kinematics(q.data(), view(c.theta.data()), K);
    // steer's deepest pair per geom pair (a capsule's caps and a box's corners are one pair each)
    struct Deepest {
      double d = -1e300, xc[3], n[3];
      int count = 0;
      bool core_inside = false;  // a capsule's axis inside a box (steer's approximation there)
    };
    std::map<std::pair<std::string, std::string>, Deepest> steer_deepest;
    for (int p = 0; p < m.n_pairs; ++p) {
      Deepest e;
      e.d = pair_geometry<ArticulatedLarge, double>(m, K, p, e.xc, e.n);
      e.core_inside = m.pair_shape[p][0] == kPairCapsule && m.pair_shape[p][1] == kPairBox &&
                      e.d >= m.pair_radius[p][0];
      Deepest& best = steer_deepest[pair_geoms(s.names.pairs[size_t(p)])];
      e.count = best.count + 1;
      if (e.d > best.d) best = e;
      best.count = e.count;
    }
    for (const auto& [geoms, st] : steer_deepest) {
      const int g0 = mj_name2id(mm.get(), mjOBJ_GEOM, geoms.first.c_str());
      const int g1 = mj_name2id(mm.get(), mjOBJ_GEOM, geoms.second.c_str());
      ASSERT_GE(g0, 0);
      ASSERT_GE(g1, 0);
      const mjContact* deepest = nullptr;
      for (int i = 0; i < d->ncon; ++i) {
        const mjContact& con = d->contact[i];
        if ((con.geom[0] == g0 && con.geom[1] == g1) || (con.geom[0] == g1 && con.geom[1] == g0))
          if (!deepest || con.dist < deepest->dist) deepest = &con;
      }
      if (!deepest) continue;  // beyond MuJoCo's 1 m margin
      if (st.core_inside) {
        ++cores_inside;
        continue;
      }
      // MuJoCo's normal points from its geom[0] to geom[1]; steer's from side 1 to side 0
      const double sign = deepest->geom[0] == g0 ? -1.0 : 1.0;
      ++compared;
      touching += st.d > 0;
      worst_depth = std::max(worst_depth, std::fabs(st.d + deepest->dist));
      for (int i = 0; i < 3; ++i) {
        worst_normal = std::max(worst_normal, std::fabs(st.n[i] - sign * deepest->frame[i]));
        worst_point = std::max(worst_point, std::fabs(st.xc[i] - deepest->pos[i]));
      }
      EXPECT_NEAR(st.d, -deepest->dist, 1e-9)
          << geoms.first << "|" << geoms.second << " pose " << pose;
    }
  }
  std::printf(
      "[ box_and_wall.xml ] 200 poses, %d geom pairs compared (%d touching; %d with the rod's "
      "axis inside a box left out): max |depth − MuJoCo's| %.2g m, normal %.2g, contact point "
      "%.2g m\n",
      compared, touching, cores_inside, worst_depth, worst_normal, worst_point);
  EXPECT_GT(compared, 600);
  EXPECT_GT(touching, 20);
  EXPECT_LE(worst_normal, 1e-9);
  EXPECT_LE(worst_point, 1e-9);
}

TEST(ContactPairMujoco, BoxRestsOnABoxAsInMujoco) {
  const int steps = 500;  // 1 s at the file's 2 ms
  const ExperimentConfig c = imported_config("mjcf/box_stack.xml", "euler", steps);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  ASSERT_EQ(m.n_pairs, 16);
  std::vector<double> u(size_t(m.nu()), 0.0);
  const std::vector<double> x = stepped(m, c.x0, u, c.theta, steps);
  std::unique_ptr<mjModel, ModelFree> mm = steer::testing::mujoco_model("mjcf/box_stack.xml");
  ASSERT_TRUE(mm);
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  for (int k = 0; k < steps; ++k) mj_step(mm.get(), d.get());
  const int nq = m.nq();
  double speed = 0, mj_speed = 0;
  for (int i = 0; i < m.n_dof; ++i)
    speed = std::max(speed, std::fabs(x[size_t(nq + i)])),
    mj_speed = std::max(mj_speed, std::fabs(d->qvel[i]));
  std::printf(
      "[ box_stack.xml ] after 1 s  top box z: steer %.4f m, MuJoCo %.4f m (0.15 resting "
      "exactly); base z: steer %.4f, MuJoCo %.4f; largest |q̇|: steer %.3g, MuJoCo %.3g\n",
      x[9], d->qpos[9], x[2], d->qpos[2], speed, mj_speed);
  // the base sinks into the floor by its penalty's sag, M g / (n k) = 2.5 · 9.81 / (4 · 1316)
  // = 4.7 mm (docs/contact.md); the top box sits on the base as in MuJoCo
  EXPECT_NEAR(x[2], d->qpos[2], 6e-3);
  EXPECT_NEAR(x[9] - x[2], d->qpos[9] - d->qpos[2], 1e-3);
  EXPECT_GT(x[9], x[2] + 0.09) << "the top box fell into the base";
  EXPECT_LT(speed, 0.05);
}

TEST(ContactPairMujoco, CapsuleChainDrapesOverABoxAsInMujoco) {
  const int steps = 1000;  // 2 s at the file's 2 ms
  const ExperimentConfig c = imported_config("mjcf/capsule_chain.xml", "euler", steps);
  const ArticulatedLarge& m = c.model_state<ArticulatedSetup>().large;
  ASSERT_EQ(m.n_pairs, 4);  // each link against the block, and the two outer links
  std::vector<double> u(size_t(m.nu()), 0.0);
  const std::vector<double> x = stepped(m, c.x0, u, c.theta, steps);
  std::unique_ptr<mjModel, ModelFree> mm = steer::testing::mujoco_model("mjcf/capsule_chain.xml");
  ASSERT_TRUE(mm);
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  for (int k = 0; k < steps; ++k) mj_step(mm.get(), d.get());
  std::printf(
      "[ capsule_chain.xml ] after 2 s  middle link x, z: steer %.4f, %.4f m, MuJoCo %.4f, %.4f "
      "m; left hinge %.3f, %.3f rad; right hinge %.3f, %.3f rad\n",
      x[0], x[2], d->qpos[0], d->qpos[2], x[7], d->qpos[7], x[8], d->qpos[8]);
  EXPECT_NEAR(x[2], d->qpos[2], 6e-3);  // the penalty's sag (docs/contact.md)
  EXPECT_NEAR(x[0], d->qpos[0], 0.01);
  EXPECT_NEAR(x[7], d->qpos[7], 0.1);  // pressed against the block's side
  EXPECT_NEAR(x[8], d->qpos[8], 0.05);  // hanging free past it
  EXPECT_GT(x[2], 0.31) << "the middle link sank into the block (its top is at 0.3 m)";
}

}  // namespace
