// A shape added from outside the library, by the steps docs/architecture.md gives for one
// ("Adding a shape"): one ShapeType row (its scene-file size, support function, bounds, mass
// properties, candidate contact points and viewer mesh) and one RegisterShape call. Nothing else
// is touched; scene files ("shape": "test-capsule"), the broad phase, explicit contact against
// every kind (GJK/EPA, and the candidates against planes), the explicit and quasistatic steppers
// and the viewer take it from then on; the implicit stepper refuses it by name.
//
// The shape: a capsule, the points within r of a segment of length l along the body x axis.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "contact/distance.h"
#include "dynamics/shape_registry.h"
#include "dynamics/shapes/ellipsoid.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

using Eigen::Vector3d;

// size = [r, l].
Vector3d CapsuleSupport(const Vector3d& size, const Vector3d& d, double flat) {
  const double length = d.norm();
  if (!(length > 0.0)) return Vector3d::Zero();
  const double along = std::abs(d[0]) <= flat * length ? 0.0 : (d[0] > 0.0 ? 1.0 : -1.0);
  return Vector3d(0.5 * size[1] * along, 0.0, 0.0) + size[0] * d / length;
}

double CapsuleRadius(const Vector3d& size) { return size[0] + 0.5 * size[1]; }

Vector3d CapsuleHalfExtents(const Vector3d& size, const Eigen::Matrix3d& R) {
  return (0.5 * size[1]) * R.col(0).cwiseAbs() + Vector3d::Constant(size[0]);
}

// A cylinder of length l and two hemispheres of radius r at its ends, one density.
MassProperties CapsuleMass(const Vector3d& size, double mass) {
  const double r = size[0], l = size[1];
  const double cylinder = M_PI * r * r * l, ball = 4.0 / 3.0 * M_PI * r * r * r;
  const double mc = mass * cylinder / (cylinder + ball), ms = mass - mc;
  MassProperties properties;
  properties.mass = mass;
  const double axial = mc * r * r / 2.0 + ms * 2.0 * r * r / 5.0;
  const double across = mc * (r * r / 4.0 + l * l / 12.0) +
                        ms * (2.0 * r * r / 5.0 + l * l / 4.0 + 3.0 * l * r / 8.0);
  properties.body_inertia = Vector3d(axial, across, across).asDiagonal();
  return properties;
}

// The support points of the two end balls: a capsule lying on a face touches it at both.
int CapsuleCandidates(const Vector3d& size, const Vector3d& d, double /*flat*/, Vector3d* points) {
  const Vector3d unit = d.normalized();
  points[0] = Vector3d(-0.5 * size[1], 0.0, 0.0) + size[0] * unit;
  points[1] = Vector3d(0.5 * size[1], 0.0, 0.0) + size[0] * unit;
  return 2;
}

// The library's sphere mesh of radius r, its halves moved apart along x to the segment's ends.
ShapeMesh CapsuleMesh(const Vector3d& size) {
  ShapeMesh mesh = EllipsoidMesh(Vector3d::Constant(size[0]));
  for (Vector3d& v : mesh.vertices) v.x() += (v.x() >= 0.0 ? 0.5 : -0.5) * size[1];
  return mesh;
}

ShapeType CapsuleType() {
  ShapeType type;
  type.name = "test-capsule";
  type.size_count = 2;
  type.size_meaning = "[radius, length]";
  type.support = &CapsuleSupport;
  type.bounding_radius = &CapsuleRadius;
  type.bounding_half_extents = &CapsuleHalfExtents;
  type.solid_mass = &CapsuleMass;
  type.candidates = &CapsuleCandidates;
  type.mesh = &CapsuleMesh;
  return type;
}

// Registers the capsule for one test case.
struct ShapeRegistration {
  ShapeKind kind;
  ShapeRegistration() : kind(RegisterShape(CapsuleType())) {}
  ~ShapeRegistration() { UnregisterShape("test-capsule"); }
};

const char* const kCapsuleDrop = R"({
  "stepper": "explicit", "h": 0.01, "duration": 1.5, "model": "cone", "solver": "auto",
  "contact": {"mu": 0.5},
  "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]},
            {"name": "slab", "shape": "box", "size": [1, 1, 0.2], "position": [3, 0, 0.1]}],
  "bodies": [
    {"name": "lying", "shape": "test-capsule", "size": [0.1, 0.6], "mass": 1,
     "position": [0, 0, 0.3]},
    {"name": "on-slab", "shape": "test-capsule", "size": [0.05, 0.4], "mass": 0.5,
     "position": [3.02, 0.01, 0.4], "orientation": [0.9998, 0, 0, 0.02]},
    {"name": "ball", "shape": "sphere", "size": [0.1], "mass": 1, "position": [-1, 0, 0.5]}
  ]
})";

TEST_CASE("a registered shape has a row, a kind and a name; registration refuses bad rows") {
  CHECK(FindShapeType("test-capsule") == nullptr);
  {
    ShapeRegistration registration;
    const ShapeType* type = FindShapeType(registration.kind);
    REQUIRE(type != nullptr);
    CHECK(type->name == "test-capsule");
    CHECK(FindShapeType("test-capsule") == type);
    const std::vector<std::string> names = ShapeNames();
    CHECK(std::find(names.begin(), names.end(), "test-capsule") != names.end());
    Shape shape;
    shape.kind = registration.kind;
    shape.size = Vector3d(0.1, 0.6, 0.0);
    CHECK(shape.Name() == "test-capsule");
    CHECK(shape.IsValid(nullptr));
    CHECK(shape.NumInequalities() == 0);
    CHECK(shape.BoundingRadius() == doctest::Approx(0.4));
    // The segment's end (0.3, 0, 0) plus r along the unit direction.
    const Vector3d expected = Vector3d(0.3, 0, 0) + 0.1 * Vector3d(1, 0, 1).normalized();
    CHECK((shape.SupportPoint(Vector3d(1, 0, 1)) - expected).norm() < 1e-12);
    CHECK_THROWS_AS(RegisterShape(CapsuleType()), InputError);  // taken
  }
  CHECK(FindShapeType("test-capsule") == nullptr);
  ShapeType bad = CapsuleType();
  for (const char* name : {"box", "", "Capsule", "a b", "-lead"}) {
    bad.name = name;
    CHECK_THROWS_AS(RegisterShape(bad), InputError);
  }
  bad.name = "test-nothing";
  bad.support = nullptr;
  CHECK_THROWS_WITH_AS(RegisterShape(bad), doctest::Contains("support function"), InputError);
  CHECK_FALSE(UnregisterShape("box"));  // the library's kinds stay
}

TEST_CASE("a registered shape's contacts: the closed form against spheres, both ends on a plane") {
  ShapeRegistration registration;
  const ExplicitContactGeometry geometry;
  Shape capsule, sphere, plane;
  capsule.kind = registration.kind;
  capsule.size = Vector3d(0.1, 0.6, 0.0);
  sphere.kind = ShapeKind::Sphere;
  sphere.size = Vector3d::Constant(0.15);
  plane.kind = ShapeKind::HalfSpace;
  CHECK(geometry.Supports(registration.kind, ShapeKind::Box));
  CHECK(geometry.Supports(ShapeKind::HalfSpace, registration.kind));
  std::mt19937 random(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int touching = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ShapePose pc, ps;
    pc.rotation = Eigen::Quaterniond(u(random), u(random), u(random), u(random))
                      .normalized()
                      .toRotationMatrix();
    pc.position = 0.2 * Vector3d(u(random), u(random), u(random));
    ps.position = 0.5 * Vector3d(u(random), u(random), u(random));
    // Distance of the sphere's centre to the capsule's segment, minus both radii.
    const Vector3d axis = pc.rotation.col(0);
    const double t = std::clamp((ps.position - pc.position).dot(axis), -0.3, 0.3);
    const double exact = (ps.position - pc.position - t * axis).norm() - 0.1 - 0.15;
    std::vector<ContactPoint> points;
    geometry.FindContacts(capsule, pc, sphere, ps, 0.05, &points);
    CAPTURE(trial);
    CAPTURE(exact);
    if (exact >= 0.05 + 1e-9) {
      CHECK(points.empty());
      continue;
    }
    if (exact > 0.05 - 1e-9) continue;  // at the threshold: either answer
    REQUIRE(points.size() == 1);
    CHECK(points[0].distance == doctest::Approx(exact).epsilon(1e-9).scale(1.0));
    touching += 1;
  }
  CHECK(touching > 50);
  // Lying on a plane, turned about the vertical: both ends' points, at the gap.
  ShapePose flat, ground;
  flat.rotation = Eigen::AngleAxisd(0.7, Vector3d::UnitZ()).toRotationMatrix();
  flat.position = Vector3d(0.0, 0.0, 0.1 + 1e-3);
  std::vector<ContactPoint> points;
  geometry.FindContacts(plane, ground, capsule, flat, 0.01, &points);
  REQUIRE(points.size() == 2);
  for (const ContactPoint& p : points) CHECK(p.distance == doctest::Approx(1e-3).epsilon(1e-9));
}

TEST_CASE("a registered shape loads from scene files and rests on planes and boxes") {
  ShapeRegistration registration;
  Scene scene = ParseScene(kCapsuleDrop, "capsules.json");
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
  // At rest on their sides: the lying one at its radius, the other on the slab's top (0.2 m).
  CHECK(find("lying").state.position.z() == doctest::Approx(0.1).epsilon(1e-5));
  CHECK(find("lying").state.linear_velocity.norm() <= 1e-6);
  CHECK(find("on-slab").state.position.z() == doctest::Approx(0.25).epsilon(1e-5));
  CHECK(find("on-slab").state.linear_velocity.norm() <= 1e-6);
  // The scene file checks its size like a built-in kind's, and the implicit stepper refuses it.
  std::string wrong = kCapsuleDrop;
  wrong.replace(wrong.find("[0.1, 0.6]"), 10, "[0.1]");
  CHECK_THROWS_WITH_AS(ParseScene(wrong, "capsules.json"),
                       doctest::Contains("takes [radius, length]"), InputError);
  Scene implicit = ParseScene(kCapsuleDrop, "capsules.json");
  implicit.SetStepper("implicit");
  CHECK_THROWS_WITH_AS(MakeStepper(implicit), doctest::Contains("no inequality form"), InputError);
}

TEST_CASE("a registered shape in the quasistatic stepper: a capsule settles on the ground") {
  ShapeRegistration registration;
  Scene scene = ParseScene(R"({
    "stepper": "quasistatic", "model": "qp-lcp", "solver": "lemke", "h": 0.01, "duration": 0.5,
    "contact_threshold": 0.01, "contact": {"mu": 0.5},
    "bodies": [
      {"name": "ground", "shape": "plane"},
      {"name": "capsule", "shape": "test-capsule", "size": [0.1, 0.6], "mass": 1,
       "position": [0, 0, 0.105], "orientation": [0.9950042, 0, 0, 0.0998334]}
    ]
  })",
                           "capsule_quasistatic.json");
  std::vector<Body> end;
  const SimulationStats stats =
      RunScene(scene, "qp-lcp/lemke", [&](const StepRecord&, const SceneRunner& runner) {
        if (runner.Done()) end = runner.stepper().bodies();
      });
  CHECK(stats.failed_steps == 0);
  REQUIRE(end.size() == 2);
  const RigidBodyState& state = end[1].state;
  // Down onto both end balls, level, its heading kept.
  CHECK(state.position.z() == doctest::Approx(0.1).epsilon(1e-4));
  const Vector3d axis = state.orientation * Vector3d::UnitX();
  CHECK(std::abs(axis.z()) <= 1e-6);
  CHECK(std::atan2(axis.y(), axis.x()) == doctest::Approx(0.2).epsilon(1e-6));
}

}  // namespace
}  // namespace ncpkit
