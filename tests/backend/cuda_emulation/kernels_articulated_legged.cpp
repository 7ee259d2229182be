// ArticulatedLegged's CUDA sources (the launcher and the ArticulatedLeggedImplicit kernels, in
// double and float), compiled as host C++ against the emulated runtime of this folder: the files
// nvcc builds, included unchanged, in one translation unit.
#include "rollout_articulated_legged_double.cu"
#include "rollout_articulated_legged_implicit_double.cu"
#include "rollout_articulated_legged_float.cu"
#include "rollout_articulated_legged_implicit_float.cu"
