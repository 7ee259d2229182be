// The error measure of the CUDA parity tests (real or emulated device against the CPU): the
// largest entry-wise difference relative to the reference's largest magnitude, so that an
// array whose entries span many scales is judged against its own size, not entry by entry.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace steer {

// max_i |a_i − ref_i| / max_i |ref_i|  (a and ref of the same length; 0 for empty arrays)
inline double rel_max(const std::vector<double>& a, const std::vector<double>& ref) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - ref[i])), s = std::max(s, std::fabs(ref[i]));
  return d / std::max(s, 1e-300);
}

}  // namespace steer
