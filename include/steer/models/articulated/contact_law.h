// The ground-contact laws of the articulated model's contact points (contact.h applies them),
// each a pure function of one point's depth and velocity and the law's parameters, with its
// hand adjoint beside it. Units: lengths [m], velocities [m/s], forces [N], masses [kg], time [s].
//
// A point is a sphere of radius r centred at c (r = 0: a point); it touches the plane z = h at
// its lowest point x_c = c − r ẑ, where the force acts. Depth d = h − x_c,z (> 0: penetrating).
//
//   normal, softplus:   f_n = k w softplus(d/w) − d_c σ(d/w) ż
//   normal, impedance:  δ = w softplus(d/w) (the smoothed depth), x = δ / width,
//                       imp = d0 + y(x) (d_width − d0),  y = MuJoCo's sigmoid (midpoint ½, power
//                       2), K = 1 / (d_width² τ² ζ²),  B = 2 / (d_width τ), f_n = m_c imp (K imp δ
//                       − B σ(d/w) ż)
//   friction:           f_t = −μ N v_t / sqrt(|v_t|² + v_s²),  N = the elastic part of f_n
//                       (k w softplus(d/w), or m_c K imp² δ), so the bound is never negative.
//   restitution:        the softplus law's d_c from a coefficient of restitution e ∈ (0, 1):
//                       ζ = −ln e / sqrt(π² + ln² e),  d_c = 2 ζ sqrt(k m_c), the damping with
//                       which a linear spring-damper k, d_c carrying m_c leaves the contact
//                       (the depth back at 0) at e times its approach speed.
//
// Every adjoint accumulates (+=) into its outputs.
#pragma once

#include <cmath>

#include "steer/core.h"
#include "steer/model_math.h"

namespace steer {

// the law's θ slots beyond the model's globals: θ[p_contact(k)] (contact_set.h sizes them)
enum GroundContactParam {
  kContactFriction = 0,  // μ [1]
  kContactSlipVelocity,  // v_s [m/s], > 0
  kContactImpD0,         // solimp d0 [1], (0, 1)
  kContactImpDWidth,     // solimp d_width [1], (0, 1)
  kContactImpWidth,      // solimp width [m], > 0
  kContactRefTimeconst,  // solref timeconst τ [s], > 0
  kContactRefDampratio,  // solref dampratio ζ [1], > 0
  kContactImpMass,       // m_c [kg], > 0: the mass the reference acceleration acts on (and
                         // the mass per point restitution's damping is computed for)
  kContactRestitution,   // e [1], (0, 1): the softplus law's d_c = restitution_damping(e, k, m_c)
                         // where GroundContacts::restitution is set (else unused)
  kGroundContactParams
};

// the normal law's parameters as one point sees them
template <class S>
struct NormalLawParams {
  S k, dc, w;                       // softplus: stiffness [N/m], damping [N·s/m], smoothing [m]
  S d0, d1, width, tc, zeta, mass;  // impedance (w is shared: the onset's smoothing)
};

// the normal law's value: f_n [N] and its elastic part N [N] (the friction bound)
template <class S>
struct NormalForce {
  S fn, fe;
};

// f_n = k w softplus(d/w) − d_c σ(d/w) ż, N = k w softplus(d/w)
template <class S>
STEER_HD NormalForce<S> normal_softplus(const S& d, const S& zdot, const NormalLawParams<S>& q) {
  const S s = d / q.w;
  S sp, sg;
  softplus_sigmoid_of(s, sp, sg);
  NormalForce<S> o;
  o.fe = q.k * q.w * sp;
  o.fn = o.fe - q.dc * sg * zdot;
  return o;
}

// adjoint of normal_softplus for the cotangents (f̄_n, N̄): d̄, ż̄ and the parameters'
//   ∂f_n/∂d = k σ − d_c σ(1 − σ) ż / w,  ∂N/∂d = k σ,  ∂f_n/∂ż = −d_c σ,
//   ∂(f_n, N)/∂k = w softplus,  ∂f_n/∂d_c = −σ ż,
//   ∂N/∂w = k (softplus − σ s),  ∂f_n/∂w = ∂N/∂w + d_c σ(1 − σ) s ż / w   (s = d/w)
template <class S>
STEER_HD void adj_normal_softplus(const S& d, const S& zdot, const NormalLawParams<S>& q,
                                  const S& afn, const S& afe, S& ad, S& azdot,
                                  NormalLawParams<S>& aq) {
  const S s = d / q.w;
  S sp, sg, sgc;
  softplus_sigmoid_of(s, sp, sg, &sgc);
  const S dsg = sg * sgc;  // σ'(s)
  const S both = afn + afe;
  ad += both * q.k * sg - afn * q.dc * dsg * zdot / q.w;
  azdot -= afn * q.dc * sg;
  aq.k += both * q.w * sp;
  aq.dc -= afn * sg * zdot;
  aq.w += both * q.k * (sp - sg * s) + afn * q.dc * dsg * s * zdot / q.w;
}

// MuJoCo's impedance sigmoid at midpoint ½ and power 2 on x ≥ 0: y = 2x² (x < ½),
// 1 − 2(1 − x)² (½ ≤ x < 1), 1 (x ≥ 1); y' = 4x, 4(1 − x), 0 — C¹ everywhere
template <class S>
STEER_HD void impedance_sigmoid(const S& x, S& y, S& dy) {
  const S u = S(1) - x;
  const auto low = x < S(0.5), high = x >= S(1);
  y = select(high, S(1), select(low, S(S(2) * x * x), S(S(1) - S(2) * u * u)));
  dy = select(high, S(0), select(low, S(S(4) * x), S(S(4) * u)));
}

// the impedance law's intermediates at depth d: s = d/w, softplus(s), σ(s), 1 − σ(s), δ, x, y(x),
// y'(x), imp, K, B (normal_impedance and its adjoint both start from these)
template <class S>
struct ImpedanceTerms {
  S s, sp, sg, sgc, dl, x, y, dy, imp, kk, bb;
  STEER_HD ImpedanceTerms(const S& d, const NormalLawParams<S>& q) {
    s = d / q.w;
    softplus_sigmoid_of(s, sp, sg, &sgc);
    dl = q.w * sp;
    x = dl / q.width;
    impedance_sigmoid(x, y, dy);
    imp = q.d0 + y * (q.d1 - q.d0);
    kk = S(1) / (q.d1 * q.d1 * q.tc * q.tc * q.zeta * q.zeta);
    bb = S(2) / (q.d1 * q.tc);
  }
};

// f_n = m_c imp (K imp δ − B σ(d/w) ż), N = m_c K imp² δ (see the header)
template <class S>
STEER_HD NormalForce<S> normal_impedance(const S& d, const S& zdot, const NormalLawParams<S>& q) {
  const ImpedanceTerms<S> t(d, q);
  NormalForce<S> o;
  o.fe = q.mass * t.kk * t.imp * t.imp * t.dl;
  o.fn = o.fe - q.mass * t.bb * t.imp * t.sg * zdot;
  return o;
}

// adjoint of normal_impedance: with f_n = m K imp² δ − m B imp g ż, N = m K imp² δ, g = σ(s),
//   imp̄ = f̄_n (2 m K imp δ − m B g ż) + N̄ 2 m K imp δ,   ȳ = imp̄ (d_width − d0),  x̄ = ȳ y'(x),
//   δ̄ = (f̄_n + N̄) m K imp² + x̄ / width,  ḡ = −f̄_n m B imp ż,  ż̄ = −f̄_n m B imp g,
//   K̄ = (f̄_n + N̄) m imp² δ,  B̄ = −f̄_n m imp g ż,  m̄ = (f̄_n f_n + N̄ N) / m,
//   K = 1/(d_width² τ² ζ²): ∂K/∂(d_width, τ, ζ) = −2K/(d_width, τ, ζ);  B = 2/(d_width τ):
//   ∂B/∂(d_width, τ) = −B/(d_width, τ), δ = w softplus(s): d̄ += δ̄ σ, w̄ += δ̄ (softplus − σ s);  g =
//   σ(s): d̄ += ḡ σ'/w, w̄ −= ḡ σ' s/w
template <class S>
STEER_HD void adj_normal_impedance(const S& d, const S& zdot, const NormalLawParams<S>& q,
                                   const S& afn, const S& afe, S& ad, S& azdot,
                                   NormalLawParams<S>& aq) {
  const ImpedanceTerms<S> t(d, q);
  const S dsg = t.sg * t.sgc;
  const S m = q.mass, both = afn + afe;
  const S fe = m * t.kk * t.imp * t.imp * t.dl;
  const S fn = fe - m * t.bb * t.imp * t.sg * zdot;
  const S aimp = both * S(2) * m * t.kk * t.imp * t.dl - afn * m * t.bb * t.sg * zdot;
  const S ax = aimp * (q.d1 - q.d0) * t.dy;
  aq.d0 += aimp * (S(1) - t.y);
  aq.d1 += aimp * t.y;
  const S adl = both * m * t.kk * t.imp * t.imp + ax / q.width;
  aq.width -= ax * t.x / q.width;
  const S ag = -afn * m * t.bb * t.imp * zdot;
  azdot -= afn * m * t.bb * t.imp * t.sg;
  const S akk = both * m * t.imp * t.imp * t.dl, abb = -afn * m * t.imp * t.sg * zdot;
  aq.mass += (afn * fn + afe * fe) / m;
  aq.d1 -= S(2) * akk * t.kk / q.d1 + abb * t.bb / q.d1;
  aq.tc -= S(2) * akk * t.kk / q.tc + abb * t.bb / q.tc;
  aq.zeta -= S(2) * akk * t.kk / q.zeta;
  ad += adl * t.sg + ag * dsg / q.w;
  aq.w += adl * (t.sp - t.sg * t.s) - ag * dsg * t.s / q.w;
}

// π² (9.8696044010893586188...) as the nearest double
constexpr double kPiSquared = 9.869604401089358;

// the damping [N·s/m] that gives a linear spring-damper (stiffness k [N/m], mass m [kg]) the
// coefficient of restitution e: the damped oscillation z = A e^{−ζωt} sin(ω_d t) returns to
// z = 0 after half a period π/ω_d with the speed ratio e^{−ζπ/sqrt(1 − ζ²)} = e, so
// ζ = −ln e / sqrt(π² + ln² e) (ζ < 1 for every e > 0) and d_c = 2 ζ sqrt(k m).
// ln e is log1p(e − 1) (model_math.h's log1p: the same bits on every path).
template <class S>
STEER_HD S restitution_damping(const S& e, const S& k, const S& m) {
  using std::sqrt;
  const S l = log1p_of(S(e - S(1)));
  const S zeta = -l / sqrt(S(kPiSquared) + l * l);
  return S(2) * zeta * sqrt(k * m);
}

// adjoint of restitution_damping for the cotangent d̄_c, with L = ln e, r = sqrt(π² + L²):
//   ∂ζ/∂L = −π² / r³,  ∂L/∂e = 1/e  ->  ē += d̄_c 2 sqrt(k m) (−π² / r³) / e,
//   k̄ += d̄_c d_c / (2k),  m̄ += d̄_c d_c / (2m)
template <class S>
STEER_HD void adj_restitution_damping(const S& e, const S& k, const S& m, const S& adc, S& ae,
                                      S& ak, S& am) {
  using std::sqrt;
  const S l = log1p_of(S(e - S(1)));
  const S r2 = S(kPiSquared) + l * l, r = sqrt(r2);
  const S root = sqrt(k * m);
  const S dc = S(2) * (-l / r) * root;
  ae -= adc * S(2) * root * S(kPiSquared) / (r2 * r * e);
  ak += adc * dc / (S(2) * k);
  am += adc * dc / (S(2) * m);
}

// smoothed Coulomb friction in the contact's tangent plane: f_t = −μ N v_t / sqrt(|v_t|² + v_s²),
// with v_t, f_t given by D components (D = 2: the plane's x, y; D = 3: a tangential vector in
// world coordinates, as the FEM model's contacts with planes of any orientation give it)
template <class S, int D = 2>
STEER_HD void friction_smoothed(const S* vt, const S& fe, const S& mu, const S& vs, S* ft) {
  using std::sqrt;
  if constexpr (D == 2) {
    // the plane's law, written out: the rigid kernels' register allocation is this form's
    const S g = -mu * fe / sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vs * vs);
    ft[0] = g * vt[0];
    ft[1] = g * vt[1];
  } else {
    S q2 = vt[0] * vt[0];  // summed in the D = 2 form's order
    for (int i = 1; i < D; ++i) q2 += vt[i] * vt[i];
    const S g = -mu * fe / sqrt(q2 + vs * vs);
    for (int i = 0; i < D; ++i) ft[i] = g * vt[i];
  }
}

// adjoint of friction_smoothed for the cotangent f̄_t, with ḡ = f̄_t · v_t and q = sqrt(|v_t|² +
// v_s²):
//   v̄_t = −μ N (f̄_t / q − ḡ v_t / q³),  N̄ = −μ ḡ / q,  μ̄ = −N ḡ / q,  v̄_s = μ N ḡ v_s / q³
template <class S, int D = 2>
STEER_HD void adj_friction_smoothed(const S* vt, const S& fe, const S& mu, const S& vs,
                                    const S* aft, S* avt, S& afe, S& amu, S& avs) {
  using std::sqrt;
  S q2, gdot;
  if constexpr (D == 2) {
    q2 = vt[0] * vt[0] + vt[1] * vt[1];
    gdot = aft[0] * vt[0] + aft[1] * vt[1];
  } else {
    q2 = vt[0] * vt[0], gdot = aft[0] * vt[0];
    for (int i = 1; i < D; ++i) q2 += vt[i] * vt[i], gdot += aft[i] * vt[i];
  }
  const S qn = sqrt(q2 + vs * vs);
  const S mn = mu * fe;
  const S q3 = qn * qn * qn;
  for (int i = 0; i < D; ++i) avt[i] -= mn * (aft[i] / qn - gdot * vt[i] / q3);
  afe -= mu * gdot / qn;
  amu -= fe * gdot / qn;
  avs += mn * gdot * vs / q3;
}

}  // namespace steer
