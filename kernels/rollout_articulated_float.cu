// CUDA rollouts of the articulated model in float: the launcher only. Its kernels are compiled
// in three files of their own: rollout_articulated_implicit_float.cu (euler and implicitfast
// models as ArticulatedImplicit, the hand adjoint), rollout_articulated_rk4_float.cu (rk4, whose
// adjoint is the dual-number one) and rollout_articulated_reference_float.cu (the reference
// adjoint of every integrator).
#include "rollout_kernels.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(Articulated, float)
}  // namespace steer
