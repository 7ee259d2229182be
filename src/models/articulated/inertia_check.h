// Physical validity of a rigid body's inertia tensor (docs/config.md, "Physical validity").
// A body's rotational inertia about its centre of mass,
//   I = [[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]]   (fullinertia order: xx yy zz xy xz
//   yz),
// is symmetric by construction (six numbers). It is physical when its eigenvalues (principal
// moments) I1 ≤ I2 ≤ I3 are positive and satisfy the triangle inequality I1 + I2 ≥ I3: with
// I_k = ∫ (r² − r_k²) dm, I1 + I2 − I3 = 2 ∫ r_3² dm ≥ 0 along the principal axes, equality for a
// lamina in the 1–2 plane.
#pragma once

#include <array>
#include <string>

namespace steer {

// Positive definite: I1 > kInertiaPositiveTolerance · trace. The eigenvalues below carry an
// absolute rounding error of a few 1e-16 · trace, so a singular tensor is refused however its
// smallest eigenvalue rounds; the floor admits rods up to a length/radius ratio of about 1e6.
constexpr double kInertiaPositiveTolerance = 1e-12;
// Triangle inequality: I1 + I2 ≥ I3 − kInertiaTriangleTolerance · trace. Equality is physical
// (a lamina); the slack absorbs the rounding of a tensor written with about nine significant
// digits and of the eigenvalues themselves.
constexpr double kInertiaTriangleTolerance = 1e-9;

// eigenvalues of the symmetric 3×3 matrix with entries (xx, yy, zz, xy, xz, yz), ascending;
// cyclic Jacobi rotations, accurate to a few units of rounding times the largest |eigenvalue|
std::array<double, 3> symmetric3_eigenvalues(const double I[6]);
// the same rotations, also accumulated: eigenvalue k (in the order the sweeps leave them) with
// its unit eigenvector in column k of V (row-major, a proper rotation or a reflection)
std::array<double, 3> symmetric3_eigen(const double I[6], double V[9]);

// empty when the tensor (fullinertia order) is finite, positive definite and satisfies the
// triangle inequality within the tolerances above; otherwise the violated condition with the
// principal moments [kg·m²], e.g. "inertia is not positive definite: eigenvalues (…)"
std::string inertia_violation(const double I[6]);

}  // namespace steer
