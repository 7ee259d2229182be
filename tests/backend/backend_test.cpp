// Backend selection (include/steer/backend.h): "cpu" always works, "cuda" works only with a
// device and otherwise fails loudly with the reason, "auto" falls back to the CPU and says
// why. Runs in every build, with or without the CUDA backend and with or without a GPU.
#include "steer/backend.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "steer/models/projectile.h"

namespace steer {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Backend, StatusMatchesBuild) {
  const CudaStatus s = cuda_status();
#ifdef STEER_WITH_CUDA
  EXPECT_TRUE(s.compiled);
#else
  EXPECT_FALSE(s.compiled);
  EXPECT_FALSE(s.available);
#endif
  if (s.available) {
    EXPECT_FALSE(s.device.empty());
  } else {
    EXPECT_FALSE(s.reason.empty());
    // a CUDA build on a machine without a GPU or driver says so in these words
    if (s.compiled) {
      EXPECT_TRUE(contains(s.reason, "no CUDA device: ")) << s.reason;
    }
  }
  // asking twice gives the same answer (the probe runs once per process)
  EXPECT_EQ(cuda_status().available, s.available);
  EXPECT_EQ(cuda_status().reason, s.reason);
}

TEST(Backend, CpuIsAlwaysAvailable) {
  std::string note = "untouched";
  EXPECT_EQ(resolve_backend("cpu", &note), BackendKind::kCpu);
  EXPECT_EQ(resolve_backend("cpu", nullptr), BackendKind::kCpu);
  EXPECT_STREQ(backend_name(BackendKind::kCpu), "cpu");
  EXPECT_STREQ(backend_name(BackendKind::kCuda), "cuda");
}

TEST(Backend, UnknownNameIsRejectedByName) {
  try {
    resolve_backend("opencl", nullptr);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "'opencl'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cpu, cuda, auto")) << e.what();
  }
}

TEST(Backend, CudaWithoutDeviceThrowsWithReason) {
  const CudaStatus s = cuda_status();
  if (s.available) {
    std::string note;
    EXPECT_EQ(resolve_backend("cuda", &note), BackendKind::kCuda);
    EXPECT_TRUE(contains(note, s.device)) << note;
    return;
  }
  try {
    resolve_backend("cuda", nullptr);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "backend cuda: ")) << e.what();
    if (s.compiled)
      EXPECT_TRUE(contains(e.what(), "no CUDA device")) << e.what();
    else
      EXPECT_TRUE(contains(e.what(), "no CUDA backend")) << e.what();
  }
}

TEST(Backend, AutoFallsBackToCpuWithNote) {
  const CudaStatus s = cuda_status();
  std::string note;
  const BackendKind k = resolve_backend("auto", &note);
  if (s.available) {
    EXPECT_EQ(k, BackendKind::kCuda);
    EXPECT_TRUE(contains(note, s.device)) << note;
  } else {
    EXPECT_EQ(k, BackendKind::kCpu);
    EXPECT_TRUE(contains(note, "falling back to cpu")) << note;
    EXPECT_TRUE(contains(note, s.reason)) << note;
  }
  EXPECT_NO_THROW(resolve_backend("auto", nullptr));
}

// run_batch on the CUDA backend without one fails with a clear error, never a crash
TEST(Backend, RunBatchOnMissingCudaThrows) {
  if (cuda_status().available) GTEST_SKIP() << "a CUDA device is present";
  Projectile m;
  RolloutShape sh;
  sh.steps = 5;
  Batch<double> batch;
  batch.resize(2, m.nx(), m.nu(), m.np(), sh.steps);
  batch.theta[Projectile::kMass] = batch.theta[m.np() + Projectile::kMass] = 1.0;
  BatchResult<double> out;
  try {
    run_batch(BackendKind::kCuda, m, Loss{}, sh, batch, true, out);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "backend cuda: ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "no CUDA")) << e.what();
  }
}

}  // namespace
}  // namespace steer
