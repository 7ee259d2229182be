// CUDA rollout kernels of euler and implicitfast legged models in float
// (ArticulatedLeggedImplicit: the forward step and the hand adjoint, no rk4 or dual path)
#include "rollout_kernel_defs.cuh"
#include "steer/models/articulated.h"

STEER_INSTANTIATE_CUDA_KERNELS(ArticulatedLeggedImplicit, float)
