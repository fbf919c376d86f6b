// The regularized normal equations (H^T H + mu I) d = b of a sparse square H, for Newton
// methods' Levenberg-Marquardt directions: the pattern of H^T H + I and its symbolic analysis
// (Eigen's SimplicialLDLT with AMD) are kept while H's pattern stays the same, so that a new H
// costs the product's multiply-adds and the numeric factorization alone. At a degenerate
// solution every iteration takes that direction, and forming H^T H by a general sparse product
// and analysing it afresh would cost as much as the factorizations of the step (a resting
// pyramid of boxes stepped implicitly, docs/solvers.md).
// Only the lower triangle is formed, the half SimplicialLDLT reads. Each of its entries is summed
// over H's rows in ascending order, as Eigen's sparse product sums it: the system, its
// factorization and its solution are those of SimplicialLDLT(H^T H + mu I) bit for bit
// (normal_equations_test.cc).
#ifndef NCPKIT_SOLVERS_LINALG_INTERNAL_NORMAL_EQUATIONS_H_
#define NCPKIT_SOLVERS_LINALG_INTERNAL_NORMAL_EQUATIONS_H_

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <vector>

namespace ncpkit::internal {

class NormalEquations {
 public:
  // Forms H^T H + mu I (H square and compressed) and factorizes it; the pattern is analysed
  // again only where H's differs from the last call's. False where the factorization fails.
  bool Factorize(const Eigen::SparseMatrix<double>& H, double mu);
  // The solution of the factorized system for b.
  Eigen::VectorXd Solve(const Eigen::VectorXd& b) const { return ldlt_.solve(b); }
  // The lower triangle of the system last factorized (its pattern: H^T H's and the diagonal).
  const Eigen::SparseMatrix<double>& matrix() const { return normal_; }

 private:
  bool SamePattern(const Eigen::SparseMatrix<double>& H) const;
  void BuildPattern(const Eigen::SparseMatrix<double>& H);
  // H^T H + mu I into normal_'s values.
  void Fill(const Eigen::SparseMatrix<double>& H, double mu);

  std::vector<int> outer_, inner_;  // H's pattern when normal_'s was built
  // H's rows: row k's entries are transpose_index_[transpose_outer_[k] ..] (their columns) and
  // H's values at transpose_slot_[..], columns ascending.
  std::vector<int> transpose_outer_, transpose_index_, transpose_slot_;
  std::vector<double> row_values_;  // H's values in row order (Fill's gather)
  std::vector<double> sum_;         // one column of H^T H, scattered
  std::vector<char> touched_;
  std::vector<int> row_cursor_;  // Fill's first entry of each row at or right of the column
  Eigen::SparseMatrix<double> normal_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt_;
  bool analyzed_ = false;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_LINALG_INTERNAL_NORMAL_EQUATIONS_H_
