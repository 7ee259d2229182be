// The W lanes of one rollout run as W host threads, the way the GPU runs a warp per rollout:
// they meet at a barrier wherever the device code calls __syncwarp (Lanes::sync reaches it
// through Lanes::host_wait). Shared by the tests that run a model's lane-strided branch on the
// host (lane_emulation_test, implicit_mass_spring_test).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "steer/core.h"

namespace steer::testing {

// A reusable barrier for the emulated warp. A lane that finishes while others wait at a
// barrier (a sync its warp-mates reach and it does not) breaks the barrier: every wait
// returns at once from then on and the test reports the mismatch instead of hanging.
class WarpBarrier {
 public:
  explicit WarpBarrier(int lanes) : lanes_(lanes), syncs_(lanes, 0) {}
  static void wait_fn(void* self) { static_cast<WarpBarrier*>(self)->wait(); }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (broken_) return;
    if (finished_ > 0) {  // a warp-mate already left: it will never reach this sync
      broken_ = true;
      cv_.notify_all();
      return;
    }
    const long generation = generation_;
    if (++waiting_ == lanes_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation || broken_; });
  }
  void count_sync(int lane) { ++syncs_[lane]; }
  void finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++finished_;
    if (waiting_ > 0) broken_ = true;
    cv_.notify_all();
  }
  bool broken() const { return broken_; }
  const std::vector<long>& syncs() const { return syncs_; }

 private:
  int lanes_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int waiting_ = 0, finished_ = 0;
  long generation_ = 0;
  bool broken_ = false;
  std::vector<long> syncs_;
};

// one lane's view of the barrier: counts its syncs, then waits
struct LaneSync {
  WarpBarrier* barrier;
  int lane;
  static void wait_fn(void* self) {
    auto* s = static_cast<LaneSync*>(self);
    s->barrier->count_sync(s->lane);
    s->barrier->wait();
  }
};

// body(ln) on `width` host threads as the lanes of one warp. Returns false when a lane skipped
// a sync its warp-mates reached (the barrier broke instead of hanging); syncs (optional): each
// lane's number of syncs
template <class Body>
bool run_as_warp(int width, Body&& body, std::vector<long>* syncs = nullptr) {
  WarpBarrier barrier(width);
  std::vector<LaneSync> lane_sync(width);
  std::vector<std::thread> lanes;
  for (int l = 0; l < width; ++l) {
    lane_sync[l] = LaneSync{&barrier, l};
    lanes.emplace_back([&, l] {
      Lanes ln;
      ln.lane = l;
      ln.width = width;
      ln.host_wait = &LaneSync::wait_fn;
      ln.host_barrier = &lane_sync[l];
      body(ln);
      barrier.finish();
    });
  }
  for (auto& t : lanes) t.join();
  if (syncs) *syncs = barrier.syncs();
  return !barrier.broken();
}

}  // namespace steer::testing
