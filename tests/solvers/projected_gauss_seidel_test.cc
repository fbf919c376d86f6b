#include "solvers/lcp/projected_gauss_seidel.h"

#include <doctest/doctest.h>

#include <limits>

#include "fixtures/problem_generators.h"
#include "solvers/base/constants.h"
#include "solvers/lcp/lemke.h"

namespace ncpkit {
namespace {

TEST_CASE("PGS reports a zero or negative diagonal as InvalidInput with the row") {
  Eigen::MatrixXd M(3, 3);
  M << 1, 0, 0, 0, 0, 1, 0, 1, 1;
  Eigen::VectorXd q = -Eigen::VectorXd::Ones(3);
  ProjectedGaussSeidel pgs;
  Eigen::VectorXd z;
  auto summary = pgs.Solve(LinearComplementarityProblem(M, q), &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.invalid_diagonal_row == 1);
  CHECK(summary.message.find("M(1,1) = 0") != std::string::npos);
  M(1, 1) = -2;
  summary = pgs.Solve(LinearComplementarityProblem(M, q), &z);
  CHECK(summary.invalid_diagonal_row == 1);
}

TEST_CASE("PGS rejects invalid options") {
  ProjectedGaussSeidel::Options options;
  options.omega = 2.0;
  ProjectedGaussSeidel pgs(options);
  Eigen::VectorXd z;
  const auto summary = pgs.Solve(RandomSpdLcp(5, 1), &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("omega") != std::string::npos);
}

TEST_CASE("PGS and PSOR reach the Lemke solution on an SPD box problem") {
  const LinearComplementarityProblem lcp = RandomSpdLcp(40, 11);
  Eigen::VectorXd l = -Eigen::VectorXd::Ones(40), u = 0.3 * Eigen::VectorXd::Ones(40);
  l[0] = -kInf;
  u[1] = kInf;
  const LinearComplementarityProblem problem(lcp.dense_matrix(), lcp.q(), l, u);
  LemkeSolver lemke;
  Eigen::VectorXd reference;
  REQUIRE(lemke.Solve(problem, &reference).IsSolved());
  for (double omega : {1.0, 1.3}) {
    CAPTURE(omega);
    ProjectedGaussSeidel::Options options;
    options.omega = omega;
    ProjectedGaussSeidel pgs(options);
    Eigen::VectorXd z;
    const auto summary = pgs.Solve(problem, &z);
    REQUIRE(summary.IsSolved());
    CHECK(summary.natural_residual <= 1e-10);
    CHECK((z - reference).cwiseAbs().maxCoeff() < 1e-8);
  }
}

TEST_CASE("PGS warm start from the solution converges in one sweep") {
  const LinearComplementarityProblem problem = ContactLikeLcp(300, 5);
  ProjectedGaussSeidel::Options options;
  ProjectedGaussSeidel pgs(options);
  Eigen::VectorXd z;
  const auto cold = pgs.Solve(problem, &z);
  REQUIRE(cold.IsSolved());
  CHECK(cold.iterations > 5);
  pgs.mutable_options().warm_start = true;
  const auto warm = pgs.Solve(problem, &z);
  REQUIRE(warm.IsSolved());
  CHECK(warm.iterations == 1);
}

TEST_CASE("PGS says how far it got when it hits the sweep cap") {
  ProjectedGaussSeidel::Options options;
  options.max_sweeps = 3;
  ProjectedGaussSeidel pgs(options);
  Eigen::VectorXd z;
  const auto summary = pgs.Solve(ContactLikeLcp(300, 5), &z);
  CHECK(summary.status == Status::MaxIterations);
  CHECK(summary.iterations == 3);
  CHECK(summary.message.find("after 3 sweeps") != std::string::npos);
  CHECK(summary.natural_residual > 1e-10);
}

}  // namespace
}  // namespace ncpkit
