// Rigid bodies in frictional contact with the ground (contact_law.h, contact.h; docs/contact.md):
//   - each law alone (softplus and impedance normal laws, smoothed Coulomb friction): hand
//     adjoint vs dual numbers (≤ 1e-12 relative) and vs centered FD (≤ 1e-6 relative);
//   - the generic gradient suite (tests/support/gradient_suite.h: hand vs dual ≤ 1e-12, dual vs FD
//     ≤ 1e-6 per step, rollouts vs FD ≤ 1e-6) on a box on 3 slides + 3 hinges with its 8
//     corners as contact points (sliding, sticking, at the stick/slip boundary, at contact
//     onset, tipping on an edge, each law) and on a 3-joint arm with spheres on both links;
//   - the packed path: every rollout of a pack gets the bits of its scalar run;
//   - physics the laws promise, independently of their code: the static sag of a box at rest,
//     the Coulomb deceleration μ g of a sliding box, the impedance law's static balance;
//   - the diagnostics (num_contacts, in_contact per point, the deepest penetration, the
//     per-contact mode air / stick / slip) and the config's errors.
#include "steer/models/articulated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "config/config.h"
#include "config_errors.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "steer/cpu_backend.h"

namespace steer::testing {
namespace {

// ---- the laws alone ----

using D1 = Dual<double, 16>;

// the laws' parameters as an array (for loops over them): k, dc, w, d0, d1, width, tc, zeta, mass
template <class S>
NormalLawParams<S> law_params(const double* v) {
  return {S(v[0]), S(v[1]), S(v[2]), S(v[3]), S(v[4]), S(v[5]), S(v[6]), S(v[7]), S(v[8])};
}
void law_params_out(const NormalLawParams<double>& q, double* v) {
  const double a[9] = {q.k, q.dc, q.w, q.d0, q.d1, q.width, q.tc, q.zeta, q.mass};
  for (int i = 0; i < 9; ++i) v[i] = a[i];
}

// the normal law's cotangent-weighted value φ = f̄_n f_n + N̄ N at inputs z = (d, ż, params[9])
template <class S>
S normal_phi(bool imp, const S* z, double afn, double afe) {
  NormalLawParams<S> q{z[2], z[3], z[4], z[5], z[6], z[7], z[8], z[9], z[10]};
  const NormalForce<S> f = imp ? normal_impedance(z[0], z[1], q) : normal_softplus(z[0], z[1], q);
  return S(afn) * f.fn + S(afe) * f.fe;
}

// hand adjoint vs dual vs centered FD of one normal law at z
void check_normal_law(bool imp, const std::vector<double>& z, const std::string& what) {
  const double afn = 0.7, afe = -0.4;
  // hand
  double ad = 0, az = 0, ap[9] = {};
  NormalLawParams<double> aq{0, 0, 0, 0, 0, 0, 0, 0, 0};
  const NormalLawParams<double> q = law_params<double>(z.data() + 2);
  if (imp)
    adj_normal_impedance(z[0], z[1], q, afn, afe, ad, az, aq);
  else
    adj_normal_softplus(z[0], z[1], q, afn, afe, ad, az, aq);
  law_params_out(aq, ap);
  std::vector<double> hand = {ad, az};
  hand.insert(hand.end(), ap, ap + 9);
  // dual
  D1 zd[11];
  for (int i = 0; i < 11; ++i) zd[i] = D1::variable(z[i], i);
  const D1 phi = normal_phi<D1>(imp, zd, afn, afe);
  // the parameters the law reads (softplus: d, ż, k, d_c, w; impedance: all but k and d_c)
  const bool used[11] = {true, true, !imp, !imp, true, imp, imp, imp, imp, imp, imp};
  for (int i = 0; i < 11; ++i) {
    const double scale = std::max(1.0, std::fabs(phi.v[i]));
    EXPECT_NEAR(hand[i], phi.v[i], 1e-12 * scale) << what << " input " << i;
    if (!used[i]) {
      EXPECT_EQ(hand[i], 0.0) << what << " input " << i;
      continue;
    }
    // centered FD, ε = 1e-6 of the input's own scale (depths: of the smoothing width)
    const double eps = 1e-6 * (i == 0 ? z[4] : std::max(std::fabs(z[i]), 1e-3));
    std::vector<double> zp = z, zm = z;
    zp[i] += eps;
    zm[i] -= eps;
    const double fd = (normal_phi<double>(imp, zp.data(), afn, afe) -
                       normal_phi<double>(imp, zm.data(), afn, afe)) /
                      (2 * eps);
    EXPECT_NEAR(hand[i], fd, 1e-6 * std::max({1.0, std::fabs(fd), std::fabs(hand[i])}))
        << what << " input " << i;
  }
}

TEST(ContactLaw, SoftplusNormalAdjointMatchesDualAndFiniteDifferences) {
  // depths from clear (−5 w) through the onset to pressed in (+5 w), approaching and leaving
  for (double dw : {-5.0, -0.7, 0.0, 0.4, 5.0})
    for (double zdot : {-0.3, 0.0, 0.2}) {
      const double w = 1e-3;
      check_normal_law(false, {dw * w, zdot, 2e4, 50, w, 0.9, 0.95, 0.001, 0.02, 1.0, 1.5},
                       "softplus d/w " + std::to_string(dw) + " zdot " + std::to_string(zdot));
    }
}

TEST(ContactLaw, ImpedanceNormalAdjointMatchesDualAndFiniteDifferences) {
  // the smoothed depth δ across the sigmoid's three pieces: x = δ/width < ½, in [½, 1), ≥ 1,
  // and at the onset (d = 0, δ = w log 2)
  // (d/w ≤ 8: deeper, ∂δ/∂w = softplus − σ s cancels to rounding in every method)
  const double w = 2e-4, width = 1e-3;
  for (double d : {-3e-4, 0.0, 2e-4, 7e-4, 1.6e-3})
    for (double zdot : {-0.2, 0.1}) {
      NormalLawParams<double> q{0, 0, w, 0.9, 0.95, width, 0.02, 1.0, 1.5};
      check_normal_law(true, {d, zdot, 2e4, 50, w, q.d0, q.d1, q.width, q.tc, q.zeta, q.mass},
                       "impedance d " + std::to_string(d) + " zdot " + std::to_string(zdot));
    }
  // the sigmoid's pieces are all visited, and y is continuous at x = ½ and x = 1
  double y0, dy0, y1, dy1;
  impedance_sigmoid(0.5 - 1e-12, y0, dy0);
  impedance_sigmoid(0.5 + 1e-12, y1, dy1);
  EXPECT_NEAR(y0, 0.5, 1e-11);
  EXPECT_NEAR(y1, 0.5, 1e-11);
  EXPECT_NEAR(dy0, dy1, 1e-10);
  impedance_sigmoid(1.0 - 1e-9, y0, dy0);
  impedance_sigmoid(1.0, y1, dy1);
  EXPECT_NEAR(y0, 1.0, 1e-15);
  EXPECT_EQ(y1, 1.0);
  EXPECT_NEAR(dy0, 0.0, 1e-8);
}

// friction's φ = f̄_t · f_t at z = (v_x, v_y, N, μ, v_s)
template <class S>
S friction_phi(const S* z, const double* aft) {
  S ft[2];
  friction_smoothed(z, z[2], z[3], z[4], ft);
  return S(aft[0]) * ft[0] + S(aft[1]) * ft[1];
}

TEST(ContactLaw, FrictionAdjointMatchesDualAndFiniteDifferences) {
  const double vs = 0.01, aft[2] = {0.6, -1.1};
  // sticking (|v_t| ≪ v_s), at the boundary (|v_t| = v_s), sliding (|v_t| ≫ v_s), at rest
  for (double speed : {0.0, 0.002, 0.01, 0.5}) {
    const std::vector<double> z = {speed * 0.8, speed * -0.6, 3.7, 0.5, vs};
    double avt[2] = {0, 0}, afe = 0, amu = 0, avs = 0;
    adj_friction_smoothed(z.data(), z[2], z[3], z[4], aft, avt, afe, amu, avs);
    const double hand[5] = {avt[0], avt[1], afe, amu, avs};
    Dual<double, 5> zd[5];
    for (int i = 0; i < 5; ++i) zd[i] = Dual<double, 5>::variable(z[i], i);
    const auto phi = friction_phi(zd, aft);
    for (int i = 0; i < 5; ++i) {
      EXPECT_NEAR(hand[i], phi.v[i], 1e-12 * std::max(1.0, std::fabs(phi.v[i])))
          << "speed " << speed << " input " << i;
      const double eps = 1e-6 * (i < 2 ? vs : std::fabs(z[i]));
      std::vector<double> zp = z, zm = z;
      zp[i] += eps;
      zm[i] -= eps;
      const double fd = (friction_phi(zp.data(), aft) - friction_phi(zm.data(), aft)) / (2 * eps);
      EXPECT_NEAR(hand[i], fd, 1e-6 * std::max({1.0, std::fabs(fd)}))
          << "speed " << speed << " input " << i;
    }
  }
  // the regimes: sticking is viscous (f_t ≈ −μ N v_t / v_s), sliding is Coulomb (|f_t| → μ N)
  const double N = 3.7, mu = 0.5;
  double v1[2] = {1e-4, 0}, v2[2] = {10.0, 0}, f1[2], f2[2];
  friction_smoothed(v1, N, mu, vs, f1);
  friction_smoothed(v2, N, mu, vs, f2);
  EXPECT_NEAR(f1[0], -mu * N * v1[0] / vs, 1e-4 * mu * N * v1[0] / vs);
  EXPECT_NEAR(f2[0], -mu * N, 1e-6 * mu * N);
}

// ---- test doubles: a box on 3 slides + 3 hinges, an arm with spheres ----

// tests/data/rigid_contact_box.json: a box (half extents 0.1 × 0.08 × 0.05 m, 1 kg) carried by
// slides x, y, z and hinges about x, y, z (each carrier 0.1 kg), its 8 corners contact points;
// `extra` goes into model.contact
ExperimentConfig box_config(const std::string& extra, bool tip = false) {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/tests/data/rigid_contact_box.json");
  nlohmann::json j = nlohmann::json::parse(in);
  nlohmann::json e = nlohmann::json::parse(extra.empty() ? "{}" : extra);
  for (auto it = e.begin(); it != e.end(); ++it) j["model"]["contact"][it.key()] = it.value();
  if (tip) {
    j["model"]["contact"]["enabled"] = true;
    j["model"]["tip"] = {{"body", "box"}, {"pos", {0.0, 0.0, -0.05}}};
  }
  return parse_config(j);
}

// an arm on a base yaw hinge (z) with two pitch hinges (y), a sphere (r = 3 cm) at the elbow on
// the upper link and one at the end of the forearm
ExperimentConfig arm_config(const std::string& extra) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "arm_spheres",
    "model": {"type": "articulated", "integrator": "euler",
      "bodies": [
        {"name": "base", "pos": [0, 0, 0.3], "joint": {"name": "yaw", "axis": [0, 0, 1], "damping": 0.1}, "mass": 0.5,
         "fullinertia": [2e-3, 2e-3, 2e-3, 0, 0, 0]},
        {"name": "upper", "parent": "base", "joint": {"name": "shoulder", "axis": [0, 1, 0], "damping": 0.1, "kp": 5, "kv": 0.2}, "mass": 0.8,
         "com": [0.125, 0, 0], "fullinertia": [1e-3, 5e-3, 5e-3, 0, 0, 0]},
        {"name": "fore", "parent": "upper", "pos": [0.25, 0, 0], "joint": {"name": "elbow", "axis": [0, 1, 0], "damping": 0.1},
         "mass": 0.5, "com": [0.12, 0.01, 0], "fullinertia": [6e-4, 3e-3, 3e-3, 1e-5, 0, 0]}
      ],
      "contacts": [
        {"name": "elbow_ball", "body": "upper", "pos": [0.25, 0, 0], "radius": 0.03},
        {"name": "hand_ball", "body": "fore", "pos": [0.25, 0, 0], "radius": 0.03}
      ],
      "contact": {"stiffness": 5e3, "damping": 20, "smoothing": 1e-3, "friction": 0.8, "slip_velocity": 0.02}},
    "simulation": {"dt": 0.001, "steps": 10},
    "initial_state": {"q": [0, 0.9, -0.9], "v": [0, 0, 0]},
    "loss": {"terminal": [{"state": "yaw.q", "target": 0.3}, {"state": "elbow.q", "target": -0.5}]},
    "validation": {"enabled": false}
  })");
  nlohmann::json e = nlohmann::json::parse(extra.empty() ? "{}" : extra);
  for (auto it = e.begin(); it != e.end(); ++it) j["model"]["contact"][it.key()] = it.value();
  return parse_config(j);
}

const Articulated& model_of(const ExperimentConfig& c) {
  return c.model_state<ArticulatedSetup>().model;
}

// contact c's depth below the plane [m] at state x
double depth_of(const Articulated& m, const std::vector<double>& x, const std::vector<double>& p,
                int c) {
  return contact_state(m, x.data(), p.data(), c).depth;
}

// θ with the plane moved so that the deepest of the model's contacts is `depth` [m] below it
std::vector<double> plane_at_depth(const Articulated& m, const std::vector<double>& x,
                                   std::vector<double> p, double depth) {
  double deepest = -1e9;
  for (int c = 0; c < m.num_contacts(); ++c) deepest = std::max(deepest, depth_of(m, x, p, c));
  p[m.p_global(Articulated::kPlaneHeight)] += depth - deepest;
  return p;
}

int contacts_in(const Articulated& m, const std::vector<double>& x, const std::vector<double>& p) {
  int n = 0;
  for (int c = 0; c < m.num_contacts(); ++c)
    n += m.in_contact<double>(x.data(), p.data(), c) ? 1 : 0;
  return n;
}

std::vector<double> state(const std::vector<double>& q, const std::vector<double>& v) {
  std::vector<double> x = q;
  x.insert(x.end(), v.begin(), v.end());
  return x;
}

struct RigidContactProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const std::vector<double> u6 = {0.5, -0.3, 1.0, 0.02, -0.01, 0.03};
    auto add = [&](const std::string& name, const ExperimentConfig& c, const std::vector<double>& x,
                   double depth, int expect_points, double fd_scale = 1e-3,
                   int integrator = Articulated::kEuler) {
      Articulated m = model_of(c);
      m.integrator = integrator;
      const std::vector<double> p = plane_at_depth(m, x, c.theta, depth);
      std::vector<double> u(m.nu());
      for (int i = 0; i < m.nu(); ++i) u[i] = u6[i % 6];
      EXPECT_EQ(contacts_in(m, x, p), expect_points) << name;
      out.push_back(StepCase<Articulated>{name, m, x, u, p, fd_scale, 2});
    };
    const ExperimentConfig box = box_config("");
    // flat: the 4 bottom corners 0.5 mm in, sliding (|v_t| = 0.54 m/s ≫ v_s = 0.01 m/s)
    add("box sliding on 4 corners", box,
        state({0.1, -0.2, 0.05, 0, 0, 0.3}, {0.5, 0.2, -0.01, 0.1, -0.2, 0.3}), 5e-4, 4);
    // sticking: |v_t| ≈ 0.22 v_s
    add("box sticking on 4 corners", box,
        state({0.1, -0.2, 0.05, 0, 0, 0.3}, {0.002, 0.001, 0, 0, 0, 0}), 5e-4, 4);
    // the stick/slip boundary: the centre's |v_t| = v_s, the corners' about it (ω_z small)
    add("box at the stick/slip boundary", box,
        state({0, 0, 0.05, 0, 0, 0}, {0.008, 0.006, 0.001, 0, 0, 0.02}), 5e-4, 4);
    // tipping on an edge (rolled 0.3 rad about x): the 2 corners of the low edge 0.3 mm in
    add("box tipping on an edge", box,
        state({0, 0, 0.07, 0.3, 0, 0}, {0.3, 0.1, -0.05, 1.0, 0.2, -0.5}), 3e-4, 2);
    // contact onset: the lowest corner exactly at the plane, falling; the box pitched a little
    add("box at contact onset", box, state({0, 0, 0.06, 0.05, 0.1, 0}, {0.2, 0, -0.1, 0, 0.5, 0}),
        0.0, 0);
    // implicitfast and rk4 (rk4's adjoint is the dual one; its FD check still tests the law)
    add("box sliding, implicitfast", box,
        state({0.1, -0.2, 0.05, 0, 0, 0.3}, {0.5, 0.2, -0.01, 0.1, -0.2, 0.3}), 5e-4, 4, 1e-3,
        Articulated::kImplicitFast);
    add("box sliding, rk4", box,
        state({0.1, -0.2, 0.05, 0, 0, 0.3}, {0.5, 0.2, -0.01, 0.1, -0.2, 0.3}), 5e-4, 4, 1e-3,
        Articulated::kRk4);
    // the tip too (contact.enabled): tip and ground points act together
    add("box sliding with the tip enabled", box_config("", true),
        state({0.1, -0.2, 0.05, 0, 0, 0.3}, {0.5, 0.2, -0.01, 0.1, -0.2, 0.3}), 5e-4, 5);
    // the impedance law, pitched about y so the 4 bottom corners reach different depths (the
    // sigmoid's pieces: 1.2 mm, 1.2 − 2·0.1·sin 0.004 ≈ 0.4 mm)
    const ExperimentConfig imp = box_config(R"({"law": "impedance", "smoothing": 1e-4})");
    add("box impedance law, pitched", imp,
        state({0, 0, 0.05, 0.001, 0.004, 0}, {0.3, -0.1, -0.02, 0.1, 0.2, 0.1}), 1.2e-3, 4);
    add("box impedance law, sticking", imp,
        state({0, 0, 0.05, 0, 0, 0}, {0.003, 0, -0.001, 0, 0, 0}), 6e-4, 4);
    // the arm: both spheres touching (link 2 level), yawing (lateral slip) and pitching
    const ExperimentConfig arm = arm_config("");
    add("arm, both spheres in contact", arm, state({0.2, 0.9, -0.9}, {0.5, 0.3, -0.2}), 5e-4, 2);
    add("arm, hand sphere only", arm, state({0.2, 0.9, -0.6}, {0.5, 0.3, -0.2}), 5e-4, 1);
    add("arm impedance, both spheres", arm_config(R"({"law": "impedance", "smoothing": 1e-4})"),
        state({0.2, 0.9, -0.9}, {0.2, -0.1, 0.1}), 8e-4, 2);
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    std::vector<RolloutCase<Articulated>> out;
    // wider smoothing (w = 2 mm, v_s = 0.05 m/s, softer plane) so that the rollout FD's
    // ε = 1e-6 stays far below every length and speed scale of the laws
    auto add = [&](const std::string& name, const ExperimentConfig& c, const std::vector<double>& x,
                   double depth) {
      RolloutCase<Articulated> r;
      r.name = name;
      r.model = model_of(c);
      r.loss = c.loss;
      r.steps = 30;
      r.checkpoint_every = 7;
      r.x0 = x;
      r.p = plane_at_depth(r.model, x, c.theta, depth);
      r.u.assign(size_t(r.steps) * r.model.nu(), 0.0);
      for (size_t k = 0; k < r.u.size(); ++k) r.u[k] = 0.3 * std::sin(0.7 * double(k));
      out.push_back(r);
    };
    const std::string soft =
        R"({"stiffness": 5e3, "damping": 20, "smoothing": 2e-3, "slip_velocity": 0.05})";
    add("box sliding and tipping, 30 steps", box_config(soft),
        state({0, 0, 0.06, 0.05, 0.1, 0}, {0.6, 0.2, -0.2, 0.5, 1.0, 0.5}), 1e-3);
    add("box impedance, 30 steps",
        box_config(
            R"({"law": "impedance", "smoothing": 1e-3, "slip_velocity": 0.05, "solimp": [0.9, 0.95, 0.004], "solref": [0.04, 1]})"),
        state({0, 0, 0.05, 0.02, 0.01, 0}, {0.4, -0.2, -0.05, 0.2, -0.1, 0.3}), 8e-4);
    add("arm spheres, 30 steps", arm_config(soft), state({0.2, 0.9, -0.9}, {0.5, 0.3, -0.2}), 1e-3);
    return out;
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(RigidContact, GradientSuite, ::testing::Types<RigidContactProvider>);

// ---- the packed path ----

template <class R>
bool same_bits(R a, R b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// W lanes with different contact modes (heights, speeds: clear, sticking, sliding, tipping):
// the packed run gives each rollout its scalar run's loss, trajectory and gradients, bit for bit
TEST(RigidContact, PackedRolloutsGetTheBitsOfTheirScalarRuns) {
  for (const std::string law : {"softplus", "impedance"}) {
    SCOPED_TRACE(law);
    const ExperimentConfig c = box_config(R"({"law": ")" + law + R"(", "smoothing": 1e-3})");
    const Articulated& m = model_of(c);
    const int B = 11, T = 40;
    RolloutShape sh;
    sh.steps = T;
    sh.checkpoint_every = 7;
    Batch<double> batch;
    batch.resize(B, m.nx(), m.nu(), m.np(), T);
    for (int b = 0; b < B; ++b) {
      const std::vector<double> x =
          state({0, 0, 0.05, 0.04 * std::sin(b), 0.03 * std::cos(b), 0},
                {0.3 * (b % 4) * (b % 4) * 0.1, 0.01 * b, -0.05, 0, 0.2 * std::sin(b), 0});
      // lanes 0, 5, 10 start 2 cm above the plane and stay clear; the rest start 1.5 mm above
      // to 2.5 mm in
      const std::vector<double> p =
          plane_at_depth(m, x, c.theta, b % 5 == 0 ? -0.02 : 1e-3 * (b % 5) - 1.5e-3);
      std::copy(x.begin(), x.end(), batch.x0_of(b));
      std::copy(p.begin(), p.end(), batch.theta_of(b));
      for (int k = 0; k < T * m.nu(); ++k) batch.u_of(b)[k] = 0.2 * std::sin(0.3 * k + b);
    }
    ASSERT_TRUE((use_packed_path<Articulated, double>(m, sh, B)));
    BatchResult<double> packed;
    cpu_run_batch<Articulated, double>(m, c.loss, sh, batch, true, packed, 1);
    int min_contact = 1 << 30, max_contact = 0;
    for (int b = 0; b < B; ++b) {
      Batch<double> one;
      one.resize(1, m.nx(), m.nu(), m.np(), T);
      std::copy(batch.x0_of(b), batch.x0_of(b) + m.nx(), one.x0.begin());
      std::copy(batch.u_of(b), batch.u_of(b) + T * m.nu(), one.u.begin());
      std::copy(batch.theta_of(b), batch.theta_of(b) + m.np(), one.theta.begin());
      BatchResult<double> alone;
      RolloutShape sh1 = sh;
      cpu_run_batch<Articulated, double>(m, c.loss, sh1, one, true, alone, 1);
      EXPECT_TRUE(same_bits(packed.loss[b], alone.loss[0])) << b;
      EXPECT_EQ(packed.diag[b].contact_steps, alone.diag[0].contact_steps) << b;
      EXPECT_EQ(packed.diag[b].contact_hash, alone.diag[0].contact_hash) << b;
      min_contact = std::min(min_contact, alone.diag[0].contact_steps);
      max_contact = std::max(max_contact, alone.diag[0].contact_steps);
      auto cmp = [&](const std::vector<double>& all, const std::vector<double>& mine, size_t n,
                     const char* what) {
        int bad = 0;
        for (size_t i = 0; i < n; ++i) bad += same_bits(all[size_t(b) * n + i], mine[i]) ? 0 : 1;
        EXPECT_EQ(bad, 0) << what << " rollout " << b;
      };
      cmp(packed.grad_x0, alone.grad_x0, m.nx(), "dL/dx0");
      cmp(packed.grad_u, alone.grad_u, size_t(T) * m.nu(), "dL/du");
      cmp(packed.grad_theta, alone.grad_theta, m.np(), "dL/dtheta");
      double friction_grad = alone.grad_theta[m.p_contact(kContactFriction)];
      if (alone.diag[0].contact_steps > 0) {
        EXPECT_NE(friction_grad, 0.0) << "rollout " << b << " touched: μ must matter";
      }
    }
    EXPECT_EQ(min_contact, 0) << "some lane must stay clear of the plane";
    EXPECT_GT(max_contact, 0);
  }
}

// ---- physics the laws promise ----

// run the config's model from x for T steps with zero controls; returns x_T
std::vector<double> simulate(const Articulated& m, std::vector<double> x,
                             const std::vector<double>& p, int T) {
  std::vector<double> u(m.nu(), 0.0), xn(x.size());
  for (int k = 0; k < T; ++k) {
    double* out = xn.data();
    m.step<double>(k, x.data(), u.data(), p.data(), out);
    x = xn;
  }
  return x;
}

// the mass of bodies from..n_bodies−1 [kg]
double mass_from(const Articulated& m, const std::vector<double>& p, int from) {
  double s = 0;
  for (int b = from; b < m.n_bodies; ++b) s += p[m.p_body(b, Articulated::kMass)];
  return s;
}
double total_mass(const Articulated& m, const std::vector<double>& p) { return mass_from(m, p, 0); }
// the weight the z slide carries: the z carrier, the two hinge carriers and the box (the x
// and y carriers hang from the world)
double lifted_mass(const Articulated& m, const std::vector<double>& p) {
  return mass_from(m, p, 2);
}

// θ with the box's centre of mass at its centre (the 4 bottom corners then share its weight)
std::vector<double> centred(const Articulated& m, std::vector<double> p) {
  for (int i = 0; i < 3; ++i) p[m.p_body(5, Articulated::kComX + i)] = 0;
  return p;
}

// a flat box settles where its 4 bottom corners carry its weight: k w softplus(d/w) = M g / 4
// (M: the lifted mass; with w = 1 mm the corners float at d < 0, held by the smooth law's tail)
TEST(RigidContact, BoxRestsAtTheSoftplusLawsStaticSag) {
  const ExperimentConfig c = box_config(R"({"damping": 200})");
  const Articulated& m = model_of(c);
  std::vector<double> p = centred(m, c.theta);
  p[m.p_global(Articulated::kPlaneHeight)] = 0.0;
  const std::vector<double> x =
      simulate(m, state({0, 0, 0.052, 0, 0, 0}, {0, 0, 0, 0, 0, 0}), p, 3000);
  const double k = p[m.p_global(Articulated::kContactStiffness)],
               w = p[m.p_global(Articulated::kContactSmoothing)];
  const double load = lifted_mass(m, p) * 9.81 / 4;
  // softplus(s) = load / (k w)  ->  s = log(e^{load/(k w)} − 1)
  const double d = w * std::log(std::expm1(load / (k * w)));
  EXPECT_NEAR(0.05 - x[2], d, 1e-6) << "sag: the corners are " << 0.05 - x[2] << " m in";
  EXPECT_NEAR(x[8], 0.0, 1e-6) << "at rest";
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(depth_of(m, x, p, c), d, 1e-6) << "bottom corner " << c;
}

// the impedance law at rest: M g / 4 = m_c imp² K δ per corner, with imp from the sigmoid
TEST(RigidContact, BoxRestsAtTheImpedanceLawsStaticBalance) {
  const ExperimentConfig c =
      box_config(R"({"law": "impedance", "smoothing": 1e-5, "solref": [0.02, 1.5]})");
  const Articulated& m = model_of(c);
  std::vector<double> p = centred(m, c.theta);
  p[m.p_global(Articulated::kPlaneHeight)] = 0.0;
  EXPECT_DOUBLE_EQ(p[m.p_contact(kContactImpMass)], total_mass(m, p))
      << "default m_c: the bodies' mass";
  const std::vector<double> x =
      simulate(m, state({0, 0, 0.05, 0, 0, 0}, {0, 0, 0, 0, 0, 0}), p, 4000);
  const double delta = 0.05 - x[2];  // w ≪ δ: the smoothed depth is the depth
  const double d1 = p[m.p_contact(kContactImpDWidth)], tc = p[m.p_contact(kContactRefTimeconst)];
  const double zeta = p[m.p_contact(kContactRefDampratio)],
               K = 1 / (d1 * d1 * tc * tc * zeta * zeta);
  // δ > width: imp = d_width
  ASSERT_GT(delta, p[m.p_contact(kContactImpWidth)]);
  const double per_corner = p[m.p_contact(kContactImpMass)] * d1 * d1 * K * delta;
  EXPECT_NEAR(per_corner, lifted_mass(m, p) * 9.81 / 4, 1e-6 * lifted_mass(m, p) * 9.81);
}

// sliding (v ≫ v_s), friction μ N with N = M_lift g decelerates the x slide's mass M_x:
// v(t) = v0 − μ g (M_lift / M_x) t until it sticks (w = 0.1 mm: the corners rest 0.14 mm in)
TEST(RigidContact, SlidingBoxDeceleratesAtMuG) {
  // v_s = 0.01 m/s keeps the sticking regime's viscous friction (μ N / v_s per corner) inside
  // the explicit step's stability bound
  const ExperimentConfig c =
      box_config(R"({"damping": 200, "smoothing": 1e-4, "slip_velocity": 0.01})");
  const Articulated& m = model_of(c);
  std::vector<double> p = c.theta;
  const double mu = p[m.p_contact(kContactFriction)];
  // settle first, then push
  std::vector<double> x = simulate(m, state({0, 0, 0.0502, 0, 0, 0}, {0, 0, 0, 0, 0, 0}), p, 2000);
  x[6] = 1.0;
  const int T = 100;  // 0.1 s: v drops by μ g 0.1 ≈ 0.49 m/s
  const std::vector<double> y = simulate(m, x, p, T);
  const double expect = 1.0 - mu * 9.81 * lifted_mass(m, p) / total_mass(m, p) * T * m.dt;
  EXPECT_NEAR(y[6], expect, 2e-3) << "the sliding speed after " << T * m.dt << " s";
  ContactState s = contact_state(m, y.data(), p.data(), 0);
  EXPECT_EQ(s.mode, kContactSlip);
  // and it comes to rest: sticking, slip speed below v_s
  const std::vector<double> z = simulate(m, y, p, 300);
  s = contact_state(m, z.data(), p.data(), 0);
  EXPECT_EQ(s.mode, kContactStick) << "slip " << s.slip;
  EXPECT_LT(std::fabs(z[6]), 1e-3);
}

// ---- diagnostics ----

TEST(RigidContact, DiagnosticsCountAndLabelEveryPoint) {
  const ExperimentConfig c = box_config("", true);
  const Articulated& m = model_of(c);
  EXPECT_EQ(m.num_contacts(), 9) << "the tip, then 8 corners";
  // pitched about y: only the +x bottom corners (contacts 2 and 4: c+--, c++-) go in
  const std::vector<double> x = state({0, 0, 0.05, 0, 0.02, 0}, {0.5, 0, 0, 0, 0, 0});
  std::vector<double> p = plane_at_depth(m, x, c.theta, 1e-3);
  EXPECT_TRUE(m.in_contact<double>(x.data(), p.data(), 2));
  EXPECT_TRUE(m.in_contact<double>(x.data(), p.data(), 4));
  EXPECT_FALSE(m.in_contact<double>(x.data(), p.data(), 1));
  EXPECT_FALSE(m.in_contact<double>(x.data(), p.data(), 0))
      << "the tip at the bottom face's centre is clear";
  EXPECT_NEAR(m.penetration<double>(x.data(), p.data()), 1e-3, 1e-12);
  EXPECT_EQ(contact_state(m, x.data(), p.data(), 2).mode, kContactSlip);
  EXPECT_EQ(contact_state(m, x.data(), p.data(), 1).mode, kContactAir);
  EXPECT_NEAR(contact_state(m, x.data(), p.data(), 2).slip, 0.5, 1e-12);
  EXPECT_FALSE(m.conservative<double>(p.data()));
  // a sphere's depth counts its radius
  const ExperimentConfig a = arm_config("");
  const Articulated& ma = model_of(a);
  const std::vector<double> xa = state({0, 0.9, -0.9}, {0, 0, 0});
  const double centre_z = 0.3 - 0.25 * std::sin(0.9);
  EXPECT_NEAR(depth_of(ma, xa, a.theta, 0), 0.0 - (centre_z - 0.03), 1e-12);
  EXPECT_NEAR(depth_of(ma, xa, a.theta, 1), 0.0 - (centre_z - 0.03), 1e-12);
}

// ---- the config ----

TEST(RigidContact, ConfigErrorsNameTheKey) {
  auto bad = [](const std::string& contacts, const std::string& contact, const std::string& key) {
    nlohmann::json j = nlohmann::json::parse(R"({"name": "e", "model": {"type": "articulated",
      "bodies": [{"name": "b", "joint": {"name": "z", "type": "slide"}, "mass": 1, "fullinertia": [1, 1, 1, 0, 0, 0]}]},
      "simulation": {"dt": 0.001, "steps": 2}, "loss": {"terminal": [{"state": "z.q", "target": 0}]}})");
    if (!contacts.empty()) j["model"]["contacts"] = nlohmann::json::parse(contacts);
    if (!contact.empty()) j["model"]["contact"] = nlohmann::json::parse(contact);
    expect_config_error(j, {key});
  };
  bad(R"({"name": "a"})", "", "model.contacts");
  bad(R"([{"body": "b"}])", "", "model.contacts[0].name");
  bad(R"([{"name": "a", "body": "nope"}])", "", "model.contacts[0].body");
  bad(R"([{"name": "a", "body": "b"}, {"name": "a", "body": "b"}])", "", "model.contacts[1].name");
  bad(R"([{"name": "a", "body": "b", "radius": -1}])", "", "model.contacts[0].radius");
  bad(R"([{"name": "a", "body": "b", "size": 1}])", "", "model.contacts[0].size");
  // more points than the largest capacity (ArticulatedLarge: 64) are refused
  std::string many = "[";
  for (int i = 0; i < 65; ++i)
    many += std::string(i ? "," : "") + R"({"name": "p)" + std::to_string(i) + R"(", "body": "b"})";
  bad(many + "]", "", "model.contacts");
  bad("", R"({"law": "coulomb"})", "model.contact.law");
  bad("", R"({"slip_velocity": 0})", "model.contact.slip_velocity");
  bad("", R"({"solimp": [0.9, 1.2, 0.001]})", "model.contact.solimp");
  bad("", R"({"solimp": [0.9, 0.95]})", "model.contact.solimp");
  bad("", R"({"solref": [0, 1]})", "model.contact.solref");
  bad("", R"({"friction": -0.1})", "model.contact.friction");
}

TEST(RigidContact, SlotsAreNamedAndTheTipKeepsItsLayout) {
  const ExperimentConfig c = box_config("");
  const Articulated& m = model_of(c);
  EXPECT_EQ(m.np(), m.p_global(Articulated::kGlobalParams) + kGroundContactParams);
  EXPECT_EQ(c.info.param_names[m.p_contact(kContactFriction)], "contact.friction");
  EXPECT_EQ(c.info.param_names[m.p_contact(kContactSlipVelocity)], "contact.slip_velocity");
  EXPECT_EQ(c.info.param_names[m.p_contact(kContactImpMass)], "contact.impedance_mass");
  EXPECT_EQ(c.theta[m.p_contact(kContactFriction)], 0.5);
  EXPECT_EQ(c.theta[m.p_contact(kContactImpD0)], 0.9);
  EXPECT_EQ(c.theta[m.p_contact(kContactImpWidth)], 0.001);
  EXPECT_EQ(m.ground.n_points, 8);
  EXPECT_EQ(m.ground.law, GroundContacts::kSoftplus);
  EXPECT_EQ(model_of(box_config(R"({"law": "impedance"})")).ground.law, GroundContacts::kImpedance);
}

}  // namespace
}  // namespace steer::testing
