// The free root against MuJoCo 4.0.1 (the C API, as import_mujoco_test does), float64, both
// engines stepping the same imported file under Euler at 2 ms with zero controls:
//   - configs/mjcf/tumbling_body.xml, an asymmetric body spinning about all three axes with
//     gravity off, for 1 s (500 steps): after every step the quaternion (as a rotation: the
//     largest entry of R_steer − R_mujoco), p, v and ω within the tolerances below;
//   - configs/mjcf/quadruped.xml with contact disabled (a copy with <flag contact="disable"/>,
//     so the feet never touch the ground and no constraint acts) from a pose 0.5 m up with its
//     legs bent by up to 0.1 rad, falling under gravity with the servos holding the legs, for
//     500 ms (250 steps): every q and q̇ after every step within the tolerance below. The
//     servo torques stay far below the ±30 N·m force range (kp 0.1 rad = 12 N·m), where
//     steer's smooth saturation equals MuJoCo's clamp to rounding; near the range the two
//     laws differ by design (up to 0.14 N·m at sharpness 5) and so would the trajectories;
//   - the import's contact geoms: the quadruped's four feet and the box's eight corners
//     become ground points (model.contacts) with their bodies, positions and radii, the
//     plane's height and the pairs' friction; a capsule gives its two end caps.
// Tolerances: p and the orientation (the largest entry of R_steer − R_mujoco) within 1e-12, q̇
// within 1e-11, after every step. MuJoCo and steer evaluate the same equations in different
// orders (MuJoCo in the centre-of-mass frame with spatial algebra, steer by composite bodies
// and Newton–Euler about the joint anchors), so they agree to rounding, grown by the
// tumbling's sensitivity over the run (measured differences are printed as [ figures ] lines).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "steer/models/articulated.h"
#include "temp_dir.h"
#include "mujoco_files.h"
#include "mujoco_handles.h"

namespace steer::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";
constexpr double kH = 0.002;  // [s]

ExperimentConfig import_config(const fs::path& file, int steps) {
  nlohmann::json j = {{"name", "free_import"},
                      {"model", {{"type", "articulated"}, {"mjcf", file.string()}}},
                      {"simulation", {{"dt", kH}, {"steps", steps}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  return parse_config(j, kConfigs.string());
}

// steps steer's model and MuJoCo side by side from MuJoCo's state (qpos, qvel) for `steps`
// steps; returns the largest differences of p (or a joint's q), the orientation, and q̇
template <class Model>
void run_side_by_side(const Model& sm, const std::vector<double>& theta, mjModel* m, mjData* d,
                      int steps, double& gap_q, double& gap_rot, double& gap_v) {
  const int nq = sm.nq(), nv = sm.n_dof;
  ASSERT_EQ(nq, m->nq);
  ASSERT_EQ(nv, m->nv);
  std::vector<double> x(size_t(nq + nv)), xn(x.size()), u(size_t(nv), 0.0);
  for (int i = 0; i < nq; ++i) x[i] = d->qpos[i];
  for (int i = 0; i < nv; ++i) x[nq + i] = d->qvel[i];
  gap_q = gap_rot = gap_v = 0;
  for (int k = 0; k < steps; ++k) {
    auto X = view(x.data());
    auto U = view(u.data());
    auto P = view(const_cast<double*>(theta.data()));
    auto XN = view(xn.data());
    sm.template step<double>(k, X, U, P, XN);
    x.swap(xn);
    mj_step(m, d);
    ASSERT_EQ(d->nefc, 0) << "a constraint acted at step " << k;
    for (int i = 0; i < nq; ++i)
      if (i < 3 || i > 6) gap_q = std::max(gap_q, std::fabs(x[i] - d->qpos[i]));
    gap_rot = std::max(gap_rot, rotation_gap(x.data() + 3, d->qpos + 3));
    for (int i = 0; i < nv; ++i) gap_v = std::max(gap_v, std::fabs(x[nq + i] - d->qvel[i]));
  }
}

TEST(FreeBaseMujoco, TumblingBodyOneSecond) {
  const fs::path file = kConfigs / "mjcf" / "tumbling_body.xml";
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> m(
      mj_loadXML(file.string().c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(m) << err;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(m.get()));
  const double qvel[6] = {0.3, -0.1, 0.5, 2.0, -3.0, 5.0};  // v [m/s] (world), ω [rad/s] (body)
  for (int i = 0; i < 6; ++i) d->qvel[i] = qvel[i];
  mj_forward(m.get(), d.get());
  const ExperimentConfig c = import_config(file, 500);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  ASSERT_FALSE(s.large_tree);
  ASSERT_TRUE(s.model.free_base);
  // the import's default initial pose is MuJoCo's qpos0
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(c.x0[i], m->qpos0[i], 1e-15) << i;
  double gq, gr, gv;
  run_side_by_side(s.model, c.theta, m.get(), d.get(), 500, gq, gr, gv);
  std::printf(
      "[ figures ] tumbling body, 1 s at 2 ms (Euler): max |p - p_mj| %.3g m, max |R - R_mj| %.3g, "
      "max |qvel - qvel_mj| %.3g\n",
      gq, gr, gv);
  EXPECT_LT(gq, 1e-12);
  EXPECT_LT(gr, 1e-12);
  EXPECT_LT(gv, 1e-11);
}

TEST(FreeBaseMujoco, QuadrupedFeetInTheAir) {
  // a copy of the quadruped with contact disabled, next to the original (same folder layout)
  std::ifstream in(kConfigs / "mjcf" / "quadruped.xml");
  ASSERT_TRUE(in) << "configs/mjcf/quadruped.xml";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string xml = ss.str();
  const std::string opt = "gravity=\"0 0 -9.81\"/>";
  const size_t at = xml.find(opt);
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, opt.size(), "gravity=\"0 0 -9.81\"><flag contact=\"disable\"/></option>");
  TempDir dir("free_base_quadruped");
  const fs::path file = dir.path / "quadruped_no_contact.xml";
  std::ofstream(file) << xml;
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> m(
      mj_loadXML(file.string().c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(m) << err;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(m.get()));
  // 0.5 m up, tilted, moving and turning; the legs bent and swinging, the servos at ctrl 0
  d->qpos[2] = 0.5;
  const double tilt[4] = {0.98, 0.1, -0.1, 0.1};
  const double tn = std::sqrt(0.98 * 0.98 + 0.03);
  for (int i = 0; i < 4; ++i) d->qpos[3 + i] = tilt[i] / tn;
  for (int j = 7; j < m->nq; ++j) d->qpos[j] = 0.1 * std::sin(1.0 + j);
  const double v6[6] = {0.4, -0.2, 0.3, 1.0, -2.0, 0.5};
  for (int i = 0; i < 6; ++i) d->qvel[i] = v6[i];
  for (int j = 6; j < m->nv; ++j) d->qvel[j] = 0.3 * std::cos(1.0 + j);
  mj_forward(m.get(), d.get());
  const ExperimentConfig c = import_config(file, 250);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  ASSERT_TRUE(s.large.free_base);
  EXPECT_EQ(s.large.n_dof, 18);
  EXPECT_EQ(s.large.n_bodies, 18);  // 5 frames, the torso, 12 leg links
  double gq, gr, gv;
  run_side_by_side(s.large, c.theta, m.get(), d.get(), 250, gq, gr, gv);
  std::printf(
      "[ figures ] quadruped, feet in the air, 500 ms at 2 ms (Euler): max |q - q_mj| %.3g (m or "
      "rad), "
      "max |R - R_mj| %.3g, max |qvel - qvel_mj| %.3g\n",
      gq, gr, gv);
  EXPECT_LT(gq, 1e-12);
  EXPECT_LT(gr, 1e-12);
  EXPECT_LT(gv, 1e-11);
}

// the θ value of a named slot
double slot(const ExperimentConfig& c, const std::string& name) {
  for (size_t q = 0; q < c.info.param_names.size(); ++q)
    if (c.info.param_names[q] == name) return c.theta[q];
  ADD_FAILURE() << "no slot " << name;
  return 0;
}

TEST(FreeBaseMujoco, ContactGeomsBecomeGroundPoints) {
  const ExperimentConfig quad = import_config(kConfigs / "mjcf" / "quadruped.xml", 10);
  const ArticulatedLarge& q = quad.model_state<ArticulatedSetup>().large;
  const ArticulatedNames& qn = quad.model_state<ArticulatedSetup>().names;
  ASSERT_EQ(q.ground.n_points, 4);
  EXPECT_FALSE(q.contact);
  const char* feet[4] = {"FL_shin", "FR_shin", "HL_shin", "HR_shin"};
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(qn.bodies[q.ground.body[c]], feet[c]);
    EXPECT_NEAR(q.ground.pos[c][0], -0.112928, 1e-12);
    EXPECT_NEAR(q.ground.pos[c][2], -0.165067, 1e-12);
    EXPECT_EQ(q.ground.radius[c], 0.02);
  }
  EXPECT_EQ(slot(quad, "contact.height"), 0.0);
  EXPECT_EQ(slot(quad, "contact.friction"), 1.0);
  const ExperimentConfig box = import_config(kConfigs / "mjcf" / "box.xml", 10);
  const ArticulatedLarge& b = box.model_state<ArticulatedSetup>().large;
  ASSERT_EQ(b.ground.n_points, 8);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(std::fabs(b.ground.pos[c][0]), 0.095);
    EXPECT_EQ(b.ground.radius[c], 0.005);
  }
  EXPECT_EQ(slot(box, "contact.friction"), 0.5);
  // a capsule from (0, 0, 0) to (0.3, 0, 0) on a free body over a floor: its end caps
  TempDir dir("free_base_capsule");
  std::ofstream(dir.path / "capsule.xml")
      << "<mujoco><worldbody><geom name='floor' type='plane' size='5 5 0.1' pos='0 0 -0.2'/>"
         "<body name='rod' pos='0 0 1'><freejoint/><inertial pos='0 0 0' mass='1' "
         "diaginertia='0.01 0.01 0.01'/>"
         "<geom name='limb' type='capsule' size='0.02' fromto='0 0 0 0.3 0 0' "
         "mass='0'/></body></worldbody></mujoco>";
  const ExperimentConfig cap = import_config(dir.path / "capsule.xml", 10);
  const ArticulatedLarge& k = cap.model_state<ArticulatedSetup>().large;
  ASSERT_EQ(k.ground.n_points, 2);
  // (in the order of the capsule's z axis, which MuJoCo points from fromto's second end)
  EXPECT_NEAR(std::min(k.ground.pos[0][0], k.ground.pos[1][0]), 0.0, 1e-12);
  EXPECT_NEAR(std::max(k.ground.pos[0][0], k.ground.pos[1][0]), 0.3, 1e-12);
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(k.ground.pos[c][1], 0.0, 1e-12) << c;
    EXPECT_NEAR(k.ground.pos[c][2], 0.0, 1e-12) << c;
    EXPECT_EQ(k.ground.radius[c], 0.02);
  }
  EXPECT_EQ(slot(cap, "contact.height"), -0.2);
}

}  // namespace
}  // namespace steer::testing
