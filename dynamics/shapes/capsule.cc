#include "dynamics/shapes/capsule.h"

#include <cmath>

#include "dynamics/shape_registry.h"

namespace ncpkit {

using Eigen::Vector3d;

// The kind's facts, named apart from the other kinds' (a unity build compiles them together).
namespace capsule_shape {

// The farther end's ball along d; the segment's centre where d is square to the axis (the
// maximizer is then the whole side line, within `flat`).
Vector3d Support(const Shape& shape, const Vector3d& d, double flat) {
  const double length = d.norm();
  if (!(length > 0.0)) return Vector3d(0.5 * shape.size[1], 0.0, 0.0);
  const double along = std::abs(d[0]) <= flat * length ? 0.0 : (d[0] > 0.0 ? 1.0 : -1.0);
  return Vector3d(0.5 * shape.size[1] * along, 0.0, 0.0) + shape.size[0] * d / length;
}

double BoundingRadius(const Shape& shape) { return shape.size[0] + 0.5 * shape.size[1]; }

// The segment's ends at +-(l/2) R e_x, widened by r on every axis.
Vector3d BoundingHalfExtents(const Shape& shape, const Eigen::Matrix3d& R) {
  return (0.5 * shape.size[1]) * R.col(0).cwiseAbs() + Vector3d::Constant(shape.size[0]);
}

// A cylinder of length l and two hemispheres of radius r, one density. About the centre, across
// the axis, each hemisphere (mass m_h, centroid 3r/8 from its flat face) adds
// (83/320) m_h r^2 + m_h (l/2 + 3r/8)^2; the two together m_s (2r^2/5 + l^2/4 + 3lr/8).
MassProperties SolidMass(const Shape& shape, double mass) {
  const double r = shape.size[0], l = shape.size[1];
  const double cylinder = M_PI * r * r * l, balls = 4.0 / 3.0 * M_PI * r * r * r;
  const double m_cylinder = mass * cylinder / (cylinder + balls), m_balls = mass - m_cylinder;
  const double axial = m_cylinder * r * r / 2.0 + m_balls * 2.0 * r * r / 5.0;
  const double across = m_cylinder * (r * r / 4.0 + l * l / 12.0) +
                        m_balls * (2.0 * r * r / 5.0 + l * l / 4.0 + 3.0 * l * r / 8.0);
  MassProperties properties;
  properties.mass = mass;
  properties.body_inertia = Vector3d(axial, across, across).asDiagonal();
  return properties;
}

// Both ends' balls' points along d: a capsule lying on a face touches it along its side, and
// the contact is made at the side line's ends (a line contact's two points).
int EndPoints(const Shape& shape, const Vector3d& d, double /*flat*/, Vector3d* points) {
  const double length = d.norm();
  const Vector3d rim = length > 0.0 ? Vector3d(shape.size[0] * d / length) : Vector3d::Zero();
  points[0] = Vector3d(-0.5 * shape.size[1], 0.0, 0.0) + rim;
  points[1] = Vector3d(0.5 * shape.size[1], 0.0, 0.0) + rim;
  return 2;
}

// Rings about the x axis from the +x pole to the -x pole, the equator twice (once at each end
// of the segment) so that the side is a straight band; shared vertices: shaded smooth.
ShapeMesh Mesh(const Shape& shape) {
  constexpr int kAround = 24, kUp = 12;  // kUp even: the equator is a ring
  const double r = shape.size[0], half = 0.5 * shape.size[1];
  ShapeMesh mesh;
  int rings = 0;
  for (int i = 0; i <= kUp; ++i) {
    const double polar = M_PI * i / kUp;
    for (const double end : {1.0, -1.0}) {
      if ((end > 0.0 && 2 * i > kUp) || (end < 0.0 && 2 * i < kUp)) continue;
      for (int j = 0; j <= kAround; ++j) {
        const double azimuth = 2.0 * M_PI * j / kAround;
        mesh.vertices.emplace_back(r * std::cos(polar) + end * half,
                                   r * std::sin(polar) * std::cos(azimuth),
                                   r * std::sin(polar) * std::sin(azimuth));
      }
      ++rings;
    }
  }
  for (int i = 0; i + 1 < rings; ++i) {
    for (int j = 0; j < kAround; ++j) {
      const int a = i * (kAround + 1) + j, b = a + kAround + 1;
      mesh.triangles.push_back({a, b, a + 1});
      mesh.triangles.push_back({a + 1, b, b + 1});
    }
  }
  return mesh;
}

}  // namespace capsule_shape

ShapeType CapsuleShapeType() {
  ShapeType type;
  type.name = "capsule";
  type.size_count = 2;
  type.size_meaning = "[radius, length]";
  type.support = &capsule_shape::Support;
  type.bounding_radius = &capsule_shape::BoundingRadius;
  type.bounding_half_extents = &capsule_shape::BoundingHalfExtents;
  type.solid_mass = &capsule_shape::SolidMass;
  type.candidates = &capsule_shape::EndPoints;
  type.mesh = &capsule_shape::Mesh;
  return type;
}

}  // namespace ncpkit
