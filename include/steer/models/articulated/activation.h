// Articulated: actuator activation (MuJoCo's actuator dynamics, dyntype), a state per joint that
// filters or integrates the joint's control before it acts, and its adjoint. For joint j with an
// activation a_j (state nq + n_dof + act_slot[j], in its control's unit, N·m or N):
//   filter       ȧ = (u − a)/τ, stepped as MuJoCo's Euler steps it:  a⁺ = a + (h/τ)(u − a)
//   filterexact  the same ODE solved exactly for u held over the step: a⁺ = a + (1 − e^{−h/τ})(u −
//   a) integrator   ȧ = u:                                               a⁺ = a + h u
// that is a⁺ = a + c (u − κ a), c = h/τ, 1 − e^{−h/τ} or h [per step], κ = 1 for the filters and
// 0 for the integrator. The joint's torque takes the activation in place of its control,
//   τ_raw = k_p (q* − q) − k_v q̇ + a     (MuJoCo: the force uses act at the step's start),
// or, for an early activation (MuJoCo's actearly), a⁺: the control then acts within the step.
// The filter is linear, so filtering the joint's control u_j is filtering each MuJoCo ctrl that
// maps onto it (an imported file's ctrl map is affine: u = offset + G ctrl), provided every
// actuator on the joint has the same dynamics (the import refuses mixtures); MuJoCo's act = 0 is
// a_j = offset_j. The explicit filter is stable while h < 2τ, as MuJoCo's.
// The update holds for every integrator's step as a whole: rk4 takes a held over its stages
// (the config refuses rk4 with activations, whose MuJoCo counterpart integrates act inside the
// stages).
#pragma once

#include "steer/model_math.h"
#include "steer/models/articulated/model.h"

namespace steer {

// c of joint j's activation at the model's timestep (a⁺ = a + c (u − κ a)) [1, or s for the
// integrator]
template <class Model>
STEER_HD double activation_rate(const Model& m, int j) {
  const double h = m.dt, tau = m.act_tau[j];
  switch (m.act_kind[j]) {
    case Model::kActFilter:
      return h / tau;
    case Model::kActFilterExact:
      return 1.0 - exp_of(-h / tau);
    default:
      return h;  // kActIntegrator
  }
}

// κ of joint j's activation: 1 for the filters (a leaks toward u), 0 for the integrator
template <class Model>
STEER_HD double activation_leak(const Model& m, int j) {
  return m.act_kind[j] == Model::kActIntegrator ? 0.0 : 1.0;
}

// joint j's activation after the step, a⁺ = a + c (u − κ a)
template <class Model, class S, class XIn, class UIn>
STEER_HD S activation_next(const Model& m, int j, const XIn& x, const UIn& u) {
  const S a = S(x[m.nq() + m.n_dof + m.act_slot[j]]);
  return a + S(activation_rate(m, j)) * (S(u[j]) - S(activation_leak(m, j)) * a);
}

// the step's torque inputs: u_j for a joint without an activation, else a_j, or a⁺_j when early
template <class Model, class S, class XIn, class UIn>
STEER_HD void activation_inputs(const Model& m, const XIn& x, const UIn& u, S* uin) {
  const int base = m.nq() + m.n_dof;
  for (int j = 0; j < m.n_dof; ++j) {
    if (m.act_kind[j] == Model::kActNone)
      uin[j] = S(u[j]);
    else if (m.act_early[j])
      uin[j] = activation_next<Model, S>(m, j, x, u);
    else
      uin[j] = S(x[base + m.act_slot[j]]);
  }
}

// adjoint of activation_inputs and of the update (activation_next) given ū_in (the step's adjoint
// of its torque inputs) and the
// activations' cotangent in adj_xn: with ā⁺ = adj_xn[a⁺] (+ ū_in,j when early),
//   ā += (1 − c κ) ā⁺ (+ ū_in,j when not early),  ū_j += c ā⁺;  a joint without one: ū_j += ū_in,j
template <class Model, class S, class XnAdj, class XAdj, class UAdj>
STEER_HD void adj_activation_inputs(const Model& m, const S* adj_uin, const XnAdj& adj_xn,
                                    XAdj& adj_x, UAdj& adj_u) {
  const int base = m.nq() + m.n_dof;
  for (int j = 0; j < m.n_dof; ++j) {
    if (m.act_kind[j] == Model::kActNone) {
      adj_u[j] += adj_uin[j];
      continue;
    }
    const int s = m.act_slot[j];
    const bool early = m.act_early[j] != 0;
    const S adj_an = S(adj_xn[base + s]) + (early ? adj_uin[j] : S(0));
    const S c = S(activation_rate(m, j)), kappa = S(activation_leak(m, j));
    adj_x[base + s] += (S(1) - c * kappa) * adj_an + (early ? S(0) : adj_uin[j]);
    adj_u[j] += c * adj_an;
  }
}

}  // namespace steer
