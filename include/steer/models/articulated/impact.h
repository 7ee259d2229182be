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
//   the impulse P = −(1 + e) v_n(s) / (J_n M⁻¹ J_nᵀ),  Δq̇ = P M⁻¹ J_nᵀ,
// so that J_n (q̇ + Δq̇) = v_n − (1 + e) v_n(s): the speed at the crossing reflected by e, plus
// what the step's acceleration adds after it, (1 + e)(v_n − v_n(s)) (−e v_n without it),
// and the velocity changes at s h, so the position integrates the mean velocity over the step:
//   q̇_end = q̇⁺ + Σ Δq̇_i,   q_end = q ⊕ h q̇_pos,   q̇_pos = q̇⁺ + Σ (1 − s_i) Δq̇_i
// (⊕: q + h q̇ for hinges and slides, quat ⊗ exp(h ω/2) for a free root's orientation). A point
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
// and J_n, the vertical row of its Jacobian, over the nd joints above its body (dofs in jd,
// owning bodies in es) and as a dense row over all dofs (jn)
template <class Model, class S>
struct ImpactPoint {
  S xc[3], d0, jz[Model::kMaxDof], jn[Model::kMaxDof];
  int es[Model::kMaxDof], nd;
  STEER_HD ImpactPoint(const Model& m, const typename Model::template Kin<S>& K, int c, const S& height) {
    S J[Model::kMaxDof][3], vel[3];
    ground_point<Model, S>(m, K, c, xc);
    S zero[Model::kMaxDof];
    for (int i = 0; i < m.n_dof; ++i) zero[i] = S(0), jn[i] = S(0);
    nd = ground_jacobian<Model, S>(m, K, m.ground.body[c], xc, zero, nullptr, J, es, vel, nullptr);
    for (int r = 0; r < nd; ++r) jz[r] = J[r][2], jn[m.dof[es[r]]] = J[r][2];
    d0 = xc[2] - height;
  }
};

// M = L Lᵀ at q into L (stride kMaxDof) from the step's tape: M's strict upper triangle survives
// in the system matrix's factor, and M's diagonal is the tape's mdiag
template <class Model, class S>
STEER_HD void impact_mass_factor(const Model& m, const typename Model::template StepTape<S>& t, S* L) {
  const int n = m.n_dof;
  for (int i = 0; i < n; ++i) {
    L[i * Model::kMaxDof + i] = t.mdiag[i];
    for (int j = i + 1; j < n; ++j) L[i * Model::kMaxDof + j] = L[j * Model::kMaxDof + i] = t.A[i * Model::kMaxDof + j];
  }
  Model::cholesky_factor(n, L);
}

// the values of one impulse at velocity v: crossing (per lane), s, y = M⁻¹ J_nᵀ, P
template <class Model, class S>
struct Impulse {
  decltype(S(0) < S(0)) crossing;
  S vn, vn0, vs, vn_safe, minv_safe, s, P, y[Model::kMaxDof];
  STEER_HD Impulse(const Model& m, const ImpactPoint<Model, S>& pt, const S* L, const S& e, const S* v0, const S* v) {
    const int n = m.n_dof;
    const S h = S(m.dt);
    vn = S(0), vn0 = S(0);
    for (int r = 0; r < pt.nd; ++r) vn += pt.jz[r] * v[m.dof[pt.es[r]]], vn0 += pt.jz[r] * v0[m.dof[pt.es[r]]];
    const auto crosses = pt.d0 > S(0) && S(pt.d0 + h * vn) < S(0);
    for (int i = 0; i < n; ++i) y[i] = pt.jn[i];
    Model::cholesky_substitute(n, L, y);
    S minv = S(0);
    for (int r = 0; r < pt.nd; ++r) minv += pt.jz[r] * y[m.dof[pt.es[r]]];
    // lanes that do not cross take P = 0 and s = 0 from safe denominators (v_n < 0 and
    // J_n M⁻¹ J_nᵀ > 0 wherever the point crosses)
    vn_safe = select(crosses, vn, S(-1));
    s = select(crosses, S(pt.d0 / (-h * vn_safe)), S(0));
    // the normal velocity at the crossing time, v_n(s) = v_n,0 + s (v_n − v_n,0)
    vs = vn0 + s * (vn - vn0);
    crossing = crosses && vs < S(0);
    minv_safe = select(crossing, minv, S(1));
    P = select(crossing, S(-(S(1) + e) * vs / minv_safe), S(0));
  }
};

// the impulses' record for the adjoint: which point each impulse was, and the velocity before it
template <class Model, class S>
struct ImpactRecord {
  static constexpr int kMax = GroundContacts::kMaxPoints * GroundContacts::kMaxImpactSweeps;
  int n = 0;
  int point[kMax];
  S v[kMax][Model::kMaxDof];
};

// the impact stage (header): v0 is q̇ at the step's start, v holds q̇⁺ on entry and q̇_end on
// return, vpos receives q̇_pos;
// rec (optional) the impulses taken. Returns whether any lane took an impulse.
template <class Model, class S, class PIn>
STEER_HD bool ground_impacts(const Model& m, const typename Model::template StepTape<S>& t, const PIn& p, const S* v0,
                             S* v, S* vpos, ImpactRecord<Model, S>* rec = nullptr) {
  const int n = m.n_dof;
  for (int i = 0; i < n; ++i) vpos[i] = v[i];
  if (rec) rec->n = 0;
  const S height = S(p[m.p_global(Model::kPlaneHeight)]), e = S(p[m.p_contact(kContactRestitution)]);
  const S h = S(m.dt);
  // a cheap first test: does any lane's point cross with q̇⁺?
  bool any = false;
  for (int c = 0; c < m.ground.n_points && !any; ++c) {
    const ImpactPoint<Model, S> pt(m, t.K, c, height);
    S vn = S(0);
    for (int r = 0; r < pt.nd; ++r) vn += pt.jz[r] * v[m.dof[pt.es[r]]];
    any = any_lane(pt.d0 > S(0) && S(pt.d0 + h * vn) < S(0));
  }
  if (!any) return false;
  S L[Model::kMaxDof * Model::kMaxDof];
  impact_mass_factor(m, t, L);
  for (int sweep = 0; sweep < m.ground.impact_sweeps; ++sweep) {
    bool took = false;
    for (int c = 0; c < m.ground.n_points; ++c) {
      const ImpactPoint<Model, S> pt(m, t.K, c, height);
      const Impulse<Model, S> im(m, pt, L, e, v0, v);
      if (!any_lane(im.crossing)) continue;
      took = true;
      if (rec) {
        rec->point[rec->n] = c;
        for (int i = 0; i < n; ++i) rec->v[rec->n][i] = v[i];
        ++rec->n;
      }
      for (int i = 0; i < n; ++i) {
        const S dv = im.P * im.y[i];
        v[i] += dv;
        vpos[i] += (S(1) - im.s) * dv;
      }
    }
    if (!took) break;
  }
  return true;
}

// adjoint of the impact stage: av holds q̇̄_end on entry and q̇̄⁺ on return; apos is q̇̄_pos;
// av0 receives (adds) the cotangent of q̇ at the step's start (through v_n,0);
// the kinematics' adjoint goes to KA, θ's to ap (restitution, height, and M's parameters
// through adj_dynamics_form)
template <class Model, class S, class PIn>
STEER_HD void adj_ground_impacts(const Model& m, const typename Model::template StepTape<S>& t, const PIn& p,
                                 const S* v0, S* av, const S* apos, S* av0, typename Model::template KinAdj<S>& KA, S* ap,
                                 bool want_inertia) {
  const int n = m.n_dof;
  S v[Model::kMaxDof], vpos[Model::kMaxDof];
  for (int i = 0; i < n; ++i) v[i] = t.vp[i];
  ImpactRecord<Model, S> rec;
  if (ground_impacts(m, t, p, v0, v, vpos, &rec)) {
    const S height = S(p[m.p_global(Model::kPlaneHeight)]), e = S(p[m.p_contact(kContactRestitution)]);
    const S h = S(m.dt);
    S L[Model::kMaxDof * Model::kMaxDof];
    impact_mass_factor(m, t, L);
    S ae = S(0), aheight = S(0);
    for (int k = rec.n - 1; k >= 0; --k) {
      const ImpactPoint<Model, S> pt(m, t.K, rec.point[k], height);
      const S* vb = rec.v[k];
      const Impulse<Model, S> im(m, pt, L, e, v0, vb);
      // Δq̇ = P y enters q̇_end and, weighted by 1 − s, q̇_pos
      S adv[Model::kMaxDof], ay[Model::kMaxDof], z[Model::kMaxDof], wy[Model::kMaxDof];
      S aP = S(0), as = S(0);
      for (int i = 0; i < n; ++i) {
        adv[i] = av[i] + (S(1) - im.s) * apos[i];
        as -= im.P * im.y[i] * apos[i];
        aP += adv[i] * im.y[i];
        ay[i] = im.P * adv[i];
      }
      aP = select(im.crossing, aP, S(0));
      as = select(im.crossing, as, S(0));
      // P = −(1 + e) v_n(s) / m⁻¹,  m⁻¹ = J_n y;  v_n(s) = v_n,0 + s (v_n − v_n,0);  s = d₀ / (−h v_n)
      ae -= aP * im.vs / im.minv_safe;
      const S avs = -aP * (S(1) + e) / im.minv_safe;
      const S avn0 = avs * (S(1) - im.s);
      as += select(im.crossing, S(avs * (im.vn - im.vn0)), S(0));
      const S avn = avs * im.s - as * im.s / im.vn_safe;
      const S aminv = -aP * im.P / im.minv_safe;
      const S ad0 = as / (-h * im.vn_safe);
      // y = M⁻¹ J_nᵀ: J̄_n += z = M⁻¹ ȳ (ȳ with m⁻¹'s share), M̄ = −z yᵀ
      for (int i = 0; i < n; ++i) z[i] = ay[i] + aminv * pt.jn[i], wy[i] = -im.y[i];
      Model::cholesky_substitute(n, L, z);
      S dummy_v[Model::kMaxDof];
      for (int i = 0; i < n; ++i) dummy_v[i] = S(0);
      m.adj_dynamics_form(t.K, vb, p, t.W, z, wy, S(0), KA, dummy_v, ap, want_inertia);
      // J̄_n (per column r) = m̄⁻¹ y + z + v̄_n q̇ + v̄_n,0 q̇₀;  q̇̄ += v̄_n J_nᵀ, q̇̄₀ += v̄_n,0 J_nᵀ
      S aj[Model::kMaxDof][3], ax[3] = {S(0), S(0), ad0};
      for (int r = 0; r < pt.nd; ++r) {
        const int j = m.dof[pt.es[r]];
        aj[r][0] = aj[r][1] = S(0);
        aj[r][2] = aminv * im.y[j] + z[j] + avn * vb[j] + avn0 * v0[j];
      }
      for (int i = 0; i < n; ++i) av[i] += avn * pt.jn[i], av0[i] += avn0 * pt.jn[i];
      aheight -= ad0;
      adj_ground_point<Model, S>(m, t.K, rec.point[k], pt.xc, pt.nd, pt.es, aj, ax, KA);
    }
    ap[m.p_contact(kContactRestitution)] += ae;
    ap[m.p_global(Model::kPlaneHeight)] += aheight;
  }
  for (int i = 0; i < n; ++i) av[i] += apos[i];
}

}  // namespace steer
