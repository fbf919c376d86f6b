#include "dynamics/shapes/sphere.h"

#include "dynamics/shape_registry.h"
#include "dynamics/shapes/ellipsoid.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace sphere_shape {

Vector3d Support(const Shape& shape, const Vector3d& d, double /*flat*/) {
  const double length = d.norm();
  return length > 0.0 ? Vector3d(shape.size[0] * d / length) : Vector3d::Zero();
}

double BoundingRadius(const Shape& shape) { return shape.size[0]; }

Vector3d BoundingHalfExtents(const Shape& shape, const Eigen::Matrix3d& /*R*/) {
  return Vector3d::Constant(shape.size[0]);
}

// A point (radius 0) as a sphere of radius 1 mm, so that its rotations, if free, stay well
// posed.
MassProperties SolidMass(const Shape& shape, double mass) {
  return MassProperties::Ellipsoid(mass,
                                   Vector3d::Constant(shape.size[0] > 0.0 ? shape.size[0] : 1e-3));
}

ShapeMesh Mesh(const Shape& shape) { return EllipsoidMesh(Vector3d::Constant(shape.size[0])); }

}  // namespace sphere_shape

ShapeType SphereShapeType() {
  ShapeType type;
  type.name = "sphere";
  type.size_count = 1;
  type.size_meaning = "[radius]";
  type.support = &sphere_shape::Support;
  type.bounding_radius = &sphere_shape::BoundingRadius;
  type.bounding_half_extents = &sphere_shape::BoundingHalfExtents;
  type.solid_mass = &sphere_shape::SolidMass;
  type.mesh = &sphere_shape::Mesh;
  return type;
}

}  // namespace ncpkit
