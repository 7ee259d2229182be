// Counting the work of one rollout-step (docs/design.md, "Benchmarks and work counting":
// count bytes and flops per rollout-step before quoting a fraction of a device's ceiling).
// Host-only.
//
// flops: a model's step and adj_step are templates on the scalar, so running them once on
// Counted<S> tallies every arithmetic operation the real scalar would execute on that state:
// add/sub, mul, div and sqrt (one flop each, the usual convention) and the special functions
// exp, log, log1p, sin, cos, tanh, pow (counted apart; a GPU's SFU or a libm call is many
// instructions, so they are not folded into the flop figure). Branches follow the values, so
// the count is that of the state it ran on (contact or not, saturated or not).
//
// bytes: the inputs and outputs are passed as TouchedIn / TouchedOut views that record which
// elements the step reads or writes. Distinct elements × sizeof(S) are the bytes one
// rollout-step must move at least (x_k, u_k and the θ entries it reads in, x_{k+1} out; for
// adj_step also λ_{k+1} in and λ_k, ∂L/∂u_k, ∂L/∂θ read-modify-write). Repeated reads of the
// same element (a particle's position gathered by each of its springs) are counted once:
// they hit cache. Read-only data shared by every rollout (the mass-spring topology) is not
// per-rollout traffic and is not counted.
#pragma once

#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "steer/core.h"
#include "steer/step_tapes.h"

namespace steer {

struct OpTally {
  long long add = 0, mul = 0, div = 0, sqrt = 0;  // one flop each
  long long special = 0;                          // exp, log, log1p, sin, cos, tanh, pow
  long long flops() const { return add + mul + div + sqrt; }
};

// the tally the Counted operations of this thread add to (null: count nothing)
inline OpTally*& active_op_tally() {
  static thread_local OpTally* t = nullptr;
  return t;
}

// counts into `t` while in scope
class OpTallyScope {
 public:
  explicit OpTallyScope(OpTally& t) : prev_(active_op_tally()) { active_op_tally() = &t; }
  ~OpTallyScope() { active_op_tally() = prev_; }
  OpTallyScope(const OpTallyScope&) = delete;
  OpTallyScope& operator=(const OpTallyScope&) = delete;

 private:
  OpTally* prev_;
};

// a scalar that computes exactly as S and tallies its operations
template <class S>
struct Counted {
  using value_type = S;
  S v;
  Counted() : v(S(0)) {}
  Counted(double c) : v(S(c)) {}
  Counted(float c) : v(S(c)) {}
  Counted(int c) : v(S(c)) {}
  static void tick(long long OpTally::*field) {
    if (OpTally* t = active_op_tally()) ++(t->*field);
  }
  Counted& operator+=(const Counted& o) { return tick(&OpTally::add), v += o.v, *this; }
  Counted& operator-=(const Counted& o) { return tick(&OpTally::add), v -= o.v, *this; }
  Counted& operator*=(const Counted& o) { return tick(&OpTally::mul), v *= o.v, *this; }
  Counted& operator/=(const Counted& o) { return tick(&OpTally::div), v /= o.v, *this; }
};

// Counted computes as S, so the models' plain-scalar paths (is_real_scalar) are the ones counted
template <class S>
struct is_real_scalar<Counted<S>> : std::true_type {};

template <class S>
S value_of(const Counted<S>& c) {
  return c.v;
}
template <class S>
Counted<S> operator-(Counted<S> x) {  // negation: a sign flip, not a flop
  x.v = -x.v;
  return x;
}

#define STEER_COUNTED_ARITH(op, field)                        \
  template <class S>                                          \
  Counted<S> operator op(Counted<S> x, const Counted<S>& y) { \
    return x op## = y;                                        \
  }                                                           \
  template <class S>                                          \
  Counted<S> operator op(Counted<S> x, double c) {            \
    return x op## = Counted<S>(c);                            \
  }                                                           \
  template <class S>                                          \
  Counted<S> operator op(double c, const Counted<S>& y) {     \
    Counted<S> x(c);                                          \
    return x op## = y;                                        \
  }
STEER_COUNTED_ARITH(+, add)
STEER_COUNTED_ARITH(-, add)
STEER_COUNTED_ARITH(*, mul)
STEER_COUNTED_ARITH(/, div)
#undef STEER_COUNTED_ARITH

#define STEER_COUNTED_CMP(op)                                  \
  template <class S>                                           \
  bool operator op(const Counted<S>& x, const Counted<S>& y) { \
    return x.v op y.v;                                         \
  }                                                            \
  template <class S>                                           \
  bool operator op(const Counted<S>& x, double c) {            \
    return x.v op S(c);                                        \
  }                                                            \
  template <class S>                                           \
  bool operator op(double c, const Counted<S>& y) {            \
    return S(c) op y.v;                                        \
  }
STEER_COUNTED_CMP(<)
STEER_COUNTED_CMP(<=)
STEER_COUNTED_CMP(>)
STEER_COUNTED_CMP(>=)
STEER_COUNTED_CMP(==)
STEER_COUNTED_CMP(!=)
#undef STEER_COUNTED_CMP

template <class S>
Counted<S> counted_result(S v, long long OpTally::*field) {
  Counted<S>::tick(field);
  Counted<S> r;
  r.v = v;
  return r;
}
template <class S>
Counted<S> sqrt(const Counted<S>& x) {
  using std::sqrt;
  return counted_result(S(sqrt(x.v)), &OpTally::sqrt);
}
#define STEER_COUNTED_SPECIAL(fn)                         \
  template <class S>                                      \
  Counted<S> fn(const Counted<S>& x) {                    \
    using std::fn;                                        \
    return counted_result(S(fn(x.v)), &OpTally::special); \
  }
STEER_COUNTED_SPECIAL(exp)
STEER_COUNTED_SPECIAL(log)
STEER_COUNTED_SPECIAL(log1p)
STEER_COUNTED_SPECIAL(sin)
STEER_COUNTED_SPECIAL(cos)
STEER_COUNTED_SPECIAL(tanh)
#undef STEER_COUNTED_SPECIAL
template <class S>
Counted<S> pow(const Counted<S>& x, double p) {
  using std::pow;
  return counted_result(S(pow(x.v, S(p))), &OpTally::special);
}
template <class S>
Counted<S> pow(const Counted<S>& x, const Counted<S>& p) {
  using std::pow;
  return counted_result(S(pow(x.v, p.v)), &OpTally::special);
}
// |x|: a sign-bit operation, not a flop
template <class S>
Counted<S> abs(const Counted<S>& x) {
  Counted<S> r;
  r.v = x.v < S(0) ? -x.v : x.v;
  return r;
}
template <class S>
Counted<S> fabs(const Counted<S>& x) {
  return abs(x);
}

// views that record which elements a step touches
template <class T>
struct TouchedIn {
  const T* data;
  std::set<long>* touched;
  const T& operator[](long i) const {
    touched->insert(i);
    return data[i];
  }
};
template <class T>
struct TouchedOut {
  T* data;
  std::set<long>* touched;
  T& operator[](long i) const {
    touched->insert(i);
    return data[i];
  }
};

// the work of one step (or one adjoint step) of one rollout
struct StepWork {
  OpTally ops;
  long long elements = 0;  // distinct per-rollout scalars read or written
  long long bytes(int scalar_bytes) const { return elements * scalar_bytes; }
};

// counts model.step<Counted<S>> at (x, u, θ); the result is exact for that state
template <class S, class Model>
StepWork count_step(const Model& m, int k, const std::vector<double>& x,
                    const std::vector<double>& u, const std::vector<double>& p) {
  using C = Counted<S>;
  std::vector<C> xc(x.begin(), x.end()), uc(u.begin(), u.end()), pc(p.begin(), p.end()),
      xn(x.size());
  std::set<long> tx, tu, tp, txn;
  const TouchedIn<C> xv{xc.data(), &tx}, uv{uc.data(), &tu}, pv{pc.data(), &tp};
  TouchedOut<C> xnv{xn.data(), &txn};
  StepWork w;
  {
    OpTallyScope scope(w.ops);
    m.template step<C>(k, xv, uv, pv, xnv);
  }
  w.elements = (long long)(tx.size() + tu.size() + tp.size() + txn.size());
  return w;
}

// counts model.adj_step<Counted<S>> at (x, u, θ) with adjoint seed λ_{k+1} = adj_xn; the
// adjoint outputs are read-modify-write, so each touched element counts twice
template <class S, class Model>
StepWork count_adj_step(const Model& m, int k, const std::vector<double>& x,
                        const std::vector<double>& u, const std::vector<double>& p,
                        const std::vector<double>& adj_xn) {
  using C = Counted<S>;
  std::vector<C> xc(x.begin(), x.end()), uc(u.begin(), u.end()), pc(p.begin(), p.end()),
      lc(adj_xn.begin(), adj_xn.end()), ax(x.size()), au(u.size()), ap(p.size());
  std::set<long> tx, tu, tp, tl, tax, tau, tap;
  const TouchedIn<C> xv{xc.data(), &tx}, uv{uc.data(), &tu}, pv{pc.data(), &tp}, lv{lc.data(), &tl};
  TouchedOut<C> axv{ax.data(), &tax}, auv{au.data(), &tau}, apv{ap.data(), &tap};
  StepWork w;
  {
    OpTallyScope scope(w.ops);
    m.template adj_step<C>(k, xv, uv, pv, axv, auv, apv, lv);
  }
  w.elements = (long long)(tx.size() + tu.size() + tp.size() + tl.size() +
                           2 * (tax.size() + tau.size() + tap.size()));
  return w;
}

// counts model.adj_step<Counted<S>> from the step's tape (as the CPU backend's uniform
// schedule runs it): the tape is filled by the taped step outside the count
template <class S, class Model>
StepWork count_adj_step_taped(const Model& m, int k, const std::vector<double>& x,
                              const std::vector<double>& u, const std::vector<double>& p,
                              const std::vector<double>& adj_xn) {
  using C = Counted<S>;
  std::vector<C> xc(x.begin(), x.end()), uc(u.begin(), u.end()), pc(p.begin(), p.end()),
      lc(adj_xn.begin(), adj_xn.end()), ax(x.size()), au(u.size()), ap(p.size()), xn(x.size());
  StepTapes<Model, C> tapes(m, 1);
  auto* tape = tapes.data();
  m.template step<C>(k, xc.data(), uc.data(), pc.data(), xn, Lanes{}, tape);
  const auto* filled = tape;
  std::set<long> tx, tu, tp, tl, tax, tau, tap;
  const TouchedIn<C> xv{xc.data(), &tx}, uv{uc.data(), &tu}, pv{pc.data(), &tp}, lv{lc.data(), &tl};
  TouchedOut<C> axv{ax.data(), &tax}, auv{au.data(), &tau}, apv{ap.data(), &tap};
  StepWork w;
  {
    OpTallyScope scope(w.ops);
    m.template adj_step<C>(k, xv, uv, pv, axv, auv, apv, lv, Lanes{}, filled);
  }
  // the tape is per-thread scratch that stays in cache (K steps), not per-rollout traffic
  w.elements = (long long)(tx.size() + tu.size() + tp.size() + tl.size() +
                           2 * (tax.size() + tau.size() + tap.size()));
  return w;
}

}  // namespace steer
