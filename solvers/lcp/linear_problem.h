// Linear complementarity problems: the LCP (M, q) and the box-constrained MLCP (M, q, l, u).
#ifndef NCPKIT_SOLVERS_LCP_LINEAR_PROBLEM_H_
#define NCPKIT_SOLVERS_LCP_LINEAR_PROBLEM_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <optional>
#include <string>

namespace ncpkit {

using RowSparseMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// Box-constrained linear complementarity problem: find z with l <= z <= u and w = M z + q
// such that for each i
//   z_i = l_i  =>  w_i >= 0,     z_i = u_i  =>  w_i <= 0,     l_i < z_i < u_i  =>  w_i = 0.
// l_i = -inf and u_i = +inf (a free variable) makes row i an equation. The LCP is the case
// l = 0, u = +inf. M may be given dense or sparse; both views are available to solvers.
//
// The constructors validate their input and throw InputError with a message that
// names the offending size or entry: M square, sizes of q, l, u equal to M's, all data
// finite (bounds may be infinite but not NaN), l <= u, l < +inf and u > -inf.
class LinearComplementarityProblem {
 public:
  // LCP (l = 0, u = +inf).
  LinearComplementarityProblem(Eigen::MatrixXd M, Eigen::VectorXd q);
  LinearComplementarityProblem(const Eigen::SparseMatrix<double>& M, Eigen::VectorXd q);
  // Box-constrained MLCP.
  LinearComplementarityProblem(Eigen::MatrixXd M, Eigen::VectorXd q, Eigen::VectorXd l,
                               Eigen::VectorXd u);
  LinearComplementarityProblem(const Eigen::SparseMatrix<double>& M, Eigen::VectorXd q,
                               Eigen::VectorXd l, Eigen::VectorXd u);

  // An empty problem (size 0), to be set with AssignLcp().
  LinearComplementarityProblem() = default;
  // Makes this the LCP (M, q) (l = 0, u = +inf), validated as the constructors do, reusing
  // the storage: an M with no more nonzeros than the last one and the same size allocate
  // nothing (a time-stepper poses one such problem per step).
  void AssignLcp(const Eigen::SparseMatrix<double>& M, const Eigen::VectorXd& q);
  // The same for the box-constrained MLCP (M, q, l, u).
  void AssignMlcp(const Eigen::SparseMatrix<double>& M, const Eigen::VectorXd& q,
                  const Eigen::VectorXd& l, const Eigen::VectorXd& u);
  int size() const { return static_cast<int>(q_.size()); }
  const Eigen::VectorXd& q() const { return q_; }
  const Eigen::VectorXd& lower() const { return lower_; }
  const Eigen::VectorXd& upper() const { return upper_; }
  // Row-major sparse view of M (always available).
  const RowSparseMatrix& sparse_matrix() const { return sparse_; }
  // Column-major sparse view of M (always available).
  const Eigen::SparseMatrix<double>& sparse_columns() const { return sparse_columns_; }
  // True if M was given dense; stored_dense_matrix() then returns it without a copy.
  bool has_dense_matrix() const { return dense_.has_value(); }
  const Eigen::MatrixXd& stored_dense_matrix() const { return *dense_; }
  // Dense M: the stored one, or a conversion of the sparse one.
  Eigen::MatrixXd dense_matrix() const;
  // The same into *M's storage (no allocation when it has the size).
  void DenseMatrixInto(Eigen::MatrixXd* M) const;
  // True if l = 0 and u = +inf everywhere.
  bool IsStandardLcp() const;
  // Number of free variables (l = -inf, u = +inf).
  int NumFreeVariables() const;

  // w = M z + q.
  void Affine(const Eigen::VectorXd& z, Eigen::VectorXd* w) const;

  // A name for reports (file name or generator description); not validated.
  std::string name;

 private:
  void Validate(int rows, int cols);
  // q and the sparse M (after the bounds are set), validated.
  void AssignMatrix(const Eigen::SparseMatrix<double>& M, const Eigen::VectorXd& q);

  std::optional<Eigen::MatrixXd> dense_;
  RowSparseMatrix sparse_;
  Eigen::SparseMatrix<double> sparse_columns_;
  Eigen::VectorXd q_, lower_, upper_;
};

// Natural residual || z - mid(l, u, z - F) ||_inf: the one convergence measure every solver
// in ncpkit reports (docs/solvers.md). For an LCP it equals || min(z, F) ||_inf.
// Returns +inf if any input is NaN.
double natural_residual(const Eigen::VectorXd& z, const Eigen::VectorXd& F,
                        const Eigen::VectorXd& l, const Eigen::VectorXd& u);
// Natural residual of z for the problem, with F = M z + q.
double natural_residual(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z);
// The same with F in *w (no allocation when *w has the size).
double natural_residual(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z,
                        Eigen::VectorXd* w);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LCP_LINEAR_PROBLEM_H_
