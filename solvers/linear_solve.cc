#include "solvers/linear_solve.h"

#include <algorithm>

#include "solvers/auto_solve.h"
#include "solvers/lemke.h"
#include "solvers/mcp.h"
#include "solvers/projected_gauss_seidel.h"
#include "solvers/semismooth_newton.h"

namespace ncpkit {

const std::vector<std::string>& LinearSolverNames() {
  static const std::vector<std::string> names = {
      "lemke", "pgs", "fb-newton", "fb-newton-dense", "penalized-fb", "minmap-newton", "auto"};
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
  if (solver == "fb-newton" || solver == "fb-newton-dense" || solver == "penalized-fb" ||
      solver == "minmap-newton") {
    FischerBurmeisterNewton::Options options;
    options.tolerance = settings.tolerance;
    if (settings.max_iterations > 0) options.max_iterations = settings.max_iterations;
    options.linear_solver = solver == "fb-newton-dense"
                                ? FischerBurmeisterNewton::LinearSolver::Dense
                                : FischerBurmeisterNewton::LinearSolver::SparseKlu;
    if (solver == "penalized-fb") options.ncp_function = NcpFunction::PenalizedFischerBurmeister;
    if (solver == "minmap-newton") options.ncp_function = NcpFunction::MinMap;
    if (!settings.warm_start) z->resize(0);
    FischerBurmeisterNewton newton(options);
    FischerBurmeisterNewton::Summary summary = newton.Solve(LinearMcp(problem), z);
    summary.solver = solver;
    if (full_report) *full_report = summary.FullReport();
    return summary;
  }
  if (solver == "auto") {
    AutoSolveOptions options;
    options.tolerance = settings.tolerance;
    if (settings.max_iterations > 0) options.max_iterations = settings.max_iterations;
    if (!settings.warm_start) z->resize(0);
    const AutoSolveSummary summary = AutoSolve(problem, z, options);
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
