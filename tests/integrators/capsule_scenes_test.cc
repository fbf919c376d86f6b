// Capsules in the steppers, against what mechanics says they must do: lying on the ground and on
// a box, at rest, the explicit stepper's two end contacts each carry half the weight and the
// implicit stepper's one equivalent contact point sits below the centre with all of it (Xie &
// Chakraborty 2016: a line contact's equivalent point); rolling down an incline on its side, the
// discrete motion of a solid of its axial inertia rolling without slipping; and piles a user
// would drop, of capsules of random sizes, masses and headings, over many seeds.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "integrators/explicit/workspace.h"
#include "integrators/implicit_stepper.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"

namespace ncpkit {
namespace capsule_scenes_test {

constexpr double kGravity = 9.81, kStep = 0.01;

// [w, x, y, z] of a turn by `yaw` about z, at full precision.
std::string Yaw(double yaw) {
  std::ostringstream out;
  out.precision(17);
  out << "[" << std::cos(0.5 * yaw) << ", 0, 0, " << std::sin(0.5 * yaw) << "]";
  return out.str();
}

// A capsule (r 0.1, l 0.6, 2 kg) lying on the ground, turned and off the origin, and a thinner
// one (r 0.05, l 0.4, 0.5 kg) lying on a turned box, both touching from the start. Solved to
// 1e-10 (the explicit stepper's default is 1e-8): the checks below hold the shares and the
// rest to 1e-8 and 1e-9.
std::string RestingScene(const std::string& stepper) {
  return R"({"stepper": ")" + stepper + R"(", "h": 0.01, "duration": 0.3, "tolerance": 1e-10,
    "gravity": [0, 0, -9.81], "contact": {"mu": 0.5},
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]},
              {"name": "slab", "shape": "box", "size": [1, 1, 0.2], "position": [3, 0, 0.1],
               "orientation": )" +
         Yaw(0.3) + R"(}],
    "bodies": [
      {"name": "lying", "shape": "capsule", "size": [0.1, 0.6], "mass": 2,
       "position": [0.02, -0.01, 0.1], "orientation": )" +
         Yaw(0.7) + R"(},
      {"name": "on-slab", "shape": "capsule", "size": [0.05, 0.4], "mass": 0.5,
       "position": [3.02, 0.01, 0.25], "orientation": )" +
         Yaw(0.02) + R"(}]})";
}

TEST_CASE("capsules at rest, explicit: a line contact's two ends carry half the weight each") {
  const Scene scene = ParseScene(RestingScene("explicit"), "resting.json");
  SceneRunner runner(scene);
  const std::vector<Body> start = runner.stepper().bodies();
  const ExplicitStepRecord* last = nullptr;
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    CHECK(record.summary.IsSolved());
    last = &dynamic_cast<const ExplicitStepRecord&>(record);
  }
  REQUIRE(last != nullptr);
  const std::vector<Body>& end = runner.stepper().bodies();
  for (int body = 0; body < static_cast<int>(end.size()); ++body) {
    if (end[body].fixed) continue;
    CAPTURE(end[body].name);
    const double share = 0.5 * end[body].mass.mass * kGravity * kStep;
    int count = 0;
    Eigen::Vector3d friction = Eigen::Vector3d::Zero();  // the tangential impulses' sum
    for (const ExplicitContact& c : last->contacts) {
      if (c.body_b != body && c.body_a != body) continue;
      ++count;
      CHECK(c.impulse[0] == doctest::Approx(share).epsilon(1e-8));
      // Along the line the two ends' friction may press against each other (W is singular
      // there: no motion tells them apart); the net friction is zero.
      friction += c.impulse[1] * c.tangent1 + c.impulse[2] * c.tangent2;
      // Below the segment's ends, 0.3 m (0.2 m) from the centre along the axis.
      const Eigen::Vector3d axis = end[body].state.orientation * Eigen::Vector3d::UnitX();
      const double along = (c.point.point_b - end[body].state.position).dot(axis);
      CHECK(std::abs(along) == doctest::Approx(0.5 * end[body].shape.size[1]).epsilon(1e-9));
    }
    CHECK(count == 2);
    CHECK(friction.norm() <= 1e-9 * share);
    CHECK((end[body].state.position - start[body].state.position).norm() <= 1e-9);
    CHECK(end[body].state.linear_velocity.norm() <= 1e-9);
    CHECK(end[body].state.angular_velocity.norm() <= 1e-9);
  }
}

TEST_CASE("capsules at rest, implicit: one equivalent contact point below the centre") {
  const Scene scene = ParseScene(RestingScene("implicit"), "resting.json");
  SceneRunner runner(scene);
  const std::vector<Body> start = runner.stepper().bodies();
  const ImplicitStepRecord* last = nullptr;
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    CHECK(record.summary.IsSolved());
    CHECK(record.max_penetration <= 1e-8);
    last = &dynamic_cast<const ImplicitStepRecord&>(record);
  }
  REQUIRE(last != nullptr);
  REQUIRE(last->contacts.size() == 2);
  const std::vector<Body>& end = runner.stepper().bodies();
  for (const ContactRecord& c : last->contacts) {
    const Body& body = end[c.body_f];
    CAPTURE(body.name);
    CHECK(c.p_n == doctest::Approx(body.mass.mass * kGravity * kStep).epsilon(1e-8));
    CHECK(std::abs(c.p_t) + std::abs(c.p_o) <= 1e-9);
    CHECK(c.n_active_f == 1);  // the capsule's one inequality: a line, not a point of a cap
    // The middle of the line of contact: straight below the centre, on the surface.
    const Eigen::Vector3d below = c.ecp - body.state.position;
    CHECK(below.head<2>().norm() <= 1e-8);
    CHECK(below.z() == doctest::Approx(-body.shape.size[0]).epsilon(1e-8));
    CHECK((body.state.position - start[c.body_f].state.position).norm() <= 1e-8);
  }
}

// On its side, across the slope of an incline (the ground, gravity turned by theta about y),
// rolling without slipping: a = g sin(theta) / (1 + I / (m r^2)) with I the axial inertia, and
// the steppers' update v+ = v + h a, x+ = x + h v+ gives x_N = a h^2 N (N + 1) / 2.
void CheckRolling(const std::string& stepper, double tolerance) {
  const double theta = 0.2, r = 0.1, l = 0.6, m = 2.0;
  std::ostringstream scene;
  scene.precision(17);
  scene << R"({"stepper": ")" << stepper << R"(", "h": 0.01, "duration": 1.0, "tolerance": 1e-12,
    "gravity": [)"
        << kGravity * std::sin(theta) << ", 0, " << -kGravity * std::cos(theta)
        << R"(], "contact": {"mu": 0.9},
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1]}],
    "bodies": [{"name": "log", "shape": "capsule", "size": [0.1, 0.6], "mass": 2,
                "position": [0, 0, 0.1], "orientation": )"
        << Yaw(M_PI / 2) << "}]}";
  const Scene incline = ParseScene(scene.str(), "incline.json");
  SceneRunner runner(incline);
  const double cylinder = M_PI * r * r * l, balls = 4.0 / 3.0 * M_PI * r * r * r;
  const double m_cylinder = m * cylinder / (cylinder + balls);
  const double axial = m_cylinder * r * r / 2.0 + (m - m_cylinder) * 2.0 * r * r / 5.0;
  const double a = kGravity * std::sin(theta) / (1.0 + axial / (m * r * r));
  int n = 0;
  double worst = 0.0, slip = 0.0;
  while (!runner.Done()) {
    CHECK(runner.Step().summary.IsSolved());
    ++n;
    const RigidBodyState& s = runner.stepper().bodies()[0].state;  // the file lists it first
    worst = std::max(worst, std::abs(s.position.x() - a * kStep * kStep * n * (n + 1) / 2.0));
    slip = std::max(slip, std::abs(s.linear_velocity.x() - s.angular_velocity.y() * r));
    CHECK(s.position.z() == doctest::Approx(r).epsilon(1e-9));
  }
  INFO(stepper << ": largest distance from the rolling solution " << worst << " m, slip " << slip
               << " m/s over " << n << " steps");
  CHECK(n == 100);
  CHECK(worst <= tolerance);
  CHECK(slip <= tolerance);
}

TEST_CASE("a capsule rolls down an incline on its side as a solid of its axial inertia") {
  CheckRolling("explicit", 1e-9);
  CheckRolling("implicit", 1e-9);
}

// A pile a user would drop: `count` capsules of radius 0.04-0.1 m, segment 0.2-0.6 m and mass
// 0.3-3 kg in layers that cross, each turned by a random heading and offset, dropped from up to
// 1 cm above the one below.
std::string RandomPile(unsigned seed, int count, const std::string& stepper) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  std::ostringstream out;
  out.precision(17);
  out << R"({"stepper": ")" << stepper << R"(", "h": 0.01, "duration": 0.6,
    "contact": {"mu": 0.5}, "fixed": [{"name": "ground", "shape": "plane"}], "bodies": [)";
  double top = 0.0;
  for (int i = 0; i < count; ++i) {
    const double r = uniform(0.04, 0.1), l = uniform(0.2, 0.6);
    const double yaw = (i % 2) * M_PI / 2 + uniform(-0.4, 0.4);
    const double z = top + uniform(0.0, 0.01) + r;
    top = z + r;
    out << (i > 0 ? ", " : "") << R"({"name": "c)" << i << R"(", "shape": "capsule", "size": [)"
        << r << ", " << l << R"(], "mass": )" << uniform(0.3, 3.0) << R"(, "position": [)"
        << uniform(-0.05, 0.05) << ", " << uniform(-0.05, 0.05) << ", " << z
        << R"(], "orientation": )" << Yaw(yaw) << "}";
  }
  out << "]}";
  return out.str();
}

// Capsules rolling over each other as the piles tumble: the explicit stepper's contacts are
// posed at the start of the step, and a contact point that moves round a rolling capsule within
// the step leaves it inside the other by up to millimetres (expected failure of the 1e-6 m of
// resting and rolling capsules above, as for boxes tumbling onto each other and a rocking
// ellipsoid: docs/steppers.md). The implicit stepper places its contact point at the end of the
// step and keeps every overlap below 1e-8 m, but on seed 3 one step (45, as the third capsule
// lifts off the second) stalls at natural residual 3.5e-9 in every solver of its chain
// (expected failure).
TEST_CASE("random piles of capsules: every step solved by each stepper's default solver") {
  double explicit_deepest = 0.0;
  for (unsigned seed = 0; seed < 12; ++seed) {
    for (const std::string stepper : {"explicit", "implicit"}) {
      const Scene scene = ParseScene(RandomPile(seed, 2 + seed % 4, stepper), "pile.json");
      SceneRunner runner(scene);
      double deepest = 0.0;
      int failed = 0;
      std::string first_failure;
      while (!runner.Done()) {
        const StepRecord& record = runner.Step();
        deepest = std::max(deepest, record.max_penetration);
        if (!record.summary.IsSolved() && failed++ == 0) first_failure = record.summary.message;
      }
      INFO("seed " << seed << ", " << stepper << ": " << failed << " failed steps, deepest overlap "
                   << deepest << " m; " << first_failure);
      if (stepper == "explicit") {
        CHECK(failed == 0);
        explicit_deepest = std::max(explicit_deepest, deepest);
        CHECK(deepest < 5e-3);
      } else if (seed == 3) {
        std::cout << "expected failure: implicit stepper (auto) on a pile of capsules (seed 3): "
                  << failed << " of 60 steps not solved to 1e-10 (" << first_failure << ")\n";
        CHECK(failed <= 1);
        CHECK(deepest <= 1e-8);
      } else {
        CHECK(failed == 0);
        CHECK(deepest <= 1e-8);
      }
    }
  }
  std::cout << "expected failure: explicit stepper (cone/auto) on piles of capsules: up to "
            << explicit_deepest << " m deep (contacts posed at the start of the step)\n";
  CHECK(explicit_deepest > 1e-6);
}

}  // namespace capsule_scenes_test
}  // namespace ncpkit
