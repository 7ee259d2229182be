// Boxes and cylinders against the plane (the import's flat_geom_points: a box's 8 corners, 12
// points on each of a cylinder's rims, each a ground point of radius 0): a free box, a cylinder
// standing on a cap and a cylinder lying on its side are dropped 2 cm onto the floor and settle
// for 1 s, in steer (the imported file, steer's default softplus law) and in MuJoCo (the same
// file, its soft constraints). Both laws are soft but different, so the check is the rest pose:
// the centre's height within 1.5 mm of MuJoCo's (the two sags differ by about a millimetre), and
// for the lying cylinder within 1.5 mm + r (1 − cos(π/12)), the rim polygon's largest gap
// (docs/contact.md); the body stays as it landed (its quaternion within 10⁻³ of MuJoCo's; the
// lying cylinder's axis, since its polygon may rock onto a face about it).
// Label crosscheck.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

struct FlatCase {
  const char* name;
  const char* geom;  // the body's one geom
  const char* quat;  // the body's start orientation (w x y z)
  double z0;         // the centre's start height [m]: 2 cm above its rest height
  double extra_tol;  // [m] beyond 1.5 mm: the rim polygon's gap for a lying cylinder
  bool rim_rocks;    // lying on its rim points: compare the axis, not the turn about it
};

std::string xml_for(const FlatCase& fc) {
  return std::string(R"(<mujoco model="flat_geom">
  <option timestep="0.001" integrator="Euler"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="thing" pos="0 0 )") +
         std::to_string(fc.z0) + R"(" quat=")" + fc.quat + R"(">
      <freejoint name="root"/>
      )" +
         fc.geom +
         R"(
    </body>
  </worldbody>
</mujoco>
)";
}

void settles_as_in_mujoco(const FlatCase& fc) {
  const fs::path dir = fs::temp_directory_path() / ("steer_flat_geom_" + std::string(fc.name));
  fs::create_directories(dir);
  const fs::path file = dir / "model.xml";
  {
    std::ofstream f(file);
    f << xml_for(fc);
  }
  const int steps = 1000;
  nlohmann::json j = {{"name", std::string("flat_") + fc.name},
                      {"model", {{"type", "articulated"}, {"mjcf", file.string()}}},
                      {"simulation", {{"steps", steps}, {"precision", "float64"}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  const ExperimentConfig c = parse_config(j, dir.string());
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = s.large;
  ASSERT_GT(m.ground.n_points, 0) << fc.name << ": the shape must touch the floor, not be dropped";
  const std::vector<double> x =
      stepped(m, c.x0, std::vector<double>(size_t(m.nu()), 0.0), c.theta, steps);
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> mm(
      mj_loadXML(file.string().c_str(), nullptr, err, sizeof err));
  ASSERT_TRUE(mm) << err;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  for (int k = 0; k < steps; ++k) mj_step(mm.get(), d.get());
  // steer's free root: q = (p, quaternion w x y z, …), as MuJoCo's qpos
  std::printf(
      "[ %s ] after 1 s  steer: z = %.5f m, quat = (%.4f %.4f %.4f %.4f);  MuJoCo: z = %.5f m, "
      "quat = (%.4f %.4f %.4f %.4f)\n",
      fc.name, x[2], x[3], x[4], x[5], x[6], d->qpos[2], d->qpos[3], d->qpos[4], d->qpos[5],
      d->qpos[6]);
  EXPECT_NEAR(x[2], d->qpos[2], 1.5e-3 + fc.extra_tol) << fc.name;
  if (!fc.rim_rocks) {
    for (int i = 3; i < 7; ++i) EXPECT_NEAR(x[i], d->qpos[i], 1e-3) << fc.name << " quat " << i - 3;
  } else {
    // a polygon on its side may rock onto a face (a turn about its own axis): the axis, the
    // quaternion's image of the geom's z, stays MuJoCo's
    auto axis = [](const double* q, double* a) {
      const double w = q[0], xq = q[1], y = q[2], z = q[3];
      a[0] = 2 * (xq * z + w * y), a[1] = 2 * (y * z - w * xq), a[2] = 1 - 2 * (xq * xq + y * y);
    };
    double as[3], am[3];
    axis(x.data() + 3, as);
    axis(d->qpos + 3, am);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(as[i], am[i], 1e-3) << fc.name << " axis " << i;
  }
  fs::remove_all(dir);
}

TEST(FlatGeomContactMujoco, BoxRestsOnTheFloorAsInMujoco) {
  // a 0.2 × 0.3 × 0.1 m box turned 30° about z
  settles_as_in_mujoco({"box", R"(<geom type="box" size="0.1 0.15 0.05" mass="1"/>)",
                        "0.9659258 0 0 0.2588190", 0.07, 0.0, false});
}

TEST(FlatGeomContactMujoco, CylinderStandingOnACap) {
  settles_as_in_mujoco({"cylinder_upright", R"(<geom type="cylinder" size="0.05 0.1" mass="1"/>)",
                        "1 0 0 0", 0.12, 0.0, false});
}

TEST(FlatGeomContactMujoco, CylinderLyingOnItsSide) {
  // the axis along x (turned 90° about y): it rests on a generator, between rim points
  const double r = 0.05, gap = r * (1 - std::cos(3.14159265358979323846 / 12));
  settles_as_in_mujoco({"cylinder_lying", R"(<geom type="cylinder" size="0.05 0.1" mass="1"/>)",
                        "0.7071068 0 0.7071068 0", 0.07, gap, true});
}

}  // namespace
