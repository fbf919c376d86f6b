#include "solvers/sparse_cholesky.h"

#include <Eigen/CholmodSupport>
#include <algorithm>

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

struct SparseCholesky::Impl {
  Eigen::CholmodSimplicialLLT<Eigen::SparseMatrix<double>> llt;
  std::string messages;
  Impl() {
    llt.cholmod().print = 0;
    llt.cholmod().error_handler = &CollectMessage;
  }
  // Runs a CHOLMOD call, keeping what it said.
  template <class Call>
  void Run(const Call& call) {
    Collected().clear();
    call();
    messages = Collected();
  }
};

SparseCholesky::SparseCholesky() : impl_(std::make_unique<Impl>()) {}
SparseCholesky::~SparseCholesky() = default;

void SparseCholesky::analyzePattern(const Eigen::SparseMatrix<double>& A) {
  impl_->Run([&] { impl_->llt.analyzePattern(A); });
  ++symbolic_analyses_;
  info_ = impl_->llt.info();
  pattern_outer_.clear();
  pattern_inner_.clear();
  if (info_ != Eigen::Success || !A.isCompressed()) return;
  pattern_outer_.assign(A.outerIndexPtr(), A.outerIndexPtr() + A.outerSize() + 1);
  pattern_inner_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
}

void SparseCholesky::factorize(const Eigen::SparseMatrix<double>& A) {
  impl_->Run([&] { impl_->llt.factorize(A); });
  info_ = impl_->llt.info();
}

void SparseCholesky::compute(const Eigen::SparseMatrix<double>& A) {
  if (!SamePattern(A, pattern_outer_, pattern_inner_)) {
    analyzePattern(A);
    if (info_ != Eigen::Success) return;
    const std::string analysis = impl_->messages;
    factorize(A);
    impl_->messages = analysis + impl_->messages;
    return;
  }
  factorize(A);
}

Eigen::VectorXd SparseCholesky::solve(const Eigen::VectorXd& b) const {
  Collected().clear();
  Eigen::VectorXd x = impl_->llt.solve(b);
  impl_->messages += Collected();
  return x;
}

Eigen::SparseMatrix<double> SparseCholesky::solve(const Eigen::SparseMatrix<double>& B) const {
  Collected().clear();
  Eigen::SparseMatrix<double> X = impl_->llt.solve(B);
  impl_->messages += Collected();
  return X;
}

const std::string& SparseCholesky::messages() const { return impl_->messages; }

}  // namespace ncpkit
