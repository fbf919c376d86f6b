// Semismooth Newton on the Alart-Curnier function or the Fischer-Burmeister function of the
// second-order cone, for the frictional contact problem, and the proximal-point method around
// it.
#ifndef NCPKIT_SOLVERS_FRICTION_FRICTION_NEWTON_H_
#define NCPKIT_SOLVERS_FRICTION_FRICTION_NEWTON_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/linalg/sparse_lu.h"

namespace ncpkit {

// Newton's method on Phi(r) = 0, with u = W r + q and, per contact (Alart & Curnier 1991;
// Christensen, Klarbring, Pang & Stromberg 1998),
//   Phi_N = r_N - max(0, r_N - rho_N u_N),
//   Phi_T = r_T - P_D(mu max(0, r_N - rho_N u_N)) (r_T - rho_T u_T),
// P_D(R) the projection onto the disk of radius R; Phi(r) = 0 exactly when r solves the
// problem (or, with Options::function, the FB function of the second-order cone,
// friction_functions.h). The generalized Jacobian is A + B W with A, B block diagonal (3 x 3 per
// contact), so it has W's block pattern: KLU analyzes it once per problem and factorizes it once
// per iteration (after a solve's first, with the last pivots where they still serve; with the
// global form at hand, through the bodies instead: Solve(global, local, r)). The step is globalized
// by a non-monotone Armijo search on 1/2 ||Phi||^2 (Grippo, Lampariello & Lucidi); where the
// Jacobian is singular (redundant contacts, a singular W), or singular to rounding (KLU's pivots
// spanning more than 14 orders of magnitude), the direction of J + eps I is used. rho_N = rho_T = 1
// / (largest diagonal entry of the contact's block of W), so that every contact's function is
// scaled alike. The solver stops on the FCLib error (friction_problem.h), the measure every
// friction solver reports.
class FrictionNewton {
 public:
  // The function whose zero is sought (friction_functions.h).
  enum class Function {
    AlartCurnier,       // the header's Phi
    FischerBurmeister,  // the FB function of the second-order cone (Fukushima, Luo & Tseng);
                        // its merit 1/2 ||Phi||^2 is continuously differentiable
  };
  struct Options {
    Function function = Function::AlartCurnier;
    // Newton iterations before MaxIterations. Default 200; >= 1.
    int max_iterations = 200;
    // Stop when the FCLib error <= tolerance. Default 1e-8; > 0.
    double tolerance = 1e-8;
    // Start from *r if it has the problem's size. Default false: from r = 0.
    bool warm_start = false;
    // Merit values the Armijo test compares with (1: monotone). Default 5; >= 1.
    int nonmonotone_memory = 5;
    // Stop with MaxIterations once this much wall time has passed. Default 0: no limit; >= 0.
    double time_limit_seconds = 0.0;
    // With the global form at hand (Solve(global, local, r)): K is posed on problems of at least
    // global_form_contacts contacts (below, its analysis costs more than J's factorizations
    // could save; default 100, >= 0) and the directions come from it where J's predicted LU
    // fill is at least global_form_fill times K's (default 1.5, >= 0; 0: always). On 32 islands
    // of the 200-box pile (462 to 1274 contacts) J's predicted fill was 1.2 to 1.4 times K's
    // wherever J's iterations were the cheaper (K's took 1.1 to 2 times as long), and 1.6 to
    // 4.5 times on the landing islands, where K's took 0.2 to 0.6 times as long but once
    // (1.2 times).
    int global_form_contacts = 100;
    double global_form_fill = 1.5;
    bool IsValid(std::string* why) const;
  };

  struct Summary : FrictionSolverSummary {
    int line_search_failures = 0;  // iterations whose Armijo search ended at the smallest step
    int regularized_steps = 0;     // iterations that used J + eps I
    bool global_form = false;      // the directions came from K (Options::global_form_*)
    std::string FullReport() const override;
  };

  FrictionNewton();
  ~FrictionNewton();
  explicit FrictionNewton(const Options& options);
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves FC(W, q, mu); *r receives the best point found. The summary stays valid until the
  // next solve; with the workspace it is kept, so that a solve of a problem no larger than the
  // last allocates nothing.
  const Summary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);
  // The same problem with its global form at hand: `local` is `global.Reduce()`'s result (a
  // time-stepper's island; FrictionAuto's attempts on a global problem). The iteration is the
  // local solve's; where Options::global_form_contacts and global_form_fill choose it, each
  // Newton direction comes from
  //   [A + sigma B + eps I   B H^T] [d]   [-Phi]
  //   [        -H              M  ] [y] = [  0 ],   y = M^-1 H d, so that B H^T y = B W d
  // (y scaled by M's diagonal), never forming J: its LU has the fill of the bodies' coupling,
  // not of W's (docs/fclib.md, "Newton through the bodies"). K is singular where J is; as KLU's
  // pivot spread says nothing of J's there, a direction is taken as singular where it
  // amplifies Phi over 1e14 / max |J_ii| (J singular to rounding). InvalidInput where the two
  // forms' sizes differ.
  const Summary& Solve(const GlobalFrictionContactProblem& global,
                       const FrictionContactProblem& local, Eigen::VectorXd* r);
  // A global problem alone: reduced (W formed, in kept storage) and solved as above.
  const Summary& Solve(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* r);
  // Solves the proximal subproblem FC(W + sigma I, q - sigma center, mu) (sigma >= 0): u is
  // replaced by W r + q + sigma (r - center) throughout, and the FCLib error reported and
  // tested is the subproblem's.
  const Summary& SolveShifted(const FrictionContactProblem& problem, double sigma,
                              const Eigen::VectorXd& center, Eigen::VectorXd* r);
  // The same with the global form at hand, as Solve(global, local, r).
  const Summary& SolveShifted(const GlobalFrictionContactProblem& global,
                              const FrictionContactProblem& local, double sigma,
                              const Eigen::VectorXd& center, Eigen::VectorXd* r);

 private:
  struct Workspace;
  void Prepare(const FrictionContactProblem& problem);
  void Analyze(const FrictionContactProblem& problem);
  double Evaluate(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                  Eigen::VectorXd* u, Eigen::VectorXd* phi) const;
  // J = A + B W at r; `error`, the iterate's FCLib error, sets the FB Jacobian's smoothing.
  void AssembleJacobian(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                        const Eigen::VectorXd& u, double error);
  // The global form's system: its pattern (per solve) and its values (per iteration).
  void AnalyzeGlobal(const GlobalFrictionContactProblem& global);
  void FillGlobal();
  bool NewtonDirection(Summary* summary, std::string* stop);
  bool LineSearch(const FrictionContactProblem& problem, const Eigen::VectorXd& r, double merit,
                  double reference, double* trial_merit);
  void SetOutcome(const std::string& stop, bool timed_out, Summary* summary) const;

  Options options_;
  std::unique_ptr<Workspace> work_;
  const GlobalFrictionContactProblem* global_ = nullptr;  // during Solve(global, local, r)
  bool use_global_ = false;  // the directions come from K (SolveShifted decides, Options)
  Summary summary_;
  double sigma_ = 0.0;
  const Eigen::VectorXd* center_ = nullptr;
};

// The proximal-point method (Rockafellar) around FrictionNewton: r_{k+1} solves
// FC(W + sigma_k I, q - sigma_k r_k, mu), whose Jacobians are regular even where W is singular
// or contacts are redundant. sigma_k = sigma_scale * a_k * (mean diagonal of W) *
// min(1, error_k^0.5): it shrinks with the error of the original problem, and a_k (from 1,
// within [1e-4, 1e4]) is divided by 3 after a subproblem solved in at most 5 Newton iterations
// and multiplied by 10 after one that was not solved, so that well-posed problems end with
// plain Newton steps and hard ones keep their regularization. The error tested is the original
// problem's. At a_k's cap the regularization cannot grow: 10 subproblems in a row that fail
// there without improving the best point end the solve (MaxIterations, the message says so);
// so does a window of 100 steps in which neither the error nor the best error moved by 1 % of
// the best (subproblems solved, the original problem not approached).
class FrictionProximalPoint {
 public:
  struct Options {
    // Outer iterations before MaxIterations. Default 100; >= 1.
    int max_outer_iterations = 100;
    // Newton iterations per subproblem. Default 50; >= 1.
    int max_inner_iterations = 50;
    // Stop when the FCLib error <= tolerance. Default 1e-8; > 0.
    double tolerance = 1e-8;
    // The function the inner Newton solver works on. Default AlartCurnier.
    FrictionNewton::Function function = FrictionNewton::Function::AlartCurnier;
    // The scale of sigma_k (above). Default 1; > 0.
    double sigma_scale = 1.0;
    bool warm_start = false;
    double time_limit_seconds = 0.0;  // 0: no limit; >= 0
    bool IsValid(std::string* why) const;
  };
  using Summary = FrictionSolverSummary;

  FrictionProximalPoint() = default;
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }
  Summary Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);
  // The same with the global form at hand (`local` is `global.Reduce()`'s result): the
  // subproblems' Newton directions come as in FrictionNewton::Solve(global, local, r).
  Summary Solve(const GlobalFrictionContactProblem& global, const FrictionContactProblem& local,
                Eigen::VectorXd* r);

 private:
  Options options_;
  FrictionNewton newton_;
  const GlobalFrictionContactProblem* global_ = nullptr;  // during Solve(global, local, r)
  Eigen::VectorXd center_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_FRICTION_NEWTON_H_
