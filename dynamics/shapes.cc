#include "dynamics/shapes.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/enum_names.h"

namespace ncpkit {

int Shape::NumInequalities() const {
  switch (kind) {
    case ShapeKind::HalfSpace:
    case ShapeKind::Sphere:
    case ShapeKind::Ellipsoid:
      return 1;
    case ShapeKind::Box:
      return 6;
    case ShapeKind::Cylinder:
      return 3;
  }
  return 0;
}

bool Shape::IsValid(std::string* why) const {
  int used = 0;
  switch (kind) {
    case ShapeKind::HalfSpace:
      used = 0;
      break;
    case ShapeKind::Sphere:
      used = 1;
      break;
    case ShapeKind::Cylinder:
      used = 2;
      break;
    case ShapeKind::Box:
    case ShapeKind::Ellipsoid:
      used = 3;
      break;
  }
  std::ostringstream os;
  for (int k = 0; k < used && os.str().empty(); ++k) {
    if (!(std::isfinite(size[k]) && size[k] > 0.0)) {
      os << "size[" << k << "] = " << size[k] << " must be positive and finite";
    }
  }
  if (why) *why = os.str();
  return os.str().empty();
}

namespace {

// Sign of a direction component, 0 where it is negligible against the direction's length.
double FlatSign(double component, double length, double flat) {
  if (std::abs(component) <= flat * length) return 0.0;
  return component > 0.0 ? 1.0 : -1.0;
}

}  // namespace

Eigen::Vector3d Shape::SupportPoint(const Eigen::Vector3d& d, double flat) const {
  const double length = d.norm();
  switch (kind) {
    case ShapeKind::HalfSpace:
      if (d.head<2>().norm() <= flat * length && d[2] > 0.0) return Eigen::Vector3d::Zero();
      throw InputError("a half-space has no support point in this direction");
    case ShapeKind::Box: {
      Eigen::Vector3d x;
      for (int k = 0; k < 3; ++k) x[k] = 0.5 * size[k] * FlatSign(d[k], length, flat);
      return x;
    }
    case ShapeKind::Sphere:
      return length > 0.0 ? Eigen::Vector3d(size[0] * d / length) : Eigen::Vector3d::Zero();
    case ShapeKind::Ellipsoid: {
      // x = A^2 d / sqrt(d^T A^2 d), A = diag(semi-axes).
      const Eigen::Vector3d a2d = size.cwiseProduct(size).cwiseProduct(d);
      const double s = std::sqrt(d.dot(a2d));
      return s > 0.0 ? Eigen::Vector3d(a2d / s) : Eigen::Vector3d::Zero();
    }
    case ShapeKind::Cylinder: {
      Eigen::Vector3d x(0.5 * size[1] * FlatSign(d[0], length, flat), 0.0, 0.0);
      const double radial = d.tail<2>().norm();
      if (radial > flat * length) x.tail<2>() = size[0] * d.tail<2>() / radial;
      return x;
    }
  }
  return Eigen::Vector3d::Zero();
}

double Shape::BoundingRadius() const {
  switch (kind) {
    case ShapeKind::HalfSpace:
      return std::numeric_limits<double>::infinity();
    case ShapeKind::Box:
      return 0.5 * size.norm();
    case ShapeKind::Sphere:
      return size[0];
    case ShapeKind::Ellipsoid:
      return size.maxCoeff();
    case ShapeKind::Cylinder:
      return std::hypot(size[0], 0.5 * size[1]);
  }
  return 0.0;
}

Eigen::Vector3d Shape::BoundingHalfExtents(const Eigen::Matrix3d& R) const {
  switch (kind) {
    case ShapeKind::HalfSpace:
      return Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity());
    case ShapeKind::Box:
      return R.cwiseAbs() * (0.5 * size);
    case ShapeKind::Sphere:
      return Eigen::Vector3d::Constant(size[0]);
    case ShapeKind::Ellipsoid:
      // max of e_k . x over the ellipsoid: ||diag(a) R^T e_k||.
      return (R * size.asDiagonal()).rowwise().norm();
    case ShapeKind::Cylinder: {
      // Axis a = R e_x: the caps' rims reach |a_k| l/2 + r sqrt(1 - a_k^2) along e_k.
      Eigen::Vector3d e;
      for (int k = 0; k < 3; ++k) {
        const double a = std::min(1.0, std::abs(R(k, 0)));
        e[k] = a * 0.5 * size[1] + size[0] * std::sqrt(std::max(0.0, 1.0 - a * a));
      }
      return e;
    }
  }
  return Eigen::Vector3d::Zero();
}

namespace {
constexpr internal::EnumName<ShapeKind> kShapeKindNames[] = {{ShapeKind::HalfSpace, "plane"},
                                                             {ShapeKind::Box, "box"},
                                                             {ShapeKind::Sphere, "sphere"},
                                                             {ShapeKind::Ellipsoid, "ellipsoid"},
                                                             {ShapeKind::Cylinder, "cylinder"}};
}  // namespace

std::string Shape::Name() const { return internal::NameIn(kShapeKindNames, kind); }

bool ParseShapeKind(const std::string& name, ShapeKind* kind) {
  return internal::ValueIn(kShapeKindNames, name, kind);
}

}  // namespace ncpkit
