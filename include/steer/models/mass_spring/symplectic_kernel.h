// MassSpringSymplectic: MassSpring with the integrator known at compile time to be symplectic
// Euler, for the CUDA backend.
#pragma once

#include "steer/lanes_per_rollout.h"
#include "steer/models/mass_spring/step.h"
#include "steer/models/mass_spring/step_solo.h"

namespace steer {

// MassSpring's step and adjoint branch on `integrator` at run time, so a kernel instantiated
// for it also compiles the backward-Euler step (implicit.h), whose Newton solve keeps the banded
// Hessian, its factor and the iterates in the leading lane's frame; ptxas sizes every thread's
// stack for that path (tens of kB per thread, reserved as local memory for every resident
// thread) even when the batch is symplectic. This type's entry points reach the symplectic step
// and adjoint only, so its kernels keep the explicit step's small frame. Everything else is
// MassSpring's; the CPU backend keeps MassSpring. The caller converts only a model whose
// integrator is kSymplecticEuler (the CUDA launcher checks; a backward-Euler model would be
// stepped explicitly here).
struct MassSpringSymplectic : MassSpring {
  MassSpringSymplectic() = default;
  STEER_HD explicit MassSpringSymplectic(const MassSpring& m) : MassSpring(m) {}

  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
    step_symplectic<S>(k, x, u, p, xn, ln);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                         const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    adj_step_symplectic<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);
  }
  // MassSpring::step_taped / adj_step_taped fall back to MassSpring::step / adj_step (both
  // integrators); these fall back to the symplectic ones. The taped one-lane path is host-only.
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_taped(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& tp,
                           const Lanes& ln = Lanes{}) const {
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1 && tape_fits<S>()) {
      step_solo<S>(k, x, u, p, xn, &tp);
      return;
    }
#endif
    (void)tp;
    step_symplectic<S>(k, x, u, p, xn, ln);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& tp, XAdj& adj_x,
                               UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
#if !defined(__CUDA_ARCH__)
    if (ln.width == 1 && tape_fits<S>()) {
      adj_step_solo<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, &tp);
      return;
    }
#endif
    (void)tp;
    adj_step_symplectic<S>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln);
  }
};

// the same device layout as MassSpring: a warp per rollout
template <>
struct LanesPerRollout<MassSpringSymplectic> {
  static constexpr int value = LanesPerRollout<MassSpring>::value;
};

}  // namespace steer
