// model.morphology's geom sizes against MuJoCo recompiling the file with the sizes changed. A
// three-link arm (written below into a temporary folder twice: at its nominal sizes and with
// every capsule's and sphere's radius and half-length changed) whose upper link's inertia comes
// from one capsule (density 1000), its lower link's from a capsule and a sphere of density 500,
// and whose hand has an explicit <inertial> (its geom's size then moves its contact point only).
//   - steer importing the nominal file with its size slots set to the changed sizes maps θ to
//     the bodies' masses, centres and inertias and the ground points' centres and radii that
//     steer reads from the changed file: within 1e-12 (relative to 1 or the value); the contact
//     law's slots the import derives from the robot's mass stay the nominal file's;
//   - 500 ms at 2 ms under Euler, kicked, hanging clear of the floor: steer with those design
//     slots agrees with MuJoCo's model of the changed file on every q and q̇ within 1e-10, and
//     differs from the nominal design by more than 1e-3 (the sizes matter).
// Built where MuJoCo is found (label crosscheck).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/morphology.h"
#include "steer/models/articulated.h"
#include "mujoco_files.h"

using namespace steer;
using steer::testing::imported_config;
using steer::testing::ModelFree;

namespace {

constexpr int kSteps = 250;

// the arm at radii r1 … r4 and half-lengths h1, h2 [m]
std::string arm_xml(const std::map<std::string, double>& s) {
  auto v = [&](const char* k) { return std::to_string(s.at(k)); };
  return R"(<mujoco model="geom_sizes">
  <option timestep="0.002" integrator="Euler"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="upper" pos="0 0 1.6">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom name="upper" type="capsule" pos="0.05 0 -0.2" zaxis="0.3 0.1 -1" size=")" +
         v("upper.r") + " " + v("upper.h") + R"("/>
      <body name="lower" pos="0.1 0 -0.45">
        <joint name="elbow" type="hinge" axis="1 0 0"/>
        <geom name="lower" type="capsule" pos="0 0 -0.15" size=")" +
         v("lower.r") + " " + v("lower.h") + R"(" density="500"/>
        <geom name="knob" type="sphere" pos="0 0.02 -0.35" size=")" +
         v("knob.r") +
         R"(" density="500"/>
        <body name="hand" pos="0 0 -0.45">
          <joint name="wrist" type="hinge" axis="0 1 0"/>
          <inertial pos="0 0 -0.05" mass="0.3" diaginertia="0.001 0.001 0.0005"/>
          <geom name="hand" type="sphere" pos="0 0 -0.05" size=")" +
         v("hand.r") + R"("/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
)";
}

std::string write(const std::filesystem::path& dir, const std::string& name,
                  const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path f = dir / name;
  std::ofstream(f) << text;
  return f.string();
}

TEST(GeomSizeMujoco, SizeSlotsMatchTheRecompiledFile) {
  const std::map<std::string, double> nominal = {{"upper.r", 0.05}, {"upper.h", 0.2},
                                                 {"lower.r", 0.04}, {"lower.h", 0.15},
                                                 {"knob.r", 0.03},  {"hand.r", 0.04}};
  const std::map<std::string, double> changed = {{"upper.r", 0.06},  {"upper.h", 0.17},
                                                 {"lower.r", 0.035}, {"lower.h", 0.19},
                                                 {"knob.r", 0.045},  {"hand.r", 0.05}};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("steer_geom_size_" + std::to_string(::getpid()));
  const std::string f0 = write(dir, "nominal.xml", arm_xml(nominal));
  const std::string f1 = write(dir, "changed.xml", arm_xml(changed));
  const nlohmann::json morph = {{"morphology", true}};
  const ExperimentConfig c0 = imported_config(f0, "euler", kSteps, morph);
  const ExperimentConfig c1 = imported_config(f1, "euler", kSteps, morph);
  const ArticulatedSetup& s0 = c0.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = s0.large;
  ASSERT_EQ(c0.info.np(), c1.info.np());
  // which bodies follow their geoms: upper and lower, not the hand (an <inertial>)
  for (const MorphologyGeom& g : s0.morphology.geoms)
    EXPECT_EQ(g.density > 0, g.name != "hand") << g.name << " density " << g.density;
  std::vector<double> design = c0.theta;
  for (const char* g : {"upper", "lower", "knob", "hand"}) {
    design[size_t(c0.info.param_index(std::string(g) + ".size.radius"))] =
        changed.at(std::string(g) + ".r");
    const int h = c0.info.param_index(std::string(g) + ".size.half_length");
    if (h >= 0) design[size_t(h)] = changed.at(std::string(g) + ".h");
  }
  std::vector<double> eff(design.size());
  morphology_map(s0.morphology, m, design.data(), eff.data());
  // the mapped slots against the changed file's: the bodies' and the ground points' (the
  // contact law's slots that the import derives from the robot's mass, contact.stiffness and the
  // rest, are the nominal file's: a design does not re-derive them)
  std::vector<int> slots;
  for (int i = 0; i < m.p_joint(0, 0); ++i) slots.push_back(i);
  for (int i = m.p_ground(0, 0); i < m.p_design(0); ++i) slots.push_back(i);
  double worst = 0;
  for (int i : slots) {
    const double a = eff[size_t(i)], b = c1.theta[size_t(i)];
    const double e = std::fabs(a - b) / std::max(1.0, std::fabs(b));
    EXPECT_LT(e, 1e-12) << c0.info.param_names[size_t(i)] << ": mapped " << a << ", file " << b;
    worst = std::max(worst, e);
  }
  std::printf("[ figures ] mapped θ against the recompiled file: max relative %.3g\n", worst);

  // the motion against MuJoCo's model of the changed file
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> mm(mj_loadXML(f1.c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(mm) << err;
  double gap = 0, moved = 0;
  steer::testing::side_by_side(m, c0.x0, eff, c0.theta, mm.get(), kSteps, 1.5, gap, moved);
  std::printf(
      "[ figures ] 500 ms against MuJoCo's changed file: max |Δx| %.3g; the nominal design "
      "differs by %.3g\n",
      gap, moved);
  EXPECT_LT(gap, 1e-10);
  EXPECT_GT(moved, 1e-3);
  std::filesystem::remove_all(dir);
}

}  // namespace
