// Solving a linear complementarity problem with a solver chosen by name at run time.
#ifndef NCPKIT_SOLVERS_LINEAR_SOLVE_H_
#define NCPKIT_SOLVERS_LINEAR_SOLVE_H_

#include <string>
#include <vector>

#include "solvers/linear_problem.h"
#include "solvers/status.h"

namespace ncpkit {

// Settings common to every solver; each solver keeps its own defaults for the rest.
struct LinearSolveSettings {
  double tolerance = 1e-10;  // natural residual tolerance
  int max_iterations = 0;    // pivots / sweeps / iterations; 0 = the solver's default
  bool warm_start = false;   // start from *z
};

// Names accepted by SolveLinearProblem, in the order the comparison table lists them.
const std::vector<std::string>& LinearSolverNames();
bool IsLinearSolverName(const std::string& name);

// Runs the named solver. `full_report` (optional) receives the solver's FullReport().
// An unknown name gives a summary with status InvalidInput.
SolverSummary SolveLinearProblem(const std::string& solver,
                                 const LinearComplementarityProblem& problem,
                                 const LinearSolveSettings& settings, Eigen::VectorXd* z,
                                 std::string* full_report = nullptr);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LINEAR_SOLVE_H_
