// ArticulatedLegged's CUDA sources (the launcher and the kernels, in double and float),
// compiled as host C++ against the emulated runtime of this folder: the files nvcc builds,
// included unchanged, in one translation unit.
#include "rollout_articulated_legged_double.cu"
#include "rollout_articulated_legged_float.cu"
