#include "solvers/linalg/internal/dense_lu.h"

#include <doctest/doctest.h>

#include <random>

namespace ncpkit::internal {
namespace {

// The unblocked elimination (n <= 64) and Eigen's blocked one (above) against Eigen's
// PartialPivLU: the same pivots, L U = P A to rounding, and solves of both kinds.
TEST_CASE("DenseLu factorizes as Eigen's PartialPivLU, unblocked and blocked") {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  DenseLu lu;  // reused across sizes
  for (int n : {1, 2, 5, 17, 24, 64, 65, 100}) {
    CAPTURE(n);
    Eigen::MatrixXd A(n, n);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) A(i, j) = normal(rng);
    }
    // Column 1 a multiple of column 0: zero below the diagonal after the first elimination
    // step, a column skipped (as Eigen does).
    if (n > 2) A.col(1) = 2.0 * A.col(0);
    lu.compute(A);
    const Eigen::PartialPivLU<Eigen::MatrixXd> eigen(A);
    CHECK((lu.matrixLU() - eigen.matrixLU()).cwiseAbs().maxCoeff() <= 1e-10);
    CHECK(std::abs(lu.l1_norm() - A.cwiseAbs().colwise().sum().maxCoeff()) <= 1e-12);
    Eigen::VectorXd b = Eigen::VectorXd::NullaryExpr(n, [&](Eigen::Index) { return normal(rng); });
    Eigen::VectorXd x, work, y;
    // A is singular: the solves are checked on a nonsingular copy.
    Eigen::MatrixXd B = A;
    if (n > 1)
      B.col(1) = Eigen::VectorXd::NullaryExpr(n, [&](Eigen::Index) { return normal(rng); });
    lu.compute(B);
    lu.Solve(b, &x);
    CHECK((B * x - b).norm() <= 1e-9 * (1.0 + b.norm()));
    lu.SolveTransposed(b, &work, &y);
    CHECK((B.transpose() * y - b).norm() <= 1e-9 * (1.0 + b.norm()));
  }
}

// ComputeRegular says what a full factorization's pivots say (all above the floor times the L1
// norm), stopping at the first small pivot; a regular matrix's factorization is compute()'s,
// bit for bit.
TEST_CASE(
    "DenseLu::ComputeRegular(InPlace): the pivot test of a full factorization, stopped early") {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  DenseLu lu, full;
  for (int n : {1, 3, 24, 53, 64, 80}) {
    for (int rank_drop : {0, 1, 2}) {
      CAPTURE(n);
      CAPTURE(rank_drop);
      Eigen::MatrixXd A(n, n);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) A(i, j) = normal(rng);
      }
      // Column c a combination of earlier ones: a zero pivot at about c.
      const int c = n / 3 + 1;
      if (rank_drop > 0 && c < n) A.col(c) = A.col(0) - 0.5 * A.col(c - 1);
      if (rank_drop > 1 && n > 2) A.col(n - 1) = 3.0 * A.col(n - 2);
      full.compute(A);
      const bool expected =
          full.matrixLU().diagonal().cwiseAbs().minCoeff() > 1e-14 * full.l1_norm();
      CHECK(lu.ComputeRegular(A, 1e-14) == expected);
      CHECK(expected == (rank_drop == 0 || c >= n));
      if (expected) CHECK((lu.matrixLU() - full.matrixLU()).cwiseAbs().maxCoeff() == 0.0);
      Eigen::MatrixXd taken = A;  // (its storage goes to the factorization)
      CHECK(lu.ComputeRegularInPlace(&taken, 1e-14) == expected);
      if (expected) CHECK((lu.matrixLU() - full.matrixLU()).cwiseAbs().maxCoeff() == 0.0);
    }
  }
  CHECK_FALSE(lu.ComputeRegular(Eigen::MatrixXd(0, 0), 1e-14));
  CHECK_FALSE(lu.ComputeRegular(Eigen::MatrixXd::Zero(4, 4), 1e-14));
}

}  // namespace
}  // namespace ncpkit::internal
