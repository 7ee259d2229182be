// Forward-mode dual numbers Dual<S, N>: a value and N partial derivatives, usable in
// host and device code. Running a model's templated `step` on Dual gives exact
// Jacobian columns; this is the reference every hand-written adjoint must match.
// Each overload carries its derivative identity in the comment above it.
#pragma once

#include <cmath>
#include <type_traits>

#include "steer/core.h"

namespace steer {

template <class S, int N>
struct Dual {
  using value_type = S;
  S a;     // value
  S v[N];  // partials ∂a/∂(seed j)

  STEER_HD Dual() : a(S(0)) {
    for (int j = 0; j < N; ++j) v[j] = S(0);
  }
  // a constant: zero partials
  STEER_HD Dual(double c) : a(S(c)) {
    for (int j = 0; j < N; ++j) v[j] = S(0);
  }
  STEER_HD Dual(float c) : a(S(c)) {
    for (int j = 0; j < N; ++j) v[j] = S(0);
  }
  STEER_HD Dual(int c) : a(S(c)) {
    for (int j = 0; j < N; ++j) v[j] = S(0);
  }
  // a constant of a non-arithmetic scalar (Counted<S> in op_count.h: duals whose
  // arithmetic is tallied, to count the dual-number adjoint's work)
  template <class T = S, class = std::enable_if_t<!std::is_arithmetic<T>::value>>
  STEER_HD Dual(const S& c) : a(c) {
    for (int j = 0; j < N; ++j) v[j] = S(0);
  }
  // a variable seeded in direction k
  STEER_HD static Dual variable(S value, int k) {
    Dual d(value);
    if (k >= 0 && k < N) d.v[k] = S(1);
    return d;
  }

  STEER_HD Dual& operator+=(const Dual& o) {
    a += o.a;
    for (int j = 0; j < N; ++j) v[j] += o.v[j];
    return *this;
  }
  STEER_HD Dual& operator-=(const Dual& o) {
    a -= o.a;
    for (int j = 0; j < N; ++j) v[j] -= o.v[j];
    return *this;
  }
  // (a + h)(b + k) ≈ ab + (a k + b h)
  STEER_HD Dual& operator*=(const Dual& o) {
    for (int j = 0; j < N; ++j) v[j] = v[j] * o.a + a * o.v[j];
    a *= o.a;
    return *this;
  }
  // (a + h)/(b + k) ≈ a/b + (h − (a/b) k)/b
  STEER_HD Dual& operator/=(const Dual& o) {
    S q = a / o.a;
    for (int j = 0; j < N; ++j) v[j] = (v[j] - q * o.v[j]) / o.a;
    a = q;
    return *this;
  }
};

template <class S, int N>
STEER_HD S value_of(const Dual<S, N>& d) {
  return d.a;
}

template <class S, int N>
STEER_HD Dual<S, N> operator-(const Dual<S, N>& x) {
  Dual<S, N> r;
  r.a = -x.a;
  for (int j = 0; j < N; ++j) r.v[j] = -x.v[j];
  return r;
}
template <class S, int N>
STEER_HD Dual<S, N> operator+(Dual<S, N> x, const Dual<S, N>& y) {
  return x += y;
}
template <class S, int N>
STEER_HD Dual<S, N> operator-(Dual<S, N> x, const Dual<S, N>& y) {
  return x -= y;
}
template <class S, int N>
STEER_HD Dual<S, N> operator*(Dual<S, N> x, const Dual<S, N>& y) {
  return x *= y;
}
template <class S, int N>
STEER_HD Dual<S, N> operator/(Dual<S, N> x, const Dual<S, N>& y) {
  return x /= y;
}
// mixed dual/constant arithmetic: the constant has zero partials
#define STEER_DUAL_MIXED(op)                                       \
  template <class S, int N>                                        \
  STEER_HD Dual<S, N> operator op(const Dual<S, N>& x, double c) { \
    return x op Dual<S, N>(c);                                     \
  }                                                                \
  template <class S, int N>                                        \
  STEER_HD Dual<S, N> operator op(double c, const Dual<S, N>& x) { \
    return Dual<S, N>(c) op x;                                     \
  }
STEER_DUAL_MIXED(+)
STEER_DUAL_MIXED(-)
STEER_DUAL_MIXED(*)
STEER_DUAL_MIXED(/)
#undef STEER_DUAL_MIXED

// comparisons look at values only (branches follow the primal)
#define STEER_DUAL_CMP(op)                                              \
  template <class S, int N>                                             \
  STEER_HD bool operator op(const Dual<S, N>& x, const Dual<S, N>& y) { \
    return x.a op y.a;                                                  \
  }                                                                     \
  template <class S, int N>                                             \
  STEER_HD bool operator op(const Dual<S, N>& x, double c) {            \
    return x.a op c;                                                    \
  }                                                                     \
  template <class S, int N>                                             \
  STEER_HD bool operator op(double c, const Dual<S, N>& x) {            \
    return c op x.a;                                                    \
  }
STEER_DUAL_CMP(<)
STEER_DUAL_CMP(<=)
STEER_DUAL_CMP(>)
STEER_DUAL_CMP(>=)
#undef STEER_DUAL_CMP

// apply the chain rule: f(a + h) ≈ f(a) + f'(a) h
template <class S, int N>
STEER_HD Dual<S, N> chain(const Dual<S, N>& x, S fa, S dfa) {
  Dual<S, N> r;
  r.a = fa;
  for (int j = 0; j < N; ++j) r.v[j] = dfa * x.v[j];
  return r;
}

// sqrt(a + h) ≈ sqrt(a) + h / (2 sqrt(a)); the derivative is 0 at a = 0 instead of inf,
// which is the limit callers rely on when they pass sqrt(|v|² ) of a vanishing vector.
template <class S, int N>
STEER_HD Dual<S, N> sqrt(const Dual<S, N>& x) {
  using std::sqrt;
  S s = sqrt(x.a);
  return chain(x, s, s > S(0) ? S(0.5) / s : S(0));
}
// exp(a + h) ≈ exp(a) + exp(a) h
template <class S, int N>
STEER_HD Dual<S, N> exp(const Dual<S, N>& x) {
  using std::exp;
  S e = exp(x.a);
  return chain(x, e, e);
}
// log(a + h) ≈ log(a) + h / a
template <class S, int N>
STEER_HD Dual<S, N> log(const Dual<S, N>& x) {
  using std::log;
  return chain(x, log(x.a), S(1) / x.a);
}
// log1p(a + h) ≈ log1p(a) + h / (1 + a)
template <class S, int N>
STEER_HD Dual<S, N> log1p(const Dual<S, N>& x) {
  using std::log1p;
  return chain(x, log1p(x.a), S(1) / (S(1) + x.a));
}
// sin(a + h) ≈ sin(a) + cos(a) h
template <class S, int N>
STEER_HD Dual<S, N> sin(const Dual<S, N>& x) {
  using std::cos;
  using std::sin;
  return chain(x, sin(x.a), cos(x.a));
}
// cos(a + h) ≈ cos(a) − sin(a) h
template <class S, int N>
STEER_HD Dual<S, N> cos(const Dual<S, N>& x) {
  using std::cos;
  using std::sin;
  return chain(x, cos(x.a), -sin(x.a));
}
// tanh(a + h) ≈ tanh(a) + (1 − tanh²(a)) h
template <class S, int N>
STEER_HD Dual<S, N> tanh(const Dual<S, N>& x) {
  using std::tanh;
  S t = tanh(x.a);
  return chain(x, t, S(1) - t * t);
}
// |a + h| ≈ |a| + sign(a) h  (sign(0) taken as 0)
template <class S, int N>
STEER_HD Dual<S, N> abs(const Dual<S, N>& x) {
  S sg = x.a > S(0) ? S(1) : (x.a < S(0) ? S(-1) : S(0));
  return chain(x, sg * x.a, sg);
}
template <class S, int N>
STEER_HD Dual<S, N> fabs(const Dual<S, N>& x) {
  return abs(x);
}
// (a + h)^p ≈ a^p + p a^(p−1) h, for a constant exponent p
template <class S, int N>
STEER_HD Dual<S, N> pow(const Dual<S, N>& x, double p) {
  using std::pow;
  return chain(x, S(pow(x.a, S(p))), S(p) * S(pow(x.a, S(p - 1))));
}

}  // namespace steer
