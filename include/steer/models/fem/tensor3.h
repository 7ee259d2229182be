// 3×3 matrices for the FEM element (fem/element.h): the deformation gradient F, the first
// Piola–Kirchhoff stress P and their cotangents. Row-major, a[r][c]; a column j is the vector
// (a[0][j], a[1][j], a[2][j]). Host and device, any scalar (double, float, Dual, Counted).
#pragma once

#include "steer/core.h"

namespace steer {

template <class S>
struct Mat3 {
  S a[3][3];
  STEER_HD S& operator()(int r, int c) { return a[r][c]; }
  STEER_HD const S& operator()(int r, int c) const { return a[r][c]; }
};

template <class S>
STEER_HD Mat3<S> mat3_zero() {
  Mat3<S> m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m.a[r][c] = S(0);
  return m;
}

// A B
template <class S>
STEER_HD Mat3<S> mat3_mul(const Mat3<S>& A, const Mat3<S>& B) {
  Mat3<S> m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      m.a[r][c] = A.a[r][0] * B.a[0][c] + A.a[r][1] * B.a[1][c] + A.a[r][2] * B.a[2][c];
  return m;
}
// A Bᵀ
template <class S>
STEER_HD Mat3<S> mat3_mul_bt(const Mat3<S>& A, const Mat3<S>& B) {
  Mat3<S> m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      m.a[r][c] = A.a[r][0] * B.a[c][0] + A.a[r][1] * B.a[c][1] + A.a[r][2] * B.a[c][2];
  return m;
}
// Aᵀ B
template <class S>
STEER_HD Mat3<S> mat3_mul_at(const Mat3<S>& A, const Mat3<S>& B) {
  Mat3<S> m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      m.a[r][c] = A.a[0][r] * B.a[0][c] + A.a[1][r] * B.a[1][c] + A.a[2][r] * B.a[2][c];
  return m;
}
// A : B = Σ A_rc B_rc
template <class S>
STEER_HD S mat3_ddot(const Mat3<S>& A, const Mat3<S>& B) {
  S s = S(0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) s += A.a[r][c] * B.a[r][c];
  return s;
}
// A += s B
template <class S>
STEER_HD void mat3_axpy(Mat3<S>& A, const S& s, const Mat3<S>& B) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) A.a[r][c] += s * B.a[r][c];
}
template <class S>
STEER_HD S mat3_trace(const Mat3<S>& A) {
  return A.a[0][0] + A.a[1][1] + A.a[2][2];
}
// ½ (A + Aᵀ)
template <class S>
STEER_HD Mat3<S> mat3_sym(const Mat3<S>& A) {
  Mat3<S> m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m.a[r][c] = S(0.5) * (A.a[r][c] + A.a[c][r]);
  return m;
}
// det F = f₀ · (f₁ × f₂) (f_j: the columns)
template <class S>
STEER_HD S mat3_det(const Mat3<S>& F) {
  return F.a[0][0] * (F.a[1][1] * F.a[2][2] - F.a[2][1] * F.a[1][2]) -
         F.a[0][1] * (F.a[1][0] * F.a[2][2] - F.a[2][0] * F.a[1][2]) +
         F.a[0][2] * (F.a[1][0] * F.a[2][1] - F.a[2][0] * F.a[1][1]);
}

// the columns j, k of A, B crossed: column i of out += a_j × b_k
template <class S>
STEER_HD void mat3_add_column_cross(Mat3<S>& out, int i, const Mat3<S>& A, int j, const Mat3<S>& B,
                                    int k) {
  out.a[0][i] += A.a[1][j] * B.a[2][k] - A.a[2][j] * B.a[1][k];
  out.a[1][i] += A.a[2][j] * B.a[0][k] - A.a[0][j] * B.a[2][k];
  out.a[2][i] += A.a[0][j] * B.a[1][k] - A.a[1][j] * B.a[0][k];
}
// the cofactor matrix C = ∂(det F)/∂F = det(F) F⁻ᵀ, by columns: c₀ = f₁ × f₂, c₁ = f₂ × f₀,
// c₂ = f₀ × f₁ (defined for a singular or inverted F too)
template <class S>
STEER_HD Mat3<S> mat3_cofactor(const Mat3<S>& F) {
  Mat3<S> C = mat3_zero<S>();
  mat3_add_column_cross(C, 0, F, 1, F, 2);
  mat3_add_column_cross(C, 1, F, 2, F, 0);
  mat3_add_column_cross(C, 2, F, 0, F, 1);
  return C;
}
// its differential dC[G] = ∂²(det F)/∂F² [G], by columns: dc₀ = g₁ × f₂ + f₁ × g₂, and cyclically.
// The map G ↦ dC[G] is the Hessian of det: self-adjoint, A : dC[G] = G : dC[A].
template <class S>
STEER_HD Mat3<S> mat3_cofactor_differential(const Mat3<S>& F, const Mat3<S>& G) {
  Mat3<S> D = mat3_zero<S>();
  mat3_add_column_cross(D, 0, G, 1, F, 2);
  mat3_add_column_cross(D, 0, F, 1, G, 2);
  mat3_add_column_cross(D, 1, G, 2, F, 0);
  mat3_add_column_cross(D, 1, F, 2, G, 0);
  mat3_add_column_cross(D, 2, G, 0, F, 1);
  mat3_add_column_cross(D, 2, F, 0, G, 1);
  return D;
}

}  // namespace steer
