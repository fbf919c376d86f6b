// The explicit distances against a half-space for ellipsoids (exact support point) and
// cylinders (support points on the caps' rims), checked against the surfaces themselves; the
// box-box contact points of an edge on a face and of boxes apart along an edge axis; the
// support-point contact of the other pairs against closed forms.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "contact/distance.h"
#include "dynamics/shapes.h"

namespace ncpkit {
namespace {

ShapePose Pose(const Eigen::Vector3d& position, const Eigen::Matrix3d& rotation) {
  ShapePose pose;
  pose.position = position;
  pose.rotation = rotation;
  return pose;
}

Shape MakeDistanceShape(ShapeKind kind, const Eigen::Vector3d& size) {
  Shape shape;
  shape.kind = kind;
  shape.size = size;
  return shape;
}

TEST_CASE("explicit distance: an ellipsoid's support point against a plane, any orientation") {
  const ExplicitContactGeometry geometry;
  const Shape plane = MakeDistanceShape(ShapeKind::HalfSpace, Eigen::Vector3d::Ones());
  const Shape ellipsoid = MakeDistanceShape(ShapeKind::Ellipsoid, Eigen::Vector3d(0.3, 0.5, 0.8));
  const Eigen::Matrix3d D = ellipsoid.size.asDiagonal();
  std::mt19937 random(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::Matrix3d R =
        Eigen::Quaterniond(normal(random), normal(random), normal(random), normal(random))
            .normalized()
            .toRotationMatrix();
    const Eigen::Vector3d centre(normal(random), normal(random), 0.6 + 0.2 * normal(random));
    std::vector<ContactPoint> points;
    geometry.FindContacts(plane, Pose(Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity()),
                          ellipsoid, Pose(centre, R), 10.0, &points);
    REQUIRE(points.size() == 1);
    const ContactPoint& c = points[0];
    CHECK((c.normal - Eigen::Vector3d::UnitZ()).norm() == 0.0);
    // point_b on the surface, its outward normal there against the plane's.
    const Eigen::Vector3d local = R.transpose() * (c.point_b - centre);
    CHECK((D.inverse() * local).norm() == doctest::Approx(1.0).epsilon(1e-12));
    const Eigen::Vector3d surface_normal = (R * D.inverse() * D.inverse() * local).normalized();
    CHECK((surface_normal + Eigen::Vector3d::UnitZ()).norm() <= 1e-9);
    CHECK(c.distance == doctest::Approx(c.point_b.z()).epsilon(1e-12));
    // No point of a fine surface grid is lower.
    double lowest = 1e9;
    for (int i = 0; i <= 200; ++i) {
      for (int j = 0; j < 400; ++j) {
        const double polar = M_PI * i / 200, azimuth = 2 * M_PI * j / 400;
        const Eigen::Vector3d unit(std::sin(polar) * std::cos(azimuth),
                                   std::sin(polar) * std::sin(azimuth), std::cos(polar));
        lowest = std::min(lowest, (centre + R * D * unit).z());
      }
    }
    CHECK(lowest >= c.distance - 1e-12);
    CHECK(lowest <= c.distance + 1e-3);
  }
}

TEST_CASE("explicit distance: a cylinder against a plane by its rims' support points") {
  const ExplicitContactGeometry geometry;
  const Shape plane = MakeDistanceShape(ShapeKind::HalfSpace, Eigen::Vector3d::Ones());
  const Shape cylinder =
      MakeDistanceShape(ShapeKind::Cylinder, Eigen::Vector3d(0.5, 2.0, 0.0));  // r, l
  const ShapePose ground = Pose(Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity());
  std::vector<ContactPoint> points;
  SUBCASE("lying: the two ends of its contact line") {
    geometry.FindContacts(plane, ground, cylinder,
                          Pose(Eigen::Vector3d(0, 0, 0.502), Eigen::Matrix3d::Identity()), 0.01,
                          &points);
    REQUIRE(points.size() == 2);
    for (const ContactPoint& c : points) {
      CHECK(c.distance == doctest::Approx(0.002).epsilon(1e-12));
      CHECK(std::abs(c.point_b.x()) == doctest::Approx(1.0));
      CHECK(std::abs(c.point_b.y()) <= 1e-15);
    }
  }
  SUBCASE("standing: eight points of its base") {
    const Eigen::Matrix3d up =
        Eigen::AngleAxisd(-M_PI / 2, Eigen::Vector3d::UnitY()).toRotationMatrix();
    geometry.FindContacts(plane, ground, cylinder, Pose(Eigen::Vector3d(0, 0, 1.0), up), 0.01,
                          &points);
    REQUIRE(points.size() == 8);
    for (const ContactPoint& c : points) {
      CHECK(std::abs(c.distance) <= 1e-12);
      CHECK(std::hypot(c.point_b.x(), c.point_b.y()) == doctest::Approx(0.5));
    }
  }
  SUBCASE("tilted: the lowest rim point exactly, in either order of the pair") {
    const Eigen::Matrix3d R =
        Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 0.5).normalized()).toRotationMatrix();
    const Eigen::Vector3d centre(0.1, -0.2, 1.3);
    geometry.FindContacts(cylinder, Pose(centre, R), plane, ground, 10.0, &points);
    double lowest = 1e9;
    for (double side : {-1.0, 1.0}) {
      for (int k = 0; k < 100000; ++k) {
        const double angle = 2 * M_PI * k / 100000;
        const Eigen::Vector3d rim =
            centre + R * Eigen::Vector3d(side, 0.5 * std::cos(angle), 0.5 * std::sin(angle));
        lowest = std::min(lowest, rim.z());
      }
    }
    double found = 1e9;
    for (const ContactPoint& c : points) {
      CHECK((c.normal + Eigen::Vector3d::UnitZ()).norm() == 0.0);  // flipped: from the cylinder
      found = std::min(found, c.distance);
    }
    CHECK(points.size() == 16);
    CHECK(found <= lowest + 1e-12);
    CHECK(found >= lowest - 1e-8);
  }
  CHECK(geometry.Supports(ShapeKind::Cylinder, ShapeKind::HalfSpace));
  CHECK(geometry.Supports(ShapeKind::HalfSpace, ShapeKind::Ellipsoid));
  CHECK(geometry.Supports(ShapeKind::Cylinder, ShapeKind::Box));  // by support points
  CHECK(geometry.Supports(ShapeKind::Ellipsoid, ShapeKind::Sphere));
  CHECK_FALSE(geometry.Supports(ShapeKind::HalfSpace, ShapeKind::HalfSpace));
}

}  // namespace
}  // namespace ncpkit

namespace ncpkit {
namespace {

// The eight corners of a box in the world.
std::vector<Eigen::Vector3d> Corners(const Shape& box, const ShapePose& pose) {
  std::vector<Eigen::Vector3d> corners;
  for (int k = 0; k < 8; ++k) {
    const Eigen::Vector3d sign(k & 1 ? 1.0 : -1.0, k & 2 ? 1.0 : -1.0, k & 4 ? 1.0 : -1.0);
    corners.push_back(pose.position + pose.rotation * (0.5 * box.size.cwiseProduct(sign)));
  }
  return corners;
}

TEST_CASE("explicit distance: a box edge on another box's face is a face contact, not one point") {
  // A flat box on a box tilted about y: the lower box's top edge lies on the upper box's bottom
  // face, where the edge-edge axes coincide with the face's normal within rounding. The face's
  // clipped points (the edge's two ends, at the contact, and the far corners above it) carry
  // the contact; a single edge point let the upper box turn its corners into the lower one.
  const ExplicitContactGeometry geometry;
  const Shape box = MakeDistanceShape(ShapeKind::Box, Eigen::Vector3d(0.2, 0.2, 0.2));
  for (const double tilt : {0.2, 0.35, 0.6}) {
    CAPTURE(tilt);
    const Eigen::Matrix3d R = Eigen::AngleAxisd(tilt, Eigen::Vector3d::UnitY()).toRotationMatrix();
    const ShapePose lower = Pose(Eigen::Vector3d(0.0, 0.0, 0.1), R);
    double top = -INFINITY;
    for (const Eigen::Vector3d& c : Corners(box, lower)) top = std::max(top, c.z());
    const ShapePose upper =
        Pose(Eigen::Vector3d(0.01, 0.0, top + 0.1 - 2e-4), Eigen::Matrix3d::Identity());
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, lower, box, upper, 0.05, &points);
    REQUIRE(points.size() >= 2);
    int touching = 0;
    for (const ContactPoint& p : points) {
      CHECK(p.normal.z() == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(p.distance >= -2e-4 - 1e-12);
      touching += p.distance < 1e-9 ? 1 : 0;
    }
    CHECK(touching == 2);  // the edge's two ends
  }
}

TEST_CASE("explicit distance: a box turned on a box gives every vertex of its patch, or four") {
  // A cube turned 45 degrees about the normal of an equal cube's top face overlaps it in a
  // regular octagon. BoxPatch::kEveryVertex reports its eight vertices, each at the
  // overlap; the default (kFourPoints) four of them that span it.
  const Shape box = MakeDistanceShape(ShapeKind::Box, Eigen::Vector3d(0.2, 0.2, 0.2));
  const double overlap = 1e-4;
  const ShapePose lower = Pose(Eigen::Vector3d(0.0, 0.0, 0.1), Eigen::Matrix3d::Identity());
  const Eigen::Matrix3d turn =
      Eigen::AngleAxisd(0.25 * M_PI, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  const ShapePose upper = Pose(Eigen::Vector3d(0.0, 0.0, 0.3 - overlap), turn);
  // The octagon: |x|, |y| <= 0.1 and |x +- y| <= 0.1 sqrt(2); its vertices lie on the square's
  // sides at 0.1 (sqrt(2) - 1) from their middles.
  const double a = 0.1, b = 0.1 * (std::sqrt(2.0) - 1.0);
  std::vector<Eigen::Vector2d> octagon;
  for (const double s : {1.0, -1.0}) {
    for (const double t : {1.0, -1.0}) {
      octagon.emplace_back(s * a, t * b);
      octagon.emplace_back(t * b, s * a);
    }
  }
  const auto vertex_of_octagon = [&](const ContactPoint& p) {
    for (const Eigen::Vector2d& v : octagon) {
      if ((p.point_a.head<2>() - v).norm() < 1e-9) return true;
    }
    return false;
  };
  for (const BoxPatch patch : {BoxPatch::kEveryVertex, BoxPatch::kFourPoints}) {
    const size_t expected = patch == BoxPatch::kEveryVertex ? 8 : 4;
    CAPTURE(expected);
    std::vector<ContactPoint> points;
    ExplicitContactGeometry(patch).FindContacts(box, lower, box, upper, 0.01, &points);
    CHECK(points.size() == expected);
    for (const ContactPoint& p : points) {
      CHECK(p.distance == doctest::Approx(-overlap).epsilon(1e-6));
      CHECK(vertex_of_octagon(p));
    }
  }
}

TEST_CASE("explicit distance: a box pair with a pose that is not finite gives no point") {
  // Every separating axis compares false with NaN, so none is chosen; the search must stop there
  // rather than clip against face -1 (a fuzzed scene read past a box's half sizes). The read is
  // what fails without the check, so the sanitizer build is the one that catches it.
  const ExplicitContactGeometry geometry;
  const Shape box = MakeDistanceShape(ShapeKind::Box, Eigen::Vector3d(0.2, 0.2, 0.2));
  const ShapePose lower = Pose(Eigen::Vector3d(0.0, 0.0, 0.1), Eigen::Matrix3d::Identity());
  const ShapePose lost = Pose(Eigen::Vector3d(NAN, 0.0, 0.25), Eigen::Matrix3d::Identity());
  std::vector<ContactPoint> points;
  geometry.FindContacts(box, lower, box, lost, 0.05, &points);
  CHECK(points.empty());
}

TEST_CASE("explicit distance: two box edges crossing are one edge point at their gap") {
  // A turned 45 degrees about y shows an edge along y upwards; B, turned 45 degrees about x and
  // then by psi about z, shows an edge downwards at psi to it, placed with its middle at the gap
  // g straight above the middle of A's. The edges cross at g along z: the contact is one edge
  // point at distance g (with the best face's points beside it when apart), for random sizes,
  // crossing angles and gaps, the pair turned and moved as a whole. The edge axes are the answer
  // here, so a shortcut that wrongly skipped them would give face points instead.
  const ExplicitContactGeometry geometry;
  std::mt19937 random(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const Eigen::Vector3d ha(0.05 + unit(random), 0.05 + unit(random), 0.05 + unit(random));
    const Eigen::Vector3d hb(0.05 + unit(random), 0.05 + unit(random), 0.05 + unit(random));
    const Shape a = MakeDistanceShape(ShapeKind::Box, 2.0 * ha);
    const Shape b = MakeDistanceShape(ShapeKind::Box, 2.0 * hb);
    const double psi = 0.3 + unit(random);
    const double gap = (2.0 * unit(random) - 1.0) * 0.01 * std::min(ha.minCoeff(), hb.minCoeff());
    const Eigen::Matrix3d Ra =
        Eigen::AngleAxisd(M_PI / 4, Eigen::Vector3d::UnitY()).toRotationMatrix();
    const Eigen::Matrix3d Rb = (Eigen::AngleAxisd(psi, Eigen::Vector3d::UnitZ()) *
                                Eigen::AngleAxisd(M_PI / 4, Eigen::Vector3d::UnitX()))
                                   .toRotationMatrix();
    const Eigen::Vector3d top_a = Ra * Eigen::Vector3d(-ha.x(), 0.0, ha.z());  // A's edge middle
    const Eigen::Vector3d bottom_b = Rb * Eigen::Vector3d(0.0, -hb.y(), -hb.z());  // B's
    const Eigen::Matrix3d turn =
        Eigen::Quaterniond(normal(random), normal(random), normal(random), normal(random))
            .normalized()
            .toRotationMatrix();
    const Eigen::Vector3d shift(normal(random), normal(random), normal(random));
    const ShapePose pa = Pose(shift, turn * Ra);
    const ShapePose pb =
        Pose(shift + turn * (top_a + gap * Eigen::Vector3d::UnitZ() - bottom_b), turn * Rb);
    const Eigen::Vector3d crossing = shift + turn * top_a;
    CAPTURE(trial);
    CAPTURE(gap);
    std::vector<ContactPoint> points;
    geometry.FindContacts(a, pa, b, pb, 0.05, &points);
    REQUIRE_FALSE(points.empty());
    int edge_points = 0;
    for (const ContactPoint& p : points) {
      CHECK(p.distance >= gap - 1e-12);
      if (std::abs(p.distance - gap) > 1e-12) continue;
      ++edge_points;
      CHECK((p.normal - turn.col(2)).norm() < 1e-12);
      CHECK((p.point_a - crossing).norm() < 1e-9);
    }
    CHECK(edge_points == 1);
    if (gap <= 0.0) CHECK(points.size() == 1);
  }
}

TEST_CASE("explicit distance: separated boxes never report a point below zero") {
  // Random turned boxes lifted apart: every point within the threshold, from the edge axis or
  // from the best face's clipped points that come with it, measures a gap that is really open
  // (a clipped point of B's face within A's face and below its plane would be inside A).
  const ExplicitContactGeometry geometry;
  const Shape box = MakeDistanceShape(ShapeKind::Box, Eigen::Vector3d(0.2, 0.3, 0.25));
  std::mt19937 random(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  int with_points = 0, several = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto turn = [&]() {
      return Eigen::Quaterniond(normal(random), normal(random), normal(random), normal(random))
          .normalized()
          .toRotationMatrix();
    };
    const ShapePose a = Pose(Eigen::Vector3d::Zero(), turn());
    const Eigen::Vector3d direction =
        Eigen::Vector3d(normal(random), normal(random), normal(random)).normalized();
    // Move B out along the direction until no corner of either box is inside the other's
    // inequalities, then 0 to 2 cm further.
    ShapePose b = Pose(Eigen::Vector3d::Zero(), turn());
    const auto inside = [&](const Shape& s, const ShapePose& pose, const Eigen::Vector3d& x) {
      const Eigen::Vector3d local = pose.rotation.transpose() * (x - pose.position);
      return (local.cwiseAbs().array() <= 0.5 * s.size.array()).all();
    };
    const auto overlapping = [&]() {
      std::vector<ContactPoint> probe;
      geometry.FindContacts(box, a, box, b, 0.0, &probe);
      return !probe.empty();
    };
    double t = 0.0;
    while (overlapping()) {
      t += 1e-3;
      b.position = t * direction;
    }
    b.position = (t + 0.02 * std::uniform_real_distribution<double>(0.0, 1.0)(random)) * direction;
    for (const Eigen::Vector3d& c : Corners(box, b)) CHECK_FALSE(inside(box, a, c));
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, a, box, b, 0.05, &points);
    with_points += points.empty() ? 0 : 1;
    several += points.size() > 1 ? 1 : 0;
    for (const ContactPoint& p : points) {
      CHECK(p.distance >= -1e-12);
      CHECK(p.distance < 0.05);
    }
  }
  CHECK(with_points > 300);
  CHECK(several > 100);
}

}  // namespace
}  // namespace ncpkit

namespace ncpkit {
namespace {

TEST_CASE("support-point contact: a sphere against a cylinder's side, cap and rim, exactly") {
  // Against closed forms: side, d = |c - axis| - r - R; cap, d = |c_x| - l/2 - R; rim, the
  // distance from the centre to the rim circle minus R. Within the search's 1e-6 of the size,
  // never above the true distance, with the normal along the closest points.
  const ExplicitContactGeometry geometry;
  const Shape cylinder = MakeDistanceShape(ShapeKind::Cylinder, Eigen::Vector3d(0.3, 1.0, 0.0));
  const Shape sphere = MakeDistanceShape(ShapeKind::Sphere, Eigen::Vector3d::Constant(0.1));
  const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  const ShapePose pc = Pose(Eigen::Vector3d(0.2, -0.1, 0.4), R);
  struct Case {
    Eigen::Vector3d local;  // the sphere's centre in the cylinder's frame
    double exact;
  };
  const double rim_x = 0.5 + 0.05, rim_r = 0.3 + 0.04;
  const Case cases[] = {
      {Eigen::Vector3d(0.1, 0.0, 0.42), 0.42 - 0.3 - 0.1},                 // side
      {Eigen::Vector3d(0.1, 0.3, -0.25), std::hypot(0.3, 0.25) - 0.4},     // side, apart
      {Eigen::Vector3d(-0.62, 0.1, 0.05), 0.62 - 0.5 - 0.1},               // cap
      {Eigen::Vector3d(rim_x, rim_r, 0.0), std::hypot(0.05, 0.04) - 0.1},  // rim
      {Eigen::Vector3d(0.1, 0.0, 0.38), 0.38 - 0.3 - 0.1},                 // overlapping by 2 cm
  };
  for (const Case& c : cases) {
    CAPTURE(c.local.transpose());
    const ShapePose ps = Pose(pc.position + R * c.local, Eigen::Matrix3d::Identity());
    std::vector<ContactPoint> points;
    geometry.FindContacts(cylinder, pc, sphere, ps, 0.1, &points);
    REQUIRE(points.size() == 1);
    CHECK(points[0].distance <= c.exact + 1e-12);
    CHECK(points[0].distance >= c.exact - 1e-6);
    // The normal points from the cylinder to the sphere's centre.
    CHECK(points[0].normal.dot((ps.position - points[0].point_a).normalized()) >= 1.0 - 1e-5);
    // Beyond the threshold: nothing.
    points.clear();
    geometry.FindContacts(cylinder, pc, sphere, ps, c.exact - 1e-3, &points);
    CHECK(points.empty());
  }
}

TEST_CASE("support-point contact: line and surface contact of cylinders on boxes and each other") {
  const ExplicitContactGeometry geometry;
  const Shape box = MakeDistanceShape(ShapeKind::Box, Eigen::Vector3d(2.0, 2.0, 0.4));
  const Shape cylinder = MakeDistanceShape(ShapeKind::Cylinder, Eigen::Vector3d(0.2, 1.0, 0.0));
  const ShapePose pb = Pose(Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity());
  SUBCASE("lying on a box: the two ends of the contact line") {
    const ShapePose pc = Pose(Eigen::Vector3d(0.1, 0.3, 0.4 + 1e-3), Eigen::Matrix3d::Identity());
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, pb, cylinder, pc, 0.01, &points);
    REQUIRE(points.size() == 2);
    for (const ContactPoint& p : points) {
      CHECK(p.distance == doctest::Approx(1e-3).epsilon(1e-6));
      CHECK(p.normal.z() == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(std::abs(p.point_b.x() - 0.1) == doctest::Approx(0.5).epsilon(1e-6));
      CHECK(p.point_b.y() == doctest::Approx(0.3).epsilon(1e-9));
    }
  }
  SUBCASE("hanging over the box's edge: the line clipped to the face") {
    const ShapePose pc = Pose(Eigen::Vector3d(0.9, 0.0, 0.4), Eigen::Matrix3d::Identity());
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, pb, cylinder, pc, 0.01, &points);
    REQUIRE(points.size() == 2);
    double ends[2] = {points[0].point_b.x(), points[1].point_b.x()};
    std::sort(ends, ends + 2);
    CHECK(ends[0] == doctest::Approx(0.4).epsilon(1e-6));
    CHECK(ends[1] == doctest::Approx(1.0).epsilon(1e-6));  // the box's edge
  }
  SUBCASE("standing on a box: points of its base that keep its extent") {
    const Eigen::Matrix3d up =
        Eigen::AngleAxisd(-M_PI / 2, Eigen::Vector3d::UnitY()).toRotationMatrix();
    const ShapePose pc = Pose(Eigen::Vector3d(0.0, 0.0, 0.2 + 0.5), up);
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, pb, cylinder, pc, 0.01, &points);
    CHECK(points.size() >= 3);
    for (const ContactPoint& p : points) {
      CHECK(std::abs(p.distance) <= 1e-9);
      CHECK(std::hypot(p.point_b.x(), p.point_b.y()) == doctest::Approx(0.2).epsilon(1e-6));
    }
  }
  SUBCASE("two cylinders side by side touch along a line, crossed at a point") {
    const ShapePose p1 = Pose(Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity());
    const ShapePose p2 = Pose(Eigen::Vector3d(0.3, 0.0, 0.4 + 2e-3), Eigen::Matrix3d::Identity());
    std::vector<ContactPoint> points;
    geometry.FindContacts(cylinder, p1, cylinder, p2, 0.01, &points);
    REQUIRE(points.size() == 2);
    for (const ContactPoint& p : points) CHECK(p.distance == doctest::Approx(2e-3).epsilon(1e-6));
    const ShapePose crossed =
        Pose(Eigen::Vector3d(0.0, 0.0, 0.4 + 2e-3),
             Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitZ()).toRotationMatrix());
    points.clear();
    geometry.FindContacts(cylinder, p1, cylinder, crossed, 0.01, &points);
    REQUIRE(points.size() == 1);
    CHECK(points[0].distance == doctest::Approx(2e-3).epsilon(1e-6));
    CHECK(points[0].point_a.head<2>().norm() <= 1e-6);
  }
  SUBCASE("an ellipsoid on a box face and on a box edge") {
    const Shape ellipsoid = MakeDistanceShape(ShapeKind::Ellipsoid, Eigen::Vector3d(0.3, 0.2, 0.1));
    const ShapePose on_face =
        Pose(Eigen::Vector3d(0.2, 0.1, 0.2 + 0.1 + 1e-3), Eigen::Matrix3d::Identity());
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, pb, ellipsoid, on_face, 0.01, &points);
    REQUIRE(points.size() == 1);
    CHECK(points[0].distance == doctest::Approx(1e-3).epsilon(1e-6));
    // Beside the box's edge x = 1 at 45 degrees: the closest point is the edge.
    const Eigen::Vector3d centre(1.0 + 0.2, 0.0, 0.2 + 0.2);
    const ShapePose at_edge = Pose(centre, Eigen::Matrix3d::Identity());
    const Shape ball = MakeDistanceShape(ShapeKind::Ellipsoid, Eigen::Vector3d::Constant(0.25));
    points.clear();
    geometry.FindContacts(box, pb, ball, at_edge, 0.1, &points);
    REQUIRE(points.size() == 1);
    CHECK(points[0].distance == doctest::Approx(std::hypot(0.2, 0.2) - 0.25).epsilon(1e-5));
    CHECK((points[0].point_a - Eigen::Vector3d(1.0, 0.0, 0.2)).norm() <= 1e-5);
  }
}

TEST_CASE("support-point contact: resting line contact at gaps down to rounding, any frame") {
  // What a resting cylinder sees step after step: gaps and overlaps from 1e-8 down to 1e-16, the
  // whole scene turned and moved at random. A cylinder lying on a box face, and one beside a
  // parallel cylinder, keep their two line-end points, the exact normal and the gap.
  const ExplicitContactGeometry geometry;
  const Shape box = MakeDistanceShape(ShapeKind::Box, Eigen::Vector3d(4.0, 6.0, 0.2));
  const Shape cylinder = MakeDistanceShape(ShapeKind::Cylinder, Eigen::Vector3d(0.5, 1.0, 0.0));
  std::mt19937 random(23);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const Eigen::Matrix3d frame = Eigen::Quaterniond(u(random), u(random), u(random), u(random))
                                      .normalized()
                                      .toRotationMatrix();
    const Eigen::Vector3d origin(u(random), u(random), u(random));
    const double gap = (trial % 2 ? 1.0 : -1.0) * std::pow(10.0, -12.0 + 4.0 * u(random));
    const Eigen::Matrix3d turn =
        frame * Eigen::AngleAxisd(M_PI * u(random), Eigen::Vector3d::UnitZ()).toRotationMatrix();
    const Eigen::Vector3d offset(u(random), u(random), 0.0);
    CAPTURE(trial);
    CAPTURE(gap);
    std::vector<ContactPoint> points;
    geometry.FindContacts(box, Pose(origin + frame * Eigen::Vector3d(0, 0, -0.1), frame), cylinder,
                          Pose(origin + frame * (offset + Eigen::Vector3d(0, 0, 0.5 + gap)), turn),
                          0.01, &points);
    REQUIRE(points.size() == 2);
    for (const ContactPoint& p : points) {
      CHECK((p.normal - frame.col(2)).norm() <= 1e-15);
      CHECK(std::abs(p.distance - gap) <= 1e-14);
    }
    // A parallel cylinder beside it, touching along the line between their sides.
    const Eigen::Vector3d across = turn.col(1);
    points.clear();
    geometry.FindContacts(cylinder, Pose(origin, turn), cylinder,
                          Pose(origin + (1.0 + gap) * across + 0.3 * u(random) * turn.col(0), turn),
                          0.01, &points);
    REQUIRE(points.size() == 2);
    for (const ContactPoint& p : points) {
      CHECK((p.normal - across).norm() <= 1e-15);
      CHECK(std::abs(p.distance - gap) <= 1e-14);
    }
  }
}

}  // namespace
}  // namespace ncpkit
