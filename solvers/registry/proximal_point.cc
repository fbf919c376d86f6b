#include "solvers/registry/proximal_point.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using RowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

using internal::NumberText;

}  // namespace

bool ProximalPointSolver::Options::IsValid(std::string* why) const {
  std::ostringstream os;
  if (!(relative_regularization >= 0.0) || !std::isfinite(relative_regularization)) {
    os << "relative_regularization = " << relative_regularization << " must be >= 0 and finite";
  } else if (max_outer_iterations < 0) {
    os << "max_outer_iterations = " << max_outer_iterations << " must be >= 0";
  }
  if (why) *why = os.str();
  return os.str().empty();
}

std::string ProximalPointSolver::Summary::FullReport() const {
  std::ostringstream os;
  os << CommonFullReport(*this) << "outer iterations  " << outer_iterations << "\n"
     << "gamma             " << gamma << "\n";
  return os.str();
}

ProximalPointSolver::ProximalPointSolver(ComplementaritySolver* inner, const Options& options)
    : inner_(inner), options_(options) {
  RequireValidOptions(options_, "proximal point");
}

// gamma for the problem (see the class comment); also marks the free rows.
double ProximalPointSolver::Regularization(const LinearComplementarityProblem& problem) const {
  const int size = problem.size();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  const RowMatrix& M = problem.sparse_matrix();
  Eigen::VectorXd diagonal = Eigen::VectorXd::Zero(size);
  for (int i = 0; i < size; ++i) diagonal[i] = M.coeff(i, i);
  Eigen::VectorXd dual = diagonal.cwiseAbs();
  Eigen::VectorXd row_k = Eigen::VectorXd::Zero(size);
  const Eigen::SparseMatrix<double>& columns = problem.sparse_columns();
  for (int k = 0; k < size; ++k) {
    if (!(std::isinf(l[k]) && std::isinf(u[k])) || !(diagonal[k] > 0.0)) continue;
    for (RowMatrix::InnerIterator it(M, k); it; ++it) row_k[it.col()] = it.value();
    for (Eigen::SparseMatrix<double>::InnerIterator it(columns, k); it; ++it) {
      dual[it.row()] += std::abs(it.value() * row_k[it.row()]) / diagonal[k];
    }
    for (RowMatrix::InnerIterator it(M, k); it; ++it) row_k[it.col()] = 0.0;
  }
  double scale = 0.0;
  for (int i = 0; i < size; ++i) {
    if (!(std::isinf(l[i]) && std::isinf(u[i]))) scale = std::max(scale, dual[i]);
  }
  return options_.relative_regularization * (scale > 0.0 ? scale : 1.0);
}

const ProximalPointSolver::Summary& ProximalPointSolver::Solve(
    const LinearComplementarityProblem& problem, Eigen::VectorXd* z) {
  summary_ = Summary();
  const SolverSummary& plain = inner_->Solve(problem, z);
  static_cast<SolverSummary&>(summary_) = plain;
  const double tolerance = inner_->options().tolerance;
  if (!plain.IsSolved() && plain.status != Status::InvalidInput &&
      plain.natural_residual <= tolerance) {
    // The inner solver stopped at a point that solves the problem: it stands.
    summary_.status = Status::Converged;
    summary_.message += "; the point reached solves the problem";
  }
  if (summary_.IsSolved() || options_.relative_regularization <= 0.0 ||
      plain.status == Status::InvalidInput) {
    return summary_;
  }
  const std::string plain_message = plain.message;
  const int size = problem.size();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  const RowMatrix& M = problem.sparse_matrix();
  const double gamma = Regularization(problem);
  summary_.gamma = gamma;
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < size; ++i) {
    for (RowMatrix::InnerIterator it(M, i); it; ++it) t.emplace_back(i, it.col(), it.value());
    if (!(std::isinf(l[i]) && std::isinf(u[i]))) t.emplace_back(i, i, gamma);
  }
  Eigen::SparseMatrix<double> regularized(size, size);
  regularized.setFromTriplets(t.begin(), t.end());
  Eigen::VectorXd previous =
      (z->size() == size && z->allFinite())
          ? Eigen::VectorXd(*z)
          : Eigen::VectorXd(Eigen::VectorXd::Zero(size).cwiseMax(l).cwiseMin(u));
  double best = plain.natural_residual;
  Eigen::VectorXd best_z = *z;
  int& outer = summary_.outer_iterations;
  for (outer = 1; outer <= options_.max_outer_iterations; ++outer) {
    Eigen::VectorXd shifted = problem.q();
    for (int i = 0; i < size; ++i) {
      if (!(std::isinf(l[i]) && std::isinf(u[i]))) shifted[i] -= gamma * previous[i];
    }
    const LinearComplementarityProblem step(regularized, shifted, l, u);
    *z = previous;
    const SolverSummary& inner = inner_->Solve(step, z);
    summary_.iterations += inner.iterations;
    summary_.factorizations += inner.factorizations;
    if (z->size() != size || !z->allFinite()) break;
    const double residual = natural_residual(problem, *z);
    if (residual < best) {
      best = residual;
      best_z = *z;
    }
    if (residual <= tolerance) {
      summary_.status = Status::Converged;
      summary_.natural_residual = residual;
      summary_.message = "proximal point: converged after " + std::to_string(outer) +
                         " regularized problems (gamma " + NumberText(gamma) + ")";
      return summary_;
    }
    previous = *z;
  }
  *z = best_z;
  summary_.natural_residual = best;
  summary_.message = plain_message + "; proximal point (gamma " + NumberText(gamma) +
                     ") reached natural residual " + NumberText(best) + " > tolerance " +
                     NumberText(tolerance) + " after " +
                     std::to_string(std::min(outer, options_.max_outer_iterations)) +
                     " regularized problems";
  return summary_;
}

}  // namespace ncpkit
