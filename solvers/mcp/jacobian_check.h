// Checking an MCP's Jacobian against central finite differences.
#ifndef NCPKIT_SOLVERS_MCP_JACOBIAN_CHECK_H_
#define NCPKIT_SOLVERS_MCP_JACOBIAN_CHECK_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/mcp/mcp.h"

namespace ncpkit {

struct JacobianCheckResult {
  bool ok = false;         // max_error <= tolerance
  double max_error = 0.0;  // max over entries of |J - J_fd| / max(1, |J_fd|)
  int worst_row = -1, worst_column = -1;
  double analytic = 0.0, finite_difference = 0.0;  // at the worst entry
  std::string report;                              // one line with the numbers
};

// Compares J(z) with central differences (F(z + h e_j) - F(z - h e_j)) / 2h, where
// h = relative_step * max(1, |z_j|). Returns ok = false with a report if F or J cannot be
// evaluated at z or at a perturbed point.
JacobianCheckResult CheckJacobian(const MixedComplementarityProblem& problem,
                                  const Eigen::VectorXd& z, double tolerance = 1e-6,
                                  double relative_step = 1e-6);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_JACOBIAN_CHECK_H_
