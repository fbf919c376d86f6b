// Derivatives of the solution of an LCP or box MLCP (linear_problem.h) with respect to its data
// q, M, l and u (docs/derivatives.md): BoxSensitivity with F(z) = M z + q, whose perturbation at
// fixed z is dF = dq + dM z. Hence dz/dM_ij = z_j dz/dq_i, and the gradient of a scalar of z with
// respect to M is the outer product a z^T of its gradient a with respect to q.
#ifndef NCPKIT_SOLVERS_SENSITIVITY_LINEAR_SENSITIVITY_H_
#define NCPKIT_SOLVERS_SENSITIVITY_LINEAR_SENSITIVITY_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>
#include <vector>

#include "solvers/lcp/linear_problem.h"
#include "solvers/sensitivity/box_sensitivity.h"

namespace ncpkit {

class LinearSensitivity {
 public:
  // The data a sensitivity differentiates by.
  enum class Input { q, M, lower, upper };
  // A perturbation of the data; an empty member is zero. M may have any pattern.
  struct Tangent {
    Eigen::VectorXd q, lower, upper;
    Eigen::SparseMatrix<double> M;
  };
  // The gradients of a scalar of z with respect to the data. M's is the outer product
  // M_left z^T: MatrixGradient() forms it dense, MatrixGradientOnPattern() on M's nonzeros.
  struct Gradient {
    Eigen::VectorXd q, lower, upper, M_left;
  };

  // At the solution z of the problem (z from any solver: the active set is read from z and
  // w = M z + q). Throws InputError as BoxSensitivity does.
  LinearSensitivity(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z,
                    const SensitivityOptions& options = SensitivityOptions());

  int size() const { return box_.size(); }
  const BoxSensitivity& box() const { return box_; }
  const std::vector<int>& degenerate() const { return box_.degenerate(); }

  // dz for a perturbation of the data (Jacobian-vector product).
  Eigen::VectorXd Jvp(const Tangent& tangent) const;
  // The gradients of <g, z> (vector-Jacobian product).
  Gradient Vjp(const Eigen::VectorXd& g) const;
  Eigen::MatrixXd MatrixGradient(const Gradient& gradient) const;
  // On M's pattern: the problem's sparse_columns() pattern, its values in that order.
  Eigen::SparseMatrix<double> MatrixGradientOnPattern(const Gradient& gradient) const;
  // The dense Jacobian of z with respect to one input: n x n for q, l, u; for M, n x nnz(M), a
  // column per nonzero of M in the order of the problem's sparse_columns().
  Eigen::MatrixXd Jacobian(Input input) const;

 private:
  BoxSensitivity box_;
  Eigen::VectorXd z_;
  Eigen::SparseMatrix<double> pattern_;  // M's column-major pattern (values of M)
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_SENSITIVITY_LINEAR_SENSITIVITY_H_
