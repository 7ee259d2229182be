// How many GPU lanes share one rollout, per model, fixed at compile time (docs/design.md, "CUDA:
// lanes per rollout"). A small state (projectile) runs one thread per rollout; a soft body, whose
// step loops over tens to thousands of particles and springs, runs one warp per rollout with the
// model's lane-strided loops (`for (i = lane; i < n; i += width)`). The CPU backend
// always runs width 1; this trait is read by the CUDA backend only.
//
// The value is 1 or the warp size (32): the lanes of one rollout synchronise with
// __syncwarp (Lanes::sync), so they must all live in one warp.
#pragma once

namespace steer {

struct MassSpring;

template <class Model>
struct LanesPerRollout {
  static constexpr int value = 1;
};

template <>
struct LanesPerRollout<MassSpring> {
  static constexpr int value = 32;
};

}  // namespace steer
