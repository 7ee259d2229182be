// Building the site and tracking terms of a Loss by hand, and a Panda batch, for the loss tests
// (losses_test.cpp, losses_emulated_test.cpp).
#pragma once

#include <cmath>
#include <vector>

#include "config/config.h"
#include "steer/batch.h"
#include "steer/loss.h"

namespace steer::testing {

// appends a site term: ½ w ‖p_site − target‖² at x_T, or at every x_k with running; coordinate
// a's target is θ[param[a]] where param is given and param[a] ≥ 0, else target[a]
inline void add_site_term(Loss& l, int site, double weight, bool running, const double target[3],
                          const int* param = nullptr) {
  const int t = l.n_site++;
  l.site_index[t] = site;
  l.site_weight[t] = weight;
  l.site_running[t] = running;
  for (int a = 0; a < 3; ++a) {
    l.site_target[t][a] = target[a];
    l.site_param[t][a] = param ? param[a] : -1;
  }
}

// points l at a tracking table of `rows` rows over the channels (table: [rows][channels][2],
// kept alive by the caller)
inline void point_at_table(Loss& l, int rows, const std::vector<int>& channels,
                           const std::vector<double>& table) {
  l.n_track = int(channels.size());
  l.track_rows = rows;
  for (size_t c = 0; c < channels.size(); ++c) l.track_channel[c] = channels[c];
  l.track = table.data();
}

// B rollouts of the config's model from its x0 and θ, controls amp·sin(freq·i + r) (i the
// index into rollout r's T·nu controls)
inline Batch<double> sine_batch(const ExperimentConfig& c, int nx, int nu, int np, int B, int T,
                                double amp, double freq) {
  Batch<double> b;
  b.resize(B, nx, nu, np, T);
  for (int r = 0; r < B; ++r) {
    std::copy(c.x0.begin(), c.x0.end(), b.x0_of(r));
    std::copy(c.theta.begin(), c.theta.end(), b.theta_of(r));
    for (int k = 0; k < T * nu; ++k) b.u_of(r)[k] = amp * std::sin(freq * k + r);
  }
  return b;
}

}  // namespace steer::testing
