#include "solvers/semismooth_newton.h"

#include <Eigen/SparseCholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <sstream>

#include "solvers/sparse_lu.h"

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
    std::vector<Eigen::Triplet<double>> t;
    t.reserve(J.nonZeros() + n);
    for (int j = 0; j < n; ++j) {
      t.emplace_back(j, j, 0.0);
      for (Eigen::SparseMatrix<double>::InnerIterator it(J, j); it; ++it) {
        t.emplace_back(it.row(), j, 0.0);
      }
    }
    H_.resize(n, n);
    H_.setFromTriplets(t.begin(), t.end());
    H_.makeCompressed();
    auto slot = [&](int row, int col) {
      const int* begin = H_.innerIndexPtr() + H_.outerIndexPtr()[col];
      const int* end = H_.innerIndexPtr() + H_.outerIndexPtr()[col + 1];
      return static_cast<int>(std::lower_bound(begin, end, row) - H_.innerIndexPtr());
    };
    j_slot_.resize(J.nonZeros());
    diagonal_slot_.resize(n);
    for (int j = 0; j < n; ++j) {
      diagonal_slot_[j] = slot(j, j);
      for (int k = J.outerIndexPtr()[j]; k < J.outerIndexPtr()[j + 1]; ++k) {
        j_slot_[k] = slot(J.innerIndexPtr()[k], j);
      }
    }
  }
  void Fill(const Eigen::SparseMatrix<double>& J, const Eigen::VectorXd& da,
            const Eigen::VectorXd& db) {
    double* h = H_.valuePtr();
    std::fill(h, h + H_.nonZeros(), 0.0);
    for (int j = 0; j < rows_; ++j) {
      for (int k = J.outerIndexPtr()[j]; k < J.outerIndexPtr()[j + 1]; ++k) {
        h[j_slot_[k]] += db[J.innerIndexPtr()[k]] * J.valuePtr()[k];
      }
      h[diagonal_slot_[j]] += da[j];
    }
  }
  const Eigen::SparseMatrix<double>& H() const { return H_; }

 private:
  int rows_ = -1;
  Eigen::Index nnz_ = -1;
  std::vector<int> outer_, inner_, j_slot_, diagonal_slot_;
  Eigen::SparseMatrix<double> H_;
};

}  // namespace internal

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// H = diag(D_b) J + diag(D_a) on the pattern of J plus the diagonal, built once per pattern.
double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

bool FischerBurmeisterNewton::Options::IsValid(std::string* why) const {
  std::ostringstream os;
  if (!(tolerance > 0.0))
    os << "tolerance = " << tolerance << " must be > 0";
  else if (max_iterations < 1)
    os << "max_iterations = " << max_iterations << " must be >= 1";
  else if (!(start_acceptance > 0.0 && start_acceptance <= 1.0))
    os << "start_acceptance = " << start_acceptance << " must be in (0, 1]";
  else if (!(penalty_lambda > 0.0 && penalty_lambda <= 1.0))
    os << "penalty_lambda = " << penalty_lambda << " must be in (0, 1]";
  else if (!(armijo_sigma > 0.0 && armijo_sigma < 0.5))
    os << "armijo_sigma = " << armijo_sigma << " must be in (0, 0.5)";
  else if (!(backtrack_factor > 0.0 && backtrack_factor < 1.0))
    os << "backtrack_factor = " << backtrack_factor << " must be in (0, 1)";
  else if (max_line_search_steps < 1)
    os << "max_line_search_steps = " << max_line_search_steps << " must be >= 1";
  else if (nonmonotone_memory < 1)
    os << "nonmonotone_memory = " << nonmonotone_memory << " must be >= 1";
  else if (stall_window < 2)
    os << "stall_window = " << stall_window << " must be >= 2";
  else if (!(stall_factor > 0.0 && stall_factor < 1.0))
    os << "stall_factor = " << stall_factor << " must be in (0, 1)";
  else if (dense_threshold < 0)
    os << "dense_threshold = " << dense_threshold << " must be >= 0";
  if (why) *why = os.str();
  return os.str().empty();
}

std::string SemismoothNewtonName(const FischerBurmeisterNewton::Options& options) {
  switch (options.ncp_function) {
    case NcpFunction::FischerBurmeister:
      return "fb-newton";
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
     << "linear algebra    " << (dense_linear_algebra ? "dense LU" : "sparse KLU") << " ("
     << symbolic_analyses << " symbolic analyses)\n";
  if (!diagnostic.empty()) os << "diagnostic        " << diagnostic << "\n";
  for (const IterationRecord& r : history) {
    char line[160];
    std::snprintf(line, sizeof(line), "  it %3d  residual %.3e  merit %.3e  t %.3g  ls %d%s\n",
                  r.iteration, r.natural_residual, r.merit, r.step_length, r.line_search_steps,
                  r.levenberg_marquardt ? "  LM" : "");
    os << line;
  }
  return os.str();
}

FischerBurmeisterNewton::FischerBurmeisterNewton()
    : klu_(new KluLu), newton_matrix_(new internal::NewtonMatrix) {}
FischerBurmeisterNewton::FischerBurmeisterNewton(const Options& options)
    : options_(options), klu_(new KluLu), newton_matrix_(new internal::NewtonMatrix) {}
FischerBurmeisterNewton::~FischerBurmeisterNewton() = default;

FischerBurmeisterNewton::Summary FischerBurmeisterNewton::Solve(
    const MixedComplementarityProblem& problem, Eigen::VectorXd* z) {
  const auto start = std::chrono::steady_clock::now();
  Summary summary;
  summary.solver = SemismoothNewtonName(options_);
  summary.tolerance = options_.tolerance;
  auto finish = [&]() -> Summary {
    summary.wall_time_seconds = Seconds(start);
    return summary;
  };
  if (!AcceptOptions(options_, &summary)) return finish();
  try {
    ValidateBounds(problem);
  } catch (const std::invalid_argument& e) {
    summary.status = Status::InvalidInput;
    summary.message = e.what();
    return finish();
  }
  const int n = problem.size();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  if (z->size() != n || !z->allFinite()) *z = Eigen::VectorXd::Zero(n).cwiseMax(l).cwiseMin(u);
  if (options_.project_onto_bounds) *z = z->cwiseMax(l).cwiseMin(u);

  const bool dense = options_.linear_solver == LinearSolver::Dense ||
                     (options_.linear_solver == LinearSolver::Auto && n < options_.dense_threshold);
  summary.dense_linear_algebra = dense;

  Eigen::VectorXd F(n), phi, da, db, z_trial(n), F_trial(n), phi_trial, d, gradient;
  // The Jacobian is evaluated only when a Newton direction is needed: a point that already
  // meets the tolerance (a good warm start, or the last line-search point) costs F alone.
  Eigen::SparseMatrix<double> J;
  bool have_jacobian = false;
  if (!problem.Evaluate(*z, &F, nullptr)) {
    summary.status = Status::NumericalFailure;
    summary.message = "F cannot be evaluated at the start point";
    return finish();
  }
  EvaluatePhi(options_, *z, F, l, u, &phi, &da, &db);
  double merit = 0.5 * phi.squaredNorm();
  std::deque<double> recent_merits = {merit};
  std::vector<double> residuals;
  internal::NewtonMatrix& newton = *newton_matrix_;
  bool& pattern_analyzed = klu_analyzed_;  // the KLU analysis of H's pattern, kept across solves

  // The start, kept while it meets the tolerance but not start_acceptance * tolerance.
  const double start_residual = natural_residual(*z, F, l, u);
  Eigen::VectorXd acceptable_start;
  if (start_residual <= options_.tolerance &&
      start_residual > options_.start_acceptance * options_.tolerance) {
    acceptable_start = *z;
  }
  for (int iteration = 0;; ++iteration) {
    summary.iterations = iteration;
    summary.natural_residual = iteration == 0 ? start_residual : natural_residual(*z, F, l, u);
    residuals.push_back(summary.natural_residual);
    const double threshold =
        iteration == 0 ? options_.start_acceptance * options_.tolerance : options_.tolerance;
    if (summary.natural_residual <= threshold) {
      summary.status = Status::Converged;
      break;
    }
    if (iteration >= options_.max_iterations) {
      std::ostringstream os;
      os.precision(3);
      os << "natural residual " << std::scientific << summary.natural_residual << " > tolerance "
         << options_.tolerance << " after " << iteration << " iterations";
      summary.status = Status::MaxIterations;
      summary.message = os.str();
      break;
    }
    const int window = options_.stall_window;
    if (iteration >= window &&
        summary.natural_residual > options_.stall_factor * residuals[iteration - window]) {
      std::ostringstream os;
      os.precision(3);
      os << "stalled: natural residual " << std::scientific << summary.natural_residual
         << " fell by less than a factor " << 1.0 / options_.stall_factor << " over the last "
         << window << " iterations";
      summary.status = Status::Failed;
      summary.message = os.str();
      break;
    }

    // Newton direction.
    if (!have_jacobian) {
      if (!problem.Evaluate(*z, &F, &J)) {
        summary.status = Status::NumericalFailure;
        summary.message = "the Jacobian cannot be evaluated at the current point";
        break;
      }
      have_jacobian = true;
    }
    if (!newton.SamePattern(J)) {
      newton.BuildPattern(J);
      pattern_analyzed = false;
    }
    newton.Fill(J, da, db);
    const Eigen::SparseMatrix<double>& H = newton.H();
    gradient = H.transpose() * phi;
    bool have_direction = false;
    if (dense) {
      const Eigen::MatrixXd dense_h = H;
      Eigen::PartialPivLU<Eigen::MatrixXd> lu(dense_h);
      ++summary.factorizations;
      if (lu.rcond() > 1e-14) {
        d = lu.solve(-phi);
        have_direction = d.allFinite();
      }
    } else {
      if (!pattern_analyzed) {
        klu_->analyzePattern(H);
        ++summary.symbolic_analyses;
        pattern_analyzed = klu_->info() == Eigen::Success;
      }
      if (pattern_analyzed) {
        klu_->factorize(H);
        ++summary.factorizations;
        if (klu_->info() == Eigen::Success) {
          d = klu_->solve(-phi);
          have_direction = d.allFinite();
        }
      }
    }
    const double dnorm = have_direction ? d.norm() : 0.0;
    if (have_direction &&
        !(gradient.dot(d) <= -options_.descent_rho * std::pow(dnorm, options_.descent_p))) {
      have_direction = false;
    }

    // Line search along the Newton direction, then along Levenberg-Marquardt if needed.
    const double reference = *std::max_element(recent_merits.begin(), recent_merits.end());
    IterationRecord record;
    record.iteration = iteration + 1;
    bool accepted = false;
    for (int attempt = have_direction ? 0 : 1; attempt < 2 && !accepted; ++attempt) {
      if (attempt == 1) {
        // (H^T H + mu I) d = -H^T Phi, mu tied to the residual size.
        const double mu = std::max(1e-12, std::min(1.0, std::sqrt(2.0 * merit)));
        Eigen::SparseMatrix<double> normal = H.transpose() * H;
        for (int i = 0; i < n; ++i) normal.coeffRef(i, i) += mu;
        Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(normal);
        ++summary.factorizations;
        if (ldlt.info() != Eigen::Success) break;
        d = ldlt.solve(-gradient);
        if (!d.allFinite()) break;
        record.levenberg_marquardt = true;
        ++summary.levenberg_marquardt_steps;
      }
      const double slope = gradient.dot(d);
      double t = 1.0;
      for (int projected = options_.project_onto_bounds ? 1 : 0; projected >= 0 && !accepted;
           --projected) {
        t = 1.0;
        for (int step = 0; step < options_.max_line_search_steps;
             ++step, t *= options_.backtrack_factor) {
          if (step > 0) ++summary.line_search_steps;
          ++record.line_search_steps;
          z_trial = *z + t * d;
          if (projected) z_trial = z_trial.cwiseMax(l).cwiseMin(u);
          if (!problem.Evaluate(z_trial, &F_trial, nullptr)) continue;  // step too long
          EvaluatePhi(options_, z_trial, F_trial, l, u, &phi_trial, nullptr, nullptr);
          const double trial_merit = 0.5 * phi_trial.squaredNorm();
          if (std::isfinite(trial_merit) &&
              trial_merit <= reference + options_.armijo_sigma * t * slope) {
            accepted = true;
            break;
          }
        }
      }
      record.step_length = accepted ? t : 0.0;
    }
    if (!accepted) {
      std::ostringstream os;
      os.precision(3);
      os << "line search failed at natural residual " << std::scientific << summary.natural_residual
         << " (merit " << merit << ", |grad merit| " << gradient.norm()
         << "): a stationary point of the merit function that is not a "
         << "solution";
      summary.status = Status::Failed;
      summary.message = os.str();
      break;
    }
    *z = z_trial;
    F = F_trial;
    have_jacobian = false;
    EvaluatePhi(options_, *z, F, l, u, &phi, &da, &db);
    merit = 0.5 * phi.squaredNorm();
    recent_merits.push_back(merit);
    if (static_cast<int>(recent_merits.size()) > options_.nonmonotone_memory) {
      recent_merits.pop_front();
    }
    record.merit = merit;
    record.natural_residual = natural_residual(*z, F, l, u);
    if (options_.record_history) summary.history.push_back(record);
  }
  if (acceptable_start.size() > 0 &&
      (summary.status != Status::Converged || summary.natural_residual > start_residual)) {
    *z = acceptable_start;  // the step did not improve a start that met the tolerance
    summary.status = Status::Converged;
    summary.natural_residual = start_residual;
    summary.message.clear();
  }

  // Rate diagnostic: the last four ratios of successive natural residuals all in [0.1, 0.9]
  // and within a factor 2 of each other mean linear convergence, the mark of a singular
  // generalized Jacobian at a degenerate solution (superlinear ratios keep shrinking).
  const int count = static_cast<int>(residuals.size());
  if (count >= 5) {
    double low = kInf, high = 0.0, sum = 0.0;
    for (int k = count - 4; k < count; ++k) {
      const double ratio = residuals[k - 1] > 0.0 ? residuals[k] / residuals[k - 1] : 0.0;
      low = std::min(low, ratio);
      high = std::max(high, ratio);
      sum += ratio;
    }
    summary.observed_rate = sum / 4.0;
    if (low >= 0.1 && high <= 0.9 && high <= 2.0 * low) {
      std::ostringstream os;
      os.precision(2);
      os << "linear rate near a degenerate solution: the natural residual shrinks by about "
         << summary.observed_rate << " per iteration (singular Jacobian at the solution)";
      summary.diagnostic = os.str();
      if (summary.status != Status::Converged) summary.message += "; " + summary.diagnostic;
    }
  }
  return finish();
}

}  // namespace ncpkit
