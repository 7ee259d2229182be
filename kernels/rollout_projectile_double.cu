// CUDA rollouts of the projectile in double: the launcher, the forward and hand-adjoint backward
// kernels, and the dual-number reference backward kernel
#include "rollout_kernels.cuh"
#include "rollout_kernel_defs.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(Projectile, double)
}  // namespace steer
STEER_INSTANTIATE_CUDA_KERNELS(Projectile, double)
STEER_INSTANTIATE_CUDA_REFERENCE_KERNEL(Projectile, double)
