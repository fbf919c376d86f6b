// Semismooth Newton methods for MCPs: Fischer-Burmeister (plain and penalized) and min-map.
#ifndef NCPKIT_SOLVERS_MCP_SEMISMOOTH_NEWTON_H_
#define NCPKIT_SOLVERS_MCP_SEMISMOOTH_NEWTON_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/mcp/mcp.h"
#include "solvers/mcp/ncp_functions.h"

namespace ncpkit {

class KluLu;
namespace internal {
class NewtonMatrix;
struct NewtonWorkspace;
}  // namespace internal

// Semismooth Newton on Phi(z) = 0, Phi_i = NCP function of (z_i, F_i(z)) (ncp_functions.h):
// Newton direction H d = -Phi with H = D_a + D_b J an element of the generalized Jacobian,
// Armijo line search (optionally non-monotone, Grippo, Lampariello & Lucidi 1986) on the
// merit Psi = 1/2 ||Phi||^2, and a Levenberg-Marquardt direction (H^T H + mu I) d = -H^T Phi
// when H is singular or the Newton direction is not a descent direction
// (De Luca, Facchinei & Kanzow 1996: grad Psi^T d <= -rho ||d||^p).
// Linear systems: dense LU for small problems, SuiteSparse KLU otherwise, the symbolic
// analysis reused while the Jacobian's pattern does not change.
// Convergence is judged on the natural residual, like every ncpkit solver. A point where
// F cannot be evaluated (NaN / Inf, or Evaluate() false) during the line search shortens
// the step.
class FischerBurmeisterNewton {
 public:
  enum class LinearSolver { Auto, Dense, SparseKlu };
  // Row and column scaling of the problem before the iteration (equilibration.h).
  enum class Equilibration {
    Off,
    // Scale when the Jacobian at the start has row or column infinity norms that spread by
    // more than equilibration_spread (the check costs one pass over the Jacobian, which the
    // first iteration needs anyway).
    Auto,
    Always,
  };

  struct Options {
    NcpFunction ncp_function = NcpFunction::FischerBurmeister;
    double penalty_lambda = 0.95;  // lambda in (0, 1] of the penalized FB function
    LinearSolver linear_solver = LinearSolver::Auto;
    int dense_threshold = 20;  // Auto: dense LU below this size (measured on the sparse
                               // contact-like LCP: dense faster at n = 10 and 30, KLU at
                               // n = 100, bench/; see also dense_pattern_*)
    // Auto: dense LU also when the Newton matrix has at most dense_pattern_max_size rows and
    // at least dense_pattern_fill * n^2 structural nonzeros (a dense pattern gains nothing
    // from KLU: the implicit step of one body pair, n = 24, factorized 2.4x faster dense).
    int dense_pattern_max_size = 64;
    double dense_pattern_fill = 0.25;
    double tolerance = 1e-10;  // natural residual
    // A start point is returned without a Newton step only if its natural residual is at most
    // start_acceptance * tolerance; otherwise at least one step is taken (and the start is
    // kept if that step does not improve it). In (0, 1]. A time-stepper that warm-starts from
    // the last step's solution sets it below 1: accepted as is, the rounding errors of a
    // warm start build up step after step (the implicit stepper uses 1e-2: a resting box's
    // residual grew in proportion to time, 2e-12 after 1e5 steps, with 1).
    double start_acceptance = 1.0;
    int max_iterations = 200;
    double armijo_sigma = 1e-4;
    double backtrack_factor = 0.5;
    int max_line_search_steps = 40;
    int nonmonotone_memory = 1;  // 1 = monotone Armijo; M > 1 compares with the max of the
                                 // last M merit values
    double descent_rho = 1e-10;  // descent test grad^T d <= -rho ||d||^descent_p
    double descent_p = 2.1;
    // Stop as stalled when the natural residual has not dropped by stall_factor over
    // stall_window iterations.
    int stall_window = 20;
    double stall_factor = 0.5;
    // ... or by stall_factor over the last lm_stall_window iterations where every one of them
    // took the Levenberg-Marquardt step (neither the Newton nor the regularized direction
    // descending). Such runs at a degenerate point crawl, the merit falling a percent an
    // iteration (a landing column of boxes: twenty such steps before the window above ends the
    // run), and another start gets further. 0: off.
    int lm_stall_window = 5;
    // Keep the iterates in [l, u]: each line-search trial point is projected onto the box
    // (the unprojected search is the fallback). The start is projected either way. Where F has
    // spurious stationary points of the merit function outside the box (bilinear friction rows with
    // a negative multiplier), this keeps Newton away from them.
    bool project_onto_bounds = false;
    // Where the Newton matrix H is singular or its direction is not one of descent (redundant
    // contacts, friction with no normal force: solutions that are not isolated), the direction
    // of H + mu I, mu = regularization * min(1, |Phi|), is tried before Levenberg-Marquardt.
    // Its shift vanishes with the residual, so it selects one solution near the iterate without
    // changing what a solution is; the convergence test is the unchanged natural residual.
    // Default 0.1 (measured: 0.01 to 0.3 solve every step of the degenerate box scenes and of
    // cube_stacking with dqc; 1 is too strong for the DQC's scale); >= 0; 0: straight to
    // Levenberg-Marquardt.
    double regularization = 0.1;
    // Badly scaled problems (rows or variables of very different magnitudes) make the NCP
    // function's two arguments incomparable, and Newton stalls. Equilibrated, the problem
    // G(y) = R F(C y) on [l / c, u / c] is solved with R, C from Ruiz's method on the Jacobian
    // at the start (powers of two: exact), then z = C y; if z misses the tolerance in the
    // original measure, Newton continues on the original problem from z, and if that fails,
    // runs unscaled from the start (the better outcome is kept). The natural residual reported
    // is always the original problem's. Default Auto with spread 1e6: the badly scaled
    // P-matrix LCPs of 8 decades stall without it (equilibration_test). The steppers turn it
    // off (SolverOptions::equilibrate): their problems reach the spread (the DQC's stiffness
    // rows, the implicit step's multipliers) yet are well posed as built; equilibrated, FB
    // Newton failed the fence scene's first DQC step that it solves unscaled in 6 iterations.
    Equilibration equilibration = Equilibration::Auto;
    double equilibration_spread = 1e6;  // > 1
    bool record_history = false;        // per-iteration records in the summary
    // Chord steps before the first Newton step: a Solve reuses the Newton matrix that the
    // previous Solve factorized last (a time-stepper's problem, one step later), taking
    // steps z + d with that matrix while each shrinks |Phi| by chord_contraction, at most
    // max_chord_steps; Newton continues from the last accepted point. A Newton iteration
    // evaluates the Jacobian and factorizes; a chord step evaluates F and solves. Chord steps
    // count as iterations (max_iterations bounds both; Summary::chord_steps says how many).
    // Off by default: a solver handed unrelated problems would start each from another's
    // matrix.
    bool reuse_factorization = false;
    double chord_contraction = 0.1;  // in (0, 1)
    int max_chord_steps = 8;         // >= 0
    // Restarts after a stall from the stalled point with one unresolved pair flipped: of the
    // pairs whose F_i points at a finite bound of z_i and is nearer zero than z_i's distance to
    // it (l_i < z_i and 0 < F_i < z_i - l_i, or the mirror at u_i), the one with the largest
    // |F_i| above the tolerance (else above 0) has z_i set to that bound. FB closes the smaller
    // side of such a pair, which is the wrong side when a row's magnitude is far below its
    // variable's: the implicit step's slip row mu^2 p_n^2 - |p_t|^2 is of order 1e-9 on a
    // contact carrying 1e-4 N s, and Newton drives it to zero (sliding) while the solution
    // sticks (sigma = 0). A restart starts with chord steps where reuse_factorization is on,
    // replaces the point only if it ends with a smaller natural residual, and restarts stop at
    // the first that does not. Default 0 (off).
    int active_set_restarts = 0;  // >= 0
    // Once the Newton direction has given no accepted step in a run, the run's later
    // iterations start from the regularized direction (which needs regularization > 0). Where
    // H is singular at every iterate (the coplanar corner contacts of a box face landing on
    // another) the Newton direction fails every time, and trying it first costs a
    // factorization an iteration: 120 factorizations for 51 iterations on a 10-box column's
    // landing, 72 with this. The shift vanishes with |Phi|, so the regularized direction keeps
    // the local rate. The iterates differ from the Newton-first ones, and a solve (restarts
    // included) that ends unsolved after skipping runs again from its start without skipping
    // (no chord steps); the better point is kept and the work of both is counted. Default
    // false; the implicit stepper turns it on (docs/solvers.md, measured on its scenes).
    bool skip_failed_newton = false;
    bool IsValid(std::string* why) const;
  };

  struct IterationRecord {
    int iteration = 0;
    double natural_residual = 0.0;
    double merit = 0.0;        // 1/2 ||Phi||^2
    double step_length = 0.0;  // accepted t
    int line_search_steps = 0;
    bool levenberg_marquardt = false;
    bool regularized = false;
  };

  struct Summary : SolverSummary {
    int line_search_steps = 0;  // extra evaluations in line searches
    int levenberg_marquardt_steps = 0;
    int regularized_steps = 0;  // directions of H + mu I (Options::regularization)
    bool dense_linear_algebra = false;
    int symbolic_analyses = 0;  // KLU symbolic analyses (one per Jacobian pattern)
    // The problem was equilibrated (Options::equilibration); polish_iterations of them
    // continued on the original problem.
    bool equilibrated = false;
    int polish_iterations = 0;
    int chord_steps = 0;          // accepted chord steps, among the iterations
    int active_set_restarts = 0;  // restarts taken (Options::active_set_restarts)
    // Iterations that skipped a failed Newton direction (Options::skip_failed_newton), and
    // whether the solve then ran again from its start without skipping.
    int skipped_newton_directions = 0;
    bool ran_newton_first_again = false;
    double observed_rate = 0.0;  // mean ratio of successive natural residuals, last iterations
    std::string diagnostic;      // e.g. linear convergence near a degenerate solution
    std::vector<IterationRecord> history;
    std::string FullReport() const override;
  };

  FischerBurmeisterNewton();
  explicit FischerBurmeisterNewton(const Options& options);
  ~FischerBurmeisterNewton();

  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves from *z if it has the problem's size and is finite (warm start), else from the
  // problem's DefaultStart() (a ProblemBuilder's declared start values); the start is projected
  // onto [l, u]. *z receives the best point found. The Newton matrix's pattern and its KLU
  // symbolic analysis are kept for the next Solve while the Jacobian's pattern is the same (a
  // time-stepper solving one problem per step analyses once).
  Summary Solve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z);

  // The Newton matrix kept for chord steps (Options::reuse_factorization), copied; null when
  // none is kept or the option is off. RestoreMemory keeps that matrix again (factorized as it
  // was: the same rounding), or none for null; a memory of another solver kind is ignored.
  std::shared_ptr<const SolverMemory> SaveMemory() const;
  void RestoreMemory(const SolverMemory* memory);

 private:
  // The steps of Solve() (semismooth_newton.cc). SolveFrom is one run of the iteration from
  // *z; SolveWithRestarts adds the active-set restarts; Solve adds, where a skipping solve
  // ended unsolved, the solve again without skipping (Options::skip_failed_newton).
  Summary SolveFrom(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                    bool chord_steps);
  Summary SolveWithRestarts(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                            bool chord_steps);
  bool FlipUnresolvedPair(const MixedComplementarityProblem& problem, Eigen::VectorXd* z);
  bool Start(const MixedComplementarityProblem& problem, Eigen::VectorXd* z, Summary* summary);
  bool Stops(int iteration, Summary* summary);
  void ChordSteps(const MixedComplementarityProblem& problem, Eigen::VectorXd* z, Summary* summary);
  bool Iterate(const MixedComplementarityProblem& problem, Eigen::VectorXd* z, bool dense,
               int iteration, Summary* summary);
  bool TryDirection(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                    bool dense, double shift, Summary* summary, IterationRecord* record,
                    bool* accepted);
  bool NewtonDirection(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                       bool dense, double shift, Summary* summary, bool* have_direction);
  bool LevenbergMarquardtDirection(Summary* summary);
  bool DensePattern(const Eigen::SparseMatrix<double>& J) const;
  bool Backtrack(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                 Summary* summary, IterationRecord* record);
  void DiagnoseRate(Summary* summary) const;
  bool CheckScaling(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
                    Summary* summary, bool* scale);
  void SolveEquilibrated(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                         Summary* summary);

  Options options_;
  std::unique_ptr<KluLu> klu_;
  std::unique_ptr<internal::NewtonMatrix> newton_matrix_;  // H's pattern, reused across solves
  bool klu_analyzed_ = false;  // KLU's symbolic analysis of that pattern is current
  std::unique_ptr<internal::NewtonWorkspace> workspace_;  // vectors reused across solves
  // The solver of the equilibrated problem and of the polish (equilibration Off), made on
  // first use.
  std::unique_ptr<FischerBurmeisterNewton> unscaled_;
};

// The solver name used in reports for the options' variant ("fb-newton", "fb-newton-dense" when
// always dense, "penalized-fb", "minmap-newton"): the registry row of that name runs them.
std::string SemismoothNewtonName(const FischerBurmeisterNewton::Options& options);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_SEMISMOOTH_NEWTON_H_
