// Bodies as every stepper and scene sees them: a name, a convex shape, mass properties
// computed from the shape, a state, and what may move.
#ifndef NCPKIT_DYNAMICS_BODY_H_
#define NCPKIT_DYNAMICS_BODY_H_

#include <array>
#include <string>
#include <vector>

#include "dynamics/rigid_body.h"
#include "dynamics/shapes.h"

namespace ncpkit {

using Vector6d = Eigen::Matrix<double, 6, 1>;

// Largest coordinate (m; rad for a revolute actuator) a scene may hold: positions, actuator
// commands, and every body after a step. At 1e6 m a double still resolves 1.2e-10 m; a step
// that takes a body beyond it is a failed step and moves nothing.
constexpr double kMaxCoordinate = 1e6;

struct Body {
  std::string name;
  Shape shape;          // a sphere of radius 0 is a point (explicit contact only)
  MassProperties mass;  // moving bodies; mass 0 is allowed for bodies an actuator moves
  // Pose (position of the centre of mass, orientation) and twist. Steppers that work with
  // displacements (quasistatic) leave the twist at zero.
  RigidBodyState state;
  bool fixed = false;
  // Quasistatic steppers: which world degrees of freedom [x, y, z, rx, ry, rz] an unactuated
  // body has (default all).
  std::array<bool, 6> free_dofs = {true, true, true, true, true, true};
  bool IsPoint() const { return shape.kind == ShapeKind::Sphere && shape.size[0] == 0.0; }
};

// Mass properties of a solid of the shape and mass (kg), from its kind's row of the shape
// registry: box, cylinder (axis along body x) and ellipsoid by their formulas, a sphere as the
// ellipsoid with equal semi-axes, a point as a sphere of radius 1 mm (so that rotations of a
// point, if free, stay well posed). Mass 0 gives mass 0 (an actuated body that only carries a
// shape). A half-space has no solid: unit inertia.
MassProperties SolidMassProperties(const Shape& shape, double mass);

// Index of the named body, -1 if none.
int FindBody(const std::vector<Body>& bodies, const std::string& name);

// What every stepper needs of its bodies: unique names, valid shapes, a finite state with a
// unit quaternion. `dynamic` (the implicit stepper): every moving body has valid mass
// properties and is not a plane, and no body is a point; otherwise (the quasistatic steppers,
// which check what they move themselves) points are allowed. Throws InputError naming the
// body.
void ValidateBodies(const std::vector<Body>& bodies, bool dynamic);
// The checks of ValidateBodies on one body, all but the names'.
void ValidateBody(const Body& body, bool dynamic);

// Quantities of a body state by index [x, y, z, vx, vy, vz, wx, wy, wz], for events and reports.
double StateQuantity(const RigidBodyState& state, int quantity);

}  // namespace ncpkit

#endif  // NCPKIT_DYNAMICS_BODY_H_
