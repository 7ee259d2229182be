// An articulated model stepped n times from x with one control vector u held: the state after
// (float64; the cross-check tests' forward runs beside MuJoCo's mj_step), and the same run with
// the model's adjoint of one final state component (the closed-form tests' gradients).
#pragma once

#include <algorithm>
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

// x_0 … x_T (xs, nx each) of `steps` steps from x0 with u held, and the gradients of x_T[index]
// in x_0, in u (summed over the steps: the held control's) and in θ, by adj_step step by step
struct HeldRun {
  std::vector<double> xs, grad_x0, grad_u, grad_p;
};
template <class Model>
HeldRun held_run(const Model& m, const std::vector<double>& x0, const std::vector<double>& u,
                 const std::vector<double>& p, int steps, int index) {
  const int nx = m.nx();
  HeldRun r;
  r.xs.assign(size_t((steps + 1) * nx), 0.0);
  std::copy(x0.begin(), x0.end(), r.xs.begin());
  for (int k = 0; k < steps; ++k) {
    auto XN = view(r.xs.data() + (k + 1) * nx);
    m.template step<double>(k, view(r.xs.data() + k * nx), view(u.data()), view(p.data()), XN);
  }
  std::vector<double> lam(size_t(nx), 0.0);
  lam[size_t(index)] = 1;
  r.grad_u.assign(u.size(), 0.0);
  r.grad_p.assign(p.size(), 0.0);
  for (int k = steps - 1; k >= 0; --k) {
    std::vector<double> ax(size_t(nx), 0.0), au(u.size(), 0.0);
    auto AX = view(ax.data());
    auto AU = view(au.data());
    auto AP = view(r.grad_p.data());
    m.template adj_step<double>(k, view(r.xs.data() + k * nx), view(u.data()), view(p.data()), AX,
                                AU, AP, view(lam.data()));
    for (size_t i = 0; i < au.size(); ++i) r.grad_u[i] += au[i];
    lam = ax;
  }
  r.grad_x0 = lam;
  return r;
}

}  // namespace steer::testing
