// Ruiz equilibration, the scaled view of an MCP, and the Newton solvers on badly scaled problems.
#include "solvers/mcp/equilibration.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "fixtures/problem_generators.h"
#include "solvers/lcp/lemke.h"
#include "solvers/mcp/jacobian_check.h"
#include "solvers/mcp/semismooth_newton.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

bool IsPowerOfTwo(double x) {
  int exponent = 0;
  return x > 0.0 && std::frexp(x, &exponent) == 0.5;
}

TEST_CASE("Ruiz equilibration balances rows and columns with powers of two") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0), decade(-6.0, 6.0);
  const int n = 40;
  std::vector<Eigen::Triplet<double>> entries;
  for (int i = 0; i < n; ++i) {
    if (i == 5) continue;  // an empty row and column
    const double row = std::pow(10.0, decade(rng));
    for (int j = 0; j < n; ++j) {
      if (j == 5 || (i != j && uniform(rng) < 0.6)) continue;
      entries.emplace_back(i, j, row * std::pow(10.0, decade(rng)) * uniform(rng));
    }
  }
  Eigen::SparseMatrix<double> J(n, n);
  J.setFromTriplets(entries.begin(), entries.end());
  Eigen::VectorXd row_norms, col_norms;
  CHECK(EquilibrationSpread(J, &row_norms, &col_norms) > 1e6);
  Eigen::VectorXd row, col;
  RuizEquilibration(J, &row, &col);
  const Eigen::SparseMatrix<double> scaled = row.asDiagonal() * J * col.asDiagonal();
  CHECK(EquilibrationSpread(scaled, &row_norms, &col_norms) <= 4.0);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(IsPowerOfTwo(row[i]));
    CHECK(IsPowerOfTwo(col[i]));
    if (i == 5) {
      CHECK(row[i] == 1.0);
      CHECK(col[i] == 1.0);
      continue;
    }
    CHECK(row_norms[i] > 0.5);
    CHECK(row_norms[i] < 2.0);
    CHECK(col_norms[i] > 0.5);
    CHECK(col_norms[i] < 2.0);
  }
}

TEST_CASE("the scaled MCP: exact Jacobian, bounds and solutions carried over") {
  const LinearComplementarityProblem lcp = BadlyScaledPLcp(12, 8.0, 3);
  const LinearMcp mcp(lcp);
  Eigen::VectorXd row, col;
  RuizEquilibration(lcp.sparse_columns(), &row, &col);
  const ScaledMcp scaled(mcp, row, col);
  CHECK(scaled.lower().isZero());
  CHECK(scaled.upper().array().isInf().all());
  const JacobianCheckResult check =
      CheckJacobian(scaled, Eigen::VectorXd::LinSpaced(12, 0.1, 2.0), 1e-6);
  CHECK_MESSAGE(check.ok, check.report);
  // z solves the original problem iff z / c solves the scaled one.
  // Measured in the scaled variables, a residual r of the original problem is at most
  // max(max_i R_ii, max_i 1 / C_ii) r (w_i scaled by R_ii where z_i = 0, z_i by 1 / C_ii where
  // w_i = 0).
  Eigen::VectorXd z;
  LemkeSolver lemke;
  REQUIRE(lemke.Solve(lcp, &z).IsSolved());
  const double bound = std::max(row.maxCoeff(), 1.0 / col.minCoeff()) * natural_residual(lcp, z);
  CHECK(natural_residual(scaled, z.cwiseQuotient(col)) <= bound);
}

TEST_CASE("badly scaled P-matrix LCPs: FB Newton stalls unscaled and converges equilibrated") {
  int stalled_unscaled = 0;
  for (int n : {10, 50, 200}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const LinearComplementarityProblem lcp = BadlyScaledPLcp(n, 8.0, seed);
      CAPTURE(lcp.name);
      Eigen::VectorXd reference;
      LemkeSolver lemke;
      REQUIRE(lemke.Solve(lcp, &reference).IsSolved());
      Eigen::VectorXd row, col;
      RuizEquilibration(lcp.sparse_columns(), &row, &col);
      FischerBurmeisterNewton::Options options;
      options.equilibration = FischerBurmeisterNewton::Equilibration::Off;
      Eigen::VectorXd z;
      if (!FischerBurmeisterNewton(options).Solve(LinearMcp(lcp), &z).IsSolved()) {
        ++stalled_unscaled;
      }
      // The registry's Newton variants (equilibration Auto by default).
      for (const char* name : {"fb-newton", "fb-newton-dense", "penalized-fb", "minmap-newton"}) {
        CAPTURE(name);
        z.resize(0);
        const auto solver = CreateSolver(name, ProblemKind::Linear, SolverOptions());
        const auto& summary =
            dynamic_cast<const FischerBurmeisterNewton::Summary&>(solver->Solve(lcp, &z));
        CAPTURE(summary.BriefReport());
        REQUIRE(summary.IsSolved());
        CHECK(summary.equilibrated);
        CHECK(summary.natural_residual <= 1e-10);
        CHECK(natural_residual(lcp, z) == summary.natural_residual);
        // The unique solution, compared in the equilibrated variables (of order 1 here: the
        // original ones span 8 decades).
        const double difference = (z - reference).cwiseQuotient(col).cwiseAbs().maxCoeff();
        CHECK(difference <= 1e-7);  // measured: at most 4.2e-9
      }
    }
  }
  // Measured before equilibration: 5 of these 9 stall (n = 10 seeds 2, 3; n = 200 all).
  CHECK(stalled_unscaled == 5);
}

TEST_CASE("a well scaled problem is not equilibrated unless asked") {
  const LinearComplementarityProblem lcp = ContactLikeLcp(60, 1);
  Eigen::VectorXd z;
  FischerBurmeisterNewton newton;
  const auto summary = newton.Solve(LinearMcp(lcp), &z);
  REQUIRE(summary.IsSolved());
  CHECK_FALSE(summary.equilibrated);
  newton.mutable_options().equilibration = FischerBurmeisterNewton::Equilibration::Always;
  Eigen::VectorXd z_scaled;
  const auto scaled = newton.Solve(LinearMcp(lcp), &z_scaled);
  REQUIRE(scaled.IsSolved());
  CHECK(scaled.equilibrated);
  CHECK((z - z_scaled).cwiseAbs().maxCoeff() <= 1e-8);
}

}  // namespace
}  // namespace ncpkit
