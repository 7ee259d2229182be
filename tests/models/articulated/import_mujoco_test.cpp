// model.mjcf / model.urdf (src/models/articulated/mjcf_import.h): steer imports three robot
// files written in this repository and moves exactly as MuJoCo does on them, and refuses by
// name every element it does not model. Built only where MuJoCo is installed.
//   configs/mjcf/panda.xml       the Panda, motors with gear 1
//   configs/mjcf/offset_arm.xml  joints away from their body origins, a slide, a motor with
//                                gear 2, a position servo with gear 1.5 plus a velocity servo,
//                                a force-limited position servo, a ctrl-limited motor, sites
//   configs/mjcf/three_link.urdf a URDF arm with rotated inertial frames and a prismatic wrist
// Checks, all in float64:
// - trajectories: the same inputs for 500 ms at 2 ms under Euler (MuJoCo's semi-implicit
//   Euler, damping implicit), every q and q̇ after every step within 1e-10 of MuJoCo's, and
//   MuJoCo never creates a constraint row (no limit or contact acts);
// - gradients: steer's hand adjoint of L = ½ Σ_j (q_j(T) − g_j)² + 0.05 Σ_j q̇_j(T)² with respect
//   to the controls of every 10th step, every body's mass and every joint's damping (and
//   servo gain kp) against centered finite differences of MuJoCo rollouts (ε = 1e-5 · max(1, |z|):
//   the rollout's rounding, ~1e-14 in L, stays ~1e-9 in the quotient and the truncation ~ε²):
//   |g − fd| ≤ 1e-6 · max(|g|, |fd|) + 1e-8;
// - the Panda imported has the slots (names, order) and values of configs/panda.json's arm;
// - overrides and refusals (CLI level: exit 2, the element and what is unsupported named).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/mjcf_import.h"
#include "run_cli.h"
#include "steer/models/articulated.h"
#include "temp_dir.h"
#include "mujoco_handles.h"

namespace steer::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";
constexpr int kSteps = 250;   // 500 ms
constexpr double kH = 0.002;  // [s]

// a config importing `file` (relative to configs/) with extra model keys
ExperimentConfig import_config(const std::string& key, const std::string& file,
                               const nlohmann::json& extra = nlohmann::json::object(),
                               const std::vector<double>& q0 = {}) {
  nlohmann::json j = {{"name", "import"},
                      {"model", {{"type", "articulated"}, {key, file}}},
                      {"simulation", {{"dt", kH}, {"steps", kSteps}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j["model"][it.key()] = it.value();
  if (!q0.empty()) j["initial_state"] = {{"q", q0}};
  return parse_config(j, kConfigs.string());
}

// One imported model, its MuJoCo twin, and how steer's inputs reach MuJoCo: per joint, the
// actuator that takes u_ff (ctrl = u_ff / torque_per_ctrl), the servo that takes the PD
// target (ctrl = q* / target_per_ctrl), or, without one, qfrc_applied = u_ff.
struct Twin {
  std::string name;
  ExperimentConfig c;
  std::unique_ptr<mjModel, ModelFree> mj;
  std::vector<int> control_act, target_act;
  std::vector<double> control_scale, target_scale;
  std::vector<double> q0, v0, amp;

  Twin(const std::string& n, const std::string& key, const std::string& file, std::vector<double> q,
       std::vector<double> v, std::vector<double> a,
       const nlohmann::json& extra = nlohmann::json::object())
      : name(n),
        c(import_config(key, file, extra, q)),
        q0(std::move(q)),
        v0(std::move(v)),
        amp(std::move(a)) {
    char err[1000] = "";
    mj.reset(mj_loadXML((kConfigs / file).string().c_str(), nullptr, err, sizeof err));
    EXPECT_TRUE(mj) << err;
    const Articulated& m = model();
    const nlohmann::json& acts =
        c.model_state<ArticulatedSetup>().names.import_record.at("actuators");
    for (int d = 0; d < m.n_dof; ++d) {
      const nlohmann::json& e = acts.at(size_t(d));
      auto id = [&](const char* part) {
        return e.contains(part) ? mj_name2id(mj.get(), mjOBJ_ACTUATOR,
                                             e[part]["actuator"].get<std::string>().c_str())
                                : -1;
      };
      control_act.push_back(id("control"));
      target_act.push_back(id("target"));
      control_scale.push_back(e.contains("control") ? e["control"]["torque_per_ctrl"].get<double>()
                                                    : 0.0);
      target_scale.push_back(e.contains("target") ? e["target"]["target_per_ctrl"].get<double>()
                                                  : 0.0);
    }
  }
  const Articulated& model() const { return c.model_state<ArticulatedSetup>().model; }
  // steer's θ with every PD target at the initial pose (as the config's rule has it)
  std::vector<double> theta() const {
    std::vector<double> p = c.theta;
    for (int d = 0; d < model().n_dof; ++d)
      p[model().p_joint(d, Articulated::kTarget)] = q0[size_t(d)];
    return p;
  }
  // feed-forward torques: smooth sinusoids of ±amp[j] per joint [N·m or N]
  std::vector<double> controls() const {
    const int n = model().n_dof;
    std::vector<double> u(static_cast<size_t>(kSteps * n));
    for (int k = 0; k < kSteps; ++k)
      for (int d = 0; d < n; ++d)
        u[size_t(k * n + d)] =
            amp[size_t(d)] * std::sin(2 * M_PI * (1.0 + 0.4 * d) * k * kH + 0.7 * d);
    return u;
  }
};

// MuJoCo's rollout under steer's inputs; the states x_k = (q, v), k = 0..kSteps; max_nefc
std::vector<std::vector<double>> mujoco_rollout(const Twin& t, const mjModel* m,
                                                const std::vector<double>& u, int& max_nefc) {
  std::unique_ptr<mjData, DataFree> d(mj_makeData(m));
  const int n = t.model().n_dof;
  for (int i = 0; i < n; ++i) d->qpos[i] = t.q0[size_t(i)], d->qvel[i] = t.v0[size_t(i)];
  std::vector<std::vector<double>> xs;
  auto record = [&] {
    std::vector<double> x(static_cast<size_t>(2 * n));
    for (int i = 0; i < n; ++i) x[size_t(i)] = d->qpos[i], x[size_t(n + i)] = d->qvel[i];
    xs.push_back(x);
  };
  record();
  max_nefc = 0;
  for (int k = 0; k < kSteps; ++k) {
    for (int j = 0; j < n; ++j) {
      d->qfrc_applied[j] = 0;
      const double uj = u[size_t(k * n + j)];
      if (t.control_act[size_t(j)] >= 0)
        d->ctrl[m->actuator_ctrladr[t.control_act[size_t(j)]]] = uj / t.control_scale[size_t(j)];
      else
        d->qfrc_applied[j] = uj;
      if (t.target_act[size_t(j)] >= 0)
        d->ctrl[m->actuator_ctrladr[t.target_act[size_t(j)]]] =
            t.q0[size_t(j)] / t.target_scale[size_t(j)];
    }
    mj_step(m, d.get());
    max_nefc = std::max(max_nefc, d->nefc);
    record();
  }
  return xs;
}

std::vector<std::vector<double>> steer_rollout(const Articulated& m, const std::vector<double>& x0,
                                               const std::vector<double>& u,
                                               const std::vector<double>& p) {
  std::vector<std::vector<double>> xs = {x0};
  const int n = m.n_dof;
  for (int k = 0; k < kSteps; ++k) {
    std::vector<double> xn(static_cast<size_t>(2 * n));
    auto XN = view(xn.data());
    m.step<double>(k, view(xs.back().data()), view(u.data() + k * n), view(p.data()), XN);
    xs.push_back(xn);
  }
  return xs;
}

// the loss L = ½ Σ (q_j(T) − goal_j)² + 0.05 Σ q̇_j(T)² and its gradient with respect to x_T
double loss_of(const std::vector<double>& xT, const std::vector<double>& goal,
               std::vector<double>* adj = nullptr) {
  const int n = int(goal.size());
  double L = 0;
  if (adj) adj->assign(size_t(2 * n), 0.0);
  for (int j = 0; j < n; ++j) {
    const double e = xT[size_t(j)] - goal[size_t(j)], v = xT[size_t(n + j)];
    L += 0.5 * e * e + 0.05 * v * v;
    if (adj) (*adj)[size_t(j)] = e, (*adj)[size_t(n + j)] = 0.1 * v;
  }
  return L;
}

// The inputs keep every joint well inside its range and every limited torque well inside its
// limit, where MuJoCo's hard clamp and steer's smooth saturation agree: the offset arm's
// sharpness is raised to β = 10³ /(N·m), so that 1 N·m below a limit the saturation's
// deviation is e^−1000 (steer's default β = 5 /(N·m) is within ln 2/β of the clamp only at the
// corner)
std::vector<Twin*> twins() {
  static Twin panda("panda.xml", "mjcf", "mjcf/panda.xml", {0.1, -0.2, 0.05, -1.6, 0.1, 1.6, -0.7},
                    {0.1, 0, -0.1, 0.2, 0, 0.1, 0.3}, {2, 2, 2, 2, 2, 2, 2});
  static Twin offset("offset_arm.xml", "mjcf", "mjcf/offset_arm.xml", {0.2, -0.3, 0.4, 0.0},
                     {0.3, -0.2, 0.1, 0.0}, {2, 2, 1, 0.3},
                     nlohmann::json::parse(R"({"torque_limits": {"sharpness": 1000}})"));
  static Twin urdf("three_link.urdf", "urdf", "mjcf/three_link.urdf", {0.3, 0.4, -0.5, 0.0},
                   {-0.2, 0.1, 0.3, 0.0}, {1, 1, 0.5, 0.2});
  return {&panda, &offset, &urdf};
}

TEST(ImportMujoco, TrajectoriesMatchMujocoOver500ms) {
  for (Twin* t : twins()) {
    const Articulated& m = t->model();
    ASSERT_EQ(m.integrator, Articulated::kEuler) << t->name;
    ASSERT_EQ(m.n_dof, t->mj->nv) << t->name;
    std::vector<double> x0 = t->q0;
    x0.insert(x0.end(), t->v0.begin(), t->v0.end());
    const std::vector<double> u = t->controls();
    int nefc = 0;
    const auto ref = mujoco_rollout(*t, t->mj.get(), u, nefc);
    const auto got = steer_rollout(m, x0, u, t->theta());
    EXPECT_EQ(nefc, 0) << t->name << ": a constraint acted in MuJoCo";
    double worst = 0, moved = 0;
    for (int k = 0; k <= kSteps; ++k)
      for (size_t i = 0; i < ref[size_t(k)].size(); ++i) {
        worst = std::max(worst, std::fabs(got[size_t(k)][i] - ref[size_t(k)][i]));
        if (int(i) < m.n_dof) moved = std::max(moved, std::fabs(ref[size_t(k)][i] - x0[i]));
      }
    EXPECT_LE(worst, 1e-10) << t->name;
    EXPECT_GT(moved, 0.05) << t->name << ": the inputs should move the arm";
    std::printf(
        "[ %s ] 500 ms Euler: max |x_steer − x_mujoco| = %.3g over %d steps (largest joint "
        "excursion %.3g)\n",
        t->name.c_str(), worst, kSteps, moved);
  }
}

TEST(ImportMujoco, GradientMatchesFiniteDifferencesOfMujoco) {
  for (Twin* t : twins()) {
    const Articulated& m = t->model();
    const int n = m.n_dof;
    std::vector<double> x0 = t->q0;
    x0.insert(x0.end(), t->v0.begin(), t->v0.end());
    const std::vector<double> u = t->controls();
    const std::vector<double> p = t->theta();
    std::vector<double> goal(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) goal[size_t(j)] = t->q0[size_t(j)] + 0.1;
    // steer: forward, then the hand adjoint step by step
    const auto xs = steer_rollout(m, x0, u, p);
    std::vector<double> lam, gu(u.size(), 0.0), gp(p.size(), 0.0);
    loss_of(xs.back(), goal, &lam);
    for (int k = kSteps - 1; k >= 0; --k) {
      std::vector<double> prev(size_t(2 * n), 0.0);
      auto LP = view(prev.data()), GU = view(gu.data() + k * n), GP = view(gp.data());
      m.adj_step<double>(k, view(const_cast<double*>(xs[size_t(k)].data())), view(u.data() + k * n),
                         view(p.data()), LP, GU, GP, view(lam.data()));
      lam = prev;
    }
    // MuJoCo: centered differences of the same loss
    std::unique_ptr<mjModel, ModelFree> mm(mj_copyModel(nullptr, t->mj.get()));
    auto mj_loss = [&](const std::vector<double>& uu) {
      int nefc = 0;
      return loss_of(mujoco_rollout(*t, mm.get(), uu, nefc).back(), goal);
    };
    double worst_rel = 0;  // over entries with |g| ≥ 1e-6
    auto check = [&](const std::string& what, double g, double fd) {
      worst_rel = std::max(worst_rel, std::fabs(g - fd) / std::max(std::fabs(g), 1e-6));
      EXPECT_LE(std::fabs(g - fd), 1e-6 * std::max(std::fabs(g), std::fabs(fd)) + 1e-8)
          << t->name << " " << what << ": steer " << g << ", MuJoCo FD " << fd;
    };
    double gmax = 0;
    int checked = 0;
    for (int k = 0; k < kSteps; k += 10)
      for (int j = 0; j < n; ++j) {
        const size_t i = size_t(k * n + j);
        const double eps = 1e-5 * std::max(1.0, std::fabs(u[i]));
        std::vector<double> up = u, um = u;
        up[i] += eps, um[i] -= eps;
        check("u[" + std::to_string(k) + "][" + std::to_string(j) + "]", gu[i],
              (mj_loss(up) - mj_loss(um)) / (2 * eps));
        gmax = std::max(gmax, std::fabs(gu[i]));
        ++checked;
      }
    // parameters: MuJoCo's field, the steer slot, and d(steer slot)/d(MuJoCo field)
    struct Param {
      std::string what;
      double* field;
      double* field2;  // a second field that moves with the first (a servo's bias −kp), or null
      double sign2;
      int slot;
      double scale;
    };
    std::vector<Param> params;
    for (int b = 0; b < m.n_bodies; ++b)
      params.push_back({"mass of body " + std::to_string(b), mm->body_mass + b + 1, nullptr, 0,
                        m.p_body(b, Articulated::kMass), 1.0});
    for (int j = 0; j < n; ++j)
      params.push_back({"damping of joint " + std::to_string(j), mm->dof_damping + j, nullptr, 0,
                        m.p_joint(j, Articulated::kDamping), 1.0});
    for (int j = 0; j < n; ++j)
      if (t->target_act[size_t(j)] >= 0) {
        const int a = t->target_act[size_t(j)];
        const double g = mm->actuator_gear[6 * mm->actuator_outadr[a]];
        params.push_back(
            {"servo kp of joint " + std::to_string(j), mm->actuator_gainprm + mjNGAIN * a,
             mm->actuator_biasprm + mjNBIAS * a + 1, -1.0, m.p_joint(j, Articulated::kKp), g * g});
      }
    for (const Param& q : params) {
      const double v0 = *q.field, w0 = q.field2 ? *q.field2 : 0.0;
      const double eps = 1e-5 * std::max(1.0, std::fabs(v0));
      auto set = [&](double v) {
        *q.field = v;
        if (q.field2) *q.field2 = q.sign2 * v;
      };
      set(v0 + eps);
      const double lp = mj_loss(u);
      set(v0 - eps);
      const double lm = mj_loss(u);
      *q.field = v0;
      if (q.field2) *q.field2 = w0;
      check(q.what, gp[size_t(q.slot)] * q.scale, (lp - lm) / (2 * eps));
      ++checked;
    }
    EXPECT_GT(gmax, 1e-4) << t->name;
    std::printf(
        "[ %s ] steer's gradient vs MuJoCo FD: %d entries checked, max |dL/du| %.3g, max |g − "
        "fd|/max(|g|, 1e-6) %.3g\n",
        t->name.c_str(), checked, gmax, worst_rel);
  }
}

// the Panda imported from configs/mjcf/panda.xml has the slots of configs/panda.json's arm
// (same names, same order) and its values: masses, centres of mass, damping and armature to
// 1e-12, inertias to 1e-6 of the body's largest moment (MuJoCo's compiler diagonalizes
// fullinertia iteratively; the import turns its principal axes back into a tensor)
TEST(ImportMujoco, PandaHasTheJsonArmsSlotsAndValues) {
  const ExperimentConfig json_arm = load_config((kConfigs / "panda.json").string());
  const ExperimentConfig imp = import_config("mjcf", "mjcf/panda.xml", nlohmann::json::object(),
                                             {0, 0, 0, -1.57079, 0, 1.57079, -0.7853});
  ASSERT_EQ(imp.info.param_names.size(), json_arm.info.param_names.size());
  const Articulated& m = imp.model_state<ArticulatedSetup>().model;
  for (size_t q = 0; q < imp.info.param_names.size(); ++q) {
    EXPECT_EQ(imp.info.param_names[q], json_arm.info.param_names[q]);
    const std::string& nm = imp.info.param_names[q];
    const bool gains = nm.find(".kp") != std::string::npos || nm.find(".kv") != std::string::npos ||
                       nm.find(".force_limit") != std::string::npos ||
                       nm.find(".target") != std::string::npos || nm.rfind("contact.", 0) == 0 ||
                       nm == "saturation.sharpness";
    if (gains) continue;  // the MJCF's motors carry no gains (the JSON arm has Menagerie's servo)
    const size_t dot = nm.find(".inertia.");
    if (dot != std::string::npos) {
      // MuJoCo's compiler diagonalizes fullinertia iteratively (mju_eig3): its principal
      // moments and axes carry errors up to ~7e-7 of the body's largest moment where two
      // moments nearly coincide (link1: 0.70337, 0.70661), and MuJoCo simulates those
      const std::string b = nm.substr(0, dot);
      double big = 0;
      for (const char* k : {".inertia.xx", ".inertia.yy", ".inertia.zz"})
        big = std::max(big, json_arm.theta[size_t(json_arm.info.param_index(b + k))]);
      EXPECT_NEAR(imp.theta[q], json_arm.theta[q], 1e-6 * big) << nm;
      continue;
    }
    EXPECT_NEAR(imp.theta[q], json_arm.theta[q],
                1e-12 * std::max(1.0, std::fabs(json_arm.theta[q])))
        << nm;
  }
  EXPECT_EQ(imp.info.state_names, json_arm.info.state_names);
  for (int b = 0; b < m.n_bodies; ++b)
    for (int i = 0; i < 9; ++i)
      EXPECT_NEAR(m.rot[b][i], json_arm.model_state<ArticulatedSetup>().model.rot[b][i], 1e-15)
          << "body " << b;
  const nlohmann::json rec = imp.model_state<ArticulatedSetup>().names.import_record;
  EXPECT_EQ(rec.at("sha256").get<std::string>().size(), 64u);
  EXPECT_EQ(rec.at("file"), "mjcf/panda.xml");
  EXPECT_EQ(imp.to_json().at("model").at("imported_from").at("sha256"), rec.at("sha256"));
}

// the config's keys override imported values; every imported parameter is a slot
TEST(ImportMujoco, ConfigOverridesImportedValues) {
  const ExperimentConfig c = import_config(
      "mjcf", "mjcf/offset_arm.xml",
      nlohmann::json::parse(
          R"({"bodies": [{"name": "fore", "mass": 0.75, "joint": {"damping": 0.25, "kp": 12}}],
                               "gravity": 9.8, "torque_limits": {"sharpness": 50},
                               "sites": [{"name": "extra", "body": "upper", "pos": [0.1, 0, 0]}]})"));
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const Articulated& m = s.model;
  EXPECT_EQ(c.theta[size_t(c.info.param_index("fore.mass"))], 0.75);
  EXPECT_EQ(c.theta[size_t(c.info.param_index("elbow.damping"))], 0.25);
  EXPECT_EQ(c.theta[size_t(c.info.param_index("elbow.kp"))], 12.0);
  EXPECT_EQ(c.theta[size_t(c.info.param_index("elbow.force_limit"))],
            5.0);                                                       // imported, not overridden
  EXPECT_EQ(c.theta[size_t(c.info.param_index("shoulder.kp"))], 67.5);  // 1.5² · 30
  EXPECT_EQ(c.theta[size_t(c.info.param_index("shoulder.kv"))], 2.0);
  EXPECT_EQ(c.theta[size_t(c.info.param_index("rail.force_limit"))], 10.0);  // gear 10 · ctrl 1
  EXPECT_EQ(c.theta[size_t(c.info.param_index("gravity"))], 9.8);
  EXPECT_EQ(c.theta[size_t(c.info.param_index("saturation.sharpness"))], 50.0);
  EXPECT_TRUE(m.torque_limits);
  EXPECT_TRUE(m.joint_limits);  // shoulder and rail are limited
  EXPECT_TRUE(m.contact);       // the fingertip sphere over the floor plane
  EXPECT_EQ(m.tip_body, 3);
  EXPECT_NEAR(c.theta[size_t(c.info.param_index("contact.height"))], -0.5 + 0.02, 1e-15);
  ASSERT_EQ(m.n_sites, 3);
  EXPECT_EQ(s.site_index("grip"), 1);
  EXPECT_EQ(s.site_index("extra"), 2);
  EXPECT_NEAR(m.joint_pos[1][0], -0.04, 1e-15);
  // a parameter imported from the file can be a variable
  nlohmann::json j = {{"name", "import"},
                      {"model", {{"type", "articulated"}, {"mjcf", "mjcf/offset_arm.xml"}}},
                      {"simulation", {{"dt", kH}, {"steps", 5}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"variables",
                       {{"theta.upper.mass", {{"lower", 0.5}, {"upper", 2}}},
                        {"theta.damping", {{"lower", 0}, {"upper", 20}}}}},
                      {"validation", {{"enabled", false}}}};
  EXPECT_EQ(parse_config(j, kConfigs.string()).variables.size(), 5u);
}

// simulation.dt defaults to the file's <option timestep>; a config's dt wins; a JSON arm,
// which has no file, still needs simulation.dt
TEST(ImportMujoco, TimestepFromTheFileUnlessTheConfigSetsIt) {
  std::string xml;
  {
    std::ifstream f(kConfigs / "mjcf" / "offset_arm.xml");
    xml.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  const std::string from = "timestep=\"0.002\"";
  ASSERT_NE(xml.find(from), std::string::npos);
  xml.replace(xml.find(from), from.size(), "timestep=\"0.0025\"");
  steer::testing::TempDir tmp("steer_import_dt");
  const fs::path dir = tmp.path;
  std::ofstream(dir / "arm.xml") << xml;
  nlohmann::json j = {{"name", "import"},
                      {"model", {{"type", "articulated"}, {"mjcf", "arm.xml"}}},
                      {"simulation", {{"steps", 5}}},
                      {"loss", {{"control_effort", 1.0}}},
                      {"validation", {{"enabled", false}}}};
  EXPECT_EQ(parse_config(j, dir.string()).dt, 0.0025);
  j["simulation"]["dt"] = 0.001;
  EXPECT_EQ(parse_config(j, dir.string()).dt, 0.001);
  nlohmann::json arm = nlohmann::json::parse(std::ifstream(kConfigs / "panda.json"));
  arm["simulation"].erase("dt");
  try {
    parse_config(expand_includes(arm, kConfigs.string()), kConfigs.string());
    ADD_FAILURE() << "a JSON arm without simulation.dt was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("simulation.dt"), std::string::npos) << e.what();
  }
}

// CLI: each unsupported element refused with exit 2, naming it and what is unsupported
TEST(ImportMujoco, UnsupportedElementsAreRefusedByName) {
  TempDir dir("steer_import_refusals");
  auto refused = [&](const std::string& label, const std::string& body,
                     const std::vector<std::string>& words, const std::string& extra_xml = "",
                     const std::string& option = "") {
    const std::string xml = "<mujoco><option " + option + "/><worldbody>" + body + "</worldbody>" +
                            extra_xml + "</mujoco>";
    std::ofstream(dir.path / "robot.xml") << xml;
    nlohmann::json cfg = {{"name", "refuse"},
                          {"model", {{"type", "articulated"}, {"mjcf", "robot.xml"}}},
                          {"simulation", {{"dt", kH}, {"steps", 5}}},
                          {"loss", {{"control_effort", 1.0}}},
                          {"validation", {{"enabled", false}}}};
    std::ofstream(dir.path / "config.json") << cfg.dump();
    const CliResult r = run_steer("check '" + (dir.path / "config.json").string() + "'", dir.path);
    EXPECT_EQ(r.code, 2) << label << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("model.mjcf"), std::string::npos) << label << ": " << r.err;
    for (const std::string& w : words)
      EXPECT_NE(r.err.find(w), std::string::npos) << label << ": '" << w << "' not in: " << r.err;
  };
  const std::string link = R"(<inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/>)";
  const std::string arm =
      "<body name='a' pos='0 0 1'>" + link + "<joint name='j' type='hinge' axis='0 1 0'/>";
  refused("free joint below the root",
          arm + "<body name='box'>" + link + "<freejoint name='float'/></body></body>",
          {"free joint can only be used on top level"});
  refused("limited ball joint",
          "<body name='b'>" + link + "<joint name='socket' type='ball' range='0 0.5'/></body>",
          {"socket", "cone limit"});
  refused("ball joint beside a hinge",
          "<body name='b'>" + link +
              "<joint name='socket' type='ball'/><joint name='j2' type='slide' axis='0 0 1'/>"
              "</body>",
          {"socket", "together with other joints"});
  refused(
      "free joint beside a hinge",
      "<body name='b'>" + link + "<freejoint name='float'/><joint name='j2' axis='0 1 0'/></body>",
      {"more than 6 dofs in body 'b'"});  // MuJoCo's compiler refuses it first
  refused("free joint frictionloss",
          "<body name='b'>" + link + "<joint name='rough' type='free' frictionloss='0.5'/></body>",
          {"rough", "frictionloss", "free joint"});
  refused("free joint spring",
          "<body name='b'>" + link + "<joint name='springy' type='free' stiffness='3'/></body>",
          {"springy", "stiffness"});
  refused("spatial tendon around a geom",
          arm +
              "<site name='s1'/><geom name='drum' type='cylinder' size='0.05 0.01' "
              "contype='0' conaffinity='0'/></body><body name='c' pos='1 0 1'>" +
              link + "<joint name='k' axis='1 0 0'/><site name='s2'/></body>",
          {"spatial tendon 'cable'", "wrapping around geom 'drum' is not modelled"},
          "<tendon><spatial name='cable'><site site='s1'/><geom geom='drum'/><site site='s2'/>"
          "</spatial></tendon>");
  const std::string fixed_on_j = "<joint joint='j' coef='1'/></fixed></tendon>";
  // a tendon over several joints takes a position servo (as its spring), a motor or a velocity
  // servo (on its joints' torque controls); a spatial tendon a position servo only
  const std::string two_joints =
      arm + "</body><body name='c' pos='1 0 1'>" + link + "<joint name='k' axis='1 0 0'/></body>";
  const std::string fixed_on_jk =
      "<tendon><fixed name='tt'><joint joint='j' coef='1'/><joint joint='k' coef='-1'/>"
      "</fixed></tendon>";
  refused("motor on a spatial tendon",
          arm + "<site name='s1'/></body><body name='c' pos='1 0 1'>" + link +
              "<joint name='k' axis='1 0 0'/><site name='s2'/></body>",
          {"actuator 'pull' drives tendon 'rope'", "a spatial tendon", "position servo"},
          "<tendon><spatial name='rope'><site site='s1'/><site site='s2'/></spatial></tendon>"
          "<actuator><motor name='pull' tendon='rope'/></actuator>");
  refused(
      "motor on a tendon over a joint with a motor of its own", two_joints,
      {"actuator 'pull' (on tendon 'tt')", "actuator 'turn'", "both drive joint 'j'"},
      fixed_on_jk +
          "<actuator><motor name='turn' joint='j'/><motor name='pull' tendon='tt'/></actuator>");
  refused("force-limited motor on a tendon over two joints", two_joints,
          {"actuator 'pull'", "force limit", "tendon 'tt'"},
          fixed_on_jk +
              "<actuator><motor name='pull' tendon='tt' forcelimited='true' forcerange='-1 1'/>"
              "</actuator>");
  refused("two servos on a tendon over two joints", two_joints,
          {"actuator 'b'", "actuator 'a'", "both position servos on tendon 'tt'"},
          fixed_on_jk +
              "<actuator><position name='a' tendon='tt' kp='1'/><position name='b' tendon='tt' "
              "kp='2'/></actuator>");
  refused("servo on a tendon with a spring", two_joints, {"actuator 'a'", "spring of its own"},
          "<tendon><fixed name='tt' stiffness='3'><joint joint='j' coef='1'/><joint joint='k' "
          "coef='-1'/></fixed></tendon><actuator><position name='a' tendon='tt' kp='1'/>"
          "</actuator>");
  refused("a servo's ctrlrange outside its joint's range",
          "<body name='a' pos='0 0 1'>" + link +
              "<joint name='j' type='hinge' axis='0 1 0' range='-0.5 0.5'/></body>",
          {"actuator 'p'", "leaves no target within joint 'j'"},
          "<actuator><position name='p' joint='j' kp='1' ctrlrange='0.6 0.9'/></actuator>");
  refused("tendon deadband", arm + "</body>", {"tendon 'band'", "deadband"},
          "<tendon><fixed name='band' stiffness='1' springlength='0 0.1'>" + fixed_on_j);
  refused("tendon frictionloss", arm + "</body>", {"tendon 'rough'", "frictionloss"},
          "<tendon><fixed name='rough' frictionloss='0.2'>" + fixed_on_j);
  refused("tendon armature", arm + "</body>", {"tendon 'heavy'", "armature"},
          "<tendon><fixed name='heavy' armature='0.1'>" + fixed_on_j);
  const std::string two_arms =
      arm + "</body><body name='c' pos='1 0 1'>" + link + "<joint name='k' axis='1 0 0'/></body>";
  refused("nonlinear equality", two_arms, {"tie", "polycoef[2]", "nonlinear"},
          "<equality><joint name='tie' joint1='j' joint2='k' polycoef='0 1 0.5 0 0'/></equality>");
  refused("weld equality", two_arms, {"glue", "connect, weld"},
          "<equality><weld name='glue' body1='a' body2='c'/></equality>");
  refused("equality with direct solref", two_arms, {"tie", "solref", "direct stiffness"},
          "<equality><joint name='tie' joint1='j' joint2='k' solref='-100 -10'/></equality>");
  refused("equality on a spatial tendon",
          arm + "<site name='s1'/></body><body name='c' pos='1 0 1'>" + link +
              "<joint name='k' axis='1 0 0'/><site name='s2'/></body>",
          {"cord", "spatial"},
          "<tendon><spatial name='rope'><site site='s1'/><site site='s2'/></spatial></tendon>"
          "<equality><tendon name='cord' tendon1='rope'/></equality>");
  // boxes and cylinders touch the plane at corners and rim points; ellipsoids are refused
  refused("ellipsoid geom",
          "<geom name='floor' type='plane' size='1 1 0.1'/>" + arm +
              "<geom name='limb' type='ellipsoid' size='0.02 0.02 0.1'/></body>",
          {"limb", "floor", "can collide", "spheres, capsules, cylinders and boxes"});
  refused("box against an ellipsoid",
          "<geom name='block' type='box' size='0.1 0.1 0.1'/>" + arm +
              "<geom name='egg' type='ellipsoid' size='0.05 0.04 0.03'/></body>",
          {"block", "egg", "can collide"});
  // actuator dynamics: filter, filterexact and integrator are joint activations (activation.h);
  // muscle dynamics, an activation range, dynamics under RK4 and two dynamics on one joint not
  refused("muscle dynamics", arm + "</body>", {"flex", "muscle", "dyntype"},
          "<actuator><general name='flex' joint='j' dyntype='muscle'/></actuator>");
  refused("activation range", arm + "</body>", {"clamp", "actlimited", "-1, 1"},
          "<actuator><general name='clamp' joint='j' dyntype='integrator' actlimited='true' "
          "actrange='-1 1'/></actuator>");
  refused("dynamics under RK4", arm + "</body>", {"lag", "RK4"},
          "<actuator><general name='lag' joint='j' dyntype='filter' dynprm='0.1'/></actuator>",
          "integrator='RK4'");
  refused("two dynamics on one joint", arm + "</body>", {"slow", "fast", "different activation"},
          "<actuator><general name='fast' joint='j' dyntype='filter' dynprm='0.1'/>"
          "<general name='slow' joint='j' dyntype='filter' dynprm='0.2'/></actuator>");
  refused("site transmission", arm + "<site name='s1'/></body>",
          {"pull", "joint and tendon transmissions"},
          "<actuator><general name='pull' site='s1' gear='0 0 1 0 0 0'/></actuator>");
  refused(
      "constant bias", arm + "</body>", {"offset", "constant bias"},
      "<actuator><general name='offset' joint='j' biastype='affine' biasprm='1 0 0'/></actuator>");
  refused("asymmetric force range", arm + "</body>", {"lopsided", "not symmetric"},
          "<actuator><motor name='lopsided' joint='j' forcelimited='true' forcerange='-1 "
          "2'/></actuator>");
  refused("implicit integrator", arm + "</body>", {"implicit"}, "", "integrator='implicit'");
  // what MuJoCo 3 and 4 added, refused by steer's mapping
  refused("implicitfast integrator", arm + "</body>", {"\"implicitfast\"", "integrators"}, "",
          "integrator='implicitfast'");
  refused("gravity compensation",
          "<body name='floaty' gravcomp='1'>" + link + "<joint name='j' axis='0 1 0'/></body>",
          {"floaty", "gravcomp"});
  refused("quadratic damping",
          "<body name='b'>" + link + "<joint name='drag' axis='1 0 0' damping='0.1 0.2 0'/></body>",
          {"drag", "damping polynomial"});
  refused("actuator damping", arm + "</body>", {"geared", "damping 0.5"},
          "<actuator><motor name='geared' joint='j' damping='0.5'/></actuator>");
  refused("actuator armature", arm + "</body>", {"rotor", "armature 0.1"},
          "<actuator><motor name='rotor' joint='j' armature='0.1'/></actuator>");
  refused("actuator delay", arm + "</body>", {"late", "delay"},
          "<actuator><motor name='late' joint='j' nsample='2' delay='0.004'/></actuator>");
  refused("Euler without implicit damping",
          "<body name='b'>" + link + "<joint name='d' axis='1 0 0' damping='1'/></body>",
          {"eulerdamp", "implicitly"}, "<option><flag eulerdamp='disable'/></option>");
  refused("sleeping", arm + "</body>", {"sleep", "not modelled"},
          "<option><flag sleep='enable'/></option>");
  refused("fluid ellipsoid model",
          arm +
              "<geom type='sphere' size='0.1' fluidshape='ellipsoid' contype='0' "
              "conaffinity='0'/></body>",
          {"fluidshape", "ellipsoid", "inertia-box"}, "", "density='1.2'");
  refused("no joint", "<body name='b'>" + link + "</body>", {"no hinge, slide or ball joint"});
}

// MJCF of today's MuJoCo that 2.2.2's parser refused ("unrecognized attribute: 'kv'") reaches
// steer's mapping: a position servo's kv is the joint's kv (−biasprm[2]), and a joint's
// actuatorfrcrange (MuJoCo's clamp of the joint's total actuator force) its force limit
TEST(ImportMujoco, CurrentMjcfReachesTheMapping) {
  TempDir dir("steer_import_current");
  std::ofstream(dir.path / "servo.xml")
      << "<mujoco><option timestep='0.002'/><worldbody><body name='a' pos='0 0 1'>"
         "<inertial pos='0 0 0.1' mass='1' diaginertia='0.01 0.01 0.01'/>"
         "<joint name='j' type='hinge' axis='0 1 0' actuatorfrcrange='-3 3'/></body></worldbody>"
         "<actuator><position name='servo' joint='j' kp='50' kv='5'/></actuator></mujoco>";
  const ImportedModel im =
      import_mujoco_model((dir.path / "servo.xml").string(), "servo.xml", "mjcf");
  const nlohmann::json& jo = im.model["bodies"][0]["joint"];
  EXPECT_EQ(jo["kp"].get<double>(), 50.0);
  EXPECT_EQ(jo["kv"].get<double>(), 5.0);
  EXPECT_EQ(jo["force_limit"].get<double>(), 3.0);
  EXPECT_EQ(im.record["actuators"][0]["target"]["actuator"], "servo");
  EXPECT_EQ(im.record["compiler"], std::string("MuJoCo ") + mj_versionString());
}

// a cylinder in a contact pair (dm_control's finger: decorations beside the spinner's capsules)
// is the capsule of its axis, radius and half-length; a joint's frictionloss is its key
TEST(ImportMujoco, CylinderPairIsItsCapsuleAndFrictionlossItsKey) {
  TempDir dir("steer_import_cylinder_pair");
  std::ofstream(dir.path / "pair.xml")
      << "<mujoco><option timestep='0.002'/><worldbody>"
         "<body name='a' pos='0 0 1'><inertial pos='0 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>"
         "<joint name='ja' type='slide' axis='1 0 0' frictionloss='0.3'/>"
         "<geom name='drum' type='cylinder' size='0.05 0.2' pos='0.1 0 0' euler='90 0 0'/></body>"
         "<body name='b' pos='1 0 1'><inertial pos='0 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>"
         "<joint name='jb' type='slide' axis='1 0 0'/>"
         "<geom name='rod' type='capsule' size='0.03 0.1'/></body></worldbody></mujoco>";
  const ImportedModel im =
      import_mujoco_model((dir.path / "pair.xml").string(), "pair.xml", "mjcf");
  ASSERT_EQ(im.model["pairs"].size(), 1u) << im.model.dump();
  const nlohmann::json& drum = im.model["pairs"][0]["geoms"][0];
  EXPECT_EQ(drum["type"], "capsule");
  EXPECT_EQ(drum["body"], "a");
  EXPECT_EQ(drum["radius"].get<double>(), 0.05);
  // the cylinder's axis (its z) turned onto −y by euler 90° about x: ends at (0.1, ∓0.2, 0)
  const std::vector<double> from = drum["from"], to = drum["to"];
  EXPECT_NEAR(from[0], 0.1, 1e-15);
  EXPECT_NEAR(std::fabs(from[1]), 0.2, 1e-15);
  EXPECT_NEAR(from[1] + to[1], 0.0, 1e-15);
  EXPECT_NEAR(from[2], 0.0, 1e-15);
  EXPECT_EQ(im.model["bodies"][0]["joint"]["frictionloss"].get<double>(), 0.3);
  EXPECT_FALSE(im.model["bodies"][1]["joint"].contains("frictionloss"));
  const std::string notes = im.record["notes"].dump();
  EXPECT_NE(notes.find("'drum' is a cylinder in a contact pair"), std::string::npos) << notes;
  EXPECT_NE(notes.find("frictionloss: MuJoCo's dry-friction constraint"), std::string::npos)
      << notes;
}

// MuJoCo's compiler message reaches the user as lines of text, not JSON-escaped ("\n")
TEST(ImportMujoco, CompilerMessageIsPrintedAsText) {
  TempDir dir("steer_import_message");
  std::ofstream(dir.path / "robot.xml")
      << "<mujoco>\n<worldbody>\n<body name='b'>\n<joint name='j' springiness='2'/>\n"
         "</body>\n</worldbody>\n</mujoco>\n";
  nlohmann::json cfg = {{"name", "message"},
                        {"model", {{"type", "articulated"}, {"mjcf", "robot.xml"}}},
                        {"simulation", {{"dt", kH}, {"steps", 5}}},
                        {"loss", {{"control_effort", 1.0}}},
                        {"validation", {{"enabled", false}}}};
  std::ofstream(dir.path / "config.json") << cfg.dump();
  const CliResult r = run_steer("check '" + (dir.path / "config.json").string() + "'", dir.path);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("MuJoCo's compiler refused 'robot.xml':\n  "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("springiness"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\n  Element 'joint', line 4"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\\n"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace steer::testing
