// Articulated: the narrow phase of the contact pairs (model.pairs): for two geoms, each fixed in a
// body or in the world, the signed gap between them, the contact normal and the contact point.
//
// A pair's sides are a sphere or a capsule (a segment with a radius r: a "core" and a rounded
// skin), a plane (a half-space, the solid below its normal) or a box (a solid, half-sizes h along
// its own axes). At most one side is a plane or a box, and a plane's other side is a sphere (the
// import gives a capsule's end caps and a box's corners as spheres, as the ground points do). The
// "solid" side (plane or box) is taken as side 1 (the sides are swapped and the normal turned
// back when it is side 0). With P the point of side 0's core nearest side 1, n the unit normal
// from side 1 to side 0 and g the signed gap from side 1's core or surface to P along n:
//   d = r₀ + r₁ − g (> 0: penetrating),  x_c = P − ½ (r₀ − r₁ + g) n  (midway between surfaces).
// Per side 1:
//   segment (sphere, capsule): P, Q the closest points of the two segments (segment_closest),
//     δ = P − Q, g = ρ = sqrt(|δ|² + ε²) (ε = 10⁻¹² m keeps n defined where the cores meet),
//     n = δ/ρ;
//   plane (point o, unit normal ν): P = the sphere's centre, n = ν, g = ν · (P − o) (negative
//     below the plane: a plane's gap is signed, so that a sphere pushed through it is pushed back);
//   box (centre c, axes R, half-sizes h): p = Rᵀ (P − c) in the box's frame. Outside the box
//     (some |p_i| > h_i) the nearest point of the box is the clamp q = clamp(p, −h, h), g =
//     sqrt(|p − q|² + ε²), n = R (p − q)/g; inside, the nearest face i (smallest h_i − |p_i|),
//     n = sign(p_i) R e_i, g = −(h_i − |p_i|). A capsule's core P is the segment point of
//     smallest gap among its two ends, the points nearest each of the box's 12 edges
//     (segment_closest) and the point nearest the box's centre: away from the box the closest
//     pair of a segment and a box joins an end to the box or the segment's interior to an edge,
//     so the candidates hold the exact closest point; a core inside the box takes the deepest
//     candidate (an approximation where the segment crosses the box with neither end inside).
// Smooth while the nearest features stay the same (a segment's interior against an edge, a point
// against a face, an edge or a corner); the normal and the gap's slope switch where they change
// (a sphere's centre crossing into the box, a capsule turning parallel to a face): the
// validator's contact_mode_switch watches every pair.
#pragma once

#include <cmath>

namespace steer {

// the shape of one side of a contact pair (ArticulatedCap::pair_shape)
enum PairShape { kPairCapsule = 0, kPairSphere = 1, kPairPlane = 2, kPairBox = 3 };

// one side of a pair in world coordinates
template <class S>
struct PairSide {
  int shape = kPairSphere;
  S e0[3], e1[3];  // segment ends (a sphere's centre twice); plane: a point, the unit normal; box:
                   // its centre (e1 unused)
  S R[9];          // box: its axes in the world, row-major (column k is axis k)
  double half[3] = {0, 0, 0};  // box: half-sizes [m]
  double r = 0;                // sphere, capsule: radius [m]; plane, box: 0
};

// x clamped to [0, 1] (a branch on the value: duals keep the side's derivative)
template <class S>
STEER_HD S clamp_unit(const S& x) {
  if (x < S(0)) return S(0);
  if (x > S(1)) return S(1);
  return x;
}

// The parameters s, t of the closest points A0 + s (A1 − A0), B0 + t (B1 − B0) of two segments
// (a_point, b_point: a segment of length 0, a sphere's centre). With d₁ = A1 − A0, d₂ = B1 − B0,
// r = A0 − B0, a = d₁·d₁, e = d₂·d₂, b = d₁·d₂, c = d₁·r, f = d₂·r: the unconstrained minimum
// s = (b f − c e)/(a e − b²), clamped to [0, 1], then t = (b s + f)/e; when t leaves [0, 1] it
// is clamped and s re-solved for it, s = clamp((b t − c)/a). Parallel segments (a e − b² ≤
// 10⁻¹² a e) take s = 0.
template <class S, class T>
STEER_HD void segment_closest(const S* A0, const S* A1, bool a_point, const T* B0, const T* B1,
                              bool b_point, S& s, S& t) {
  S d1[3], d2[3], r[3];
  for (int i = 0; i < 3; ++i) d1[i] = A1[i] - A0[i], d2[i] = B1[i] - B0[i], r[i] = A0[i] - B0[i];
  const S a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2];
  const S e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2];
  const S f = d2[0] * r[0] + d2[1] * r[1] + d2[2] * r[2];
  s = t = S(0);
  if (a_point && b_point) return;
  if (a_point) {
    t = clamp_unit(S(f / e));
    return;
  }
  const S c = d1[0] * r[0] + d1[1] * r[1] + d1[2] * r[2];
  if (b_point) {
    s = clamp_unit(S(-c / a));
    return;
  }
  const S b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2];
  const S denom = a * e - b * b;
  s = denom > S(1e-12) * a * e ? clamp_unit(S((b * f - c * e) / denom)) : S(0);
  t = (b * s + f) / e;
  if (t < S(0)) {
    t = S(0);
    s = clamp_unit(S(-c / a));
  } else if (t > S(1)) {
    t = S(1);
    s = clamp_unit(S((b - c) / a));
  }
}

// a point p in a box's frame (half-sizes h): the signed gap g to the box (> 0 outside, the
// distance; ≤ 0 inside, minus the distance to the nearest face) and the unit normal nl (box
// frame) from the box towards p
template <class S>
STEER_HD S point_box_gap(const S* p, const double* h, S* nl) {
  using std::sqrt;
  const bool inside = !(p[0] > S(h[0]) || p[0] < S(-h[0]) || p[1] > S(h[1]) || p[1] < S(-h[1]) ||
                        p[2] > S(h[2]) || p[2] < S(-h[2]));
  if (!inside) {
    S dl[3];
    for (int i = 0; i < 3; ++i) {
      const S q = p[i] > S(h[i]) ? S(h[i]) : (p[i] < S(-h[i]) ? S(-h[i]) : p[i]);
      dl[i] = p[i] - q;
    }
    const S g = sqrt(dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2] + S(1e-24));
    for (int i = 0; i < 3; ++i) nl[i] = dl[i] / g;
    return g;
  }
  int face = 0;
  S depth = S(h[0]) - (p[0] < S(0) ? S(-p[0]) : p[0]);
  for (int i = 1; i < 3; ++i) {
    const S di = S(h[i]) - (p[i] < S(0) ? S(-p[i]) : p[i]);
    if (di < depth) depth = di, face = i;
  }
  for (int i = 0; i < 3; ++i) nl[i] = S(0);
  nl[face] = p[face] < S(0) ? S(-1) : S(1);
  return -depth;
}

// the segment A (a sphere: its centre) against box B: P on A's core, n, g (file comment)
template <class S>
STEER_HD void segment_box(const PairSide<S>& A, const PairSide<S>& B, S* P, S* n, S& g) {
  // A's ends in the box's frame: a = Rᵀ (e − c)
  S a[2][3];
  for (int e = 0; e < 2; ++e) {
    const S* x = e == 0 ? A.e0 : A.e1;
    const S r[3] = {x[0] - B.e0[0], x[1] - B.e0[1], x[2] - B.e0[2]};
    for (int i = 0; i < 3; ++i) a[e][i] = B.R[i] * r[0] + B.R[3 + i] * r[1] + B.R[6 + i] * r[2];
  }
  S best_s = S(0), nl[3];
  g = point_box_gap(a[0], B.half, nl);
  auto consider = [&](const S& s) {
    S p[3], nc[3];
    for (int i = 0; i < 3; ++i) p[i] = a[0][i] + s * (a[1][i] - a[0][i]);
    const S gc = point_box_gap(p, B.half, nc);
    if (gc < g) {
      g = gc, best_s = s;
      for (int i = 0; i < 3; ++i) nl[i] = nc[i];
    }
  };
  if (A.shape == kPairCapsule) {
    consider(S(1));
    // the 12 edges: along axis i, at the signs (σ_j, σ_k) of the other two axes
    for (int i = 0; i < 3; ++i)
      for (int corner = 0; corner < 4; ++corner) {
        double E0[3], E1[3];
        const int j = (i + 1) % 3, k = (i + 2) % 3;
        E0[i] = -B.half[i], E1[i] = B.half[i];
        E0[j] = E1[j] = (corner & 1 ? 1 : -1) * B.half[j];
        E0[k] = E1[k] = (corner & 2 ? 1 : -1) * B.half[k];
        S s, t;
        segment_closest(a[0], a[1], false, E0, E1, false, s, t);
        consider(s);
      }
    // the point nearest the centre: s = clamp(−a₀·(a₁ − a₀) / |a₁ − a₀|²)
    S num = S(0), den = S(0);
    for (int i = 0; i < 3; ++i) {
      const S di = a[1][i] - a[0][i];
      num -= a[0][i] * di, den += di * di;
    }
    consider(clamp_unit(S(num / den)));
  }
  for (int i = 0; i < 3; ++i) {
    P[i] = A.e0[i] + best_s * (A.e1[i] - A.e0[i]);
    n[i] = B.R[3 * i] * nl[0] + B.R[3 * i + 1] * nl[1] + B.R[3 * i + 2] * nl[2];
  }
}

// two sides: the depth d (returned), the contact point xc and the normal n from side 1 to side 0
template <class S>
STEER_HD S pair_sides_geometry(const PairSide<S>& side0, const PairSide<S>& side1, S* xc, S* n) {
  using std::sqrt;
  const bool swapped = side0.shape >= kPairPlane;
  const PairSide<S>& A = swapped ? side1 : side0;
  const PairSide<S>& B = swapped ? side0 : side1;
  S P[3], g;
  if (B.shape == kPairPlane) {
    for (int i = 0; i < 3; ++i) P[i] = A.e0[i], n[i] = B.e1[i];
    g = n[0] * (P[0] - B.e0[0]) + n[1] * (P[1] - B.e0[1]) + n[2] * (P[2] - B.e0[2]);
  } else if (B.shape == kPairBox) {
    segment_box(A, B, P, n, g);
  } else {
    S s, t;
    segment_closest(A.e0, A.e1, A.shape == kPairSphere, B.e0, B.e1, B.shape == kPairSphere, s, t);
    S dl[3];
    for (int i = 0; i < 3; ++i) {
      P[i] = A.e0[i] + s * (A.e1[i] - A.e0[i]);
      dl[i] = P[i] - (B.e0[i] + t * (B.e1[i] - B.e0[i]));
    }
    g = sqrt(dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2] + S(1e-24));
    for (int i = 0; i < 3; ++i) n[i] = dl[i] / g;
  }
  const S shift = S(0.5) * (S(A.r) - S(B.r) + g);
  for (int i = 0; i < 3; ++i) xc[i] = P[i] - shift * n[i];
  if (swapped)
    for (int i = 0; i < 3; ++i) n[i] = -n[i];
  return S(A.r) + S(B.r) - g;
}

}  // namespace steer
