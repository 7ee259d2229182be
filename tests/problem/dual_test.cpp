// include/steer/dual.h: each overload's derivative against its closed form and against
// centered FD, in float64 (tolerance 1e-14 relative to closed forms, 1e-8 to FD).
#include "steer/dual.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace steer {
namespace {

using D = Dual<double, 2>;

// f'(a) from the dual, with the seed in slot 0
double dual_derivative(const std::function<D(D)>& f, double a) { return f(D::variable(a, 0)).v[0]; }

TEST(Dual, ArithmeticFollowsTheChainRule) {
  D x = D::variable(1.5, 0), y = D::variable(-0.7, 1);
  D r = (x * y + 2.0 * x) / (y - 3.0) - x;
  // r = (xy + 2x)/(y − 3) − x: ∂r/∂x = (y + 2)/(y − 3) − 1, ∂r/∂y = (x(y − 3) − (xy + 2x))/(y − 3)²
  const double xv = 1.5, yv = -0.7;
  EXPECT_NEAR(r.a, (xv * yv + 2 * xv) / (yv - 3) - xv, 1e-15);
  EXPECT_NEAR(r.v[0], (yv + 2) / (yv - 3) - 1, 1e-14);
  EXPECT_NEAR(r.v[1], (xv * (yv - 3) - (xv * yv + 2 * xv)) / ((yv - 3) * (yv - 3)), 1e-14);
}

TEST(Dual, ElementaryFunctionsMatchFiniteDifferences) {
  const std::vector<std::pair<std::function<D(D)>, std::function<double(double)>>> fs = {
      {[](D a) { return sqrt(a); }, [](double a) { return std::sqrt(a); }},
      {[](D a) { return exp(a); }, [](double a) { return std::exp(a); }},
      {[](D a) { return log(a); }, [](double a) { return std::log(a); }},
      {[](D a) { return log1p(a); }, [](double a) { return std::log1p(a); }},
      {[](D a) { return sin(a); }, [](double a) { return std::sin(a); }},
      {[](D a) { return cos(a); }, [](double a) { return std::cos(a); }},
      {[](D a) { return tanh(a); }, [](double a) { return std::tanh(a); }},
      {[](D a) { return abs(a); }, [](double a) { return std::fabs(a); }},
      {[](D a) { return pow(a, 2.5); }, [](double a) { return std::pow(a, 2.5); }},
      {[](D a) { return softplus(a * 30.0); },
       [](double a) { return std::log1p(std::exp(a * 30.0)); }},
      {[](D a) { return sigmoid(a * 3.0); }, [](double a) { return 1 / (1 + std::exp(-3 * a)); }},
  };
  for (double a : {0.3, 0.9, 2.2}) {
    for (size_t i = 0; i < fs.size(); ++i) {
      const double h = 1e-6;
      const double fd = (fs[i].second(a + h) - fs[i].second(a - h)) / (2 * h);
      EXPECT_NEAR(dual_derivative(fs[i].first, a), fd, 1e-8 * std::max(1.0, std::fabs(fd)))
          << "function " << i << " at " << a;
      EXPECT_NEAR(fs[i].first(D(a)).a, fs[i].second(a),
                  1e-15 * std::max(1.0, std::fabs(fs[i].second(a))));
    }
  }
}

// sqrt at 0 has a zero derivative instead of inf: 0·inf would make NaN in |v| v at rest
TEST(Dual, SqrtAtZeroIsFinite) {
  D z = D::variable(0.0, 0);
  D s = sqrt(z * z);
  EXPECT_EQ(s.a, 0.0);
  EXPECT_EQ(s.v[0], 0.0);
  EXPECT_TRUE(std::isfinite(s.v[1]));
}

// softplus and sigmoid do not overflow for large arguments
TEST(Dual, SoftplusIsSafeForLargeArguments) {
  D big = D::variable(800.0, 0), small = D::variable(-800.0, 0);
  EXPECT_NEAR(softplus(big).a, 800.0, 1e-12);
  EXPECT_NEAR(softplus(big).v[0], 1.0, 1e-15);
  EXPECT_NEAR(softplus(small).a, 0.0, 1e-300);
  EXPECT_TRUE(std::isfinite(sigmoid(small).a));
  EXPECT_NEAR(sigmoid(big).a, 1.0, 1e-15);
}

TEST(Dual, ComparisonsUseValues) {
  D a = D::variable(1.0, 0), b = D::variable(2.0, 1);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(b > 1.5);
  EXPECT_FALSE(a >= 1.5);
}

}  // namespace
}  // namespace steer
