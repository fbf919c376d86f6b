#include "dynamics/shapes/ellipsoid.h"

#include <cmath>

#include "dynamics/shape_registry.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace ellipsoid_shape {

// x = A^2 d / sqrt(d^T A^2 d), A = diag(semi-axes): exact.
Vector3d Support(const Shape& shape, const Vector3d& d, double /*flat*/) {
  const Vector3d a2d = shape.size.cwiseProduct(shape.size).cwiseProduct(d);
  const double s = std::sqrt(d.dot(a2d));
  return s > 0.0 ? Vector3d(a2d / s) : Vector3d::Zero();
}

double BoundingRadius(const Shape& shape) { return shape.size.maxCoeff(); }

// max of e_k . x over the ellipsoid: ||diag(a) R^T e_k||.
Vector3d BoundingHalfExtents(const Shape& shape, const Eigen::Matrix3d& R) {
  return (R * shape.size.asDiagonal()).rowwise().norm();
}

MassProperties SolidMass(const Shape& shape, double mass) {
  return MassProperties::Ellipsoid(mass, shape.size);
}

ShapeMesh Mesh(const Shape& shape) { return EllipsoidMesh(shape.size); }

}  // namespace ellipsoid_shape

ShapeMesh EllipsoidMesh(const Vector3d& semi_axes) {
  constexpr int kAround = 24, kUp = 12;
  ShapeMesh mesh;
  for (int i = 0; i <= kUp; ++i) {
    const double polar = M_PI * i / kUp;
    for (int j = 0; j <= kAround; ++j) {
      const double azimuth = 2.0 * M_PI * j / kAround;
      mesh.vertices.push_back(
          semi_axes.cwiseProduct(Vector3d(std::sin(polar) * std::cos(azimuth),
                                          std::sin(polar) * std::sin(azimuth), std::cos(polar))));
    }
  }
  for (int i = 0; i < kUp; ++i) {
    for (int j = 0; j < kAround; ++j) {
      const int a = i * (kAround + 1) + j, b = a + kAround + 1;
      mesh.triangles.push_back({a, b, a + 1});
      mesh.triangles.push_back({a + 1, b, b + 1});
    }
  }
  return mesh;
}

ShapeType EllipsoidShapeType() {
  ShapeType type;
  type.name = "ellipsoid";
  type.size_count = 3;
  type.size_meaning = "[a, b, c] semi-axes";
  type.support = &ellipsoid_shape::Support;
  type.bounding_radius = &ellipsoid_shape::BoundingRadius;
  type.bounding_half_extents = &ellipsoid_shape::BoundingHalfExtents;
  type.solid_mass = &ellipsoid_shape::SolidMass;
  type.mesh = &ellipsoid_shape::Mesh;
  return type;
}

}  // namespace ncpkit
