// Random SPD and sparse contact-like LCPs of several sizes: every solver reaches the same
// (unique) solution.
#include <doctest/doctest.h>

#include "fixtures/problem_generators.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

void CheckAgreement(const LinearComplementarityProblem& problem) {
  CAPTURE(problem.name);
  Eigen::VectorXd reference;
  std::string reference_solver;
  for (const std::string& solver : SolverNames(ProblemKind::Linear)) {
    CAPTURE(solver);
    SolverOptions options;
    options.tolerance = 1e-10;
    Eigen::VectorXd z;
    const SolverSummary summary =
        CreateSolver(solver, ProblemKind::Linear, options)->Solve(problem, &z);
    CAPTURE(summary.BriefReport());
    REQUIRE(summary.IsSolved());
    CHECK(summary.natural_residual <= 1e-10);
    if (reference.size() == 0) {
      reference = z;
      reference_solver = solver;
      continue;
    }
    // M is positive definite (smallest eigenvalue >= 1e-6 for the contact-like ones), so a
    // residual of 1e-10 bounds the distance to the solution by about 1e-10 / lambda_min.
    CHECK_MESSAGE((z - reference).cwiseAbs().maxCoeff() < 1e-4,
                  solver << " vs " << reference_solver);
    CHECK((z - reference).cwiseAbs().maxCoeff() <
          1e-10 / 1e-6 * std::max(1.0, reference.cwiseAbs().maxCoeff()));
  }
}

TEST_CASE("solvers agree on random SPD LCPs") {
  for (int n : {5, 30, 100, 300}) CheckAgreement(RandomSpdLcp(n, 100 + n));
}

TEST_CASE("solvers agree on sparse contact-like LCPs") {
  for (int n : {30, 100, 400, 1000}) CheckAgreement(ContactLikeLcp(n, 200 + n));
}

}  // namespace
}  // namespace ncpkit
