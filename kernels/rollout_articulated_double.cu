// CUDA rollouts of the articulated model in double: the launcher only. Its kernels are compiled
// in two files of their own: rollout_articulated_implicit_double.cu (euler and implicitfast
// models as ArticulatedImplicit, the hand adjoint) and rollout_articulated_rk4_double.cu (rk4,
// whose adjoint is the dual-number one). The reference adjoint is host-only (kDeviceReference).
#include "rollout_kernels.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(Articulated, double)
}  // namespace steer
