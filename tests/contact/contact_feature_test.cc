// Contact features (contact/contact_feature.h): evaluated at the poses the narrow phase saw, a
// feature gives back its contact point, normal and distance; evaluated on Jets, its derivatives
// with respect to both poses agree with central differences of the narrow phase itself wherever
// the perturbed search finds the same features; and the distance's derivative is the normal row
// of the contact Jacobian (the normal velocity of B's point against A's).
#include "contact/contact_feature.h"

#include <ceres/jet.h>
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "contact/distance.h"
#include "dynamics/shapes.h"

namespace ncpkit {
// Named, not anonymous: the unity build puts test files side by side.
namespace contact_feature_test {

using Jet = ceres::Jet<double, 12>;  // A's position and rotation, then B's

Shape MakeFeatureShape(ShapeKind kind, const Eigen::Vector3d& size) {
  Shape shape;
  shape.kind = kind;
  shape.size = size;
  return shape;
}

Eigen::Matrix3d Skew(const Eigen::Vector3d& w) {
  Eigen::Matrix3d s;
  s << 0, -w.z(), w.y(), w.z(), 0, -w.x(), -w.y(), w.x(), 0;
  return s;
}

// The pose moved by `dx` and turned by exp([dtheta]) in the world frame.
ShapePose Moved(const ShapePose& pose, const Eigen::Vector3d& dx, const Eigen::Vector3d& dtheta) {
  ShapePose moved = pose;
  moved.position += dx;
  if (dtheta.norm() > 0.0) {
    moved.rotation =
        Eigen::AngleAxisd(dtheta.norm(), dtheta.normalized()).toRotationMatrix() * pose.rotation;
  }
  return moved;
}

// Jets with dual parts 6 * body + k: position k (k < 3) or world rotation k - 3.
FeaturePose<Jet> JetPose(const ShapePose& pose, int body) {
  FeaturePose<Jet> out;
  for (int k = 0; k < 3; ++k) out.position[k] = Jet(pose.position[k], 6 * body + k);
  Eigen::Matrix<Jet, 3, 3> turn = Eigen::Matrix<Jet, 3, 3>::Zero();  // [dtheta]x
  for (int k = 0; k < 3; ++k) {
    Jet theta(0.0, 6 * body + 3 + k);
    const Eigen::Vector3d axis = Eigen::Vector3d::Unit(k);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) turn(r, c) += theta * Skew(axis)(r, c);
    }
  }
  out.rotation = pose.rotation.cast<Jet>() + turn * pose.rotation.cast<Jet>();
  return out;
}

FeaturePose<double> DoublePose(const ShapePose& pose) { return {pose.position, pose.rotation}; }

// The contact's eleven numbers: distance, normal, point_a, point_b.
Eigen::Matrix<double, 10, 1> Numbers(const ContactPoint& c) {
  Eigen::Matrix<double, 10, 1> v;
  v << c.distance, c.normal, c.point_a, c.point_b;
  return v;
}

struct Case {
  Shape a, b;
  ShapePose pa, pb;
};

Eigen::Matrix3d RandomRotation(std::mt19937* random, double spread) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const Eigen::Vector3d w(normal(*random), normal(*random), normal(*random));
  return Eigen::AngleAxisd(spread * w.norm(), w.normalized()).toRotationMatrix();
}

// Two boxes turned at random, B moved away from A along a random direction until the nearest
// contact the narrow phase reports is `gap` away (0.5 to 9 mm, within the search threshold of
// 1 cm): separated boxes whose contacts are speculative, as between a pile's neighbours.
void SeparatedPair(std::mt19937* random, Case* c) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> gap_draw(0.0005, 0.009);
  c->pa.rotation = RandomRotation(random, 3.0);
  c->pb.rotation = RandomRotation(random, 3.0);
  const Eigen::Vector3d d =
      Eigen::Vector3d(normal(*random), normal(*random), normal(*random)).normalized();
  const double gap = gap_draw(*random);
  // The reported distance grows with the offset along d: bisect for the one that gives `gap`.
  double low = 0.0, high = c->a.size.norm() + c->b.size.norm();
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (low + high);
    std::vector<ContactPoint> points;
    ShapePose pb = c->pb;
    pb.position = c->pa.position + mid * d;
    ExplicitContactGeometry().FindContacts(c->a, c->pa, c->b, pb, 1.0, &points);
    double closest = std::numeric_limits<double>::infinity();
    for (const ContactPoint& p : points) closest = std::min(closest, p.distance);
    (closest < gap ? low : high) = mid;
  }
  c->pb.position = c->pa.position + high * d;
}

// Random pairs of every described kind near contact: a box or a sphere on a plane, a box on a box
// (face contacts with corners and clipped points, edge-on-edge), spheres, a sphere on a box.
Case RandomCase(int trial, std::mt19937* random) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Case c;
  const Eigen::Vector3d box_size(0.4 + 0.2 * u(*random), 0.3 + 0.1 * u(*random),
                                 0.2 + 0.1 * u(*random));
  switch (trial % 5) {
    case 0:  // a tilted box on a plane
      c.a = MakeFeatureShape(ShapeKind::HalfSpace, Eigen::Vector3d::Ones());
      c.b = MakeFeatureShape(ShapeKind::Box, box_size);
      c.pa.rotation = RandomRotation(random, 0.1);
      c.pb.rotation = RandomRotation(random, 0.3);
      c.pb.position = Eigen::Vector3d(u(*random), u(*random), 0.1 + 0.05 * u(*random));
      break;
    case 1:  // a sphere on a plane
      c.a = MakeFeatureShape(ShapeKind::HalfSpace, Eigen::Vector3d::Ones());
      c.b = MakeFeatureShape(ShapeKind::Sphere, Eigen::Vector3d(0.2, 0, 0));
      c.pa.rotation = RandomRotation(random, 0.3);
      c.pb.position = c.pa.rotation.col(2) * (0.2 + 0.01 * u(*random));
      break;
    case 2:  // a box resting turned and offset on a larger one: corners and clipped points
      c.a = MakeFeatureShape(ShapeKind::Box, Eigen::Vector3d(0.5, 0.5, 0.2));
      c.b = MakeFeatureShape(ShapeKind::Box, box_size);
      c.pa.rotation = RandomRotation(random, 0.05);
      c.pb.rotation = c.pa.rotation *
                      Eigen::AngleAxisd(u(*random), Eigen::Vector3d::UnitZ()).toRotationMatrix() *
                      RandomRotation(random, 0.02);
      c.pb.position =
          c.pa.position + c.pa.rotation * Eigen::Vector3d(0.2 * u(*random), 0.2 * u(*random),
                                                          0.1 + 0.5 * box_size.z() - 0.002);
      if (trial % 10 == 7) {  // crossed edges: A's top edge along y, B's bottom edge along x
        c.pa.rotation = Eigen::AngleAxisd(M_PI / 4, Eigen::Vector3d::UnitY()).toRotationMatrix() *
                        RandomRotation(random, 0.02);
        c.pb.rotation = Eigen::AngleAxisd(M_PI / 4 + 0.1 * u(*random), Eigen::Vector3d::UnitZ())
                            .toRotationMatrix() *
                        Eigen::AngleAxisd(M_PI / 4, Eigen::Vector3d::UnitX()).toRotationMatrix();
        // The boxes' extents along z (support points of the two edges).
        const double top = c.pa.rotation.row(2).cwiseAbs().dot(0.5 * c.a.size);
        const double bottom = c.pb.rotation.row(2).cwiseAbs().dot(0.5 * box_size);
        c.pb.position = Eigen::Vector3d(0.02 * u(*random), 0.02 * u(*random), top + bottom + 0.001);
      }
      break;
    case 3:  // two spheres
      c.a = MakeFeatureShape(ShapeKind::Sphere, Eigen::Vector3d(0.3, 0, 0));
      c.b = MakeFeatureShape(ShapeKind::Sphere, Eigen::Vector3d(0.2, 0, 0));
      c.pb.position = Eigen::Vector3d(u(*random), u(*random), u(*random)).normalized() * 0.49;
      break;
    default:  // a sphere on a box's face, either order
      c.a = MakeFeatureShape(ShapeKind::Box, box_size);
      c.b = MakeFeatureShape(ShapeKind::Sphere, Eigen::Vector3d(0.1, 0, 0));
      c.pa.rotation = RandomRotation(random, 1.0);
      c.pb.position = c.pa.rotation * Eigen::Vector3d(0.3 * box_size.x() * u(*random),
                                                      0.3 * box_size.y() * u(*random),
                                                      0.5 * box_size.z() + 0.099);
      if (trial % 10 == 9) {
        std::swap(c.a, c.b);
        std::swap(c.pa, c.pb);
      }
  }
  return c;
}

std::vector<ContactPoint> Search(const Case& c, const ShapePose& pa, const ShapePose& pb,
                                 BoxPatch box_patch = BoxPatch::kFourPoints) {
  std::vector<ContactPoint> points;
  ExplicitContactGeometry(box_patch).FindContacts(c.a, pa, c.b, pb, 0.01, &points);
  return points;
}

bool SameFeatures(const std::vector<ContactPoint>& x, const std::vector<ContactPoint>& y) {
  if (x.size() != y.size()) return false;
  for (size_t k = 0; k < x.size(); ++k) {
    const FeatureId &f = x[k].feature, &g = y[k].feature;
    if (f.kind != g.kind || f.incident != g.incident || f.face_body != g.face_body ||
        f.line_body != g.line_body || f.sign != g.sign ||
        !std::equal(&f.signs[0][0], &f.signs[0][0] + 18, &g.signs[0][0])) {
      return false;
    }
  }
  return true;
}

// Counts the case's contacts in *total and those whose features describe them in *described,
// checking that each described one comes back from its features at the poses it was found at
// (within the clipping tolerance, 1e-9 of the size, where a box corner is kept as it is).
void CountDescribed(const Case& c, int trial, int* total, int* described,
                    BoxPatch box_patch = BoxPatch::kFourPoints) {
  for (const ContactPoint& p : Search(c, c.pa, c.pb, box_patch)) {
    ++*total;
    FeatureContact<double> e;
    if (!EvaluateContactFeature(p.feature.Expand(c.a, c.b), DoublePose(c.pa), DoublePose(c.pb),
                                &e)) {
      continue;
    }
    ++*described;
    INFO("trial " << trial << " kind " << static_cast<int>(p.feature.kind) << " incident "
                  << static_cast<int>(p.feature.incident));
    CHECK(std::abs(e.distance - p.distance) <= 1e-9);
    CHECK((e.normal - p.normal).norm() <= 1e-12);
    CHECK((e.point_a - p.point_a).norm() <= 1e-9);
    CHECK((e.point_b - p.point_b).norm() <= 1e-9);
  }
}

TEST_CASE("contact features: evaluated where they were found, every described contact comes back") {
  for (const BoxPatch patch : {BoxPatch::kFourPoints, BoxPatch::kEveryVertex}) {
    const bool every_vertex = patch == BoxPatch::kEveryVertex;
    CAPTURE(every_vertex);
    std::mt19937 random(11);
    int described = 0, total = 0;
    for (int trial = 0; trial < 400; ++trial) {
      const Case c = RandomCase(trial, &random);
      CountDescribed(c, trial, &total, &described, patch);
    }
    // Every contact of these pairs is described but the few a box-sphere edge region gives.
    CHECK(total > 550);
    CHECK(described >= total - total / 20);
  }
}

// Equal boxes stacked flush (a stack's boxes settled on each other), turned and moved by 1e-13 to
// 1e-8: the incident face's corners lie within the clipping tolerance of the reference face's
// sides, on either side of them. Every point is described, by the features that reproduce it.
TEST_CASE("contact features: flush equal boxes, every clipped point described") {
  for (const BoxPatch patch : {BoxPatch::kFourPoints, BoxPatch::kEveryVertex}) {
    const bool every_vertex = patch == BoxPatch::kEveryVertex;
    CAPTURE(every_vertex);
    std::mt19937 random(3);
    std::normal_distribution<double> normal;
    const Shape box = MakeFeatureShape(ShapeKind::Box, Eigen::Vector3d(0.1, 0.1, 0.1));
    int total = 0, described = 0;
    for (int trial = 0; trial < 20000; ++trial) {
      const double spread = std::pow(10.0, -8.0 - trial % 6);
      const auto small = [&] { return spread * normal(random); };
      const auto turn = [&] {
        return Eigen::Quaterniond(1.0, small(), small(), small()).normalized().toRotationMatrix();
      };
      Case c{box, box, {}, {}};
      c.pa.position = Eigen::Vector3d(0.3, small(), 0.05);
      c.pa.rotation = turn();
      c.pb.position = Eigen::Vector3d(0.3 + small(), small(), 0.15 + small());
      c.pb.rotation = turn();
      CountDescribed(c, trial, &total, &described, patch);
    }
    CHECK(total == 4 * 20000);
    CHECK(described == total);
  }
}

// Central differences of the narrow phase's contacts (10 numbers each) with respect to the 12
// pose coordinates; false if a perturbed search finds other features.
bool NumericJacobian(const Case& c, const std::vector<ContactPoint>& points,
                     Eigen::Matrix<double, Eigen::Dynamic, 12>* numeric) {
  const double eps = 1e-6;
  numeric->resize(10 * static_cast<Eigen::Index>(points.size()), 12);
  const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
  for (int col = 0; col < 12; ++col) {
    Eigen::Vector3d d = zero;
    d[col % 3] = eps;
    const bool turn = (col % 6) >= 3;
    const auto perturbed = [&](double s) {
      const Eigen::Vector3d step = s * d;
      const ShapePose pa = col < 6 ? Moved(c.pa, turn ? zero : step, turn ? step : zero) : c.pa;
      const ShapePose pb = col >= 6 ? Moved(c.pb, turn ? zero : step, turn ? step : zero) : c.pb;
      return Search(c, pa, pb);
    };
    const std::vector<ContactPoint> plus = perturbed(1.0), minus = perturbed(-1.0);
    if (!SameFeatures(plus, points) || !SameFeatures(minus, points)) return false;
    for (size_t k = 0; k < points.size(); ++k) {
      numeric->block<10, 1>(10 * k, col) = (Numbers(plus[k]) - Numbers(minus[k])) / (2 * eps);
    }
  }
  return true;
}

// The feature's 10 x 12 Jacobian on Jets, or false for an undescribed contact.
bool ExactJacobian(const Case& c, const ContactPoint& p, Eigen::Matrix<double, 10, 12>* exact) {
  FeatureContact<Jet> e;
  if (!EvaluateContactFeature(p.feature.Expand(c.a, c.b), JetPose(c.pa, 0), JetPose(c.pb, 1), &e)) {
    return false;
  }
  exact->row(0) = e.distance.v.transpose();
  for (int r = 0; r < 3; ++r) {
    exact->row(1 + r) = e.normal[r].v.transpose();
    exact->row(4 + r) = e.point_a[r].v.transpose();
    exact->row(7 + r) = e.point_b[r].v.transpose();
  }
  return true;
}

TEST_CASE("contact features: derivatives with respect to both poses against central differences") {
  std::mt19937 random(5);
  int compared = 0;
  std::map<std::pair<int, int>, int> by_kind;  // (kind, incident) -> contacts compared
  for (int trial = 0; trial < 300; ++trial) {
    const Case c = RandomCase(trial, &random);
    const std::vector<ContactPoint> points = Search(c, c.pa, c.pb);
    Eigen::Matrix<double, Eigen::Dynamic, 12> numeric;
    // Features that change within the difference are not this test's subject.
    if (!NumericJacobian(c, points, &numeric)) continue;
    for (size_t k = 0; k < points.size(); ++k) {
      const ContactPoint& p = points[k];
      Eigen::Matrix<double, 10, 12> exact;
      if (!ExactJacobian(c, p, &exact)) continue;
      INFO("trial " << trial << " contact " << k << " kind " << static_cast<int>(p.feature.kind));
      CHECK((exact - numeric.block<10, 12>(10 * k, 0)).cwiseAbs().maxCoeff() <= 1e-7);
      ++compared;
      ++by_kind[{static_cast<int>(p.feature.kind), static_cast<int>(p.feature.incident)}];
      // d distance = n . (velocity of B's point - velocity of A's point), both material points,
      // for a signed distance between the two shapes (a clipped point's depth is not one: it
      // slides along its edge).
      if (p.feature.incident == ContactFeature::Incident::kLinePlane) continue;
      Eigen::Matrix<double, 1, 12> normal_row;
      normal_row << -p.normal.transpose(), -(p.point_a - c.pa.position).cross(p.normal).transpose(),
          p.normal.transpose(), (p.point_b - c.pb.position).cross(p.normal).transpose();
      CHECK((exact.row(0) - normal_row).cwiseAbs().maxCoeff() <= 1e-9);
    }
  }
  CHECK(compared > 300);
  using K = ContactFeature::Kind;
  using I = ContactFeature::Incident;
  for (const std::pair<K, I>& entry :
       {std::pair(K::kFace, I::kPoint), std::pair(K::kFace, I::kLinePlane),
        std::pair(K::kFace, I::kSphere), std::pair(K::kSpheres, I::kPoint),
        std::pair(K::kEdges, I::kPoint)}) {
    const int kind = static_cast<int>(entry.first), incident = static_cast<int>(entry.second);
    INFO("kind " << kind << " incident " << incident);
    CHECK(by_kind[{kind, incident}] >= 5);
  }
}

// Separated boxes within the search threshold whose edge axis separates them best, with edges
// whose lines come closest beside one of them (about 1 in 100 such pairs of near-cubes): the
// contact is the point of the segments closest to each other, A's vertex or the foot of B's on
// A's line. Each one is evaluated back where it was found and differentiated against central
// differences; flipped, it is not described. Its distance is the separation of the edges' lines
// along their common normal (the separating axis's), which beside an end is not the distance of
// the point's two material points: the normal row of the contact Jacobian is not its derivative.
TEST_CASE("contact features: speculative edge contacts whose segments come closest at an end") {
  std::mt19937 random(17);
  std::uniform_real_distribution<double> side(0.08, 0.12);
  int ends[2] = {0, 0};  // compared contacts whose A's or B's edge ends at the point
  int found = 0;
  for (int trial = 0; trial < 20000 && (ends[0] < 10 || ends[1] < 10); ++trial) {
    Case c;
    c.a =
        MakeFeatureShape(ShapeKind::Box, Eigen::Vector3d(side(random), side(random), side(random)));
    c.b =
        MakeFeatureShape(ShapeKind::Box, Eigen::Vector3d(side(random), side(random), side(random)));
    SeparatedPair(&random, &c);
    const std::vector<ContactPoint> points = Search(c, c.pa, c.pb);
    Eigen::Matrix<double, Eigen::Dynamic, 12> numeric;
    bool differenced = false, have_numeric = false;
    for (size_t k = 0; k < points.size(); ++k) {
      const ContactPoint& p = points[k];
      const ContactFeature f = p.feature.Expand(c.a, c.b);
      const bool a_end = f.kind == ContactFeature::Kind::kEdges && f.point.dot(f.direction) != 0.0;
      const bool b_end =
          f.kind == ContactFeature::Kind::kEdges && f.plane_point.dot(f.plane_normal) != 0.0;
      if (!a_end && !b_end) continue;
      ++found;
      INFO("trial " << trial << " contact " << k << " A's end " << a_end << " B's end " << b_end);
      FeatureContact<double> e;
      REQUIRE(EvaluateContactFeature(f, DoublePose(c.pa), DoublePose(c.pb), &e));
      CHECK(std::abs(e.distance - p.distance) <= 1e-9);
      CHECK((e.normal - p.normal).norm() <= 1e-12);
      CHECK((e.point_a - p.point_a).norm() <= 1e-9);
      CHECK((e.point_b - p.point_b).norm() <= 1e-9);
      FeatureId flipped = p.feature;
      flipped.Flip();
      CHECK(flipped.kind == ContactFeature::Kind::kNone);
      if (!differenced) {
        differenced = true;
        have_numeric = NumericJacobian(c, points, &numeric);
      }
      if (!have_numeric) continue;  // the features change within the difference
      Eigen::Matrix<double, 10, 12> exact;
      REQUIRE(ExactJacobian(c, p, &exact));
      CHECK((exact - numeric.block<10, 12>(10 * k, 0)).cwiseAbs().maxCoeff() <= 1e-7);
      ++ends[a_end ? 0 : 1];
    }
  }
  MESSAGE("edge contacts at an end: " << found << " found, " << ends[0] << " at A's end and "
                                      << ends[1] << " at B's alone differentiated");
  CHECK(ends[0] >= 10);
  CHECK(ends[1] >= 10);
}

}  // namespace contact_feature_test
}  // namespace ncpkit
