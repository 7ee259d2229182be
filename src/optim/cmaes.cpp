// CMA-ES written from Hansen, "The CMA Evolution Strategy: A Tutorial" (2016), Appendix A.
#include "optim/cmaes.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace steer {

int cmaes_default_lambda(int n) { return 4 + int(std::floor(3.0 * std::log(double(n)))); }

std::string Cmaes::method() {
  return "(mu/mu_w, lambda)-CMA-ES (Hansen 2016 defaults); bounds: evaluate clamp(x) and rank by "
         "f(clamp(x)) + gamma/n |x - clamp(x)|^2, gamma = 2 IQR(f)/(sigma^2 mean(diag C)) fixed "
         "when first needed";
}

Cmaes::Cmaes(const Eigen::VectorXd& mean0, const CmaesOptions& options)
    : n_(int(mean0.size())), opt_(options), rng_(options.seed) {
  if (n_ < 1) throw std::invalid_argument("cmaes: at least one variable is needed");
  if (!(opt_.sigma0 > 0) || !std::isfinite(opt_.sigma0))
    throw std::invalid_argument("cmaes: sigma0 must be finite and > 0, got " +
                                std::to_string(opt_.sigma0));
  if (opt_.lambda != 0 && opt_.lambda < 2)
    throw std::invalid_argument("cmaes: lambda must be 0 (default) or >= 2, got " +
                                std::to_string(opt_.lambda));
  if (!mean0.allFinite()) throw std::invalid_argument("cmaes: the start point must be finite");

  // selection and recombination: λ = 4 + ⌊3 ln n⌋, µ = ⌊λ/2⌋,
  // w'_i = ln((λ+1)/2) − ln i (i = 1..µ), w_i = w'_i / Σ w'_j, µ_eff = (Σ w_i)² / Σ w_i² = 1 / Σ
  // w_i²
  lambda_ = opt_.lambda > 0 ? opt_.lambda : cmaes_default_lambda(n_);
  mu_ = lambda_ / 2;
  w_.resize(mu_);
  for (int i = 0; i < mu_; ++i) w_[i] = std::log((lambda_ + 1) / 2.0) - std::log(i + 1.0);
  w_ /= w_.sum();
  mu_eff_ = 1.0 / w_.squaredNorm();

  const double n = n_;
  // step-size control: c_σ = (µ_eff + 2)/(n + µ_eff + 5), d_σ = 1 + 2 max(0, √((µ_eff − 1)/(n + 1))
  // − 1) + c_σ
  c_sigma_ = (mu_eff_ + 2) / (n + mu_eff_ + 5);
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (n + 1)) - 1) + c_sigma_;
  // covariance adaptation (α_cov = 2): c_c = (4 + µ_eff/n)/(n + 4 + 2µ_eff/n), c_1 = 2/((n + 1.3)²
  // + µ_eff), c_µ = min(1 − c_1, 2(µ_eff − 2 + 1/µ_eff)/((n + 2)² + µ_eff))
  c_c_ = (4 + mu_eff_ / n) / (n + 4 + 2 * mu_eff_ / n);
  c_1_ = 2 / ((n + 1.3) * (n + 1.3) + mu_eff_);
  c_mu_ = std::min(1 - c_1_, 2 * (mu_eff_ - 2 + 1 / mu_eff_) / ((n + 2) * (n + 2) + mu_eff_));
  // E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²))
  chi_n_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
  // B, D are refreshed every max(1, ⌊1/(10 n (c_1 + c_µ))⌋) generations: O(n²) work per evaluation
  eigen_interval_ = std::max(1, int(std::floor(1.0 / (10 * n * (c_1_ + c_mu_)))));

  if (opt_.max_evaluations <= 0) opt_.max_evaluations = 1000LL * n_ * n_;

  bounded_ = !opt_.lower.empty() || !opt_.upper.empty();
  if (bounded_) {
    if (int(opt_.lower.size()) != n_ || int(opt_.upper.size()) != n_)
      throw std::invalid_argument("cmaes: lower and upper need " + std::to_string(n_) +
                                  " entries each");
    lo_ = Eigen::Map<const Eigen::VectorXd>(opt_.lower.data(), n_);
    hi_ = Eigen::Map<const Eigen::VectorXd>(opt_.upper.data(), n_);
    for (int i = 0; i < n_; ++i)
      if (!(lo_[i] <= hi_[i]))
        throw std::invalid_argument("cmaes: lower[" + std::to_string(i) + "] > upper[" +
                                    std::to_string(i) + "]");
  }

  m_ = bounded_ ? Eigen::VectorXd(mean0.cwiseMax(lo_).cwiseMin(hi_)) : mean0;
  sigma_ = opt_.sigma0;
  p_sigma_ = Eigen::VectorXd::Zero(n_);
  p_c_ = Eigen::VectorXd::Zero(n_);
  C_ = Eigen::MatrixXd::Identity(n_, n_);
  B_ = Eigen::MatrixXd::Identity(n_, n_);
  D_ = Eigen::VectorXd::Ones(n_);
  best_x_ = m_;
}

double Cmaes::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // u1 ∈ (0, 1], u2 ∈ [0, 1): z = √(−2 ln u1) (cos 2πu2, sin 2πu2)
  const double u1 = double((rng_() >> 11) + 1) * 0x1.0p-53;
  const double u2 = double(rng_() >> 11) * 0x1.0p-53;
  const double r = std::sqrt(-2 * std::log(u1)), a = 2 * M_PI * u2;
  spare_ = r * std::sin(a);
  has_spare_ = true;
  return r * std::cos(a);
}

void Cmaes::decompose() {
  // C = B diag(D²) Bᵀ; the solver reads the lower triangle; rounding may leave tiny negative
  // eigenvalues, which are floored
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(C_);
  B_ = es.eigenvectors();
  D_ = es.eigenvalues().cwiseMax(1e-300).cwiseSqrt();
  last_decomposition_ = generation_;
}

const Eigen::MatrixXd& Cmaes::ask() {
  // z_k ~ N(0, I), y_k = B D z_k ~ N(0, C), x_k = m + σ y_k
  Z_.resize(n_, lambda_);
  for (int k = 0; k < lambda_; ++k)
    for (int i = 0; i < n_; ++i) Z_(i, k) = normal();
  Y_ = B_ * D_.asDiagonal() * Z_;
  X_ = (sigma_ * Y_).colwise() + m_;
  X_eval_ = X_;
  if (bounded_)
    for (int k = 0; k < lambda_; ++k) X_eval_.col(k) = X_.col(k).cwiseMax(lo_).cwiseMin(hi_);
  asked_ = true;
  return X_eval_;
}

void Cmaes::tell(const Eigen::VectorXd& f_in) {
  if (!asked_) throw std::logic_error("cmaes: tell() without ask()");
  if (f_in.size() != lambda_) throw std::invalid_argument("cmaes: tell() needs lambda values");
  asked_ = false;
  evaluations_ += lambda_;
  ++generation_;

  // non-finite values rank last; the best feasible point so far is kept
  Eigen::VectorXd f = f_in;
  for (int k = 0; k < lambda_; ++k) {
    if (!std::isfinite(f[k])) f[k] = std::numeric_limits<double>::infinity();
    if (f[k] < best_f_) {
      best_f_ = f[k];
      best_x_ = X_eval_.col(k);
    }
  }

  // ranking value: f(x̃) + γ/n ‖x − x̃‖², with γ = 2 IQR(f(x̃)) / (σ² mean_i C_ii) fixed at the
  // first generation that has a candidate outside the box and a spread in f. A fixed γ lets
  // the mean settle a constant distance outside an active face, where f(x̃) is flat and the
  // penalty smooth; a γ scaled with σ² would keep the kink of f at the face under the mean.
  Eigen::VectorXd rank_value = f;
  if (bounded_) {
    Eigen::VectorXd d2(lambda_);
    for (int k = 0; k < lambda_; ++k) d2[k] = (X_.col(k) - X_eval_.col(k)).squaredNorm();
    double gamma = penalty_weight_;
    if (gamma == 0 && d2.maxCoeff() > 0) {
      std::vector<double> finite;
      for (int k = 0; k < lambda_; ++k)
        if (std::isfinite(f[k])) finite.push_back(f[k]);
      std::sort(finite.begin(), finite.end());
      const double iqr =
          finite.size() < 2 ? 0.0 : finite[(3 * finite.size()) / 4] - finite[finite.size() / 4];
      if (iqr > 0) penalty_weight_ = 2 * iqr / (sigma_ * sigma_ * C_.diagonal().mean());
      gamma = iqr > 0 ? penalty_weight_ : 1.0;  // no spread: the penalty alone ranks
    }
    rank_value += (gamma / n_) * d2;
  }
  std::vector<int> order(lambda_);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return rank_value[a] < rank_value[b]; });

  // ⟨y⟩_w = Σ_{i≤µ} w_i y_{i:λ}, and the same for z
  Eigen::MatrixXd y_sel(n_, mu_);
  Eigen::VectorXd y_w = Eigen::VectorXd::Zero(n_), z_w = Eigen::VectorXd::Zero(n_);
  for (int i = 0; i < mu_; ++i) {
    y_sel.col(i) = Y_.col(order[i]);
    y_w += w_[i] * Y_.col(order[i]);
    z_w += w_[i] * Z_.col(order[i]);
  }

  // mean: m ← m + c_m σ ⟨y⟩_w, c_m = 1
  m_ += sigma_ * y_w;

  // conjugate evolution path: p_σ ← (1 − c_σ) p_σ + √(c_σ(2 − c_σ)µ_eff) C^{−½}⟨y⟩_w,
  // where C^{−½}⟨y⟩_w = B D⁻¹ Bᵀ B D ⟨z⟩_w = B ⟨z⟩_w for the B, D the samples were drawn with
  p_sigma_ =
      (1 - c_sigma_) * p_sigma_ + std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_) * (B_ * z_w);

  // h_σ = 1 if ‖p_σ‖ / √(1 − (1 − c_σ)^{2(g+1)}) < (1.4 + 2/(n + 1)) E‖N(0, I)‖
  const double ps_norm = p_sigma_.norm();
  const bool h_sigma = ps_norm / std::sqrt(1 - std::pow(1 - c_sigma_, 2.0 * generation_)) <
                       (1.4 + 2.0 / (n_ + 1)) * chi_n_;

  // evolution path: p_c ← (1 − c_c) p_c + h_σ √(c_c(2 − c_c)µ_eff) ⟨y⟩_w
  p_c_ = (1 - c_c_) * p_c_;
  if (h_sigma) p_c_ += std::sqrt(c_c_ * (2 - c_c_) * mu_eff_) * y_w;

  // covariance: C ← (1 + c_1 δ(h_σ) − c_1 − c_µ Σw) C + c_1 p_c p_cᵀ + c_µ Σ w_i y_{i:λ} y_{i:λ}ᵀ,
  // δ(h_σ) = (1 − h_σ) c_c (2 − c_c), Σw = 1
  const double delta_h = h_sigma ? 0.0 : c_c_ * (2 - c_c_);
  C_ = (1 + c_1_ * delta_h - c_1_ - c_mu_) * C_ + c_1_ * (p_c_ * p_c_.transpose()) +
       c_mu_ * (y_sel * w_.asDiagonal() * y_sel.transpose());

  // step size: σ ← σ exp((c_σ/d_σ)(‖p_σ‖/E‖N(0, I)‖ − 1))
  sigma_ *= std::exp((c_sigma_ / d_sigma_) * (ps_norm / chi_n_ - 1));

  if (generation_ - last_decomposition_ >= eigen_interval_) decompose();

  history_.generation.push_back(generation_);
  history_.evaluations.push_back(evaluations_);
  history_.best_f.push_back(best_f_);
  history_.sigma.push_back(sigma_);

  // stopping criteria, checked in this order
  const double cond = (D_.maxCoeff() / D_.minCoeff()) * (D_.maxCoeff() / D_.minCoeff());
  if (best_f_ <= opt_.target_f)
    stop_reason_ = "target_f";
  else if (evaluations_ + lambda_ > opt_.max_evaluations)
    stop_reason_ = "max_evaluations";
  else if (!(sigma_ * std::sqrt(C_.diagonal().maxCoeff()) >= opt_.tol_x))
    stop_reason_ = "tol_x";
  else if (!(cond <= opt_.max_condition))
    stop_reason_ = "max_condition";
}

CmaesResult Cmaes::minimize(const BatchObjective& objective,
                            const std::function<void(int, double)>& progress) {
  return minimize_population<CmaesResult>(*this, lambda_, objective, progress);
}

void check_population_run(const std::string& method, const Problem& p, int lambda,
                          const std::vector<double>& start) {
  const int nv = p.num_vars(), B = p.batch_size();
  if (B != lambda)
    throw std::invalid_argument(method + ": the Problem's batch size (" + std::to_string(B) +
                                ") must equal the population size (" + std::to_string(lambda) +
                                ")");
  if (start.size() != size_t(nv) && start.size() != size_t(B) * nv)
    throw std::invalid_argument(method + ": start needs num_vars (" + std::to_string(nv) +
                                ") values");
}

void finish_population_run(Problem& p, const Eigen::VectorXd& best_x, int generations,
                           std::chrono::steady_clock::time_point t0, OptimizationResult& res) {
  const int nv = p.num_vars(), B = p.batch_size();
  std::vector<double> vars(size_t(B) * nv);
  for (int k = 0; k < B; ++k)
    Eigen::Map<Eigen::VectorXd>(vars.data() + size_t(k) * nv, nv) = best_x;
  p.evaluate(vars, true, res.final);
  // the last entry's variables are the best point found, the one returned
  record_losses(res.trace, generations, res.final.loss,
                std::vector<double>(vars.begin(), vars.begin() + nv), nv);
  res.vars = vars;
  res.iterations = generations;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

OptimizationResult cmaes_optimize(Problem& p, const CmaesOptions& options,
                                  const std::vector<double>& start,
                                  const std::function<void(int, double)>& progress,
                                  CmaesHistory* history) {
  const auto t0 = std::chrono::steady_clock::now();
  const int nv = p.num_vars(), B = p.batch_size();
  const int lambda = options.lambda > 0 ? options.lambda : cmaes_default_lambda(nv);
  check_population_run("cmaes", p, lambda, start);

  CmaesOptions o = options;
  o.lambda = lambda;
  o.lower = p.lower();
  o.upper = p.upper();
  // the start is rollout 0's row when a whole batch is given
  Cmaes es(Eigen::Map<const Eigen::VectorXd>(start.data(), nv), o);

  OptimizationResult res;
  std::vector<double> vars(size_t(B) * nv);
  Evaluation ev;
  // candidate k runs as rollout k: one batched forward pass per generation
  auto objective = [&](const Eigen::MatrixXd& X, Eigen::VectorXd& f) {
    for (int k = 0; k < B; ++k)
      Eigen::Map<Eigen::VectorXd>(vars.data() + size_t(k) * nv, nv) = X.col(k);
    p.evaluate(vars, false, ev);
    for (int k = 0; k < B; ++k) f[k] = ev.loss[k];
    // the variables' path is the search distribution's mean (the centre these candidates were
    // drawn around), one row: the population's rows are random draws, not a path
    const Eigen::VectorXd& m = es.mean();
    record_losses(res.trace, es.generation(), ev.loss, std::vector<double>(m.data(), m.data() + nv),
                  nv);
  };
  const CmaesResult r = es.minimize(objective, progress);

  finish_population_run(p, r.best_x, r.generations, t0, res);
  if (history) *history = r.history;
  return res;
}

nlohmann::json to_json(const CmaesHistory& h) {
  return {{"generation", h.generation},
          {"evaluations", h.evaluations},
          {"best_f", h.best_f},
          {"sigma", h.sigma}};
}

}  // namespace steer
