#include "solvers/sensitivity/internal/selected_system.h"

#include <string>

#include "solvers/base/input_error.h"
#include "solvers/linalg/sparse_lu.h"

namespace ncpkit::internal {

namespace {

// KLU's rough reciprocal condition estimate below which the matrix is taken as singular.
constexpr double kSingularRcond = 1e-13;
// The complete orthogonal decomposition's pivots below this fraction of the largest count as
// zero: the rank it sees where KLU found the matrix singular.
constexpr double kRankThreshold = 1e-12;

}  // namespace

SelectedSystem::SelectedSystem() = default;
SelectedSystem::~SelectedSystem() = default;
SelectedSystem::SelectedSystem(SelectedSystem&&) noexcept = default;
SelectedSystem& SelectedSystem::operator=(SelectedSystem&&) noexcept = default;

void SelectedSystem::Factorize(const Eigen::SparseMatrix<double>& A, int max_dense_least_squares,
                               const char* what) {
  lu_.reset();
  lu_transpose_.reset();
  least_squares_ = false;
  null_projector_.resize(0, 0);
  if (A.rows() == 0) return;
  Eigen::SparseMatrix<double> matrix = A;
  matrix.makeCompressed();
  lu_ = std::make_unique<KluLu>();
  lu_->compute(matrix);
  if (lu_->info() == Eigen::Success && lu_->rcond() > kSingularRcond) {
    const Eigen::SparseMatrix<double> transpose = matrix.transpose();
    lu_transpose_ = std::make_unique<KluLu>();
    lu_transpose_->compute(transpose);
    if (lu_transpose_->info() == Eigen::Success) return;
  }
  lu_.reset();
  lu_transpose_.reset();
  const int n = static_cast<int>(A.rows());
  if (n > max_dense_least_squares)
    throw InputError("sensitivity: " + std::string(what) + " (" + std::to_string(n) + " x " +
                     std::to_string(n) +
                     ") is singular and larger than max_dense_least_squares = " +
                     std::to_string(max_dense_least_squares));
  least_squares_ = true;
  // The pseudo-inverse serves both products: (A^T)^+ = (A^+)^T.
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> decomposition;
  decomposition.setThreshold(kRankThreshold);
  const Eigen::MatrixXd dense(matrix);
  decomposition.compute(dense);
  pseudo_inverse_ = decomposition.pseudoInverse();
  null_projector_ = Eigen::MatrixXd::Identity(n, n) - pseudo_inverse_ * dense;
}

Eigen::VectorXd SelectedSystem::Solve(const Eigen::VectorXd& b, bool transpose) const {
  if (b.size() == 0) return b;
  if (least_squares_) {
    if (transpose) return pseudo_inverse_.transpose() * b;
    return pseudo_inverse_ * b;
  }
  return transpose ? lu_transpose_->solve(b) : lu_->solve(b);
}

Eigen::MatrixXd ColumnsPerEntry(const Eigen::MatrixXd& by_rhs,
                                const Eigen::SparseMatrix<double>& pattern,
                                const Eigen::VectorXd& x) {
  Eigen::MatrixXd out(by_rhs.rows(), pattern.nonZeros());
  Eigen::Index k = 0;
  for (int j = 0; j < pattern.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(pattern, j); it; ++it, ++k)
      out.col(k) = x[j] * by_rhs.col(it.row());
  return out;
}

Eigen::SparseMatrix<double> OuterOnPattern(const Eigen::SparseMatrix<double>& pattern,
                                           const Eigen::VectorXd& left,
                                           const Eigen::VectorXd& right) {
  Eigen::SparseMatrix<double> out = pattern;
  for (int j = 0; j < out.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(out, j); it; ++it)
      it.valueRef() = left[it.row()] * right[j];
  return out;
}

void RequireDenseJacobianSize(double rows, double cols, const char* what) {
  if (rows * cols > kMaxDenseJacobianEntries)
    throw InputError("sensitivity: the dense Jacobian with respect to " + std::string(what) +
                     " would have " + std::to_string(static_cast<long long>(rows)) + " x " +
                     std::to_string(static_cast<long long>(cols)) +
                     " entries (more than 5e7); use the Jacobian-vector or vector-Jacobian "
                     "products");
}

}  // namespace ncpkit::internal
