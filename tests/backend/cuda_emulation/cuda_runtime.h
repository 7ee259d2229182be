// The device side of CUDA as steer's kernels use it, for compiling kernels/*.cu(h) as host
// C++ in the emulated test targets (tests/backend/gpu_emulation.cmake; never the shipped library):
// the function qualifiers, dim3 and the built-in index variables, the block and warp
// barriers, per-block shared memory and a kernel launch. emulator.cpp runs a launch on the
// calling host thread: every block in turn, each block's threads as fibers that switch only
// at barriers (and, with preemption on, at reads of the built-ins), in index order or
// shuffled (emulator.h). Host code sees the runtime API of cuda_runtime_api.h.
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda_runtime_api.h"

// ---- function and variable qualifiers: ordinary host functions and variables ----
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __grid_constant__
// __noinline__ is not defined: steer spells it STEER_NOINLINE, which core.h maps to it only
// under nvcc (__CUDACC__, never defined here), and libstdc++ uses the bare name inside
// __attribute__((__noinline__)), which a macro would break.
//
// Shared memory: one static array per kernel instantiation. Blocks never run at the same
// time (emulator.cpp serializes launches and runs a grid's blocks one after another), so a
// static is exactly one block's storage. Every steer kernel is in an anonymous namespace,
// which makes the array an ordinary global with AddressSanitizer red zones around it (GCC
// gives none to the COMDAT statics of templates with external linkage).
#define __shared__ static

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

namespace steer_emu {

// the calling fiber's built-ins; called outside a kernel they stop the program
const uint3& thread_index();
const uint3& block_index();
const dim3& block_dim();
const dim3& grid_dim();
void sync_block();
void sync_warp(unsigned mask);
// Lanes::host_wait's signature (include/steer/core.h): the warp barrier for model code that
// synchronises its lanes through Lanes::sync (kernels/rollout_device.cuh sets it)
void sync_warp_hook(void*);

// runs body(ctx) once per thread of every block of the grid; a bad configuration, an
// injected fault or a sticky error sets the error cudaGetLastError reports instead
void run_grid(dim3 grid, dim3 block, void (*body)(void*), void* ctx);

// kernel<<<grid, block>>>(args...) as STEER_KERNEL_LAUNCH(grid, block, kernel)(args...)
template <class... P>
class KernelLaunch {
 public:
  KernelLaunch(dim3 grid, dim3 block, void (*kernel)(P...))
      : grid_(grid), block_(block), kernel_(kernel) {}

  template <class... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "a kernel launch passes every parameter");
    // the arguments converted to the parameter types once, as a launch copies them into
    // the kernel's parameter space; each thread then gets its own copy (a by-value call)
    struct Ctx {
      void (*kernel)(P...);
      std::tuple<std::decay_t<P>...> params;
    } ctx{kernel_, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)};
    run_grid(
        grid_, block_,
        [](void* c) {
          Ctx* x = static_cast<Ctx*>(c);
          std::apply(x->kernel, x->params);
        },
        &ctx);
  }

 private:
  dim3 grid_, block_;
  void (*kernel_)(P...);
};

template <class... P>
KernelLaunch<P...> launch(dim3 grid, dim3 block, void (*kernel)(P...)) {
  return KernelLaunch<P...>(grid, block, kernel);
}

}  // namespace steer_emu

#define threadIdx (::steer_emu::thread_index())
#define blockIdx (::steer_emu::block_index())
#define blockDim (::steer_emu::block_dim())
#define gridDim (::steer_emu::grid_dim())
inline void __syncthreads() { ::steer_emu::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::steer_emu::sync_warp(mask); }

// the launch seam of kernels/rollout_device.cuh: nvcc's default is kernel<<<grid, block>>>
#define STEER_KERNEL_LAUNCH(grid, block, ...) ::steer_emu::launch((grid), (block), __VA_ARGS__)
