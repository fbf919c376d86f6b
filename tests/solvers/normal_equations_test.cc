#include "solvers/linalg/internal/normal_equations.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

namespace ncpkit::internal {
namespace {

// H n x n with about `per_column` random entries a column (some columns empty), compressed.
Eigen::SparseMatrix<double> RandomSquare(int n, int per_column, std::mt19937* rng) {
  std::uniform_int_distribution<int> row(0, n - 1);
  std::normal_distribution<double> value;
  std::vector<Eigen::Triplet<double>> entries;
  for (int j = 0; j < n; ++j) {
    if (j % 7 == 3) continue;  // an empty column: its diagonal comes from mu alone
    for (int k = 0; k < per_column; ++k) entries.emplace_back(row(*rng), j, value(*rng));
  }
  Eigen::SparseMatrix<double> H(n, n);
  H.setFromTriplets(entries.begin(), entries.end());
  H.makeCompressed();
  return H;
}

// The reference: Eigen's general sparse product, mu added on the
// diagonal, a fresh SimplicialLDLT.
Eigen::SparseMatrix<double> EigenNormal(const Eigen::SparseMatrix<double>& H, double mu) {
  Eigen::SparseMatrix<double> normal = H.transpose() * H;
  for (int i = 0; i < H.cols(); ++i) normal.coeffRef(i, i) += mu;
  return normal;
}

TEST_CASE("NormalEquations: Eigen's H^T H + mu I and its SimplicialLDLT solution, bit for bit") {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  NormalEquations equations;  // reused across sizes, patterns and values
  for (int n : {1, 6, 40, 150}) {
    for (int per_column : {1, 3, 8}) {
      CAPTURE(n);
      CAPTURE(per_column);
      Eigen::SparseMatrix<double> H = RandomSquare(n, per_column, &rng);
      for (int round = 0; round < 3; ++round) {  // new values on the same pattern
        CAPTURE(round);
        for (Eigen::Index p = 0; p < H.nonZeros(); ++p) H.valuePtr()[p] = normal(rng);
        const double mu = round == 2 ? 1e-12 : 0.3;
        REQUIRE(equations.Factorize(H, mu));
        const Eigen::SparseMatrix<double> expected = EigenNormal(H, mu);
        // (The lower triangle alone, the half SimplicialLDLT reads.)
        const Eigen::MatrixXd lower = Eigen::MatrixXd(expected).triangularView<Eigen::Lower>();
        CHECK(Eigen::MatrixXd(equations.matrix()) == lower);
        const Eigen::VectorXd b =
            Eigen::VectorXd::NullaryExpr(n, [&](Eigen::Index) { return normal(rng); });
        const Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(expected);
        REQUIRE(ldlt.info() == Eigen::Success);
        const Eigen::VectorXd x = equations.Solve(b);
        CHECK(x == ldlt.solve(b));
        // And the system is solved (to the conditioning of H^T H + mu I).
        CHECK((expected * x - b).norm() <= 1e-6 * (1.0 + b.norm()) * (1.0 + x.norm()));
      }
    }
  }
}

TEST_CASE("NormalEquations: a singular H (a zero row and column) is regularized by mu") {
  Eigen::SparseMatrix<double> H(3, 3);
  H.insert(0, 0) = 2.0;
  H.insert(1, 0) = 1.0;
  H.insert(0, 1) = 1.0;
  H.makeCompressed();
  NormalEquations equations;
  REQUIRE(equations.Factorize(H, 0.5));
  // H^T H = [[5, 2, 0], [2, 1, 0], [0, 0, 0]] plus 0.5 I.
  Eigen::MatrixXd expected(3, 3);
  expected << 5.5, 2.0, 0.0, 2.0, 1.5, 0.0, 0.0, 0.0, 0.5;
  CHECK(Eigen::MatrixXd(equations.matrix()) ==
        Eigen::MatrixXd(expected.triangularView<Eigen::Lower>()));
  const Eigen::VectorXd x = equations.Solve(Eigen::Vector3d(1.0, 2.0, 3.0));
  CHECK((expected * x - Eigen::Vector3d(1.0, 2.0, 3.0)).norm() <= 1e-12);
}

}  // namespace
}  // namespace ncpkit::internal
