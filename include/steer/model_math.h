// exp, log1p, tanh, sin and cos as model code calls them: on the host, float64 takes steer's own
// (vmath.h), the algorithm a SIMD pack of rollouts (simd.h) runs in every lane, and float32
// takes the same double functions rounded to float, as simd.h's PackF does lane by lane, so a
// rollout gives the same bits alone and in a pack; every other scalar (dual numbers, op_count's
// Counted, simd.h's packs through their own overloads) and device code take the usual ones.
#pragma once

#include <cmath>
#include <type_traits>

#include "steer/core.h"
#include "steer/vmath.h"

namespace steer {

#define STEER_MODEL_MATH(name)                                          \
  template <class S>                                                    \
  STEER_HD S name##_of(const S& x) {                                    \
    if constexpr (std::is_same<S, double>::value && !kOnDevice) {       \
      return host_##name(x);                                            \
    } else if constexpr (std::is_same<S, float>::value && !kOnDevice) { \
      return float(host_##name(double(x)));                             \
    } else {                                                            \
      using std::name;                                                  \
      return name(x);                                                   \
    }                                                                   \
  }

#if defined(__CUDA_ARCH__)
constexpr bool kOnDevice = true;
STEER_HD inline double host_exp(double x) { return x; }  // never called: kOnDevice
STEER_HD inline double host_log1p(double x) { return x; }
STEER_HD inline double host_tanh(double x) { return x; }
template <class S>
STEER_HD void host_sincos(const S&, S&, S&) {}
#else
constexpr bool kOnDevice = false;
inline double host_exp(double x) { return vmath::exp(x); }
inline double host_log1p(double x) { return vmath::log1p(x); }
inline double host_tanh(double x) { return vmath::tanh(x); }
template <class S>
inline void host_sincos(const S& x, S& s, S& c) {
  vmath::sincos(x, &s, &c);
}
#endif

STEER_MODEL_MATH(exp)
STEER_MODEL_MATH(log1p)
STEER_MODEL_MATH(tanh)
#undef STEER_MODEL_MATH

// sin x and cos x: vmath's one reduction for both on the host for float64 (float32: in double,
// rounded) and for packs (simd.h's pack_sincos), whose lanes get the bits the scalar path gets;
// std (or ADL) otherwise
template <class S>
STEER_HD void sincos_of(const S& x, S& s, S& c) {
  if constexpr (std::is_same<S, double>::value && !kOnDevice) {
    host_sincos(x, s, c);
  } else if constexpr (std::is_same<S, float>::value && !kOnDevice) {
    double sd, cd;
    host_sincos(double(x), sd, cd);
    s = float(sd);
    c = float(cd);
  } else if constexpr (is_pack<S>::value && !kOnDevice) {
    pack_sincos(x, s, c);
  } else {
    using std::cos;
    using std::sin;
    s = sin(x);
    c = cos(x);
  }
}

// softplus(z) = log(1 + e^z) and σ(z) = 1/(1 + e^−z) as core.h's softplus and sigmoid compute
// them (the exponential taken on the side where it cannot overflow: softplus = z + log1p(e^−z)
// for z > 0, log1p(e^z) otherwise; σ = 1/(1 + e^−z) for z ≥ 0, e^z/(1 + e^z) otherwise), with
// the sign test a select so that a pack's lanes each keep their own side, and exp and log1p
// from this header (vmath's on the host in float64, so a lane's bits are its scalar run's)
template <class S>
STEER_HD S softplus_of(const S& z) {
  const auto pos = z > S(0);
  const S l = log1p_of(exp_of(select(pos, S(-z), z)));
  return select(pos, S(z + l), l);
}
template <class S>
STEER_HD S sigmoid_of(const S& z) {
  const auto pos = z >= S(0);
  const S e = exp_of(select(pos, S(-z), z));
  const S one_e = S(1) + e;
  return select(pos, S(S(1) / one_e), S(e / one_e));
}

// softplus(z), σ(z) and, with sg_comp, 1 − σ(z) = σ(−z) from one exponential e = exp(−|z|):
//   z > 0: softplus = z + log1p(e), σ = 1/(1 + e), 1 − σ = e/(1 + e)
//   z ≤ 0: softplus = log1p(e),     σ = e/(1 + e), 1 − σ = 1/(1 + e)
// the values softplus_of and sigmoid_of return, bit for bit (at z = 0 both sides of σ give
// exactly ½ and exp(−0) = exp(0)), at one exp instead of two; 1 − σ this way keeps its digits
// where σ → 1 (σ' = σ(1 − σ) needs it at a saturated joint)
template <class S>
STEER_HD void softplus_sigmoid_of(const S& z, S& sp, S& sg, S* sg_comp = nullptr) {
  const auto pos = z > S(0);
  const S e = exp_of(select(pos, S(-z), z));
  const S l = log1p_of(e);
  const S one_e = S(1) + e;
  const S r = S(1) / one_e, q = e / one_e;
  sp = select(pos, S(z + l), l);
  sg = select(pos, r, q);
  if (sg_comp) *sg_comp = select(pos, q, r);
}

}  // namespace steer
