// Loss terms of a rollout, each with its adjoint below it:
//   L = Σ_k c(x_k, u_k)                 running: ½ w_u |u_k|²  (control effort, [N²] × w_u)
//     + ℓ(x_T)                          terminal: Σ_i ½ w_i (x_T[i] − target_i)²
//                                       (w_i < 0 in the pairs that make a linear term w x)
//     + landing(x_e, x_{e+1})           event: ½ w Σ_j (x_land[j] − target_j)² over the
//                                       horizontal axes, where e is the first step whose
//                                       vertical coordinate crosses from > 0 to ≤ 0 and
//                                       x_land = x_e + s (x_{e+1} − x_e), s = y_e / (y_e − y_{e+1})
//                                       is the time-of-impact interpolation inside that step.
//     + w_c (c(x_T, θ) − c(x_0, θ))   centre-of-mass displacement along one axis, with
//                                       c = Σ m_i x_i / Σ m_i from the model (w_c = −1
//                                       rewards moving forward)
//     + Σ_s ½ w_s ‖p_s(x, θ) − t_s‖²      site targets: p_s a named point of the model
//     (site_position),
//       + ½ w_R,s ‖R_s(x, θ) − R*_s‖_F²  at x_T (terminal) or at every x_k, k = 0..T (running);
//       each
//                                       target coordinate a constant or a θ slot; R_s the site's
//                                       orientation (site_rotation) where the model offers it
//     + Σ_k Σ_c ½ W_kc (y_c(x_k, θ) − R_kc)²   tracking (running state costs, trajectory fitting):
//                                       channel c is a state slot or one coordinate of a site,
//                                       R and W a table of T + 1 rows (k = 0..T) the Loss points at
// If no crossing happens within the horizon the landing term is evaluated at x_T
// (x_land = x_T) and the artifact says so (event step −1).
#pragma once

#include <type_traits>
#include <utility>

#include "steer/core.h"

namespace steer {

// whether a model has tendons (int n_tendons): the tracking table's linear channels (a fixed
// tendon's length) are compiled for it only, so that other models' kernels keep their registers
template <class Model, class = void>
struct has_tendons : std::false_type {};
template <class Model>
struct has_tendons<Model, std::void_t<decltype(std::declval<const Model&>().n_tendons)>>
    : std::true_type {};
// whether a model offers named points (sites): int n_sites, site_position and adj_site_position
template <class Model, class = void>
struct has_sites : std::false_type {};
template <class Model>
struct has_sites<Model, std::void_t<decltype(std::declval<const Model&>().n_sites)>>
    : std::true_type {};
// whether its sites also have an orientation (site_rotation, row-major site→world, and its adjoint)
template <class Model, class = void>
struct has_site_rotation : std::false_type {};
template <class Model>
struct has_site_rotation<
    Model, std::void_t<decltype(std::declval<const Model&>().template site_rotation<double>(
               std::declval<View<const double>>(), std::declval<View<const double>>(), 0,
               static_cast<double*>(nullptr)))>> : std::true_type {};

struct Loss {
  static constexpr int kMaxTerms = 16;
  static constexpr int kMaxAxes = 3;

  // terminal quadratic terms on state components; a weight may be negative (the config writes
  // a linear term w x as the pair ½ w (x + ½)² − ½ w (x − ½)², loss.terminal_linear)
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
  // centre-of-mass target ½ w_t |c(x_T) − c*|² (the model's center_of_mass on each axis)
  bool com_target = false;
  double com_target_point[3] = {};
  double com_target_weight = 1.0;
  int com_target_axes = 3;  // the model's dimensions (x, y[, z])
  // site targets ½ w ‖p_site − target‖²; coordinate a's target is θ[site_param[t][a]] when that
  // is ≥ 0, else site_target[t][a] (the config sets both for every term t < n_site)
  static constexpr int kMaxSiteTerms = 8;
  int n_site = 0;
  int site_index[kMaxSiteTerms] = {};
  bool site_running[kMaxSiteTerms] = {};  // every x_k (k = 0..T) instead of x_T alone
  double site_weight[kMaxSiteTerms] = {};
  double site_target[kMaxSiteTerms][3] = {};
  int site_param[kMaxSiteTerms][3] = {};
  // orientation: + ½ w_R ‖R_s(x, θ) − R*‖_F² with R_s the site's site→world rotation and R* the
  // target (row-major); 0 = no orientation term (models with site_rotation only)
  double site_rot_weight[kMaxSiteTerms] = {};
  double site_rot_target[kMaxSiteTerms][9] = {};
  // tracking table: row k (k = 0..track_rows − 1) holds, per channel c, the reference R_kc and
  // the weight W_kc at track[2 (k n_track + c)] and [... + 1]; a step past the last row adds
  // nothing. A channel is a state slot i (code i ≥ 0) or coordinate a of site s (code
  // −(1 + 3 s + a)); channels of one site are adjacent, so its position is computed once. The
  // table is host memory on the CPU and a device copy in a kernel (rollout_kernel_defs.cuh):
  // the Loss stays a small value to copy.
  // A channel may also be a linear combination of state slots (a fixed tendon's length,
  // Σ_j c_j q_j): code kLinearChannel − ℓ, its terms in the table after the rows (track_extra
  // doubles): at track + 2 track_rows n_track, first one offset per combination ℓ (from there),
  // then at each offset its term count n and n pairs (slot, coefficient).
  static constexpr int kMaxTrack = 128;
  static constexpr int kLinearChannel = -(1 << 20);
  int n_track = 0;
  int track_rows = 0;
  int track_extra = 0;
  int track_channel[kMaxTrack] = {};
  const double* track = nullptr;
  // the doubles of the table: the rows, then the linear combinations' terms
  STEER_HD long track_doubles() const { return 2 * long(track_rows) * n_track + track_extra; }
  STEER_HD static bool linear_code(int code) { return code <= kLinearChannel; }
  // y = Σ c x[slot] of linear channel code
  template <class S, class XIn>
  STEER_HD S linear_value(int code, const XIn& x) const {
    const double* def = track + 2 * long(track_rows) * n_track;
    const double* t = def + long(def[kLinearChannel - code]);
    S y = S(0);
    for (int i = 0; i < int(t[0]); ++i) y += S(t[2 + 2 * i]) * S(x[int(t[1 + 2 * i])]);
    return y;
  }
  template <class S, class XAdj>
  STEER_HD void adj_linear_value(int code, XAdj& adj_x, const S& adj_y) const {
    const double* def = track + 2 * long(track_rows) * n_track;
    const double* t = def + long(def[kLinearChannel - code]);
    for (int i = 0; i < int(t[0]); ++i) adj_x[int(t[1 + 2 * i])] += adj_y * S(t[2 + 2 * i]);
  }

  STEER_HD bool has_track() const { return n_track > 0 && track_rows > 0; }
  STEER_HD bool has_running_sites() const {
    for (int t = 0; t < n_site; ++t)
      if (site_running[t]) return true;
    return false;
  }
  STEER_HD bool has_terminal_sites() const {
    for (int t = 0; t < n_site; ++t)
      if (!site_running[t]) return true;
    return false;
  }

  // p_s(x, θ) [m]; a model without sites has none (the config refuses site terms for it)
  template <class S, class Model, class XIn, class PIn>
  STEER_HD static void site_pos(const Model& m, const XIn& x, const PIn& p, int s, S out[3]) {
    if constexpr (has_sites<Model>::value) {
      m.template site_position<S>(x, p, s, out);
    } else {
      (void)m, (void)x, (void)p, (void)s;
      out[0] = out[1] = out[2] = S(0);
    }
  }
  template <class S, class Model, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD static void adj_site_pos(const Model& m, const XIn& x, const PIn& p, int s, XAdj& adj_x,
                                    PAdj& adj_p, const S adj_out[3]) {
    if constexpr (has_sites<Model>::value) {
      m.template adj_site_position<S>(x, p, s, adj_x, adj_p, adj_out);
    } else {
      (void)m, (void)x, (void)p, (void)s, (void)adj_x, (void)adj_p, (void)adj_out;
    }
  }

  // Σ over the site terms with site_running == running of ½ w ‖p_s(x, θ) − t‖²
  template <class S, class Model, class XIn, class PIn>
  STEER_HD S site_terms(const Model& m, const XIn& x, const PIn& p, bool running) const {
    S l = S(0);
    for (int t = 0; t < n_site; ++t) {
      if (site_running[t] != running) continue;
      S pos[3];
      site_pos<S>(m, x, p, site_index[t], pos);
      S e2 = S(0);
      for (int a = 0; a < 3; ++a) {
        const S e = pos[a] - site_goal<S>(p, t, a);
        e2 += e * e;
      }
      l += S(0.5) * S(site_weight[t]) * e2;
      if constexpr (has_site_rotation<Model>::value) {
        if (site_rot_weight[t] != 0.0) {
          S R[9];
          m.template site_rotation<S>(x, p, site_index[t], R);
          S r2 = S(0);
          for (int i = 0; i < 9; ++i) {
            const S e = R[i] - S(site_rot_target[t][i]);
            r2 += e * e;
          }
          l += S(0.5) * S(site_rot_weight[t]) * r2;
        }
      }
    }
    return l;
  }
  // ∂/∂x: (∂p_s/∂x)ᵀ w (p_s − t); ∂/∂θ: the same through p_s, and −w (p_s − t) into a θ target
  template <class S, class Model, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_site_terms(const Model& m, const XIn& x, const PIn& p, bool running,
                               XAdj& adj_x, PAdj& adj_p, const S& adj_l) const {
    for (int t = 0; t < n_site; ++t) {
      if (site_running[t] != running) continue;
      S pos[3], g[3];
      site_pos<S>(m, x, p, site_index[t], pos);
      for (int a = 0; a < 3; ++a) {
        g[a] = adj_l * S(site_weight[t]) * (pos[a] - site_goal<S>(p, t, a));
        if (site_param[t][a] >= 0) adj_p[site_param[t][a]] -= g[a];
      }
      adj_site_pos<S>(m, x, p, site_index[t], adj_x, adj_p, g);
      if constexpr (has_site_rotation<Model>::value) {
        if (site_rot_weight[t] != 0.0) {
          // ∂/∂R = w_R (R − R*), back through the site's rotation
          S R[9], gR[9];
          m.template site_rotation<S>(x, p, site_index[t], R);
          for (int i = 0; i < 9; ++i)
            gR[i] = adj_l * S(site_rot_weight[t]) * (R[i] - S(site_rot_target[t][i]));
          m.template adj_site_rotation<S>(x, p, site_index[t], adj_x, adj_p, gR);
        }
      }
    }
  }
  template <class S, class PIn>
  STEER_HD S site_goal(const PIn& p, int t, int a) const {
    return site_param[t][a] >= 0 ? S(p[site_param[t][a]]) : S(site_target[t][a]);
  }

  // row k of the tracking table: Σ_c ½ W_kc (y_c(x_k) − R_kc)²; a channel of weight 0 (no
  // observation at this step) costs nothing, not even its site's position
  template <class S, class Model, class XIn, class PIn>
  STEER_HD S track_row(const Model& m, int k, const XIn& x, const PIn& p) const {
    if (k < 0 || k >= track_rows) return S(0);
    const double* row = track + 2 * long(k) * n_track;
    S l = S(0);
    S pos[3];
    int site = -1;
    for (int c = 0; c < n_track; ++c) {
      const double w = row[2 * c + 1];
      if (w == 0.0) continue;
      const int code = track_channel[c];
      S y;
      if (code >= 0) {
        y = S(x[code]);
      } else if (has_tendons<Model>::value && linear_code(code)) {
        y = linear_value<S>(code, x);
      } else {
        const int s = (-code - 1) / 3;
        if (s != site) site_pos<S>(m, x, p, s, pos), site = s;
        y = pos[(-code - 1) % 3];
      }
      const S e = y - S(row[2 * c]);
      l += S(0.5) * S(w) * e * e;
    }
    return l;
  }
  // ∂/∂x_k (and ∂/∂θ through the sites): W_kc (y_c − R_kc) ∂y_c, one site adjoint per site
  template <class S, class Model, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_track_row(const Model& m, int k, const XIn& x, const PIn& p, XAdj& adj_x,
                              PAdj& adj_p, const S& adj_l) const {
    if (k < 0 || k >= track_rows) return;
    const double* row = track + 2 * long(k) * n_track;
    S pos[3], g[3];
    int site = -1;
    for (int c = 0; c <= n_track; ++c) {
      const bool end = c == n_track;
      const double w = end ? 0.0 : row[2 * c + 1];
      if (!end && w == 0.0) continue;
      const int code = end ? 0 : track_channel[c];
      const bool linear = has_tendons<Model>::value && linear_code(code);
      const int s = code < 0 && !linear ? (-code - 1) / 3 : -1;
      // the channels of the current site end here: its ȳ goes back through p_s
      if (site >= 0 && s != site) adj_site_pos<S>(m, x, p, site, adj_x, adj_p, g), site = -1;
      if (end) break;
      if (code >= 0) {
        adj_x[code] += adj_l * S(w) * (S(x[code]) - S(row[2 * c]));
        continue;
      }
      if (linear) {
        adj_linear_value<S>(code, adj_x, adj_l * S(w) * (linear_value<S>(code, x) - S(row[2 * c])));
        continue;
      }
      if (s != site) {
        site_pos<S>(m, x, p, s, pos);
        g[0] = g[1] = g[2] = S(0);
        site = s;
      }
      const int a = (-code - 1) % 3;
      g[a] += adj_l * S(w) * (pos[a] - S(row[2 * c]));
    }
  }

  // the loss terms of state x_k (k = 0..T): running site targets and tracking row k
  template <class S, class Model, class XIn, class PIn>
  STEER_HD S state_running(const Model& m, int k, const XIn& x, const PIn& p) const {
    S l = S(0);
    if (has_running_sites()) l += site_terms<S>(m, x, p, true);
    if (has_track()) l += track_row<S>(m, k, x, p);
    return l;
  }
  template <class S, class Model, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_state_running(const Model& m, int k, const XIn& x, const PIn& p, XAdj& adj_x,
                                  PAdj& adj_p, const S& adj_l) const {
    if (has_running_sites()) adj_site_terms<S>(m, x, p, true, adj_x, adj_p, adj_l);
    if (has_track()) adj_track_row<S>(m, k, x, p, adj_x, adj_p, adj_l);
  }

  // w_c c(x, θ), the part of the displacement term evaluated at one end of the rollout
  template <class S, class Model, class XIn, class PIn>
  STEER_HD S com_term(const Model& m, const XIn& x, const PIn& p) const {
    if (!com) return S(0);
    return S(com_weight) * m.template center_of_mass<S>(x, p, com_axis);
  }
  // ½ w_t |c(x_T, θ) − c*|², the centre-of-mass target (at x_T only). Host-only: not compiled
  // into the CUDA kernels (__CUDA_ARCH__), whose budget its kinematics pass per axis and adjoint
  // broke (docs/design.md, The kernel budget); the cuda backend refuses a loss with it by name.
  template <class S, class Model, class XIn, class PIn>
  STEER_HD S com_target_term(const Model& m, const XIn& x, const PIn& p) const {
    if (!com_target) return S(0);
    S l = S(0);
#if defined(__CUDA_ARCH__)
    (void)m, (void)x, (void)p;
#else
    for (int a = 0; a < com_target_axes; ++a) {
      const S e = m.template center_of_mass<S>(x, p, a) - S(com_target_point[a]);
      l += S(0.5) * S(com_target_weight) * e * e;
    }
#endif
    return l;
  }
  template <class S, class Model, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_com_target_term(const Model& m, const XIn& x, const PIn& p, XAdj& adj_x,
                                    PAdj& adj_p, const S& adj_l) const {
    if (!com_target) return;
#if defined(__CUDA_ARCH__)
    (void)m, (void)x, (void)p, (void)adj_x, (void)adj_p, (void)adj_l;
#else
    for (int a = 0; a < com_target_axes; ++a) {
      const S e = m.template center_of_mass<S>(x, p, a) - S(com_target_point[a]);
      m.template adj_center_of_mass<S>(x, p, a, adj_x, adj_p, adj_l * S(com_target_weight) * e);
    }
#endif
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
  STEER_HD void adj_terminal(const XIn& x, const PIn& p, XAdj& adj_x, PAdj& adj_p,
                             const S& adj_l) const {
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
