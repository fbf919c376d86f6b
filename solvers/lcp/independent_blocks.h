// The independent blocks of a linear complementarity problem (M, q, l, u): unknowns i and j are
// in one block when M_ij or M_ji is a stored entry, directly or through other unknowns. No row of
// a block holds another block's unknowns, so each block's principal sub-problem is a problem of
// its own, solved alone and in any order; the solution of the whole is the blocks' solutions side
// by side. A contact problem's blocks are its simulation islands: the contacts of bodies that
// touch, directly or through other bodies.
#ifndef NCPKIT_SOLVERS_LCP_INDEPENDENT_BLOCKS_H_
#define NCPKIT_SOLVERS_LCP_INDEPENDENT_BLOCKS_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <vector>

#include "solvers/lcp/linear_problem.h"

namespace ncpkit {

// Finds the blocks (union-find over the stored entries of M) and moves vectors between the
// whole problem and a block. Blocks are numbered by their smallest unknown; a block's unknowns
// are kept in increasing order. Keeps its lists: a problem of the same size allocates nothing.
class IndependentBlocks {
 public:
  void Find(const LinearComplementarityProblem& problem);
  // The blocks of any square matrix's unknowns, by the same rule.
  void Find(const Eigen::SparseMatrix<double>& matrix);
  // The same for a matrix that is never stored: Start(n), Join(i, j) for each of its entries
  // (0 <= i, j < n; unchecked, as an entry of a stored matrix is), then Number().
  void Start(int n);
  void Join(int i, int j);
  void Number();
  int num_blocks() const { return static_cast<int>(start_.size()) - 1; }
  int block_size(int b) const { return start_[b + 1] - start_[b]; }
  // The unknowns of block b, block_size(b) of them, increasing.
  const int* members(int b) const { return members_.data() + start_[b]; }
  // Unknown i's block and its position among the block's unknowns.
  int block(int i) const { return block_of_[parent_[i]]; }
  int position(int i) const { return local_[i]; }
  // Block b's principal sub-problem (M, q, l, u restricted to its unknowns) into *sub. The
  // matrix and vectors are built in the caller's storage (*M, *q, *l, *u), so that a block of
  // the same size and no more entries than before allocates nothing.
  struct Storage {
    Eigen::SparseMatrix<double> M;
    Eigen::VectorXd q, l, u;
  };
  void Extract(const LinearComplementarityProblem& problem, int b, Storage* storage,
               LinearComplementarityProblem* sub) const;
  // part = full restricted to block b; full's entries of block b = part.
  void Gather(int b, const Eigen::VectorXd& full, Eigen::VectorXd* part) const;
  void Scatter(int b, const Eigen::VectorXd& part, Eigen::VectorXd* full) const;

 private:
  int Root(int i);
  template <class Matrix>
  void FindIn(const Matrix& M);

  std::vector<int> parent_;    // per unknown: union-find parent (its root after numbering)
  std::vector<int> block_of_;  // per root: its block, or -1 before numbering
  std::vector<int> local_;     // per unknown: its position in its block
  std::vector<int> start_;     // block b's unknowns are members_[start_[b], start_[b + 1])
  std::vector<int> members_;
  std::vector<int> cursor_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LCP_INDEPENDENT_BLOCKS_H_
