#include "solvers/mcp/semismooth_newton.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/linalg/internal/dense_lu.h"
#include "solvers/linalg/internal/normal_equations.h"
#include "solvers/linalg/internal/sparse_assembly.h"
#include "solvers/linalg/sparse_lu.h"
#include "solvers/mcp/equilibration.h"

namespace ncpkit {
namespace internal {

// H = D_a + D_b J with the pattern of J plus the diagonal, kept between solves while J's
// pattern is unchanged.
class NewtonMatrix {
 public:
  bool SamePattern(const Eigen::SparseMatrix<double>& J) const {
    return J.rows() == rows_ && J.nonZeros() == nnz_ &&
           std::equal(J.outerIndexPtr(), J.outerIndexPtr() + J.cols() + 1, outer_.begin()) &&
           std::equal(J.innerIndexPtr(), J.innerIndexPtr() + J.nonZeros(), inner_.begin());
  }
  void BuildPattern(const Eigen::SparseMatrix<double>& J) {
    const int n = static_cast<int>(J.rows());
    rows_ = n;
    nnz_ = J.nonZeros();
    outer_.assign(J.outerIndexPtr(), J.outerIndexPtr() + n + 1);
    inner_.assign(J.innerIndexPtr(), J.innerIndexPtr() + J.nonZeros());
    j_slot_.resize(J.nonZeros());
    diagonal_slot_.resize(n);
    std::vector<PatternEntry> entries(J.nonZeros() + n), sorted;
    size_t count = 0;
    const auto add = [&](int row, int column, int* position) {
      PatternEntry& e = entries[count++];  // (field by field, see ProblemBuilder::BuildPattern)
      e.row = row;
      e.column = column;
      e.position = position;
    };
    for (int j = 0; j < n; ++j) {
      add(j, j, &diagonal_slot_[j]);
      for (int k = J.outerIndexPtr()[j]; k < J.outerIndexPtr()[j + 1]; ++k) {
        add(J.innerIndexPtr()[k], j, &j_slot_[k]);
      }
    }
    CompressPattern(n, n, entries, &sorted, &H_);
  }
  // H = diag(D_b) J + diag(D_a) + shift I.
  void Fill(const Eigen::SparseMatrix<double>& J, const Eigen::VectorXd& da,
            const Eigen::VectorXd& db, double shift) {
    double* h = H_.valuePtr();
    std::fill(h, h + H_.nonZeros(), 0.0);
    for (int j = 0; j < rows_; ++j) {
      for (int k = J.outerIndexPtr()[j]; k < J.outerIndexPtr()[j + 1]; ++k) {
        h[j_slot_[k]] += db[J.innerIndexPtr()[k]] * J.valuePtr()[k];
      }
      h[diagonal_slot_[j]] += da[j] + shift;
    }
  }
  const Eigen::SparseMatrix<double>& H() const { return H_; }
  // Builds the pattern if J's has changed; true if it had.
  bool Prepare(const Eigen::SparseMatrix<double>& J) {
    if (SamePattern(J)) return false;
    BuildPattern(J);
    return true;
  }

 private:
  int rows_ = -1;
  Eigen::Index nnz_ = -1;
  std::vector<int> outer_, inner_, j_slot_, diagonal_slot_;
  Eigen::SparseMatrix<double> H_;
};

}  // namespace internal

namespace {

// Phi and the diagonals D_a, D_b of the generalized Jacobian at (z, F).
void EvaluatePhi(const FischerBurmeisterNewton::Options& options, const Eigen::VectorXd& z,
                 const Eigen::VectorXd& F, const Eigen::VectorXd& l, const Eigen::VectorXd& u,
                 Eigen::VectorXd* phi, Eigen::VectorXd* da, Eigen::VectorXd* db) {
  const Eigen::Index n = z.size();
  phi->resize(n);
  if (da) da->resize(n);
  if (db) db->resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const NcpComponent c =
        EvaluateNcpComponent(options.ncp_function, options.penalty_lambda, z[i], F[i], l[i], u[i]);
    (*phi)[i] = c.phi;
    if (da) (*da)[i] = c.da;
    if (db) (*db)[i] = c.db;
  }
}

// The structural nonzeros of H = D_a + D_b J: J's and the missing diagonal entries.
Eigen::Index NewtonNonZeros(const Eigen::SparseMatrix<double>& J) {
  Eigen::Index missing = 0;
  for (int j = 0; j < J.cols(); ++j) {
    const int* begin = J.innerIndexPtr() + J.outerIndexPtr()[j];
    const int* end = J.innerIndexPtr() + J.outerIndexPtr()[j + 1];
    missing += std::find(begin, end, j) == end ? 1 : 0;
  }
  return J.nonZeros() + missing;
}

// H = diag(D_b) J + diag(D_a) + shift I into a dense matrix, and the merit's gradient H^T Phi
// of the unshifted H. H is the sparse path's (NewtonMatrix::Fill) bit for bit: *from_j keeps
// each diagonal entry before D_a, to which D_a + shift is added in one go as there. The
// gradient is a dense product, vectorized: the sparse one's sums to rounding.
void FillDenseNewton(const Eigen::SparseMatrix<double>& J, const Eigen::VectorXd& da,
                     const Eigen::VectorXd& db, const Eigen::VectorXd& phi, double shift,
                     Eigen::MatrixXd* H, Eigen::VectorXd* gradient, Eigen::VectorXd* from_j) {
  const int n = static_cast<int>(J.rows());
  H->setZero(n, n);
  from_j->resize(n);
  for (int j = 0; j < n; ++j) {
    double* column = H->data() + static_cast<Eigen::Index>(j) * n;
    for (int k = J.outerIndexPtr()[j]; k < J.outerIndexPtr()[j + 1]; ++k) {
      column[J.innerIndexPtr()[k]] += db[J.innerIndexPtr()[k]] * J.valuePtr()[k];
    }
    (*from_j)[j] = column[j];
    column[j] += da[j];
  }
  gradient->noalias() = H->transpose() * phi;
  if (shift != 0.0) {
    for (int j = 0; j < n; ++j) (*H)(j, j) = (*from_j)[j] + (da[j] + shift);
  }
}

}  // namespace

bool FischerBurmeisterNewton::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(tolerance > 0.0, "tolerance", tolerance, "must be > 0")
      .Require(max_iterations >= 1, "max_iterations", max_iterations, "must be >= 1")
      .Require(start_acceptance > 0.0 && start_acceptance <= 1.0, "start_acceptance",
               start_acceptance, "must be in (0, 1]")
      .Require(penalty_lambda > 0.0 && penalty_lambda <= 1.0, "penalty_lambda", penalty_lambda,
               "must be in (0, 1]")
      .Require(armijo_sigma > 0.0 && armijo_sigma < 0.5, "armijo_sigma", armijo_sigma,
               "must be in (0, 0.5)")
      .Require(backtrack_factor > 0.0 && backtrack_factor < 1.0, "backtrack_factor",
               backtrack_factor, "must be in (0, 1)")
      .Require(max_line_search_steps >= 1, "max_line_search_steps", max_line_search_steps,
               "must be >= 1")
      .Require(nonmonotone_memory >= 1, "nonmonotone_memory", nonmonotone_memory, "must be >= 1")
      .Require(stall_window >= 2, "stall_window", stall_window, "must be >= 2")
      .Require(lm_stall_window >= 0, "lm_stall_window", lm_stall_window, "must be >= 0")
      .Require(stall_factor > 0.0 && stall_factor < 1.0, "stall_factor", stall_factor,
               "must be in (0, 1)")
      .Require(dense_threshold >= 0, "dense_threshold", dense_threshold, "must be >= 0")
      .Require(dense_pattern_max_size >= 0, "dense_pattern_max_size", dense_pattern_max_size,
               "must be >= 0")
      .Require(dense_pattern_fill >= 0.0 && dense_pattern_fill <= 1.0, "dense_pattern_fill",
               dense_pattern_fill, "must be in [0, 1]")
      .Require(regularization >= 0.0 && std::isfinite(regularization), "regularization",
               regularization, "must be finite and >= 0")
      .Require(equilibration_spread > 1.0, "equilibration_spread", equilibration_spread,
               "must be > 1")
      .Require(chord_contraction > 0.0 && chord_contraction < 1.0, "chord_contraction",
               chord_contraction, "must be in (0, 1)")
      .Require(max_chord_steps >= 0, "max_chord_steps", max_chord_steps, "must be >= 0")
      .Require(active_set_restarts >= 0, "active_set_restarts", active_set_restarts, "must be >= 0")
      .Done(why);
}

std::string SemismoothNewtonName(const FischerBurmeisterNewton::Options& options) {
  switch (options.ncp_function) {
    case NcpFunction::FischerBurmeister:
      return options.linear_solver == FischerBurmeisterNewton::LinearSolver::Dense
                 ? "fb-newton-dense"
                 : "fb-newton";
    case NcpFunction::PenalizedFischerBurmeister:
      return "penalized-fb";
    case NcpFunction::MinMap:
      return "minmap-newton";
  }
  return "newton";
}

std::string FischerBurmeisterNewton::Summary::FullReport() const {
  std::ostringstream os;
  os << CommonFullReport(*this) << "line search steps " << line_search_steps << "\n"
     << "LM steps          " << levenberg_marquardt_steps << "\n"
     << "regularized steps " << regularized_steps << "\n"
     << "linear algebra    " << (dense_linear_algebra ? "dense LU" : "sparse KLU") << " ("
     << symbolic_analyses << " symbolic analyses)\n";
  if (chord_steps > 0) os << "chord steps       " << chord_steps << "\n";
  if (active_set_restarts > 0) os << "active-set restarts " << active_set_restarts << "\n";
  if (skipped_newton_directions > 0) {
    os << "skipped Newton    " << skipped_newton_directions << " directions"
       << (ran_newton_first_again ? " (then run again from the start without skipping)" : "")
       << "\n";
  }
  if (equilibrated) {
    os << "equilibrated      yes (" << polish_iterations
       << " iterations on the original problem after)\n";
  }
  if (!diagnostic.empty()) os << "diagnostic        " << diagnostic << "\n";
  for (const IterationRecord& r : history) {
    char line[160];
    std::snprintf(line, sizeof(line), "  it %3d  residual %.3e  merit %.3e  t %.3g  ls %d%s\n",
                  r.iteration, r.natural_residual, r.merit, r.step_length, r.line_search_steps,
                  r.levenberg_marquardt ? "  LM"
                  : r.regularized       ? "  regularized"
                                        : "");
    os << line;
  }
  return os.str();
}

namespace internal {

// Everything Solve() needs per iteration, kept between solves: once the problem's size and
// the Jacobian's pattern settle, a solve allocates nothing (the Levenberg-Marquardt fallback
// excepted).
struct NewtonWorkspace {
  Eigen::VectorXd F, phi, da, db, z_trial, F_trial, phi_trial, d, gradient, acceptable_start;
  Eigen::SparseMatrix<double> J;
  bool have_jacobian = false;         // J is the Jacobian at the current point
  std::vector<double> residuals;      // natural residual per iteration
  std::vector<double> recent_merits;  // the last nonmonotone_memory merits, oldest first
  double merit = 0.0;
  double start_residual = 0.0;
  double residual = 0.0;    // natural residual at the current point
  bool keep_start = false;  // acceptable_start met the tolerance (see start_acceptance)
  bool stalled = false;     // the last run of the iteration stopped by the stall test
  int lm_streak = 0;        // consecutive iterations that took the Levenberg-Marquardt step
  // Options::skip_failed_newton: whether this solve skips, and whether the Newton direction
  // has failed in this run.
  bool skip_newton = false;
  bool newton_failed = false;
  Eigen::MatrixXd dense_h;
  Eigen::VectorXd from_j;  // FillDenseNewton's scratch
  internal::DenseLu dense_lu;
  // Which factorization holds the Newton matrix last factorized, for chord steps
  // (Options::reuse_factorization): none, dense_lu, or the KLU object.
  enum class Factored { None, Dense, Klu } factored = Factored::None;
  Eigen::SparseMatrix<double> factored_h;      // the matrix in KLU's factorization (reuse only)
  internal::NormalEquations normal_equations;  // the Levenberg-Marquardt system
  // Equilibration: the Jacobian's row and column norms, the scaling, the scaled point.
  Eigen::VectorXd row_norms, col_norms, row_scale, col_scale, scaled_z, unscaled_start;
  Eigen::VectorXd solve_start;  // Solve's start, for the run without skipping
};

}  // namespace internal

FischerBurmeisterNewton::FischerBurmeisterNewton()
    : klu_(new KluLu),
      newton_matrix_(new internal::NewtonMatrix),
      workspace_(new internal::NewtonWorkspace) {}
FischerBurmeisterNewton::FischerBurmeisterNewton(const Options& options)
    : options_(options),
      klu_(new KluLu),
      newton_matrix_(new internal::NewtonMatrix),
      workspace_(new internal::NewtonWorkspace) {}
FischerBurmeisterNewton::~FischerBurmeisterNewton() = default;

namespace {

std::string Scientific(const char* before, double value, const char* after = "") {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3e", value);
  return before + std::string(buffer) + after;
}

}  // namespace

// Validates the problem, projects the start as the options ask and evaluates F and Phi there.
bool FischerBurmeisterNewton::Start(const MixedComplementarityProblem& problem, Eigen::VectorXd* z,
                                    Summary* summary) {
  internal::NewtonWorkspace& ws = *workspace_;
  try {
    ValidateBounds(problem);
  } catch (const std::invalid_argument& e) {
    summary->status = Status::InvalidInput;
    summary->message = e.what();
    return false;
  }
  const int n = problem.size();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  if (z->size() != n || !z->allFinite()) problem.DefaultStart(z);
  *z = z->cwiseMax(l).cwiseMin(u);
  ws.F.resize(n);
  ws.z_trial.resize(n);
  ws.F_trial.resize(n);
  ws.have_jacobian = false;
  if (!problem.Evaluate(*z, &ws.F, nullptr)) {
    summary->status = Status::NumericalFailure;
    summary->message = "F cannot be evaluated at the start point";
    return false;
  }
  EvaluatePhi(options_, *z, ws.F, l, u, &ws.phi, &ws.da, &ws.db);
  ws.merit = 0.5 * ws.phi.squaredNorm();
  ws.recent_merits.reserve(options_.nonmonotone_memory + 1);
  ws.recent_merits.assign(1, ws.merit);
  ws.residuals.reserve(std::min(options_.max_iterations + 1, 1000));  // grows in longer solves
  ws.residuals.clear();
  ws.lm_streak = 0;
  ws.newton_failed = false;
  // The start, kept while it meets the tolerance but not start_acceptance * tolerance.
  ws.start_residual = natural_residual(*z, ws.F, l, u);
  ws.residual = ws.start_residual;
  ws.keep_start = ws.start_residual <= options_.tolerance &&
                  ws.start_residual > options_.start_acceptance * options_.tolerance;
  if (ws.keep_start) ws.acceptable_start = *z;
  return true;
}

// Convergence, the iteration cap and stalling; true if the iteration stops here.
bool FischerBurmeisterNewton::Stops(int iteration, Summary* summary) {
  const internal::NewtonWorkspace& ws = *workspace_;
  const double threshold =
      iteration == 0 ? options_.start_acceptance * options_.tolerance : options_.tolerance;
  if (summary->natural_residual <= threshold) {
    summary->status = Status::Converged;
    return true;
  }
  if (iteration >= options_.max_iterations) {
    summary->status = Status::MaxIterations;
    summary->message = Scientific("natural residual ", summary->natural_residual) +
                       Scientific(" > tolerance ", options_.tolerance) + " after " +
                       std::to_string(iteration) + " iterations";
    return true;
  }
  // Over the whole window, or over the last Levenberg-Marquardt steps taken one after another.
  const int window = options_.stall_window;
  const int lm_window = options_.lm_stall_window;
  const bool lm_crawl =
      lm_window > 0 && ws.lm_streak >= lm_window && iteration >= lm_window &&
      summary->natural_residual > options_.stall_factor * ws.residuals[iteration - lm_window];
  if (lm_crawl ||
      (iteration >= window &&
       summary->natural_residual > options_.stall_factor * ws.residuals[iteration - window])) {
    const int over = lm_crawl ? lm_window : window;
    std::ostringstream os;
    os.precision(3);
    os << "stalled: natural residual " << std::scientific << summary->natural_residual
       << " fell by less than a factor " << 1.0 / options_.stall_factor << " over the last " << over
       << (lm_crawl ? " Levenberg-Marquardt steps" : " iterations");
    summary->status = Status::Failed;
    summary->message = os.str();
    workspace_->stalled = true;
    return true;
  }
  return false;
}

// Auto: whether the Newton matrix of J is small and full enough for the dense LU (its
// nonzeros counted only then).
bool FischerBurmeisterNewton::DensePattern(const Eigen::SparseMatrix<double>& J) const {
  if (options_.linear_solver != LinearSolver::Auto || J.rows() > options_.dense_pattern_max_size) {
    return false;
  }
  const double n = static_cast<double>(J.rows());
  return static_cast<double>(NewtonNonZeros(J)) >= options_.dense_pattern_fill * n * n;
}

// The Newton direction (H + shift I) d = -Phi, with H = D_a + D_b J, and the merit's gradient
// H^T Phi (of the unshifted H). False (with the summary's status set) if the Jacobian cannot be
// evaluated; *have_direction says whether d is a usable descent direction.
bool FischerBurmeisterNewton::NewtonDirection(const MixedComplementarityProblem& problem,
                                              const Eigen::VectorXd& z, bool dense, double shift,
                                              Summary* summary, bool* have_direction) {
  internal::NewtonWorkspace& ws = *workspace_;
  *have_direction = false;
  if (!ws.have_jacobian) {
    if (!problem.Evaluate(z, &ws.F, &ws.J)) {
      summary->status = Status::NumericalFailure;
      summary->message = "the Jacobian cannot be evaluated at the current point";
      return false;
    }
    ws.have_jacobian = true;
  }
  if (dense || DensePattern(ws.J)) {
    summary->dense_linear_algebra = true;
    FillDenseNewton(ws.J, ws.da, ws.db, ws.phi, shift, &ws.dense_h, &ws.gradient, &ws.from_j);
    // Taken as singular when a pivot is at most 1e-14 of the matrix's L1 norm: a cheap stand-in
    // for a condition estimate (which cost two thirds of the factorization at n = 24), and the
    // elimination stops there (a separated face pair's contact points, which any points of the
    // facing features solve, leave a zero pivot a third of the way through); a useless
    // direction is caught by the finiteness and descent tests below.
    const bool regular = ws.dense_lu.ComputeRegularInPlace(&ws.dense_h, 1e-14);
    ++summary->factorizations;
    ws.factored = regular ? internal::NewtonWorkspace::Factored::Dense
                          : internal::NewtonWorkspace::Factored::None;
    if (regular) {
      Eigen::VectorXd& rhs = ws.dense_lu.Scratch(0);
      rhs = -ws.phi;
      ws.dense_lu.Solve(rhs, &ws.d);
      *have_direction = ws.d.allFinite();
    }
  } else {
    internal::NewtonMatrix& newton = *newton_matrix_;
    if (newton.Prepare(ws.J)) klu_analyzed_ = false;
    newton.Fill(ws.J, ws.da, ws.db, 0.0);
    const Eigen::SparseMatrix<double>& H = newton.H();
    ws.gradient.noalias() = H.transpose() * ws.phi;
    if (shift > 0.0) newton.Fill(ws.J, ws.da, ws.db, shift);
    if (!klu_analyzed_) {
      klu_->analyzePattern(H);
      ++summary->symbolic_analyses;
      klu_analyzed_ = klu_->info() == Eigen::Success;
    }
    if (klu_analyzed_) {
      klu_->factorize(H);
      ++summary->factorizations;
      if (options_.reuse_factorization) ws.factored_h = H;
      ws.factored = klu_->info() == Eigen::Success ? internal::NewtonWorkspace::Factored::Klu
                                                   : internal::NewtonWorkspace::Factored::None;
      if (klu_->info() == Eigen::Success) {
        ws.d = -ws.phi;
        klu_->solveInPlace(&ws.d);
        *have_direction = ws.d.allFinite();
      }
    }
  }
  const double dnorm = *have_direction ? ws.d.norm() : 0.0;
  if (*have_direction &&
      !(ws.gradient.dot(ws.d) <= -options_.descent_rho * std::pow(dnorm, options_.descent_p))) {
    *have_direction = false;
  }
  return true;
}

// The Levenberg-Marquardt direction (H^T H + mu I) d = -H^T Phi, mu tied to the residual.
bool FischerBurmeisterNewton::LevenbergMarquardtDirection(Summary* summary) {
  internal::NewtonWorkspace& ws = *workspace_;
  if (newton_matrix_->Prepare(ws.J)) klu_analyzed_ = false;
  newton_matrix_->Fill(ws.J, ws.da, ws.db, 0.0);  // (a regularized attempt shifted it)
  const Eigen::SparseMatrix<double>& H = newton_matrix_->H();
  const double mu = std::max(1e-12, std::min(1.0, std::sqrt(2.0 * ws.merit)));
  ++summary->factorizations;
  if (!ws.normal_equations.Factorize(H, mu)) return false;
  ws.d = ws.normal_equations.Solve(-ws.gradient);
  if (!ws.d.allFinite()) return false;
  ++summary->levenberg_marquardt_steps;
  return true;
}

// Armijo backtracking along d (projected onto the box first when the options ask), against the
// largest of the recent merits; the accepted point is left in z_trial / F_trial.
bool FischerBurmeisterNewton::Backtrack(const MixedComplementarityProblem& problem,
                                        const Eigen::VectorXd& z, Summary* summary,
                                        IterationRecord* record) {
  internal::NewtonWorkspace& ws = *workspace_;
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  const double reference = *std::max_element(ws.recent_merits.begin(), ws.recent_merits.end());
  const double slope = ws.gradient.dot(ws.d);
  double t = 1.0;
  for (int projected = options_.project_onto_bounds ? 1 : 0; projected >= 0; --projected) {
    t = 1.0;
    for (int step = 0; step < options_.max_line_search_steps;
         ++step, t *= options_.backtrack_factor) {
      if (step > 0) ++summary->line_search_steps;
      ++record->line_search_steps;
      ws.z_trial = z + t * ws.d;
      if (projected) ws.z_trial = ws.z_trial.cwiseMax(l).cwiseMin(u);
      if (!problem.Evaluate(ws.z_trial, &ws.F_trial, nullptr)) continue;  // step too long
      EvaluatePhi(options_, ws.z_trial, ws.F_trial, l, u, &ws.phi_trial, nullptr, nullptr);
      const double trial_merit = 0.5 * ws.phi_trial.squaredNorm();
      if (std::isfinite(trial_merit) &&
          trial_merit <= reference + options_.armijo_sigma * t * slope) {
        record->step_length = t;
        return true;
      }
    }
  }
  record->step_length = 0.0;
  return false;
}

// The direction of H + shift I (shift 0: the Newton direction) and the line search along it,
// *accepted if it found a point. False (status set) if the Jacobian cannot be evaluated.
bool FischerBurmeisterNewton::TryDirection(const MixedComplementarityProblem& problem,
                                           const Eigen::VectorXd& z, bool dense, double shift,
                                           Summary* summary, IterationRecord* record,
                                           bool* accepted) {
  bool have_direction = false;
  if (!NewtonDirection(problem, z, dense, shift, summary, &have_direction)) return false;
  if (!have_direction) return true;
  record->regularized = shift > 0.0;
  if (shift > 0.0) ++summary->regularized_steps;
  *accepted = Backtrack(problem, z, summary, record);
  return true;
}

// One iteration after the stopping tests: direction, line search, the new point. False when
// the iteration cannot continue (the summary says why).
bool FischerBurmeisterNewton::Iterate(const MixedComplementarityProblem& problem,
                                      Eigen::VectorXd* z, bool dense, int iteration,
                                      Summary* summary) {
  internal::NewtonWorkspace& ws = *workspace_;
  IterationRecord record;
  record.iteration = iteration + 1;
  // The Newton direction (unless it failed earlier in the run and Options::skip_failed_newton
  // says so), then the regularized one, then Levenberg-Marquardt.
  const double shift = options_.regularization * std::min(1.0, std::sqrt(2.0 * ws.merit));
  bool accepted = false;
  if (ws.skip_newton && ws.newton_failed && shift > 0.0) {
    ++summary->skipped_newton_directions;
  } else {
    if (!TryDirection(problem, *z, dense, 0.0, summary, &record, &accepted)) return false;
    ws.newton_failed = !accepted;
  }
  if (!accepted && shift > 0.0 &&
      !TryDirection(problem, *z, dense, shift, summary, &record, &accepted)) {
    return false;
  }
  if (!accepted && LevenbergMarquardtDirection(summary)) {
    record.regularized = false;
    record.levenberg_marquardt = true;
    accepted = Backtrack(problem, *z, summary, &record);
  }
  ws.lm_streak = accepted && record.levenberg_marquardt ? ws.lm_streak + 1 : 0;
  if (!accepted) {
    std::ostringstream os;
    os.precision(3);
    os << "line search failed at natural residual " << std::scientific << summary->natural_residual
       << " (merit " << ws.merit << ", |grad merit| " << ws.gradient.norm()
       << "): a stationary point of the merit function that is not a "
       << "solution";
    summary->status = Status::Failed;
    summary->message = os.str();
    return false;
  }
  *z = ws.z_trial;
  ws.F = ws.F_trial;
  ws.have_jacobian = false;
  EvaluatePhi(options_, *z, ws.F, problem.lower(), problem.upper(), &ws.phi, &ws.da, &ws.db);
  ws.merit = 0.5 * ws.phi.squaredNorm();
  ws.recent_merits.push_back(ws.merit);
  if (static_cast<int>(ws.recent_merits.size()) > options_.nonmonotone_memory) {
    ws.recent_merits.erase(ws.recent_merits.begin());
  }
  record.merit = ws.merit;
  record.natural_residual = natural_residual(*z, ws.F, problem.lower(), problem.upper());
  if (options_.record_history) summary->history.push_back(record);
  return true;
}

// Rate diagnostic: the last four ratios of successive natural residuals all in [0.1, 0.9]
// and within a factor 2 of each other mean linear convergence, the mark of a singular
// generalized Jacobian at a degenerate solution (superlinear ratios keep shrinking).
void FischerBurmeisterNewton::DiagnoseRate(Summary* summary) const {
  const std::vector<double>& residuals = workspace_->residuals;
  const int count = static_cast<int>(residuals.size());
  if (count < 5) return;
  double low = kInf, high = 0.0, sum = 0.0;
  for (int k = count - 4; k < count; ++k) {
    const double ratio = residuals[k - 1] > 0.0 ? residuals[k] / residuals[k - 1] : 0.0;
    low = std::min(low, ratio);
    high = std::max(high, ratio);
    sum += ratio;
  }
  summary->observed_rate = sum / 4.0;
  if (low >= 0.1 && high <= 0.9 && high <= 2.0 * low) {
    std::ostringstream os;
    os.precision(2);
    os << "linear rate near a degenerate solution: the natural residual shrinks by about "
       << summary->observed_rate << " per iteration (singular Jacobian at the solution)";
    summary->diagnostic = os.str();
    if (summary->status != Status::Converged) summary->message += "; " + summary->diagnostic;
  }
}

// Evaluates the Jacobian at the start (kept for the first iteration) and says whether the
// options ask for equilibration there. False (status set) if it cannot be evaluated.
bool FischerBurmeisterNewton::CheckScaling(const MixedComplementarityProblem& problem,
                                           const Eigen::VectorXd& z, Summary* summary,
                                           bool* scale) {
  internal::NewtonWorkspace& ws = *workspace_;
  if (!problem.Evaluate(z, &ws.F, &ws.J)) {
    summary->status = Status::NumericalFailure;
    summary->message = "the Jacobian cannot be evaluated at the start point";
    return false;
  }
  ws.have_jacobian = true;
  *scale = options_.equilibration == Equilibration::Always ||
           EquilibrationSpread(ws.J, &ws.row_norms, &ws.col_norms) > options_.equilibration_spread;
  return true;
}

namespace {

void AddCounts(const FischerBurmeisterNewton::Summary& part,
               FischerBurmeisterNewton::Summary* total) {
  total->iterations += part.iterations;
  total->factorizations += part.factorizations;
  total->line_search_steps += part.line_search_steps;
  total->levenberg_marquardt_steps += part.levenberg_marquardt_steps;
  total->regularized_steps += part.regularized_steps;
  total->symbolic_analyses += part.symbolic_analyses;
  total->dense_linear_algebra = part.dense_linear_algebra;
  total->observed_rate = part.observed_rate;
  total->diagnostic = part.diagnostic;
  total->history.insert(total->history.end(), part.history.begin(), part.history.end());
  total->status = part.status;
  total->message = part.message;
}

}  // namespace

// Newton on the equilibrated problem from z / c (the Jacobian at z is in the workspace), then,
// if C y misses the tolerance in the original measure, on the original problem from there;
// if that fails too, on the original problem from the start, keeping the better outcome.
void FischerBurmeisterNewton::SolveEquilibrated(const MixedComplementarityProblem& problem,
                                                Eigen::VectorXd* z, Summary* summary) {
  internal::NewtonWorkspace& ws = *workspace_;
  ws.unscaled_start = *z;
  RuizEquilibration(ws.J, &ws.row_scale, &ws.col_scale);
  if (!unscaled_) unscaled_ = std::make_unique<FischerBurmeisterNewton>();
  unscaled_->options_ = options_;
  unscaled_->options_.equilibration = Equilibration::Off;
  unscaled_->options_.reuse_factorization = false;  // (its problem is rescaled every time)
  const ScaledMcp scaled(problem, ws.row_scale, ws.col_scale);
  ws.scaled_z = z->cwiseQuotient(ws.col_scale);
  AddCounts(unscaled_->Solve(scaled, &ws.scaled_z), summary);
  summary->equilibrated = true;
  const bool scaled_converged = summary->status == Status::Converged;
  *z = ws.scaled_z.cwiseProduct(ws.col_scale);
  summary->natural_residual = natural_residual(problem, *z);
  if (summary->natural_residual <= options_.tolerance) {
    summary->status = Status::Converged;
    summary->message.clear();
    return;
  }
  if (scaled_converged) {
    const Summary polish = unscaled_->Solve(problem, z);
    AddCounts(polish, summary);
    summary->polish_iterations = polish.iterations;
    summary->natural_residual = polish.natural_residual;
    if (polish.IsSolved()) return;
    summary->message =
        "the equilibrated problem converged, the original from its solution did "
        "not: " +
        summary->message;
  } else {
    summary->message = "equilibrated problem: " + summary->message;
  }
  // The unscaled iteration from the start, as if equilibration were off.
  ws.scaled_z = ws.unscaled_start;
  const Summary plain = unscaled_->Solve(problem, &ws.scaled_z);
  const std::string scaled_message = summary->message;
  const double scaled_residual = summary->natural_residual;
  AddCounts(plain, summary);
  if (plain.IsSolved() || plain.natural_residual < scaled_residual) {
    *z = ws.scaled_z;
    summary->natural_residual = plain.natural_residual;
    summary->equilibrated = false;  // the answer is the unscaled iteration's
    if (!plain.IsSolved()) summary->message = scaled_message + "; unscaled: " + plain.message;
  } else {
    summary->status = Status::Failed;
    summary->message = scaled_message + "; unscaled from the start: " + plain.message;
  }
}

// Chord steps: z <- z + d with H_0 d = -Phi(z), H_0 the Newton matrix factorized last (in an
// earlier Solve), kept while each shrinks |Phi| by at least chord_contraction and until the
// natural residual reaches what an accepted start needs (start_acceptance * tolerance). A
// rejected step is discarded: Newton goes on from the last accepted point.
void FischerBurmeisterNewton::ChordSteps(const MixedComplementarityProblem& problem,
                                         Eigen::VectorXd* z, Summary* summary) {
  using Factored = internal::NewtonWorkspace::Factored;
  internal::NewtonWorkspace& ws = *workspace_;
  const int n = problem.size();
  const bool dense = ws.factored == Factored::Dense && ws.dense_lu.rows() == n;
  const bool sparse = ws.factored == Factored::Klu && ws.factored_h.rows() == n;
  if (!dense && !sparse) return;
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  const double target = options_.start_acceptance * options_.tolerance;
  double phi_norm = ws.phi.norm();
  bool moved = false;
  const int most = std::min(options_.max_chord_steps, options_.max_iterations);
  for (int k = 0; k < most && ws.residual > target; ++k) {
    ws.residuals.push_back(ws.residual);
    if (dense) {
      Eigen::VectorXd& rhs = ws.dense_lu.Scratch(0);
      rhs = -ws.phi;
      ws.dense_lu.Solve(rhs, &ws.d);
    } else {
      ws.d = -ws.phi;
      klu_->solveInPlace(&ws.d);
    }
    if (!ws.d.allFinite()) break;
    ws.z_trial = *z + ws.d;
    if (options_.project_onto_bounds) ws.z_trial = ws.z_trial.cwiseMax(l).cwiseMin(u);
    if (!problem.Evaluate(ws.z_trial, &ws.F_trial, nullptr)) break;
    EvaluatePhi(options_, ws.z_trial, ws.F_trial, l, u, &ws.phi_trial, nullptr, nullptr);
    const double trial_norm = ws.phi_trial.norm();
    if (!(trial_norm <= options_.chord_contraction * phi_norm)) break;
    *z = ws.z_trial;
    ws.F = ws.F_trial;
    ws.phi = ws.phi_trial;
    phi_norm = trial_norm;
    ws.residual = natural_residual(*z, ws.F, l, u);
    ++summary->chord_steps;
    moved = true;
  }
  ws.residuals.resize(summary->chord_steps);  // (a rejected step's entry goes)
  if (!moved) return;
  EvaluatePhi(options_, *z, ws.F, l, u, &ws.phi, &ws.da, &ws.db);
  ws.merit = 0.5 * ws.phi.squaredNorm();
  ws.recent_merits.assign(1, ws.merit);
  ws.have_jacobian = false;
}

namespace {

struct KeptNewtonMatrix : SolverMemory {
  bool dense = true;
  internal::DenseLu lu;                // dense: the factorization itself
  Eigen::SparseMatrix<double> matrix;  // sparse: the matrix, factorized again on restore
};

}  // namespace

std::shared_ptr<const SolverMemory> FischerBurmeisterNewton::SaveMemory() const {
  using Factored = internal::NewtonWorkspace::Factored;
  const internal::NewtonWorkspace& ws = *workspace_;
  if (!options_.reuse_factorization || ws.factored == Factored::None) return nullptr;
  auto kept = std::make_shared<KeptNewtonMatrix>();
  kept->dense = ws.factored == Factored::Dense;
  if (kept->dense) {
    kept->lu = ws.dense_lu;
  } else {
    kept->matrix = ws.factored_h;
  }
  return kept;
}

void FischerBurmeisterNewton::RestoreMemory(const SolverMemory* memory) {
  using Factored = internal::NewtonWorkspace::Factored;
  internal::NewtonWorkspace& ws = *workspace_;
  ws.factored = Factored::None;
  const auto* kept = dynamic_cast<const KeptNewtonMatrix*>(memory);
  if (kept == nullptr) return;
  if (kept->dense) {
    ws.dense_lu = kept->lu;
    ws.factored = Factored::Dense;
    return;
  }
  // KLU's symbolic analysis and factorization are deterministic: the same matrix gives the
  // factorization it had.
  ws.factored_h = kept->matrix;
  klu_->analyzePattern(ws.factored_h);
  klu_analyzed_ = false;  // (analysed for this matrix, not for the next Newton matrix's pattern)
  if (klu_->info() != Eigen::Success) return;
  klu_->factorize(ws.factored_h);
  if (klu_->info() == Eigen::Success) ws.factored = Factored::Klu;
}

FischerBurmeisterNewton::Summary FischerBurmeisterNewton::SolveFrom(
    const MixedComplementarityProblem& problem, Eigen::VectorXd* z, bool chord_steps) {
  const auto start = std::chrono::steady_clock::now();
  workspace_->stalled = false;
  Summary summary;
  summary.solver = SemismoothNewtonName(options_);
  summary.tolerance = options_.tolerance;
  auto finish = [&]() -> Summary {
    summary.wall_time_seconds = internal::SecondsSince(start);
    return summary;
  };
  if (!AcceptOptions(options_, &summary)) return finish();
  if (!Start(problem, z, &summary)) return finish();
  if (chord_steps) ChordSteps(problem, z, &summary);
  internal::NewtonWorkspace& ws = *workspace_;
  const int n = problem.size();
  const bool dense = options_.linear_solver == LinearSolver::Dense ||
                     (options_.linear_solver == LinearSolver::Auto && n < options_.dense_threshold);
  summary.dense_linear_algebra = dense;  // (or set by the first direction, see DensePattern)
  // Chord steps count as iterations: the loop goes on from their number.
  for (int iteration = summary.chord_steps;; ++iteration) {
    summary.iterations = iteration;
    summary.natural_residual = iteration == summary.chord_steps
                                   ? ws.residual
                                   : natural_residual(*z, ws.F, problem.lower(), problem.upper());
    ws.residuals.push_back(summary.natural_residual);
    if (Stops(iteration, &summary)) break;
    if (iteration == summary.chord_steps && options_.equilibration != Equilibration::Off) {
      bool scale = false;
      if (!CheckScaling(problem, *z, &summary, &scale)) break;
      if (scale) {
        SolveEquilibrated(problem, z, &summary);
        break;
      }
    }
    if (!Iterate(problem, z, dense, iteration, &summary)) break;
  }
  if (ws.keep_start &&
      (summary.status != Status::Converged || summary.natural_residual > ws.start_residual)) {
    *z = ws.acceptable_start;  // the step did not improve a start that met the tolerance
    summary.status = Status::Converged;
    summary.natural_residual = ws.start_residual;
    summary.message.clear();
  }
  DiagnoseRate(&summary);
  return finish();
}

namespace {

// Sets z_i to the bound F_i points at for the pair that violates complementarity most with
// |F_i| above tol and F_i the nearer zero (Options::active_set_restarts); false if none does.
bool FlipWorstPairAbove(const Eigen::VectorXd& l, const Eigen::VectorXd& u,
                        const Eigen::VectorXd& F, double tol, Eigen::VectorXd* z) {
  int worst = -1;
  double worst_violation = tol, bound = 0.0;
  for (int i = 0; i < z->size(); ++i) {
    const double zi = (*z)[i];
    // (A free variable's side is never closed: only a finite bound is flipped to.)
    if (std::isfinite(l[i]) && F[i] > worst_violation && F[i] < zi - l[i]) {
      worst = i;
      worst_violation = F[i];
      bound = l[i];
    } else if (std::isfinite(u[i]) && -F[i] > worst_violation && -F[i] < u[i] - zi) {
      worst = i;
      worst_violation = -F[i];
      bound = u[i];
    }
  }
  if (worst >= 0) (*z)[worst] = bound;
  return worst >= 0;
}

}  // namespace

// Options::active_set_restarts: flips the worst unresolved pair, among those whose F_i exceeds
// the tolerance first, else among all; false when there is none or F cannot be evaluated at *z.
bool FischerBurmeisterNewton::FlipUnresolvedPair(const MixedComplementarityProblem& problem,
                                                 Eigen::VectorXd* z) {
  Eigen::VectorXd& F = workspace_->F;
  if (!problem.Evaluate(*z, &F, nullptr) || !F.allFinite()) return false;
  return FlipWorstPairAbove(problem.lower(), problem.upper(), F, options_.tolerance, z) ||
         FlipWorstPairAbove(problem.lower(), problem.upper(), F, 0.0, z);
}

namespace {

// The work of a later run of the iteration added to an earlier one's counts.
void AddWork(const FischerBurmeisterNewton::Summary& earlier,
             FischerBurmeisterNewton::Summary* later) {
  later->iterations += earlier.iterations;
  later->factorizations += earlier.factorizations;
  later->line_search_steps += earlier.line_search_steps;
  later->levenberg_marquardt_steps += earlier.levenberg_marquardt_steps;
  later->regularized_steps += earlier.regularized_steps;
  later->symbolic_analyses += earlier.symbolic_analyses;
  later->chord_steps += earlier.chord_steps;
  later->skipped_newton_directions += earlier.skipped_newton_directions;
  later->dense_linear_algebra = later->dense_linear_algebra || earlier.dense_linear_algebra;
  later->history.insert(later->history.begin(), earlier.history.begin(), earlier.history.end());
}

}  // namespace

FischerBurmeisterNewton::Summary FischerBurmeisterNewton::Solve(
    const MixedComplementarityProblem& problem, Eigen::VectorXd* z) {
  const auto start = std::chrono::steady_clock::now();
  internal::NewtonWorkspace& ws = *workspace_;
  ws.skip_newton = options_.skip_failed_newton;
  if (ws.skip_newton) ws.solve_start = *z;
  Summary summary = SolveWithRestarts(problem, z, options_.reuse_factorization);
  if (ws.skip_newton && summary.skipped_newton_directions > 0 && !summary.IsSolved() &&
      summary.status != Status::InvalidInput) {
    ws.skip_newton = false;
    Summary again = SolveWithRestarts(problem, &ws.solve_start, /*chord_steps=*/false);
    AddWork(summary, &again);
    again.ran_newton_first_again = true;
    again.active_set_restarts += summary.active_set_restarts;
    if (again.IsSolved() || again.natural_residual < summary.natural_residual) {
      *z = ws.solve_start;
      summary = again;
    } else {
      // Keep the skipping run's point and outcome, with the work of both.
      const Summary skipping = summary;
      summary = again;
      summary.status = skipping.status;
      summary.natural_residual = skipping.natural_residual;
      summary.message = skipping.message + "; run again without skipping failed Newton " +
                        Scientific("directions, it ended no better (natural residual ",
                                   again.natural_residual, ")");
      summary.diagnostic = skipping.diagnostic;
      summary.observed_rate = skipping.observed_rate;
    }
  }
  summary.wall_time_seconds = internal::SecondsSince(start);
  return summary;
}

FischerBurmeisterNewton::Summary FischerBurmeisterNewton::SolveWithRestarts(
    const MixedComplementarityProblem& problem, Eigen::VectorXd* z, bool chord_steps) {
  const auto start = std::chrono::steady_clock::now();
  Summary summary = SolveFrom(problem, z, chord_steps);
  Eigen::VectorXd restart;
  for (int k = 0; k < options_.active_set_restarts && workspace_->stalled; ++k) {
    restart = *z;
    if (!FlipUnresolvedPair(problem, &restart)) break;
    Summary again = SolveFrom(problem, &restart, chord_steps);
    AddWork(summary, &again);
    again.active_set_restarts = summary.active_set_restarts + 1;
    if (!(again.natural_residual < summary.natural_residual)) {
      // Keep the better point, with the work the restart took.
      const Summary kept = summary;
      summary = again;
      summary.status = kept.status;
      summary.natural_residual = kept.natural_residual;
      summary.message = kept.message + "; an active-set restart ended no better (" +
                        Scientific("natural residual ", again.natural_residual, ")");
      summary.diagnostic = kept.diagnostic;
      summary.observed_rate = kept.observed_rate;
      break;
    }
    *z = restart;
    summary = again;
  }
  summary.wall_time_seconds = internal::SecondsSince(start);
  return summary;
}

}  // namespace ncpkit
