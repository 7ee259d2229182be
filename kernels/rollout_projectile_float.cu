// CUDA rollouts of the projectile in float: the launcher, the forward and hand-adjoint backward
// kernels, and the dual-number reference backward kernel
#include "rollout_kernels.cuh"
#include "rollout_kernel_defs.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(Projectile, float)
}  // namespace steer
STEER_INSTANTIATE_CUDA_KERNELS(Projectile, float)
STEER_INSTANTIATE_CUDA_REFERENCE_KERNEL(Projectile, float)
