// Derivatives of the solution r of a frictional contact problem FC(W, q, mu)
// (solvers/friction/friction_problem.h) with respect to W, q and mu, by implicit
// differentiation of its contact states (docs/derivatives.md).
//
// At a solution, with u = W r + q, each contact is
//   apart    r_a = 0, u_N > 0                      locally: dr_a = 0;
//   sticking r_a inside the cone, u_a = 0          locally: du_a = 0;
//   sliding  r_N > 0, r_T = mu r_N d, u_N = 0, u_T = -s d with d a unit vector, s > 0:
//            du_N = 0, dr_T = (dmu r_N + mu dr_N) d + mu r_N d_perp dphi,
//            du_T = -ds d - s d_perp dphi,
// (phi the angle of d, s the slip; two unknowns more a sliding contact), du = W dr + dW r + dq.
// These equations form one sparse square system, factorized once (KLU, or the least-norm
// least-squares solution where it is singular: contacts whose impulses the dynamics do not fix,
// such as the four corners of a box face); the adjoint products solve its transpose.
//
// Degenerate contacts, where the solution map has a kink, and the side
// SensitivityOptions::degenerate_side takes (Bound: r stays on the boundary of its cone; Free: r
// moves into the cone):
//   grazing   r_a = 0 with u_N = 0:  Bound apart; Free in contact (sticking where u_T = 0,
//             else sliding with r_N = 0);
//   at the edge with zero slip (||r_T|| = mu r_N, u = 0):  Bound sliding with s = 0 (the slip
//             may start along -d); Free sticking;
//   frictionless (mu = 0) in contact without slip: dr_T = 0, and the derivative in mu, which
//             cannot decrease, is that of the side where the contact stays frictionless.
// Tolerances as SensitivityOptions says: impulses scaled by 1 + ||r||_inf, velocities by
// 1 + ||q||_inf.
//
// The convex contact model (solvers/friction/convex_newton.h: K ∋ r ⊥ u + R r ∈ K*, Anitescu's
// relaxed cone with a compliance R = diag(R_N, R_T, R_T) per contact) has the same states in
// the velocity ũ = u + R r, with two differences: a sliding contact's normal row is
// ũ_N = mu s (it separates at mu times its slip) instead of u_N = 0, and apart means
// ũ_N > mu ||ũ_T||. R is held fixed: a caller whose compliances move with the data adds dR r to
// dq.
#ifndef NCPKIT_SOLVERS_SENSITIVITY_FRICTION_SENSITIVITY_H_
#define NCPKIT_SOLVERS_SENSITIVITY_FRICTION_SENSITIVITY_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <vector>

#include "solvers/friction/friction_problem.h"
#include "solvers/sensitivity/box_sensitivity.h"
#include "solvers/sensitivity/internal/selected_system.h"

namespace ncpkit {

class GlobalFrictionContactProblem;

class FrictionSensitivity {
 public:
  enum class Input { q, W, mu };
  enum class ContactState { Apart, Sticking, Sliding, Frictionless };
  // A perturbation of the data; an empty member is zero. W may have any pattern.
  struct Tangent {
    Eigen::VectorXd q, mu;
    Eigen::SparseMatrix<double> W;
  };
  // The gradients of a scalar of r. W's is the outer product W_left r^T.
  struct Gradient {
    Eigen::VectorXd q, mu, W_left;
  };

  // At the solution r (from any solver), taken onto its cones first (a solver stops within
  // its tolerance of them). Throws InputError for a wrong size, a non-finite r, an r far
  // outside a cone (1e-3 of 1 + ||r||_inf: no solution), or as SelectedSystem does.
  FrictionSensitivity(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                      const SensitivityOptions& options = SensitivityOptions());
  // The convex model's, with the compliances (R_N, R_T) per contact (rows of an n_c x 2 matrix,
  // as ConvexNewton::Compliances gives them; > 0).
  FrictionSensitivity(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                      const Eigen::MatrixX2d& compliances,
                      const SensitivityOptions& options = SensitivityOptions());
  // The same for FC(W, q, mu) given by its parts, W kept as it is given (no copy when moved in):
  // the way a global form's W = H^T M^-1 H (GlobalFrictionContactProblem::Delassus()) comes here
  // without a local problem's second, row-major copy. Throws InputError as the problem's
  // constructor does for wrong sizes, non-finite entries or a negative mu.
  FrictionSensitivity(Eigen::SparseMatrix<double> W, const Eigen::VectorXd& q,
                      const Eigen::VectorXd& mu, const Eigen::VectorXd& r,
                      const SensitivityOptions& options = SensitivityOptions());
  FrictionSensitivity(Eigen::SparseMatrix<double> W, const Eigen::VectorXd& q,
                      const Eigen::VectorXd& mu, const Eigen::VectorXd& r,
                      const Eigen::MatrixX2d& compliances,
                      const SensitivityOptions& options = SensitivityOptions());

  // The Coulomb cone's, of a problem posed in the global form (M v = H r + f, u = H^T v + w;
  // GlobalFrictionSensitivity's local form), forming W = H^T M^-1 H only where it must: where
  // every contact sticks or is apart, each group of bodies the sticking contacts join has the
  // selected system K_g = J_g M_g^-1 J_g^T (J_g = H^T's rows there), factorized from J_g and M_g
  // (SelectedSystem::FactorizeFromRows: a resting column's 12 velocities instead of its 24
  // impulses), and an apart contact's dr = 0 is an equation of its own. That is W's system
  // with the apart contacts' columns of W dropped from the sticking rows (their dr is zero):
  // the same least-norm solution where the sticking rows' equations are consistent; where they
  // are not (a singular K_g), W's system would give the apart contacts impulses to shrink the
  // residual, this one keeps them at zero. Where a contact slides or is frictionless, or a
  // group's rows are nearly dependent, W is formed and the system assembled as by the
  // constructors above. Without W, Jacobian(Input::W) is refused (InputError); everything else
  // is the same.
  FrictionSensitivity(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
                      const SensitivityOptions& options = SensitivityOptions());

  int size() const { return static_cast<int>(r_.size()); }
  int num_contacts() const { return static_cast<int>(state_.size()); }
  ContactState state(int contact) const { return state_[contact]; }
  // Degenerate contacts, ascending.
  const std::vector<int>& degenerate() const { return degenerate_; }
  bool least_squares() const { return system_.least_squares(); }
  // Where the selected system is singular, columns spanning the changes of r its solution
  // leaves undetermined (3 n_c rows; no columns where it is regular): a family of solutions
  // through r, of which Jvp() follows the least-norm member.
  Eigen::MatrixXd UndeterminedImpulses() const;

  Eigen::VectorXd Jvp(const Tangent& tangent) const;
  // Jvp() of the changes of q and mu in each column of dq (3 n_c rows) and dmu (n_c rows), solved
  // together; a matrix without rows is zero.
  Eigen::MatrixXd JvpColumns(const Eigen::MatrixXd& dq, const Eigen::MatrixXd& dmu) const;
  Gradient Vjp(const Eigen::VectorXd& g) const;
  Eigen::MatrixXd MatrixGradient(const Gradient& gradient) const;  // W_left r^T
  // q: 3 n_c x 3 n_c; mu: 3 n_c x n_c; W: 3 n_c x nnz(W), a column per nonzero of W in the
  // order of the problem's W_columns().
  Eigen::MatrixXd Jacobian(Input input) const;

 private:
  // Checks the options and r, and takes r onto its cones.
  void ProjectImpulses(const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                       const SensitivityOptions& options);
  // Where every contact sticks, factorizes the selected system group by group from the global
  // form's rows; false (nothing done) where it cannot.
  bool FactorizeFromRows(const GlobalFrictionContactProblem& problem);
  // Takes r onto its cones and classifies the contacts (the constructors' shared work), W in
  // pattern_.
  void Start(const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
             const SensitivityOptions& options);
  void Classify(const Eigen::VectorXd& q, const Eigen::VectorXd& mu, const Eigen::VectorXd& u,
                const SensitivityOptions& options);
  // The selected system's entries, each handed to add(row, column, value), and its
  // factorization.
  // row_of[i]: the row where (W dr)_i appears (u_i's equation, or a sliding contact's extra
  // one), or -1 where it appears in none (RowsOfW()).
  template <class Add>
  void AddEntries(const Eigen::VectorXd& mu, const std::vector<int>& row_of, const Add& add) const;
  std::vector<int> RowsOfW() const;
  void Assemble(const Eigen::VectorXd& mu, int max_dense_least_squares);
  // The right-hand side for a change dF of u at fixed r and dmu (either empty: zero), written
  // into b (num_unknowns_ entries; a column of the caller's, so that columns allocate nothing).
  void RightHandSide(const Eigen::Ref<const Eigen::VectorXd>& dF,
                     const Eigen::Ref<const Eigen::VectorXd>& dmu,
                     Eigen::Ref<Eigen::VectorXd> b) const;

  Eigen::VectorXd r_;
  Eigen::SparseMatrix<double> pattern_;  // W (its pattern and values)
  bool w_formed_ = true;                 // false: factorized from the global form's rows
  Eigen::MatrixX2d compliance_;          // the convex model's (R_N, R_T); empty for Coulomb
  std::vector<ContactState> state_;
  std::vector<int> degenerate_;
  // Per contact: the friction direction d and the slip s (sliding), and the row of its two
  // extra equations (-1 unless sliding).
  std::vector<Eigen::Vector2d> direction_;
  std::vector<double> slip_;
  std::vector<int> extra_;
  int num_unknowns_ = 0;
  internal::SelectedSystem system_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_SENSITIVITY_FRICTION_SENSITIVITY_H_
