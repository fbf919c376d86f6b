#include "integrators/scene.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "integrators/scene_runner.h"
#include "readers/text_scanner.h"

namespace ncpkit {
namespace {

const char* const kGood = R"({
  "name": "probe", "h": 0.01, "duration": 0.1,
  "bodies": [{"name": "ball", "shape": "sphere", "size": [0.5], "mass": 2.0,
              "position": [0, 0, 0.5], "velocity": [1, 0, 0]}],
  "fixed": [{"name": "floor", "shape": "plane", "normal": [0, 0, 2]},
            {"name": "post", "shape": "box", "size": [0.2, 0.2, 1], "position": [3, 0, 0.5]}],
  "contact": {"mu": 0.3},
  "pairs": [{"bodies": ["ball", "post"], "mu": 0.9, "torsion": false}],
  "impulses": [{"body": "ball", "at": 0.05, "impulse": [0, 1, 0, 0, 0, 0]},
               {"body": "ball", "when": {"body": "ball", "quantity": "vx", "value": 0.5},
                "impulse": [1, 0, 0, 0, 0, 0], "repeat": true}]
})";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

void CheckRejected(const std::string& text, const std::string& expected) {
  try {
    ParseScene(text, "probe.json");
    FAIL("accepted a bad scene; expected: " << expected);
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("probe.json") != std::string::npos);
    CHECK(message.find(expected) != std::string::npos);
  }
}

TEST_CASE("a scene file is read with its bodies, laws and events") {
  const Scene scene = ParseScene(kGood, "probe.json");
  CHECK(scene.name == "probe");
  REQUIRE(scene.bodies.size() == 3);
  CHECK(scene.bodies[0].mass.body_inertia(0, 0) == doctest::Approx(0.4 * 2.0 * 0.25));
  CHECK(scene.bodies[1].fixed);
  // The plane's normal is normalized and becomes its body z axis.
  CHECK(scene.bodies[1].state.orientation.toRotationMatrix().col(2).isApprox(
      Eigen::Vector3d::UnitZ()));
  CHECK(scene.laws.Get("ball", "floor").mu == doctest::Approx(0.3));
  CHECK(scene.laws.Get("post", "ball").mu == doctest::Approx(0.9));
  CHECK_FALSE(scene.laws.Get("post", "ball").torsion);
  REQUIRE(scene.impulses.size() == 2);
  CHECK(scene.impulses[0].timed);
  CHECK_FALSE(scene.impulses[1].timed);
  CHECK(scene.impulses[1].quantity == 3);
}

TEST_CASE("bad scene files are rejected with the field and the reason") {
  CheckRejected(Replace(kGood, "\"sphere\"", "\"torus\""), "unknown shape 'torus'");
  CheckRejected(Replace(kGood, "\"mass\": 2.0", "\"mass\": -2.0"),
                "bodies[0].mass: must be positive");
  CheckRejected(Replace(kGood, "\"h\": 0.01, ", ""), "missing field 'h'");
  CheckRejected(Replace(kGood, "\"mass\": 2.0", "\"mass\": NaN"), "not valid JSON");
  CheckRejected(Replace(kGood, "\"mass\": 2.0", "\"mass\": 1e999"), "number overflow");
  CheckRejected(Replace(kGood, "\"size\": [0.5]", "\"size\": [0.5, 1]"), "takes [radius]");
  CheckRejected(Replace(kGood, "\"size\": [0.5]", "\"size\": [-0.5]"), "must be positive");
  CheckRejected(Replace(kGood, "\"velocity\"", "\"velocty\""), "unknown field 'velocty'");
  CheckRejected(Replace(kGood, "\"body\": \"ball\", \"at\"", "\"body\": \"bal\", \"at\""),
                "no body named 'bal'");
  CheckRejected(Replace(kGood, "\"quantity\": \"vx\"", "\"quantity\": \"speed\""),
                "unknown quantity 'speed'");
  CheckRejected(Replace(kGood, "\"mu\": 0.3", "\"mu\": -0.3"), "mu = -0.3");
  CheckRejected(Replace(kGood, "\"normal\": [0, 0, 2]", "\"normal\": [0, 0, 0]"),
                "must not be zero");
  CheckRejected(Replace(kGood, "\"position\": [0, 0, 0.5], \"velocity\"",
                        "\"position\": [0, 0, 0.5], \"orientation\": [1, 1, 0, 0], \"velocity\""),
                "unit quaternion");
  CheckRejected(Replace(kGood, "\"h\": 0.01", "\"h\": 0.01, \"solver\": \"pgs\""),
                "unknown solver");
  CheckRejected(Replace(kGood, "{\"name\": \"floor\"", "{\"name\": \"ball\""), "used twice");
  CheckRejected("{\"h\": 0.01,", "not valid JSON");
  CHECK_THROWS_WITH_AS(LoadScene("/nonexistent/scene.json"), doctest::Contains("cannot open"),
                       std::invalid_argument);
}

TEST_CASE("every stepper falls under the same gravity when the scene names none") {
  // The papers' 9.8 m/s^2 down z, whichever stepper reads the file.
  CHECK(ImplicitStepperOptions().gravity == DefaultGravity());
  CHECK(ExplicitStepperOptions().gravity == DefaultGravity());
  CHECK(QuasistaticOptions().gravity == DefaultGravity());
  CHECK(DefaultGravity() == Eigen::Vector3d(0, 0, -9.8));
  const std::string text =
      internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) + "/scenes/sliding_cube.json");
  std::string as_explicit = text;
  as_explicit.insert(as_explicit.find('{') + 1, "\"stepper\": \"explicit\",");
  CHECK(ParseScene(text, "implicit").gravity() == DefaultGravity());
  CHECK(ParseScene(as_explicit, "explicit").gravity() == DefaultGravity());
}

TEST_CASE("the default variants of each stepper: the solvers compared by default on its problems") {
  using Variants = std::vector<std::string>;
  CHECK(DefaultVariants("implicit") == Variants{"fb-newton", "fb-newton-dense", "penalized-fb",
                                                "minmap-newton", "fb-newton-cold"});
  // The pyramid's LCP has zero-diagonal rows (no PGS); auto is not compared by default.
  CHECK(DefaultVariants("explicit") ==
        Variants{"cone/nsgs", "cone/nsgs-shuffled", "cone/nsgs-anderson", "cone/fc-newton",
                 "cone/fc-newton-fb", "cone/fc-proximal", "cone/fc-proximal-fb",
                 "cone/nsgs-velocity", "pyramid/lemke", "pyramid/fb-newton", "relaxed/lemke",
                 "relaxed/pgs", "relaxed/fb-newton", "convex/convex-newton"});
  // dlc and qp have free rows of zero diagonal (no PGS).
  CHECK(DefaultVariants("quasistatic") ==
        Variants{"dqc/fb-newton", "dqc/fb-newton-dense", "dqc/penalized-fb", "dqc/minmap-newton",
                 "dlc/lemke", "dlc/fb-newton", "qp/lemke", "qp/fb-newton", "qp-lcp/lemke",
                 "qp-lcp/pgs", "qp-lcp/fb-newton"});
}

TEST_CASE("every bundled scene parses") {
  for (const char* file : {"sliding_cube.json", "rolling_cylinder.json", "toppling_cube.json",
                           "cylinder_manipulation.json", "quasi_rigid_drop.json"}) {
    INFO(file);
    CHECK_NOTHROW(LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/" + file));
  }
}

// The runner keeps a reference to its scene: a temporary would dangle, so it does not compile.
static_assert(std::is_constructible_v<SceneRunner, const Scene&>);
static_assert(!std::is_constructible_v<SceneRunner, Scene&&>);
static_assert(!std::is_constructible_v<SceneRunner, Scene>);

TEST_CASE("condition events fire when the quantity reaches the value, again with repeat") {
  Scene scene = ParseScene(kGood, "probe.json");
  scene.bodies[0].state.position.z() = 50.0;  // free flight: vx stays 1 until pushed
  scene.impulses.erase(scene.impulses.begin());
  scene.impulses[0].value = 1.0;  // vx = 1 now: fires at once, then vx = 1.5 re-arms it
  scene.duration = 0.05;
  SceneRunner runner(scene);
  std::vector<ScriptedEvent> fired;
  while (!runner.Done()) {
    runner.Step();
    fired.insert(fired.end(), runner.fired().begin(), runner.fired().end());
  }
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].time == doctest::Approx(0.0));
  CHECK(runner.stepper().bodies()[0].state.linear_velocity.x() == doctest::Approx(1.5));
}

TEST_CASE("the shared settings of a scene file reach its stepper's solver, for every stepper") {
  const std::string settings =
      R"("h": 0.005, "gravity": [0, 0, -3], "tolerance": 1e-7, "max_iterations": 7,
         "warm_start": false, "duration")";
  const std::string implicit = Replace(kGood, R"("h": 0.01, "duration")", settings);
  const std::string explicit_cone =
      Replace(implicit, R"("name": "probe",)", R"("name": "probe", "stepper": "explicit",)");
  const std::string explicit_relaxed = Replace(explicit_cone, R"("stepper": "explicit",)",
                                               R"("stepper": "explicit", "model": "relaxed",)");
  for (const std::string& text : {implicit, explicit_cone, explicit_relaxed}) {
    const Scene scene = ParseScene(text, "probe.json");
    INFO(scene.stepper() << " " << scene.variant());
    CHECK(scene.h() == 0.005);
    CHECK(scene.gravity() == Eigen::Vector3d(0, 0, -3));
    CHECK(scene.settings().warm_start == false);
    const std::unique_ptr<Stepper> stepper = MakeStepper(scene);
    CHECK(stepper->h() == 0.005);
    CHECK(stepper->gravity() == Eigen::Vector3d(0, 0, -3));
    CHECK(stepper->solver().options().tolerance == 1e-7);
    CHECK(stepper->solver().options().max_iterations == 7);
  }
  // The quasistatic stepper reads the same keys (its scene file's top level).
  Scene gripper = LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/gripper_sphere.json");
  gripper = ParseScene(Replace(internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) +
                                                      "/scenes/gripper_sphere.json"),
                               R"("h": 0.01,)", settings.substr(0, settings.size() - 10)),
                       "probe.json");
  CHECK(gripper.h() == 0.005);
  CHECK(gripper.settings().tolerance == 1e-7);
  CHECK(gripper.settings().solver == gripper.options<QuasistaticOptions>().solver);
  CHECK(&gripper.mutable_settings() ==
        &static_cast<StepperSettings&>(gripper.options<QuasistaticOptions>()));
  const std::unique_ptr<Stepper> quasistatic = MakeStepper(gripper);
  CHECK(quasistatic->h() == 0.005);
  CHECK(quasistatic->gravity() == gripper.gravity());
  CHECK(quasistatic->solver().options().max_iterations == 7);
  // A non-positive step is refused by the one reader with the field's path.
  CHECK_THROWS_WITH_AS(ParseScene(Replace(implicit, "0.005", "-1"), "probe.json"),
                       doctest::Contains("h"), InputError);
}

// The bodies' states after `steps` steps of the scene (stopping early at its end).
std::vector<RigidBodyState> StatesAfter(const Scene& scene, int steps) {
  SceneRunner runner(scene);
  for (int k = 0; k < steps && !runner.Done(); ++k) runner.Step();
  std::vector<RigidBodyState> states;
  for (const Body& body : runner.stepper().bodies()) states.push_back(body.state);
  return states;
}

bool SameStates(const std::vector<RigidBodyState>& a, const std::vector<RigidBodyState>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].position != b[i].position || a[i].orientation.coeffs() != b[i].orientation.coeffs() ||
        a[i].linear_velocity != b[i].linear_velocity ||
        a[i].angular_velocity != b[i].angular_velocity) {
      return false;
    }
  }
  return true;
}

TEST_CASE("quasistatic files with a \"quasistatic\" object and \"friction\" load as before") {
  // tests/data/legacy holds the bundled quasistatic scenes as they were written before every
  // stepper read one schema; each steps bitwise as the scene in today's schema.
  for (const char* name : {"fence_particle", "gripper_sphere", "cube_stacking"}) {
    INFO(name);
    const Scene legacy =
        LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/tests/data/legacy/" + name + ".json");
    const Scene today = LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/" + name + ".json");
    CHECK(legacy.stepper() == "quasistatic");
    CHECK(legacy.variant() == today.variant());
    CHECK(legacy.laws.default_law.mu == today.laws.default_law.mu);
    CHECK(legacy.options<QuasistaticOptions>().regularization ==
          today.options<QuasistaticOptions>().regularization);
    CHECK(SameStates(StatesAfter(legacy, 40), StatesAfter(today, 40)));
  }
}

TEST_CASE("one schema: fixed bodies listed under \"fixed\" or flagged in \"bodies\"") {
  // The post moves from "fixed" to "bodies" with "fixed": true; bodies keep the file's order.
  const std::string in_bodies = Replace(Replace(kGood,
                                                R"(,
            {"name": "post", "shape": "box", "size": [0.2, 0.2, 1], "position": [3, 0, 0.5]}],)",
                                                "],"),
                                        R"("velocity": [1, 0, 0]}],)",
                                        R"("velocity": [1, 0, 0]},
             {"name": "post", "shape": "box", "size": [0.2, 0.2, 1], "position": [3, 0, 0.5],
              "fixed": true}],)");
  const Scene scene = ParseScene(in_bodies, "probe.json");
  REQUIRE(scene.bodies.size() == 3);
  CHECK(scene.bodies[1].name == "post");
  CHECK(scene.bodies[1].fixed);
  CHECK(scene.laws.Get("post", "ball").mu == doctest::Approx(0.9));
  // A plane in "bodies" is fixed unless it says otherwise; a moving plane is refused.
  const std::string plane_in_bodies = Replace(
      kGood, R"("velocity": [1, 0, 0]}],)",
      R"("velocity": [1, 0, 0]}, {"name": "floor2", "shape": "plane", "point": [0, 0, -1], "normal": [0, 0, 1]}],)");
  CHECK(ParseScene(plane_in_bodies, "probe.json").bodies[1].fixed);
  CheckRejected(Replace(plane_in_bodies, R"("normal": [0, 0, 1]})",
                        R"("normal": [0, 0, 1], "fixed": false})"),
                "a plane cannot move");
  // A fixed body carries no mass or velocity with a stepper that has velocities.
  CheckRejected(Replace(in_bodies, R"("fixed": true})", R"("fixed": true, "mass": 1})"),
                "unknown field 'mass'");
}

TEST_CASE("one schema: a key of another stepper's scenes is refused, naming that stepper") {
  CheckRejected(Replace(kGood, R"("name": "probe",)", R"("name": "probe", "model": "cone",)"),
                "is not a key of the implicit stepper's scenes (the quasistatic or explicit");
  CheckRejected(
      Replace(kGood, R"("contact": {"mu": 0.3})", R"("contact": {"mu": 0.3, "restitution": 0.5})"),
      "the implicit stepper reads no restitution (the explicit stepper does)");
  CheckRejected(Replace(kGood, R"("name": "probe",)", R"("name": "probe", "stepper": "rk4",)"),
                "unknown stepper 'rk4' (expected one of implicit, quasistatic, explicit)");
  CheckRejected(Replace(kGood, R"("name": "probe",)", R"("name": "probe", "commands": {},)"),
                "(the quasistatic stepper's: \"stepper\": \"quasistatic\")");
  const std::string gripper =
      internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) + "/scenes/gripper_sphere.json");
  CheckRejected(
      Replace(gripper, R"("contact": {"mu": 0.5},)", R"("contact": {"mu": 0.5}, "impulses": [],)"),
      "is not a key of the quasistatic stepper's scenes (the implicit or explicit");
  CheckRejected(
      Replace(gripper, R"("contact": {"mu": 0.5})", R"("contact": {"mu": 0.5, "e_t": 1})"),
      "the quasistatic stepper reads no e_t (the implicit or explicit stepper does)");
  const std::string legacy = internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) +
                                                    "/tests/data/legacy/gripper_sphere.json");
  CheckRejected(Replace(legacy, R"("friction": 0.5,)", R"("friction": 0.5, "contact": {"mu": 1},)"),
                "give the friction as \"contact\"");
  CheckRejected(
      Replace(legacy, R"("duration": 0.3,)", R"("duration": 0.3, "stepper": "explicit",)"),
      "a \"quasistatic\" object holds the quasistatic stepper's settings");
}
}  // namespace
}  // namespace ncpkit
