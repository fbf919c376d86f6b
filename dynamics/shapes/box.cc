#include "dynamics/shapes/box.h"

#include <cmath>

#include "dynamics/shape_registry.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace box_shape {

// Sign of a direction component, 0 where it is negligible against the direction's length.
double FlatSign(double component, double length, double flat) {
  if (std::abs(component) <= flat * length) return 0.0;
  return component > 0.0 ? 1.0 : -1.0;
}

Vector3d Support(const Shape& shape, const Vector3d& d, double flat) {
  const double length = d.norm();
  Vector3d x;
  for (int k = 0; k < 3; ++k) x[k] = 0.5 * shape.size[k] * FlatSign(d[k], length, flat);
  return x;
}

double BoundingRadius(const Shape& shape) { return 0.5 * shape.size.norm(); }

Vector3d BoundingHalfExtents(const Shape& shape, const Eigen::Matrix3d& R) {
  return R.cwiseAbs() * (0.5 * shape.size);
}

MassProperties SolidMass(const Shape& shape, double mass) {
  return MassProperties::Box(mass, shape.size);
}

// The eight corners, whatever the direction.
int Corners(const Shape& shape, const Vector3d& /*d*/, double /*flat*/, Vector3d* points) {
  const Vector3d half = 0.5 * shape.size;
  for (int k = 0; k < 8; ++k) {
    points[k] = Vector3d(k & 1 ? half[0] : -half[0], k & 2 ? half[1] : -half[1],
                         k & 4 ? half[2] : -half[2]);
  }
  return 8;
}

// Four vertices a face, so that each face is shaded flat.
ShapeMesh Mesh(const Shape& shape) {
  ShapeMesh mesh;
  const Vector3d half = 0.5 * shape.size;
  for (int axis = 0; axis < 3; ++axis) {
    const int u = (axis + 1) % 3, v = (axis + 2) % 3;
    for (const double sign : {1.0, -1.0}) {
      const int first = static_cast<int>(mesh.vertices.size());
      for (const auto& [a, b] : {std::make_pair(-1.0, -1.0), std::make_pair(1.0, -1.0),
                                 std::make_pair(1.0, 1.0), std::make_pair(-1.0, 1.0)}) {
        Vector3d x;
        x[axis] = sign * half[axis];
        x[u] = a * half[u];
        x[v] = sign * b * half[v];  // counter-clockwise seen from outside
        mesh.vertices.push_back(x);
      }
      mesh.triangles.push_back({first, first + 1, first + 2});
      mesh.triangles.push_back({first, first + 2, first + 3});
    }
  }
  return mesh;
}

}  // namespace box_shape

ShapeType BoxShapeType() {
  ShapeType type;
  type.name = "box";
  type.size_count = 3;
  type.size_meaning = "[x, y, z] side lengths";
  type.support = &box_shape::Support;
  type.bounding_radius = &box_shape::BoundingRadius;
  type.bounding_half_extents = &box_shape::BoundingHalfExtents;
  type.solid_mass = &box_shape::SolidMass;
  type.candidates = &box_shape::Corners;
  type.has_faces = true;
  type.face_normals = {Vector3d::UnitX(), Vector3d::UnitY(), Vector3d::UnitZ()};
  type.mesh = &box_shape::Mesh;
  return type;
}

}  // namespace ncpkit
