// The convex contact model of a frictional contact problem, solved by a primal Newton method
// (Castro, Han, Permenter & Tedrake 2022, "An unconstrained convex formulation of compliant
// contact"; Todorov's convex soft contact in MuJoCo is of the same family).
//
// The model. Each contact a gets a compliance R_a = diag(R_N, R_T, R_T) > 0, and the contact
// conditions of the Coulomb problem (friction_problem.h) are replaced by those of Anitescu's
// relaxed cone with that compliance:
//
//   K_mu ∋ r_a  ⊥  u_a + R_a r_a  ∈ K*_mu,        u = W r + q (local form),
//
// i.e. the normal velocity gap of a sliding contact is mu ||u_T|| larger than Coulomb's (the
// relaxation: a sliding contact separates at mu times its slip) and a pressed contact sinks by
// R_N r_N (the compliance). R_N = normal_regularization w_a, R_T = tangential_regularization
// w_a, with w_a = ||W_aa||_F / 3 the scale of the contact's Delassus block: with the default
// normal_regularization = 1 / (4 pi^2) the contact is a spring whose period is one time step (in
// a time-stepper whose q carries the gap as phi / h). These conditions are the optimality
// conditions of a strictly convex problem in the velocities v of the global form
// (global_friction_problem.h, M v = H r + f, u = H^T v + w):
//
//   min_v  l(v) = 1/2 v^T M v - f^T v + sum_a l_a(H_a^T v + w_a),
//
// l_a the contact's cost (internal/convex_contact.h), with gradient M v - f - H g(v) and
// Hessian M + H G(v) H^T (G block diagonal, 3 x 3 a contact, positive semidefinite). Its
// minimizer gives r = g(v) and the conditions above hold by construction; the Newton iterates
// are global-form velocities, each step a sparse Cholesky factorization of the Hessian (of 6 x 6
// blocks where every block of M is a rigid body's, solvers/linalg/block_cholesky.h, else
// CHOLMOD; the symbolic analysis kept while the pattern of bodies joined by contacts is the
// same; dense below kDenseDofs degrees of freedom), and an exact line search on the convex
// function of the step length (safeguarded Newton on its derivative). A factorization serves
// the next iteration too where no contact changed its state (apart, sticking, sliding) since it
// was made and the last iteration cut the error tenfold.
//
// The error reported (natural_residual) and stopped on is the model's, measured the way FCLib
// measures the Coulomb problem's: ||r - P_K(r - (W r + q + R r))|| / (1 + ||q||) at the impulses
// r = g(v), with W r + q formed from r through the global form (v = M^-1 (H r + f)), not from the
// iterate. Summary::coulomb_error is the FCLib error of the same r in the Coulomb problem, for
// comparison: it is not zero where contacts slide or press (the model's physics differ).
//
// The local form FC(W, q, mu) is the same problem for any H with H^T H = W (M = I, f = 0,
// w = q), and the iterates v = H rho never leave H's range, so the method runs on rho without
// forming H: u = W rho + q, and the Newton step, -(I + H G H^T)^-1 H (rho - g) = H d with
// (I + G W) d = -(rho - g), is one sparse LU factorization (KLU) of I + G W on W's 3 x 3 block
// pattern. W must be symmetric (to 1e-10 of its largest entry; InvalidInput otherwise) and
// positive semidefinite, as the Delassus operator of a mechanical system is; where it is not,
// the line search finds no descent and the solve says so.
#ifndef NCPKIT_SOLVERS_FRICTION_CONVEX_NEWTON_H_
#define NCPKIT_SOLVERS_FRICTION_CONVEX_NEWTON_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"

namespace ncpkit {

namespace internal {
struct ConvexNewtonWorkspace;
}  // namespace internal

class ConvexNewton {
 public:
  struct Options {
    // Newton iterations before MaxIterations. Default 100; >= 1.
    int max_iterations = 100;
    // Stop when the model's error (top of this file) <= tolerance. Default 1e-8; > 0.
    double tolerance = 1e-8;
    // Start from the velocities of *r, v = M^-1 (H r + f), if *r has the problem's size.
    // Default false: from the free velocities M^-1 f.
    bool warm_start = false;
    // Stop with MaxIterations once this much wall time has passed. Default 0: no limit; >= 0.
    double time_limit_seconds = 0.0;
    // R_N / w_a: the normal compliance. Default 1 / (4 pi^2) (a period of one time step); > 0.
    double normal_regularization = 1.0 / (4.0 * 3.14159265358979323846 * 3.14159265358979323846);
    // R_T / w_a: the tangential compliance (a sticking contact creeps at R_T r_T). Default the
    // normal one's default (MuJoCo's impratio = 1); smaller creeps less and needs more
    // iterations (docs/solvers.md); > 0.
    double tangential_regularization =
        1.0 / (4.0 * 3.14159265358979323846 * 3.14159265358979323846);
    bool IsValid(std::string* why) const;
  };

  struct Summary : FrictionSolverSummary {
    double coulomb_error = std::numeric_limits<double>::infinity();  // top of this file
    int line_search_iterations = 0;  // derivative evaluations of the exact line searches
    int symbolic_analyses = 0;       // CHOLMOD analyses in this solve (0: the pattern was kept)
    std::string FullReport() const override;
  };

  // Degrees of freedom up to which the Hessian is factorized densely.
  static constexpr int kDenseDofs = 48;

  ConvexNewton();
  ~ConvexNewton();
  explicit ConvexNewton(const Options& options);
  ConvexNewton(ConvexNewton&&) noexcept;
  ConvexNewton& operator=(ConvexNewton&&) noexcept;
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves the model of the problem; *r receives its impulses (the best point found). The
  // summary stays valid until the next solve.
  const Summary& Solve(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);
  const Summary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);

  // The model's error of the impulses r (top of this file) for the problem, with the
  // compliances these options give: independent of any solve.
  double ModelError(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r) const;
  // Its compliances (R_N, R_T) per contact, rows of an n_c x 2 matrix.
  Eigen::MatrixX2d Compliances(const GlobalFrictionContactProblem& problem) const;
  Eigen::MatrixX2d Compliances(const FrictionContactProblem& problem) const;

 private:
  template <class Form>
  void Run(Form* form, Eigen::VectorXd* r);

  Options options_;
  std::unique_ptr<internal::ConvexNewtonWorkspace> work_;
  int symbolic_before_ = 0;  // the factorization's analyses before this solve
  Summary summary_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_CONVEX_NEWTON_H_
