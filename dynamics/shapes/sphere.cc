#include "dynamics/shapes/sphere.h"

#include "dynamics/shape_registry.h"
#include "dynamics/shapes/ellipsoid.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace sphere_shape {

Vector3d Support(const Vector3d& size, const Vector3d& d, double /*flat*/) {
  const double length = d.norm();
  return length > 0.0 ? Vector3d(size[0] * d / length) : Vector3d::Zero();
}

double BoundingRadius(const Vector3d& size) { return size[0]; }

Vector3d BoundingHalfExtents(const Vector3d& size, const Eigen::Matrix3d& /*R*/) {
  return Vector3d::Constant(size[0]);
}

// A point (radius 0) as a sphere of radius 1 mm, so that its rotations, if free, stay well
// posed.
MassProperties SolidMass(const Vector3d& size, double mass) {
  return MassProperties::Ellipsoid(mass, Vector3d::Constant(size[0] > 0.0 ? size[0] : 1e-3));
}

ShapeMesh Mesh(const Vector3d& size) { return EllipsoidMesh(Vector3d::Constant(size[0])); }

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
