#include "solvers/mcp/mcp.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "solvers/base/input_error.h"

namespace ncpkit {

bool LinearMcp::Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                         Eigen::SparseMatrix<double>* J) const {
  problem_.Affine(z, F);
  if (J) *J = problem_.sparse_columns();
  return F->allFinite();
}

double natural_residual(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z) {
  if (z.size() != problem.size()) return std::numeric_limits<double>::infinity();
  Eigen::VectorXd F(problem.size());
  if (!problem.Evaluate(z, &F, nullptr)) return std::numeric_limits<double>::infinity();
  return natural_residual(z, F, problem.lower(), problem.upper());
}

void ValidateBounds(const MixedComplementarityProblem& problem) {
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  const double inf = std::numeric_limits<double>::infinity();
  // The message is built only for an invalid problem (a solver checks every call).
  if (l.size() != problem.size() || u.size() != problem.size()) {
    std::ostringstream os;
    os << "invalid MCP: problem of size " << problem.size() << " has " << l.size() << " lower and "
       << u.size() << " upper bounds";
    throw InputError(os.str());
  }
  for (int i = 0; i < problem.size(); ++i) {
    if (!(std::isnan(l[i]) || std::isnan(u[i]) || l[i] > u[i] || l[i] == inf || u[i] == -inf)) {
      continue;
    }
    std::ostringstream os;
    os << "invalid MCP: ";
    if (std::isnan(l[i]) || std::isnan(u[i])) {
      os << "bound " << i << " is NaN";
    } else if (l[i] > u[i]) {
      os << "l(" << i << ") = " << l[i] << " > u(" << i << ") = " << u[i];
    } else {
      os << "bounds of variable " << i << " leave no feasible value";
    }
    throw InputError(os.str());
  }
}

}  // namespace ncpkit
