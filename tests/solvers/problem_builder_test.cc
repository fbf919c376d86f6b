#include "solvers/mcp/problem_builder.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "fixtures/mcp_examples.h"
#include "solvers/mcp/jacobian_check.h"

namespace ncpkit {
namespace {

TEST_CASE("the Jacobian of every builder example matches finite differences") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(-0.5, 0.5);
  for (const McpExample& example : McpExamples()) {
    CAPTURE(example.name);
    std::vector<Eigen::VectorXd> points = example.starts;
    for (const auto& s : example.solutions) points.push_back(s);
    for (Eigen::VectorXd p : points) {
      for (int i = 0; i < p.size(); ++i) p[i] += jitter(rng);  // generic points
      const JacobianCheckResult check = CheckJacobian(*example.problem, p, 1e-6);
      CAPTURE(check.report);
      CHECK(check.ok);
    }
  }
}

TEST_CASE("the Jacobian checker catches a wrong Jacobian") {
  struct WrongJacobian : MixedComplementarityProblem {
    Eigen::VectorXd l = Eigen::VectorXd::Zero(2), u = Eigen::VectorXd::Constant(2, 1.0);
    int size() const override { return 2; }
    const Eigen::VectorXd& lower() const override { return l; }
    const Eigen::VectorXd& upper() const override { return u; }
    bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                  Eigen::SparseMatrix<double>* J) const override {
      *F = Eigen::VectorXd(2);
      (*F) << z[0] * z[1], z[1];
      if (J) {
        Eigen::MatrixXd dense(2, 2);
        dense << z[1], z[0] + 0.01, 0, 1;  // d/dz1 of z0 z1 is z0, not z0 + 0.01
        *J = dense.sparseView();
      }
      return true;
    }
  } wrong;
  const JacobianCheckResult check = CheckJacobian(wrong, Eigen::Vector2d(0.5, 2.0));
  CHECK_FALSE(check.ok);
  CHECK(check.worst_row == 0);
  CHECK(check.worst_column == 1);
}

struct Square {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    r[0] = x[0][0] * x[0][0] - T(4);
    return true;
  }
};

struct Log {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::log;
    r[0] = log(x[0][0]);  // NaN for x < 0, -inf at 0
    return true;
  }
};

TEST_CASE("builder input errors are reported") {
  ProblemBuilder builder;
  const int a = builder.AddVariableBlock(1, 0.0, 1.0);
  CHECK_THROWS_WITH_AS(builder.AddVariableBlock(2, 1.0, 0.0), doctest::Contains("lower <= upper"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((builder.AddResidualBlock<1, 1>(Square{}, 5, {a})),
                       doctest::Contains("does not exist"), std::invalid_argument);
  const int b = builder.AddVariableBlock(2, 0.0, 1.0);
  CHECK_THROWS_WITH_AS((builder.AddResidualBlock<1, 1>(Square{}, b, {a})),
                       doctest::Contains("has 2 variables, expected 1"), std::invalid_argument);
  builder.AddResidualBlock<1, 1>(Square{}, a, {a});
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  // Block b has no residual paired with it.
  CHECK_THROWS_WITH_AS(builder.Evaluate(Eigen::VectorXd::Zero(3), &F, &J),
                       doctest::Contains("variable 1 has no residual row"), std::invalid_argument);
}

TEST_CASE("a non-finite residual makes Evaluate return false") {
  ProblemBuilder builder;
  const int a = builder.AddVariableBlock(1, 0.0, std::numeric_limits<double>::infinity(), 1.0);
  builder.AddResidualBlock<1, 1>(Log{}, a, {a});
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  CHECK(builder.Evaluate(Eigen::VectorXd::Constant(1, 2.0), &F, &J));
  CHECK(F[0] == doctest::Approx(std::log(2.0)));
  CHECK_FALSE(builder.Evaluate(Eigen::VectorXd::Constant(1, -1.0), &F, &J));
  CHECK_FALSE(builder.Evaluate(Eigen::VectorXd::Constant(1, 0.0), &F, nullptr));
}

TEST_CASE("residual blocks paired with the same rows add up") {
  ProblemBuilder builder;
  const int a = builder.AddVariableBlock(1, -1.0, 1.0);
  builder.AddResidualBlock<1, 1>(Square{}, a, {a});
  builder.AddResidualBlock<1, 1>(Square{}, a, {a});
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  REQUIRE(builder.Evaluate(Eigen::VectorXd::Constant(1, 3.0), &F, &J));
  CHECK(F[0] == 10.0);
  CHECK(J.coeff(0, 0) == 12.0);
}

}  // namespace
}  // namespace ncpkit
