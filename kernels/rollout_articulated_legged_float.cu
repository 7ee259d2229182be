// CUDA rollouts of ArticulatedLegged (model.h: a quadruped on a free root) in float: the launcher
// only. Its kernels are compiled in two files of their own, as the arm's are:
// rollout_articulated_legged_implicit_float.cu (euler and implicitfast models as
// ArticulatedLeggedImplicit, the hand adjoint) and rollout_articulated_legged_rk4_float.cu (rk4,
// whose adjoint is the dual-number one). The reference adjoint is host-only (kDeviceReference).
#include "rollout_kernels.cuh"
#include "steer/models/articulated.h"

namespace steer {
STEER_INSTANTIATE_CUDA(ArticulatedLegged, float)
}  // namespace steer
