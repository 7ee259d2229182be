// Projectile: a point mass in 2D or 3D under gravity, with optional quadratic air drag, an
// optional compliant ground plane and an optional compliant wall, integrated by symplectic Euler.
//
// state x = (position [m] (dim), velocity [m/s] (dim)); axis 1 (y) is vertical.
// control u = applied force [N] (dim), one per step.
// parameters θ = (gravity g [m/s²], drag c [1/m], mass m [kg],
//                 ground stiffness k [N/m], ground damping d [N·s/m], smoothing width w [m]);
// model constants (not in θ, so not differentiated): the particle radius r [m] and the wall
// plane's position X [m] and normal sign s.
//
// dynamics, one step of length h:
//   a  = u/m − g ŷ − c |v| v + (F_g ŷ + s F_w x̂)/m
//   v' = v + h a
//   x' = x + h v'                                   (symplectic Euler)
// Contact with a plane of unit normal n: the gap between the particle's surface and the plane
// is c = n·(x − x_plane) − r, the normal velocity v_n = n·v, and the force along n is
//   smooth (contact kContactSmooth), z = −c/w:  F = k w softplus(z) − d σ(z) D(v_n)
//   hard   (contact kContactHard):              F = [c < 0] (−k c − d D(v_n))
// with D(v) = v (damping_law kDampAlways: damped while separating too) or D(v) = min(v, 0)
// (kDampApproach: damped only while approaching, the law of Warp's warp.sim). The smooth law
// tends to the hard one as w → 0; w > 0 makes F differentiable through contact onset, while
// the hard law is only piecewise smooth (gradients hold between contact events).
// The ground is the plane y = 0 (n = ŷ, c = y − r). The wall is the plane x = X with normal
// n = s x̂, s = wall_normal = ±1 (the particle keeps to the side x − X has the sign of s), with
// the ground's k, d, w and damping law.
#pragma once

#include <cmath>
#include <cstdint>

#include "steer/core.h"

namespace steer {

struct Projectile {
  // parameter slots in θ
  enum Param {
    kGravity = 0,
    kDrag,
    kMass,
    kGroundStiffness,
    kGroundDamping,
    kGroundSmoothing,
    kNumParams
  };
  enum Ground { kGroundNone = 0, kGroundPenalty = 1 };
  enum DampingLaw { kDampAlways = 0, kDampApproach = 1 };
  enum Contact { kContactSmooth = 0, kContactHard = 1 };
  static constexpr int kMaxState = 6;
  static constexpr int kMaxControl = 3;
  // kernels/rollout_projectile_<precision>.cu (backend.h, has_cuda_kernels)
  static constexpr bool kCudaKernels = true;
  static constexpr int kMaxParam = kNumParams;
  static constexpr int kMaxContacts = 2;

  int dim = 2;       // 2 or 3
  double dt = 0.01;  // timestep h [s]
  int ground = kGroundNone;
  int wall = kGroundNone;      // kGroundPenalty: the wall plane x = wall_position
  int wall_normal = -1;        // s = ±1: the wall's normal is s x̂
  double wall_position = 0.0;  // X [m]
  double radius = 0.0;         // r [m]: the planes act on the particle's surface
  int damping_law = kDampAlways;
  int contact = kContactSmooth;  // the penalty law of both planes (w unused by kContactHard)

  STEER_HD int nx() const { return 2 * dim; }
  STEER_HD int nu() const { return dim; }
  STEER_HD int np() const { return kNumParams; }
  STEER_HD int vertical_axis() const { return 1; }

  // D(v_n): the normal velocity the damping acts on, and its derivative D'(v_n)
  template <class S>
  STEER_HD S damped_velocity(const S& vn) const {
    if (damping_law == kDampApproach && !(value_of(vn) < 0)) return S(0);
    return vn;
  }
  template <class S>
  STEER_HD S damped_velocity_slope(const S& vn) const {
    if (damping_law == kDampApproach && !(value_of(vn) < 0)) return S(0);
    return S(1);
  }

  // contact force along a plane's normal [N] for the gap c [m] and normal velocity v_n [m/s]:
  // smooth F = k w softplus(−c/w) − d σ(−c/w) D(v_n); hard F = [c < 0] (−k c − d D(v_n))
  template <class S>
  STEER_HD S contact_force(const S& c, const S& vn, const S& k, const S& d, const S& w) const {
    if (contact == kContactHard) {
      if (!(value_of(c) < 0)) return S(0);
      return -k * c - d * damped_velocity(vn);
    }
    S z = -c / w;
    return k * w * softplus(z) - d * sigmoid(z) * damped_velocity(vn);
  }
  // ∂F/∂(c, v_n, k, d, w) applied to the incoming adjoint adj_f
  template <class S>
  STEER_HD void adj_contact_force(const S& c, const S& vn, const S& k, const S& d, const S& w,
                                  S& adj_c, S& adj_vn, S& adj_k, S& adj_d, S& adj_w,
                                  const S& adj_f) const {
    const S Dv = damped_velocity(vn), dD = damped_velocity_slope(vn);
    if (contact == kContactHard) {
      // the hard law does not read w: its adjoint is 0
      if (!(value_of(c) < 0)) return;
      adj_c += adj_f * (-k);
      adj_vn += adj_f * (-d * dD);
      adj_k += adj_f * (-c);
      adj_d += adj_f * (-Dv);
      return;
    }
    S z = -c / w;
    S sp = softplus(z);
    S sg = sigmoid(z);
    S dsg = sg * (S(1) - sg);  // σ'(z)
    // ∂F/∂z = k w σ(z) − d σ'(z) D ;  z = −c/w
    S dF_dz = k * w * sg - d * dsg * Dv;
    adj_c += adj_f * dF_dz * (-S(1) / w);
    adj_vn += adj_f * (-d * sg * dD);
    adj_k += adj_f * w * softplus(z);
    adj_d += adj_f * (-sg * Dv);
    // ∂F/∂w at fixed c: k softplus(z) + ∂F/∂z · ∂z/∂w, with ∂z/∂w = −z/w
    adj_w += adj_f * (k * sp + dF_dz * (-z / w));
  }

  // gaps c [m] of the ground (c = y − r) and of the wall (c = s (x − X) − r)
  template <class S, class XIn, class PIn>
  STEER_HD S ground_gap(const XIn& x, const PIn& p) const {
    (void)p;
    return S(x[1]) - S(radius);
  }
  template <class S, class XIn, class PIn>
  STEER_HD S wall_gap(const XIn& x, const PIn& p) const {
    (void)p;
    return S(double(wall_normal)) * (S(x[0]) - S(wall_position)) - S(radius);
  }

  // the step's shared inputs: |v| for the drag law, the ground force F (along +y) and the
  // wall force Fw (along +x); each 0 without its plane
  template <class S, class XIn, class PIn>
  STEER_HD void speed_and_ground_force(const XIn& x, const PIn& p, S& speed, S& F, S& Fw) const {
    using std::sqrt;
    const int D = dim;
    S vv = S(0);
    for (int i = 0; i < D; ++i) vv += S(x[D + i]) * S(x[D + i]);
    speed = sqrt(vv);
    F = S(0);
    Fw = S(0);
    if (ground == kGroundPenalty)
      F = contact_force(ground_gap<S>(x, p), S(x[D + 1]), S(p[kGroundStiffness]),
                        S(p[kGroundDamping]), S(p[kGroundSmoothing]));
    if (wall == kGroundPenalty) {
      const S s = S(double(wall_normal));
      Fw = s * contact_force(wall_gap<S>(x, p), s * S(x[D]), S(p[kGroundStiffness]),
                             S(p[kGroundDamping]), S(p[kGroundSmoothing]));
    }
  }

  // (x_k, u_k, θ) -> x_{k+1}; one particle, so only the leading lane works
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    using std::sqrt;
    const int D = dim;
    const S h = S(dt);
    const S g = p[kGravity], c = p[kDrag], m = p[kMass];
    // speed |v| for the drag law
    S speed, F, Fw;
    speed_and_ground_force<S>(x, p, speed, F, Fw);
    for (int i = 0; i < D; ++i) {
      const S vi = x[D + i];
      S a = S(u[i]) / m - c * speed * vi;
      if (i == 1) a += F / m - g;
      if (i == 0 && wall == kGroundPenalty) a += Fw / m;
      const S vn = vi + h * a;
      xn[D + i] = vn;
      xn[i] = S(x[i]) + h * vn;
    }
  }
  // vector-Jacobian product of step: accumulates adj_x, adj_u, adj_p from adj_xn
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    using std::sqrt;
    const int D = dim;
    const S h = S(dt);
    const S g = p[kGravity], c = p[kDrag], m = p[kMass];
    (void)g;
    S speed, F, Fw;
    speed_and_ground_force<S>(x, p, speed, F, Fw);
    // reverse of x' = x + h v', v' = v + h a: adj_a = h (adj_v' + h adj_x')
    S adj_a[kMaxControl] = {};
    S adj_c = S(0), adj_m = S(0), adj_F = S(0), a_dot_v = S(0);
    for (int i = 0; i < D; ++i) {
      const S adj_vn = S(adj_xn[D + i]) + h * S(adj_xn[i]);
      adj_x[i] += S(adj_xn[i]);
      adj_x[D + i] += adj_vn;
      adj_a[i] = h * adj_vn;
      // a_i = u_i/m − c |v| v_i (+ F/m − g on the vertical axis, + Fw/m on x)
      adj_u[i] += adj_a[i] / m;
      adj_m += -adj_a[i] * S(u[i]) / (m * m);
      adj_c += -adj_a[i] * speed * S(x[D + i]);
      a_dot_v += adj_a[i] * S(x[D + i]);
    }
    // drag: ∂(|v| v_i)/∂v_j = |v| δ_ij + v_i v_j / |v|  (second term taken as 0 at v = 0)
    for (int j = 0; j < D; ++j) {
      S dj = speed * adj_a[j];
      if (speed > S(0)) dj += S(x[D + j]) * a_dot_v / speed;
      adj_x[D + j] += -c * dj;
    }
    adj_p[kGravity] += -adj_a[1];
    if (ground == kGroundPenalty) {
      adj_F = adj_a[1] / m;
      adj_m += -adj_a[1] * F / (m * m);
      S ac = S(0), avy = S(0), ak = S(0), ad = S(0), aw = S(0);
      adj_contact_force(ground_gap<S>(x, p), S(x[D + 1]), S(p[kGroundStiffness]),
                        S(p[kGroundDamping]), S(p[kGroundSmoothing]), ac, avy, ak, ad, aw, adj_F);
      // c = y − r
      adj_x[1] += ac;
      adj_x[D + 1] += avy;
      adj_p[kGroundStiffness] += ak;
      adj_p[kGroundDamping] += ad;
      adj_p[kGroundSmoothing] += aw;
    }
    if (wall == kGroundPenalty) {
      // Fw = s F(c, s v_x), c = s (x − X) − r
      const S s = S(double(wall_normal));
      const S adj_Fw = adj_a[0] / m;
      adj_m += -adj_a[0] * Fw / (m * m);
      S ac = S(0), avn = S(0), ak = S(0), ad = S(0), aw = S(0);
      adj_contact_force(wall_gap<S>(x, p), s * S(x[D]), S(p[kGroundStiffness]),
                        S(p[kGroundDamping]), S(p[kGroundSmoothing]), ac, avn, ak, ad, aw,
                        S(s * adj_Fw));
      adj_x[0] += s * ac;
      adj_x[D] += s * avn;
      adj_p[kGroundStiffness] += ak;
      adj_p[kGroundDamping] += ad;
      adj_p[kGroundSmoothing] += aw;
    }
    adj_p[kDrag] += adj_c;
    adj_p[kMass] += adj_m;
  }

  // contact points (the ground, then the wall) and whether each is active (penetrating) in x
  STEER_HD int num_contacts() const {
    return (ground == kGroundPenalty ? 1 : 0) + (wall == kGroundPenalty ? 1 : 0);
  }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn& x, const PIn& p, int c) const {
    if (c == 0 && ground == kGroundPenalty) return ground_gap<S>(x, p) < S(0);
    return wall_gap<S>(x, p) < S(0);
  }
  // centre of mass along an axis [m]: the particle's position
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn& p, int axis) const {
    (void)p;
    return S(x[axis]);
  }
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int axis, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const {
    (void)x, (void)p, (void)adj_p;
    adj_x[axis] += adj_c;
  }
  // mechanical energy per the conservative part of the model: ½ m |v|² + m g y [J]
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const {
    S e = S(0);
    for (int i = 0; i < dim; ++i) e += S(0.5) * S(x[dim + i]) * S(x[dim + i]);
    return S(p[kMass]) * (e + S(p[kGravity]) * S(x[1]));
  }
  // kinetic energy ½ m |v|² [J]
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const {
    S e = S(0);
    for (int i = 0; i < dim; ++i) e += S(0.5) * S(x[dim + i]) * S(x[dim + i]);
    return S(p[kMass]) * e;
  }
  // true when the parameters make the motion conservative (no drag, no ground, no wall), so
  // an energy drift is the integrator's, not the physics'.
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    return ground == kGroundNone && wall == kGroundNone && S(p[kDrag]) == S(0);
  }
};

}  // namespace steer

// The CPU path of these models is compiled once, in src/models/projectile/projectile_model.cpp
// (STEER_CPU_RUN_BATCH, steer/cpu_backend.h); device code never calls it.
#if !defined(__CUDACC__)
#include "steer/cpu_backend.h"

namespace steer {
STEER_CPU_RUN_BATCH(extern, Projectile, double);
STEER_CPU_RUN_BATCH(extern, Projectile, float);
}  // namespace steer
#endif
