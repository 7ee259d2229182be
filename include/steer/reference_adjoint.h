// The reference adjoint: the vector-Jacobian product of any model's step computed by
// running its templated `step` on forward-mode dual numbers, N input directions at a
// time. Exact to rounding and generic; slower than a hand adjoint by about
// (nx + nu + np)/N step evaluations. Every hand adjoint is tested against it.
//
// Models with small fixed maxima (Model::kMaxState > 0) use stack arrays and run in device
// code too; models sized at run time (kMaxState == 0, e.g. mass_spring) use host memory,
// so their reference adjoint is host-only.
#pragma once

#include <vector>

#include "steer/core.h"
#include "steer/dual.h"

namespace steer {

namespace detail {

// seeds inputs c0 .. c0+N−1 (ordered x, u, then θ: every slot, or only the n_pcols slots
// listed in pcols) and evaluates one step on duals.
// Not inlined on the device (STEER_NOINLINE; g++ is unaffected). Both checkpoint schedules'
// loops reach this step, and inlined it would be compiled once per call site, which dominates
// nvcc's time on the articulated reference and rk4 kernels. The price is a somewhat larger rk4
// backward frame; the reference kernel's frame barely changes
// (bench/log/2026-12-05-01-kernel-figures-from-comments.md).
template <class Model, class S, int N, class XIn, class UIn, class PIn, class DX, class DU,
          class DP, class DY>
STEER_HD STEER_NOINLINE void dual_step_chunk(const Model& m, int k, const XIn& x, const UIn& u,
                                             const PIn& p, int c0, DX& xd, DU& ud, DP& pd, DY& yd,
                                             const short* pcols = nullptr, int n_pcols = 0) {
  using D = Dual<S, N>;
  const int nx = m.nx(), nu = m.nu(), np = m.np();
  for (int i = 0; i < nx; ++i) xd[i] = D::variable(S(x[i]), i - c0);
  for (int j = 0; j < nu; ++j) ud[j] = D::variable(S(u[j]), nx + j - c0);
  if (!pcols) {
    for (int q = 0; q < np; ++q) pd[q] = D::variable(S(p[q]), nx + nu + q - c0);
  } else {
    for (int q = 0; q < np; ++q) pd[q] = D(S(p[q]));
    for (int c = 0; c < N; ++c) {
      const int g = c0 + c - nx - nu;
      if (g >= 0 && g < n_pcols) pd[pcols[g]].v[c] = S(1);
    }
  }
  m.template step<D>(k, xd, ud, pd, yd);
}

// calls body(xd, ud, pd, yd) with dual arrays sized for the model
template <class Model, class S, int N, class Body>
STEER_HD void with_dual_arrays(const Model& m, Body&& body) {
  using D = Dual<S, N>;
  if constexpr (Model::kMaxState > 0) {
    (void)m;
    D xd[Model::kMaxState], ud[Model::kMaxControl > 0 ? Model::kMaxControl : 1],
        pd[Model::kMaxParam], yd[Model::kMaxState];
    body(xd, ud, pd, yd);
  } else {
#if defined(__CUDA_ARCH__)
    __trap();  // run-time-sized models have a host-only reference adjoint
#else
    std::vector<D> xd(m.nx()), ud(m.nu() > 0 ? m.nu() : 1), pd(m.np()), yd(m.nx());
    body(xd, ud, pd, yd);
#endif
  }
}

}  // namespace detail

// accumulates adj_x += (∂f/∂x)ᵀ adj_xn, adj_u += (∂f/∂u)ᵀ adj_xn, adj_p += (∂f/∂θ)ᵀ adj_xn;
// with pcols, adj_p only for the n_pcols θ slots listed there (the rest cost no dual column)
template <class Model, class S, int N = 8, class XIn, class UIn, class PIn, class XAdj, class UAdj,
          class PAdj, class XnAdj>
STEER_HD void dual_adj_step(const Model& m, int k, const XIn& x, const UIn& u, const PIn& p,
                            XAdj& adj_x, UAdj& adj_u, PAdj& adj_p, const XnAdj& adj_xn,
                            const short* pcols = nullptr, int n_pcols = 0) {
  const int nx = m.nx(), nu = m.nu(), n = m.nx() + m.nu() + (pcols ? n_pcols : m.np());
  detail::with_dual_arrays<Model, S, N>(m, [&](auto& xd, auto& ud, auto& pd, auto& yd) {
    for (int c0 = 0; c0 < n; c0 += N) {
      detail::dual_step_chunk<Model, S, N>(m, k, x, u, p, c0, xd, ud, pd, yd, pcols, n_pcols);
      for (int c = 0; c < N && c0 + c < n; ++c) {
        // column c of the Jacobian, contracted with adj_xn
        S acc = S(0);
        for (int i = 0; i < nx; ++i) acc += yd[i].v[c] * S(adj_xn[i]);
        const int in = c0 + c;
        if (in < nx)
          adj_x[in] += acc;
        else if (in < nx + nu)
          adj_u[in - nx] += acc;
        else
          adj_p[pcols ? pcols[in - nx - nu] : in - nx - nu] += acc;
      }
    }
  });
}

// full Jacobian ∂f/∂(x, u, θ) as a dense row-major nx × (nx+nu+np) array J
template <class Model, class S, int N = 8, class XIn, class UIn, class PIn>
STEER_HD void dual_jacobian(const Model& m, int k, const XIn& x, const UIn& u, const PIn& p, S* J) {
  const int nx = m.nx(), n = m.nx() + m.nu() + m.np();
  detail::with_dual_arrays<Model, S, N>(m, [&](auto& xd, auto& ud, auto& pd, auto& yd) {
    for (int c0 = 0; c0 < n; c0 += N) {
      detail::dual_step_chunk<Model, S, N>(m, k, x, u, p, c0, xd, ud, pd, yd);
      for (int c = 0; c < N && c0 + c < n; ++c)
        for (int i = 0; i < nx; ++i) J[i * n + c0 + c] = yd[i].v[c];
    }
  });
}

}  // namespace steer
