// The explicit stepper's soft model (the contact modelling notes): a spring-damper
// F = K_p (r_c - r_c0) + K_d r_c' at every overlapping contact point, the anchor r_c0 kept from
// the step the contact began and dragged along when the tangential force would leave the Coulomb
// cone; no complementarity problem. Forces from the start of the step (semi-implicit Euler):
// stable while h sqrt(K_p / m) < 2 and h K_d r^2 / I < 2 for every body (r: contact arm, I: its
// inertia; a small box's yaw is the first to oscillate from step to step).
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_SOFT_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_SOFT_H_

#include <memory>
#include <vector>

#include "integrators/explicit/model.h"

namespace ncpkit::internal {

class SoftModel : public ExplicitContactModel {
 public:
  explicit SoftModel(const ExplicitStepperOptions& options);
  const char* name() const override { return "soft"; }
  void Solve(const ExplicitStepContext& step, const IslandView& island,
             std::vector<ExplicitContact>* contacts, ExplicitIslandResult* result) override;
  // Contact by contact, as the forces were found.
  void ApplyImpulses(const ExplicitStepContext& step, const IslandView& island,
                     const std::vector<ExplicitContact>& contacts) override;
  const ComplementaritySolver& solver() const override { return *solver_; }
  bool ConstrainsEndVelocities() const override { return false; }

 private:
  std::unique_ptr<ComplementaritySolver> solver_;  // solves nothing; names the model
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_SOFT_H_
