// One linear tetrahedron of the FEM model (fem/model.h): its nodal forces from the positions
// and velocities of its four vertices and its active stress, their vector-Jacobian product, and
// the elastic forces' differential (the stiffness matrix applied to a displacement).
//
// With the rest shape matrix D_m = [X₁ − X₀, X₂ − X₀, X₃ − X₀] (columns) and B = D_m⁻¹, V = |det
// D_m| / 6 the rest volume:
//   F = D_s B,  Ḟ = Ḋ_s B,  D_s = [x₁ − x₀, x₂ − x₀, x₃ − x₀],  Ḋ_s the same of the velocities
//   P_tot = P(F) + P_d(F, Ḟ) + a A(F)               (fem/material.h; the active stress below)
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

// An element's active stress (Fem's actuators): level a = u · s [Pa] (the actuator's control u
// times the element's actuation strength s) and its kind:
//   muscle      P_a = a (F d) ⊗ d = a F d dᵀ, d the unit fibre in the rest frame: the gradient of
//               a/2 |F d|², so a > 0 shortens the fibre (contracts)
//   pneumatic   P_a = −a ∂J/∂F: the gradient of −a (J − 1), so a > 0 expands the element
// kind kPassive: none.
template <class S>
struct ActiveStress {
  enum Kind { kPassive = -1, kMuscle = 0, kPneumatic = 1 };
  int kind = kPassive;
  S level = S(0);
  S fibre[3] = {S(0), S(0), S(0)};
};
// the active stress per unit level, A(F) (P_a = a A(F))
template <class S>
STEER_HD Mat3<S> active_direction(const ActiveStress<S>& act, const Mat3<S>& F, const Mat3<S>& C) {
  Mat3<S> A;
  if (act.kind == ActiveStress<S>::kPneumatic) {
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) A.a[r][k] = -C.a[r][k];
    return A;
  }
  S Fd[3];
  for (int r = 0; r < 3; ++r)
    Fd[r] = F.a[r][0] * act.fibre[0] + F.a[r][1] * act.fibre[1] + F.a[r][2] * act.fibre[2];
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) A.a[r][k] = Fd[r] * act.fibre[k];
  return A;
}

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

// the active energy density per unit level: Φ = ½ |F d|² (muscle), −(J − 1) (pneumatic), so that
// P_a = a ∂Φ/∂F; its level times Φ [J/m³]
template <class S>
STEER_HD S active_energy(const ActiveStress<S>& act, const Mat3<S>& F, const StressPoint<S>& q) {
  if (act.kind == ActiveStress<S>::kPassive) return S(0);
  if (act.kind == ActiveStress<S>::kPneumatic) return -act.level * (q.j - S(1));
  S n2 = S(0);
  for (int r = 0; r < 3; ++r) {
    const S fd = F.a[r][0] * act.fibre[0] + F.a[r][1] * act.fibre[1] + F.a[r][2] * act.fibre[2];
    n2 += fd * fd;
  }
  return S(0.5) * act.level * n2;
}
// the active stress's differential a dA[G]: a G d dᵀ (muscle), −a dC[G] (pneumatic); symmetric
template <class S>
STEER_HD Mat3<S> active_differential(const ActiveStress<S>& act, const Mat3<S>& F,
                                     const Mat3<S>& G) {
  if (act.kind == ActiveStress<S>::kPneumatic) {
    Mat3<S> D = mat3_cofactor_differential(F, G);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) D.a[r][k] *= -act.level;
    return D;
  }
  Mat3<S> D = mat3_zero<S>();
  if (act.kind != ActiveStress<S>::kMuscle) return D;
  for (int r = 0; r < 3; ++r) {
    const S gd = G.a[r][0] * act.fibre[0] + G.a[r][1] * act.fibre[1] + G.a[r][2] * act.fibre[2];
    for (int k = 0; k < 3; ++k) D.a[r][k] = act.level * gd * act.fibre[k];
  }
  return D;
}

// elastic, viscous and active nodal forces of one element, accumulated into f[4][3] [N]
template <class S>
STEER_HD void tet_forces(int law, const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                         const FemMaterial<S>& m, const ActiveStress<S>& act, S (&f)[4][3]) {
  const Mat3<S> F = tet_gradient(n.x, B);
  const StressPoint<S> q = stress_point(F, law);
  Mat3<S> P = elastic_stress(law, F, q, m.mu, m.lambda);
  // always evaluated: at zero damping the term still carries ∂f/∂damping
  mat3_axpy(P, S(1), viscous_stress(law == kFemNeoHookeanWarp, F, q, tet_gradient(n.v, B), m));
  if (act.kind != ActiveStress<S>::kPassive) mat3_axpy(P, act.level, active_direction(act, F, q.C));
  tet_stress_forces(P, B, V, f);
}

// the vector-Jacobian product of tet_forces for the forces' cotangent f̄ [4][3]: x̄, v̄ [4][3],
// the material's cotangents (μ̄, λ̄ of the energy, μ̄_l, λ̄_l, dampinḡ) and the active level's ā,
// accumulated
template <class S>
STEER_HD void adj_tet_forces(int law, const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                             const FemMaterial<S>& m, const ActiveStress<S>& act,
                             const S (&fbar)[4][3], S (&xbar)[4][3], S (&vbar)[4][3],
                             FemMaterial<S>& mbar, S& level_bar) {
  const Mat3<S> F = tet_gradient(n.x, B);
  const StressPoint<S> q = stress_point(F, law);
  const Mat3<S> Pbar = adj_tet_stress_forces(fbar, B, V);
  // elastic: F̄ = dP[P̄] (dP is a Hessian), and the constants' cotangents
  Mat3<S> Fbar = elastic_stress_differential(law, F, q, m.mu, m.lambda, Pbar);
  adj_elastic_constants(law, F, q, Pbar, mbar.mu, mbar.lambda);
  Mat3<S> Fdotbar = mat3_zero<S>();
  adj_viscous_stress(law == kFemNeoHookeanWarp, F, q, tet_gradient(n.v, B), m, Pbar, Fbar, Fdotbar,
                     mbar);
  adj_tet_gradient(Fdotbar, B, vbar);
  if (act.kind != ActiveStress<S>::kPassive) {
    // P_a = a A(F): ā = P̄ : A; F̄ += a P̄ d dᵀ (muscle) or −a dC[P̄] (pneumatic)
    level_bar += mat3_ddot(Pbar, active_direction(act, F, q.C));
    if (act.kind == ActiveStress<S>::kPneumatic) {
      mat3_axpy(Fbar, -act.level, mat3_cofactor_differential(F, Pbar));
    } else {
      for (int r = 0; r < 3; ++r) {
        const S pd =
            Pbar.a[r][0] * act.fibre[0] + Pbar.a[r][1] * act.fibre[1] + Pbar.a[r][2] * act.fibre[2];
        for (int k = 0; k < 3; ++k) Fbar.a[r][k] += act.level * pd * act.fibre[k];
      }
    }
  }
  adj_tet_gradient(Fbar, B, xbar);
}

// the elastic forces' differential: df = −K dx for a nodal displacement dx [4][3] (K the
// element's stiffness ∂²(VΨ)/∂x², symmetric), accumulated into df [4][3]
template <class S>
STEER_HD void tet_force_differential(int law, const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                                     const FemMaterial<S>& m, const S (&dx)[4][3], S (&df)[4][3]) {
  const Mat3<S> F = tet_gradient(n.x, B);
  const StressPoint<S> q = stress_point(F, law);
  tet_stress_forces(elastic_stress_differential(law, F, q, m.mu, m.lambda, tet_gradient(dx, B)), B,
                    V, df);
}

// the element's stored energy V Ψ(F) [J]
template <class S>
STEER_HD S tet_energy(int law, const TetNodes<S>& n, const Mat3<S>& B, const S& V,
                      const FemMaterial<S>& m) {
  const Mat3<S> F = tet_gradient(n.x, B);
  return V * elastic_energy_density(law, F, stress_point(F, law), m.mu, m.lambda);
}

}  // namespace steer
