#include "dynamics/shapes.h"

#include <cmath>
#include <sstream>

#include "dynamics/shape_registry.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

const ShapeType& TypeOf(const Shape& shape) {
  const ShapeType* type = FindShapeType(shape.kind);
  if (type == nullptr) {
    throw InputError("shape kind " + std::to_string(static_cast<int>(shape.kind)) +
                     " is not registered");
  }
  return *type;
}

}  // namespace

int Shape::NumInequalities() const {
  switch (kind) {
    case ShapeKind::HalfSpace:
      return kHalfSpaceInequalities;
    case ShapeKind::Box:
      return kBoxInequalities;
    case ShapeKind::Sphere:
      return kSphereInequalities;
    case ShapeKind::Ellipsoid:
      return kEllipsoidInequalities;
    case ShapeKind::Cylinder:
      return kCylinderInequalities;
    case ShapeKind::Capsule:
      return kCapsuleInequalities;
    case ShapeKind::Polyhedron:
      return polyhedron != nullptr ? PolyhedronInequalityCount(*polyhedron) : 0;
  }
  return 0;
}

bool Shape::IsValid(std::string* why) const {
  // A stream only for a shape that fails: a scene of thousands of bodies checks each of them
  // when it is read and when its stepper is built, and a stream's construction costs more than
  // the checks.
  const ShapeType* type = FindShapeType(kind);
  int bad = -1;
  for (int k = 0; type != nullptr && k < type->size_count && bad < 0; ++k) {
    if (!(size[k] > 0.0 && size[k] <= kMaxShapeSize)) bad = k;  // false for NaN
  }
  if (type != nullptr && bad < 0 && kind == ShapeKind::Polyhedron && polyhedron == nullptr) {
    if (why) *why = "a convex shape needs its vertices";
    return false;
  }
  if (type != nullptr && bad < 0) {
    if (why) why->clear();
    return true;
  }
  std::ostringstream os;
  if (type == nullptr) {
    os << "shape kind " << static_cast<int>(kind) << " is not registered";
  } else {
    os << "size[" << bad << "] = " << size[bad] << " must be positive and at most " << kMaxShapeSize
       << " m";
  }
  if (why) *why = os.str();
  return false;
}

Eigen::Vector3d Shape::SupportPoint(const Eigen::Vector3d& d, double flat) const {
  return TypeOf(*this).support(*this, d, flat);
}

double Shape::BoundingRadius() const { return TypeOf(*this).bounding_radius(*this); }

Eigen::Vector3d Shape::BoundingHalfExtents(const Eigen::Matrix3d& R) const {
  return TypeOf(*this).bounding_half_extents(*this, R);
}

std::string Shape::Name() const {
  const ShapeType* type = FindShapeType(kind);
  return type != nullptr ? type->name : "unregistered shape";
}

}  // namespace ncpkit
