#include "solvers/friction/nonsmooth_gauss_seidel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>

#include "solvers/base/constants.h"
#include "solvers/base/input_error.h"
#include "solvers/base/internal/cycle_watch.h"
#include "solvers/base/internal/rate_window.h"
#include "solvers/base/internal/seconds.h"
#include "solvers/friction/single_contact.h"

namespace ncpkit {

bool NonsmoothGaussSeidel::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_sweeps >= 1, "max_sweeps", max_sweeps, "must be >= 1")
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(relaxation > 0.0 && relaxation < 2.0, "relaxation", relaxation, "must be in (0, 2)")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Require(rate_window >= 0, "rate_window", rate_window, "must be >= 0")
      .Require(anderson_memory >= 0 && anderson_memory <= 50, "anderson_memory", anderson_memory,
               "must be in [0, 50]")
      .Done(why);
}

namespace {

// u += W's three columns of contact a times `change` (its entries that are zero skipped).
inline void AddContactColumns(const Eigen::SparseMatrix<double>& columns, int a,
                              const Eigen::Vector3d& change, Eigen::VectorXd* u) {
  for (int k = 0; k < 3; ++k) {
    if (change[k] == 0.0) continue;
    for (Eigen::SparseMatrix<double>::InnerIterator it(columns, 3 * a + k); it; ++it) {
      (*u)[it.row()] += it.value() * change[k];
    }
  }
}

}  // namespace

// Per contact: W_aa, its inverse where it has one, no sliding direction yet.
void NonsmoothGaussSeidel::PrepareBlocks(const FrictionContactProblem& problem) {
  const int nc = problem.num_contacts();
  blocks_.resize(nc);
  inverses_.resize(nc);
  invertible_.assign(nc, 0);
  directions_.assign(nc, Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN()));
  for (int a = 0; a < nc; ++a) {
    blocks_[a] = problem.DiagonalBlock(a);
    const double scale = blocks_[a].norm();
    const double determinant = blocks_[a].determinant();
    if (scale > 0.0 && std::abs(determinant) > 1e-14 * scale * scale * scale) {
      inverses_[a] = blocks_[a].inverse();
      invertible_[a] = inverses_[a].allFinite();
    }
  }
}

// One sweep in order_: each contact's local problem solved exactly (relaxed by omega), r_a and u
// updated. The contacts' loop is here rather than a call per contact: with that call, and the
// single-contact solve behind one more, NSGS ran 4.6 % more instructions (callgrind,
// FCLib/nsgs/Spheres-i099-356-679_reduced: 29.2 million against 27.9).
void NonsmoothGaussSeidel::Sweep(const FrictionContactProblem& problem, Eigen::VectorXd* r) {
  const double omega = options_.relaxation;
  const Eigen::SparseMatrix<double>& columns = problem.W_columns();
  for (const int a : order_) {
    const double mu = problem.mu()[a];
    const Eigen::Vector3d old = r->segment<3>(3 * a);
    const Eigen::Vector3d q_local = u_.segment<3>(3 * a) - blocks_[a] * old;
    const SingleContactSolution local = SolveSingleContactCarried(
        blocks_[a], inverses_[a], invertible_[a], q_local, mu, old, &directions_[a]);
    Eigen::Vector3d next = omega == 1.0 ? local.r : Eigen::Vector3d(old + omega * (local.r - old));
    if (omega > 1.0) next = ProjectOntoCone(mu, next);
    const Eigen::Vector3d change = next - old;
    if (change.isZero(0.0)) continue;
    r->segment<3>(3 * a) = next;
    AddContactColumns(columns, a, change, &u_);
  }
}

// Anderson's combination (internal/anderson.h) with u = W r + q as the second vector. The
// sweep's result is always in the cones (each contact's solve puts it there); the combination
// need not be, and is projected (u then moved by the columns of W of the contacts it changed).
void NonsmoothGaussSeidel::Accelerate(const FrictionContactProblem& problem,
                                      const Eigen::VectorXd& before, Eigen::VectorXd* r) {
  if (!anderson_.Combine(options_.anderson_memory, before, r, &u_)) return;
  const Eigen::SparseMatrix<double>& columns = problem.W_columns();
  for (int a = 0; a < problem.num_contacts(); ++a) {
    const Eigen::Vector3d combined = r->segment<3>(3 * a);
    const Eigen::Vector3d projected = ProjectOntoCone(problem.mu()[a], combined);
    if (projected == combined) continue;
    r->segment<3>(3 * a) = projected;
    AddContactColumns(columns, a, projected - combined, &u_);
  }
}

const NonsmoothGaussSeidel::Summary& NonsmoothGaussSeidel::Solve(
    const FrictionContactProblem& problem, Eigen::VectorXd* r) {
  const auto start = std::chrono::steady_clock::now();
  ResetSummaryKeepingStorage(&summary_);
  Summary& summary = summary_;
  summary.solver = options_.ordering == Ordering::Shuffled    ? "nsgs-shuffled"
                   : options_.ordering == Ordering::Symmetric ? "nsgs-symmetric"
                   : options_.anderson_memory > 0             ? "nsgs-anderson"
                                                              : "nsgs";
  summary.tolerance = options_.tolerance;
  const auto elapsed = [&]() { return internal::SecondsSince(start); };
  if (!AcceptOptions(options_, &summary)) return summary;
  const int nc = problem.num_contacts();
  const int m = problem.size();

  // The start, projected onto the cones.
  if (!(options_.warm_start && r->size() == m && r->allFinite())) r->setZero(m);
  for (int a = 0; a < nc; ++a) {
    r->segment<3>(3 * a) = ProjectOntoCone(problem.mu()[a], r->segment<3>(3 * a));
  }
  PrepareBlocks(problem);
  anderson_.Restart();
  order_.resize(nc);
  std::iota(order_.begin(), order_.end(), 0);
  std::mt19937 rng(options_.seed);

  problem.Velocity(*r, &u_);
  best_ = *r;
  double best_error = ComputeFrictionErrors(problem, *r, u_).fclib;
  int sweep = 0;
  bool converged = best_error <= options_.tolerance;
  bool timed_out = false;
  internal::RateWindow window(0, best_error);
  internal::CycleWatch cycle(options_.ordering == Ordering::Natural &&
                                 options_.anderson_memory == 0 && options_.shuffle_on_stall,
                             kCycleSweeps, best_error);
  while (!converged && sweep < options_.max_sweeps && std::isfinite(best_error)) {
    ++sweep;
    if (options_.ordering == Ordering::Shuffled || cycle.turned_at() > 0) {
      std::shuffle(order_.begin(), order_.end(), rng);
    } else if (options_.ordering == Ordering::Symmetric) {
      std::reverse(order_.begin(), order_.end());
    }
    if (options_.anderson_memory > 0) before_ = *r;
    Sweep(problem, r);
    double error = ComputeFrictionErrors(problem, *r, u_).fclib;
    if (error <= options_.tolerance) {
      problem.Velocity(*r, &u_);  // without the updates' rounding
      error = ComputeFrictionErrors(problem, *r, u_).fclib;
      converged = error <= options_.tolerance;
    }
    if (!(error >= best_error)) {
      best_error = error;
      best_ = *r;
    }
    if (!std::isfinite(error)) break;
    if (!converged) cycle.Update(sweep, best_error);
    if (!converged && options_.anderson_memory > 0) Accelerate(problem, before_, r);
    if (options_.time_limit_seconds > 0.0 && elapsed() > options_.time_limit_seconds) {
      timed_out = !converged;
      break;
    }
    if (!converged && window.Stalled(options_.rate_window, options_.tolerance, options_.max_sweeps,
                                     sweep, best_error)) {
      break;
    }
  }
  *r = best_;
  problem.Velocity(*r, &u_);
  DescribeFrictionPoint(problem, *r, u_, &summary);
  internal::SetSweepOutcome(options_.tolerance, sweep, timed_out, *r, &summary);
  if (window.stalled()) window.Explain("sweeps", &summary.message);
  cycle.Explain(sweep, "shuffled order", "no progress in natural order", &summary.message);
  summary.wall_time_seconds = elapsed();
  return summary;
}

}  // namespace ncpkit
