// model.morphology (src/models/articulated/morphology.h): geom sizes and body scales as design
// slots the runner maps onto the bodies' inertial slots and the ground points' slots, and the
// points' centres and radii as θ slots the step reads (contact.h's ground_point). In float64:
//   - the mass properties of a sphere and a capsule against an independent quadrature of the
//     solid (disks along the axis, composite Simpson, 4000 intervals): within 1e-10 relative;
//   - the map at the nominal design leaves θ's bits; the map's adjoint against centred FD of
//     the map (1e-8 relative);
//   - the gradient of a two-link leg whose capsule thigh and sphere foot touch the ground
//     (soft contact, kicked): the runner's hand adjoint against the dual-number reference
//     (1e-10 relative) and centred FD (1e-6 relative), for every design slot, point slot and a
//     body's mass;
//   - physics: a single body's motion under gravity does not change when its mass and inertia
//     are scaled together, so ∂q(T)/∂σ = 0 (to 1e-12 of ∂q(T)/∂m's scale), where its mass
//     alone does move it;
//   - the config: slot names and ranges, the effective model's geoms, refusals naming the key;
//   - variables.<name>.moves: a thigh's length variable that also moves its capsule's centre and
//     the shin below it (and a second variable moving the same centre: their moves add up);
//     the problem's gradient against centred FD of the problem (1e-6 relative), the slots it
//     moves in the simulated θ, refusals naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "models/articulated/articulated_setup.h"
#include "models/articulated/config_articulated.h"
#include "models/articulated/morphology.h"
#include "problem/batch_runner.h"
#include "problem/problem.h"

using namespace steer;

namespace {

constexpr double kPi = 3.14159265358979323846;

// mass, I across and I along the axis of the solid whose cross-section at height z ∈ [−a, a]
// is a disk of radius ρ(z), density 1: ∫ π ρ², ∫ π ρ² (ρ²/4 + z²), ∫ π ρ⁴ / 2 by Simpson
template <class Radius>
void solid_of_revolution(double a, const Radius& rho, double& m, double& ia, double& iz) {
  const int n = 4000;
  const double h = 2 * a / n;
  m = ia = iz = 0;
  for (int i = 0; i <= n; ++i) {
    const double z = -a + i * h, r = rho(z), w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    m += w * kPi * r * r;
    ia += w * kPi * r * r * (r * r / 4 + z * z);
    iz += w * kPi * r * r * r * r / 2;
  }
  m *= h / 3, ia *= h / 3, iz *= h / 3;
}

TEST(GeomSize, MassPropertiesMatchAQuadratureOfTheSolid) {
  for (double r : {0.03, 0.05, 0.2})
    for (double hl : {0.0, 0.1, 0.45}) {
      double m, ia, iz, qm, qa, qz;
      geom_mass_properties<double>(true, r, hl, 1.0, m, ia, iz);
      // the capsule: a cylinder of half-length hl by Simpson in z, and its half-ball caps by
      // Simpson in the angle (ρ = r cos φ, z = hl + r sin φ, dz = r cos φ dφ), where the
      // profile is smooth (in z its slope is infinite at the tips)
      const int n = 4000;
      const double dphi = (kPi / 2) / n;
      double cm = 0, ca = 0, cz = 0;
      for (int i = 0; i <= n; ++i) {
        const double phi = i * dphi, rho = r * std::cos(phi), z = hl + r * std::sin(phi);
        const double dz = r * std::cos(phi);  // dz/dφ
        const double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        cm += w * kPi * rho * rho * dz;
        ca += w * kPi * rho * rho * (rho * rho / 4 + z * z) * dz;
        cz += w * kPi * rho * rho * rho * rho / 2 * dz;
      }
      cm *= dphi / 3, ca *= dphi / 3, cz *= dphi / 3;
      qm = 2 * cm, qa = 2 * ca, qz = 2 * cz;  // both caps
      if (hl > 0) {
        double ym, ya, yz;
        solid_of_revolution(
            hl, [&](double) { return r; }, ym, ya, yz);
        qm += ym, qa += ya, qz += yz;
      }
      EXPECT_NEAR(m, qm, 1e-10 * qm) << r << " " << hl;
      EXPECT_NEAR(ia, qa, 1e-10 * qa) << r << " " << hl;
      EXPECT_NEAR(iz, qz, 1e-10 * qz) << r << " " << hl;
      if (hl == 0) {  // a capsule of no length is the sphere
        double sm, sa, sz;
        geom_mass_properties<double>(false, r, 0.0, 1.0, sm, sa, sz);
        EXPECT_NEAR(sm, m, 1e-14 * m);
        EXPECT_NEAR(sa, ia, 1e-14 * ia);
        EXPECT_NEAR(sz, iz, 1e-14 * iz);
      }
    }
}

// a two-link leg on a fixed hip 0.45 m above the ground, its thigh hanging so that the knee's
// end cap nearly touches and its shin lying along the ground on its foot: a capsule thigh (its
// end caps ground points) and a sphere foot on the shin, of densities 1000 and 800 kg/m³, soft
// contact
nlohmann::json leg_model() {
  return nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 9.81, "integrator": "euler", "morphology": true,
    "torque_limits": {"enabled": false},
    "bodies": [
      {"name": "thigh", "pos": [0, 0, 0.45], "mass": 3.5, "com": [0.01, 0, -0.2],
       "fullinertia": [0.05, 0.05, 0.004, 0.001, 0.002, 0], "joint": {"name": "hip", "axis": [0, 1, 0]}},
      {"name": "shin", "parent": "thigh", "pos": [0, 0, -0.4], "mass": 1.5, "com": [0, 0, -0.25],
       "fullinertia": [0.02, 0.02, 0.002, 0, 0, 0], "joint": {"name": "knee", "axis": [0, 1, 0]}}],
    "geoms": [
      {"name": "thigh_geom", "body": "thigh", "type": "capsule", "pos": [0, 0, -0.2],
       "axis": [0.2, 0, -1], "radius": 0.05, "half_length": 0.2, "density": 1000},
      {"name": "foot", "body": "shin", "type": "sphere", "pos": [0.02, 0, -0.4], "radius": 0.06,
       "density": 800}],
    "contacts": [
      {"name": "knee_cap", "body": "thigh", "pos": [0.0392, 0, -0.396], "radius": 0.05,
       "geom": "thigh_geom", "end": 1},
      {"name": "hip_cap", "body": "thigh", "pos": [-0.0392, 0, -0.004], "radius": 0.05,
       "geom": "thigh_geom", "end": -1},
      {"name": "foot", "body": "shin", "pos": [0.02, 0, -0.4], "radius": 0.06, "geom": "foot"}],
    "contact": {"stiffness": 1500, "damping": 40, "smoothing": 0.01, "slip_velocity": 0.2}
  })");
}

ExperimentConfig leg_config(int steps, const nlohmann::json& model = leg_model()) {
  return parse_config(
      {{"name", "leg"},
       {"model", model},
       {"simulation", {{"dt", 2e-3}, {"steps", steps}, {"precision", "float64"}}},
       {"initial_state", {{"q", {0.0, 1.57}}, {"v", {1.0, -1.0}}}},
       {"loss",
        {{"terminal",
          {{{"state", "hip.q"}, {"target", 0.5}}, {{"state", "knee.v"}, {"target", 0}}}},
         {"com_displacement", {{"axis", "x"}, {"weight", -1}}}}},
       {"validation", {{"enabled", false}}}});
}

TEST(GeomSize, MapKeepsBitsAtTheNominalDesignAndItsAdjointMatchesFd) {
  const ExperimentConfig c = leg_config(10);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  const ArticulatedLarge& a = s.large;
  ASSERT_TRUE(a.morphology);
  const int np = a.np();
  std::vector<double> out(static_cast<size_t>(np));
  morphology_map(s.morphology, a, c.theta.data(), out.data());
  for (int i = 0; i < np; ++i)
    EXPECT_EQ(out[size_t(i)], c.theta[size_t(i)]) << c.info.param_names[size_t(i)];
  // away from the nominal design: every design slot moved
  std::vector<double> th = c.theta;
  for (const char* n : {"thigh_geom.size.radius", "thigh_geom.size.half_length", "foot.size.radius",
                        "thigh.scale", "shin.scale"})
    th[size_t(c.info.param_index(n))] *= 1.13;
  std::vector<double> w(static_cast<size_t>(np));
  for (int i = 0; i < np; ++i) w[size_t(i)] = std::cos(0.7 * i + 0.2);
  std::vector<double> g(size_t(np), 0.0);
  morphology_adjoint(s.morphology, a, th.data(), w.data(), g.data());
  for (int j = 0; j < np; ++j) {
    const double e = 1e-6 * std::max(1.0, std::fabs(th[size_t(j)]));
    std::vector<double> tp = th, tm = th, op(static_cast<size_t>(np)), om(static_cast<size_t>(np));
    tp[size_t(j)] += e, tm[size_t(j)] -= e;
    morphology_map(s.morphology, a, tp.data(), op.data());
    morphology_map(s.morphology, a, tm.data(), om.data());
    double fd = 0;
    for (int i = 0; i < np; ++i) fd += w[size_t(i)] * (op[size_t(i)] - om[size_t(i)]) / (2 * e);
    EXPECT_NEAR(g[size_t(j)], fd, 1e-8 * std::max(1.0, std::fabs(fd)))
        << c.info.param_names[size_t(j)];
  }
}

// L and ∂L/∂θ of rollout 0 through the runner (its map included), by the hand adjoint or the
// dual-number reference
double run_leg(const ExperimentConfig& c, const std::vector<double>& theta, bool reference,
               std::vector<double>* grad) {
  std::unique_ptr<BatchRunner> r = make_runner(c, BackendKind::kCpu);
  Batch<double> b = build_batch(c);
  std::copy(theta.begin(), theta.end(), b.theta_of(0));
  RolloutShape sh = c.checkpoint_plan().shape;
  sh.reference_adjoint = reference;
  BatchResult<double> out;
  r->run(b, sh, grad != nullptr, out, 1);
  if (grad) *grad = std::vector<double>(out.grad_theta.begin(), out.grad_theta.begin() + b.np);
  return out.loss[0];
}

TEST(GeomSize, GradientMatchesTheDualReferenceAndFd) {
  const ExperimentConfig c = leg_config(150);
  std::vector<double> th = c.theta;
  th[size_t(c.info.param_index("thigh_geom.size.half_length"))] = 0.22;
  th[size_t(c.info.param_index("foot.size.radius"))] = 0.055;
  th[size_t(c.info.param_index("shin.scale"))] = 1.2;
  std::vector<double> hand, dual;
  run_leg(c, th, false, &hand);
  run_leg(c, th, true, &dual);
  int checked = 0;
  for (const char* n :
       {"thigh_geom.size.radius", "thigh_geom.size.half_length", "foot.size.radius", "thigh.scale",
        "shin.scale", "shin.mass", "knee_cap.center.x", "knee_cap.center.z", "foot.radius",
        "hip_cap.radius", "thigh.com.z", "shin.pos.z"}) {
    const int q = c.info.param_index(n);
    ASSERT_GE(q, 0) << n;
    const double e = 1e-6 * std::max(0.1, std::fabs(th[size_t(q)]));
    std::vector<double> tp = th, tm = th;
    tp[size_t(q)] += e, tm[size_t(q)] -= e;
    const double fd = (run_leg(c, tp, false, nullptr) - run_leg(c, tm, false, nullptr)) / (2 * e);
    const double h = hand[size_t(q)], d = dual[size_t(q)];
    EXPECT_NEAR(h, d, 1e-10 * std::max(1e-3, std::fabs(d))) << n;
    EXPECT_NEAR(h, fd, 1e-6 * std::max(1e-3, std::fabs(fd))) << n;
    std::printf("[ figures ] %-28s hand %+.10e  dual %+.10e  fd %+.10e\n", n, h, d, fd);
    checked += std::fabs(fd) > 1e-6;
  }
  EXPECT_GE(checked, 10);  // the contact is engaged: the design moves the loss
}

TEST(GeomSize, ScalingABodyKeepsItsFallUnderGravity) {
  // one body, a hinge off its centre of mass: q̈ = −m g d sin q / (I_c + m d²) does not change
  // when m and I_c are scaled together
  nlohmann::json model = nlohmann::json::parse(R"({
    "type": "articulated", "gravity": 9.81, "integrator": "rk4", "morphology": true,
    "torque_limits": {"enabled": false},
    "bodies": [{"name": "bar", "mass": 2.0, "com": [0.3, 0, 0.05],
                "fullinertia": [0.02, 0.03, 0.015, 0.002, -0.001, 0.0005],
                "joint": {"name": "swing", "axis": [0, 1, 0], "damping": 0, "armature": 0}}]
  })");
  const ExperimentConfig c =
      parse_config({{"name", "bar"},
                    {"model", model},
                    {"simulation", {{"dt", 1e-3}, {"steps", 800}, {"precision", "float64"}}},
                    {"initial_state", {{"q", {0.4}}, {"v", {0.0}}}},
                    {"loss", {{"terminal", {{{"state", "swing.q"}, {"target", 0}}}}}},
                    {"validation", {{"enabled", false}}}});
  std::vector<double> g;
  run_leg(c, c.theta, false, &g);
  const double gs = g[size_t(c.info.param_index("bar.scale"))];
  const double gm = g[size_t(c.info.param_index("bar.mass"))];
  std::printf("[ figures ] dL/d scale %.3g, dL/d mass %.6g\n", gs, gm);
  EXPECT_GT(std::fabs(gm), 1e-3);
  EXPECT_LT(std::fabs(gs), 1e-12 * std::max(1.0, std::fabs(gm) * 2.0));
}

TEST(GeomSize, SlotsEffectiveModelAndRefusals) {
  const ExperimentConfig c = leg_config(10);
  const ArticulatedSetup& s = c.model_state<ArticulatedSetup>();
  EXPECT_TRUE(s.large_tree);  // the morphology slots run on the large capacity
  const int h = c.info.param_index("thigh_geom.size.half_length");
  ASSERT_GE(h, 0);
  EXPECT_EQ(c.theta[size_t(h)], 0.2);
  EXPECT_EQ(c.info.param_units[size_t(h)], "m");
  EXPECT_EQ(c.theta[size_t(c.info.param_index("thigh.scale"))], 1.0);
  EXPECT_EQ(c.theta[size_t(c.info.param_index("knee_cap.center.z"))], -0.396);
  EXPECT_GE(c.info.param_index("foot.radius"), 0);
  EXPECT_EQ(c.info.param_groups.at("geom_half_length").size(), 1u);
  EXPECT_EQ(c.info.param_groups.at("scale").size(), 2u);
  const nlohmann::json e = articulated_model_json(c);
  ASSERT_TRUE(e.contains("geoms"));
  EXPECT_EQ(e["geoms"][0]["points"].size(), 2u);
  EXPECT_EQ(e["geoms"][0]["mass_follows_size"], true);
  // without model.morphology: no slots, the geoms still described
  nlohmann::json off = leg_model();
  off["morphology"] = false;
  const ExperimentConfig d = leg_config(10, off);
  EXPECT_LT(d.info.param_index("thigh.scale"), 0);
  EXPECT_FALSE(d.model_state<ArticulatedSetup>().large_tree);
  auto refused = [](nlohmann::json model, const std::string& key) {
    try {
      leg_config(10, model);
      ADD_FAILURE() << "accepted: " << key;
    } catch (const ConfigError& err) {
      EXPECT_NE(std::string(err.what()).find(key), std::string::npos) << err.what();
    }
  };
  nlohmann::json bad = leg_model();
  bad["contacts"][2]["geom"] = "nothing";
  refused(bad, "model.contacts[2].geom");
  bad = leg_model();
  bad["contacts"][2]["end"] = 1;
  refused(bad, "model.contacts[2].end");
  bad = leg_model();
  bad["contacts"][2]["geom"] = "thigh_geom";
  refused(bad, "model.contacts[2].geom");  // a point in another body than its geom
  bad = leg_model();
  bad["geoms"][0]["radius"] = -1;
  refused(bad, "model.geoms[0].radius");
  bad = leg_model();
  bad["geoms"][1]["name"] = "thigh_geom";
  refused(bad, "model.geoms[1].name");
  bad = leg_model();
  bad["geoms"][0]["axis"] = {0, 0, 0};
  refused(bad, "model.geoms[0].axis");
}

TEST(GeomSize, MovesTieSlotsToAVariable) {
  nlohmann::json j = {
      {"name", "leg"},
      {"model", leg_model()},
      {"simulation", {{"dt", 2e-3}, {"steps", 150}, {"precision", "float64"}}},
      {"batch", {{"size", 2}, {"sweep", {{"theta.shin.mass", {1.5, 1.7}}}}}},
      {"initial_state", {{"q", {0.0, 1.57}}, {"v", {1.0, -1.0}}}},
      {"loss",
       {{"terminal", {{{"state", "hip.q"}, {"target", 0.5}}, {{"state", "knee.v"}, {"target", 0}}}},
        {"com_displacement", {{"axis", "x"}, {"weight", -1}}}}},
      {"variables",
       {{"theta.thigh_geom.size.half_length",
         {{"lower", 0.15},
          {"upper", 0.3},
          {"moves", {{"theta.thigh_geom.offset.z", -1.0}, {"theta.shin.pos.z", -2.0}}}}},
        {"theta.foot.size.radius",
         {{"lower", 0.03}, {"upper", 0.1}, {"moves", {{"theta.thigh_geom.offset.z", 0.5}}}}}}},
      {"validation", {{"enabled", false}}}};
  const ExperimentConfig c = parse_config(j);
  ASSERT_EQ(c.variables.size(), 2u);
  // (the variables in the order of their names: the foot's radius, then the thigh's length)
  ASSERT_EQ(c.variables[1].name, "theta.thigh_geom.size.half_length");
  EXPECT_EQ(c.variables[1].moves.size(), 2u);
  std::unique_ptr<Problem> p = make_problem(c, BackendKind::kCpu, 1);
  const int nv = p->num_vars();
  std::vector<double> v = p->initial();
  for (int b = 0; b < 2; ++b) v[size_t(b * nv)] = 0.065, v[size_t(b * nv + 1)] = 0.24;
  // the simulated θ: the moved slots follow both variables, from each rollout's own values
  const std::vector<double> th = p->parameters(v);
  const int np = c.info.np();
  const int oz = c.info.param_index("thigh_geom.offset.z"), sz = c.info.param_index("shin.pos.z");
  EXPECT_NEAR(th[size_t(oz)], -0.2 - 1.0 * 0.04 + 0.5 * 0.005, 1e-15);
  EXPECT_NEAR(th[size_t(sz)], -0.4 - 2.0 * 0.04, 1e-15);
  EXPECT_NEAR(th[size_t(np + sz)], -0.4 - 2.0 * 0.04, 1e-15);
  Evaluation ev;
  p->evaluate(v, true, ev);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < nv; ++i) {
      const double e = 1e-7;
      std::vector<double> vp = v, vm = v;
      vp[size_t(b * nv + i)] += e, vm[size_t(b * nv + i)] -= e;
      Evaluation ep, em;
      p->evaluate(vp, false, ep);
      p->evaluate(vm, false, em);
      const double fd = (ep.loss[size_t(b)] - em.loss[size_t(b)]) / (2 * e);
      const double g = ev.grad[size_t(b * nv + i)];
      EXPECT_NEAR(g, fd, 1e-6 * std::max(1e-2, std::fabs(fd))) << p->var_names()[size_t(i)];
      std::printf("[ figures ] rollout %d %-34s adjoint %+.10e  fd %+.10e\n", b,
                  p->var_names()[size_t(i)].c_str(), g, fd);
    }
  auto refused = [&](nlohmann::json vars, const std::string& key) {
    nlohmann::json k = j;
    k["variables"] = vars;
    try {
      parse_config(k);
      ADD_FAILURE() << "accepted: " << key;
    } catch (const ConfigError& err) {
      EXPECT_NE(std::string(err.what()).find(key), std::string::npos) << err.what();
    }
  };
  refused({{"theta.shin.mass", {{"lower", 1}, {"moves", {{"theta.shin.mass", 1.0}}}}}},
          "variables.theta.shin.mass.moves.theta.shin.mass");
  refused({{"theta.shin.mass", {{"lower", 1}, {"moves", {{"theta.nothing", 1.0}}}}}},
          "variables.theta.shin.mass.moves.theta.nothing");
  refused({{"theta.scale", {{"lower", 0.5}, {"moves", {{"theta.shin.pos.z", 1.0}}}}}},
          "variables.theta.scale.moves");
  refused({{"x0.hip.q", {{"moves", {{"theta.shin.pos.z", 1.0}}}}}}, "variables.x0.hip.q.moves");
  refused({{"theta.shin.mass", {{"lower", 1}, {"moves", {{"theta.shin.pos.z", 1.0}}}}},
           {"theta.shin.pos.z", nlohmann::json::object()}},
          "variables.theta.shin.mass.moves");
}

}  // namespace
