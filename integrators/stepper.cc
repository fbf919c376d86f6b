#include "integrators/stepper.h"

#include <cmath>
#include <string>

namespace ncpkit {

internal::OptionChecks StepperSettings::Check() const {
  internal::OptionChecks checks;
  checks.Require(std::isfinite(h) && h > 0.0, "h", h, "must be positive and finite")
      .Require(gravity.allFinite(), "gravity", gravity.norm(), "must be finite")
      .Require(std::isfinite(tolerance) && tolerance > 0.0, "tolerance", tolerance,
               "must be positive and finite")
      .Require(max_iterations >= 0, "max_iterations", max_iterations, "must be >= 0")
      .Require(threads >= 1 && threads <= kMaxThreads, "threads", threads, "must be in [1, 256]");
  return checks;
}

const std::vector<Vector6d> Stepper::kNoImpulses;
const std::vector<Actuator> Stepper::kNoActuators;

std::unique_ptr<StepDerivative> Stepper::LastStepDerivative() const {
  throw InputError("the " + variant() + " stepper has no step derivatives (docs/derivatives.md)");
}

std::unique_ptr<StepperSnapshot> Stepper::Save() const {
  throw InputError("the " + variant() + " stepper has no snapshots");
}

void Stepper::Restore(const StepperSnapshot& /*snapshot*/) {
  throw InputError("the " + variant() + " stepper has no snapshots");
}

void internal::RequireSettableBodyState(const char* stepper, const std::vector<Body>& bodies, int i,
                                        const RigidBodyState& state) {
  const std::string call = std::string(stepper) + " stepper: SetBodyState(" + std::to_string(i);
  if (i < 0 || i >= static_cast<int>(bodies.size()) || bodies[i].fixed) {
    throw InputError(call + ") names no moving body");
  }
  const bool finite = state.position.allFinite() && state.orientation.coeffs().allFinite() &&
                      state.linear_velocity.allFinite() && state.angular_velocity.allFinite();
  if (!finite || std::abs(state.orientation.norm() - 1.0) > 1e-9) {
    throw InputError(call + "): a non-finite state or a quaternion not of unit length");
  }
}

}  // namespace ncpkit
