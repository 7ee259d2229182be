// CUDA rollouts of ArticulatedLegged (model.h: a quadruped on a free root) in double: the launcher
// only. Its kernels (euler and implicitfast models as ArticulatedLeggedImplicit, the hand adjoint)
// are compiled in a file of their own, as the arm's are:
// rollout_articulated_legged_implicit_double.cu. The reference adjoint and the rk4 integrator are
// host-only (rollout_kernels.cuh).
#include "rollout_kernels.cuh"
#include "steer/models/articulated.h"

namespace steer {
STEER_INSTANTIATE_CUDA(ArticulatedLegged, double)
}  // namespace steer
