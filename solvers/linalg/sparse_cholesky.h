// Sparse Cholesky factorization with SuiteSparse CHOLMOD, in the shape of Eigen's
// factorizations, keeping its symbolic analysis while the sparsity pattern does not change.
#ifndef NCPKIT_SOLVERS_LINALG_SPARSE_CHOLESKY_H_
#define NCPKIT_SOLVERS_LINALG_SPARSE_CHOLESKY_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <vector>

namespace ncpkit {

// A = L L^T of a symmetric positive definite matrix (its lower triangle is read), simplicial
// CHOLMOD with its fill-reducing ordering. compute() analyzes the pattern only when it differs
// from the last analyzed one (a time-stepper whose stiffness keeps its pattern analyzes once),
// then factorizes. CHOLMOD prints nothing: its messages are kept for messages(). CHOLMOD's
// memory is kept in a cache of this object (suitesparse_memory.h), so repeated factorizations
// and solves of the same sizes allocate nothing.
class SparseCholesky {
 public:
  SparseCholesky();
  ~SparseCholesky();
  SparseCholesky(const SparseCholesky&) = delete;
  SparseCholesky& operator=(const SparseCholesky&) = delete;

  void analyzePattern(const Eigen::SparseMatrix<double>& A);
  void factorize(const Eigen::SparseMatrix<double>& A);
  // analyzePattern() if A's pattern is not the analyzed one, then factorize().
  void compute(const Eigen::SparseMatrix<double>& A);
  // Success, NumericalIssue (not positive definite) or InvalidInput (no analysis).
  Eigen::ComputationInfo info() const { return info_; }
  // Solves A x = b (b a vector or a sparse matrix of right-hand sides) with the last
  // successful factorization.
  Eigen::VectorXd solve(const Eigen::VectorXd& b) const;
  Eigen::SparseMatrix<double> solve(const Eigen::SparseMatrix<double>& B) const;
  // The same into existing storage: with the sizes (and, for B, the fill) of the last solve,
  // nothing is allocated.
  void solveInto(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;
  void solveInto(const Eigen::SparseMatrix<double>& B, Eigen::SparseMatrix<double>* X) const;
  // "; CHOLMOD error: ..." (or warning) for each message since the last analyzePattern(),
  // factorize() or compute() began; empty when CHOLMOD had nothing to say.
  const std::string& messages() const;
  // Symbolic analyses over this object's life.
  int symbolic_analyses() const { return symbolic_analyses_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Eigen::ComputationInfo info_ = Eigen::InvalidInput;
  int symbolic_analyses_ = 0;
  // The analyzed pattern: column starts and row indices.
  std::vector<int> pattern_outer_, pattern_inner_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LINALG_SPARSE_CHOLESKY_H_
