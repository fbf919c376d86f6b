#include "integrators/explicit/cone.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "integrators/explicit_stepper.h"
#include "solvers/base/internal/finite.h"
#include "solvers/friction/convex_newton.h"
#include "solvers/sensitivity/global_friction_sensitivity.h"

namespace ncpkit::internal {

ConeModel::ConeModel(const ExplicitStepperOptions& options)
    : convex_(options.model == ExplicitModel::Convex),
      solver_(CreateSolver(options.solver, ProblemKind::GlobalFriction, options.SolverSettings())) {
}

// The contacts go to the solver highest first along gravity: the load flows down, so a
// Gauss-Seidel sweep in this order carries a stack's weight to the ground in one pass (on the
// 100-brick wall, 770 sweeps a step at 1e-6 against 3542 lowest first and 1638 in pair order).
// Without gravity, in pair order.
void ConeModel::Order(const Eigen::Vector3d& gravity, const IslandView& island,
                      const std::vector<ExplicitContact>& contacts) {
  const int nc = island.num_links;
  order_.resize(nc);
  const double g = gravity.norm();
  if (!(g > 0.0)) {
    for (int k = 0; k < nc; ++k) order_[k] = island.links[k];
    return;
  }
  const Eigen::Vector3d down = gravity / g;
  ranked_.resize(nc);
  for (int k = 0; k < nc; ++k) {
    const int c = island.links[k];
    const double depth = contacts[c].point.point_b.dot(down);
    ranked_[k] = {std::isfinite(depth) ? depth : 0.0, c};  // a strict order for the sort
  }
  std::sort(ranked_.begin(), ranked_.end());  // ties in pair order
  for (int k = 0; k < nc; ++k) order_[k] = ranked_[k].second;
}

void ConeModel::Assemble(const ExplicitStepContext& step, const IslandView& island) {
  const ExplicitWorkspace& w = step.workspace;
  problem_.Clear();
  if (block_of_body_.size() != step.bodies.size()) block_of_body_.resize(step.bodies.size());
  for (int k = 0; k < island.num_bodies; ++k) {
    const int i = island.bodies[k];
    const Vector6d momentum = w.mass_matrix[i] * w.velocity[i];
    block_of_body_[i] = problem_.AddBlock(w.mass_matrix[i], w.inverse_mass[i], momentum);
  }
  // The contacts' bodies and whether they are fixed from the workspace's compact lists, not
  // from the contacts and the bodies: order_ goes by height, at random through them on a wide
  // scene, and a contact's or a body's record is a few hundred bytes to fetch for one number
  // (100,000 spheres dropped in a box: posing went from 9.4 to 6.1 % of the time, perf).
  for (const int c : order_) {
    problem_.AddContact(w.mu[c], Eigen::Vector3d(w.normal_offset[c], 0.0, 0.0));
    const auto [body_a, body_b] = w.contact_bodies[c];
    // (Through a 6 x 3 matrix: a transpose expression would be copied to the heap.)
    Eigen::Matrix<double, 6, 3> rows;
    if (!w.fixed[body_a]) {
      rows = w.rows_a[c].transpose();
      problem_.AddContactBlock(block_of_body_[body_a], rows);
    }
    if (!w.fixed[body_b]) {
      rows = w.rows_b[c].transpose();
      problem_.AddContactBlock(block_of_body_[body_b], rows);
    }
  }
  problem_.Finalize();
}

// Warm started from the previous step's impulses matched to each contact.
void ConeModel::Solve(const ExplicitStepContext& step, const IslandView& island,
                      std::vector<ExplicitContact>* contacts, ExplicitIslandResult* result) {
  const int nc = island.num_links;
  Order(step.options.gravity, island, *contacts);
  Assemble(step, island);
  const GlobalFrictionContactProblem& problem = problem_;
  r_.setZero(3 * nc);
  if (step.options.warm_start) {
    for (int k = 0; k < nc; ++k) {
      if (const ExplicitContact* old = step.workspace.Previous(*contacts, order_[k])) {
        r_.segment<3>(3 * k) = ImpulseInFrame(*old, (*contacts)[order_[k]]);
      }
    }
  }
  result->summary = solver_->Solve(problem, &r_);
  if (r_.size() != 3 * nc || !AllFinite(r_)) r_.setZero(3 * nc);
  for (int k = 0; k < nc; ++k) (*contacts)[order_[k]].impulse = r_.segment<3>(3 * k);
  result->problem_size = 3 * nc;
  result->attempts = 1;
}

namespace {

// The letters of StepDerivative::contact_modes() for the contact states.
std::string Modes(const FrictionSensitivity& local) {
  using State = FrictionSensitivity::ContactState;
  std::string modes;
  for (int c = 0; c < local.num_contacts(); ++c) {
    const State state = local.state(c);
    modes += state == State::Apart      ? 'a'
             : state == State::Sticking ? 's'
             : state == State::Sliding  ? 'l'
                                        : 'f';
  }
  return modes;
}

class ConeSensitivity : public ExplicitImpulseSensitivity {
 public:
  ConeSensitivity(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r)
      : local_(problem, r) {
    modes = Modes(local_);
    degenerate = local_.degenerate();
    determined = GlobalFrictionSensitivity::VelocitiesDetermined(problem, local_);
  }
  Eigen::VectorXd Jvp(const Eigen::VectorXd& dq, const Eigen::VectorXd& dmu,
                      const Eigen::VectorXd& /*dW*/) const override {
    FrictionSensitivity::Tangent local;
    local.q = dq;
    local.mu = dmu;
    return local_.Jvp(local);
  }
  Eigen::MatrixXd JvpColumns(const Eigen::MatrixXd& dq, const Eigen::MatrixXd& dmu,
                             const Eigen::MatrixXd& /*dW*/) const override {
    return local_.JvpColumns(dq, dmu);
  }
  void Vjp(const Eigen::VectorXd& g, Eigen::VectorXd* q, Eigen::VectorXd* mu,
           Eigen::VectorXd* /*W*/) const override {
    FrictionSensitivity::Gradient local = local_.Vjp(g);
    *q = std::move(local.q);
    *mu = std::move(local.mu);
  }

 private:
  FrictionSensitivity local_;  // the local form's: nothing here differentiates M, H or f
};

// The convex model's (solvers/friction/convex_newton.h): K ∋ r ⊥ u + R r ∈ K* with the
// compliances R_c = rho s_c (rho the solver's default regularizations, the stepper's), scaled by
// s_c = ||W_cc||_F / 3. A change of W_cc moves s_c by <W_cc, dW_cc> / (3 ||W_cc||_F) and so
// u + R r, at fixed r, by (ds_c / s_c) R_c r_c: added to dq.
class ConvexSensitivity : public ExplicitImpulseSensitivity {
 public:
  ConvexSensitivity(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r)
      : compliance_(ConvexNewton().Compliances(problem)),
        local_(GlobalFrictionSensitivity::LocalSensitivity(problem, r, &compliance_,
                                                           SensitivityOptions())) {
    modes = Modes(local_);
    degenerate = local_.degenerate();
    determined = GlobalFrictionSensitivity::VelocitiesDetermined(problem, local_);
    reads_delassus_blocks = true;
    // Per contact d(R_c r_c) = R_c r_c <W_cc, dW_cc> / (9 s_c^2), a 3 x 9 map of dW_cc.
    const int nc = problem.num_contacts();
    response_.resize(nc);
    for (int c = 0; c < nc; ++c) {
      Eigen::Matrix3d W = Eigen::Matrix3d::Zero();
      for (int p = problem.piece_begin(c); p < problem.piece_begin(c + 1); ++p) {
        const Eigen::MatrixXd rows = problem.PieceRows(p);
        W += rows.transpose() * problem.InverseMass(problem.piece_block(p)) * rows;
      }
      const double scale = W.norm() / 3.0;
      response_[c].setZero();
      if (!(scale > 0.0) || !std::isfinite(scale)) continue;  // the solver's scale is then 1
      const Eigen::Vector3d Rr = r.segment<3>(3 * c).cwiseProduct(
          Eigen::Vector3d(compliance_(c, 0), compliance_(c, 1), compliance_(c, 1)));
      const Eigen::Map<const Eigen::Matrix<double, 1, 9>> weights(W.data());
      response_[c] = Rr * weights / (9.0 * scale * scale);
    }
  }
  Eigen::VectorXd Jvp(const Eigen::VectorXd& dq, const Eigen::VectorXd& dmu,
                      const Eigen::VectorXd& dW) const override {
    FrictionSensitivity::Tangent local;
    local.q = dq;
    for (size_t c = 0; c < response_.size() && dW.size() > 0; ++c) {
      local.q.segment<3>(3 * c) += response_[c] * dW.segment<9>(9 * c);
    }
    local.mu = dmu;
    return local_.Jvp(local);
  }
  void Vjp(const Eigen::VectorXd& g, Eigen::VectorXd* q, Eigen::VectorXd* mu,
           Eigen::VectorXd* W) const override {
    FrictionSensitivity::Gradient local = local_.Vjp(g);
    W->resize(9 * static_cast<Eigen::Index>(response_.size()));
    for (size_t c = 0; c < response_.size(); ++c) {
      W->segment<9>(9 * c) = response_[c].transpose() * local.q.segment<3>(3 * c);
    }
    *q = std::move(local.q);
    *mu = std::move(local.mu);
  }

 private:
  Eigen::MatrixX2d compliance_;
  FrictionSensitivity local_;  // the local form's: nothing here differentiates M, H or f
  std::vector<Eigen::Matrix<double, 3, 9>> response_;  // d(R_c r_c) / dW_cc
};

}  // namespace

std::unique_ptr<ExplicitImpulseSensitivity> ConeModel::Sensitivity(
    const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
    const ExplicitWorkspace& /*workspace*/) const {
  if (convex_) return std::make_unique<ConvexSensitivity>(problem, r);
  return std::make_unique<ConeSensitivity>(problem, r);
}

}  // namespace ncpkit::internal
