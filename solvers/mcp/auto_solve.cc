#include "solvers/mcp/auto_solve.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

#include "solvers/base/internal/seconds.h"
#include "solvers/lcp/lemke.h"
#include "solvers/mcp/josephy_newton.h"
#include "solvers/mcp/semismooth_newton.h"

namespace ncpkit {
namespace {

// Runs attempts in order until one converges; keeps the best point.
class AttemptLog {
 public:
  AttemptLog(AutoSolver::Summary* summary, Eigen::VectorXd* z) : summary_(summary), z_(z) {}

  // Returns true if this attempt converged.
  bool Record(const SolverSummary& attempt, const std::string& label, const Eigen::VectorXd& x) {
    ++summary_->attempts;
    summary_->iterations += attempt.iterations;
    summary_->factorizations += attempt.factorizations;
    if (!summary_->path.empty()) summary_->path += "; ";
    summary_->path += label + ": " + ToString(attempt.status);
    if (!attempt.IsSolved() && !attempt.message.empty()) {
      summary_->path += " (" + attempt.message + ")";
    }
    if (attempt.natural_residual < best_ || best_point_.size() == 0) {
      best_ = attempt.natural_residual;
      best_point_ = x;
      best_status_ = attempt.status;
    }
    if (attempt.IsSolved()) summary_->solved_by = label;
    return attempt.IsSolved();
  }

  void Finish() {
    *z_ = best_point_;
    summary_->natural_residual = best_;
    if (!summary_->solved_by.empty()) {
      summary_->status = Status::Converged;
      summary_->message = "solved by " + summary_->solved_by;
    } else {
      summary_->status =
          best_status_ == Status::InvalidInput ? Status::InvalidInput : Status::Failed;
      std::ostringstream os;
      os.precision(3);
      os << "no method reached the tolerance; best natural residual " << std::scientific << best_
         << " (" << summary_->attempts << " attempts)";
      summary_->message = os.str();
    }
  }

 private:
  AutoSolver::Summary* summary_;
  Eigen::VectorXd* z_;
  double best_ = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_point_;
  Status best_status_ = Status::NotRun;
};

FischerBurmeisterNewton::Options NewtonOptions(const AutoSolver::Options& options,
                                               NcpFunction function) {
  FischerBurmeisterNewton::Options o;
  o.tolerance = options.tolerance;
  o.max_iterations = options.max_iterations;
  o.ncp_function = function;
  return o;
}

// The MCP sequence of auto_solve.h; `skip_first` (LCPs, where FB Newton and Lemke ran) leaves
// out FB Newton from the start point and Josephy-Newton.
bool RunMcpChain(const MixedComplementarityProblem& problem, const Eigen::VectorXd& start,
                 const AutoSolver::Options& options, bool skip_first, AttemptLog* log) {
  const int n = problem.size();
  const Eigen::VectorXd& l = problem.lower();
  const Eigen::VectorXd& u = problem.upper();
  auto project = [&](Eigen::VectorXd x) { return Eigen::VectorXd(x.cwiseMax(l).cwiseMin(u)); };
  struct Attempt {
    NcpFunction function;
    Eigen::VectorXd start;
    std::string label;
  };
  std::vector<Attempt> attempts = {
      {NcpFunction::FischerBurmeister, start, "fb-newton"},
      {NcpFunction::PenalizedFischerBurmeister, start, "penalized-fb"},
      {NcpFunction::MinMap, start, "minmap-newton"},
  };
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  std::vector<std::pair<Eigen::VectorXd, std::string>> restarts;
  if (options.restarts) {
    restarts = {
        {project(start + ones), "start + 1"}, {project(ones), "1"}, {project(10.0 * ones), "10"}};
    if (l.allFinite() && u.allFinite()) restarts.push_back({0.5 * (l + u), "box midpoint"});
  }
  for (const auto& [point, name] : restarts) {
    attempts.push_back({NcpFunction::FischerBurmeister, point, "fb-newton from " + name});
    attempts.push_back(
        {NcpFunction::PenalizedFischerBurmeister, point, "penalized-fb from " + name});
  }
  for (size_t k = skip_first ? 1 : 0; k < attempts.size(); ++k) {
    const Attempt& attempt = attempts[k];
    if (k == 1 && !skip_first) {  // Josephy-Newton after FB Newton (LCPs: Lemke ran)
      JosephyNewton::Options o;
      o.tolerance = options.tolerance;
      o.max_iterations = std::min(o.max_iterations, options.max_iterations);
      o.warm_start = true;
      JosephyNewton josephy(o);
      Eigen::VectorXd x = start;
      if (log->Record(josephy.Solve(problem, &x), "josephy-newton", x)) return true;
    }
    FischerBurmeisterNewton newton(NewtonOptions(options, attempt.function));
    Eigen::VectorXd x = attempt.start;
    const auto summary = newton.Solve(problem, &x);
    if (log->Record(summary, attempt.label, x)) return true;
    if (summary.status == Status::InvalidInput) return false;
  }
  return false;
}

}  // namespace

bool AutoSolver::Options::IsValid(std::string* why) const {
  std::ostringstream os;
  if (!(tolerance > 0.0))
    os << "tolerance = " << tolerance << " must be > 0";
  else if (max_iterations < 1)
    os << "max_iterations = " << max_iterations << " must be >= 1";
  if (why) *why = os.str();
  return os.str().empty();
}

std::string AutoSolver::Summary::FullReport() const {
  return CommonFullReport(*this) + "solved by         " + (solved_by.empty() ? "-" : solved_by) +
         "\npath              " + path + "\n";
}

namespace {

// The common frame of both AutoSolve overloads: options check, start point, attempt log.
template <class Attempts>
AutoSolver::Summary RunAuto(const MixedComplementarityProblem& problem,
                            const AutoSolver::Options& options, Eigen::VectorXd* z,
                            const Attempts& attempts) {
  const auto start_time = std::chrono::steady_clock::now();
  AutoSolver::Summary summary;
  summary.solver = "auto";
  summary.tolerance = options.tolerance;
  if (!AcceptOptions(options, &summary)) return summary;
  const int n = problem.size();
  Eigen::VectorXd start = *z;
  if (start.size() != n || !start.allFinite()) problem.DefaultStart(&start);
  start = start.cwiseMax(problem.lower()).cwiseMin(problem.upper());
  AttemptLog log(&summary, z);
  attempts(start, &log);
  log.Finish();
  summary.wall_time_seconds = internal::SecondsSince(start_time);
  return summary;
}

}  // namespace

AutoSolver::Summary AutoSolver::Solve(const MixedComplementarityProblem& problem,
                                      Eigen::VectorXd* z) const {
  const Options& options = options_;
  return RunAuto(problem, options, z, [&](const Eigen::VectorXd& start, AttemptLog* log) {
    RunMcpChain(problem, start, options, /*skip_first=*/false, log);
  });
}

AutoSolver::Summary AutoSolver::Solve(const LinearComplementarityProblem& problem,
                                      Eigen::VectorXd* z) const {
  const Options& options = options_;
  const LinearMcp mcp(problem);
  return RunAuto(mcp, options, z, [&](const Eigen::VectorXd& start, AttemptLog* log) {
    FischerBurmeisterNewton newton(NewtonOptions(options, NcpFunction::FischerBurmeister));
    Eigen::VectorXd x = start;
    if (log->Record(newton.Solve(mcp, &x), "fb-newton", x)) return;
    LemkeSolver::Options lemke_options;
    lemke_options.tolerance = options.tolerance;
    LemkeSolver lemke(lemke_options);
    if (log->Record(lemke.Solve(problem, &x), "lemke", x)) return;
    RunMcpChain(mcp, start, options, /*skip_first=*/true, log);  // FB Newton from start: done
  });
}

}  // namespace ncpkit
