// CUDA rollouts of the articulated model in double: the launcher only. Its kernels (euler and
// implicitfast models as ArticulatedImplicit, the hand adjoint) are compiled in a file of their
// own, rollout_articulated_implicit_double.cu. The reference adjoint and the rk4 integrator are
// host-only (kDeviceReference, is_host_only_integrator in rollout_kernels.cuh).
#include "rollout_kernels.cuh"

namespace steer {
STEER_INSTANTIATE_CUDA(Articulated, double)
}  // namespace steer
