#include "solvers/linalg/sparse_lu.h"

#include <klu.h>

#include <cmath>

#include "solvers/linalg/internal/suitesparse_memory.h"

namespace ncpkit {

struct KluLu::Impl {
  // KLU's symbolic and numeric objects live in this cache's blocks: every KLU call runs in
  // a scope of it, so that a refactorization reuses the last one's memory.
  internal::SuiteSparseBlockCache cache;
  klu_common common;
  klu_symbolic* symbolic = nullptr;
  klu_numeric* numeric = nullptr;
  int n = -1;
  Eigen::Index nnz = -1;
};

KluLu::KluLu() : impl_(new Impl) { klu_defaults(&impl_->common); }

KluLu::~KluLu() {
  {
    const internal::SuiteSparseBlockCache::Scope scope(&impl_->cache);
    FreeNumeric();
    if (impl_->symbolic) klu_free_symbolic(&impl_->symbolic, &impl_->common);
  }
  delete impl_;
}

void KluLu::FreeNumeric() {
  if (impl_->numeric) klu_free_numeric(&impl_->numeric, &impl_->common);
}

void KluLu::analyzePattern(const Eigen::SparseMatrix<double>& A) {
  const internal::SuiteSparseBlockCache::Scope scope(&impl_->cache);
  FreeNumeric();
  if (impl_->symbolic) klu_free_symbolic(&impl_->symbolic, &impl_->common);
  info_ = Eigen::InvalidInput;
  if (A.rows() != A.cols() || !A.isCompressed()) return;
  impl_->n = static_cast<int>(A.rows());
  impl_->nnz = A.nonZeros();
  impl_->symbolic = klu_analyze(impl_->n, const_cast<int*>(A.outerIndexPtr()),
                                const_cast<int*>(A.innerIndexPtr()), &impl_->common);
  info_ = impl_->symbolic ? Eigen::Success : Eigen::InvalidInput;
}

void KluLu::factorize(const Eigen::SparseMatrix<double>& A) {
  const internal::SuiteSparseBlockCache::Scope scope(&impl_->cache);
  FreeNumeric();
  if (!impl_->symbolic || A.rows() != impl_->n || A.nonZeros() != impl_->nnz || !A.isCompressed()) {
    info_ = Eigen::InvalidInput;
    return;
  }
  impl_->numeric =
      klu_factor(const_cast<int*>(A.outerIndexPtr()), const_cast<int*>(A.innerIndexPtr()),
                 const_cast<double*>(A.valuePtr()), impl_->symbolic, &impl_->common);
  info_ =
      (impl_->numeric && impl_->common.status == KLU_OK) ? Eigen::Success : Eigen::NumericalIssue;
}

void KluLu::refactorize(const Eigen::SparseMatrix<double>& A) {
  const internal::SuiteSparseBlockCache::Scope scope(&impl_->cache);
  if (info_ != Eigen::Success || !impl_->numeric || A.rows() != impl_->n ||
      A.nonZeros() != impl_->nnz || !A.isCompressed()) {
    info_ = Eigen::InvalidInput;
    return;
  }
  const int ok = klu_refactor(
      const_cast<int*>(A.outerIndexPtr()), const_cast<int*>(A.innerIndexPtr()),
      const_cast<double*>(A.valuePtr()), impl_->symbolic, impl_->numeric, &impl_->common);
  info_ = (ok && impl_->common.status == KLU_OK) ? Eigen::Success : Eigen::NumericalIssue;
}

Eigen::VectorXd KluLu::solve(const Eigen::VectorXd& b) const {
  Eigen::VectorXd x = b;
  solveInPlace(&x);
  return x;
}

void KluLu::solveInPlace(Eigen::VectorXd* x) const {
  if (info_ != Eigen::Success) {
    x->setConstant(std::nan(""));
    return;
  }
  const internal::SuiteSparseBlockCache::Scope scope(&impl_->cache);
  klu_solve(impl_->symbolic, impl_->numeric, impl_->n, 1, x->data(), &impl_->common);
}

double KluLu::predicted_fill() const {
  return impl_->symbolic ? impl_->symbolic->lnz + impl_->symbolic->unz : 0.0;
}

double KluLu::rcond() const {
  if (info_ != Eigen::Success) return 0.0;
  const internal::SuiteSparseBlockCache::Scope scope(&impl_->cache);
  klu_rcond(impl_->symbolic, impl_->numeric, &impl_->common);
  return impl_->common.rcond;
}

}  // namespace ncpkit
