#include "solvers/sensitivity/internal/selected_system.h"

#include <Eigen/SPQRSupport>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "solvers/base/input_error.h"
#include "solvers/lcp/independent_blocks.h"
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
// zero: the rank it sees where KLU found the matrix singular; the sparse QR's columns whose
// remaining norm is below this fraction of the largest column's are dependent.
constexpr double kRankThreshold = 1e-12;
// Singular systems from this many rows on take the sparse QR; smaller ones the dense
// decomposition, cheaper there (a box on four corners: 12 rows, the sparse QR's setup took its
// state Jacobian from 115 to 250 us).
constexpr int kSparseLeastSquaresRows = 48;

}  // namespace

// A rank-revealing sparse QR factorization of A's transpose, A^T P = Q R with
// R = [R11 R12; 0 ~0] of rank r (SuiteSparseQR's rank detection). A's independent rows are
// P's first r (A^T P [I; 0] = Q_r R11), and G b = Q_r R11^-T (P^T b)_r solves them with x in
// the range of their coefficients: the least-norm solution of A x = b (exact where b is
// consistent, as a sensitivity's right-hand sides are at a solution: the dependent rows then
// hold too). The adjoint products use G^T c = P [R11^-1 (Q^T c)_r; 0], the basic solution of
// A^T y = c, so that the two products are exact transposes of one linear map. A's null space is
// the complement of A^T's range, spanned by Q's last n - r columns.
struct SelectedSystem::SparseLeastSquares {
  Eigen::SPQR<Eigen::SparseMatrix<double>> qr;
  Eigen::Index rank = 0;

  // Factorizes A^T; false where that fails or sees full rank.
  bool Compute(const Eigen::SparseMatrix<double>& transpose) {
    double largest = 0.0;
    for (Eigen::Index j = 0; j < transpose.cols(); ++j) {
      largest = std::max(largest, transpose.col(j).norm());
    }
    qr.setPivotThreshold(kRankThreshold * largest);
    qr.compute(transpose);
    if (qr.info() != Eigen::Success) return false;
    rank = qr.rank();
    return rank > 0 && rank < transpose.cols();
  }

  Eigen::VectorXd Solve(const Eigen::VectorXd& b) const {
    const auto indices = qr.colsPermutation().indices();
    Eigen::VectorXd z = Eigen::VectorXd::Zero(qr.rows());
    for (Eigen::Index i = 0; i < rank; ++i) z[i] = b[indices[i]];
    const Eigen::SparseMatrix<double, Eigen::ColMajor, SuiteSparse_long> R = qr.matrixR();
    const Eigen::SparseMatrix<double, Eigen::ColMajor, SuiteSparse_long> R11 =
        R.topLeftCorner(rank, rank);
    z.head(rank) = R11.transpose().triangularView<Eigen::Lower>().solve(z.head(rank));
    return qr.matrixQ() * z;
  }

  Eigen::VectorXd SolveAdjoint(const Eigen::VectorXd& c) const { return qr.solve(c); }

  Eigen::MatrixXd NullBasis() const {
    const Eigen::Index n = qr.rows();
    Eigen::MatrixXd tail = Eigen::MatrixXd::Zero(n, n - rank);
    tail.bottomRows(n - rank).setIdentity();
    return qr.matrixQ() * tail;
  }
};

// A singular symmetric positive semidefinite A (n x n, rank r < n; a block where every contact
// sticks: A = W restricted to it) by Cholesky factorization with diagonal pivoting, stopped where
// the largest remaining pivot falls below kRankThreshold of the first: P A P^T = [L1; L2] D
// [L1; L2]^T with L1 (r x r) unit lower triangular, D (r) positive. B b = P^T [(L1 D L1^T)^-1
// (P b)_r; 0] solves A x = b for a consistent b (B is a generalized inverse), A's null space is
// spanned by the columns of N = P^T [-L1^-T L2^T; I], and with Pi the orthogonal projection onto
// A's range, b - N (N^T N)^-1 N^T b, the pseudo-inverse is Pi B Pi: the least-norm least-squares
// solution that the complete orthogonal decomposition gives, at a fraction of its cost (it is
// symmetric, so the adjoint products are the same map). Half as many pivots as rows on a resting
// column of boxes: four corners each carry weight the rows cannot tell apart.
struct SelectedSystem::Semidefinite {
  std::vector<int> order;            // P: position k holds unknown order[k]
  Eigen::MatrixXd lower;             // [L1; L2], n x r
  Eigen::VectorXd pivots;            // D
  Eigen::MatrixXd null;              // N, n x (n - r)
  Eigen::LLT<Eigen::MatrixXd> gram;  // N^T N

  // False where A is not (to kRankThreshold) symmetric, semidefinite and singular: then the
  // complete orthogonal decomposition serves.
  bool Compute(const Eigen::MatrixXd& A) {
    const Eigen::Index n = A.rows();
    const double scale = A.cwiseAbs().maxCoeff();
    if (!(scale > 0.0)) return false;
    for (Eigen::Index j = 0; j < n; ++j) {  // (most unsymmetric systems fail at once)
      for (Eigen::Index i = j + 1; i < n; ++i) {
        if (!(std::abs(A(i, j) - A(j, i)) <= kRankThreshold * scale)) return false;
      }
    }
    Eigen::MatrixXd S(n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = 0; i < n; ++i) S(i, j) = 0.5 * (A(i, j) + A(j, i));
    }
    order.resize(static_cast<size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) order[i] = static_cast<int>(i);
    Eigen::Index rank = 0;
    double first = 0.0;
    for (; rank < n; ++rank) {
      Eigen::Index j = rank;
      for (Eigen::Index i = rank + 1; i < n; ++i) j = S(i, i) > S(j, j) ? i : j;
      const double largest = S(j, j);
      if (rank == 0) first = largest;
      if (!(largest > kRankThreshold * first)) break;
      if (j != rank) {
        S.row(rank).swap(S.row(j));
        S.col(rank).swap(S.col(j));
        std::swap(order[rank], order[j]);
      }
      // The column below the pivot becomes L's; the rest takes the rank-one update, column by
      // column (contiguous: a plain loop the compiler vectorizes, at these sizes far cheaper
      // than a general outer product).
      double* l = S.col(rank).data();
      for (Eigen::Index i = rank + 1; i < n; ++i) l[i] /= largest;
      for (Eigen::Index c = rank + 1; c < n; ++c) {
        const double factor = largest * l[c];
        double* column = S.col(c).data();
        for (Eigen::Index i = rank + 1; i < n; ++i) column[i] -= factor * l[i];
      }
    }
    // What is left must vanish (a semidefinite A's Schur complement at its rank); an indefinite
    // or regular A goes to the general decomposition.
    if (rank == 0 || rank == n ||
        !(S.bottomRightCorner(n - rank, n - rank).cwiseAbs().maxCoeff() <=
          kRankThreshold * first)) {
      return false;
    }
    pivots = S.diagonal().head(rank);
    lower = S.leftCols(rank).triangularView<Eigen::UnitLower>();
    // N in P's order: [-L1^-T L2^T; I], then rows back to the unknowns'.
    Eigen::MatrixXd permuted(n, n - rank);
    permuted.topRows(rank) = -lower.bottomRows(n - rank).transpose();
    lower.topRows(rank).triangularView<Eigen::UnitLower>().transpose().solveInPlace(
        permuted.topRows(rank));
    permuted.bottomRows(n - rank).setIdentity();
    null.resize(n, n - rank);
    for (Eigen::Index k = 0; k < n; ++k) null.row(order[k]) = permuted.row(k);
    // N^T N = X^T X + I for N's rows in P's order [X; I].
    const Eigen::MatrixXd X = permuted.topRows(rank);
    Eigen::MatrixXd product = Eigen::MatrixXd::Identity(n - rank, n - rank);
    product.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
    gram.compute(product);
    return gram.info() == Eigen::Success;
  }

  // Pi B Pi applied to every column of X.
  Eigen::MatrixXd Solve(const Eigen::MatrixXd& X) const {
    const Eigen::Index n = lower.rows(), rank = lower.cols();
    const auto project = [&](const Eigen::MatrixXd& Y) -> Eigen::MatrixXd {
      return Y - null * gram.solve(null.transpose() * Y);
    };
    const Eigen::MatrixXd range = project(X);
    Eigen::MatrixXd head(rank, X.cols());
    for (Eigen::Index k = 0; k < rank; ++k) head.row(k) = range.row(order[k]);
    const auto L1 = lower.topRows(rank).triangularView<Eigen::UnitLower>();
    L1.solveInPlace(head);
    head = pivots.cwiseInverse().asDiagonal() * head;
    L1.transpose().solveInPlace(head);
    Eigen::MatrixXd basic = Eigen::MatrixXd::Zero(n, X.cols());
    for (Eigen::Index k = 0; k < rank; ++k) basic.row(order[k]) = head.row(k);
    return project(basic);
  }

  // An orthonormal basis of N's columns.
  Eigen::MatrixXd NullBasis() const {
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(null);
    return qr.householderQ() * Eigen::MatrixXd::Identity(null.rows(), null.cols());
  }
};

struct SelectedSystem::FromRows {
  Eigen::MatrixXd rows;     // J, m x d
  Eigen::MatrixXd mass;     // M, d x d
  Eigen::MatrixXd inverse;  // L^-1 for A = J^T J = L L^T (lower triangular)
  // False where A is singular or the bound ||A||_F ||L^-1||_F^2 on its condition number (2-norm)
  // exceeds kMaxRowsCondition: an upper bound, so that nearly dependent rows are never taken,
  // from a triangular inverse that the solves use too (LLT's own 1-norm estimate cost more
  // than the factorization on a resting column's 12 velocities).
  bool Compute(Eigen::MatrixXd J, Eigen::MatrixXd M) {
    const Eigen::Index d = J.cols();
    if (J.rows() < d || d == 0) return false;
    Eigen::MatrixXd A(d, d);
    double norm = 0.0;  // ||A||_F
    if (d <= kLoopSize) {
      norm = LowerNormalMatrix(J, &A);
      if (!CholeskyInPlace(&A)) return false;
      inverse = LowerInverse(A);
    } else {
      A.setZero();
      A.selfadjointView<Eigen::Lower>().rankUpdate(J.transpose());
      norm = A.selfadjointView<Eigen::Lower>().toDenseMatrix().norm();
      Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(A);  // in place: A's lower triangle becomes L
      if (llt.info() != Eigen::Success) return false;
      inverse = Eigen::MatrixXd::Identity(d, d);
      A.triangularView<Eigen::Lower>().solveInPlace(inverse);
    }
    if (!(norm * inverse.squaredNorm() <= kMaxRowsCondition)) return false;
    rows = std::move(J);
    mass = std::move(M);
    return true;
  }
  // Up to this many velocities, A, L and L^-1 by plain loops: there the general kernels'
  // blocking and packing cost more than the arithmetic (1.3 against 0.8 us for a column of two
  // boxes, J 24 x 12); above it, a wall's or a stack's one group, their blocked kernels.
  static constexpr Eigen::Index kLoopSize = 32;
  // A's lower triangle = J^T J's; returns ||A||_F.
  static double LowerNormalMatrix(const Eigen::MatrixXd& J, Eigen::MatrixXd* A) {
    double squares = 0.0;
    for (Eigen::Index j = 0; j < J.cols(); ++j) {
      for (Eigen::Index i = j; i < J.cols(); ++i) {
        const double entry = J.col(i).dot(J.col(j));
        (*A)(i, j) = entry;
        squares += (i == j ? 1.0 : 2.0) * entry * entry;
      }
    }
    return std::sqrt(squares);
  }
  // A's lower triangle replaced by L of A = L L^T (the upper one not read); false where a pivot
  // is not positive (or not finite).
  static bool CholeskyInPlace(Eigen::MatrixXd* matrix) {
    Eigen::MatrixXd& A = *matrix;
    const Eigen::Index d = A.rows();
    for (Eigen::Index j = 0; j < d; ++j) {
      const double pivot = A(j, j) - A.row(j).head(j).squaredNorm();
      if (!(pivot > 0.0 && std::isfinite(pivot))) return false;
      const double l = std::sqrt(pivot);
      A(j, j) = l;
      for (Eigen::Index i = j + 1; i < d; ++i)
        A(i, j) = (A(i, j) - A.row(i).head(j).dot(A.row(j).head(j))) / l;
    }
    return true;
  }
  // L^-1 (lower triangular) by forward substitution, column by column.
  static Eigen::MatrixXd LowerInverse(const Eigen::MatrixXd& L) {
    const Eigen::Index d = L.rows();
    Eigen::MatrixXd X = Eigen::MatrixXd::Zero(d, d);
    for (Eigen::Index j = 0; j < d; ++j) {
      X(j, j) = 1.0 / L(j, j);
      for (Eigen::Index i = j + 1; i < d; ++i) {
        double sum = 0.0;
        for (Eigen::Index k = j; k < i; ++k) sum += L(i, k) * X(k, j);
        X(i, j) = -sum / L(i, i);
      }
    }
    return X;
  }
  // J A^-1 M A^-1 J^T X, with A^-1 = L^-T L^-1, column by column (triangular matrix-vector
  // products: a Vjp's one column went through the general matrix kernels' packing).
  Eigen::MatrixXd Solve(const Eigen::MatrixXd& X) const {
    const auto L = inverse.triangularView<Eigen::Lower>();
    Eigen::MatrixXd out(rows.rows(), X.cols());
    Eigen::VectorXd inner(rows.cols()), turned(rows.cols());
    for (Eigen::Index j = 0; j < X.cols(); ++j) {
      inner.noalias() = rows.transpose() * X.col(j);
      turned.noalias() = L * inner;
      inner.noalias() = L.transpose() * turned;
      turned.noalias() = mass * inner;
      inner.noalias() = L * turned;
      turned.noalias() = L.transpose() * inner;
      out.col(j).noalias() = rows * turned;
    }
    return out;
  }
  // An orthonormal basis of J's left null space (K's null space), from J's QR factorization.
  Eigen::MatrixXd NullBasis() const {
    const Eigen::Index m = rows.rows(), d = rows.cols();
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(rows);
    Eigen::MatrixXd tail = Eigen::MatrixXd::Zero(m, m - d);
    tail.bottomRows(m - d).setIdentity();
    return qr.householderQ() * tail;
  }
};

struct SelectedSystem::Block {
  std::vector<int> unknowns;
  SelectedSystem system;
};

SelectedSystem::SelectedSystem() = default;
SelectedSystem::~SelectedSystem() = default;
SelectedSystem::SelectedSystem(SelectedSystem&&) noexcept = default;
SelectedSystem& SelectedSystem::operator=(SelectedSystem&&) noexcept = default;

void SelectedSystem::Reset(Eigen::Index n) {
  lu_.reset();
  lu_transpose_.reset();
  qr_.reset();
  decomposition_.reset();
  semidefinite_.reset();
  from_rows_.reset();
  blocks_.clear();
  least_squares_ = false;
  dense_ = false;
  null_basis_.resize(n, 0);
  dense_nullity_ = 0;
  n_ = n;
}

void SelectedSystem::Factorize(const Eigen::SparseMatrix<double>& A, int max_dense_least_squares,
                               const char* what) {
  Reset(A.rows());
  if (A.rows() == 0) return;
  const int n = static_cast<int>(A.rows());
  if (n <= kDenseRows) {
    FactorizeDense(Eigen::MatrixXd(A));
    return;
  }
  if (FactorizeBlocks(A, max_dense_least_squares, what)) return;
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
  least_squares_ = true;
  qr_ = std::make_unique<SparseLeastSquares>();
  if (n >= kSparseLeastSquaresRows && qr_->Compute(matrix.transpose())) {
    null_basis_ = qr_->NullBasis();
    if (null_basis_.allFinite()) return;
  }
  qr_.reset();
  if (n > max_dense_least_squares)
    throw InputError("sensitivity: " + std::string(what) + " (" + std::to_string(n) + " x " +
                     std::to_string(n) +
                     ") is singular and larger than max_dense_least_squares = " +
                     std::to_string(max_dense_least_squares));
  FactorizeDense(Eigen::MatrixXd(matrix));
}

bool SelectedSystem::FactorizeBlocks(const Eigen::SparseMatrix<double>& A,
                                     int max_dense_least_squares, const char* what) {
  IndependentBlocks found;
  found.Find(A);
  if (found.num_blocks() < 2) return false;
  const int n = static_cast<int>(A.rows());
  std::vector<int> block_of(n), position(n);
  blocks_.resize(found.num_blocks());
  for (int b = 0; b < found.num_blocks(); ++b) {
    blocks_[b].unknowns.assign(found.members(b), found.members(b) + found.block_size(b));
    for (int k = 0; k < found.block_size(b); ++k) {
      block_of[found.members(b)[k]] = b;
      position[found.members(b)[k]] = k;
    }
  }
  // A block small enough for the dense decomposition is filled as a dense matrix straight from
  // A's entries (most blocks: a column of boxes, a body on the ground), the others as triplets.
  std::vector<Eigen::MatrixXd> dense(blocks_.size());
  std::vector<std::vector<Eigen::Triplet<double>>> entries(blocks_.size());
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Eigen::Index size = static_cast<Eigen::Index>(blocks_[b].unknowns.size());
    if (size <= kDenseRows) dense[b].setZero(size, size);
  }
  for (int j = 0; j < A.outerSize(); ++j) {
    const int b = block_of[j];
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, j); it; ++it) {
      if (dense[b].size() != 0) {
        dense[b](position[it.row()], position[j]) += it.value();
      } else {
        entries[b].emplace_back(position[it.row()], position[j], it.value());
      }
    }
  }
  for (size_t b = 0; b < blocks_.size(); ++b) {
    SelectedSystem& system = blocks_[b].system;
    if (dense[b].size() != 0) {
      system.n_ = dense[b].rows();
      system.null_basis_.resize(system.n_, 0);
      system.FactorizeDense(dense[b]);
    } else {
      const int size = static_cast<int>(blocks_[b].unknowns.size());
      Eigen::SparseMatrix<double> block(size, size);
      block.setFromTriplets(entries[b].begin(), entries[b].end());
      system.Factorize(block, max_dense_least_squares, what);
    }
    least_squares_ = least_squares_ || system.least_squares();
  }
  return true;
}

void SelectedSystem::FactorizeDenseBlocks(const IndependentBlocks& found,
                                          const std::vector<Eigen::MatrixXd>& dense) {
  Eigen::Index n = 0;
  for (int b = 0; b < found.num_blocks(); ++b) n += found.block_size(b);
  Reset(n);
  blocks_.resize(found.num_blocks());
  for (int b = 0; b < found.num_blocks(); ++b) {
    blocks_[b].unknowns.assign(found.members(b), found.members(b) + found.block_size(b));
    SelectedSystem& system = blocks_[b].system;
    system.n_ = dense[b].rows();
    system.null_basis_.resize(system.n_, 0);
    system.FactorizeDense(dense[b]);
    least_squares_ = least_squares_ || system.least_squares();
  }
}

bool SelectedSystem::FactorizeFromRows(int n, std::vector<RowsGroup>* groups_in) {
  std::vector<RowsGroup>& groups = *groups_in;
  Reset(n);
  blocks_.resize(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    blocks_[g].unknowns = std::move(groups[g].unknowns);
    SelectedSystem& system = blocks_[g].system;
    auto from_rows = std::make_unique<FromRows>();
    const Eigen::Index m = groups[g].rows.rows(), d = groups[g].rows.cols();
    if (static_cast<size_t>(m) != blocks_[g].unknowns.size() ||
        !from_rows->Compute(std::move(groups[g].rows), std::move(groups[g].mass))) {
      Reset(n);
      return false;
    }
    system.n_ = m;
    system.dense_ = true;
    system.dense_nullity_ = m - d;
    system.least_squares_ = system.dense_nullity_ > 0;
    system.from_rows_ = std::move(from_rows);
    least_squares_ = least_squares_ || system.least_squares_;
  }
  return true;
}

void SelectedSystem::FactorizeDense(const Eigen::MatrixXd& dense) {
  auto semidefinite = std::make_unique<Semidefinite>();
  if (semidefinite->Compute(dense)) {
    dense_ = true;
    least_squares_ = true;
    dense_nullity_ = semidefinite->null.cols();
    semidefinite_ = std::move(semidefinite);
    return;
  }
  auto decomposition = std::make_unique<Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>>();
  decomposition->setThreshold(kRankThreshold);
  decomposition->compute(dense);
  const Eigen::Index n = dense.rows(), rank = decomposition->rank();
  dense_ = true;
  if (rank == n) {
    // Regular: its inverse serves both products and gives the exact 1-norm condition number,
    // singular above kMaxCondition as the sparse path judges it.
    pseudo_inverse_ = decomposition->pseudoInverse();
    const auto norm1 = [](const Eigen::MatrixXd& m) {
      return m.cwiseAbs().colwise().sum().maxCoeff();
    };
    least_squares_ = norm1(dense) * norm1(pseudo_inverse_) > kMaxCondition;
    return;
  }
  // Singular: the decomposition's own solves apply the pseudo-inverse and its transpose,
  // (A^T)^+ = (A^+)^T. Its null space is formed when asked (DenseNullBasis()): most callers
  // never need it (a sensitivity where no contact slides).
  least_squares_ = true;
  dense_nullity_ = n - rank;
  decomposition_ = std::move(decomposition);
}

Eigen::MatrixXd SelectedSystem::DenseNullBasis() const {
  // A's columns' permutation P and Z of A P = Q [T 0; 0 0] Z give it as P Z^T [0; I]. Z^T is
  // applied to the nullity's columns [0; I] alone, reflector by reflector in the order of
  // Eigen's own Z^T (CompleteOrthogonalDecomposition::applyZAdjointOnTheLeftInPlace, not public),
  // instead of forming Z whole: on a sliding box's 20 unknowns of rank 17, 3 columns instead of 20.
  const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>& cod = *decomposition_;
  const Eigen::Index n = cod.cols(), rank = n - dense_nullity_;
  Eigen::MatrixXd tail = Eigen::MatrixXd::Zero(n, dense_nullity_);
  tail.bottomRows(dense_nullity_).setIdentity();
  Eigen::VectorXd work(dense_nullity_);      // a row's length of the columns
  for (Eigen::Index k = 0; k < rank; ++k) {  // (kept only where rank < n)
    if (k != rank - 1) tail.row(k).swap(tail.row(rank - 1));
    tail.middleRows(rank - 1, n - rank + 1)
        .applyHouseholderOnTheLeft(cod.matrixQTZ().row(k).tail(n - rank).transpose(),
                                   cod.zCoeffs()(k), work.data());
    if (k != rank - 1) tail.row(k).swap(tail.row(rank - 1));
  }
  return cod.colsPermutation() * tail;
}

Eigen::Index SelectedSystem::nullity() const {
  if (blocks_.empty()) {
    return decomposition_ != nullptr || semidefinite_ != nullptr || from_rows_ != nullptr
               ? dense_nullity_
               : null_basis_.cols();
  }
  Eigen::Index out = 0;
  for (const Block& block : blocks_) out += block.system.nullity();
  return out;
}

Eigen::MatrixXd SelectedSystem::null_basis() const {
  if (blocks_.empty()) {
    if (semidefinite_ != nullptr) return semidefinite_->NullBasis();
    if (from_rows_ != nullptr) return from_rows_->NullBasis();
    return decomposition_ != nullptr ? DenseNullBasis() : null_basis_;
  }
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n_, nullity());
  Eigen::Index column = 0;
  for (const Block& block : blocks_) {
    if (block.system.nullity() == 0) continue;  // (no row blocks of an empty matrix)
    const Eigen::MatrixXd basis = block.system.null_basis();
    for (size_t k = 0; k < block.unknowns.size(); ++k) {
      out.row(block.unknowns[k]).segment(column, basis.cols()) = basis.row(k);
    }
    column += basis.cols();
  }
  return out;
}

Eigen::VectorXd SelectedSystem::Solve(const Eigen::VectorXd& b, bool transpose) const {
  if (b.size() == 0) return b;
  if (blocks_.empty() && !dense_) return SolveSparse(b, transpose);
  return SolveColumns(b, transpose);
}

Eigen::VectorXd SelectedSystem::SolveSparse(const Eigen::VectorXd& b, bool transpose) const {
  if (qr_ != nullptr) return transpose ? qr_->SolveAdjoint(b) : qr_->Solve(b);
  return transpose ? lu_transpose_->solve(b) : lu_->solve(b);
}

Eigen::MatrixXd SelectedSystem::SolveColumns(const Eigen::MatrixXd& B, bool transpose) const {
  if (B.size() == 0) return B;
  if (!blocks_.empty()) {
    Eigen::MatrixXd out(B.rows(), B.cols());
    for (const Block& block : blocks_) {
      out(block.unknowns, Eigen::all) =
          block.system.SolveColumns(B(block.unknowns, Eigen::all), transpose);
    }
    return out;
  }
  if (semidefinite_ != nullptr) return semidefinite_->Solve(B);  // symmetric
  if (from_rows_ != nullptr) return from_rows_->Solve(B);        // symmetric
  if (decomposition_ != nullptr) {
    if (transpose) return decomposition_->transpose().solve(B);
    return decomposition_->solve(B);
  }
  if (dense_) {
    if (transpose) return pseudo_inverse_.transpose() * B;
    return pseudo_inverse_ * B;
  }
  Eigen::MatrixXd out(B.rows(), B.cols());
  for (Eigen::Index j = 0; j < B.cols(); ++j) out.col(j) = SolveSparse(B.col(j), transpose);
  return out;
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
