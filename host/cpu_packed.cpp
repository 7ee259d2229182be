// The CPU backend's SIMD path, compiled once for the build machine's vector width (CMake gives
// this file -march=native under STEER_NATIVE): the only translation unit that instantiates
// the models' one-lane code on simd.h's packs.
#include "steer/cpu_packed.h"

#include "steer/models/articulated.h"
#include "steer/models/mass_spring.h"

namespace steer {

void cpu_run_packed(const MassSpring& m, const Loss& loss, const RolloutShape& sh, const Batch<double>& batch,
                    bool want_grad, BatchResult<double>& out, int threads) {
  cpu_run_groups_packed<MassSpring>(m, loss, sh, batch, want_grad, out, threads);
}

void cpu_run_packed(const Articulated& m, const Loss& loss, const RolloutShape& sh, const Batch<double>& batch,
                    bool want_grad, BatchResult<double>& out, int threads) {
  cpu_run_groups_packed<Articulated>(m, loss, sh, batch, want_grad, out, threads);
}

void cpu_run_packed(const MassSpring& m, const Loss& loss, const RolloutShape& sh, const Batch<float>& batch,
                    bool want_grad, BatchResult<float>& out, int threads) {
  cpu_run_groups_packed<MassSpring>(m, loss, sh, batch, want_grad, out, threads);
}

void cpu_run_packed(const Articulated& m, const Loss& loss, const RolloutShape& sh, const Batch<float>& batch,
                    bool want_grad, BatchResult<float>& out, int threads) {
  cpu_run_groups_packed<Articulated>(m, loss, sh, batch, want_grad, out, threads);
}

int cpu_pack_width() { return kPackWidth; }

}  // namespace steer
