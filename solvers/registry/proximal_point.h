// The proximal-point method (Rockafellar 1976) around a linear complementarity solver, for the
// monotone but singular LCPs that redundant contacts give.
#ifndef NCPKIT_SOLVERS_REGISTRY_PROXIMAL_POINT_H_
#define NCPKIT_SOLVERS_REGISTRY_PROXIMAL_POINT_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {

// Four coplanar points per face make a Delassus matrix rank deficient, and pivoting or Newton
// steps on it lose accuracy. Solve() first runs the inner solver on the problem as it is; if
// that fails, it solves a sequence of regularized problems: z_{k+1} solves the LCP with
// M + gamma D and q - gamma D z_k, D = 1 on the complementarity rows (those with a finite
// bound), which is strictly monotone there; a fixed point solves the original problem, and
// each z_k is checked against the original problem's natural residual, so the answer is not
// changed, only found. gamma = relative_regularization * (the largest diagonal of the dual:
// |M_ii| plus |M_ik M_ki| / M_kk over the free k).
class ProximalPointSolver {
 public:
  struct Options {
    // gamma relative to the dual's largest diagonal (dimensionless). Default 1e-3; >= 0;
    // 0: the plain solve only.
    double relative_regularization = 1e-3;
    // Regularized problems at most. Default 30; >= 0.
    int max_outer_iterations = 30;
    bool IsValid(std::string* why) const;
  };
  struct Summary : SolverSummary {
    int outer_iterations = 0;  // regularized problems solved (0: the plain one sufficed)
    double gamma = 0.0;        // the regularization used (0 when none was needed)
    std::string FullReport() const override;
  };

  // `inner` solves every LCP (its tolerance is the tolerance); it must outlive this object and
  // be created with warm_start = true (each regularized problem starts from the last point).
  ProximalPointSolver(ComplementaritySolver* inner, const Options& options);
  // *z: start (when it has the problem's size) and result, as for the inner solver.
  const Summary& Solve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z);
  const Summary& summary() const { return summary_; }

 private:
  double Regularization(const LinearComplementarityProblem& problem) const;

  ComplementaritySolver* inner_;
  Options options_;
  Summary summary_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_REGISTRY_PROXIMAL_POINT_H_
