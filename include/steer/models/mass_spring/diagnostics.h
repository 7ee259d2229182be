// MassSpring's diagnostics: ground contacts, the centre of mass and its adjoint, energies.
//   c     = Σ m_i x_i / Σ m_i                   centre of mass along an axis [m]
//   ∂c/∂x_i = m_i/M,  ∂c/∂m_i = (x_i − c)/M
//   E     = ½ Σ m_i |v_i|² + Σ m_i g y_i + ½ Σ_s k_s (ℓ_s − L0_s)²   [J]
#pragma once

#include "steer/models/mass_spring/springs.h"

namespace steer {

// a particle touches the ground while below the ground height. The impact ground leaves a
// landed particle exactly at y_g, and a bouncing one above it at y_g + (1 − s) h v'_y after the
// step it hit the ground in: it counts as touching at the end of a step in which it was at or
// below y_g, i.e. when y ≤ y_g or y − h v_y < y_g (x' = x + h v' in free flight, so y − h v_y is
// where the step began; after a bounce it is y_g − s h v'_y)
template <class S, class XIn, class PIn>
STEER_HD bool MassSpring::in_contact(const XIn& x, const PIn& p, int i) const {
  const S y = S(x[x_pos(i) + 1]), yg = S(p[p_global(kGroundHeight)]);
  if (impact) return y <= yg || y - S(dt) * S(x[x_vel(i) + 1]) < yg;
  return y < yg;
}
// centre of mass along an axis: Σ m_i x_i / Σ m_i [m]
template <class S, class XIn, class PIn>
STEER_HD S MassSpring::center_of_mass(const XIn& x, const PIn& p, int axis) const {
  S mx = S(0), M = S(0);
  for (int i = 0; i < n_particles; ++i) {
    mx += S(p[p_mass(i)]) * S(x[x_pos(i) + axis]);
    M += S(p[p_mass(i)]);
  }
  return mx / M;
}
// ∂c/∂x_i = m_i/M,  ∂c/∂m_i = (x_i − c)/M
template <class S, class XIn, class PIn, class XAdj, class PAdj>
STEER_HD void MassSpring::adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x,
                                             PAdj& adj_p, const S& adj_c) const {
  S mx = S(0), M = S(0);
  for (int i = 0; i < n_particles; ++i) {
    mx += S(p[p_mass(i)]) * S(x[x_pos(i) + axis]);
    M += S(p[p_mass(i)]);
  }
  const S c = mx / M;
  for (int i = 0; i < n_particles; ++i) {
    adj_x[x_pos(i) + axis] += adj_c * S(p[p_mass(i)]) / M;
    adj_p[p_mass(i)] += adj_c * (S(x[x_pos(i) + axis]) - c) / M;
  }
}
// kinetic ½ Σ m|v|², plus gravity and spring potentials [J]
template <class S, class XIn, class PIn>
STEER_HD S MassSpring::kinetic_energy(const XIn& x, const PIn& p) const {
  S e = S(0);
  for (int i = 0; i < n_particles; ++i)
    for (int c = 0; c < dim; ++c)
      e += S(0.5) * S(p[p_mass(i)]) * S(x[x_vel(i) + c]) * S(x[x_vel(i) + c]);
  return e;
}
template <class S, class XIn, class PIn>
STEER_HD S MassSpring::energy(const XIn& x, const PIn& p) const {
  using std::sqrt;
  S e = kinetic_energy<S>(x, p);
  for (int i = 0; i < n_particles; ++i)
    e += S(p[p_mass(i)]) * S(p[p_global(kGravity)]) * S(x[x_pos(i) + 1]);
  for (int s = 0; s < n_springs; ++s) {
    S l2 = S(0);
    for (int c = 0; c < dim; ++c) {
      const S d = S(x[x_pos(end_b(s)) + c]) - S(x[x_pos(end_a(s)) + c]);
      l2 += d * d;
    }
    const S stretch = sqrt(l2) - rest_length<S>(s, p);
    e += S(0.5) * S(p[p_stiffness(s)]) * stretch * stretch;
  }
  return e;
}
// conservative: no damping of any kind, no ground, no actuation, and springs without a length
// offset (whose force is not the gradient of E's ½ k (ℓ − L0)²)
template <class S, class PIn>
STEER_HD bool MassSpring::conservative(const PIn& p) const {
  if (ground || length_offset != 0 || !(S(p[p_global(kVelocityDamping)]) == S(0))) return false;
  for (int s = 0; s < n_springs; ++s) {
    if (!(S(p[p_damping(s)]) == S(0))) return false;
    if (actuator(s) >= 0 && !(S(p[p_amplitude(s)]) == S(0))) return false;
  }
  return true;
}

}  // namespace steer
