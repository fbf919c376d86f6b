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

ReducedLcp Reduce(const LinearComplementarityProblem& problem) {
  ReducedLcp r;
  const int n = problem.size();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  for (int i = 0; i < n; ++i) {
    if (l[i] == -kInf && u[i] == kInf) {
      r.free.push_back(i);
    } else if (l[i] == u[i]) {
      r.fixed.push_back(i);
    } else {
      r.kept.push_back(i);
    }
  }
  const Eigen::MatrixXd M = problem.dense_matrix();
  Eigen::VectorXd q = problem.q();
  // Substitute fixed variables into q.
  for (int j : r.fixed) q += M.col(j) * l[j];

  // Free variables: equality rows and free variables need not be paired by index (each pair
  // only says "w = 0"), so eliminate the free variables of a maximal nonsingular block
  // M(P, Q) of the free rows and columns (full-pivoting LU), and split the rest.
  r.kept_rows = r.kept;
  r.free_rows = r.free;
  std::vector<int> split_vars, split_rows;
  if (!r.free.empty()) {
    const int nf = static_cast<int>(r.free.size());
    Eigen::MatrixXd M_ff(nf, nf);
    for (int a = 0; a < nf; ++a) {
      for (int b = 0; b < nf; ++b) M_ff(a, b) = M(r.free[a], r.free[b]);
    }
    Eigen::FullPivLU<Eigen::MatrixXd> lu(M_ff);
    if (!lu.isInvertible()) {
      const int rank = static_cast<int>(lu.rank());
      r.free_rank = rank;
      std::vector<int> vars, rows;
      for (int k = 0; k < nf; ++k) {
        // Eigen permutations: column k of M_ff Q is column Q(k) of M_ff, and row i of M_ff
        // lands at row P(i) of P M_ff; the leading rank x rank block of P M_ff Q is nonsingular.
        (k < rank ? vars : split_vars).push_back(r.free[lu.permutationQ().indices()[k]]);
        (lu.permutationP().indices()[k] < rank ? rows : split_rows).push_back(r.free[k]);
      }
      r.free = vars;
      r.free_rows = rows;
    }
    Eigen::MatrixXd block(r.free.size(), r.free.size());
    for (size_t a = 0; a < r.free.size(); ++a) {
      for (size_t b = 0; b < r.free.size(); ++b) block(a, b) = M(r.free_rows[a], r.free[b]);
    }
    r.free_lu.compute(block);
  }
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
  const int nc = static_cast<int>(r.kept.size());
  const int nf = static_cast<int>(r.free.size());
  Eigen::MatrixXd M_cc(nc, nc);
  Eigen::VectorXd q_c(nc);
  for (int a = 0; a < nc; ++a) {
    q_c[a] = q[r.kept_rows[a]];
    for (int b = 0; b < nc; ++b) M_cc(a, b) = M(r.kept_rows[a], r.kept[b]);
  }
  if (nf > 0) {
    Eigen::MatrixXd M_cf(nc, nf);
    r.M_fc.resize(nf, nc);
    r.q_f.resize(nf);
    for (int a = 0; a < nf; ++a) {
      r.q_f[a] = q[r.free_rows[a]];
      for (int b = 0; b < nc; ++b) r.M_fc(a, b) = M(r.free_rows[a], r.kept[b]);
    }
    for (int a = 0; a < nc; ++a) {
      for (int b = 0; b < nf; ++b) M_cf(a, b) = M(r.kept_rows[a], r.free[b]);
    }
    if (nc > 0) {  // (a solve with no right-hand side column is UB inside Eigen)
      M_cc -= M_cf * r.free_lu.solve(r.M_fc);
      q_c -= M_cf * r.free_lu.solve(r.q_f);
    }
  }
  // Shift / flip to x >= 0 and add s for doubly bounded variables.
  for (int a = 0; a < nc; ++a) {
    const int i = r.kept[a];
    if (a >= base_count) {
      r.offset[a] = 0.0;
      r.sign[a] = (a - base_count) % 2 == 0 ? 1.0 : -1.0;
    } else if (l[i] > -kInf) {
      r.offset[a] = l[i];
      r.sign[a] = 1.0;
      if (u[i] < kInf) r.boxed.push_back(a);
    } else {
      r.offset[a] = u[i];
      r.sign[a] = -1.0;
    }
  }
  const int nb = static_cast<int>(r.boxed.size());
  r.M = Eigen::MatrixXd::Zero(nc + nb, nc + nb);
  r.q.resize(nc + nb);
  const Eigen::VectorXd shifted = M_cc * r.offset + q_c;
  for (int a = 0; a < nc; ++a) {
    r.q[a] = r.sign[a] * shifted[a];
    for (int b = 0; b < nc; ++b) r.M(a, b) = r.sign[a] * M_cc(a, b) * r.sign[b];
  }
  for (int k = 0; k < nb; ++k) {
    const int a = r.boxed[k];
    r.M(a, nc + k) = 1.0;
    r.M(nc + k, a) = -1.0;
    r.q[nc + k] = u[r.kept[a]] - l[r.kept[a]];
  }
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
  const int z0 = 2 * n;
  const int max_pivots = options_.max_pivots > 0 ? options_.max_pivots : 10000 + 100 * n;
  eta_columns_.resize(n, options_.refactorization_interval);
  Eigen::VectorXd xbar, delta(n), column;

  // Starting complementary basis: all w, or the warm-start set of z.
  auto set_basis = [&](const std::vector<int>& z_set) {
    basis_.resize(n);
    for (int i = 0; i < n; ++i) basis_[i] = i;
    for (int i : z_set) basis_[i] = n + i;
  };

  bool warm = false;
  if (!warm_basis.empty()) {
    set_basis(warm_basis);
    if (Refactor()) {
      Ftran(q, &xbar);
      warm = xbar.allFinite();
    }
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!warm) {
      set_basis({});
      Refactor();
      xbar = q;
      covering_ = Eigen::VectorXd::Ones(n);
    } else {
      summary.warm_start_used = true;
      if (xbar.minCoeff() >= 0.0) {
        for (int p = 0; p < n; ++p) {
          if (basis_[p] >= n) (*z)[basis_[p] - n] = xbar[p];
        }
        summary.status = Status::Converged;
        summary.message = "the warm-start basis is feasible";
        summary.factorizations = factorizations_;
        return summary;
      }
      // Covering vector d = B e, so that B^{-1} d = e.
      covering_ = Eigen::VectorXd::Zero(n);
      for (int p = 0; p < n; ++p) covering_ += Column(basis_[p]);
    }

    // First pivot: z0 enters at the value that makes the most negative basic variable zero.
    // x(t) = xbar + t B^{-1} d; the leaving position minimizes xbar_i / (B^{-1} d)_i.
    Eigen::VectorXd bd;
    Ftran(covering_, &bd);
    double best = kInf;
    for (int p = 0; p < n; ++p) {
      if (bd[p] > 0.0) best = std::min(best, xbar[p] / bd[p]);
    }
    std::vector<int> ties;
    for (int p = 0; p < n; ++p) {
      if (bd[p] > 0.0 && xbar[p] / bd[p] <= best + 1e-12 * std::max(1.0, std::abs(best))) {
        ties.push_back(p);
      }
    }
    int pivots = 0;
    int entering = z0;
    int r = bd.allFinite() && xbar.allFinite() ? ChooseAmongTies(ties, bd) : -1;
    delta = -bd;  // B^{-1} a_z0 with a_z0 = -d
    bool done = false, ray = false, numerical = r < 0;
    while (!numerical) {
      // Pivot: entering variable takes position r.
      const double theta = xbar[r] / delta[r];
      xbar.noalias() -= theta * delta;
      xbar[r] = theta;
      if (!xbar.allFinite()) {
        numerical = true;
        break;
      }
      const int leaving = basis_[r];
      basis_[r] = entering;
      ++pivots;
      if (static_cast<int>(eta_rows_.size()) == options_.refactorization_interval) {
        if (!Refactor()) {
          numerical = true;
          break;
        }
        Ftran(q, &xbar);
        // Fresh basic values (z0 included) from the new factorization.
        if (!xbar.allFinite()) {
          numerical = true;
          break;
        }
      } else {
        eta_columns_.col(eta_rows_.size()) = delta;
        eta_rows_.push_back(r);
      }
      if (leaving == z0) {
        done = true;
        break;
      }
      if (pivots >= max_pivots) break;
      // Complementary rule.
      entering = leaving < n ? leaving + n : leaving - n;
      column = Column(entering);
      Ftran(column, &delta);
      if (!delta.allFinite()) {
        numerical = true;
        break;
      }
      const double scale = delta.cwiseAbs().maxCoeff();
      const double eps = options_.pivot_tolerance * std::max(scale, 1e-300);
      best = kInf;
      for (int p = 0; p < n; ++p) {
        if (delta[p] > eps) best = std::min(best, std::max(xbar[p], 0.0) / delta[p]);
      }
      if (best == kInf) {
        ray = true;
        break;
      }
      ties.clear();
      int z0_tie = -1;
      const double tie_tol = 1e-12 * std::max(1.0, best);
      for (int p = 0; p < n; ++p) {
        if (delta[p] > eps && std::max(xbar[p], 0.0) / delta[p] <= best + tie_tol) {
          ties.push_back(p);
          if (basis_[p] == z0) z0_tie = p;
        }
      }
      r = z0_tie >= 0 ? z0_tie : ChooseAmongTies(ties, delta);
      if (r < 0) {
        numerical = true;
        break;
      }
    }
    summary.iterations += pivots;
    if (done && !Refactor()) {
      done = false;
      numerical = true;
    }
    if (done) {
      // Fresh factorization of the final basis and one step of iterative refinement.
      Ftran(q, &xbar);
      Eigen::VectorXd residual = q, correction;
      for (int p = 0; p < n; ++p) residual -= Column(basis_[p]) * xbar[p];
      Ftran(residual, &correction);
      xbar += correction;
      for (int p = 0; p < n; ++p) {
        if (basis_[p] >= n && basis_[p] < z0) (*z)[basis_[p] - n] = std::max(xbar[p], 0.0);
      }
      summary.status = Status::Converged;
      summary.ray_termination = false;
      std::ostringstream os;
      os << "complementary solution after " << summary.iterations << " pivots";
      summary.message = os.str();
      break;
    }
    // Best point on failure: the current basic z values.
    for (int p = 0; p < n; ++p) {
      if (basis_[p] >= n && basis_[p] < z0) (*z)[basis_[p] - n] = std::max(xbar[p], 0.0);
    }
    std::ostringstream os;
    if (numerical) {
      summary.status = Status::NumericalFailure;
      os << "basis became singular or its values overflowed after " << summary.iterations
         << " pivots";
    } else if (ray) {
      summary.status = Status::Failed;
      summary.ray_termination = true;
      os << "ray termination after " << summary.iterations
         << " pivots: no solution on the complementary path (if M is copositive-plus the LCP "
            "has no solution)";
    } else {
      summary.status = Status::MaxIterations;
      os << "pivot cap " << max_pivots << " reached";
    }
    summary.message = os.str();
    if ((ray || numerical) && warm) {
      warm = false;  // try once more from the cold start
      continue;
    }
    break;
  }
  summary.factorizations = factorizations_;
  M_ = nullptr;
  return summary;
}

}  // namespace ncpkit
