// Built only into emulated_asan_test (tests/backend/gpu_emulation.cmake): the emulated device under
// AddressSanitizer catches a kernel that writes past its shared-memory tile and one that
// reads past a device array. The kernel copies with the bugs are in
// tests/backend/cuda_emulation/transpose_copies.h; each runs in a death test (a child process),
// where the sanitizer's report ends the child.
#include <gtest/gtest.h>

#include <vector>

#include "cuda_emulation/emulator.h"
#include "cuda_emulation/transpose_copies.h"
#include "steer/cuda_device.h"

namespace {

using steer::DeviceBuffer;

void transpose_with(void (*kernel)(const double*, double*, long, long), long rows, long cols,
                    std::size_t in_elements) {
  std::vector<double> in(in_elements, 1.0);
  DeviceBuffer d_in(sizeof(double) * in_elements), d_out(sizeof(double) * std::size_t(rows * cols));
  cudaMemcpy(d_in.as<double>(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice);
  STEER_KERNEL_LAUNCH(dim3(1, 1), dim3(32, 8), kernel)
  (d_in.as<const double>(), d_out.as<double>(), rows, cols);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(EmulatedAsan, AWritePastTheSharedTileIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 40 rows: the bad fill loop finds a matrix row at tile row 32 and writes tile[32][...]
  EXPECT_DEATH(transpose_with(steer_test_kernels::transpose_past_the_tile<double>, 40, 32, 40 * 32),
               "AddressSanitizer: global-buffer-overflow.*'tile'");
}

TEST(EmulatedAsan, AReadPastADeviceArrayIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // the input array one element short of the 32 x 32 matrix the kernel reads (the copy without
  // the second barrier is a correct kernel when a block has one tile)
  EXPECT_DEATH(transpose_with(steer_test_kernels::transpose_without_second_barrier<double>, 32, 32,
                              32 * 32 - 1),
               "AddressSanitizer: heap-buffer-overflow");
}

// the same launches with the right kernel and sizes run clean (the death tests above die of
// the bug, not of the emulator)
TEST(EmulatedAsan, TheCorrectLaunchesRunClean) {
  transpose_with(steer_test_kernels::transpose_without_second_barrier<double>, 32, 32, 32 * 32);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(steer_emu::live_allocations(), 0);
}
#else
TEST(EmulatedAsan, NeedsAddressSanitizer) { GTEST_SKIP() << "built without -fsanitize=address"; }
#endif

}  // namespace
