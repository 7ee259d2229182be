// Fem's step and its adjoint, the contact forces, the statics and the diagnostics.
//
// One step of length h, symplectic Euler, with lumped masses m_i = Σ_{e ∋ i} ρ̂_e ρ_e V_e / 4 (or
// Fem::vertex_mass):
//   f_i  = Σ_{e ∋ i} f_{e,i} (fem/element.h; with the element's active stress u_a s_e)
//          + Σ_{t ∋ i} f_{t,i} (the surface membrane, fem/membrane.h) + Σ_b contact_{b,i}
//   v'_i = v_i + h (f_i / m_i − g ŷ − α v_i),  x'_i = x_i + h v'_i
//   pinned vertices: x'_i = x_i, v'_i = 0
// The contacts (surface vertices against the ground y = y_g and the obstacles) with
// fem/contact.h's laws: a normal force from the depth and smoothed Coulomb friction bounded by its
// elastic part.
// The forward step accumulates masses and forces in x_{k+1} itself (vertex i's mass in its
// position slot x, its force in its velocity slots) before it writes the new state there, so it
// needs no storage; the adjoint, which needs every vertex's total force for ∂/∂m_i, keeps them on
// the stack (kMaxVertices).
#pragma once

#include "steer/models/fem/model.h"

namespace steer {

template <class S, class PIn>
STEER_HD FemContactLaw<S> Fem::contact_params(const PIn& p) const {
  FemContactLaw<S> q;
  q.kind = contact_law;
  q.approach_only = contact_approach_only;
  q.k = S(p[p_global(kGroundStiffness)]);
  q.dc = S(p[p_global(kGroundDamping)]);
  q.w = S(p[p_global(kGroundSmoothing)]);
  q.mu = S(p[p_global(kFriction)]);
  q.vs = S(p[p_global(kFrictionSmoothing)]);
  return q;
}

template <class S, class XIn, class PIn>
STEER_HD FemContactFrame<S> Fem::contact_frame(int b, int i, const XIn& x, const PIn& p) const {
  const S r = S(vertex_radius);
  if (ground && b == 0) {
    FemContactFrame<S> f;
    f.d = r + S(p[p_global(kGroundHeight)]) - S(x[x_pos(i) + 1]);
    f.n[0] = f.n[2] = S(0);
    f.n[1] = S(1);
    return f;
  }
  const S xi[3] = {S(x[x_pos(i)]), S(x[x_pos(i) + 1]), S(x[x_pos(i) + 2])};
  return obstacle_frame(obstacle(b - (ground ? 1 : 0)), xi, r);
}

template <class S, class XIn, class PIn>
STEER_HD void Fem::contact_force(int b, int i, const XIn& x, const PIn& p, S* out) const {
  const FemContactFrame<S> f = contact_frame<S>(b, i, x, p);
  const S v[3] = {S(x[x_vel(i)]), S(x[x_vel(i) + 1]), S(x[x_vel(i) + 2])};
  fem_contact_force(contact_params<S>(p), f.d, f.n, v, out);
}

template <class S, class XIn, class PIn, class XAdj, class PAdj>
STEER_HD void Fem::adj_contact_force(int b, int i, const XIn& x, const PIn& p, const S* fbar,
                                     XAdj& adj_x, PAdj& adj_p) const {
  const FemContactFrame<S> f = contact_frame<S>(b, i, x, p);
  const S v[3] = {S(x[x_vel(i)]), S(x[x_vel(i) + 1]), S(x[x_vel(i) + 2])};
  const FemContactLaw<S> q = contact_params<S>(p);
  FemContactLaw<S> qb;
  qb.k = qb.dc = qb.w = qb.mu = qb.vs = S(0);
  S db = S(0), nb[3] = {S(0), S(0), S(0)}, vb[3] = {S(0), S(0), S(0)};
  adj_fem_contact_force(q, f.d, f.n, v, fbar, db, nb, vb, qb);
  adj_p[p_global(kGroundStiffness)] += qb.k;
  adj_p[p_global(kGroundDamping)] += qb.dc;
  adj_p[p_global(kGroundSmoothing)] += qb.w;
  adj_p[p_global(kFriction)] += qb.mu;
  adj_p[p_global(kFrictionSmoothing)] += qb.vs;
  for (int c = 0; c < 3; ++c) adj_x[x_vel(i) + c] += vb[c];
  if (ground && b == 0) {  // d = r + y_g − y, n = ŷ fixed
    adj_p[p_global(kGroundHeight)] += db;
    adj_x[x_pos(i) + 1] -= db;
    return;
  }
  const S xi[3] = {S(x[x_pos(i)]), S(x[x_pos(i) + 1]), S(x[x_pos(i) + 2])};
  S xb[3] = {S(0), S(0), S(0)};
  adj_obstacle_frame(obstacle(b - (ground ? 1 : 0)), xi, f, db, nb, xb);
  for (int c = 0; c < 3; ++c) adj_x[x_pos(i) + c] += xb[c];
}

// every element's and the ground's forces at state y (positions and velocities as in x), with
// every element's mass share: add_force(i, c, f) for coordinate c of vertex i [N],
// add_mass(i, m) [kg]
template <class S, class YIn, class UIn, class PIn, class AddForce, class AddMass>
STEER_HD void Fem::for_each_force(const YIn& y, const UIn& u, const PIn& p, AddForce add_force,
                                  AddMass add_mass) const {
  for_each_vertex_mass<S>(p, add_mass);
  for (int e = 0; e < n_elements; ++e) {
    const TetNodes<S> nodes = gather<S>(y, e);
    S f[4][3] = {};
    tet_forces(law, nodes, rest_inverse<S>(e), rest_volume<S>(e), element_material<S>(p, e),
               element_active<S>(u, p, e), f);
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) add_force(vertex(e, a), c, f[a][c]);
  }
  if (n_triangles > 0) {
    const MembraneMaterial<S> q = membrane_material<S>(p);
    for (int t = 0; t < n_triangles; ++t) {
      S f[3][3];
      const double* r = triangle_rest(t);
      membrane_forces(gather_triangle<S>(y, t), r, r[4], q, f);
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) add_force(triangle_vertex(t, a), c, f[a][c]);
    }
  }
  for (int b = 0; b < n_contact_bodies(); ++b)
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      S g[3];
      contact_force<S>(b, i, y, p, g);
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
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) fbar[a][c] = fbar_of(vertex(e, a), c);
    FemMaterial<S> mbar;
    mbar.mu = mbar.lambda = mbar.mu_l = mbar.lambda_l = mbar.damping = S(0);
    S level_bar = S(0);
    adj_tet_forces(law, nodes, rest_inverse<S>(e), rest_volume<S>(e), element_material<S>(p, e),
                   element_active<S>(u, p, e), fbar, xbar, vbar, mbar, level_bar);
    adj_element_material(p, e, mbar, adj_p);
    adj_element_active(u, p, e, level_bar, adj_u, adj_p);
    for (int a = 0; a < 4; ++a) {
      const int i = vertex(e, a);
      for (int c = 0; c < 3; ++c) {
        adj_y[x_pos(i) + c] += xbar[a][c];
        adj_y[x_vel(i) + c] += vbar[a][c];
      }
    }
  }
  adj_for_each_vertex_mass<S>(p, mbar_of, adj_p);
  if (n_triangles > 0) {
    const MembraneMaterial<S> q = membrane_material<S>(p);
    MembraneMaterial<S> qb{S(0), S(0), S(0)};
    for (int t = 0; t < n_triangles; ++t) {
      S fb[3][3], xb[3][3] = {}, vb[3][3] = {};
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) fb[a][c] = fbar_of(triangle_vertex(t, a), c);
      const double* r = triangle_rest(t);
      adj_membrane_forces(gather_triangle<S>(y, t), r, r[4], q, fb, xb, vb, qb);
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) {
          adj_y[x_pos(triangle_vertex(t, a)) + c] += xb[a][c];
          adj_y[x_vel(triangle_vertex(t, a)) + c] += vb[a][c];
        }
    }
    adj_p[p_global(kMembraneMu)] += qb.k_mu;
    adj_p[p_global(kMembraneLambda)] += qb.k_lambda;
    adj_p[p_global(kMembraneDamping)] += qb.k_damp;
  }
  for (int b = 0; b < n_contact_bodies(); ++b)
    for (int s = 0; s < n_surface; ++s) {
      const int i = surface_vertex(s);
      const S fb[3] = {fbar_of(i, 0), fbar_of(i, 1), fbar_of(i, 2)};
      adj_contact_force(b, i, y, p, fb, adj_y, adj_p);
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
// each surface vertex's contacts' VJP. Pinned vertices pass x̄' to x̄ and nothing else.
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
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) f[3 * vertex(e, a) + c] += fe[a][c];
  }
  for_each_vertex_mass<S>(p, [&](int i, const S& mi) { f[3 * i + 1] -= mi * grav; });
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

// centre of mass along axis: Σ m_i x_i / Σ m_i
template <class S, class XIn, class PIn>
STEER_HD S Fem::center_of_mass(const XIn& x, const PIn& p, int axis) const {
  S mx = S(0), m = S(0);
  for_each_vertex_mass<S>(p, [&](int i, const S& mi) {
    mx += mi * S(x[x_pos(i) + axis]);
    m += mi;
  });
  return mx / m;
}
// x̄_i += c̄ m_i / M,  m̄_i = c̄ (x_i − c) / M
template <class S, class XIn, class PIn, class XAdj, class PAdj>
STEER_HD void Fem::adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x,
                                      PAdj& adj_p, const S& adj_c) const {
  S mx = S(0), m = S(0);
  for_each_vertex_mass<S>(p, [&](int i, const S& mi) {
    mx += mi * S(x[x_pos(i) + axis]);
    m += mi;
  });
  const S c = mx / m;
  for_each_vertex_mass<S>(p, [&](int i, const S& mi) { adj_x[x_pos(i) + axis] += adj_c * mi / m; });
  adj_for_each_vertex_mass<S>(
      p, [&](int i) { return adj_c * (S(x[x_pos(i) + axis]) - c) / m; }, adj_p);
}

template <class S, class XIn, class PIn>
STEER_HD S Fem::kinetic_energy(const XIn& x, const PIn& p) const {
  S t = S(0);
  for_each_vertex_mass<S>(p, [&](int i, const S& mi) {
    for (int c = 0; c < 3; ++c) t += S(0.5) * mi * S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
  });
  return t;
}

template <class S, class XIn, class PIn>
STEER_HD S Fem::energy(const XIn& x, const PIn& p) const {
  S u = kinetic_energy<S>(x, p);
  const S grav = S(p[p_global(kGravity)]);
  for_each_vertex_mass<S>(p, [&](int i, const S& mi) { u += mi * grav * S(x[x_pos(i) + 1]); });
  for (int e = 0; e < n_elements; ++e)
    u += tet_energy(law, gather<S>(x, e), rest_inverse<S>(e), rest_volume<S>(e),
                    element_material<S>(p, e));
  for (int t = 0; t < n_triangles; ++t)
    u += membrane_energy(gather_triangle<S>(x, t), triangle_rest(t), triangle_rest(t)[4],
                         membrane_material<S>(p));
  return u;
}

}  // namespace steer
