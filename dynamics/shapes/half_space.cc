#include "dynamics/shapes/half_space.h"

#include <limits>

#include "dynamics/shape_registry.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace half_space_shape {

// Bounded along +z only: the point of the plane below the origin.
Vector3d Support(const Shape& /*shape*/, const Vector3d& d, double flat) {
  if (d.head<2>().norm() <= flat * d.norm() && d[2] > 0.0) return Vector3d::Zero();
  throw InputError("a half-space has no support point in this direction");
}

double BoundingRadius(const Shape& /*shape*/) { return std::numeric_limits<double>::infinity(); }

Vector3d BoundingHalfExtents(const Shape& /*shape*/, const Eigen::Matrix3d& /*R*/) {
  return Vector3d::Constant(std::numeric_limits<double>::infinity());
}

// No solid: unit mass and inertia (a plane is always fixed).
MassProperties SolidMass(const Shape& /*shape*/, double mass) {
  MassProperties properties;
  properties.mass = mass;
  return properties;
}

}  // namespace half_space_shape

ShapeType HalfSpaceShapeType() {
  ShapeType type;
  type.name = "plane";
  type.support = &half_space_shape::Support;
  type.bounding_radius = &half_space_shape::BoundingRadius;
  type.bounding_half_extents = &half_space_shape::BoundingHalfExtents;
  type.solid_mass = &half_space_shape::SolidMass;
  type.has_faces = true;
  type.face_normals = {Vector3d::UnitZ()};
  return type;
}

}  // namespace ncpkit
