#include "integrators/explicit/model.h"

#include "integrators/explicit/cone.h"
#include "integrators/explicit/pyramid.h"
#include "integrators/explicit/relaxed.h"
#include "integrators/explicit/soft.h"
#include "integrators/explicit_stepper.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {

void ExplicitContactModel::ApplyImpulses(const ExplicitStepContext& step,
                                         const std::vector<ExplicitContact>& contacts) {
  ExplicitWorkspace& w = step.workspace;
  body_impulse_.assign(step.bodies.size(), Vector6d::Zero());
  for (size_t c = 0; c < contacts.size(); ++c) {
    const Eigen::Vector3d& r = contacts[c].impulse;
    body_impulse_[contacts[c].body_a].noalias() += w.rows_a[c].transpose() * r;
    body_impulse_[contacts[c].body_b].noalias() += w.rows_b[c].transpose() * r;
  }
  for (size_t i = 0; i < step.bodies.size(); ++i) {
    if (!step.bodies[i].fixed) w.velocity[i].noalias() += w.inverse_mass[i] * body_impulse_[i];
  }
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
