// The block Cholesky factorization of 6 x 6-block matrices (solvers/linalg/block_cholesky.h):
// solves against a dense factorization on random block patterns (chains, stars, random graphs,
// with the fill their elimination brings), keeps its analysis for the same pattern, and refuses
// a matrix that is not positive definite.
#include "solvers/linalg/block_cholesky.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace ncpkit {
namespace {

using Block = BlockCholesky::Block;
constexpr int kB = BlockCholesky::kBlock;

// A random symmetric positive definite matrix on the pattern: diagonal blocks dominant, every
// pair's block random. Added to the factorization and returned dense.
Eigen::MatrixXd Assemble(int nb, const std::vector<std::pair<int, int>>& pairs, std::mt19937* rng,
                         BlockCholesky* cholesky) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(kB * nb, kB * nb);
  cholesky->SetZero();
  for (const auto& [i, j] : pairs) {
    Block X;
    for (int r = 0; r < kB; ++r)
      for (int c = 0; c < kB; ++c) X(r, c) = normal(*rng);
    A.block<kB, kB>(kB * i, kB * j) = X;
    A.block<kB, kB>(kB * j, kB * i) = X.transpose();
    cholesky->Add(i, j, X);
  }
  for (int k = 0; k < nb; ++k) {
    Block R;
    for (int r = 0; r < kB; ++r)
      for (int c = 0; c < kB; ++c) R(r, c) = normal(*rng);
    // Larger than the sum of the row's other blocks' norms: positive definite.
    const double row = A.block(kB * k, 0, kB, A.cols()).norm();
    const Block D = R * R.transpose() + (row * row + 1.0) * Block::Identity();
    A.block<kB, kB>(kB * k, kB * k) = D;
    cholesky->Add(k, k, D);
  }
  return A;
}

std::vector<std::pair<int, int>> RandomPattern(int nb, int kind, std::mt19937* rng) {
  std::set<std::pair<int, int>> pairs;
  std::uniform_int_distribution<int> block(0, nb - 1);
  if (kind == 0) {  // a chain in a shuffled order
    std::vector<int> order(nb);
    for (int k = 0; k < nb; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), *rng);
    for (int k = 0; k + 1 < nb; ++k) {
      pairs.emplace(std::max(order[k], order[k + 1]), std::min(order[k], order[k + 1]));
    }
  } else if (kind == 1) {  // a star: one body touching every other
    const int centre = block(*rng);
    for (int k = 0; k < nb; ++k) {
      if (k != centre) pairs.emplace(std::max(k, centre), std::min(k, centre));
    }
  } else {  // a random graph with twice as many edges as blocks
    for (int e = 0; e < 2 * nb; ++e) {
      const int i = block(*rng), j = block(*rng);
      if (i != j) pairs.emplace(std::max(i, j), std::min(i, j));
    }
  }
  return {pairs.begin(), pairs.end()};
}

TEST_CASE("block Cholesky: solves as a dense factorization does, on chains, stars and graphs") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int nb = 1 + trial % 23, kind = trial % 3;
    CAPTURE(nb);
    CAPTURE(kind);
    const std::vector<std::pair<int, int>> pairs = RandomPattern(nb, kind, &rng);
    BlockCholesky cholesky;
    REQUIRE(cholesky.Analyze(nb, pairs));
    const Eigen::MatrixXd A = Assemble(nb, pairs, &rng, &cholesky);
    REQUIRE(cholesky.Factorize());
    const Eigen::VectorXd b = Eigen::VectorXd::Random(kB * nb);
    Eigen::VectorXd x;
    cholesky.Solve(b, &x);
    const Eigen::VectorXd expected = A.llt().solve(b);
    CHECK((x - expected).norm() <= 1e-10 * (1.0 + expected.norm()));
    CHECK((A * x - b).norm() <= 1e-10 * (1.0 + b.norm()) * A.norm());
  }
}

TEST_CASE("block Cholesky: the analysis is kept for the same pattern; not positive definite") {
  std::mt19937 rng(3);
  const std::vector<std::pair<int, int>> pairs = RandomPattern(12, 2, &rng);
  BlockCholesky cholesky;
  REQUIRE(cholesky.Analyze(12, pairs));
  REQUIRE(cholesky.Analyze(12, pairs));
  CHECK(cholesky.analyses() == 1);
  for (int repeat = 0; repeat < 3; ++repeat) {  // refactorized with new values, same storage
    const Eigen::MatrixXd A = Assemble(12, pairs, &rng, &cholesky);
    REQUIRE(cholesky.Factorize());
    const Eigen::VectorXd b = Eigen::VectorXd::Ones(kB * 12);
    Eigen::VectorXd x;
    cholesky.Solve(b, &x);
    CHECK((A * x - b).norm() <= 1e-10 * A.norm() * b.norm());
  }
  const std::vector<std::pair<int, int>> other = RandomPattern(12, 0, &rng);
  REQUIRE(cholesky.Analyze(12, other));
  CHECK(cholesky.analyses() == 2);
  // A negative diagonal block: refused.
  cholesky.SetZero();
  cholesky.Add(0, 0, -Block::Identity());
  for (int k = 1; k < 12; ++k) cholesky.Add(k, k, Block::Identity());
  CHECK_FALSE(cholesky.Factorize());
}

}  // namespace
}  // namespace ncpkit
