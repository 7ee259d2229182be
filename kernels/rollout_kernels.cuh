// The CUDA backend's host side (cuda_run_batch_ex: layout, chunking, copies, timing) as a
// template, instantiated per model and precision by kernels/rollout_<model>_<precision>.cu.
// The rollout kernels themselves are defined in rollout_kernel_defs.cuh and reached through
// cuda_detail::launch_forward / launch_backward (rollout_device.cuh), each instantiated in
// exactly one .cu file: nvcc compiles a translation unit on one core, and the articulated
// kernels take minutes each, so one file per kernel group lets a parallel build compile them
// side by side (compile times: bench/log/2026-12-05-01-kernel-figures-from-comments.md).
//
// The CUDA backend: the kernels run the same forward_rollout / backward_rollout that the CPU
// backend runs, and only index and call. How many lanes share a rollout is fixed per model
// at compile time (LanesPerRollout, docs/design.md, "CUDA: lanes per rollout"), and the
// device layout follows from it so that the lanes of a warp always read neighbouring addresses:
//
//   one thread per rollout (projectile): structure-of-arrays, element i of rollout b at
//     i*Bc + b (Bc = rollouts in this pass), so a warp's 32 rollouts read one element
//     together. The host copies the rollout-major Batch up and transposes it on the device:
//       host Batch [B][n] --copy--> staging [Bc][n] --transpose--> SoA [n][Bc]
//       SoA [n][Bc] --transpose--> staging [Bc][n] --copy--> BatchResult [B][n]
//   one warp per rollout (mass_spring): rollout-major, element i of rollout b at b*n + i,
//     the host layout itself, so the 32 lanes' lane-strided loops read 32 neighbouring
//     elements of one rollout; no staging, no transposes.
//
//   forward_kernel: (x0, u, θ) -> (ckpt, L, diag);  backward_kernel: -> (∂L/∂x0, ∂L/∂u, ∂L/∂θ)
//
// A batch whose inputs are already in device memory (Batch::view_inputs with Memory::kDevice,
// e.g. a torch CUDA tensor passed by the Python module) is not copied: the rollout-major layout
// reads it in place and writes the results straight into the result's device arrays
// (BatchResult::device); the SoA layout transposes from the caller's array and back into the
// result's, without the staging copies. Only diag comes back to the host.
//
// Models with a topology (a `topo` member: one int array shared by the whole batch) get it
// copied to the device once per call; the kernels receive a copy of the model whose topo
// points at the device copy, read through the cache like any other load.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "steer/backend.h"
#include "steer/cuda_backend.h"
#include "steer/cuda_check.h"
#include "steer/cuda_device.h"
#include "steer/controller.h"
#include "steer/lanes_per_rollout.h"
#include "steer/models/articulated.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"
#include "steer/rollout.h"
#include "rollout_device.cuh"

namespace steer {
namespace {

using cuda_detail::DeviceRollouts;
using cuda_detail::HasTopology;
using cuda_detail::kRolloutThreads;
using cuda_detail::kWarp;

static_assert(kRolloutThreads % kWarp == 0, "a block holds whole warps");
static_assert(HasTopology<MassSpring>::value && !HasTopology<Projectile>::value, "topology trait");

// ---- launch parameters, all in one place (the rollout kernels' block: rollout_device.cuh) ----
constexpr int kTile = 32;     // transpose tile: kTile × kTile elements
constexpr int kTileRows = 8;  // transpose block: kTile × kTileRows threads
constexpr long kMaxGridX = 2147483647L;
constexpr long kMaxGridY = 65535L;
// device memory left unclaimed when sizing chunks: a fraction of the free memory plus a
// fixed margin for the context, kernel stacks and allocator granularity
constexpr double kFreeFraction = 0.9;
constexpr std::size_t kReserveBytes = std::size_t(256) << 20;

// blocks for n rollouts of `lanes` threads each
dim3 rollout_grid(long n, int lanes) {
  return dim3(unsigned((n * lanes + kRolloutThreads - 1) / kRolloutThreads));
}

dim3 transpose_grid(long rows, long cols) {
  const long gx = std::min((rows + kTile - 1) / kTile, kMaxGridX);
  const long gy = std::min((cols + kTile - 1) / kTile, kMaxGridY);
  return dim3(unsigned(gx), unsigned(gy));
}

// Calls fn(km) with the model as the rollout kernels are instantiated for it. Articulated
// steps and reverses by its integrator, chosen at run time, so a kernel for it would compile
// rk4's four-acceleration step and dual-number adjoint next to the hand adjoint, and ptxas
// sizes each thread's stack (local memory) for all of them. Euler and implicitfast models
// therefore run as ArticulatedImplicit, whose kernels leave rk4 out; rk4 itself is host-only
// (is_host_only_integrator, refused by check_cuda_inputs). ArticulatedLegged likewise runs as
// ArticulatedLeggedImplicit (frame sizes: bench/RESULTS.md, GPU; tools/kernel_budget.py).
// Mass-spring likewise: a symplectic model runs as MassSpringSymplectic, whose kernels leave
// the backward-Euler Newton solve (and its per-thread band storage) out; backward-Euler models
// keep the MassSpring kernels.
template <class Model, class Fn>
void with_kernel_model(const Model& m, Fn&& fn) {
  if constexpr (std::is_same_v<Model, Articulated>) {
    fn(ArticulatedImplicit(m));
  } else if constexpr (std::is_same_v<Model, ArticulatedLegged>) {
    fn(ArticulatedLeggedImplicit(m));
  } else if constexpr (std::is_same_v<Model, MassSpring>) {
    if (m.integrator == MassSpring::kSymplecticEuler)
      fn(MassSpringSymplectic(m));
    else
      fn(m);
  } else if constexpr (std::is_same_v<Model, Controlled<MassSpring>>) {
    if (m.integrator == MassSpring::kSymplecticEuler)
      fn(Controlled<MassSpringSymplectic>(MassSpringSymplectic(m), m.policy));
    else
      fn(m);
  } else {
    fn(m);
  }
}
static_assert(LanesPerRollout<ArticulatedImplicit>::value == LanesPerRollout<Articulated>::value &&
                  HasTopology<ArticulatedImplicit>::value == HasTopology<Articulated>::value,
              "the kernel model variant keeps its model's device layout");
static_assert(LanesPerRollout<ArticulatedLeggedImplicit>::value ==
                      LanesPerRollout<ArticulatedLegged>::value &&
                  HasTopology<ArticulatedLeggedImplicit>::value ==
                      HasTopology<ArticulatedLegged>::value,
              "the kernel model variant keeps its model's device layout");
static_assert(LanesPerRollout<MassSpringSymplectic>::value == LanesPerRollout<MassSpring>::value &&
                  HasTopology<MassSpringSymplectic>::value == HasTopology<MassSpring>::value,
              "the kernel model variant keeps its model's device layout");

// out[c·rows + r] = in[r·cols + c]: [rows][cols] -> [cols][rows] through a shared tile, so
// that both the reads and the writes of a warp touch consecutive addresses
template <class T>
__global__ void transpose_kernel(const T* in, T* out, long rows, long cols) {
  __shared__ T tile[kTile][kTile + 1];  // +1 column: no shared-memory bank conflicts
  for (long r0 = long(blockIdx.x) * kTile; r0 < rows; r0 += long(gridDim.x) * kTile) {
    for (long c0 = long(blockIdx.y) * kTile; c0 < cols; c0 += long(gridDim.y) * kTile) {
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const long r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = in[r * cols + c];
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const long c = c0 + i, r = r0 + threadIdx.x;
        if (r < rows && c < cols) out[c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();
    }
  }
}

template <class T>
void launch_transpose(const T* d_in, T* d_out, long rows, long cols) {
  if (rows == 0 || cols == 0) return;
  STEER_KERNEL_LAUNCH(transpose_grid(rows, cols), dim3(kTile, kTileRows), transpose_kernel<T>)
  (d_in, d_out, rows, cols);
  STEER_CUDA_CHECK(cudaGetLastError());
}

// host rollout-major h_src [Bc][n] -> device d_dst: SoA [n][Bc] through d_stage, or a plain
// copy when the device layout is rollout-major too
template <class S>
void upload_rollouts(const S* h_src, S* d_stage, S* d_dst, long Bc, long n, bool soa) {
  if (n == 0) return;
  if (!soa) {
    STEER_CUDA_CHECK(cudaMemcpy(d_dst, h_src, sizeof(S) * Bc * n, cudaMemcpyHostToDevice));
    return;
  }
  STEER_CUDA_CHECK(cudaMemcpy(d_stage, h_src, sizeof(S) * Bc * n, cudaMemcpyHostToDevice));
  launch_transpose(d_stage, d_dst, Bc, n);
}

// device d_src (SoA [n][Bc] or rollout-major [Bc][n]) -> host rollout-major h_dst [Bc][n]
template <class S>
void download_rollouts(const S* d_src, S* d_stage, S* h_dst, long Bc, long n, bool soa) {
  if (n == 0) return;
  if (soa) {
    launch_transpose(d_src, d_stage, n, Bc);
    d_src = d_stage;
  }
  STEER_CUDA_CHECK(cudaMemcpy(h_dst, d_src, sizeof(S) * Bc * n, cudaMemcpyDeviceToHost));
}

// the model as the kernels see it: a copy whose topology (if it has one) points at a device
// copy of the host array, made once per call and owned by `storage`
template <class Model>
Model device_model(const Model& m, DeviceBuffer& storage) {
  Model md = m;
  if constexpr (HasTopology<Model>::value) {
    const long n = m.topology_size();
    if (n > 0) {
      storage = DeviceBuffer(sizeof(int) * std::size_t(n));
      STEER_CUDA_CHECK(cudaMemcpy(storage.as<int>(), m.topo, sizeof(int) * std::size_t(n),
                                  cudaMemcpyHostToDevice));
      md.topo = storage.as<int>();
    }
  }
  return md;
}

// elapsed time between two events [ms], after the second has completed
float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  STEER_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  STEER_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

// owns the five events that bound the four phases of one pass
struct PhaseEvents {
  cudaEvent_t e[5] = {};
  PhaseEvents() {
    for (auto& ev : e) STEER_CUDA_CHECK(cudaEventCreate(&ev));
  }
  ~PhaseEvents() {
    for (auto& ev : e)
      if (ev) cudaEventDestroy(ev);
  }
  PhaseEvents(const PhaseEvents&) = delete;
  PhaseEvents& operator=(const PhaseEvents&) = delete;
};

// The dual-number (reference) adjoint runs on the device for the projectile alone. Models sized
// at run time (mass-spring, FEM) keep it on the host, and so do the articulated models: their
// reference kernels carried Dual<S, 8> copies of the tree's whole step, with frames and spills far
// over the kernel budget and the longest nvcc times of the build, for a path that only a C++
// caller setting RolloutShape::reference_adjoint asks the device for (the CLI, the validator and
// Python never do).
template <class Model>
constexpr bool kDeviceReference = Model::kMaxState > 0 && !std::is_same_v<Model, Articulated> &&
                                  !std::is_same_v<Model, ArticulatedLegged>;

// The articulated rk4 step is host-only for the same reason: its adjoint is the dual-number one
// (Dual<S, 8> copies of four accelerations), and its kernels needed 95-348 KB of stack per thread
// with spills, the budget's largest exceptions and a third of the CUDA build's time
// (docs/design.md, "The kernel budget"). The cuda backend refuses it before any device work.
template <class Model>
bool is_host_only_integrator(const Model& m) {
  if constexpr (std::is_same_v<Model, Articulated> || std::is_same_v<Model, ArticulatedLegged>)
    return m.integrator == Model::kRk4;
  (void)m;
  return false;
}

// the inputs the CUDA path refuses, checked before any device work
template <class Model, class S>
void check_cuda_inputs(const Model& m, const RolloutShape& sh, const Batch<S>& batch) {
  check_batch(m, sh, batch);
  if (is_host_only_integrator(m))
    throw std::invalid_argument(
        "backend cuda: the rk4 integrator of an articulated model is host-only (its dual-number "
        "adjoint is not compiled into the kernels); run it on the cpu backend or use euler or "
        "implicitfast");
  if (sh.reference_adjoint && !kDeviceReference<Model>)
    throw std::invalid_argument(
        "backend cuda: the reference (dual-number) adjoint of this model is host-only; run it on "
        "the cpu backend or use the hand adjoint");
  if constexpr (HasTopology<Model>::value)
    if (m.topology_size() > 0 && m.topo == nullptr)
      throw std::invalid_argument("backend cuda: the model's topology (topo) is not set");
  const CudaStatus cs = cuda_status();
  if (!cs.available) throw std::runtime_error("backend cuda: " + cs.reason);
  if (batch.memory() == Memory::kDevice) {
    int current = 0;
    STEER_CUDA_CHECK(cudaGetDevice(&current));
    if (current != batch.device())
      throw std::invalid_argument("backend cuda: the batch's arrays are on device " +
                                  std::to_string(batch.device()) +
                                  ", this process runs on device " + std::to_string(current));
  }
}

// One call's layout: where the inputs and results live, the elements per rollout of every
// device array, and the device bytes one rollout takes in a pass
struct RunLayout {
  long B = 0;       // rollouts in the batch
  long tslots = 0;  // recorded trajectory slots
  long n_x0 = 0, n_u = 0, n_p = 0, n_ckpt = 0, n_seg = 0, n_traj = 0;
  long n_stack = 0;  // ints (the backward sweep's snapshot indices)
  long n_adj = 0;    // λ, λ_prev
  long n_grad = 0;   // ∂L/∂(x0, u, θ)
  long n_io = 0;     // per-pass copies of the inputs and results
  long n_stage = 0;  // largest array transposed through host staging
  bool want_grad = false;
  bool soa = false;        // device layout, see the top of the file
  bool on_device = false;  // the batch's arrays are in device memory
  // rollout-major device inputs are the kernels' own layout: read and written in place
  bool in_place = false;
  std::size_t per_rollout = 0;
};

template <class Model, class S>
RunLayout run_layout(const Model& m, const RolloutShape& sh, const Batch<S>& batch,
                     bool want_grad) {
  RunLayout layout;
  layout.B = batch.size;
  const long nx = m.nx(), nu = m.nu(), np = m.np(), T = sh.steps;
  layout.tslots = sh.traj_slots();
  layout.want_grad = want_grad;
  layout.soa = LanesPerRollout<Model>::value == 1;
  layout.on_device = batch.memory() == Memory::kDevice;
  layout.in_place = layout.on_device && !layout.soa;
  layout.n_x0 = nx;
  layout.n_u = T * nu;
  layout.n_p = np;
  layout.n_ckpt = long(sh.checkpoint_slots()) * nx;
  layout.n_seg = long(sh.segment_slots()) * nx;
  layout.n_traj = layout.tslots * nx;
  layout.n_stack = want_grad ? sh.stack_slots() : 0;  // read by the backward sweep only
  layout.n_adj = want_grad ? 2 * nx : 0;
  layout.n_grad = want_grad ? layout.n_x0 + layout.n_u + layout.n_p : 0;
  // none when the kernels use the caller's arrays and the result's device block in place
  layout.n_io = layout.in_place
                    ? 0
                    : layout.n_x0 + layout.n_u + layout.n_p + layout.n_grad + layout.n_traj + 1;
  // SoA from or to host memory only
  layout.n_stage = layout.soa && !layout.on_device
                       ? std::max({layout.n_x0, layout.n_u, layout.n_p, layout.n_traj})
                       : 0;
  layout.per_rollout = sizeof(S) * std::size_t(layout.n_io + layout.n_ckpt + layout.n_seg +
                                               layout.n_adj + layout.n_stage) +
                       sizeof(int) * std::size_t(layout.n_stack) + sizeof(RolloutDiag);
  return layout;
}

// result arrays exactly as cpu_run_batch lays them out, on the host or (device inputs) in
// one device block
template <class S>
void prepare_result(const RunLayout& layout, BatchResult<S>& out) {
  const long B = layout.B;
  const bool on_device = layout.on_device, want_grad = layout.want_grad;
  out.diag.assign(B, RolloutDiag{});
  out.memory = on_device ? Memory::kDevice : Memory::kHost;
  out.device = {};
  // elements per rollout
  const long n_res = 1 + (want_grad ? layout.n_x0 + layout.n_u + layout.n_p : 0) + layout.n_traj;
  out.loss.assign(on_device ? 0 : B, S(0));
  out.grad_x0.assign(on_device || !want_grad ? 0 : std::size_t(B) * layout.n_x0, S(0));
  out.grad_u.assign(on_device || !want_grad ? 0 : std::size_t(B) * layout.n_u, S(0));
  out.grad_theta.assign(on_device || !want_grad ? 0 : std::size_t(B) * layout.n_p, S(0));
  out.traj.assign(on_device ? 0 : std::size_t(B) * layout.n_traj, S(0));
  if (on_device && B > 0) {
    auto* block = new DeviceBuffer(sizeof(S) * std::size_t(B) * std::size_t(n_res));
    out.device.owner =
        std::shared_ptr<void>(block, [](void* p) { delete static_cast<DeviceBuffer*>(p); });
    S* next = block->as<S>();
    auto take = [&](long n) {  // the next [B][n] array of the block
      S* p = n > 0 ? next : nullptr;
      next += std::size_t(B) * std::size_t(n);
      return p;
    };
    out.device.loss = take(1);
    out.device.grad_x0 = want_grad ? take(layout.n_x0) : nullptr;
    out.device.grad_u = want_grad ? take(layout.n_u) : nullptr;
    out.device.grad_theta = want_grad ? take(layout.n_p) : nullptr;
    out.device.traj = take(layout.n_traj);
  }
}

// rollouts per pass: the whole batch if it fits, else as many as free memory holds
long pass_rollouts(const RunLayout& layout, const CudaRunOptions& opt) {
  long chunk = layout.B;
  if (opt.max_chunk > 0) chunk = std::min(chunk, opt.max_chunk);
  const DeviceMemory mem = device_memory();
  const double budget = kFreeFraction * double(mem.free_bytes) - double(kReserveBytes);
  const long fit = budget > 0 ? long(budget / double(layout.per_rollout)) : 0;
  if (fit < 1)
    throw std::runtime_error("backend cuda: one rollout needs " +
                             std::to_string(layout.per_rollout) + " bytes of device memory, " +
                             std::to_string(mem.free_bytes) + " bytes are free");
  return std::min(chunk, fit);
}

// device buffers for one pass of `chunk` rollouts, reused by every pass; those the caller's
// and the result's arrays stand in for (in place) are empty
template <class S>
struct PassBuffers {
  DeviceBuffer x0, u, p, ckpt, seg, traj, lam, lam_prev, gx0, gu, gp, stage, loss, stack, diag;

  PassBuffers(const RunLayout& layout, long chunk) {
    auto alloc = [&](long n) { return DeviceBuffer(sizeof(S) * std::size_t(n) * chunk); };
    const long io = layout.in_place ? 0 : 1;  // 0: the caller's and the result's arrays stand in
    const long grad = layout.want_grad ? io : 0, adj = layout.want_grad ? layout.n_x0 : 0;
    x0 = alloc(io * layout.n_x0);
    u = alloc(io * layout.n_u);
    p = alloc(io * layout.n_p);
    ckpt = alloc(layout.n_ckpt);
    seg = alloc(layout.n_seg);
    traj = alloc(io * layout.n_traj);
    lam = alloc(adj);
    lam_prev = alloc(adj);
    gx0 = alloc(grad * layout.n_x0);
    gu = alloc(grad * layout.n_u);
    gp = alloc(grad * layout.n_p);
    stage = alloc(layout.n_stage);
    loss = alloc(io);
    stack = DeviceBuffer(sizeof(int) * std::size_t(layout.n_stack) * chunk);
    diag = DeviceBuffer(sizeof(RolloutDiag) * std::size_t(chunk));
  }

  // the kernels' arrays for rollouts b0..b0+Bc: these buffers, or (in place) rows b0..b0+Bc
  // of the caller's arrays and of the result's, [Bc][n] like the kernels'
  DeviceRollouts<S> view(const RunLayout& layout, const Batch<S>& batch, const BatchResult<S>& out,
                         long b0, long Bc) const {
    DeviceRollouts<S> d;
    d.count = Bc;
    d.n_x = layout.n_x0;
    d.n_u = layout.n_u;
    d.n_p = layout.n_p;
    d.n_ckpt = layout.n_ckpt;
    d.n_seg = layout.n_seg;
    d.n_traj = layout.n_traj;
    d.n_stack = layout.n_stack;
    d.x0 = x0.as<S>();
    d.u = u.as<S>();
    d.p = p.as<S>();
    d.ckpt = ckpt.as<S>();
    d.seg = seg.as<S>();
    d.stack = layout.n_stack > 0 ? stack.as<int>() : nullptr;
    d.lam = lam.as<S>();
    d.lam_prev = lam_prev.as<S>();
    d.grad_x0 = gx0.as<S>();
    d.grad_u = gu.as<S>();
    d.grad_p = gp.as<S>();
    d.traj = layout.tslots > 0 ? traj.as<S>() : nullptr;
    d.loss = loss.as<S>();
    d.diag = diag.as<RolloutDiag>();
    if (layout.in_place) {
      const typename BatchResult<S>::DeviceArrays& dev = out.device;
      d.x0 = batch.x0_data() + b0 * layout.n_x0;
      d.u = batch.u_data() + b0 * layout.n_u;
      d.p = batch.theta_data() + b0 * layout.n_p;
      d.loss = dev.loss + b0;
      if (layout.want_grad) {
        d.grad_x0 = dev.grad_x0 + b0 * layout.n_x0;
        d.grad_u = dev.grad_u + b0 * layout.n_u;
        d.grad_p = dev.grad_theta + b0 * layout.n_p;
      }
      d.traj = layout.tslots > 0 ? dev.traj + b0 * layout.n_traj : nullptr;
    }
    return d;
  }
};

// host [B][n] rows b0..b0+Bc −> device [n][Bc] (SoA) or [Bc][n]; device inputs: SoA
// transposed from the caller's rows, rollout-major read in place (PassBuffers::view)
template <class S>
void upload_pass(const RunLayout& layout, const Batch<S>& batch, const PassBuffers<S>& buf, long b0,
                 long Bc) {
  S* d_stage = buf.stage.template as<S>();
  if (!layout.on_device) {
    upload_rollouts(batch.x0_data() + b0 * layout.n_x0, d_stage, buf.x0.template as<S>(), Bc,
                    layout.n_x0, layout.soa);
    upload_rollouts(batch.u_data() + b0 * layout.n_u, d_stage, buf.u.template as<S>(), Bc,
                    layout.n_u, layout.soa);
    upload_rollouts(batch.theta_data() + b0 * layout.n_p, d_stage, buf.p.template as<S>(), Bc,
                    layout.n_p, layout.soa);
  } else if (!layout.in_place) {
    launch_transpose(batch.x0_data() + b0 * layout.n_x0, buf.x0.template as<S>(), Bc, layout.n_x0);
    launch_transpose(batch.u_data() + b0 * layout.n_u, buf.u.template as<S>(), Bc, layout.n_u);
    launch_transpose(batch.theta_data() + b0 * layout.n_p, buf.p.template as<S>(), Bc, layout.n_p);
  }
}

// the forward kernel on the model as its kernels are instantiated (with_kernel_model)
template <class Model, class S>
void launch_forward_pass(const Model& md, const Loss& loss, const RolloutShape& sh,
                         const DeviceRollouts<S>& d, dim3 grid) {
  with_kernel_model(md, [&](const auto& km) {
    cuda_detail::launch_forward<std::decay_t<decltype(km)>, S>(km, loss, sh, d, grid);
  });
  STEER_CUDA_CHECK(cudaGetLastError());
}

// the backward kernel: the hand adjoint on the kernel model, or the reference (dual-number)
// adjoint, which is the dual path for every integrator, on the model as given
template <class Model, class S>
void launch_backward_pass(const Model& md, const Loss& loss, const RolloutShape& sh,
                          const DeviceRollouts<S>& d, dim3 grid) {
  bool launched = false;
  if constexpr (kDeviceReference<Model>) {
    if (sh.reference_adjoint) {
      cuda_detail::launch_backward<Model, S, true>(md, loss, sh, d, grid);
      launched = true;
    }
  }
  if (!launched)
    with_kernel_model(md, [&](const auto& km) {
      cuda_detail::launch_backward<std::decay_t<decltype(km)>, S, false>(km, loss, sh, d, grid);
    });
  STEER_CUDA_CHECK(cudaGetLastError());
}

// device −> host, back to rollout-major; loss and diag are per rollout already. Device
// results: diag only (in place), or the SoA results transposed into the result's arrays
template <class S>
void download_pass(const RunLayout& layout, const DeviceRollouts<S>& d, const PassBuffers<S>& buf,
                   long b0, BatchResult<S>& out) {
  const long Bc = d.count;
  S* d_stage = buf.stage.template as<S>();
  const typename BatchResult<S>::DeviceArrays& dev = out.device;
  STEER_CUDA_CHECK(
      cudaMemcpy(out.diag.data() + b0, d.diag, sizeof(RolloutDiag) * Bc, cudaMemcpyDeviceToHost));
  if (layout.on_device) {
    if (!layout.in_place) {
      STEER_CUDA_CHECK(cudaMemcpy(dev.loss + b0, d.loss, sizeof(S) * Bc, cudaMemcpyDeviceToDevice));
      if (layout.want_grad) {
        launch_transpose(d.grad_x0, dev.grad_x0 + b0 * layout.n_x0, layout.n_x0, Bc);
        launch_transpose(d.grad_u, dev.grad_u + b0 * layout.n_u, layout.n_u, Bc);
        launch_transpose(d.grad_p, dev.grad_theta + b0 * layout.n_p, layout.n_p, Bc);
      }
      if (layout.tslots > 0)
        launch_transpose(d.traj, dev.traj + b0 * layout.n_traj, layout.n_traj, Bc);
    }
  } else if (layout.want_grad) {
    download_rollouts(d.grad_x0, d_stage, out.grad_x0.data() + b0 * layout.n_x0, Bc, layout.n_x0,
                      layout.soa);
    download_rollouts(d.grad_u, d_stage, out.grad_u.data() + b0 * layout.n_u, Bc, layout.n_u,
                      layout.soa);
    download_rollouts(d.grad_p, d_stage, out.grad_theta.data() + b0 * layout.n_p, Bc, layout.n_p,
                      layout.soa);
  }
  if (!layout.on_device) {
    STEER_CUDA_CHECK(
        cudaMemcpy(out.loss.data() + b0, d.loss, sizeof(S) * Bc, cudaMemcpyDeviceToHost));
    if (layout.tslots > 0)
      download_rollouts(d.traj, d_stage, out.traj.data() + b0 * layout.n_traj, Bc, layout.n_traj,
                        layout.soa);
  }
}

// one pass's phases (upload, forward, backward, download) added to the call's times
void add_pass_times(const PhaseEvents& ev, CudaRunStats& st) {
  st.chunks += 1;
  st.upload_ms += elapsed_ms(ev.e[0], ev.e[1]);
  st.forward_ms += elapsed_ms(ev.e[1], ev.e[2]);
  st.backward_ms += elapsed_ms(ev.e[2], ev.e[3]);
  st.download_ms += elapsed_ms(ev.e[3], ev.e[4]);
}

}  // namespace

template <class Model, class S>
void cuda_run_batch_ex(const Model& m, const Loss& loss, const RolloutShape& sh,
                       const Batch<S>& batch, bool want_grad, BatchResult<S>& out,
                       const CudaRunOptions& opt, CudaRunStats* stats) {
  constexpr int W = LanesPerRollout<Model>::value;
  static_assert(W == 1 || W == kWarp, "a rollout's lanes synchronise with __syncwarp");
  // refused before the device is asked for, so that a machine without a GPU reports it too
  if (loss.com_target)
    throw std::invalid_argument(
        "backend cuda: loss.com_target is host-only (not compiled into the kernels); run it on "
        "the cpu backend");
  check_cuda_inputs(m, sh, batch);
  const RunLayout layout = run_layout(m, sh, batch, want_grad);
  prepare_result(layout, out);
  CudaRunStats st;
  if (layout.B == 0) {
    if (stats) *stats = st;
    return;
  }

  const long chunk = pass_rollouts(layout, opt);
  PassBuffers<S> buf(layout, chunk);
  DeviceBuffer d_topo;
  const Model md = device_model(m, d_topo);
  PhaseEvents ev;
  st.chunk_rollouts = chunk;
  st.bytes_per_rollout = layout.per_rollout;
  st.device_bytes = layout.per_rollout * std::size_t(chunk);
  for (long b0 = 0; b0 < layout.B; b0 += chunk) {
    const DeviceRollouts<S> d = buf.view(layout, batch, out, b0, std::min(chunk, layout.B - b0));
    const dim3 grid = rollout_grid(d.count, W);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    upload_pass(layout, batch, buf, b0, d.count);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[1]));
    launch_forward_pass(md, loss, sh, d, grid);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[2]));
    if (want_grad) launch_backward_pass(md, loss, sh, d, grid);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[3]));
    download_pass(layout, d, buf, b0, out);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[4]));
    // a fault inside a kernel surfaces at the first synchronizing call after it
    STEER_CUDA_CHECK(cudaDeviceSynchronize());
    add_pass_times(ev, st);
  }
  if (stats) *stats = st;
}

template <class Model, class S>
void cuda_run_batch(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<S>& batch,
                    bool want_grad, BatchResult<S>& out) {
  cuda_run_batch_ex<Model, S>(m, loss, sh, batch, want_grad, out, CudaRunOptions{}, nullptr);
}

// ---- explicit instantiation: one line per model and precision, in its own .cu file ----
#define STEER_INSTANTIATE_CUDA(Model, S)                                                    \
  template void cuda_run_batch<Model, S>(const Model&, const Loss&, const RolloutShape&,    \
                                         const Batch<S>&, bool, BatchResult<S>&);           \
  template void cuda_run_batch_ex<Model, S>(const Model&, const Loss&, const RolloutShape&, \
                                            const Batch<S>&, bool, BatchResult<S>&,         \
                                            const CudaRunOptions&, CudaRunStats*);

}  // namespace steer
