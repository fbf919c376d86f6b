// The linear system a sensitivity solves at a solution (its "selected" system: the rows of the
// active constraints), factorized once for the forward and the adjoint products: a small system
// by a dense complete orthogonal decomposition (its pseudo-inverse), or where it is singular,
// symmetric and positive semidefinite (every contact sticking) by a Cholesky factorization with
// diagonal pivoting and its null space (the same pseudo-inverse, cheaper); a larger one by KLU of
// the matrix and of its transpose, or, where the matrix is singular, the solution of least norm:
// from a sparse rank-revealing QR factorization of its transpose (SuiteSparseQR; the adjoint
// products are the exact transposes of the forward ones, selected_system.cc); where that does not
// see the rank deficiency, the least-squares solution of least norm from a dense complete
// orthogonal decomposition (its pseudo-inverse). A symmetric system that a caller knows as
// J M^-1 J^T on independent groups (a global friction problem's sticking contacts) is factorized
// from J and M instead, group by group (FactorizeFromRows). With it, the
// small kernels every sensitivity shares: Jacobian columns per matrix entry, outer products on a
// pattern, and the size limit of dense Jacobians.
#ifndef NCPKIT_SOLVERS_SENSITIVITY_INTERNAL_SELECTED_SYSTEM_H_
#define NCPKIT_SOLVERS_SENSITIVITY_INTERNAL_SELECTED_SYSTEM_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <vector>

#include "solvers/lcp/independent_blocks.h"

namespace ncpkit {

class KluLu;

namespace internal {

class SelectedSystem {
 public:
  SelectedSystem();
  ~SelectedSystem();
  SelectedSystem(SelectedSystem&&) noexcept;
  SelectedSystem& operator=(SelectedSystem&&) noexcept;

  // Factorizes A (square, compressed or not). Throws InputError naming `what` where A (or one
  // of its independent blocks) is singular, has more than max_dense_least_squares rows and is
  // not seen singular by the sparse QR; a block of at most 32 rows is always decomposed dense
  // (a few kilobytes, below any limit worth setting).
  void Factorize(const Eigen::SparseMatrix<double>& A, int max_dense_least_squares,
                 const char* what);
  // The same for an n x n system never stored whole, where it is small enough for the dense
  // decomposition or splits into independent blocks that all are: for_each_entry(add) hands
  // every entry to add(row, column, value) (duplicates summed in that order), twice, and the
  // blocks are filled densely straight from them (the factorization Factorize() would make of
  // the same matrix, without its triplets and sparse copy). False, with nothing done, where a
  // block is too large for that: then Factorize() is the way.
  template <class ForEachEntry>
  bool FactorizeSmallBlocks(int n, const ForEachEntry& for_each_entry);
  // A system that is, on independent groups of its n unknowns, K_g = J_g M_g^-1 J_g^T for rows
  // J_g (m_g x d_g) of full column rank and M_g (d_g x d_g) symmetric positive definite: each
  // group factorized from J_g and M_g without forming K_g. Its pseudo-inverse, the Moore-Penrose
  // one, is J A^-1 M A^-1 J^T with A = J^T J (J's full column rank makes K's range J's), its
  // null space J's left one: d_g x d_g work where K_g is m_g x m_g. Every unknown is in one
  // group. False, the system left empty, where a group's rows do not fit its unknowns or the
  // bound ||A||_F ||L^-1||_F^2 (A = L L^T) on A's 2-norm condition number exceeds
  // kMaxRowsCondition (rows nearly dependent: K's rank is then Factorize()'s to judge). The
  // groups' rows and masses are moved into the factorization (consumed either way).
  struct RowsGroup {
    std::vector<int> unknowns;  // ascending
    Eigen::MatrixXd rows, mass;
  };
  bool FactorizeFromRows(int n, std::vector<RowsGroup>* groups);
  static constexpr double kMaxRowsCondition = 1e8;
  // The most rows of a system or block FactorizeSmallBlocks() and Factorize() decompose dense
  // without more ado: at that size the dense decomposition costs less than KLU's analysis alone,
  // and it reveals the rank by itself (a box on four corners, 12 rows: the sliding box's state
  // Jacobian took 128 us through KLU, singular there, then the dense decomposition).
  static constexpr int kDenseRows = 32;
  // A^-1 b (or A^-T b); where A is singular, G b (or G^T b) for a generalized inverse G that
  // gives the least-norm solution of a consistent A x = b (for a b outside A's range: of its
  // independent equations with the sparse factorization, in the least-squares sense with the
  // dense one).
  Eigen::VectorXd Solve(const Eigen::VectorXd& b, bool transpose) const;
  // The same for every column of B at once (a dense decomposition's solves take them together).
  Eigen::MatrixXd SolveColumns(const Eigen::MatrixXd& B, bool transpose) const;
  bool least_squares() const { return least_squares_; }
  // An orthonormal basis of A's null space (n x its dimension): the directions in which the
  // solution is not determined (no columns where A is regular).
  // (Formed on each call: from the independent blocks' own, and a dense decomposition's from it.)
  Eigen::MatrixXd null_basis() const;
  // Its dimension: null_basis().cols(), without forming it.
  Eigen::Index nullity() const;

  // One rank-deficient sparse QR factorization (selected_system.cc).
  struct SparseLeastSquares;
  // One singular symmetric positive semidefinite system's pseudo-inverse (selected_system.cc).
  struct Semidefinite;
  // One group of FactorizeFromRows() (selected_system.cc).
  struct FromRows;

 private:
  // The complete orthogonal decomposition of a small or singular system: its pseudo-inverse
  // (the inverse where the system is regular) and null space.
  void FactorizeDense(const Eigen::MatrixXd& dense);
  // A sparse factorization's solve (lu_ or qr_).
  Eigen::VectorXd SolveSparse(const Eigen::VectorXd& b, bool transpose) const;
  // The null space's basis from decomposition_.
  Eigen::MatrixXd DenseNullBasis() const;
  // Where A's unknowns split into independent groups (A is block diagonal up to a symmetric
  // permutation: a scene's separate islands), each group factorized alone; false where they do
  // not split.
  bool FactorizeBlocks(const Eigen::SparseMatrix<double>& A, int max_dense_least_squares,
                       const char* what);
  // One independent group: its unknowns (ascending) and its own factorization.
  struct Block;
  // Clears every factorization for a system of n unknowns.
  void Reset(Eigen::Index n);
  // Factorizes the blocks `found` gives, block b's matrix dense[b].
  void FactorizeDenseBlocks(const IndependentBlocks& found,
                            const std::vector<Eigen::MatrixXd>& dense);

  std::vector<Block> blocks_;

  std::unique_ptr<KluLu> lu_, lu_transpose_;
  std::unique_ptr<SparseLeastSquares> qr_;
  std::unique_ptr<Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>> decomposition_;
  std::unique_ptr<Semidefinite> semidefinite_;
  std::unique_ptr<FromRows> from_rows_;
  Eigen::MatrixXd pseudo_inverse_, null_basis_;  // null_basis_: the sparse QR's
  Eigen::Index n_ = 0, dense_nullity_ = 0;
  bool least_squares_ = false;
  // decomposition_, semidefinite_ or from_rows_ (singular) or pseudo_inverse_ (regular) solves it
  bool dense_ = false;
};

template <class ForEachEntry>
bool SelectedSystem::FactorizeSmallBlocks(int n, const ForEachEntry& for_each_entry) {
  if (n <= kDenseRows) {
    Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
    for_each_entry([&](int i, int j, double value) { dense(i, j) += value; });
    Reset(n);
    if (n > 0) FactorizeDense(dense);
    return true;
  }
  IndependentBlocks found;
  found.Start(n);
  for_each_entry([&](int i, int j, double) {
    if (i != j) found.Join(i, j);
  });
  found.Number();
  for (int b = 0; b < found.num_blocks(); ++b) {
    if (found.block_size(b) > kDenseRows) return false;
  }
  std::vector<Eigen::MatrixXd> dense(found.num_blocks());
  for (int b = 0; b < found.num_blocks(); ++b)
    dense[b].setZero(found.block_size(b), found.block_size(b));
  for_each_entry([&](int i, int j, double value) {
    dense[found.block(i)](found.position(i), found.position(j)) += value;
  });
  FactorizeDenseBlocks(found, dense);
  return true;
}

// The Jacobian with respect to a matrix A's entries when the data enter as A x (dF = dA x):
// a column per nonzero (i, j) of `pattern` (column-major order), x_j times column i of
// `by_rhs`, the Jacobian with respect to an additive change of F.
Eigen::MatrixXd ColumnsPerEntry(const Eigen::MatrixXd& by_rhs,
                                const Eigen::SparseMatrix<double>& pattern,
                                const Eigen::VectorXd& x);
// The outer product left right^T on the nonzeros of `pattern`.
Eigen::SparseMatrix<double> OuterOnPattern(const Eigen::SparseMatrix<double>& pattern,
                                           const Eigen::VectorXd& left,
                                           const Eigen::VectorXd& right);

// Dense Jacobians are refused above this many entries (400 MB of doubles): Jvp and Vjp serve
// problems that large.
constexpr double kMaxDenseJacobianEntries = 5e7;
// Throws InputError naming `what` where a rows x cols dense Jacobian exceeds that.
void RequireDenseJacobianSize(double rows, double cols, const char* what);

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_SENSITIVITY_INTERNAL_SELECTED_SYSTEM_H_
