#include "solvers/linalg/sparse_cholesky.h"

#include <Eigen/CholmodSupport>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "solvers/linalg/internal/suitesparse_memory.h"

namespace ncpkit {
namespace {

// CHOLMOD reports errors by calling its error handler (and printing); the handler below
// collects them for messages() instead. The text is per thread, as CHOLMOD calls are.
std::string& Collected() {
  thread_local std::string text;
  return text;
}

void CollectMessage(int status, const char* /*file*/, int /*line*/, const char* message) {
  Collected() += std::string("; CHOLMOD ") + (status < 0 ? "error" : "warning") + ": " +
                 (message != nullptr ? message : "");
}

bool SamePattern(const Eigen::SparseMatrix<double>& A, const std::vector<int>& outer,
                 const std::vector<int>& inner) {
  if (!A.isCompressed()) return false;
  const int columns = static_cast<int>(A.outerSize());
  if (static_cast<int>(outer.size()) != columns + 1) return false;
  const int nonzeros = static_cast<int>(A.nonZeros());
  if (static_cast<int>(inner.size()) != nonzeros) return false;
  return std::equal(outer.begin(), outer.end(), A.outerIndexPtr()) &&
         std::equal(inner.begin(), inner.end(), A.innerIndexPtr());
}

}  // namespace

namespace internal {

// Eigen's factorization, with its factor reachable for the solves that write into the
// caller's storage. Not in the anonymous namespace: SparseCholesky::Impl, declared in the
// header, holds one (GCC warns of such a field where a unity build includes this file).
class CholmodLlt : public Eigen::CholmodSimplicialLLT<Eigen::SparseMatrix<double>> {
 public:
  cholmod_factor* factor() { return m_cholmodFactor; }
};

}  // namespace internal

struct SparseCholesky::Impl {
  // CHOLMOD's memory (the factor, solve results) lives in this cache's blocks: every CHOLMOD
  // call runs in a scope of it, so that a refactorization or a solve reuses the last one's.
  internal::SuiteSparseBlockCache cache;
  std::unique_ptr<internal::CholmodLlt> llt;
  std::string messages;
  Impl() {
    const internal::SuiteSparseBlockCache::Scope scope(&cache);
    llt = std::make_unique<internal::CholmodLlt>();
    llt->cholmod().print = 0;
    llt->cholmod().error_handler = &CollectMessage;
  }
  ~Impl() {
    const internal::SuiteSparseBlockCache::Scope scope(&cache);
    llt.reset();
  }
  // Runs a CHOLMOD call, keeping what it said.
  template <class Call>
  void Run(const Call& call) {
    const internal::SuiteSparseBlockCache::Scope scope(&cache);
    Collected().clear();
    call();
    messages += Collected();
  }
};

SparseCholesky::SparseCholesky() : impl_(std::make_unique<Impl>()) {}
SparseCholesky::~SparseCholesky() = default;

void SparseCholesky::analyzePattern(const Eigen::SparseMatrix<double>& A) {
  impl_->messages.clear();
  impl_->Run([&] { impl_->llt->analyzePattern(A); });
  ++symbolic_analyses_;
  // Eigen reports success even when CHOLMOD's analysis returned no factor (out of memory, a
  // size CHOLMOD refuses); a factorization of that would read through a null factor.
  info_ = impl_->llt->factor() == nullptr ? Eigen::NumericalIssue : impl_->llt->info();
  if (impl_->llt->factor() == nullptr && impl_->messages.empty()) {
    impl_->messages = "; CHOLMOD's symbolic analysis failed";
  }
  pattern_outer_.clear();
  pattern_inner_.clear();
  if (info_ != Eigen::Success || !A.isCompressed()) return;
  pattern_outer_.assign(A.outerIndexPtr(), A.outerIndexPtr() + A.outerSize() + 1);
  pattern_inner_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
}

void SparseCholesky::factorize(const Eigen::SparseMatrix<double>& A) {
  impl_->messages.clear();
  if (impl_->llt->factor() == nullptr) {
    impl_->messages = "; no symbolic analysis to factorize with";
    info_ = Eigen::InvalidInput;
    return;
  }
  impl_->Run([&] { impl_->llt->factorize(A); });
  info_ = impl_->llt->info();
}

void SparseCholesky::compute(const Eigen::SparseMatrix<double>& A) {
  if (!SamePattern(A, pattern_outer_, pattern_inner_)) {
    analyzePattern(A);
    if (info_ != Eigen::Success) return;
    std::string analysis;
    analysis.swap(impl_->messages);
    factorize(A);
    impl_->messages.insert(0, analysis);
    return;
  }
  factorize(A);
}

Eigen::VectorXd SparseCholesky::solve(const Eigen::VectorXd& b) const {
  Eigen::VectorXd x;
  solveInto(b, &x);
  return x;
}

void SparseCholesky::solveInto(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  // What Eigen's CholmodBase::solve() does, writing into *x.
  if (impl_->llt->factor() == nullptr) {
    x->setConstant(b.size(), std::nan(""));
    return;
  }
  impl_->Run([&] {
    Eigen::VectorXd& rhs = const_cast<Eigen::VectorXd&>(b);
    cholmod_dense b_cd = Eigen::viewAsCholmod(rhs);
    cholmod_dense* x_cd =
        cholmod_solve(CHOLMOD_A, impl_->llt->factor(), &b_cd, &impl_->llt->cholmod());
    if (x_cd == nullptr) {
      x->setConstant(b.size(), std::nan(""));
      return;
    }
    x->resize(b.size());
    std::memcpy(x->data(), x_cd->x, sizeof(double) * b.size());
    cholmod_free_dense(&x_cd, &impl_->llt->cholmod());
  });
}

Eigen::SparseMatrix<double> SparseCholesky::solve(const Eigen::SparseMatrix<double>& B) const {
  Eigen::SparseMatrix<double> X;
  solveInto(B, &X);
  return X;
}

void SparseCholesky::solveInto(const Eigen::SparseMatrix<double>& B,
                               Eigen::SparseMatrix<double>* X) const {
  // What Eigen's CholmodBase::solve() does for a sparse right-hand side, writing into *X.
  if (impl_->llt->factor() == nullptr) {
    X->resize(B.rows(), B.cols());
    return;
  }
  impl_->Run([&] {
    Eigen::SparseMatrix<double>& rhs = const_cast<Eigen::SparseMatrix<double>&>(B);
    cholmod_sparse b_cs = Eigen::viewAsCholmod(rhs);
    cholmod_sparse* x_cs =
        cholmod_spsolve(CHOLMOD_A, impl_->llt->factor(), &b_cs, &impl_->llt->cholmod());
    X->resize(B.rows(), B.cols());
    if (x_cs == nullptr) return;
    const int* p = static_cast<const int*>(x_cs->p);
    const int nonzeros = p[x_cs->ncol];
    X->resizeNonZeros(nonzeros);
    std::memcpy(X->outerIndexPtr(), p, sizeof(int) * (x_cs->ncol + 1));
    std::memcpy(X->innerIndexPtr(), x_cs->i, sizeof(int) * nonzeros);
    std::memcpy(X->valuePtr(), x_cs->x, sizeof(double) * nonzeros);
    cholmod_free_sparse(&x_cs, &impl_->llt->cholmod());
  });
}

const std::string& SparseCholesky::messages() const { return impl_->messages; }

}  // namespace ncpkit
