// Articulated: the Cholesky factorization A = L Lᵀ of the step's symmetric positive definite
// system (row-major, stride kMaxDof) and the solve A y = b by forward and back substitution,
//   L z = b,  Lᵀ y = z.
// The adjoint of the solve is another solve with the same factor (A is symmetric: A λ = ȳ),
// so it needs no code of its own.
#pragma once

#include "steer/models/articulated/model.h"

namespace steer {

// in-place Cholesky solve of A y = b (A symmetric positive definite, n×n, stride kMaxDof)
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::cholesky_solve(int n, S* A, S* y) {
  cholesky_factor(n, A);
  cholesky_substitute(n, A, y);
}

// A = L Lᵀ, L into the lower triangle and diagonal of A; the strict upper triangle is kept.
// g++ 12, inlining this into rk4's adjoint on the operation-counting scalar (op_count.h),
// reports that an iteration of the inner loop past kMaxDof would read outside A (it cannot:
// k < j < n ≤ kMaxDof), and -Werror makes that report fatal; the pragma silences it here only.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::cholesky_factor(int n, S* A) {
  using std::sqrt;
  for (int j = 0; j < n; ++j) {
    S s = A[j * kMaxDof + j];
    for (int k = 0; k < j; ++k) s -= A[j * kMaxDof + k] * A[j * kMaxDof + k];
    // M + hD is positive definite for physical inertias; a non-positive pivot means an
    // unphysical θ (negative mass or inertia) and yields NaN, which the validator labels
    A[j * kMaxDof + j] = sqrt(s);
    for (int i = j + 1; i < n; ++i) {
      S t = A[i * kMaxDof + j];
      for (int k = 0; k < j; ++k) t -= A[i * kMaxDof + k] * A[j * kMaxDof + k];
      A[i * kMaxDof + j] = t / A[j * kMaxDof + j];
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic pop
#endif

// y <- (L Lᵀ)⁻¹ y with L from cholesky_factor
template <int NB, int ND, int NS, int NP, int NC>
template <class S>
inline STEER_HD void ArticulatedCap<NB, ND, NS, NP, NC>::cholesky_substitute(int n, const S* L,
                                                                             S* y) {
  for (int i = 0; i < n; ++i) {
    S t = y[i];
    for (int k = 0; k < i; ++k) t -= L[i * kMaxDof + k] * y[k];
    y[i] = t / L[i * kMaxDof + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    S t = y[i];
    for (int k = i + 1; k < n; ++k) t -= L[k * kMaxDof + i] * y[k];
    y[i] = t / L[i * kMaxDof + i];
  }
}

}  // namespace steer
