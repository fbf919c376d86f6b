// The contact-frame rows (the explicit stepper's J in u = J nu) against finite differences: the
// normal row against the rate of the signed distance that ExplicitContactGeometry measures,
// every row against the motion of the two material points, for bodies moving with random
// twists.
#include "contact/contact_frame.h"

#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <vector>

#include "contact/distance.h"
#include "dynamics/shapes.h"

namespace ncpkit {
namespace {

using Vector6d = Eigen::Matrix<double, 6, 1>;

Shape MakeFrameShape(ShapeKind kind, const Eigen::Vector3d& size) {
  Shape shape;
  shape.kind = kind;
  shape.size = size;
  return shape;
}

// The pose after moving for time tau with twist [v; omega] (constant).
ShapePose Moved(const ShapePose& pose, const Vector6d& twist, double tau) {
  ShapePose moved;
  moved.position = pose.position + tau * twist.head<3>();
  const Eigen::Vector3d omega = twist.tail<3>();
  const double angle = omega.norm() * tau;
  const Eigen::Matrix3d turn =
      angle == 0.0 ? Eigen::Matrix3d::Identity()
                   : Eigen::AngleAxisd(angle, omega.normalized()).toRotationMatrix();
  moved.rotation = turn * pose.rotation;
  return moved;
}

// Where the material point at p (world, at `pose`) is at `moved`.
Eigen::Vector3d Carried(const ShapePose& pose, const ShapePose& moved, const Eigen::Vector3d& p) {
  return moved.position + moved.rotation * pose.rotation.transpose() * (p - pose.position);
}

// The pair's nearest contact point (the tilted box's lowest corner, the balls' one point).
ContactPoint Nearest(const ExplicitContactGeometry& geometry, const Shape& a, const ShapePose& pa,
                     const Shape& b, const ShapePose& pb) {
  std::vector<ContactPoint> points;
  geometry.FindContacts(a, pa, b, pb, 1.0, &points);
  REQUIRE(!points.empty());
  ContactPoint nearest = points[0];
  for (const ContactPoint& point : points) {
    if (point.distance < nearest.distance) nearest = point;
  }
  return nearest;
}

TEST_CASE("contact frame: the basis is right-handed and orthonormal for any normal") {
  std::mt19937 random(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<Eigen::Vector3d> normals = {Eigen::Vector3d::UnitX(), -Eigen::Vector3d::UnitX(),
                                          Eigen::Vector3d::UnitY(), Eigen::Vector3d::UnitZ()};
  for (int k = 0; k < 100; ++k) {
    normals.push_back(Eigen::Vector3d(normal(random), normal(random), normal(random)).normalized());
  }
  for (const Eigen::Vector3d& n : normals) {
    Eigen::Vector3d t1, t2;
    ContactTangentBasis(n, &t1, &t2);
    Eigen::Matrix3d frame;
    frame << n, t1, t2;
    CHECK((frame.transpose() * frame - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() <= 1e-15);
    CHECK(frame.determinant() == doctest::Approx(1.0).epsilon(1e-14));
  }
}

TEST_CASE("contact frame: the rows against finite differences of the gap and the points") {
  const ExplicitContactGeometry geometry;
  const Shape ground = MakeFrameShape(ShapeKind::HalfSpace, Eigen::Vector3d::Ones());
  const Shape box = MakeFrameShape(ShapeKind::Box, Eigen::Vector3d(0.4, 0.6, 0.8));
  const Shape ball = MakeFrameShape(ShapeKind::Sphere, Eigen::Vector3d(0.25, 0.25, 0.25));
  const Shape other_ball = MakeFrameShape(ShapeKind::Sphere, Eigen::Vector3d(0.4, 0.4, 0.4));
  std::mt19937 random(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto random_twist = [&]() {
    Vector6d twist;
    for (int k = 0; k < 6; ++k) twist[k] = normal(random);
    return twist;
  };
  const double tau = 1e-6;
  double worst = 0.0;
  for (int trial = 0; trial < 30; ++trial) {
    CAPTURE(trial);
    // A tilted box above the ground (one lowest corner), a ball above a box's face, two balls.
    const int kind = trial % 3;
    const Shape& a = kind == 0 ? ground : (kind == 1 ? box : other_ball);
    const Shape& b = kind == 0 ? box : ball;
    ShapePose pa, pb;
    if (kind == 0) {
      pb.rotation =
          Eigen::AngleAxisd(0.3 + 0.1 * normal(random), Eigen::Vector3d(1, 2, 0.5).normalized())
              .toRotationMatrix();
      pb.position = Eigen::Vector3d(normal(random), normal(random), 0.5);
    } else if (kind == 1) {
      pa.rotation = Eigen::AngleAxisd(normal(random), Eigen::Vector3d::UnitZ()).toRotationMatrix();
      pa.position = Eigen::Vector3d(normal(random), normal(random), 0.0);
      pb.position = pa.position + pa.rotation * Eigen::Vector3d(0.05, -0.1, 0.4 + 0.25 + 0.01);
    } else {
      pa.position = Eigen::Vector3d(normal(random), normal(random), normal(random));
      pb.position =
          pa.position +
          0.66 * Eigen::Vector3d(normal(random), normal(random), normal(random)).normalized();
    }
    // The ground stays put; the others move.
    const Vector6d twist_a = kind == 0 ? Vector6d::Zero() : random_twist();
    const Vector6d twist_b = random_twist();
    const ContactPoint c = Nearest(geometry, a, pa, b, pb);
    Eigen::Vector3d t1, t2;
    ContactTangentBasis(c.normal, &t1, &t2);
    const Eigen::Vector3d u = ContactFrameRows(c.normal, t1, t2, c.point_b, pb.position) * twist_b -
                              ContactFrameRows(c.normal, t1, t2, c.point_a, pa.position) * twist_a;
    // Normal: the rate of the measured gap.
    const double gap_plus =
        Nearest(geometry, a, Moved(pa, twist_a, tau), b, Moved(pb, twist_b, tau)).distance;
    const double gap_minus =
        Nearest(geometry, a, Moved(pa, twist_a, -tau), b, Moved(pb, twist_b, -tau)).distance;
    const double gap_rate = (gap_plus - gap_minus) / (2.0 * tau);
    CHECK(std::abs(gap_rate - u[0]) <= 1e-7 * (1.0 + std::abs(u[0])));
    worst = std::max(worst, std::abs(gap_rate - u[0]));
    // Every row: the relative motion of the two material points.
    const Eigen::Vector3d motion = (Carried(pb, Moved(pb, twist_b, tau), c.point_b) -
                                    Carried(pb, Moved(pb, twist_b, -tau), c.point_b)) -
                                   (Carried(pa, Moved(pa, twist_a, tau), c.point_a) -
                                    Carried(pa, Moved(pa, twist_a, -tau), c.point_a));
    const Eigen::Vector3d rate = motion / (2.0 * tau);
    const Eigen::Vector3d expected(rate.dot(c.normal), rate.dot(t1), rate.dot(t2));
    CHECK((expected - u).cwiseAbs().maxCoeff() <= 1e-7 * (1.0 + u.cwiseAbs().maxCoeff()));
    worst = std::max(worst, (expected - u).cwiseAbs().maxCoeff());
  }
  MESSAGE("contact-frame rows against finite differences: largest difference " << worst);
}

}  // namespace
}  // namespace ncpkit
