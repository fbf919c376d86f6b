// Solving a mixed complementarity problem with a solver chosen by name at run time.
#ifndef NCPKIT_SOLVERS_NONLINEAR_SOLVE_H_
#define NCPKIT_SOLVERS_NONLINEAR_SOLVE_H_

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "solvers/mcp.h"
#include "solvers/status.h"

namespace ncpkit {

class FischerBurmeisterNewton;

// Names accepted by NonlinearSolver, in the order comparison tables list them:
// fb-newton (sparse KLU), fb-newton-dense, penalized-fb, minmap-newton, auto.
const std::vector<std::string>& NonlinearSolverNames();
bool IsNonlinearSolverName(const std::string& name);

// A named MCP solver kept across calls, so that a time-stepper solving one problem per step
// reuses its workspace. Solve() starts from *z when it has the problem's size.
class NonlinearSolver {
 public:
  // Throws std::invalid_argument for an unknown name or tolerance <= 0 / max_iterations < 1.
  NonlinearSolver(const std::string& name, double tolerance, int max_iterations);
  ~NonlinearSolver();
  const std::string& name() const { return name_; }
  // Newton variants: keep a per-iteration history in the full report (for diagnosing a step).
  void set_record_history(bool record);
  // Newton variants: keep iterates inside the bounds (FischerBurmeisterNewton::Options).
  void set_project_onto_bounds(bool project);
  // Newton variants: FischerBurmeisterNewton::Options::start_acceptance.
  void set_start_acceptance(double fraction);
  SolverSummary Solve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                      std::string* full_report = nullptr);

 private:
  std::string name_;
  double tolerance_;
  int max_iterations_;
  std::unique_ptr<FischerBurmeisterNewton> newton_;  // null for auto
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_NONLINEAR_SOLVE_H_
