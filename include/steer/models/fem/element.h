// One linear tetrahedron of the FEM model (fem/model.h): its nodal forces from the positions
// and velocities of its four vertices, their vector-Jacobian product, and the elastic forces'
// differential (the stiffness matrix applied to a displacement).
//
// With the rest shape matrix D_m = [X₁ − X₀, X₂ − X₀, X₃ − X₀] (columns) and B = D_m⁻¹, V = |det
// D_m| / 6 the rest volume:
//   F = D_s B,  Ḟ = Ḋ_s B,  D_s = [x₁ − x₀, x₂ − x₀, x₃ − x₀],  Ḋ_s the same of the velocities
//   P_tot = P(F) + P_d(F, Ḟ)                         (fem/material.h)
//   f_j = −V (P_tot Bᵀ) e_j  (j = 1, 2, 3),  f₀ = −(f₁ + f₂ + f₃)
// which is f = −∂(V Ψ)/∂x for the elastic part: the element's potential gradient.
#pragma once

#include "steer/models/fem/material.h"

namespace steer {

// an element's vertex data gathered: positions x[4][3], velocities v[4][3]
template <class S>
struct TetNodes {
  S x[4][3], v[4][3];
};

// D (a 4×3 nodal field) ↦ [d₁ − d₀, d₂ − d₀, d₃ − d₀] B
template <class S>
STEER_HD Mat3<S> tet_gradient(const S (&d)[4][3], const Mat3<S>& B) {
  Mat3<S> Ds;
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) Ds.a[r][j] = d[j + 1][r] - d[0][r];
  return mat3_mul(Ds, B);
}
// the transpose of tet_gradient: Ḡ (the cotangent of F) accumulated into the nodal d̄ [4][3]
template <class S>
STEER_HD void adj_tet_gradient(const Mat3<S>& Gbar, const Mat3<S>& B, S (&dbar)[4][3]) {
  const Mat3<S> Dbar = mat3_mul_bt(Gbar, B);  // D̄_s = Ḡ Bᵀ
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) {
      dbar[j + 1][r] += Dbar.a[r][j];
      dbar[0][r] -= Dbar.a[r][j];
    }
}
// nodal forces of a stress: f_j = −V (P Bᵀ) e_j, f₀ = −Σ f_j, accumulated into f[4][3]
template <class S>
STEER_HD void tet_stress_forces(const Mat3<S>& P, const Mat3<S>& B, const S& V, S (&f)[4][3]) {
  const Mat3<S> H = mat3_mul_bt(P, B);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) {
      f[j + 1][r] -= V * H.a[r][j];
      f[0][r] += V * H.a[r][j];
    }
}
// the cotangent of P from the nodal forces' f̄ [4][3]: P̄ = −V Ḡ B with Ḡ e_j = f̄_j − f̄₀
template <class S>
STEER_HD Mat3<S> adj_tet_stress_forces(const S (&fbar)[4][3], const Mat3<S>& B, const S& V) {
  Mat3<S> G;
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) G.a[r][j] = -V * (fbar[j + 1][r] - fbar[0][r]);
  return mat3_mul(G, B);
}

// elastic and viscous nodal forces of one element, accumulated into f[4][3] [N]
template <class S>
STEER_HD void tet_forces(bool warp_law, const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                         const FemMaterial<S>& m, S (&f)[4][3]) {
  const Mat3<S> F = tet_gradient(n.x, B);
  const StressPoint<S> q = stress_point(F);
  Mat3<S> P = snh_stress(F, q, m.mu, m.lambda);
  // always evaluated: at zero damping the term still carries ∂f/∂damping
  mat3_axpy(P, S(1), viscous_stress(warp_law, F, q, tet_gradient(n.v, B), m));
  tet_stress_forces(P, B, V, f);
}

// the vector-Jacobian product of tet_forces for the forces' cotangent f̄ [4][3]: x̄, v̄ [4][3]
// and the material's cotangents (μ̄, λ̄ of the energy, μ̄_l, λ̄_l, dampinḡ), accumulated
template <class S>
STEER_HD void adj_tet_forces(bool warp_law, const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                             const FemMaterial<S>& m, const S (&fbar)[4][3], S (&xbar)[4][3],
                             S (&vbar)[4][3], FemMaterial<S>& mbar) {
  const Mat3<S> F = tet_gradient(n.x, B);
  const StressPoint<S> q = stress_point(F);
  const Mat3<S> Pbar = adj_tet_stress_forces(fbar, B, V);
  // elastic: F̄ = dP[P̄] (dP is a Hessian), μ̄ = P̄ : (s F − ¾ C), λ̄ = P̄ : (J − 1) C
  Mat3<S> Fbar = snh_stress_differential(F, q, m.mu, m.lambda, Pbar);
  mbar.mu += q.s * mat3_ddot(Pbar, F) - S(0.75) * mat3_ddot(Pbar, q.C);
  mbar.lambda += (q.j - S(1)) * mat3_ddot(Pbar, q.C);
  Mat3<S> Fdotbar = mat3_zero<S>();
  adj_viscous_stress(warp_law, F, q, tet_gradient(n.v, B), m, Pbar, Fbar, Fdotbar, mbar);
  adj_tet_gradient(Fdotbar, B, vbar);
  adj_tet_gradient(Fbar, B, xbar);
}

// the elastic forces' differential: df = −K dx for a nodal displacement dx [4][3] (K the
// element's stiffness ∂²(VΨ)/∂x², symmetric), accumulated into df [4][3]
template <class S>
STEER_HD void tet_force_differential(const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                                     const FemMaterial<S>& m, const S (&dx)[4][3], S (&df)[4][3]) {
  const Mat3<S> F = tet_gradient(n.x, B);
  const StressPoint<S> q = stress_point(F);
  tet_stress_forces(snh_stress_differential(F, q, m.mu, m.lambda, tet_gradient(dx, B)), B, V, df);
}

// the element's stored energy V Ψ(F) [J]
template <class S>
STEER_HD S tet_energy(const TetNodes<S>& n, const Mat3<S>& B, const S& V, const FemMaterial<S>& m) {
  const StressPoint<S> q = stress_point(tet_gradient(n.x, B));
  return V * snh_energy_density(q, m.mu, m.lambda);
}

}  // namespace steer
