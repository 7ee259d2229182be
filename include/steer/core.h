// Core types shared by host and device code: the host/device qualifier, strided
// views into batch arrays, and small math helpers whose derivatives are safe at
// their singular points.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define STEER_HD __host__ __device__
#define STEER_INLINE __forceinline__
#define STEER_NOINLINE __noinline__
#else
#define STEER_HD
#define STEER_INLINE inline
#define STEER_NOINLINE
#endif

namespace steer {

// A strided view of one rollout's vector inside a batch array. On the CPU a rollout's
// elements are contiguous (stride 1); on the GPU element i of rollout b lives at
// i*B + b (stride B) so that neighbouring threads read neighbouring addresses.
template <class S>
struct View {
  S* p = nullptr;
  long stride = 1;
  STEER_HD S& operator[](long i) const { return p[i * stride]; }
  // sub-view starting at element i (same stride)
  STEER_HD View at(long i) const { return View{p + i * stride, stride}; }
};

template <class S>
STEER_HD View<S> view(S* p, long stride = 1) {
  return View<S>{p, stride};
}

// The lanes that cooperate on one rollout. On the CPU a rollout has one lane (width 1);
// on the GPU a warp can share a rollout, each lane taking every width-th particle or
// spring (`for (i = lane; i < n; i += width)`). Model code loops this way so that both
// backends run the same loops; sync() orders the lanes' writes between phases.
//
// Host emulation of a warp (tests/backend/lane_emulation_test.cpp): the width lanes of one rollout
// run as host threads and sync() waits at a barrier they share (host_wait(host_barrier)),
// so the warp-strided code paths the GPU takes, and their sync points, run and are checked
// on a machine without a GPU. Device code never sets these; on the GPU sync() is __syncwarp.
struct Lanes {
  int lane = 0;
  int width = 1;
  void (*host_wait)(void*) = nullptr;  // host-only: barrier wait of the emulated warp
  void* host_barrier = nullptr;
  STEER_HD bool leader() const { return lane == 0; }
  STEER_HD void sync() const {
#if defined(__CUDA_ARCH__)
    if (width > 1) __syncwarp();
#else
    if (host_wait) host_wait(host_barrier);
#endif
  }
};

// floating-point scalars, and wrappers that compute exactly as one (op_count.h's Counted):
// the models' one-lane fast paths, written for plain scalars rather than duals, test this
template <class S>
struct is_real_scalar : std::is_floating_point<S> {};

// SIMD packs of rollouts (simd.h, host only) specialize this; model code that branches on a
// value writes the branch as a select so that a pack's lanes can take different arms
template <class S>
struct is_pack : std::false_type {};

// lane-wise choice and mask tests: for a scalar the condition is a bool (simd.h overloads
// them for its lane masks). select computes nothing itself: both arms are already values.
template <class S>
STEER_HD S select(bool c, const S& a, const S& b) {
  return c ? a : b;
}
STEER_HD inline bool any_lane(bool c) { return c; }

// the real type of a scalar's lanes: S itself, or S::value_type for packs, duals and
// op_count.h's Counted; and its unit roundoff u (2⁻⁵³ for double, 2⁻²⁴ for float), for
// convergence tests that must follow the precision
template <class S, class = void>
struct lane_real {
  using type = S;
};
template <class S>
struct lane_real<S, std::void_t<typename S::value_type>> {
  using type = typename S::value_type;
};
template <class S>
STEER_HD constexpr double roundoff_of() {
  return std::is_same<typename lane_real<S>::type, float>::value ? 5.9604644775390625e-8
                                                                 : 1.1102230246251565e-16;
}

// plain value of a scalar: identity for float/double, overloaded for Dual
STEER_HD inline double value_of(double a) { return a; }
STEER_HD inline float value_of(float a) { return a; }

// numerically safe softplus: softplus(z) = log(1 + e^z) = max(z, 0) + log1p(e^-|z|);
// the split keeps e^z from overflowing for large z.
template <class S>
STEER_HD S softplus(const S& z) {
  using std::exp;
  using std::log1p;
  if (value_of(z) > 0) return z + log1p(exp(-z));
  return log1p(exp(z));
}

// logistic sigmoid, the derivative of softplus: σ(z) = 1 / (1 + e^-z), evaluated on the
// side where the exponential cannot overflow.
template <class S>
STEER_HD S sigmoid(const S& z) {
  using std::exp;
  if (value_of(z) >= 0) return S(1) / (S(1) + exp(-z));
  S e = exp(z);
  return e / (S(1) + e);
}

}  // namespace steer
