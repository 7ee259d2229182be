# issue 30: the backward-Euler mass-spring step (include/steer/models/mass_spring/implicit.h),
# its implicit-function adjoint in the gradient suite, stiffness, convergence and lanes
steer_test(implicit_mass_spring_test fast)
# the same file against the emulated device (tests/gpu_emulation.cmake): the CUDA kernels' warp
# per rollout running the implicit step, against the CPU backend
if(COMMAND steer_emulated_test AND TARGET steer_cuda_emulation)
  steer_emulated_test(emulated_implicit_mass_spring_test steer_cuda_emulation "fast;gpu_emulation"
                      ${CMAKE_CURRENT_SOURCE_DIR}/implicit_mass_spring_test.cpp)
endif()
