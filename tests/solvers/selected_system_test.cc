// The selected system every sensitivity solves (solvers/sensitivity/internal/selected_system.h),
// on each of its paths: small systems by the dense decomposition, larger ones by KLU or the
// sparse QR where singular, and shuffled block-diagonal systems (a scene's islands) block by
// block. Each against the dense pseudo-inverse of the whole: the least-norm solution of a
// consistent system, its transpose, the null space and whether the system is singular.
#include "solvers/sensitivity/internal/selected_system.h"

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace ncpkit {
namespace {

// A random m x m block of the given rank (full: rank = m), sparse enough to look like a
// contact system (about a third of its entries).
Eigen::MatrixXd RandomBlock(int m, int rank, std::mt19937* rng) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  Eigen::MatrixXd A(m, m);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) A(i, j) = uniform(*rng) < 0.3 || i == j ? normal(*rng) : 0.0;
  }
  if (rank == m) return A + 3.0 * Eigen::MatrixXd::Identity(m, m);
  // Rank deficient: A's first `rank` columns mixed into the others.
  Eigen::MatrixXd mix(rank, m - rank);
  for (int i = 0; i < rank; ++i) {
    for (int j = 0; j < m - rank; ++j) mix(i, j) = normal(*rng);
  }
  A.rightCols(m - rank) = A.leftCols(rank) * mix;
  return A;
}

// A random symmetric positive semidefinite m x m block of the given rank, G G^T (a block of
// sticking contacts, W = J M^-1 J^T), its entries' symmetry broken at rounding as an assembled
// W's is.
Eigen::MatrixXd RandomSemidefiniteBlock(int m, int rank, std::mt19937* rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd G(m, rank);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < rank; ++j) G(i, j) = normal(*rng);
  }
  Eigen::MatrixXd A = G * G.transpose();
  for (int j = 0; j < m; ++j) {
    for (int i = j + 1; i < m; ++i) A(i, j) *= 1.0 + 1e-16 * normal(*rng);
  }
  return A;
}

struct BlockSystem {
  Eigen::SparseMatrix<double> sparse;
  Eigen::MatrixXd dense;
  bool singular = false;
  // A singular block of 48 rows or more takes the sparse QR, whose adjoint products give a basic
  // solution of A^T y = c, not the least-norm one (selected_system.cc).
  bool basic_adjoint = false;
};

// Blocks of the given sizes and ranks on shuffled unknowns (a symmetric permutation).
BlockSystem ShuffledSystem(const std::vector<int>& sizes, const std::vector<int>& ranks,
                           std::mt19937* rng) {
  const int n = std::accumulate(sizes.begin(), sizes.end(), 0);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), *rng);
  BlockSystem out;
  out.dense = Eigen::MatrixXd::Zero(n, n);
  int first = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    const Eigen::MatrixXd block = RandomBlock(sizes[b], ranks[b], rng);
    out.singular = out.singular || ranks[b] < sizes[b];
    out.basic_adjoint = out.basic_adjoint || (ranks[b] < sizes[b] && sizes[b] >= 48);
    for (int i = 0; i < sizes[b]; ++i) {
      for (int j = 0; j < sizes[b]; ++j)
        out.dense(order[first + i], order[first + j]) = block(i, j);
    }
    first += sizes[b];
  }
  out.sparse = out.dense.sparseView();
  return out;
}

// The system factorized from its stored matrix, or (from_entries) from its entries handed over
// one by one, which takes it only where every independent block is small enough for the dense
// decomposition (false where it does not take it).
bool CheckAgainstPseudoInverse(const BlockSystem& system, std::mt19937* rng,
                               bool from_entries = false) {
  const Eigen::Index n = system.dense.rows();
  internal::SelectedSystem selected;
  if (from_entries) {
    const auto for_each_entry = [&](const auto& add) {
      for (int j = 0; j < system.sparse.outerSize(); ++j) {
        for (Eigen::SparseMatrix<double>::InnerIterator it(system.sparse, j); it; ++it) {
          add(static_cast<int>(it.row()), j, it.value());
        }
      }
    };
    if (!selected.FactorizeSmallBlocks(static_cast<int>(n), for_each_entry)) return false;
  } else {
    selected.Factorize(system.sparse, 2000, "the test system");
  }
  CHECK(selected.least_squares() == system.singular);
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> reference(system.dense);
  reference.setThreshold(1e-10);
  const Eigen::MatrixXd pinv = reference.pseudoInverse();
  const Eigen::Index nullity = n - reference.rank();
  // The null space: its dimension, A N = 0, N^T N = I.
  const Eigen::MatrixXd N = selected.null_basis();
  REQUIRE(N.rows() == n);
  CHECK(N.cols() == nullity);
  if (nullity > 0) {
    CHECK((system.dense * N).cwiseAbs().maxCoeff() < 1e-9);
    CHECK((N.transpose() * N - Eigen::MatrixXd::Identity(nullity, nullity)).cwiseAbs().maxCoeff() <
          1e-9);
  }
  // Consistent right-hand sides (in the range of A, of A^T): the least-norm solutions.
  std::normal_distribution<double> normal;
  Eigen::VectorXd x(n), y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x[i] = normal(*rng);
    y[i] = normal(*rng);
  }
  const Eigen::VectorXd b = system.dense * x, c = system.dense.transpose() * y;
  const Eigen::VectorXd forward = selected.Solve(b, false), adjoint = selected.Solve(c, true);
  CHECK((forward - pinv * b).norm() <= 1e-8 * (1.0 + (pinv * b).norm()));
  CHECK((system.dense * forward - b).norm() <= 1e-8 * (1.0 + b.norm()));
  CHECK((system.dense.transpose() * adjoint - c).norm() <= 1e-8 * (1.0 + c.norm()));
  if (!system.basic_adjoint) {
    CHECK((adjoint - pinv.transpose() * c).norm() <= 1e-8 * (1.0 + (pinv.transpose() * c).norm()));
  }
  // The two products are transposes of one map: <v, G w> = <G^T v, w> for any v, w.
  const double left = y.dot(selected.Solve(x, false)), right = selected.Solve(y, true).dot(x);
  CHECK(std::abs(left - right) <= 1e-9 * (1.0 + std::abs(left)));
  return true;
}

TEST_CASE("selected system: one block on each path against the pseudo-inverse") {
  std::mt19937 rng(11);
  // 12 and 30 rows take the dense decomposition; 60 and 90 KLU, or the sparse QR where singular.
  for (const int m : {12, 30, 60, 90}) {
    for (const int deficiency : {0, 1, 5}) {
      CAPTURE(m);
      CAPTURE(deficiency);
      CheckAgainstPseudoInverse(ShuffledSystem({m}, {m - deficiency}, &rng), &rng);
    }
  }
}

TEST_CASE("selected system: shuffled independent blocks solved block by block") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    CAPTURE(trial);
    std::vector<int> sizes(2 + trial % 5), ranks;
    for (int& size : sizes) {
      // Mostly contact-sized blocks, some larger than the dense path takes.
      size = rng() % 4 == 0 ? 40 + static_cast<int>(rng() % 30) : 3 + static_cast<int>(rng() % 28);
      ranks.push_back(rng() % 2 == 0 ? size : size - 1 - static_cast<int>(rng() % (size / 3 + 1)));
    }
    const BlockSystem system = ShuffledSystem(sizes, ranks, &rng);
    CheckAgainstPseudoInverse(system, &rng);
    CheckAgainstPseudoInverse(system, &rng, true);
  }
}

TEST_CASE("selected system: singular semidefinite blocks give the pseudo-inverse") {
  // Symmetric positive semidefinite blocks (every contact sticking) take the pivoted Cholesky
  // path; its products must be the Moore-Penrose pseudo-inverse's for any right-hand side, and
  // its null space orthonormal.
  std::mt19937 rng(13);
  std::normal_distribution<double> normal;
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int m = 2 + static_cast<int>(rng() % 31), rank = 1 + static_cast<int>(rng() % (m - 1));
    const Eigen::MatrixXd A = RandomSemidefiniteBlock(m, rank, &rng);
    const Eigen::SparseMatrix<double> sparse = A.sparseView();
    internal::SelectedSystem selected;
    selected.Factorize(sparse, 100, "the test system");
    CHECK(selected.least_squares());
    CHECK(selected.nullity() == m - rank);
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> reference(A);
    reference.setThreshold(1e-10);
    REQUIRE(reference.rank() == rank);
    const Eigen::MatrixXd pinv = reference.pseudoInverse();
    const Eigen::VectorXd b = Eigen::VectorXd::NullaryExpr(m, [&]() { return normal(rng); });
    const double size = 1.0 + (pinv * b).norm();
    CHECK((selected.Solve(b, false) - pinv * b).norm() <= 1e-8 * size);
    CHECK((selected.Solve(b, true) - pinv.transpose() * b).norm() <= 1e-8 * size);
    const Eigen::MatrixXd N = selected.null_basis();
    CHECK((A * N).cwiseAbs().maxCoeff() <= 1e-9 * A.cwiseAbs().maxCoeff());
    CHECK(
        (N.transpose() * N - Eigen::MatrixXd::Identity(m - rank, m - rank)).cwiseAbs().maxCoeff() <=
        1e-9);
    ++checked;
  }
  CHECK(checked == 40);
  // Side by side on shuffled unknowns, as a resting scene's islands are.
  for (int trial = 0; trial < 10; ++trial) {
    const int n = 24 * 3;
    BlockSystem system;
    system.dense = Eigen::MatrixXd::Zero(n, n);
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int block = 0; block < 3; ++block) {
      const Eigen::MatrixXd A = RandomSemidefiniteBlock(24, 12, &rng);
      for (int i = 0; i < 24; ++i) {
        for (int j = 0; j < 24; ++j)
          system.dense(order[24 * block + i], order[24 * block + j]) = A(i, j);
      }
    }
    system.sparse = system.dense.sparseView();
    system.singular = true;
    CheckAgainstPseudoInverse(system, &rng);
    CHECK(CheckAgainstPseudoInverse(system, &rng, true));
  }
}

TEST_CASE("selected system: small blocks from their entries, and the blocks too large for it") {
  std::mt19937 rng(7);
  int taken = 0;
  for (int trial = 0; trial < 30; ++trial) {
    CAPTURE(trial);
    std::vector<int> sizes(1 + trial % 5), ranks;
    for (int& size : sizes) {
      size = 3 + static_cast<int>(rng() % 30);
      ranks.push_back(rng() % 2 == 0 ? size : size - 1 - static_cast<int>(rng() % (size / 3 + 1)));
    }
    const BlockSystem system = ShuffledSystem(sizes, ranks, &rng);
    if (CheckAgainstPseudoInverse(system, &rng, true)) ++taken;
  }
  CHECK(taken == 30);
  // A block of 33 rows beside a small one: not taken, nothing factorized.
  const BlockSystem large = ShuffledSystem({33, 5}, {33, 5}, &rng);
  internal::SelectedSystem selected;
  int entries = 0;
  CHECK_FALSE(selected.FactorizeSmallBlocks(38, [&](const auto& add) {
    for (int j = 0; j < large.sparse.outerSize(); ++j) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(large.sparse, j); it; ++it, ++entries) {
        add(static_cast<int>(it.row()), j, it.value());
      }
    }
  }));
  CHECK(entries == large.sparse.nonZeros());  // read once, to find the blocks
}

TEST_CASE("selected system: factorized from rows, against the pseudo-inverse of J M^-1 J^T") {
  // Groups of d velocities and m = 2 d rows (sticking contacts' rows of full column rank) on
  // shuffled unknowns, on both sides of the size where the factorization turns from plain loops
  // to blocked kernels (selected_system.cc, FromRows::kLoopSize): the Moore-Penrose pseudo-inverse
  // of the whole K (any right-hand side, and its transpose, K being symmetric) and K's null space.
  std::mt19937 rng(17);
  std::normal_distribution<double> normal;
  const auto random = [&](Eigen::Index rows, Eigen::Index cols) {
    return Eigen::MatrixXd::NullaryExpr(rows, cols, [&]() { return normal(rng); });
  };
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{6}, {12, 30}, {36, 6}, {48}}) {
    int n = 0;
    for (const int d : sizes) n += 2 * d;
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
    std::vector<internal::SelectedSystem::RowsGroup> groups;
    int first = 0;
    for (const int d : sizes) {
      internal::SelectedSystem::RowsGroup group;
      group.unknowns.assign(order.begin() + first, order.begin() + first + 2 * d);
      std::sort(group.unknowns.begin(), group.unknowns.end());
      group.rows = random(2 * d, d);
      const Eigen::MatrixXd G = random(d, d);
      group.mass = G * G.transpose() + d * Eigen::MatrixXd::Identity(d, d);
      const Eigen::MatrixXd block = group.rows * group.mass.inverse() * group.rows.transpose();
      for (int i = 0; i < 2 * d; ++i) {
        for (int j = 0; j < 2 * d; ++j) K(group.unknowns[i], group.unknowns[j]) = block(i, j);
      }
      groups.push_back(std::move(group));
      first += 2 * d;
    }
    CAPTURE(n);
    internal::SelectedSystem selected;
    REQUIRE(selected.FactorizeFromRows(n, &groups));
    CHECK(selected.least_squares());
    CHECK(selected.nullity() == n / 2);
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> reference(K);
    reference.setThreshold(1e-10);
    REQUIRE(reference.rank() == n / 2);
    const Eigen::MatrixXd pinv = reference.pseudoInverse(), B = random(n, 3);
    const double size = 1.0 + (pinv * B).norm();
    CHECK((selected.SolveColumns(B, false) - pinv * B).norm() <= 1e-8 * size);
    CHECK((selected.Solve(B.col(0), true) - pinv * B.col(0)).norm() <= 1e-8 * size);
    const Eigen::MatrixXd N = selected.null_basis();
    CHECK((K * N).cwiseAbs().maxCoeff() <= 1e-9 * K.cwiseAbs().maxCoeff());
    CHECK((N.transpose() * N - Eigen::MatrixXd::Identity(n / 2, n / 2)).cwiseAbs().maxCoeff() <=
          1e-9);
  }
  // Refused, the system left empty: fewer rows than velocities, dependent rows (a repeated
  // column of J: A = J^T J singular) on either side of the loops' size, rows that do not match
  // the unknowns, and rows that are not finite.
  for (const int d : {12, 40}) {
    CAPTURE(d);
    const auto group = [&](Eigen::Index m, Eigen::Index columns, size_t unknowns) {
      internal::SelectedSystem::RowsGroup out;
      out.unknowns.resize(unknowns);
      std::iota(out.unknowns.begin(), out.unknowns.end(), 0);
      out.rows = random(m, columns);
      out.mass = Eigen::MatrixXd::Identity(columns, columns);
      return out;
    };
    std::vector<std::vector<internal::SelectedSystem::RowsGroup>> refused(4);
    refused[0].push_back(group(d - 1, d, d - 1));
    refused[1].push_back(group(2 * d, d, 2 * d));
    refused[1][0].rows.col(d - 1) = refused[1][0].rows.col(0);
    refused[2].push_back(group(2 * d, d, 2 * d - 1));
    refused[3].push_back(group(2 * d, d, 2 * d));
    refused[3][0].rows(1, 2) = std::nan("");
    for (std::vector<internal::SelectedSystem::RowsGroup>& groups : refused) {
      internal::SelectedSystem selected;
      CHECK_FALSE(selected.FactorizeFromRows(static_cast<int>(groups[0].unknowns.size()), &groups));
      CHECK(selected.nullity() == 0);
    }
  }
}

}  // namespace
}  // namespace ncpkit
