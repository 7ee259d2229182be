// The packed CPU path's run-time dispatch: the widest instruction set this build compiled the
// packs for (cpu_packed_isa.cpp, one object per set) and this CPU runs. STEER_SIMD=sse2, avx2
// or avx512 forces one (a set this build lacks, or this CPU cannot run, is an error). Every
// width gives the same bits: a pack lane performs its scalar rollout's operations (simd.h).
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "steer/cpu_backend.h"
#include "models/packed_models.h"

// the entry points of each packed build (STEER_PACKED_HAVE_<ISA> is set by CMake for the
// builds it compiles; sse2 is always built on x86-64, and is the plain build elsewhere), one
// pair per model of STEER_PACKED_MODELS
#define STEER_DECLARE_PACKED_RUN(Model)                                                \
  void run(const Model&, const Loss&, const RolloutShape&, const Batch<double>&, bool, \
           BatchResult<double>&, int);                                                 \
  void run(const Model&, const Loss&, const RolloutShape&, const Batch<float>&, bool,  \
           BatchResult<float>&, int);
#define STEER_DECLARE_PACKED(isa)               \
  namespace isa {                               \
  STEER_PACKED_MODELS(STEER_DECLARE_PACKED_RUN) \
  int width();                                  \
  }

namespace steer {

STEER_DECLARE_PACKED(sse2)
#ifdef STEER_PACKED_HAVE_AVX2
STEER_DECLARE_PACKED(avx2)
#endif
#ifdef STEER_PACKED_HAVE_AVX512
STEER_DECLARE_PACKED(avx512)
#endif

namespace {

enum class PackedIsa { kSse2, kAvx2, kAvx512 };

bool cpu_runs(PackedIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // the -march levels the builds use: x86-64-v3 (AVX2, FMA, BMI) and x86-64-v4 (AVX-512 F, BW,
  // CD, DQ, VL); each feature of the level is tested, not only the vector width
  switch (isa) {
    case PackedIsa::kSse2:
      return true;
    case PackedIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
             __builtin_cpu_supports("avx");
    case PackedIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma");
  }
  return false;
#else
  return isa == PackedIsa::kSse2;
#endif
}

bool built(PackedIsa isa) {
  switch (isa) {
    case PackedIsa::kSse2:
      return true;
#ifdef STEER_PACKED_HAVE_AVX2
    case PackedIsa::kAvx2:
      return true;
#endif
#ifdef STEER_PACKED_HAVE_AVX512
    case PackedIsa::kAvx512:
      return true;
#endif
    default:
      return false;
  }
}

PackedIsa choose_isa() {
  if (const char* env = std::getenv("STEER_SIMD"); env && *env) {
    const std::string s = env;
    PackedIsa isa;
    if (s == "sse2")
      isa = PackedIsa::kSse2;
    else if (s == "avx2")
      isa = PackedIsa::kAvx2;
    else if (s == "avx512")
      isa = PackedIsa::kAvx512;
    else
      throw std::invalid_argument("STEER_SIMD=" + s +
                                  ": accepted values are sse2, avx2 and avx512");
    if (!built(isa))
      throw std::invalid_argument("STEER_SIMD=" + s + ": this build has no " + s + " packed path");
    if (!cpu_runs(isa))
      throw std::invalid_argument("STEER_SIMD=" + s + ": this CPU cannot run " + s);
    return isa;
  }
  for (PackedIsa isa : {PackedIsa::kAvx512, PackedIsa::kAvx2})
    if (built(isa) && cpu_runs(isa)) return isa;
  return PackedIsa::kSse2;
}

// decided once per process: every call of a run then packs the same width
PackedIsa packed_isa() {
  static const PackedIsa isa = choose_isa();
  return isa;
}

template <class Model, class R>
void dispatch(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<R>& batch,
              bool want_grad, BatchResult<R>& out, int threads) {
  switch (packed_isa()) {
#ifdef STEER_PACKED_HAVE_AVX512
    case PackedIsa::kAvx512:
      return avx512::run(m, loss, sh, batch, want_grad, out, threads);
#endif
#ifdef STEER_PACKED_HAVE_AVX2
    case PackedIsa::kAvx2:
      return avx2::run(m, loss, sh, batch, want_grad, out, threads);
#endif
    default:
      return sse2::run(m, loss, sh, batch, want_grad, out, threads);
  }
}

}  // namespace

template <class Model, class S>
void cpu_run_packed(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<S>& batch,
                    bool want_grad, BatchResult<S>& out, int threads) {
  dispatch(m, loss, sh, batch, want_grad, out, threads);
}
#define STEER_INSTANTIATE_PACKED(Model)                                                         \
  template void cpu_run_packed<Model, double>(const Model&, const Loss&, const RolloutShape&,   \
                                              const Batch<double>&, bool, BatchResult<double>&, \
                                              int);                                             \
  template void cpu_run_packed<Model, float>(const Model&, const Loss&, const RolloutShape&,    \
                                             const Batch<float>&, bool, BatchResult<float>&, int);
STEER_PACKED_MODELS(STEER_INSTANTIATE_PACKED)
#undef STEER_INSTANTIATE_PACKED

int cpu_pack_width() {
  switch (packed_isa()) {
#ifdef STEER_PACKED_HAVE_AVX512
    case PackedIsa::kAvx512:
      return avx512::width();
#endif
#ifdef STEER_PACKED_HAVE_AVX2
    case PackedIsa::kAvx2:
      return avx2::width();
#endif
    default:
      return sse2::width();
  }
}

const char* cpu_pack_isa() {
  switch (packed_isa()) {
    case PackedIsa::kAvx512:
      return "avx512";
    case PackedIsa::kAvx2:
      return "avx2";
    default:
      return "sse2";
  }
}

}  // namespace steer
