#include "integrators/explicit/model.h"

#include "integrators/explicit/cone.h"
#include "integrators/explicit/pyramid.h"
#include "integrators/explicit/relaxed.h"
#include "integrators/explicit/soft.h"
#include "integrators/explicit_stepper.h"
#include "integrators/step_derivative.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {

void ExplicitContactModel::ApplyImpulses(const ExplicitStepContext& step, const IslandView& island,
                                         const std::vector<ExplicitContact>& contacts) {
  ExplicitWorkspace& w = step.workspace;
  if (body_impulse_.size() != step.bodies.size()) body_impulse_.resize(step.bodies.size());
  for (int k = 0; k < island.num_bodies; ++k) body_impulse_[island.bodies[k]].setZero();
  for (int k = 0; k < island.num_links; ++k) {
    const int c = island.links[k];
    const Eigen::Vector3d& r = contacts[c].impulse;
    // A fixed body is in no island: its velocity is shared by every island that touches it.
    // (The bodies and their flags from the workspace's compact lists, as in posing.)
    const auto [a, b] = w.contact_bodies[c];
    if (!w.fixed[a]) body_impulse_[a].noalias() += w.rows_a[c].transpose() * r;
    if (!w.fixed[b]) body_impulse_[b].noalias() += w.rows_b[c].transpose() * r;
  }
  for (int k = 0; k < island.num_bodies; ++k) {
    const int i = island.bodies[k];
    w.velocity[i].noalias() += w.inverse_mass[i] * body_impulse_[i];
  }
}

Eigen::MatrixXd ExplicitImpulseSensitivity::JvpColumns(const Eigen::MatrixXd& dq,
                                                       const Eigen::MatrixXd& dmu,
                                                       const Eigen::MatrixXd& dW) const {
  const Eigen::Index k = ChangeCount(dq, dmu, dW, "explicit step derivative: dq, dmu and dW");
  Eigen::MatrixXd out;
  for (Eigen::Index j = 0; j < k; ++j) {
    const Eigen::VectorXd dr = Jvp(ChangeColumn(dq, j), ChangeColumn(dmu, j), ChangeColumn(dW, j));
    if (j == 0) out.resize(dr.size(), k);
    out.col(j) = dr;
  }
  return out;
}

std::unique_ptr<ExplicitImpulseSensitivity> ExplicitContactModel::Sensitivity(
    const GlobalFrictionContactProblem& /*problem*/, const Eigen::VectorXd& /*r*/,
    const ExplicitWorkspace& /*workspace*/) const {
  throw InputError(std::string("explicit stepper: derivatives of steps are not available for "
                               "the ") +
                   name() + " model (docs/derivatives.md lists the models that have them)");
}

SolverSummary NoContactSummary(const std::string& solver) {
  SolverSummary summary;
  summary.solver = solver;
  summary.status = Status::Converged;
  summary.natural_residual = 0.0;
  summary.message = "no contact";
  return summary;
}

std::unique_ptr<ExplicitContactModel> MakeExplicitContactModel(
    const ExplicitStepperOptions& options) {
  switch (options.model) {
    case ExplicitModel::Cone:
    case ExplicitModel::Convex:  // the cone's problem, for a convex-model solver
      return std::make_unique<ConeModel>(options);
    case ExplicitModel::Pyramid:
      return std::make_unique<PyramidModel>(options);
    case ExplicitModel::Relaxed:
      return std::make_unique<RelaxedModel>(options);
    case ExplicitModel::Soft:
      return std::make_unique<SoftModel>(options);
  }
  throw InputError("explicit stepper: unknown contact model");
}

}  // namespace ncpkit::internal
