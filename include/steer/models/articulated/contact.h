// Articulated: the contacts against the plane z = height, and their adjoint.
//   the fingertip (model.tip, contact.enabled): d = height − z_tip,  z = d/w,
//     f_z = k w softplus(z) − d_c σ(z) ż_tip,  τ_c = J_tip,zᵀ f_z;
//   the ground points (model.contacts, GroundContacts): a sphere of radius r centred at c
//     touches at x_c = c − r ẑ, depth d = height − x_c,z, with the force
//     f = (f_t, f_n) of contact_law.h at x_c and τ_c = J(x_c)ᵀ f;
//   the contact pairs (model.pairs): two geoms on different bodies (or one on the world): spheres
//     and capsules (segments with a radius), planes and boxes, with the depth d, the normal n
//     (from side 1 to side 0) and the contact point x_c (between the two surfaces) of
//     pair_geometry.h. The relative velocity u = v₀(x_c) − v₁(x_c) gives the separating speed
//     ż = u · n and the slip u_t = u − ż n; the normal law of contact_law.h (the ground points'
//     law and θ slots) gives f_n(d, ż), friction f_t = −μ_c N u_t / sqrt(|u_t|² + v_s²) (the same
//     smoothed Coulomb law, in 3D; μ_c = the pair's friction scale × θ[contact.friction]),
//     F = f_n n + f_t on side 0 and −F on side 1:
//     τ_c = J₀(x_c)ᵀ F − J₁(x_c)ᵀ F. Where the geometry switches (pair_geometry.h) the validator's
//     contact_mode_switch watches each pair. The adjoint of a model with pairs
//     is the dual-number one (adj_step), which is why only the CPU's scalar capacity has pairs.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/contact_law.h"
#include "steer/models/articulated/pair_geometry.h"

namespace steer {

// the contacts the validator's contact_mode_switch watches: the tip (when enabled), then the
// ground points in their order, then the contact pairs
template <int NB, int ND, int NS, int NP, int NC>
inline STEER_HD int ArticulatedCap<NB, ND, NS, NP, NC>::num_contacts() const {
  return (contact ? 1 : 0) + ground.n_points + pair_count();
}

// the normal laws' parameters from θ
template <class Model, class S, class PIn>
STEER_HD NormalLawParams<S> ground_law_params(const Model& m, const PIn& p) {
  NormalLawParams<S> q;
  q.k = S(p[m.p_global(Model::kContactStiffness)]);
  q.dc = S(p[m.p_global(Model::kContactDamping)]);
  q.w = S(p[m.p_global(Model::kContactSmoothing)]);
  q.d0 = S(p[m.p_contact(kContactImpD0)]);
  q.d1 = S(p[m.p_contact(kContactImpDWidth)]);
  q.width = S(p[m.p_contact(kContactImpWidth)]);
  q.tc = S(p[m.p_contact(kContactRefTimeconst)]);
  q.zeta = S(p[m.p_contact(kContactRefDampratio)]);
  q.mass = S(p[m.p_contact(kContactImpMass)]);
  if (m.ground.restitution)
    q.dc = restitution_damping(S(p[m.p_contact(kContactRestitution)]), q.k, q.mass);
  return q;
}

// ground point c's contact point with model.morphology (large capacity): its centre pos_c in
// the body frame and its radius r are θ's p_ground slots, x_c = p_b + R_b (pos_c − j_b) − r ẑ
// (j_b the body's joint position, the frame's origin); kept apart from ground_point so that the
// capacities without morphology compile the constants' path alone
template <class Model, class S, class PIn>
STEER_HD void ground_point_in_theta(const Model& m, const typename Model::template Kin<S>& K,
                                    const PIn& p, int c, S* xc) {
  const int b = m.ground.body[c];
  S r[3], o[3];
  for (int i = 0; i < 3; ++i) r[i] = S(p[m.p_ground(c, i)]) - S(m.joint_pos[b][i]);
  Model::rotate(K.R[b], r, o);
  for (int i = 0; i < 3; ++i) xc[i] = K.P[b][i] + o[i];
  xc[2] -= S(p[m.p_ground(c, 3)]);
}

// ground point c's contact point x_c = c − r ẑ [m] (the sphere's lowest point); its centre (body
// frame) and radius r are the model's constants, or θ's p_ground slots with model.morphology
template <class Model, class S, class PIn>
STEER_HD void ground_point(const Model& m, const typename Model::template Kin<S>& K, const PIn& p,
                           int c, S* xc) {
  if constexpr (Model::kFluid) {
    if (m.ground_in_theta()) {
      ground_point_in_theta<Model, S>(m, K, p, c, xc);
      return;
    }
  }
  m.body_point(K, m.ground.body[c], m.ground.pos[c], xc);
  xc[2] -= S(m.ground.radius[c]);
}

// the linear Jacobian columns J_e(x_c) of the joints above the point's body (n of them, dof
// indices in ds, owning bodies in es), x_c's velocity J q̇ and, with mu, J μ
template <class Model, class S>
STEER_HD int ground_jacobian(const Model& m, const typename Model::template Kin<S>& K, int b,
                             const S* xc, const S* v, const S* mu, S (*J)[3], int* es, S* vel,
                             S* vmu) {
  int nd = 0;
  for (int i = 0; i < 3; ++i) vel[i] = S(0);
  if (vmu)
    for (int i = 0; i < 3; ++i) vmu[i] = S(0);
  for (int e = b; e >= 0; e = m.parent[e]) {
    if (m.joint[e] == Model::kFixed) continue;
    m.point_jacobian(K, e, xc, J[nd]);
    es[nd] = e;
    for (int i = 0; i < 3; ++i) vel[i] += J[nd][i] * v[m.dof[e]];
    if (vmu)
      for (int i = 0; i < 3; ++i) vmu[i] += J[nd][i] * mu[m.dof[e]];
    ++nd;
  }
  return nd;
}

// With time-of-impact impulses (impact.h) the laws are for resting, sliding and slow contact:
// a point crossing the plane fast passes the smoothing layer (a few w) within a fraction of a
// step, and whether a step happens to sample it there (and how deep) would add a force
// impulse of random size to the bounce. The laws' force is therefore weighted by
//   ω = H + σ_3 (1 − H),  H = exp(−(ż/v_g)²),  σ_3 = σ(d/w − 3)
// (v_g = GroundContacts::impact_speed): 1 for slow points (H → 1) and for points deeper than a
// few w (σ_3 → 1, so a fast point already in the plane is still held), about σ_3 ≤ 0.05 for a
// fast point in the layer. Returns ω with H and σ_3; 1 without impulses.
template <class Model, class S>
STEER_HD S impact_law_weight(const Model& m, const S& d, const S& zdot, const S& w, S& H, S& sg3) {
  if (!m.ground.impact) return H = sg3 = S(1);
  const S r = zdot / S(m.ground.impact_speed);
  H = exp_of(S(-r * r));
  sg3 = sigmoid_of(S(d / w - S(3)));
  return H + sg3 * (S(1) - H);
}

// the force f = (f_t,x, f_t,y, f_n) [N] on a point at depth d [m] moving at vel [m/s]
template <class Model, class S, class PIn>
STEER_HD void ground_force(const Model& m, const PIn& p, const NormalLawParams<S>& q, const S& d,
                           const S* vel, S* f) {
  const NormalForce<S> nf = m.ground.law == GroundContacts::kImpedance
                                ? normal_impedance(d, vel[2], q)
                                : normal_softplus(d, vel[2], q);
  friction_smoothed(vel, nf.fe, S(p[m.p_contact(kContactFriction)]),
                    S(p[m.p_contact(kContactSlipVelocity)]), f);
  f[2] = nf.fn;
  if (m.ground.impact) {
    S H, sg3;
    const S om = impact_law_weight(m, d, vel[2], q.w, H, sg3);
    for (int i = 0; i < 3; ++i) f[i] = om * f[i];
  }
}

// adjoint of ground point c's Jacobian columns J_e(x_c) (aj[r]: J̄ of column r, over the nd
// joints es above the point's body) and of x_c (ax, added to) into the kinematics' adjoint:
// J_e = a_e × (x_c − p_e) (hinge) or a_e (slide) into ā_e, p̄_e and x̄_c; x_c moves with its
// body as the sphere's centre does (the −r ẑ is fixed in the world), so x̄_c enters the body
// as a force at p_b and the moment (c − p_b) × x̄_c about it
// With model.morphology the point's centre pos_c (c = p_b + R_b pos_c) and radius r are θ
// slots: pos̄_c = R_bᵀ x̄_c and r̄ = −x̄_c,z.
template <class Model, class S, class PIn>
STEER_HD void adj_ground_point(const Model& m, const typename Model::template Kin<S>& K,
                               const PIn& p, int c, const S* xc, int nd, const int* es,
                               const S (*aj)[3], S* ax, typename Model::template KinAdj<S>& KA,
                               S* adj_p) {
  for (int r = 0; r < nd; ++r) {
    const int e = es[r];
    if (m.joint[e] == Model::kSlide) {
      for (int i = 0; i < 3; ++i) KA.A[e][i] += aj[r][i];
      continue;
    }
    const S rr[3] = {xc[0] - K.P[e][0], xc[1] - K.P[e][1], xc[2] - K.P[e][2]};
    S arr[3] = {S(0), S(0), S(0)};
    Model::adj_cross(K.A[e], rr, KA.A[e], arr, aj[r]);
    for (int i = 0; i < 3; ++i) ax[i] += arr[i], KA.P[e][i] -= arr[i];
  }
  const int b = m.ground.body[c];
  S r = S(m.ground.radius[c]);
  if constexpr (Model::kFluid) {
    if (m.ground_in_theta()) {
      r = S(p[m.p_ground(c, 3)]);
      for (int j = 0; j < 3; ++j)
        adj_p[m.p_ground(c, j)] +=
            K.R[b][j] * ax[0] + K.R[b][3 + j] * ax[1] + K.R[b][6 + j] * ax[2];
      adj_p[m.p_ground(c, 3)] -= ax[2];
    }
  }
  const S rc[3] = {xc[0] - K.P[b][0], xc[1] - K.P[b][1], xc[2] + r - K.P[b][2]};
  S mx[3];
  Model::cross(rc, ax, mx);
  for (int i = 0; i < 3; ++i) KA.P[b][i] += ax[i], KA.T[b][i] += mx[i];
}

// τ_c += Σ_points J(x_c)ᵀ f
template <class Model, class S, class PIn>
STEER_HD void ground_contact_forces(const Model& m, const typename Model::template Kin<S>& K,
                                    const S* v, const PIn& p, S* tc) {
  if (m.ground.n_points == 0) return;
  const NormalLawParams<S> q = ground_law_params<Model, S>(m, p);
  const S height = S(p[m.p_global(Model::kPlaneHeight)]);
  for (int c = 0; c < m.ground.n_points; ++c) {
    S xc[3], J[Model::kMaxDof][3], vel[3], f[3];
    int es[Model::kMaxDof];
    ground_point<Model, S>(m, K, p, c, xc);
    const int nd =
        ground_jacobian<Model, S>(m, K, m.ground.body[c], xc, v, nullptr, J, es, vel, nullptr);
    ground_force<Model, S>(m, p, q, S(height - xc[2]), vel, f);
    for (int r = 0; r < nd; ++r)
      tc[m.dof[es[r]]] += J[r][0] * f[0] + J[r][1] * f[1] + J[r][2] * f[2];
  }
}

// adjoint of φ = μᵀ τ_c = Σ_points u_μ · f (u_μ = J(x_c) μ, the point's velocity under joint
// velocities μ): f̄ = u_μ through the laws (contact_law.h) to d̄ (x̄_c,z = −d̄), the point's
// velocity v̄ and θ̄; then per joint e above the point J̄_e = f μ_e + v̄ q̇_e, q̇̄_e += J_e · v̄,
// and J̄_e, x̄_c through adj_ground_point
template <class Model, class S, class PIn>
STEER_HD void adj_ground_contact_forces(const Model& m, const typename Model::template Kin<S>& K,
                                        const S* v, const PIn& p, const S* mu,
                                        typename Model::template KinAdj<S>& KA, S* adj_v,
                                        S* adj_p) {
  if (m.ground.n_points == 0) return;
  const NormalLawParams<S> q = ground_law_params<Model, S>(m, p);
  NormalLawParams<S> aq{S(0), S(0), S(0), S(0), S(0), S(0), S(0), S(0), S(0)};
  S amu_f = S(0), avs = S(0), aheight = S(0);
  const S height = S(p[m.p_global(Model::kPlaneHeight)]);
  const S mu_f = S(p[m.p_contact(kContactFriction)]), vs = S(p[m.p_contact(kContactSlipVelocity)]);
  const bool imp = m.ground.law == GroundContacts::kImpedance;
  for (int c = 0; c < m.ground.n_points; ++c) {
    const int b = m.ground.body[c];
    S xc[3], J[Model::kMaxDof][3], vel[3], umu[3];
    int es[Model::kMaxDof];
    ground_point<Model, S>(m, K, p, c, xc);
    const int nd = ground_jacobian<Model, S>(m, K, b, xc, v, mu, J, es, vel, umu);
    const S d = height - xc[2];
    const NormalForce<S> nf = imp ? normal_impedance(d, vel[2], q) : normal_softplus(d, vel[2], q);
    S f[3];
    friction_smoothed(vel, nf.fe, mu_f, vs, f);
    f[2] = nf.fn;
    // the weight ω(d, ż) with impulses (impact_law_weight): the laws see ω ū, ω̄ = f · ū
    S H, sg3;
    const S om = impact_law_weight(m, d, vel[2], q.w, H, sg3);
    const S aom = f[0] * umu[0] + f[1] * umu[1] + f[2] * umu[2];
    const S wu[3] = {om * umu[0], om * umu[1], om * umu[2]};
    for (int i = 0; i < 3; ++i) f[i] = om * f[i];
    // the laws' adjoints
    S avel[3] = {S(0), S(0), S(0)}, afe = S(0), ad = S(0);
    adj_friction_smoothed(vel, nf.fe, mu_f, vs, wu, avel, afe, amu_f, avs);
    if (imp)
      adj_normal_impedance(d, vel[2], q, wu[2], afe, ad, avel[2], aq);
    else
      adj_normal_softplus(d, vel[2], q, wu[2], afe, ad, avel[2], aq);
    if (m.ground.impact) {
      // ω = H + σ₃ (1 − H):  ∂ω/∂ż = (1 − σ₃) H (−2 ż / v_g²),  ∂ω/∂d = (1 − H) σ₃ (1 − σ₃) / w,
      // ∂ω/∂w = −(1 − H) σ₃ (1 − σ₃) d / w²
      const S vg = S(m.ground.impact_speed);
      const S ds = aom * (S(1) - H) * sg3 * (S(1) - sg3) / q.w;
      avel[2] += aom * (S(1) - sg3) * H * S(-2) * vel[2] / (vg * vg);
      ad += ds;
      aq.w -= ds * d / q.w;
    }
    aheight += ad;
    // the Jacobian's adjoint
    S ax[3] = {S(0), S(0), -ad}, aj[Model::kMaxDof][3];
    for (int r = 0; r < nd; ++r) {
      const int j = m.dof[es[r]];
      adj_v[j] += J[r][0] * avel[0] + J[r][1] * avel[1] + J[r][2] * avel[2];
      for (int i = 0; i < 3; ++i) aj[r][i] = f[i] * mu[j] + avel[i] * v[j];
    }
    adj_ground_point<Model, S>(m, K, p, c, xc, nd, es, aj, ax, KA, adj_p);
  }
  if (m.ground.restitution) {
    // d_c = restitution_damping(e, k, m_c): d̄_c goes on to e, k and m_c
    S ae = S(0);
    adj_restitution_damping(S(p[m.p_contact(kContactRestitution)]), q.k, q.mass, aq.dc, ae, aq.k,
                            aq.mass);
    adj_p[m.p_contact(kContactRestitution)] += ae;
  } else {
    adj_p[m.p_global(Model::kContactDamping)] += aq.dc;
  }
  adj_p[m.p_global(Model::kPlaneHeight)] += aheight;
  adj_p[m.p_global(Model::kContactStiffness)] += aq.k;
  adj_p[m.p_global(Model::kContactSmoothing)] += aq.w;
  adj_p[m.p_contact(kContactImpD0)] += aq.d0;
  adj_p[m.p_contact(kContactImpDWidth)] += aq.d1;
  adj_p[m.p_contact(kContactImpWidth)] += aq.width;
  adj_p[m.p_contact(kContactRefTimeconst)] += aq.tc;
  adj_p[m.p_contact(kContactRefDampratio)] += aq.zeta;
  adj_p[m.p_contact(kContactImpMass)] += aq.mass;
  adj_p[m.p_contact(kContactFriction)] += amu_f;
  adj_p[m.p_contact(kContactSlipVelocity)] += avs;
}

// ---- contact pairs between bodies (model.pairs) ----

// side k of pair c at the kinematics K, in world coordinates (pair_geometry.h's PairSide): a
// segment's ends, a plane's point and normal, a box's centre and axes, each moved with its body
// (R_b, the body's rotation, turns a direction; body_point moves a point)
template <class Model, class S>
STEER_HD PairSide<S> pair_side_world(const Model& m, const typename Model::template Kin<S>& K,
                                     int c, int k) {
  PairSide<S> side;
  const int b = m.pair_body[c][k];
  side.shape = m.pair_shape[c][k];
  side.r = m.pair_radius[c][k];
  const double* e0 = m.pair_end[c][k][0];
  const double* e1 = m.pair_end[c][k][1];
  auto point = [&](const double* x, S* w) {
    if (b < 0) {
      for (int i = 0; i < 3; ++i) w[i] = S(x[i]);
    } else {
      m.body_point(K, b, x, w);
    }
  };
  auto turn = [&](const double* v, S* w) {  // w = R_b v (v itself for the world)
    for (int i = 0; i < 3; ++i)
      w[i] = b < 0 ? S(v[i])
                   : K.R[b][3 * i] * v[0] + K.R[b][3 * i + 1] * v[1] + K.R[b][3 * i + 2] * v[2];
  };
  point(e0, side.e0);
  if (side.shape == kPairPlane) {
    turn(e1, side.e1);
  } else if (side.shape == kPairBox) {
    for (int i = 0; i < 3; ++i) side.half[i] = e1[i], side.e1[i] = side.e0[i];
    const double* Rg = m.pair_rot[c][k];  // box → body
    for (int col = 0; col < 3; ++col) {
      const double axis[3] = {Rg[col], Rg[3 + col], Rg[6 + col]};
      S w[3];
      turn(axis, w);
      for (int i = 0; i < 3; ++i) side.R[3 * i + col] = w[i];
    }
  } else {
    point(e1, side.e1);
  }
  return side;
}

// pair c's geometry at the kinematics K: the contact point x_c [m], the normal n (from side 1 to
// side 0) and the depth d = r₀ + r₁ − g [m] (> 0: penetrating; pair_geometry.h)
template <class Model, class S>
STEER_HD S pair_geometry(const Model& m, const typename Model::template Kin<S>& K, int c, S* xc,
                         S* n) {
  const PairSide<S> side0 = pair_side_world<Model, S>(m, K, c, 0);
  const PairSide<S> side1 = pair_side_world<Model, S>(m, K, c, 1);
  return pair_sides_geometry(side0, side1, xc, n);
}

// The pairs' broad phase. The laws' forces fall off as e^{d/w} below the surface (softplus(s) and
// σ(s), s = d/w, and the impedance law's δ = w softplus(s)): at d = −kPairReach w they are
// e^{−40} ≈ 4·10⁻¹⁸ of their scale at the surface, below a double's resolution of any sum they
// join. A pair whose sides' bounding spheres (a sphere: its centre and radius; a capsule: its
// axis' midpoint, half its length plus its radius; a box: its centre and half-diagonal) are
// further apart than that, or whose other side's bounding sphere lies above a plane by that
// much, is left out of the step (its force and its derivatives are that small).
constexpr double kPairReach = 40;

// side k of pair c's bounding sphere: its centre in the body's frame and its radius [m]
template <class Model>
STEER_HD double pair_bound(const Model& m, int c, int k, double* centre) {
  const double* e0 = m.pair_end[c][k][0];
  const double* e1 = m.pair_end[c][k][1];
  using std::sqrt;
  switch (m.pair_shape[c][k]) {
    case kPairBox:
      for (int i = 0; i < 3; ++i) centre[i] = e0[i];
      return sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    case kPairCapsule: {
      double l2 = 0;
      for (int i = 0; i < 3; ++i)
        centre[i] = 0.5 * (e0[i] + e1[i]), l2 += (e1[i] - e0[i]) * (e1[i] - e0[i]);
      return 0.5 * sqrt(l2) + m.pair_radius[c][k];
    }
    default:  // a sphere (a plane's bound is its half-space: pair_in_reach)
      for (int i = 0; i < 3; ++i) centre[i] = e0[i];
      return m.pair_radius[c][k];
  }
}

// whether pair c's sides are within reach of each other at the kinematics K (w: the laws'
// smoothing [m])
template <class Model, class S>
STEER_HD bool pair_in_reach(const Model& m, const typename Model::template Kin<S>& K, int c,
                            const S& w) {
  S wc[2][3];
  double radius[2];
  for (int k = 0; k < 2; ++k) {
    double centre[3];
    radius[k] = pair_bound(m, c, k, centre);
    const int b = m.pair_body[c][k];
    if (b < 0) {
      for (int i = 0; i < 3; ++i) wc[k][i] = S(centre[i]);
    } else {
      m.body_point(K, b, centre, wc[k]);
    }
  }
  const S reach = S(kPairReach) * w;
  for (int k = 0; k < 2; ++k)
    if (m.pair_shape[c][k] == kPairPlane) {
      // the other side's bounding sphere above the plane: ν · (c − o) − R
      const PairSide<S> plane = pair_side_world<Model, S>(m, K, c, k);
      const S* o = wc[1 - k];
      const S h = plane.e1[0] * (o[0] - plane.e0[0]) + plane.e1[1] * (o[1] - plane.e0[1]) +
                  plane.e1[2] * (o[2] - plane.e0[2]);
      return !(h - S(radius[1 - k]) > reach);
    }
  using std::sqrt;
  S d2 = S(0);
  for (int i = 0; i < 3; ++i) d2 += (wc[0][i] - wc[1][i]) * (wc[0][i] - wc[1][i]);
  return !(sqrt(d2) - S(radius[0] + radius[1]) > reach);
}

// τ_c += J₀(x_c)ᵀ F − J₁(x_c)ᵀ F over the contact pairs within reach, F = f_n n + f_t on side 0
template <class Model, class S, class PIn>
STEER_HD void pair_contact_forces(const Model& m, const typename Model::template Kin<S>& K,
                                  const S* v, const PIn& p, S* tc) {
  if constexpr (Model::kMaxPairs > 0) {
    if (m.n_pairs == 0) return;
    using std::sqrt;
    const NormalLawParams<S> q = ground_law_params<Model, S>(m, p);
    const S mu_f = S(p[m.p_contact(kContactFriction)]);
    const S vs = S(p[m.p_contact(kContactSlipVelocity)]);
    for (int c = 0; c < m.n_pairs; ++c) {
      if (!pair_in_reach<Model, S>(m, K, c, q.w)) continue;
      S xc[3], n[3];
      const S d = pair_geometry<Model, S>(m, K, c, xc, n);
      S J[2][Model::kMaxDof][3], vel[2][3];
      int es[2][Model::kMaxDof], nd[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 3; ++i) vel[k][i] = S(0);
        const int b = m.pair_body[c][k];
        if (b >= 0)
          nd[k] = ground_jacobian<Model, S>(m, K, b, xc, v, nullptr, J[k], es[k], vel[k], nullptr);
      }
      S u[3];
      for (int i = 0; i < 3; ++i) u[i] = vel[0][i] - vel[1][i];
      const S zdot = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
      const NormalForce<S> nf = m.ground.law == GroundContacts::kImpedance
                                    ? normal_impedance(d, zdot, q)
                                    : normal_softplus(d, zdot, q);
      S ut[3];
      for (int i = 0; i < 3; ++i) ut[i] = u[i] - zdot * n[i];
      const S qn = sqrt(ut[0] * ut[0] + ut[1] * ut[1] + ut[2] * ut[2] + vs * vs);
      const S g = -mu_f * S(m.pair_friction_scale[c]) * nf.fe / qn;
      S F[3];
      for (int i = 0; i < 3; ++i) F[i] = nf.fn * n[i] + g * ut[i];
      for (int k = 0; k < 2; ++k) {
        const S sign = k == 0 ? S(1) : S(-1);
        for (int r = 0; r < nd[k]; ++r)
          tc[m.dof[es[k][r]]] += sign * (J[k][r][0] * F[0] + J[k][r][1] * F[1] + J[k][r][2] * F[2]);
      }
    }
  } else {
    (void)m, (void)K, (void)v, (void)p, (void)tc;
  }
}

// world position of the contact point [m]
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::tip_position(const Kin<S>& K, S* x) const {
  body_point(K, tip_body, tip_offset, x);
}

// τ_c = J_tip,zᵀ f_z, f_z = k w softplus(d/w) − d_c σ(d/w) ż_tip, d = height − z_tip (added into
// tc)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::contact_forces(const Kin<S>& K, const S* v,
                                                                        const PIn& p, S* tc) const {
  ground_contact_forces<ArticulatedCap, S>(*this, K, v, p, tc);
  pair_contact_forces<ArticulatedCap, S>(*this, K, v, p, tc);
  if (!contact) return;
  S x[3];
  tip_position(K, x);
  S jz[kMaxDof];
  int ds[kMaxDof], nd = 0;
  S zdot = S(0);
  for (int e = tip_body; e >= 0; e = parent[e]) {
    if (joint[e] == kFixed) continue;
    S jv[3];
    point_jacobian(K, e, x, jv);
    jz[nd] = jv[2];
    ds[nd] = dof[e];
    zdot += jv[2] * v[dof[e]];
    ++nd;
  }
  const S k = p[p_global(kContactStiffness)], dc = p[p_global(kContactDamping)],
          wd = p[p_global(kContactSmoothing)];
  const S z = (S(p[p_global(kPlaneHeight)]) - x[2]) / wd;
  S sp, sg;
  softplus_sigmoid_of(z, sp, sg);
  const S fz = k * wd * sp - dc * sg * zdot;
  for (int r = 0; r < nd; ++r) tc[ds[r]] += jz[r] * fz;
}

// adjoint of φ = μᵀ τ_c = ż_μ f_z (ż_μ = Σ_e J_tip,z,e μ_e: the tip's vertical speed under
// joint velocities μ) with respect to the kinematics, q̇ and the contact parameters:
//   f_z = k w softplus(z) − d_c σ(z) ż,  z = (height − z_tip)/w
//   f̄_z = ż_μ,  z̄ = f̄_z (k σ(z) − d_c σ'(z) ż) [per w: k w σ/w],  ż̄ = −f̄_z d_c σ(z),
//   J̄_z,e = f_z μ_e + ż̄ q̇_e
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_contact_forces(
    const Kin<S>& K, const S* v, const PIn& p, const S* mu, KinAdj<S>& KA, S* adj_v,
    S* adj_p) const {
  adj_ground_contact_forces<ArticulatedCap, S>(*this, K, v, p, mu, KA, adj_v, adj_p);
  if (!contact) return;
  S x[3];
  tip_position(K, x);
  S jz[kMaxDof];
  int es[kMaxDof], nd = 0;
  S zdot = S(0), zmu = S(0);
  for (int e = tip_body; e >= 0; e = parent[e]) {
    if (joint[e] == kFixed) continue;
    S jv[3];
    point_jacobian(K, e, x, jv);
    jz[nd] = jv[2];
    es[nd] = e;
    zdot += jv[2] * v[dof[e]];
    zmu += jv[2] * mu[dof[e]];
    ++nd;
  }
  const S k = p[p_global(kContactStiffness)], dc = p[p_global(kContactDamping)],
          wd = p[p_global(kContactSmoothing)];
  const S z = (S(p[p_global(kPlaneHeight)]) - x[2]) / wd;
  S sp, sg;
  softplus_sigmoid_of(z, sp, sg);
  const S fz = k * wd * sp - dc * sg * zdot;
  const S afz = zmu;
  const S az = afz * (k * wd * sg - dc * sg * (S(1) - sg) * zdot) / wd;  // ∂φ/∂(height − z_tip)
  const S azdot = -afz * dc * sg;
  adj_p[p_global(kContactStiffness)] += afz * wd * sp;
  adj_p[p_global(kContactDamping)] -= afz * sg * zdot;
  adj_p[p_global(kContactSmoothing)] += afz * k * sp - az * z;
  adj_p[p_global(kPlaneHeight)] += az;
  S ax[3] = {S(0), S(0), -az};
  for (int r = 0; r < nd; ++r) {
    const int e = es[r];
    const S ajz = fz * mu[dof[e]] + azdot * v[dof[e]];
    adj_v[dof[e]] += azdot * jz[r];
    const S aj[3] = {S(0), S(0), ajz};
    if (joint[e] == kSlide) {
      KA.A[e][2] += ajz;
      continue;
    }
    const S rr[3] = {x[0] - K.P[e][0], x[1] - K.P[e][1], x[2] - K.P[e][2]};
    S arr[3] = {S(0), S(0), S(0)};
    adj_cross(K.A[e], rr, KA.A[e], arr, aj);
    for (int i = 0; i < 3; ++i) ax[i] += arr[i], KA.P[e][i] -= arr[i];
  }
  // x = p_tip + R_tip o: a point of the tip body, a force x̄ and a moment (x − p_tip) × x̄
  const S rx[3] = {x[0] - K.P[tip_body][0], x[1] - K.P[tip_body][1], x[2] - K.P[tip_body][2]};
  S mx[3];
  cross(rx, ax, mx);
  for (int i = 0; i < 3; ++i) KA.P[tip_body][i] += ax[i], KA.T[tip_body][i] += mx[i];
}

}  // namespace steer
