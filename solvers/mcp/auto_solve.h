// The "auto" solver: a robust sequence of methods, reporting which one solved the problem.
#ifndef NCPKIT_SOLVERS_MCP_AUTO_SOLVE_H_
#define NCPKIT_SOLVERS_MCP_AUTO_SOLVE_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/base/status.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/mcp/mcp.h"

namespace ncpkit {

// MCP: FB Newton from the start point (*z if it has the problem's size, else the problem's
// DefaultStart(), projected onto the box; equilibrated when badly scaled, semismooth_newton.h),
// then Josephy-Newton (Lemke on each linearization) and penalized FB and min-map Newton from it,
// then FB and penalized FB from the restart points start + 1, 1, 10 (vectors of ones, projected
// onto the box) and the box midpoint where the box is finite, until one converges. *z receives the
// solution, or the best point (smallest natural residual) of all attempts. LCP / box MLCP: FB
// Newton first (fast on the sparse, well-posed problems), then Lemke (which does not stall where
// Newton meets a degenerate or non-monotone problem), then the MCP chain.
class AutoSolver {
 public:
  struct Options {
    double tolerance = 1e-10;  // natural residual; > 0
    // Per Newton attempt (Josephy-Newton: linearizations, at most its own default); >= 1.
    int max_iterations = 200;
    // MCP chain: after the methods from the start point, FB and penalized FB from the restart
    // points (below). Default true; a caller with start points of its own (the implicit stepper)
    // turns them off.
    bool restarts = true;
    bool IsValid(std::string* why) const;
  };
  struct Summary : SolverSummary {
    std::string path;  // every attempt in order, e.g. "fb-newton: failed (...); lemke: converged"
    std::string solved_by;  // the attempt that converged, empty if none did
    int attempts = 0;
    std::string FullReport() const override;
  };

  AutoSolver() = default;
  explicit AutoSolver(const Options& options) : options_(options) {}
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  Summary Solve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z) const;
  Summary Solve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z) const;

 private:
  Options options_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_AUTO_SOLVE_H_
