#include "solvers/mcp/jacobian_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ncpkit {

JacobianCheckResult CheckJacobian(const MixedComplementarityProblem& problem,
                                  const Eigen::VectorXd& z, double tolerance,
                                  double relative_step) {
  JacobianCheckResult result;
  const int n = problem.size();
  Eigen::VectorXd F(n), F_plus(n), F_minus(n);
  Eigen::SparseMatrix<double> J;
  if (z.size() != n || !problem.Evaluate(z, &F, &J)) {
    result.report = "F or J cannot be evaluated at the given point";
    return result;
  }
  const Eigen::MatrixXd analytic = J;
  Eigen::VectorXd x = z;
  for (int j = 0; j < n; ++j) {
    const double h = relative_step * std::max(1.0, std::abs(z[j]));
    x[j] = z[j] + h;
    const bool plus = problem.Evaluate(x, &F_plus, nullptr);
    x[j] = z[j] - h;
    const bool minus = problem.Evaluate(x, &F_minus, nullptr);
    x[j] = z[j];
    if (!plus || !minus) {
      std::ostringstream os;
      os << "F cannot be evaluated at z +- " << h << " e_" << j;
      result.report = os.str();
      return result;
    }
    for (int i = 0; i < n; ++i) {
      const double fd = (F_plus[i] - F_minus[i]) / (2.0 * h);
      const double error = std::abs(analytic(i, j) - fd) / std::max(1.0, std::abs(fd));
      if (error > result.max_error || result.worst_row < 0) {
        result.max_error = error;
        result.worst_row = i;
        result.worst_column = j;
        result.analytic = analytic(i, j);
        result.finite_difference = fd;
      }
    }
  }
  result.ok = result.max_error <= tolerance;
  std::ostringstream os;
  os << "max relative Jacobian error " << result.max_error << " at (" << result.worst_row << ","
     << result.worst_column << "): analytic " << result.analytic << ", finite difference "
     << result.finite_difference << " (tolerance " << tolerance << ")";
  result.report = os.str();
  return result;
}

}  // namespace ncpkit
