// Time-of-impact restitution for the articulated model's ground points (contact.impact
// "time_of_impact"; include/steer/models/articulated/impact.h, docs/contact.md):
//   - the gradient suite (tests/support/gradient_suite.h: hand adjoint vs dual numbers ≤ 1e-12,
//   dual vs
//     centered FD ≤ 1e-6, rollouts vs the dual reference and FD) on a ball and on the box of
//     configs/box_slide.json: one point crossing within the step, a corner crossing while
//     another rests in the plane, the box landing flat (four corners in one step, 1 and 4
//     sweeps), implicitfast, and a 40-step toss with its impacts;
//   - physics: a ball that crosses the plane leaves at exactly e times its normal speed,
//     whatever its mass and the step (≤ 1e-12), at the crossing time (the position ≤ 1e-12);
//     dropped under gravity, its height at T and the derivatives of that height with respect
//     to the drop height and to e converge to the closed-form bounce as dt shrinks (first
//     order), where the penalty law's restitution at the same steps does not;
//   - the SIMD packs give every rollout the bits of its scalar run (lanes with and without
//     impacts in one pack);
//   - configs/ball_bounce.json recovers friction and restitution from its recording;
//   - the keys' refusals name the key.
#include "steer/models/articulated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_errors.h"
#include "recorded_fit.h"
#include "gradient_suite.h"
#include "models/articulated/articulated_setup.h"
#include "steer/cpu_backend.h"
#include "steer/cpu_packed.h"

namespace steer::testing {
namespace {

const Articulated& model_of(const ExperimentConfig& c) {
  return c.model_state<ArticulatedSetup>().model;
}

std::vector<double> state(std::vector<double> q, const std::vector<double>& v) {
  q.insert(q.end(), v.begin(), v.end());
  return q;
}

// configs/box_slide.json's box under `integrator`, its contact keys replaced by `contact`
ExperimentConfig box_config(const nlohmann::json& contact,
                            const std::string& integrator = "euler") {
  std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/box_slide.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["model"]["contact"] = contact;
  j["model"]["integrator"] = integrator;
  j["loss"] = nlohmann::json::parse(R"({"terminal": [{"state": "root.p.x", "target": 0.3},
                                                      {"state": "root.p.z", "target": 0.1}]})");
  j.erase("variables");
  j.erase("batch");
  j.erase("optimizer");
  j["validation"] = {{"enabled", false}};
  return parse_config(j);
}

const nlohmann::json kImpactContact = {
    {"stiffness", 2e4},      {"damping", 5.0},     {"smoothing", 1e-3},         {"friction", 0.5},
    {"slip_velocity", 0.05}, {"restitution", 0.4}, {"impact", "time_of_impact"}};

// θ with the plane moved so that the deepest contact is `depth` [m] below it (< 0: above it)
std::vector<double> plane_at_depth(const Articulated& m, const std::vector<double>& x,
                                   std::vector<double> p, double depth) {
  double deepest = -1e9;
  for (int c = 0; c < m.num_contacts(); ++c)
    deepest = std::max(deepest, contact_state(m, x.data(), p.data(), c).depth);
  p[m.p_global(Articulated::kPlaneHeight)] += depth - deepest;
  return p;
}

// a 1 kg ball (radius 5 cm) on a free root with its sphere as the contact; contact.stiffness
// k (0: the impulses alone), no friction
ExperimentConfig ball_config(double e, double k, double mass = 1.0) {
  nlohmann::json j = nlohmann::json::parse(
      R"({"name": "ball", "model": {"type": "articulated", "integrator": "euler",
    "bodies": [{"name": "ball", "joint": {"name": "root", "type": "free"}, "mass": 1, "fullinertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]}],
    "contacts": [{"name": "ball", "body": "ball", "radius": 0.05}],
    "contact": {"smoothing": 1e-5, "friction": 0, "damping": 0, "impact": "time_of_impact"}},
    "simulation": {"dt": 1e-3, "steps": 10}, "loss": {"terminal": [{"state": "root.p.z", "target": 0}]},
    "validation": {"enabled": false}})");
  j["model"]["bodies"][0]["mass"] = mass;
  j["model"]["contact"]["restitution"] = e;
  j["model"]["contact"]["stiffness"] = k;
  return parse_config(j);
}

// ---- the gradient suite ----

struct ImpactProvider {
  using Model = Articulated;
  static std::vector<StepCase<Articulated>> step_cases() {
    std::vector<StepCase<Articulated>> out;
    const ExperimentConfig c = box_config(kImpactContact);
    auto add = [&](const std::string& name, const std::vector<double>& x,
                   const std::vector<double>& p, int integrator, int sweeps) {
      Articulated m = model_of(c);
      m.integrator = integrator;
      m.ground.impact_sweeps = sweeps;
      const std::vector<double> u(m.nu(), 0.2);
      out.push_back(StepCase<Articulated>{name, m, x, u, p, 1e-2, 3});
    };
    // the corners' spheres touch at z − 0.05 when flat: 1 mm above, falling at 1 m/s with a
    // 2 ms step: every bottom corner crosses at s = 1/2 (four at once)
    const std::vector<double> flat =
        state({0.01, 0, 0.051, 1, 0, 0, 0}, {1.0, 0.3, -1.0, 0, 0, 3.0});
    add("box landing flat, 1 sweep", flat, c.theta, Articulated::kEuler, 1);
    add("box landing flat, 4 sweeps", flat, c.theta, Articulated::kEuler, 4);
    add("box landing flat, implicitfast", flat, c.theta, Articulated::kImplicitFast, 2);
    // a slow crossing, 0.1 mm above at 0.15 m/s: the gate G(v_n(s)) is about 0.9 (v_g = 0.1 m/s)
    add("box landing slowly (the gate)",
        state({0.01, 0, 0.0501, 1, 0, 0, 0}, {0.3, 0.1, -0.15, 0, 0, 1.0}), c.theta,
        Articulated::kEuler, 2);
    // rolled 0.3 rad about x, pitched a little: one corner lowest, 1 mm above the plane, falling
    // at about 1.2 m/s and spinning: it crosses, the others do not
    const double s = std::sin(0.15), co = std::cos(0.15);
    const std::vector<double> corner =
        state({0, 0, 0.09, co, s, 0.03, 0}, {0.5, 0.1, -1.2, 1.0, 0.4, -0.5});
    add("box on one corner", corner, plane_at_depth(model_of(c), corner, c.theta, -1e-3),
        Articulated::kEuler, 2);
    // tilted 0.01 rad about y: the x > 0 corners 0.2 mm in the plane (the normal law), the x < 0
    // corners 1.7 mm above it and coming down at about 1.45 m/s (ω_y = −10 rad/s): they cross
    const double a = 0.005;
    const std::vector<double> rocking =
        state({0, 0, 0.06, std::cos(a), 0, std::sin(a), 0}, {0.2, 0.0, -0.5, 0, -10.0, 0});
    add("box rocking: two corners in the plane, two crossing", rocking,
        plane_at_depth(model_of(c), rocking, c.theta, 2e-4), Articulated::kEuler, 2);
    // the same box rising: nothing crosses, the step is the one without the impact
    const std::vector<double> rising =
        state({0, 0, 0.06, std::cos(a), 0, std::sin(a), 0}, {0.2, 0.0, 0.5, 0, 1.0, 0});
    add("box rising from the plane", rising, plane_at_depth(model_of(c), rising, c.theta, 2e-4),
        Articulated::kEuler, 2);
    return out;
  }
  static std::vector<RolloutCase<Articulated>> rollout_cases() {
    const ExperimentConfig c = box_config(kImpactContact);
    RolloutCase<Articulated> r;
    r.name = "box tossed onto the plane, 40 steps";
    r.model = model_of(c);
    r.loss = c.loss;
    r.steps = 40;
    r.checkpoint_every = 7;
    // the inertias' products and the massless frames' inertias are 0 in θ, and the rollout's
    // curvature in them is large: ε = 3e-8 there (at 1e-6 centered FD's error is 2e-5
    // relative, shrinking 100-fold per 10-fold ε: truncation; below 1e-8 roundoff takes over)
    r.fd_scale = 0.03;
    const double s = std::sin(0.2), co = std::cos(0.2);
    r.x0 = state({0, 0, 0.09, co, s, 0.05, 0}, {1.0, 0.3, -1.5, 2.0, -1.0, 2.0});
    r.p = c.theta;
    r.u.assign(size_t(r.steps) * r.model.nu(), 0.0);
    return {r};
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(TimeOfImpact, GradientSuite, ::testing::Types<ImpactProvider>);

// the cases above take impulses (else they would test the normal law alone): a step that
// takes one depends on e, one that does not is the same at another e
TEST(TimeOfImpact, TheSuiteCasesTakeImpulses) {
  int with = 0;
  for (const StepCase<Articulated>& c : ImpactProvider::step_cases()) {
    std::vector<double> p2 = c.p;
    p2[c.model.p_contact(kContactRestitution)] = 0.9;
    const bool differs =
        step_value(c.model, 0, c.x, c.u, c.p) != step_value(c.model, 0, c.x, c.u, p2);
    with += differs;
    EXPECT_EQ(differs, c.name != "box rising from the plane") << c.name;
  }
  EXPECT_EQ(with, 6);
}

// with impulses a ground point counts as in contact while it is about to strike within the
// step (the validator's contact_mode_switch then sees impacts move between steps)
TEST(TimeOfImpact, APointAboutToStrikeCountsAsInContact) {
  const ExperimentConfig c = box_config(kImpactContact);
  Articulated m = model_of(c);
  // flat, the bottom corners 1 mm above the plane: falling at 1 m/s they strike within the
  // 2 ms step, at 0.4 m/s they do not
  const std::vector<double> fast = state({0, 0, 0.051, 1, 0, 0, 0}, {0, 0, -1.0, 0, 0, 0});
  const std::vector<double> slow = state({0, 0, 0.051, 1, 0, 0, 0}, {0, 0, -0.4, 0, 0, 0});
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(m.in_contact<double>(fast.data(), c.theta.data(), k)) << k;
    EXPECT_FALSE(m.in_contact<double>(slow.data(), c.theta.data(), k)) << k;
  }
  for (int k = 4; k < 8; ++k)
    EXPECT_FALSE(m.in_contact<double>(fast.data(), c.theta.data(), k)) << "top corner " << k;
  m.ground.impact = 0;
  EXPECT_FALSE(m.in_contact<double>(fast.data(), c.theta.data(), 0))
      << "without impulses: depth alone";
}

// ---- physics ----

// one step of m from x with zero controls
std::vector<double> one_step(const Articulated& m, const std::vector<double>& x,
                             const std::vector<double>& p) {
  return step_value(m, 0, x, std::vector<double>(m.nu(), 0.0), p);
}

// without gravity and the normal law (k = 0) the crossing step reflects the normal velocity
// by e exactly, and the ball leaves the plane at the crossing time: gap = e |v| (1 − s) h
TEST(TimeOfImpact, BallLeavesAtExactlyERatioAtTheCrossingTime) {
  for (double e : {0.2, 0.5, 0.8})
    for (double mass : {0.2, 5.0})
      for (double dt : {1e-3, 1e-4}) {
        const ExperimentConfig c = ball_config(e, 0.0, mass);
        Articulated m = model_of(c);
        m.dt = dt;
        std::vector<double> p = c.theta;
        p[m.p_global(Articulated::kGravity)] = 0;
        const double v = 2.0, gap0 = 0.3 * v * dt;  // crosses at s = 0.3
        const std::vector<double> x =
            state({0.1, 0, 0.05 + gap0, 1, 0, 0, 0}, {0.4, 0, -v, 0, 0, 0});
        const std::vector<double> y = one_step(m, x, p);
        const std::string at =
            "e " + std::to_string(e) + ", m " + std::to_string(mass) + ", dt " + std::to_string(dt);
        EXPECT_NEAR(y[9], e * v, 1e-12 * v) << at;
        EXPECT_NEAR(y[2] - 0.05, e * v * 0.7 * dt, 1e-12) << at;
        EXPECT_NEAR(y[7], 0.4, 1e-12) << at << ": no friction, the tangential velocity stays";
        // a ball that does not reach the plane within the step keeps its velocity
        const std::vector<double> far =
            state({0.1, 0, 0.05 + 1.5 * v * dt, 1, 0, 0, 0}, {0.4, 0, -v, 0, 0, 0});
        EXPECT_NEAR(one_step(m, far, p)[9], -v, 1e-14) << at;
      }
}

// z(T) [m] of the ball's gap and its derivatives by the model's adjoint: with respect to the
// drop height (the state's z) and to e (θ)
struct Drop {
  double gap, d_height, d_e;
};
Drop drop(double e, double dt, double height, double T,
          const nlohmann::json& contact_override = nullptr) {
  ExperimentConfig c = ball_config(e, 0.0);
  if (!contact_override.is_null()) {
    nlohmann::json j = nlohmann::json::parse(
        R"({"name": "ball", "model": {"type": "articulated", "integrator": "euler",
      "bodies": [{"name": "ball", "joint": {"name": "root", "type": "free"}, "mass": 1, "fullinertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]}],
      "contacts": [{"name": "ball", "body": "ball", "radius": 0.05}]},
      "simulation": {"dt": 1e-3, "steps": 10}, "loss": {"terminal": [{"state": "root.p.z", "target": 0}]},
      "validation": {"enabled": false}})");
    j["model"]["contact"] = contact_override;
    c = parse_config(j);
  }
  Articulated m = model_of(c);
  m.dt = dt;
  const std::vector<double> p = c.theta;
  const int steps = int(std::lround(T / dt));
  std::vector<std::vector<double>> xs{state({0, 0, 0.05 + height, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 0})};
  for (int k = 0; k < steps; ++k) xs.push_back(one_step(m, xs.back(), p));
  // reverse sweep for z_T: λ_T = e_z
  std::vector<double> lam(m.nx(), 0.0), ap(m.np(), 0.0), au(m.nu(), 0.0), u(m.nu(), 0.0);
  lam[2] = 1;
  for (int k = steps - 1; k >= 0; --k) {
    std::vector<double> ax(m.nx(), 0.0);
    auto vax = view(ax.data()), vau = view(au.data()), vap = view(ap.data());
    m.adj_step<double>(k, view(xs[k].data()), view(u.data()), view(const_cast<double*>(p.data())),
                       vax, vau, vap, view(lam.data()));
    lam = ax;
  }
  return {xs.back()[2] - 0.05, lam[2], ap[m.p_contact(kContactRestitution)]};
}

// the closed-form bounce: falls H in t₁ = sqrt(2H/g), hits at v = g t₁, leaves at e v; at
// T > t₁ (before the next landing) its gap is e v τ − g τ²/2, τ = T − t₁, so
//   ∂gap/∂e = v τ,  ∂gap/∂H = e g τ / v − e + g τ / v   (∂v/∂H = g/v, ∂τ/∂H = −1/v)
Drop exact_drop(double e, double H, double T) {
  const double g = 9.81, v = std::sqrt(2 * g * H), tau = T - v / g;
  return {e * v * tau - 0.5 * g * tau * tau, e * g * tau / v - e + g * tau / v, v * tau};
}

TEST(TimeOfImpact, DropConvergesToTheClosedFormBounceWithItsDerivatives) {
  const double e = 0.6, H = 0.2, T = 0.4;  // lands at 0.202 s, lands again at 0.444 s
  const Drop ex = exact_drop(e, H, T);
  double prev[3] = {0, 0, 0};
  for (double dt : {2e-3, 1e-3, 5e-4, 2.5e-4}) {
    const Drop d = drop(e, dt, H, T);
    const double err[3] = {std::fabs(d.gap - ex.gap), std::fabs(d.d_height - ex.d_height),
                           std::fabs(d.d_e - ex.d_e)};
    const std::string tag = "dt" + std::to_string(int(std::lround(dt * 1e5)));
    RecordProperty("gap_error_" + tag, std::to_string(err[0]));
    RecordProperty("dgap_dheight_error_" + tag, std::to_string(err[1]));
    RecordProperty("dgap_de_error_" + tag, std::to_string(err[2]));
    std::printf(
        "time of impact, dt %.2e s: gap %.6f (exact %.6f), d/dH %.6f (%.6f), d/de %.6f (%.6f)\n",
        dt, d.gap, ex.gap, d.d_height, ex.d_height, d.d_e, ex.d_e);
    // first order in dt: the errors are O(g dt) [m per m/s], below 1.5 g dt
    EXPECT_LT(err[0], 1.5 * 9.81 * dt * T) << dt;
    EXPECT_LT(err[1], 1.5 * 9.81 * dt) << dt;
    EXPECT_LT(err[2], 1.5 * 9.81 * dt * T) << dt;
    if (prev[0] > 0) {
      for (int i = 0; i < 3; ++i)
        EXPECT_LT(err[i], 0.75 * prev[i] + 1e-9) << "quantity " << i << " at dt " << dt;
    }
    for (int i = 0; i < 3; ++i) prev[i] = err[i];
  }
}

// the penalty law's restitution (d_c from e, k = 1e5 N/m, m_c = 1 kg) at the same steps: its
// bounce resolves the contact over steps, so ∂gap/∂H carries the step's error at the impact
// and does not settle at these dt; the time-of-impact errors are below it at every step
TEST(TimeOfImpact, BeatsThePenaltyRestitutionOnTheDropDerivative) {
  const double e = 0.6, H = 0.2, T = 0.4;
  const Drop ex = exact_drop(e, H, T);
  const nlohmann::json penalty = {
      {"stiffness", 1e5}, {"smoothing", 1e-5}, {"friction", 0}, {"restitution", e}};
  for (double dt : {2e-3, 1e-3, 5e-4}) {
    const Drop toi = drop(e, dt, H, T), pen = drop(e, dt, H, T, penalty);
    std::printf(
        "dt %.1e s: d gap/dH exact %.4f, time of impact %.4f, penalty %.4f; gap exact %.5f, toi "
        "%.5f, "
        "penalty %.5f\n",
        dt, ex.d_height, toi.d_height, pen.d_height, ex.gap, toi.gap, pen.gap);
    EXPECT_LT(std::fabs(toi.d_height - ex.d_height), std::fabs(pen.d_height - ex.d_height)) << dt;
  }
}

// ---- the packs ----

template <class R>
bool same_bits(const std::vector<R>& a, const std::vector<R>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(R)) == 0;
}

// boxes at heights that cross at different steps, or not at all, in one pack: each lane's
// loss and gradients are the bits of its run alone (B = 1, the scalar path)
template <class R>
void expect_packs_match_scalar() {
  const ExperimentConfig c = box_config(kImpactContact);
  const Articulated& m = model_of(c);
  const int T = 60, B = 2 * cpu_pack_width() + 1;
  RolloutShape sh;
  sh.steps = T;
  sh.checkpoint_every = 6;
  Batch<R> b;
  b.resize(B, m.nx(), m.nu(), m.np(), T);
  for (int r = 0; r < B; ++r) {
    const double s = std::sin(0.1 * r), co = std::cos(0.1 * r);
    const std::vector<double> x0 =
        state({0, 0, 0.1 + 0.004 * r, co, s, 0, 0}, {0.5, 0, -1.0 - 0.05 * r, 1.0, 0, 0.5});
    for (int i = 0; i < m.nx(); ++i) b.x0_of(r)[i] = R(x0[i]);
    for (int i = 0; i < m.np(); ++i) b.theta_of(r)[i] = R(c.theta[i]);
  }
  ASSERT_TRUE((use_packed_path<Articulated, R>(m, sh, B)));
  BatchResult<R> packed;
  cpu_run_batch<Articulated, R>(m, c.loss, sh, b, true, packed, 2);
  for (int r = 0; r < B; ++r) {
    Batch<R> one;
    one.resize(1, m.nx(), m.nu(), m.np(), T);
    std::copy(b.x0_of(r), b.x0_of(r) + m.nx(), one.x0.begin());
    std::copy(b.theta_of(r), b.theta_of(r) + m.np(), one.theta.begin());
    BatchResult<R> alone;
    cpu_run_batch<Articulated, R>(m, c.loss, sh, one, true, alone, 1);
    ASSERT_TRUE(std::isfinite(double(alone.loss[0])));
    EXPECT_TRUE(same_bits(std::vector<R>{packed.loss[r]}, alone.loss)) << "rollout " << r;
    EXPECT_EQ(packed.diag[r].contact_steps, alone.diag[0].contact_steps) << "rollout " << r;
    EXPECT_GT(alone.diag[0].contact_steps, 0) << "rollout " << r;
    auto slice = [&](const std::vector<R>& v, size_t n) {
      return std::vector<R>(v.begin() + size_t(r) * n, v.begin() + size_t(r + 1) * n);
    };
    EXPECT_TRUE(same_bits(slice(packed.grad_x0, m.nx()), alone.grad_x0)) << "rollout " << r;
    EXPECT_TRUE(same_bits(slice(packed.grad_theta, m.np()), alone.grad_theta)) << "rollout " << r;
    EXPECT_NE(alone.grad_theta[m.p_contact(kContactRestitution)], R(0))
        << "rollout " << r << " takes no impulse";
  }
}

TEST(TimeOfImpact, PacksGiveEachRolloutItsScalarBitsFloat64) {
  expect_packs_match_scalar<double>();
}
TEST(TimeOfImpact, PacksGiveEachRolloutItsScalarBitsFloat32) { expect_packs_match_scalar<float>(); }

// ---- configs/ball_bounce.json ----

// the shipped recording (examples/legged/record_box.py: μ = 0.4, e = 0.7, σ = 1e-4, euler at
// dt/4) from both of the config's starts (μ 0.75 and 0.73, e 0.59 and 0.63), the check off: each
// start lands within 0.01 of μ and of e (what is left is the step's error, dt against dt/4: the
// fit is below the loss at the truth, 264)
TEST(BallBounce, RunRecoversFrictionAndRestitution) {
  EXPECT_EQ(model_of(load_config(std::string(STEER_SOURCE_DIR) + "/configs/ball_bounce.json"))
                .ground.impact,
            1);
  const nlohmann::json res = run_recorded_fit("ball_bounce", "ball_bounce_recorded.csv");
  ASSERT_EQ(res["rollouts"].size(), 2u) << res.dump().substr(0, 2000);
  for (const nlohmann::json& ro : res["rollouts"]) {
    const nlohmann::json& v = ro["variables"];
    EXPECT_NEAR(v["theta.contact.friction"]["final"].get<double>(), 0.4, 0.01);
    EXPECT_NEAR(v["theta.contact.restitution"]["final"].get<double>(), 0.7, 0.01);
    EXPECT_LT(ro["loss_final"].get<double>(), 100.0);
  }
}

// ---- the keys ----

TEST(TimeOfImpact, RefusalsNameTheKey) {
  auto bad = [](nlohmann::json contact, const std::vector<std::string>& needles,
                const char* integrator = "euler", bool points = true) {
    std::ifstream in(std::string(STEER_SOURCE_DIR) + "/configs/box_slide.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j["model"]["contact"] = contact;
    j["model"]["integrator"] = integrator;
    if (!points) j["model"].erase("contacts");
    j.erase("variables");
    j.erase("batch");
    j.erase("optimizer");
    j["loss"] = nlohmann::json::parse(R"({"terminal": [{"state": "root.p.x", "target": 0}]})");
    expect_config_error(j, needles);
  };
  bad({{"impact", "time_of_impact"}}, {"model.contact.restitution", "required"});
  bad({{"impact", "time_of_impact"}, {"restitution", 0.5}}, {"model.contact.impact", "rk4"}, "rk4");
  bad({{"impact", "time_of_impact"}, {"restitution", 0.5}},
      {"model.contact.impact", "model.contacts"}, "euler", false);
  bad({{"impact", "toi"}, {"restitution", 0.5}}, {"model.contact.impact", "time_of_impact"});
  bad({{"impact", "time_of_impact"}, {"restitution", 0.5}, {"impact_sweeps", 0}},
      {"model.contact.impact_sweeps", "4"});
  bad({{"impact", "time_of_impact"}, {"restitution", 0.5}, {"impact_sweeps", 5}},
      {"model.contact.impact_sweeps", "4"});
  bad({{"impact_sweeps", 2}}, {"model.contact.impact_sweeps", "time_of_impact"});
  bad({{"impact_speed", 0.2}}, {"model.contact.impact_speed", "time_of_impact"});
  bad({{"impact", "time_of_impact"}, {"restitution", 0.5}, {"impact_speed", 0}},
      {"model.contact.impact_speed", "(0"});
  // with the impact, restitution is the impulses' and contact.damping stays the normal law's
  const ExperimentConfig c = box_config(kImpactContact);
  EXPECT_EQ(model_of(c).ground.impact, 1);
  EXPECT_EQ(model_of(c).ground.restitution, 0);
  EXPECT_EQ(c.theta[model_of(c).p_global(Articulated::kContactDamping)], 5.0);
  EXPECT_EQ(c.theta[model_of(c).p_contact(kContactRestitution)], 0.4);
}

}  // namespace
}  // namespace steer::testing
