// SIMD across rollouts on the CPU (host only). PackD<W> holds one float64 value of each of
// W rollouts, and computes lane by lane with exactly the IEEE operations a double does:
// running a model's one-lane step on PackD<W> advances W rollouts in lockstep, and every
// lane's bits equal those of the same step run on double (tests/backend/vmath_test.cpp,
// tests/backend/packed_rollout_test.cpp). What makes that hold:
//   - +, −, ×, ÷ and sqrt are correctly rounded, lane-wise as in scalar code;
//   - the build disables floating-point contraction (-ffp-contract=off, CMakeLists.txt), so
//     neither side fuses a multiply-add the other does not;
//   - branches on values become selects (MaskD, select): both arms are computed and each lane
//     keeps the arm its scalar run would take;
//   - exp, log1p, tanh, sin and cos are steer's own (vmath.h), one algorithm for double and
//     PackD (model code calls them through model_math.h).
// PackF<W> is the same for float32: W float lanes (the same W, so a float pack widens to a
// PackD<W> in one conversion) with float arithmetic, whose exp, log1p, tanh, sin and cos are
// vmath's double functions rounded to float — as model_math.h computes them for a scalar float
// on the host — so a float32 rollout too gets the same bits alone and in a pack.
// The width follows the instruction set the compiler targets: 8 doubles with AVX-512, 4 with
// AVX, 2 otherwise (GCC's vector extensions lower wider vectors to what exists, so any W
// compiles everywhere; the results do not depend on W).
#pragma once

#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#error "steer/simd.h is host-only"
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "steer/core.h"

// GCC notes that passing a 64-byte vector by value has another ABI without AVX-512; these are
// inline templates within one build, so the note does not apply
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace steer {

#if defined(__AVX512F__)
constexpr int kPackWidth = 8;
#elif defined(__AVX__)
constexpr int kPackWidth = 4;
#else
constexpr int kPackWidth = 2;
#endif

template <int W>
struct MaskD;

// GCC vector types of W doubles and W int64 (a dependent vector_size in a template is not
// applied, so each width is spelled out); may_alias: a lane is also read as a plain double
template <int W>
struct VecOf;
#define STEER_VEC_OF(w)                                                                       \
  template <>                                                                                 \
  struct VecOf<w> {                                                                           \
    typedef double d __attribute__((vector_size(w * sizeof(double)), may_alias));             \
    typedef std::int64_t i __attribute__((vector_size(w * sizeof(std::int64_t)), may_alias)); \
  };
STEER_VEC_OF(1)
STEER_VEC_OF(2)
STEER_VEC_OF(4)
STEER_VEC_OF(8)
STEER_VEC_OF(16)
#undef STEER_VEC_OF
template <int W>
struct VecOfF;
#define STEER_VEC_OF_F(w)                                                                     \
  template <>                                                                                 \
  struct VecOfF<w> {                                                                          \
    typedef float f __attribute__((vector_size(w * sizeof(float)), may_alias));               \
    typedef std::int32_t i __attribute__((vector_size(w * sizeof(std::int32_t)), may_alias)); \
  };
STEER_VEC_OF_F(2)
STEER_VEC_OF_F(4)
STEER_VEC_OF_F(8)
STEER_VEC_OF_F(16)
#undef STEER_VEC_OF_F

template <int W>
struct PackD {
  typedef typename VecOf<W>::d vec;
  typedef double value_type;
  vec v;
  static constexpr int width = W;
  PackD() = default;  // uninitialized, as a double is (tapes are large and written before read)
  PackD(double a) { v = vec{} + a; }  // broadcast: the same value in every lane
  PackD(int a) : PackD(double(a)) {}
  static PackD from(vec x) {
    PackD r;
    r.v = x;
    return r;
  }
  static PackD load(const double* p) {
    PackD r;
    std::memcpy(&r.v, p, sizeof(vec));
    return r;
  }
  void store(double* p) const { std::memcpy(p, &v, sizeof(vec)); }
  double operator[](int i) const { return v[i]; }
  void set(int i, double a) { v[i] = a; }
  PackD& operator+=(const PackD& o) { return v += o.v, *this; }
  PackD& operator-=(const PackD& o) { return v -= o.v, *this; }
  PackD& operator*=(const PackD& o) { return v *= o.v, *this; }
  PackD& operator/=(const PackD& o) { return v /= o.v, *this; }
};

// a lane mask: all bits set where the comparison holds (GCC vector comparison result)
template <int W>
struct MaskD {
  typedef typename VecOf<W>::i ivec;
  ivec m;
  bool operator[](int i) const { return m[i] != 0; }
};

template <int W>
inline PackD<W> operator+(const PackD<W>& a, const PackD<W>& b) {
  return PackD<W>::from(a.v + b.v);
}
template <int W>
inline PackD<W> operator-(const PackD<W>& a, const PackD<W>& b) {
  return PackD<W>::from(a.v - b.v);
}
template <int W>
inline PackD<W> operator*(const PackD<W>& a, const PackD<W>& b) {
  return PackD<W>::from(a.v * b.v);
}
template <int W>
inline PackD<W> operator/(const PackD<W>& a, const PackD<W>& b) {
  return PackD<W>::from(a.v / b.v);
}
template <int W>
inline PackD<W> operator-(const PackD<W>& a) {
  return PackD<W>::from(-a.v);
}
// mixed with a double: the double is broadcast (as S(c) would)
#define STEER_PACK_MIXED(op)                                 \
  template <int W>                                           \
  inline PackD<W> operator op(const PackD<W>& a, double b) { \
    return a op PackD<W>(b);                                 \
  }                                                          \
  template <int W>                                           \
  inline PackD<W> operator op(double a, const PackD<W>& b) { \
    return PackD<W>(a) op b;                                 \
  }
STEER_PACK_MIXED(+)
STEER_PACK_MIXED(-)
STEER_PACK_MIXED(*)
STEER_PACK_MIXED(/)
#undef STEER_PACK_MIXED

#define STEER_PACK_CMP(op)                                            \
  template <int W>                                                    \
  inline MaskD<W> operator op(const PackD<W>& a, const PackD<W>& b) { \
    MaskD<W> r;                                                       \
    r.m = (typename MaskD<W>::ivec)(a.v op b.v);                      \
    return r;                                                         \
  }                                                                   \
  template <int W>                                                    \
  inline MaskD<W> operator op(const PackD<W>& a, double b) {          \
    return a op PackD<W>(b);                                          \
  }
STEER_PACK_CMP(<)
STEER_PACK_CMP(>)
STEER_PACK_CMP(<=)
STEER_PACK_CMP(>=)
STEER_PACK_CMP(==)
STEER_PACK_CMP(!=)
#undef STEER_PACK_CMP

template <int W>
inline MaskD<W> operator!(const MaskD<W>& a) {
  MaskD<W> r;
  r.m = ~a.m;
  return r;
}
template <int W>
inline MaskD<W> operator&&(const MaskD<W>& a, const MaskD<W>& b) {
  MaskD<W> r;
  r.m = a.m & b.m;
  return r;
}
template <int W>
inline MaskD<W> operator||(const MaskD<W>& a, const MaskD<W>& b) {
  MaskD<W> r;
  r.m = a.m | b.m;
  return r;
}
template <int W>
inline bool any_lane(const MaskD<W>& a) {
  for (int i = 0; i < W; ++i)
    if (a.m[i]) return true;
  return false;
}
// lane i: c ? a : b (both computed; the lane's scalar run computes only its own arm)
template <int W>
inline PackD<W> select(const MaskD<W>& c, const PackD<W>& a, const PackD<W>& b) {
  return PackD<W>::from(c.m ? a.v : b.v);
}

// f applied to each N-lane chunk of a, as the instruction set's vector type V
template <class V, int N, int W, class F>
inline PackD<W> by_chunks(const PackD<W>& a, F f) {
  PackD<W> r;
  for (int i = 0; i < W; i += N) {
    V x;
    std::memcpy(&x, reinterpret_cast<const double*>(&a.v) + i, sizeof x);
    x = f(x);
    std::memcpy(reinterpret_cast<double*>(&r.v) + i, &x, sizeof x);
  }
  return r;
}
// sqrt is correctly rounded in every lane, as the scalar sqrt is. GCC does not vectorize a lane
// loop of __builtin_sqrt here (it extracts and reinserts the lanes), so the widths the target
// has take the vector instruction itself.
template <int W>
inline PackD<W> sqrt(const PackD<W>& a) {
#if defined(__AVX512F__)
  if constexpr (W % 8 == 0)
    return by_chunks<__m512d, 8>(a, [](__m512d x) { return _mm512_sqrt_pd(x); });
#endif
#if defined(__AVX__)
  if constexpr (W % 4 == 0)
    return by_chunks<__m256d, 4>(a, [](__m256d x) { return _mm256_sqrt_pd(x); });
#endif
#if defined(__SSE2__)
  if constexpr (W % 2 == 0)
    return by_chunks<__m128d, 2>(a, [](__m128d x) { return _mm_sqrt_pd(x); });
#endif
  PackD<W> r;
  for (int i = 0; i < W; ++i) r.v[i] = __builtin_sqrt(a.v[i]);
  return r;
}
// ---- float32 packs ----
template <int W>
struct MaskF;
template <int W>
struct PackF {
  typedef typename VecOfF<W>::f vec;
  typedef float value_type;
  vec v;
  static constexpr int width = W;
  PackF() = default;
  PackF(float a) { v = vec{} + a; }
  PackF(double a) : PackF(float(a)) {}  // rounded to float first, as S(a) rounds for S = float
  PackF(int a) : PackF(float(a)) {}
  static PackF from(vec x) {
    PackF r;
    r.v = x;
    return r;
  }
  static PackF load(const float* p) {
    PackF r;
    std::memcpy(&r.v, p, sizeof(vec));
    return r;
  }
  void store(float* p) const { std::memcpy(p, &v, sizeof(vec)); }
  float operator[](int i) const { return v[i]; }
  void set(int i, float a) { v[i] = a; }
  PackF& operator+=(const PackF& o) { return v += o.v, *this; }
  PackF& operator-=(const PackF& o) { return v -= o.v, *this; }
  PackF& operator*=(const PackF& o) { return v *= o.v, *this; }
  PackF& operator/=(const PackF& o) { return v /= o.v, *this; }
};
template <int W>
struct MaskF {
  typedef typename VecOfF<W>::i ivec;
  ivec m;
  bool operator[](int i) const { return m[i] != 0; }
};

template <int W>
inline PackF<W> operator+(const PackF<W>& a, const PackF<W>& b) {
  return PackF<W>::from(a.v + b.v);
}
template <int W>
inline PackF<W> operator-(const PackF<W>& a, const PackF<W>& b) {
  return PackF<W>::from(a.v - b.v);
}
template <int W>
inline PackF<W> operator*(const PackF<W>& a, const PackF<W>& b) {
  return PackF<W>::from(a.v * b.v);
}
template <int W>
inline PackF<W> operator/(const PackF<W>& a, const PackF<W>& b) {
  return PackF<W>::from(a.v / b.v);
}
template <int W>
inline PackF<W> operator-(const PackF<W>& a) {
  return PackF<W>::from(-a.v);
}
// mixed with a float only: float ∘ double is double arithmetic in scalar code, which a float
// pack does not do, so such an expression does not compile on packs (write S(c))
#define STEER_PACKF_MIXED(op)                                 \
  template <int W>                                            \
  inline PackF<W> operator op(const PackF<W>& a, float b) {   \
    return a op PackF<W>(b);                                  \
  }                                                           \
  template <int W>                                            \
  inline PackF<W> operator op(float a, const PackF<W>& b) {   \
    return PackF<W>(a) op b;                                  \
  }                                                           \
  template <int W>                                            \
  PackF<W> operator op(const PackF<W>& a, double b) = delete; \
  template <int W>                                            \
  PackF<W> operator op(double a, const PackF<W>& b) = delete;
STEER_PACKF_MIXED(+)
STEER_PACKF_MIXED(-)
STEER_PACKF_MIXED(*)
STEER_PACKF_MIXED(/)
#undef STEER_PACKF_MIXED

#define STEER_PACKF_CMP(op)                                           \
  template <int W>                                                    \
  inline MaskF<W> operator op(const PackF<W>& a, const PackF<W>& b) { \
    MaskF<W> r;                                                       \
    r.m = (typename MaskF<W>::ivec)(a.v op b.v);                      \
    return r;                                                         \
  }                                                                   \
  template <int W>                                                    \
  inline MaskF<W> operator op(const PackF<W>& a, float b) {           \
    return a op PackF<W>(b);                                          \
  }                                                                   \
  template <int W>                                                    \
  MaskF<W> operator op(const PackF<W>& a, double b) = delete;
STEER_PACKF_CMP(<)
STEER_PACKF_CMP(>)
STEER_PACKF_CMP(<=)
STEER_PACKF_CMP(>=)
STEER_PACKF_CMP(==)
STEER_PACKF_CMP(!=)
#undef STEER_PACKF_CMP

template <int W>
inline MaskF<W> operator!(const MaskF<W>& a) {
  MaskF<W> r;
  r.m = ~a.m;
  return r;
}
template <int W>
inline MaskF<W> operator&&(const MaskF<W>& a, const MaskF<W>& b) {
  MaskF<W> r;
  r.m = a.m & b.m;
  return r;
}
template <int W>
inline MaskF<W> operator||(const MaskF<W>& a, const MaskF<W>& b) {
  MaskF<W> r;
  r.m = a.m | b.m;
  return r;
}
template <int W>
inline bool any_lane(const MaskF<W>& a) {
  for (int i = 0; i < W; ++i)
    if (a.m[i]) return true;
  return false;
}
template <int W>
inline PackF<W> select(const MaskF<W>& c, const PackF<W>& a, const PackF<W>& b) {
  return PackF<W>::from(c.m ? a.v : b.v);
}
// float sqrt, correctly rounded per lane (as std::sqrt(float)): the vector instruction where
// the target has one of the pack's width
template <int W>
inline PackF<W> sqrt(const PackF<W>& a) {
#if defined(__AVX__)
  if constexpr (W == 8) {
    __m256 x;
    std::memcpy(&x, &a.v, sizeof x);
    x = _mm256_sqrt_ps(x);
    PackF<W> r;
    std::memcpy(&r.v, &x, sizeof x);
    return r;
  }
#endif
#if defined(__SSE2__)
  if constexpr (W == 4) {
    __m128 x;
    std::memcpy(&x, &a.v, sizeof x);
    x = _mm_sqrt_ps(x);
    PackF<W> r;
    std::memcpy(&r.v, &x, sizeof x);
    return r;
  }
#endif
  PackF<W> r;
  for (int i = 0; i < W; ++i) r.v[i] = __builtin_sqrtf(a.v[i]);
  return r;
}
// float lanes <-> double lanes (exact widening; narrowing rounds to nearest, as float(d))
template <int W>
inline PackD<W> widen(const PackF<W>& a) {
  return PackD<W>::from(__builtin_convertvector(a.v, typename PackD<W>::vec));
}
template <int W>
inline PackF<W> narrow(const PackD<W>& a) {
  return PackF<W>::from(__builtin_convertvector(a.v, typename PackF<W>::vec));
}
template <int W>
struct is_real_scalar<PackF<W>> : std::true_type {};
// the pack of W lanes of a real type R
template <class R, int W>
struct PackOf;
template <int W>
struct PackOf<double, W> {
  using type = PackD<W>;
};
template <int W>
struct PackOf<float, W> {
  using type = PackF<W>;
};
template <int W>
struct is_pack<PackF<W>> : std::true_type {};

template <int W>
struct is_real_scalar<PackD<W>> : std::true_type {};

template <int W>
struct is_pack<PackD<W>> : std::true_type {};

}  // namespace steer

#include "steer/vmath.h"

namespace steer {
// the model's transcendental functions on packs: vmath's, found by argument-dependent lookup
#define STEER_PACK_VMATH(name)              \
  template <int W>                          \
  inline PackD<W> name(const PackD<W>& a) { \
    return vmath::name(a);                  \
  }
STEER_PACK_VMATH(exp)
STEER_PACK_VMATH(log1p)
STEER_PACK_VMATH(tanh)
STEER_PACK_VMATH(sin)
STEER_PACK_VMATH(cos)
#undef STEER_PACK_VMATH
// and on float packs: the double function of the widened lanes, rounded back to float
#define STEER_PACKF_VMATH(name)             \
  template <int W>                          \
  inline PackF<W> name(const PackF<W>& a) { \
    return narrow(vmath::name(widen(a)));   \
  }
STEER_PACKF_VMATH(exp)
STEER_PACKF_VMATH(log1p)
STEER_PACKF_VMATH(tanh)
STEER_PACKF_VMATH(sin)
STEER_PACKF_VMATH(cos)
#undef STEER_PACKF_VMATH
// sin and cos from one reduction (model_math.h's sincos_of on packs)
template <int W>
inline void pack_sincos(const PackD<W>& x, PackD<W>& s, PackD<W>& c) {
  vmath::sincos(x, &s, &c);
}
template <int W>
inline void pack_sincos(const PackF<W>& x, PackF<W>& s, PackF<W>& c) {
  PackD<W> sd, cd;
  vmath::sincos(widen(x), &sd, &cd);
  s = narrow(sd);
  c = narrow(cd);
}
}  // namespace steer

#pragma GCC diagnostic pop
