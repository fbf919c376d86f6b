// Run-time-sized residual blocks (ProblemBuilder::AddDynamicResidualBlock), the column groups
// of their sparse Jacobians, large fixed-size blocks, and the builder's start values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "solvers/base/constants.h"
#include "solvers/mcp/auto_solve.h"
#include "solvers/mcp/jacobian_check.h"
#include "solvers/mcp/problem_builder.h"
#include "solvers/mcp/semismooth_newton.h"

namespace ncpkit {
namespace {

// Bratu's problem -u'' = lambda exp(u), u(0) = u(1) = 0, on n interior points, as an NCP:
// F(x) = A x / h^2 - lambda exp(x) >= 0, A = tridiag(-1, 2, -1); its solution is positive, so
// F = 0 there. Banded: row i reads x[i-1], x[i], x[i+1].
struct Bratu {
  int n = 0;
  double lambda = 1.0;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::exp;  // Jets: ceres::exp by argument-dependent lookup
    const double h = 1.0 / (n + 1);
    const T* v = x[0];
    for (int i = 0; i < n; ++i) {
      T sum = T(2.0) * v[i];
      if (i > 0) sum -= v[i - 1];
      if (i + 1 < n) sum -= v[i + 1];
      r[i] = sum / (h * h) - lambda * exp(v[i]);
    }
    return true;
  }
};

std::vector<std::vector<int>> TridiagonalPattern(int n) {
  std::vector<std::vector<int>> pattern(n);
  for (int i = 0; i < n; ++i) {
    for (int j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); ++j) pattern[i].push_back(j);
  }
  return pattern;
}

// A dense nonlinear block: every residual reads every variable, through pow, sin and a sum.
struct DenseCoupled {
  int n = 0;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::pow;
    using std::sin;
    const T* v = x[0];
    T mean = T(0.0);
    for (int j = 0; j < n; ++j) mean += v[j] / double(n);
    for (int i = 0; i < n; ++i) {
      r[i] = pow(v[i], 3) + sin(v[(i + 1) % n]) * v[i] + mean * mean + T(0.1 * i - 1.0);
    }
    return true;
  }
};

// Two blocks read, residuals paired with both (3 then 4 rows).
struct TwoBlocks {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* a = x[0];
    const T* b = x[1];
    for (int i = 0; i < 3; ++i) r[i] = a[i] * b[i] + b[3] - T(1.0);
    for (int i = 0; i < 4; ++i) r[3 + i] = b[i] * b[i] - a[i % 3] + T(0.5);
    return true;
  }
};

TEST_CASE("dynamic blocks: Jacobians match finite differences (dense, banded, several blocks)") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> value(0.2, 1.5);
  const auto random_point = [&](int n) {
    Eigen::VectorXd z(n);
    for (int i = 0; i < n; ++i) z[i] = value(rng);
    return z;
  };
  SUBCASE("dense, 21 variables (three 8-wide passes)") {
    ProblemBuilder problem;
    const int x = problem.AddVariableBlock(21, -10.0, 10.0);
    problem.AddDynamicResidualBlock(DenseCoupled{21}, {x}, {x});
    const JacobianCheckResult check = CheckJacobian(problem, random_point(21), 1e-6);
    CAPTURE(check.report);
    CHECK(check.ok);
  }
  SUBCASE("banded with its pattern, 200 variables (3 groups: one pass)") {
    ProblemBuilder problem;
    const int x = problem.AddVariableBlock(200, 0.0, kInf);
    problem.AddDynamicResidualBlock(Bratu{200}, {x}, {x}, TridiagonalPattern(200));
    const Eigen::VectorXd z = random_point(200);
    const JacobianCheckResult check = CheckJacobian(problem, z, 1e-6);
    CAPTURE(check.report);
    CHECK(check.ok);
    Eigen::VectorXd F;
    Eigen::SparseMatrix<double> J;
    REQUIRE(problem.Evaluate(z, &F, &J));
    CHECK(J.nonZeros() == 3 * 200 - 2);  // only the declared entries
  }
  SUBCASE("two blocks read, residuals paired with both") {
    ProblemBuilder problem;
    const int a = problem.AddVariableBlock(3, -5.0, 5.0);
    const int b = problem.AddVariableBlock(4, -5.0, 5.0);
    problem.AddDynamicResidualBlock(TwoBlocks{}, {a, b}, {a, b});
    const JacobianCheckResult check = CheckJacobian(problem, random_point(7), 1e-6);
    CAPTURE(check.report);
    CHECK(check.ok);
  }
}

TEST_CASE("a dynamic block gives the fixed block's values and Jacobian exactly") {
  for (int n : {1, 6, 8, 9, 17}) {
    CAPTURE(n);
    ProblemBuilder fixed_problem, dynamic_problem;
    const Eigen::VectorXd z = Eigen::VectorXd::LinSpaced(n, 0.3, 1.7);
    const int x = dynamic_problem.AddVariableBlock(n, -10.0, 10.0);
    dynamic_problem.AddDynamicResidualBlock(DenseCoupled{n}, {x}, {x});
    const int y = fixed_problem.AddVariableBlock(n, -10.0, 10.0);
    switch (n) {  // the fixed sizes are template arguments
      case 1:
        fixed_problem.AddResidualBlock<1, 1>(DenseCoupled{n}, y, {y});
        break;
      case 6:
        fixed_problem.AddResidualBlock<6, 6>(DenseCoupled{n}, y, {y});
        break;
      case 8:
        fixed_problem.AddResidualBlock<8, 8>(DenseCoupled{n}, y, {y});
        break;
      case 9:
        fixed_problem.AddResidualBlock<9, 9>(DenseCoupled{n}, y, {y});
        break;
      default:
        fixed_problem.AddResidualBlock<17, 17>(DenseCoupled{n}, y, {y});
    }
    Eigen::VectorXd F_fixed, F_dynamic;
    Eigen::SparseMatrix<double> J_fixed, J_dynamic;
    REQUIRE(fixed_problem.Evaluate(z, &F_fixed, &J_fixed));
    REQUIRE(dynamic_problem.Evaluate(z, &F_dynamic, &J_dynamic));
    CHECK((F_fixed - F_dynamic).norm() == 0.0);
    CHECK(Eigen::MatrixXd(J_fixed - J_dynamic).norm() == 0.0);
  }
}

TEST_CASE("column groups: no two columns of a group share a row") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const int m = 1 + static_cast<int>(rng() % 40), c = 1 + static_cast<int>(rng() % 40);
    std::vector<int> starts{0}, columns;
    for (int i = 0; i < m; ++i) {
      for (int k = 0; k < c; ++k) {
        if (rng() % 5 == 0) columns.push_back(k);
      }
      starts.push_back(static_cast<int>(columns.size()));
    }
    std::vector<int> group;
    const int groups = internal::GroupColumns(c, starts, columns, &group);
    CHECK(groups <= c);
    for (int i = 0; i < m; ++i) {
      for (int e = starts[i]; e < starts[i + 1]; ++e) {
        CHECK(group[columns[e]] < groups);
        for (int f = e + 1; f < starts[i + 1]; ++f) CHECK(group[columns[e]] != group[columns[f]]);
      }
    }
  }
  std::vector<int> group;
  std::vector<int> starts{0}, columns;
  for (const auto& row : TridiagonalPattern(1000)) {
    columns.insert(columns.end(), row.begin(), row.end());
    starts.push_back(static_cast<int>(columns.size()));
  }
  CHECK(internal::GroupColumns(1000, starts, columns, &group) == 3);
  CHECK(internal::GroupColumns(7, {}, {}, &group) == 7);  // dense: a group per column
}

TEST_CASE("a 1000-variable dynamic block solves (Bratu, lambda = 1)") {
  ProblemBuilder problem;
  const int n = 1000;
  const int x = problem.AddVariableBlock(n, 0.0, kInf, /*start=*/0.0);
  problem.AddDynamicResidualBlock(Bratu{n}, {x}, {x}, TridiagonalPattern(n));
  Eigen::VectorXd z;
  const auto& summary = FischerBurmeisterNewton().Solve(problem, &z);
  CAPTURE(summary.FullReport());
  REQUIRE(summary.IsSolved());
  // Bratu's lower solution for lambda = 1: max u = u(1/2) = 0.140 (to 3 digits).
  CHECK(z.maxCoeff() == doctest::Approx(0.1405).epsilon(2e-3));
}

// A fixed-size block of 1000 variables: its Jets (16 MB) no longer live on the stack.
struct ShiftedSquares {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    for (int i = 0; i < 1000; ++i) r[i] = x[0][i] * x[0][i] - T(1.0 + i);
    return true;
  }
};

TEST_CASE("a fixed-size block of 1000 variables evaluates without overflowing the stack") {
  ProblemBuilder problem;
  const int x = problem.AddVariableBlock(1000, 0.0, kInf, 1.0);
  problem.AddResidualBlock<1000, 1000>(ShiftedSquares{}, x, {x});
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  REQUIRE(problem.Evaluate(problem.start(), &F, &J));
  CHECK(F[999] == -999.0);
  CHECK(J.coeff(999, 999) == 2.0);
  CHECK(J.coeff(999, 998) == 0.0);
}

TEST_CASE("dynamic block input errors are reported") {
  ProblemBuilder problem;
  const int x = problem.AddVariableBlock(3, 0.0, 1.0);
  const Bratu functor{3};
  CHECK_THROWS_WITH_AS(problem.AddDynamicResidualBlock(functor, {x}, {7}),
                       "residual block: read variable block 7 does not exist", InputError);
  CHECK_THROWS_WITH_AS(problem.AddDynamicResidualBlock(functor, {}, {x}),
                       "residual block: no paired variable block", InputError);
  CHECK_THROWS_WITH_AS(problem.AddDynamicResidualBlock(functor, {x}, {x}, {{0}, {1}}),
                       "residual block: the pattern has 2 rows, the block writes 3 residuals",
                       InputError);
  CHECK_THROWS_WITH_AS(problem.AddDynamicResidualBlock(functor, {x}, {x}, {{0}, {1, 3}, {2}}),
                       "residual block: pattern row 1 names local variable 3, outside 0..2",
                       InputError);
  CHECK_THROWS_WITH_AS(problem.AddDynamicResidualBlock(functor, {x}, {x}, {{-1}, {1}, {2}}),
                       "residual block: pattern row 0 names local variable -1, outside 0..2",
                       InputError);
}

TEST_CASE("a wrong pattern is caught by the Jacobian check") {
  ProblemBuilder problem;
  const int x = problem.AddVariableBlock(5, 0.0, kInf);
  std::vector<std::vector<int>> diagonal(5);
  for (int i = 0; i < 5; ++i) diagonal[i] = {i};  // leaves out the neighbours Bratu reads
  problem.AddDynamicResidualBlock(Bratu{5}, {x}, {x}, diagonal);
  CHECK_FALSE(CheckJacobian(problem, Eigen::VectorXd::Constant(5, 0.5), 1e-6).ok);
}

// Murphy, Sherali and Soyster's Nash-Cournot oligopoly (5 firms): firm i's marginal profit
// F_i(q) = c_i + (q_i / L_i)^(1/beta_i) - p(Q) - q_i p'(Q), p(Q) = 5000^(1/eta) Q^(-1/eta).
// At q = 0 the price is infinite: F cannot be evaluated there.
struct NashCournot {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::pow;  // Jets: ceres::pow by argument-dependent lookup
    static constexpr double c[5] = {10, 8, 6, 4, 2}, beta[5] = {1.2, 1.1, 1.0, 0.9, 0.8};
    const double eta = 1.1, L = 5.0;
    const T* q = x[0];
    T Q = q[0];
    for (int i = 1; i < 5; ++i) Q += q[i];
    const T p = pow(5000.0, 1.0 / eta) * pow(Q, -1.0 / eta);
    const T dp = -p / (eta * Q);
    for (int i = 0; i < 5; ++i) r[i] = c[i] + pow(q[i] / L, 1.0 / beta[i]) - p - q[i] * dp;
    return true;
  }
};

TEST_CASE("a solve starts from the builder's start values, projected onto the bounds") {
  ProblemBuilder problem;
  const int q = problem.AddVariableBlock(5, 0.0, kInf, /*start=*/10.0);
  problem.AddDynamicResidualBlock(NashCournot{}, {q}, {q});
  SUBCASE("an empty z: from the start values, where F can be evaluated (not from 0)") {
    Eigen::VectorXd z;
    const auto& fb = FischerBurmeisterNewton().Solve(problem, &z);
    CAPTURE(fb.FullReport());
    CHECK(fb.IsSolved());
    // Murphy, Sherali and Soyster's equilibrium (to the 4 digits published).
    const double expected[5] = {36.93, 41.82, 43.71, 42.66, 39.18};
    for (int i = 0; i < 5; ++i) CHECK(z[i] == doctest::Approx(expected[i]).epsilon(1e-3));
    Eigen::VectorXd empty;
    CHECK(AutoSolver().Solve(problem, &empty).IsSolved());
  }
  SUBCASE("z = 0 given explicitly: F cannot be evaluated there, and the solver says so") {
    Eigen::VectorXd z = Eigen::VectorXd::Zero(5);
    const auto& fb = FischerBurmeisterNewton().Solve(problem, &z);
    CHECK(fb.status == Status::NumericalFailure);
    CHECK(fb.message == "F cannot be evaluated at the start point");
  }
  SUBCASE("a start outside the box is projected onto it") {
    ProblemBuilder box;
    const int y = box.AddVariableBlock(5, 20.0, 40.0, /*start=*/-3.0);  // below the bound
    box.AddDynamicResidualBlock(NashCournot{}, {y}, {y});
    Eigen::VectorXd z;
    const auto& fb = FischerBurmeisterNewton().Solve(box, &z);
    CAPTURE(fb.FullReport());
    CHECK(fb.IsSolved());
    CHECK(z.minCoeff() >= 20.0 - 1e-9);  // within the natural residual's tolerance
    CHECK(z.maxCoeff() <= 40.0 + 1e-9);
  }
}

}  // namespace
}  // namespace ncpkit
