// Articulated: time-of-impact restitution for the ground points (GroundContacts::impact), and
// its hand adjoint.
//
// The penalty laws (contact.h) resolve an impact over several steps and lose energy to their
// damping and to the step, so the bounce they give depends on the masses, k and h. Here a
// point that crosses the plane from above within a step bounces with exactly the coefficient e:
// after the smooth step's q̇⁺ (implicit_step.h), for each ground point c with height above the
// plane d₀ = x_c,z(q) − height at the step's start and normal velocity v_n = J_n q̇ (J_n the
// vertical row of the point's Jacobian at q),
//   crossing:  d₀ > 0 and d₀ + h v_n < 0,
//   the crossing time s h,  s = d₀ / (−h v_n) ∈ (0, 1),
//   the normal velocity at that time v_n(s) = v_n,0 + s (v_n − v_n,0)  (v_n,0 = J_n q̇ at the
//     step's start: the velocity changes linearly over the step, as the step's acceleration
//     has it), crossing only where v_n(s) < 0,
//   the impulse P = −(1 + e) v_n(s) G / (J_n M⁻¹ J_nᵀ),  Δq̇ = P M⁻¹ J_nᵀ,
//   G = 1 − exp(−(v_n(s)/v_g)²)  (v_g = GroundContacts::impact_speed),
// so that J_n (q̇ + Δq̇) = v_n − (1 + e) v_n(s): the speed at the crossing reflected by e, plus
// what the step's acceleration adds after it, (1 + e)(v_n − v_n(s)) (−e v_n without it),
// wherever |v_n(s)| ≫ v_g (G = 1 − 1e-16 at 6 v_g). The gate fades slow crossings out smoothly
// (G ≈ (v_n(s)/v_g)²) and leaves them to the normal law: a grazing crossing's time is singular
// in the state (∂s/∂d₀ = 1/(h |v_n|)), and the settling bounces of a body coming to rest
// would otherwise multiply those derivatives step after step;
// with a friction impulse against the slip at the crossing, v_t(s) = J_t q̇ at s (the rows x, y),
//   T = −μ P v_t(s) / sqrt(|v_t(s)|² + (μ P W)² + v_s²),  W = tr(J_t M⁻¹ J_tᵀ)/2,
// which is μ P against a fast slip (|v_t| ≫ μ P W: Coulomb's bound) and about −v_t(s)/W
// against a slow one (the impulse that stops the slip, so it never reverses it; W is the
// slip's inverse effective mass averaged over directions), and Δq̇ = M⁻¹ (J_nᵀ P + J_tᵀ T).
// The velocity changes at s h, so the position integrates the mean velocity over the step:
//   q̇_end = q̇⁺ + Σ Δq̇_i,   q_end = q ⊕ h q̇_pos,   q̇_pos = q̇⁺ + Σ (1 − s_i) Δq̇_i
// (⊕: q + h q̇ for hinges and slides, quat ⊗ exp(h ω/2) for a ball's orientation). A point
// that crosses exactly at the step's end (s → 1) leaves the position as the smooth step has it
// and reverses the velocity; at the next step's start (s → 0) it reverses before any motion, so
// the trajectory is continuous where the impact moves from one step to the next, which the
// penalty laws' per-step contact is not at high stiffness. M is the mass matrix at q (with
// armature), not the step's M + h D: an impulse acts over no time, so damping takes no part.
//
// Several points: sweeps (GroundContacts::impact_sweeps) pass over the points in order, each
// point taking its impulse while it still crosses with the velocity the earlier impulses left
// (sequential impulses). One sweep is exact for a single impacting point; simultaneous impacts
// of several points of one body (a box landing flat) are coupled, and the sweeps approach
// their joint solution without reaching it (docs/contact.md).
//
// The adjoint differentiates s, P and M⁻¹ J_nᵀ at fixed crossing sets: the set is a
// comparison, constant almost everywhere. With ȳ for y = M⁻¹ J_nᵀ, z = M⁻¹ ȳ, M̄ = −z yᵀ, which
// adj_dynamics_form takes back to q and θ as the form zᵀ M (−y) (its λᵀ M w with h = 0).
#pragma once

#include "steer/models/articulated/contact.h"
#include "steer/models/articulated/dynamics.h"
#include "steer/models/articulated/model.h"

namespace steer {

// one ground point's impact geometry at q: its contact point x_c, height above the plane d₀,
// its Jacobian's columns J_e(x_c) over the nd joints above its body (jc, owning bodies in es)
// and its rows J_x, J_y, J_n (the vertical one) dense over all dofs (jd)
template <class Model, class S>
struct ImpactPoint {
  S xc[3], d0, jc[Model::kMaxDof][3], jd[3][Model::kMaxDof];
  int es[Model::kMaxDof], nd;
  template <class PIn>
  STEER_HD ImpactPoint(const Model& m, const typename Model::template Kin<S>& K, const PIn& p,
                       int c, const S& height) {
    S vel[3], zero[Model::kMaxDof];
    ground_point<Model, S>(m, K, p, c, xc);
    for (int i = 0; i < m.n_dof; ++i) zero[i] = jd[0][i] = jd[1][i] = jd[2][i] = S(0);
    nd = ground_jacobian<Model, S>(m, K, m.ground.body[c], xc, zero, nullptr, jc, es, vel, nullptr);
    for (int r = 0; r < nd; ++r)
      for (int a = 0; a < 3; ++a) jd[a][m.dof[es[r]]] = jc[r][a];
    d0 = xc[2] - height;
  }
  // J_a · w over the point's joints
  STEER_HD S row_dot(const Model& m, int a, const S* w) const {
    S t = S(0);
    for (int r = 0; r < nd; ++r) t += jc[r][a] * w[m.dof[es[r]]];
    return t;
  }
};

// M = L Lᵀ at q into L (stride kMaxDof) from the step's tape: M's strict upper triangle survives
// in the system matrix's factor, and M's diagonal is the tape's mdiag
template <class Model, class S>
STEER_HD void impact_mass_factor(const Model& m, const typename Model::template StepTape<S>& t,
                                 S* L) {
  const int n = m.n_dof;
  for (int i = 0; i < n; ++i) {
    L[i * Model::kMaxDof + i] = t.mdiag[i];
    for (int j = i + 1; j < n; ++j)
      L[i * Model::kMaxDof + j] = L[j * Model::kMaxDof + i] = t.A[i * Model::kMaxDof + j];
  }
  Model::cholesky_factor(n, L);
}

// the values of one impulse at velocity v (q̇ at the step's start v0): crossing (per lane), s,
// the point's velocity at the crossing time (x, y, n), y_a = M⁻¹ J_aᵀ, the normal impulse P and
// the friction impulses T_x, T_y (impact.h's header)
template <class Model, class S>
struct Impulse {
  decltype(S(0) < S(0)) crossing;
  S vr[3], vr0[3], vsr[3], vn_safe, minv_safe, s, ex, gate, P, W, Q, D, imp[3],
      y[3][Model::kMaxDof];
  STEER_HD Impulse(const Model& m, const ImpactPoint<Model, S>& pt, const S* L, const S& e,
                   const S& mu, const S& vslip, const S* v0, const S* v) {
    using std::sqrt;
    const int n = m.n_dof;
    const S h = S(m.dt);
    for (int a = 0; a < 3; ++a) vr[a] = pt.row_dot(m, a, v), vr0[a] = pt.row_dot(m, a, v0);
    const auto crosses = pt.d0 > S(0) && S(pt.d0 + h * vr[2]) < S(0);
    for (int a = 0; a < 3; ++a) {
      for (int i = 0; i < n; ++i) y[a][i] = pt.jd[a][i];
      Model::cholesky_substitute(n, L, y[a]);
    }
    const S minv = pt.row_dot(m, 2, y[2]);
    // lanes that do not cross take P = 0 and s = 0 from safe denominators (v_n < 0 and
    // J_n M⁻¹ J_nᵀ > 0 wherever the point crosses)
    vn_safe = select(crosses, vr[2], S(-1));
    s = select(crosses, S(pt.d0 / (-h * vn_safe)), S(0));
    // the point's velocity at the crossing time, v(s) = v₀ + s (v − v₀)
    for (int a = 0; a < 3; ++a) vsr[a] = vr0[a] + s * (vr[a] - vr0[a]);
    crossing = crosses && vsr[2] < S(0);
    minv_safe = select(crossing, minv, S(1));
    // the gate G = 1 − exp(−(v_n(s)/v_g)²) fades the impulse out below v_g
    // (GroundContacts::impact_speed), where the normal law takes the contact over
    const S r = vsr[2] / S(m.ground.impact_speed);
    ex = exp_of(S(-r * r));
    gate = select(crossing, S(S(1) - ex), S(0));
    P = select(crossing, S(-(S(1) + e) * vsr[2] * gate / minv_safe), S(0));
    // friction: T = −μ P v_t(s) / sqrt(|v_t(s)|² + (μ P W)² + v_s²), W = tr(J_t M⁻¹ J_tᵀ)/2
    W = S(0.5) * (pt.row_dot(m, 0, y[0]) + pt.row_dot(m, 1, y[1]));
    Q = mu * P;
    D = sqrt(vsr[0] * vsr[0] + vsr[1] * vsr[1] + Q * W * Q * W + vslip * vslip);
    imp[0] = -Q * vsr[0] / D, imp[1] = -Q * vsr[1] / D, imp[2] = P;
  }
};

// the impulses' record for the adjoint: which point each impulse was, and the velocity before it
template <class Model, class S>
struct ImpactRecord {
  static constexpr int kMax = Model::kMaxGroundPoints * GroundContacts::kMaxImpactSweeps;
  int n = 0;
  int point[kMax];
  S v[kMax][Model::kMaxDof];
};

// the impact stage (header): v0 is q̇ at the step's start, v holds q̇⁺ on entry and q̇_end on
// return, vpos receives q̇_pos;
// rec (optional) the impulses taken. Returns whether any lane took an impulse.
template <class Model, class S, class PIn>
STEER_HD bool ground_impacts(const Model& m, const typename Model::template StepTape<S>& t,
                             const PIn& p, const S* v0, S* v, S* vpos,
                             ImpactRecord<Model, S>* rec = nullptr) {
  const int n = m.n_dof;
  for (int i = 0; i < n; ++i) vpos[i] = v[i];
  if (rec) rec->n = 0;
  const S height = S(p[m.p_global(Model::kPlaneHeight)]),
          e = S(p[m.p_contact(kContactRestitution)]);
  const S mu = S(p[m.p_contact(kContactFriction)]), vslip = S(p[m.p_contact(kContactSlipVelocity)]);
  const S h = S(m.dt);
  // a cheap first test: does any lane's point cross with q̇⁺?
  bool any = false;
  for (int c = 0; c < m.ground.n_points && !any; ++c) {
    const ImpactPoint<Model, S> pt(m, t.K, p, c, height);
    any = any_lane(pt.d0 > S(0) && S(pt.d0 + h * pt.row_dot(m, 2, v)) < S(0));
  }
  if (!any) return false;
  S L[Model::kMaxDof * Model::kMaxDof];
  impact_mass_factor(m, t, L);
  for (int sweep = 0; sweep < m.ground.impact_sweeps; ++sweep) {
    bool took = false;
    for (int c = 0; c < m.ground.n_points; ++c) {
      const ImpactPoint<Model, S> pt(m, t.K, p, c, height);
      const Impulse<Model, S> im(m, pt, L, e, mu, vslip, v0, v);
      if (!any_lane(im.crossing)) continue;
      took = true;
      if (rec) {
        rec->point[rec->n] = c;
        for (int i = 0; i < n; ++i) rec->v[rec->n][i] = v[i];
        ++rec->n;
      }
      for (int i = 0; i < n; ++i) {
        const S dv = im.imp[0] * im.y[0][i] + im.imp[1] * im.y[1][i] + im.imp[2] * im.y[2][i];
        v[i] += dv;
        vpos[i] += (S(1) - im.s) * dv;
      }
    }
    if (!took) break;
  }
  return true;
}

// adjoint of the impact stage, reversing the impulses ground_impacts recorded (rec): av holds
// q̇̄_end on entry and, on return, q̇̄⁺ less q̇̄_pos (apos, which reaches q̇⁺ unchanged: the
// caller adds it); av0 receives (adds) the cotangent of q̇ at the step's start (through v_n,0);
// the kinematics' adjoint goes to KA, θ's to ap (restitution, height, and M's parameters
// through adj_dynamics_form)
template <class Model, class S, class PIn>
STEER_HD void adj_ground_impacts(const Model& m, const typename Model::template StepTape<S>& t,
                                 const PIn& p, const S* v0, const ImpactRecord<Model, S>& rec,
                                 S* av, const S* apos, S* av0,
                                 typename Model::template KinAdj<S>& KA, S* ap, bool want_inertia) {
  const int n = m.n_dof;
  const S height = S(p[m.p_global(Model::kPlaneHeight)]),
          e = S(p[m.p_contact(kContactRestitution)]);
  const S mu = S(p[m.p_contact(kContactFriction)]), vslip = S(p[m.p_contact(kContactSlipVelocity)]);
  const S h = S(m.dt), vg = S(m.ground.impact_speed);
  S L[Model::kMaxDof * Model::kMaxDof];
  impact_mass_factor(m, t, L);
  S ae = S(0), aheight = S(0), amu = S(0), avslip = S(0);
  for (int k = rec.n - 1; k >= 0; --k) {
    const ImpactPoint<Model, S> pt(m, t.K, p, rec.point[k], height);
    const S* vb = rec.v[k];
    const Impulse<Model, S> im(m, pt, L, e, mu, vslip, v0, vb);
    // Δq̇ = Σ_a imp_a y_a enters q̇_end and, weighted by 1 − s, q̇_pos
    S adv[Model::kMaxDof], ay[3][Model::kMaxDof], aJ[3][Model::kMaxDof];
    S aimp[3] = {S(0), S(0), S(0)}, as = S(0);
    for (int i = 0; i < n; ++i) {
      adv[i] = av[i] + (S(1) - im.s) * apos[i];
      const S dv = im.imp[0] * im.y[0][i] + im.imp[1] * im.y[1][i] + im.imp[2] * im.y[2][i];
      as -= dv * apos[i];
      for (int a = 0; a < 3; ++a)
        aimp[a] += adv[i] * im.y[a][i], ay[a][i] = im.imp[a] * adv[i], aJ[a][i] = S(0);
    }
    for (int a = 0; a < 3; ++a) aimp[a] = select(im.crossing, aimp[a], S(0));
    as = select(im.crossing, as, S(0));
    // friction: T_a = g v_a(s), g = −Q/D, D = sqrt(|v_t(s)|² + (Q W)² + v_s²), Q = μ P
    S avsr[3];
    const S g = -im.Q / im.D;
    const S ag = aimp[0] * im.vsr[0] + aimp[1] * im.vsr[1];
    const S aD = ag * im.Q / (im.D * im.D);
    for (int a = 0; a < 2; ++a) avsr[a] = g * aimp[a] + aD * im.vsr[a] / im.D;
    const S aQ = -ag / im.D + aD * im.Q * im.W * im.W / im.D;
    const S aW = aD * im.Q * im.Q * im.W / im.D;
    avslip += aD * vslip / im.D;
    amu += aQ * im.P;
    const S aP = aimp[2] + aQ * mu;
    // W = (J_x y_x + J_y y_y)/2
    for (int a = 0; a < 2; ++a)
      for (int i = 0; i < n; ++i)
        ay[a][i] += S(0.5) * aW * pt.jd[a][i], aJ[a][i] += S(0.5) * aW * im.y[a][i];
    // P = −(1 + e) v_n(s) G / m⁻¹,  G = 1 − exp(−(v_n(s)/v_g)²),  m⁻¹ = J_n y_n
    const S dgate = S(2) * im.vsr[2] / (vg * vg) * im.ex;  // G'(v_n(s))
    ae -= aP * im.vsr[2] * im.gate / im.minv_safe;
    avsr[2] = -aP * (S(1) + e) * (im.gate + im.vsr[2] * dgate) / im.minv_safe;
    const S aminv = -aP * im.P / im.minv_safe;
    for (int i = 0; i < n; ++i) ay[2][i] += aminv * pt.jd[2][i], aJ[2][i] += aminv * im.y[2][i];
    // v_a(s) = v_a,0 + s (v_a − v_a,0);  s = d₀ / (−h v_n)
    S avr[3], avr0[3];
    S as_v = S(0);
    for (int a = 0; a < 3; ++a) {
      avr0[a] = avsr[a] * (S(1) - im.s);
      avr[a] = avsr[a] * im.s;
      as_v += avsr[a] * (im.vr[a] - im.vr0[a]);
    }
    as += select(im.crossing, as_v, S(0));
    avr[2] -= as * im.s / im.vn_safe;
    const S ad0 = as / (-h * im.vn_safe);
    // v_a = J_a q̇, v_a,0 = J_a q̇₀;  y_a = M⁻¹ J_aᵀ: J̄_a += z_a = M⁻¹ ȳ_a, M̄ = −z_a y_aᵀ
    S dummy_v[Model::kMaxDof], wy[Model::kMaxDof];
    for (int a = 0; a < 3; ++a) {
      for (int i = 0; i < n; ++i) {
        av[i] += avr[a] * pt.jd[a][i], av0[i] += avr0[a] * pt.jd[a][i];
        aJ[a][i] += avr[a] * vb[i] + avr0[a] * v0[i];
        wy[i] = -im.y[a][i], dummy_v[i] = S(0);
      }
      Model::cholesky_substitute(n, L, ay[a]);
      for (int i = 0; i < n; ++i) aJ[a][i] += ay[a][i];
      m.adj_dynamics_form(t.K, vb, p, t.W, ay[a], wy, S(0), KA, dummy_v, ap, want_inertia);
    }
    // the rows' adjoints per column, and d₀ = x_c,z − height
    S aj[Model::kMaxDof][3], ax[3] = {S(0), S(0), ad0};
    for (int r = 0; r < pt.nd; ++r)
      for (int a = 0; a < 3; ++a) aj[r][a] = aJ[a][m.dof[pt.es[r]]];
    aheight -= ad0;
    adj_ground_point<Model, S>(m, t.K, p, rec.point[k], pt.xc, pt.nd, pt.es, aj, ax, KA, ap);
  }
  ap[m.p_contact(kContactRestitution)] += ae;
  ap[m.p_contact(kContactFriction)] += amu;
  ap[m.p_contact(kContactSlipVelocity)] += avslip;
  ap[m.p_global(Model::kPlaneHeight)] += aheight;
}

}  // namespace steer
