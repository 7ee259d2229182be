#include "optimizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace steer {

void project_to_bounds(const Problem& p, std::vector<double>& vars) {
  const int nv = p.num_vars();
  const auto& lo = p.lower();
  const auto& hi = p.upper();
  for (size_t i = 0; i < vars.size(); ++i) {
    const int k = int(i % nv);
    vars[i] = std::min(std::max(vars[i], lo[k]), hi[k]);
  }
}

// appends one entry (mean/min/max over the batch, first ≤ 16 rollouts) to the trace
void record_losses(OptimizationTrace& t, int it, const std::vector<double>& loss) {
  double sum = 0, mn = INFINITY, mx = -INFINITY;
  for (double l : loss) {
    sum += l;
    mn = std::min(mn, l);
    mx = std::max(mx, l);
  }
  t.iteration.push_back(it);
  t.loss_mean.push_back(loss.empty() ? 0 : sum / loss.size());
  t.loss_min.push_back(mn);
  t.loss_max.push_back(mx);
  const size_t keep = std::min<size_t>(loss.size(), 16);
  t.loss_rollouts.emplace_back(loss.begin(), loss.begin() + keep);
}


OptimizationResult optimize(Problem& p, const OptimizerConfig& cfg, const std::vector<double>& start,
                            const std::function<void(int, double)>& progress) {
  OptimizationResult res;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<double> v = start;
  project_to_bounds(p, v);
  const size_t n = v.size();
  std::vector<double> m1(n, 0.0), m2(n, 0.0);  // Adam moments
  Evaluation ev;
  // each rollout's best iterate so far: on contact-rich (chaotic) landscapes a step can make
  // the loss worse, and the result should be the best design seen, not the last one
  const int B = p.batch_size(), nv = p.num_vars();
  std::vector<double> best_loss(B, INFINITY), best_v = v;
  auto keep_best = [&](const std::vector<double>& loss) {
    for (int b = 0; b < B; ++b)
      // a later iterate wins ties within rounding (1e-12 relative): at convergence the loss
      // stalls at its rounding floor while the iterate still improves
      if (loss[b] <= best_loss[b] + 1e-12 * std::fabs(best_loss[b]) || !std::isfinite(best_loss[b])) {
        best_loss[b] = loss[b];
        std::copy(v.begin() + size_t(b) * nv, v.begin() + size_t(b + 1) * nv, best_v.begin() + size_t(b) * nv);
      }
  };
  for (int it = 0; it < cfg.iterations; ++it) {
    p.evaluate(v, true, ev);
    keep_best(ev.loss);
    if (it % cfg.log_every == 0) {
      record_losses(res.trace, it, ev.loss);
      if (progress) progress(it, res.trace.loss_mean.back());
    }
    if (cfg.method == "gd") {
      // v ← P(v − η ∇L)
      for (size_t i = 0; i < n; ++i) v[i] -= cfg.learning_rate * ev.grad[i];
    } else if (cfg.method == "adam") {
      // Kingma & Ba: m ← β1 m + (1−β1) g, s ← β2 s + (1−β2) g², v ← P(v − η m̂/(√ŝ + ε))
      const double c1 = 1.0 - std::pow(cfg.beta1, it + 1), c2 = 1.0 - std::pow(cfg.beta2, it + 1);
      for (size_t i = 0; i < n; ++i) {
        const double g = ev.grad[i];
        m1[i] = cfg.beta1 * m1[i] + (1 - cfg.beta1) * g;
        m2[i] = cfg.beta2 * m2[i] + (1 - cfg.beta2) * g * g;
        v[i] -= cfg.learning_rate * (m1[i] / c1) / (std::sqrt(m2[i] / c2) + cfg.adam_eps);
      }
    }
    project_to_bounds(p, v);
    res.iterations = it + 1;
  }
  p.evaluate(v, true, res.final);
  keep_best(res.final.loss);
  if (best_v != v) {
    v = best_v;
    p.evaluate(v, true, res.final);
  }
  record_losses(res.trace, res.iterations, res.final.loss);
  if (progress) progress(res.iterations, res.trace.loss_mean.back());
  res.vars = v;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

nlohmann::json to_json(const OptimizationTrace& t) {
  return {{"iteration", t.iteration},
          {"loss_mean", t.loss_mean},
          {"loss_min", t.loss_min},
          {"loss_max", t.loss_max},
          {"loss_first_rollouts", t.loss_rollouts}};
}

}  // namespace steer
