#include "solvers/lcp/lemke.h"

#include <doctest/doctest.h>

#include <limits>
#include <tuple>

#include "fixtures/problem_generators.h"
#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

LinearComplementarityProblem PathExample(double upper) {
  Eigen::MatrixXd M(4, 4);
  M << 0, 0, -1, -1, 0, 0, 1, -2, 1, -1, 2, -2, 1, 2, -2, 4;
  Eigen::VectorXd q(4);
  q << 2, 2, -2, -6;
  return LinearComplementarityProblem(M, q, Eigen::VectorXd::Zero(4),
                                      Eigen::VectorXd::Constant(4, upper));
}

TEST_CASE("Lemke rejects invalid options with InvalidInput") {
  LemkeSolver::Options options;
  options.refactorization_interval = 0;
  std::string why;
  CHECK_FALSE(options.IsValid(&why));
  CHECK(why.find("refactorization_interval") != std::string::npos);
  LemkeSolver lemke(options);
  Eigen::VectorXd z;
  const auto summary = lemke.Solve(MurtyLcp(3), &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("refactorization_interval") != std::string::npos);
}

TEST_CASE("Lemke solves the PATH example with and without finite upper bounds") {
  for (double upper : {kInf, 100.0, 10.0}) {
    CAPTURE(upper);
    LemkeSolver lemke;
    Eigen::VectorXd z;
    const auto summary = lemke.Solve(PathExample(upper), &z);
    REQUIRE(summary.IsSolved());
    CHECK(summary.natural_residual <= 1e-12);
    CHECK(z[0] == doctest::Approx(2.8));
    CHECK(z[1] == doctest::Approx(0.0));
    CHECK(z[2] == doctest::Approx(0.8));
    CHECK(z[3] == doctest::Approx(1.2));
  }
}

TEST_CASE("Lemke handles active upper bounds, upper-only, fixed and free variables") {
  // M = I, q = (-5, 3, -1, 2): z = mid(l, u, -q) for a diagonal problem.
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(4, 4);
  M(0, 1) = 0.1;
  M(1, 0) = 0.1;
  Eigen::VectorXd q(4), l(4), u(4);
  q << -5, 3, -1, 2;
  l << 0, -kInf, 0.5, -kInf;
  u << 2, 1, 0.5, kInf;
  LinearComplementarityProblem problem(M, q, l, u);
  LemkeSolver lemke;
  Eigen::VectorXd z;
  const auto summary = lemke.Solve(problem, &z);
  REQUIRE(summary.IsSolved());
  CHECK(summary.natural_residual <= 1e-12);
  CHECK(z[0] == doctest::Approx(2.0));   // upper bound active
  CHECK(z[2] == doctest::Approx(0.5));   // fixed
  CHECK(z[3] == doctest::Approx(-2.0));  // free: w = z + 2 = 0
  CHECK(summary.eliminated_free_variables == 1);
}

TEST_CASE("Lemke splits free variables whose block is singular") {
  // Free variables 0 and 1 with a zero block; the equations couple them to z2.
  Eigen::MatrixXd M(3, 3);
  M << 0, 0, 1, 0, 0, 1, -1, -1, 1;
  Eigen::VectorXd q(3), l(3), u(3);
  q << -1, -1, 0;
  l << -kInf, -kInf, 0;
  u << kInf, kInf, kInf;
  LemkeSolver lemke;
  Eigen::VectorXd z;
  const auto summary = lemke.Solve(LinearComplementarityProblem(M, q, l, u), &z);
  CHECK(summary.split_free_variables == 2);
  REQUIRE(summary.IsSolved());
  CHECK(summary.natural_residual <= 1e-12);
  CHECK(z[2] == doctest::Approx(1.0));
}

TEST_CASE("Lemke warm start from the solution needs no pivots; a nearby start is accepted") {
  const LinearComplementarityProblem problem = RandomSpdLcp(60, 7);
  LemkeSolver cold;
  Eigen::VectorXd z;
  const auto first = cold.Solve(problem, &z);
  REQUIRE(first.IsSolved());
  CHECK(first.iterations > 10);

  LemkeSolver::Options options;
  options.warm_start = true;
  LemkeSolver warm(options);
  Eigen::VectorXd z_warm = z;
  const auto again = warm.Solve(problem, &z_warm);
  REQUIRE(again.IsSolved());
  CHECK(again.warm_start_used);
  CHECK(again.iterations == 0);
  CHECK((z_warm - z).cwiseAbs().maxCoeff() < 1e-10);

  // Perturb q a little: the old active set is nearly right, so few pivots are needed.
  Eigen::VectorXd q = problem.q();
  q[0] += 0.05;
  q[1] -= 0.05;
  const LinearComplementarityProblem nearby(problem.dense_matrix(), q);
  Eigen::VectorXd z_near = z;
  const auto near = warm.Solve(nearby, &z_near);
  REQUIRE(near.IsSolved());
  Eigen::VectorXd z_cold;
  const auto near_cold = cold.Solve(nearby, &z_cold);
  CHECK(near.iterations < near_cold.iterations);
  CHECK((z_near - z_cold).cwiseAbs().maxCoeff() < 1e-9);
}

TEST_CASE("Lemke results do not depend on the refactorization interval") {
  const LinearComplementarityProblem problem = RandomSpdLcp(120, 3);
  Eigen::VectorXd reference;
  for (int interval : {1, 7, 64, 1000}) {
    CAPTURE(interval);
    LemkeSolver::Options options;
    options.refactorization_interval = interval;
    LemkeSolver lemke(options);
    Eigen::VectorXd z;
    const auto summary = lemke.Solve(problem, &z);
    REQUIRE(summary.IsSolved());
    if (reference.size() == 0) reference = z;
    CHECK((z - reference).cwiseAbs().maxCoeff() < 1e-10);
  }
}

TEST_CASE("Lemke recovers from numerical trouble on monotone singular LCPs") {
  // Two of the generated family (psd_singular, 900 instances at n = 50 and 15 at n = 200 tried)
  // on which the eta updates' rounding leaves a complementary basis far from a solution.
  for (const auto& [n, rank, seed] : {std::tuple<int, int, int>{50, 25, 20}, {200, 100, 2}}) {
    const LinearComplementarityProblem problem = PsdSingularLcp(n, rank, seed);
    CAPTURE(problem.name);
    LemkeSolver::Options options;
    options.recover = false;
    Eigen::VectorXd z;
    const LemkeSolver::Summary plain = LemkeSolver(options).Solve(problem, &z);
    CAPTURE(plain.BriefReport());
    CHECK(plain.status == Status::NumericalFailure);
    LemkeSolver recovering;
    const LemkeSolver::Summary& summary = recovering.Solve(problem, &z);
    CAPTURE(summary.BriefReport());
    CHECK(summary.IsSolved());
    CHECK(summary.recovery.find("fresh factorization every pivot") != std::string::npos);
    CHECK(natural_residual(problem, z) <= 1e-10);
    CHECK(summary.FullReport().find("recovery") != std::string::npos);
  }
}

TEST_CASE("Lemke stops at the pivot cap with MaxIterations") {
  LemkeSolver::Options options;
  options.max_pivots = 100;
  LemkeSolver lemke(options);
  Eigen::VectorXd z;
  const auto summary = lemke.Solve(MurtyLcp(8), &z);
  CHECK(summary.status == Status::MaxIterations);
  CHECK(summary.iterations == 100);
  CHECK(summary.message.find("pivot cap 100") != std::string::npos);
}

}  // namespace
}  // namespace ncpkit
