// Copies of kernels/rollout_kernels.cuh's transpose_kernel, each with one deliberate bug,
// for the tests that show the emulated device catches it (emulated_scheduling_test.cpp,
// emulated_asan_test.cpp). The correct kernel is the one in kernels/, launched by the same
// tests. Anonymous namespace as for steer's kernels, so
// each __shared__ array is an ordinary global that AddressSanitizer guards.
#pragma once

#include <cuda_runtime.h>

namespace steer_test_kernels {
namespace {

constexpr int kTile = 32;  // as rollout_kernels.cuh
constexpr int kTileRows = 8;

// BUG: no __syncthreads between filling the tile and reading it back transposed, so a thread
// reads tile entries other threads have not written yet
template <class T>
__global__ void transpose_without_first_barrier(const T* in, T* out, long rows, long cols) {
  __shared__ T tile[kTile][kTile + 1];
  for (long r0 = long(blockIdx.x) * kTile; r0 < rows; r0 += long(gridDim.x) * kTile) {
    for (long c0 = long(blockIdx.y) * kTile; c0 < cols; c0 += long(gridDim.y) * kTile) {
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const long r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = in[r * cols + c];
      }
      for (int i = threadIdx.y; i < kTile; i += kTileRows) {
        const long c = c0 + i, r = r0 + threadIdx.x;
        if (r < rows && c < cols) out[c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();
    }
  }
}

// BUG: no __syncthreads after reading the tile, so when one block covers several tiles (a
// grid smaller than the matrix) a thread refills the tile while others still read it
template <class T>
__global__ void transpose_without_second_barrier(const T* in, T* out, long rows, long cols) {
  __shared__ T tile[kTile][kTile + 1];
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
    }
  }
}

// BUG: the fill loop runs one row too far (i <= kTile) and writes tile[kTile][...], the
// first element past the shared array; the bounds test on the matrix does not stop it when
// the matrix has a row there
template <class T>
__global__ void transpose_past_the_tile(const T* in, T* out, long rows, long cols) {
  __shared__ T tile[kTile][kTile + 1];
  for (long r0 = long(blockIdx.x) * kTile; r0 < rows; r0 += long(gridDim.x) * kTile) {
    for (long c0 = long(blockIdx.y) * kTile; c0 < cols; c0 += long(gridDim.y) * kTile) {
      for (int i = threadIdx.y; i <= kTile; i += kTileRows) {
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

}  // namespace
}  // namespace steer_test_kernels
