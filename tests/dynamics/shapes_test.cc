#include "dynamics/shapes.h"

#include <ceres/jet.h>
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <cmath>

namespace ncpkit {
namespace {

std::vector<Shape> AllShapes() {
  return {{ShapeKind::HalfSpace, {1, 1, 1}},
          {ShapeKind::Box, {1.0, 2.0, 0.5}},
          {ShapeKind::Sphere, {0.7, 0, 0}},
          {ShapeKind::Ellipsoid, {1.0, 0.5, 0.25}},
          {ShapeKind::Cylinder, {1.0, 5.0, 0}}};
}

bool Inside(const Shape& s, const Eigen::Vector3d& p) {
  for (int i = 0; i < s.NumInequalities(); ++i) {
    if (s.Inequality(i, p.data()) > 1e-12) return false;
  }
  return true;
}

TEST_CASE("shapes contain what they should") {
  const auto shapes = AllShapes();
  CHECK(Inside(shapes[0], Eigen::Vector3d(5, -3, -0.1)));
  CHECK_FALSE(Inside(shapes[0], Eigen::Vector3d(0, 0, 0.1)));
  CHECK(Inside(shapes[1], Eigen::Vector3d(0.5, -1.0, 0.25)));  // a vertex
  CHECK_FALSE(Inside(shapes[1], Eigen::Vector3d(0.51, 0, 0)));
  CHECK(Inside(shapes[2], Eigen::Vector3d(0, 0.7, 0)));
  CHECK_FALSE(Inside(shapes[2], Eigen::Vector3d(0.5, 0.5, 0)));
  CHECK(Inside(shapes[3], Eigen::Vector3d(0, 0, 0.25)));
  CHECK_FALSE(Inside(shapes[3], Eigen::Vector3d(0, 0.4, 0.2)));
  CHECK(Inside(shapes[4], Eigen::Vector3d(2.5, 0, -1.0)));  // bottom line of the cylinder
  CHECK_FALSE(Inside(shapes[4], Eigen::Vector3d(2.6, 0, 0)));
  CHECK_FALSE(Inside(shapes[4], Eigen::Vector3d(0, 0.8, 0.8)));
}

TEST_CASE("inequality gradients from Jets match finite differences") {
  using Jet3 = ceres::Jet<double, 3>;
  const Eigen::Vector3d p(0.3, -0.2, 0.45);
  for (const Shape& s : AllShapes()) {
    for (int i = 0; i < s.NumInequalities(); ++i) {
      const Jet3 x[3] = {Jet3(p[0], 0), Jet3(p[1], 1), Jet3(p[2], 2)};
      const Jet3 f = s.Inequality(i, x);
      for (int j = 0; j < 3; ++j) {
        Eigen::Vector3d plus = p, minus = p;
        plus[j] += 1e-6;
        minus[j] -= 1e-6;
        const double fd = (s.Inequality(i, plus.data()) - s.Inequality(i, minus.data())) / 2e-6;
        CHECK(f.v[j] == doctest::Approx(fd).epsilon(1e-7));
      }
    }
  }
}

TEST_CASE("bounding boxes are the support function on the world axes") {
  // Each half extent equals max over the turned shape of +-e_k . x, which the support point in
  // the body frame gives exactly; checked on rotations about several axes.
  for (const Shape& shape : AllShapes()) {
    if (shape.kind == ShapeKind::HalfSpace) continue;
    CAPTURE(shape.Name());
    for (int trial = 0; trial < 20; ++trial) {
      const Eigen::Vector3d axis =
          Eigen::Vector3d(std::sin(trial + 1.0), std::cos(3.0 * trial), 0.3 + trial % 3)
              .normalized();
      const Eigen::Matrix3d R = Eigen::AngleAxisd(0.37 * trial, axis).toRotationMatrix();
      const Eigen::Vector3d extents = shape.BoundingHalfExtents(R);
      for (int k = 0; k < 3; ++k) {
        const Eigen::Vector3d e = Eigen::Vector3d::Unit(k);
        const double upper = e.dot(R * shape.SupportPoint(R.transpose() * e));
        const double lower = -e.dot(R * shape.SupportPoint(-(R.transpose() * e)));
        CHECK(extents[k] == doctest::Approx(upper).epsilon(1e-12));
        CHECK(extents[k] == doctest::Approx(lower).epsilon(1e-12));
        CHECK(extents[k] <= shape.BoundingRadius() * (1.0 + 1e-12));
      }
    }
  }
  const Eigen::Vector3d plane = AllShapes()[0].BoundingHalfExtents(Eigen::Matrix3d::Identity());
  CHECK(std::isinf(plane.x()));
}

TEST_CASE("shape sizes are validated") {
  std::string why;
  Shape s{ShapeKind::Box, {1, -2, 1}};
  CHECK_FALSE(s.IsValid(&why));
  CHECK(why == "size[1] = -2 must be positive and finite");
  s = {ShapeKind::Sphere, {NAN, 1, 1}};
  CHECK_FALSE(s.IsValid(&why));
  s = {ShapeKind::HalfSpace, {0, 0, 0}};
  CHECK(s.IsValid(&why));
}

}  // namespace
}  // namespace ncpkit
