#include "contact/gjk.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/contact/convex_pairs.h"

namespace ncpkit {
namespace {

using Eigen::Vector3d;

using testing::MakeShape;
using testing::RandomPose;
using testing::Separation;

// The signed distance is max over unit n of s(n): GJK's and EPA's normal attains the distance
// they report, and no direction of a dense set does better.
void CheckAgainstDirections(const Shape& a, const ShapePose& pa, const Shape& b,
                            const ShapePose& pb, const ConvexSeparation& s,
                            bool require_converged = true) {
  const double scale = std::max(a.BoundingRadius(), b.BoundingRadius());
  if (require_converged) CHECK(s.converged);
  CHECK(std::abs(s.normal.norm() - 1.0) < 1e-12);
  CHECK(std::abs(Separation(a, pa, b, pb, s.normal) - s.distance) < 1e-9 * scale);
  CHECK(((s.point_b - s.point_a) - s.distance * s.normal).norm() < 1e-7 * scale);
  const double best = testing::LargestSeparationOverDirections(a, pa, b, pb);
  CHECK(best <= s.distance + 1e-9 * scale);
}

TEST_CASE("GJK/EPA: spheres apart and overlapping give the closed form") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> radius(0.05, 1.0);
  for (int trial = 0; trial < 500; ++trial) {
    const Shape a = MakeShape(ShapeKind::Sphere, Vector3d::Constant(radius(rng)));
    const Shape b = MakeShape(ShapeKind::Sphere, Vector3d::Constant(radius(rng)));
    const ShapePose pa = RandomPose(&rng, 1.0), pb = RandomPose(&rng, 1.0);
    const Vector3d between = pb.position - pa.position;
    if (between.norm() < 1e-3) continue;
    const ConvexSeparation s = GetSeparation(a, pa, b, pb, INFINITY);
    INFO("trial " << trial << " distance " << s.distance);
    const double exact = between.norm() - a.size[0] - b.size[0];
    CHECK(s.converged);
    CHECK(s.distance == doctest::Approx(exact).epsilon(1e-9).scale(1.0));
    CHECK((s.normal - between.normalized()).norm() < 1e-6);
  }
}

TEST_CASE("GJK/EPA: overlapping boxes give the separating-axis depth") {
  // Box pairs overlap by the least of the 15 axes' overlaps (the face normals and edge
  // crossings): EPA must find it.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> side(0.2, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const Shape a = MakeShape(ShapeKind::Box, Vector3d(side(rng), side(rng), side(rng)));
    const Shape b = MakeShape(ShapeKind::Box, Vector3d(side(rng), side(rng), side(rng)));
    const ShapePose pa = RandomPose(&rng, 0.3), pb = RandomPose(&rng, 0.3);
    double sat = -1e300;
    for (int i = 0; i < 3; ++i) {
      for (const Vector3d& axis : {Vector3d(pa.rotation.col(i)), Vector3d(pb.rotation.col(i))}) {
        sat = std::max({sat, Separation(a, pa, b, pb, axis), Separation(a, pa, b, pb, -axis)});
      }
      for (int j = 0; j < 3; ++j) {
        const Vector3d c = pa.rotation.col(i).cross(pb.rotation.col(j));
        if (c.norm() < 1e-9) continue;
        sat = std::max({sat, Separation(a, pa, b, pb, c.normalized()),
                        Separation(a, pa, b, pb, -c.normalized())});
      }
    }
    const ConvexSeparation s = GetSeparation(a, pa, b, pb, INFINITY);
    INFO("trial " << trial);
    if (sat < 0.0) CHECK(s.distance == doctest::Approx(sat).epsilon(1e-9).scale(1.0));
    CheckAgainstDirections(a, pa, b, pb, s);
  }
}

TEST_CASE("GJK/EPA: curved and flat shapes in every pairing, apart and overlapping") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> size(0.1, 0.8);
  const ShapeKind kinds[] = {ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Ellipsoid,
                             ShapeKind::Cylinder, ShapeKind::Capsule};
  int apart = 0, overlapping = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const Shape a = MakeShape(kinds[trial % 5], Vector3d(size(rng), size(rng), size(rng)));
    const Shape b = MakeShape(kinds[(trial / 5) % 5], Vector3d(size(rng), size(rng), size(rng)));
    const ShapePose pa = RandomPose(&rng, 0.6), pb = RandomPose(&rng, 0.6);
    const ConvexSeparation s = GetSeparation(a, pa, b, pb, INFINITY);
    INFO("trial " << trial << ": " << a.Name() << " and " << b.Name() << ", distance " << s.distance
                  << " after " << s.iterations << " evaluations");
    (s.distance > 0.0 ? apart : overlapping) += 1;
    CheckAgainstDirections(a, pa, b, pb, s);
  }
  CHECK(apart > 50);
  CHECK(overlapping > 50);
}

// Shapes that only touch: GJK stalls with |v| at rounding's level and its direction v / |v| is
// noise, from which the local search for the normal must not end on another hill of s. The
// distance and the normal are checked, not `converged`: on 2 of these 500 (a cylinder's rim on a
// box face) both searches still climb at their move cap, though at the distance.
TEST_CASE("GJK: shapes that only touch, every curved and flat pairing, at distance zero") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> size(0.05, 0.6);
  const ShapeKind kinds[] = {ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Ellipsoid,
                             ShapeKind::Cylinder, ShapeKind::Capsule};
  for (int trial = 0; trial < 500; ++trial) {
    const Shape a = MakeShape(kinds[trial % 5], Vector3d(size(rng), size(rng), size(rng)));
    const Shape b = MakeShape(kinds[(trial / 5) % 5], Vector3d(size(rng), size(rng), size(rng)));
    const ShapePose pa = RandomPose(&rng, 0.6);
    ShapePose pb = RandomPose(&rng, 0.6);
    const ConvexSeparation first = GetSeparation(a, pa, b, pb, INFINITY);
    pb.position -= first.distance * first.normal;  // B moved until it touches A
    const ConvexSeparation s = GetSeparation(a, pa, b, pb, INFINITY);
    const double scale = std::max(a.BoundingRadius(), b.BoundingRadius());
    INFO("trial " << trial << ": " << a.Name() << " and " << b.Name() << ", distance " << s.distance
                  << " after " << s.iterations << " evaluations");
    CHECK(std::abs(s.distance) <= 1e-8 * scale);
    CheckAgainstDirections(a, pa, b, pb, s, /*require_converged=*/false);
  }
}

TEST_CASE("GJK: a capsule and a cylinder lying side by side, touching, at distance zero") {
  // Two bodies of a mixed drop at rest on the ground (their poses after a step): GJK stalled at
  // |v| = 1.3e-11 with v / |v| across the contact, and the normal's local search from there had
  // ended at s = -0.14 m.
  const Shape capsule =
      MakeShape(ShapeKind::Capsule, Vector3d(0.051265377751429857, 0.058985040590061363, 1.0));
  const Shape cylinder =
      MakeShape(ShapeKind::Cylinder, Vector3d(0.059217317785847455, 0.13976881078489256, 1.0));
  ShapePose pa, pb;
  pa.position = Vector3d(0.24770605032522272, 0.16967631962290938, 0.051265377753899333);
  pa.rotation << 0.2825627477480166, -0.74258122778851599, -0.60723258618192666,
      -0.95924881734881007, -0.21873969340204247, -0.17887049210333669, -8.3932083505544597e-11,
      0.63302927789043129, -0.77412785335080114;
  pb.position = Vector3d(0.13377393561535053, 0.096944859490810525, 0.059217317785346009);
  pb.rotation << 0.047478612369312945, 0.7643139221264259, -0.64309409094719916,
      0.99887225477910069, -0.036329534891827997, 0.030567687630224161, 7.1974093351911961e-12,
      -0.64382015605156639, -0.76517684665816765;
  const ConvexSeparation s = GetSeparation(capsule, pa, cylinder, pb, INFINITY);
  CHECK(std::abs(s.distance) <= 1e-9);
  CHECK(s.normal.z() == doctest::Approx(0.07).epsilon(0.05));  // across the two sides
  CheckAgainstDirections(capsule, pa, cylinder, pb, s);
}

// A rock: the hull of 12 to 30 points at random directions and distances 0.1-0.4 from its centre.
Shape RandomRock(std::mt19937* rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), r(0.1, 0.4);
  std::vector<Vector3d> points(12 + (*rng)() % 19);
  for (Vector3d& p : points) p = r(*rng) * Vector3d(u(*rng), u(*rng), u(*rng)).normalized();
  Shape rock;
  rock.kind = ShapeKind::Polyhedron;
  rock.polyhedron = MakeConvexHull(points);
  return rock;
}

TEST_CASE("GJK/EPA: random rocks against rocks and every other kind, apart and overlapping") {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> size(0.1, 0.5);
  const ShapeKind others[] = {ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Ellipsoid,
                              ShapeKind::Cylinder, ShapeKind::Capsule};
  int apart = 0, overlapping = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Shape a = RandomRock(&rng);
    const Shape b = trial % 2 == 0 ? RandomRock(&rng)
                                   : MakeShape(others[(trial / 2) % 5],
                                               Vector3d(size(rng), size(rng), size(rng)));
    const ShapePose pa = RandomPose(&rng, 0.4), pb = RandomPose(&rng, 0.4);
    const ConvexSeparation s = GetSeparation(a, pa, b, pb, INFINITY);
    INFO("trial " << trial << ": a rock and a " << b.Name() << ", distance " << s.distance);
    (s.distance > 0.0 ? apart : overlapping) += 1;
    CheckAgainstDirections(a, pa, b, pb, s);
  }
  CHECK(apart > 50);
  CHECK(overlapping > 50);
}

TEST_CASE("EPA: a sphere deep in an ellipsoid finds the deeper of two near-equal directions") {
  // Two nearly equally deep directions: EPA's polytope needs over 100 vertices here before its
  // nearest face lies over the deeper one (the local search after EPA cannot cross between
  // them). A random pair of the kind 17 000 random deep overlaps found.
  const auto pose = [](const Vector3d& p, const Eigen::Quaterniond& q) {
    ShapePose out;
    out.position = p;
    out.rotation = q.normalized().toRotationMatrix();
    return out;
  };
  const Shape ellipsoid =
      MakeShape(ShapeKind::Ellipsoid,
                Vector3d(0.38083559497466551, 0.60458656617356255, 0.52429705055329945));
  const Shape sphere = MakeShape(ShapeKind::Sphere, Vector3d(0.83197243673505161, 0.0, 0.0));
  const ShapePose pa =
      pose(Vector3d(-0.10369163547832766, 0.03380364227818855, 0.033915602631628294),
           Eigen::Quaterniond(0.37678940193334659, 0.40943814680243906, 0.73131489947556694,
                              -0.39442194200974251));
  const ShapePose pb =
      pose(Vector3d(-0.37709695049323116, -0.077151687845953831, 0.12101527627913145),
           Eigen::Quaterniond(0.090196756812148893, -0.30363764645973296, 0.72005128979475852,
                              0.61740980294927994));
  const ConvexSeparation s = GetSeparation(ellipsoid, pa, sphere, pb, INFINITY);
  INFO("distance " << s.distance << " after " << s.iterations << " evaluations");
  CHECK(s.distance < -1.1);
  CheckAgainstDirections(ellipsoid, pa, sphere, pb, s);
}

TEST_CASE("GJK: a cylinder all but touching a box face along a line keeps the face normal") {
  // Gaps from 1e-8 down to 0 (and overlaps as small): GJK's v / |v| there carries rounding over
  // |v| and can stall, and the separation along a line on a face has a ridge; the local search
  // must still end within 1e-10 rad of the face normal (s falls by at most the half-length
  // 0.5 m times the angle off), so the distance within 1e-10 of the shapes' size of the gap.
  // (contact/distance.cc then prefers the face normal itself: explicit_distance_test.)
  std::mt19937 rng(19);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Shape box = MakeShape(ShapeKind::Box, Vector3d(4.0, 6.0, 0.2));
  const Shape cylinder = MakeShape(ShapeKind::Cylinder, Vector3d(0.5, 1.0, 0.0));
  int searched = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const ShapePose frame = RandomPose(&rng, 1.0);
    const double gap = (trial % 2 ? 1.0 : -1.0) * std::pow(10.0, -8.0 - 8.0 * (0.5 + 0.5 * u(rng)));
    ShapePose pa = frame, pb = frame;
    pa.position = frame.position + frame.rotation * Vector3d(0.0, 0.0, -0.1);
    // The cylinder's axis along the face, turned about the face normal.
    const double turn = M_PI * u(rng);
    pb.rotation = frame.rotation * Eigen::AngleAxisd(turn, Vector3d::UnitZ()).toRotationMatrix();
    pb.position = frame.position + frame.rotation * Vector3d(u(rng), u(rng), 0.5 + gap);
    const ConvexSeparation s = GetSeparation(box, pa, cylinder, pb, INFINITY);
    INFO("trial " << trial << " gap " << gap << " distance " << s.distance << " after "
                  << s.iterations << " evaluations");
    searched += s.iterations > 100;
    CHECK(s.converged);
    CHECK(std::abs(s.distance - gap) < 1e-10 * 3.7);  // the box's bounding radius is 3.61
    CHECK((s.normal - frame.rotation.col(2)).norm() < 1e-9);
  }
  MESSAGE(searched << " of 400 near-touching pairs needed the local search");
}

TEST_CASE("GJK stops early once the shapes are known to be beyond the threshold") {
  const Shape a = MakeShape(ShapeKind::Ellipsoid, Vector3d(0.3, 0.2, 0.1));
  ShapePose pa, pb;
  pb.position = Vector3d(2.0, 0.1, 0.0);
  const ConvexSeparation full = GetSeparation(a, pa, a, pb, INFINITY);
  const ConvexSeparation early = GetSeparation(a, pa, a, pb, 0.5);
  CHECK(full.distance == doctest::Approx(1.4).epsilon(0.01));
  CHECK(early.beyond);
  CHECK(early.distance >= 0.5);
  CHECK(early.distance <= full.distance + 1e-12);
  CHECK(early.iterations < full.iterations);
}

}  // namespace
}  // namespace ncpkit
