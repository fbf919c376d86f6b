// Anderson acceleration (Walker & Ni's type II form) of a Gauss-Seidel sweep over contacts,
// shared by NonsmoothGaussSeidel (r and u = W r + q) and VelocityGaussSeidel (r and
// v = M^-1 (H r + f)).
//
// With x_k the point before a sweep, g_k its result and f_k = g_k - x_k, and dG, dF the
// differences of consecutive g and f over the last sweeps, gamma minimizes |f_k - dF gamma| and
// the next start is g_k - dG gamma: the start whose linearized sweep change is least. The least
// squares go by the normal equations, their Gram matrix kept column by column. The second
// vector (u or v) is affine in r, so the combination's is the same combination of the results'
// (their differences kept beside dG): a step costs a few passes over the vectors and no product
// with W or H. Sweeps that change the contacts' states make the map's linearization stale: the
// history restarts when the change grows.
//
// The combination need not lie in the cones; the caller projects it and moves the second vector
// by the projection's change. MaxMemory bounds the history where it is a compile-time constant,
// so that the small matrices keep their storage inside the object.
#ifndef NCPKIT_SOLVERS_FRICTION_INTERNAL_ANDERSON_H_
#define NCPKIT_SOLVERS_FRICTION_INTERNAL_ANDERSON_H_

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>

namespace ncpkit::internal {

template <int MaxMemory>
class AndersonHistory {
 public:
  // Forgets the history, for a new solve.
  void Restart() {
    count_ = next_ = 0;
    started_ = false;
  }

  // After a sweep from `before` to *r, with *affine the second vector at *r: records the sweep
  // in the history of the last `memory` sweeps and, where it holds at least one difference,
  // replaces *r and *affine by the combination. Returns whether it did.
  bool Combine(int memory, const Eigen::VectorXd& before, Eigen::VectorXd* r,
               Eigen::VectorXd* affine) {
    change_ = *r - before;
    const double change_norm = change_.norm();
    if (!started_) {
      result_differences_.resize(r->size(), memory);
      change_differences_.resize(r->size(), memory);
      affine_differences_.resize(affine->size(), memory);
      gram_.resize(memory, memory);
    } else if (!(change_norm <= last_change_norm_)) {
      count_ = next_ = 0;
    } else {
      Record(memory, *r, *affine);
    }
    started_ = true;
    last_result_ = *r;
    last_change_ = change_;
    last_affine_ = *affine;
    last_change_norm_ = change_norm;
    const int count = count_;
    if (count == 0) return false;
    normal_ = gram_.topLeftCorner(count, count);
    // (A relative shift keeps nearly dependent columns from blowing gamma up.)
    normal_.diagonal().array() += 1e-12 * normal_.trace() / count;
    normal_ldlt_.compute(normal_);
    gamma_.noalias() = change_differences_.leftCols(count).transpose() * change_;
    gamma_ = normal_ldlt_.solve(gamma_);
    if (!gamma_.allFinite()) {
      count_ = next_ = 0;
      return false;
    }
    r->noalias() -= result_differences_.leftCols(count) * gamma_;
    affine->noalias() -= affine_differences_.leftCols(count) * gamma_;
    return true;
  }

 private:
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxMemory, MaxMemory>;
  using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, MaxMemory, 1>;

  // The differences from the last sweep into the ring's next column, and their Gram entries.
  void Record(int memory, const Eigen::VectorXd& r, const Eigen::VectorXd& affine) {
    const int k = next_;
    result_differences_.col(k) = r - last_result_;
    change_differences_.col(k) = change_ - last_change_;
    affine_differences_.col(k) = affine - last_affine_;
    count_ = std::min(count_ + 1, memory);
    for (int j = 0; j < count_; ++j) {
      gram_(j, k) = gram_(k, j) = change_differences_.col(j).dot(change_differences_.col(k));
    }
    next_ = (k + 1) % memory;
  }

  // The last sweep's change of r; the last result, its change and second vector, and the
  // change's norm; the differences of consecutive ones (columns of a ring of `memory`, count_
  // filled, the next written at next_) and the changes' differences' Gram matrix.
  Eigen::VectorXd change_, last_result_, last_change_, last_affine_;
  double last_change_norm_ = 0.0;
  Eigen::MatrixXd result_differences_, change_differences_, affine_differences_;
  Matrix gram_, normal_;
  Vector gamma_;
  Eigen::LDLT<Matrix> normal_ldlt_;
  int count_ = 0, next_ = 0;
  bool started_ = false;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_FRICTION_INTERNAL_ANDERSON_H_
