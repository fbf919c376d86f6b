#include "solvers/lcp/linear_problem.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/linalg/internal/sparse_assembly.h"

namespace ncpkit {
namespace {

[[noreturn]] void FailLinearProblem(const std::string& what) {
  throw InputError("invalid linear complementarity problem: " + what);
}

}  // namespace

LinearComplementarityProblem::LinearComplementarityProblem(Eigen::MatrixXd M, Eigen::VectorXd q)
    : LinearComplementarityProblem(std::move(M), q, Eigen::VectorXd::Zero(q.size()),
                                   Eigen::VectorXd::Constant(q.size(), kInf)) {}

LinearComplementarityProblem::LinearComplementarityProblem(const Eigen::SparseMatrix<double>& M,
                                                           Eigen::VectorXd q)
    : LinearComplementarityProblem(M, q, Eigen::VectorXd::Zero(q.size()),
                                   Eigen::VectorXd::Constant(q.size(), kInf)) {}

LinearComplementarityProblem::LinearComplementarityProblem(Eigen::MatrixXd M, Eigen::VectorXd q,
                                                           Eigen::VectorXd l, Eigen::VectorXd u)
    : q_(std::move(q)), lower_(std::move(l)), upper_(std::move(u)) {
  Validate(static_cast<int>(M.rows()), static_cast<int>(M.cols()));
  for (Eigen::Index j = 0; j < M.cols(); ++j) {
    for (Eigen::Index i = 0; i < M.rows(); ++i) {
      if (!std::isfinite(M(i, j))) {
        std::ostringstream os;
        os << "M(" << i << "," << j << ") = " << M(i, j) << " is not finite";
        FailLinearProblem(os.str());
      }
    }
  }
  sparse_ = M.sparseView();
  sparse_columns_ = sparse_;
  dense_ = std::move(M);
}

LinearComplementarityProblem::LinearComplementarityProblem(const Eigen::SparseMatrix<double>& M,
                                                           Eigen::VectorXd q, Eigen::VectorXd l,
                                                           Eigen::VectorXd u)
    : q_(std::move(q)), lower_(std::move(l)), upper_(std::move(u)) {
  Validate(static_cast<int>(M.rows()), static_cast<int>(M.cols()));
  sparse_ = M;
  sparse_.makeCompressed();
  for (int i = 0; i < sparse_.outerSize(); ++i) {
    for (RowSparseMatrix::InnerIterator it(sparse_, i); it; ++it) {
      if (!std::isfinite(it.value())) {
        std::ostringstream os;
        os << "M(" << it.row() << "," << it.col() << ") = " << it.value() << " is not finite";
        FailLinearProblem(os.str());
      }
    }
  }
  sparse_columns_ = sparse_;
}

void LinearComplementarityProblem::Validate(int rows, int cols) {
  std::ostringstream os;
  if (rows != cols) {
    os << "M is " << rows << " x " << cols << ", it must be square";
    FailLinearProblem(os.str());
  }
  if (q_.size() != rows || lower_.size() != rows || upper_.size() != rows) {
    os << "M is " << rows << " x " << cols << " but q has " << q_.size() << " entries, l has "
       << lower_.size() << " and u has " << upper_.size();
    FailLinearProblem(os.str());
  }
  for (int i = 0; i < rows; ++i) {
    if (!std::isfinite(q_[i])) {
      os << "q(" << i << ") = " << q_[i] << " is not finite";
      FailLinearProblem(os.str());
    }
    if (std::isnan(lower_[i]) || std::isnan(upper_[i])) {
      os << "bound " << i << " is NaN (l = " << lower_[i] << ", u = " << upper_[i] << ")";
      FailLinearProblem(os.str());
    }
    if (lower_[i] > upper_[i]) {
      os << "l(" << i << ") = " << lower_[i] << " > u(" << i << ") = " << upper_[i];
      FailLinearProblem(os.str());
    }
    if (lower_[i] == kInf || upper_[i] == -kInf) {
      os << "bounds of variable " << i << " leave no feasible value (l = " << lower_[i]
         << ", u = " << upper_[i] << ")";
      FailLinearProblem(os.str());
    }
  }
}

void LinearComplementarityProblem::AssignLcp(const Eigen::SparseMatrix<double>& M,
                                             const Eigen::VectorXd& q) {
  lower_.setZero(q.size());
  upper_.setConstant(q.size(), kInf);
  AssignMatrix(M, q);
}

void LinearComplementarityProblem::AssignMlcp(const Eigen::SparseMatrix<double>& M,
                                              const Eigen::VectorXd& q, const Eigen::VectorXd& l,
                                              const Eigen::VectorXd& u) {
  lower_ = l;
  upper_ = u;
  AssignMatrix(M, q);
}

void LinearComplementarityProblem::AssignMatrix(const Eigen::SparseMatrix<double>& M,
                                                const Eigen::VectorXd& q) {
  q_ = q;
  Validate(static_cast<int>(M.rows()), static_cast<int>(M.cols()));
  dense_.reset();
  if (!M.isCompressed()) FailLinearProblem("M must be compressed");
  internal::ConvertStorageOrder(M, &sparse_);
  for (Eigen::Index k = 0; k < sparse_.nonZeros(); ++k) {
    if (!std::isfinite(sparse_.valuePtr()[k])) {
      std::ostringstream os;
      os << "M has a non-finite entry " << sparse_.valuePtr()[k];
      FailLinearProblem(os.str());
    }
  }
  internal::ConvertStorageOrder(sparse_, &sparse_columns_);
}

void LinearComplementarityProblem::DenseMatrixInto(Eigen::MatrixXd* M) const {
  if (dense_) {
    *M = *dense_;
  } else {
    *M = sparse_;
  }
}

Eigen::MatrixXd LinearComplementarityProblem::dense_matrix() const {
  if (dense_) return *dense_;
  return Eigen::MatrixXd(sparse_);
}

bool LinearComplementarityProblem::IsStandardLcp() const {
  for (int i = 0; i < size(); ++i) {
    if (lower_[i] != 0.0 || upper_[i] != kInf) return false;
  }
  return true;
}

int LinearComplementarityProblem::NumFreeVariables() const {
  int count = 0;
  for (int i = 0; i < size(); ++i) count += (lower_[i] == -kInf && upper_[i] == kInf);
  return count;
}

void LinearComplementarityProblem::Affine(const Eigen::VectorXd& z, Eigen::VectorXd* w) const {
  if (dense_) {
    w->noalias() = *dense_ * z;
  } else {
    w->noalias() = sparse_ * z;
  }
  *w += q_;
}

double natural_residual(const Eigen::VectorXd& z, const Eigen::VectorXd& F,
                        const Eigen::VectorXd& l, const Eigen::VectorXd& u) {
  double worst = 0.0;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    const double projected = std::min(u[i], std::max(l[i], z[i] - F[i]));
    const double r = std::abs(z[i] - projected);
    if (std::isnan(r)) return kInf;
    worst = std::max(worst, r);
  }
  return worst;
}

double natural_residual(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z) {
  Eigen::VectorXd w;
  return natural_residual(problem, z, &w);
}

double natural_residual(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z,
                        Eigen::VectorXd* w) {
  if (z.size() != problem.size()) return kInf;
  problem.Affine(z, w);
  return natural_residual(z, *w, problem.lower(), problem.upper());
}

}  // namespace ncpkit
