#include "solvers/lemke.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "solvers/pivots.h"

namespace ncpkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The standard LCP that a box-constrained MLCP reduces to, and the map back (see lemke.h):
//   z_i = sum over the kept entries a naming i of offset_a + sign_a x_a (a free variable split
//         as x+ - x- is named twice), and
//   z_F = -M_FF^{-1} (M_FC z_C + q_F) for the eliminated free ones.
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
};

// Sorts the variables into free (l = -inf, u = +inf), fixed (l = u) and kept ones.
void ClassifyVariables(const Eigen::VectorXd& l, const Eigen::VectorXd& u, ReducedLcp* r) {
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

// Free variables: equality rows and free variables need not be paired by index (each pair
// only says "w = 0"), so the free variables of a maximal nonsingular block M(P, Q) of the free
// rows and columns (full-pivoting LU) are eliminated and the rest split (*split_vars, with the
// unused equality rows *split_rows).
void EliminateFreeBlock(const Eigen::MatrixXd& M, ReducedLcp* r, std::vector<int>* split_vars,
                        std::vector<int>* split_rows) {
  if (r->free.empty()) return;
  const int nf = static_cast<int>(r->free.size());
  Eigen::MatrixXd M_ff(nf, nf);
  for (int a = 0; a < nf; ++a) {
    for (int b = 0; b < nf; ++b) M_ff(a, b) = M(r->free[a], r->free[b]);
  }
  Eigen::FullPivLU<Eigen::MatrixXd> lu(M_ff);
  if (!lu.isInvertible()) {
    const int rank = static_cast<int>(lu.rank());
    r->free_rank = rank;
    std::vector<int> vars, rows;
    for (int k = 0; k < nf; ++k) {
      // Eigen permutations: column k of M_ff Q is column Q(k) of M_ff, and row i of M_ff
      // lands at row P(i) of P M_ff; the leading rank x rank block of P M_ff Q is nonsingular.
      (k < rank ? vars : *split_vars).push_back(r->free[lu.permutationQ().indices()[k]]);
      (lu.permutationP().indices()[k] < rank ? rows : *split_rows).push_back(r->free[k]);
    }
    r->free = vars;
    r->free_rows = rows;
  }
  Eigen::MatrixXd block(r->free.size(), r->free.size());
  for (size_t a = 0; a < r->free.size(); ++a) {
    for (size_t b = 0; b < r->free.size(); ++b) block(a, b) = M(r->free_rows[a], r->free[b]);
  }
  r->free_lu.compute(block);
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
  r->M = Eigen::MatrixXd::Zero(nc + nb, nc + nb);
  r->q.resize(nc + nb);
  const Eigen::VectorXd shifted = M_cc * r->offset + q_c;
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

ReducedLcp Reduce(const LinearComplementarityProblem& problem) {
  ReducedLcp r;
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  ClassifyVariables(l, u, &r);
  const Eigen::MatrixXd M = problem.dense_matrix();
  Eigen::VectorXd q = problem.q();
  for (int j : r.fixed) q += M.col(j) * l[j];  // substitute the fixed variables
  std::vector<int> split_vars, split_rows;
  EliminateFreeBlock(M, &r, &split_vars, &split_rows);
  const int base_count = static_cast<int>(r.kept.size());
  // z_j = x+ - x-: two LCP variables, with rows w_i >= 0 and -w_i >= 0 of an unused equality
  // row i, so that w_i = 0.
  for (size_t k = 0; k < split_vars.size(); ++k) {
    r.kept.insert(r.kept.end(), 2, split_vars[k]);
    r.kept_rows.insert(r.kept_rows.end(), 2, split_rows[k]);
  }
  r.split = static_cast<int>(split_vars.size());
  r.sign = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(r.kept.size()));
  r.offset = Eigen::VectorXd::Zero(r.sign.size());
  Eigen::MatrixXd M_cc;
  Eigen::VectorXd q_c;
  SchurComplement(M, q, &r, &M_cc, &q_c);
  ShiftAndBound(l, u, base_count, M_cc, q_c, &r);
  return r;
}

// Indices of the reduced LCP that a warm start point makes basic.
std::vector<int> WarmBasis(const LinearComplementarityProblem& problem, const ReducedLcp& r,
                           const Eigen::VectorXd& z) {
  std::vector<int> basis;
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
  return basis;
}

}  // namespace

bool LemkeSolver::Options::IsValid(std::string* why) const {
  std::ostringstream os;
  if (max_pivots < 0)
    os << "max_pivots = " << max_pivots << " must be >= 0 (0 = automatic)";
  else if (!(tolerance > 0.0))
    os << "tolerance = " << tolerance << " must be > 0";
  else if (refactorization_interval < 1)
    os << "refactorization_interval = " << refactorization_interval << " must be >= 1";
  else if (!(pivot_tolerance > 0.0 && pivot_tolerance < 1.0))
    os << "pivot_tolerance = " << pivot_tolerance << " must be in (0, 1)";
  if (why) *why = os.str();
  return os.str().empty();
}

std::string LemkeSolver::Summary::FullReport() const {
  std::ostringstream os;
  os << CommonFullReport(*this) << "pivots            " << iterations << "\n"
     << "ray termination   " << (ray_termination ? "yes" : "no") << "\n"
     << "warm start used   " << (warm_start_used ? "yes" : "no") << "\n"
     << "reduced LCP size  " << lcp_size << " (" << eliminated_free_variables
     << " free variables eliminated, " << split_free_variables << " split)\n";
  return os.str();
}

LemkeSolver::Summary LemkeSolver::Solve(const LinearComplementarityProblem& problem,
                                        Eigen::VectorXd* z) {
  const auto start = std::chrono::steady_clock::now();
  Summary summary;
  summary.solver = "lemke";
  summary.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary)) return summary;
  const int n = problem.size();
  const bool warm = options_.warm_start && z->size() == n && z->allFinite();
  const Eigen::VectorXd z_in = warm ? *z : Eigen::VectorXd();

  ReducedLcp r = Reduce(problem);
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
    summary.natural_residual = natural_residual(problem, *z);
    summary.wall_time_seconds = Seconds(start);
    return summary;
  }
  Eigen::VectorXd x;
  const std::vector<int> warm_basis = warm ? WarmBasis(problem, r, z_in) : std::vector<int>();
  const Summary core = SolveLcp(r.M, r.q, warm_basis, &x);
  summary.status = core.status;
  summary.message = core.message;
  summary.iterations = core.iterations;
  summary.factorizations = core.factorizations;
  summary.ray_termination = core.ray_termination;
  summary.warm_start_used = core.warm_start_used;

  // Map back to the original variables.
  z->resize(n);
  const int nc = static_cast<int>(r.kept.size());
  Eigen::VectorXd z_c(nc);
  z->setZero();
  for (int a = 0; a < nc; ++a) {
    z_c[a] = r.offset[a] + r.sign[a] * x[a];
    (*z)[r.kept[a]] += z_c[a];
  }
  for (int i : r.fixed) (*z)[i] = problem.lower()[i];
  if (!r.free.empty()) {
    const Eigen::VectorXd z_f = -r.free_lu.solve(r.M_fc * z_c + r.q_f);
    for (size_t a = 0; a < r.free.size(); ++a) (*z)[r.free[a]] = z_f[a];
  }
  summary.natural_residual = natural_residual(problem, *z);
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
  summary.wall_time_seconds = Seconds(start);
  return summary;
}

Eigen::VectorXd LemkeSolver::Column(int var) const {
  const int n = static_cast<int>(M_->rows());
  if (var < n) return Eigen::VectorXd::Unit(n, var);
  if (var < 2 * n) return -M_->col(var - n);
  return -covering_;
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
  basis_z_columns_.resize(n, k);
  for (int t = 0; t < k; ++t) basis_z_columns_.col(t) = Column(basis_[z_positions_[t]]);
  eta_rows_.clear();
  ++factorizations_;
  if (k == 0) return true;
  Eigen::MatrixXd S(k, k);
  for (int a = 0; a < k; ++a) S.row(a) = basis_z_columns_.row(r_rows_[a]);
  lu_.compute(S);
  // Refuse a basis whose LU has a pivot that is zero or at rounding level, tested on the pivots
  // themselves (a condition estimate alone can miss an exactly zero pivot), and one whose
  // condition estimate says it is numerically singular.
  if (!internal::PivotsAreUsable(lu_.matrixLU().diagonal(), S.cwiseAbs().maxCoeff())) {
    return false;
  }
  const double rcond = lu_.rcond();
  return std::isfinite(rcond) && rcond > 1e-14;
}

void LemkeSolver::SolveBasis(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  const int n = static_cast<int>(M_->rows());
  const int k = static_cast<int>(z_positions_.size());
  x->resize(n);
  Eigen::VectorXd xz;
  if (k > 0) {
    Eigen::VectorXd b_r(k);
    for (int a = 0; a < k; ++a) b_r[a] = b[r_rows_[a]];
    xz = lu_.solve(b_r);
    for (int t = 0; t < k; ++t) (*x)[z_positions_[t]] = xz[t];
  }
  for (int i = 0; i < n; ++i) {
    const int p = w_position_[i];
    if (p < 0) continue;
    (*x)[p] = k > 0 ? b[i] - basis_z_columns_.row(i).dot(xz) : b[i];
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
  Eigen::VectorXd rhs(k);
  const Eigen::VectorXd coupling = basis_z_columns_.transpose() * (*y);  // y_R is still zero
  for (int t = 0; t < k; ++t) rhs[t] = c[z_positions_[t]] - coupling[t];
  const Eigen::VectorXd y_r = lu_.transpose().solve(rhs);
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
  Eigen::VectorXd c = Eigen::VectorXd::Unit(n, position);
  for (int j = static_cast<int>(eta_rows_.size()) - 1; j >= 0; --j) {
    const int r = eta_rows_[j];
    const double cr = c[r];
    c[r] = 0.0;
    c[r] = (cr - eta_columns_.col(j).dot(c)) / eta_columns_(r, j);
  }
  SolveBasisTransposed(c, y);
}

// Lexicographic minimum over the tied positions of row_i(B^{-1}) / delta_i. Returns -1 when
// the rows are not finite (overflow or a singular basis), so no choice rests on a comparison
// with NaN.
int LemkeSolver::ChooseAmongTies(const std::vector<int>& ties, const Eigen::VectorXd& delta) {
  if (ties.empty()) return -1;
  if (ties.size() == 1 || !options_.lexicographic) return ties.front();
  const int n = static_cast<int>(M_->rows());
  Eigen::MatrixXd rows(ties.size(), n);
  Eigen::VectorXd y;
  for (size_t t = 0; t < ties.size(); ++t) {
    Btran(ties[t], &y);
    rows.row(t) = y.transpose() / delta[ties[t]];
  }
  if (!rows.allFinite()) return -1;
  std::vector<int> alive(ties.size());
  for (size_t t = 0; t < ties.size(); ++t) alive[t] = static_cast<int>(t);
  std::vector<int> next;
  for (int j = 0; j < n && alive.size() > 1; ++j) {
    double best = kInf;
    for (int t : alive) best = std::min(best, rows(t, j));
    const double scale = 1e-9 * std::max(1.0, std::abs(best));
    next.clear();
    for (int t : alive) {
      if (rows(t, j) <= best + scale) next.push_back(t);
    }
    alive.swap(next);
  }
  return ties[alive.front()];
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
    column_ = Column(entering);
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
  Eigen::VectorXd residual = q, correction;
  for (int p = 0; p < n; ++p) residual -= Column(basis_[p]) * xbar_[p];
  Ftran(residual, &correction);
  xbar_ += correction;
  ReadBasicZ(z);
  return true;
}

std::string LemkeSolver::FailureMessage(Outcome outcome, int pivots, int max_pivots) {
  std::ostringstream os;
  switch (outcome) {
    case Outcome::Numerical:
      os << "basis became singular or its values overflowed after " << pivots << " pivots";
      break;
    case Outcome::Ray:
      os << "ray termination after " << pivots
         << " pivots: no solution on the complementary path (if M is copositive-plus the LCP "
            "has no solution)";
      break;
    default:
      os << "pivot cap " << max_pivots << " reached";
  }
  return os.str();
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
  summary.solver = "lemke";
  summary.tolerance = options_.tolerance;
  const int n = static_cast<int>(q.size());
  summary.lcp_size = n;
  factorizations_ = 0;
  z->setZero(n);
  if (M.rows() != n || M.cols() != n || !M.allFinite() || !q.allFinite()) {
    summary.status = Status::InvalidInput;
    summary.message = "M must be a finite square matrix of the size of q, and q finite";
    return summary;
  }
  if (n == 0 || q.minCoeff() >= 0.0) {
    summary.status = Status::Converged;
    summary.message = "z = 0 solves it (q >= 0)";
    return summary;
  }
  M_ = &M;
  const int max_pivots = options_.max_pivots > 0 ? options_.max_pivots : 10000 + 100 * n;
  eta_columns_.resize(n, options_.refactorization_interval);
  bool warm = StartFromWarmBasis(q, warm_basis);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!warm) {
      SetBasis(n, {});
      Refactor();
      xbar_ = q;
      covering_ = Eigen::VectorXd::Ones(n);
    } else {
      summary.warm_start_used = true;
      if (xbar_.minCoeff() >= 0.0) {
        ReadBasicZ(z);
        summary.status = Status::Converged;
        summary.message = "the warm-start basis is feasible";
        break;
      }
      // Covering vector d = B e, so that B^{-1} d = e.
      covering_ = Eigen::VectorXd::Zero(n);
      for (int p = 0; p < n; ++p) covering_ += Column(basis_[p]);
    }
    int pivots = 0;
    Outcome outcome = Pivot(q, max_pivots, &pivots);
    summary.iterations += pivots;
    if (outcome == Outcome::Complementary && Finish(q, z)) {
      summary.status = Status::Converged;
      summary.ray_termination = false;
      summary.message =
          "complementary solution after " + std::to_string(summary.iterations) + " pivots";
      break;
    }
    if (outcome == Outcome::Complementary) outcome = Outcome::Numerical;
    ReadBasicZ(z);  // the best point on failure: the current basic z values
    summary.status = outcome == Outcome::Numerical ? Status::NumericalFailure
                     : outcome == Outcome::Ray     ? Status::Failed
                                                   : Status::MaxIterations;
    summary.ray_termination = outcome == Outcome::Ray;
    summary.message = FailureMessage(outcome, summary.iterations, max_pivots);
    if (outcome == Outcome::PivotCap || !warm) break;
    warm = false;  // try once more from the cold start
  }
  summary.factorizations = factorizations_;
  M_ = nullptr;
  return summary;
}

}  // namespace ncpkit
