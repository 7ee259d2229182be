// What the FEM model's surface vertices touch, and the force of one contact, each with its hand
// adjoint beside it. Units: lengths [m], velocities [m/s], forces [N].
//
// A surface vertex is a sphere of radius r (Fem::vertex_radius; 0: a point) at x. Against a body
// with signed distance φ(x) (> 0 outside) and outward unit normal n = ∇φ, its depth is
// d = r − φ(x) (> 0: touching). The bodies:
//   the ground   φ = y − y_g, n = ŷ (y_g a θ slot)
//   a plane      φ = n·x − o (n a unit vector, o [m]): a wall, or a tilted floor
//   a box        axis-aligned, centre c, half extents h; with q = x − c, a_i = |q_i| − h_i:
//                outside (some a_i > 0): δ_i = q_i − clamp(q_i, −h_i, h_i), φ = |δ|, n = δ/|δ|;
//                inside: φ = a_k, n = sign(q_k) e_k for the face k of largest a_k.
// φ is C¹ outside the box; inside it is not differentiable where two faces are equally near,
// and n jumps there (as at a wall's edge in any penalty method): gradients hold between such
// switches, and the validator's FD checks see them.
//
// The force along n, with the normal velocity v_n = n·v and the laws of contact_law.h:
//   softplus   f_n = k w softplus(d/w) − d_c σ(d/w) v_n,        N = k w softplus(d/w)
//   hard       f_n = [d > 0] (k d − d_c D(v_n)),                N = [d > 0] k d,
//              D(v) = v, or min(v, 0) (damped only while approaching: warp.sim's law)
// plus smoothed Coulomb friction on v_t = v − n v_n bounded by N:
//   f = n f_n − μ N v_t / sqrt(|v_t|² + v_s²).
#pragma once

#include "steer/models/articulated/contact_law.h"

namespace steer {

// an obstacle's record (Fem::obstacle): its kind, then six numbers
enum FemObstacleKind { kFemPlane = 0, kFemBox = 1 };
constexpr int kFemObstacleStride = 7;  // plane: kind, n (3), o, 0;  box: kind, c (3), h (3)

template <class S>
struct FemContactFrame {
  S d;     // depth r − φ [m]
  S n[3];  // outward unit normal
};

// the depth and normal of a vertex at x (radius r) against obstacle record ob
template <class S>
STEER_HD FemContactFrame<S> obstacle_frame(const double* ob, const S* x, const S& r) {
  using std::sqrt;
  FemContactFrame<S> f;
  if (int(ob[0]) == kFemPlane) {
    S phi = S(-ob[4]);
    for (int c = 0; c < 3; ++c) phi += S(ob[1 + c]) * x[c], f.n[c] = S(ob[1 + c]);
    f.d = r - phi;
    return f;
  }
  S q[3], a[3];
  bool outside = false;
  for (int c = 0; c < 3; ++c) {
    q[c] = x[c] - S(ob[1 + c]);
    a[c] = (value_of(q[c]) < 0 ? -q[c] : q[c]) - S(ob[4 + c]);
    outside = outside || value_of(a[c]) > 0;
  }
  if (outside) {
    S dl[3], len2 = S(0);
    for (int c = 0; c < 3; ++c) {
      dl[c] = value_of(a[c]) > 0 ? (value_of(q[c]) < 0 ? q[c] + S(ob[4 + c]) : q[c] - S(ob[4 + c]))
                                 : S(0);
      len2 += dl[c] * dl[c];
    }
    const S len = sqrt(len2);
    for (int c = 0; c < 3; ++c) f.n[c] = dl[c] / len;
    f.d = r - len;
    return f;
  }
  int k = 0;
  for (int c = 1; c < 3; ++c)
    if (value_of(a[c]) > value_of(a[k])) k = c;
  for (int c = 0; c < 3; ++c) f.n[c] = S(0);
  f.n[k] = S(value_of(q[k]) < 0 ? -1 : 1);
  f.d = r - a[k];
  return f;
}

// adjoint of obstacle_frame for the cotangents (d̄, n̄): x̄ += −d̄ n + (∂n/∂x)ᵀ n̄, with
// ∂φ/∂x = n everywhere and ∂n/∂x = (I − n nᵀ) P / |δ| outside a box (P: the axes on which x is
// past the box, the ones δ moves with), 0 for a plane or inside a box
template <class S>
STEER_HD void adj_obstacle_frame(const double* ob, const S* x, const FemContactFrame<S>& f,
                                 const S& dbar, const S* nbar, S* xbar) {
  for (int c = 0; c < 3; ++c) xbar[c] -= dbar * f.n[c];
  if (int(ob[0]) != kFemBox) return;
  S len2 = S(0), nn = S(0);
  bool past[3];
  for (int c = 0; c < 3; ++c) {
    const S q = x[c] - S(ob[1 + c]);
    const S a = (value_of(q) < 0 ? -q : q) - S(ob[4 + c]);
    past[c] = value_of(a) > 0;
    if (past[c]) len2 += a * a;
    nn += f.n[c] * nbar[c];
  }
  if (!(value_of(len2) > 0)) return;  // inside: n is constant
  using std::sqrt;
  const S len = sqrt(len2);
  for (int c = 0; c < 3; ++c)
    if (past[c]) xbar[c] += (nbar[c] - f.n[c] * nn) / len;
}

// the contact law's parameters (Fem's ground globals, shared by every obstacle)
template <class S>
struct FemContactLaw {
  enum Kind { kSoftplus = 0, kHard = 1 };
  int kind = kSoftplus;
  bool approach_only = false;  // hard law: D(v) = min(v, 0)
  S k, dc, w, mu, vs;          // [N/m], [N·s/m], [m], [1], [m/s]
};

// the normal law: f_n and its elastic part N at depth d and normal velocity v_n
template <class S>
STEER_HD NormalForce<S> fem_normal_force(const FemContactLaw<S>& q, const S& d, const S& vn) {
  if (q.kind == FemContactLaw<S>::kSoftplus) {
    NormalLawParams<S> nl;
    nl.k = q.k, nl.dc = q.dc, nl.w = q.w;
    return normal_softplus(d, vn, nl);
  }
  NormalForce<S> o;
  o.fe = o.fn = S(0);
  if (!(value_of(d) > 0)) return o;
  o.fe = q.k * d;
  const bool damped = !q.approach_only || value_of(vn) < 0;
  o.fn = damped ? o.fe - q.dc * vn : o.fe;
  return o;
}

// f [3] of one contact at depth d, normal n, vertex velocity v
template <class S>
STEER_HD void fem_contact_force(const FemContactLaw<S>& q, const S& d, const S* n, const S* v,
                                S* f) {
  const S vn = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
  const NormalForce<S> nf = fem_normal_force(q, d, vn);
  S vt[3], ft[3];
  for (int c = 0; c < 3; ++c) vt[c] = v[c] - n[c] * vn;
  friction_smoothed<S, 3>(vt, nf.fe, q.mu, q.vs, ft);
  for (int c = 0; c < 3; ++c) f[c] = n[c] * nf.fn + ft[c];
}

// adjoint of fem_contact_force for f̄ [3]: d̄, n̄ [3], v̄ [3] and the law's q̄ (k, dc, w, mu, vs)
template <class S>
STEER_HD void adj_fem_contact_force(const FemContactLaw<S>& q, const S& d, const S* n, const S* v,
                                    const S* fbar, S& dbar, S* nbar, S* vbar,
                                    FemContactLaw<S>& qbar) {
  const S vn = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
  const NormalForce<S> nf = fem_normal_force(q, d, vn);
  S vt[3], vtbar[3] = {S(0), S(0), S(0)}, febar = S(0);
  for (int c = 0; c < 3; ++c) vt[c] = v[c] - n[c] * vn;
  adj_friction_smoothed<S, 3>(vt, nf.fe, q.mu, q.vs, fbar, vtbar, febar, qbar.mu, qbar.vs);
  // f = n f_n + f_t:  n̄ += f̄ f_n,  f̄_n = n · f̄
  const S fnbar = n[0] * fbar[0] + n[1] * fbar[1] + n[2] * fbar[2];
  // v_t = v − n v_n:  v̄ += v̄_t,  n̄ −= v̄_t v_n,  v̄_n −= n · v̄_t
  S vnbar = -(n[0] * vtbar[0] + n[1] * vtbar[1] + n[2] * vtbar[2]);
  for (int c = 0; c < 3; ++c) {
    nbar[c] += fbar[c] * nf.fn - vtbar[c] * vn;
    vbar[c] += vtbar[c];
  }
  if (q.kind == FemContactLaw<S>::kSoftplus) {
    NormalLawParams<S> nl, nlbar;
    nl.k = q.k, nl.dc = q.dc, nl.w = q.w;
    nlbar.k = nlbar.dc = nlbar.w = S(0);
    adj_normal_softplus(d, vn, nl, fnbar, febar, dbar, vnbar, nlbar);
    qbar.k += nlbar.k, qbar.dc += nlbar.dc, qbar.w += nlbar.w;
  } else if (value_of(d) > 0) {
    const S both = fnbar + febar;
    dbar += both * q.k;
    qbar.k += both * d;
    if (!q.approach_only || value_of(vn) < 0) {
      vnbar -= fnbar * q.dc;
      qbar.dc -= fnbar * vn;
    }
  }
  // v_n = n · v
  for (int c = 0; c < 3; ++c) {
    vbar[c] += vnbar * n[c];
    nbar[c] += vnbar * v[c];
  }
}

}  // namespace steer
