// The FEM model's materials (fem/model.h): hyperelastic energy densities Ψ(F) [J/m³] of the
// deformation gradient F, their first Piola–Kirchhoff stress P = ∂Ψ/∂F [Pa], its differential
// dP[G] = ∂²Ψ/∂F² [G], and the viscous stresses. Each adjoint accumulates (+=).
//
// Both laws offered are the stable neo-Hookean energy of Smith, de Goes and Kim (2018, "Stable
// Neo-Hookean Flesh Simulation", eq. 18 with its rest-stability constant):
//   Ψ = μ/2 (I_C − 3) − μ/2 log((I_C + 1)/4) + λ/2 (J − α)² − λ/2 (1 − α)²,
//   I_C = F : F,  J = det F,  α = 1 + 3μ/(4λ)   (Ψ(I) = 0 and P(I) = 0)
//   P  = μ s F + λ (J − α) C = μ (s F − ¾ C) + λ (J − 1) C,   s = 1 − 1/(I_C + 1),  C = ∂J/∂F
//   dP[G] = μ s G + 2μ (F:G)/(I_C + 1)² F + λ (C:G) C + (λ (J − 1) − ¾ μ) dC[G]
// P is linear in (μ, λ): ∂P/∂μ = s F − ¾ C, ∂P/∂λ = (J − 1) C. The energy is defined for
// inverted elements (J ≤ 0) and pushes them back; the log term keeps I_C + 1 > 0.
// The two laws differ in the constants (μ, λ) and the damping:
//   stable_neo_hookean   (μ, λ) from the element's linear-elastic Lamé parameters (μ_l, λ_l)
//                        (from Young's modulus E and Poisson's ratio ν: μ_l = E / (2(1 + ν)),
//                        λ_l = E ν / ((1 + ν)(1 − 2ν))) by the paper's eq. 20 remapping,
//                        μ = 4/3 μ_l, λ = λ_l + 5/6 μ_l, so that small strains give linear
//                        elasticity: P(I + H) = μ_l (H + Hᵀ) + λ_l tr(H) I + O(|H|²).
//                        Damping (stiffness-proportional Rayleigh, rotation invariant): the
//                        Kelvin–Voigt stress P_d = β F S_d, S_d = 2 μ_l Ė + λ_l tr(Ė) I,
//                        Ė = sym(Fᵀ Ḟ) (the Green strain rate); β [s].
//   neo_hookean_warp     warp.sim's tetrahedral law (warp/sim/integrator_euler.py,
//                        eval_tetrahedra) as it is written: (μ, λ) = the element's (k_mu,
//                        k_lambda) used directly, no remapping, and its damping
//                        P_d = k_d (Ḟ + (C : Ḟ) C) with k_d [Pa·s].
// A third law, corotated linear elasticity (fem/corotated.h), takes (μ, λ) = (μ_l, λ_l) and the
// Kelvin–Voigt damping; elastic_stress and its companions below dispatch on the law.
#pragma once

#include <cmath>

#include "steer/models/fem/corotated.h"
#include "steer/models/fem/tensor3.h"

namespace steer {

// the element laws (Fem::Law takes the same values)
enum FemLawKind { kFemStableNeoHookean = 0, kFemNeoHookeanWarp = 1, kFemCorotated = 2 };

// one element's material constants, resolved from its θ slots (Fem::element_material)
template <class S>
struct FemMaterial {
  S mu, lambda;      // the energy's μ, λ [Pa]
  S mu_l, lambda_l;  // the linear-elastic Lamé parameters [Pa] (the Kelvin–Voigt damping's)
  S damping;         // β [s] (stable_neo_hookean) or k_d [Pa·s] (neo_hookean_warp)
};

// the invariants of F that P and dP share
template <class S>
struct StressPoint {
  Mat3<S> C;   // cofactor of F
  S ic, j, s;  // I_C, J, s = 1 − 1/(I_C + 1)
  Mat3<S> R;   // the polar rotation (corotated law only)
  S trS;       // tr(Rᵀ F) (corotated law only)
};
template <class S>
STEER_HD StressPoint<S> stress_point(const Mat3<S>& F, int law = kFemStableNeoHookean) {
  StressPoint<S> q;
  q.C = mat3_cofactor(F);
  q.ic = mat3_ddot(F, F);
  q.j = mat3_det(F);
  q.s = S(1) - S(1) / (q.ic + S(1));
  if (law == kFemCorotated) {
    q.R = polar_rotation(F);
    q.trS = mat3_ddot(q.R, F);
  }
  return q;
}

// P = μ (s F − ¾ C) + λ (J − 1) C
template <class S>
STEER_HD Mat3<S> snh_stress(const Mat3<S>& F, const StressPoint<S>& q, const S& mu,
                            const S& lambda) {
  Mat3<S> P;
  const S c = lambda * (q.j - S(1)) - S(0.75) * mu;
  const S a = mu * q.s;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) P.a[r][k] = a * F.a[r][k] + c * q.C.a[r][k];
  return P;
}

// dP[G] = μ s G + 2μ (F:G)/(I_C + 1)² F + λ (C:G) C + (λ (J − 1) − ¾ μ) dC[G]; symmetric in the
// sense A : dP[G] = G : dP[A] (a Hessian), so it is also the vector-Jacobian product of P in F
template <class S>
STEER_HD Mat3<S> snh_stress_differential(const Mat3<S>& F, const StressPoint<S>& q, const S& mu,
                                         const S& lambda, const Mat3<S>& G) {
  Mat3<S> D = mat3_cofactor_differential(F, G);
  const S c = lambda * (q.j - S(1)) - S(0.75) * mu;
  const S i1 = q.ic + S(1);
  const S fg = S(2) * mu * mat3_ddot(F, G) / (i1 * i1);
  const S cg = lambda * mat3_ddot(q.C, G);
  const S a = mu * q.s;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      D.a[r][k] = a * G.a[r][k] + fg * F.a[r][k] + cg * q.C.a[r][k] + c * D.a[r][k];
  return D;
}

// Ψ(F) [J/m³] as stated above, 0 at F = I
template <class S>
STEER_HD S snh_energy_density(const StressPoint<S>& q, const S& mu, const S& lambda) {
  using std::log;
  const S alpha = S(1) + S(0.75) * mu / lambda;
  const S dj = q.j - alpha, d1 = S(1) - alpha;
  return S(0.5) * mu * (q.ic - S(3)) - S(0.5) * mu * log((q.ic + S(1)) / S(4)) +
         S(0.5) * lambda * (dj * dj - d1 * d1);
}

// the viscous stress P_d of the law (see the header) at F, Ḟ
template <class S>
STEER_HD Mat3<S> viscous_stress(bool warp_law, const Mat3<S>& F, const StressPoint<S>& q,
                                const Mat3<S>& Fdot, const FemMaterial<S>& m) {
  if (warp_law) {
    Mat3<S> P = Fdot;
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) P.a[r][k] *= m.damping;
    mat3_axpy(P, m.damping * mat3_ddot(q.C, Fdot), q.C);
    return P;
  }
  const Mat3<S> E = mat3_sym(mat3_mul_at(F, Fdot));
  Mat3<S> Sd = E;
  const S tr = m.lambda_l * mat3_trace(E);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) Sd.a[r][k] = S(2) * m.mu_l * E.a[r][k] + (r == k ? tr : S(0));
  Mat3<S> P = mat3_mul(F, Sd);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) P.a[r][k] *= m.damping;
  return P;
}

// the cotangents of viscous_stress for P̄: F̄, Ḟ̄, and the material's (μ̄_l, λ̄_l, dampinḡ)
template <class S>
STEER_HD void adj_viscous_stress(bool warp_law, const Mat3<S>& F, const StressPoint<S>& q,
                                 const Mat3<S>& Fdot, const FemMaterial<S>& m, const Mat3<S>& Pbar,
                                 Mat3<S>& Fbar, Mat3<S>& Fdotbar, FemMaterial<S>& mbar) {
  if (warp_law) {
    // P_d = k (Ḟ + (C:Ḟ) C): Ḟ̄ = k (P̄ + (C:P̄) C); through C (dC self-adjoint):
    // F̄ = k ((C:P̄) dC[Ḟ] + (C:Ḟ) dC[P̄]); k̄ = P̄ : (Ḟ + (C:Ḟ) C)
    const S cp = mat3_ddot(q.C, Pbar), cf = mat3_ddot(q.C, Fdot);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) Fdotbar.a[r][k] += m.damping * (Pbar.a[r][k] + cp * q.C.a[r][k]);
    mat3_axpy(Fbar, m.damping * cp, mat3_cofactor_differential(F, Fdot));
    mat3_axpy(Fbar, m.damping * cf, mat3_cofactor_differential(F, Pbar));
    mbar.damping += mat3_ddot(Pbar, Fdot) + cf * cp;
    return;
  }
  // P_d = β F S_d, S_d = 2 μ_l Ė + λ_l tr(Ė) I, Ė = sym(Fᵀ Ḟ)
  const Mat3<S> E = mat3_sym(mat3_mul_at(F, Fdot));
  const S trE = mat3_trace(E);
  Mat3<S> Sd;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      Sd.a[r][k] = S(2) * m.mu_l * E.a[r][k] + (r == k ? m.lambda_l * trE : S(0));
  // F̄ += β P̄ S_dᵀ; β̄ = P̄ : F S_d; S̄_d = β Fᵀ P̄
  const Mat3<S> PS = mat3_mul_bt(Pbar, Sd);
  mat3_axpy(Fbar, m.damping, PS);
  mbar.damping += mat3_ddot(PS, F);
  Mat3<S> Sbar = mat3_mul_at(F, Pbar);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) Sbar.a[r][k] *= m.damping;
  mbar.mu_l += S(2) * mat3_ddot(Sbar, E);
  const S trS = mat3_trace(Sbar);
  mbar.lambda_l += trS * trE;
  // Ē = sym(2 μ_l S̄ + λ_l tr(S̄) I); Ė = sym(Fᵀ Ḟ): F̄ += Ḟ Ē, Ḟ̄ += F Ē
  Mat3<S> Ebar = mat3_sym(Sbar);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      Ebar.a[r][k] = S(2) * m.mu_l * Ebar.a[r][k] + (r == k ? m.lambda_l * trS : S(0));
  const Mat3<S> a = mat3_mul(Fdot, Ebar), b = mat3_mul(F, Ebar);
  mat3_axpy(Fbar, S(1), a);
  mat3_axpy(Fdotbar, S(1), b);
}

// ---- the law's elastic part, dispatched ----
template <class S>
STEER_HD Mat3<S> elastic_stress(int law, const Mat3<S>& F, const StressPoint<S>& q, const S& mu,
                                const S& lambda) {
  return law == kFemCorotated ? corotated_stress(F, q.R, q.trS, mu, lambda)
                              : snh_stress(F, q, mu, lambda);
}
// dP[G], symmetric (the energy's Hessian): also P's vector-Jacobian product in F
template <class S>
STEER_HD Mat3<S> elastic_stress_differential(int law, const Mat3<S>& F, const StressPoint<S>& q,
                                             const S& mu, const S& lambda, const Mat3<S>& G) {
  return law == kFemCorotated ? corotated_stress_differential(F, q.R, q.trS, mu, lambda, G)
                              : snh_stress_differential(F, q, mu, lambda, G);
}
template <class S>
STEER_HD S elastic_energy_density(int law, const Mat3<S>& F, const StressPoint<S>& q, const S& mu,
                                  const S& lambda) {
  return law == kFemCorotated ? corotated_energy_density(F, q.R, q.trS, mu, lambda)
                              : snh_energy_density(q, mu, lambda);
}
// P is linear in (μ, λ): μ̄ += P̄ : ∂P/∂μ, λ̄ += P̄ : ∂P/∂λ
//   stable neo-Hookean: ∂P/∂μ = s F − ¾ C, ∂P/∂λ = (J − 1) C
//   corotated:          ∂P/∂μ = 2 (F − R), ∂P/∂λ = (tr S − 3) R
template <class S>
STEER_HD void adj_elastic_constants(int law, const Mat3<S>& F, const StressPoint<S>& q,
                                    const Mat3<S>& Pbar, S& mu_bar, S& lambda_bar) {
  if (law == kFemCorotated) {
    mu_bar += S(2) * (mat3_ddot(Pbar, F) - mat3_ddot(Pbar, q.R));
    lambda_bar += (q.trS - S(3)) * mat3_ddot(Pbar, q.R);
    return;
  }
  mu_bar += q.s * mat3_ddot(Pbar, F) - S(0.75) * mat3_ddot(Pbar, q.C);
  lambda_bar += (q.j - S(1)) * mat3_ddot(Pbar, q.C);
}

}  // namespace steer
