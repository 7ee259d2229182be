// CUDA rollout kernels of rk4 legged models in float (ArticulatedLegged, the integrator chosen at
// run time): the forward kernel and the backward kernel (rk4's adjoint is the dual one)
#include "rollout_kernel_defs.cuh"
#include "steer/models/articulated.h"

STEER_INSTANTIATE_CUDA_KERNELS(ArticulatedLegged, float)
