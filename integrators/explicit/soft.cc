#include "integrators/explicit/soft.h"

#include "integrators/explicit_stepper.h"

namespace ncpkit::internal {
namespace {

// Stands in for the solver of a model that poses no problem.
class NoSolver : public ComplementaritySolver {
 public:
  explicit NoSolver(const SolverOptions& options) : ComplementaritySolver("none", options) {
    summary_.solver = "none";
    summary_.status = Status::Converged;
    summary_.natural_residual = 0.0;
    summary_.message = "soft contact: no complementarity problem";
  }
  const SolverSummary& Solve(const LinearComplementarityProblem&, Eigen::VectorXd*) override {
    return summary_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  SolverSummary summary_;
};

}  // namespace

SoftModel::SoftModel(const ExplicitStepperOptions& options)
    : solver_(std::make_unique<NoSolver>(options.SolverSettings())) {}

// Start-of-step velocities, impulses h F (SoftLaw).
void SoftModel::Solve(const ExplicitStepContext& step, const IslandView& island,
                      std::vector<ExplicitContact>* island_contacts, ExplicitIslandResult* result) {
  const ExplicitWorkspace& w = step.workspace;
  std::vector<ExplicitContact>& contacts = *island_contacts;
  const double k = step.options.soft_stiffness, d = step.options.soft_damping;
  const double h = step.options.h;
  for (int link = 0; link < island.num_links; ++link) {
    const int c = island.links[link];
    ExplicitContact& contact = contacts[c];
    const Eigen::Vector3d v = w.rows_a[c] * StartTwist(step.bodies[contact.body_a]) +
                              w.rows_b[c] * StartTwist(step.bodies[contact.body_b]);
    contact.impulse.setZero();
    contact.anchor_offset.setZero();
    const double depth = -contact.point.distance;
    if (depth <= 0.0) continue;
    // The anchor offset carried from the previous step, in this step's tangent plane.
    Eigen::Vector2d s = Eigen::Vector2d::Zero();
    if (const ExplicitContact* old = w.Previous(contacts, c)) {
      s = Eigen::Vector2d(old->anchor_offset.dot(contact.tangent1),
                          old->anchor_offset.dot(contact.tangent2));
    }
    SoftLaw(depth, v, w.mu[c], k, d, h, &s, &contact.impulse);
    contact.anchor_offset = s.x() * contact.tangent1 + s.y() * contact.tangent2;
  }
  result->summary = solver_->summary();
  result->problem_size = 0;
  result->attempts = 1;
}

void SoftModel::ApplyImpulses(const ExplicitStepContext& step, const IslandView& island,
                              const std::vector<ExplicitContact>& contacts) {
  ExplicitWorkspace& w = step.workspace;
  for (int link = 0; link < island.num_links; ++link) {
    const int c = island.links[link];
    const Eigen::Vector3d& r = contacts[c].impulse;
    // A fixed body is in no island: its velocity is shared by every island that touches it.
    const int a = contacts[c].body_a, b = contacts[c].body_b;
    if (!step.bodies[a].fixed) w.velocity[a] += w.inverse_mass[a] * (w.rows_a[c].transpose() * r);
    if (!step.bodies[b].fixed) w.velocity[b] += w.inverse_mass[b] * (w.rows_b[c].transpose() * r);
  }
}

}  // namespace ncpkit::internal
