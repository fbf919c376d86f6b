// A = L L^T of a symmetric positive definite matrix made of 6 x 6 blocks: the Hessian of a
// system of rigid bodies, one block row and column a body, coupled where contacts join two
// bodies (convex_newton.h). The blocks are ordered by approximate minimum degree on the block
// graph (SuiteSparse AMD, the ordering CHOLMOD uses), L's block structure follows from the
// elimination tree, and the numeric factorization works on dense 6 x 6 blocks with fixed-size
// kernels: each body's six columns form one supernode, so the arithmetic runs without the
// per-entry index work of a scalar simplicial factorization, nor a BLAS call per block (what
// CHOLMOD's supernodal one makes, which costs more than it saves on supernodes of six).
#ifndef NCPKIT_SOLVERS_LINALG_BLOCK_CHOLESKY_H_
#define NCPKIT_SOLVERS_LINALG_BLOCK_CHOLESKY_H_

#include <Eigen/Dense>
#include <Eigen/StdVector>
#include <utility>
#include <vector>

namespace ncpkit {

class BlockCholesky {
 public:
  static constexpr int kBlock = 6;
  using Block = Eigen::Matrix<double, kBlock, kBlock>;

  // The pattern: num_blocks diagonal blocks and the off-diagonal block pairs (i, j), i > j
  // (sorted, unique). Orders the blocks and computes L's structure; nothing when the pattern is
  // the one last analyzed. False if the ordering failed (then nothing may be factorized).
  bool Analyze(int num_blocks, const std::vector<std::pair<int, int>>& pairs);
  // Analyses made over this object's life.
  int analyses() const { return analyses_; }
  int size() const { return kBlock * num_blocks_; }

  // Zeroes every block, then Add() assembles A: X at block (i, j), i >= j, of A's lower
  // triangle (symmetric where i == j); (i, j) must be in the analyzed pattern.
  void SetZero();
  void Add(int i, int j, const Block& X);
  // Factorizes what was added in place; false if A is not positive definite.
  bool Factorize();
  // x = A^-1 b after a successful Factorize() (no allocation once sized).
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;

 private:
  using Blocks = std::vector<Block, Eigen::aligned_allocator<Block>>;
  // The storage of block (row, column) of L in the permuted order, row > column.
  Block& Below(int row, int column);

  int num_blocks_ = -1;
  std::vector<std::pair<int, int>> pattern_;  // the analyzed pairs
  std::vector<int> order_;                    // order_[k]: the block eliminated k-th
  std::vector<int> position_;                 // position_[block]: its place in order_
  // L's column k: its rows below the diagonal (permuted indices, increasing) at
  // [column_begin_[k], column_begin_[k + 1]) of rows_, their blocks at the same places of below_.
  std::vector<int> column_begin_, rows_;
  Blocks diagonal_, below_;
  mutable Eigen::VectorXd work_;
  int analyses_ = 0;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LINALG_BLOCK_CHOLESKY_H_
