#include "solvers/linear_solve.h"

#include <algorithm>

#include "solvers/lemke.h"
#include "solvers/projected_gauss_seidel.h"

namespace ncpkit {

const std::vector<std::string>& LinearSolverNames() {
  static const std::vector<std::string> names = {"lemke", "pgs"};
  return names;
}

bool IsLinearSolverName(const std::string& name) {
  const auto& names = LinearSolverNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

SolverSummary SolveLinearProblem(const std::string& solver,
                                 const LinearComplementarityProblem& problem,
                                 const LinearSolveSettings& settings, Eigen::VectorXd* z,
                                 std::string* full_report) {
  if (solver == "lemke") {
    LemkeSolver::Options options;
    options.tolerance = settings.tolerance;
    options.max_pivots = settings.max_iterations;
    options.warm_start = settings.warm_start;
    LemkeSolver lemke(options);
    const LemkeSolver::Summary summary = lemke.Solve(problem, z);
    if (full_report) *full_report = summary.FullReport();
    return summary;
  }
  if (solver == "pgs") {
    ProjectedGaussSeidel::Options options;
    options.tolerance = settings.tolerance;
    if (settings.max_iterations > 0) options.max_sweeps = settings.max_iterations;
    options.warm_start = settings.warm_start;
    ProjectedGaussSeidel pgs(options);
    const ProjectedGaussSeidel::Summary summary = pgs.Solve(problem, z);
    if (full_report) *full_report = summary.FullReport();
    return summary;
  }
  SolverSummary summary;
  summary.solver = solver;
  summary.status = Status::InvalidInput;
  summary.message = "unknown solver '" + solver + "'";
  if (full_report) *full_report = summary.message;
  return summary;
}

}  // namespace ncpkit
