#include "solvers/velocity_gauss_seidel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "solvers/input_error.h"
#include "solvers/single_contact.h"

namespace ncpkit {

bool VelocityGaussSeidel::Options::IsValid(std::string* why) const {
  return internal::OptionChecks()
      .Require(max_sweeps >= 1, "max_sweeps", max_sweeps, "must be >= 1")
      .Require(tolerance > 0.0 && std::isfinite(tolerance), "tolerance", tolerance,
               "must be positive and finite")
      .Require(relaxation > 0.0 && relaxation < 2.0, "relaxation", relaxation, "must be in (0, 2)")
      .Require(time_limit_seconds >= 0.0, "time_limit_seconds", time_limit_seconds, "must be >= 0")
      .Done(why);
}

VelocityGaussSeidel::Summary VelocityGaussSeidel::Solve(const GlobalFrictionContactProblem& problem,
                                                        Eigen::VectorXd* r) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  Summary summary;
  summary.solver = "nsgs-velocity";
  summary.tolerance = options_.tolerance;
  const auto elapsed = [&]() {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  if (!AcceptOptions(options_, &summary)) return summary;
  const int nc = problem.num_contacts();
  const int m = problem.size();
  const Eigen::VectorXd& mu = problem.mu();
  const Eigen::VectorXd& w = problem.w();

  if (!(options_.warm_start && r->size() == m && r->allFinite())) r->setZero(m);
  for (int a = 0; a < nc; ++a) r->segment<3>(3 * a) = ProjectOntoCone(mu[a], r->segment<3>(3 * a));

  // B_p = M_k^-1 H_p and the diagonal blocks W_aa = sum_p H_p^T B_p.
  const int num_pieces = problem.piece_begin(nc);
  product_offset_.resize(static_cast<size_t>(num_pieces) + 1);
  product_offset_[0] = 0;
  for (int p = 0; p < num_pieces; ++p) {
    product_offset_[p + 1] = product_offset_[p] + 3 * problem.block_size(problem.piece_block(p));
  }
  products_.resize(static_cast<size_t>(product_offset_[num_pieces]));
  blocks_.resize(nc);
  inverses_.resize(nc);
  invertible_.assign(nc, 0);
  directions_.assign(nc, Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN()));
  for (int a = 0; a < nc; ++a) {
    Eigen::Matrix3d& W = blocks_[a];
    W.setZero();
    for (int p = problem.piece_begin(a); p < problem.piece_begin(a + 1); ++p) {
      const int k = problem.piece_block(p), b = problem.block_size(k);
      double* product = products_.data() + product_offset_[p];
      internal::PieceLeftProduct(problem.inverse_mass_data(k), problem.piece_data(p), b, product);
      W += internal::PieceInnerProduct(problem.piece_data(p), product, b);
    }
    const double scale = W.norm();
    const double determinant = W.determinant();
    if (scale > 0.0 && std::abs(determinant) > 1e-14 * scale * scale * scale) {
      inverses_[a] = W.inverse();
      invertible_[a] = inverses_[a].allFinite();
    }
  }

  // v = M^-1 (H r + f) from the start.
  const double q_norm = problem.local_q_norm();
  const auto error_at = [&]() { return internal::FclibErrorOf(mu, q_norm, *r, u_); };
  problem.Velocity(*r, &v_);
  problem.ContactVelocity(v_, &u_);
  best_ = *r;
  double best_error = error_at();
  // Whether v_, u_ and summary's description are exact for *r == best_.
  bool described = false;
  const double omega = options_.relaxation;
  int sweep = 0;
  bool converged = best_error <= options_.tolerance;
  if (converged) {
    DescribeFrictionPoint(problem, *r, u_, &summary);
    described = true;
  }
  bool timed_out = false;
  double* v = v_.data();
  int next_check = 1;
  while (!converged && sweep < options_.max_sweeps && std::isfinite(best_error)) {
    ++sweep;
    for (int a = 0; a < nc; ++a) {
      const int first = problem.piece_begin(a), last = problem.piece_begin(a + 1);
      Eigen::Vector3d u = w.segment<3>(3 * a);
      for (int p = first; p < last; ++p) {
        const int k = problem.piece_block(p);
        internal::AddPieceTransposeProduct(problem.piece_data(p), problem.block_size(k),
                                           v + problem.block_offset(k), &u);
      }
      const Eigen::Vector3d old = r->segment<3>(3 * a);
      const Eigen::Vector3d q_local = u - blocks_[a] * old;
      const Eigen::Vector2d* warm = std::isnan(directions_[a].x()) ? nullptr : &directions_[a];
      const SingleContactSolution local =
          SolveSingleContact(blocks_[a], inverses_[a], invertible_[a], q_local, mu[a], old, warm);
      directions_[a] = local.state == ContactState::Sliding
                           ? local.direction
                           : Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN());
      Eigen::Vector3d next =
          omega == 1.0 ? local.r : Eigen::Vector3d(old + omega * (local.r - old));
      if (omega > 1.0) next = ProjectOntoCone(mu[a], next);
      const Eigen::Vector3d change = next - old;
      if (change.isZero(0.0)) continue;
      r->segment<3>(3 * a) = next;
      for (int p = first; p < last; ++p) {
        const int k = problem.piece_block(p);
        internal::AddPieceProduct(products_.data() + product_offset_[p], problem.block_size(k),
                                  change, v + problem.block_offset(k));
      }
    }
    if (options_.time_limit_seconds > 0.0 && elapsed() > options_.time_limit_seconds) {
      timed_out = true;
    }
    // The error costs a third of a sweep: checked after sweeps 1, 2, 3, 5, 8, 12, ... (then
    // every 20) and after the last.
    if (sweep < next_check && sweep < options_.max_sweeps && !timed_out) continue;
    next_check = sweep + std::min(20, (sweep + 1) / 2);
    problem.ContactVelocity(v_, &u_);
    double error = error_at();
    if (error <= options_.tolerance) {
      problem.Velocity(*r, &v_);  // without the updates' rounding
      problem.ContactVelocity(v_, &u_);
      DescribeFrictionPoint(problem, *r, u_, &summary);
      error = summary.natural_residual;
      converged = error <= options_.tolerance;
      described = converged;
    }
    if (!(error >= best_error)) {
      best_error = error;
      best_ = *r;
    }
    if (!std::isfinite(error)) break;
    if (timed_out) {
      timed_out = !converged;
      break;
    }
  }
  if (!described) {
    *r = best_;
    problem.Velocity(*r, &v_);
    problem.ContactVelocity(v_, &u_);
    DescribeFrictionPoint(problem, *r, u_, &summary);
  }
  summary.iterations = sweep;
  char message[160];
  if (summary.natural_residual <= options_.tolerance) {
    summary.status = Status::Converged;
    std::snprintf(message, sizeof(message), "FCLib error %g <= tolerance %g after %d sweeps",
                  summary.natural_residual, options_.tolerance, sweep);
  } else if (!std::isfinite(summary.natural_residual) || !r->allFinite()) {
    summary.status = Status::NumericalFailure;
    std::snprintf(message, sizeof(message), "the iterate became non-finite in sweep %d", sweep);
  } else {
    summary.status = Status::MaxIterations;
    std::snprintf(message, sizeof(message), "FCLib error %g > tolerance %g after %d sweeps%s",
                  summary.natural_residual, options_.tolerance, sweep,
                  timed_out ? " (time limit reached)" : "");
  }
  summary.message = message;
  summary.wall_time_seconds = elapsed();
  return summary;
}

}  // namespace ncpkit
