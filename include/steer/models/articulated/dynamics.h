// Articulated: the joint-space dynamics M(q) q̈ + c(q, q̇) = τ, and its adjoint.
//   M(q) = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_w,b J_ω,b   (composite rigid bodies),
//   c(q, q̇) = Coriolis, centrifugal and gravity forces   (recursive Newton–Euler with q̈ = 0).
// Both enter the step's adjoint only through φ_d = λᵀ M(q) w − h λᵀ c(q, q̇), which
// adj_dynamics_form differentiates by virtual work in one inward sweep.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"

namespace steer {

// M(q) = diag(armature) + Σ_b m_b J_v,bᵀ J_v,b + J_ω,bᵀ I_w,b J_ω,b, row-major n×n into
// M[kMaxDof·kMaxDof], by composite rigid bodies (O(n_bodies + n²) instead of the Jacobian
// sum's O(n_bodies·n²)). Each body's subtree, leaves first, is summed about the body's
// anchor p_b as its mass m, first moment h = Σ m_k (c_k − p_b) and inertia
// J = Σ I_w,k + m_k (|c_k − p_b|² 𝟙 − (c_k − p_b)(c_k − p_b)ᵀ) [kg·m²]; moved to the
// parent's anchor by r = p_b − p_pa: h' = h + m r, J' = J + (2 h·r + m|r|²) 𝟙 − (h rᵀ + r hᵀ + m r
// rᵀ). A unit q̈_i of body b's joint accelerates its subtree (b's composite) with the force f and
// the moment n about p_b
//   hinge, axis a:  f = a × h,  n = J a;      slide, direction d:  f = m d,  n = h × d,
// and M_ji for every joint j at b or above it (body e) is the work of that wrench on j's
// unit motion: a_e · (n + (p_b − p_e) × f) (hinge), a_e · f (slide); M_ij = M_ji.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::mass_matrix(const Kin<S>& K, const PIn& p,
                                                                     S* M) const {
  const int n = n_dof;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) M[i * kMaxDof + j] = S(0);
  S cm[kMaxBodies], ch[kMaxBodies][3], cJ[kMaxBodies][9];  // composites about p_b
  for (int b = 0; b < n_bodies; ++b) {
    const S m = p[p_body(b, kMass)];
    S u[3];
    for (int i = 0; i < 3; ++i) u[i] = K.C[b][i] - K.P[b][i];
    world_inertia(K, p, b, cJ[b]);
    const S uu = dot(u, u);
    for (int i = 0; i < 3; ++i) {
      ch[b][i] = m * u[i];
      for (int j = 0; j < 3; ++j) cJ[b][3 * i + j] += m * ((i == j ? uu : S(0)) - u[i] * u[j]);
    }
    cm[b] = m;
  }
  for (int b = n_bodies - 1; b >= 0; --b) {
    // b's composite is complete: its children (later in topological order) are merged
    if (joint[b] != kFixed) {
      const int i = dof[b];
      S f[3], nb[3];
      if (joint[b] == kHinge) {
        cross(K.A[b], ch[b], f);
        rotate(cJ[b], K.A[b], nb);
      } else {
        for (int k = 0; k < 3; ++k) f[k] = cm[b] * K.A[b][k];
        cross(ch[b], K.A[b], nb);
      }
      for (int e = b; e >= 0; e = parent[e]) {
        if (joint[e] == kFixed) continue;
        const int j = dof[e];
        S v;
        if (joint[e] == kHinge) {
          const S r[3] = {K.P[b][0] - K.P[e][0], K.P[b][1] - K.P[e][1], K.P[b][2] - K.P[e][2]};
          S rf[3];
          cross(r, f, rf);
          const S ne[3] = {nb[0] + rf[0], nb[1] + rf[1], nb[2] + rf[2]};
          v = dot(K.A[e], ne);
        } else {
          v = dot(K.A[e], f);
        }
        M[j * kMaxDof + i] = v;
        M[i * kMaxDof + j] = v;
      }
    }
    const int pa = parent[b];
    if (pa < 0) continue;
    const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
    const S m = cm[b];
    const S hr = dot(ch[b], r), rr = dot(r, r);
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 3; ++l)
        cJ[pa][3 * k + l] +=
            cJ[b][3 * k + l] + ((k == l ? S(2) * hr + m * rr : S(0)) -
                                (ch[b][k] * r[l] + r[k] * ch[b][l] + m * r[k] * r[l]));
    for (int k = 0; k < 3; ++k) ch[pa][k] += ch[b][k] + m * r[k];
    cm[pa] += m;
  }
  for (int i = 0; i < n; ++i) M[i * kMaxDof + i] += S(p[p_joint(i, kArmature)]);
}

// c(q, q̇): Coriolis, centrifugal and gravity joint forces by recursive Newton–Euler with
// q̈ = 0 and the base accelerating upward at g (so M q̈ + c = τ)
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::bias_forces(const Kin<S>& K, const S* v,
                                                                     const PIn& p, S* c) const {
  RneaWork<S> W;
  bias_forces(K, v, p, c, W);
}

template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::bias_forces(const Kin<S>& K, const S* v,
                                                                     const PIn& p, S* c,
                                                                     RneaWork<S>& W) const {
  S(&w)[kMaxBodies][3] = W.w;
  S(&al)[kMaxBodies][3] = W.al;
  S(&ao)[kMaxBodies][3] = W.ao;
  S(&F)[kMaxBodies][3] = W.F;
  S(&N)[kMaxBodies][3] = W.N;
  const S g = p[p_global(kGravity)];
  for (int b = 0; b < n_bodies; ++b) {
    const int pa = parent[b];
    S wp[3], alp[3], aop[3], r[3];
    for (int i = 0; i < 3; ++i) {
      wp[i] = pa < 0 ? S(0) : w[pa][i];
      alp[i] = pa < 0 ? S(0) : al[pa][i];
      aop[i] = pa < 0 ? S(-gravity_dir[i]) * g : ao[pa][i];
      r[i] = K.P[b][i] - (pa < 0 ? S(0) : K.P[pa][i]);
    }
    // a_o = a_o,p + α_p × r + ω_p × (ω_p × r)
    S t1[3], t2[3], t3[3];
    cross(alp, r, t1);
    cross(wp, r, t2);
    cross(wp, t2, t3);
    for (int i = 0; i < 3; ++i) ao[b][i] = aop[i] + t1[i] + t3[i];
    for (int i = 0; i < 3; ++i) w[b][i] = wp[i], al[b][i] = alp[i];
    if (joint[b] != kFixed) {
      const S qd = v[dof[b]];
      S av[3] = {K.A[b][0] * qd, K.A[b][1] * qd, K.A[b][2] * qd}, t4[3];
      cross(wp, av, t4);
      if (ball_frame(b)) {
        // a ball's axes R e_i turn with its body, not with the previous frame: ω = ω_P + R ω_rel,
        // α = α_P + ω_P × R ω_rel + R ω̇_rel (P the ball's parent), so the velocity product is
        // ω_P × a q̇ (zero for a free root, whose P is a slide frame)
        const int gp = ball_parent(b);
        S wg[3] = {S(0), S(0), S(0)}, t5[3];
        if (gp >= 0)
          for (int i = 0; i < 3; ++i) wg[i] = w[gp][i];
        cross(wg, av, t5);
        for (int i = 0; i < 3; ++i) w[b][i] += av[i], al[b][i] += t5[i];
      } else if (joint[b] == kHinge) {
        // ω = ω_p + a q̇, α = α_p + ω_p × a q̇
        for (int i = 0; i < 3; ++i) w[b][i] += av[i], al[b][i] += t4[i];
      } else {
        // slide: Coriolis 2 ω_p × a q̇ on the origin
        for (int i = 0; i < 3; ++i) ao[b][i] += S(2) * t4[i];
      }
    }
    // centre-of-mass acceleration, force and moment of body b
    S rc[3] = {K.C[b][0] - K.P[b][0], K.C[b][1] - K.P[b][1], K.C[b][2] - K.P[b][2]};
    S ac[3], u1[3], u2[3], u3[3];
    cross(al[b], rc, u1);
    cross(w[b], rc, u2);
    cross(w[b], u2, u3);
    for (int i = 0; i < 3; ++i) ac[i] = ao[b][i] + u1[i] + u3[i];
    const S m = p[p_body(b, kMass)];
    S* Iw = W.Iw[b];
    S* Iwv = W.Iwv[b];
    S* gyr = W.gyr[b];
    S Ial[3];
    world_inertia(K, p, b, Iw);
    rotate(Iw, al[b], Ial);
    rotate(Iw, w[b], Iwv);
    cross(w[b], Iwv, gyr);
    S f[3], rf[3];
    for (int i = 0; i < 3; ++i) f[i] = m * ac[i], W.ac[b][i] = ac[i];
    cross(rc, f, rf);
    for (int i = 0; i < 3; ++i)
      F[b][i] = f[i], N[b][i] = Ial[i] + gyr[i] + rf[i];  // moment about p_b
  }
  for (int i = 0; i < n_dof; ++i) c[i] = S(0);
  for (int b = n_bodies - 1; b >= 0; --b) {
    if (joint[b] == kHinge) c[dof[b]] = dot(K.A[b], N[b]);
    if (joint[b] == kSlide) c[dof[b]] = dot(K.A[b], F[b]);
    const int pa = parent[b];
    if (pa < 0) continue;
    S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]}, rF[3];
    cross(r, F[b], rF);
    for (int i = 0; i < 3; ++i) F[pa][i] += F[b][i], N[pa][i] += N[b][i] + rF[i];
  }
}

// adjoint of the dynamics part of φ,
//   φ_d = λᵀ M(q) w − h λᵀ c(q, q̇)
// for fixed λ, w (dof vectors), with respect to the kinematics (KA), q̇, masses, armatures,
// inertias and gravity. By virtual work (c_j = a_j·N_j sums the bodies' inertial wrenches
// over j's subtree) λᵀ c = Σ_b m_b V_b(λ)·a_c,b + Ω_b(λ)·(I_w α_b + ω_b × I_w ω_b), and
// λᵀ M w = Σ_i armature_i λ_i w_i + Σ_b m_b V_b(λ)·V_b(w) + Ω_b(λ)ᵀ I_w Ω_b(w), so
//   φ_d = Σ_i armature_i λ_i w_i + Σ_b m_b V_b(λ)·X_b + Ω_b(λ)·Y_b,
//   X_b = V_b(w) − h a_c,b [m/s],  Y_b = I_w Z_b − h ω_b × I_w ω_b [kg·m²/s],  Z_b = Ω_b(w) − h
//   α_b,
// where, for joint velocities λ, the angular velocity Ω, the anchor velocity o and the
// centre-of-mass velocity V of each body follow the outward recursion
//   Ω_b = Ω_pa + λ_b a_b [hinge],  o_b = o_pa + Ω_pa × (p_b − p_pa) + λ_b a_b [slide],
//   V_b = o_b + Ω_b × (c_b − p_b),
// and ω_b, α_b, a_o,b, a_c,b = a_o,b + α_b × rc + ω_b × (ω_b × rc) are bias_forces' (W).
// The reverse runs inward over the bodies. Per body:
//   m̄_b = V(λ)·X,  V̄(λ) = m X,  V̄(w) = m V(λ),  ā_c = −h m V(λ) = −h V̄(w),
//   Ω̄(λ) = Y,  Ω̄(w) = I_w Ω(λ),  ᾱ = −h I_w Ω(λ) = −h Ω̄(w),
//   ω̄ = −h [I_w ω × Ω(λ) + I_w (Ω(λ) × ω)],  Ī_w = Ω(λ) Z_bᵀ − h (Ω(λ) × ω) ωᵀ;
// since the w velocities (Ω(w), o(w)) and the Newton–Euler pass (α, a_o) propagate alike
// (α_b ∋ α_pa, a_o,b ∋ a_o,pa + α_pa × r), their adjoints stay in the ratio −h all the way
// in: ᾱ = −h Ω̄(w), ā_o = −h ō(w); one recursion carries both, and where a geometric
// adjoint pairs with Ω(w) and α it pairs with Z (e.g. r̄ += ō(w) × Z_pa). The rest — the
// λ velocities, ω̄ and the centripetal and Coriolis terms of a_c and a_o — reverse term by term.
// Bodies without a moving joint at or above them (a fixed base) carry only gravity's ā_o.
template <int NB, int ND, int NS, int NP, int NC>
template <class S, class PIn>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::adj_dynamics_form(
    const Kin<S>& K, const S* v, const PIn& p, const RneaWork<S>& W, const S* lam, const S* w,
    const S& h, KinAdj<S>& KA, S* adj_v, S* adj_p, bool want_inertia) const {
  for (int i = 0; i < n_dof; ++i) adj_p[p_joint(i, kArmature)] += lam[i] * w[i];
  // outward: Ω and o under λ (l) and w (w); which bodies move
  S Ol[kMaxBodies][3], Ow[kMaxBodies][3], ol[kMaxBodies][3], ow[kMaxBodies][3];
  bool moving[kMaxBodies];
  for (int b = 0; b < n_bodies; ++b) {
    const int pa = parent[b];
    moving[b] = joint[b] != kFixed || (pa >= 0 && moving[pa]);
    if (pa < 0) {
      for (int i = 0; i < 3; ++i) Ol[b][i] = Ow[b][i] = ol[b][i] = ow[b][i] = S(0);
    } else {
      const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
      S tl[3], tw[3];
      cross(Ol[pa], r, tl);
      cross(Ow[pa], r, tw);
      for (int i = 0; i < 3; ++i) {
        Ol[b][i] = Ol[pa][i], Ow[b][i] = Ow[pa][i];
        ol[b][i] = ol[pa][i] + tl[i], ow[b][i] = ow[pa][i] + tw[i];
      }
    }
    if (joint[b] == kHinge)
      for (int i = 0; i < 3; ++i)
        Ol[b][i] += lam[dof[b]] * K.A[b][i], Ow[b][i] += w[dof[b]] * K.A[b][i];
    if (joint[b] == kSlide)
      for (int i = 0; i < 3; ++i)
        ol[b][i] += lam[dof[b]] * K.A[b][i], ow[b][i] += w[dof[b]] * K.A[b][i];
  }
  // inward: Ω̄, ō under λ (l) and under w with the Newton–Euler pass (w), ω̄
  S aOl[kMaxBodies][3], aOw[kMaxBodies][3], aol[kMaxBodies][3], aow[kMaxBodies][3],
      aw[kMaxBodies][3];
  for (int b = 0; b < n_bodies; ++b)
    for (int i = 0; i < 3; ++i) aOl[b][i] = aOw[b][i] = aol[b][i] = aow[b][i] = aw[b][i] = S(0);
  for (int b = n_bodies - 1; b >= 0; --b) {
    const int pa = parent[b];
    if (!moving[b]) {
      if (pa >= 0)
        for (int i = 0; i < 3; ++i) aow[pa][i] += aow[b][i];
      else
        // the base accelerates against gravity, a_o = −g d: ḡ = −h (−d) · ō(w)
        adj_p[p_global(kGravity)] += h * gravity_along(aow[b]);
      continue;
    }
    const S m = p[p_body(b, kMass)];
    const S* Iw = W.Iw[b];
    const S* om = W.w[b];
    const S* g = W.Iwv[b];
    const S rc[3] = {K.C[b][0] - K.P[b][0], K.C[b][1] - K.P[b][1], K.C[b][2] - K.P[b][2]};
    // the body's term m V(λ)·X + Ω(λ)·Y
    S Vl[3], t[3], X[3], Z[3], IZ[3], IOl[3], e[3], Ie[3];
    cross(Ol[b], rc, Vl);
    cross(Ow[b], rc, t);
    for (int i = 0; i < 3; ++i) {
      Vl[i] += ol[b][i];
      X[i] = ow[b][i] + t[i] - h * W.ac[b][i];
      Z[i] = Ow[b][i] - h * W.al[b][i];
    }
    rotate(Iw, Z, IZ);
    rotate(Iw, Ol[b], IOl);
    cross(Ol[b], om, e);
    rotate(Iw, e, Ie);
    adj_p[p_body(b, kMass)] += dot(Vl, X);
    S aVl[3], aVw[3], aac[3], arc[3] = {S(0), S(0), S(0)}, he[3], hIe[3];
    cross(g, Ol[b], t);
    for (int i = 0; i < 3; ++i) {
      aVl[i] = m * X[i], aVw[i] = m * Vl[i], aac[i] = -h * aVw[i];
      aOl[b][i] += IZ[i] - h * W.gyr[b][i];
      aOw[b][i] += IOl[i];
      aw[b][i] -= h * (t[i] + Ie[i]);
      he[i] = -h * e[i], hIe[i] = -h * Ie[i];
      aol[b][i] += aVl[i], aow[b][i] += aVw[i];
    }
    adj_world_inertia_rank1(K, b, Ol[b], Z, IOl, IZ, KA.T[b], adj_p, want_inertia);
    adj_world_inertia_rank1(K, b, he, om, hIe, g, KA.T[b], adj_p, want_inertia);
    // V(λ) = o + Ω × rc;  V(w) − h a_c = o(w) − h a_o + Z × rc − h ω × (ω × rc)
    adj_cross(Ol[b], rc, aOl[b], arc, aVl);
    adj_cross(Z, rc, aOw[b], arc, aVw);
    S u2[3], au2[3] = {S(0), S(0), S(0)};
    cross(om, rc, u2);
    adj_cross(om, u2, aw[b], au2, aac);
    adj_cross(om, rc, aw[b], arc, au2);
    for (int i = 0; i < 3; ++i) KA.C[b][i] += arc[i], KA.P[b][i] -= arc[i];
    // the joint. Velocities: Ω_b ∋ λ_b a_b (hinge), o_b ∋ λ_b a_b (slide), and the same in w;
    // Newton–Euler: ω = ω_p + a q̇, α = α_p + ω_p × a q̇ (hinge), a_o ∋ 2 ω_p × a q̇ (slide)
    S wp[3], awp[3];
    for (int i = 0; i < 3; ++i) wp[i] = pa < 0 ? S(0) : W.w[pa][i], awp[i] = aw[b][i];
    if (joint[b] != kFixed) {
      const S qd = v[dof[b]], lb = lam[dof[b]], wb = w[dof[b]];
      const S av[3] = {K.A[b][0] * qd, K.A[b][1] * qd, K.A[b][2] * qd};
      S aav[3] = {S(0), S(0), S(0)}, ane[3];
      if (joint[b] == kHinge) {
        for (int i = 0; i < 3; ++i)
          KA.A[b][i] += lb * aOl[b][i] + wb * aOw[b][i], aav[i] += aw[b][i],
              ane[i] = -h * aOw[b][i];
      } else {
        for (int i = 0; i < 3; ++i)
          KA.A[b][i] += lb * aol[b][i] + wb * aow[b][i], ane[i] = S(-2) * h * aow[b][i];
      }
      if (ball_frame(b)) {
        // a ball's turning frame: the product is ω_P × a q̇ with P the ball's parent (bias_forces)
        const int gp = ball_parent(b);
        S wg[3] = {S(0), S(0), S(0)}, awg[3] = {S(0), S(0), S(0)};
        if (gp >= 0)
          for (int i = 0; i < 3; ++i) wg[i] = W.w[gp][i];
        adj_cross(wg, av, awg, aav, ane);
        if (gp >= 0)
          for (int i = 0; i < 3; ++i) aw[gp][i] += awg[i];
      } else {
        adj_cross(wp, av, awp, aav, ane);
      }
      adj_v[dof[b]] += dot(K.A[b], aav);
      for (int i = 0; i < 3; ++i) KA.A[b][i] += qd * aav[i];
    }
    if (pa < 0) {
      adj_p[p_global(kGravity)] += h * gravity_along(aow[b]);
      continue;
    }
    // to the parent: o_b = o_pa + Ω_pa × r (λ, w) and a_o = a_o,p + α_p × r + ω_p × (ω_p × r)
    const S r[3] = {K.P[b][0] - K.P[pa][0], K.P[b][1] - K.P[pa][1], K.P[b][2] - K.P[pa][2]};
    S Zp[3], aao[3], t2[3], at2[3] = {S(0), S(0), S(0)}, ar[3] = {S(0), S(0), S(0)};
    for (int i = 0; i < 3; ++i) Zp[i] = Ow[pa][i] - h * W.al[pa][i], aao[i] = -h * aow[b][i];
    adj_cross(Ol[pa], r, aOl[pa], ar, aol[b]);
    adj_cross(Zp, r, aOw[pa], ar, aow[b]);
    cross(wp, r, t2);
    adj_cross(wp, t2, awp, at2, aao);
    adj_cross(wp, r, awp, ar, at2);
    for (int i = 0; i < 3; ++i) {
      KA.P[b][i] += ar[i], KA.P[pa][i] -= ar[i];
      aw[pa][i] += awp[i];
      aOl[pa][i] += aOl[b][i], aOw[pa][i] += aOw[b][i];
      aol[pa][i] += aol[b][i], aow[pa][i] += aow[b][i];
    }
  }
}

}  // namespace steer
