#include "solvers/sensitivity/linear_sensitivity.h"

#include "solvers/base/input_error.h"
#include "solvers/sensitivity/internal/selected_system.h"

namespace ncpkit {

namespace {

BoxSensitivity AtSolution(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z,
                          const SensitivityOptions& options) {
  if (z.size() != problem.size())
    throw InputError("sensitivity: z has " + std::to_string(z.size()) + " entries, the problem " +
                     std::to_string(problem.size()));
  Eigen::VectorXd w;
  problem.Affine(z, &w);
  return BoxSensitivity(problem.sparse_columns(), w, z, problem.lower(), problem.upper(),
                        problem.q().lpNorm<Eigen::Infinity>(), options);
}

}  // namespace

LinearSensitivity::LinearSensitivity(const LinearComplementarityProblem& problem,
                                     const Eigen::VectorXd& z, const SensitivityOptions& options)
    : box_(AtSolution(problem, z, options)), z_(z), pattern_(problem.sparse_columns()) {}

Eigen::VectorXd LinearSensitivity::Jvp(const Tangent& tangent) const {
  const int n = size();
  Eigen::VectorXd dF = Eigen::VectorXd::Zero(n);
  if (tangent.q.size() != 0) {
    if (tangent.q.size() != n) throw InputError("sensitivity: dq has the wrong size");
    dF = tangent.q;
  }
  if (tangent.M.nonZeros() != 0 || tangent.M.rows() != 0) {
    if (tangent.M.rows() != n || tangent.M.cols() != n)
      throw InputError("sensitivity: dM has the wrong size");
    dF.noalias() += tangent.M * z_;
  }
  return box_.Tangent(dF, tangent.lower, tangent.upper);
}

LinearSensitivity::Gradient LinearSensitivity::Vjp(const Eigen::VectorXd& g) const {
  BoxSensitivity::Adjoint adjoint = box_.Cotangent(g);
  Gradient out;
  out.q = adjoint.F;
  out.M_left = std::move(adjoint.F);
  out.lower = std::move(adjoint.lower);
  out.upper = std::move(adjoint.upper);
  return out;
}

Eigen::MatrixXd LinearSensitivity::MatrixGradient(const Gradient& gradient) const {
  return gradient.M_left * z_.transpose();
}

Eigen::SparseMatrix<double> LinearSensitivity::MatrixGradientOnPattern(
    const Gradient& gradient) const {
  return internal::OuterOnPattern(pattern_, gradient.M_left, z_);
}

Eigen::MatrixXd LinearSensitivity::Jacobian(Input input) const {
  const int n = size();
  internal::RequireDenseJacobianSize(
      n, input == Input::M ? static_cast<double>(pattern_.nonZeros()) : n,
      input == Input::M   ? "M"
      : input == Input::q ? "q"
                          : "a bound");
  Eigen::MatrixXd by_q(n, n);
  const Eigen::VectorXd none;
  for (int i = 0; i < n; ++i) {
    Eigen::VectorXd e = Eigen::VectorXd::Unit(n, i);
    switch (input) {
      case Input::lower:
        by_q.col(i) = box_.Tangent(none, e, none);
        break;
      case Input::upper:
        by_q.col(i) = box_.Tangent(none, none, e);
        break;
      case Input::q:
      case Input::M:
        by_q.col(i) = box_.Tangent(e, none, none);
        break;
    }
  }
  if (input != Input::M) return by_q;
  return internal::ColumnsPerEntry(by_q, pattern_, z_);  // dz/dM_ij = z_j dz/dq_i
}

}  // namespace ncpkit
