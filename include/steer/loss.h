// Loss terms of a rollout, each with its adjoint below it:
//   L = Σ_k c(x_k, u_k)                 running: ½ w_u |u_k|²  (control effort, [N²] × w_u)
//     + ℓ(x_T)                          terminal: Σ_i ½ w_i (x_T[i] − target_i)²
//     + landing(x_e, x_{e+1})           event: ½ w Σ_j (x_land[j] − target_j)² over the
//                                       horizontal axes, where e is the first step whose
//                                       vertical coordinate crosses from > 0 to ≤ 0 and
//                                       x_land = x_e + s (x_{e+1} − x_e), s = y_e / (y_e − y_{e+1})
//                                       is the time-of-impact interpolation inside that step.
//     + w_c (c(x_T, θ) − c(x_0, θ))   centre-of-mass displacement along one axis, with
//                                       c = Σ m_i x_i / Σ m_i from the model (w_c = −1
//                                       rewards moving forward)
// If no crossing happens within the horizon the landing term is evaluated at x_T
// (x_land = x_T) and the artifact says so (event step −1).
#pragma once

#include "steer/core.h"

namespace steer {

struct Loss {
  static constexpr int kMaxTerms = 16;
  static constexpr int kMaxAxes = 3;

  // terminal quadratic terms on state components
  int n_terminal = 0;
  int terminal_index[kMaxTerms] = {};
  double terminal_target[kMaxTerms] = {};
  double terminal_weight[kMaxTerms] = {};
  int terminal_param[kMaxTerms] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  // running control effort weight w_u
  double effort_weight = 0.0;
  // landing event
  bool landing = false;
  int vertical = 1;  // index of the vertical coordinate in the state
  int n_landing = 0;
  int landing_index[kMaxAxes] = {};  // horizontal position components
  double landing_target[kMaxAxes] = {};
  double landing_weight = 1.0;
  // centre-of-mass displacement
  bool com = false;
  int com_axis = 0;
  double com_weight = -1.0;

  // w_c c(x, θ), the part of the displacement term evaluated at one end of the rollout
  template <class S, class Model, class XIn, class PIn>
  STEER_HD S com_term(const Model& m, const XIn& x, const PIn& p) const {
    if (!com) return S(0);
    return S(com_weight) * m.template center_of_mass<S>(x, p, com_axis);
  }
  template <class S, class Model, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_com_term(const Model& m, const XIn& x, const PIn& p, XAdj& adj_x, PAdj& adj_p,
                             const S& adj_l) const {
    if (!com) return;
    m.template adj_center_of_mass<S>(x, p, com_axis, adj_x, adj_p, adj_l * S(com_weight));
  }

  // ℓ(x_T, θ); a term's target is a constant, or θ[terminal_param] when that is ≥ 0
  template <class S, class XIn, class PIn>
  STEER_HD S terminal(const XIn& x, const PIn& p) const {
    S l = S(0);
    for (int t = 0; t < n_terminal; ++t) {
      const S target = terminal_param[t] >= 0 ? S(p[terminal_param[t]]) : S(terminal_target[t]);
      S e = S(x[terminal_index[t]]) - target;
      l += S(0.5) * S(terminal_weight[t]) * e * e;
    }
    return l;
  }
  // ∂ℓ/∂x_T and ∂ℓ/∂θ (the parameter targets)
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_terminal(const XIn& x, const PIn& p, XAdj& adj_x, PAdj& adj_p, const S& adj_l) const {
    for (int t = 0; t < n_terminal; ++t) {
      const S target = terminal_param[t] >= 0 ? S(p[terminal_param[t]]) : S(terminal_target[t]);
      const S g = adj_l * S(terminal_weight[t]) * (S(x[terminal_index[t]]) - target);
      adj_x[terminal_index[t]] += g;
      if (terminal_param[t] >= 0) adj_p[terminal_param[t]] -= g;
    }
  }

  // c(x_k, u_k) = ½ w_u |u_k|²
  template <class S, class UIn>
  STEER_HD S running(const UIn& u, int nu) const {
    if (effort_weight == 0.0) return S(0);
    S l = S(0);
    for (int j = 0; j < nu; ++j) l += S(u[j]) * S(u[j]);
    return S(0.5) * S(effort_weight) * l;
  }
  // ∂c/∂u_k
  template <class S, class UIn, class UAdj>
  STEER_HD void adj_running(const UIn& u, int nu, UAdj& adj_u, const S& adj_l) const {
    if (effort_weight == 0.0) return;
    for (int j = 0; j < nu; ++j) adj_u[j] += adj_l * S(effort_weight) * S(u[j]);
  }

  // does the step x_k -> x_{k+1} cross the ground downwards?
  template <class S, class XIn>
  STEER_HD bool crosses(const XIn& xk, const XIn& xk1) const {
    return S(xk[vertical]) > S(0) && S(xk1[vertical]) <= S(0);
  }
  // time-of-impact fraction s ∈ (0, 1]: y_k + s (y_{k+1} − y_k) = 0
  template <class S, class XIn>
  STEER_HD S impact_fraction(const XIn& xk, const XIn& xk1) const {
    S yk = xk[vertical], yk1 = xk1[vertical];
    S den = yk - yk1;  // > 0 on a crossing step; guarded for the no-crossing call
    return den > S(0) ? yk / den : S(1);
  }
  // landing(x_e, x_{e+1}); pass the same state twice for the no-crossing fallback
  template <class S, class XIn>
  STEER_HD S landing_loss(const XIn& xk, const XIn& xk1, bool crossed) const {
    S s = crossed ? impact_fraction<S>(xk, xk1) : S(1);
    S l = S(0);
    for (int j = 0; j < n_landing; ++j) {
      const int i = landing_index[j];
      S xl = S(xk[i]) + s * (S(xk1[i]) - S(xk[i]));
      S e = xl - S(landing_target[j]);
      l += S(0.5) * S(landing_weight) * e * e;
    }
    return l;
  }
  // ∂landing/∂x_e and ∂landing/∂x_{e+1}
  template <class S, class XIn, class XAdj>
  STEER_HD void adj_landing_loss(const XIn& xk, const XIn& xk1, bool crossed, XAdj& adj_xk,
                                 XAdj& adj_xk1, const S& adj_l) const {
    S s = crossed ? impact_fraction<S>(xk, xk1) : S(1);
    S adj_s = S(0);
    for (int j = 0; j < n_landing; ++j) {
      const int i = landing_index[j];
      S dx = S(xk1[i]) - S(xk[i]);
      S xl = S(xk[i]) + s * dx;
      S adj_xl = adj_l * S(landing_weight) * (xl - S(landing_target[j]));
      adj_xk[i] += adj_xl * (S(1) - s);
      adj_xk1[i] += adj_xl * s;
      adj_s += adj_xl * dx;
    }
    if (crossed) {
      // s = y_k / (y_k − y_{k+1}):  ∂s/∂y_k = −y_{k+1}/den²,  ∂s/∂y_{k+1} = y_k/den²
      S yk = xk[vertical], yk1 = xk1[vertical];
      S den = yk - yk1;
      S den2 = den * den;
      adj_xk[vertical] += adj_s * (-yk1 / den2);
      adj_xk1[vertical] += adj_s * (yk / den2);
    }
  }
};

}  // namespace steer
