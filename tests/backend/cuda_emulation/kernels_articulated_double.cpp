// The articulated arm's CUDA sources in double (the launcher and the ArticulatedImplicit kernels),
// compiled as host C++ against the emulated runtime of this folder: the files nvcc builds,
// included unchanged, in one translation unit.
#include "rollout_articulated_double.cu"
#include "rollout_articulated_implicit_double.cu"
