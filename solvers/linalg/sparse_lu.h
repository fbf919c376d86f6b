// Sparse LU factorization with SuiteSparse KLU, in the shape of Eigen's factorizations.
#ifndef NCPKIT_SOLVERS_LINALG_SPARSE_LU_H_
#define NCPKIT_SOLVERS_LINALG_SPARSE_LU_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>

namespace ncpkit {

// KLU (Davis & Palamadai Natarajan) for square column-major matrices: analyzePattern() once
// per sparsity pattern (the symbolic analysis is reused by every factorize()), factorize()
// per matrix, solve() per right-hand side; info() after each step. KLU's memory is kept in a
// cache of this object (suitesparse_memory.h): once the pattern is analyzed, factorizations
// and solves allocate nothing.
class KluLu {
 public:
  KluLu();
  ~KluLu();
  KluLu(const KluLu&) = delete;
  KluLu& operator=(const KluLu&) = delete;

  void analyzePattern(const Eigen::SparseMatrix<double>& A);
  void factorize(const Eigen::SparseMatrix<double>& A);
  // A with the last successful factorization's pivot order (KLU's klu_refactor: no pivot
  // search, about two thirds of factorize()'s work on the friction Newton matrices). Nothing
  // checks that those pivots suit A: a tiny pivot gives a poor solve with info() Success, so
  // the caller checks its solution (a backward error). InvalidInput without such a
  // factorization or for another pattern.
  void refactorize(const Eigen::SparseMatrix<double>& A);
  void compute(const Eigen::SparseMatrix<double>& A) {
    analyzePattern(A);
    if (info_ == Eigen::Success) factorize(A);
  }
  // Success, NumericalIssue (singular) or InvalidInput (no analysis / other pattern).
  Eigen::ComputationInfo info() const { return info_; }
  // Solves A x = b with the last successful factorization.
  Eigen::VectorXd solve(const Eigen::VectorXd& b) const;
  // The same in place: *x holds b on entry (no allocation).
  void solveInPlace(Eigen::VectorXd* x) const;
  // The nonzeros of L and U that the analysis predicts (KLU's estimate, before pivoting moves
  // them; 0 without an analysis).
  double predicted_fill() const;
  // Reciprocal condition estimate of the last factorization (KLU's rcond: cheap, rough).
  double rcond() const;

 private:
  void FreeNumeric();
  struct Impl;
  Impl* impl_;
  Eigen::ComputationInfo info_ = Eigen::InvalidInput;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LINALG_SPARSE_LU_H_
