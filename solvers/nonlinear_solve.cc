#include "solvers/nonlinear_solve.h"

#include <algorithm>
#include <stdexcept>

#include "solvers/auto_solve.h"
#include "solvers/semismooth_newton.h"

namespace ncpkit {

const std::vector<std::string>& NonlinearSolverNames() {
  static const std::vector<std::string> kNames = {"fb-newton", "fb-newton-dense", "penalized-fb",
                                                  "minmap-newton", "auto"};
  return kNames;
}

bool IsNonlinearSolverName(const std::string& name) {
  const auto& names = NonlinearSolverNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

NonlinearSolver::NonlinearSolver(const std::string& name, double tolerance, int max_iterations)
    : name_(name), tolerance_(tolerance), max_iterations_(max_iterations) {
  if (!IsNonlinearSolverName(name)) {
    throw std::invalid_argument("unknown solver '" + name + "' (expected one of fb-newton, " +
                                "fb-newton-dense, penalized-fb, minmap-newton, auto)");
  }
  if (!(tolerance > 0.0) || max_iterations < 1) {
    throw std::invalid_argument("solver tolerance must be > 0 and max iterations >= 1");
  }
  if (name == "auto") return;
  FischerBurmeisterNewton::Options options;
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  if (name == "fb-newton") options.linear_solver = FischerBurmeisterNewton::LinearSolver::SparseKlu;
  if (name == "fb-newton-dense") {
    options.linear_solver = FischerBurmeisterNewton::LinearSolver::Dense;
  }
  if (name == "penalized-fb") options.ncp_function = NcpFunction::PenalizedFischerBurmeister;
  if (name == "minmap-newton") options.ncp_function = NcpFunction::MinMap;
  newton_ = std::make_unique<FischerBurmeisterNewton>(options);
}

NonlinearSolver::~NonlinearSolver() = default;

void NonlinearSolver::set_project_onto_bounds(bool project) {
  if (newton_) newton_->mutable_options().project_onto_bounds = project;
}

void NonlinearSolver::set_start_acceptance(double fraction) {
  if (newton_) newton_->mutable_options().start_acceptance = fraction;
}

void NonlinearSolver::set_record_history(bool record) {
  if (newton_) newton_->mutable_options().record_history = record;
}

SolverSummary NonlinearSolver::Solve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                                     std::string* full_report) {
  if (newton_) {
    FischerBurmeisterNewton::Summary summary = newton_->Solve(problem, z);
    if (full_report) *full_report = summary.FullReport();
    return summary;
  }
  AutoSolveOptions options;
  options.tolerance = tolerance_;
  options.max_iterations = max_iterations_;
  AutoSolveSummary summary = AutoSolve(problem, z, options);
  if (full_report) *full_report = summary.FullReport();
  return summary;
}

}  // namespace ncpkit
