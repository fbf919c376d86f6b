// Lemke's complementary pivoting method for LCPs and box-constrained MLCPs.
#ifndef NCPKIT_SOLVERS_LCP_LEMKE_H_
#define NCPKIT_SOLVERS_LCP_LEMKE_H_

#include <Eigen/Dense>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "solvers/base/status.h"
#include "solvers/lcp/linear_problem.h"

namespace ncpkit {
namespace internal {
struct ReducedLcp;
class DenseLu;
}  // namespace internal

// Lemke's method with covering vector e and a lexicographic ratio test (Cottle, Pang & Stone,
// "The Linear Complementarity Problem", sec. 4.4 and 4.9), so degenerate problems do not cycle.
//
// Box-constrained MLCPs are first reduced to a standard LCP:
//   * fixed variables (l = u) are substituted;
//   * free variables (l = -inf, u = +inf) are eliminated with the Schur complement of their
//     block M_FF; if M_FF is singular, those of a maximal nonsingular block M(P, Q) (equality
//     rows P, free variables Q, from a full-pivoting LU; P = Q where that principal block is
//     nonsingular, always so for a monotone M) are eliminated and the rest are split,
//     z = x+ - x- with x+/- >= 0, paired with rows w >= 0 and -w >= 0 of a remaining equality
//     row (its own where P = Q, which keeps a monotone problem monotone), which force w = 0;
//   * z = l + x for finite l, z = u - x (with w negated) for an upper bound only;
//   * a variable with both bounds finite gets a second LCP variable s >= 0 for its upper bound:
//       w + s >= 0 _|_ x >= 0,   (u - l) - x >= 0 _|_ s >= 0.
// The basis is kept as a dense LU of its non-identity block (basic z columns against the rows
// whose w is nonbasic), refactorized every `refactorization_interval` pivots, with product-form
// eta updates in between: no full tableau is touched per pivot.
class LemkeSolver {
 public:
  struct Options {
    // Most pivots before giving up with MaxIterations. 0 = automatic: 10000 + 100 n, where n is
    // the size of the reduced LCP (Murty's example needs 2^n pivots).
    int max_pivots = 0;
    // Natural residual (natural_residual()) below which the final point counts as converged.
    double tolerance = 1e-10;
    // Pivots between fresh LU factorizations of the basis (eta updates in between).
    int refactorization_interval = 64;
    // Entries of the pivot column below pivot_tolerance * max|column| count as zero.
    double pivot_tolerance = 1e-12;
    // Lexicographic tie-breaking in the ratio test. Turn off only to study cycling.
    bool lexicographic = true;
    // Warm start: if true and *z holds a vector of the problem's size on entry, start from the
    // complementary basis in which the variables strictly inside their bounds are basic.
    // If that basis is feasible it is the answer; otherwise Lemke runs from it (covering
    // vector B e) and, should that ray-terminate, once more from the cold start.
    bool warm_start = false;
    // A run that stops without a solution (a ray, the pivot cap, a numerical failure) whose
    // point reached solves the problem to the tolerance is accepted as converged, whatever this
    // option. Recovery from a numerical failure (a basis that turned singular, values that
    // overflowed, a complementary basis whose solution misses the tolerance through rounding)
    // whose point does not: Lemke runs again with a fresh factorization every pivot and pivot
    // tolerance max(pivot_tolerance, 1e-10), then 1e-8, each re-run capped at max_pivots, or
    // when that is 0 at 4 n + 100 pivots for a reduced LCP of size n (a re-run that needs more
    // is cycling through rounding; lemke.cc).
    // The summary's `recovery` says which one succeeded. (A regularized retry is
    // ProximalPointSolver around this solver.) Default true.
    bool recover = true;

    bool IsValid(std::string* why) const;
  };

  struct Summary : SolverSummary {
    // Lemke stopped on a secondary ray: no complementary basis (the point reached may still
    // solve the problem, when z0 had reached zero: then the status is Converged).
    bool ray_termination = false;
    bool warm_start_used = false;  // The warm-start basis was accepted as a starting basis.
    int lcp_size = 0;              // Size of the LCP after reducing the MLCP.
    int eliminated_free_variables = 0;
    int split_free_variables = 0;  // free variables split as x+ - x- (singular M_FF)
    // Empty, or how a run without a complementary solution was recovered from
    // (Options::recover).
    std::string recovery;
    std::string FullReport() const override;
  };

  LemkeSolver();
  explicit LemkeSolver(const Options& options);
  ~LemkeSolver();
  LemkeSolver(LemkeSolver&&) noexcept;
  LemkeSolver& operator=(LemkeSolver&&) noexcept;

  const Options& options() const { return options_; }
  Options& mutable_options() { return options_; }

  // Solves the problem; *z receives the best point found (the solution when converged). The
  // summary stays valid until the next Solve(). Once the sizes settle, a solve of a problem
  // whose bases stay within 128 basic z variables allocates nothing.
  const Summary& Solve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z);

  // Solves the standard LCP (M, q) directly (no validation beyond sizes, no reduction).
  // `warm_basis` lists indices i whose z_i starts basic (may be empty).
  Summary SolveLcp(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                   const std::vector<int>& warm_basis, Eigen::VectorXd* z);

 private:
  enum class Outcome { Complementary, Ray, Numerical, PivotCap };
  void ResetSummary(Summary* summary) const;
  // `reduced`: reduced_ already holds this problem's reduction (a re-run of the same problem:
  // the reduction depends on the problem alone, and eliminating a large free block is most of
  // a run's cost).
  void SolveOnce(const LinearComplementarityProblem& problem, Eigen::VectorXd* z,
                 bool reduced = false);
  void Recover(const LinearComplementarityProblem& problem, Eigen::VectorXd* z);
  void RunLcp(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
              const std::vector<int>& warm_basis, Eigen::VectorXd* z, Summary* summary);
  // The steps of SolveLcp() (see lemke.cc).
  void SetBasis(int n, const std::vector<int>& z_set);
  bool StartFromWarmBasis(const Eigen::VectorXd& q, const std::vector<int>& warm_basis);
  int FirstPivotPosition();
  int RatioTest(bool* ray);
  bool Exchange(int r, int entering, int* leaving);
  bool UpdateFactors(const Eigen::VectorXd& q, int r);
  Outcome Pivot(const Eigen::VectorXd& q, int max_pivots, int* pivots);
  bool Finish(const Eigen::VectorXd& q, Eigen::VectorXd* z);
  void ReadBasicZ(Eigen::VectorXd* z) const;
  static void FailureMessage(Outcome outcome, int pivots, int max_pivots, std::string* message);
  // Basis handling (see lemke.cc).
  void ColumnInto(int var, Eigen::VectorXd* column) const;
  internal::DenseLu& Decomposition(int k);
  void PrepareWorkspace(int n);
  bool Refactor();
  void SolveBasis(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;
  void SolveBasisTransposed(const Eigen::VectorXd& c, Eigen::VectorXd* y) const;
  void Ftran(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;
  void Btran(int position, Eigen::VectorXd* y) const;
  int ChooseAmongTies(const std::vector<int>& ties, const Eigen::VectorXd& delta);

  Options options_;

  // Workspace of the current LCP (reused across calls of the same size).
  const Eigen::MatrixXd* M_ = nullptr;
  Eigen::VectorXd covering_;      // d; the z0 column is -d.
  std::vector<int> basis_;        // basis_[position] = variable (w_i: i, z_i: n+i, z0: 2n).
  std::vector<int> z_positions_;  // positions holding z variables or z0 (at refactorization)
  std::vector<int> r_rows_;       // rows whose w is nonbasic (same count)
  std::vector<int> w_position_;   // row -> position of w_row if basic, else -1
  // The basic z columns in the first k columns of an n x n buffer; S's buffer; the LU of S
  // (one object per basis size up to kCachedSizes, so that recurring sizes allocate nothing).
  static constexpr int kCachedSizes = 128;
  static constexpr int kRowByRowSize = 128;  // SolveBasis's x_W row by row up to this n
  Eigen::MatrixXd basis_z_buffer_, S_buffer_;
  std::vector<std::unique_ptr<internal::DenseLu>> lu_by_size_;
  std::unique_ptr<internal::DenseLu> lu_large_;  // shared by the sizes above kCachedSizes
  internal::DenseLu* lu_ = nullptr;
  // Workspaces of the basis solves, the tie-breaking and the final refinement (sized once per
  // LCP size: PrepareWorkspace).
  int prepared_size_ = -1;
  mutable Eigen::VectorXd btran_work_, solve_work_;
  Eigen::VectorXd column_work_, residual_, correction_, tie_y_, tie_unit_;
  Eigen::MatrixXd tie_rows_;
  std::vector<int> alive_, next_alive_;
  // Solve()'s workspace: the reduction, the start, the warm basis, the reduced solution.
  Summary summary_;
  std::unique_ptr<internal::ReducedLcp> reduced_;
  Eigen::VectorXd z_in_, x_, z_c_, w_work_, careful_z_;
  std::vector<int> warm_basis_;
  std::vector<int> eta_rows_;
  Eigen::MatrixXd eta_columns_;
  int factorizations_ = 0;
  // Pivoting workspace: basic values, the entering column B^{-1} a, B^{-1} d, ties.
  Eigen::VectorXd xbar_, delta_, bd_, column_;
  std::vector<int> ties_;
};

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_LCP_LEMKE_H_
