// Projectile: a point mass in 2D or 3D under gravity, with optional quadratic air drag
// and an optional compliant ground plane y = 0, integrated by symplectic Euler.
//
// state x = (position [m] (dim), velocity [m/s] (dim)); axis 1 (y) is vertical.
// control u = applied force [N] (dim), one per step.
// parameters θ = (gravity g [m/s²], drag c [1/m], mass m [kg],
//                 ground stiffness k [N/m], ground damping d [N·s/m], smoothing width w [m]).
//
// dynamics, one step of length h:
//   a  = u/m − g ŷ − c |v| v + F(y, v_y)/m ŷ
//   v' = v + h a
//   x' = x + h v'                                   (symplectic Euler)
// ground force (penalty, active only with ground = penalty), penetration p = −y, z = p/w:
//   F = k w softplus(z) − d σ(z) v_y
// As w → 0, F → k max(p, 0) − d [p > 0] v_y, the hard penalty law; w > 0 makes F smooth
// so that gradients exist through contact onset.
#pragma once

#include <cmath>
#include <cstdint>

#include "steer/core.h"

namespace steer {

struct Projectile {
  // parameter slots in θ
  enum Param { kGravity = 0, kDrag, kMass, kGroundStiffness, kGroundDamping, kGroundSmoothing, kNumParams };
  enum Ground { kGroundNone = 0, kGroundPenalty = 1 };
  static constexpr int kMaxState = 6;
  static constexpr int kMaxControl = 3;
  static constexpr int kMaxParam = kNumParams;
  static constexpr int kMaxContacts = 1;

  int dim = 2;              // 2 or 3
  double dt = 0.01;         // timestep h [s]
  int ground = kGroundNone;

  STEER_HD int nx() const { return 2 * dim; }
  STEER_HD int nu() const { return dim; }
  STEER_HD int np() const { return kNumParams; }
  STEER_HD int vertical_axis() const { return 1; }

  // ground force on the particle along +y: F = k w softplus(−y/w) − d σ(−y/w) v_y
  template <class S>
  STEER_HD S contact_force(const S& y, const S& vy, const S& k, const S& d, const S& w) const {
    S z = -y / w;
    return k * w * softplus(z) - d * sigmoid(z) * vy;
  }
  // ∂F/∂(y, v_y, k, d, w) applied to the incoming adjoint adj_f
  template <class S>
  STEER_HD void adj_contact_force(const S& y, const S& vy, const S& k, const S& d, const S& w,
                                  S& adj_y, S& adj_vy, S& adj_k, S& adj_d, S& adj_w,
                                  const S& adj_f) const {
    S z = -y / w;
    S sp = softplus(z);
    S sg = sigmoid(z);
    S dsg = sg * (S(1) - sg);  // σ'(z)
    // ∂F/∂z = k w σ(z) − d σ'(z) v_y ;  z = −y/w
    S dF_dz = k * w * sg - d * dsg * vy;
    adj_y += adj_f * dF_dz * (-S(1) / w);
    adj_vy += adj_f * (-d * sg);
    adj_k += adj_f * w * softplus(z);
    adj_d += adj_f * (-sg * vy);
    // ∂F/∂w at fixed y: k softplus(z) + ∂F/∂z · ∂z/∂w, with ∂z/∂w = −z/w
    adj_w += adj_f * (k * sp + dF_dz * (-z / w));
  }

  // the step's shared inputs: |v| for the drag law, and the ground force F (0 without ground)
  template <class S, class XIn, class PIn>
  STEER_HD void speed_and_ground_force(const XIn& x, const PIn& p, S& speed, S& F) const {
    using std::sqrt;
    const int D = dim;
    S vv = S(0);
    for (int i = 0; i < D; ++i) vv += S(x[D + i]) * S(x[D + i]);
    speed = sqrt(vv);
    F = S(0);
    if (ground == kGroundPenalty)
      F = contact_force(S(x[1]), S(x[D + 1]), S(p[kGroundStiffness]), S(p[kGroundDamping]),
                        S(p[kGroundSmoothing]));
  }

  // (x_k, u_k, θ) -> x_{k+1}; one particle, so only the leading lane works
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    using std::sqrt;
    const int D = dim;
    const S h = S(dt);
    const S g = p[kGravity], c = p[kDrag], m = p[kMass];
    // speed |v| for the drag law
    S speed, F;
    speed_and_ground_force<S>(x, p, speed, F);
    for (int i = 0; i < D; ++i) {
      const S vi = x[D + i];
      S a = S(u[i]) / m - c * speed * vi;
      if (i == 1) a += F / m - g;
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
    S speed, F;
    speed_and_ground_force<S>(x, p, speed, F);
    // reverse of x' = x + h v', v' = v + h a: adj_a = h (adj_v' + h adj_x')
    S adj_a[kMaxControl] = {};
    S adj_c = S(0), adj_m = S(0), adj_F = S(0), a_dot_v = S(0);
    for (int i = 0; i < D; ++i) {
      const S adj_vn = S(adj_xn[D + i]) + h * S(adj_xn[i]);
      adj_x[i] += S(adj_xn[i]);
      adj_x[D + i] += adj_vn;
      adj_a[i] = h * adj_vn;
      // a_i = u_i/m − c |v| v_i (+ F/m − g on the vertical axis)
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
      S ay = S(0), avy = S(0), ak = S(0), ad = S(0), aw = S(0);
      adj_contact_force(S(x[1]), S(x[D + 1]), S(p[kGroundStiffness]), S(p[kGroundDamping]),
                        S(p[kGroundSmoothing]), ay, avy, ak, ad, aw, adj_F);
      adj_x[1] += ay;
      adj_x[D + 1] += avy;
      adj_p[kGroundStiffness] += ak;
      adj_p[kGroundDamping] += ad;
      adj_p[kGroundSmoothing] += aw;
    }
    adj_p[kDrag] += adj_c;
    adj_p[kMass] += adj_m;
  }

  // contact points and whether each is active (penetrating) in state x
  STEER_HD int num_contacts() const { return ground == kGroundPenalty ? 1 : 0; }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn& x, const PIn& p, int c) const {
    (void)c, (void)p;
    return S(x[1]) < S(0);
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
  // true when the parameters make the motion conservative (no drag, no ground), so
  // an energy drift is the integrator's, not the physics'.
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    return ground == kGroundNone && S(p[kDrag]) == S(0);
  }
};

}  // namespace steer
