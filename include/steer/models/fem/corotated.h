// Corotated linear elasticity for the FEM model (fem/material.h dispatches to it; McAdams et al.
// 2011, "Efficient elasticity for character skinning with contact and collisions"):
//   F = R S (the polar decomposition: R orthogonal, S symmetric),
//   Ψ = μ ‖F − R‖² + λ/2 (tr S − 3)²,   P = 2μ (F − R) + λ (tr S − 3) R
//   dP[G] = 2μ G + λ (R : G) R + (λ (tr S − 3) − 2μ) dR[G]
//   dR[G] = R [ω]×,  (tr(S) I − S) ω = axial(Rᵀ G − Gᵀ R)     (from Rᵀ dF = W S + dS, W skew)
// dR is the Hessian of tr S (∂ tr S/∂F = R), so dP is symmetric and is its own transpose.
// Small strains give linear elasticity with (μ, λ) as they are: P(I + H) = μ (H + Hᵀ) + λ tr(H) I
// + O(|H|²). R is the orthogonal polar factor, found by Higham's scaled Newton iteration
// R ← ½ (ζ R + R⁻ᵀ / ζ), ζ = |det R|^(−1/3), a fixed number of times: for an inverted element
// (det F < 0) it is a reflection, and the energy does not push the element back (the
// inverted_element label marks such rollouts; the stable neo-Hookean laws do push back).
#pragma once

#include <cmath>

#include "steer/models/fem/tensor3.h"

namespace steer {

constexpr int kPolarIterations = 12;

// the orthogonal factor R of F = R S
template <class S>
STEER_HD Mat3<S> polar_rotation(const Mat3<S>& F) {
  using std::abs;
  using std::pow;
  Mat3<S> R = F;
  for (int it = 0; it < kPolarIterations; ++it) {
    const Mat3<S> C = mat3_cofactor(R);  // R⁻ᵀ = C / det R
    const S d = mat3_det(R);
    const S z = S(pow(abs(d), -1.0 / 3.0));
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) R.a[r][c] = S(0.5) * (z * R.a[r][c] + C.a[r][c] / (z * d));
  }
  return R;
}

// dR[G] = R [ω]×, (tr(S) I − S) ω = axial(Rᵀ G − Gᵀ R), S = Rᵀ F
template <class S>
STEER_HD Mat3<S> polar_rotation_differential(const Mat3<S>& R, const Mat3<S>& Sm, const S& trS,
                                             const Mat3<S>& G) {
  const Mat3<S> A = mat3_mul_at(R, G);  // Rᵀ G
  // axial of M = A − Aᵀ: (M₂₁, M₀₂, M₁₀)
  const S a[3] = {A.a[2][1] - A.a[1][2], A.a[0][2] - A.a[2][0], A.a[1][0] - A.a[0][1]};
  Mat3<S> K;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) K.a[r][c] = (r == c ? trS : S(0)) - Sm.a[r][c];
  // ω = K⁻¹ a = cof(K)ᵀ a / det K
  const Mat3<S> CK = mat3_cofactor(K);
  const S dk = mat3_det(K);
  S w[3];
  for (int r = 0; r < 3; ++r)
    w[r] = (CK.a[0][r] * a[0] + CK.a[1][r] * a[1] + CK.a[2][r] * a[2]) / dk;
  Mat3<S> Wx;  // [ω]×
  Wx.a[0][0] = Wx.a[1][1] = Wx.a[2][2] = S(0);
  Wx.a[0][1] = -w[2];
  Wx.a[0][2] = w[1];
  Wx.a[1][0] = w[2];
  Wx.a[1][2] = -w[0];
  Wx.a[2][0] = -w[1];
  Wx.a[2][1] = w[0];
  return mat3_mul(R, Wx);
}

// P = 2μ (F − R) + λ (tr S − 3) R
template <class S>
STEER_HD Mat3<S> corotated_stress(const Mat3<S>& F, const Mat3<S>& R, const S& trS, const S& mu,
                                  const S& lambda) {
  Mat3<S> P;
  const S c = lambda * (trS - S(3));
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) P.a[r][k] = S(2) * mu * (F.a[r][k] - R.a[r][k]) + c * R.a[r][k];
  return P;
}

// dP[G] = 2μ G + λ (R : G) R + (λ (tr S − 3) − 2μ) dR[G]
template <class S>
STEER_HD Mat3<S> corotated_stress_differential(const Mat3<S>& F, const Mat3<S>& R, const S& trS,
                                               const S& mu, const S& lambda, const Mat3<S>& G) {
  const Mat3<S> Sm = mat3_mul_at(R, F);
  Mat3<S> D = polar_rotation_differential(R, Sm, trS, G);
  const S c = lambda * (trS - S(3)) - S(2) * mu, rg = lambda * mat3_ddot(R, G);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) D.a[r][k] = S(2) * mu * G.a[r][k] + rg * R.a[r][k] + c * D.a[r][k];
  return D;
}

// Ψ = μ ‖F − R‖² + λ/2 (tr S − 3)² [J/m³]
template <class S>
STEER_HD S corotated_energy_density(const Mat3<S>& F, const Mat3<S>& R, const S& trS, const S& mu,
                                    const S& lambda) {
  S d2 = S(0);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) d2 += (F.a[r][k] - R.a[r][k]) * (F.a[r][k] - R.a[r][k]);
  return mu * d2 + S(0.5) * lambda * (trS - S(3)) * (trS - S(3));
}

}  // namespace steer
