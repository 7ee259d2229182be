// cpu_ceiling: this CPU's two roofline ceilings, measured for one thread (the figures steer's
// packed paths are compared against in bench/roofline.py):
//   peak FLOP/s: independent chains of vector FMAs, a·x + b per lane (2 flops), in float64 and
//     float32, with the widest instruction set the CPU reports (AVX-512F, AVX2 + FMA, else SSE2
//     multiply and add). 12-16 accumulators hide the FMA latency (4-5 cycles on two ports
//     needs ≥ 10 in flight). Also the same chains as a multiply and a separate add: steer's
//     own ceiling, since it never fuses (-ffp-contract=off, for bitwise parity across paths).
//   memory bandwidth: the STREAM triad a[i] = b[i] + s·c[i] over three arrays far larger than the
//     last-level cache, 24 bytes per element (STREAM's convention: the write-allocate read of a
//     is not counted).
// Each figure is the best of --repeats runs of at least --min-time seconds. Prints JSON.
#include <immintrin.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr long kInner = 1L << 12;  // iterations between clock reads

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The chains of one instruction set, flops per second: kChains accumulators, each updated
// acc = acc·a + b per iteration (2 flops per lane), by OP(acc) (an FMA, or a multiply and an
// add). Written as a macro expanded inside each target("…") function: a template or lambda
// would not take the function's target, and the intrinsics would not inline. The lanes are
// added into *sink so that the chains stay live.
#define STEER_CHAINS(V, kChains, kLanes, SET1, OP, STORE, ELEM)                       \
  V acc[kChains];                                                                     \
  for (int c = 0; c < kChains; ++c) acc[c] = SET1(ELEM(1 + 1e-3 * c));                \
  const V a = SET1(ELEM(0.9999)), b = SET1(ELEM(1e-5));                               \
  long iters = 0;                                                                     \
  const auto t0 = Clock::now();                                                       \
  double t = 0;                                                                       \
  do {                                                                                \
    for (long i = 0; i < kInner; ++i)                                                 \
      _Pragma("GCC unroll 16") for (int c = 0; c < kChains; ++c) acc[c] = OP(acc[c]); \
    iters += kInner;                                                                  \
    t = seconds_since(t0);                                                            \
  } while (t < min_time);                                                             \
  alignas(64) ELEM lanes[kLanes];                                                     \
  for (int c = 0; c < kChains; ++c) {                                                 \
    STORE(lanes, acc[c]);                                                             \
    for (ELEM v : lanes) *sink += double(v);                                          \
  }                                                                                   \
  return 2.0 * kLanes * kChains * double(iters) / t

// AVX-512: 32 registers, 16 chains
#define STEER_FMA512D(x) _mm512_fmadd_pd(x, a, b)
#define STEER_MA512D(x) _mm512_add_pd(_mm512_mul_pd(x, a), b)
#define STEER_FMA512S(x) _mm512_fmadd_ps(x, a, b)
#define STEER_MA512S(x) _mm512_add_ps(_mm512_mul_ps(x, a), b)
__attribute__((target("avx512f"))) double avx512(bool f64, bool fused, double min_time,
                                                 double* sink) {
  if (f64 && fused) {
    STEER_CHAINS(__m512d, 16, 8, _mm512_set1_pd, STEER_FMA512D, _mm512_store_pd, double);
  }
  if (f64) {
    STEER_CHAINS(__m512d, 16, 8, _mm512_set1_pd, STEER_MA512D, _mm512_store_pd, double);
  }
  if (fused) {
    STEER_CHAINS(__m512, 16, 16, _mm512_set1_ps, STEER_FMA512S, _mm512_store_ps, float);
  }
  STEER_CHAINS(__m512, 16, 16, _mm512_set1_ps, STEER_MA512S, _mm512_store_ps, float);
}

// AVX2 + FMA: 16 registers, 12 chains (a and b take two)
#define STEER_FMA256D(x) _mm256_fmadd_pd(x, a, b)
#define STEER_MA256D(x) _mm256_add_pd(_mm256_mul_pd(x, a), b)
#define STEER_FMA256S(x) _mm256_fmadd_ps(x, a, b)
#define STEER_MA256S(x) _mm256_add_ps(_mm256_mul_ps(x, a), b)
__attribute__((target("avx2,fma"))) double avx2(bool f64, bool fused, double min_time,
                                                double* sink) {
  if (f64 && fused) {
    STEER_CHAINS(__m256d, 12, 4, _mm256_set1_pd, STEER_FMA256D, _mm256_store_pd, double);
  }
  if (f64) {
    STEER_CHAINS(__m256d, 12, 4, _mm256_set1_pd, STEER_MA256D, _mm256_store_pd, double);
  }
  if (fused) {
    STEER_CHAINS(__m256, 12, 8, _mm256_set1_ps, STEER_FMA256S, _mm256_store_ps, float);
  }
  STEER_CHAINS(__m256, 12, 8, _mm256_set1_ps, STEER_MA256S, _mm256_store_ps, float);
}

// SSE2 has no FMA: a multiply and an add either way
#define STEER_MA128D(x) _mm_add_pd(_mm_mul_pd(x, a), b)
#define STEER_MA128S(x) _mm_add_ps(_mm_mul_ps(x, a), b)
double sse2(bool f64, double min_time, double* sink) {
  if (f64) {
    STEER_CHAINS(__m128d, 12, 2, _mm_set1_pd, STEER_MA128D, _mm_store_pd, double);
  }
  STEER_CHAINS(__m128, 12, 4, _mm_set1_ps, STEER_MA128S, _mm_store_ps, float);
}

// STREAM triad, one thread: bytes per second
double triad(long n, double min_time) {
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  const double s = 3.0;
  long passes = 0;
  const auto t0 = Clock::now();
  double t = 0;
  do {
    double* __restrict pa = a.data();
    const double* __restrict pb = b.data();
    const double* __restrict pc = c.data();
    for (long i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    ++passes;
    t = seconds_since(t0);
  } while (t < min_time);
  volatile double keep = a[n / 2];
  (void)keep;
  return 24.0 * double(n) * double(passes) / t;
}

template <class F>
double best_of(int repeats, F&& f) {
  double best = 0;
  for (int r = 0; r < repeats; ++r) best = std::max(best, f());
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "cpu_ceiling: one thread's peak FLOP/s (vector FMA chains) and STREAM triad bandwidth"};
  double min_time = 0.3;
  int repeats = 5;
  long triad_mb = 768;
  app.add_option("--min-time", min_time, "seconds per run")->check(CLI::Range(0.01, 60.0));
  app.add_option("--repeats", repeats, "runs per figure; the best is reported")
      ->check(CLI::Range(1, 100));
  app.add_option("--triad-mb", triad_mb, "the triad's three arrays together [MB]")
      ->check(CLI::Range(64L, 65536L));
  CLI11_PARSE(app, argc, argv);

  __builtin_cpu_init();
  double sink = 0;
  const bool has512 = __builtin_cpu_supports("avx512f");
  const bool has256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const std::string isa = has512 ? "avx512f" : has256 ? "avx2+fma" : "sse2";
  // [precision][fused]: GFLOP/s
  double peak[2][2] = {};
  for (int f64 = 0; f64 < 2; ++f64)
    for (int fused = 0; fused < 2; ++fused)
      peak[f64][fused] = 1e-9 * best_of(repeats, [&] {
                           if (has512) return avx512(f64, fused, min_time, &sink);
                           if (has256) return avx2(f64, fused, min_time, &sink);
                           return sse2(f64, min_time, &sink);
                         });
  const long n = triad_mb * 1000000L / 24;
  const double bw = best_of(repeats, [&] { return triad(n, min_time); });
  std::printf(
      "{\"threads\": 1, \"isa\": \"%s\", \"peak_fp64_gflops\": %.4g, \"peak_fp32_gflops\": %.4g, "
      "\"unfused_fp64_gflops\": %.4g, \"unfused_fp32_gflops\": %.4g, \"triad_gbs\": %.4g, "
      "\"triad_mb\": %ld, \"checksum\": %.3g}\n",
      isa.c_str(), peak[1][1], peak[0][1], peak[1][0], peak[0][0], bw * 1e-9, triad_mb, sink);
  return 0;
}
