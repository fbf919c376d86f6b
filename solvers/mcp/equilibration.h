// Row and column equilibration of a complementarity problem: the scaling that Newton methods
// apply to badly scaled problems (FischerBurmeisterNewton::Options::equilibration).
#ifndef NCPKIT_SOLVERS_MCP_EQUILIBRATION_H_
#define NCPKIT_SOLVERS_MCP_EQUILIBRATION_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>

#include "solvers/mcp/mcp.h"

namespace ncpkit {

// max_i ||row i||_inf / min_i ||row i||_inf or the same for columns, whichever is larger, over
// the rows and columns with a nonzero entry (1 for an empty matrix). `row_norms` and
// `col_norms` are workspaces (resized; no allocation when they have the size).
double EquilibrationSpread(const Eigen::SparseMatrix<double>& J, Eigen::VectorXd* row_norms,
                           Eigen::VectorXd* col_norms);

// Ruiz's equilibration (Ruiz 2001, "A scaling algorithm to equilibrate both rows and columns
// norms in matrices"): positive diagonal scalings R, C such that every nonzero row and column
// of R J C has infinity norm in [1/2, 2] (up to `iterations` sweeps; each sweep divides every
// row and column by the square root of its norm). The factors are powers of two, so scaling
// and unscaling are exact in floating point. Rows and columns of zeros get factor 1.
void RuizEquilibration(const Eigen::SparseMatrix<double>& J, Eigen::VectorXd* row,
                       Eigen::VectorXd* col, int iterations = 20);

// MCP(F, l, u) seen in the scaled variables y = z / c with scaled functions: the MCP
// G(y) = R F(C y) on [l / c, u / c], Jacobian R J C. Scaling rows and variables by positive
// factors keeps the solution set (z solves the original iff z / c solves this one) and the
// bounds' infinities. The original problem must outlive this view.
class ScaledMcp : public MixedComplementarityProblem {
 public:
  // row, col: positive and finite, of the problem's size.
  ScaledMcp(const MixedComplementarityProblem& problem, const Eigen::VectorXd& row,
            const Eigen::VectorXd& col);
  int size() const override { return problem_.size(); }
  const Eigen::VectorXd& lower() const override { return lower_; }
  const Eigen::VectorXd& upper() const override { return upper_; }
  bool Evaluate(const Eigen::VectorXd& y, Eigen::VectorXd* G,
                Eigen::SparseMatrix<double>* J) const override;
  std::string name() const override { return problem_.name() + " (equilibrated)"; }
  // The original problem's default start, in the scaled variables.
  void DefaultStart(Eigen::VectorXd* y) const override;

 private:
  const MixedComplementarityProblem& problem_;
  const Eigen::VectorXd& row_;
  const Eigen::VectorXd& col_;
  Eigen::VectorXd lower_, upper_;
  mutable Eigen::VectorXd z_;  // C y
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_EQUILIBRATION_H_
