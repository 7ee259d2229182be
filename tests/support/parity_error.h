// The error measure of the CUDA parity tests (real or emulated device against the CPU): the
// largest entry-wise difference relative to the reference's largest magnitude, so that an
// array whose entries span many scales is judged against its own size, not entry by entry.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "steer/batch.h"

namespace steer {

// max_i |a_i − ref_i| / max_i |ref_i|  (a and ref of the same length; 0 for empty arrays)
inline double rel_max(const std::vector<double>& a, const std::vector<double>& ref) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    d = std::max(d, std::fabs(a[i] - ref[i])), s = std::max(s, std::fabs(ref[i]));
  return d / std::max(s, 1e-300);
}

// The device's loss and gradients against the CPU's float64 ones: within `tol` (relative, as
// rel_max) in float64; in float32 within tol plus twice the CPU's own float32 error on the same
// batch (`cpu32`, unused in float64), since float32 rounding differs between the two paths.
// Prints each figure with its bound.
template <class S>
void expect_device_parity(const BatchResult<S>& device, const BatchResult<S>& cpu32,
                          const BatchResult<double>& cpu, double tol) {
  const bool f32 = std::is_same<S, float>::value;
  auto as64 = [](const std::vector<S>& v) { return std::vector<double>(v.begin(), v.end()); };
  auto check = [&](const std::vector<S>& g, const std::vector<S>& c32,
                   const std::vector<double>& ref, const char* what) {
    const double bound = f32 ? tol + 2.0 * rel_max(as64(c32), ref) : tol;
    const double err = rel_max(as64(g), ref);
    std::printf("[ figures ] %s %s: device vs CPU float64, max relative %.3g (bound %.3g)\n",
                f32 ? "float32" : "float64", what, err, bound);
    EXPECT_LE(err, bound) << what;
  };
  check(device.loss, cpu32.loss, cpu.loss, "loss");
  check(device.grad_u, cpu32.grad_u, cpu.grad_u, "dL/du");
  check(device.grad_x0, cpu32.grad_x0, cpu.grad_x0, "dL/dx0");
  check(device.grad_theta, cpu32.grad_theta, cpu.grad_theta, "dL/dtheta");
}

}  // namespace steer
