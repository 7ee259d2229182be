// A batch of B rollouts on the host and what simulating it returns. Host arrays are
// rollout-major (rollout b's slice is contiguous); the CUDA backend transposes to
// structure-of-arrays on the device.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "steer/loss.h"
#include "steer/rollout.h"

namespace steer {

template <class S>
struct Batch {
  int size = 0;  // B
  int nx = 0, nu = 0, np = 0;
  int steps = 0;        // T
  std::vector<S> x0;    // [B·nx]
  std::vector<S> u;     // [B·T·nu]
  std::vector<S> theta; // [B·np]

  void resize(int B, int nx_, int nu_, int np_, int T) {
    size = B;
    nx = nx_;
    nu = nu_;
    np = np_;
    steps = T;
    x0.assign(size_t(B) * nx, S(0));
    u.assign(size_t(B) * T * nu, S(0));
    theta.assign(size_t(B) * np, S(0));
  }
  S* x0_of(int b) { return x0.data() + size_t(b) * nx; }
  S* u_of(int b) { return u.data() + size_t(b) * steps * nu; }
  S* theta_of(int b) { return theta.data() + size_t(b) * np; }
  const S* x0_of(int b) const { return x0.data() + size_t(b) * nx; }
  const S* u_of(int b) const { return u.data() + size_t(b) * steps * nu; }
  const S* theta_of(int b) const { return theta.data() + size_t(b) * np; }
};

template <class S>
struct BatchResult {
  std::vector<S> loss;             // [B]
  std::vector<RolloutDiag> diag;   // [B]
  std::vector<S> grad_x0;          // [B·nx]      (empty without gradients)
  std::vector<S> grad_u;           // [B·T·nu]
  std::vector<S> grad_theta;       // [B·np]
  std::vector<S> traj;             // [B·traj_slots·nx] when shape.traj_stride > 0
};

// which backend runs a batch
enum class BackendKind { kCpu, kCuda };

inline const char* backend_name(BackendKind k) { return k == BackendKind::kCpu ? "cpu" : "cuda"; }

// checks that a batch matches the model and shape before anything runs
template <class Model, class S>
void check_batch(const Model& m, const RolloutShape& sh, const Batch<S>& b) {
  if (b.nx != m.nx() || b.nu != m.nu() || b.np != m.np())
    throw std::invalid_argument("batch: sizes (nx, nu, np) = (" + std::to_string(b.nx) + ", " +
                                std::to_string(b.nu) + ", " + std::to_string(b.np) +
                                ") do not match the model (" + std::to_string(m.nx()) + ", " +
                                std::to_string(m.nu()) + ", " + std::to_string(m.np()) + ")");
  if (b.steps != sh.steps) throw std::invalid_argument("batch: steps differ from the rollout shape");
  if (sh.steps < 1) throw std::invalid_argument("steps: must be >= 1");
  if (sh.binomial()) {
    if (sh.snapshots < 1) throw std::invalid_argument("snapshots: the binomial schedule needs at least 1");
  } else if (sh.checkpoint_every < 1 || sh.checkpoint_every > sh.steps) {
    throw std::invalid_argument("checkpoint_every: must be in [1, steps]");
  }
  if (sh.store_forward && (sh.binomial() || sh.checkpoint_every != sh.steps))
    throw std::invalid_argument("store_forward: needs the uniform schedule with one segment (checkpoint_every = steps)");
  if (b.x0.size() != size_t(b.size) * b.nx || b.u.size() != size_t(b.size) * b.steps * b.nu ||
      b.theta.size() != size_t(b.size) * b.np)
    throw std::invalid_argument("batch: array sizes do not match B, nx, nu, np, T");
}

}  // namespace steer
