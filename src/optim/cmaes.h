// CMA-ES: the (µ/µ_w, λ) covariance matrix adaptation evolution strategy with Hansen's
// default strategy parameters, driven by a batched objective (all λ candidates of a
// generation in one call, i.e. one batched forward pass of the simulator).
// Reference: N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (2016),
// whose Appendix A (Table 1 and the algorithm summary) gives every update used here.
// Bounds: each candidate x is evaluated at its projection x̃ = clamp(x, l, u) and ranked by
// f(x̃) + γ/n ‖x − x̃‖², γ = 2 IQR(f(x̃)) / (σ² mean_i C_ii) set once, at the first generation
// with a candidate outside the box: a simplified form of the penalty of Hansen et al., IEEE
// TEC 13(1), 2009 (one weight, not adapted later). The objective only ever sees points inside
// the box, and the best point reported is always one of them.
#pragma once

#include <Eigen/Dense>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "optim/optimizer.h"
#include "problem/problem.h"

namespace steer {

struct CmaesOptions {
  double sigma0 = 0.3;            // initial step size σ⁽⁰⁾, in variable units
  int lambda = 0;                 // population size; 0 = 4 + ⌊3 ln n⌋
  long long max_evaluations = 0;  // 0 = 1000·n²
  double target_f = -std::numeric_limits<double>::infinity();  // stop once best f ≤ target_f
  double tol_x = 1e-12;         // stop when σ·max_i √C_ii < tol_x (variable units)
  double max_condition = 1e14;  // stop when cond(C) exceeds this
  std::uint64_t seed = 1;
  std::vector<double> lower, upper;  // box [lower, upper]; empty = unbounded
};

// one entry per generation
struct CmaesHistory {
  std::vector<int> generation;
  std::vector<long long> evaluations;  // objective evaluations so far (λ per generation)
  std::vector<double> best_f;          // best f so far, of a point inside the box
  std::vector<double> sigma;           // σ after the generation's update
};

struct CmaesResult {
  Eigen::VectorXd best_x;  // inside the box
  double best_f = std::numeric_limits<double>::infinity();
  long long evaluations = 0;
  int generations = 0;
  std::string stop_reason;  // target_f | max_evaluations | tol_x | max_condition
  CmaesHistory history;
};

// (X n×λ, one candidate per column) -> (f λ)
using BatchObjective = std::function<void(const Eigen::MatrixXd& X, Eigen::VectorXd& f)>;

// the start of a population method's run on a Problem: the batch must be the population
// (lambda rows) and start num_vars values or a whole batch (invalid_argument naming `method`)
void check_population_run(const std::string& method, const Problem& p, int lambda,
                          const std::vector<double>& start);
// the end of a population method's run on a Problem (cmaes_optimize, ga_optimize): best_x in
// every row, evaluated with its gradient into res.final, the trace's last entry (that point's
// losses), res.vars, res.iterations = generations and res.seconds since t0
void finish_population_run(Problem& p, const Eigen::VectorXd& best_x, int generations,
                           std::chrono::steady_clock::time_point t0, OptimizationResult& res);

// the ask/tell loop of a population method M (Cmaes, Ga: ask, tell, stop_reason, generation,
// best_x, best_f, evaluations, history) until one of its stopping criteria holds, and its result
// R (the same fields); unevaluated entries of f are NaN, which ranks last
template <class R, class M>
R minimize_population(M& m, int lambda, const BatchObjective& objective,
                      const std::function<void(int, double)>& progress) {
  Eigen::VectorXd f(lambda);
  while (m.stop_reason().empty()) {
    const Eigen::MatrixXd& X = m.ask();
    f.setConstant(std::numeric_limits<double>::quiet_NaN());
    objective(X, f);
    m.tell(f);
    if (progress) progress(m.generation(), m.best_f());
  }
  R r;
  r.best_x = m.best_x();
  r.best_f = m.best_f();
  r.evaluations = m.evaluations();
  r.generations = m.generation();
  r.stop_reason = m.stop_reason();
  r.history = m.history();
  return r;
}

class Cmaes {
 public:
  Cmaes(const Eigen::VectorXd& mean0, const CmaesOptions& options);

  // default strategy parameters (tutorial Table 1, positive weights only)
  int n() const { return n_; }
  int lambda() const { return lambda_; }
  int mu() const { return mu_; }
  const Eigen::VectorXd& weights() const { return w_; }  // [µ], Σ w_i = 1, decreasing
  double mu_eff() const { return mu_eff_; }
  double c_sigma() const { return c_sigma_; }
  double d_sigma() const { return d_sigma_; }
  double c_c() const { return c_c_; }
  double c_1() const { return c_1_; }
  double c_mu() const { return c_mu_; }
  double chi_n() const { return chi_n_; }  // E‖N(0, I)‖
  int eigen_interval() const { return eigen_interval_; }

  // how bounds are handled, for the artifact
  static std::string method();

  // samples the next generation; returns the λ points to evaluate (n×λ), inside the box
  const Eigen::MatrixXd& ask();
  // f of ask()'s columns (non-finite values rank last); updates m, σ, C, p_σ, p_c
  void tell(const Eigen::VectorXd& f);
  // non-empty once a stopping criterion holds
  const std::string& stop_reason() const { return stop_reason_; }

  // ask/tell until a stopping criterion holds
  CmaesResult minimize(
      const BatchObjective& objective,
      const std::function<void(int generation, double best_f)>& progress = nullptr);

  const Eigen::VectorXd& mean() const { return m_; }
  double sigma() const { return sigma_; }
  const Eigen::MatrixXd& covariance() const { return C_; }
  const Eigen::VectorXd& best_x() const { return best_x_; }
  double best_f() const { return best_f_; }
  long long evaluations() const { return evaluations_; }
  int generation() const { return generation_; }
  const CmaesHistory& history() const { return history_; }

 private:
  double normal();   // N(0, 1) by Box–Muller on mt19937_64: the same stream on every platform
  void decompose();  // C = B D² Bᵀ

  int n_, lambda_, mu_;
  Eigen::VectorXd w_;
  double mu_eff_, c_sigma_, d_sigma_, c_c_, c_1_, c_mu_, chi_n_;
  int eigen_interval_;
  CmaesOptions opt_;
  bool bounded_;
  Eigen::VectorXd lo_, hi_;

  Eigen::VectorXd m_, p_sigma_, p_c_;
  double sigma_;
  Eigen::MatrixXd C_, B_;
  Eigen::VectorXd D_;  // √eigenvalues of C
  int last_decomposition_ = 0;
  double penalty_weight_ = 0;  // γ; 0 until set

  Eigen::MatrixXd Z_, Y_, X_, X_eval_;  // z_k ~ N(0, I), y_k = B D z_k, x_k = m + σ y_k, clamp(x_k)
  bool asked_ = false;
  std::mt19937_64 rng_;
  bool has_spare_ = false;
  double spare_ = 0;

  Eigen::VectorXd best_x_;
  double best_f_ = std::numeric_limits<double>::infinity();
  long long evaluations_ = 0;
  int generation_ = 0;
  std::string stop_reason_;
  CmaesHistory history_;
};

// CMA-ES on the variables of ONE rollout, with the Problem's batch as the population:
// requires p.batch_size() == λ (options.lambda, or the default for n = p.num_vars()), so
// each generation is one call p.evaluate(vars, false, ·) with candidate k in row k.
// Bounds are p.lower()/p.upper() (options.lower/upper are ignored). Returns the best point
// replicated to every row, its evaluation (with gradient) in `final`, a trace with one entry
// per generation (loss over the population) and, if asked, the per-generation history.
// iterations = generations.
OptimizationResult cmaes_optimize(
    Problem& p, const CmaesOptions& options, const std::vector<double>& start,
    const std::function<void(int generation, double best_f)>& progress = nullptr,
    CmaesHistory* history = nullptr);

// the population size CMA-ES uses for n variables: 4 + ⌊3 ln n⌋
int cmaes_default_lambda(int n);

nlohmann::json to_json(const CmaesHistory& h);

}  // namespace steer
