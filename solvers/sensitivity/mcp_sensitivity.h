// Derivatives of the solution of an MCP (solvers/mcp/mcp.h) with respect to its function and
// bounds, and — for a ProblemBuilder — with respect to its parameter blocks, whose dF/dtheta
// comes from the same Jets as its Jacobian (docs/derivatives.md): BoxSensitivity at z with
// J = dF/dz from the problem's Evaluate().
#ifndef NCPKIT_SOLVERS_SENSITIVITY_MCP_SENSITIVITY_H_
#define NCPKIT_SOLVERS_SENSITIVITY_MCP_SENSITIVITY_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <vector>

#include "solvers/mcp/mcp.h"
#include "solvers/mcp/problem_builder.h"
#include "solvers/sensitivity/box_sensitivity.h"

namespace ncpkit {

class McpSensitivity {
 public:
  // At the solution z (from any solver). The degeneracy test scales F by 1 + ||F(z)||_inf.
  // Throws InputError where F cannot be evaluated at z, and as BoxSensitivity does.
  McpSensitivity(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                 const SensitivityOptions& options = SensitivityOptions());
  // The same, with the parameter Jacobian of the builder's parameter blocks at z.
  McpSensitivity(const ProblemBuilder& problem, const Eigen::VectorXd& z,
                 const SensitivityOptions& options = SensitivityOptions());

  int size() const { return box_.size(); }
  const BoxSensitivity& box() const { return box_; }
  const std::vector<int>& degenerate() const { return box_.degenerate(); }

  // dz for a change dF of F at fixed z and of the bounds (empty: zero).
  Eigen::VectorXd Jvp(const Eigen::VectorXd& dF, const Eigen::VectorXd& dl = Eigen::VectorXd(),
                      const Eigen::VectorXd& du = Eigen::VectorXd()) const;
  // The gradients of <g, z> with respect to F (at fixed z), l and u.
  BoxSensitivity::Adjoint Vjp(const Eigen::VectorXd& g) const;

  // A builder's parameters (0 for other problems): dz for a change of the parameters, the
  // gradient of <g, z> with respect to them, and the dense n x p Jacobian.
  int num_parameters() const { return static_cast<int>(parameter_jacobian_.cols()); }
  Eigen::VectorXd ParameterJvp(const Eigen::VectorXd& dtheta) const;
  Eigen::VectorXd ParameterVjp(const Eigen::VectorXd& g) const;
  Eigen::MatrixXd ParameterJacobian() const;
  // dF/dtheta at z.
  const Eigen::SparseMatrix<double>& parameter_jacobian() const { return parameter_jacobian_; }

 private:
  BoxSensitivity box_;
  Eigen::SparseMatrix<double> parameter_jacobian_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_SENSITIVITY_MCP_SENSITIVITY_H_
