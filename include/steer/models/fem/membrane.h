// The surface membrane of warp.sim's soft grids (add_soft_grid puts one triangle on every
// boundary face; warp.sim's eval_triangles, without its drag and lift), as its equations are
// written there, so that warp.sim's soft-body scenes run here unchanged. Units: [m], [m/s], [N].
//
// Triangle (x₀, x₁, x₂), rest area A and rest matrix D_m (2×2, the inverse of the rest edges'
// coordinates in an orthonormal frame of the rest triangle oriented by its own normal, so A > 0):
//   F = [x₁ − x₀, x₂ − x₀] D_m (3×2),  Ḟ = [v₁ − v₀, v₂ − v₀] D_m
//   P = A (k_μ F + k_d Ḟ),  (f₁, f₂) = P D_mᵀ                              (deviatoric and damping)
//   c = a/A − α,  a = |(x₁ − x₀) × (x₂ − x₀)| / 2,  α = 1 + k_μ / k_λ        (area preservation)
//   g₁ = ∂a/∂x₁ / A,  g₂ = ∂a/∂x₂ / A,  ċ = g₁·(v₁ − v₀) + g₂·(v₂ − v₀)
//   (f₁, f₂) += (g₁, g₂) A (k_λ c + k_d ċ)
//   forces: x₀ gets f₁ + f₂, x₁ gets −f₁, x₂ gets −f₂.
// With k_d = 0 these are −∇ of A (k_μ/2 |F|² + k_λ/2 c²) (membrane_energy). k_μ, k_λ [Pa·m]
// (warp.sim's tri_ke, tri_ka: forces scale with area, as a sheet's), k_d [Pa·m·s] (tri_kd).
// The adjoint is written by hand (the gradient suite checks it against dual numbers and FD).
#pragma once

#include <cmath>

#include "steer/core.h"

namespace steer {

template <class S>
struct TriNodes {
  S x[3][3], v[3][3];  // [vertex][coordinate]
};

template <class S>
struct MembraneMaterial {
  S k_mu, k_lambda, k_damp;
};

// the edges from x₀ and their rates: e_k = x_k − x₀, w_k = v_k − v₀
template <class S>
STEER_HD void membrane_edges(const TriNodes<S>& t, S* e1, S* e2, S* w1, S* w2) {
  for (int c = 0; c < 3; ++c) {
    e1[c] = t.x[1][c] - t.x[0][c];
    e2[c] = t.x[2][c] - t.x[0][c];
    w1[c] = t.v[1][c] - t.v[0][c];
    w2[c] = t.v[2][c] - t.v[0][c];
  }
}

// the forces on the triangle's three vertices, f [vertex][coordinate]; dm = D_m row-major
template <class S>
STEER_HD void membrane_forces(const TriNodes<S>& t, const double* dm, double rest_area,
                              const MembraneMaterial<S>& q, S (&f)[3][3]) {
  using std::sqrt;
  const S A = S(rest_area), inv_a = S(1) / A;
  const S d00 = S(dm[0]), d01 = S(dm[1]), d10 = S(dm[2]), d11 = S(dm[3]);
  S e1[3], e2[3], w1[3], w2[3];
  membrane_edges(t, e1, e2, w1, w2);
  S f1[3], f2[3];
  for (int c = 0; c < 3; ++c) {
    const S F1 = e1[c] * d00 + e2[c] * d10, F2 = e1[c] * d01 + e2[c] * d11;
    const S G1 = w1[c] * d00 + w2[c] * d10, G2 = w1[c] * d01 + w2[c] * d11;
    const S P1 = A * (q.k_mu * F1 + q.k_damp * G1), P2 = A * (q.k_mu * F2 + q.k_damp * G2);
    f1[c] = P1 * d00 + P2 * d01;
    f2[c] = P1 * d10 + P2 * d11;
  }
  // area preservation: n = e1 × e2, a = |n|/2, ∂a/∂x₁ = ½ e2 × n̂, ∂a/∂x₂ = ½ n̂ × e1
  const S n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                  e1[0] * e2[1] - e1[1] * e2[0]};
  const S len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  const S u[3] = {n[0] / len, n[1] / len, n[2] / len};
  const S alpha = S(1) + q.k_mu / q.k_lambda;
  const S c = S(0.5) * len * inv_a - alpha;
  const S g1[3] = {S(0.5) * inv_a * (e2[1] * u[2] - e2[2] * u[1]),
                   S(0.5) * inv_a * (e2[2] * u[0] - e2[0] * u[2]),
                   S(0.5) * inv_a * (e2[0] * u[1] - e2[1] * u[0])};
  const S g2[3] = {S(0.5) * inv_a * (u[1] * e1[2] - u[2] * e1[1]),
                   S(0.5) * inv_a * (u[2] * e1[0] - u[0] * e1[2]),
                   S(0.5) * inv_a * (u[0] * e1[1] - u[1] * e1[0])};
  S cdot = S(0);
  for (int k = 0; k < 3; ++k) cdot += g1[k] * w1[k] + g2[k] * w2[k];
  const S s = A * (q.k_lambda * c + q.k_damp * cdot);
  for (int k = 0; k < 3; ++k) {
    f1[k] += g1[k] * s;
    f2[k] += g2[k] * s;
    f[0][k] = f1[k] + f2[k];
    f[1][k] = -f1[k];
    f[2][k] = -f2[k];
  }
}

// A (k_μ/2 |F|² + k_λ/2 c²) [J]: the potential of membrane_forces without damping
template <class S>
STEER_HD S membrane_energy(const TriNodes<S>& t, const double* dm, double rest_area,
                           const MembraneMaterial<S>& q) {
  using std::sqrt;
  S e1[3], e2[3], FF = S(0);
  for (int c = 0; c < 3; ++c) {
    e1[c] = t.x[1][c] - t.x[0][c];
    e2[c] = t.x[2][c] - t.x[0][c];
    const S F1 = e1[c] * S(dm[0]) + e2[c] * S(dm[2]), F2 = e1[c] * S(dm[1]) + e2[c] * S(dm[3]);
    FF += F1 * F1 + F2 * F2;
  }
  const S n0 = e1[1] * e2[2] - e1[2] * e2[1], n1 = e1[2] * e2[0] - e1[0] * e2[2],
          n2 = e1[0] * e2[1] - e1[1] * e2[0];
  const S c =
      S(0.5) * sqrt(n0 * n0 + n1 * n1 + n2 * n2) / S(rest_area) - (S(1) + q.k_mu / q.k_lambda);
  return S(rest_area) * (S(0.5) * q.k_mu * FF + S(0.5) * q.k_lambda * c * c);
}

namespace membrane_detail {
template <class S>
STEER_HD void cross(const S* a, const S* b, S* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}
// out += a × b
template <class S>
STEER_HD void add_cross(const S* a, const S* b, const S& scale, S* out) {
  S t[3];
  cross(a, b, t);
  for (int k = 0; k < 3; ++k) out[k] += scale * t[k];
}
}  // namespace membrane_detail

// the transpose of membrane_forces for the forces' cotangents fbar: x̄, v̄ (+=) and the
// material's cotangents (+=). Reverse order of the forward pass, with ȳ = a × b giving
// ā += b × ȳ, b̄ += ȳ × a, and u = n/|n| giving n̄ += (ū − u (u·ū)) / |n| + |n|̄ u:
//   f̄₁ = f̄_0 − f̄_1, f̄₂ = f̄_0 − f̄_2;  ḡ_i = f̄_i s,  s̄ = f̄₁·g₁ + f̄₂·g₂
//   s = A (k_λ c + k_d ċ):  c̄ = A k_λ s̄, ċ̄ = A k_d s̄;  ċ = g₁·w₁ + g₂·w₂
//   g₁ = h e₂ × u, g₂ = h u × e₁ (h = 1/(2A));  c = h |n| − α, α = 1 + k_μ/k_λ
//   P_j = A (k_μ F_j + k_d Ḟ_j), (f₁, f₂) = P D_mᵀ;  F = [e₁, e₂] D_m, Ḟ = [w₁, w₂] D_m
template <class S>
STEER_HD void adj_membrane_forces(const TriNodes<S>& t, const double* dm, double rest_area,
                                  const MembraneMaterial<S>& q, const S (&fbar)[3][3],
                                  S (&xbar)[3][3], S (&vbar)[3][3], MembraneMaterial<S>& qbar) {
  using membrane_detail::add_cross;
  using std::sqrt;
  const S A = S(rest_area), h = S(0.5) / A;
  const S d00 = S(dm[0]), d01 = S(dm[1]), d10 = S(dm[2]), d11 = S(dm[3]);
  S e1[3], e2[3], w1[3], w2[3];
  membrane_edges(t, e1, e2, w1, w2);
  // the forward pass's area terms
  S n[3], u[3], g1[3], g2[3];
  membrane_detail::cross(e1, e2, n);
  const S len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  for (int k = 0; k < 3; ++k) u[k] = n[k] / len;
  membrane_detail::cross(e2, u, g1);
  membrane_detail::cross(u, e1, g2);
  S cdot = S(0);
  for (int k = 0; k < 3; ++k) {
    g1[k] *= h;
    g2[k] *= h;
    cdot += g1[k] * w1[k] + g2[k] * w2[k];
  }
  const S alpha = S(1) + q.k_mu / q.k_lambda;
  const S cc = h * len - alpha;
  const S s = A * (q.k_lambda * cc + q.k_damp * cdot);
  // reverse
  S f1b[3], f2b[3], g1b[3], g2b[3], sb = S(0);
  for (int k = 0; k < 3; ++k) {
    f1b[k] = fbar[0][k] - fbar[1][k];
    f2b[k] = fbar[0][k] - fbar[2][k];
    g1b[k] = f1b[k] * s;
    g2b[k] = f2b[k] * s;
    sb += f1b[k] * g1[k] + f2b[k] * g2[k];
  }
  qbar.k_lambda += A * cc * sb;
  qbar.k_damp += A * cdot * sb;
  const S cb = A * q.k_lambda * sb, cdotb = A * q.k_damp * sb;
  S e1b[3] = {S(0), S(0), S(0)}, e2b[3] = {S(0), S(0), S(0)}, w1b[3], w2b[3];
  for (int k = 0; k < 3; ++k) {
    g1b[k] += cdotb * w1[k];
    g2b[k] += cdotb * w2[k];
    w1b[k] = cdotb * g1[k];
    w2b[k] = cdotb * g2[k];
  }
  S ub[3] = {S(0), S(0), S(0)};
  add_cross(u, g1b, h, e2b);  // g₁ = h e₂ × u
  add_cross(g1b, e2, h, ub);
  add_cross(e1, g2b, h, ub);  // g₂ = h u × e₁
  add_cross(g2b, u, h, e1b);
  // c = h |n| − α
  const S lenb = h * cb;
  qbar.k_mu -= cb / q.k_lambda;
  qbar.k_lambda += cb * q.k_mu / (q.k_lambda * q.k_lambda);
  const S uu = u[0] * ub[0] + u[1] * ub[1] + u[2] * ub[2];
  S nb[3];
  for (int k = 0; k < 3; ++k) nb[k] = (ub[k] - u[k] * uu) / len + lenb * u[k];
  add_cross(e2, nb, S(1), e1b);  // n = e₁ × e₂
  add_cross(nb, e1, S(1), e2b);
  // the deviatoric and damping part, per coordinate
  for (int c = 0; c < 3; ++c) {
    const S P1b = f1b[c] * d00 + f2b[c] * d10, P2b = f1b[c] * d01 + f2b[c] * d11;
    const S F1 = e1[c] * d00 + e2[c] * d10, F2 = e1[c] * d01 + e2[c] * d11;
    const S G1 = w1[c] * d00 + w2[c] * d10, G2 = w1[c] * d01 + w2[c] * d11;
    qbar.k_mu += A * (P1b * F1 + P2b * F2);
    qbar.k_damp += A * (P1b * G1 + P2b * G2);
    const S F1b = A * q.k_mu * P1b, F2b = A * q.k_mu * P2b;
    const S G1b = A * q.k_damp * P1b, G2b = A * q.k_damp * P2b;
    e1b[c] += F1b * d00 + F2b * d01;
    e2b[c] += F1b * d10 + F2b * d11;
    w1b[c] += G1b * d00 + G2b * d01;
    w2b[c] += G1b * d10 + G2b * d11;
  }
  for (int c = 0; c < 3; ++c) {
    xbar[0][c] -= e1b[c] + e2b[c];
    xbar[1][c] += e1b[c];
    xbar[2][c] += e2b[c];
    vbar[0][c] -= w1b[c] + w2b[c];
    vbar[1][c] += w1b[c];
    vbar[2][c] += w2b[c];
  }
}

}  // namespace steer
