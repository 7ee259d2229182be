// vmath.h: steer's own exp, log1p and tanh, one algorithm for double and PackD<W>.
//  1. accuracy against the x87 long-double reference (expl, log1pl, tanhl: 64-bit
//     significands, so their own error is ~2^−11 of a double ulp) over >= 10^6 inputs per
//     function spread over the whole domain, in ulps of the correctly rounded double:
//     exp <= 1 ulp for normal results (and within 1 ulp of the subnormal spacing 2^−1074 for
//     subnormal ones), log1p <= 1 ulp for all x > −1, tanh <= 2 ulp for all x;
//  2. the special values (NaN, ±inf, overflow/underflow, the poles and domain edges, ±0,
//     tiny arguments);
//  3. lanes: each lane of the PackD<W> functions (W = kPackWidth, 2, 8) has the bits of the
//     double function on that lane's input, over the same inputs plus special values mixed
//     into the lanes;
//  and a throughput measurement, DISABLED_ by default
//  (./vmath_test --gtest_also_run_disabled_tests --gtest_filter='*Throughput*').
// Measured (x86-64): max 0.65 ulp for exp (0.75 × 2^−1074 for subnormal results), 0.77 ulp
// for log1p, 1.23 ulp for tanh.
// PackD<8> passes 64-byte vectors by value; without AVX-512 (the default target) GCC notes
// the ABI of that, which is of no concern inside one test
#pragma GCC diagnostic ignored "-Wpsabi"

#include "steer/vmath.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "steer/simd.h"

namespace {

using steer::PackD;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();

std::uint64_t bits(double x) {
  std::uint64_t i;
  std::memcpy(&i, &x, sizeof i);
  return i;
}

// ulp of the double nearest to the reference value y: 2^(e−52) for 2^e <= |y| < 2^(e+1)
// (e >= −1022), and 2^−1074 below 2^−1022
long double ulp_of(long double y) {
  y = fabsl(y);
  if (y < 0x1p-1022L) return 0x1p-1074L;
  int e = ilogbl(y);
  return ldexpl(1.0L, e - 52);
}

struct ErrorStat {
  double max_ulp = 0;
  double at = 0;
  long n = 0;
  void add(double x, double y, long double ref) {
    ++n;
    double e = double(fabsl((long double)y - ref) / ulp_of(ref));
    if (!(e <= max_ulp)) max_ulp = e, at = x;  // a NaN error is recorded as the max
  }
};

// inputs: random doubles with exponent uniform in [emin, emax] (log-uniform magnitudes) and
// random significand, both signs when both_signs
void add_log_uniform(std::vector<double>& v, std::mt19937_64& g, int n, int emin, int emax,
                     bool both_signs) {
  std::uniform_int_distribution<int> e(emin, emax);
  std::uniform_real_distribution<double> m(1.0, 2.0);
  for (int i = 0; i < n; ++i) {
    double x = std::ldexp(m(g), e(g));
    if (both_signs && (g() & 1)) x = -x;
    v.push_back(x);
  }
}
void add_uniform(std::vector<double>& v, std::mt19937_64& g, int n, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  for (int i = 0; i < n; ++i) v.push_back(d(g));
}
// the n doubles on each side of c (c itself included), stepping k ulps at a time
// (finite ones only; c != 0, and the steps do not cross 0)
void add_around(std::vector<double>& v, double c, int n, std::int64_t k = 1) {
  std::int64_t b;
  std::memcpy(&b, &c, sizeof b);
  for (std::int64_t i = -n; i <= n; ++i) {
    std::int64_t bi = b + i * k;
    double x;
    std::memcpy(&x, &bi, sizeof x);
    if (std::isfinite(x) && (x > 0) == (c > 0)) v.push_back(x);
  }
}

const double kLn2 = 0.693147180559945309417232121458176568;

std::vector<double> exp_inputs() {
  std::mt19937_64 g(1);
  std::vector<double> v;
  add_log_uniform(v, g, 400000, -1074, 9, true);  // |x| up to 1024: all of the domain and beyond
  add_uniform(v, g, 350000, -746.0, 710.0);
  add_uniform(v, g, 100000, -1.0, 1.0);
  add_log_uniform(v, g, 50000, -60, -1, true);  // dense near 0
  // reduction boundaries x = (n + ½)·ln2 (r = ±ln2/2) and the points n·ln2 (r = 0)
  for (int n = -1075; n <= 1024; n += 7) {
    add_around(v, (n + 0.5) * kLn2, 20, 3);
    add_around(v, n * kLn2, 5, 5);
  }
  add_around(v, 0.5 * kLn2, 2000);
  add_around(v, -0.5 * kLn2, 2000);
  // overflow (ln DBL_MAX = 709.78271289338400) and underflow thresholds: normal/subnormal at
  // ln 2^−1022 = −708.396418532264, last subnormal at ln 2^−1075 = −745.133219101941
  add_around(v, 709.782712893384, 5000);
  add_around(v, 709.782712893384, 1000, 1 << 20);
  add_around(v, -708.3964185322641, 5000, 1 << 10);
  add_around(v, -745.1332191019411, 5000);
  add_around(v, -745.1332191019411, 1000, 1 << 20);
  add_uniform(v, g, 50000, -745.2, -708.0);  // subnormal results
  return v;
}

std::vector<double> log1p_inputs() {
  std::mt19937_64 g(2);
  std::vector<double> v;
  add_log_uniform(v, g, 400000, -1074, 1023, false);                    // all positive magnitudes
  add_log_uniform(v, g, 150000, -1074, -1, false);                      // (0, 1) …
  for (int i = 0; i < 150000; ++i) v.push_back(-v[v.size() - 150000]);  // … and (−1, 0)
  std::vector<double> near;
  add_log_uniform(near, g, 100000, -53, -1, false);  // −1 + tiny: dense near −1
  for (double d : near) v.push_back(-1.0 + d);
  add_uniform(v, g, 100000, -1.0, 2.0);
  add_uniform(v, g, 50000, -0.3, 0.42);  // the k = 0 interval
  // reduction boundaries: 1 + x = 2^k·√2 (m = √2 ↔ √½), and the c formula switch at x = 1
  for (int k = -53; k <= 60; ++k) add_around(v, std::ldexp(1.4142135623730951, k) - 1.0, 200);
  add_around(v, 0.41421356237309503, 3000);
  add_around(v, -0.29289321881345254, 3000);
  add_around(v, 1.0, 1000);
  add_around(v, 0x1p53, 1000);
  add_around(v, -1.0 + 0x1p-53, 1000);
  add_around(v, kMax, 100);
  return v;
}

std::vector<double> tanh_inputs() {
  std::mt19937_64 g(3);
  std::vector<double> v;
  add_log_uniform(v, g, 400000, -1074, 1023, true);
  add_uniform(v, g, 300000, -25.0, 25.0);
  add_uniform(v, g, 200000, -1.0, 1.0);
  add_log_uniform(v, g, 100000, -30, 5, true);
  // the arm switch at 0.55, the saturation at 22, the tiny cut at 2^−27, and the expm1
  // reduction boundaries 2a = (n + ½)·ln2
  for (double c : {0.55, 22.0, 0x1p-27})
    for (double s : {1.0, -1.0}) add_around(v, s * c, 5000);
  for (int n = -2; n <= 64; ++n) {
    add_around(v, 0.5 * (n + 0.5) * kLn2, 500);
    add_around(v, -0.5 * (n + 0.5) * kLn2, 500);
  }
  return v;
}

TEST(VmathAccuracy, ExpWithinOneUlp) {
  std::vector<double> xs = exp_inputs();
  ASSERT_GE(xs.size(), 1000000u);
  ErrorStat normal, subnormal;
  long overflow = 0, zero = 0;
  for (double x : xs) {
    long double ref = expl((long double)x);
    double y = steer::vmath::exp(x);
    double rd = double(ref);  // the correctly rounded result (up to the 2^−64 of expl)
    if (rd == kInf) {
      ++overflow;
      // exp(x) > DBL_MAX + ½ulp: +inf; within the last half ulp an answer of DBL_MAX is 1 ulp off
      EXPECT_TRUE(y == kInf || (y == kMax && ref < (long double)kMax + 0x1p970L)) << x;
    } else if (rd == 0) {
      ++zero;
      EXPECT_TRUE(y == 0 || (y == kDenormMin && ref > 0x1p-1076L)) << x;
    } else if (rd < 0x1p-1022) {
      subnormal.add(x, y, ref);
    } else {
      normal.add(x, y, ref);
    }
  }
  std::printf("exp: %ld normal results, max %.3f ulp at x = %.17g\n", normal.n, normal.max_ulp,
              normal.at);
  std::printf("exp: %ld subnormal results, max %.3f × 2^-1074 at x = %.17g\n", subnormal.n,
              subnormal.max_ulp, subnormal.at);
  std::printf("exp: %ld overflows, %ld zeros\n", overflow, zero);
  EXPECT_LE(normal.max_ulp, 1.0) << "at x = " << normal.at;
  EXPECT_LE(subnormal.max_ulp, 1.0) << "at x = " << subnormal.at;
}

TEST(VmathAccuracy, Log1pWithinOneUlp) {
  std::vector<double> xs = log1p_inputs();
  ASSERT_GE(xs.size(), 1000000u);
  ErrorStat all;
  for (double x : xs) {
    if (!(x > -1.0)) continue;
    all.add(x, steer::vmath::log1p(x), log1pl((long double)x));
  }
  std::printf("log1p: %ld inputs, max %.3f ulp at x = %.17g\n", all.n, all.max_ulp, all.at);
  EXPECT_LE(all.max_ulp, 1.0) << "at x = " << all.at;
}

TEST(VmathAccuracy, TanhWithinTwoUlp) {
  std::vector<double> xs = tanh_inputs();
  ASSERT_GE(xs.size(), 1000000u);
  ErrorStat all;
  for (double x : xs) all.add(x, steer::vmath::tanh(x), tanhl((long double)x));
  std::printf("tanh: %ld inputs, max %.3f ulp at x = %.17g\n", all.n, all.max_ulp, all.at);
  EXPECT_LE(all.max_ulp, 2.0) << "at x = " << all.at;
}

// ----------------------------------------------------------------------------------------
TEST(VmathSpecial, Exp) {
  using steer::vmath::exp;
  EXPECT_TRUE(std::isnan(exp(kNaN)));
  EXPECT_TRUE(std::isnan(exp(-kNaN)));
  EXPECT_EQ(exp(kInf), kInf);
  EXPECT_EQ(bits(exp(-kInf)), bits(0.0));
  EXPECT_EQ(exp(0.0), 1.0);
  EXPECT_EQ(exp(-0.0), 1.0);
  EXPECT_EQ(exp(kDenormMin), 1.0);
  EXPECT_EQ(exp(-kDenormMin), 1.0);
  EXPECT_EQ(exp(1.0), 2.718281828459045);
  EXPECT_EQ(exp(kMax), kInf);
  EXPECT_EQ(exp(-kMax), 0.0);
  // the last finite result and the first overflow
  EXPECT_EQ(exp(709.782712893384), 1.7976931348622732e308);
  EXPECT_EQ(exp(std::nextafter(709.782712893384, kInf)), kInf);
  EXPECT_EQ(exp(710.0), kInf);
  // gradual underflow: the smallest normal result, subnormals, the last one, then 0
  // (the doubles nearest to ln 2^−1022, ln 2^−1073, ln 2^−1074 and ln 2^−1075, and their
  // neighbours, on the side stated)
  EXPECT_EQ(exp(-708.3964185322641),
            0x1.000000000007cp-1022);  // just above ln 2^−1022 = −708.39641853226410622
  EXPECT_EQ(exp(-708.3964185322642), 0x0.ffffffffffe7cp-1022);  // just below: subnormal
  EXPECT_EQ(exp(-743.7469247408213),
            2 * kDenormMin);  // just below ln 2^−1073 = −743.74692474082131700
  EXPECT_EQ(exp(-744.4400719213812), kDenormMin);  // just above ln 2^−1074 = −744.44007192138126231
  EXPECT_EQ(exp(-745.1332191019411), kDenormMin);  // just above ln 2^−1075 = −745.13321910194120762
  EXPECT_EQ(exp(-745.1332191019412), 0.0);         // just below
  EXPECT_EQ(exp(-746.0), 0.0);
  EXPECT_EQ(exp(-1000.0), 0.0);
}

TEST(VmathSpecial, Log1p) {
  using steer::vmath::log1p;
  EXPECT_EQ(log1p(-1.0), -kInf);
  EXPECT_TRUE(std::isnan(log1p(std::nextafter(-1.0, -kInf))));
  EXPECT_TRUE(std::isnan(log1p(-2.0)));
  EXPECT_TRUE(std::isnan(log1p(-kInf)));
  EXPECT_TRUE(std::isnan(log1p(kNaN)));
  EXPECT_TRUE(std::isnan(log1p(-kNaN)));
  EXPECT_EQ(log1p(kInf), kInf);
  EXPECT_EQ(bits(log1p(0.0)), bits(0.0));
  EXPECT_EQ(bits(log1p(-0.0)), bits(-0.0));
  for (double t : {kDenormMin, 1e-310, 0x1p-1022, 1e-300, 1e-200, 1e-30, 0x1p-60, 0x1p-54}) {
    EXPECT_EQ(bits(log1p(t)), bits(t)) << t;
    EXPECT_EQ(bits(log1p(-t)), bits(-t)) << t;
  }
  EXPECT_EQ(log1p(1.0), 0.6931471805599453);
  EXPECT_TRUE(std::isfinite(log1p(kMax)));
  EXPECT_NEAR(log1p(kMax), 709.782712893384, 1e-12);
  EXPECT_EQ(log1p(std::nextafter(-1.0, 0.0)), -36.736800569677101);  // log 2^−53
}

TEST(VmathSpecial, Tanh) {
  using steer::vmath::tanh;
  EXPECT_EQ(bits(tanh(0.0)), bits(0.0));
  EXPECT_EQ(bits(tanh(-0.0)), bits(-0.0));
  for (double t : {kDenormMin, 1e-310, 0x1p-1022, 1e-300, 1e-30, 0x1p-28}) {
    EXPECT_EQ(bits(tanh(t)), bits(t)) << t;
    EXPECT_EQ(bits(tanh(-t)), bits(-t)) << t;
  }
  for (double big : {22.0, 23.0, 40.0, 1e10, 1e300, kMax, kInf}) {
    EXPECT_EQ(tanh(big), 1.0) << big;
    EXPECT_EQ(tanh(-big), -1.0) << big;
  }
  EXPECT_TRUE(std::isnan(tanh(kNaN)));
  EXPECT_TRUE(std::isnan(tanh(-kNaN)));
  for (double x = -3; x <= 3; x += 0.125) EXPECT_EQ(tanh(-x), -tanh(x)) << x;  // odd
}

// ----------------------------------------------------------------------------------------
// every special input of the three functions, to be mixed into pack lanes
std::vector<double> special_inputs() {
  std::vector<double> v = {0.0,
                           -0.0,
                           kInf,
                           -kInf,
                           kNaN,
                           -kNaN,
                           kMax,
                           -kMax,
                           kDenormMin,
                           -kDenormMin,
                           0x1p-1022,
                           -0x1p-1022,
                           1.0,
                           -1.0,
                           std::nextafter(-1.0, -kInf),
                           std::nextafter(-1.0, 0.0),
                           -2.0,
                           709.782712893384,
                           std::nextafter(709.782712893384, kInf),
                           710.0,
                           -708.3964185322642,
                           -745.1332191019411,
                           -745.1332191019412,
                           -746.0,
                           22.0,
                           -22.0,
                           0.55,
                           -0.55,
                           0x1p-27,
                           -0x1p-27,
                           0x1p53,
                           1e300,
                           -1e300};
  // a signalling NaN and NaNs with payloads
  double snan = std::numeric_limits<double>::signaling_NaN();
  v.push_back(snan);
  std::uint64_t payload = 0x7ff8000000012345ull;
  double pn;
  std::memcpy(&pn, &payload, sizeof pn);
  v.push_back(pn);
  v.push_back(-pn);
  return v;
}

template <int W, class FP, class FS>
void check_lanes(const char* name, const std::vector<double>& inputs, FP fpack, FS fscalar) {
  std::vector<double> specials = special_inputs();
  std::vector<double> xs;
  xs.reserve(inputs.size() + inputs.size() / W + 64);
  // every W-th lane block carries one special value, in a lane that moves along the blocks
  std::size_t si = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i % (W * 3) == (i / (W * 3)) % W) xs.push_back(specials[si++ % specials.size()]);
    xs.push_back(inputs[i]);
  }
  for (double s : specials)
    for (int j = 0; j < W; ++j) xs.push_back(s);  // whole packs of one special value
  while (xs.size() % W) xs.push_back(0.5);
  long mismatches = 0;
  for (std::size_t i = 0; i < xs.size(); i += W) {
    PackD<W> y = fpack(PackD<W>::load(&xs[i]));
    double out[W];
    y.store(out);
    for (int j = 0; j < W; ++j) {
      double s = fscalar(xs[i + j]);
      if (std::memcmp(&s, &out[j], sizeof s) != 0 && ++mismatches <= 5)
        ADD_FAILURE() << name << "<" << W << "> lane " << j << " x = " << xs[i + j] << ": pack "
                      << out[j] << " scalar " << s;
    }
  }
  EXPECT_EQ(mismatches, 0) << name << "<" << W << "> over " << xs.size() << " values";
}

template <int W>
void check_all_lanes() {
  check_lanes<W>(
      "exp", exp_inputs(), [](const PackD<W>& p) { return steer::vmath::exp(p); },
      [](double x) { return steer::vmath::exp(x); });
  check_lanes<W>(
      "log1p", log1p_inputs(), [](const PackD<W>& p) { return steer::vmath::log1p(p); },
      [](double x) { return steer::vmath::log1p(x); });
  check_lanes<W>(
      "tanh", tanh_inputs(), [](const PackD<W>& p) { return steer::vmath::tanh(p); },
      [](double x) { return steer::vmath::tanh(x); });
  // the PackD overloads simd.h puts in namespace steer are the same functions
  PackD<W> a(0.375);
  EXPECT_EQ(steer::exp(a)[W - 1], steer::vmath::exp(0.375));
  EXPECT_EQ(steer::log1p(a)[0], steer::vmath::log1p(0.375));
  EXPECT_EQ(steer::tanh(a)[0], steer::vmath::tanh(0.375));
}

TEST(VmathLanes, NativeWidthBitwiseEqualsScalar) { check_all_lanes<steer::kPackWidth>(); }
TEST(VmathLanes, Width2BitwiseEqualsScalar) { check_all_lanes<2>(); }
TEST(VmathLanes, Width8BitwiseEqualsScalar) { check_all_lanes<8>(); }

// ----------------------------------------------------------------------------------------
// ns per value: glibc, vmath on double, vmath on PackD<8> (per lane)
// x through an empty asm: the compiler cannot vectorize a loop of scalar calls over it, so
// the double timings are of one call after another
inline double opaque(double x) {
  asm("" : "+x"(x));
  return x;
}

// the best of 7 timings of reps passes over xs (the machine may be shared)
template <class F>
double ns_per_value(const std::vector<double>& xs, int reps, F f) {
  double best = 1e300, sink = 0;
  for (int trial = 0; trial < 7; ++trial) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) sink += f(xs);
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() /
                (double(reps) * double(xs.size()));
    if (ns < best) best = ns;
  }
  volatile double keep = sink;
  (void)keep;
  return best;
}

// G: glibc's function, V: vmath's on double, PF: vmath's on PackD<8>
template <double (*G)(double), double (*V)(double), class PF>
void measure(const char* name, const std::vector<double>& xs, PF pf) {
  const int reps = 20;
  double glibc = ns_per_value(xs, reps, [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += G(opaque(x));
    return s;
  });
  double scalar = ns_per_value(xs, reps, [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += V(opaque(x));
    return s;
  });
  double pack = ns_per_value(xs, reps, [&](const std::vector<double>& v) {
    PackD<8> s(0.0);
    for (std::size_t i = 0; i + 8 <= v.size(); i += 8) s += pf(PackD<8>::load(&v[i]));
    double t = 0;
    for (int j = 0; j < 8; ++j) t += s[j];
    return t;
  });
  std::printf(
      "%-6s ns/value: glibc %.2f  vmath double %.2f  vmath PackD<8> %.2f per lane (%.2f per "
      "pack)\n",
      name, glibc, scalar, pack, 8 * pack);
}

// ns per value (PackD<8> runs as AVX-512 only where this file is compiled for it, e.g.
// -march=native on such a machine; otherwise GCC lowers it to the narrower vectors there are)
TEST(VmathThroughput, DISABLED_NsPerValue) {
  std::printf("kPackWidth = %d\n", steer::kPackWidth);
  std::mt19937_64 g(4);
  std::vector<double> e, l, t;
  add_uniform(e, g, 1 << 16, -20.0, 20.0);
  add_uniform(l, g, 1 << 16, -0.9, 10.0);
  add_uniform(t, g, 1 << 16, -3.0, 3.0);
  measure<std::exp, steer::vmath::exp>("exp", e,
                                       [](const PackD<8>& p) { return steer::vmath::exp(p); });
  measure<std::log1p, steer::vmath::log1p>(
      "log1p", l, [](const PackD<8>& p) { return steer::vmath::log1p(p); });
  measure<std::tanh, steer::vmath::tanh>("tanh", t,
                                         [](const PackD<8>& p) { return steer::vmath::tanh(p); });
}

}  // namespace
