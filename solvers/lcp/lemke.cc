#include "solvers/lcp/lemke.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/linalg/internal/dense_lu.h"
#include "solvers/linalg/internal/pivots.h"

namespace ncpkit {
namespace {

// The default pivot cap of a careful re-run on a reduced LCP of size n. Every re-run that
// recovered, over the test suite and the shipped scenes, needed at most 1.62 n pivots (2,816
// re-runs, n from 48 to 200); one that cycles through rounding runs to the ordinary cap of
// 10000 + 100 n pivots at a factorization each (the stacking scene's dlc/lemke: 14,800 pivots
// on n = 48, 55 ms, twice), where the proximal-point wrapper solves the same problem in 62.
int RerunPivotCap(int n) { return 4 * n + 100; }

// The standard LCP that a box-constrained MLCP reduces to, and the map back (see lemke.h):
//   z_i = sum over the kept entries a naming i of offset_a + sign_a x_a (a free variable split
//         as x+ - x- is named twice), and
//   z_F = -M_FF^{-1} (M_FC z_C + q_F) for the eliminated free ones.
}  // namespace

namespace internal {

struct ReducedLcp {
  Eigen::MatrixXd M;
  Eigen::VectorXd q;
  std::vector<int> kept, free, fixed, boxed;  // variable indices into the original problem
  std::vector<int> kept_rows, free_rows;      // the rows paired with kept / free variables
  Eigen::VectorXd offset, sign;               // per kept variable
  Eigen::FullPivLU<Eigen::MatrixXd> free_lu;
  Eigen::MatrixXd M_fc;  // M(free, kept)
  Eigen::VectorXd q_f;   // q(free) + M(free, fixed) l(fixed)
  int split = 0;         // free variables split as z = x+ - x- (M_FF singular)
  int free_rank = 0;     // rank of M_FF when split
  // Workspace kept between solves: the problem's dense M and q, the kept block, the shift.
  Eigen::MatrixXd dense, M_cc;
  Eigen::VectorXd q_work, q_c, shifted;
};

}  // namespace internal

namespace {

using internal::ReducedLcp;

// Sorts the variables into free (l = -inf, u = +inf), fixed (l = u) and kept ones.
void ClassifyVariables(const Eigen::VectorXd& l, const Eigen::VectorXd& u, ReducedLcp* r) {
  r->free.clear();
  r->fixed.clear();
  r->kept.clear();
  r->boxed.clear();
  r->split = 0;
  r->free_rank = 0;
  for (std::vector<int>* v :
       {&r->free, &r->fixed, &r->kept, &r->boxed, &r->kept_rows, &r->free_rows}) {
    v->reserve(l.size());  // (no allocation once a problem of this size was reduced)
  }
  for (int i = 0; i < static_cast<int>(l.size()); ++i) {
    if (l[i] == -kInf && u[i] == kInf) {
      r->free.push_back(i);
    } else if (l[i] == u[i]) {
      r->fixed.push_back(i);
    } else {
      r->kept.push_back(i);
    }
  }
  r->kept_rows = r->kept;
  r->free_rows = r->free;
}

// Whether M_FF is monotone (x^T M_FF x >= 0): the LDL^T factors of its symmetric part have
// no negative pivot beyond rounding.
bool MonotoneBlock(const Eigen::MatrixXd& M_ff) {
  const Eigen::MatrixXd symmetric = 0.5 * (M_ff + M_ff.transpose());
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(symmetric);
  const double scale = symmetric.cwiseAbs().maxCoeff();
  // (info() is not asked: Eigen reports a zero pivot, which a singular monotone block has, as
  // a numerical issue.)
  return ldlt.vectorD().minCoeff() >= -1e-12 * scale * static_cast<double>(M_ff.rows());
}

// The free variables of a singular free block M_FF to eliminate, with their rows, and those to
// split: the columns Q of a maximal nonsingular block (full-pivoting LU), with the rows P the
// LU chose; but where M_FF is monotone, with their own rows, as the principal block M(Q, Q)
// is then nonsingular too. Each split variable then keeps its own row: the split pairs' block
// [m, -m; -m, m] is monotone, and so is the reduced LCP of a monotone M, which Lemke's method
// solves wherever it has a solution; paired with other rows, 81 of 100 monotone MLCPs with a
// rank-30 free block of 40 (lemke_test.cc's) ended on a ray. Where M_FF is not monotone the
// pairing has no such reason and stays as the LU chose: the implicit stepper's linearizations
// are such, and their runs through the auto chain on brick pyramids, which turn on rounding,
// failed 2 steps of 128 runs with own rows against none. Leaves the eliminated block's
// factorization in r->free_lu.
void ChooseEliminated(const Eigen::MatrixXd& M, const Eigen::MatrixXd& M_ff,
                      const Eigen::FullPivLU<Eigen::MatrixXd>& lu, ReducedLcp* r,
                      std::vector<int>* split_vars, std::vector<int>* split_rows) {
  const int nf = static_cast<int>(M_ff.rows());
  const int rank = static_cast<int>(lu.rank());
  // Eigen permutations: column k of M_ff Q is column Q(k) of M_ff, and row i of M_ff lands at
  // row P(i) of P M_ff; the leading rank x rank block of P M_ff Q is nonsingular.
  const auto& Q = lu.permutationQ().indices();
  std::vector<int> vars;
  for (int k = 0; k < nf; ++k) (k < rank ? vars : *split_vars).push_back(r->free[Q[k]]);
  if (MonotoneBlock(M_ff)) {
    Eigen::MatrixXd principal(rank, rank);
    for (int a = 0; a < rank; ++a) {
      for (int b = 0; b < rank; ++b) principal(a, b) = M_ff(Q[a], Q[b]);
    }
    r->free_lu.compute(principal);
    if (r->free_lu.isInvertible()) {
      r->free = vars;
      r->free_rows = vars;
      *split_rows = *split_vars;
      return;
    }
  }
  std::vector<int> rows;
  for (int k = 0; k < nf; ++k) {
    (lu.permutationP().indices()[k] < rank ? rows : *split_rows).push_back(r->free[k]);
  }
  r->free = vars;
  r->free_rows = rows;
  Eigen::MatrixXd block(rank, rank);
  for (int a = 0; a < rank; ++a) {
    for (int b = 0; b < rank; ++b) block(a, b) = M(r->free_rows[a], r->free[b]);
  }
  r->free_lu.compute(block);
}

// Free variables: equality rows and free variables need not be paired by index (each pair
// only says "w = 0"), so where the free block is singular only those of a maximal nonsingular
// block are eliminated and the rest split (*split_vars, with the unused equality rows
// *split_rows; see ChooseEliminated).
void EliminateFreeBlock(const Eigen::MatrixXd& M, ReducedLcp* r, std::vector<int>* split_vars,
                        std::vector<int>* split_rows) {
  if (r->free.empty()) return;
  const int nf = static_cast<int>(r->free.size());
  Eigen::MatrixXd M_ff(nf, nf);
  for (int a = 0; a < nf; ++a) {
    for (int b = 0; b < nf; ++b) M_ff(a, b) = M(r->free[a], r->free[b]);
  }
  Eigen::FullPivLU<Eigen::MatrixXd> lu(M_ff);
  if (lu.isInvertible()) {
    // The whole free block is eliminated: its factorization is the one just computed.
    r->free_lu = std::move(lu);
    return;
  }
  r->free_rank = static_cast<int>(lu.rank());
  ChooseEliminated(M, M_ff, lu, r, split_vars, split_rows);
}

// M_cc and q_c of the kept variables, with the eliminated free ones' Schur complement.
void SchurComplement(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, ReducedLcp* r,
                     Eigen::MatrixXd* M_cc, Eigen::VectorXd* q_c) {
  const int nc = static_cast<int>(r->kept.size());
  const int nf = static_cast<int>(r->free.size());
  M_cc->resize(nc, nc);
  q_c->resize(nc);
  for (int a = 0; a < nc; ++a) {
    (*q_c)[a] = q[r->kept_rows[a]];
    for (int b = 0; b < nc; ++b) (*M_cc)(a, b) = M(r->kept_rows[a], r->kept[b]);
  }
  if (nf == 0) return;
  Eigen::MatrixXd M_cf(nc, nf);
  r->M_fc.resize(nf, nc);
  r->q_f.resize(nf);
  for (int a = 0; a < nf; ++a) {
    r->q_f[a] = q[r->free_rows[a]];
    for (int b = 0; b < nc; ++b) r->M_fc(a, b) = M(r->free_rows[a], r->kept[b]);
  }
  for (int a = 0; a < nc; ++a) {
    for (int b = 0; b < nf; ++b) M_cf(a, b) = M(r->kept_rows[a], r->free[b]);
  }
  if (nc > 0) {  // (a solve with no right-hand side column is UB inside Eigen)
    *M_cc -= M_cf * r->free_lu.solve(r->M_fc);
    *q_c -= M_cf * r->free_lu.solve(r->q_f);
  }
}

// Shifts / flips every kept variable to x >= 0 (the first `base_count` by their bounds, the
// split pairs as x+ and x-) and adds s for the doubly bounded ones: the reduced M and q.
void ShiftAndBound(const Eigen::VectorXd& l, const Eigen::VectorXd& u, int base_count,
                   const Eigen::MatrixXd& M_cc, const Eigen::VectorXd& q_c, ReducedLcp* r) {
  const int nc = static_cast<int>(r->kept.size());
  for (int a = 0; a < nc; ++a) {
    const int i = r->kept[a];
    if (a >= base_count) {
      r->offset[a] = 0.0;
      r->sign[a] = (a - base_count) % 2 == 0 ? 1.0 : -1.0;
    } else if (l[i] > -kInf) {
      r->offset[a] = l[i];
      r->sign[a] = 1.0;
      if (u[i] < kInf) r->boxed.push_back(a);
    } else {
      r->offset[a] = u[i];
      r->sign[a] = -1.0;
    }
  }
  const int nb = static_cast<int>(r->boxed.size());
  r->M.setZero(nc + nb, nc + nb);
  r->q.resize(nc + nb);
  // As Eigen evaluates M_cc offset + q_c: the product first, then the sum.
  Eigen::VectorXd& shifted = r->shifted;
  shifted.noalias() = M_cc * r->offset;
  shifted += q_c;
  for (int a = 0; a < nc; ++a) {
    r->q[a] = r->sign[a] * shifted[a];
    for (int b = 0; b < nc; ++b) r->M(a, b) = r->sign[a] * M_cc(a, b) * r->sign[b];
  }
  for (int k = 0; k < nb; ++k) {
    const int a = r->boxed[k];
    r->M(a, nc + k) = 1.0;
    r->M(nc + k, a) = -1.0;
    r->q[nc + k] = u[r->kept[a]] - l[r->kept[a]];
  }
}

// Reduces the problem into *r, reusing its storage (see ReducedLcp).
void Reduce(const LinearComplementarityProblem& problem, ReducedLcp* r) {
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  ClassifyVariables(l, u, r);
  problem.DenseMatrixInto(&r->dense);
  const Eigen::MatrixXd& M = r->dense;
  Eigen::VectorXd& q = r->q_work;
  q = problem.q();
  for (int j : r->fixed) q += M.col(j) * l[j];  // substitute the fixed variables
  std::vector<int> split_vars, split_rows;
  EliminateFreeBlock(M, r, &split_vars, &split_rows);
  const int base_count = static_cast<int>(r->kept.size());
  // z_j = x+ - x-: two LCP variables, with rows w_i >= 0 and -w_i >= 0 of an unused equality
  // row i, so that w_i = 0.
  for (size_t k = 0; k < split_vars.size(); ++k) {
    r->kept.insert(r->kept.end(), 2, split_vars[k]);
    r->kept_rows.insert(r->kept_rows.end(), 2, split_rows[k]);
  }
  r->split = static_cast<int>(split_vars.size());
  r->sign.setOnes(static_cast<Eigen::Index>(r->kept.size()));
  r->offset.setZero(r->sign.size());
  SchurComplement(M, q, r, &r->M_cc, &r->q_c);
  ShiftAndBound(l, u, base_count, r->M_cc, r->q_c, r);
}

// Indices of the reduced LCP that a warm start point makes basic.
void WarmBasis(const LinearComplementarityProblem& problem, const ReducedLcp& r,
               const Eigen::VectorXd& z, std::vector<int>* warm_basis) {
  std::vector<int>& basis = *warm_basis;
  basis.clear();
  const int nc = static_cast<int>(r.kept.size());
  for (int a = 0; a < nc; ++a) {
    const int i = r.kept[a];
    const double x = r.sign[a] * (z[i] - r.offset[a]);
    if (x > 0.0) basis.push_back(a);  // for a split pair: the part with z's sign
  }
  for (size_t k = 0; k < r.boxed.size(); ++k) {
    const int i = r.kept[r.boxed[k]];
    if (z[i] >= problem.upper()[i]) basis.push_back(nc + static_cast<int>(k));
  }
}

}  // namespace

LemkeSolver::LemkeSolver() = default;
LemkeSolver::LemkeSolver(const Options& options) : options_(options) {}
LemkeSolver::~LemkeSolver() = default;
LemkeSolver::LemkeSolver(LemkeSolver&&) noexcept = default;
LemkeSolver& LemkeSolver::operator=(LemkeSolver&&) noexcept = default;

bool LemkeSolver::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_pivots >= 0, "max_pivots", max_pivots, "must be >= 0 (0 = automatic)")
      .Require(tolerance > 0.0, "tolerance", tolerance, "must be > 0")
      .Require(refactorization_interval >= 1, "refactorization_interval", refactorization_interval,
               "must be >= 1")
      .Require(pivot_tolerance > 0.0 && pivot_tolerance < 1.0, "pivot_tolerance", pivot_tolerance,
               "must be in (0, 1)")
      .Done(why);
}

std::string LemkeSolver::Summary::FullReport() const {
  std::ostringstream os;
  os << CommonFullReport(*this) << "pivots            " << iterations << "\n"
     << "ray termination   " << (ray_termination ? "yes" : "no") << "\n"
     << "warm start used   " << (warm_start_used ? "yes" : "no") << "\n"
     << "reduced LCP size  " << lcp_size << " (" << eliminated_free_variables
     << " free variables eliminated, " << split_free_variables << " split)\n";
  if (!recovery.empty()) os << "recovery          " << recovery << "\n";
  return os.str();
}

// The summary's fields to their defaults, keeping its strings' storage.
void LemkeSolver::ResetSummary(Summary* summary) const {
  summary->solver = "lemke";
  summary->status = Status::NotRun;
  summary->message.clear();
  summary->iterations = 0;
  summary->natural_residual = std::numeric_limits<double>::infinity();
  summary->tolerance = options_.tolerance;
  summary->wall_time_seconds = 0.0;
  summary->factorizations = 0;
  summary->ray_termination = false;
  summary->warm_start_used = false;
  summary->lcp_size = 0;
  summary->eliminated_free_variables = 0;
  summary->split_free_variables = 0;
  summary->recovery.clear();
}

const LemkeSolver::Summary& LemkeSolver::Solve(const LinearComplementarityProblem& problem,
                                               Eigen::VectorXd* z) {
  const auto start = std::chrono::steady_clock::now();
  SolveOnce(problem, z);
  if (summary_.status != Status::Converged && summary_.status != Status::InvalidInput &&
      summary_.natural_residual <= options_.tolerance) {
    // A run can stop without a complementary basis at a point that solves the problem: on a
    // degenerate path z0 reaches zero without leaving the basis, and the next column is a ray.
    // The residual is the measure of a solution, so the point stands.
    // The run's own message (a ray's names the LCP unsolvable) follows as what stopped it.
    summary_.status = Status::Converged;
    summary_.recovery = "the point reached solves the problem";
    summary_.message = summary_.recovery + " (natural residual " +
                       internal::NumberText(summary_.natural_residual) +
                       "); the run stopped: " + summary_.message;
  } else if (summary_.status == Status::NumericalFailure && options_.recover) {
    Recover(problem, z);
  }
  summary_.wall_time_seconds = internal::SecondsSince(start);
  return summary_;
}

// Options::recover, after a numerical failure whose point does not solve the problem: a careful
// re-run. *z holds the point of the failed run on entry, the best point on exit.
void LemkeSolver::Recover(const LinearComplementarityProblem& problem, Eigen::VectorXd* z) {
  Summary& summary = summary_;
  const std::string failure = summary.message;
  const double failed_residual = summary.natural_residual;
  int pivots = summary.iterations, factorizations = summary.factorizations;
  const int lcp_size = summary.lcp_size;
  const Options saved = options_;
  // A degenerate problem (a singular M with many ties, such as a Delassus matrix of more
  // contact directions than degrees of freedom) can reach a nearly singular complementary basis
  // whose pivots were rounding noise at 1e-10 of the column; 1e-8 skips them. The answer is
  // still checked against the tolerance.
  for (const double pivot_tolerance : {1e-10, 1e-8}) {
    options_.refactorization_interval = 1;
    options_.pivot_tolerance = std::max(saved.pivot_tolerance, pivot_tolerance);
    options_.warm_start = false;
    options_.max_pivots = saved.max_pivots > 0 ? saved.max_pivots : RerunPivotCap(lcp_size);
    SolveOnce(problem, &careful_z_, /*reduced=*/true);
    options_ = saved;
    pivots += summary.iterations;
    factorizations += summary.factorizations;
    summary.iterations = pivots;
    summary.factorizations = factorizations;
    if (summary.status == Status::Converged) {
      *z = careful_z_;
      summary.recovery =
          pivot_tolerance == 1e-10
              ? "re-run with a fresh factorization every pivot, pivot tolerance 1e-10"
              : "re-run with a fresh factorization every pivot, pivot tolerance 1e-8";
      summary.message = failure + "; recovered: " + summary.recovery;
      return;
    }
  }
  // *z still holds the failed run's point.
  summary.status = Status::NumericalFailure;
  summary.natural_residual = failed_residual;
  summary.message = failure + "; re-runs with a fresh factorization every pivot failed too";
}

void LemkeSolver::SolveOnce(const LinearComplementarityProblem& problem, Eigen::VectorXd* z,
                            bool reduced) {
  const auto start = std::chrono::steady_clock::now();
  Summary& summary = summary_;
  ResetSummary(&summary);
  if (!AcceptOptions(options_, &summary)) return;
  const int n = problem.size();
  const bool warm = options_.warm_start && z->size() == n && z->allFinite();
  if (warm) z_in_ = *z;
  if (!reduced_) reduced_ = std::make_unique<ReducedLcp>();
  ReducedLcp& r = *reduced_;
  if (!reduced) Reduce(problem, &r);
  summary.eliminated_free_variables = static_cast<int>(r.free.size());
  summary.split_free_variables = r.split;
  summary.lcp_size = static_cast<int>(r.q.size());
  if (!r.M.allFinite() || !r.q.allFinite()) {
    // The Schur complement of a nearly singular free block, or data near the overflow limit.
    summary.status = Status::NumericalFailure;
    summary.message =
        "the reduced LCP has non-finite entries (free-variable block nearly singular or data "
        "near the overflow limit)";
    z->setZero(n);
    summary.natural_residual = natural_residual(problem, *z, &w_work_);
    summary.wall_time_seconds = internal::SecondsSince(start);
    return;
  }
  warm_basis_.clear();
  warm_basis_.reserve(r.q.size());
  if (warm) WarmBasis(problem, r, z_in_, &warm_basis_);
  RunLcp(r.M, r.q, warm_basis_, &x_, &summary);
  summary.lcp_size = static_cast<int>(r.q.size());

  // Map back to the original variables.
  z->resize(n);
  const int nc = static_cast<int>(r.kept.size());
  z_c_.resize(nc);
  z->setZero();
  for (int a = 0; a < nc; ++a) {
    z_c_[a] = r.offset[a] + r.sign[a] * x_[a];
    (*z)[r.kept[a]] += z_c_[a];
  }
  for (int i : r.fixed) (*z)[i] = problem.lower()[i];
  if (!r.free.empty()) {
    const Eigen::VectorXd z_f = -r.free_lu.solve(r.M_fc * z_c_ + r.q_f);
    for (size_t a = 0; a < r.free.size(); ++a) (*z)[r.free[a]] = z_f[a];
  }
  summary.natural_residual = natural_residual(problem, *z, &w_work_);
  if (r.split) {
    std::ostringstream os;
    os << "; " << summary.split_free_variables << " of the " << problem.NumFreeVariables()
       << " free variables were split as x+ - x- because their block is singular (rank "
       << r.free_rank << ")";
    summary.message += os.str();
  }
  if (summary.status == Status::Converged && !(summary.natural_residual <= options_.tolerance)) {
    std::ostringstream os;
    os.precision(3);
    os << "complementary basis found after " << summary.iterations
       << " pivots but natural residual " << std::scientific << summary.natural_residual
       << " > tolerance " << options_.tolerance << " (rounding in the basis solves)";
    summary.status = Status::NumericalFailure;
    summary.message = os.str();
  }
  summary.wall_time_seconds = internal::SecondsSince(start);
}

void LemkeSolver::ColumnInto(int var, Eigen::VectorXd* column) const {
  const int n = static_cast<int>(M_->rows());
  if (var < n) {
    column->setZero(n);
    (*column)[var] = 1.0;
  } else if (var < 2 * n) {
    *column = -M_->col(var - n);
  } else {
    *column = -covering_;
  }
}

// Factorizes the basis B. With W = positions holding w variables (identity columns e_i) and
// Z the others, B x = b splits into S x_Z = b_R (S = columns of Z restricted to the rows R whose
// w is nonbasic, k x k) and x_W = b_W - A_Z(W rows) x_Z. Only S is LU-factorized.
bool LemkeSolver::Refactor() {
  const int n = static_cast<int>(M_->rows());
  z_positions_.clear();
  r_rows_.clear();
  w_position_.assign(n, -1);
  for (int p = 0; p < n; ++p) {
    if (basis_[p] < n) {
      w_position_[basis_[p]] = p;
    } else {
      z_positions_.push_back(p);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (w_position_[i] < 0) r_rows_.push_back(i);
  }
  const int k = static_cast<int>(z_positions_.size());
  // The first k columns of an n x n buffer hold the basic z columns: the same layout as an
  // n x k matrix, without a new allocation whenever k changes.
  if (basis_z_buffer_.rows() != n) basis_z_buffer_.resize(n, n);
  for (int t = 0; t < k; ++t) {
    ColumnInto(basis_[z_positions_[t]], &column_work_);
    basis_z_buffer_.col(t) = column_work_;
  }
  eta_rows_.clear();
  ++factorizations_;
  if (k == 0) return true;
  if (S_buffer_.rows() != n) S_buffer_.resize(n, n);
  auto S = S_buffer_.topLeftCorner(k, k);
  for (int a = 0; a < k; ++a) S.row(a) = basis_z_buffer_.row(r_rows_[a]).head(k);
  lu_ = &Decomposition(k);
  lu_->compute(S);
  // Refuse a basis whose LU has a pivot that is zero or at rounding level, tested on the pivots
  // themselves (a condition estimate alone can miss an exactly zero pivot), and one whose
  // condition estimate says it is numerically singular.
  if (!internal::PivotsAreUsable(lu_->matrixLU().diagonal(), S.cwiseAbs().maxCoeff())) {
    return false;
  }
  const double rcond = lu_->Rcond();
  return std::isfinite(rcond) && rcond > 1e-14;
}

// A decomposition object per basis size up to kCachedSizes (made once, reused: no allocation
// when the size recurs); larger bases share one.
// Sizes the pivoting workspace for LCPs of size n once: every basis size up to kCachedSizes
// gets its factorization storage now, so that no later pivot allocates.
void LemkeSolver::PrepareWorkspace(int n) {
  if (n == prepared_size_) return;
  prepared_size_ = n;
  for (int k = 1; k <= std::min(n, kCachedSizes); ++k) Decomposition(k).Reserve(k);
  basis_z_buffer_.resize(n, n);
  solve_work_.resize(n);
  S_buffer_.resize(n, n);
  tie_rows_.resize(n, n);
  for (std::vector<int>* v :
       {&basis_, &z_positions_, &r_rows_, &w_position_, &ties_, &alive_, &next_alive_}) {
    v->reserve(n);
  }
  eta_rows_.reserve(options_.refactorization_interval);
}

internal::DenseLu& LemkeSolver::Decomposition(int k) {
  if (k > kCachedSizes) {
    if (!lu_large_) lu_large_ = std::make_unique<internal::DenseLu>();
    return *lu_large_;
  }
  if (static_cast<int>(lu_by_size_.size()) <= k) lu_by_size_.resize(k + 1);
  if (!lu_by_size_[k]) lu_by_size_[k] = std::make_unique<internal::DenseLu>();
  return *lu_by_size_[k];
}

void LemkeSolver::SolveBasis(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  const int n = static_cast<int>(M_->rows());
  const int k = static_cast<int>(z_positions_.size());
  x->resize(n);
  if (k == 0) {
    for (int i = 0; i < n; ++i) (*x)[w_position_[i]] = b[i];
    return;
  }
  Eigen::VectorXd& b_r = lu_->Scratch(0);
  Eigen::VectorXd& xz = lu_->Scratch(1);
  for (int a = 0; a < k; ++a) b_r[a] = b[r_rows_[a]];
  lu_->Solve(b_r, &xz);
  for (int t = 0; t < k; ++t) (*x)[z_positions_[t]] = xz[t];
  // x_W = b_W - A_Z(W rows) x_Z. On large bases as one column-major product over all rows (the
  // rows of R computed and dropped): there, dot products row by row stride across a buffer
  // larger than the cache (the product takes 0.5-0.9x the time of the Lemke benchmarks at
  // n = 300 to 3000). On small ones row by row, which skips R's rows (the product took 1.07x at
  // n = 30 to 100).
  if (n > kRowByRowSize) {
    Eigen::VectorXd& product = solve_work_;
    product.noalias() = basis_z_buffer_.leftCols(k) * xz;
    for (int i = 0; i < n; ++i) {
      const int p = w_position_[i];
      if (p >= 0) (*x)[p] = b[i] - product[i];
    }
    return;
  }
  for (int i = 0; i < n; ++i) {
    const int p = w_position_[i];
    if (p >= 0) (*x)[p] = b[i] - basis_z_buffer_.row(i).head(k).dot(xz);
  }
}

void LemkeSolver::SolveBasisTransposed(const Eigen::VectorXd& c, Eigen::VectorXd* y) const {
  const int n = static_cast<int>(M_->rows());
  const int k = static_cast<int>(z_positions_.size());
  y->setZero(n);
  for (int i = 0; i < n; ++i) {
    if (w_position_[i] >= 0) (*y)[i] = c[w_position_[i]];
  }
  if (k == 0) return;
  Eigen::VectorXd& rhs = lu_->Scratch(2);
  Eigen::VectorXd& coupling = lu_->Scratch(3);
  Eigen::VectorXd& y_r = lu_->Scratch(4);
  coupling.noalias() = basis_z_buffer_.leftCols(k).transpose() * (*y);  // y_R is still zero
  for (int t = 0; t < k; ++t) rhs[t] = c[z_positions_[t]] - coupling[t];
  lu_->SolveTransposed(rhs, &lu_->Scratch(5), &y_r);
  for (int a = 0; a < k; ++a) (*y)[r_rows_[a]] = y_r[a];
}

// x = B^{-1} b = E_m^{-1} ... E_1^{-1} B_0^{-1} b (product form of the inverse).
void LemkeSolver::Ftran(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  SolveBasis(b, x);
  for (size_t j = 0; j < eta_rows_.size(); ++j) {
    const int r = eta_rows_[j];
    const double xr = (*x)[r] / eta_columns_(r, j);
    x->noalias() -= xr * eta_columns_.col(j);
    (*x)[r] = xr;
  }
}

// y = B^{-T} e_position: row `position` of B^{-1}.
void LemkeSolver::Btran(int position, Eigen::VectorXd* y) const {
  const int n = static_cast<int>(M_->rows());
  Eigen::VectorXd& c = btran_work_;
  c.setZero(n);
  c[position] = 1.0;
  for (int j = static_cast<int>(eta_rows_.size()) - 1; j >= 0; --j) {
    const int r = eta_rows_[j];
    const double cr = c[r];
    c[r] = 0.0;
    c[r] = (cr - eta_columns_.col(j).dot(c)) / eta_columns_(r, j);
  }
  SolveBasisTransposed(c, y);
}

namespace {

// Keeps the alive ties (indices into `ties`) whose value(t) is within 1e-9 of the smallest.
template <class Value>
void KeepSmallest(const Value& value, std::vector<int>* alive, std::vector<int>* next) {
  double best = kInf;
  for (int t : *alive) best = std::min(best, value(t));
  const double scale = 1e-9 * std::max(1.0, std::abs(best));
  next->clear();
  for (int t : *alive) {
    if (value(t) <= best + scale) next->push_back(t);
  }
  alive->swap(*next);
}

}  // namespace

// Lexicographic minimum over the tied positions of row_i(B^{-1}) / delta_i. Returns -1 when
// the entries compared are not finite (overflow or a singular basis), so no choice rests on a
// comparison with NaN. Column j of B^{-1} (one Ftran) ranks every tied row at once, and ties
// break within the first few columns as a rule; the tied rows in full (one Btran each) are
// computed only for ties still standing after as many columns as there were ties.
int LemkeSolver::ChooseAmongTies(const std::vector<int>& ties, const Eigen::VectorXd& delta) {
  if (ties.empty()) return -1;
  if (ties.size() == 1 || !options_.lexicographic) return ties.front();
  const int n = static_cast<int>(M_->rows());
  const int count = static_cast<int>(ties.size());
  alive_.resize(count);
  for (int t = 0; t < count; ++t) alive_[t] = t;
  int j = 0;
  for (; j < std::min(n, count) && alive_.size() > 1; ++j) {
    tie_unit_.setZero(n);
    tie_unit_[j] = 1.0;
    Ftran(tie_unit_, &tie_y_);
    if (!tie_y_.allFinite()) return -1;
    KeepSmallest([&](int t) { return tie_y_[ties[t]] / delta[ties[t]]; }, &alive_, &next_alive_);
  }
  if (alive_.size() <= 1 || j == n) return ties[alive_.front()];
  if (tie_rows_.rows() != n || tie_rows_.cols() != n) tie_rows_.resize(n, n);
  for (int t : alive_) {
    Btran(ties[t], &tie_y_);
    tie_rows_.row(t) = tie_y_.transpose() / delta[ties[t]];
    if (!tie_rows_.row(t).allFinite()) return -1;
  }
  for (; j < n && alive_.size() > 1; ++j) {
    KeepSmallest([&](int t) { return tie_rows_(t, j); }, &alive_, &next_alive_);
  }
  return ties[alive_.front()];
}

// Sets the basis to all w plus the z variables in `z_set`.
void LemkeSolver::SetBasis(int n, const std::vector<int>& z_set) {
  basis_.resize(n);
  for (int i = 0; i < n; ++i) basis_[i] = i;
  for (int i : z_set) basis_[i] = n + i;
}

// z_i from the basic values xbar_ of the current basis (z0 excluded), clipped at 0.
void LemkeSolver::ReadBasicZ(Eigen::VectorXd* z) const {
  const int n = static_cast<int>(M_->rows());
  for (int p = 0; p < n; ++p) {
    if (basis_[p] >= n && basis_[p] < 2 * n) (*z)[basis_[p] - n] = std::max(xbar_[p], 0.0);
  }
}

// The first pivot: z0 enters at the value that makes the most negative basic variable zero.
// x(t) = xbar + t B^{-1} d; the leaving position minimizes xbar_i / (B^{-1} d)_i. Sets delta_
// to B^{-1} a_z0 (a_z0 = -d); returns the position, -1 on non-finite data.
int LemkeSolver::FirstPivotPosition() {
  const int n = static_cast<int>(M_->rows());
  Ftran(covering_, &bd_);
  double best = kInf;
  for (int p = 0; p < n; ++p) {
    if (bd_[p] > 0.0) best = std::min(best, xbar_[p] / bd_[p]);
  }
  ties_.clear();
  for (int p = 0; p < n; ++p) {
    if (bd_[p] > 0.0 && xbar_[p] / bd_[p] <= best + 1e-12 * std::max(1.0, std::abs(best))) {
      ties_.push_back(p);
    }
  }
  const int r = bd_.allFinite() && xbar_.allFinite() ? ChooseAmongTies(ties_, bd_) : -1;
  delta_ = -bd_;
  return r;
}

// The ratio test for the entering column delta_: the position that leaves, z0 first among
// ties. *ray when no entry of delta_ is positive (no position blocks); -1 on non-finite rows.
int LemkeSolver::RatioTest(bool* ray) {
  const int n = static_cast<int>(M_->rows());
  const int z0 = 2 * n;
  const double scale = delta_.cwiseAbs().maxCoeff();
  const double eps = options_.pivot_tolerance * std::max(scale, 1e-300);
  double best = kInf;
  for (int p = 0; p < n; ++p) {
    if (delta_[p] > eps) best = std::min(best, std::max(xbar_[p], 0.0) / delta_[p]);
  }
  *ray = best == kInf;
  if (*ray) return -1;
  ties_.clear();
  int z0_tie = -1;
  const double tie_tol = 1e-12 * std::max(1.0, best);
  for (int p = 0; p < n; ++p) {
    if (delta_[p] > eps && std::max(xbar_[p], 0.0) / delta_[p] <= best + tie_tol) {
      ties_.push_back(p);
      if (basis_[p] == z0) z0_tie = p;
    }
  }
  return z0_tie >= 0 ? z0_tie : ChooseAmongTies(ties_, delta_);
}

// The entering variable takes position r in the basic values and the basis. False if the
// values overflowed; *leaving receives the variable that left.
bool LemkeSolver::Exchange(int r, int entering, int* leaving) {
  const double theta = xbar_[r] / delta_[r];
  xbar_.noalias() -= theta * delta_;
  xbar_[r] = theta;
  if (!xbar_.allFinite()) return false;
  *leaving = basis_[r];
  basis_[r] = entering;
  return true;
}

// The basis factors after an exchange at position r: an eta column, or a fresh factorization
// every refactorization_interval pivots. False if the basis turned numerically unusable.
bool LemkeSolver::UpdateFactors(const Eigen::VectorXd& q, int r) {
  if (static_cast<int>(eta_rows_.size()) == options_.refactorization_interval) {
    if (!Refactor()) return false;
    Ftran(q, &xbar_);  // fresh basic values (z0 included) from the new factorization
    return xbar_.allFinite();
  }
  eta_columns_.col(eta_rows_.size()) = delta_;
  eta_rows_.push_back(r);
  return true;
}

// Complementary pivoting from the current basis (xbar_ = B^{-1} q, covering_ set) until z0
// leaves, a ray, a numerical failure or the pivot cap.
LemkeSolver::Outcome LemkeSolver::Pivot(const Eigen::VectorXd& q, int max_pivots, int* pivots) {
  const int n = static_cast<int>(M_->rows());
  const int z0 = 2 * n;
  int r = FirstPivotPosition();
  int entering = z0;
  while (r >= 0) {
    int leaving = -1;
    if (!Exchange(r, entering, &leaving)) return Outcome::Numerical;
    ++*pivots;
    if (!UpdateFactors(q, r)) return Outcome::Numerical;
    if (leaving == z0) return Outcome::Complementary;
    if (*pivots >= max_pivots) return Outcome::PivotCap;
    // Complementary rule.
    entering = leaving < n ? leaving + n : leaving - n;
    ColumnInto(entering, &column_);
    Ftran(column_, &delta_);
    if (!delta_.allFinite()) return Outcome::Numerical;
    bool ray = false;
    r = RatioTest(&ray);
    if (ray) return Outcome::Ray;
  }
  return Outcome::Numerical;
}

// The solution of a complementary basis: a fresh factorization and one step of iterative
// refinement. False if the final basis cannot be factorized.
bool LemkeSolver::Finish(const Eigen::VectorXd& q, Eigen::VectorXd* z) {
  if (!Refactor()) return false;
  const int n = static_cast<int>(M_->rows());
  Ftran(q, &xbar_);
  residual_ = q;
  for (int p = 0; p < n; ++p) {
    ColumnInto(basis_[p], &column_);
    residual_ -= column_ * xbar_[p];
  }
  Ftran(residual_, &correction_);
  xbar_ += correction_;
  ReadBasicZ(z);
  return true;
}

// The message of a run that did not end complementary, into *message's storage.
void LemkeSolver::FailureMessage(Outcome outcome, int pivots, int max_pivots,
                                 std::string* message) {
  char text[200];
  switch (outcome) {
    case Outcome::Numerical:
      std::snprintf(text, sizeof(text),
                    "basis became singular or its values overflowed after %d pivots", pivots);
      break;
    case Outcome::Ray:
      std::snprintf(text, sizeof(text),
                    "ray termination after %d pivots: no solution on the complementary path (if "
                    "M is copositive-plus the LCP has no solution)",
                    pivots);
      break;
    default:
      std::snprintf(text, sizeof(text), "pivot cap %d reached", max_pivots);
  }
  message->assign(text);
}

// Starts from the warm basis when it factorizes with finite values; true if it does.
bool LemkeSolver::StartFromWarmBasis(const Eigen::VectorXd& q, const std::vector<int>& warm_basis) {
  if (warm_basis.empty()) return false;
  SetBasis(static_cast<int>(q.size()), warm_basis);
  if (!Refactor()) return false;
  Ftran(q, &xbar_);
  return xbar_.allFinite();
}

LemkeSolver::Summary LemkeSolver::SolveLcp(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                           const std::vector<int>& warm_basis, Eigen::VectorXd* z) {
  Summary summary;
  ResetSummary(&summary);
  RunLcp(M, q, warm_basis, z, &summary);
  return summary;
}

// The pivoting of SolveLcp() into *summary's status, message, iterations, factorizations,
// ray_termination, warm_start_used and lcp_size (the rest is left as it is).
void LemkeSolver::RunLcp(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                         const std::vector<int>& warm_basis, Eigen::VectorXd* z,
                         Summary* summary_out) {
  Summary& summary = *summary_out;
  const int n = static_cast<int>(q.size());
  summary.lcp_size = n;
  factorizations_ = 0;
  z->setZero(n);
  if (M.rows() != n || M.cols() != n || !M.allFinite() || !q.allFinite()) {
    summary.status = Status::InvalidInput;
    summary.message = "M must be a finite square matrix of the size of q, and q finite";
    return;
  }
  if (n == 0 || q.minCoeff() >= 0.0) {
    summary.status = Status::Converged;
    summary.message = "z = 0 solves it (q >= 0)";
    return;
  }
  M_ = &M;
  PrepareWorkspace(n);
  const int max_pivots = options_.max_pivots > 0 ? options_.max_pivots : 10000 + 100 * n;
  // At least as many columns as the interval: the recovery's re-run (interval 1) leaves the
  // wider buffer in place, so the next ordinary solve does not allocate it again.
  if (eta_columns_.rows() != n || eta_columns_.cols() < options_.refactorization_interval) {
    eta_columns_.resize(n, options_.refactorization_interval);
  }
  bool warm = StartFromWarmBasis(q, warm_basis);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!warm) {
      SetBasis(n, {});
      Refactor();
      xbar_ = q;
      covering_.setOnes(n);
    } else {
      summary.warm_start_used = true;
      if (xbar_.minCoeff() >= 0.0) {
        ReadBasicZ(z);
        summary.status = Status::Converged;
        summary.message = "the warm-start basis is feasible";
        break;
      }
      // Covering vector d = B e, so that B^{-1} d = e.
      covering_.setZero(n);
      for (int p = 0; p < n; ++p) {
        ColumnInto(basis_[p], &column_);
        covering_ += column_;
      }
    }
    int pivots = 0;
    Outcome outcome = Pivot(q, max_pivots, &pivots);
    summary.iterations += pivots;
    if (outcome == Outcome::Complementary && Finish(q, z)) {
      summary.status = Status::Converged;
      summary.ray_termination = false;
      char message[64];
      std::snprintf(message, sizeof(message), "complementary solution after %d pivots",
                    summary.iterations);
      summary.message.assign(message);
      break;
    }
    if (outcome == Outcome::Complementary) outcome = Outcome::Numerical;
    ReadBasicZ(z);  // the best point on failure: the current basic z values
    summary.status = outcome == Outcome::Numerical ? Status::NumericalFailure
                     : outcome == Outcome::Ray     ? Status::Failed
                                                   : Status::MaxIterations;
    summary.ray_termination = outcome == Outcome::Ray;
    FailureMessage(outcome, summary.iterations, max_pivots, &summary.message);
    if (outcome == Outcome::PivotCap || !warm) break;
    warm = false;  // try once more from the cold start
  }
  summary.factorizations = factorizations_;
  M_ = nullptr;
}

}  // namespace ncpkit
