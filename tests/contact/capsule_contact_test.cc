// Capsules in the explicit distances: the closed forms against planes, spheres and capsules
// checked against the segment's geometry (a dense search along the segments) and against
// GJK/EPA on the support function; a capsule lying on a plane, a box face and another capsule
// makes a line contact held at both ends.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "contact/distance.h"
#include "contact/gjk.h"
#include "tests/contact/convex_pairs.h"

namespace ncpkit {
namespace capsule_contact_test {

using Eigen::Vector3d;
using testing::MakeShape;
using testing::RandomPose;

// The ends of a capsule's segment in the world.
void Ends(const Shape& capsule, const ShapePose& pose, Vector3d* p, Vector3d* q) {
  *p = pose.position - 0.5 * capsule.size[1] * pose.rotation.col(0);
  *q = pose.position + 0.5 * capsule.size[1] * pose.rotation.col(0);
}

Vector3d NearestOnSegment(const Vector3d& p, const Vector3d& q, const Vector3d& x) {
  const double t = std::clamp((x - p).dot(q - p) / (q - p).squaredNorm(), 0.0, 1.0);
  return p + t * (q - p);
}

double DistanceToSegment(const Vector3d& p, const Vector3d& q, const Vector3d& x) {
  return (NearestOnSegment(p, q, x) - x).norm();
}

// The distance between two segments by a dense search along the first (the distance to the
// second is exact at each sample) refined by golden-section search on the best bracket: the
// distance along a segment to a convex set is convex.
double SegmentDistance(const Vector3d& p1, const Vector3d& q1, const Vector3d& p2,
                       const Vector3d& q2) {
  const auto at = [&](double s) { return DistanceToSegment(p2, q2, p1 + s * (q1 - p1)); };
  constexpr int kSamples = 200;
  int best = 0;
  for (int k = 1; k <= kSamples; ++k) {
    if (at(double(k) / kSamples) < at(double(best) / kSamples)) best = k;
  }
  double lo = std::max(0.0, (best - 1.0) / kSamples), hi = std::min(1.0, (best + 1.0) / kSamples);
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int k = 0; k < 100; ++k) {
    const double m1 = hi - ratio * (hi - lo), m2 = lo + ratio * (hi - lo);
    (at(m1) < at(m2) ? hi : lo) = at(m1) < at(m2) ? m2 : m1;
  }
  return at(0.5 * (lo + hi));
}

double Nearest(const std::vector<ContactPoint>& points) {
  double d = INFINITY;
  for (const ContactPoint& p : points) d = std::min(d, p.distance);
  return d;
}

// Every point: a unit normal from A to B, point_b - point_a = distance n.
void CheckConsistent(const std::vector<ContactPoint>& points) {
  for (const ContactPoint& p : points) {
    CHECK(std::abs(p.normal.norm() - 1.0) < 1e-12);
    CHECK(((p.point_b - p.point_a) - p.distance * p.normal).norm() < 1e-12);
  }
}

TEST_CASE("capsule contact: spheres and capsules at random poses against the segments' geometry") {
  const ExplicitContactGeometry geometry;
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> size(0.05, 0.5);
  constexpr double kThreshold = 0.05;
  int touching = 0, overlapping = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const bool sphere_a = trial % 3 == 0;
    const Shape a = sphere_a ? MakeShape(ShapeKind::Sphere, Vector3d(size(rng), 0, 0))
                             : MakeShape(ShapeKind::Capsule, Vector3d(size(rng), size(rng), 0));
    const Shape b = MakeShape(ShapeKind::Capsule, Vector3d(size(rng), 2.0 * size(rng), 0));
    const ShapePose pa = RandomPose(&rng, 0.4), pb = RandomPose(&rng, 0.4);
    Vector3d b0, b1;
    Ends(b, pb, &b0, &b1);
    double exact;
    if (sphere_a) {
      exact = DistanceToSegment(b0, b1, pa.position) - a.size[0] - b.size[0];
    } else {
      Vector3d a0, a1;
      Ends(a, pa, &a0, &a1);
      exact = SegmentDistance(a0, a1, b0, b1) - a.size[0] - b.size[0];
    }
    for (const bool swapped : {false, true}) {
      std::vector<ContactPoint> points;
      if (swapped) {
        geometry.FindContacts(b, pb, a, pa, kThreshold, &points);
      } else {
        geometry.FindContacts(a, pa, b, pb, kThreshold, &points);
      }
      CAPTURE(trial);
      CAPTURE(swapped);
      CAPTURE(exact);
      CheckConsistent(points);
      if (exact >= kThreshold + 1e-9) {
        CHECK(points.empty());
        continue;
      }
      if (exact > kThreshold - 1e-9) continue;  // at the threshold: either answer
      REQUIRE_FALSE(points.empty());
      CHECK(Nearest(points) == doctest::Approx(exact).epsilon(1e-9).scale(1.0));
      // Each point's distance is that of the two balls it joins: never below the shapes'.
      for (const ContactPoint& p : points) CHECK(p.distance >= exact - 1e-9);
      // Apart, GJK on the support functions agrees; the normal points from A to B.
      if (!swapped && exact > 1e-6) {
        const ConvexSeparation s = GetSeparation(a, pa, b, pb, INFINITY);
        CHECK(s.distance == doctest::Approx(exact).epsilon(1e-7).scale(1.0));
      }
      if (!swapped) (exact > 0.0 ? touching : overlapping) += 1;
    }
  }
  CHECK(touching > 50);
  CHECK(overlapping > 50);
}

TEST_CASE("capsule contact: lying on a plane, a box face and a capsule, a line held at both ends") {
  const ExplicitContactGeometry geometry;
  const Shape capsule = MakeShape(ShapeKind::Capsule, Vector3d(0.1, 0.6, 0));
  const Shape plane = MakeShape(ShapeKind::HalfSpace, Vector3d::Ones());
  const Shape box = MakeShape(ShapeKind::Box, Vector3d(2.0, 2.0, 0.4));
  ShapePose lying, ground, slab, under;
  lying.rotation = Eigen::AngleAxisd(0.7, Vector3d::UnitZ()).toRotationMatrix();
  lying.position = Vector3d(0.03, -0.02, 0.1 + 1e-3);
  // On the plane: the two ends' balls, at the gap, below the segment's ends.
  std::vector<ContactPoint> points;
  geometry.FindContacts(plane, ground, capsule, lying, 0.01, &points);
  REQUIRE(points.size() == 2);
  for (const ContactPoint& p : points) {
    CHECK(p.distance == doctest::Approx(1e-3).epsilon(1e-12));
    CHECK(p.normal.isApprox(Vector3d::UnitZ()));
    const Vector3d along = p.point_b - lying.position;
    CHECK(std::abs(std::abs(along.dot(lying.rotation.col(0))) - 0.3) < 1e-12);
  }
  // Upright: the lower end's ball only.
  ShapePose upright = lying;
  upright.rotation = Eigen::AngleAxisd(M_PI / 2, Vector3d::UnitY()).toRotationMatrix();
  upright.position = Vector3d(0, 0, 0.4 + 2e-3);
  points.clear();
  geometry.FindContacts(plane, ground, capsule, upright, 0.01, &points);
  REQUIRE(points.size() == 1);
  CHECK(points[0].distance == doctest::Approx(2e-3).epsilon(1e-12));
  // On a box's top face (at z = 0.2 in the box's frame), both orders.
  slab.position = Vector3d(0.1, 0.05, 0.0);
  slab.rotation = Eigen::AngleAxisd(0.3, Vector3d::UnitZ()).toRotationMatrix();
  ShapePose on_slab = lying;
  on_slab.position.z() = 0.2 + 0.1 + 1e-3;
  for (const bool box_first : {true, false}) {
    points.clear();
    if (box_first) {
      geometry.FindContacts(box, slab, capsule, on_slab, 0.01, &points);
    } else {
      geometry.FindContacts(capsule, on_slab, box, slab, 0.01, &points);
    }
    CAPTURE(box_first);
    REQUIRE(points.size() == 2);
    CheckConsistent(points);
    for (const ContactPoint& p : points) {
      CHECK(p.distance == doctest::Approx(1e-3).epsilon(1e-9));
      CHECK(std::abs(std::abs(p.normal.z()) - 1.0) < 1e-9);
    }
    CHECK((points[0].point_a - points[1].point_a).norm() == doctest::Approx(0.6).epsilon(1e-9));
  }
  // On another capsule, parallel and shifted along it: the overlap's two ends; crossed at a small
  // angle, the nearest point between them as well.
  under.rotation = lying.rotation;
  under.position = lying.position - Vector3d(0, 0, 0.2 + 1e-3) + 0.2 * lying.rotation.col(0);
  points.clear();
  geometry.FindContacts(capsule, under, capsule, lying, 0.01, &points);
  REQUIRE(points.size() == 2);
  for (const ContactPoint& p : points) CHECK(p.distance == doctest::Approx(1e-3).epsilon(1e-9));
  CHECK((points[0].point_a - points[1].point_a).norm() == doctest::Approx(0.4).epsilon(1e-9));
  ShapePose crossed = lying;
  crossed.rotation = Eigen::AngleAxisd(0.71, Vector3d::UnitZ()).toRotationMatrix();
  crossed.position = under.position + Vector3d(0, 0, 0.2 + 1e-3);
  points.clear();
  geometry.FindContacts(capsule, under, capsule, crossed, 0.01, &points);
  REQUIRE(points.size() == 3);
  CHECK(Nearest(points) == doctest::Approx(1e-3).epsilon(1e-9));
}

// Capsules stacked across each other at every angle, from square to parallel, touching or a
// little apart or inside: the points of a pair repeat none of the others (each at least 5 % of
// the larger capsule's bounding radius from the rest: three points a millimetre apart where
// capsules cross nearly square made W all but singular), the nearest one is among them at the
// segments' distance, and a line contact of capsules lying side by side keeps both its ends.
TEST_CASE("capsule contact: crossing capsules get points that do not repeat each other") {
  const ExplicitContactGeometry geometry;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int lines = 0, single = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Shape a =
        MakeShape(ShapeKind::Capsule, Vector3d(0.02 + 0.05 * u(rng), 0.04 + 0.2 * u(rng), 0));
    const Shape b =
        MakeShape(ShapeKind::Capsule, Vector3d(0.02 + 0.05 * u(rng), 0.04 + 0.2 * u(rng), 0));
    // B above A, its axis turned by an angle from 0 (side by side) to pi/2 (square), slid along.
    const double angle = trial % 4 == 0 ? 1e-3 * u(rng) : 0.5 * M_PI * u(rng);
    ShapePose pa, pb;
    pa.rotation = Eigen::AngleAxisd(6.3 * u(rng), Vector3d::UnitZ()).toRotationMatrix();
    pb.rotation = Eigen::AngleAxisd(angle, Vector3d::UnitZ()).toRotationMatrix() * pa.rotation;
    const double gap = -3e-3 + 6e-3 * u(rng);
    pb.position = pa.position + Vector3d(0, 0, a.size[0] + b.size[0] + gap) +
                  (u(rng) - 0.5) * a.size[1] * pa.rotation.col(0);
    std::vector<ContactPoint> points;
    geometry.FindContacts(a, pa, b, pb, 0.01, &points);
    CAPTURE(trial);
    CAPTURE(angle);
    REQUIRE_FALSE(points.empty());
    CheckConsistent(points);
    const double apart = 0.05 * std::max(a.BoundingRadius(), b.BoundingRadius());
    for (size_t i = 0; i < points.size(); ++i) {
      for (size_t j = i + 1; j < points.size(); ++j) {
        CHECK((points[i].point_a - points[j].point_a).norm() >= apart);
      }
    }
    Vector3d p1, q1, p2, q2;
    Ends(a, pa, &p1, &q1);
    Ends(b, pb, &p2, &q2);
    const double nearest = SegmentDistance(p1, q1, p2, q2) - a.size[0] - b.size[0];
    CHECK(Nearest(points) == doctest::Approx(nearest).epsilon(1e-9).scale(1.0));
    (points.size() > 1 ? lines : single) += 1;
    if (angle < 1e-3 && points.size() == 1) {
      // Side by side: one point only where B's segment overlaps A's by less than `apart`.
      const Vector3d axis = pa.rotation.col(0);
      const double s0 = axis.dot(p2 - pa.position), s1 = axis.dot(q2 - pa.position);
      const double overlap = std::min(0.5 * a.size[1], std::max(s0, s1)) -
                             std::max(-0.5 * a.size[1], std::min(s0, s1));
      CHECK(overlap < apart);
    }
  }
  CHECK(lines > 50);  // both kinds met
  CHECK(single > 50);
}

// The distance from x to the surface of a box (half sides `half`, posed): zero on it.
double BoxSurfaceDistance(const Vector3d& half, const ShapePose& pose, const Vector3d& x) {
  const Vector3d local = pose.rotation.transpose() * (x - pose.position);
  const Vector3d outside = (local.cwiseAbs() - half).cwiseMax(0.0);
  if (outside.squaredNorm() > 0.0) return outside.norm();
  return (half - local.cwiseAbs()).minCoeff();  // inside: to the nearest face
}

// A box turned and tilted above a capsule lying on its side (the identity pose), its lowest
// corner `lowest` above the capsule's top line: a corner or an edge of the box is what comes
// nearest.
struct TiltedBox {
  double r, l;  // the capsule's radius and segment length
  Shape capsule, box;
  Vector3d half;
  ShapePose lying, tilted;
};

// The shapes of t's sizes, and the box (its rotation set) placed with its lowest corner `lowest`
// above the capsule's top line, at x along it.
void PlaceBox(double x, double lowest, TiltedBox* t) {
  t->capsule = MakeShape(ShapeKind::Capsule, Vector3d(t->r, t->l, 0));
  t->box = MakeShape(ShapeKind::Box, 2.0 * t->half);
  const Vector3d signs = -t->tilted.rotation.row(2).transpose().array().sign();
  const Vector3d corner = t->tilted.rotation * signs.cwiseProduct(t->half);
  t->tilted.position = Vector3d(x, 0.0, t->r + lowest) - corner;
}

TiltedBox MakeTiltedBox(std::mt19937* rng, double lowest) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  TiltedBox t;
  t.r = 0.03 + 0.04 * u(*rng);
  t.l = 0.05 + 0.15 * u(*rng);
  t.half = Vector3d(0.04 + 0.06 * u(*rng), 0.04 + 0.06 * u(*rng), 0.04 + 0.06 * u(*rng));
  const Vector3d axis = Vector3d(u(*rng) - 0.5, u(*rng) - 0.5, u(*rng) - 0.5).normalized();
  t.tilted.rotation = Eigen::AngleAxisd(0.05 + 0.5 * u(*rng), axis).toRotationMatrix() *
                      Eigen::AngleAxisd(6.3 * u(*rng), Vector3d::UnitZ()).toRotationMatrix();
  PlaceBox((u(*rng) - 0.5) * t.l, lowest, &t);
  return t;
}

// A box with an edge down along the capsule's top line, over the segment, tilted by a few
// hundredths of a radian along it: with its lowest corner inside the capsule, the edge's other
// end is inside too.
TiltedBox MakeEdgeDownBox(std::mt19937* rng, double lowest) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  TiltedBox t;
  t.r = 0.03 + 0.04 * u(*rng);
  t.l = 0.1 + 0.1 * u(*rng);
  t.half = Vector3d((0.2 + 0.25 * u(*rng)) * t.l, 0.04 + 0.06 * u(*rng), 0.04 + 0.06 * u(*rng));
  const double tilt = (u(*rng) < 0.5 ? -1.0 : 1.0) * (0.005 + 0.025 * u(*rng));
  t.tilted.rotation = Eigen::AngleAxisd(tilt, Vector3d::UnitY()).toRotationMatrix() *
                      Eigen::AngleAxisd(0.25 * M_PI, Vector3d::UnitX()).toRotationMatrix();
  PlaceBox((u(*rng) - 0.5) * (0.5 * t.l - t.half.x()), lowest, &t);
  return t;
}

// Whatever the threshold (how many of the box's corners fall within its band), each point lies
// on both surfaces and the first, the nearest, at the shapes' distance, the same point at both
// thresholds: where they meet, not at an end of the capsule away from the corner.
TEST_CASE("capsule contact: a box tilted over a capsule meets it where they are nearest") {
  const ExplicitContactGeometry geometry;
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int more = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const TiltedBox t = MakeTiltedBox(&rng, 1e-3 + 7e-3 * u(rng));
    const ConvexSeparation gjk = GetSeparation(t.box, t.tilted, t.capsule, t.lying, INFINITY);
    REQUIRE(gjk.distance > 0.0);
    std::vector<ContactPoint> near_only;
    for (const double threshold : {0.02, 0.1}) {
      std::vector<ContactPoint> points;
      geometry.FindContacts(t.box, t.tilted, t.capsule, t.lying, threshold, &points);
      CAPTURE(trial);
      CAPTURE(threshold);
      CAPTURE(points.size());
      CAPTURE(gjk.distance);
      REQUIRE_FALSE(points.empty());
      CheckConsistent(points);
      CHECK(points[0].distance == doctest::Approx(gjk.distance).epsilon(1e-7).scale(1.0));
      CHECK(Nearest(points) == doctest::Approx(gjk.distance).epsilon(1e-7).scale(1.0));
      Vector3d p, q;
      Ends(t.capsule, t.lying, &p, &q);
      for (const ContactPoint& c : points) {
        CHECK(BoxSurfaceDistance(t.half, t.tilted, c.point_a) < 1e-9);
        CHECK(std::abs(DistanceToSegment(p, q, c.point_b) - t.r) < 1e-9);
      }
      if (threshold == 0.02) near_only = points;
      if (threshold == 0.1) {
        CHECK((points[0].point_a - near_only[0].point_a).norm() < 1e-9);
        if (points.size() > near_only.size()) ++more;
      }
    }
  }
  CHECK(more > 50);  // the wider band brought other corners in
}

// The box's other corners within the threshold, apart or inside the capsule (a box turned over
// it, or with an edge pressed into its top line): each has its own contact at its distance to
// the capsule (the segment's distance less the radius), its normal from the corner towards the
// segment, but for corners near the first point (5 % of the size). A box rocking or turning on
// one corner brings the others in within a step.
TEST_CASE(
    "capsule contact: every corner of a tilted box within the threshold has its own contact") {
  const ExplicitContactGeometry geometry;
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0, inside = 0;
  for (int trial = 0; trial < 400; ++trial) {
    // Turned boxes from 8 mm inside to 8 mm apart; edges down 2-8 mm inside.
    const TiltedBox t = trial % 2 == 0 ? MakeTiltedBox(&rng, -8e-3 + 16e-3 * u(rng))
                                       : MakeEdgeDownBox(&rng, -8e-3 + 6e-3 * u(rng));
    const double threshold = 0.01 + 0.1 * u(rng);
    std::vector<ContactPoint> points;
    geometry.FindContacts(t.box, t.tilted, t.capsule, t.lying, threshold, &points);
    CAPTURE(trial);
    CAPTURE(points.size());
    REQUIRE_FALSE(points.empty());
    CheckConsistent(points);
    Vector3d p, q;
    Ends(t.capsule, t.lying, &p, &q);
    const double scale = std::max(t.box.BoundingRadius(), t.capsule.BoundingRadius());
    for (int k = 0; k < 8; ++k) {
      const Vector3d signs(k & 1 ? 1 : -1, k & 2 ? 1 : -1, k & 4 ? 1 : -1);
      const Vector3d corner = t.tilted.position + t.tilted.rotation * signs.cwiseProduct(t.half);
      const double distance = DistanceToSegment(p, q, corner) - t.r;
      if (distance >= threshold - 1e-9) continue;
      if ((corner - points[0].point_a).norm() < 0.05 * scale + 1e-9) continue;
      CAPTURE(k);
      CAPTURE(distance);
      const auto at = std::find_if(points.begin() + 1, points.end(), [&](const ContactPoint& c) {
        return (c.point_a - corner).norm() < 1e-9;
      });
      REQUIRE(at != points.end());
      CHECK(at->distance == doctest::Approx(distance).epsilon(1e-9).scale(1.0));
      const Vector3d axis_point = NearestOnSegment(p, q, corner);
      CHECK((at->normal - (axis_point - corner).normalized()).norm() < 1e-6);  // GJK's: ~1e-7
      ++checked;
      if (distance < 0.0) ++inside;
    }
  }
  MESSAGE("corners with their own contact: " << checked << ", " << inside << " of them inside");
  CHECK(checked > 200);
  CHECK(inside > 50);
}

}  // namespace capsule_contact_test
}  // namespace ncpkit
