// The articulated arm's CUDA sources in float (the launcher and the ArticulatedImplicit kernels),
// compiled as host C++ against the emulated runtime of this folder: the files nvcc builds,
// included unchanged, in one translation unit.
#include "rollout_articulated_float.cu"
#include "rollout_articulated_implicit_float.cu"
