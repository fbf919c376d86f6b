#include "solvers/mcp.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

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
  std::ostringstream os;
  if (l.size() != problem.size() || u.size() != problem.size()) {
    os << "problem of size " << problem.size() << " has " << l.size() << " lower and " << u.size()
       << " upper bounds";
  }
  for (int i = 0; os.str().empty() && i < problem.size(); ++i) {
    if (std::isnan(l[i]) || std::isnan(u[i])) {
      os << "bound " << i << " is NaN";
    } else if (l[i] > u[i]) {
      os << "l(" << i << ") = " << l[i] << " > u(" << i << ") = " << u[i];
    } else if (l[i] == inf || u[i] == -inf) {
      os << "bounds of variable " << i << " leave no feasible value";
    }
  }
  if (!os.str().empty()) throw std::invalid_argument("invalid MCP: " + os.str());
}

}  // namespace ncpkit
