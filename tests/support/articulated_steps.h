// An articulated model stepped n times from x with one control vector u held: the state after
// (float64; the cross-check tests' forward runs beside MuJoCo's mj_step).
#pragma once

#include <vector>

#include "steer/models/articulated.h"

namespace steer::testing {

template <class Model>
std::vector<double> stepped(const Model& m, std::vector<double> x, const std::vector<double>& u,
                            const std::vector<double>& p, int steps) {
  std::vector<double> xn(x.size());
  for (int k = 0; k < steps; ++k) {
    auto XN = view(xn.data());
    m.template step<double>(k, view(x.data()), view(u.data()), view(p.data()), XN);
    x.swap(xn);
  }
  return x;
}

}  // namespace steer::testing
