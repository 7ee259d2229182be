// MuJoCo's own view of the legged models written for steer (configs/mjcf/quadruped.xml,
// configs/mjcf/box.xml), compiled and simulated by MuJoCo (4.0.1, cmake/mujoco_import.cmake), so
// that a file error (a leg on the wrong side, a servo that does not hold the pose, a foot
// that does not reach the floor) shows here before any steer config uses it:
// - the quadruped has the structure docs/legged.md describes (13 bodies, a free root,
//   12 servoed hinges, four collidable feet);
// - from MuJoCo's default state (qpos0, ctrl 0) it stands under its servos for 2 s: the
//   torso stays between 0.33 and 0.36 m, upright, the joints near 0, all four feet in contact,
//   and it comes to rest;
// - lifted 1 m and dropped, its feet stay off the floor for 0.4 s, the servos keep every
//   joint at 0 (uniform gravity exerts no joint torque in free fall) and the centre of mass
//   follows the semi-implicit Euler parabola g h² T (T + 1) / 2;
// - the box rests on its eight corner spheres.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace {

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

ModelPtr load(const std::string& file) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, err, sizeof(err));
  EXPECT_NE(m, nullptr) << file << ": " << err;
  return ModelPtr(m);
}

const std::string kQuadruped = std::string(STEER_SOURCE_DIR) + "/configs/mjcf/quadruped.xml";
const std::string kBox = std::string(STEER_SOURCE_DIR) + "/configs/mjcf/box.xml";

// angle between the torso's z axis and the world's z axis [rad], from qpos[3..6] = (w, x, y, z)
double tilt(const mjData* d) {
  const double x = d->qpos[4], y = d->qpos[5];
  return std::acos(std::clamp(1 - 2 * (x * x + y * y), -1.0, 1.0));
}

TEST(LeggedMujoco, QuadrupedHasTheDocumentedStructure) {
  ModelPtr m = load(kQuadruped);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->nbody, 14);  // world + torso + 4 × (hip, thigh, shin)
  EXPECT_EQ(m->nq, 19);     // free joint (7) + 12 hinges
  EXPECT_EQ(m->nv, 18);
  EXPECT_EQ(m->nu, 12);
  EXPECT_EQ(m->jnt_type[0], mjJNT_FREE);
  EXPECT_DOUBLE_EQ(m->opt.timestep, 0.002);
  EXPECT_EQ(m->opt.integrator, mjINT_EULER);
  EXPECT_NEAR(mj_getTotalmass(m.get()), 14.4, 1e-12);
  int feet = 0;
  for (int g = 0; g < m->ngeom; ++g)
    if (m->geom_contype[g] || m->geom_conaffinity[g]) {
      if (m->geom_type[g] == mjGEOM_SPHERE)
        ++feet;
      else
        EXPECT_EQ(m->geom_type[g], mjGEOM_PLANE)
            << "geom " << g << " collides but is not a foot or the floor";
    }
  EXPECT_EQ(feet, 4);
}

TEST(LeggedMujoco, QuadrupedStandsUnderItsServos) {
  ModelPtr m = load(kQuadruped);
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  double zmin = 1e9, zmax = -1e9, max_tilt = 0, max_joint = 0;
  const int steps = 1000;  // 2 s
  for (int k = 0; k < steps; ++k) {
    mj_step(m.get(), d.get());
    zmin = std::min(zmin, d->qpos[2]);
    zmax = std::max(zmax, d->qpos[2]);
    max_tilt = std::max(max_tilt, tilt(d.get()));
    for (int j = 7; j < m->nq; ++j) max_joint = std::max(max_joint, std::fabs(d->qpos[j]));
  }
  const double speed = mju_norm(d->qvel, m->nv);
  std::printf(
      "stand 2 s: torso z in [%.4f, %.4f] m, tilt <= %.2e rad, |q_joint| <= %.3f rad, %d contacts, "
      "|qvel| %.1e at the end\n",
      zmin, zmax, max_tilt, max_joint, d->ncon, speed);
  EXPECT_GT(zmin, 0.33);
  EXPECT_LT(zmax, 0.36);
  EXPECT_LT(max_tilt, 0.02);
  EXPECT_LT(max_joint, 0.1);
  EXPECT_EQ(d->ncon, 4);
  EXPECT_LT(speed, 0.02);
}

TEST(LeggedMujoco, QuadrupedFallsFreelyWithItsPoseHeld) {
  ModelPtr m = load(kQuadruped);
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  d->qpos[2] += 1.0;
  mj_forward(m.get(), d.get());
  const double com0 = d->subtree_com[3 + 2];  // body 1 (torso): the whole robot's centre of mass
  const int steps = 200;                      // 0.4 s; the feet reach the floor after ~0.45 s
  double max_joint = 0;
  int max_contacts = 0;
  for (int k = 0; k < steps; ++k) {
    mj_step(m.get(), d.get());
    for (int j = 7; j < m->nq; ++j) max_joint = std::max(max_joint, std::fabs(d->qpos[j]));
    max_contacts = std::max(max_contacts, d->ncon);
  }
  mj_forward(m.get(), d.get());
  const double h = m->opt.timestep, g = 9.81;
  const double fell = com0 - d->subtree_com[3 + 2];
  const double parabola = g * h * h * steps * (steps + 1) / 2;
  std::printf(
      "free fall 0.4 s: centre of mass fell %.9f m (Euler parabola %.9f m), |q_joint| <= %.1e "
      "rad\n",
      fell, parabola, max_joint);
  EXPECT_EQ(max_contacts, 0);
  EXPECT_LT(max_joint, 1e-12);
  EXPECT_NEAR(fell, parabola, 1e-9);
  EXPECT_NEAR(tilt(d.get()), 0.0, 1e-12);
}

TEST(LeggedMujoco, BoxRestsOnItsCorners) {
  ModelPtr m = load(kBox);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->nq, 7);
  EXPECT_EQ(m->jnt_type[0], mjJNT_FREE);
  DataPtr d(mj_makeData(m.get()));
  for (int k = 0; k < 500; ++k) mj_step(m.get(), d.get());  // 1 s
  std::printf("box after 1 s: z %.4f m, tilt %.1e rad, %d contacts\n", d->qpos[2], tilt(d.get()),
              d->ncon);
  EXPECT_EQ(d->ncon, 4);  // the four lower corners
  EXPECT_LT(tilt(d.get()), 1e-3);
  EXPECT_LT(mju_norm(d->qvel, m->nv), 1e-2);
}

}  // namespace
