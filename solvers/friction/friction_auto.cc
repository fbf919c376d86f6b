#include "solvers/friction/friction_auto.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

// The first NSGS attempt's sweeps, and the window over which its rate is measured.
constexpr int kNsgsSweeps = 1000;
constexpr int kRateWindow = 50;

}  // namespace

bool FrictionAuto::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Done(why);
}

std::string FrictionAuto::Summary::FullReport() const {
  std::ostringstream os;
  os << FrictionSolverSummary::FullReport() << "attempts          " << attempts << "\n"
     << "solved by         " << (solved_by.empty() ? "(none)" : solved_by) << "\n"
     << "path              " << path << "\n";
  return os.str();
}

const FrictionAuto::Summary& FrictionAuto::Solve(const FrictionContactProblem& problem,
                                                 Eigen::VectorXd* r) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto elapsed = [&]() {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  ResetSummaryKeepingStorage(&summary_);
  Summary& summary = summary_;
  summary.solver = "auto";
  summary.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary)) return summary;
  const int m = problem.size();
  if (!(options_.warm_start && r->size() == m && r->allFinite())) r->setZero(m);
  Eigen::VectorXd& best = best_;
  Eigen::VectorXd& x = x_;
  best = *r;
  problem.Velocity(best, &u_);
  double best_error = ComputeFrictionErrors(problem, best, u_).fclib;
  int last_iterations = 0;  // of the latest attempt
  // Runs one attempt from the best point; true when it solved the problem.
  const auto attempt = [&](const char* name, auto& solver, auto configure) -> bool {
    double left = 0.0;
    if (options_.time_limit_seconds > 0.0) {
      left = options_.time_limit_seconds - elapsed();
      if (left <= 0.0) return false;
    }
    auto& o = solver.mutable_options();
    o.tolerance = options_.tolerance;
    o.warm_start = true;
    o.time_limit_seconds = left;
    configure(o);
    x = best;
    const FrictionSolverSummary& step = solver.Solve(problem, &x);
    last_iterations = step.iterations;
    ++summary.attempts;
    summary.iterations += step.iterations;
    summary.factorizations += step.factorizations;
    if (!summary.path.empty()) summary.path += "; ";
    summary.path.append(name).append(": ").append(ToString(step.status));
    summary.path.append(" (").append(step.message).append(")");
    if (step.natural_residual < best_error) {
      best_error = step.natural_residual;
      best = x;
    }
    if (step.IsSolved()) summary.solved_by = name;
    return step.IsSolved();
  };
  using Ordering = NonsmoothGaussSeidel::Ordering;
  using Function = FrictionNewton::Function;
  // NSGS stops early when its rate would not reach the tolerance within its sweeps (stacks,
  // where it crawls): Newton then comes first, and NSGS gets the rest of its sweeps after.
  int nsgs_sweeps = 0;
  const bool solved =
      best_error <= options_.tolerance ||
      attempt("nsgs", nsgs_,
              [](NonsmoothGaussSeidel::Options& o) {
                o.max_sweeps = kNsgsSweeps;
                o.ordering = Ordering::Natural;
                o.rate_window = kRateWindow;
              }) ||
      (nsgs_sweeps = last_iterations, false) ||
      attempt("fc-newton-fb", newton_,
              [](FrictionNewton::Options& o) {
                o.function = Function::FischerBurmeister;
                o.max_iterations = 50;
              }) ||
      (nsgs_sweeps < kNsgsSweeps && attempt("nsgs", nsgs_,
                                            [nsgs_sweeps](NonsmoothGaussSeidel::Options& o) {
                                              o.max_sweeps = kNsgsSweeps - nsgs_sweeps;
                                              o.ordering = Ordering::Natural;
                                              o.rate_window = 0;
                                            })) ||
      attempt("fc-proximal", proximal_,
              [](FrictionProximalPoint::Options& o) {
                o.function = Function::AlartCurnier;
                o.max_outer_iterations = 100;
              }) ||
      attempt("nsgs-shuffled", nsgs_,
              [](NonsmoothGaussSeidel::Options& o) {
                o.max_sweeps = 10000;
                o.ordering = Ordering::Shuffled;
              }) ||
      attempt("fc-proximal-fb", proximal_,
              [](FrictionProximalPoint::Options& o) {
                o.function = Function::FischerBurmeister;
                o.max_outer_iterations = 1000;
              }) ||
      attempt("nsgs-shuffled (long)", nsgs_, [](NonsmoothGaussSeidel::Options& o) {
        o.max_sweeps = 100000;
        o.ordering = Ordering::Shuffled;
      });
  *r = best;
  problem.Velocity(*r, &u_);
  DescribeFrictionPoint(problem, *r, u_, &summary);
  // snprintf, not a stream: the kept message is rewritten in place.
  char text[256];
  if (summary.natural_residual <= options_.tolerance) {
    summary.status = Status::Converged;
    std::snprintf(text, sizeof(text), " after %d attempt(s): FCLib error %g", summary.attempts,
                  summary.natural_residual);
    summary.message.assign("solved by ")
        .append(solved ? summary.solved_by.c_str() : "the start point")
        .append(text);
  } else {
    summary.status =
        std::isfinite(summary.natural_residual) ? Status::Failed : Status::NumericalFailure;
    std::snprintf(text, sizeof(text),
                  "no attempt solved it: best FCLib error %g > tolerance %g after %d attempts",
                  summary.natural_residual, options_.tolerance, summary.attempts);
    summary.message.assign(text);
    if (options_.time_limit_seconds > 0.0 && elapsed() >= options_.time_limit_seconds) {
      std::snprintf(text, sizeof(text), " (time limit %g s reached)", options_.time_limit_seconds);
      summary.message.append(text);
    }
  }
  summary.wall_time_seconds = elapsed();
  return summary;
}

}  // namespace ncpkit
