// The "auto" solver: a robust sequence of methods, reporting which one solved the problem.
#ifndef NCPKIT_SOLVERS_AUTO_SOLVE_H_
#define NCPKIT_SOLVERS_AUTO_SOLVE_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/linear_problem.h"
#include "solvers/mcp.h"
#include "solvers/status.h"

namespace ncpkit {

struct AutoSolveOptions {
  double tolerance = 1e-10;  // natural residual
  int max_iterations = 200;  // per Newton attempt
  bool IsValid(std::string* why) const;
};

struct AutoSolveSummary : SolverSummary {
  std::string path;  // every attempt in order, e.g. "fb-newton: failed (...); lemke: converged"
  std::string solved_by;  // the attempt that converged, empty if none did
  int attempts = 0;
  std::string FullReport() const;
};

// MCP: FB Newton from the start point (*z if it has the problem's size, else the projection
// of 0 onto the box), then penalized FB and min-map Newton from it, then FB and penalized FB
// from the restart points start + 1, 1, 10 (vectors of ones, projected onto the box) and the
// box midpoint where the box is finite, until one converges. *z receives the solution, or the
// best point (smallest natural residual) of all attempts.
AutoSolveSummary AutoSolve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                           const AutoSolveOptions& options = AutoSolveOptions());

// LCP / box MLCP: FB Newton first (fast on the sparse, well-posed problems), then Lemke (which
// does not stall where Newton meets a degenerate or non-monotone problem), then the MCP chain.
AutoSolveSummary AutoSolve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z,
                           const AutoSolveOptions& options = AutoSolveOptions());

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_AUTO_SOLVE_H_
