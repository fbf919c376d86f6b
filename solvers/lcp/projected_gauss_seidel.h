// Projected Gauss-Seidel / successive over-relaxation for box-constrained MLCPs.
#ifndef NCPKIT_SOLVERS_LCP_PROJECTED_GAUSS_SEIDEL_H_
#define NCPKIT_SOLVERS_LCP_PROJECTED_GAUSS_SEIDEL_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/base/status.h"
#include "solvers/lcp/linear_problem.h"

namespace ncpkit {

// Projected Gauss-Seidel with relaxation (PSOR; Cottle, Pang & Stone sec. 5.2): one sweep
// updates, row by row,
//   z_i <- mid(l_i, u_i, z_i - omega (M z + q)_i / M_ii)
// using the newest z. w = M z + q is kept up to date by adding (change of z_i) * column i of M
// (dense columns, or the sparse columns), so the natural residual costs O(n) per sweep; w is
// recomputed from scratch before convergence is declared. Converges for symmetric positive definite
// M and 0 < omega < 2; on other problems it may stall or diverge, which the summary reports. Every
// diagonal entry must be positive: a zero or negative M_ii is reported as InvalidInput naming the
// row.
class ProjectedGaussSeidel {
 public:
  struct Options {
    // Sweeps before MaxIterations. Default 10000; >= 1.
    int max_sweeps = 10000;
    // Stop when natural_residual() <= tolerance. Default 1e-10; > 0.
    double tolerance = 1e-10;
    // Relaxation (Cottle, Pang & Stone sec. 5.2). Default 1 (plain Gauss-Seidel); in (0, 2).
    double omega = 1.0;
    // Start from *z if it has the problem's size on entry. Default false.
    bool warm_start = false;
    bool IsValid(std::string* why) const;
  };

  struct Summary : SolverSummary {
    int invalid_diagonal_row = -1;  // Row with M_ii <= 0, if that stopped the solver.
    std::string FullReport() const override;
  };

  ProjectedGaussSeidel() = default;
  explicit ProjectedGaussSeidel(const Options& options) : options_(options) {}
  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves the problem; *z receives the last iterate.
  Summary Solve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z);

 private:
  Options options_;
  Eigen::VectorXd w_;  // workspace
  Eigen::VectorXd inverse_diagonal_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LCP_PROJECTED_GAUSS_SEIDEL_H_
