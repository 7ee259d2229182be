// Articulated: spatial tendons (MuJoCo's <spatial> through sites, no wrapping): tendon t is the
// path through its sites x_0 … x_{n−1} (world positions: a site on a body moves with it, a world
// site is fixed), of length
//   L = Σ_i ρ_i,  ρ_i = sqrt(|x_{i+1} − x_i|² + ε²)  (ε = 10⁻¹² m keeps u_i defined where two
//   sites meet; it changes L by under 10⁻²⁴/ρ),  u_i = (x_{i+1} − x_i)/ρ_i,
// and speed L̇ = Σ_i u_i · (ẋ_{i+1} − ẋ_i). Its force, with the fixed tendons' θ slots,
//   f = −k (L − L0) − d L̇ + f_l(L)  (f_l the joints' limit law on its range, actuator.h),
// pulls each segment's ends together: τ_e += f u_i · J_e(x_{i+1}) − f u_i · J_e(x_i), J_e the
// point Jacobian of joint e above the site's body. Everything is explicit (euler and rk4; the
// config refuses implicitfast with spatial tendons). The adjoint of a step with spatial tendons
// is the dual-number one (adj_step), so only the CPU's scalar capacity (kFluid) has them.
#pragma once

#include "steer/models/articulated/model.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/actuator.h"

namespace steer {

namespace spatial_detail {

// site s's world position and, under joint velocities v, its velocity
template <class Model, class S>
STEER_HD void site_point(const Model& m, const typename Model::template Kin<S>& K, int s,
                         const S* v, S* x, S* xd) {
  const int b = m.site_body[s];
  for (int i = 0; i < 3; ++i) xd[i] = S(0);
  if (b < 0) {
    for (int i = 0; i < 3; ++i) x[i] = S(m.site_pos[s][i]);
    return;
  }
  m.body_point(K, b, m.site_pos[s], x);
  for (int e = b; e >= 0; e = m.parent[e]) {
    if (m.joint[e] == Model::kFixed) continue;
    S je[3];
    m.point_jacobian(K, e, x, je);
    for (int i = 0; i < 3; ++i) xd[i] += je[i] * v[m.dof[e]];
  }
}

// τ_e += w · J_e(x) for the joints e above site s's body
template <class Model, class S>
STEER_HD void add_site_force(const Model& m, const typename Model::template Kin<S>& K, int s,
                             const S* x, const S* w, S* tau) {
  for (int e = m.site_body[s]; e >= 0; e = m.parent[e]) {
    if (m.joint[e] == Model::kFixed) continue;
    S je[3];
    m.point_jacobian(K, e, x, je);
    tau[m.dof[e]] += je[0] * w[0] + je[1] * w[1] + je[2] * w[2];
  }
}

}  // namespace spatial_detail

// spatial tendon t's length L [m] and speed L̇ [m/s] at the kinematics K and joint velocities v
template <class Model, class S>
STEER_HD S spatial_tendon_length(const Model& m, const typename Model::template Kin<S>& K, int t,
                                 const S* v, S& Ldot) {
  using std::sqrt;
  S L = S(0);
  Ldot = S(0);
  S x0[3], xd0[3];
  spatial_detail::site_point<Model, S>(m, K, m.tendon_path[t][0], v, x0, xd0);
  for (int i = 1; i < m.tendon_path_n[t]; ++i) {
    S x1[3], xd1[3];
    spatial_detail::site_point<Model, S>(m, K, m.tendon_path[t][i], v, x1, xd1);
    const S dl[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
    const S rho = sqrt(dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2] + S(1e-24));
    L += rho;
    Ldot +=
        (dl[0] * (xd1[0] - xd0[0]) + dl[1] * (xd1[1] - xd0[1]) + dl[2] * (xd1[2] - xd0[2])) / rho;
    for (int k = 0; k < 3; ++k) x0[k] = x1[k], xd0[k] = xd1[k];
  }
  return L;
}

// τ += the spatial tendons' generalized forces
template <class Model, class S, class PIn>
STEER_HD void spatial_tendon_forces(const Model& m, const typename Model::template Kin<S>& K,
                                    const S* v, const PIn& p, S* tau) {
  if constexpr (Model::kFluid) {
    if (m.n_spatial == 0) return;
    using std::sqrt;
    for (int t = 0; t < m.n_tendons; ++t) {
      if (m.tendon_path_n[t] < 2) continue;
      S Ldot;
      const S L = spatial_tendon_length<Model, S>(m, K, t, v, Ldot);
      S f = -S(p[m.p_tendon(t, Model::kTendonStiffness)]) *
                (L - S(p[m.p_tendon(t, Model::kTendonSpringLength)])) -
            S(p[m.p_tendon(t, Model::kTendonDamping)]) * Ldot;
      if (m.joint_limits && m.tendon_limited[t])
        f += m.limit_law(m.tendon_lower[t], m.tendon_upper[t], L);
      S x0[3], xd[3];
      spatial_detail::site_point<Model, S>(m, K, m.tendon_path[t][0], v, x0, xd);
      for (int i = 1; i < m.tendon_path_n[t]; ++i) {
        S x1[3];
        spatial_detail::site_point<Model, S>(m, K, m.tendon_path[t][i], v, x1, xd);
        const S dl[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
        const S rho = sqrt(dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2] + S(1e-24));
        // the segment pulls x_{i+1} towards x_i with f u and x_i towards x_{i+1}
        const S w1[3] = {f * dl[0] / rho, f * dl[1] / rho, f * dl[2] / rho};
        const S w0[3] = {-w1[0], -w1[1], -w1[2]};
        spatial_detail::add_site_force<Model, S>(m, K, m.tendon_path[t][i], x1, w1, tau);
        spatial_detail::add_site_force<Model, S>(m, K, m.tendon_path[t][i - 1], x0, w0, tau);
        for (int k = 0; k < 3; ++k) x0[k] = x1[k];
      }
    }
  }
}

}  // namespace steer
