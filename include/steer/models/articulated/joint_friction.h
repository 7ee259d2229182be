// Articulated: joint friction (MuJoCo's joint frictionloss) as a smooth law, and its adjoint.
//   τ_f,j = −F_j tanh(q̇_j / v_f),
// F_j ≥ 0 the friction torque [N·m] or force [N] that opposes the joint's motion (θ's
// p_frictionloss(j) slot) and v_f > 0 the smoothing speed [rad/s or m/s]
// (frictionloss_velocity): Coulomb friction −F sign(q̇) is the limit v_f → 0, and below v_f the
// law is a viscous damper of coefficient F / v_f. MuJoCo models frictionloss as a constraint
// (a soft dry friction solved with the contacts); the smooth law is steer's, so the two agree
// only in the sliding regime (|q̇| ≫ v_f), where both are ∓F. The force is explicit in every
// integrator, as the fluid's: an explicit step is stable while h F / (v_f m_jj) < 2 (m_jj the
// joint's effective inertia), which bounds v_f from below at a given timestep
// (docs/config.md). Only capacities with kFluid (the CPU's scalar one) compile it.
#pragma once

#include "steer/model_math.h"
#include "steer/models/articulated/model.h"

namespace steer {

// τ += τ_f (every hinge and slide; a free root's dofs have none)
template <class Model, class S, class PIn>
STEER_HD void joint_friction_forces(const Model& m, const S* v, const PIn& p, S* tau) {
  if constexpr (Model::kFluid) {
    if (!m.joint_friction) return;
    const S inv_v = S(1.0 / m.frictionloss_velocity);
    for (int j = 0; j < m.n_dof; ++j) {
      if (m.free_dof(j)) continue;
      tau[j] -= S(p[m.p_frictionloss(j)]) * tanh_of(S(v[j] * inv_v));
    }
  }
}

// adjoint of φ = μᵀ τ_f: with t_j = tanh(q̇_j / v_f),
//   ∂φ/∂q̇_j = −μ_j F_j (1 − t_j²) / v_f,  ∂φ/∂F_j = −μ_j t_j
template <class Model, class S, class PIn>
STEER_HD void adj_joint_friction_forces(const Model& m, const S* v, const PIn& p, const S* mu,
                                        S* adj_v, S* adj_p) {
  if constexpr (Model::kFluid) {
    if (!m.joint_friction) return;
    const S inv_v = S(1.0 / m.frictionloss_velocity);
    for (int j = 0; j < m.n_dof; ++j) {
      if (m.free_dof(j)) continue;
      const S t = tanh_of(S(v[j] * inv_v)), F = p[m.p_frictionloss(j)];
      adj_v[j] -= mu[j] * F * (S(1) - t * t) * inv_v;
      adj_p[m.p_frictionloss(j)] -= mu[j] * t;
    }
  }
}

}  // namespace steer
