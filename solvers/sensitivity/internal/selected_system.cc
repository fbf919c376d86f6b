#include "solvers/sensitivity/internal/selected_system.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "solvers/base/input_error.h"
#include "solvers/linalg/sparse_lu.h"

namespace ncpkit::internal {

namespace {

// KLU's rough reciprocal condition estimate below which the matrix is taken as singular
// without more ado.
constexpr double kSingularRcond = 1e-13;
// Above this 1-norm condition number (estimated from solves, ConditionEstimate()) the matrix is
// taken as singular. KLU's own estimate, from the pivots alone, is too rough for that: a
// selected system of a box sliding on four corners had an estimate of 1.5e-12 and a condition
// number of 3.9e16 (SVD), and its two factorizations' products disagreed in the first digit.
constexpr double kMaxCondition = 1e12;

// Hager's (1984) estimate of ||A^-1||_1 from solves with A and A^T, times ||A||_1 (Higham's
// refinement of the start and the stopping test; at most five rounds).
double ConditionEstimate(const Eigen::SparseMatrix<double>& A, const KluLu& lu,
                         const KluLu& lu_transpose) {
  const Eigen::Index n = A.rows();
  double norm = 0.0;
  for (Eigen::Index j = 0; j < A.outerSize(); ++j) {
    double column = 0.0;
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, j); it; ++it)
      column += std::abs(it.value());
    norm = std::max(norm, column);
  }
  Eigen::VectorXd x = Eigen::VectorXd::Constant(n, 1.0 / static_cast<double>(n));
  double estimate = 0.0;
  for (int round = 0; round < 5; ++round) {
    const Eigen::VectorXd y = lu.solve(x);
    if (!y.allFinite()) return std::numeric_limits<double>::infinity();
    estimate = y.lpNorm<1>();
    const Eigen::VectorXd signs = y.unaryExpr([](double v) { return v >= 0.0 ? 1.0 : -1.0; });
    const Eigen::VectorXd z = lu_transpose.solve(signs);
    Eigen::Index j = 0;
    const double largest = z.cwiseAbs().maxCoeff(&j);
    if (round > 0 && largest <= z.dot(x)) break;
    x = Eigen::VectorXd::Unit(n, j);
  }
  return norm * estimate;
}
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
    if (lu_transpose_->info() == Eigen::Success &&
        ConditionEstimate(matrix, *lu_, *lu_transpose_) <= kMaxCondition) {
      return;
    }
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
