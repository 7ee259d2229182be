// the legged model's dual-number reference backward kernel in float, every integrator
#include "rollout_kernel_defs.cuh"
#include "steer/models/articulated.h"

STEER_INSTANTIATE_CUDA_REFERENCE_KERNEL(ArticulatedLegged, float)
