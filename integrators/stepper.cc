#include "integrators/stepper.h"

namespace ncpkit {

const std::vector<Vector6d> Stepper::kNoImpulses;
const std::vector<Actuator> Stepper::kNoActuators;

}  // namespace ncpkit
