// A shape added from outside the library, by the steps docs/architecture.md gives for one
// ("Adding a shape"): one ShapeType row (its scene-file size, support function, bounds, mass
// properties, candidate contact points and viewer mesh) and one RegisterShape call. Nothing else
// is touched; scene files ("shape": "test-cone"), the broad phase, explicit contact against
// every kind (GJK/EPA, and the candidates against planes), the explicit and quasistatic steppers
// and the viewer take it from then on; the implicit stepper refuses it by name.
//
// The shape: a solid cone of base radius r and height H along the body x axis, its centroid at
// the origin (the base's plane at x = -H/4, the apex at x = 3H/4).
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "contact/distance.h"
#include "dynamics/shape_registry.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace test_only_shape {

using Eigen::Vector3d;

// size = [r, H].
Vector3d Apex(const Vector3d& size) { return Vector3d(0.75 * size[1], 0.0, 0.0); }
Vector3d BaseCentre(const Vector3d& size) { return Vector3d(-0.25 * size[1], 0.0, 0.0); }

// The base's rim point furthest along d; the base's centre where d is along the axis.
Vector3d RimPoint(const Vector3d& size, const Vector3d& d, double flat) {
  const double radial = d.tail<2>().norm();
  Vector3d x = BaseCentre(size);
  if (radial > flat * d.norm()) x.tail<2>() = size[0] * d.tail<2>() / radial;
  return x;
}

// The apex or the rim point, whichever is further along d; the middle of the side line where
// they tie (within `flat`).
Vector3d ConeSupportOf(const Vector3d& size, const Vector3d& d, double flat) {
  const Vector3d apex = Apex(size), rim = RimPoint(size, d, flat);
  const double gain = d.dot(apex) - d.dot(rim);
  if (std::abs(gain) <= flat * d.norm() * size[1]) return 0.5 * (apex + rim);
  return gain > 0.0 ? apex : rim;
}

Vector3d ConeSupport(const Shape& shape, const Vector3d& d, double flat) {
  return ConeSupportOf(shape.size, d, flat);
}

double ConeRadius(const Shape& shape) {
  return std::max(0.75 * shape.size[1], std::hypot(0.25 * shape.size[1], shape.size[0]));
}

// Along each world axis, the support function both ways.
Vector3d ConeHalfExtents(const Shape& shape, const Eigen::Matrix3d& R) {
  Vector3d e;
  for (int k = 0; k < 3; ++k) {
    const Vector3d d = R.row(k).transpose();
    e[k] = std::max(d.dot(ConeSupportOf(shape.size, d, 0.0)),
                    -d.dot(ConeSupportOf(shape.size, -d, 0.0)));
  }
  return e;
}

// About the centroid: 3/10 m r^2 about the axis, m (3/20 r^2 + 3/80 H^2) across it.
MassProperties ConeMass(const Shape& shape, double mass) {
  const double r = shape.size[0], H = shape.size[1];
  MassProperties properties;
  properties.mass = mass;
  const double across = mass * (3.0 / 20.0 * r * r + 3.0 / 80.0 * H * H);
  properties.body_inertia = Vector3d(0.3 * mass * r * r, across, across).asDiagonal();
  return properties;
}

// The apex and the rim point furthest along d; where the base faces d, the apex and the whole
// rim (every 22.5 degrees; not the base's centre, which would lie inside the face's polygon): a
// cone standing on its base touches along the rim.
int ConeCandidates(const Shape& shape, const Vector3d& d, double flat, Vector3d* points) {
  const Vector3d& size = shape.size;
  points[0] = Apex(size);
  if (!(-d[0] >= d.norm() - flat)) {
    points[1] = RimPoint(size, d, flat);
    return 2;
  }
  for (int k = 0; k < 16; ++k) {
    const double angle = M_PI / 8.0 * k;
    points[1 + k] = BaseCentre(size) + size[0] * Vector3d(0.0, std::cos(angle), std::sin(angle));
  }
  return 17;
}

// The side as a fan about the apex and the base as a fan about its centre, 32 sectors.
ShapeMesh ConeMesh(const Shape& shape) {
  const Vector3d& size = shape.size;
  constexpr int kAround = 32;
  ShapeMesh mesh;
  mesh.vertices.push_back(Apex(size));
  mesh.vertices.push_back(BaseCentre(size));
  for (int j = 0; j < kAround; ++j) {
    const double angle = 2.0 * M_PI * j / kAround;
    mesh.vertices.push_back(BaseCentre(size) +
                            size[0] * Vector3d(0.0, std::cos(angle), std::sin(angle)));
  }
  for (int j = 0; j < kAround; ++j) {
    const int a = 2 + j, b = 2 + (j + 1) % kAround;
    mesh.triangles.push_back({0, a, b});
    mesh.triangles.push_back({1, b, a});
  }
  return mesh;
}

ShapeType ConeType() {
  ShapeType type;
  type.name = "test-cone";
  type.size_count = 2;
  type.size_meaning = "[radius, height]";
  type.support = &ConeSupport;
  type.bounding_radius = &ConeRadius;
  type.bounding_half_extents = &ConeHalfExtents;
  type.solid_mass = &ConeMass;
  type.candidates = &ConeCandidates;
  type.has_faces = true;
  type.face_normals = {Vector3d::UnitX()};
  type.mesh = &ConeMesh;
  return type;
}

// Registers the cone for one test case.
struct ShapeRegistration {
  ShapeKind kind;
  ShapeRegistration() : kind(RegisterShape(ConeType())) {}
  ~ShapeRegistration() { UnregisterShape("test-cone"); }
};

// A point's distance from the cone, in the half-plane (x, rho) of the axis: from the triangle of
// the base's centre, a rim point and the apex (0 inside).
double DistanceFromCone(const Vector3d& size, const Vector3d& point) {
  const Eigen::Vector2d p(point.x(), point.tail<2>().norm());
  const Eigen::Vector2d base(-0.25 * size[1], 0.0), rim(-0.25 * size[1], size[0]),
      apex(0.75 * size[1], 0.0);
  const double along = (apex - rim).x() * (p - rim).y() - (apex - rim).y() * (p - rim).x();
  if (p.x() >= base.x() && along <= 0.0) return 0.0;  // inside (rho >= 0 always)
  const auto to_segment = [&](const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
    const double t = std::clamp((p - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
    return (a + t * (b - a) - p).norm();
  };
  return std::min(to_segment(base, rim), to_segment(rim, apex));
}

const char* const kConeScene = R"({
  "stepper": "explicit", "h": 0.01, "duration": 1.0, "model": "cone", "solver": "auto",
  "contact": {"mu": 0.5},
  "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]},
            {"name": "slab", "shape": "box", "size": [1, 1, 0.2], "position": [3, 0, 0.1]}],
  "bodies": [
    {"name": "standing", "shape": "test-cone", "size": [0.2, 0.8], "mass": 1,
     "position": [0, 0, 0.205], "orientation": [0.7071067811865476, 0, -0.7071067811865476, 0]},
    {"name": "on-slab", "shape": "test-cone", "size": [0.1, 0.4], "mass": 0.5,
     "position": [3.02, 0.01, 0.301], "orientation": [0.7071067811865476, 0, -0.7071067811865476, 0]},
    {"name": "ball", "shape": "sphere", "size": [0.1], "mass": 1, "position": [-1, 0, 0.5]}
  ]
})";

TEST_CASE("a registered shape has a row, a kind and a name; registration refuses bad rows") {
  CHECK(FindShapeType("test-cone") == nullptr);
  {
    ShapeRegistration registration;
    const ShapeType* type = FindShapeType(registration.kind);
    REQUIRE(type != nullptr);
    CHECK(type->name == "test-cone");
    CHECK(FindShapeType("test-cone") == type);
    const std::vector<std::string> names = ShapeNames();
    CHECK(std::find(names.begin(), names.end(), "test-cone") != names.end());
    Shape shape;
    shape.kind = registration.kind;
    shape.size = Vector3d(0.2, 0.8, 0.0);
    CHECK(shape.Name() == "test-cone");
    CHECK(shape.IsValid(nullptr));
    CHECK(shape.NumInequalities() == 0);
    CHECK(shape.BoundingRadius() == doctest::Approx(0.6));
    CHECK((shape.SupportPoint(Vector3d(1, 0, 0.1)) - Vector3d(0.6, 0, 0)).norm() < 1e-12);
    CHECK((shape.SupportPoint(Vector3d(-1, 0, 1)) - Vector3d(-0.2, 0, 0.2)).norm() < 1e-12);
    CHECK_THROWS_AS(RegisterShape(ConeType()), InputError);  // taken
  }
  CHECK(FindShapeType("test-cone") == nullptr);
  ShapeType bad = ConeType();
  for (const char* name : {"box", "", "Cone", "a b", "-lead"}) {
    bad.name = name;
    CHECK_THROWS_AS(RegisterShape(bad), InputError);
  }
  bad.name = "test-nothing";
  bad.support = nullptr;
  CHECK_THROWS_WITH_AS(RegisterShape(bad), doctest::Contains("support function"), InputError);
  CHECK_FALSE(UnregisterShape("box"));  // the library's kinds stay
}

TEST_CASE(
    "a registered shape's contacts: spheres at the cone's distance, its side line on a plane") {
  ShapeRegistration registration;
  const ExplicitContactGeometry geometry;
  Shape cone, sphere, plane;
  cone.kind = registration.kind;
  cone.size = Vector3d(0.2, 0.8, 0.0);
  sphere.kind = ShapeKind::Sphere;
  sphere.size = Vector3d::Constant(0.15);
  plane.kind = ShapeKind::HalfSpace;
  CHECK(geometry.Supports(registration.kind, ShapeKind::Box));
  CHECK(geometry.Supports(ShapeKind::HalfSpace, registration.kind));
  std::mt19937 random(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int touching = 0;
  for (int trial = 0; trial < 400; ++trial) {
    ShapePose pc, ps;
    pc.rotation = Eigen::Quaterniond(u(random), u(random), u(random), u(random))
                      .normalized()
                      .toRotationMatrix();
    pc.position = 0.2 * Vector3d(u(random), u(random), u(random));
    ps.position = 0.6 * Vector3d(u(random), u(random), u(random));
    const Vector3d local = pc.rotation.transpose() * (ps.position - pc.position);
    const double from_cone = DistanceFromCone(cone.size, local);
    if (from_cone == 0.0) continue;  // the centre inside the cone
    const double exact = from_cone - 0.15;
    std::vector<ContactPoint> points;
    geometry.FindContacts(cone, pc, sphere, ps, 0.05, &points);
    CAPTURE(trial);
    CAPTURE(exact);
    if (exact >= 0.05 + 1e-9) {
      CHECK(points.empty());
      continue;
    }
    if (exact > 0.05 - 1e-9) continue;  // at the threshold: either answer
    // The nearest point first; the cone's other candidates within the band (its apex, its rim)
    // by their own distances, none nearer than the shapes'.
    REQUIRE_FALSE(points.empty());
    CHECK(points[0].distance == doctest::Approx(exact).epsilon(1e-8).scale(1.0));
    for (const ContactPoint& p : points) CHECK(p.distance >= exact - 1e-8);
    touching += 1;
  }
  CHECK(touching > 50);
  // Lying on its side, turned about the vertical: the apex and the rim's lowest point, at the gap.
  const double tilt = std::atan2(0.2, 0.8);  // the side line's angle to the axis
  ShapePose lying, ground;
  lying.rotation =
      (Eigen::AngleAxisd(0.7, Vector3d::UnitZ()) * Eigen::AngleAxisd(tilt, Vector3d::UnitY()))
          .toRotationMatrix();
  const Vector3d rim = lying.rotation * Vector3d(-0.2, 0.0, -0.2);
  lying.position = Vector3d(0.0, 0.0, 1e-3 - rim.z());
  std::vector<ContactPoint> points;
  geometry.FindContacts(plane, ground, cone, lying, 0.01, &points);
  REQUIRE(points.size() == 2);
  for (const ContactPoint& p : points) CHECK(p.distance == doctest::Approx(1e-3).epsilon(1e-9));
}

TEST_CASE("a registered shape loads from scene files and stands on planes and boxes") {
  ShapeRegistration registration;
  Scene scene = ParseScene(kConeScene, "cones.json");
  REQUIRE(scene.bodies.size() == 5);
  double deepest = 0.0;
  std::vector<Body> end;
  const SimulationStats stats =
      RunScene(scene, "cone/auto", [&](const StepRecord& record, const SceneRunner& runner) {
        deepest = std::max(deepest, record.max_penetration);
        if (runner.Done()) end = runner.stepper().bodies();
      });
  CHECK(stats.failed_steps == 0);
  CHECK(deepest <= 1e-6);
  REQUIRE(end.size() == 5);
  const auto find = [&](const std::string& name) {
    return *std::find_if(end.begin(), end.end(), [&](const Body& b) { return b.name == name; });
  };
  // Standing on their bases, apex up: the centroid a quarter of the height above the base.
  CHECK(find("standing").state.position.z() == doctest::Approx(0.2).epsilon(1e-5));
  CHECK(find("standing").state.linear_velocity.norm() <= 1e-6);
  CHECK(find("on-slab").state.position.z() == doctest::Approx(0.3).epsilon(1e-5));
  CHECK(find("on-slab").state.linear_velocity.norm() <= 1e-6);
  // The scene file checks its size like a built-in kind's, and the implicit stepper refuses it.
  std::string wrong = kConeScene;
  wrong.replace(wrong.find("[0.2, 0.8]"), 10, "[0.2]");
  CHECK_THROWS_WITH_AS(ParseScene(wrong, "cones.json"), doctest::Contains("takes [radius, height]"),
                       InputError);
  Scene implicit = ParseScene(kConeScene, "cones.json");
  implicit.SetStepper("implicit");
  CHECK_THROWS_WITH_AS(MakeStepper(implicit), doctest::Contains("no inequality form"), InputError);
}

TEST_CASE("a registered shape in the quasistatic stepper: a cone settles on its base") {
  ShapeRegistration registration;
  Scene scene = ParseScene(R"({
    "stepper": "quasistatic", "model": "qp-lcp", "solver": "lemke", "h": 0.01, "duration": 0.5,
    "contact_threshold": 0.01, "contact": {"mu": 0.5},
    "bodies": [
      {"name": "ground", "shape": "plane"},
      {"name": "cone", "shape": "test-cone", "size": [0.2, 0.8], "mass": 1,
       "position": [0, 0, 0.205], "orientation": [0.7071067811865476, 0, -0.7071067811865476, 0]}
    ]
  })",
                           "cone_quasistatic.json");
  std::vector<Body> end;
  const SimulationStats stats =
      RunScene(scene, "qp-lcp/lemke", [&](const StepRecord&, const SceneRunner& runner) {
        if (runner.Done()) end = runner.stepper().bodies();
      });
  CHECK(stats.failed_steps == 0);
  REQUIRE(end.size() == 2);
  const RigidBodyState& state = end[1].state;
  // Down onto its base, upright.
  CHECK(state.position.z() == doctest::Approx(0.2).epsilon(1e-4));
  const Vector3d axis = state.orientation * Vector3d::UnitX();
  CHECK(axis.z() == doctest::Approx(1.0).epsilon(1e-9));
}

}  // namespace test_only_shape
}  // namespace ncpkit
