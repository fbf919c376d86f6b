// Mixed complementarity problems MCP(F, l, u) with a sparse Jacobian.
#ifndef NCPKIT_SOLVERS_MCP_MCP_H_
#define NCPKIT_SOLVERS_MCP_MCP_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>

#include "solvers/lcp/linear_problem.h"

namespace ncpkit {

// Find z with l <= z <= u such that for each i
//   z_i = l_i => F_i(z) >= 0,   z_i = u_i => F_i(z) <= 0,   l_i < z_i < u_i => F_i(z) = 0.
// Bounds may be infinite. NCP: l = 0, u = +inf. Implementations supply F and its sparse
// Jacobian; the Jacobian's sparsity pattern must be the same at every point.
class MixedComplementarityProblem {
 public:
  virtual ~MixedComplementarityProblem() = default;
  virtual int size() const = 0;
  virtual const Eigen::VectorXd& lower() const = 0;
  virtual const Eigen::VectorXd& upper() const = 0;
  // F = F(z) and, if J is not null, J = dF/dz (column-major, fixed pattern). Returns false if
  // F cannot be evaluated at z (outside its domain, or a non-finite value): solvers treat that
  // as "step too long", not as a failure.
  virtual bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                        Eigen::SparseMatrix<double>* J) const = 0;
  // A name for reports.
  virtual std::string name() const { return "mcp"; }
  // The point a solver starts from when the caller gives none (an empty z, or one of another
  // size or with non-finite entries): 0 here; ProblemBuilder's declared start values. Solvers
  // project it, as any start, onto [l, u].
  virtual void DefaultStart(Eigen::VectorXd* z) const { z->setZero(size()); }
};

// An LCP / box MLCP seen as an MCP: F(z) = M z + q, J = M.
class LinearMcp : public MixedComplementarityProblem {
 public:
  explicit LinearMcp(const LinearComplementarityProblem& problem) : problem_(problem) {}
  int size() const override { return problem_.size(); }
  const Eigen::VectorXd& lower() const override { return problem_.lower(); }
  const Eigen::VectorXd& upper() const override { return problem_.upper(); }
  bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override;
  std::string name() const override { return problem_.name; }
  const LinearComplementarityProblem& problem() const { return problem_; }

 private:
  const LinearComplementarityProblem& problem_;
};

// Natural residual ||z - mid(l, u, z - F(z))||_inf of an MCP; +inf if F cannot be evaluated.
double natural_residual(const MixedComplementarityProblem& problem, const Eigen::VectorXd& z);

// Throws std::invalid_argument unless l, u have the problem's size, no bound is NaN, l <= u,
// l < +inf and u > -inf.
void ValidateBounds(const MixedComplementarityProblem& problem);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_MCP_H_
