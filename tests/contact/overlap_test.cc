#include "contact/overlap.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tests/contact/convex_pairs.h"

namespace ncpkit {
namespace {

using Eigen::Vector3d;

using testing::MakeShape;
using testing::RandomPose;

// The overlap's s(d) is A's side along d: the convex-pair helpers' s(-d).
double OverlapSeparation(const Shape& a, const ShapePose& pa, const Shape& b, const ShapePose& pb,
                         const Vector3d& d) {
  return testing::Separation(a, pa, b, pb, -d);
}

// The distance from p to a box of half extents h (negative inside: minus the distance to the
// nearest face).
double SignedDistanceToBox(const Vector3d& p_local, const Vector3d& h) {
  const Vector3d q = p_local.cwiseAbs() - h;
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}

TEST_CASE("initial overlap: a sphere in a box has its closed-form depth") {
  // For a sphere of radius r the largest separation is the signed distance from its centre to
  // the box minus r.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.2, 1.5);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Vector3d size(u(rng), u(rng), u(rng));
    const Shape box = MakeShape(ShapeKind::Box, size);
    const Shape sphere = MakeShape(ShapeKind::Sphere, Vector3d(u(rng) * 0.5, 0, 0));
    const ShapePose box_pose = RandomPose(&rng, 0.3);
    ShapePose sphere_pose = RandomPose(&rng, 1.0);
    sphere_pose.position += box_pose.position;
    const double sd = SignedDistanceToBox(
        box_pose.rotation.transpose() * (sphere_pose.position - box_pose.position), 0.5 * size);
    const double depth = sphere.size.x() - sd;
    if (depth <= 1e-3) continue;
    ++checked;
    const Overlap overlap = MeasureOverlap(sphere, sphere_pose, box, box_pose);
    CAPTURE(trial);
    CHECK(std::abs(overlap.depth - depth) < 1e-9);
    CHECK(std::abs(overlap.direction.norm() - 1.0) < 1e-12);
    // Moved by the depth along the direction, the sphere touches the box.
    ShapePose moved = sphere_pose;
    moved.position += overlap.depth * overlap.direction;
    CHECK(std::abs(MeasureOverlap(sphere, moved, box, box_pose).depth) < 1e-9);
  }
  CHECK(checked > 100);
}

TEST_CASE("initial overlap: curved shapes' depth is the largest separation over directions") {
  // Cylinders and ellipsoids against every kind but the half-space: no direction of a dense set
  // separates the pair better than the one reported, and moving A by the depth along it leaves
  // the pair touching.
  const ShapeKind kinds[] = {ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Ellipsoid,
                             ShapeKind::Cylinder};
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.2, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const ShapeKind kind_a = trial % 2 == 0 ? ShapeKind::Cylinder : ShapeKind::Ellipsoid;
    const ShapeKind kind_b = kinds[(trial / 2) % 4];
    const Shape a = MakeShape(kind_a, Vector3d(u(rng), u(rng), u(rng)));
    const Shape b = MakeShape(kind_b, Vector3d(u(rng), u(rng), u(rng)));
    const ShapePose pa = RandomPose(&rng, 0.4), pb = RandomPose(&rng, 0.4);
    const Overlap overlap = MeasureOverlap(a, pa, b, pb);
    if (overlap.depth <= 1e-3) continue;
    ++checked;
    CAPTURE(trial);
    const double scale = std::max(a.BoundingRadius(), b.BoundingRadius());
    CHECK(std::abs(OverlapSeparation(a, pa, b, pb, overlap.direction) + overlap.depth) <
          1e-12 * scale);
    const double best = testing::LargestSeparationOverDirections(a, pa, b, pb);
    CHECK(best <= -overlap.depth + 1e-9 * scale);
    ShapePose moved = pa;
    moved.position += overlap.depth * overlap.direction;
    CHECK(std::abs(MeasureOverlap(a, moved, b, pb).depth) < 1e-8 * scale);
  }
  CHECK(checked > 80);
}

TEST_CASE("initial overlap: a heap of overlapping curved bodies is separated") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.3, 0.8);
  for (int seed = 0; seed < 5; ++seed) {
    std::vector<PlacedShape> bodies;
    for (int i = 0; i < 12; ++i) {
      PlacedShape body;
      body.name = "body" + std::to_string(i);
      body.shape = MakeShape(
          i % 3 == 0 ? ShapeKind::Cylinder : (i % 3 == 1 ? ShapeKind::Ellipsoid : ShapeKind::Box),
          Vector3d(u(rng), u(rng), u(rng)));
      body.pose = RandomPose(&rng, 1.0);
      body.pose.position.z() += 2.0;
      body.inverse_mass = 1.0 / u(rng);
      bodies.push_back(body);
    }
    PlacedShape ground;
    ground.name = "ground";
    ground.shape = MakeShape(ShapeKind::HalfSpace, Vector3d::Zero());
    bodies.push_back(ground);
    CAPTURE(seed);
    REQUIRE(!FindOverlaps(bodies).empty());
    SeparateOverlaps(&bodies);
    CHECK(FindOverlaps(bodies).empty());
  }
}

}  // namespace
}  // namespace ncpkit
