// What the cross-check tests share to run a file of configs/mjcf/ on both sides: steer's config
// importing it (model.mjcf, at an integrator, the gradient check off) and MuJoCo's model of it.
#pragma once

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "mujoco_handles.h"
#include "steer/models/articulated.h"

namespace steer::testing {

inline const std::filesystem::path& configs_dir() {
  static const std::filesystem::path dir = std::filesystem::path(STEER_SOURCE_DIR) / "configs";
  return dir;
}

// file (relative to configs/) imported at `integrator`, `steps` steps, a control-effort loss;
// model_extra's keys join the model's (overrides of the imported values)
inline ExperimentConfig imported_config(
    const std::string& file, const std::string& integrator, int steps,
    const nlohmann::json& model_extra = nlohmann::json::object()) {
  nlohmann::json model = {{"type", "articulated"}, {"mjcf", file}, {"integrator", integrator}};
  model.update(model_extra);
  const nlohmann::json j = {{"name", "import"},
                            {"model", model},
                            {"simulation", {{"steps", steps}, {"precision", "float64"}}},
                            {"loss", {{"control_effort", 1.0}}},
                            {"validation", {{"enabled", false}}}};
  return parse_config(j, configs_dir().string());
}

// MuJoCo's model of file (relative to configs/); a failed test where it does not compile
inline std::unique_ptr<mjModel, ModelFree> mujoco_model(const std::string& file) {
  char err[1000] = "";
  std::unique_ptr<mjModel, ModelFree> m(
      mj_loadXML((configs_dir() / file).string().c_str(), nullptr, err, sizeof err));
  EXPECT_TRUE(m) << file << ": " << err;
  return m;
}

// Steer's model m with parameters p beside MuJoCo's model mm (its own values, changed as p's
// are) and beside m with the unchanged p_ref, for `steps` steps from x0 with every q̇_i kicked to
// kick · cos(1.1 i + 0.3), no controls: gap = max |x − MuJoCo's qpos, qvel|, moved = max
// |x − x_ref| (that p's change matters)
inline void side_by_side(const ArticulatedLarge& m, const std::vector<double>& x0,
                         const std::vector<double>& p, const std::vector<double>& p_ref,
                         const mjModel* mm, int steps, double kick, double& gap, double& moved) {
  std::unique_ptr<mjData, DataFree> d(mj_makeData(mm));
  const int nq = m.nq(), nv = m.n_dof;
  std::vector<double> x = x0;
  for (int i = 0; i < nv; ++i) x[size_t(nq + i)] = kick * std::cos(1.1 * i + 0.3);
  for (int i = 0; i < nq; ++i) d->qpos[i] = x[size_t(i)];
  for (int i = 0; i < nv; ++i) d->qvel[i] = x[size_t(nq + i)];
  std::vector<double> y = x, u(size_t(m.nu()), 0.0), xn(x.size()), yn(x.size());
  gap = moved = 0;
  for (int k = 0; k < steps; ++k) {
    auto XN = view(xn.data());
    auto YN = view(yn.data());
    m.step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    m.step<double>(k, view(y.data()), view(u.data()), view(p_ref.data()), YN);
    mj_step(mm, d.get());
    x = xn, y = yn;
    for (int i = 0; i < nq; ++i) gap = std::max(gap, std::fabs(x[size_t(i)] - d->qpos[i]));
    for (int i = 0; i < nv; ++i) gap = std::max(gap, std::fabs(x[size_t(nq + i)] - d->qvel[i]));
    for (size_t i = 0; i < x.size(); ++i) moved = std::max(moved, std::fabs(x[i] - y[i]));
  }
}

// max |R(a) − R(b)| over the entries of two quaternions' rotations (w, x, y, z): the orientation
// difference [rad, to first order]
inline double rotation_gap(const double* a, const double* b) {
  double Ra[9], Rb[9];
  Articulated::quat_matrix(a, Ra);
  Articulated::quat_matrix(b, Rb);
  double g = 0;
  for (int i = 0; i < 9; ++i) g = std::max(g, std::fabs(Ra[i] - Rb[i]));
  return g;
}

}  // namespace steer::testing
