// Host buffers for n step tapes of a model (rollout.h's optional per-step tape): the CPU
// backend's segment (K tapes per thread) or stored forward pass (T tapes per thread), and the
// tests that run a taped step by hand.
//
// A model whose StepTape holds its per-element arrays outside the tape (the mass-spring tape:
// particle and spring entries sized to the robot, so that T tapes of a small robot lie
// contiguously instead of 80 kB apart) defines
//   template <class S> struct TapeStorage;                              the arrays of n tapes
//   template <class S> void bind_tapes(StepTape<S>* t, int n, TapeStorage<S>& st) const;
// and StepTapes allocates and binds them; for any other model it is a vector of tapes.
#pragma once

#include <type_traits>
#include <vector>

#include "steer/rollout.h"

namespace steer {

// Model::TapeStorage<S> where the model defines one, else NoTapeStorage
struct NoTapeStorage {};
template <class Model, class S, class = void>
struct TapeStorageOf {
  using type = NoTapeStorage;
};
template <class Model, class S>
struct TapeStorageOf<Model, S, std::void_t<typename Model::template TapeStorage<S>>> {
  using type = typename Model::template TapeStorage<S>;
};

template <class Model, class S>
class StepTapes {
 public:
  using Tape = typename contract::StepTapeOf<Model, S>::type;

  StepTapes() = default;
  StepTapes(const Model& m, int n) { resize(m, n); }
  // n tapes for model m, bound to its storage; memory already held is reused (a tape's
  // contents are undefined until a taped step writes them)
  void resize(const Model& m, int n) {
    tapes_.resize(size_t(n > 0 ? n : 0));
    if constexpr (!std::is_same<Storage, NoTapeStorage>::value)
      m.template bind_tapes<S>(tapes_.data(), n, storage_);
    (void)m;
  }
  Tape* data() { return tapes_.empty() ? nullptr : tapes_.data(); }
  Tape& operator[](size_t i) { return tapes_[i]; }
  int size() const { return int(tapes_.size()); }

 private:
  using Storage = typename TapeStorageOf<Model, S>::type;
  std::vector<Tape> tapes_;
  Storage storage_;
};

}  // namespace steer
