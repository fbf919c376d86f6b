// IndependentBlocks: the blocks of random problems built from known blocks and shuffled, and
// the solution of the whole from the blocks' solutions.
#include "solvers/lcp/independent_blocks.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "solvers/lcp/lemke.h"
#include "solvers/lcp/linear_problem.h"

namespace ncpkit {
namespace {

// A positive definite LCP of `sizes.size()` blocks whose unknowns are shuffled: *block_of
// gets each unknown's block (numbered as built, not as found).
LinearComplementarityProblem ShuffledBlocks(const std::vector<int>& sizes, std::mt19937* rng,
                                            std::vector<int>* block_of) {
  const int n = std::accumulate(sizes.begin(), sizes.end(), 0);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), *rng);
  std::normal_distribution<double> normal;
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::VectorXd q(n);
  block_of->assign(n, -1);
  int first = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    const int m = sizes[b];
    Eigen::MatrixXd A(m, m);
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) A(i, j) = normal(*rng);
    }
    const Eigen::MatrixXd M = A * A.transpose() + Eigen::MatrixXd::Identity(m, m);
    for (int i = 0; i < m; ++i) {
      (*block_of)[order[first + i]] = static_cast<int>(b);
      q[order[first + i]] = normal(*rng);
      for (int j = 0; j < m; ++j)
        triplets.emplace_back(order[first + i], order[first + j], M(i, j));
    }
    first += m;
  }
  Eigen::SparseMatrix<double> M(n, n);
  M.setFromTriplets(triplets.begin(), triplets.end());
  M.makeCompressed();
  return LinearComplementarityProblem(M, q);
}

TEST_CASE("independent blocks: found on shuffled block problems, solved block by block") {
  std::mt19937 rng(7);
  IndependentBlocks blocks;
  for (int trial = 0; trial < 50; ++trial) {
    CAPTURE(trial);
    std::vector<int> sizes(1 + trial % 7);
    for (int& size : sizes) size = 1 + static_cast<int>(rng() % 6);
    std::vector<int> built;
    const LinearComplementarityProblem problem = ShuffledBlocks(sizes, &rng, &built);
    blocks.Find(problem);
    REQUIRE(blocks.num_blocks() == static_cast<int>(sizes.size()));
    // Each found block is one built block, whole; numbered by its smallest unknown.
    int smallest_before = -1;
    for (int b = 0; b < blocks.num_blocks(); ++b) {
      const int* members = blocks.members(b);
      CHECK(members[0] > smallest_before);
      smallest_before = members[0];
      CHECK(std::is_sorted(members, members + blocks.block_size(b)));
      CHECK(blocks.block_size(b) == sizes[built[members[0]]]);
      for (int k = 0; k < blocks.block_size(b); ++k) CHECK(built[members[k]] == built[members[0]]);
    }
    // The blocks' solutions side by side solve the whole problem.
    LemkeSolver lemke;
    Eigen::VectorXd whole = Eigen::VectorXd::Constant(problem.size(), -1.0), part;
    IndependentBlocks::Storage storage;
    LinearComplementarityProblem sub;
    for (int b = 0; b < blocks.num_blocks(); ++b) {
      blocks.Extract(problem, b, &storage, &sub);
      REQUIRE(sub.size() == blocks.block_size(b));
      part.resize(0);
      REQUIRE(lemke.Solve(sub, &part).IsSolved());
      blocks.Scatter(b, part, &whole);
    }
    CHECK(natural_residual(problem, whole) <= 1e-10);
  }
}

TEST_CASE("independent blocks: bounds, a diagonal problem, a full one and an empty one") {
  IndependentBlocks blocks;
  Eigen::MatrixXd D = Eigen::Vector3d(1.0, 2.0, 3.0).asDiagonal();
  const LinearComplementarityProblem diagonal(D, Eigen::Vector3d(-1.0, 1.0, -3.0),
                                              Eigen::Vector3d(-1.0, 0.0, 0.0),
                                              Eigen::Vector3d(2.0, 5.0, 0.5));
  blocks.Find(diagonal);
  CHECK(blocks.num_blocks() == 3);
  IndependentBlocks::Storage storage;
  LinearComplementarityProblem sub;
  blocks.Extract(diagonal, 2, &storage, &sub);
  CHECK(sub.size() == 1);
  CHECK(sub.q()[0] == -3.0);
  CHECK(sub.lower()[0] == 0.0);
  CHECK(sub.upper()[0] == 0.5);
  CHECK(sub.sparse_matrix().coeff(0, 0) == 3.0);
  // One off-diagonal entry joins its row and column both ways.
  D(0, 2) = 0.5;
  blocks.Find(LinearComplementarityProblem(D, Eigen::Vector3d::Zero()));
  CHECK(blocks.num_blocks() == 2);
  CHECK(blocks.block_size(0) == 2);
  CHECK(blocks.members(0)[1] == 2);
  CHECK(blocks.members(1)[0] == 1);
  blocks.Find(LinearComplementarityProblem(Eigen::MatrixXd::Ones(4, 4), Eigen::VectorXd::Ones(4)));
  CHECK(blocks.num_blocks() == 1);
  blocks.Find(LinearComplementarityProblem());
  CHECK(blocks.num_blocks() == 0);
}

}  // namespace
}  // namespace ncpkit
