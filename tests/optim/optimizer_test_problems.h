// Analytic batched Problems with known minimizers, for the optimizer tests (cmaes_test,
// lbfgsb_test): no simulator, exact gradients, and an evaluation counter.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace steer_test_problems {

// no trajectories: the optimizers only call evaluate(). No `override` on these, so the base
// may gain or lose such queries without breaking these problems.
class AnalyticProblem : public steer::Problem {
 public:
  std::vector<double> trajectories(const std::vector<double>&, int, int) { return {}; }
  std::vector<double> parameters(const std::vector<double>&) { return {}; }
  std::vector<double> com_displacement(const std::vector<double>&, int, int) { return {}; }
};

// L_b(v) = ½ Σ_i a_i (v_i − c_{b,i})²: separable, so the minimizer over the box [lo, hi] is
// the per-coordinate clamp of c_b
class QuadraticProblem : public AnalyticProblem {
 public:
  QuadraticProblem(std::vector<std::vector<double>> centers, std::vector<double> curvature,
                   std::vector<double> lo, std::vector<double> hi, std::vector<double> start)
      : c_(std::move(centers)), a_(std::move(curvature)) {
    batch_size_ = int(c_.size());
    lower_ = std::move(lo);
    upper_ = std::move(hi);
    for (size_t i = 0; i < a_.size(); ++i) names_.push_back("v" + std::to_string(i));
    for (int b = 0; b < batch_size_; ++b)
      initial_.insert(initial_.end(), start.begin(), start.end());
  }

  void evaluate(const std::vector<double>& v, bool want_grad, steer::Evaluation& out) override {
    const int nv = num_vars();
    if (v.size() != size_t(batch_size_) * nv)
      throw std::logic_error("QuadraticProblem: wrong vars size");
    ++evaluations;
    if (want_grad) ++gradient_evaluations;
    out.loss.assign(batch_size_, 0.0);
    out.grad.assign(want_grad ? v.size() : 0, 0.0);
    out.diag.assign(batch_size_, steer::RolloutDiag{});
    for (int b = 0; b < batch_size_; ++b)
      for (int i = 0; i < nv; ++i) {
        const double r = v[size_t(b) * nv + i] - c_[b][i];
        out.loss[b] += 0.5 * a_[i] * r * r;
        if (want_grad) out.grad[size_t(b) * nv + i] = a_[i] * r;
      }
  }

  std::vector<double> projected_minimizer(int b) const {
    std::vector<double> m(c_[b]);
    for (size_t i = 0; i < m.size(); ++i) m[i] = std::min(std::max(m[i], lower_[i]), upper_[i]);
    return m;
  }

  int evaluations = 0, gradient_evaluations = 0;

 private:
  std::vector<std::vector<double>> c_;
  std::vector<double> a_;
};

// L_b(v) = ½ (v − c_b)ᵀ A (v − c_b) with a dense SPD A: coupled coordinates, so a bound that
// is active moves the others. c_b is built from a chosen box point x*_b and multipliers so that
// x*_b satisfies the KKT conditions (∇L = 0 on free coordinates, ≥ 0 at lower bounds, ≤ 0 at
// upper bounds): x*_b is then the unique minimizer over the box (L is strictly convex).
class DenseQuadraticProblem : public AnalyticProblem {
 public:
  // A = Q diag(1 … κ) Qᵀ with Q from a fixed rotation sequence; x*_b and its active sets given
  DenseQuadraticProblem(int n, double kappa, double lo, double hi,
                        std::vector<std::vector<double>> minimizers,
                        std::vector<std::vector<double>> multipliers)
      : x_star_(std::move(minimizers)) {
    batch_size_ = int(x_star_.size());
    lower_.assign(n, lo);
    upper_.assign(n, hi);
    for (int i = 0; i < n; ++i) names_.push_back("v" + std::to_string(i));
    initial_.assign(size_t(batch_size_) * n, 0.5 * (lo + hi));
    Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(n, n);
    for (int i = 0; i + 1 < n; ++i) {  // Givens rotations by 0.3 + 0.1 i rad in planes (i, i+1)
      const double t = 0.3 + 0.1 * i, c = std::cos(t), s = std::sin(t);
      for (int r = 0; r < n; ++r) {
        const double a = Q(r, i), b = Q(r, i + 1);
        Q(r, i) = c * a - s * b;
        Q(r, i + 1) = s * a + c * b;
      }
    }
    Eigen::VectorXd d(n);
    for (int i = 0; i < n; ++i) d[i] = std::pow(kappa, double(i) / (n - 1));
    A_ = Q * d.asDiagonal() * Q.transpose();
    // ∇L(x*) = A (x* − c) = g*  ⇒  c = x* − A⁻¹ g*
    for (int b = 0; b < batch_size_; ++b) {
      const Eigen::VectorXd xs = Eigen::Map<const Eigen::VectorXd>(x_star_[b].data(), n);
      const Eigen::VectorXd gs = Eigen::Map<const Eigen::VectorXd>(multipliers[b].data(), n);
      c_.push_back(xs - A_.ldlt().solve(gs));
    }
  }

  void evaluate(const std::vector<double>& v, bool want_grad, steer::Evaluation& out) override {
    const int n = num_vars();
    ++evaluations;
    out.loss.assign(batch_size_, 0.0);
    out.grad.assign(want_grad ? v.size() : 0, 0.0);
    out.diag.assign(batch_size_, steer::RolloutDiag{});
    for (int b = 0; b < batch_size_; ++b) {
      const Eigen::VectorXd r =
          Eigen::Map<const Eigen::VectorXd>(v.data() + size_t(b) * n, n) - c_[b];
      const Eigen::VectorXd g = A_ * r;
      out.loss[b] = 0.5 * r.dot(g);
      if (want_grad) Eigen::Map<Eigen::VectorXd>(out.grad.data() + size_t(b) * n, n) = g;
    }
  }

  const std::vector<double>& minimizer(int b) const { return x_star_[b]; }
  int evaluations = 0;

 private:
  std::vector<std::vector<double>> x_star_;
  std::vector<Eigen::VectorXd> c_;
  Eigen::MatrixXd A_;
};

// Rosenbrock shifted per rollout: L_b(v) = R(v − s_b + 1), R(y) = Σ_{i<n−1} 100 (y_{i+1} − y_i²)² +
// (1 − y_i)², so the global minimizer of rollout b is v = s_b with L = 0
class RosenbrockProblem : public AnalyticProblem {
 public:
  RosenbrockProblem(std::vector<std::vector<double>> shifts, double lo, double hi)
      : s_(std::move(shifts)) {
    batch_size_ = int(s_.size());
    const size_t n = s_[0].size();
    lower_.assign(n, lo);
    upper_.assign(n, hi);
    for (size_t i = 0; i < n; ++i) names_.push_back("v" + std::to_string(i));
    initial_.assign(size_t(batch_size_) * n, 0.0);
  }

  // R(y) and ∂R/∂y
  static double rosenbrock(const double* y, int n, double* g) {
    double f = 0;
    if (g) std::fill(g, g + n, 0.0);
    for (int i = 0; i + 1 < n; ++i) {
      const double t = y[i + 1] - y[i] * y[i], u = 1 - y[i];
      f += 100 * t * t + u * u;
      if (g) {
        g[i] += -400 * y[i] * t - 2 * u;
        g[i + 1] += 200 * t;
      }
    }
    return f;
  }

  void evaluate(const std::vector<double>& v, bool want_grad, steer::Evaluation& out) override {
    const int nv = num_vars();
    if (v.size() != size_t(batch_size_) * nv)
      throw std::logic_error("RosenbrockProblem: wrong vars size");
    ++evaluations;
    if (throw_at_evaluation == evaluations) throw std::runtime_error("simulated backend failure");
    out.loss.assign(batch_size_, 0.0);
    out.grad.assign(want_grad ? v.size() : 0, 0.0);
    out.diag.assign(batch_size_, steer::RolloutDiag{});
    std::vector<double> y(nv);
    for (int b = 0; b < batch_size_; ++b) {
      for (int i = 0; i < nv; ++i) y[i] = v[size_t(b) * nv + i] - s_[b][i] + 1;
      out.loss[b] =
          rosenbrock(y.data(), nv, want_grad ? out.grad.data() + size_t(b) * nv : nullptr);
    }
  }

  const std::vector<double>& minimizer(int b) const { return s_[b]; }

  int evaluations = 0;
  int throw_at_evaluation = -1;  // evaluate() throws on this call (1-based); −1 never

 private:
  std::vector<std::vector<double>> s_;
};

}  // namespace steer_test_problems
