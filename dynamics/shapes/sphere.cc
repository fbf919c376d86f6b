#include "dynamics/shapes/sphere.h"

#include "dynamics/shape_registry.h"
#include "dynamics/shapes/ellipsoid.h"

namespace ncpkit {
namespace {

using Eigen::Vector3d;

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

}  // namespace

ShapeType SphereShapeType() {
  ShapeType type;
  type.name = "sphere";
  type.size_count = 1;
  type.size_meaning = "[radius]";
  type.support = &Support;
  type.bounding_radius = &BoundingRadius;
  type.bounding_half_extents = &BoundingHalfExtents;
  type.solid_mass = &SolidMass;
  type.mesh = &Mesh;
  return type;
}

}  // namespace ncpkit
