#include "optim/optimizer.h"

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

double finite_median(const std::vector<double>& x) {
  std::vector<double> f;
  f.reserve(x.size());
  for (double v : x)
    if (std::isfinite(v)) f.push_back(v);
  if (f.empty()) return NAN;
  const size_t h = f.size() / 2;
  std::nth_element(f.begin(), f.begin() + h, f.end());
  if (f.size() % 2) return f[h];
  // even count: the lower middle is the largest of the lower half
  const double lo = *std::max_element(f.begin(), f.begin() + h);
  return 0.5 * (lo + f[h]);
}

// appends one entry (mean/min/max/median over the batch's finite losses, first ≤ 16 rollouts,
// small problems' variables) to the trace; a batch with no finite loss has a NaN mean and median
void record_losses(OptimizationTrace& t, int it, const std::vector<double>& loss,
                   const std::vector<double>& vars, int nv) {
  double sum = 0, mn = INFINITY, mx = -INFINITY;
  size_t finite = 0;
  for (double l : loss) {
    if (!std::isfinite(l)) continue;
    ++finite;
    sum += l;
    mn = std::min(mn, l);
    mx = std::max(mx, l);
  }
  t.iteration.push_back(it);
  t.loss_mean.push_back(loss.empty() ? 0 : finite ? sum / double(finite) : NAN);
  t.loss_min.push_back(mn);
  t.loss_max.push_back(mx);
  const size_t keep = std::min<size_t>(loss.size(), 16);
  t.loss_rollouts.emplace_back(loss.begin(), loss.begin() + keep);
  t.loss_median.push_back(loss.empty() ? 0 : finite_median(loss));
  if (nv > 0 && nv <= kTraceMaxVars && vars.size() >= size_t(nv)) {
    const size_t rows = std::min<size_t>(vars.size() / size_t(nv), kTraceVarRollouts);
    t.vars_per_rollout = nv;
    t.vars.emplace_back(vars.begin(), vars.begin() + rows * size_t(nv));
  }
}

double scheduled_learning_rate(const OptimizerConfig& cfg, int t) {
  const double e0 = cfg.learning_rate, ef = cfg.learning_rate_final;
  if (cfg.lr_schedule == "constant" || cfg.iterations <= 1) return e0;
  // s ∈ [0, 1]: the fraction of the schedule done; step 0 takes η_0, step N−1 takes η_f
  const double s = std::min(1.0, double(std::max(t, 0)) / double(cfg.iterations - 1));
  if (cfg.lr_schedule == "cosine") return ef + (e0 - ef) * 0.5 * (1.0 + std::cos(M_PI * s));
  if (cfg.lr_schedule == "exponential") return e0 * std::pow(ef / e0, s);  // ef > 0 (config check)
  return e0;
}

GradientStepper::GradientStepper(const OptimizerConfig& cfg, int batch, int nv)
    : cfg_(cfg), batch_(batch), nv_(nv) {
  if (cfg.method == "adam")
    m1_.assign(size_t(batch) * nv, 0.0), m2_.assign(size_t(batch) * nv, 0.0);
}

void GradientStepper::step(const Problem& p, std::vector<double>& v, std::vector<double>& grad) {
  const double eta = scheduled_learning_rate(cfg_, t_);
  ++t_;
  // Adam's bias corrections 1 − β^t
  const double c1 = 1.0 - std::pow(cfg_.beta1, t_), c2 = 1.0 - std::pow(cfg_.beta2, t_);
  for (int b = 0; b < batch_; ++b) {
    double* g = grad.data() + size_t(b) * nv_;
    double n2 = 0;
    for (int i = 0; i < nv_; ++i) n2 += g[i] * g[i];
    if (!std::isfinite(n2)) continue;  // a non-finite gradient: no step for this row
    // on a chaotic rollout a contact event can make one gradient 1e2–1e4 times the usual
    // norm; clipping keeps it from throwing the iterate away and from inflating Adam's
    // second moment (which would freeze the row for ~1/(1 − β2) steps)
    if (cfg_.gradient_clip > 0 && n2 > cfg_.gradient_clip * cfg_.gradient_clip) {
      const double s = cfg_.gradient_clip / std::sqrt(n2);
      for (int i = 0; i < nv_; ++i) g[i] *= s;
      ++clipped_;
    }
    double* x = v.data() + size_t(b) * nv_;
    if (cfg_.method == "gd" && cfg_.normalize_gradient) {
      // v ← P(v − η g/(‖g‖ + 10⁻⁶)), after any clip
      double m2 = 0;
      for (int i = 0; i < nv_; ++i) m2 += g[i] * g[i];
      const double s = eta / (std::sqrt(m2) + 1e-6);
      for (int i = 0; i < nv_; ++i) x[i] -= s * g[i];
    } else if (cfg_.method == "gd") {
      // v ← P(v − η g)
      for (int i = 0; i < nv_; ++i) x[i] -= eta * g[i];
    } else {
      // Kingma & Ba: m ← β1 m + (1−β1) g, s ← β2 s + (1−β2) g², v ← P(v − η m̂/(√ŝ + ε))
      double* m1 = m1_.data() + size_t(b) * nv_;
      double* m2 = m2_.data() + size_t(b) * nv_;
      for (int i = 0; i < nv_; ++i) {
        m1[i] = cfg_.beta1 * m1[i] + (1 - cfg_.beta1) * g[i];
        m2[i] = cfg_.beta2 * m2[i] + (1 - cfg_.beta2) * g[i] * g[i];
        x[i] -= eta * (m1[i] / c1) / (std::sqrt(m2[i] / c2) + cfg_.adam_eps);
      }
    }
  }
  project_to_bounds(p, v);
}

OptimizationResult optimize(Problem& p, const OptimizerConfig& cfg,
                            const std::vector<double>& start,
                            const std::function<void(int, double)>& progress,
                            const BatchView& view) {
  OptimizationResult res;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<double> v = start;
  project_to_bounds(p, v);
  GradientStepper stepper(cfg, p.batch_size(), p.num_vars());
  Evaluation ev;
  // each rollout's best iterate so far: on contact-rich (chaotic) landscapes a step can make
  // the loss worse, and the result should be the best design seen, not the last one
  const int B = p.batch_size(), nv = p.num_vars();
  std::vector<double> best_loss(B, INFINITY), best_v = v;
  auto keep_best = [&](const std::vector<double>& loss) {
    // over windows (optimizer.window) each loss is another window's: the result is the last iterate
    if (cfg.window_steps > 0) {
      best_v = v;
      return;
    }
    for (int b = 0; b < B; ++b)
      // a later iterate wins ties within rounding (1e-12 relative): at convergence the loss
      // stalls at its rounding floor while the iterate still improves
      if (loss[b] <= best_loss[b] + 1e-12 * std::fabs(best_loss[b]) ||
          !std::isfinite(best_loss[b])) {
        best_loss[b] = loss[b];
        std::copy(v.begin() + size_t(b) * nv, v.begin() + size_t(b + 1) * nv,
                  best_v.begin() + size_t(b) * nv);
      }
  };
  // the trace's entry of iteration `it`: the whole batch's losses, and the leading rows' variables
  // when the trace keeps them
  auto record = [&](int it, const std::vector<double>& loss) {
    if (!view.gather) {
      record_losses(res.trace, it, loss, v, nv);
      return;
    }
    const bool keeps_vars = nv > 0 && nv <= kTraceMaxVars;
    record_losses(
        res.trace, it, view.gather(loss, 1, -1),
        keeps_vars ? view.gather(v, size_t(nv), kTraceVarRollouts) : std::vector<double>(), nv);
  };
  for (int it = 0; it < cfg.iterations; ++it) {
    p.evaluate(v, true, ev);
    keep_best(ev.loss);
    if (it % cfg.log_every == 0) {
      record(it, ev.loss);
      if (progress) progress(it, res.trace.loss_mean.back());
    }
    if (cfg.method == "gd" || cfg.method == "adam") stepper.step(p, v, ev.grad);
    res.iterations = it + 1;
  }
  p.evaluate(v, true, res.final);
  keep_best(res.final.loss);
  // the batch is evaluated again when any rollout's best iterate is not its last one, so every
  // part takes this evaluation together and counts it as one process would
  const bool moved = best_v != v;
  if (view.any ? view.any(moved) : moved) {
    v = best_v;
    p.evaluate(v, true, res.final);
  }
  record(res.iterations, res.final.loss);
  if (progress) progress(res.iterations, res.trace.loss_mean.back());
  res.vars = v;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

nlohmann::json to_json(const OptimizationTrace& t) {
  nlohmann::json j = {{"iteration", t.iteration},     {"loss_mean", t.loss_mean},
                      {"loss_min", t.loss_min},       {"loss_max", t.loss_max},
                      {"loss_median", t.loss_median}, {"loss_first_rollouts", t.loss_rollouts}};
  if (t.vars_per_rollout > 0) {
    j["vars_per_rollout"] = t.vars_per_rollout;
    j["vars_first_rollouts"] = t.vars;
  }
  return j;
}

}  // namespace steer
