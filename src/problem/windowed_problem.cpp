#include "problem/windowed_problem.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace steer {

namespace {

// the config at W steps: the same worlds, variables and loss over one window
ExperimentConfig window_config(const ExperimentConfig& c) {
  ExperimentConfig w = c;
  w.steps = c.optimizer.window_steps;
  w.checkpoint_every = 0;  // ⌈√W⌉
  // the window-end terms join the window's loss only: the horizon's (c.loss) stays as it is
  for (const auto& t : c.optimizer.window_terminal) {
    const int q = w.loss.n_terminal++;
    w.loss.terminal_index[q] = t.slot;
    w.loss.terminal_target[q] = t.target;
    w.loss.terminal_weight[q] = t.weight;
    w.loss.terminal_param[q] = -1;
  }
  return w;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

WindowedProblem::WindowedProblem(const ExperimentConfig& c, BackendKind backend, int threads)
    : c_(c), inner_(make_problem(window_config(c), backend, threads)) {
  W_ = c.optimizer.window_steps;
  T_ = c.steps;
  batch_size_ = c.batch_size;
  nx_ = c.info.nx();
  steps_ = W_;
  lower_ = inner_->lower();
  upper_ = inner_->upper();
  initial_ = inner_->initial();
  names_ = inner_->var_names();
  const Batch<double> nominal = build_batch(c);
  nu_ = nominal.nu;
  start_x0_.assign(nominal.x0_of(0), nominal.x0_of(0) + size_t(batch_size_) * nx_);
  u_.assign(nominal.u_of(0), nominal.u_of(0) + size_t(batch_size_) * T_ * nu_);
  carried_ = start_x0_;
  step_.assign(size_t(batch_size_), 0);
  condition_resets_.assign(c.optimizer.window_resets.size(), 0);
}

void WindowedProblem::evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  const int B = batch_size_;
  std::vector<double> u(size_t(B) * W_ * nu_);
  for (int b = 0; b < B; ++b)
    std::copy_n(u_.begin() + (size_t(b) * T_ + step_[size_t(b)]) * nu_, size_t(W_) * nu_,
                u.begin() + size_t(b) * W_ * nu_);
  if (!inner_->set_starts(carried_, u))
    throw std::logic_error("optimizer.window: the problem cannot restart its rollouts");
  inner_->evaluate(vars, want_grad, out);
  const std::vector<double> theta = inner_->parameters(vars);
  const int np = c_.info.np();
  // the horizon's terminal terms are terminal_linear's pairs (parse_window refuses the others):
  // their value at the window's start, a constant of the window, leaves L_b = w (x_e − x_s);
  // the window-end terms (optimizer.window.terminal) stay whole
  for (int b = 0; b < B; ++b)
    out.loss[size_t(b)] -=
        c_.loss.terminal<double>(carried_.data() + size_t(b) * nx_, theta.data() + size_t(b) * np);
  forward_rollout_steps += (long long)B * W_;
  if (want_grad) backward_rollout_steps += (long long)B * W_;
  // the horizon analysis of this window: ‖λ_s‖/‖λ_e‖ per world, its gradient's norm
  std::vector<double> growth, gnorm;
  const int nv = num_vars();
  for (int b = 0; b < B; ++b) {
    const RolloutDiag& d = out.diag[size_t(b)];
    if (d.adj_seed_norm > 0) growth.push_back(d.adj_x0_norm / d.adj_seed_norm);
    if (want_grad) {
      double n2 = 0;
      for (int i = 0; i < nv; ++i)
        n2 += out.grad[size_t(b) * nv + i] * out.grad[size_t(b) * nv + i];
      gnorm.push_back(std::sqrt(n2));
    }
  }
  if (windows_ < kMaxListed) {
    double mean = 0;
    for (double l : out.loss) mean += l / B;
    listed_.push_back({{"window", windows_},
                       {"start_step_rollout0", step_[0]},
                       {"loss_mean", mean},
                       {"gradient_norm_median", want_grad ? median_of(gnorm) : NAN},
                       {"adjoint_growth_median", median_of(growth)}});
  }
  ++windows_;
  advance(inner_->trajectories(vars, B, W_), theta);
}

// x_e of every world (the trajectories' second slot) becomes its next start, or its drawn x0
void WindowedProblem::advance(const std::vector<double>& ends, const std::vector<double>& theta) {
  (void)theta;
  const auto& resets = c_.optimizer.window_resets;
  for (int b = 0; b < batch_size_; ++b) {
    const double* xe = ends.data() + (size_t(b) * 2 + 1) * nx_;
    double* x = carried_.data() + size_t(b) * nx_;
    int& k = step_[size_t(b)];
    k += W_;
    bool reset = false;
    if (k >= T_) {
      reset = true, ++horizon_resets_;
    } else if (!std::all_of(xe, xe + nx_, [](double v) { return std::isfinite(v); })) {
      reset = true, ++nonfinite_resets_;
    } else {
      for (size_t r = 0; r < resets.size() && !reset; ++r) {
        const double v = xe[resets[r].slot];
        if (resets[r].below ? v < resets[r].value : v > resets[r].value)
          reset = true, ++condition_resets_[r];
      }
    }
    if (reset) {
      std::copy_n(start_x0_.begin() + size_t(b) * nx_, nx_, x);
      k = 0;
    } else {
      std::copy_n(xe, nx_, x);
    }
  }
}

nlohmann::json WindowedProblem::summary() const {
  nlohmann::json conditions = nlohmann::json::array();
  const auto& resets = c_.optimizer.window_resets;
  for (size_t r = 0; r < resets.size(); ++r)
    conditions.push_back({{"state", resets[r].name},
                          {resets[r].below ? "below" : "above", resets[r].value},
                          {"resets", condition_resets_[r]}});
  return {{"steps", W_},
          {"windows_per_horizon", T_ / W_},
          {"windows_run", windows_},
          {"resets",
           {{"horizon_end", horizon_resets_},
            {"nonfinite_state", nonfinite_resets_},
            {"conditions", conditions}}},
          {"loss",
           "each window's terms with its start held constant: c(x_e) - c(x_s), effort, "
           "w (x_e - x_s) for terminal_linear, 0.5 w (x_e - target)^2 for window.terminal"},
          {"per_window", listed_},
          {"per_window_listed", std::min<long long>(windows_, kMaxListed)}};
}

}  // namespace steer
