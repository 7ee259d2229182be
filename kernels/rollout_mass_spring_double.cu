// CUDA rollouts of mass_spring in double: the launcher and the forward and hand-adjoint backward
// kernels (the reference adjoint of a state sized at run time is host-only): MassSpringSymplectic's
// for symplectic-Euler models, MassSpring's for backward-Euler ones (rollout_kernels.cuh,
// with_kernel_model); and the same for the robot with a controller in its step
// (Controlled<…>, steer/controller.h)
#include "rollout_kernels.cuh"
#include "rollout_kernel_defs.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(MassSpring, double)
STEER_INSTANTIATE_CUDA(Controlled<MassSpring>, double)
}  // namespace steer
STEER_INSTANTIATE_CUDA_KERNELS(MassSpring, double)
STEER_INSTANTIATE_CUDA_KERNELS(MassSpringSymplectic, double)
STEER_INSTANTIATE_CUDA_KERNELS(Controlled<MassSpring>, double)
STEER_INSTANTIATE_CUDA_KERNELS(Controlled<MassSpringSymplectic>, double)
