#include "solvers/mcp/semismooth_newton.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "fixtures/problem_generators.h"
#include "solvers/base/constants.h"
#include "solvers/lcp/lemke.h"
#include "solvers/mcp/problem_builder.h"

namespace ncpkit {
namespace {

// F = (x0^3 - 1, x1 - x0): J = [[0, 0], [-1, 1]] is singular at x0 = 0, but the merit's
// gradient J^T F is not zero there unless x1 = x0.
struct CubeChain {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    r[0] = x[0][0] * x[0][0] * x[0][0] - T(1);
    r[1] = x[0][1] - x[0][0];
    return true;
  }
};

struct Log {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::log;
    r[0] = log(x[0][0]);
    return true;
  }
};

TEST_CASE("invalid options and invalid bounds are InvalidInput") {
  FischerBurmeisterNewton::Options options;
  options.penalty_lambda = 0.0;
  FischerBurmeisterNewton newton(options);
  const LinearComplementarityProblem lcp = RandomSpdLcp(4, 1);
  Eigen::VectorXd z;
  auto summary = newton.Solve(LinearMcp(lcp), &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("penalty_lambda") != std::string::npos);

  struct BadBounds : MixedComplementarityProblem {
    Eigen::VectorXd l = Eigen::VectorXd::Constant(1, 2.0), u = Eigen::VectorXd::Constant(1, 1.0);
    int size() const override { return 1; }
    const Eigen::VectorXd& lower() const override { return l; }
    const Eigen::VectorXd& upper() const override { return u; }
    bool Evaluate(const Eigen::VectorXd&, Eigen::VectorXd* F,
                  Eigen::SparseMatrix<double>*) const override {
      *F = Eigen::VectorXd::Zero(1);
      return true;
    }
  } bad;
  FischerBurmeisterNewton plain;
  summary = plain.Solve(bad, &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("l(0) = 2 > u(0) = 1") != std::string::npos);
}

TEST_CASE("KLU and dense LU give the same answer as Lemke on a contact-like LCP") {
  const LinearComplementarityProblem lcp = ContactLikeLcp(400, 9);
  Eigen::VectorXd reference;
  LemkeSolver lemke;
  REQUIRE(lemke.Solve(lcp, &reference).IsSolved());
  for (auto solver : {FischerBurmeisterNewton::LinearSolver::SparseKlu,
                      FischerBurmeisterNewton::LinearSolver::Dense}) {
    FischerBurmeisterNewton::Options options;
    options.linear_solver = solver;
    FischerBurmeisterNewton newton(options);
    Eigen::VectorXd z;
    const auto summary = newton.Solve(LinearMcp(lcp), &z);
    REQUIRE(summary.IsSolved());
    CHECK(summary.dense_linear_algebra == (solver == FischerBurmeisterNewton::LinearSolver::Dense));
    CHECK(summary.natural_residual <= 1e-10);
    CHECK((z - reference).cwiseAbs().maxCoeff() < 1e-6);
    CHECK(summary.factorizations >= summary.iterations);
    if (!summary.dense_linear_algebra) {
      CHECK(summary.iterations > 2);
      CHECK(summary.symbolic_analyses == 1);  // reused while the pattern is unchanged
      Eigen::VectorXd again;
      const auto second = newton.Solve(LinearMcp(lcp), &again);
      CHECK(second.IsSolved());
      CHECK(second.symbolic_analyses == 0);  // and across solves of the same pattern
    }
  }
}

TEST_CASE("a singular Newton matrix: the regularized direction, else Levenberg-Marquardt") {
  ProblemBuilder builder;
  Eigen::VectorXd start(2);
  start << 0.0, 1.0;
  const int x = builder.AddVariableBlock(Eigen::VectorXd::Constant(2, -kInf),
                                         Eigen::VectorXd::Constant(2, kInf), start);
  builder.AddResidualBlock<2, 2>(CubeChain{}, x, {x});
  for (const double regularization : {1.0, 0.0}) {
    FischerBurmeisterNewton::Options options;
    options.regularization = regularization;
    FischerBurmeisterNewton newton(options);
    Eigen::VectorXd z = builder.start();
    const auto summary = newton.Solve(builder, &z);
    CAPTURE(regularization);
    CAPTURE(summary.BriefReport());
    REQUIRE(summary.IsSolved());
    if (regularization > 0.0) {
      CHECK(summary.regularized_steps >= 1);
    } else {
      CHECK(summary.regularized_steps == 0);
      CHECK(summary.levenberg_marquardt_steps >= 1);
    }
    CHECK(z[0] == doctest::Approx(1.0));
  }
}

TEST_CASE("a NaN from the residual during the line search shortens the step") {
  ProblemBuilder builder;  // F(x) = log x, free: the full Newton step from 5 lands at x < 0
  const int x = builder.AddVariableBlock(1, -kInf, kInf, 5.0);
  builder.AddResidualBlock<1, 1>(Log{}, x, {x});
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z = builder.start();
  const auto summary = newton.Solve(builder, &z);
  CAPTURE(summary.BriefReport());
  REQUIRE(summary.IsSolved());
  CHECK(summary.line_search_steps >= 1);
  CHECK(z[0] == doctest::Approx(1.0));
}

TEST_CASE("warm start from the solution needs no iteration; the non-monotone search converges") {
  const LinearComplementarityProblem lcp = ContactLikeLcp(200, 4);
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z;
  REQUIRE(newton.Solve(LinearMcp(lcp), &z).IsSolved());
  const auto warm = newton.Solve(LinearMcp(lcp), &z);
  REQUIRE(warm.IsSolved());
  CHECK(warm.iterations == 0);
  FischerBurmeisterNewton::Options options;
  options.nonmonotone_memory = 5;
  FischerBurmeisterNewton nonmonotone(options);
  Eigen::VectorXd z2;
  const auto summary = nonmonotone.Solve(LinearMcp(lcp), &z2);
  REQUIRE(summary.IsSolved());
  CHECK((z2 - z).cwiseAbs().maxCoeff() < 1e-6);
}

TEST_CASE("a problem without solution stops with a reason, not at the iteration cap") {
  Eigen::MatrixXd M(1, 1);
  M << -1;
  Eigen::VectorXd q(1);
  q << -1;  // w = -z - 1 < 0 for every z >= 0
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z;
  const LinearComplementarityProblem lcp(M, q);
  const auto summary = newton.Solve(LinearMcp(lcp), &z);
  CHECK_FALSE(summary.IsSolved());
  CHECK(summary.status != Status::MaxIterations);
  CHECK(!summary.message.empty());
}

}  // namespace
}  // namespace ncpkit
