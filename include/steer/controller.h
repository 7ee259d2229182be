// A feedback controller inside the step (docs/design.md, "Controllers"): u_k = u_open,k +
// π(o(k, x_k, θ); W), with π a small dense network whose weights W are θ slots of the rollout,
// so that every path that runs a model's step (the CPU's scalar and SIMD paths, the CUDA kernels,
// the emulated device, the dual-number reference) runs the controller with it, and the adjoint
// sweep gives ∂L/∂W with the rest of θ̄.
//
//   observations  o_i = s_i (r_i − c_i)              r_i a raw feature, s_i and c_i θ slots
//     raw features: a state slot x_j; a position slot minus the centre of mass along its axis,
//     x_j − C_a(x, θ); the centre of mass C_a; a phase sin(ω t + 2πj/n) with t = k h; a site
//     coordinate (models with sites)
//   layers        a_0 = o,  z_l = W_l a_{l−1} + b_l,  a_l = φ_l(z_l)   (l = 1..L)
//                 φ: linear, tanh, relu, elu (elu(z) = z for z > 0, e^z − 1 otherwise)
//   actions       y_a = σ_a a_L,a  (σ_a a θ slot),  u_eff,a = u_a + clamp(y_a, lo, hi)
//
// The adjoint is written by hand: the model's own adjoint gives ū_eff, then
//   ȳ_a = ū_eff,a [lo < y_a < hi],  σ̄_a += ȳ_a a_L,a,  ā_L,a = ȳ_a σ_a,
//   z̄_l = ā_l ⊙ φ'_l (from a_l: tanh 1 − a², relu [a > 0], elu a > 0 ? 1 : a + 1),
//   b̄_l += z̄_l,  W̄_l += z̄_l a_{l−1}ᵀ,  ā_{l−1} = W_lᵀ z̄_l,
//   s̄_i += ō_i (r_i − c_i),  c̄_i −= ō_i s_i,  r̄_i = ō_i s_i, and r̄ into x̄ (and the centre of
//   mass's or a site's θ̄) through the model's own adjoints of those features.
// The open-loop u_k stays a control of the model (zero unless given), so a feed-forward tape
// and feedback add up; the control-effort loss term sees u_k only.
// θ layout of the controller's block, from theta0 (= the model's np()): s [n_obs], c [n_obs],
// then per layer W_l row-major [width_l][width_{l−1}] followed by b_l [width_l], then σ [n_act].
#pragma once

#include <type_traits>

#include "steer/core.h"
#include "steer/loss.h"
#include "steer/model_contract.h"
#include "steer/model_math.h"

namespace steer {

struct MassSpring;

struct Policy {
  static constexpr int kMaxLayers = 4;
  static constexpr int kMaxObs = 256;
  static constexpr int kMaxWidth = 256;  // any layer's width, the actions' too
  static constexpr int kMaxUnits = 640;  // Σ_l width_l over the observations and every layer
  enum Activation { kLinear = 0, kTanh = 1, kRelu = 2, kElu = 3 };
  enum Feature { kState = 0, kStateFromCenter = 1, kCenter = 2, kPhase = 3, kSite = 4 };

  int n_obs = 0;
  int n_layers = 0;
  int width[kMaxLayers + 1] = {};  // width[0] = n_obs, width[n_layers] = the actions
  int activation[kMaxLayers] = {};
  // per observation: the feature; its slot (kState, kStateFromCenter), phase j (kPhase) or site
  // (kSite); its axis (kStateFromCenter, kCenter, kSite: 0 x, 1 y, 2 z) or phase count n (kPhase)
  short feature[kMaxObs] = {};
  short index[kMaxObs] = {};
  short axis[kMaxObs] = {};
  double phase_frequency = 0;  // ω [rad/s]
  double dt = 0;               // h [s]: a phase's t = k h
  double clamp_lo = -1e300, clamp_hi = 1e300;  // each action's range, in control units
  int theta0 = 0;                              // the block's first θ slot

  STEER_HD int n_actions() const { return width[n_layers]; }
  STEER_HD int obs_scale(int i) const { return theta0 + i; }
  STEER_HD int obs_center(int i) const { return theta0 + n_obs + i; }
  // the first slot of layer l's weights (l = 0 .. n_layers − 1 maps width[l] -> width[l + 1])
  STEER_HD int layer_begin(int l) const {
    int q = theta0 + 2 * n_obs;
    for (int j = 0; j < l; ++j) q += (width[j] + 1) * width[j + 1];
    return q;
  }
  STEER_HD int action_scale(int a) const { return layer_begin(n_layers) + a; }
  STEER_HD int size() const { return layer_begin(n_layers) + n_actions() - theta0; }
  // where layer l's outputs start in the unit array (the observations at 0)
  STEER_HD int unit_begin(int l) const {
    int q = 0;
    for (int j = 0; j < l; ++j) q += width[j];
    return q;
  }
};

// φ(z) and φ'(z) from a = φ(z)
template <class S>
STEER_HD S policy_activation(int kind, const S& z) {
  if (kind == Policy::kTanh) return tanh_of(z);
  if (kind == Policy::kRelu) return select(z > S(0), z, S(0));
  if (kind == Policy::kElu) return select(z > S(0), z, S(exp_of(z) - S(1)));
  return z;
}
template <class S>
STEER_HD S policy_activation_slope(int kind, const S& a) {
  if (kind == Policy::kTanh) return S(1) - a * a;
  if (kind == Policy::kRelu) return select(a > S(0), S(1), S(0));
  if (kind == Policy::kElu) return select(a > S(0), S(1), S(a + S(1)));
  return S(1);
}

// Model with the controller in its step. The model's own members (diagnostics, centre of mass,
// sites, step tape, SIMD path) are inherited and read the model's θ slots, which come first;
// the controller's slots follow. One lane per rollout on the GPU (LanesPerRollout below): the
// network's layers are not lane-strided.
template <class Model>
struct Controlled : Model {
  // the reference adjoint sizes its dual arrays at run time: the controller's θ block is as
  // large as its widths make it (host only)
  static constexpr int kMaxState = 0;
  static constexpr int kMaxControl = 0;
  static constexpr int kMaxParam = 0;
  // CUDA kernels for the mass-spring robot's controlled struct (kernels/rollout_mass_spring_*.cu)
  static constexpr bool kCudaKernels = std::is_same<Model, MassSpring>::value;
  Policy policy;

  Controlled() = default;
  STEER_HD Controlled(const Model& m, const Policy& pol) : Model(m), policy(pol) {}

  STEER_HD int np() const { return policy.theta0 + policy.size(); }
  // the SIMD path for the mass-spring robot (packed_models.h lists Controlled<MassSpring>); for
  // other models this member hides the model's and takes no call, so has_packed_path is false
  // and the controlled struct runs on the scalar path
  template <class M = Model, std::enable_if_t<std::is_same<M, MassSpring>::value, int> = 0>
  bool packable() const {
    return M::packable();
  }

  // raw features r and the unit array (a_0 = o, a_1 .. a_L) at step k
  template <class S, class XIn, class PIn>
  STEER_HD void policy_forward(int k, const XIn& x, const PIn& p, S* raw, S* units) const {
    const Policy& P = policy;
    S center[3] = {S(0), S(0), S(0)};
    bool have[3] = {false, false, false};
    for (int i = 0; i < P.n_obs; ++i) {
      const int f = P.feature[i], ax = P.axis[i];
      S r = S(0);
      if (f == Policy::kState || f == Policy::kStateFromCenter) r = S(x[P.index[i]]);
      if (f == Policy::kStateFromCenter || f == Policy::kCenter) {
        if (!have[ax]) center[ax] = Model::template center_of_mass<S>(x, p, ax), have[ax] = true;
        r = f == Policy::kCenter ? center[ax] : S(r - center[ax]);
      }
      if (f == Policy::kPhase) {
        // sin(ω k h + 2π j/n)
        S sn, cs;
        sincos_of(S(P.phase_frequency * double(k) * P.dt +
                    6.283185307179586 * double(P.index[i]) / double(ax)),
                  sn, cs);
        r = sn;
      }
      if constexpr (has_sites<Model>::value) {
        if (f == Policy::kSite) {
          S s3[3];
          Model::template site_position<S>(x, p, P.index[i], s3);
          r = s3[ax];
        }
      }
      raw[i] = r;
      units[i] = S(p[P.obs_scale(i)]) * (r - S(p[P.obs_center(i)]));
    }
    for (int l = 0; l < P.n_layers; ++l) {
      const int nin = P.width[l], nout = P.width[l + 1], q0 = P.layer_begin(l);
      const S* in = units + P.unit_begin(l);
      S* out = units + P.unit_begin(l + 1);
      for (int r = 0; r < nout; ++r) {
        S z = S(0);
        for (int c = 0; c < nin; ++c) z += S(p[q0 + r * nin + c]) * in[c];
        z += S(p[q0 + nout * nin + r]);
        out[r] = policy_activation<S>(P.activation[l], z);
      }
    }
  }
  // y_a = σ_a a_L,a and u_eff,a = u_a + clamp(y_a, lo, hi)
  template <class S, class UIn, class PIn>
  STEER_HD void policy_actions(const UIn& u, const PIn& p, const S* units, S* y, S* ue) const {
    const Policy& P = policy;
    const S* aL = units + P.unit_begin(P.n_layers);
    for (int a = 0; a < P.n_actions(); ++a) {
      y[a] = S(p[P.action_scale(a)]) * aL[a];
      const S lo = S(P.clamp_lo), hi = S(P.clamp_hi);
      const S c = select(y[a] < lo, lo, select(y[a] > hi, hi, y[a]));
      ue[a] = S(u[a]) + c;
    }
  }

  template <class S, class XIn, class UIn, class PIn, class XOut, class Tape = NoTape>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}, Tape tape = nullptr) const {
    S raw[Policy::kMaxObs], units[Policy::kMaxUnits], y[Policy::kMaxWidth], ue[Policy::kMaxWidth];
    policy_forward<S>(k, x, p, raw, units);
    policy_actions<S>(u, p, units, y, ue);
    const View<const S> uv{ue, 1};
    Model::template step<S>(k, x, uv, p, xn, ln, tape);
  }

  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj, class Tape = NoTape>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{},
                         Tape tape = nullptr) const {
    const Policy& P = policy;
    S raw[Policy::kMaxObs], units[Policy::kMaxUnits], y[Policy::kMaxWidth], ue[Policy::kMaxWidth];
    policy_forward<S>(k, x, p, raw, units);
    policy_actions<S>(u, p, units, y, ue);
    const View<const S> uv{ue, 1};
    // ū_eff from the model's adjoint
    S ube[Policy::kMaxWidth];
    for (int a = 0; a < P.n_actions(); ++a) ube[a] = S(0);
    View<S> ubv{ube, 1};
    Model::template adj_step<S>(k, x, uv, p, adj_x, ubv, adj_p, adj_xn, ln, tape);
    // actions: ū += ū_eff; through the clamp and σ into ā_L (kept in y's storage)
    const S* aL = units + P.unit_begin(P.n_layers);
    for (int a = 0; a < P.n_actions(); ++a) {
      adj_u[a] += ube[a];
      const auto inside = (y[a] > S(P.clamp_lo)) && (y[a] < S(P.clamp_hi));
      const S yb = select(inside, ube[a], S(0));
      adj_p[P.action_scale(a)] += yb * aL[a];
      y[a] = yb * S(p[P.action_scale(a)]);
    }
    // layers, last to first: ā_l in cur, ā_{l−1} into prev (y's and ue's storage, free now)
    S* cur = y;
    S* prev = ue;
    for (int l = P.n_layers - 1; l >= 0; --l) {
      const int nin = P.width[l], nout = P.width[l + 1], q0 = P.layer_begin(l);
      const S* in = units + P.unit_begin(l);
      const S* out = units + P.unit_begin(l + 1);
      for (int c = 0; c < nin; ++c) prev[c] = S(0);
      for (int r = 0; r < nout; ++r) {
        const S zb = cur[r] * policy_activation_slope<S>(P.activation[l], out[r]);
        adj_p[q0 + nout * nin + r] += zb;
        for (int c = 0; c < nin; ++c) {
          adj_p[q0 + r * nin + c] += zb * in[c];
          prev[c] += S(p[q0 + r * nin + c]) * zb;
        }
      }
      S* t = cur;
      cur = prev;
      prev = t;
    }
    adj_features<S>(x, p, raw, cur, adj_x, adj_p);
  }

  // ō (in ob) through the normalization and the raw features into x̄ and θ̄
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_features(const XIn& x, const PIn& p, const S* raw, const S* ob, XAdj& adj_x,
                             PAdj& adj_p) const {
    const Policy& P = policy;
    S center_bar[3] = {S(0), S(0), S(0)};
    bool used[3] = {false, false, false};
    for (int i = 0; i < P.n_obs; ++i) {
      const S s = S(p[P.obs_scale(i)]), c = S(p[P.obs_center(i)]);
      adj_p[P.obs_scale(i)] += ob[i] * (raw[i] - c);
      adj_p[P.obs_center(i)] -= ob[i] * s;
      const S rb = ob[i] * s;
      const int f = P.feature[i], ax = P.axis[i];
      if (f == Policy::kState || f == Policy::kStateFromCenter) adj_x[P.index[i]] += rb;
      if (f == Policy::kStateFromCenter) center_bar[ax] -= rb, used[ax] = true;
      if (f == Policy::kCenter) center_bar[ax] += rb, used[ax] = true;
    }
    for (int ax = 0; ax < 3; ++ax)
      if (used[ax])
        contract::adj_center_of_mass_within<kAllIntegrators, S>(static_cast<const Model&>(*this), 0,
                                                                x, p, ax, adj_x, adj_p,
                                                                center_bar[ax]);
    if constexpr (has_sites<Model>::value) {
      // one adjoint call per site, its three coordinates gathered from every feature naming it
      for (int i = 0; i < P.n_obs; ++i) {
        if (P.feature[i] != Policy::kSite) continue;
        bool first = true;
        for (int j = 0; j < i; ++j) first = first && !(P.feature[j] == Policy::kSite && P.index[j] == P.index[i]);
        if (!first) continue;
        S sb[3] = {S(0), S(0), S(0)};
        for (int j = i; j < P.n_obs; ++j)
          if (P.feature[j] == Policy::kSite && P.index[j] == P.index[i])
            sb[P.axis[j]] += ob[j] * S(p[P.obs_scale(j)]);
        Model::template adj_site_position<S>(x, p, P.index[i], adj_x, adj_p, sb);
      }
    }
  }
};

template <class Model>
struct LanesPerRollout<Controlled<Model>> {
  static constexpr int value = 1;
};

}  // namespace steer
