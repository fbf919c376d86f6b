#include "solvers/lcp/projected_gauss_seidel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/seconds.h"

namespace ncpkit {

bool ProjectedGaussSeidel::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_sweeps >= 1, "max_sweeps", max_sweeps, "must be >= 1")
      .Require(tolerance > 0.0, "tolerance", tolerance, "must be > 0")
      .Require(omega > 0.0 && omega < 2.0, "omega", omega, "must be in (0, 2)")
      .Done(why);
}

std::string ProjectedGaussSeidel::Summary::FullReport() const {
  std::ostringstream os;
  os << CommonFullReport(*this) << "sweeps            " << iterations << "\n";
  if (invalid_diagonal_row >= 0) os << "invalid diagonal  row " << invalid_diagonal_row << "\n";
  return os.str();
}

ProjectedGaussSeidel::Summary ProjectedGaussSeidel::Solve(
    const LinearComplementarityProblem& problem, Eigen::VectorXd* z) {
  const auto start = std::chrono::steady_clock::now();
  Summary summary;
  summary.solver = "pgs";
  summary.tolerance = options_.tolerance;
  auto finish = [&]() {
    summary.wall_time_seconds = internal::SecondsSince(start);
    return summary;
  };
  if (!AcceptOptions(options_, &summary)) return finish();
  const int n = problem.size();
  const RowSparseMatrix& M = problem.sparse_matrix();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();

  inverse_diagonal_.resize(n);
  for (int i = 0; i < n; ++i) {
    const double d = M.coeff(i, i);
    if (!(d > 0.0)) {
      std::ostringstream os;
      os << "PGS needs a positive diagonal, but M(" << i << "," << i << ") = " << d;
      summary.status = Status::InvalidInput;
      summary.message = os.str();
      summary.invalid_diagonal_row = i;
      if (z->size() != n) z->setZero(n);
      return finish();
    }
    inverse_diagonal_[i] = 1.0 / d;
  }
  if (!(options_.warm_start && z->size() == n && z->allFinite())) z->setZero(n);
  // Start inside the box.
  for (int i = 0; i < n; ++i) (*z)[i] = std::min(u[i], std::max(l[i], (*z)[i]));

  const double omega = options_.omega;
  const bool dense = problem.has_dense_matrix();
  const Eigen::SparseMatrix<double>& columns = problem.sparse_columns();
  const int* outer = columns.outerIndexPtr();
  const int* inner = columns.innerIndexPtr();
  const double* values = columns.valuePtr();
  problem.Affine(*z, &w_);
  double* zi = z->data();
  double* w = w_.data();
  for (int sweep = 1; sweep <= options_.max_sweeps; ++sweep) {
    for (int i = 0; i < n; ++i) {
      const double updated =
          std::min(u[i], std::max(l[i], zi[i] - omega * w[i] * inverse_diagonal_[i]));
      const double delta = updated - zi[i];
      if (delta == 0.0) continue;
      zi[i] = updated;
      if (dense) {
        w_.noalias() += delta * problem.stored_dense_matrix().col(i);
      } else {
        for (int k = outer[i]; k < outer[i + 1]; ++k) w[inner[k]] += delta * values[k];
      }
    }
    summary.iterations = sweep;
    summary.natural_residual = natural_residual(*z, w_, l, u);
    if (summary.natural_residual <= options_.tolerance) {
      // Confirm with w recomputed from scratch (the updates accumulate rounding).
      problem.Affine(*z, &w_);
      summary.natural_residual = natural_residual(*z, w_, l, u);
      if (summary.natural_residual <= options_.tolerance) {
        summary.status = Status::Converged;
        return finish();
      }
    }
    if (!std::isfinite(summary.natural_residual)) {
      std::ostringstream os;
      os << "iterate diverged (non-finite) after " << sweep << " sweeps";
      summary.status = Status::NumericalFailure;
      summary.message = os.str();
      return finish();
    }
  }
  problem.Affine(*z, &w_);
  summary.natural_residual = natural_residual(*z, w_, l, u);
  std::ostringstream os;
  os.precision(3);
  os << "natural residual " << std::scientific << summary.natural_residual << " > tolerance "
     << options_.tolerance << " after " << summary.iterations << " sweeps";
  summary.status = Status::MaxIterations;
  summary.message = os.str();
  return finish();
}

}  // namespace ncpkit
