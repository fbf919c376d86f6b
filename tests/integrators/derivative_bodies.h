// The bodies and options the tests of step and trajectory derivatives build their scenes from:
// a fixed ground plane, solid boxes, and the explicit stepper solved tightly enough (FCLib error
// 1e-12) for central differences of its steps.
#ifndef NCPKIT_TESTS_INTEGRATORS_DERIVATIVE_BODIES_H_
#define NCPKIT_TESTS_INTEGRATORS_DERIVATIVE_BODIES_H_

#include <Eigen/Dense>
#include <string>

#include "dynamics/body.h"
#include "integrators/explicit_stepper.h"

namespace ncpkit::derivative_bodies {

inline Body Ground() {
  Body ground;
  ground.name = "ground";
  ground.shape.kind = ShapeKind::HalfSpace;
  ground.fixed = true;
  return ground;
}

inline Body Box(const std::string& name, const Eigen::Vector3d& size, double mass,
                const Eigen::Vector3d& position) {
  Body box;
  box.name = name;
  box.shape.kind = ShapeKind::Box;
  box.shape.size = size;
  box.mass = SolidMassProperties(box.shape, mass);
  box.state.position = position;
  return box;
}

inline ExplicitStepperOptions TightOptions() {
  ExplicitStepperOptions options;
  options.h = 0.01;
  options.solver = "auto";
  options.tolerance = 1e-12;
  options.max_iterations = 200;
  return options;
}

}  // namespace ncpkit::derivative_bodies

#endif  // NCPKIT_TESTS_INTEGRATORS_DERIVATIVE_BODIES_H_
