// The projectile and mass-spring CUDA sources (launcher and kernels, both precisions),
// compiled as host C++ against the emulated runtime of this folder: the files nvcc builds,
// included unchanged, in one translation unit.
#include "rollout_projectile_double.cu"
#include "rollout_projectile_float.cu"
#include "rollout_mass_spring_double.cu"
#include "rollout_mass_spring_float.cu"
