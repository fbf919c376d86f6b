// KluLu (solvers/linalg/sparse_lu.h): factorization and solve, refactorization with the last
// pivots, and the analysis's predicted fill.
#include "solvers/linalg/sparse_lu.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

namespace ncpkit {
namespace {

// A random n x n matrix with a strong diagonal and a few entries per column, compressed.
Eigen::SparseMatrix<double> KluTestMatrix(int n, unsigned seed, double diagonal) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> row(0, n - 1);
  std::vector<Eigen::Triplet<double>> triplets;
  for (int j = 0; j < n; ++j) {
    triplets.emplace_back(j, j, diagonal + normal(rng));
    for (int k = 0; k < 3; ++k) triplets.emplace_back(row(rng), j, normal(rng));
  }
  Eigen::SparseMatrix<double> A(n, n);
  A.setFromTriplets(triplets.begin(), triplets.end());
  A.makeCompressed();
  return A;
}

double KluResidual(const Eigen::SparseMatrix<double>& A, const Eigen::VectorXd& x,
                   const Eigen::VectorXd& b) {
  return (A * x - b).norm() / b.norm();
}

TEST_CASE("KluLu: factorize and solve; refactorize with the last pivots on new values") {
  const int n = 60;
  Eigen::SparseMatrix<double> A = KluTestMatrix(n, 1, 5.0);
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, -1.0, 2.0);
  KluLu lu;
  CHECK(lu.predicted_fill() == 0.0);  // no analysis yet
  lu.refactorize(A);                  // nothing to refactorize from
  CHECK(lu.info() == Eigen::InvalidInput);
  lu.compute(A);
  REQUIRE(lu.info() == Eigen::Success);
  CHECK(lu.predicted_fill() >= static_cast<double>(n));
  CHECK(KluResidual(A, lu.solve(b), b) <= 1e-13);
  // The same pattern with other values: the old pivots still serve (a strong diagonal).
  for (unsigned seed = 2; seed <= 6; ++seed) {
    const Eigen::SparseMatrix<double> B = KluTestMatrix(n, 1, 5.0 + seed);
    A = B;
    lu.refactorize(A);
    REQUIRE(lu.info() == Eigen::Success);
    CHECK(KluResidual(A, lu.solve(b), b) <= 1e-13);
  }
  // Another pattern is refused; a fresh factorization is needed after that.
  const Eigen::SparseMatrix<double> other = KluTestMatrix(n, 9, 5.0);
  lu.refactorize(other);
  CHECK(lu.info() == Eigen::InvalidInput);
  lu.refactorize(A);
  CHECK(lu.info() == Eigen::InvalidInput);
  lu.factorize(A);
  CHECK(lu.info() == Eigen::Success);
}

TEST_CASE("KluLu: a refactorization whose old pivot vanishes is not a success") {
  // [[1, 1], [1, 2]] factorizes without a row exchange; then [[0, 1], [1, 2]] puts a zero on
  // that pivot, which a fresh factorization avoids by exchanging the rows.
  std::vector<Eigen::Triplet<double>> t = {{0, 0, 1.0}, {1, 0, 1.0}, {0, 1, 1.0}, {1, 1, 2.0}};
  Eigen::SparseMatrix<double> A(2, 2);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  KluLu lu;
  lu.compute(A);
  REQUIRE(lu.info() == Eigen::Success);
  A.coeffRef(0, 0) = 0.0;
  lu.refactorize(A);
  const Eigen::VectorXd b = Eigen::Vector2d(1.0, 3.0);
  if (lu.info() == Eigen::Success) {
    // KLU may report success with a zero or tiny pivot: the solve then does not satisfy A.
    const Eigen::VectorXd x = lu.solve(b);
    CHECK_FALSE((x.allFinite() && KluResidual(A, x, b) <= 1e-13));
  }
  lu.factorize(A);
  REQUIRE(lu.info() == Eigen::Success);
  CHECK(KluResidual(A, lu.solve(b), b) <= 1e-14);
}

}  // namespace
}  // namespace ncpkit
