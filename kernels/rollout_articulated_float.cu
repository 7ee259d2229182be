// CUDA rollouts of the articulated model in float: the launcher only. Its kernels are compiled
// in two files of their own: rollout_articulated_implicit_float.cu (euler and implicitfast
// models as ArticulatedImplicit, the hand adjoint) and rollout_articulated_rk4_float.cu (rk4,
// whose adjoint is the dual-number one). The reference adjoint is host-only (kDeviceReference).
#include "rollout_kernels.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(Articulated, float)
}  // namespace steer
