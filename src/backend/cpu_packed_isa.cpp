// The CPU backend's SIMD path for one instruction set: the only translation units that
// instantiate the models' one-lane code on simd.h's packs. CMake compiles this file once per
// instruction set it builds (STEER_PACKED_ISA names it: sse2, avx2, avx512), each with its own
// -march, and the vector builds' objects have every symbol but their entry points made local,
// so no inline function compiled for a wider instruction set can be picked by the linker for
// the portable code (src/CMakeLists.txt; src/backend/cpu_packed.cpp dispatches at run time).
#include "steer/cpu_packed.h"

#include "models/packed_models.h"

// the portable build (compiled with the library's own flags) unless CMake names another
#ifndef STEER_PACKED_ISA
#define STEER_PACKED_ISA sse2
#endif

namespace steer {
namespace STEER_PACKED_ISA {

// the entry points, a float64 and a float32 one per model of STEER_PACKED_MODELS
#define STEER_PACKED_RUN(Model)                                                                  \
  void run(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<double>& batch, \
           bool want_grad, BatchResult<double>& out, int threads) {                              \
    cpu_run_groups_packed<Model>(m, loss, sh, batch, want_grad, out, threads);                   \
  }                                                                                              \
  void run(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<float>& batch,  \
           bool want_grad, BatchResult<float>& out, int threads) {                               \
    cpu_run_groups_packed<Model>(m, loss, sh, batch, want_grad, out, threads);                   \
  }
STEER_PACKED_MODELS(STEER_PACKED_RUN)
#undef STEER_PACKED_RUN

int width() { return kPackWidth; }

}  // namespace STEER_PACKED_ISA
}  // namespace steer
