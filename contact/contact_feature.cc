#include "contact/contact_feature.h"

#include <utility>

namespace ncpkit {
namespace {

// Which body (0: A, 1: B) each of FeatureId::signs' vectors belongs to, and whether it is a
// point (scaled by that body's half extents) or a unit axis.
struct Slot {
  int body;
  bool point;
};

Slot SlotOf(const FeatureId& id, int slot) {
  const int face = id.face_body, line = id.line_body;
  if (id.kind == ContactFeature::Kind::kEdges) return {slot < 4 ? 0 : 1, slot % 2 == 0};
  switch (slot) {
    case 0:
      return {face, false};
    case 1:
      return {face, true};
    case 2:
      return {id.incident == ContactFeature::Incident::kLinePlane ? line : 1 - face, true};
    case 3:
      return {line, false};
    case 4:
      return {1 - line, true};
    default:
      return {1 - line, false};
  }
}

Eigen::Vector3d HalfExtents(const Shape& shape) {
  return shape.kind == ShapeKind::Box ? Eigen::Vector3d(0.5 * shape.size) : Eigen::Vector3d::Zero();
}

}  // namespace

ContactFeature FeatureId::Expand(const Shape& a, const Shape& b) const {
  ContactFeature f;
  f.kind = kind;
  f.incident = incident;
  f.face_body = face_body;
  f.line_body = line_body;
  f.sign = sign;
  const Eigen::Vector3d half[2] = {HalfExtents(a), HalfExtents(b)};
  Eigen::Vector3d* vectors[6] = {&f.face_normal, &f.face_point,  &f.point,
                                 &f.direction,   &f.plane_point, &f.plane_normal};
  for (int v = 0; v < 6; ++v) {
    const Slot slot = SlotOf(*this, v);
    for (int k = 0; k < 3; ++k) {
      (*vectors[v])[k] = signs[v][k] * (slot.point ? half[slot.body][k] : 1.0);
    }
  }
  if (kind == ContactFeature::Kind::kSpheres) {
    f.radius = a.size[0];
    f.radius_b = b.size[0];
  } else if (incident == ContactFeature::Incident::kSphere) {
    f.radius = (face_body == 0 ? b : a).size[0];
  }
  return f;
}

void FeatureId::Flip() {
  face_body = static_cast<signed char>(1 - face_body);
  line_body = static_cast<signed char>(1 - line_body);
  if (kind == ContactFeature::Kind::kEdges) {
    // An edge that ends at the contact places the point by A's edge (its end, or the foot of B's
    // end on A's line); seen from B the point is A's plus the distance along the normal, which no
    // rule of EvaluateContactFeature gives: such a flipped contact is not described.
    for (int k = 0; k < 3; ++k) {
      if (signs[2][k] * signs[3][k] != 0 || signs[4][k] * signs[5][k] != 0) {
        kind = ContactFeature::Kind::kNone;
      }
    }
    for (int k = 0; k < 3; ++k) {
      std::swap(signs[2][k], signs[4][k]);
      std::swap(signs[3][k], signs[5][k]);
    }
  }
}

}  // namespace ncpkit
