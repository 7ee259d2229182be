// What the implicit (backward-Euler) steps of the models share: the scalar helpers their
// branch-free Newton iterations use, the ground's elastic potential G (the integral of softplus),
// and an in-place banded LDLᵀ factorization of a symmetric matrix with its solve. Host and
// device, any scalar (double, float, dual numbers, SIMD packs: a pack's lanes factor together,
// each lane's pivots checked on its own).
#pragma once

#include <type_traits>

#include "steer/core.h"
#include "steer/model_math.h"

namespace steer {

namespace implicit_detail {
// the real type of a scalar: double, float, a dual number's value type, a pack's lane type
template <class S, class = void>
struct real_of {
  using type = std::decay_t<decltype(value_of(std::declval<S>()))>;
};
template <class S>
struct real_of<S, std::enable_if_t<is_pack<S>::value>> {
  using type = typename S::value_type;
};
template <class S>
STEER_HD S abs_of(const S& a) {
  return select(a < S(0), -a, a);
}
template <class S>
STEER_HD S max_of(const S& a, const S& b) {
  return select(a > b, a, b);
}
}  // namespace implicit_detail

// G(z) = ∫_{−∞}^z softplus(s) ds = −Li₂(−e^z), the ground's elastic potential per k_g w_g² [1]:
//   z ≤ 0: Li₂(x) = Σ_{n≥0} B_n u^{n+1}/(n+1)! with u = −ln(1 − x) = −softplus(z) ∈ [−ln 2, 0),
//          = u − u²/4 + u³ Σ_{k≥1} B_{2k}/(2k+1)! u^{2k−2}  (terms shrink by (u/2π)² ≤ 0.013;
//          eight of them reach 1e-17 relative)
//   z > 0: G(z) = π²/6 + z²/2 − G(−z)   (the inversion Li₂(−e^z) + Li₂(−e^{−z}) = −π²/6 − z²/2)
template <class S>
STEER_HD S softplus_integral_of(const S& z) {
  const auto pos = z > S(0);
  const S zn = select(pos, -z, z);
  const S u = -softplus_of(zn);
  const S u2 = u * u;
  // B_{2k}/(2k+1)!, k = 8 .. 1, by Horner in u²
  S poly = S(-1.9939295860721074e-14);
  poly = poly * u2 + S(8.921691020456452e-13);
  poly = poly * u2 + S(-4.0647616451442256e-11);
  poly = poly * u2 + S(1.8978869988971e-09);
  poly = poly * u2 + S(-9.185773074661964e-08);
  poly = poly * u2 + S(4.72411186696901e-06);
  poly = poly * u2 + S(-0.0002777777777777778);
  poly = poly * u2 + S(0.027777777777777776);
  const S g = -(u - S(0.25) * u2 + u * u2 * poly);
  return select(pos, S(1.6449340668482264) + S(0.5) * z * z - g, g);  // π²/6
}

namespace implicit_detail {
// lower band entry (i, j), i − bw ≤ j ≤ i, of an n × n symmetric matrix
template <class S>
STEER_HD S& band(S* H, int bw, int i, int j) {
  return H[i * (bw + 1) + (j - i + bw)];
}
// in-place banded LDLᵀ: L's strict lower band and D on the diagonal. The mask is false (per
// lane) where a pivot is not above 1e-12 times its row's diagonal: not positive definite, to
// rounding. Stops early only when every lane has failed.
template <class S>
STEER_HD auto band_ldlt(S* H, int n, int bw) -> decltype(S() < S()) {
  auto ok = S(0) < S(1);
  for (int i = 0; i < n; ++i) {
    const int j0 = i - bw > 0 ? i - bw : 0;
    for (int j = j0; j < i; ++j) {
      S s = band(H, bw, i, j);
      const int k0 = j - bw > j0 ? j - bw : j0;
      for (int k = k0; k < j; ++k) s -= band(H, bw, i, k) * band(H, bw, j, k) * band(H, bw, k, k);
      band(H, bw, i, j) = s / band(H, bw, j, j);
    }
    const S diag = band(H, bw, i, i);
    S dsum = diag;
    for (int k = j0; k < i; ++k) dsum -= band(H, bw, i, k) * band(H, bw, i, k) * band(H, bw, k, k);
    ok = ok && (dsum > S(1e-12) * diag) && (diag > S(0));
    if (!any_lane(ok)) return ok;
    band(H, bw, i, i) = dsum;
  }
  return ok;
}
// b := H⁻¹ b from band_ldlt's factor
template <class S>
STEER_HD void band_solve(const S* H, int n, int bw, S* b) {
  for (int i = 0; i < n; ++i) {
    const int j0 = i - bw > 0 ? i - bw : 0;
    S s = b[i];
    for (int k = j0; k < i; ++k) s -= H[i * (bw + 1) + (k - i + bw)] * b[k];
    b[i] = s;
  }
  for (int i = 0; i < n; ++i) b[i] = b[i] / H[i * (bw + 1) + bw];
  for (int i = n - 1; i >= 0; --i) {
    const int k1 = i + bw < n - 1 ? i + bw : n - 1;
    S s = b[i];
    for (int k = i + 1; k <= k1; ++k) s -= H[k * (bw + 1) + (i - k + bw)] * b[k];
    b[i] = s;
  }
}
}  // namespace implicit_detail

}  // namespace steer
