// No collidable pair is dropped silently (docs/import.md; issue 39's "a test walks every pair of
// every test model"). For every MJCF/URDF file of the repository (configs/mjcf, configs/urdf) and
// every standard robot file in tools/standard_robots.py's cache (the build's standard_robots
// folder, when a standard_robots test has filled it), MuJoCo itself lists the geom pairs it
// would collide: every geom's margin raised to 10³ m, so that its collision detection reports a
// contact for every pair its filters pass (contype/conaffinity, welded bodies, parent and child,
// <exclude>). The import must then either refuse the file (naming what it does not model) or
// model every one of those pairs:
//   - a world plane and a geom on body B: the tip on B, or at least one ground point or plane
//     pair on B per such geom (a sphere, a capsule's two caps, a box's corners, a cylinder's rim
//     points);
//   - two geoms on bodies A and B: as many geom pairs in model.pairs between A and B as MuJoCo
//     has (two boxes, each one's corners against the other, count once).
// Label crosscheck.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/mjcf_import.h"
#include "mujoco_handles.h"

using steer::testing::DataFree;
using steer::testing::ModelFree;

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> model_files() {
  std::vector<fs::path> files;
  const fs::path src(STEER_SOURCE_DIR);
  for (const char* dir : {"configs/mjcf", "configs/urdf"})
    if (fs::is_directory(src / dir))
      for (const auto& e : fs::directory_iterator(src / dir))
        if (e.path().extension() == ".xml" || e.path().extension() == ".urdf")
          files.push_back(e.path());
  // a wheel's folder counts once tools/standard_robots.py has stamped it complete (it extracts
  // into a temporary folder and renames it, so a test running beside it sees all or nothing)
  const fs::path cache(STEER_STANDARD_ROBOTS_CACHE);
  const fs::path gym = cache / "gymnasium-1.4.0", dm = cache / "dm_control-1.0.52";
  for (const fs::path& dir :
       {gym / "gymnasium" / "envs" / "mujoco" / "assets", dm / "dm_control" / "suite"}) {
    const fs::path root = dir.string().find("gymnasium-1.4.0") != std::string::npos ? gym : dm;
    if (fs::is_regular_file(root / ".complete") && fs::is_directory(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".xml") files.push_back(e.path());
  }
  return files;
}

// the body of a model entry ("world" for the world's; the import calls an unnamed body
// "body<id>") as MuJoCo's body id; −1 when absent
int body_id(const mjModel* m, const std::string& name) {
  if (name == "world") return 0;
  const int id = mj_name2id(m, mjOBJ_BODY, name.c_str());
  if (id >= 0 || name.rfind("body", 0) != 0) return id;
  try {
    return std::stoi(name.substr(4));
  } catch (const std::exception&) {
    return -1;
  }
}

// a body's name for messages, "#<id>" when it has none
std::string body_label(const mjModel* m, int b) {
  const char* n = mj_id2name(m, mjOBJ_BODY, b);
  return n ? n : "#" + std::to_string(b);
}

TEST(ContactPairsComplete, EveryPairMujocoCollidesIsModelledOrTheFileRefused) {
  int loaded = 0, refused = 0, pairs_checked = 0;
  for (const fs::path& file : model_files()) {
    steer::ImportedModel im;
    try {
      im = steer::import_mujoco_model(file.string(), file.filename().string(),
                                      file.extension() == ".urdf" ? "urdf" : "mjcf");
    } catch (const steer::ConfigError&) {
      ++refused;  // refused by name: nothing is dropped silently
      continue;
    }
    ++loaded;
    char err[1000] = "";
    std::unique_ptr<mjModel, ModelFree> m(
        mj_loadXML(file.string().c_str(), nullptr, err, sizeof err));
    ASSERT_TRUE(m) << file << ": " << err;
    for (int g = 0; g < m->ngeom; ++g) m->geom_margin[g] = 1e3;
    std::unique_ptr<mjData, DataFree> d(mj_makeData(m.get()));
    mj_kinematics(m.get(), d.get());
    mj_collision(m.get(), d.get());
    ASSERT_EQ(d->warning[mjWARN_CONTACTFULL].number, 0) << file << ": MuJoCo's contact list filled";
    std::set<std::pair<int, int>> mj_pairs;
    for (int i = 0; i < d->ncon; ++i)
      mj_pairs.insert({std::min(d->contact[i].geom[0], d->contact[i].geom[1]),
                       std::max(d->contact[i].geom[0], d->contact[i].geom[1])});
    // steer's side: ground points per body, the tip's body, pairs per body pair
    const nlohmann::json& mk = im.model;
    std::map<int, int> points_on;
    if (mk.contains("contacts"))
      for (const auto& c : mk["contacts"]) ++points_on[body_id(m.get(), c["body"])];
    const int tip_body = mk.contains("tip") && mk["contact"].value("enabled", false)
                             ? body_id(m.get(), mk["tip"]["body"])
                             : -1;
    // pairs against a plane (a wall; one per sphere, capsule end cap, box corner or rim point)
    // count with the ground points of the other side's body
    // two boxes are each one's corners against the other: one geom pair, named "a.cornerK|b"
    // and "b.cornerK|a", counted once
    std::map<std::pair<int, int>, std::set<std::pair<std::string, std::string>>> steer_geom_pairs;
    auto geom_of = [](const std::string& side) { return side.substr(0, side.find('.')); };
    if (mk.contains("pairs"))
      for (const auto& p : mk["pairs"]) {
        const int a = body_id(m.get(), p["geoms"][0]["body"]),
                  b = body_id(m.get(), p["geoms"][1]["body"]);
        if (p["geoms"][0]["type"] == "plane" || p["geoms"][1]["type"] == "plane") {
          ++points_on[p["geoms"][0]["type"] == "plane" ? b : a];
          continue;
        }
        const std::string name = p["name"];
        const std::string ga = geom_of(name.substr(0, name.find('|'))),
                          gb = geom_of(name.substr(name.find('|') + 1));
        steer_geom_pairs[{std::min(a, b), std::max(a, b)}].insert(
            {std::min(ga, gb), std::max(ga, gb)});
      }
    std::map<std::pair<int, int>, int> steer_pairs;
    for (const auto& [bp, gp] : steer_geom_pairs) steer_pairs[bp] = int(gp.size());
    std::map<int, int> plane_geoms_on;  // MuJoCo: geoms touching a world plane, per body
    std::map<std::pair<int, int>, int> mj_body_pairs;
    for (const auto& [ga, gb] : mj_pairs) {
      ++pairs_checked;
      const int ba = m->geom_bodyid[ga], bb = m->geom_bodyid[gb];
      const bool plane_a = m->geom_type[ga] == mjGEOM_PLANE && m->body_weldid[ba] == 0;
      const bool plane_b = m->geom_type[gb] == mjGEOM_PLANE && m->body_weldid[bb] == 0;
      if (plane_a || plane_b) {
        ++plane_geoms_on[plane_a ? bb : ba];
      } else {
        ++mj_body_pairs[{std::min(ba, bb), std::max(ba, bb)}];
      }
    }
    for (const auto& [b, n] : plane_geoms_on) {
      if (b == tip_body && n == 1) continue;
      EXPECT_GE(points_on[b], n) << file << ": MuJoCo collides " << n << " geom(s) of body '"
                                 << body_label(m.get(), b) << "' with planes; steer has "
                                 << points_on[b] << " ground point(s) and plane pair(s) there";
    }
    for (const auto& [bp, n] : mj_body_pairs)
      EXPECT_EQ(steer_pairs[bp], n)
          << file << ": MuJoCo collides " << n << " geom pair(s) between bodies '"
          << body_label(m.get(), bp.first) << "' and '" << body_label(m.get(), bp.second) << "'";
  }
  std::printf("[ pairs ] %d files loaded and walked (%d MuJoCo pairs), %d refused by name\n",
              loaded, pairs_checked, refused);
  EXPECT_GT(loaded, 5);
}

}  // namespace
