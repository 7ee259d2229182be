// include/steer/op_count.h: the flop and byte counts bench_rollout divides into its throughput
// (docs/design.md, "Benchmarks and work counting"). Checked on expressions with known counts,
// on the projectile's step counted by hand from its equations, and for transparency: a counted step
// computes the same bits as the plain one, for every model.
#include "steer/op_count.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/mass_spring/mass_spring_robot.h"
#include "steer/dual.h"
#include "steer/models/articulated.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"

namespace steer::testing {
namespace {

TEST(OpCount, ExpressionsWithKnownCounts) {
  OpTally t;
  Counted<double> a(2.0), b(3.0), c(0.5);
  Counted<double> r;
  {
    OpTallyScope scope(t);
    r = a * b + c;          // 1 mul, 1 add
    r = r / (a - 1.0);      // 1 div, 1 add
    r = sqrt(r) + exp(-c);  // 1 sqrt, 1 special, 1 add (negation is free)
    r += tanh(a) * 2.0;     // 1 special, 1 mul, 1 add
    r = softplus(r - 4.0);  // softplus(z) = max(z,0) + log1p(e^−|z|): 1 add, then 1 add, 2 specials
  }
  EXPECT_EQ(t.mul, 2);
  EXPECT_EQ(t.div, 1);
  EXPECT_EQ(t.sqrt, 1);
  EXPECT_EQ(t.special, 4);
  EXPECT_EQ(t.add, 6);
  EXPECT_EQ(t.flops(), 10);
  // the value is the plain double's
  const double ref = [] {
    double v = 2.0 * 3.0 + 0.5;
    v = v / (2.0 - 1.0);
    v = std::sqrt(v) + std::exp(-0.5);
    v += std::tanh(2.0) * 2.0;
    return softplus(v - 4.0);
  }();
  EXPECT_EQ(r.v, ref);
  // outside a scope nothing is counted
  const OpTally before = t;
  r = a * b;
  EXPECT_EQ(t.mul, before.mul);
}

TEST(OpCount, DualOnCountedCountsThePartials) {
  // Dual<·, 2> multiplication: value 1 mul; each of the 2 partials a·y' + x'·b: 2 mul + 1 add
  OpTally t;
  using C = Counted<double>;
  Dual<C, 2> x = Dual<C, 2>::variable(C(3.0), 0), y = Dual<C, 2>::variable(C(4.0), 1);
  Dual<C, 2> z;
  {
    OpTallyScope scope(t);
    z = x * y;
  }
  EXPECT_EQ(t.mul, 5);
  EXPECT_EQ(t.add, 2);
  EXPECT_EQ(z.a.v, 12.0);
  EXPECT_EQ(z.v[0].v, 4.0);
  EXPECT_EQ(z.v[1].v, 3.0);
}

// the projectile's step without drag terms skipped or ground (dim 2), from its equations:
//   |v|² = v_x² + v_y² (2 mul, 2 add: the sum starts from 0), |v| = sqrt (1 sqrt);
//   per axis i: a_i = u_i/m − c|v| v_i (1 div, 2 mul, 1 add), v_i' = v_i + h a_i (1 mul, 1 add),
//   x_i' = x_i + h v_i' (1 mul, 1 add); on the vertical axis also + F/m − g (1 div, 2 add).
// Bytes: x (4) and u (2) in, θ's g, c, m (3 of 6: no ground) in, x' (4) out.
TEST(OpCount, ProjectileStepByHand) {
  Projectile m;
  m.dim = 2;
  m.dt = 0.01;
  const std::vector<double> x = {0.1, 0.2, 2.0, 1.0}, u = {0.3, -0.1};
  const std::vector<double> p = {9.81, 0.02, 1.5, 1e4, 10.0, 1e-3};
  const StepWork w = count_step<double>(m, 0, x, u, p);
  EXPECT_EQ(w.ops.mul, 2 + 2 * 4);
  EXPECT_EQ(w.ops.add, 2 + 2 * 3 + 2);
  EXPECT_EQ(w.ops.div, 2 + 1);
  EXPECT_EQ(w.ops.sqrt, 1);
  EXPECT_EQ(w.ops.special, 0);
  EXPECT_EQ(w.elements, 4 + 2 + 3 + 4);
  EXPECT_EQ(w.bytes(8), 104);
  // with the penalty ground the contact force adds softplus and sigmoid (specials) and reads
  // the ground's three parameters
  m.ground = Projectile::kGroundPenalty;
  const StepWork wg = count_step<double>(m, 0, x, u, p);
  EXPECT_GT(wg.ops.special, 0);
  EXPECT_GT(wg.ops.flops(), w.ops.flops());
  EXPECT_EQ(wg.elements, w.elements + 3);
  // the adjoint step reads λ' too and read-modify-writes the adjoints it accumulates
  const StepWork wa = count_adj_step<double>(m, 0, x, u, p, {1.0, -0.5, 0.25, 0.75});
  EXPECT_GT(wa.ops.flops(), wg.ops.flops());
  EXPECT_GE(wa.elements, 4 + 2 + 6 + 4 + 2 * (4 + 2));
}

// counting must not change what the step computes
template <class Model>
void expect_counted_step_is_plain_step(const Model& m, const std::vector<double>& x,
                                       const std::vector<double>& u, const std::vector<double>& p) {
  std::vector<double> plain(x.size());
  m.template step<double>(3, x.data(), u.data(), p.data(), plain);
  using C = Counted<double>;
  std::vector<C> xc(x.begin(), x.end()), uc(u.begin(), u.end()), pc(p.begin(), p.end()),
      out(x.size());
  OpTally t;
  {
    OpTallyScope scope(t);
    m.template step<C>(3, xc.data(), uc.data(), pc.data(), out);
  }
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[i].v, plain[i]) << "x'[" << i << "]";
  EXPECT_GT(t.flops(), 0);
}

TEST(OpCount, CountedStepIsThePlainStep) {
  {
    Projectile m;
    m.dim = 3;
    m.ground = Projectile::kGroundPenalty;
    expect_counted_step_is_plain_step(m, {0.1, -0.001, 0.2, 2.0, -1.0, 0.5}, {0.3, -0.1, 0.2},
                                      {9.81, 0.02, 1.5, 1e4, 10.0, 1e-3});
  }
  {
    const Robot r = grid_robot({{0, 0}, {1, 0}, {0, 1}}, 0.1, {0.1, 0.1}, 1e3, 0.15);
    static std::vector<int> topo = pack_topology(r);
    MassSpring m = make_mass_spring(r, 10, MassSpring::kSinusoid, true, 0.004);
    m.topo = topo.data();
    std::vector<double> p =
        nominal_parameters(m, r, 1.0, {9.81, 2.0, 0.1, 3e3, 20.0, 1e-2, 0.3, 0.2, 10.0}, 0.5);
    for (int a = 0; a < m.n_actuators; ++a)
      for (int j = 0; j < m.n_phases; ++j) p[m.p_weight(a, j)] = 0.3 * std::sin(1.7 * a + 0.9 * j);
    std::vector<double> x = rest_state(m, r);
    for (int i = 0; i < m.n_particles; ++i) {
      x[m.x_pos(i) + 1] -= 0.003;  // into the ground
      x[m.x_vel(i)] = 0.1 * std::cos(1.1 * i);
    }
    expect_counted_step_is_plain_step(m, x, std::vector<double>(m.nu(), 0.0), p);
  }
  {
    // a two-link planar arm on hinges about y, PD-controlled, with torque saturation
    Articulated m;
    m.n_bodies = 2;
    m.n_dof = 2;
    m.integrator = Articulated::kImplicitFast;
    for (int b = 0; b < 2; ++b) {
      m.parent[b] = b - 1;
      m.joint[b] = Articulated::kHinge;
      m.dof[b] = b;
      m.body_of_dof[b] = b;
      m.rot[b][0] = m.rot[b][4] = m.rot[b][8] = 1.0;
      m.axis[b][1] = 1.0;
    }
    std::vector<double> p(m.np(), 0.0);
    for (int b = 0; b < 2; ++b) {
      p[m.p_body(b, Articulated::kMass)] = 1.0;
      p[m.p_body(b, Articulated::kComZ)] = 0.15;
      p[m.p_body(b, Articulated::kPosZ)] = b == 0 ? 0.0 : 0.3;
      for (int k = Articulated::kIxx; k <= Articulated::kIzz; ++k) p[m.p_body(b, k)] = 0.01;
      p[m.p_joint(b, Articulated::kDamping)] = 0.1;
      p[m.p_joint(b, Articulated::kArmature)] = 0.01;
      p[m.p_joint(b, Articulated::kKp)] = 50.0;
      p[m.p_joint(b, Articulated::kKv)] = 5.0;
      p[m.p_joint(b, Articulated::kTarget)] = 0.4;
      p[m.p_joint(b, Articulated::kForceLimit)] = 10.0;
    }
    p[m.p_global(Articulated::kGravity)] = 9.81;
    p[m.p_global(Articulated::kSharpness)] = 5.0;
    expect_counted_step_is_plain_step(m, {0.1, -0.2, 0.5, 0.3}, {0.2, -0.1}, p);
  }
}

}  // namespace
}  // namespace steer::testing
