#include "dynamics/shapes.h"

#include <ceres/jet.h>
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>

#include "dynamics/body.h"
#include "dynamics/shape_registry.h"
#include "tests/contact/convex_pairs.h"

namespace ncpkit {
namespace {

// A regular icosahedron of edge 2 (vertices (0, +-1, +-phi) and their cyclic turns), as a
// convex polyhedron.
Shape Icosahedron() {
  const double phi = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Eigen::Vector3d> points;
  for (const double a : {-1.0, 1.0}) {
    for (const double b : {-phi, phi}) {
      points.emplace_back(0.0, a, b);
      points.emplace_back(a, b, 0.0);
      points.emplace_back(b, 0.0, a);
    }
  }
  Shape shape;
  shape.kind = ShapeKind::Polyhedron;
  shape.polyhedron = MakeConvexHull(points);
  return shape;
}

std::vector<Shape> AllShapes() {
  return {testing::MakeShape(ShapeKind::HalfSpace, Eigen::Vector3d(1, 1, 1)),
          testing::MakeShape(ShapeKind::Box, Eigen::Vector3d(1.0, 2.0, 0.5)),
          testing::MakeShape(ShapeKind::Sphere, Eigen::Vector3d(0.7, 0, 0)),
          testing::MakeShape(ShapeKind::Ellipsoid, Eigen::Vector3d(1.0, 0.5, 0.25)),
          testing::MakeShape(ShapeKind::Cylinder, Eigen::Vector3d(1.0, 5.0, 0)),
          testing::MakeShape(ShapeKind::Capsule, Eigen::Vector3d(0.4, 2.0, 0)),
          Icosahedron()};
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
  CHECK(Inside(shapes[5], Eigen::Vector3d(1.0, 0.4, 0)));  // the side at the segment's end
  CHECK(Inside(shapes[5], Eigen::Vector3d(1.4, 0, 0)));    // the cap's tip
  CHECK(Inside(shapes[5], Eigen::Vector3d(-1.2, 0.2, -0.2)));
  CHECK_FALSE(Inside(shapes[5], Eigen::Vector3d(1.3, 0.2, 0.2)));  // beyond the cap's ball
  CHECK_FALSE(Inside(shapes[5], Eigen::Vector3d(0, 0.3, 0.3)));
}

TEST_CASE("inequality gradients from Jets match finite differences") {
  using Jet3 = ceres::Jet<double, 3>;
  // The second and third points lie beyond a capsule's segment ends, on its caps.
  for (const Eigen::Vector3d& p :
       {Eigen::Vector3d(0.3, -0.2, 0.45), Eigen::Vector3d(1.2, 0.1, -0.2),
        Eigen::Vector3d(-1.1, -0.3, 0.1)}) {
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

// The capsule's inertia by Simpson's rule over discs across its axis: a disc of radius rho at x
// adds pi rho^2 dx of volume, (pi rho^4 / 2) dx about the axis and (pi rho^4 / 4 + pi rho^2 x^2) dx
// across it.
TEST_CASE("a capsule's mass properties equal the integral over its discs") {
  const double r = 0.13, l = 0.7, mass = 2.5;
  const Shape capsule = testing::MakeShape(ShapeKind::Capsule, Eigen::Vector3d(r, l, 0));
  const MassProperties properties = SolidMassProperties(capsule, mass);
  constexpr int kIntervals = 20000;  // even
  const double half = 0.5 * l + r, dx = 2.0 * half / kIntervals;
  double volume = 0.0, axial = 0.0, across = 0.0;
  for (int k = 0; k <= kIntervals; ++k) {
    const double x = -half + k * dx;
    const double beyond = std::max(0.0, std::abs(x) - 0.5 * l);
    const double rho2 = std::max(0.0, r * r - beyond * beyond);
    const double weight = (k == 0 || k == kIntervals) ? 1.0 : (k % 2 == 1 ? 4.0 : 2.0);
    volume += weight * M_PI * rho2;
    axial += weight * M_PI * rho2 * rho2 / 2.0;
    across += weight * (M_PI * rho2 * rho2 / 4.0 + M_PI * rho2 * x * x);
  }
  const double density = mass / (volume * dx / 3.0);
  CHECK(properties.mass == mass);
  CHECK(properties.body_inertia(0, 0) == doctest::Approx(density * axial * dx / 3.0).epsilon(1e-9));
  CHECK(properties.body_inertia(1, 1) ==
        doctest::Approx(density * across * dx / 3.0).epsilon(1e-9));
  CHECK(properties.body_inertia(2, 2) == properties.body_inertia(1, 1));
  CHECK(properties.body_inertia.isDiagonal());
  // The volume itself: a cylinder and a ball.
  CHECK(volume * dx / 3.0 ==
        doctest::Approx(M_PI * r * r * l + 4.0 / 3.0 * M_PI * r * r * r).epsilon(1e-9));
}

// The viewer's triangles: on the surface (within the facets' chord error) and wound outward, so
// that the page lights their outer side; the shapes contain their centre, so an outward face's
// normal points away from it.
TEST_CASE("every built-in kind's viewer mesh lies on its surface, wound outward") {
  for (const Shape& shape : AllShapes()) {
    if (shape.kind == ShapeKind::HalfSpace) continue;
    CAPTURE(shape.Name());
    const ShapeMesh mesh = FindShapeType(shape.kind)->mesh(shape);
    REQUIRE(mesh.triangles.size() > 10);
    int faces = 0;
    for (const std::array<int, 3>& t : mesh.triangles) {
      const Eigen::Vector3d &a = mesh.vertices[t[0]], &b = mesh.vertices[t[1]],
                            &c = mesh.vertices[t[2]];
      const Eigen::Vector3d normal = (b - a).cross(c - a);
      if (normal.norm() <= 1e-12) continue;  // collapsed at a pole
      CHECK(normal.dot((a + b + c) / 3.0) > 0.0);
      ++faces;
    }
    CHECK(faces > 10);
    for (const Eigen::Vector3d& v : mesh.vertices) {
      double largest = -1e300;
      for (int i = 0; i < shape.NumInequalities(); ++i) {
        largest = std::max(largest, shape.Inequality(i, v.data()));
      }
      CHECK(std::abs(largest) <= 1e-9);
    }
  }
}

TEST_CASE("shape sizes are validated") {
  std::string why;
  Shape s = testing::MakeShape(ShapeKind::Box, Eigen::Vector3d(1, -2, 1));
  CHECK_FALSE(s.IsValid(&why));
  CHECK(why == "size[1] = -2 must be positive and at most 1e+06 m");
  s = testing::MakeShape(ShapeKind::Sphere, Eigen::Vector3d(NAN, 1, 1));
  CHECK_FALSE(s.IsValid(&why));
  // Finite but beyond any scene's coordinates (a fuzzed box 8.9e88 m long).
  s = testing::MakeShape(ShapeKind::Box, Eigen::Vector3d(1, 8.9e88, 1));
  CHECK_FALSE(s.IsValid(&why));
  CHECK(why == "size[1] = 8.9e+88 must be positive and at most 1e+06 m");
  s = testing::MakeShape(ShapeKind::HalfSpace, Eigen::Vector3d(0, 0, 0));
  CHECK(s.IsValid(&why));
}

}  // namespace
}  // namespace ncpkit
