// Convex polyhedra from points: the hull's faces (merged, counter-clockwise, outward), its
// volume, centroid and inertia against closed forms, and hostile point sets refused with the
// reason.
#include "dynamics/shapes/polyhedron.h"

#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <vector>

#include "dynamics/body.h"
#include "dynamics/shapes.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace polyhedron_test {

using Eigen::Vector3d;

std::vector<Vector3d> CuboidCorners(const Vector3d& half) {
  std::vector<Vector3d> points;
  for (int corner = 0; corner < 8; ++corner) {
    points.emplace_back((corner & 1) ? half[0] : -half[0], (corner & 2) ? half[1] : -half[1],
                        (corner & 4) ? half[2] : -half[2]);
  }
  return points;
}

Shape Convex(const std::vector<Vector3d>& points) {
  Shape shape;
  shape.kind = ShapeKind::Polyhedron;
  shape.polyhedron = MakeConvexHull(points);
  return shape;
}

TEST_CASE("a hull's faces are merged, outward and counter-clockwise; inner points are dropped") {
  std::vector<Vector3d> points = CuboidCorners(Vector3d(0.5, 0.3, 0.2));
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-0.19, 0.19);
  for (int k = 0; k < 50; ++k) points.emplace_back(u(rng), u(rng), u(rng));  // inside
  for (Vector3d& p : points) p += Vector3d(2.0, -1.0, 0.5);                  // off the origin
  const auto hull = MakeConvexHull(points);
  CHECK(hull->vertices.size() == 8);
  REQUIRE(hull->faces.size() == 6);
  CHECK(hull->centroid.isApprox(Vector3d(2.0, -1.0, 0.5), 1e-12));
  CHECK(hull->volume == doctest::Approx(1.0 * 0.6 * 0.4).epsilon(1e-12));
  CHECK(hull->radius == doctest::Approx(Vector3d(0.5, 0.3, 0.2).norm()).epsilon(1e-12));
  for (const ConvexPolyhedron::Face& face : hull->faces) {
    REQUIRE(face.vertices.size() == 4);
    CHECK(face.normal.norm() == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(face.normal.cwiseAbs().maxCoeff() == doctest::Approx(1.0).epsilon(1e-12));
    const Vector3d a = hull->vertices[face.vertices[0]], b = hull->vertices[face.vertices[1]],
                   c = hull->vertices[face.vertices[2]];
    CHECK((b - a).cross(c - b).dot(face.normal) > 0.0);  // counter-clockwise about the normal
    for (const int i : face.vertices) {
      CHECK(face.normal.dot(hull->vertices[i]) == doctest::Approx(face.offset).epsilon(1e-12));
    }
    // Every vertex inside every face's half-space.
    for (const Vector3d& v : hull->vertices) CHECK(face.normal.dot(v) <= face.offset + 1e-12);
  }
  // The shape's inequalities and support function agree with the box's.
  const Shape shape = Convex(points);
  CHECK(shape.NumInequalities() == 6);
  CHECK(shape.IsValid(nullptr));
  const Vector3d inside(0.49, 0.29, -0.19), outside(0.51, 0.0, 0.0);
  double top_in = -1.0, top_out = -1.0;
  for (int i = 0; i < 6; ++i) {
    top_in = std::max(top_in, shape.Inequality(i, inside.data()));
    top_out = std::max(top_out, shape.Inequality(i, outside.data()));
  }
  CHECK(top_in < 0.0);
  CHECK(top_out > 0.0);
  CHECK(shape.SupportPoint(Vector3d(1, 2, 3)).isApprox(Vector3d(0.5, 0.3, 0.2), 1e-12));
  CHECK(shape.SupportPoint(Vector3d(0, 0, -1)).isApprox(Vector3d(0, 0, -0.2), 1e-12));  // a face
}

TEST_CASE("a polyhedron's mass properties against closed forms") {
  const double mass = 3.0;
  // A cuboid of sides 1, 0.6, 0.4, turned: R diag(...) R^T.
  const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.7, Vector3d(1, 2, -0.5).normalized()).toRotationMatrix();
  std::vector<Vector3d> points = CuboidCorners(Vector3d(0.5, 0.3, 0.2));
  for (Vector3d& p : points) p = R * p;
  const Eigen::Matrix3d box =
      R * MassProperties::Box(mass, Vector3d(1.0, 0.6, 0.4)).body_inertia * R.transpose();
  CHECK((SolidMassProperties(Convex(points), mass).body_inertia - box).norm() <= 1e-12);
  // A regular tetrahedron of edge a = 2 sqrt(2): m a^2 / 20 about every axis.
  const std::vector<Vector3d> tetrahedron = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
  const MassProperties t = SolidMassProperties(Convex(tetrahedron), mass);
  CHECK((t.body_inertia - mass * 8.0 / 20.0 * Eigen::Matrix3d::Identity()).norm() <= 1e-12);
  CHECK(MakeConvexHull(tetrahedron)->volume == doctest::Approx(8.0 / 3.0).epsilon(1e-12));
  // A regular octahedron of edge a = sqrt(2): m a^2 / 10.
  const std::vector<Vector3d> octahedron = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                            {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
  const MassProperties o = SolidMassProperties(Convex(octahedron), mass);
  CHECK((o.body_inertia - mass * 2.0 / 10.0 * Eigen::Matrix3d::Identity()).norm() <= 1e-12);
  // A right tetrahedron's centroid, a quarter of the way from its right corner.
  const auto right = MakeConvexHull({{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}});
  CHECK(right->centroid.isApprox(Vector3d(0.25, 0.5, 0.75), 1e-12));
  CHECK(right->volume == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("hostile point sets: a clear reason, never a hull that is not one") {
  const auto refused = [](const std::vector<Vector3d>& points, const char* why) {
    CAPTURE(why);
    CHECK_THROWS_WITH_AS(MakeConvexHull(points), doctest::Contains(why), InputError);
  };
  refused({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, "at least 4 points");
  refused({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, NAN}}, "point 3 is not finite");
  refused({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, INFINITY}}, "not finite");
  refused(std::vector<Vector3d>(10, Vector3d(1, 2, 3)), "all one point");
  std::vector<Vector3d> flat, line;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < 1000; ++k) {
    flat.emplace_back(u(rng), u(rng), 0.25);
    line.emplace_back(u(rng), 2.0, 3.0);
  }
  refused(flat, "span no volume");
  refused(line, "span no volume");
  // Points on a sphere: every one a hull vertex, more than a shape may have.
  std::vector<Vector3d> sphere;
  for (int k = 0; k < kMaxHullVertices + 100; ++k) {
    sphere.push_back(Vector3d(u(rng), u(rng), u(rng)).normalized());
  }
  refused(sphere, "more than 5000");
  // Repeated and nearly flat points still make the hull of what they span.
  std::vector<Vector3d> repeated = CuboidCorners(Vector3d(1, 1, 1e-3));
  repeated.insert(repeated.end(), repeated.begin(), repeated.end());
  const auto thin = MakeConvexHull(repeated);
  CHECK(thin->vertices.size() == 8);
  CHECK(thin->volume == doctest::Approx(8e-3).epsilon(1e-9));
}

}  // namespace polyhedron_test
}  // namespace ncpkit
