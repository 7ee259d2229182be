// ArticulatedImplicit: Articulated with the integrator known at compile time to be euler or
// implicitfast, for the CUDA backend; its adj_center_of_mass is by hand,
//   c̄_b = c̄ m_b/Σm along the axis, taken back to q by adj_forward_kinematics.
#pragma once

#include "steer/models/articulated/diagnostics.h"
#include "steer/models/articulated/integrators.h"
#include "steer/models/articulated/kinematics.h"
#include "steer/models/articulated/model.h"

namespace steer {

// Articulated with the integrator known at compile time to be euler or implicitfast, for the
// CUDA backend. Articulated's step and adjoint branch on `integrator` at run time, so a
// kernel instantiated for it compiles the rk4 step (four accelerations) and rk4's dual-number
// adjoint (Dual<S, 8> copies of the whole step) alongside the hand adjoint, and ptxas sizes
// the per-thread stack for all of them, reserved as local memory for every resident thread.
// This type's step and adjoint entry points leave rk4 out, and its centre-of-mass adjoint is
// by hand, so its kernels' frames hold only what the hand path uses. Everything else is
// Articulated's; the CPU backend keeps Articulated. The caller converts only a model whose
// integrator is not kRk4 (the CUDA launcher checks; an rk4 model would be stepped as euler here).
struct ArticulatedImplicit : Articulated {
  ArticulatedImplicit() = default;
  STEER_HD explicit ArticulatedImplicit(const Articulated& a) : Articulated(a) {}

  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    StepTape<S> t;
    step_implicit<S>(x, u, p, xn, t);
  }
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step_taped(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn, StepTape<S>& t,
                           const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    step_implicit<S>(x, u, p, xn, t);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u, PAdj& adj_p,
                         const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    (void)k;
    if (!ln.leader()) return;
    adj_step_implicit<S>(x, u, p, adj_x, adj_u, adj_p, adj_xn);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj, class XnAdj>
  STEER_HD void adj_step_taped(int k, const XIn& x, const UIn& u, const PIn& p, const StepTape<S>& t, XAdj& adj_x,
                               UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{}) const {
    (void)k, (void)u;
    if (!ln.leader()) return;
    adj_step_implicit_taped<S>(x, p, t, adj_x, adj_u, adj_p, adj_xn);
  }

  // Articulated's adj_center_of_mass by hand: its ∂c/∂q runs the kinematics on Dual<S, 8>
  // (Kin<Dual> alone is ~13 kB in float64), once per call site in the backward kernel. Here
  // c = Σ m_b c_b / Σ m_b sends c̄_b = c̄ m_b/Σm (along the axis) to each centre of mass, and
  // adj_forward_kinematics takes those back to q: q̄_j = a_j · Σ_subtree (c_b − p_j) × c̄_b
  // (hinge), a_j · Σ_subtree c̄_b (slide). The parameter terms are Articulated's formulas:
  // ∂c/∂m_b = (c_b − c)/Σm, ∂c/∂com_b = m_b/Σm · R_b[axis, :]. Equal to the dual version up
  // to rounding in q̄ (articulated_test compares them).
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const {
    adj_center_of_mass_sweep(x, p, ax, adj_x, adj_p, adj_c);
  }
};

}  // namespace steer
