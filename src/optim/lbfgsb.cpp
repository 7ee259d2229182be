#include "optim/lbfgsb.h"

#include <LBFGSB.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace steer {

namespace {

struct Abort {};            // the batched evaluation failed: unwind every solver
struct StopEvaluations {};  // this rollout used its evaluation budget
struct StopNonfinite {};    // f or ∇f is not finite at the start

// The rendezvous. Each lane (thread) is running (inside its solver, or between rollouts),
// waiting (its f(x, ∇f) has written x into its row of vars), or finished. When no lane is
// running and some are waiting, the calling thread evaluates the batch once and releases them.
class Rendezvous {
 public:
  Rendezvous(Problem& p, std::vector<double>& vars, int lanes)
      : p_(p), vars_(vars), running_(lanes) {}

  // called by a lane after writing its row: blocks until the batch has been evaluated
  const Evaluation& wait_for_evaluation() {
    std::unique_lock<std::mutex> lock(mu_);
    const long long ticket = round_;
    ++waiting_;
    --running_;
    coordinator_cv_.notify_one();
    lanes_cv_.wait(lock, [&] { return round_ != ticket || abort_; });
    if (abort_) throw Abort{};
    return ev_;
  }

  void lane_finished() {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    coordinator_cv_.notify_one();
  }

  bool aborted() {
    std::lock_guard<std::mutex> lock(mu_);
    return abort_;
  }

  // the calling thread's loop; after_evaluation(ev) runs while every lane is blocked
  void serve(const std::function<void(const Evaluation&)>& after_evaluation) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      coordinator_cv_.wait(lock, [&] { return running_ == 0; });
      if (waiting_ == 0) return;  // every lane finished
      lock.unlock();
      try {
        p_.evaluate(vars_, true, ev_);
        after_evaluation(ev_);
      } catch (...) {
        lock.lock();
        abort_ = true;
        error_ = std::current_exception();
        lanes_cv_.notify_all();
        return;
      }
      lock.lock();
      running_ = waiting_;
      waiting_ = 0;
      ++round_;
      lanes_cv_.notify_all();
    }
  }

  std::exception_ptr error() const { return error_; }

 private:
  Problem& p_;
  std::vector<double>& vars_;
  Evaluation ev_;
  std::mutex mu_;
  std::condition_variable coordinator_cv_, lanes_cv_;
  int running_, waiting_ = 0;
  long long round_ = 0;
  bool abort_ = false;
  std::exception_ptr error_;
};

// f(x, ∇f) of one rollout, served by the rendezvous; keeps the best point it has seen and
// counts the rollout's evaluations and its accepted steps (the line search calls
// step_accepted() once per step it takes)
struct RolloutObjective {
  Rendezvous& rv;
  std::vector<double>& vars;
  int b, nv;
  long long max_evaluations;
  int& iterations;  // this rollout's entry of the report, read by the rendezvous's coordinator
  long long evaluations = 0;
  double best_f = INFINITY;
  Eigen::VectorXd best_x;

  // written before this lane next waits at the rendezvous (or finishes), whose mutex orders
  // it before the coordinator reads it
  void step_accepted() { ++iterations; }

  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    if (max_evaluations > 0 && evaluations >= max_evaluations) throw StopEvaluations{};
    std::copy(x.data(), x.data() + nv, vars.begin() + size_t(b) * nv);
    const Evaluation& ev = rv.wait_for_evaluation();
    ++evaluations;
    const double f = ev.loss[b];
    grad = Eigen::Map<const Eigen::VectorXd>(ev.grad.data() + size_t(b) * nv, nv);
    // a non-finite trial point is "too far" for the line search; at the start it ends the rollout
    if (!std::isfinite(f) || !grad.allFinite()) {
      if (evaluations == 1) throw StopNonfinite{};
      return std::numeric_limits<double>::infinity();
    }
    if (f < best_f || best_x.size() == 0) {
      best_f = f;
      best_x = x;
    }
    return f;
  }
};

// Line search for LBFGSBSolver's LineSearch slot, on φ(α) = f(x_p + α d), 0 < α ≤ α_max:
// strong Wolfe conditions φ(α) ≤ φ(0) + c₁ α φ'(0), |φ'(α)| ≤ c₂ |φ'(0)| (c₁ = ftol, c₂ = wolfe)
// by bracketing and zoom with safeguarded cubic interpolation (Nocedal & Wright, Numerical
// Optimization, 2nd ed., Alg. 3.5 and 3.6, eq. 3.59). Written here because Debian's LBFGS++
// 0.1.0 Moré–Thuente search passes a function value where a step is expected (LBFGSpp issue
// #9, fixed upstream in PR #25). At α_max (the box edge) a step with sufficient decrease is
// taken as is, as in L-BFGS-B. A non-finite φ counts as "too far". If no step meets both
// conditions within max_linesearch trials, the best one with sufficient decrease is taken.
// Every step taken is reported to the objective (f.step_accepted(): one iteration).
template <class Scalar>
class BracketingWolfeSearch {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  struct Trial {
    Scalar a, f, dg;  // α, φ(α), φ'(α)
    Vector x, g;
  };

  // minimizer of the cubic through (a, f_a, d_a), (b, f_b, d_b), kept 10% inside [a, b];
  // the midpoint when the cubic has none or a value is not finite
  static Scalar cubic_step(const Trial& p, const Trial& q) {
    const Scalar lo = std::min(p.a, q.a), hi = std::max(p.a, q.a), margin = Scalar(0.1) * (hi - lo);
    Scalar a = Scalar(0.5) * (p.a + q.a);
    if (std::isfinite(p.f) && std::isfinite(q.f) && std::isfinite(p.dg) && std::isfinite(q.dg)) {
      // d1 = φ'_p + φ'_q − 3(φ_p − φ_q)/(α_p − α_q), d2 = sign(α_q − α_p) √(d1² − φ'_p φ'_q),
      // α = α_q − (α_q − α_p)(φ'_q + d2 − d1)/(φ'_q − φ'_p + 2 d2)
      const Scalar d1 = p.dg + q.dg - 3 * (p.f - q.f) / (p.a - q.a);
      const Scalar disc = d1 * d1 - p.dg * q.dg;
      if (disc >= 0) {
        const Scalar d2 = (q.a > p.a ? 1 : -1) * std::sqrt(disc);
        const Scalar den = q.dg - p.dg + 2 * d2;
        if (den != 0) {
          const Scalar c = q.a - (q.a - p.a) * (q.dg + d2 - d1) / den;
          if (std::isfinite(c)) a = c;
        }
      }
    }
    return std::min(std::max(a, lo + margin), hi - margin);
  }

 public:
  template <typename Foo>
  static void LineSearch(Foo& f, Scalar& fx, Vector& x, Vector& grad, Scalar& step,
                         const Scalar& step_max, const Vector& drt, const Vector& xp,
                         const LBFGSpp::LBFGSBParam<Scalar>& param) {
    const Scalar f0 = fx, dg0 = grad.dot(drt);
    if (!(dg0 < 0))
      throw std::logic_error("the moving direction does not decrease the objective function value");
    const Scalar armijo = param.ftol * dg0, curvature = -param.wolfe * dg0;
    int trials = 0;
    auto evaluate = [&](Scalar a) {
      Trial t{a, 0, 0, xp + a * drt, Vector(xp.size())};
      t.f = f(t.x, t.g);
      t.dg = t.g.dot(drt);
      ++trials;
      return t;
    };
    auto sufficient = [&](const Trial& t) { return t.f <= f0 + t.a * armijo; };  // false for NaN
    auto accept = [&](const Trial& t) {
      f.step_accepted();
      x = t.x;
      fx = t.f;
      grad = t.g;
      step = t.a;
    };

    // bracketing: grow α until φ rises, fails sufficient decrease, or turns upward
    Trial lo{0, f0, dg0, xp, grad}, hi;
    Trial prev = lo;
    Scalar a = std::min(step, step_max);
    for (;;) {
      Trial t = evaluate(a);
      if (!sufficient(t) || (trials > 1 && t.f >= prev.f)) {
        lo = prev;
        hi = t;
        break;
      }
      if (std::abs(t.dg) <= curvature) return accept(t);
      if (t.dg >= 0) {
        lo = t;
        hi = prev;
        break;
      }
      if (a >= step_max || trials >= param.max_linesearch) return accept(t);
      prev = t;
      a = std::min(2 * a, step_max);
    }

    // zoom: lo has sufficient decrease and the lowest φ; the minimizer lies between lo and hi
    while (trials < param.max_linesearch &&
           std::abs(hi.a - lo.a) > std::numeric_limits<Scalar>::epsilon() * std::max(lo.a, hi.a)) {
      Trial t = evaluate(cubic_step(lo, hi));
      if (!sufficient(t) || t.f >= lo.f) {
        hi = t;
      } else {
        if (std::abs(t.dg) <= curvature) return accept(t);
        if (t.dg * (hi.a - lo.a) >= 0) hi = lo;
        lo = t;
      }
    }
    if (lo.a > 0) return accept(lo);
    throw std::runtime_error("the line search found no step with sufficient decrease");
  }
};

}  // namespace

OptimizationResult lbfgsb_optimize(Problem& p, const OptimizerConfig& cfg,
                                   const std::vector<double>& start, const LbfgsbProgress& progress,
                                   const LbfgsbOptions& options, LbfgsbReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  const int B = p.batch_size(), nv = p.num_vars();
  if (start.size() != size_t(B) * nv)
    throw std::invalid_argument(
        "lbfgsb: start needs batch_size·num_vars = " + std::to_string(size_t(B) * nv) + " values");
  LBFGSpp::LBFGSBParam<double> param;
  param.m = options.memory;
  param.epsilon = options.epsilon;
  param.epsilon_rel = options.epsilon_rel;
  param.past = options.past;
  param.delta = options.delta;
  param.max_linesearch = options.max_linesearch;
  param.max_submin = options.max_submin;
  param.max_iterations = cfg.iterations;
  param.check_param();  // throws std::invalid_argument naming the bad field

  OptimizationResult res;
  LbfgsbReport rep;
  rep.iterations.assign(B, 0);
  rep.evaluations.assign(B, 0);
  rep.status.assign(B, cfg.iterations > 0 ? "" : "max_iterations");
  std::vector<double> vars = start;
  project_to_bounds(p, vars);

  if (cfg.iterations > 0 && B > 0 && nv > 0) {
    const Eigen::VectorXd lb = Eigen::Map<const Eigen::VectorXd>(p.lower().data(), nv);
    const Eigen::VectorXd ub = Eigen::Map<const Eigen::VectorXd>(p.upper().data(), nv);
    const int lanes = std::max(1, std::min(options.max_solvers, B));
    Rendezvous rv(p, vars, lanes);
    std::mutex next_mu;
    int next_rollout = 0;

    // one lane: takes rollouts in order until none is left
    auto lane = [&] {
      for (;;) {
        int b;
        {
          std::lock_guard<std::mutex> lock(next_mu);
          b = next_rollout++;
        }
        if (b >= B || rv.aborted()) break;
        RolloutObjective f{rv,
                           vars,
                           b,
                           nv,
                           options.max_evaluations,
                           rep.iterations[size_t(b)],
                           0,
                           INFINITY,
                           Eigen::VectorXd()};
        Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(vars.data() + size_t(b) * nv, nv);
        std::string status;
        try {
          LBFGSpp::LBFGSBSolver<double, BracketingWolfeSearch> solver(param);
          double fx = 0;
          // minimize returns LBFGS++'s count, which is 1 for a start that already meets epsilon;
          // the report keeps the steps taken
          solver.minimize(f, x, fx, lb, ub);
          status = rep.iterations[b] >= cfg.iterations ? "max_iterations" : "converged";
        } catch (const Abort&) {
          break;
        } catch (const StopEvaluations&) {
          status = "max_evaluations";
        } catch (const StopNonfinite&) {
          status = "nonfinite";
        } catch (const std::exception& e) {
          status = std::string("line_search: ") + e.what();
        }
        rep.status[b] = status;
        rep.evaluations[b] = f.evaluations;
        // the row holds the best point from here on (the start if nothing finite was seen)
        if (f.best_x.size() == nv)
          std::copy(f.best_x.data(), f.best_x.data() + nv, vars.begin() + size_t(b) * nv);
      }
      rv.lane_finished();
    };

    // each rollout's best loss so far, over the batched evaluations
    // and the point that gave it (the variables' path in the trace): while after_evaluation
    // runs every lane is blocked, so `vars` holds the points just evaluated and the report's
    // iteration counts are those of the steps taken so far
    std::vector<double> best(B, INFINITY), best_vars = vars;
    auto after_evaluation = [&](const Evaluation& ev) {
      const int round = ++rep.batched_evaluations;
      for (int b = 0; b < B; ++b)
        if (ev.loss[b] < best[b]) {
          best[b] = ev.loss[b];
          std::copy(vars.begin() + size_t(b) * nv, vars.begin() + size_t(b + 1) * nv,
                    best_vars.begin() + size_t(b) * nv);
        }
      if ((round - 1) % std::max(1, cfg.log_every) == 0) {
        record_losses(res.trace, round - 1, best, best_vars, nv);
        if (progress)
          progress(*std::max_element(rep.iterations.begin(), rep.iterations.end()), round,
                   res.trace.loss_mean.back());
      }
    };

    std::vector<std::thread> threads;
    threads.reserve(lanes);
    for (int i = 0; i < lanes; ++i) threads.emplace_back(lane);
    rv.serve(after_evaluation);
    for (auto& t : threads) t.join();
    if (rv.error()) std::rethrow_exception(rv.error());
  }

  p.evaluate(vars, true, res.final);
  record_losses(res.trace, rep.batched_evaluations, res.final.loss, vars, nv);
  // the most iterations any rollout took: the count that cfg.iterations bounds
  res.iterations = B > 0 ? *std::max_element(rep.iterations.begin(), rep.iterations.end()) : 0;
  if (progress) progress(res.iterations, rep.batched_evaluations, res.trace.loss_mean.back());
  res.vars = vars;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report) *report = std::move(rep);
  return res;
}

nlohmann::json to_json(const LbfgsbReport& r) {
  return {{"iterations", r.iterations},
          {"evaluations", r.evaluations},
          {"status", r.status},
          {"batched_evaluations", r.batched_evaluations}};
}

}  // namespace steer
