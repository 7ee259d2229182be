#include "models/articulated/inertia_check.h"

#include <cmath>

#include "config/json_reader.h"

namespace steer {

namespace {

std::string moments(const std::array<double, 3>& e) {
  return "(" + number_text(e[0]) + ", " + number_text(e[1]) + ", " + number_text(e[2]) + ") kg*m^2";
}

}  // namespace

std::array<double, 3> symmetric3_eigenvalues(const double I[6]) {
  double V[9];
  std::array<double, 3> e = symmetric3_eigen(I, V);
  if (e[0] > e[1]) std::swap(e[0], e[1]);
  if (e[1] > e[2]) std::swap(e[1], e[2]);
  if (e[0] > e[1]) std::swap(e[0], e[1]);
  return e;
}

std::array<double, 3> symmetric3_eigen(const double I[6], double V[9]) {
  double a[3][3] = {{I[0], I[3], I[4]}, {I[3], I[1], I[5]}, {I[4], I[5], I[2]}};
  for (int i = 0; i < 9; ++i) V[i] = i % 4 == 0 ? 1.0 : 0.0;
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  // Each rotation in the (p, q) plane zeroes a_pq (Jacobi): with θ = (a_qq − a_pp)/(2 a_pq),
  // t = tan φ = sgn θ/(|θ| + √(θ² + 1)), a_pp −= t a_pq, a_qq += t a_pq, and the third row/column
  // r turns by (c, s) = (1, t)/√(1 + t²). Convergence is quadratic; a 3×3 needs about 5 sweeps.
  for (int sweep = 0; sweep < 64; ++sweep) {
    const double off = std::fabs(a[0][1]) + std::fabs(a[0][2]) + std::fabs(a[1][2]);
    if (off == 0) break;
    for (const auto& pq : pairs) {
      const int p = pq[0], q = pq[1], r = 3 - p - q;
      const double apq = a[p][q];
      if (apq == 0) continue;
      // an off-diagonal entry below the rounding of both diagonal entries is zero to them
      if (sweep > 3 && std::fabs(a[p][p]) + 100 * std::fabs(apq) == std::fabs(a[p][p]) &&
          std::fabs(a[q][q]) + 100 * std::fabs(apq) == std::fabs(a[q][q])) {
        a[p][q] = a[q][p] = 0;
        continue;
      }
      const double theta = (a[q][q] - a[p][p]) / (2 * apq);
      // for |θ| beyond 1e150, θ² overflows; t → 1/(2θ) there
      const double t =
          std::fabs(theta) > 1e150
              ? 1 / (2 * theta)
              : (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
      const double c = 1 / std::sqrt(t * t + 1), s = t * c;
      a[p][p] -= t * apq;
      a[q][q] += t * apq;
      a[p][q] = a[q][p] = 0;
      const double arp = a[r][p], arq = a[r][q];
      a[r][p] = a[p][r] = c * arp - s * arq;
      a[r][q] = a[q][r] = s * arp + c * arq;
      // the same rotation of the eigenvectors' columns p and q
      for (int i = 0; i < 3; ++i) {
        const double vp = V[3 * i + p], vq = V[3 * i + q];
        V[3 * i + p] = c * vp - s * vq;
        V[3 * i + q] = s * vp + c * vq;
      }
    }
  }
  return {a[0][0], a[1][1], a[2][2]};
}

std::string inertia_violation(const double I[6]) {
  for (int i = 0; i < 6; ++i)
    if (!std::isfinite(I[i])) return "inertia is not finite";
  const std::array<double, 3> e = symmetric3_eigenvalues(I);
  // the trace is invariant: the sum of the diagonal entries and of the eigenvalues alike
  const double trace = std::fabs(I[0]) + std::fabs(I[1]) + std::fabs(I[2]);
  const double floor = kInertiaPositiveTolerance * trace;
  if (!(e[0] > floor))
    return "inertia is not positive definite: eigenvalues " + moments(e) +
           "; the smallest must exceed " + number_text(kInertiaPositiveTolerance) +
           " x trace = " + number_text(floor);
  const double slack = kInertiaTriangleTolerance * trace;
  if (!(e[0] + e[1] >= e[2] - slack))
    return "inertia violates the triangle inequality: I1 + I2 < I3 (principal moments " +
           moments(e) + ", I1 + I2 - I3 = " + number_text(e[0] + e[1] - e[2]) +
           " below the tolerance -" + number_text(kInertiaTriangleTolerance) + " x trace = -" +
           number_text(slack) + ")";
  return "";
}

}  // namespace steer
