#include "dynamics/shapes/cylinder.h"

#include <algorithm>
#include <cmath>

#include "dynamics/shape_registry.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace cylinder_shape {

Vector3d Support(const Shape& shape, const Vector3d& d, double flat) {
  const double length = d.norm();
  const double along = std::abs(d[0]) <= flat * length ? 0.0 : (d[0] > 0.0 ? 1.0 : -1.0);
  Vector3d x(0.5 * shape.size[1] * along, 0.0, 0.0);
  const double radial = d.tail<2>().norm();
  if (radial > flat * length) x.tail<2>() = shape.size[0] * d.tail<2>() / radial;
  return x;
}

double BoundingRadius(const Shape& shape) { return std::hypot(shape.size[0], 0.5 * shape.size[1]); }

// Axis a = R e_x: the caps' rims reach |a_k| l/2 + r sqrt(1 - a_k^2) along e_k.
Vector3d BoundingHalfExtents(const Shape& shape, const Eigen::Matrix3d& R) {
  Vector3d e;
  for (int k = 0; k < 3; ++k) {
    const double a = std::min(1.0, std::abs(R(k, 0)));
    e[k] = a * 0.5 * shape.size[1] + shape.size[0] * std::sqrt(std::max(0.0, 1.0 - a * a));
  }
  return e;
}

MassProperties SolidMass(const Shape& shape, double mass) {
  return MassProperties::Cylinder(mass, shape.size[0], shape.size[1]);
}

// The extreme rim point of each cap along d, exactly; and the rest of a cap's rim, every 22.5
// degrees, where that cap lies flat against d (its rim's height varies by 2 r sin(tilt), within
// `flat`).
int RimPoints(const Shape& shape, const Vector3d& d, double flat, Vector3d* points) {
  const double radius = shape.size[0], half = 0.5 * shape.size[1];
  Vector3d radial(0.0, d[1], d[2]);
  const double length = radial.norm();
  radial = length > 1e-12 ? Vector3d(radial / length) : Vector3d::UnitY();
  const Vector3d across = Vector3d::UnitX().cross(radial);
  const bool cap_flat = 2.0 * radius * length <= flat * d.norm();
  int count = 0;
  for (const double side : {-1.0, 1.0}) {
    const Vector3d centre(side * half, 0.0, 0.0);
    const bool facing = cap_flat && side * d[0] > 0.0;
    for (int k = 0; k < (facing ? 16 : 1); ++k) {  // k = 0: the exact extreme rim point
      const double angle = M_PI / 8.0 * k;
      points[count++] = centre + radius * (std::cos(angle) * radial + std::sin(angle) * across);
    }
  }
  return count;
}

// The side's vertices shared around (smooth), each cap's apart (flat).
ShapeMesh Mesh(const Shape& shape) {
  constexpr int kAround = 32;
  const double radius = shape.size[0], half = 0.5 * shape.size[1];
  ShapeMesh mesh;
  const auto rim = [&](int j, double x) {
    const double angle = 2.0 * M_PI * j / kAround;
    return Vector3d(x, radius * std::cos(angle), radius * std::sin(angle));
  };
  for (int j = 0; j <= kAround; ++j) {
    mesh.vertices.push_back(rim(j, -half));
    mesh.vertices.push_back(rim(j, half));
  }
  for (int j = 0; j < kAround; ++j) {
    const int a = 2 * j;
    mesh.triangles.push_back({a, a + 2, a + 1});
    mesh.triangles.push_back({a + 1, a + 2, a + 3});
  }
  for (const double side : {-1.0, 1.0}) {
    const int centre = static_cast<int>(mesh.vertices.size());
    mesh.vertices.push_back(Vector3d(side * half, 0.0, 0.0));
    for (int j = 0; j < kAround; ++j) mesh.vertices.push_back(rim(j, side * half));
    for (int j = 0; j < kAround; ++j) {
      const int a = centre + 1 + j, b = centre + 1 + (j + 1) % kAround;
      if (side > 0.0) {
        mesh.triangles.push_back({centre, a, b});
      } else {
        mesh.triangles.push_back({centre, b, a});
      }
    }
  }
  return mesh;
}

}  // namespace cylinder_shape

ShapeType CylinderShapeType() {
  ShapeType type;
  type.name = "cylinder";
  type.size_count = 2;
  type.size_meaning = "[radius, length]";
  type.support = &cylinder_shape::Support;
  type.bounding_radius = &cylinder_shape::BoundingRadius;
  type.bounding_half_extents = &cylinder_shape::BoundingHalfExtents;
  type.solid_mass = &cylinder_shape::SolidMass;
  type.candidates = &cylinder_shape::RimPoints;
  type.has_faces = true;
  type.face_normals = {Vector3d::UnitX()};
  type.mesh = &cylinder_shape::Mesh;
  return type;
}

}  // namespace ncpkit
