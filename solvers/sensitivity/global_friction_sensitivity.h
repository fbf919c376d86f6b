// Derivatives of the solution r of a frictional contact problem in its global form
// (solvers/friction/global_friction_problem.h: M v = H r + f, u = H^T v + w) with respect to
// M, H, f, w and mu, by the chain rule through the local form W = H^T M^-1 H,
// q = H^T M^-1 f + w (docs/derivatives.md). With v = M^-1 (H r + f) the end velocities, a
// change of the data moves u at fixed r by
//   dF = dw + dH^T v + H^T M^-1 (df + dH r - dM v),
// which FrictionSensitivity turns into dr. The adjoint: with a = dL/dq of the local form and
// b = M^-1 H a,
//   dL/dw = a,   dL/df = b,   dL/dH = v a^T + b r^T,   dL/dM = -b v^T,
// the matrix gradients given by their factors (dense, or on the pattern of H and of M's blocks).
#ifndef NCPKIT_SOLVERS_SENSITIVITY_GLOBAL_FRICTION_SENSITIVITY_H_
#define NCPKIT_SOLVERS_SENSITIVITY_GLOBAL_FRICTION_SENSITIVITY_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <vector>

#include "solvers/friction/global_friction_problem.h"
#include "solvers/sensitivity/friction_sensitivity.h"

namespace ncpkit {

class GlobalFrictionSensitivity {
 public:
  enum class Input { f, w, mu };
  // A perturbation of the data; an empty member is zero. dM (n x n) and dH (n x 3 n_c) may
  // have any pattern; a dM that leaves M's blocks differentiates a problem M cannot be.
  struct Tangent {
    Eigen::SparseMatrix<double> M, H;
    Eigen::VectorXd f, w, mu;
  };
  // The gradients of a scalar of r: f, w and mu as vectors, H's and M's by their factors.
  struct Gradient {
    Eigen::VectorXd f, w, mu;
  };

  // At the solution r (from any solver). Throws InputError as FrictionSensitivity does.
  GlobalFrictionSensitivity(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
                            const SensitivityOptions& options = SensitivityOptions());
  // The convex contact model's (FrictionSensitivity's second constructor), with its compliances
  // (R_N, R_T) per contact held fixed.
  GlobalFrictionSensitivity(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
                            const Eigen::MatrixX2d& compliances,
                            const SensitivityOptions& options = SensitivityOptions());

  int size() const { return static_cast<int>(r_.size()); }
  const FrictionSensitivity& local() const { return local_; }
  const std::vector<int>& degenerate() const { return local_.degenerate(); }

  Eigen::VectorXd Jvp(const Tangent& tangent) const;
  Gradient Vjp(const Eigen::VectorXd& g) const;
  // dL/dH = v w^T + f r^T and dL/dM = -f v^T for a gradient's w and f: dense, and on the
  // pattern of H and of M's diagonal blocks.
  Eigen::MatrixXd HGradient(const Gradient& gradient) const;
  Eigen::MatrixXd MGradient(const Gradient& gradient) const;
  Eigen::SparseMatrix<double> HGradientOnPattern(const Gradient& gradient) const;
  Eigen::SparseMatrix<double> MGradientOnPattern(const Gradient& gradient) const;
  // Dense Jacobians: 3 n_c x n (f), 3 n_c x 3 n_c (w), 3 n_c x n_c (mu).
  Eigen::MatrixXd Jacobian(Input input) const;

  // The end velocities v = M^-1 (H r + f) at the solution.
  const Eigen::VectorXd& velocity() const { return v_; }
  // Whether the problem's data determine the end velocities' derivatives: true unless the
  // impulses the local sensitivity leaves undetermined (FrictionSensitivity::
  // UndeterminedImpulses) move v = M^-1 H r by more than 1e-8 of M^-1 H's largest entry (as a
  // box resting on four corners and sliding with a turn does: its normal impulses' share between
  // the corners is not fixed, and with it the friction's torque).
  bool VelocitiesDetermined() const;

  // The same two pieces for a caller that keeps only the local form's sensitivity (no
  // derivatives with respect to M, H or f, so none of their sparse copies): the sensitivity at
  // r (compliances null for the Coulomb cone, else the convex model's), and whether it
  // determines the end velocities' derivatives (M^-1 H formed only where a contact slides).
  static FrictionSensitivity LocalSensitivity(const GlobalFrictionContactProblem& problem,
                                              const Eigen::VectorXd& r,
                                              const Eigen::MatrixX2d* compliances,
                                              const SensitivityOptions& options);
  static bool VelocitiesDetermined(const GlobalFrictionContactProblem& problem,
                                   const FrictionSensitivity& local);

 private:
  FrictionSensitivity local_;
  Eigen::VectorXd r_, v_;
  Eigen::SparseMatrix<double> H_, M_, inverse_mass_;  // M^-1: its blocks' inverses
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_SENSITIVITY_GLOBAL_FRICTION_SENSITIVITY_H_
