#include "solvers/sensitivity/mcp_sensitivity.h"

#include <string>

#include "solvers/base/input_error.h"
#include "solvers/sensitivity/internal/selected_system.h"

namespace ncpkit {

namespace {

BoxSensitivity AtSolution(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                          const SensitivityOptions& options) {
  if (z.size() != problem.size())
    throw InputError("sensitivity: z has " + std::to_string(z.size()) + " entries, the problem " +
                     std::to_string(problem.size()));
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  if (!problem.Evaluate(z, &F, &J))
    throw InputError("sensitivity: F or its Jacobian cannot be evaluated at z");
  return BoxSensitivity(J, F, z, problem.lower(), problem.upper(), F.lpNorm<Eigen::Infinity>(),
                        options);
}

}  // namespace

McpSensitivity::McpSensitivity(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                               const SensitivityOptions& options)
    : box_(AtSolution(problem, z, options)), parameter_jacobian_(problem.size(), 0) {}

McpSensitivity::McpSensitivity(const ProblemBuilder& problem, const Eigen::VectorXd& z,
                               const SensitivityOptions& options)
    : box_(AtSolution(problem, z, options)) {
  if (!problem.EvaluateParameterJacobian(z, &parameter_jacobian_))
    throw InputError("sensitivity: the parameter Jacobian cannot be evaluated at z");
}

Eigen::VectorXd McpSensitivity::Jvp(const Eigen::VectorXd& dF, const Eigen::VectorXd& dl,
                                    const Eigen::VectorXd& du) const {
  return box_.Tangent(dF, dl, du);
}

BoxSensitivity::Adjoint McpSensitivity::Vjp(const Eigen::VectorXd& g) const {
  return box_.Cotangent(g);
}

Eigen::VectorXd McpSensitivity::ParameterJvp(const Eigen::VectorXd& dtheta) const {
  if (dtheta.size() != num_parameters())
    throw InputError("sensitivity: dtheta has " + std::to_string(dtheta.size()) +
                     " entries, the problem " + std::to_string(num_parameters()) + " parameters");
  const Eigen::VectorXd dF = parameter_jacobian_ * dtheta;
  return box_.Tangent(dF, Eigen::VectorXd(), Eigen::VectorXd());
}

Eigen::VectorXd McpSensitivity::ParameterVjp(const Eigen::VectorXd& g) const {
  return parameter_jacobian_.transpose() * box_.Cotangent(g).F;
}

Eigen::MatrixXd McpSensitivity::ParameterJacobian() const {
  internal::RequireDenseJacobianSize(size(), num_parameters(), "the parameters");
  Eigen::MatrixXd out(size(), num_parameters());
  for (int k = 0; k < num_parameters(); ++k)
    out.col(k) = ParameterJvp(Eigen::VectorXd::Unit(num_parameters(), k));
  return out;
}

}  // namespace ncpkit
