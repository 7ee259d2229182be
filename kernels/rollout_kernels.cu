// The CUDA backend: one thread per rollout runs the same forward_rollout / backward_rollout
// that the CPU backend runs, on structure-of-arrays device buffers (element i of rollout b
// at i*Bc + b, so a warp's loads of one element coalesce). The kernels only index and call;
// the host side here copies the rollout-major Batch up, transposes it on the device, and
// transposes the results back into the BatchResult layout of cpu_run_batch.
//
//   host Batch [B][n] --copy--> staging [Bc][n] --transpose--> SoA [n][Bc]
//   SoA --forward_kernel--> (ckpt, L, diag) --backward_kernel--> (∂L/∂x0, ∂L/∂u, ∂L/∂θ)
//   SoA [n][Bc] --transpose--> staging [Bc][n] --copy--> BatchResult [B][n]
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "steer/backend.h"
#include "steer/cuda_backend.h"
#include "steer/cuda_check.h"
#include "steer/cuda_device.h"
#include "steer/models/projectile.h"
#include "steer/rollout.h"

namespace steer {
namespace {

// ---- launch parameters, all in one place ----
constexpr int kRolloutThreads = 128;  // threads per block of the per-rollout kernels
constexpr int kTile = 32;             // transpose tile: kTile × kTile elements
constexpr int kTileRows = 8;          // transpose block: kTile × kTileRows threads
constexpr long kMaxGridX = 2147483647L;
constexpr long kMaxGridY = 65535L;
// device memory left unclaimed when sizing chunks: a fraction of the free memory plus a
// fixed margin for the context, kernel stacks and allocator granularity
constexpr double kFreeFraction = 0.9;
constexpr std::size_t kReserveBytes = std::size_t(256) << 20;

dim3 rollout_grid(long n) { return dim3(unsigned((n + kRolloutThreads - 1) / kRolloutThreads)); }
dim3 transpose_grid(long rows, long cols) {
  const long gx = std::min((rows + kTile - 1) / kTile, kMaxGridX);
  const long gy = std::min((cols + kTile - 1) / kTile, kMaxGridY);
  return dim3(unsigned(gx), unsigned(gy));
}

// one pass's device arrays, SoA with stride `count` (the rollouts in this pass)
template <class S>
struct DeviceRollouts {
  long count = 0;
  const S* x0 = nullptr;        // [nx][Bc]
  const S* u = nullptr;         // [T·nu][Bc]
  const S* p = nullptr;         // [np][Bc]
  S* ckpt = nullptr;            // [slots·nx][Bc]
  S* seg = nullptr;             // [(K+1)·nx][Bc]
  S* lam = nullptr;             // [nx][Bc]
  S* lam_prev = nullptr;        // [nx][Bc]
  S* grad_x0 = nullptr;         // [nx][Bc]
  S* grad_u = nullptr;          // [T·nu][Bc]
  S* grad_p = nullptr;          // [np][Bc]
  S* traj = nullptr;            // [traj_slots·nx][Bc] or null
  S* loss = nullptr;            // [Bc]
  RolloutDiag* diag = nullptr;  // [Bc], one struct per rollout (written once, not strided)
};

// rollout b's slices of the pass: base offset b, stride Bc
template <class S>
__device__ RolloutRefs<S> refs_of(const DeviceRollouts<S>& d, long b) {
  const long B = d.count;
  RolloutRefs<S> r;
  r.x0 = View<const S>{d.x0 + b, B};
  r.u = View<const S>{d.u + b, B};
  r.p = View<const S>{d.p + b, B};
  r.ckpt = View<S>{d.ckpt + b, B};
  r.seg = View<S>{d.seg + b, B};
  r.lam = View<S>{d.lam ? d.lam + b : nullptr, B};
  r.lam_prev = View<S>{d.lam_prev ? d.lam_prev + b : nullptr, B};
  r.grad_x0 = View<S>{d.grad_x0 ? d.grad_x0 + b : nullptr, B};
  r.grad_u = View<S>{d.grad_u ? d.grad_u + b : nullptr, B};
  r.grad_p = View<S>{d.grad_p ? d.grad_p + b : nullptr, B};
  r.traj = View<S>{d.traj ? d.traj + b : nullptr, B};
  r.loss = d.loss + b;
  r.diag = d.diag + b;
  return r;
}

// (x0, u, θ) -> (checkpoints, L, diag), one thread per rollout
template <class Model, class S>
__global__ void forward_kernel(Model m, Loss loss, RolloutShape sh, DeviceRollouts<S> d) {
  const long b = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= d.count) return;
  forward_rollout<Model, S>(m, loss, sh, refs_of(d, b));
}

// (checkpoints, u, θ) -> (∂L/∂x0, ∂L/∂u, ∂L/∂θ), one thread per rollout. The adjoint
// choice is a template argument so that the dual-number path, when not asked for, is
// compiled out: it would otherwise set the kernel's register count (250 vs 134 in float64).
template <class Model, class S, bool kReferenceAdjoint>
__global__ void backward_kernel(Model m, Loss loss, RolloutShape sh, DeviceRollouts<S> d) {
  const long b = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= d.count) return;
  sh.reference_adjoint = kReferenceAdjoint;
  backward_rollout<Model, S>(m, loss, sh, refs_of(d, b));
}

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
  transpose_kernel<T>
      <<<transpose_grid(rows, cols), dim3(kTile, kTileRows)>>>(d_in, d_out, rows, cols);
  STEER_CUDA_CHECK(cudaGetLastError());
}

// host rollout-major h_src [Bc][n] -> device SoA d_dst [n][Bc], through d_stage
template <class S>
void upload_soa(const S* h_src, S* d_stage, S* d_dst, long Bc, long n) {
  if (n == 0) return;
  STEER_CUDA_CHECK(cudaMemcpy(d_stage, h_src, sizeof(S) * Bc * n, cudaMemcpyHostToDevice));
  launch_transpose(d_stage, d_dst, Bc, n);
}

// device SoA d_src [n][Bc] -> host rollout-major h_dst [Bc][n], through d_stage
template <class S>
void download_soa(const S* d_src, S* d_stage, S* h_dst, long Bc, long n) {
  if (n == 0) return;
  launch_transpose(d_src, d_stage, n, Bc);
  STEER_CUDA_CHECK(cudaMemcpy(h_dst, d_stage, sizeof(S) * Bc * n, cudaMemcpyDeviceToHost));
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

}  // namespace

template <class Model, class S>
void cuda_run_batch_ex(const Model& m, const Loss& loss, const RolloutShape& sh,
                       const Batch<S>& batch, bool want_grad, BatchResult<S>& out,
                       const CudaRunOptions& opt, CudaRunStats* stats) {
  check_batch(m, sh, batch);
  const CudaStatus cs = cuda_status();
  if (!cs.available) throw std::runtime_error("backend cuda: " + cs.reason);
  const long B = batch.size;
  const long nx = m.nx(), nu = m.nu(), np = m.np(), T = sh.steps;
  const long tslots = sh.traj_slots();

  // result arrays exactly as cpu_run_batch lays them out
  out.loss.assign(B, S(0));
  out.diag.assign(B, RolloutDiag{});
  if (want_grad) {
    out.grad_x0.assign(std::size_t(B) * nx, S(0));
    out.grad_u.assign(std::size_t(B) * T * nu, S(0));
    out.grad_theta.assign(std::size_t(B) * np, S(0));
  } else {
    out.grad_x0.clear();
    out.grad_u.clear();
    out.grad_theta.clear();
  }
  if (tslots > 0)
    out.traj.assign(std::size_t(B) * tslots * nx, S(0));
  else
    out.traj.clear();
  CudaRunStats st;
  if (B == 0) {
    if (stats) *stats = st;
    return;
  }

  // elements per rollout of each device array
  const long n_x0 = nx, n_u = T * nu, n_p = np;
  const long n_ckpt = long(sh.checkpoint_slots()) * nx, n_seg = long(sh.segment_slots()) * nx;
  const long n_traj = tslots * nx;
  const long n_adj = want_grad ? 2 * nx : 0;                // λ, λ_prev
  const long n_grad = want_grad ? n_x0 + n_u + n_p : 0;     // ∂L/∂(x0, u, θ)
  const long n_stage = std::max({n_x0, n_u, n_p, n_traj});  // largest array to transpose
  const std::size_t per_rollout = sizeof(S) * std::size_t(n_x0 + n_u + n_p + n_ckpt + n_seg +
                                                          n_adj + n_grad + n_traj + n_stage + 1) +
                                  sizeof(RolloutDiag);

  // rollouts per pass: the whole batch if it fits, else as many as free memory holds
  long chunk = B;
  if (opt.max_chunk > 0) chunk = std::min(chunk, opt.max_chunk);
  const DeviceMemory mem = device_memory();
  const double budget = kFreeFraction * double(mem.free_bytes) - double(kReserveBytes);
  const long fit = budget > 0 ? long(budget / double(per_rollout)) : 0;
  if (fit < 1)
    throw std::runtime_error("backend cuda: one rollout needs " + std::to_string(per_rollout) +
                             " bytes of device memory, " + std::to_string(mem.free_bytes) +
                             " bytes are free");
  chunk = std::min(chunk, fit);

  // device buffers for one pass of `chunk` rollouts, reused by every pass
  auto alloc = [&](long n) { return DeviceBuffer(sizeof(S) * std::size_t(n) * chunk); };
  DeviceBuffer d_x0 = alloc(n_x0), d_u = alloc(n_u), d_p = alloc(n_p);
  DeviceBuffer d_ckpt = alloc(n_ckpt), d_seg = alloc(n_seg), d_traj = alloc(n_traj);
  DeviceBuffer d_lam = alloc(want_grad ? nx : 0), d_lam_prev = alloc(want_grad ? nx : 0);
  DeviceBuffer d_gx0 = alloc(want_grad ? n_x0 : 0), d_gu = alloc(want_grad ? n_u : 0),
               d_gp = alloc(want_grad ? n_p : 0);
  DeviceBuffer d_stage = alloc(n_stage), d_loss = alloc(1);
  DeviceBuffer d_diag(sizeof(RolloutDiag) * std::size_t(chunk));
  PhaseEvents ev;

  st.chunk_rollouts = chunk;
  st.bytes_per_rollout = per_rollout;
  st.device_bytes = per_rollout * std::size_t(chunk);
  for (long b0 = 0; b0 < B; b0 += chunk) {
    const long Bc = std::min(chunk, B - b0);
    DeviceRollouts<S> d;
    d.count = Bc;
    d.x0 = d_x0.as<S>();
    d.u = d_u.as<S>();
    d.p = d_p.as<S>();
    d.ckpt = d_ckpt.as<S>();
    d.seg = d_seg.as<S>();
    d.lam = d_lam.as<S>();
    d.lam_prev = d_lam_prev.as<S>();
    d.grad_x0 = d_gx0.as<S>();
    d.grad_u = d_gu.as<S>();
    d.grad_p = d_gp.as<S>();
    d.traj = tslots > 0 ? d_traj.as<S>() : nullptr;
    d.loss = d_loss.as<S>();
    d.diag = d_diag.as<RolloutDiag>();
    S* d_st = d_stage.as<S>();

    // host [B][n] rows b0..b0+Bc −> device [n][Bc]
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    upload_soa(batch.x0.data() + b0 * n_x0, d_st, d_x0.as<S>(), Bc, n_x0);
    upload_soa(batch.u.data() + b0 * n_u, d_st, d_u.as<S>(), Bc, n_u);
    upload_soa(batch.theta.data() + b0 * n_p, d_st, d_p.as<S>(), Bc, n_p);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[1]));

    forward_kernel<Model, S><<<rollout_grid(Bc), kRolloutThreads>>>(m, loss, sh, d);
    STEER_CUDA_CHECK(cudaGetLastError());
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[2]));
    if (want_grad) {
      if (sh.reference_adjoint)
        backward_kernel<Model, S, true><<<rollout_grid(Bc), kRolloutThreads>>>(m, loss, sh, d);
      else
        backward_kernel<Model, S, false><<<rollout_grid(Bc), kRolloutThreads>>>(m, loss, sh, d);
      STEER_CUDA_CHECK(cudaGetLastError());
    }
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[3]));

    // device −> host, back to rollout-major; loss and diag are per rollout already
    STEER_CUDA_CHECK(
        cudaMemcpy(out.loss.data() + b0, d.loss, sizeof(S) * Bc, cudaMemcpyDeviceToHost));
    STEER_CUDA_CHECK(
        cudaMemcpy(out.diag.data() + b0, d.diag, sizeof(RolloutDiag) * Bc, cudaMemcpyDeviceToHost));
    if (want_grad) {
      download_soa(d.grad_x0, d_st, out.grad_x0.data() + b0 * n_x0, Bc, n_x0);
      download_soa(d.grad_u, d_st, out.grad_u.data() + b0 * n_u, Bc, n_u);
      download_soa(d.grad_p, d_st, out.grad_theta.data() + b0 * n_p, Bc, n_p);
    }
    if (tslots > 0) download_soa(d.traj, d_st, out.traj.data() + b0 * n_traj, Bc, n_traj);
    STEER_CUDA_CHECK(cudaEventRecord(ev.e[4]));
    // a fault inside a kernel surfaces at the first synchronizing call after it
    STEER_CUDA_CHECK(cudaDeviceSynchronize());

    st.chunks += 1;
    st.upload_ms += elapsed_ms(ev.e[0], ev.e[1]);
    st.forward_ms += elapsed_ms(ev.e[1], ev.e[2]);
    st.backward_ms += elapsed_ms(ev.e[2], ev.e[3]);
    st.download_ms += elapsed_ms(ev.e[3], ev.e[4]);
  }
  if (stats) *stats = st;
}

template <class Model, class S>
void cuda_run_batch(const Model& m, const Loss& loss, const RolloutShape& sh, const Batch<S>& batch,
                    bool want_grad, BatchResult<S>& out) {
  cuda_run_batch_ex<Model, S>(m, loss, sh, batch, want_grad, out, CudaRunOptions{}, nullptr);
}

// ---- explicit instantiations: one line per model and precision ----
#define STEER_INSTANTIATE_CUDA(Model, S)                                                    \
  template void cuda_run_batch<Model, S>(const Model&, const Loss&, const RolloutShape&,    \
                                         const Batch<S>&, bool, BatchResult<S>&);           \
  template void cuda_run_batch_ex<Model, S>(const Model&, const Loss&, const RolloutShape&, \
                                            const Batch<S>&, bool, BatchResult<S>&,         \
                                            const CudaRunOptions&, CudaRunStats*);

STEER_INSTANTIATE_CUDA(Projectile, float)
STEER_INSTANTIATE_CUDA(Projectile, double)
#undef STEER_INSTANTIATE_CUDA

}  // namespace steer
