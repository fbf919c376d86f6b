// Josephy-Newton for MCPs: Newton's method on the linearized problem, each linear problem
// solved by Lemke (the method PATH is built on; docs/references.md).
#ifndef NCPKIT_SOLVERS_MCP_JOSEPHY_NEWTON_H_
#define NCPKIT_SOLVERS_MCP_JOSEPHY_NEWTON_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/base/status.h"
#include "solvers/lcp/lemke.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/mcp/mcp.h"

namespace ncpkit {

// At the iterate z_k the MCP(F, l, u) is replaced by its linearization, the box MLCP
//   M = J(z_k),  q = F(z_k) - J(z_k) z_k,  same l, u
// (Josephy 1979), solved by Lemke warm-started from z_k's basis. The step to its solution
// z^ stays in the box; it is accepted when the Fischer-Burmeister merit
// psi = 1/2 ||Phi_FB||^2 falls below (1 - sigma t) times the largest of the last
// `nonmonotone_memory` merits, else halved (the watchdog-like tolerance of PATH's
// non-monotone path search, on a segment instead of a path). Where the linearization has no
// solution Lemke finds (ray termination: a negative slope at a bound, say) or its solution
// does not lower the merit, the proximal linearizations J + mu I are tried with growing mu
// (mu / max(1, max|J_ij|) = 1e-3 ... 100): their solutions tend to the projected step
// mid(l, u, z - F / mu). Near a solution with a nonsingular linearization the full step is
// taken and convergence is quadratic. It fails, and says so, when no shift gives a step, or
// as stalled when the natural residual has not halved over the last 10 linearizations (each is
// a Lemke solve, whose reduction of a large free block dominates a failing step's cost).
// Convergence is judged on the natural residual, like every ncpkit solver. A linear problem
// is solved by its first linearization (Lemke on the problem itself).
class JosephyNewton {
 public:
  struct Options {
    double tolerance = 1e-10;  // natural residual; > 0
    int max_iterations = 100;  // linearizations; >= 1
    double armijo_sigma = 1e-4;
    double backtrack_factor = 0.5;
    int max_line_search_steps = 30;
    int nonmonotone_memory = 5;
    // Start from *z when it has the problem's size (else the problem's DefaultStart()); either
    // is projected onto [l, u].
    bool warm_start = false;
    bool IsValid(std::string* why) const;
  };
  struct Summary : SolverSummary {
    int lemke_pivots = 0;        // over all linearizations
    int line_search_steps = 0;   // halvings
    int regularized_steps = 0;   // steps from a shifted linearization J + mu I
    int failed_subproblems = 0;  // linearizations (shifted or not) Lemke did not solve
    std::string FullReport() const override;
  };

  JosephyNewton() = default;
  explicit JosephyNewton(const Options& options) : options_(options) {}
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // *z: the start (see Options::warm_start); receives the solution or the best point found.
  Summary Solve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z);
  Summary Solve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z);

 private:
  bool Step(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z,
            const Eigen::VectorXd& F, const Eigen::SparseMatrix<double>& J, double scale,
            double reference, Eigen::VectorXd* z_hat, Eigen::VectorXd* z_trial,
            Eigen::VectorXd* F_trial, Summary* summary, std::string* failure);

  Options options_;
  LemkeSolver lemke_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_JOSEPHY_NEWTON_H_
