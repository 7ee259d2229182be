// configs/mjcf/fluid_swimmer.xml imported (model.mjcf) moves as MuJoCo moves it: a free hull with
// a two-hinge tail and a fluke in water with a current (density, viscosity and wind: MuJoCo's
// inertia-box fluid model on every body, whose principal axes are turned in it), driven by
// joint motors from smooth sinusoids from kicked initial velocities. Built where MuJoCo is found
// (label crosscheck). Checked, float64:
//   - 500 ms at the file's 2 ms under Euler and RK4: every q and q̇ after every step within 1e-10
//     of MuJoCo's under Euler and 1e-9 under RK4 (compare_with_mujoco says why), while the same
//     file without its fluid ends more than 0.05 from it (the fluid forces are large in this
//     motion, not a rounding-size term);
//   - the import: model.fluid as the file gives it, each body's inertia_frame MuJoCo's body_iquat,
//     the note.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "steer/models/articulated.h"
#include "mujoco_files.h"

using namespace steer;
using steer::testing::DataFree;
using steer::testing::imported_config;
using steer::testing::ModelFree;
using steer::testing::mujoco_model;

namespace {

const char* kFile = "mjcf/fluid_swimmer.xml";
constexpr int kSteps = 250;  // 500 ms at the file's 2 ms

ExperimentConfig imported(const std::string& integrator) {
  return imported_config(kFile, integrator, kSteps);
}

// the motors' torques [N·m] (gear 1: MuJoCo's ctrl is the torque)
double control(int k, int a) {
  return 0.02 * std::sin(2 * M_PI * (2.0 + 1.3 * a) * k * 0.002 + 0.7 * a);
}

// MuJoCo's run of the file with the same kick and controls; its final qvel
std::vector<double> mujoco_run(int mj_integrator, bool fluid, const std::vector<double>& x0,
                               std::vector<std::vector<double>>* states) {
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  EXPECT_TRUE(mm);
  mm->opt.integrator = mj_integrator;
  if (!fluid) mm->opt.density = mm->opt.viscosity = 0;
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm.get()));
  const int nq = mm->nq, nv = mm->nv;
  for (int i = 0; i < nq; ++i) d->qpos[i] = x0[size_t(i)];
  for (int i = 0; i < nv; ++i) d->qvel[i] = x0[size_t(nq + i)];
  for (int k = 0; k < kSteps; ++k) {
    for (int a = 0; a < mm->nu; ++a) d->ctrl[a] = control(k, a);
    mj_step(mm.get(), d.get());
    if (states) {
      std::vector<double> s(d->qpos, d->qpos + nq);
      s.insert(s.end(), d->qvel, d->qvel + nv);
      states->push_back(s);
    }
  }
  return std::vector<double>(d->qvel, d->qvel + nv);
}

// tolerance: 1e-10 (the standard robots'); rk4 1e-9: MuJoCo 4.0.1's RK4 places a free body's
// quaternion at its intermediate stages slightly differently from steer's rk4 (the same to
// 4e-16 per step without forces that depend on the orientation, to ~1e-13 per step with this
// fluid), and the swimmer's fast, strongly damped motion carries that to 1.1e-10 by 500 ms;
// Euler, which has no intermediate stages, agrees to 6e-14 over the same run
void compare_with_mujoco(const std::string& integrator, int mj_integrator, double tolerance) {
  const ExperimentConfig c = imported(integrator);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  ASSERT_TRUE(s.large_tree);
  const ArticulatedLarge& m = s.large;
  ASSERT_TRUE(m.fluid);
  const int nq = m.nq(), nv = m.n_dof;
  ASSERT_EQ(nq, 10);
  ASSERT_EQ(nv, 9);
  std::vector<double> x = c.x0, p = c.theta;
  for (int i = 0; i < nv; ++i) x[size_t(nq + i)] = 0.8 * std::cos(1.1 * i + 0.3);
  std::vector<std::vector<double>> mj;
  const std::vector<double> v_fluid = mujoco_run(mj_integrator, true, x, &mj);
  const std::vector<double> v_dry = mujoco_run(mj_integrator, false, x, nullptr);
  // the steer dof each motor drives, from the import's record (joint name, actuator)
  std::vector<std::pair<int, int>> driven;  // (dof, MuJoCo actuator)
  for (const nlohmann::json& e : s.names.import_record.at("actuators")) {
    if (!e.contains("control")) continue;
    const std::string jn = e.at("joint").get<std::string>();
    const std::string an = e["control"].at("actuator").get<std::string>();
    EXPECT_EQ(e["control"].at("torque_per_ctrl").get<double>(), 1.0) << jn;
    for (int j = 0; j < nv; ++j)
      if (s.names.joints[size_t(j)] == jn) driven.push_back({j, an == "yaw" ? 0 : 1});
  }
  ASSERT_EQ(driven.size(), 2u);
  double worst = 0;
  for (int k = 0; k < kSteps; ++k) {
    std::vector<double> u(ArticulatedLarge::kMaxControl, 0.0), xn(ArticulatedLarge::kMaxState, 0.0);
    for (const auto& [j, a] : driven) u[size_t(j)] = control(k, a);
    auto XN = view(xn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    std::copy(xn.begin(), xn.begin() + nq + nv, x.begin());
    for (int i = 0; i < nq + nv; ++i)
      worst = std::max(worst, std::fabs(x[size_t(i)] - mj[size_t(k)][size_t(i)]));
  }
  double fluid_effect = 0;
  for (int i = 0; i < nv; ++i)
    fluid_effect = std::max(fluid_effect, std::fabs(v_fluid[size_t(i)] - v_dry[size_t(i)]));
  EXPECT_LE(worst, tolerance) << integrator;
  EXPECT_GT(fluid_effect, 0.05) << "the fluid forces should change the motion";
  std::printf(
      "[ fluid_swimmer.xml ] 500 ms %s: max |x_steer − x_mujoco| = %.3g; without the fluid "
      "MuJoCo's q̇ differs by %.3g\n",
      integrator.c_str(), worst, fluid_effect);
}

TEST(FluidMujoco, EulerMatchesMujocoOver500ms) { compare_with_mujoco("euler", mjINT_EULER, 1e-10); }

TEST(FluidMujoco, Rk4MatchesMujocoOver500ms) { compare_with_mujoco("rk4", mjINT_RK4, 1e-9); }

TEST(FluidMujoco, ImportKeepsTheFilesFluid) {
  const ExperimentConfig c = imported("euler");
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& m = s.large;
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidDensity))], 1000.0);
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidViscosity))], 0.0009);
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidWindX))], 0.2);
  EXPECT_EQ(c.theta[size_t(m.p_fluid(Articulated::kFluidWindZ))], -0.1);
  std::unique_ptr<mjModel, ModelFree> mm = mujoco_model(kFile);
  ASSERT_TRUE(mm);
  // the hull: steer's body after the free root's five frames; its box's axes are body_iquat's
  int hull = -1;
  for (int b = 0; b < m.n_bodies; ++b)
    if (s.names.bodies[size_t(b)] == "hull") hull = b;
  ASSERT_GE(hull, 0);
  const int mj_hull = mj_name2id(mm.get(), mjOBJ_BODY, "hull");
  double R[9];
  mju_quat2Mat(R, mm->body_iquat + 4 * mj_hull);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(m.fluid_frame[hull][i], R[i], 1e-14) << i;
  EXPECT_GT(std::fabs(R[1]) + std::fabs(R[2]) + std::fabs(R[5]), 0.1) << "turned principal axes";
  const std::string notes = s.names.import_record.at("notes").dump();
  EXPECT_NE(notes.find("inertia-box"), std::string::npos) << notes;
}

}  // namespace
