// CUDA rollouts of ArticulatedLegged (model.h: a quadruped on a free root) in double: the
// launcher, and its kernels (forward, the backward of the hand adjoint and the dual-number
// reference backward). The legged model's step and adjoint branch on its integrator at run
// time, so these kernels carry rk4 and the dual path next to the hand adjoint (no
// implicit-only variant as ArticulatedImplicit is for Articulated).
#include "rollout_kernels.cuh"
#include "rollout_kernel_defs.cuh"
#include "steer/models/articulated.h"

namespace steer {
STEER_INSTANTIATE_CUDA(ArticulatedLegged, double)
}  // namespace steer

STEER_INSTANTIATE_CUDA_KERNELS(ArticulatedLegged, double)
STEER_INSTANTIATE_CUDA_REFERENCE_KERNEL(ArticulatedLegged, double)
