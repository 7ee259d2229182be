// src/problem/shared_problem.h: batch-shared variables. The joint layout (expand, joint, the
// weighted group loss and gradient), the group gradient against central differences of the
// group loss on a simulated batch, the same bits at 1 and 2 threads, a leading cut, and the
// config's refusals. The optimization end to end (one launch for many gravities, against its
// closed form) is in tests/experiment/shared_variables_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/json_reader.h"
#include "problem/problem.h"
#include "problem/shared_problem.h"

using nlohmann::json;

namespace {

// a drag projectile (the loss is not linear in the launch) over gravity and drag draws: vx, vy
// shared by each group, the per-step control force's x own per rollout (knots of 10 steps)
json projectile_worlds(int batch, int groups, bool weights) {
  json j = {
      {"name", "shared"},
      {"model",
       {{"type", "projectile"},
        {"dim", 2},
        {"gravity", 9.81},
        {"drag", 0.05},
        {"mass", 1.0},
        {"ground", {{"type", "none"}}}}},
      {"simulation", {{"dt", 0.01}, {"steps", 60}, {"precision", "float64"}, {"backend", "cpu"}}},
      {"initial_state", {{"position", {0.0, 0.0}}, {"velocity", {2.5, 1.0}}}},
      {"batch",
       {{"size", batch},
        {"seed", 3},
        {"groups", groups},
        {"randomize", {{"theta.gravity", {8.0, 12.0}}, {"theta.drag", {{"relative", 0.5}}}}}}},
      {"loss",
       {{"terminal",
         {{{"state", "position.x"}, {"target", 1.5}, {"weight", 1.0}},
          {{"state", "position.y"}, {"target", 0.2}, {"weight", 1.0}}}},
        {"control_effort", 1e-3}}},
      {"variables",
       {{"x0.velocity.x", {{"lower", -20.0}, {"upper", 20.0}, {"shared", true}}},
        {"x0.velocity.y", {{"lower", -20.0}, {"upper", 20.0}, {"shared", true}}},
        {"controls.force.x", {{"lower", -5.0}, {"upper", 5.0}, {"hold", 10}}}}},
      {"optimizer", {{"method", "adam"}, {"iterations", 1}}},
  };
  if (weights) {
    std::vector<double> w;
    for (int b = 0; b < batch; ++b) w.push_back(1.0 + 0.5 * b);
    j["batch"]["weights"] = w;
  }
  return j;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(SharedLayout, ExpandJointAndReduce) {
  const steer::ExperimentConfig c = steer::parse_config(projectile_worlds(6, 2, true));
  const int nv = 6 + 2;  // six knots of the control, vx, vy
  const steer::SharedLayout l = steer::shared_layout(c, nv);
  ASSERT_EQ(l.groups, 2);
  ASSERT_EQ(l.members, 3);
  ASSERT_EQ(l.joint_vars(), 2 + 3 * 6);
  // weights 1, 1.5, 2 | 2.5, 3, 3.5 normalized per group
  EXPECT_DOUBLE_EQ(l.weight[0], 1.0 / 4.5);
  EXPECT_DOUBLE_EQ(l.weight[5], 3.5 / 9.0);
  std::vector<double> z(size_t(2 * l.joint_vars()));
  for (size_t i = 0; i < z.size(); ++i) z[i] = double(i) + 0.25;
  const std::vector<double> rows = l.expand(z);
  ASSERT_EQ(rows.size(), size_t(6 * nv));
  // every member of group 1 carries its shared values; member 2's own knots are its slice
  // (the variables are in the config's key order: the control's knots, then vx and vy)
  ASSERT_EQ(l.shared_cols, (std::vector<int>{6, 7}));
  ASSERT_EQ(l.own_cols.size(), size_t(6));
  for (int m = 0; m < 3; ++m) {
    EXPECT_EQ(rows[size_t((3 + m) * nv + 6)], z[size_t(l.joint_vars())]);
    EXPECT_EQ(rows[size_t((3 + m) * nv + 7)], z[size_t(l.joint_vars() + 1)]);
  }
  EXPECT_EQ(rows[size_t(5 * nv + 0)], z[size_t(l.joint_vars() + 2 + 2 * 6)]);
  EXPECT_TRUE(same_bits(l.joint(rows), z));
  // the group loss and gradient: weighted sums in member order
  std::vector<double> loss(6), grad(size_t(6 * nv));
  for (int b = 0; b < 6; ++b) loss[size_t(b)] = 1.0 + b;
  for (size_t i = 0; i < grad.size(); ++i) grad[i] = std::sin(double(i));
  const std::vector<double> J = l.group_loss(loss), g = l.reduce_gradient(grad);
  EXPECT_DOUBLE_EQ(J[1], (2.5 * 4 + 3 * 5 + 3.5 * 6) / 9.0);
  const double expect_s = l.weight[3] * grad[size_t(3 * nv + 6)] +
                          l.weight[4] * grad[size_t(4 * nv + 6)] +
                          l.weight[5] * grad[size_t(5 * nv + 6)];
  EXPECT_EQ(g[size_t(l.joint_vars())], expect_s);
  EXPECT_EQ(g[size_t(l.joint_vars() + 2 + 6 + 3)], l.weight[4] * grad[size_t(4 * nv + 3)]);
  // a wrong-sized joint vector is refused by its size
  EXPECT_THROW(l.expand(std::vector<double>(3)), std::invalid_argument);
}

// ∂J_g/∂z_g against central differences of J_g at ε = 1e-6 in every joint variable (float64:
// truncation ε² ~ 1e-12 on O(1) curvature, rounding 1e-16/1e-6 ~ 1e-10), relative 1e-6
TEST(SharedProblem, GroupGradientMatchesCentralDifferences) {
  const steer::ExperimentConfig c = steer::parse_config(projectile_worlds(6, 2, true));
  std::unique_ptr<steer::Problem> inner = steer::make_problem(c, steer::BackendKind::kCpu, 1);
  steer::SharedProblem p(*inner, steer::shared_layout(c, inner->num_vars()));
  std::vector<double> z = p.initial();
  for (size_t i = 0; i < z.size(); ++i)
    z[i] += 0.1 * std::cos(double(i));  // away from the start's symmetries
  steer::Evaluation e;
  p.evaluate(z, true, e);
  const int nj = p.num_vars();
  for (int g = 0; g < 2; ++g) {
    double err2 = 0, ref2 = 0;
    for (int i = 0; i < nj; ++i) {
      const double eps = 1e-6;
      std::vector<double> zp = z, zm = z;
      zp[size_t(g * nj + i)] += eps;
      zm[size_t(g * nj + i)] -= eps;
      steer::Evaluation ep, em;
      p.evaluate(zp, false, ep);
      p.evaluate(zm, false, em);
      const double fd = (ep.loss[size_t(g)] - em.loss[size_t(g)]) / (2 * eps);
      // the other group does not move
      EXPECT_EQ(ep.loss[size_t(1 - g)], e.loss[size_t(1 - g)]);
      err2 += (fd - e.grad[size_t(g * nj + i)]) * (fd - e.grad[size_t(g * nj + i)]);
      ref2 += fd * fd;
    }
    EXPECT_GT(ref2, 1e-6);
    EXPECT_LT(std::sqrt(err2 / ref2), 1e-6) << "group " << g;
  }
}

TEST(SharedProblem, SameBitsAtOneAndTwoThreadsAndInALeadingCut) {
  const steer::ExperimentConfig c = steer::parse_config(projectile_worlds(8, 4, false));
  std::unique_ptr<steer::Problem> one = steer::make_problem(c, steer::BackendKind::kCpu, 1);
  std::unique_ptr<steer::Problem> two = steer::make_problem(c, steer::BackendKind::kCpu, 2);
  const steer::SharedLayout l = steer::shared_layout(c, one->num_vars());
  steer::SharedProblem p1(*one, l), p2(*two, l);
  steer::Evaluation e1, e2;
  p1.evaluate(p1.initial(), true, e1);
  p2.evaluate(p2.initial(), true, e2);
  EXPECT_TRUE(same_bits(e1.loss, e2.loss));
  EXPECT_TRUE(same_bits(e1.grad, e2.grad));
  std::unique_ptr<steer::Problem> cut = p1.leading(2);
  ASSERT_NE(cut, nullptr);
  ASSERT_EQ(cut->batch_size(), 2);
  steer::Evaluation ec;
  std::vector<double> z(p1.initial().begin(), p1.initial().begin() + 2 * p1.num_vars());
  cut->evaluate(z, true, ec);
  EXPECT_TRUE(same_bits(ec.loss, std::vector<double>(e1.loss.begin(), e1.loss.begin() + 2)));
  EXPECT_TRUE(
      same_bits(ec.grad, std::vector<double>(e1.grad.begin(), e1.grad.begin() + ec.grad.size())));
  // a group's record adds its members' contact-steps and keeps its first member's landing step
  EXPECT_EQ(e1.diag.size(), size_t(4));
}

// clip_members: each member's row scaled to the clip (its norm in the given units) before the
// weighted sum; rows under the clip are untouched
TEST(SharedProblem, ClipMembersBoundsEachWorldBeforeTheSum) {
  const steer::ExperimentConfig c = steer::parse_config(projectile_worlds(6, 2, true));
  std::unique_ptr<steer::Problem> inner = steer::make_problem(c, steer::BackendKind::kCpu, 1);
  const steer::SharedLayout l = steer::shared_layout(c, inner->num_vars());
  steer::SharedProblem plain(*inner, l), clipped(*inner, l);
  std::vector<double> scale(size_t(l.nv), 1.0);
  scale[6] = 2.0;  // the units the optimizer steps in: the norm of g_i·scale_i is clipped
  steer::Evaluation per_rollout, ep, ec;
  inner->evaluate(l.expand(plain.initial()), true, per_rollout);
  double smallest = 1e300;
  for (int b = 0; b < 6; ++b) {
    double n2 = 0;
    for (int i = 0; i < l.nv; ++i) {
      const double gi = per_rollout.grad[size_t(b * l.nv + i)] * scale[size_t(i)];
      n2 += gi * gi;
    }
    smallest = std::min(smallest, std::sqrt(n2));
  }
  const double clip = 0.5 * smallest;  // every member is clipped
  clipped.clip_members(clip, scale);
  plain.evaluate(plain.initial(), true, ep);
  clipped.evaluate(clipped.initial(), true, ec);
  EXPECT_EQ(ep.loss, ec.loss);  // the losses are not touched
  std::vector<double> rows = per_rollout.grad;
  for (int b = 0; b < 6; ++b) {
    double n2 = 0;
    for (int i = 0; i < l.nv; ++i) {
      const double gi = rows[size_t(b * l.nv + i)] * scale[size_t(i)];
      n2 += gi * gi;
    }
    for (int i = 0; i < l.nv; ++i) rows[size_t(b * l.nv + i)] *= clip / std::sqrt(n2);
  }
  const std::vector<double> expect = l.reduce_gradient(rows);
  ASSERT_EQ(ec.grad.size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i)
    EXPECT_NEAR(ec.grad[i], expect[i], 1e-15 * std::fabs(expect[i]) + 1e-300);
  // a clip above every member's norm changes nothing
  steer::SharedProblem loose(*inner, l);
  loose.clip_members(1e300);
  steer::Evaluation el;
  loose.evaluate(loose.initial(), true, el);
  EXPECT_TRUE(same_bits(el.grad, ep.grad));
}

// the config's refusals name the key and what is accepted
void expect_refused(const json& j, const std::string& key, const std::string& words) {
  try {
    steer::parse_config(j);
    ADD_FAILURE() << "accepted; expected a refusal naming " << key;
  } catch (const steer::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(key), std::string::npos) << m;
    EXPECT_NE(m.find(words), std::string::npos) << m;
  }
}

TEST(SharedConfig, RefusalsNameTheKey) {
  json j = projectile_worlds(6, 4, false);
  expect_refused(j, "batch.groups", "a divisor of batch.size");
  j = projectile_worlds(6, 2, false);
  for (auto& [k, v] : j["variables"].items()) v.erase("shared");
  expect_refused(j, "batch.groups", "no variable is shared");
  j["batch"]["groups"] = 1;
  j["batch"]["weights"] = {1, 1, 1, 1, 1, 1};
  expect_refused(j, "batch.weights", "no variable is shared");
  j = projectile_worlds(6, 2, true);
  j["batch"]["weights"][2] = 0.0;
  expect_refused(j, "batch.weights", "(0");
  j = projectile_worlds(6, 2, true);
  j["batch"]["weights"].erase(0);
  expect_refused(j, "batch.weights", "6");
  // CMA-ES with an own variable over several rollouts: one population per rollout is not built
  j = projectile_worlds(6, 1, false);
  j["optimizer"] = {{"method", "cmaes"}, {"iterations", 2}};
  expect_refused(j, "batch.size", "share every variable");
  // compare does not race shared designs
  j = projectile_worlds(6, 1, false);
  j["variables"].erase("controls.force.x");
  j["compare"] = json::object();
  expect_refused(j, "compare", "shared");
  // the effective config names the sharing
  const steer::ExperimentConfig c = steer::parse_config(projectile_worlds(6, 2, true));
  const json e = c.to_json();
  EXPECT_EQ(e["batch"]["groups"], 2);
  EXPECT_FALSE(e["variables"][0].contains("shared"));  // controls.force.x
  EXPECT_EQ(e["variables"][1]["shared"], true);
}

}  // namespace
