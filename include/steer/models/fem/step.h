// Fem's step and its adjoint, the ground force, the statics and the diagnostics.
//
// One step of length h, symplectic Euler, with lumped masses m_i = Σ_{e ∋ i} ρ_e V_e / 4:
//   f_i  = Σ_{e ∋ i} f_{e,i} (fem/element.h; with the element's active stress u_a s_e) + ground_i
//   v'_i = v_i + h (f_i / m_i − g ŷ − α v_i),  x'_i = x_i + h v'_i
//   pinned vertices: x'_i = x_i, v'_i = 0
// The ground (surface vertices, y-up plane y = y_g), with contact_law.h's laws: depth
// d = y_g − y_i, f_y = k_g w_g softplus(d/w_g) − d_g σ(d/w_g) v_y, and smoothed Coulomb friction
// on (v_x, v_z) bounded by the elastic part.
// The forward step accumulates masses and forces in x_{k+1} itself (vertex i's mass in its
// position slot x, its force in its velocity slots) before it writes the new state there, so it
// needs no storage; the adjoint, which needs every vertex's total force for ∂/∂m_i, keeps them on
// the stack (kMaxVertices).
#pragma once

#include "steer/models/articulated/contact_law.h"
#include "steer/models/fem/model.h"

namespace steer {

template <class S, class XIn, class PIn>
STEER_HD void Fem::ground_force(int i, const XIn& x, const PIn& p, S* out) const {
  NormalLawParams<S> q;
  q.k = S(p[p_global(kGroundStiffness)]);
  q.dc = S(p[p_global(kGroundDamping)]);
  q.w = S(p[p_global(kGroundSmoothing)]);
  const S d = S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1]);
  const NormalForce<S> n = normal_softplus(d, S(x[x_vel(i) + 1]), q);
  const S vt[2] = {S(x[x_vel(i)]), S(x[x_vel(i) + 2])};
  S ft[2];
  friction_smoothed(vt, n.fe, S(p[p_global(kFriction)]), S(p[p_global(kFrictionSmoothing)]), ft);
  out[0] = ft[0];
  out[1] = n.fn;
  out[2] = ft[1];
}

template <class S, class XIn, class PIn, class XAdj, class PAdj>
STEER_HD void Fem::adj_ground_force(int i, const XIn& x, const PIn& p, const S* fbar, XAdj& adj_x,
                                    PAdj& adj_p) const {
  NormalLawParams<S> q, aq;
  q.k = S(p[p_global(kGroundStiffness)]);
  q.dc = S(p[p_global(kGroundDamping)]);
  q.w = S(p[p_global(kGroundSmoothing)]);
  aq.k = aq.dc = aq.w = S(0);
  const S d = S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1]);
  const S zdot = S(x[x_vel(i) + 1]);
  const NormalForce<S> n = normal_softplus(d, zdot, q);
  const S vt[2] = {S(x[x_vel(i)]), S(x[x_vel(i) + 2])};
  const S aft[2] = {fbar[0], fbar[2]};
  S avt[2] = {S(0), S(0)}, afe = S(0), amu = S(0), avs = S(0), ad = S(0), azdot = S(0);
  adj_friction_smoothed(vt, n.fe, S(p[p_global(kFriction)]), S(p[p_global(kFrictionSmoothing)]),
                        aft, avt, afe, amu, avs);
  adj_normal_softplus(d, zdot, q, fbar[1], afe, ad, azdot, aq);
  adj_x[x_pos(i) + 1] -= ad;
  adj_x[x_vel(i)] += avt[0];
  adj_x[x_vel(i) + 1] += azdot;
  adj_x[x_vel(i) + 2] += avt[1];
  adj_p[p_global(kGroundHeight)] += ad;
  adj_p[p_global(kGroundStiffness)] += aq.k;
  adj_p[p_global(kGroundDamping)] += aq.dc;
  adj_p[p_global(kGroundSmoothing)] += aq.w;
  adj_p[p_global(kFriction)] += amu;
  adj_p[p_global(kFrictionSmoothing)] += avs;
}

// every element's and the ground's forces at state y (positions and velocities as in x), with
// every element's mass share: add_force(i, c, f) for coordinate c of vertex i [N],
// add_mass(i, m) [kg]
template <class S, class YIn, class UIn, class PIn, class AddForce, class AddMass>
STEER_HD void Fem::for_each_force(const YIn& y, const UIn& u, const PIn& p, AddForce add_force,
                                  AddMass add_mass) const {
  for (int e = 0; e < n_elements; ++e) {
    const TetNodes<S> nodes = gather<S>(y, e);
    S f[4][3] = {};
    tet_forces(law, nodes, rest_inverse<S>(e), rest_volume<S>(e), element_material<S>(p, e),
               element_active<S>(u, p, e), f);
    const S share = vertex_mass_share<S>(p, e);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      add_mass(i, share);
      for (int c = 0; c < 3; ++c) add_force(i, c, f[a][c]);
    }
  }
  if (ground)
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      S g[3];
      ground_force<S>(i, y, p, g);
      for (int c = 0; c < 3; ++c) add_force(i, c, g[c]);
    }
}

// the transpose of for_each_force: for the forces' cotangents fbar(i, c) and the masses'
// mbar(i), y's cotangent into adj_y (positions and velocities as in x), and ū, θ̄
template <class S, class YIn, class UIn, class PIn, class FBar, class MBar, class YAdj, class UAdj,
          class PAdj>
STEER_HD void Fem::adj_for_each_force(const YIn& y, const UIn& u, const PIn& p, FBar fbar_of,
                                      MBar mbar_of, YAdj& adj_y, UAdj& adj_u, PAdj& adj_p) const {
  for (int e = 0; e < n_elements; ++e) {
    const TetNodes<S> nodes = gather<S>(y, e);
    S fbar[4][3], xbar[4][3] = {}, vbar[4][3] = {};
    S mshare = S(0);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      for (int c = 0; c < 3; ++c) fbar[a][c] = fbar_of(i, c);
      mshare += mbar_of(i);
    }
    FemMaterial<S> mbar;
    mbar.mu = mbar.lambda = mbar.mu_l = mbar.lambda_l = mbar.damping = S(0);
    S level_bar = S(0);
    adj_tet_forces(law, nodes, rest_inverse<S>(e), rest_volume<S>(e), element_material<S>(p, e),
                   element_active<S>(u, p, e), fbar, xbar, vbar, mbar, level_bar);
    adj_element_material(p, e, mbar, adj_p);
    adj_element_active(u, p, e, level_bar, adj_u, adj_p);
    adj_vertex_mass_share(p, e, mshare, adj_p);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      for (int c = 0; c < 3; ++c) {
        adj_y[x_pos(i) + c] += xbar[a][c];
        adj_y[x_vel(i) + c] += vbar[a][c];
      }
    }
  }
  if (ground)
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      const S fb[3] = {fbar_of(i, 0), fbar_of(i, 1), fbar_of(i, 2)};
      adj_ground_force(i, y, p, fb, adj_y, adj_p);
    }
}

template <class S, class XIn, class UIn, class PIn, class XOut, class Tape>
STEER_HD void Fem::step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln,
                        Tape tape) const {
  (void)k;
  (void)tape;
  if (!ln.leader()) return;
  if (integrator == kBackwardEuler) {
    implicit_step<S>(x, u, p, xn);
    return;
  }
  const int N = n_vertices;
  for (int q = 0; q < 6 * N; ++q) xn[q] = S(0);
  for_each_force<S>(
      x, u, p, [&](int i, int c, const S& f) { xn[x_vel(i) + c] += f; },
      [&](int i, const S& m) { xn[x_pos(i)] += m; });
  const S h = S(dt), grav = S(p[p_global(kGravity)]), alpha = S(p[p_global(kMassDamping)]);
  for (int i = 0; i < N; ++i) {
    if (pinned(i)) {
      for (int c = 0; c < 3; ++c) {
        xn[x_pos(i) + c] = S(x[x_pos(i) + c]);
        xn[x_vel(i) + c] = S(0);
      }
      continue;
    }
    const S m = S(xn[x_pos(i)]);
    for (int c = 0; c < 3; ++c) {
      const S v = S(x[x_vel(i) + c]);
      const S a = S(xn[x_vel(i) + c]) / m - (c == 1 ? grav : S(0)) - alpha * v;
      const S vn = v + h * a;
      xn[x_vel(i) + c] = vn;
      xn[x_pos(i) + c] = S(x[x_pos(i) + c]) + h * vn;
    }
  }
}

// The adjoint, for λ = (x̄', v̄') of vertex i:  v̄'_tot = v̄' + h x̄',  ā = h v̄'_tot,
//   x̄_i += x̄',  v̄_i += v̄'_tot − α ā,  f̄_i = ā / m_i,  m̄_i = −ā · f_i / m_i²,  ḡ −= ā_y,  ᾱ −= ā ·
//   v_i
// then each element's forces' VJP for f̄ (fem/element.h; its active level's into ū_a and s̄_e) and
// the mass share's (ρ̂_e ρ_e V_e / 4) cotangent Σ_{i ∈ e} m̄_i into ρ̄_e and ρ̂̄_e, and
// each surface vertex's ground VJP. Pinned vertices pass x̄' to x̄ and nothing else.
template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj,
          class Tape>
STEER_HD void Fem::adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x,
                            UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln,
                            Tape tape) const {
  (void)tape;
  (void)k;
  if (!ln.leader()) return;
  if (integrator == kBackwardEuler) {
    adj_implicit_step<S>(x, u, p, adj_x, adj_u, adj_p, adj_xn);
    return;
  }
  const int N = n_vertices;
  // every vertex's total force f_i [3N] and mass m_i [N], then their cotangents in their place
  S fm[4 * kMaxVertices];
  for (int q = 0; q < 4 * N; ++q) fm[q] = S(0);
  S* force = fm;
  S* mass = fm + 3 * N;
  for_each_force<S>(
      x, u, p, [&](int i, int c, const S& f) { force[3 * i + c] += f; },
      [&](int i, const S& m) { mass[i] += m; });
  const S h = S(dt), alpha = S(p[p_global(kMassDamping)]);
  for (int i = 0; i < N; ++i) {
    if (pinned(i)) {
      for (int c = 0; c < 3; ++c) {
        adj_x[x_pos(i) + c] += S(adj_xn[x_pos(i) + c]);
        force[3 * i + c] = S(0);
      }
      mass[i] = S(0);
      continue;
    }
    const S m = mass[i];
    S mbar = S(0);
    for (int c = 0; c < 3; ++c) {
      const S lx = S(adj_xn[x_pos(i) + c]);
      const S vbar = S(adj_xn[x_vel(i) + c]) + h * lx;
      const S abar = h * vbar;
      const S v = S(x[x_vel(i) + c]);
      adj_x[x_pos(i) + c] += lx;
      adj_x[x_vel(i) + c] += vbar - alpha * abar;
      mbar -= abar * force[3 * i + c] / (m * m);
      force[3 * i + c] = abar / m;  // now f̄_i
      if (c == 1) adj_p[p_global(kGravity)] -= abar;
      adj_p[p_global(kMassDamping)] -= abar * v;
    }
    mass[i] = mbar;  // now m̄_i
  }
  adj_for_each_force<S>(
      x, u, p, [&](int i, int c) { return force[3 * i + c]; }, [&](int i) { return mass[i]; },
      adj_x, adj_u, adj_p);
}

template <class S, class PIn>
void Fem::static_forces(const S* xp, const PIn& p, S* f) const {
  const int N = n_vertices;
  for (int q = 0; q < 3 * N; ++q) f[q] = S(0);
  const S grav = S(p[p_global(kGravity)]);
  for (int e = 0; e < n_elements; ++e) {
    TetNodes<S> n;
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) n.x[a][c] = xp[3 * vertex(e, a) + c], n.v[a][c] = S(0);
    S fe[4][3] = {};
    FemMaterial<S> m = element_material<S>(p, e);
    m.damping = S(0);
    tet_forces(law, n, rest_inverse<S>(e), rest_volume<S>(e), m, ActiveStress<S>{}, fe);
    const S share = vertex_mass_share<S>(p, e);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      for (int c = 0; c < 3; ++c) f[3 * i + c] += fe[a][c];
      f[3 * i + 1] -= share * grav;
    }
  }
  for (int i = 0; i < N; ++i)
    if (pinned(i))
      for (int c = 0; c < 3; ++c) f[3 * i + c] = S(0);
}

template <class S, class PIn>
void Fem::static_force_differential(const S* xp, const PIn& p, const S* dx, S* df) const {
  const int N = n_vertices;
  for (int q = 0; q < 3 * N; ++q) df[q] = S(0);
  for (int e = 0; e < n_elements; ++e) {
    TetNodes<S> n;
    S d[4][3], out[4][3] = {};
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) {
        const int i = vertex(e, a);
        n.x[a][c] = xp[3 * i + c];
        n.v[a][c] = S(0);
        d[a][c] = pinned(i) ? S(0) : dx[3 * i + c];
      }
    tet_force_differential(law, n, rest_inverse<S>(e), rest_volume<S>(e), element_material<S>(p, e),
                           d, out);
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) df[3 * vertex(e, a) + c] += out[a][c];
  }
  for (int i = 0; i < N; ++i)
    if (pinned(i))
      for (int c = 0; c < 3; ++c) df[3 * i + c] = S(0);
}

// centre of mass along axis: Σ m_i x_i / Σ m_i with the lumped masses
template <class S, class XIn, class PIn>
STEER_HD S Fem::center_of_mass(const XIn& x, const PIn& p, int axis) const {
  S mx = S(0), m = S(0);
  for (int e = 0; e < n_elements; ++e) {
    const S share = vertex_mass_share<S>(p, e);
    for (int a = 0; a < 4; ++a) mx += share * S(x[x_pos(vertex(e, a)) + axis]);
    m += S(4) * share;
  }
  return mx / m;
}
template <class S, class XIn, class PIn, class XAdj, class PAdj>
STEER_HD void Fem::adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x,
                                      PAdj& adj_p, const S& adj_c) const {
  S mx = S(0), m = S(0);
  for (int e = 0; e < n_elements; ++e) {
    const S share = vertex_mass_share<S>(p, e);
    for (int a = 0; a < 4; ++a) mx += share * S(x[x_pos(vertex(e, a)) + axis]);
    m += S(4) * share;
  }
  const S c = mx / m;
  for (int e = 0; e < n_elements; ++e) {
    const S share = vertex_mass_share<S>(p, e);
    S sx = S(0);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      sx += S(x[x_pos(i) + axis]);
      adj_x[x_pos(i) + axis] += adj_c * share / m;
    }
    // c = Σ share·x / Σ 4 share: ∂c/∂share_e = (Σ_a x_a − 4 c) / m
    adj_vertex_mass_share(p, e, adj_c * (sx - S(4) * c) / m, adj_p);
  }
}

template <class S, class XIn, class PIn>
STEER_HD S Fem::kinetic_energy(const XIn& x, const PIn& p) const {
  S t = S(0);
  for (int e = 0; e < n_elements; ++e) {
    const S share = vertex_mass_share<S>(p, e);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      for (int c = 0; c < 3; ++c) t += S(0.5) * share * S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
    }
  }
  return t;
}

template <class S, class XIn, class PIn>
STEER_HD S Fem::energy(const XIn& x, const PIn& p) const {
  S u = kinetic_energy<S>(x, p);
  const S grav = S(p[p_global(kGravity)]);
  for (int e = 0; e < n_elements; ++e) {
    const S share = vertex_mass_share<S>(p, e);
    const TetNodes<S> n = gather<S>(x, e);
    for (int a = 0; a < 4; ++a) u += share * grav * n.x[a][1];
    u += tet_energy(law, n, rest_inverse<S>(e), rest_volume<S>(e), element_material<S>(p, e));
  }
  return u;
}

}  // namespace steer
