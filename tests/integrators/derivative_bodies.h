// The bodies and options the tests of step and trajectory derivatives build their scenes from:
// a fixed ground plane, solid boxes, and the explicit stepper solved tightly enough (FCLib error
// 1e-12) for central differences of its steps.
#ifndef NCPKIT_TESTS_INTEGRATORS_DERIVATIVE_BODIES_H_
#define NCPKIT_TESTS_INTEGRATORS_DERIVATIVE_BODIES_H_

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <string>
#include <vector>

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

// s - s0 in the step derivatives' coordinates: per moving body its position, the world-frame
// turn from s0's orientation to s's, its linear and angular velocity.
inline Eigen::VectorXd StateDifference(const std::vector<RigidBodyState>& s,
                                       const std::vector<RigidBodyState>& s0) {
  Eigen::VectorXd d(12 * s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    const Eigen::AngleAxisd turn(s[k].orientation.toRotationMatrix() *
                                 s0[k].orientation.toRotationMatrix().transpose());
    d.segment<3>(12 * k) = s[k].position - s0[k].position;
    d.segment<3>(12 * k + 3) = turn.angle() * turn.axis();
    d.segment<3>(12 * k + 6) = s[k].linear_velocity - s0[k].linear_velocity;
    d.segment<3>(12 * k + 9) = s[k].angular_velocity - s0[k].angular_velocity;
  }
  return d;
}

// Moves entry `index` of the moving bodies' state (the step derivatives' coordinates) by delta:
// a rotation entry turns the body about that world axis.
inline void MoveStateEntry(std::vector<Body>* bodies, int index, double delta) {
  int k = index / 12;
  const int e = index % 12;
  for (Body& b : *bodies) {
    if (b.fixed || k-- > 0) continue;
    Eigen::Vector3d d = Eigen::Vector3d::Zero();
    d[e % 3] = delta;
    if (e < 3) b.state.position += d;
    if (e >= 3 && e < 6) {
      b.state.orientation =
          Eigen::Quaterniond(Eigen::AngleAxisd(delta, Eigen::Vector3d::Unit(e % 3))) *
          b.state.orientation;
    }
    if (e >= 6 && e < 9) b.state.linear_velocity += d;
    if (e >= 9) b.state.angular_velocity += d;
    return;
  }
}

}  // namespace ncpkit::derivative_bodies

#endif  // NCPKIT_TESTS_INTEGRATORS_DERIVATIVE_BODIES_H_
