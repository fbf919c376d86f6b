#include "solvers/friction/friction_auto.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <type_traits>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/seconds.h"

namespace ncpkit {
namespace {

// The first NSGS attempt's sweeps, and the window over which its rate is measured.
constexpr int kNsgsSweeps = 1000;
constexpr int kRateWindow = 50;
// Attempt 1's Anderson memory (NonsmoothGaussSeidel::Options::anderson_memory).
constexpr int kAndersonMemory = 5;
// The Newton attempt starts from the best point when its error is within this factor of the
// tolerance.
constexpr double kPolishFactor = 10.0;
// The shuffled attempts' sweeps, and the window over which the first one's rate is measured
// (wide: a random order's best error falls in irregular steps). The last attempt has no window:
// on the mixed-shape drop's islands it solved problems after 9000 sweeps that did not improve
// its best point in the first 5000.
constexpr int kShuffledSweeps = 10000;
constexpr int kShuffledWindow = 1000;
constexpr int kLongShuffledSweeps = 100000;
// nsgs-velocity's sweeps on a problem in the global form.
constexpr int kVelocitySweeps = 2000;

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

bool FrictionAuto::Begin(int size, Eigen::VectorXd* r) {
  ResetSummaryKeepingStorage(&summary_);
  summary_.solver = "auto";
  summary_.tolerance = options_.tolerance;
  if (!AcceptOptions(options_, &summary_)) return false;
  if (!(options_.warm_start && r->size() == size && r->allFinite())) r->setZero(size);
  start_ = *r;
  return true;
}

const FrictionAuto::Summary& FrictionAuto::Solve(const FrictionContactProblem& problem,
                                                 Eigen::VectorXd* r) {
  const auto start = std::chrono::steady_clock::now();
  if (!Begin(problem.size(), r)) return summary_;
  newton_from_start_ = false;
  RunFromStart(problem, start, r);
  RetryCold(problem, start, r);
  return summary_;
}

const FrictionAuto::Summary& FrictionAuto::Solve(const GlobalFrictionContactProblem& problem,
                                                 Eigen::VectorXd* r) {
  const auto start = std::chrono::steady_clock::now();
  if (!Begin(problem.size(), r)) return summary_;
  // Sweeps on the global form first: no W formed, and the manifold and resting-island blocks
  // that the local-form solvers lack (walls, stacks). Stopped early by its rate where it would
  // not reach the tolerance (piles), for the local-form sequence.
  VelocityGaussSeidel::Options& o = velocity_.mutable_options();
  o.tolerance = options_.tolerance;
  o.warm_start = true;
  o.time_limit_seconds = options_.time_limit_seconds;
  o.max_sweeps = kVelocitySweeps;
  o.rate_window = kRateWindow;
  // Where one sweep order cycles, backward and forward sweeps in turn: the local-form sequence
  // the rate window would hand the solve to fails some of these (a toppling tower's and a pushed
  // row's steps in docs/reliability.md).
  o.reverse_on_stall = true;
  best_ = start_;
  const FrictionSolverSummary& sweeps = velocity_.Solve(problem, &best_);
  // A start that solves the problem is no attempt (as in the local form).
  const bool at_start = sweeps.IsSolved() && best_ == start_;
  if (!at_start) RecordAttempt("nsgs-velocity", sweeps);
  problem.Reduce(&reduced_);
  // Cleared on every return below: the pointer lives only as long as this call.
  struct Clear {
    const GlobalFrictionContactProblem** global;
    ~Clear() { *global = nullptr; }
  } clear{&global_};
  global_ = &problem;
  if (sweeps.IsSolved()) {
    *r = best_;
    reduced_.Velocity(*r, &u_);
    Finish(reduced_, true, start, r);
    return summary_;
  }
  // The local-form sequence goes on from the sweeps' point where their rate stopped them far
  // from the tolerance (piles). Near it they stall at the rounding of the velocities they keep,
  // and NSGS and Newton from that point do no better (boxes tumbling onto the ground, at
  // 1e-10): the sequence starts afresh, and their point is kept for the end.
  const double velocity_error = sweeps.natural_residual;
  newton_from_start_ = true;
  if (velocity_error > kPolishFactor * options_.tolerance) {
    RunSequence(reduced_, velocity_error, start, r);
    RetryCold(reduced_, start, r);
    return summary_;
  }
  velocity_best_ = best_;
  RunFromStart(reduced_, start, r);
  KeepIfBetter(reduced_, velocity_best_, velocity_error, start, r);
  RetryCold(reduced_, start, r);
  return summary_;
}

void FrictionAuto::RunFromStart(const FrictionContactProblem& problem,
                                std::chrono::steady_clock::time_point start, Eigen::VectorXd* r) {
  best_ = start_;
  problem.Velocity(start_, &u_);
  RunSequence(problem, ComputeFrictionErrors(problem, start_, u_).fclib, start, r);
}

void FrictionAuto::KeepIfBetter(const FrictionContactProblem& problem, const Eigen::VectorXd& point,
                                double error, std::chrono::steady_clock::time_point start,
                                Eigen::VectorXd* r) {
  if (summary_.IsSolved() || !(error < summary_.natural_residual)) return;
  *r = point;
  problem.Velocity(*r, &u_);
  Finish(problem, false, start, r);
}

void FrictionAuto::RetryCold(const FrictionContactProblem& problem,
                             std::chrono::steady_clock::time_point start, Eigen::VectorXd* r) {
  if (summary_.IsSolved() || start_.isZero(0.0)) return;  // Begin() zeroed an unusable start
  if (options_.time_limit_seconds > 0.0 &&
      internal::SecondsSince(start) >= options_.time_limit_seconds) {
    return;
  }
  kept_ = *r;
  const double kept_error = summary_.natural_residual;
  summary_.path.append("; again from r = 0");
  start_.setZero(problem.size());
  newton_from_start_ = false;
  RunFromStart(problem, start, r);
  KeepIfBetter(problem, kept_, kept_error, start, r);
}

void FrictionAuto::RecordAttempt(const char* name, const FrictionSolverSummary& step) {
  ++summary_.attempts;
  summary_.iterations += step.iterations;
  summary_.factorizations += step.factorizations;
  if (!summary_.path.empty()) summary_.path += "; ";
  summary_.path.append(name).append(": ").append(ToString(step.status));
  summary_.path.append(" (").append(step.message).append(")");
  if (step.IsSolved()) summary_.solved_by = name;
}

void FrictionAuto::RunSequence(const FrictionContactProblem& problem, double best_error,
                               std::chrono::steady_clock::time_point start, Eigen::VectorXd* r) {
  const auto elapsed = [&]() { return internal::SecondsSince(start); };
  Eigen::VectorXd& best = best_;
  Eigen::VectorXd& x = x_;
  int last_iterations = 0;  // of the latest attempt
  // Runs one attempt from the best point (or from the start); true when it solved the problem.
  const auto attempt = [&](const char* name, auto& solver, auto configure,
                           bool from_start = false) -> bool {
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
    // Newton from the best point where it is already close to the tolerance (a polish), else
    // from the start (top of friction_auto.h).
    x = from_start && best_error > kPolishFactor * options_.tolerance ? start_ : best;
    const auto record = [&](const FrictionSolverSummary& step) {
      last_iterations = step.iterations;
      RecordAttempt(name, step);
      if (step.natural_residual < best_error) {
        best_error = step.natural_residual;
        best = x;
      }
      return step.IsSolved();
    };
    using Solver = std::decay_t<decltype(solver)>;
    if constexpr (std::is_same_v<Solver, FrictionNewton> ||
                  std::is_same_v<Solver, FrictionProximalPoint>) {
      if (global_ != nullptr) return record(solver.Solve(*global_, problem, &x));
    }
    return record(solver.Solve(problem, &x));
  };
  using Ordering = NonsmoothGaussSeidel::Ordering;
  using Function = FrictionNewton::Function;
  // NSGS stops early when its rate would not reach the tolerance within its sweeps (stacks,
  // where it crawls): Newton then comes first, and NSGS gets the rest of its sweeps after.
  int nsgs_sweeps = 0;
  const bool solved =
      best_error <= options_.tolerance ||
      attempt("nsgs-anderson", nsgs_,
              [](NonsmoothGaussSeidel::Options& o) {
                o.max_sweeps = kNsgsSweeps;
                o.ordering = Ordering::Natural;
                o.rate_window = kRateWindow;
                o.anderson_memory = kAndersonMemory;
              }) ||
      (nsgs_sweeps = last_iterations, false) ||
      attempt(
          "fc-newton-fb", newton_,
          [this](FrictionNewton::Options& o) {
            o.function = Function::FischerBurmeister;
            o.max_iterations = newton_from_start_ ? 200 : 50;
          },
          newton_from_start_) ||
      (nsgs_sweeps < kNsgsSweeps && attempt("nsgs-anderson", nsgs_,
                                            [nsgs_sweeps](NonsmoothGaussSeidel::Options& o) {
                                              o.max_sweeps = kNsgsSweeps - nsgs_sweeps;
                                              o.ordering = Ordering::Natural;
                                              o.rate_window = 0;
                                              o.anderson_memory = kAndersonMemory;
                                            })) ||
      attempt("fc-proximal", proximal_,
              [](FrictionProximalPoint::Options& o) {
                o.function = Function::AlartCurnier;
                o.max_outer_iterations = 100;
              }) ||
      attempt("nsgs-shuffled", nsgs_,
              [](NonsmoothGaussSeidel::Options& o) {
                o.max_sweeps = kShuffledSweeps;
                o.ordering = Ordering::Shuffled;
                o.rate_window = kShuffledWindow;
                o.anderson_memory = 0;
              }) ||
      attempt("fc-proximal-fb", proximal_,
              [](FrictionProximalPoint::Options& o) {
                o.function = Function::FischerBurmeister;
                o.max_outer_iterations = 1000;
              }) ||
      attempt("nsgs-shuffled (long)", nsgs_, [](NonsmoothGaussSeidel::Options& o) {
        o.max_sweeps = kLongShuffledSweeps;
        o.ordering = Ordering::Shuffled;
        o.rate_window = 0;
        o.anderson_memory = 0;
      });
  *r = best;
  problem.Velocity(*r, &u_);
  Finish(problem, solved, start, r);
}

void FrictionAuto::Finish(const FrictionContactProblem& problem, bool solved,
                          std::chrono::steady_clock::time_point start, const Eigen::VectorXd* r) {
  const auto elapsed = [&]() { return internal::SecondsSince(start); };
  Summary& summary = summary_;
  DescribeFrictionPoint(problem, *r, u_, &summary);
  // snprintf, not a stream: the kept message is rewritten in place.
  char text[256];
  if (summary.natural_residual <= options_.tolerance) {
    summary.status = Status::Converged;
    std::snprintf(text, sizeof(text), " after %d attempt(s): FCLib error %g", summary.attempts,
                  summary.natural_residual);
    summary.message.assign("solved by ")
        .append(solved && !summary.solved_by.empty() ? summary.solved_by.c_str()
                                                     : "the start point")
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
}

}  // namespace ncpkit
