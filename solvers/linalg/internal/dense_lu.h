// Dense LU with partial pivoting that keeps its storage: Eigen's PartialPivLU (the same
// factorization, solves and condition estimate), without the allocations Eigen's class makes on
// every compute() (its L1 norm) and in its transposed solve and rcond(), and unblocked up to
// n = 64 (Eigen blocks from n = 17 on).
#ifndef NCPKIT_SOLVERS_LINALG_INTERNAL_DENSE_LU_H_
#define NCPKIT_SOLVERS_LINALG_INTERNAL_DENSE_LU_H_

#include <Eigen/Dense>
#include <array>

namespace ncpkit::internal {

class DenseLu {
 public:
  static constexpr int kUnblockedMaxSize = 64;  // unblocked elimination up to this size
  // Factorizes a square matrix (any dense expression, e.g. a block of a larger buffer).
  template <class Matrix>
  void compute(const Matrix& A) {
    lu_ = A;
    FactorizeInPlace(-1.0);
  }
  // compute(), except that it stops at the first pivot of magnitude at most relative_floor
  // times A's L1 norm and returns false: A is then taken as singular and the factorization is
  // incomplete (not to be used). True if every pivot is above that floor, as a full
  // compute() followed by a test of U's diagonal would say, at a fraction of the cost when
  // the small pivot comes early.
  template <class Matrix>
  bool ComputeRegular(const Matrix& A, double relative_floor) {
    lu_ = A;
    return FactorizeInPlace(relative_floor) && lu_.rows() > 0;
  }
  // ComputeRegular() of *A, taking its storage instead of copying it: *A is left with the
  // storage the factorization had (contents unspecified, sized for the previous matrix).
  bool ComputeRegularInPlace(Eigen::MatrixXd* A, double relative_floor) {
    lu_.swap(*A);
    return FactorizeInPlace(relative_floor) && lu_.rows() > 0;
  }
  // Sizes every member for k x k matrices, so that the first compute() of that size does not
  // allocate.
  void Reserve(Eigen::Index k);
  Eigen::Index rows() const { return lu_.rows(); }
  // Scratch vectors of the factorized size, kept with the factorization (a caller that needs
  // vectors of the basis size uses these: they never change size).
  Eigen::VectorXd& Scratch(int i) { return scratch_[i]; }
  const Eigen::MatrixXd& matrixLU() const { return lu_; }
  double l1_norm() const { return l1_norm_; }  // of the factorized matrix
  // x = A^-1 b.
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;
  // y = A^-T c (`work` holds an intermediate).
  void SolveTransposed(const Eigen::VectorXd& c, Eigen::VectorXd* work, Eigen::VectorXd* y) const;
  // Eigen's reciprocal condition estimate (Hager's method with Higham's alternative).
  double Rcond();

 private:
  double InverseL1NormEstimate();
  // Factorizes lu_ in place with a pivot floor relative to its L1 norm (negative: none); false
  // if a pivot is at or below it (the elimination then stops there, except the blocked one).
  bool FactorizeInPlace(double relative_floor);
  // Right-looking elimination with partial pivoting on lu_ in place, the same steps as Eigen's
  // unblocked_lu (largest pivot, first of equals; a zero column is skipped), in plain loops;
  // false, stopping there, at a pivot of magnitude <= floor.
  bool UnblockedLu(double floor);

  Eigen::MatrixXd lu_;
  Eigen::RowVectorXd column_sums_;
  double l1_norm_ = 0.0;
  Eigen::Transpositions<Eigen::Dynamic> transpositions_;
  Eigen::PermutationMatrix<Eigen::Dynamic> permutation_;
  std::array<Eigen::VectorXd, 5> work_;
  std::array<Eigen::VectorXd, 6> scratch_;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_LINALG_INTERNAL_DENSE_LU_H_
