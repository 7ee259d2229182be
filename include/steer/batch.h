// A batch of B rollouts and what simulating it returns. The arrays are rollout-major
// (rollout b's slice is contiguous); the CUDA backend transposes to structure-of-arrays on the
// device. A batch either owns its inputs (the vectors x0, u, theta) or views caller memory of
// the same layout (view_inputs): a binding passes its caller's arrays to the engine in place
// that way, and with Memory::kDevice (CUDA backend only) arrays already in device memory.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "steer/loss.h"
#include "steer/rollout.h"

namespace steer {

// where a batch's viewed inputs (or a result's device arrays) live
enum class Memory { kHost, kDevice };

template <class S>
struct Batch {
  int size = 0;  // B
  int nx = 0, nu = 0, np = 0;
  int steps = 0;         // T
  std::vector<S> x0;     // [B·nx]      owned inputs (empty while the batch views caller memory)
  std::vector<S> u;      // [B·T·nu]
  std::vector<S> theta;  // [B·np]

  // Reads x0, u and θ from caller memory instead of the vectors: C-contiguous rollout-major
  // arrays of B·nx, B·T·nu and B·np elements that stay alive and unchanged while the batch runs.
  // Memory::kDevice: pointers into the memory of CUDA device `device` (only the CUDA backend
  // reads those; the CPU backend refuses them). The vectors are released.
  void view_inputs(const S* x0_in, const S* u_in, const S* theta_in, Memory where = Memory::kHost,
                   int device = 0) {
    x0.clear(), u.clear(), theta.clear();
    x0.shrink_to_fit(), u.shrink_to_fit(), theta.shrink_to_fit();
    x0_view_ = x0_in, u_view_ = u_in, theta_view_ = theta_in;
    memory_ = where, device_ = device;
    viewing_ = true;
  }
  bool views_inputs() const { return viewing_; }
  Memory memory() const { return memory_; }
  int device() const { return device_; }
  // the inputs as the engine reads them: the viewed memory, else the vectors'
  const S* x0_data() const { return viewing_ ? x0_view_ : x0.data(); }
  const S* u_data() const { return viewing_ ? u_view_ : u.data(); }
  const S* theta_data() const { return viewing_ ? theta_view_ : theta.data(); }

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
  // writable slices exist only in owned storage: a view's memory belongs to its caller
  S* x0_of(int b) { return owned(x0).data() + size_t(b) * nx; }
  S* u_of(int b) { return owned(u).data() + size_t(b) * steps * nu; }
  S* theta_of(int b) { return owned(theta).data() + size_t(b) * np; }
  const S* x0_of(int b) const { return x0_data() + size_t(b) * nx; }
  const S* u_of(int b) const { return u_data() + size_t(b) * steps * nu; }
  const S* theta_of(int b) const { return theta_data() + size_t(b) * np; }

 private:
  std::vector<S>& owned(std::vector<S>& v) {
    if (viewing_) throw std::logic_error("batch: the inputs view caller memory and are read-only");
    return v;
  }
  const S* x0_view_ = nullptr;
  const S* u_view_ = nullptr;
  const S* theta_view_ = nullptr;
  Memory memory_ = Memory::kHost;
  int device_ = 0;
  bool viewing_ = false;
};

template <class S>
struct BatchResult {
  std::vector<S> loss;            // [B]
  std::vector<RolloutDiag> diag;  // [B]
  std::vector<S> grad_x0;         // [B·nx]      (empty without gradients)
  std::vector<S> grad_u;          // [B·T·nu]
  std::vector<S> grad_theta;      // [B·np]
  std::vector<S> traj;            // [B·traj_slots·nx] when shape.traj_stride > 0
  // Memory::kDevice when the CUDA backend ran a batch whose inputs are in device memory: loss,
  // the gradients and the trajectory are then device arrays of the layouts above (`device`),
  // the vectors stay empty and diag is on the host
  struct DeviceArrays {
    S* loss = nullptr;
    S* grad_x0 = nullptr;
    S* grad_u = nullptr;
    S* grad_theta = nullptr;
    S* traj = nullptr;
    std::shared_ptr<void> owner;  // the device memory they point into, freed with its last copy
  };
  Memory memory = Memory::kHost;
  DeviceArrays device;
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
  if (b.steps != sh.steps)
    throw std::invalid_argument("batch: steps differ from the rollout shape");
  if (sh.steps < 1) throw std::invalid_argument("steps: must be >= 1");
  if (sh.binomial()) {
    if (sh.snapshots < 1)
      throw std::invalid_argument("snapshots: the binomial schedule needs at least 1");
  } else if (sh.checkpoint_every < 1 || sh.checkpoint_every > sh.steps) {
    throw std::invalid_argument("checkpoint_every: must be in [1, steps]");
  }
  if (sh.store_forward && (sh.binomial() || sh.checkpoint_every != sh.steps))
    throw std::invalid_argument(
        "store_forward: needs the uniform schedule with one segment (checkpoint_every = steps)");
  if (b.views_inputs()) {
    // a view's sizes are its caller's promise; what can be checked is that the arrays exist
    if (b.size > 0 && ((b.nx > 0 && !b.x0_data()) || (b.steps * b.nu > 0 && !b.u_data()) ||
                       (b.np > 0 && !b.theta_data())))
      throw std::invalid_argument("batch: a viewed input array is null");
  } else if (b.x0.size() != size_t(b.size) * b.nx ||
             b.u.size() != size_t(b.size) * b.steps * b.nu ||
             b.theta.size() != size_t(b.size) * b.np) {
    throw std::invalid_argument("batch: array sizes do not match B, nx, nu, np, T");
  }
}

}  // namespace steer
