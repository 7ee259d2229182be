// A damped harmonic oscillator, the test-only model (model.type "oscillator"): a mass m [kg] on
// a spring of stiffness k [N/m] and a damper c [N·s/m], pushed by the control force u [N].
//
//   state x = (q [m], v [m/s]), control u = (F [N]), parameters θ = (k, c, m)
//   a = (F − k q − c v) / m,   symplectic Euler:  v' = v + h a,  q' = q + h v'
//
// It exists to prove that a model is one folder plus one line of the registered-models list:
// this folder is registered the documented way (docs/design.md, "Adding a model") and runs in
// the CLI, Python, the report and the benchmark without a line anywhere else
// (tests/models/oscillator/CMakeLists.txt).
#pragma once

#include "steer/core.h"

namespace steer {

struct Oscillator {
  enum Param { kStiffness = 0, kDamping, kMass, kNumParams };
  static constexpr int kMaxState = 2;
  static constexpr int kMaxControl = 1;
  static constexpr int kMaxParam = kNumParams;

  double dt = 0.01;  // [s]

  STEER_HD int nx() const { return 2; }
  STEER_HD int nu() const { return 1; }
  STEER_HD int np() const { return kNumParams; }

  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    const S h = S(dt);
    const S a = (S(u[0]) - S(p[kStiffness]) * S(x[0]) - S(p[kDamping]) * S(x[1])) / S(p[kMass]);
    const S vn = S(x[1]) + h * a;
    xn[1] = vn;
    xn[0] = S(x[0]) + h * vn;
  }
  // the vector-Jacobian product of step, accumulated into adj_x, adj_u, adj_p
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    const S h = S(dt);
    const S m = S(p[kMass]);
    const S f = S(u[0]) - S(p[kStiffness]) * S(x[0]) - S(p[kDamping]) * S(x[1]);
    // q' = q + h v', v' = v + h a: adj_v' = adj_v'_direct + h adj_q', adj_a = h adj_v'
    const S adj_vn = S(adj_xn[1]) + h * S(adj_xn[0]);
    const S adj_a = h * adj_vn;
    const S adj_f = adj_a / m;
    adj_x[0] += S(adj_xn[0]) - S(p[kStiffness]) * adj_f;
    adj_x[1] += adj_vn - S(p[kDamping]) * adj_f;
    adj_u[0] += adj_f;
    adj_p[kStiffness] += -S(x[0]) * adj_f;
    adj_p[kDamping] += -S(x[1]) * adj_f;
    adj_p[kMass] += -adj_a * f / (m * m);
  }

  // no contacts
  STEER_HD int num_contacts() const { return 0; }
  template <class S, class XIn, class PIn>
  STEER_HD bool in_contact(const XIn&, const PIn&, int) const {
    return false;
  }
  // the centre of mass along x is the mass's position q; it does not move along y or z
  template <class S, class XIn, class PIn>
  STEER_HD S center_of_mass(const XIn& x, const PIn&, int axis) const {
    return axis == 0 ? S(x[0]) : S(0);
  }
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn&, const PIn&, int axis, XAdj& adj_x, PAdj&,
                                   const S& adj_c) const {
    if (axis == 0) adj_x[0] += adj_c;
  }
  // ½ m v² + ½ k q² [J]
  template <class S, class XIn, class PIn>
  STEER_HD S energy(const XIn& x, const PIn& p) const {
    return S(0.5) * S(p[kMass]) * S(x[1]) * S(x[1]) + S(0.5) * S(p[kStiffness]) * S(x[0]) * S(x[0]);
  }
  template <class S, class XIn, class PIn>
  STEER_HD S kinetic_energy(const XIn& x, const PIn& p) const {
    return S(0.5) * S(p[kMass]) * S(x[1]) * S(x[1]);
  }
  // undamped motion conserves the energy (up to the integrator's drift)
  template <class S, class PIn>
  STEER_HD bool conservative(const PIn& p) const {
    return S(p[kDamping]) == S(0);
  }
};

}  // namespace steer
