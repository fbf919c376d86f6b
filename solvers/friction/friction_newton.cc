#include "solvers/friction/friction_newton.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/friction/internal/friction_functions.h"

namespace ncpkit {
namespace internal {

// A linear system whose solution's first m entries are the Newton direction: J itself, or
// the global form's K (FrictionNewton::Solve with a GlobalFrictionContactProblem).
struct FrictionNewtonSystem {
  Eigen::SparseMatrix<double> matrix;
  std::vector<int> shift_positions;  // the direction's m diagonal entries (J + eps I)
  KluLu lu;
  // True where the last direction came from this matrix's factorization without a shift: the
  // next iteration refactorizes with its pivots. J only: K's backward error, measured in K's
  // scale, let through directions that were poor in J's (on 32 islands of the 200-box pile,
  // K refactorized so solved 18, afresh 21, as many as J).
  bool has_pivots = false;
  // True for K: its pivots' spread (KLU's rcond) says nothing of J's — eliminating a sticking
  // contact's unknowns pivots on A's entries of order of the FB smoothing, and then on their
  // Schur complement's of the inverse order (on an island of the 200-box pile K's rcond fell to
  // 1e-15 where J's stood near 1e-10). Its solution is judged instead by how far it amplifies
  // the right-hand side (SolveSystem).
  bool judge_by_solution = false;
  double jacobian_scale = 1.0;  // the largest |J_ii|, set before each solve
  Eigen::VectorXd rhs, solution, product, diagonal;
};

}  // namespace internal

namespace {

using Clock = std::chrono::steady_clock;

// The proximal-point method's cap on sigma's adaptive factor, and the failed subproblems in a
// row at that cap, none improving the best point, after which it stops (friction_newton.h).
constexpr double kAdaptCap = 1e4;
constexpr int kFailuresAtCap = 10;

// The proximal-point method's stall: a window of kProximalStallWindow steps in which neither the
// error nor the best error moved by more than kProximalStallChange of the best ends the solve.
// Stuck islands of the mixed-shape drop keep solving their subproblems while the original error
// stays within 0.5 % over a thousand steps (the proximal term sigma (r_k+1 - r_k) constant, as for
// a problem whose solutions lie only at infinity); RockPile_tob1 at 1e-8 goes 140 steps without a
// new best before converging, but its error moves by 15-50 % in every window of 100 steps.
constexpr int kProximalStallWindow = 100;
constexpr double kProximalStallChange = 0.01;

class ProximalStallWatch {
 public:
  explicit ProximalStallWatch(double error) { Restart(error, error); }
  // Called after each step; true when the window that just closed saw no movement.
  bool Stalled(double error, double best_error) {
    lowest_ = std::min(lowest_, error);
    highest_ = std::max(highest_, error);
    if (++steps_ < kProximalStallWindow) return false;
    const double allowed = kProximalStallChange * best_error;
    const bool stalled = best_at_start_ - best_error <= allowed && highest_ - lowest_ <= allowed;
    Restart(error, best_error);
    return stalled;
  }

 private:
  void Restart(double error, double best_error) {
    steps_ = 0;
    lowest_ = highest_ = error;
    best_at_start_ = best_error;
  }
  int steps_ = 0;
  double lowest_ = 0.0, highest_ = 0.0, best_at_start_ = 0.0;
};

// The FB Jacobian's smoothing, relative to the scale of r and u: a hundred times the iterate's
// error between these bounds, so below 1e-6 only once the error is below 1e-8 (the parameter of
// a smoothing Newton method, shrinking with the residual). Held at 1e-6, the Jacobian near a
// solution with contacts at the stick-slip edge is that of a function smoothed far above the
// error: on islands of the mixed-shape drop the iteration crawled near the solution (186 to
// reach 1e-11 where it now takes 52, fclib_problems_test.cc). Shrunk from larger errors (a
// hundredth of the error) it failed on 100_PR_PerioBox and made the Coulomb pile's steps at 1e-6
// slower; near 1e-8 of the scale it meets the rounding of the function's spectral values
// (friction_functions.cc).
constexpr double kSmoothingPerError = 100.0;
constexpr double kSmallestSmoothing = 1e-7;
constexpr double kLargestSmoothing = 1e-6;

// Phi of one contact and its partial derivatives A = dPhi/dr, B = dPhi/du.
void ContactFunction(FrictionNewton::Function function, double mu, double rho,
                     const Eigen::Vector3d& r, const Eigen::Vector3d& u, double smoothing,
                     Eigen::Vector3d* phi, Eigen::Matrix3d* A, Eigen::Matrix3d* B) {
  if (function == FrictionNewton::Function::AlartCurnier) {
    internal::AlartCurnierContact(mu, rho, r, u, phi, A, B);
  } else {
    internal::FischerBurmeisterContact(mu, rho, r, u, smoothing, phi, A, B);
  }
}

// A factorization whose pivots span more than this (KLU's rcond, the smallest |U_ii| over the
// largest) is of a J singular to rounding: J = rho W on a face's sticking corners, whose W has
// the bodies' rank. KLU then divides by a pivot of rounding noise, and the direction carries
// that noise times 1e16 in W's null space (impulses the corners trade without effect), which
// leaves the cones: on a resting tower of boxes no step along it decreased the merit.
constexpr double kSingularRcond = 1e-14;

// The largest normwise backward error |K x - b|_1 / (|K|_1 |x|_1 + |b|_1) of a solution found
// with an earlier iteration's pivots; above it those pivots no longer suit the matrix.
constexpr double kRefactorBackwardError = 1e-12;

// s->solution = s->matrix^-1 s->rhs by a fresh factorization (refactorize: with the pivots of
// the last one). True where the matrix is not singular to rounding, the solution is finite and,
// for a refactorization, its backward error is within kRefactorBackwardError.
bool SolveSystem(internal::FrictionNewtonSystem* s, bool refactorize) {
  if (refactorize) {
    s->lu.refactorize(s->matrix);
  } else {
    s->lu.factorize(s->matrix);
  }
  if (s->lu.info() != Eigen::Success) return false;
  if (!s->judge_by_solution && !(s->lu.rcond() >= kSingularRcond)) return false;
  s->solution = s->rhs;
  s->lu.solveInPlace(&s->solution);
  if (!s->solution.allFinite()) return false;
  if (s->judge_by_solution) {
    // J d = -Phi with J singular to rounding gives |d| near |Phi| / (1e-16 |J|); a regular J,
    // at most its condition number times |Phi| / |J|.
    const int m = static_cast<int>(s->shift_positions.size());
    const double direction = s->solution.head(m).lpNorm<Eigen::Infinity>();
    const double rhs = s->rhs.head(m).lpNorm<Eigen::Infinity>();
    if (!(kSingularRcond * direction * s->jacobian_scale <= rhs)) return false;
  }
  if (!refactorize) return true;
  s->product.noalias() = s->matrix * s->solution;
  s->product -= s->rhs;
  double norm = 0.0;  // |K|_1, the largest column sum
  const int* outer = s->matrix.outerIndexPtr();
  for (int j = 0; j < s->matrix.outerSize(); ++j) {
    double column = 0.0;
    for (int k = outer[j]; k < outer[j + 1]; ++k) column += std::abs(s->matrix.valuePtr()[k]);
    norm = std::max(norm, column);
  }
  const double scale = norm * s->solution.lpNorm<1>() + s->rhs.lpNorm<1>();
  return s->product.lpNorm<1>() <= kRefactorBackwardError * scale;
}

}  // namespace

struct FrictionNewton::Workspace {
  // A 3 x 3 block (a, b) of W with the positions of its nine entries in J's values.
  struct Block {
    int a = 0, b = 0;
    Eigen::Matrix3d W;
    int positions[9];
  };
  std::vector<Block> blocks;
  std::vector<int> diagonal_block;  // index in blocks of (a, a)
  // W's pattern at the last analysis and, per nonzero of W, its block and entry (3 i + j):
  // a W of the same pattern (a time-stepper's resting contacts) reuses J's pattern and the
  // factorization's analysis.
  std::vector<int> pattern_outer, pattern_inner, nonzero_block, nonzero_entry;
  Eigen::VectorXd rho;
  std::vector<Eigen::Matrix3d> A, B;
  internal::FrictionNewtonSystem local;   // J = A + B W (+ sigma B on the diagonal blocks)
  internal::FrictionNewtonSystem global;  // K, with the global form's pieces
  Eigen::SparseMatrix<double>& J = local.matrix;
  // K's value of each entry in AnalyzeGlobal's order: per contact its 9 entries of A + sigma
  // B; per piece of H its 3 b entries of B_a H_p^T and b 3 of -H_p; per block its b b of M_k.
  std::vector<int> global_positions, piece_base, mass_base;
  // K's scaling (AnalyzeGlobal): y = D^-1 t y~ and its rows times D^-1 / t, D = diag(M)^1/2.
  Eigen::VectorXd inverse_root_mass;  // D^-1 per degree of freedom
  double velocity_scale = 1.0;        // t
  Eigen::VectorXd jacobian_diagonal;  // J's diagonal, whichever system is solved
  Eigen::VectorXd u, phi, direction, trial, trial_u, trial_phi, best;
  FrictionContactProblem reduced;  // Solve(global, r)'s local form
  // The merits of the last nonmonotone_memory iterates, oldest first.
  std::vector<double> merits;
};

FrictionNewton::FrictionNewton() : work_(std::make_unique<Workspace>()) {}
FrictionNewton::FrictionNewton(const Options& options)
    : options_(options), work_(std::make_unique<Workspace>()) {}
FrictionNewton::~FrictionNewton() = default;

bool FrictionNewton::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_iterations >= 1, "max_iterations", max_iterations, "must be >= 1")
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(nonmonotone_memory >= 1, "nonmonotone_memory", nonmonotone_memory, "must be >= 1")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Require(global_form_contacts >= 0, "global_form_contacts", global_form_contacts,
               "must be >= 0")
      .Require(global_form_fill >= 0.0 && std::isfinite(global_form_fill), "global_form_fill",
               global_form_fill, "must be >= 0 and finite")
      .Done(why);
}

std::string FrictionNewton::Summary::FullReport() const {
  std::ostringstream os;
  os << FrictionSolverSummary::FullReport() << "line search fails " << line_search_failures
     << "\nregularized steps " << regularized_steps << "\ndirections through the bodies "
     << (global_form ? "yes" : "no") << "\n";
  return os.str();
}

// W's 3 x 3 block pattern (with every diagonal block), J's pattern from it, KLU's analysis.
void FrictionNewton::Prepare(const FrictionContactProblem& problem) {
  Workspace& w = *work_;
  const int nc = problem.num_contacts();
  const Eigen::SparseMatrix<double>& W = problem.W_columns();
  const int* outer = W.outerIndexPtr();
  const int* inner = W.innerIndexPtr();
  const int nonzeros = static_cast<int>(W.nonZeros());
  const bool same_pattern = static_cast<int>(w.pattern_outer.size()) == W.outerSize() + 1 &&
                            static_cast<int>(w.pattern_inner.size()) == nonzeros &&
                            std::equal(w.pattern_outer.begin(), w.pattern_outer.end(), outer) &&
                            std::equal(w.pattern_inner.begin(), w.pattern_inner.end(), inner);
  if (!same_pattern) Analyze(problem);
  for (Workspace::Block& block : w.blocks) block.W.setZero();
  const double* values = W.valuePtr();
  for (int k = 0; k < nonzeros; ++k) {
    w.blocks[w.nonzero_block[k]].W(w.nonzero_entry[k] / 3, w.nonzero_entry[k] % 3) += values[k];
  }
  w.rho.resize(nc);
  for (int a = 0; a < nc; ++a) {
    const Eigen::Matrix3d& Waa = w.blocks[w.diagonal_block[a]].W;
    const double largest = Waa.diagonal().maxCoeff();
    w.rho[a] = largest > 0.0 && std::isfinite(largest) ? 1.0 / largest : 1.0;
  }
}

// The block pattern of W (every diagonal block included), J's pattern, where each block's
// entries sit in J, and the factorization's analysis.
void FrictionNewton::Analyze(const FrictionContactProblem& problem) {
  Workspace& w = *work_;
  const int nc = problem.num_contacts();
  const Eigen::SparseMatrix<double>& W = problem.W_columns();
  std::vector<std::pair<int, int>> keys;
  keys.reserve(W.nonZeros() / 3 + nc);
  for (int a = 0; a < nc; ++a) keys.emplace_back(a, a);
  for (int j = 0; j < W.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it) {
      keys.emplace_back(static_cast<int>(it.row()) / 3, j / 3);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  w.blocks.assign(keys.size(), Workspace::Block());
  w.diagonal_block.assign(nc, -1);
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(9 * keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    Workspace::Block& block = w.blocks[k];
    block.a = keys[k].first;
    block.b = keys[k].second;
    block.W = Eigen::Matrix3d::Zero();
    if (block.a == block.b) w.diagonal_block[block.a] = static_cast<int>(k);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) triplets.emplace_back(3 * block.a + i, 3 * block.b + j, 1.0);
  }
  w.nonzero_block.clear();
  w.nonzero_entry.clear();
  for (int j = 0; j < W.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(W, j); it; ++it) {
      const std::pair<int, int> key(static_cast<int>(it.row()) / 3, j / 3);
      w.nonzero_block.push_back(
          static_cast<int>(std::lower_bound(keys.begin(), keys.end(), key) - keys.begin()));
      w.nonzero_entry.push_back(3 * (static_cast<int>(it.row()) % 3) + j % 3);
    }
  }
  w.J.resize(problem.size(), problem.size());
  w.J.setFromTriplets(triplets.begin(), triplets.end());
  w.J.makeCompressed();
  for (Workspace::Block& block : w.blocks) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        const int column = 3 * block.b + j;
        const int* begin = w.J.innerIndexPtr() + w.J.outerIndexPtr()[column];
        const int* end = w.J.innerIndexPtr() + w.J.outerIndexPtr()[column + 1];
        block.positions[3 * i + j] =
            static_cast<int>(std::lower_bound(begin, end, 3 * block.a + i) - w.J.innerIndexPtr());
      }
    }
  }
  w.A.resize(nc);
  w.B.resize(nc);
  w.local.shift_positions.resize(3 * nc);
  for (int i = 0; i < 3 * nc; ++i) {
    w.local.shift_positions[i] = w.blocks[w.diagonal_block[i / 3]].positions[4 * (i % 3)];
  }
  w.local.lu.analyzePattern(w.J);
  w.pattern_outer.assign(W.outerIndexPtr(), W.outerIndexPtr() + W.outerSize() + 1);
  w.pattern_inner.assign(W.innerIndexPtr(), W.innerIndexPtr() + W.nonZeros());
}

// u = W r + q (+ sigma (r - center)) and Phi(r); returns 1/2 ||Phi||^2 (inf if not finite).
double FrictionNewton::Evaluate(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                                Eigen::VectorXd* u, Eigen::VectorXd* phi) const {
  problem.Velocity(r, u);
  if (sigma_ > 0.0) *u += sigma_ * (r - *center_);
  phi->resize(problem.size());
  for (int a = 0; a < problem.num_contacts(); ++a) {
    const double mu = problem.mu()[a], rho = work_->rho[a];
    const Eigen::Vector3d ra = r.segment<3>(3 * a), ua = u->segment<3>(3 * a);
    if (options_.function == Function::AlartCurnier) {
      Eigen::Vector3d value;
      Eigen::Matrix3d A, B;
      internal::AlartCurnierContact(mu, rho, ra, ua, &value, &A, &B);
      phi->segment<3>(3 * a) = value;
    } else {
      phi->segment<3>(3 * a) = internal::FischerBurmeisterSoc<double>(mu, rho, ra, ua, 0.0);
    }
  }
  const double merit = 0.5 * phi->squaredNorm();
  return std::isfinite(merit) ? merit : kInf;
}

void FrictionNewton::AssembleJacobian(const FrictionContactProblem& problem,
                                      const Eigen::VectorXd& r, const Eigen::VectorXd& u,
                                      double error) {
  Workspace& w = *work_;
  const double smoothing =
      std::clamp(kSmoothingPerError * error, kSmallestSmoothing, kLargestSmoothing);
  for (int a = 0; a < problem.num_contacts(); ++a) {
    Eigen::Vector3d value;
    ContactFunction(options_.function, problem.mu()[a], w.rho[a], r.segment<3>(3 * a),
                    u.segment<3>(3 * a), smoothing, &value, &w.A[a], &w.B[a]);
  }
  w.jacobian_diagonal.resize(problem.size());
  for (int a = 0; a < problem.num_contacts(); ++a) {
    const Eigen::Matrix3d& Waa = w.blocks[w.diagonal_block[a]].W;
    for (int i = 0; i < 3; ++i) {
      w.jacobian_diagonal[3 * a + i] =
          w.A[a](i, i) + sigma_ * w.B[a](i, i) + w.B[a].row(i).dot(Waa.col(i));
    }
  }
  if (use_global_) {
    FillGlobal();  // J is not formed
    return;
  }
  double* values = w.J.valuePtr();
  for (const Workspace::Block& block : w.blocks) {
    Eigen::Matrix3d value = w.B[block.a] * block.W;
    if (block.a == block.b) value += w.A[block.a] + sigma_ * w.B[block.a];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) values[block.positions[3 * i + j]] = value(i, j);
  }
}

// K's pattern, with each entry's place in its values (the triplets carry their own index).
void FrictionNewton::AnalyzeGlobal(const GlobalFrictionContactProblem& global) {
  Workspace& w = *work_;
  const int nc = global.num_contacts(), m = global.size();
  const int pieces = global.piece_begin(nc), blocks = global.num_blocks();
  std::vector<Eigen::Triplet<double>> triplets;
  const auto add = [&triplets](int row, int column) {
    triplets.emplace_back(row, column, static_cast<double>(triplets.size() + 1));
  };
  for (int a = 0; a < nc; ++a) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) add(3 * a + i, 3 * a + j);
  }
  w.piece_base.resize(pieces);
  for (int a = 0; a < nc; ++a) {
    for (int p = global.piece_begin(a); p < global.piece_begin(a + 1); ++p) {
      const int k = global.piece_block(p), b = global.block_size(k);
      const int rows = m + global.block_offset(k);
      w.piece_base[p] = static_cast<int>(triplets.size());
      for (int i = 0; i < 3; ++i)
        for (int c = 0; c < b; ++c) add(3 * a + i, rows + c);  // B_a H_p^T
      for (int c = 0; c < b; ++c)
        for (int j = 0; j < 3; ++j) add(rows + c, 3 * a + j);  // -H_p
    }
  }
  w.mass_base.resize(blocks);
  for (int k = 0; k < blocks; ++k) {
    const int b = global.block_size(k), rows = m + global.block_offset(k);
    w.mass_base[k] = static_cast<int>(triplets.size());
    for (int c = 0; c < b; ++c)
      for (int r = 0; r < b; ++r) add(rows + r, rows + c);
  }
  internal::FrictionNewtonSystem& K = w.global;
  const int n = m + global.num_dofs();
  K.matrix.resize(n, n);
  K.matrix.setFromTriplets(triplets.begin(), triplets.end());
  K.matrix.makeCompressed();
  w.global_positions.resize(triplets.size());
  for (int k = 0; k < static_cast<int>(K.matrix.nonZeros()); ++k) {
    w.global_positions[static_cast<size_t>(K.matrix.valuePtr()[k]) - 1] = k;
  }
  K.shift_positions.resize(m);
  for (int i = 0; i < m; ++i) K.shift_positions[i] = w.global_positions[9 * (i / 3) + 4 * (i % 3)];
  K.lu.analyzePattern(K.matrix);
  K.has_pivots = false;
  K.judge_by_solution = true;
  // With y scaled so, K's entries are of one order — B H^T y of the rho-scaled B W d, H d of
  // M y — for KLU's threshold pivoting. The scaling does not make K's rcond a measure of J's
  // (it stayed near 1e-15 where J's stood near 1e-10): SolveSystem judges K by its direction.
  w.inverse_root_mass.resize(global.num_dofs());
  for (int k = 0; k < blocks; ++k) {
    const int b = global.block_size(k);
    for (int r = 0; r < b; ++r) {
      w.inverse_root_mass[global.block_offset(k) + r] =
          1.0 / std::sqrt(global.mass_data(k)[r * b + r]);
    }
  }
  double largest_diagonal = 0.0;  // of W, the mean of 1 / rho
  for (int a = 0; a < nc; ++a) largest_diagonal += 1.0 / w.rho[a];
  w.velocity_scale = nc > 0 ? std::sqrt(largest_diagonal / nc) : 1.0;
}

// K's values at the iterate: A + sigma B from AssembleJacobian, H and M from the global form.
void FrictionNewton::FillGlobal() {
  Workspace& w = *work_;
  const GlobalFrictionContactProblem& global = *global_;
  const int nc = global.num_contacts();
  double* values = w.global.matrix.valuePtr();
  const int* position = w.global_positions.data();
  for (int a = 0; a < nc; ++a) {
    const Eigen::Matrix3d diagonal = w.A[a] + sigma_ * w.B[a];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) values[position[9 * a + 3 * i + j]] = diagonal(i, j);
    for (int p = global.piece_begin(a); p < global.piece_begin(a + 1); ++p) {
      const int k = global.piece_block(p), b = global.block_size(k);
      const Eigen::Map<const Eigen::MatrixXd> H(global.piece_data(p), b, 3);
      const double* scale = w.inverse_root_mass.data() + global.block_offset(k);
      const double t = w.velocity_scale;
      const int* at = position + w.piece_base[p];
      for (int i = 0; i < 3; ++i)
        for (int c = 0; c < b; ++c) values[*at++] = t * scale[c] * w.B[a].row(i).dot(H.row(c));
      for (int c = 0; c < b; ++c)
        for (int j = 0; j < 3; ++j) values[*at++] = -scale[c] / t * H(c, j);
    }
  }
  for (int k = 0; k < global.num_blocks(); ++k) {
    const int b = global.block_size(k);
    const double* mass = global.mass_data(k);
    const double* scale = w.inverse_root_mass.data() + global.block_offset(k);
    const int* at = position + w.mass_base[k];
    for (int c = 0; c < b; ++c)
      for (int r = 0; r < b; ++r) values[at[c * b + r]] = scale[r] * mass[c * b + r] * scale[c];
  }
}

const FrictionNewton::Summary& FrictionNewton::Solve(const FrictionContactProblem& problem,
                                                     Eigen::VectorXd* r) {
  static const Eigen::VectorXd kNoCenter;
  return SolveShifted(problem, 0.0, kNoCenter, r);
}

const FrictionNewton::Summary& FrictionNewton::Solve(const GlobalFrictionContactProblem& global,
                                                     const FrictionContactProblem& local,
                                                     Eigen::VectorXd* r) {
  static const Eigen::VectorXd kNoCenter;
  return SolveShifted(global, local, 0.0, kNoCenter, r);
}

const FrictionNewton::Summary& FrictionNewton::SolveShifted(
    const GlobalFrictionContactProblem& global, const FrictionContactProblem& local, double sigma,
    const Eigen::VectorXd& center, Eigen::VectorXd* r) {
  if (global.size() != local.size()) {
    ResetSummaryKeepingStorage(&summary_);
    summary_.status = Status::InvalidInput;
    summary_.message = "the global form has " + std::to_string(global.size()) +
                       " unknowns and the local form " + std::to_string(local.size());
    return summary_;
  }
  global_ = &global;
  SolveShifted(local, sigma, center, r);
  global_ = nullptr;
  return summary_;
}

const FrictionNewton::Summary& FrictionNewton::Solve(const GlobalFrictionContactProblem& problem,
                                                     Eigen::VectorXd* r) {
  problem.Reduce(&work_->reduced);
  return Solve(problem, work_->reduced, r);
}

// J d = -Phi into the workspace's direction, from J or, with the global form at hand, from K;
// where the matrix is singular (or singular to rounding, kSingularRcond), (J + eps I) d = -Phi
// with eps growing until it is not. False, with why in *stop, when no eps up to 1e3 x J's
// diagonal helps.
bool FrictionNewton::NewtonDirection(Summary* summary, std::string* stop) {
  Workspace& w = *work_;
  internal::FrictionNewtonSystem& s = use_global_ ? w.global : w.local;
  const int m = static_cast<int>(w.phi.size());
  s.rhs.setZero(s.matrix.rows());
  s.rhs.head(m) = -w.phi;
  s.jacobian_scale = std::max(w.jacobian_diagonal.cwiseAbs().maxCoeff(), 1.0);
  // A refactorization first where the last direction came from the unshifted matrix; where J
  // was singular, the next J likely is too (a face's sticking corners under fc-newton), and its
  // fresh factorization comes first, as it would without the kept pivots.
  bool solved = s.has_pivots && SolveSystem(&s, true);
  if (s.has_pivots) ++summary->factorizations;
  if (!solved) {
    ++summary->factorizations;
    solved = SolveSystem(&s, false);
  }
  s.has_pivots = solved && !s.judge_by_solution;
  if (!solved) {
    ++summary->regularized_steps;
    s.diagonal.resize(m);
    double* values = s.matrix.valuePtr();
    for (int i = 0; i < m; ++i) s.diagonal[i] = values[s.shift_positions[i]];
    const double scale = s.jacobian_scale;
    for (double eps = 1e-10 * scale; !solved && eps < 1e3 * scale; eps *= 100.0) {
      for (int i = 0; i < m; ++i) values[s.shift_positions[i]] = s.diagonal[i] + eps;
      s.lu.factorize(s.matrix);
      ++summary->factorizations;
      if (s.lu.info() != Eigen::Success) continue;
      s.solution = s.rhs;
      s.lu.solveInPlace(&s.solution);
      solved = s.solution.allFinite();
    }
  }
  if (solved) {
    w.direction = s.solution.head(m);
    return true;
  }
  const bool finite =
      Eigen::Map<const Eigen::VectorXd>(s.matrix.valuePtr(), s.matrix.nonZeros()).allFinite() &&
      w.phi.allFinite();
  *stop = finite ? "the Newton matrix stays singular with a regularization up to 1e3 x its "
                   "diagonal"
                 : "the Newton matrix or the function holds a non-finite value";
  return false;
}

// Non-monotone Armijo search on 1/2 ||Phi||^2 along the workspace's direction from r; the
// direction's slope is -||Phi||^2 = -2 merit when it solves the Newton equation. True with the
// point in the workspace's trial vectors.
bool FrictionNewton::LineSearch(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                                double merit, double reference, double* trial_merit) {
  Workspace& w = *work_;
  const double slope = -2.0 * merit;
  for (double step = 1.0; step >= 1e-10; step *= 0.5) {
    w.trial = r + step * w.direction;
    *trial_merit = Evaluate(problem, w.trial, &w.trial_u, &w.trial_phi);
    if (*trial_merit <= reference + 1e-4 * step * slope) return true;
  }
  return false;
}

void FrictionNewton::SetOutcome(const std::string& stop, bool timed_out, Summary* summary) const {
  // snprintf into a buffer, not a stream: the summary's message keeps its storage, so a solve
  // in a time-stepper's steady state allocates nothing here.
  char text[512];
  const int iteration = summary->iterations;
  const double error = summary->natural_residual, tolerance = options_.tolerance;
  if (error <= tolerance) {
    summary->status = Status::Converged;
    std::snprintf(text, sizeof(text), "FCLib error %g <= tolerance %g after %d Newton iterations",
                  error, tolerance, iteration);
  } else if (!stop.empty()) {
    summary->status = !std::isfinite(error) ? Status::NumericalFailure : Status::Failed;
    std::snprintf(text, sizeof(text), "%s (FCLib error %g > tolerance %g after %d iterations)",
                  stop.c_str(), error, tolerance, iteration);
  } else {
    summary->status = Status::MaxIterations;
    std::snprintf(text, sizeof(text), "FCLib error %g > tolerance %g after %d Newton iterations",
                  error, tolerance, iteration);
  }
  summary->message.assign(text);
  if (timed_out && summary->status == Status::MaxIterations) {
    std::snprintf(text, sizeof(text), " (time limit %g s reached)", options_.time_limit_seconds);
    summary->message.append(text);
  }
}

const FrictionNewton::Summary& FrictionNewton::SolveShifted(const FrictionContactProblem& problem,
                                                            double sigma,
                                                            const Eigen::VectorXd& center,
                                                            Eigen::VectorXd* r) {
  const auto start = Clock::now();
  ResetSummaryKeepingStorage(&summary_);
  Summary& summary = summary_;
  summary.solver = options_.function == Function::AlartCurnier ? "fc-newton" : "fc-newton-fb";
  summary.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary)) return summary;
  if (!(sigma >= 0.0) || !std::isfinite(sigma) ||
      (sigma > 0.0 && center.size() != problem.size())) {
    summary.status = Status::InvalidInput;
    summary.message = "the proximal shift needs sigma >= 0 and a center of the problem's size";
    return summary;
  }
  sigma_ = sigma;
  center_ = &center;
  Workspace& w = *work_;
  const int m = problem.size();
  if (!(options_.warm_start && r->size() == m && r->allFinite())) r->setZero(m);
  Prepare(problem);
  use_global_ = false;  // K where its LU promises less fill than J's (Options)
  if (global_ != nullptr && problem.num_contacts() >= options_.global_form_contacts) {
    AnalyzeGlobal(*global_);
    use_global_ =
        w.local.lu.predicted_fill() >= options_.global_form_fill * w.global.lu.predicted_fill();
    summary.global_form = use_global_;
  }
  w.local.has_pivots = false;  // a solve chooses its own pivots: a restored run repeats its solves
  // The error of the (shifted) problem at r, with u from Evaluate.
  const auto error_at = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& u) {
    return ComputeFrictionErrors(problem, x, u).fclib;
  };
  double merit = Evaluate(problem, *r, &w.u, &w.phi);
  double error = error_at(*r, w.u);
  double best_error = error;
  w.best = *r;
  std::vector<double>& merits = w.merits;
  merits.assign(1, merit);
  int iteration = 0;
  bool timed_out = false;
  std::string stop;
  while (!(error <= options_.tolerance) && iteration < options_.max_iterations) {
    if (!std::isfinite(merit)) {
      stop = "the merit function is not finite";
      break;
    }
    if (options_.time_limit_seconds > 0.0 &&
        internal::SecondsSince(start) > options_.time_limit_seconds) {
      timed_out = true;
      break;
    }
    ++iteration;
    AssembleJacobian(problem, *r, w.u, error);
    if (!NewtonDirection(&summary, &stop)) break;
    double trial_merit = kInf;
    const double reference = *std::max_element(merits.begin(), merits.end());
    if (!LineSearch(problem, *r, merit, reference, &trial_merit)) {
      ++summary.line_search_failures;
      stop = "the line search found no decrease of the merit " + internal::NumberText(merit);
      break;
    }
    r->swap(w.trial);
    w.u.swap(w.trial_u);
    w.phi.swap(w.trial_phi);
    merit = trial_merit;
    merits.push_back(merit);
    if (static_cast<int>(merits.size()) > options_.nonmonotone_memory) merits.erase(merits.begin());
    error = error_at(*r, w.u);
    if (error < best_error) {
      best_error = error;
      w.best = *r;
    }
  }
  *r = w.best;
  if (sigma_ > 0.0) {
    // The subproblem's error, as tested above.
    Evaluate(problem, *r, &w.u, &w.phi);
    summary.natural_residual = error_at(*r, w.u);
    summary.siconos_error = ComputeFrictionErrors(problem, *r, w.u).siconos;
  } else {
    problem.Velocity(*r, &w.u);
    DescribeFrictionPoint(problem, *r, w.u, &summary);
  }
  summary.iterations = iteration;
  SetOutcome(stop, timed_out, &summary);
  summary.wall_time_seconds = internal::SecondsSince(start);
  sigma_ = 0.0;
  center_ = nullptr;
  return summary;
}

bool FrictionProximalPoint::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_outer_iterations >= 1, "max_outer_iterations", max_outer_iterations,
               "must be >= 1")
      .Require(max_inner_iterations >= 1, "max_inner_iterations", max_inner_iterations,
               "must be >= 1")
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(sigma_scale > 0.0 && std::isfinite(sigma_scale), "sigma_scale", sigma_scale,
               "must be positive and finite")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Done(why);
}

FrictionProximalPoint::Summary FrictionProximalPoint::Solve(
    const GlobalFrictionContactProblem& global, const FrictionContactProblem& local,
    Eigen::VectorXd* r) {
  if (global.size() != local.size()) {
    Summary summary;
    summary.solver = options_.function == FrictionNewton::Function::AlartCurnier ? "fc-proximal"
                                                                                 : "fc-proximal-fb";
    summary.status = Status::InvalidInput;
    summary.message = "the global form has " + std::to_string(global.size()) +
                      " unknowns and the local form " + std::to_string(local.size());
    return summary;
  }
  global_ = &global;
  Summary summary = Solve(local, r);
  global_ = nullptr;
  return summary;
}

FrictionProximalPoint::Summary FrictionProximalPoint::Solve(const FrictionContactProblem& problem,
                                                            Eigen::VectorXd* r) {
  const auto start = Clock::now();
  Summary summary;
  summary.solver = options_.function == FrictionNewton::Function::AlartCurnier ? "fc-proximal"
                                                                               : "fc-proximal-fb";
  summary.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary)) return summary;
  const int m = problem.size();
  if (!(options_.warm_start && r->size() == m && r->allFinite())) r->setZero(m);
  double mean_diagonal = 0.0;
  for (int a = 0; a < problem.num_contacts(); ++a) {
    mean_diagonal += problem.DiagonalBlock(a).trace();
  }
  mean_diagonal = m > 0 && mean_diagonal > 0.0 ? mean_diagonal / m : 1.0;
  double error = FclibError(problem, *r);
  Eigen::VectorXd best = *r;
  double best_error = error;
  int outer = 0, inner_total = 0;
  bool timed_out = false;
  FrictionNewton::Options& inner = newton_.mutable_options();
  inner.max_iterations = options_.max_inner_iterations;
  inner.warm_start = true;
  inner.function = options_.function;
  // sigma adapts to the subproblems: it shrinks while they are solved in a few Newton
  // iterations (towards plain Newton steps) and grows when one is not (more regularization).
  double adapt = 1.0;
  int failed_at_cap = 0;  // consecutive steps at adapt's cap that failed and improved nothing
  ProximalStallWatch stall(error);
  bool stalled = false;
  while (!(error <= options_.tolerance) && outer < options_.max_outer_iterations &&
         std::isfinite(error)) {
    if (options_.time_limit_seconds > 0.0) {
      const double left = options_.time_limit_seconds - internal::SecondsSince(start);
      if (left <= 0.0) {
        timed_out = true;
        break;
      }
      inner.time_limit_seconds = left;
    }
    ++outer;
    const double sigma =
        options_.sigma_scale * adapt * mean_diagonal * std::min(1.0, std::sqrt(error));
    inner.tolerance = std::max(0.1 * options_.tolerance, 0.1 * error);
    center_ = *r;
    const FrictionNewton::Summary& step =
        global_ != nullptr ? newton_.SolveShifted(*global_, problem, sigma, center_, r)
                           : newton_.SolveShifted(problem, sigma, center_, r);
    inner_total += step.iterations;
    summary.factorizations += step.factorizations;
    const bool at_cap = adapt == kAdaptCap;
    if (!step.IsSolved()) {
      adapt = std::min(kAdaptCap, 10.0 * adapt);
    } else if (step.iterations <= 5) {
      adapt = std::max(1e-4, adapt / 3.0);
    }
    error = FclibError(problem, *r);
    const bool improved = error < best_error;
    if (improved) {
      best_error = error;
      best = *r;
    }
    // At the cap the regularization cannot grow: subproblems that keep failing there from
    // points no better than the best leave the method nothing to change (degenerate islands,
    // contacts at the stick-slip boundary, where 1000 such steps improved nothing).
    failed_at_cap = at_cap && !step.IsSolved() && !improved ? failed_at_cap + 1 : 0;
    if (failed_at_cap >= kFailuresAtCap) break;
    stalled = stall.Stalled(error, best_error);
    if (stalled) break;
  }
  *r = best;
  DescribeFrictionPoint(problem, *r, &summary);
  summary.iterations = inner_total;
  std::ostringstream os;
  if (summary.natural_residual <= options_.tolerance) {
    summary.status = Status::Converged;
    os << "FCLib error " << summary.natural_residual << " <= tolerance " << options_.tolerance;
  } else if (!std::isfinite(summary.natural_residual)) {
    summary.status = Status::NumericalFailure;
    os << "the iterate became non-finite";
  } else {
    summary.status = Status::MaxIterations;
    os << "FCLib error " << summary.natural_residual << " > tolerance " << options_.tolerance;
    if (timed_out) os << " (time limit " << options_.time_limit_seconds << " s reached)";
  }
  os << " after " << outer << " proximal steps (" << inner_total << " Newton iterations)";
  if (failed_at_cap >= kFailuresAtCap) {
    os << " (stopped: " << kFailuresAtCap
       << " subproblems in a row failed at the largest regularization without improving the "
          "best point)";
  }
  if (stalled) {
    os << " (stopped: neither the error nor the best error moved by "
       << 100.0 * kProximalStallChange << " % of the best in " << kProximalStallWindow
       << " proximal steps)";
  }
  summary.message = os.str();
  summary.wall_time_seconds = internal::SecondsSince(start);
  return summary;
}

}  // namespace ncpkit
