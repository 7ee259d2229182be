// The real-coded GA of ga.h: tournament selection, bounded SBX and polynomial mutation as in
// Deb's NSGA-II reference code (nsga2-v1.1, crossover.c and mutation.c), elitist replacement.
#include "optim/ga.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace steer {

namespace {

// Deb's code crosses a variable only where the parents differ by more than this
constexpr double kSbxMinGap = 1e-14;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("ga: " + what);
}

bool in_unit_interval(double p) { return p >= 0 && p <= 1; }

// β_q of bounded SBX: the inverse CDF of the spread factor's polynomial distribution
// (density ½(η+1)β^η for β ≤ 1, ½(η+1)β^{−(η+2)} beyond), truncated at the spread β that puts
// the child on its bound and renormalized: α/2 = 1 − ½ β^{−(η+1)} is the mass kept
double sbx_beta_q(double beta, double eta_c, double u) {
  const double alpha = 2.0 - std::pow(beta, -(eta_c + 1.0));
  if (u <= 1.0 / alpha) return std::pow(u * alpha, 1.0 / (eta_c + 1.0));
  return std::pow(1.0 / (2.0 - u * alpha), 1.0 / (eta_c + 1.0));
}

}  // namespace

int ga_default_population(int n) { return 4 * cmaes_default_lambda(n); }

double ga_uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

void sbx_crossover(Eigen::Ref<Eigen::VectorXd> a, Eigen::Ref<Eigen::VectorXd> b,
                   const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, double eta_c,
                   std::mt19937_64& rng) {
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    if (ga_uniform(rng) >= 0.5) continue;  // this variable is copied
    const double y1 = std::min(a[i], b[i]), y2 = std::max(a[i], b[i]);
    if (!(y2 - y1 > kSbxMinGap)) continue;
    const double yl = lo[i], yu = hi[i], gap = y2 - y1;
    const double u = ga_uniform(rng);
    // the child near y1 may spread down to yl, the one near y2 up to yu
    const double bq1 = sbx_beta_q(1.0 + 2.0 * (y1 - yl) / gap, eta_c, u);
    const double bq2 = sbx_beta_q(1.0 + 2.0 * (yu - y2) / gap, eta_c, u);
    // the clamp only guards against rounding: β_q keeps both children inside
    const double c1 = std::min(std::max(0.5 * ((y1 + y2) - bq1 * gap), yl), yu);
    const double c2 = std::min(std::max(0.5 * ((y1 + y2) + bq2 * gap), yl), yu);
    if (ga_uniform(rng) < 0.5) {
      a[i] = c2;
      b[i] = c1;
    } else {
      a[i] = c1;
      b[i] = c2;
    }
  }
}

void polynomial_mutation(Eigen::Ref<Eigen::VectorXd> x, const Eigen::VectorXd& lo,
                         const Eigen::VectorXd& hi, double eta_m, double prob,
                         std::mt19937_64& rng) {
  const double mut_pow = 1.0 / (eta_m + 1.0);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (ga_uniform(rng) >= prob) continue;
    const double yl = lo[i], yu = hi[i], width = yu - yl;
    if (!(width > 0)) continue;  // a fixed variable
    const double y = x[i], delta1 = (y - yl) / width, delta2 = (yu - y) / width;
    const double u = ga_uniform(rng);
    // δ_q ∈ [−δ_1, 0] for u < ½ and [0, δ_2] above: the distribution is bent so that its
    // ends are the bounds
    double deltaq;
    if (u <= 0.5) {
      const double val = 2.0 * u + (1.0 - 2.0 * u) * std::pow(1.0 - delta1, eta_m + 1.0);
      deltaq = std::pow(val, mut_pow) - 1.0;
    } else {
      const double val = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * std::pow(1.0 - delta2, eta_m + 1.0);
      deltaq = 1.0 - std::pow(val, mut_pow);
    }
    x[i] = std::min(std::max(y + deltaq * width, yl), yu);
  }
}

Ga::Ga(const GaOptions& options) : opt_(options), rng_(options.seed) { init(nullptr); }

Ga::Ga(const Eigen::VectorXd& start, const GaOptions& options) : opt_(options), rng_(options.seed) {
  init(&start);
}

void Ga::init(const Eigen::VectorXd* start) {
  n_ = start ? int(start->size()) : int(opt_.lower.size());
  require(n_ >= 1, "at least one variable is needed (the box gives n without a start point)");
  require(int(opt_.lower.size()) == n_ && int(opt_.upper.size()) == n_,
          "lower and upper are required, " + std::to_string(n_) + " entries each");
  lo_ = Eigen::Map<const Eigen::VectorXd>(opt_.lower.data(), n_);
  hi_ = Eigen::Map<const Eigen::VectorXd>(opt_.upper.data(), n_);
  for (int i = 0; i < n_; ++i)
    require(std::isfinite(lo_[i]) && std::isfinite(hi_[i]) && lo_[i] <= hi_[i],
            "the box needs finite lower[" + std::to_string(i) + "] <= upper[" + std::to_string(i) +
                "]");
  require(opt_.population == 0 || opt_.population >= 2,
          "population must be 0 (default) or >= 2, got " + std::to_string(opt_.population));
  lambda_ = opt_.population > 0 ? opt_.population : ga_default_population(n_);
  require(opt_.elite >= 0 && opt_.elite < lambda_,
          "elite must be in [0, population), got " + std::to_string(opt_.elite));
  require(opt_.tournament >= 1, "tournament must be >= 1");
  require(in_unit_interval(opt_.crossover_prob), "crossover_prob must be in [0, 1]");
  require(in_unit_interval(opt_.mutation_prob), "mutation_prob must be in [0, 1] (0 = 1/n)");
  require(opt_.eta_c >= 0 && std::isfinite(opt_.eta_c), "eta_c must be finite and >= 0");
  require(opt_.eta_m >= 0 && std::isfinite(opt_.eta_m), "eta_m must be finite and >= 0");
  pm_ = opt_.mutation_prob > 0 ? opt_.mutation_prob : 1.0 / n_;
  if (opt_.max_evaluations <= 0) opt_.max_evaluations = 1000LL * n_ * n_;

  // the initial population: per variable uniform on [a_i, b_i], the box, or with a start point
  // s the box ∩ [s − √3σ0, s + √3σ0] (standard deviation σ0 before the intersection)
  Eigen::VectorXd a = lo_, b = hi_, s;
  if (start) {
    require(start->allFinite(), "the start point must be finite");
    require(opt_.sigma0 > 0, "sigma0 must be > 0 (+inf: the whole box)");
    s = start->cwiseMax(lo_).cwiseMin(hi_);
    const double half = std::sqrt(3.0) * opt_.sigma0;
    for (int i = 0; i < n_; ++i) {
      a[i] = std::max(lo_[i], s[i] - half);
      b[i] = std::min(hi_[i], s[i] + half);
    }
  }
  X_.resize(n_, lambda_);
  for (int k = 0; k < lambda_; ++k)
    for (int i = 0; i < n_; ++i) X_(i, k) = a[i] + (b[i] - a[i]) * uniform();
  if (start) X_.col(0) = s;
  best_x_ = X_.col(0);
}

double Ga::uniform() { return ga_uniform(rng_); }

std::string Ga::method() const {
  std::ostringstream o;
  o << "generational real-coded GA: population " << lambda_ << ", tournament " << opt_.tournament
    << ", SBX eta_c " << opt_.eta_c << " with probability " << opt_.crossover_prob
    << " (bounded, NSGA-II code), polynomial mutation eta_m " << opt_.eta_m << " with probability "
    << pm_ << " per variable (bounded, NSGA-II code), elite " << opt_.elite
    << " (best lambda of elites and children survive); bounds: both operators "
       "keep children inside the box";
  return o.str();
}

int Ga::pick() {
  // the population is sorted best first: the lowest index drawn wins
  int best = lambda_;
  for (int t = 0; t < opt_.tournament; ++t)
    best = std::min(best, std::min(int(uniform() * lambda_), lambda_ - 1));
  return best;
}

void Ga::breed() {
  Eigen::VectorXd c1(n_), c2(n_);
  for (int k = 0; k < lambda_; k += 2) {
    c1 = pop_.col(pick());
    c2 = pop_.col(pick());
    if (uniform() < opt_.crossover_prob) sbx_crossover(c1, c2, lo_, hi_, opt_.eta_c, rng_);
    polynomial_mutation(c1, lo_, hi_, opt_.eta_m, pm_, rng_);
    polynomial_mutation(c2, lo_, hi_, opt_.eta_m, pm_, rng_);
    X_.col(k) = c1;
    if (k + 1 < lambda_) X_.col(k + 1) = c2;  // an odd λ drops the last pair's second child
  }
}

const Eigen::MatrixXd& Ga::ask() {
  // the initial population was drawn by the constructor; ask() again before tell() returns
  // the same points
  if (!asked_ && generation_ > 0) breed();
  asked_ = true;
  return X_;
}

void Ga::tell(const Eigen::VectorXd& f_in) {
  if (!asked_) throw std::logic_error("ga: tell() without ask()");
  if (f_in.size() != lambda_) throw std::invalid_argument("ga: tell() needs population values");
  asked_ = false;
  evaluations_ += lambda_;
  ++generation_;

  // non-finite values rank last; the mean is over the finite ones
  Eigen::VectorXd f = f_in;
  double sum = 0;
  int finite = 0;
  for (int k = 0; k < lambda_; ++k) {
    if (!std::isfinite(f[k])) {
      f[k] = std::numeric_limits<double>::infinity();
      continue;
    }
    sum += f[k];
    ++finite;
    if (f[k] < best_f_) {
      best_f_ = f[k];
      best_x_ = X_.col(k);
    }
  }

  // replacement: the elites of the previous population (first, so they win ties) and the
  // children; the λ best survive, sorted best first
  const int e = generation_ == 1 ? 0 : opt_.elite;
  Eigen::MatrixXd cand(n_, e + lambda_);
  Eigen::VectorXd cand_f(e + lambda_);
  if (e > 0) {  // before the first generation there is no population
    cand.leftCols(e) = pop_.leftCols(e);
    cand_f.head(e) = pop_f_.head(e);
  }
  cand.rightCols(lambda_) = X_;
  cand_f.tail(lambda_) = f;
  std::vector<int> order(e + lambda_);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cand_f[a] < cand_f[b]; });
  pop_.resize(n_, lambda_);
  pop_f_.resize(lambda_);
  for (int k = 0; k < lambda_; ++k) {
    pop_.col(k) = cand.col(order[k]);
    pop_f_[k] = cand_f[order[k]];
  }

  history_.generation.push_back(generation_);
  history_.evaluations.push_back(evaluations_);
  history_.best_f.push_back(best_f_);
  history_.mean_f.push_back(finite > 0 ? sum / finite : std::numeric_limits<double>::quiet_NaN());

  if (best_f_ <= opt_.target_f)
    stop_reason_ = "target_f";
  else if (evaluations_ + lambda_ > opt_.max_evaluations)
    stop_reason_ = "max_evaluations";
}

GaResult Ga::minimize(const BatchObjective& objective,
                      const std::function<void(int, double)>& progress) {
  return minimize_population<GaResult>(*this, lambda_, objective, progress);
}

OptimizationResult ga_optimize(Problem& p, const GaOptions& options,
                               const std::vector<double>& start,
                               const std::function<void(int, double)>& progress,
                               GaHistory* history) {
  const auto t0 = std::chrono::steady_clock::now();
  const int nv = p.num_vars(), B = p.batch_size();
  const int lambda = options.population > 0 ? options.population : ga_default_population(nv);
  check_population_run("ga", p, lambda, start);

  GaOptions o = options;
  o.population = lambda;
  o.lower = p.lower();
  o.upper = p.upper();
  // the start is rollout 0's row when a whole batch is given
  Ga ga(Eigen::Map<const Eigen::VectorXd>(start.data(), nv), o);

  OptimizationResult res;
  std::vector<double> vars(size_t(B) * nv);
  Evaluation ev;
  // individual k runs as rollout k: one batched forward pass per generation
  auto objective = [&](const Eigen::MatrixXd& X, Eigen::VectorXd& f) {
    for (int k = 0; k < B; ++k)
      Eigen::Map<Eigen::VectorXd>(vars.data() + size_t(k) * nv, nv) = X.col(k);
    p.evaluate(vars, false, ev);
    int best = -1;
    for (int k = 0; k < B; ++k) {
      f[k] = ev.loss[k];
      if (std::isfinite(f[k]) && (best < 0 || f[k] < f[best])) best = k;
    }
    // the variables' path is the best point so far, this generation included, one row: the
    // population's rows are a scattered set, not a path
    const Eigen::VectorXd x =
        best >= 0 && f[best] < ga.best_f() ? Eigen::VectorXd(X.col(best)) : ga.best_x();
    record_losses(res.trace, ga.generation(), ev.loss, std::vector<double>(x.data(), x.data() + nv),
                  nv);
  };
  const GaResult r = ga.minimize(objective, progress);

  finish_population_run(p, r.best_x, r.generations, t0, res);
  if (history) *history = r.history;
  return res;
}

nlohmann::json to_json(const GaHistory& h) {
  return {{"generation", h.generation},
          {"evaluations", h.evaluations},
          {"best_f", h.best_f},
          {"mean_f", h.mean_f}};
}

}  // namespace steer
