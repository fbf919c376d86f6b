#include "solvers/linalg/internal/dense_lu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace ncpkit::internal {

void DenseLu::Reserve(Eigen::Index k) {
  lu_.resize(k, k);
  column_sums_.resize(k);
  transpositions_.resize(k);
  permutation_.resize(k);
  for (Eigen::VectorXd& v : work_) v.resize(k);
  for (Eigen::VectorXd& v : scratch_) v.resize(k);
}

bool DenseLu::FactorizeInPlace(double relative_floor) {
  column_sums_.noalias() = lu_.cwiseAbs().colwise().sum();
  l1_norm_ = lu_.cols() > 0 ? column_sums_.maxCoeff() : 0.0;
  transpositions_.resize(lu_.rows());
  for (Eigen::VectorXd& v : scratch_) v.resize(lu_.rows());
  const double floor = relative_floor < 0.0 ? -1.0 : relative_floor * l1_norm_;
  if (lu_.rows() <= kUnblockedMaxSize) {
    // Eigen blocks from n = 17 on, and its unblocked loop works through dynamic block
    // expressions: at n = 24 either costs 7 or more instructions per multiply-add.
    if (!UnblockedLu(floor)) return false;
  } else {
    Eigen::Transpositions<Eigen::Dynamic>::StorageIndex count = 0;
    Eigen::internal::partial_lu_inplace(lu_, transpositions_, count);
  }
  permutation_ = transpositions_;
  return lu_.rows() == 0 || lu_.diagonal().cwiseAbs().minCoeff() > floor;
}

// Compiled also for AVX2 and chosen by the processor at load time: the elimination's updates
// are elementwise (no fused multiply-add in either version), so both give the same bits, and
// the wider vectors halve the time of the updates.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
bool DenseLu::UnblockedLu(double floor) {
  const Eigen::Index n = lu_.rows();
  double* a = lu_.data();
  for (Eigen::Index k = 0; k < n; ++k) {
    double* column_k = a + k * n;
    Eigen::Index pivot = k;
    double biggest = std::abs(column_k[k]);
    for (Eigen::Index i = k + 1; i < n; ++i) {
      if (std::abs(column_k[i]) > biggest) {
        biggest = std::abs(column_k[i]);
        pivot = i;
      }
    }
    transpositions_.coeffRef(k) = static_cast<int>(pivot);
    if (biggest <= floor) return false;
    if (biggest == 0.0) continue;  // (as Eigen: the column below is zero, nothing to eliminate)
    if (pivot != k) {
      for (Eigen::Index j = 0; j < n; ++j) std::swap(a[j * n + k], a[j * n + pivot]);
    }
    const double diagonal = column_k[k];
    for (Eigen::Index i = k + 1; i < n; ++i) column_k[i] /= diagonal;
    for (Eigen::Index j = k + 1; j < n; ++j) {
      double* column_j = a + j * n;
      const double u = column_j[k];
      if (u == 0.0) continue;
      for (Eigen::Index i = k + 1; i < n; ++i) column_j[i] -= column_k[i] * u;
    }
  }
  return true;
}

void DenseLu::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  // PartialPivLU::_solve_impl: x = P b, then L and U in place.
  x->noalias() = permutation_ * b;
  lu_.triangularView<Eigen::UnitLower>().solveInPlace(*x);
  lu_.triangularView<Eigen::Upper>().solveInPlace(*x);
}

void DenseLu::SolveTransposed(const Eigen::VectorXd& c, Eigen::VectorXd* work,
                              Eigen::VectorXd* y) const {
  // PartialPivLU::_solve_impl_transposed, with the permutation applied out of place.
  *work = c;
  lu_.triangularView<Eigen::Upper>().transpose().solveInPlace(*work);
  lu_.triangularView<Eigen::UnitLower>().transpose().solveInPlace(*work);
  y->noalias() = permutation_.transpose() * (*work);
}

// Eigen's rcond_invmatrix_L1_norm_estimate (ConditionEstimator.h), step for step.
double DenseLu::InverseL1NormEstimate() {
  const Eigen::Index n = rows();
  if (n == 0) return 0.0;
  Eigen::VectorXd& v = work_[0];
  Eigen::VectorXd& sign = work_[1];
  Eigen::VectorXd& old_sign = work_[2];
  Eigen::VectorXd& rhs = work_[3];
  Eigen::VectorXd& scratch = work_[4];
  rhs.setConstant(n, 1.0 / static_cast<double>(n));
  Solve(rhs, &v);
  double lower_bound = v.lpNorm<1>();
  if (n == 1) return lower_bound;
  double old_lower_bound = lower_bound;
  Eigen::Index v_max_abs_index = -1, old_v_max_abs_index = -1;
  for (int k = 0; k < 4; ++k) {
    sign.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) sign[i] = v[i] < 0.0 ? -1.0 : 1.0;
    if (k > 0 && sign == old_sign) break;
    SolveTransposed(sign, &scratch, &v);
    v.cwiseAbs().maxCoeff(&v_max_abs_index);
    if (v_max_abs_index == old_v_max_abs_index) break;
    rhs.setZero(n);
    rhs[v_max_abs_index] = 1.0;
    Solve(rhs, &v);
    lower_bound = v.lpNorm<1>();
    if (lower_bound <= old_lower_bound) break;
    old_sign = sign;
    old_v_max_abs_index = v_max_abs_index;
    old_lower_bound = lower_bound;
  }
  double alternating_sign = 1.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    rhs[i] = alternating_sign * (1.0 + (static_cast<double>(i) / static_cast<double>(n - 1)));
    alternating_sign = -alternating_sign;
  }
  Solve(rhs, &v);
  const double alternate_lower_bound = (2 * v.lpNorm<1>()) / (3 * static_cast<double>(n));
  return std::max(lower_bound, alternate_lower_bound);
}

double DenseLu::Rcond() {
  // Eigen's rcond_estimate_helper.
  if (rows() == 0) return std::numeric_limits<double>::infinity();
  if (l1_norm_ == 0.0) return 0.0;
  if (rows() == 1) return 1.0;
  const double inverse_norm = InverseL1NormEstimate();
  return inverse_norm == 0.0 ? 0.0 : (1.0 / inverse_norm) / l1_norm_;
}

}  // namespace ncpkit::internal
