// steer's own exp, log1p, tanh, sin and cos in float64: one algorithm, written once as a
// template and instantiated for double and for simd.h's PackD<W>. Both instantiations run the
// same IEEE operations in the same order — +, −, ×, ÷ only (no fma; the build passes
// -ffp-contract=off), value branches turned into selects, and integer operations on the bits —
// so lane i of a pack result has exactly the bits the double function returns for lane i's
// input, whatever the other lanes hold. A rollout computed W-wide is then bitwise the rollout
// computed alone (simd.h). The pack code is branch-free vector code: every lane computes every
// arm and keeps its own; no libm calls — except sin and cos beyond |x| = 2^20, where both the
// double and the pack functions return libm's std::sin/std::cos (a pack fixes such lanes one by
// one after its vector code, a branch taken only when some lane is there).
//
// Accuracy, measured by tests/backend/vmath_test.cpp over > 10^6 inputs per function spread over
// the whole domain, against the x87 long-double reference (expl, log1pl, tanhl, sinl, cosl), in
// ulps of the double result (ulp(y) = 2^(e−52) for 2^e <= |y| < 2^(e+1); 2^−1074 for
// subnormal y):
//   exp    max 0.65 ulp (normal results); subnormal results within 0.75 × 2^−1074
//   log1p  max 0.77 ulp (all x > −1)
//   tanh   max 1.23 ulp (all x)
//   sin    max 0.78 ulp (|x| <= 2^20, near the zeros too; 0.79 over 2.5·10^7 more inputs)
//   cos    max 0.77 ulp (likewise; 0.79)
// Each function's comment gives its method, range reduction and error budget.
//
// This header is plain C++17: it does not include simd.h (simd.h includes it at its end),
// and the pack instantiation reaches the lanes only through what PackD provides (its vector
// member v, the mask its comparisons return, whose member m is an int64 vector, and
// steer::select, found by argument-dependent lookup). A model header can include it alone,
// also in nvcc's host compilation.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

namespace steer {
namespace vmath {
namespace detail {

// What the algorithms need beyond arithmetic and comparisons: the IEEE bits of a value as a
// 64-bit integer (an int64 vector for a pack), back, and a lane-wise choice of values. The
// primary template is for PackD<W>: its comparisons return MaskD<W>, whose member m is the
// int64 vector (all ones where true) that serves as the integer type I. All integer
// operations below stay within int64 range (no overflow, no shift of a negative value), so
// scalar and vector integer arithmetic agree.
template <class P>
struct Ops {
  using I = decltype((std::declval<const P&>() < std::declval<const P&>()).m);
  static I bits(const P& x) {
    I i;
    std::memcpy(&i, &x.v, sizeof i);
    return i;
  }
  static P from(const I& i) {
    P x;
    std::memcpy(&x.v, &i, sizeof i);
    return x;
  }
  template <class M>
  static P sel(const M& c, const P& a, const P& b) {
    return select(c, a, b);  // steer::select(MaskD, PackD, PackD)
  }
};
template <>
struct Ops<double> {
  using I = std::int64_t;
  static I bits(double x) {
    I i;
    std::memcpy(&i, &x, sizeof i);
    return i;
  }
  static double from(I i) {
    double x;
    std::memcpy(&x, &i, sizeof x);
    return x;
  }
  // (may compile to a branch: both arms are values already, the bits are the same)
  static double sel(bool c, double a, double b) { return c ? a : b; }
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kSignBit = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kAbsMask = std::numeric_limits<std::int64_t>::max();
// 1.5·2^52: for |y| < 2^51, y + kShift rounds y to the nearest integer n (ties to even), and
// the representation holds n in its low bits: bits(y + kShift) = kShiftBits + n
constexpr double kShift = 0x1.8p52;
constexpr std::int64_t kShiftBits = 0x4338000000000000;
constexpr std::int64_t kExpOne = 0x3ff0000000000000;  // bits of 1.0; 2^n has bits (n + 1023) << 52
// ln 2 in two parts (Cody–Waite): kLn2Hi has 42 significant bits, so n·kLn2Hi is exact for
// |n| < 2^11; kLn2Hi + kLn2Lo = ln 2 to 2^−98
constexpr double kInvLn2 = 0x1.71547652b82fep0;
constexpr double kLn2Hi = 0x1.62e42fefa3800p-1;
constexpr double kLn2Lo = 0x1.ef35793c76730p-45;

// e^r − 1 − r = r²/2 + r³·Q(r) for |r| <= ln2/2 (+ a few ulp). Q has degree 9, minimax on
// [−ln2/2, ln2/2] for the error it makes in e^r (Remez exchange in 60-digit arithmetic,
// coefficients then rounded to double): |r³(Q(r) − Q_exact(r))|/e^r < 2^−61.8, below
// 0.004 ulp of e^r (degree 8 would give 2^−55.5, ~0.2 ulp). Estrin's scheme (pairs, then
// r², r⁴, r⁸) keeps the dependency chain short. Its rounding errors, about one ulp of the
// result (|…| <= 0.06), are ~0.1 ulp of e^r.
template <class T>
inline T expm1_tail(const T& r) {
  constexpr double c0 = 0x1.5555555555558p-3, c1 = 0x1.555555555553ap-5, c2 = 0x1.111111110fc65p-7,
                   c3 = 0x1.6c16c16c24a36p-10, c4 = 0x1.a01a01ade28c0p-13,
                   c5 = 0x1.a01a0155ef4dcp-16, c6 = 0x1.71ddfceec86c0p-19,
                   c7 = 0x1.27e593e9ddfe2p-22, c8 = 0x1.af5753511702bp-26,
                   c9 = 0x1.1e4ad6e7aa804p-29;
  T r2 = r * r;
  T r4 = r2 * r2;
  T r8 = r4 * r4;
  T q01 = c0 + c1 * r, q23 = c2 + c3 * r, q45 = c4 + c5 * r, q67 = c6 + c7 * r, q89 = c8 + c9 * r;
  T q03 = q01 + q23 * r2, q47 = q45 + q67 * r2;
  T q = (q03 + q47 * r4) + q89 * r8;
  return r2 * (0.5 + r * q);
}

// Cody–Waite reduction of y (|y| <= 746, so |n| < 2^11): y = n·ln2 + r + rc, n = round(y/ln2),
// |r| <= ln2/2 (+ an ulp). hi = y − n·kLn2Hi is exact (n·kLn2Hi is exact and within a
// factor 2 of y, or n = 0), lo = n·kLn2Lo, r = hi − lo rounded and rc = (hi − r) − lo its
// rounding error, so that the reduction itself loses nothing. nb = bits(y/ln2 + kShift) =
// kShiftBits + n, n as an integer.
template <class T>
struct Reduced {
  T r, rc;
  typename Ops<T>::I nb;
};
template <class T>
inline Reduced<T> reduce_ln2(const T& y) {
  T t = y * kInvLn2 + kShift;
  T n = t - kShift;
  T hi = y - n * kLn2Hi;
  T lo = n * kLn2Lo;
  Reduced<T> z;
  z.r = hi - lo;
  z.rc = (hi - z.r) - lo;
  z.nb = Ops<T>::bits(t);
  return z;
}

// ---------------------------------------------------------------------------------------
// exp(x).
// Range reduction: x is clamped to [−746, 710] (beyond, the result is already +inf or 0;
// NaN is handled at the end), then x = n·ln2 + r + rc (reduce_ln2), n ∈ [−1076, 1024].
// e^r = 1 + r + (rc + r²/2 + r³Q(r)), with 1 + r carried exactly as hi + lo (Fast2Sum,
// |r| < 1), so the only large rounding is the last addition: p = hi + (lo + …).
// e^x = p·2^n, applied in two steps, (p·2^n1)·2^n2 with n1 = floor(n/2), n2 = n − n1: both
// factors are normal doubles for every n in range, the first product is exact and only the
// second rounds, once. That gives overflow to +inf (from the double after 709.782712893384,
// whose e^x is the last finite one) and gradual underflow — subnormals, then 0 below
// ln 2^−1075 = −745.1332191019412 — with no special case.
// Error budget (ulps of the result): 0.5 (last addition) + ~0.1 (rounding in the r²/2 + …
// terms) + < 0.004 (polynomial); measured max 0.65 ulp for normal results. A subnormal
// result is p (53 bits) rounded again to the subnormal grid: measured within 0.75 of its
// spacing 2^−1074.
template <class T>
inline T exp_impl(const T& x) {
  using O = Ops<T>;
  using I = typename O::I;
  T xc = O::sel(x < 710.0, x, T(710.0));  // NaN → 710 here (replaced at the end)
  xc = O::sel(xc > -746.0, xc, T(-746.0));
  Reduced<T> z = reduce_ln2(xc);
  T hi = 1.0 + z.r;
  T lo = z.r - (hi - 1.0);
  T p = hi + (lo + (z.rc + expm1_tail(z.r)));
  // 2^n = 2^n1·2^n2 with n1 = floor(n/2) and n2 = n − n1, both in [−538, 512]; as integers
  // h = n1 + 1024 = (n + 2048) >> 1 (a shift of a positive value), and the exponent fields
  // n1 + 1023 = h − 1 and n2 + 1023 = (n + 2047) − h
  I h = (z.nb + (std::int64_t(2048) - kShiftBits)) >> 1;
  T s1 = O::from((h - std::int64_t(1)) << 52);
  T s2 = O::from(((z.nb + (std::int64_t(2047) - kShiftBits)) - h) << 52);
  T y = (p * s1) * s2;
  return O::sel(x != x, x + x, y);
}

// ---------------------------------------------------------------------------------------
// log1p(x) = log(1 + x).
// Method (after Sun's fdlibm log1p): u = fl(1 + x), and c = (1 + x) − u exactly:
//   c = x − (u − 1) for x < 1 (u − 1 and the difference are exact: Sterbenz), and
//   c = 1 − (u − x) for x >= 1 (u − x is exact, u ∈ [x, 2x]; and so is 1 − (u − x)).
// Range reduction: u = 2^k·m with m ∈ [√½, √2), read off the bits of u; f = m − 1 (exact),
//   log1p(x) = k·ln2 + log(1 + f) + log(1 + c/u),  log(1 + c/u) = c·2^−k/m + O(2^−106).
// When k = 0, f is x itself and c = 0 (f is then exact, and log1p(±tiny) = ±tiny).
// log(1 + f) = 2·atanh(s) with s = f/(2 + f), |s| <= 0.1716, z = s²:
//   log(1 + f) = 2s + s·R(z),  R(z) = z·P(z) ≈ 2z/3 + 2z²/5 + …,
// evaluated as f − (f²/2 − s·(f²/2 + R)) (= 2s + sR), in which s's rounding errors multiply
// only small terms. P has degree 6, minimax (Remez) on z ∈ [0, 0.02944] for the relative
// error it makes in log(1 + f): < 2^−58. In the correction c·2^−k/m, 1/m = (1 − s)/(1 + s) ≈
// 1 − 2(s − z) (relative error < 2|s|³ < 1%, on a term of at most 2 ulp); 2^−k comes from k
// clamped to 64 (beyond, the term is < 2^−64 against a result > 44).
// Assembly: k·kLn2Hi (exact) + f is carried exactly as hi + lo (Fast2Sum), f²/2 as hfsq +
// hfe (Dekker's product with Veltkamp's split), so that the rounding errors left are the last
// addition's (0.5 ulp) and those of the small terms (f²/2 − s·(…) and s: ~0.25 ulp).
// Measured max 0.77 ulp for x > −1.
// Special values: log1p(±0) = ±0, log1p(−1) = −inf, log1p(x < −1) = NaN, log1p(+inf) = +inf,
// NaN → NaN.
template <class T>
inline T log1p_impl(const T& x) {
  using O = Ops<T>;
  using I = typename O::I;
  constexpr double p0 = 0x1.555555555555cp-1, p1 = 0x1.9999999991e21p-2, p2 = 0x1.24924932661adp-2,
                   p3 = 0x1.c71c5e4ad89a8p-3, p4 = 0x1.7463cecbcba4dp-3, p5 = 0x1.39dec2745a1c2p-3,
                   p6 = 0x1.2cb01278fca0fp-3;
  constexpr std::int64_t kSqrtHalfBits = 0x3fe6a09e667f3bcd;  // √½ = 0x1.6a09e667f3bcdp-1
  T u = 1.0 + x;
  T c = O::sel(x < 1.0, x - (u - 1.0), 1.0 - (u - x));
  // positive finite u only (NaN, inf and u <= 0 lanes are replaced at the end)
  T uc = O::sel((u > 0.0) && (u < kInf), u, T(1.0));
  // u = 2^k·m: offset the bits so that [√½, √2) starts at an exponent boundary
  I hu = O::bits(uc) + (kExpOne - kSqrtHalfBits);  // > 0
  I k = (hu >> 52) - std::int64_t(1023);
  T m = O::from((hu & std::int64_t(0x000fffffffffffff)) + kSqrtHalfBits);
  T kd = O::from(k + kShiftBits) - kShift;  // k as a double
  auto k0 = kd == 0.0;
  T f = O::sel(k0, x, m - 1.0);
  c = O::sel(k0, T(0.0), c);
  T kc = O::sel(kd < 64.0, kd, T(64.0));
  T inv2k = O::from((kShiftBits + 1023 - O::bits(kc + kShift)) << 52);  // 2^−min(k, 64)
  T s = f / (2.0 + f);
  T z = s * s;
  T z2 = z * z;
  T z4 = z2 * z2;
  T pz = ((p0 + p1 * z) + (p2 + p3 * z) * z2) + ((p4 + p5 * z) + p6 * z2) * z4;
  T R = z * pz;
  T corr = (c * inv2k) * (1.0 - 2.0 * (s - z));
  T kl = kd * kLn2Hi;
  T hi = kl + f;
  T lo = f - (hi - kl);  // k·kLn2Hi + f = hi + lo (|k·kLn2Hi| >= ln2 > |f|, or k = 0)
  T ff = f * f;
  T hfsq = 0.5 * ff;
  T cf = f * 134217729.0;  // 2^27 + 1
  T fh = cf - (cf - f);
  T fl = f - fh;
  T hfe = 0.5 * (((fh * fh - ff) + 2.0 * (fh * fl)) + fl * fl);  // f²/2 = hfsq + hfe
  T y = hi + (lo - (hfsq - (s * (hfsq + R) + ((kd * kLn2Lo + corr) - hfe))));
  y = O::sel(x == 0.0, x, y);  // ±0 (the sums above would turn −0 into +0)
  y = O::sel(x < -1.0, T(kNaN), y);
  y = O::sel(x == -1.0, T(-kInf), y);
  y = O::sel(x == kInf, T(kInf), y);
  return O::sel(x != x, x + x, y);
}

// e^y − 1 for y ∈ [0, 45] (the range tanh needs), as an unevaluated sum hi + lo with
// |lo| <= ulp(hi)/2: y = n·ln2 + r + rc (reduce_ln2), n ∈ [0, 65], and
//   e^y − 1 = (2^n − 1) + 2^n·r + 2^n·(rc + r²/2 + r³Q(r)).
// 2^n − 1 is exact for n <= 53 (beyond, its rounding is far below the result's ulp), 2^n·r
// is exact, and their sum is carried exactly (Fast2Sum: 2^n − 1 >= 2^n·|r| for n >= 1, and
// 2^n − 1 = 0 for n = 0). The rest adds ~0.1–0.3 ulp of rounding error.
template <class T>
struct Sum {
  T hi, lo;
};
template <class T>
inline Sum<T> expm1_sum(const T& y) {
  Reduced<T> z = reduce_ln2(y);
  T s = Ops<T>::from((z.nb + (std::int64_t(1023) - kShiftBits)) << 52);  // 2^n
  T a = s - 1.0, b = s * z.r;
  T h = a + b;
  T rest = (b - (h - a)) + s * (z.rc + expm1_tail(z.r));
  Sum<T> e;
  e.hi = h + rest;
  e.lo = rest - (e.hi - h);  // Fast2Sum: |rest| < |h| (or h = 0)
  return e;
}

// ---------------------------------------------------------------------------------------
// tanh(x), odd: computed for a = |x|, then given x's sign bit. With t = expm1(2a) >= 0:
//   a < 0.55 (≈ ln3/2, tanh < ½):  tanh a = t/(t + 2)
//   0.55 <= a < 22:                tanh a = 1 − 2/(t + 2)  (2/(t + 2) <= ½: subtracting it
//                                  from 1 halves its relative error)
//   a >= 22:  1 (1 − tanh 22 < 2^−62); a < 2^−27: a (a³/3 is below half an ulp of a).
// Both arms share one expm1 and one division q = num/d (num = t or 2 per lane, d = t + 2).
// Rounding t and d would cost up to about 1 ulp each, so t comes as hi + lo (expm1_sum),
// d's rounding error dl is recovered exactly (Knuth's TwoSum), and q is corrected to first
// order: num/(d + dl) = q + (num_lo − q·dl)/d, where 1/d = (1 − q)/2 on the small arm
// (q = t/d) and q/2 on the large one (q = 2/d): no second division.
// Error budget: the division's rounding (0.5 ulp), the corrected sum's (0.5 ulp) and what
// remains of expm1's (~0.2 ulp); measured max 1.23 ulp.
template <class T>
inline T tanh_impl(const T& x) {
  using O = Ops<T>;
  using I = typename O::I;
  I sign = O::bits(x) & kSignBit;
  T a = O::from(O::bits(x) & kAbsMask);
  auto small = a < 0.55;
  T ac = O::sel(a < 22.0, a, T(22.0));  // NaN → 22 here (replaced at the end)
  Sum<T> t = expm1_sum(2.0 * ac);
  T d = t.hi + 2.0;
  T bb = d - t.hi;
  T dl = ((t.hi - (d - bb)) + (2.0 - bb)) + t.lo;  // t + 2 = d + dl
  T q = O::sel(small, t.hi, T(2.0)) / d;
  T num_lo = O::sel(small, t.lo, T(0.0));
  T half_inv_d = 0.5 * O::sel(small, 1.0 - q, q);
  T qc = q + (num_lo - q * dl) * half_inv_d;
  T y = O::sel(small, qc, 1.0 - qc);
  y = O::sel(a < 0x1p-27, a, y);
  y = O::from(O::bits(y) | sign);
  return O::sel(x != x, x + x, y);
}

// ---------------------------------------------------------------------------------------
// sin(x) and cos(x), both from one reduction and two kernels (sincos_core); the public
// functions below pick what they need. Valid for |x| <= kTrigBound = 2^20 (and NaN, ±inf);
// beyond the bound the public functions call libm (std::sin, std::cos) on those values, the
// double function directly and the pack function lane by lane after the vector code.
// Range reduction (Cody–Waite, π/2 in four parts, the first three with <= 32 significant
// bits, as fdlibm's pio2_1, pio2_2, pio2_3 and pio2_3t): n = round(x·2/π) (ties to even, by
// the kShift trick; |n| <= 2^20·2/π < 2^20), and
//   x − n·π/2 = (x − n·P1) − n·P2 − n·P3 − n·P4 + n·O(2^−160).
// n·P1, n·P2 and n·P3 are exact (|n| < 2^20, <= 32 + 20 bits); t = x − n·P1 is exact (n·P1 is
// within a factor 2 of x, or n = 0); the two subtractions that follow are carried exactly as
// sums (Knuth's TwoSum) and only n·P4 (< 2^−83) rounds, so r + rr (|rr| <= ulp(r)/2) is
// x − n·π/2 to a relative 2^−75 even at the doubles closest to a multiple of π/2 (within the
// bound, |x − n·π/2| >= 2^−60.5, at x = 0x1.6c6cbc45dc8dep+5 ≈ 45.55: a search of the
// nearest double to every multiple). The quadrant is n mod 4, from the low bits of
// bits(x·2/π + kShift). |r| <= π/4 (+ 2^−32).
// Kernels on r + rr, z = r² (after fdlibm's __kernel_sin/__kernel_cos):
//   sin(r + rr) = r + r³·S(z) + rr·(1 − z/2),  evaluated as r − ((z·(rr/2 − v·S'(z)) − rr) − v·s0)
//   cos(r + rr) = 1 − z/2 + z²·C(z) − r·rr,    as w + (((1 − w) − z/2) + (z·z·C(z) − r·rr))
// with v = z·r, S = s0 + z·S', w = 1 − z/2 and (1 − w) − z/2 its exact rounding error. S has
// degree 6 and C degree 5 in z, minimax on r ∈ [0, 0.7854] for the relative error they make
// in sin r and cos r (Remez exchange in 60-digit arithmetic, s0 = −1/6 and c0 = 1/24 rounded
// to double first, the others refitted, then rounded): < 2^−61 and < 2^−62.7.
// Quadrant: sin x = (sin r, cos r, −sin r, −cos r) and cos x = (cos r, −sin r, −cos r, sin r)
// for n mod 4 = 0, 1, 2, 3: a swap and a sign, on the bits. sin(±tiny) = ±tiny for
// |x| < 2^−27 (x³/6 is below a quarter ulp of x), which also keeps sin(−0) = −0.
// Error budget: the last addition (0.5 ulp), the rounding of v·s0 and of z (~0.1 ulp in sin;
// in cos, z/2's rounding is up to 0.25 ulp of cos r near r = π/4), the polynomials (< 0.01
// ulp); measured max 0.78 ulp for sin and 0.77 for cos (tests/backend/vmath_test.cpp, 1.8·10^6
// inputs), 0.79 for both over 2.5·10^7 more (uniform to 2^20, and ±3 ulps around the double
// nearest to every multiple of π/2 up to the bound).
constexpr double kTrigBound = 0x1p20;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kPio2_1 = 0x1.921fb544p0;          // 31 significant bits
constexpr double kPio2_2 = 0x1.0b4611a6p-34;        // 32
constexpr double kPio2_3 = 0x1.3198a2ep-69;         // 28
constexpr double kPio2_4 = 0x1.b839a252049c1p-104;  // π/2 − P1 − P2 − P3 rounded (< 2^−159 off)

// a + b = s + e exactly (Knuth's TwoSum: no condition on the magnitudes)
template <class T>
inline Sum<T> two_sum(const T& a, const T& b) {
  Sum<T> r;
  r.hi = a + b;
  T bb = r.hi - a;
  r.lo = (a - (r.hi - bb)) + (b - bb);
  return r;
}

template <class T>
struct SinCos {
  T s, c;
};
template <class T>
inline SinCos<T> sincos_core(const T& x) {
  using O = Ops<T>;
  using I = typename O::I;
  constexpr double s0 = -0x1.5555555555555p-3, s1 = 0x1.1111111111068p-7,
                   s2 = -0x1.a01a019ffe281p-13, s3 = 0x1.71de3a335999dp-19,
                   s4 = -0x1.ae642bd6a9d24p-26, s5 = 0x1.6109617c2e60ap-33,
                   s6 = -0x1.9fc9d819fbfb3p-41;
  constexpr double c0 = 0x1.5555555555555p-5, c1 = -0x1.6c16c16c16289p-10,
                   c2 = 0x1.a01a019e23bc8p-16, c3 = -0x1.27e4f8f761560p-22,
                   c4 = 0x1.1eea7dac7a390p-29, c5 = -0x1.8ff3a54a095d4p-37;
  T a = O::from(O::bits(x) & kAbsMask);
  // reduction (beyond the bound, NaN or inf the values are meaningless and replaced later)
  T tn = x * kTwoOverPi + kShift;
  T n = tn - kShift;
  I q = O::bits(tn) & std::int64_t(3);  // n mod 4 (kShiftBits has its low bits clear)
  T t = x - n * kPio2_1;
  Sum<T> d1 = two_sum(t, -(n * kPio2_2));
  Sum<T> d2 = two_sum(d1.hi, -(n * kPio2_3));
  T lo = (d1.lo + d2.lo) - n * kPio2_4;
  T r = d2.hi + lo;
  T rr = (d2.hi - r) + lo;  // Fast2Sum: |lo| is at most about an ulp of d2.hi
  // kernels
  T z = r * r;
  T z2 = z * z;
  T z4 = z2 * z2;
  T v = z * r;
  T ps = ((s1 + s2 * z) + (s3 + s4 * z) * z2) + (s5 + s6 * z) * z4;
  T sr = r - ((z * (0.5 * rr - v * ps) - rr) - v * s0);
  T pc = ((c0 + c1 * z) + (c2 + c3 * z) * z2) + (c4 + c5 * z) * z4;
  T hz = 0.5 * z;
  T w = 1.0 - hz;
  T cr = w + (((1.0 - w) - hz) + (z * (z * pc) - r * rr));
  // quadrant: swap where n is odd; sign bit of sin where n mod 4 is 2 or 3, of cos where 1 or 2
  I swap = std::int64_t(0) - (q & std::int64_t(1));
  I sneg = (std::int64_t(0) - ((q >> 1) & std::int64_t(1))) & kSignBit;
  I cneg = (std::int64_t(0) - (((q + std::int64_t(1)) >> 1) & std::int64_t(1))) & kSignBit;
  I sb = O::bits(sr), cb = O::bits(cr);
  SinCos<T> y;
  y.s = O::from(((sb & ~swap) | (cb & swap)) ^ sneg);
  y.c = O::from(((cb & ~swap) | (sb & swap)) ^ cneg);
  y.s = O::sel(a < 0x1p-27, x, y.s);
  auto finite = a < kInf;
  y.s = O::sel(finite, y.s, x - x);  // NaN stays NaN, ±inf → NaN
  y.c = O::sel(finite, y.c, x - x);
  return y;
}

// |x| beyond kTrigBound (and finite): the double functions call libm there, and a pack calls
// fix(i, x_i) for each such lane i after the vector code (a rare branch; the lane loop only
// runs when some lane is beyond the bound), so that each lane has the double function's bits
inline bool trig_beyond(double x) {
  double a = Ops<double>::from(Ops<double>::bits(x) & kAbsMask);
  return a > kTrigBound && a < kInf;
}
template <class P, class F>
inline void trig_fix_lanes(const P& x, F fix) {
  constexpr int W = sizeof(x.v) / sizeof(double);
  P a = Ops<P>::from(Ops<P>::bits(x) & kAbsMask);
  auto big = (a > kTrigBound) && (a < kInf);
  bool any = false;
  for (int i = 0; i < W; ++i) any |= big.m[i] != 0;
  if (!any) return;
  for (int i = 0; i < W; ++i)
    if (big.m[i]) fix(i, double(x.v[i]));
}

}  // namespace detail

inline double exp(double x) { return detail::exp_impl(x); }
inline double log1p(double x) { return detail::log1p_impl(x); }
inline double tanh(double x) { return detail::tanh_impl(x); }
// sin and cos (sincos: both, with the bits of the two functions); |x| > kTrigBound: libm
inline double sin(double x) {
  return detail::trig_beyond(x) ? std::sin(x) : detail::sincos_core(x).s;
}
inline double cos(double x) {
  return detail::trig_beyond(x) ? std::cos(x) : detail::sincos_core(x).c;
}
inline void sincos(double x, double* s, double* c) {
  if (detail::trig_beyond(x)) {
    *s = std::sin(x);
    *c = std::cos(x);
    return;
  }
  detail::SinCos<double> y = detail::sincos_core(x);
  *s = y.s;
  *c = y.c;
}

// P = PackD<W> (simd.h): lane i is the double function of lane i, bit for bit
template <class P>
inline P exp(const P& a) {
  return detail::exp_impl(a);
}
template <class P>
inline P log1p(const P& a) {
  return detail::log1p_impl(a);
}
template <class P>
inline P tanh(const P& a) {
  return detail::tanh_impl(a);
}
template <class P>
inline P sin(const P& a) {
  P s = detail::sincos_core(a).s;
  detail::trig_fix_lanes(a, [&s](int i, double x) { s.v[i] = std::sin(x); });
  return s;
}
template <class P>
inline P cos(const P& a) {
  P c = detail::sincos_core(a).c;
  detail::trig_fix_lanes(a, [&c](int i, double x) { c.v[i] = std::cos(x); });
  return c;
}
template <class P>
inline void sincos(const P& a, P* s, P* c) {
  detail::SinCos<P> y = detail::sincos_core(a);
  detail::trig_fix_lanes(a, [&y](int i, double x) {
    y.s.v[i] = std::sin(x);
    y.c.v[i] = std::cos(x);
  });
  *s = y.s;
  *c = y.c;
}

}  // namespace vmath
}  // namespace steer
