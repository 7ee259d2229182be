// The CPU backend's SIMD path for one instruction set: the only translation units that
// instantiate the models' one-lane code on simd.h's packs. CMake compiles this file once per
// instruction set it builds (STEER_PACKED_ISA names it: sse2, avx2, avx512), each with its own
// -march, and the vector builds' objects have every symbol but their entry points made local,
// so no inline function compiled for a wider instruction set can be picked by the linker for
// the portable code (src/CMakeLists.txt; src/backend/cpu_packed.cpp dispatches at run time).
#include "steer/cpu_packed.h"

#include "steer/models/articulated.h"
#include "steer/models/mass_spring.h"

// the portable build (compiled with the library's own flags) unless CMake names another
#ifndef STEER_PACKED_ISA
#define STEER_PACKED_ISA sse2
#endif

namespace steer {
namespace STEER_PACKED_ISA {

void run(const MassSpring& m, const Loss& loss, const RolloutShape& sh,
               const Batch<double>& batch, bool want_grad, BatchResult<double>& out, int threads) {
  cpu_run_groups_packed<MassSpring>(m, loss, sh, batch, want_grad, out, threads);
}

void run(const Articulated& m, const Loss& loss, const RolloutShape& sh,
               const Batch<double>& batch, bool want_grad, BatchResult<double>& out, int threads) {
  cpu_run_groups_packed<Articulated>(m, loss, sh, batch, want_grad, out, threads);
}

void run(const MassSpring& m, const Loss& loss, const RolloutShape& sh,
               const Batch<float>& batch, bool want_grad, BatchResult<float>& out, int threads) {
  cpu_run_groups_packed<MassSpring>(m, loss, sh, batch, want_grad, out, threads);
}

void run(const Articulated& m, const Loss& loss, const RolloutShape& sh,
               const Batch<float>& batch, bool want_grad, BatchResult<float>& out, int threads) {
  cpu_run_groups_packed<Articulated>(m, loss, sh, batch, want_grad, out, threads);
}

void run(const ArticulatedLegged& m, const Loss& loss, const RolloutShape& sh,
         const Batch<double>& batch, bool want_grad, BatchResult<double>& out, int threads) {
  cpu_run_groups_packed<ArticulatedLegged>(m, loss, sh, batch, want_grad, out, threads);
}

void run(const ArticulatedLegged& m, const Loss& loss, const RolloutShape& sh,
         const Batch<float>& batch, bool want_grad, BatchResult<float>& out, int threads) {
  cpu_run_groups_packed<ArticulatedLegged>(m, loss, sh, batch, want_grad, out, threads);
}

int width() { return kPackWidth; }

}  // namespace STEER_PACKED_ISA
}  // namespace steer
