// Fem's data and layout: sizes, the θ and state slot offsets, the mesh accessors, each
// element's material from its slots, the element gather, and the declarations of the step and
// its adjoint (fem/step.h). fem/element.h and fem/material.h hold the element's equations.
//
// state x = (positions [m] (3N), velocities [m/s] (3N)); vertex i's position at 3i, its velocity
//           at 3N + 3i; axis 1 (y) is vertical (as the mass-spring model's, and warp.sim's).
// control u: one level per actuator [1] (an element's active stress is u_a s_e ρ̂_eᵖ, element.h).
// θ: per element e (kElementParams each): modulus₁, modulus₂, density ρ_e [kg/m³], damping,
//    fill ρ̂_e ∈ (0, 1] and actuation strength s_e [Pa];
//    (modulus₁, modulus₂) = Young's modulus E [Pa] and Poisson's ratio ν [1], or with
//    lame_parameters the Lamé pair (μ_l, λ_l) [Pa] (neo_hookean_warp: warp.sim's k_mu,
//    k_lambda); then the globals (enum Global).
// The fill is a SIMP material density (Bendsøe 1989): the element's moduli and active stress are
// ρ̂ᵖ times its own (p = simp_penalty) and its mass ρ̂ times, so a field of fills is a
// differentiable layout.
#pragma once

#include <cmath>

#include "steer/core.h"
#include "steer/model_contract.h"
#include "steer/models/fem/contact.h"
#include "steer/models/fem/element.h"
#include "steer/models/fem/membrane.h"

namespace steer {

template <class S>
struct FemImplicitWork;

struct Fem {
  enum Global {
    kGravity = 0,        // g [m/s²], along −y
    kMassDamping,        // α [1/s]: the mass-proportional Rayleigh term, a_i −= α v_i
    kGroundHeight,       // y_g [m]
    kGroundStiffness,    // k_g [N/m] per surface vertex
    kGroundDamping,      // d_g [N·s/m] per surface vertex
    kGroundSmoothing,    // w_g [m]
    kFriction,           // μ [1]
    kFrictionSmoothing,  // v_s [m/s]
    kMembraneMu,         // k_μ [Pa·m] of the surface membrane (fem/membrane.h)
    kMembraneLambda,     // k_λ [Pa·m]
    kMembraneDamping,    // k_d [Pa·m·s]
    kNumGlobals
  };
  enum ElementParam {
    kModulus1 = 0,
    kModulus2,
    kDensity,
    kDamping,
    kFill,
    kActuation,
    kElementParams
  };
  enum Law {
    kStableNeoHookean = kFemStableNeoHookean,
    kNeoHookeanWarp = kFemNeoHookeanWarp,
    kCorotated = kFemCorotated
  };
  static constexpr int kMaxState = 0;  // sized at run time: host-only reference adjoint
  static constexpr int kMaxControl = 0;
  static constexpr int kMaxParam = 0;
  // the adjoint keeps every vertex's force and mass on the stack (4 scalars each; step.h)
  static constexpr int kMaxVertices = 4096;
  // the implicit step's capacities (fem/implicit.h): vertices, unknowns, Hessian band entries
  static constexpr int kImplicitVertices = 256;
  static constexpr int kImplicitDofs = 3 * kImplicitVertices;
  static constexpr int kImplicitBand = 16384;
  static constexpr int kFlagPinned = 1;

  int n_vertices = 0;
  int n_elements = 0;
  int n_surface = 0;  // vertices on the boundary, the ones that touch the ground
  int n_actuators = 0;
  double simp_penalty = 3;  // p of the fill's modulus factor ρ̂ᵖ
  double dt = 1e-3;         // [s]
  int law = kStableNeoHookean;
  bool lame_parameters = false;  // θ's moduli are (μ_l, λ_l), not (E, ν)
  bool ground = true;
  // the contact law of the ground and the obstacles (fem/contact.h), and the radius of the
  // sphere each surface vertex is for contact [m]
  int contact_law = FemContactLaw<double>::kSoftplus;
  bool contact_approach_only = false;
  double vertex_radius = 0;
  // static obstacles besides the ground (planes, boxes; fem/contact.h), their records after the
  // elements' rest data
  int n_obstacles = 0;
  static constexpr int kMaxObstacles = 16;
  // every vertex's mass [kg] where > 0 (warp.sim's soft grids: uniform particle masses), in
  // place of the lumped shares ρ̂_e ρ_e V_e / 4 (θ's densities then weigh nothing)
  double vertex_mass = 0;
  // warp.sim's surface membrane (fem/membrane.h): a triangle on every boundary face, or none
  int n_triangles = 0;
  static constexpr int kTriangleRestStride = 5;  // D_m row-major (4) [1/m], rest area [m²]
  // the time integrator: symplectic Euler (step.h), or backward Euler in the velocities solved by
  // Newton's method on the step's incremental potential (implicit.h); bit i of a compiled-
  // integrators mask (model_contract.h) is integrator i
  enum Integrator { kSymplecticEuler = 0, kBackwardEuler = 1 };
  int integrator = kSymplecticEuler;
  int newton_iterations = 40;  // the most Newton iterations of one implicit step (more: NaN)
  // the mesh, owned elsewhere (a runner's copy; FemSetup):
  //   topo: [0, 4E) the elements' vertices, [4E, 5E) each element's actuator (−1: none),
  //         [5E, 5E + N) vertex flags (kFlagPinned), [5E + N, 5E + N + NS) the surface
  //         vertices, [5E + N + NS, … + A) each actuator's kind (ActiveStress::Kind), then
  //         three vertices per membrane triangle
  //   rest: per element kRestStride doubles: B = D_m⁻¹ row-major (9) [1/m], the rest volume V
  //         [m³] and the unit fibre d (3; a muscle's direction in the rest frame); then
  //         kFemObstacleStride doubles per obstacle (fem/contact.h), then
  //         kTriangleRestStride per membrane triangle
  const int* topo = nullptr;
  const double* rest = nullptr;

  STEER_HD int nx() const { return 6 * n_vertices; }
  STEER_HD int nu() const { return n_actuators; }
  STEER_HD int np() const { return kElementParams * n_elements + kNumGlobals; }
  STEER_HD int topology_size() const {
    return 5 * n_elements + n_vertices + n_surface + n_actuators + 3 * n_triangles;
  }
  static constexpr int kRestStride = 13;

  STEER_HD int p_element(int e, int q) const { return kElementParams * e + q; }
  STEER_HD int p_global(int g) const { return kElementParams * n_elements + g; }
  STEER_HD int x_pos(int i) const { return 3 * i; }
  STEER_HD int x_vel(int i) const { return 3 * (n_vertices + i); }
  STEER_HD int vertex(int e, int a) const { return topo[4 * e + a]; }
  STEER_HD int element_actuator(int e) const { return topo[4 * n_elements + e]; }
  STEER_HD bool pinned(int i) const { return (topo[5 * n_elements + i] & kFlagPinned) != 0; }
  STEER_HD int surface_vertex(int s) const { return topo[5 * n_elements + n_vertices + s]; }
  STEER_HD int actuator_kind(int a) const {
    return topo[5 * n_elements + n_vertices + n_surface + a];
  }
  template <class S>
  STEER_HD Mat3<S> rest_inverse(int e) const {
    Mat3<S> B;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) B.a[r][c] = S(rest[kRestStride * e + 3 * r + c]);
    return B;
  }
  template <class S>
  STEER_HD S rest_volume(int e) const {
    return S(rest[kRestStride * e + 9]);
  }
  STEER_HD const double* obstacle(int j) const {
    return rest + kRestStride * n_elements + kFemObstacleStride * j;
  }
  STEER_HD int triangle_vertex(int t, int a) const {
    return topo[5 * n_elements + n_vertices + n_surface + n_actuators + 3 * t + a];
  }
  STEER_HD const double* triangle_rest(int t) const {
    return rest + kRestStride * n_elements + kFemObstacleStride * n_obstacles +
           kTriangleRestStride * t;
  }
  template <class S, class PIn>
  STEER_HD MembraneMaterial<S> membrane_material(const PIn& p) const {
    return {S(p[p_global(kMembraneMu)]), S(p[p_global(kMembraneLambda)]),
            S(p[p_global(kMembraneDamping)])};
  }
  template <class S, class XIn>
  STEER_HD TriNodes<S> gather_triangle(const XIn& x, int t) const {
    TriNodes<S> n;
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 3; ++c) {
        n.x[a][c] = S(x[x_pos(triangle_vertex(t, a)) + c]);
        n.v[a][c] = S(x[x_vel(triangle_vertex(t, a)) + c]);
      }
    return n;
  }
  // the bodies a surface vertex can touch: the ground (if on), then the obstacles
  STEER_HD int n_contact_bodies() const { return (ground ? 1 : 0) + n_obstacles; }

  // the element's active stress for controls u (passive: kind kPassive)
  template <class S, class UIn, class PIn>
  STEER_HD ActiveStress<S> element_active(const UIn& u, const PIn& p, int e) const {
    ActiveStress<S> act;
    const int a = element_actuator(e);
    if (a < 0) return act;
    act.kind = actuator_kind(a);
    // the fill scales the active stress as it scales the moduli: where there is no material
    // nothing pulls
    act.level = S(u[a]) * S(p[p_element(e, kActuation)]) * fill_factor(S(p[p_element(e, kFill)]));
    for (int c = 0; c < 3; ++c) act.fibre[c] = S(rest[kRestStride * e + 10 + c]);
    return act;
  }
  // the level's cotangent ā into ū_a, s̄_e and ρ̂̄_e (level = u_a s_e ρ̂ᵖ)
  template <class S, class UIn, class PIn, class UAdj, class PAdj>
  STEER_HD void adj_element_active(const UIn& u, const PIn& p, int e, const S& level_bar,
                                   UAdj& adj_u, PAdj& adj_p) const {
    const int a = element_actuator(e);
    if (a < 0) return;
    using std::pow;
    const S fill = S(p[p_element(e, kFill)]);
    const S w = fill_factor(fill);
    const S dw = simp_penalty == 1 ? S(1) : S(simp_penalty) * S(pow(fill, simp_penalty - 1));
    const S s = S(p[p_element(e, kActuation)]), ua = S(u[a]);
    adj_u[a] += level_bar * s * w;
    adj_p[p_element(e, kActuation)] += level_bar * ua * w;
    adj_p[p_element(e, kFill)] += level_bar * ua * s * dw;
  }

  // the fill's modulus factor ρ̂ᵖ
  template <class S>
  STEER_HD S fill_factor(const S& fill) const {
    using std::pow;
    return simp_penalty == 1 ? fill : S(pow(fill, simp_penalty));
  }
  // the element's material constants from its θ slots (fem/material.h states the mapping)
  template <class S, class PIn>
  STEER_HD FemMaterial<S> element_material(const PIn& p, int e) const {
    FemMaterial<S> m;
    const S a = S(p[p_element(e, kModulus1)]), b = S(p[p_element(e, kModulus2)]);
    const S w = fill_factor(S(p[p_element(e, kFill)]));
    if (lame_parameters) {
      m.mu_l = w * a;
      m.lambda_l = w * b;
    } else {  // (E, ν)
      m.mu_l = w * a / (S(2) * (S(1) + b));
      m.lambda_l = w * a * b / ((S(1) + b) * (S(1) - S(2) * b));
    }
    if (law == kStableNeoHookean) {
      m.mu = S(4) / S(3) * m.mu_l;
      m.lambda = m.lambda_l + S(5) / S(6) * m.mu_l;
    } else {  // warp.sim's constants as given; corotated's are the Lamé pair itself
      m.mu = m.mu_l;
      m.lambda = m.lambda_l;
    }
    m.damping = S(p[p_element(e, kDamping)]);
    return m;
  }
  // the transpose of element_material: the constants' cotangents m̄ into the element's θ̄ slots
  template <class S, class PIn, class PAdj>
  STEER_HD void adj_element_material(const PIn& p, int e, FemMaterial<S> mbar, PAdj& adj_p) const {
    if (law == kStableNeoHookean) {
      mbar.mu_l += S(4) / S(3) * mbar.mu + S(5) / S(6) * mbar.lambda;
      mbar.lambda_l += mbar.lambda;
    } else {
      mbar.mu_l += mbar.mu;
      mbar.lambda_l += mbar.lambda;
    }
    adj_p[p_element(e, kDamping)] += mbar.damping;
    // (μ_l, λ_l) = w (μ₀, λ₀), w = ρ̂ᵖ: w̄ = μ̄_l μ₀ + λ̄_l λ₀, ρ̂̄ = w̄ p ρ̂ᵖ⁻¹
    using std::pow;
    const S fill = S(p[p_element(e, kFill)]);
    const S w = fill_factor(fill);
    const S dw = simp_penalty == 1 ? S(1) : S(simp_penalty) * S(pow(fill, simp_penalty - 1));
    const S a = S(p[p_element(e, kModulus1)]), b = S(p[p_element(e, kModulus2)]);
    if (lame_parameters) {
      adj_p[p_element(e, kFill)] += (mbar.mu_l * a + mbar.lambda_l * b) * dw;
      adj_p[p_element(e, kModulus1)] += w * mbar.mu_l;
      adj_p[p_element(e, kModulus2)] += w * mbar.lambda_l;
      return;
    }
    const S E = a, nu = b;
    const S onu = S(1) + nu, q = (S(1) + nu) * (S(1) - S(2) * nu);
    adj_p[p_element(e, kFill)] += (mbar.mu_l * E / (S(2) * onu) + mbar.lambda_l * E * nu / q) * dw;
    // μ₀ = E / (2(1 + ν)), λ₀ = E ν / ((1 + ν)(1 − 2ν)); ∂λ₀/∂ν = E (1 + 2ν²) / ((1 + ν)(1 − 2ν))²
    adj_p[p_element(e, kModulus1)] += w * (mbar.mu_l / (S(2) * onu) + mbar.lambda_l * nu / q);
    adj_p[p_element(e, kModulus2)] += w * (-mbar.mu_l * E / (S(2) * onu * onu) +
                                           mbar.lambda_l * E * (S(1) + S(2) * nu * nu) / (q * q));
  }

  // the element's four vertices' positions and velocities from state x
  template <class S, class XIn>
  STEER_HD TetNodes<S> gather(const XIn& x, int e) const {
    TetNodes<S> n;
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      for (int c = 0; c < 3; ++c) {
        n.x[a][c] = S(x[x_pos(i) + c]);
        n.v[a][c] = S(x[x_vel(i) + c]);
      }
    }
    return n;
  }
  // the lumped mass an element gives each of its vertices: ρ̂_e ρ_e V_e / 4 [kg]
  template <class S, class PIn>
  STEER_HD S vertex_mass_share(const PIn& p, int e) const {
    return S(p[p_element(e, kFill)]) * S(p[p_element(e, kDensity)]) * rest_volume<S>(e) / S(4);
  }
  // the share's cotangent into ρ̄_e and ρ̂̄_e
  template <class S, class PIn, class PAdj>
  STEER_HD void adj_vertex_mass_share(const PIn& p, int e, const S& share_bar, PAdj& adj_p) const {
    const S v4 = rest_volume<S>(e) / S(4);
    adj_p[p_element(e, kDensity)] += share_bar * S(p[p_element(e, kFill)]) * v4;
    adj_p[p_element(e, kFill)] += share_bar * S(p[p_element(e, kDensity)]) * v4;
  }

  // every vertex's mass m_i [kg] as add(i, share): the lumped shares, element by element, or
  // vertex_mass once per vertex where that is set
  template <class S, class PIn, class Add>
  STEER_HD void for_each_vertex_mass(const PIn& p, Add add) const {
    if (vertex_mass > 0) {
      for (int i = 0; i < n_vertices; ++i) add(i, S(vertex_mass));
      return;
    }
    for (int e = 0; e < n_elements; ++e) {
      const S share = vertex_mass_share<S>(p, e);
      for (int a = 0; a < 4; ++a) add(vertex(e, a), share);
    }
  }
  // the masses' cotangents m̄_i = mbar_of(i) into θ̄ (nothing for fixed vertex masses)
  template <class S, class PIn, class MBar, class PAdj>
  STEER_HD void adj_for_each_vertex_mass(const PIn& p, MBar mbar_of, PAdj& adj_p) const {
    if (vertex_mass > 0) return;
    for (int e = 0; e < n_elements; ++e) {
      S sum = S(0);
      for (int a = 0; a < 4; ++a) sum += mbar_of(vertex(e, a));
      adj_vertex_mass_share(p, e, sum, adj_p);
    }
  }

  // one step (symplectic Euler; step.h) and its vector-Jacobian product
  // (no step tape: the tape argument, which the controller passes on, is always NoTape)
  template <class S, class XIn, class UIn, class PIn, class XOut, class Tape = NoTape>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}, Tape tape = nullptr) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj, class Tape = NoTape>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{},
                         Tape tape = nullptr) const;

  // the implicit step (implicit.h)
  STEER_HD int implicit_band() const;
  STEER_HD int implicit_fits() const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD S implicit_energy(const XIn& x, const UIn& u, const PIn& p, const FemImplicitWork<S>& W,
                             const S* w, S* grad) const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD bool implicit_hessian(const XIn& x, const UIn& u, const PIn& p, FemImplicitWork<S>& W,
                                 const S* w, const S& shift) const;
  template <class S, class XIn, class UIn, class PIn>
  STEER_HD void implicit_solve(const XIn& x, const UIn& u, const PIn& p,
                               FemImplicitWork<S>& W) const;
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void implicit_step(const XIn& x, const UIn& u, const PIn& p, XOut& xn) const;
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_implicit_step(const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                                  UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn) const;

  // every element's and the ground's forces and mass shares at state y, and the transpose
  // (step.h)
  template <class S, class YIn, class UIn, class PIn, class AddForce, class AddMass>
  STEER_HD void for_each_force(const YIn& y, const UIn& u, const PIn& p, AddForce add_force,
                               AddMass add_mass) const;
  template <class S, class YIn, class UIn, class PIn, class FBar, class MBar, class YAdj,
            class UAdj, class PAdj>
  STEER_HD void adj_for_each_force(const YIn& y, const UIn& u, const PIn& p, FBar fbar_of,
                                   MBar mbar_of, YAdj& adj_y, UAdj& adj_u, PAdj& adj_p) const;

  // contact body b's (0: the ground if on, then the obstacles) depth and normal at surface
  // vertex i, its force on the vertex (out [3]), and the force's adjoint for f̄ [3]
  template <class S, class PIn>
  STEER_HD FemContactLaw<S> contact_params(const PIn& p) const;
  template <class S, class XIn, class PIn>
  STEER_HD FemContactFrame<S> contact_frame(int b, int i, const XIn& x, const PIn& p) const;
  template <class S, class XIn, class PIn>
  STEER_HD void contact_force(int b, int i, const XIn& x, const PIn& p, S* out) const;
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_contact_force(int b, int i, const XIn& x, const PIn& p, const S* fbar,
                                  XAdj& adj_x, PAdj& adj_p) const;

  // Statics (host; the analytic checks and the implicit step): the elastic plus gravity forces
  // f(x) = −∂(Σ V Ψ + Σ m g y)/∂x at positions xp [3N] (no velocities, damping or ground), and
  // their differential df = −K dx; pinned vertices get 0 in both.
  template <class S, class PIn>
  void static_forces(const S* xp, const PIn& p, S* f) const;
  template <class S, class PIn>
  void static_force_differential(const S* xp, const PIn& p, const S* dx, S* df) const;

  // ---- diagnostics (step.h) ----
  // contact c is surface vertex c % n_surface against body c / n_surface
  STEER_HD int num_contacts() const { return n_contact_bodies() * n_surface; }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn& x, const PIn& p, int c) const {
    return value_of(contact_frame<S>(c / n_surface, surface_vertex(c % n_surface), x, p).d) > 0;
  }
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int axis) const;
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const;
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const;
  // kinetic + stored elastic + gravitational (m g y) [J]
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const;
  // no damping of either kind and no ground: the energy is conserved up to the step's drift
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    if (n_contact_bodies() > 0 || S(p[p_global(kMassDamping)]) != S(0)) return false;
    for (int e = 0; e < n_elements; ++e)
      if (S(p[p_element(e, kDamping)]) != S(0)) return false;
    return n_triangles == 0 || S(p[p_global(kMembraneDamping)]) == S(0);
  }
};

}  // namespace steer
