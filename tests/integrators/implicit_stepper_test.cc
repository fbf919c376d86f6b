#include "integrators/implicit_stepper.h"

#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"

namespace ncpkit {
namespace {

Scene PaperScene(const std::string& file) {
  return LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/" + file);
}

struct Trajectory {
  std::vector<ImplicitStepRecord> records;
  std::vector<RigidBodyState> states;  // first body, after each step
  std::vector<ScriptedEvent> fired;
  std::vector<double> fired_value;  // the watched quantity when each event fired
};

Trajectory RecordTrajectory(const Scene& scene) {
  Trajectory out;
  SceneRunner runner(scene);
  double previous_value = 0.0;
  while (!runner.Done()) {
    out.records.push_back(dynamic_cast<const ImplicitStepRecord&>(runner.Step()));
    out.states.push_back(runner.stepper().bodies()[0].state);
    for (const ScriptedEvent& event : runner.fired()) {  // the events of this step
      out.fired.push_back(event);
      out.fired_value.push_back(previous_value);
    }
    previous_value = out.states.back().angular_velocity.z();
  }
  return out;
}

// The guarantees of every implicit scene: each step solved to 1e-8, no penetration > 1e-8.
void CheckEveryStep(const Trajectory& t, const std::string& scene) {
  int failed = 0;
  double residual = 0.0, penetration = 0.0;
  for (const ImplicitStepRecord& r : t.records) {
    failed += r.summary.IsSolved() ? 0 : 1;
    residual = std::max(residual, r.summary.natural_residual);
    penetration = std::max(penetration, r.max_penetration);
  }
  INFO(scene << ": " << failed << " failed steps, max residual " << residual << ", max penetration "
             << penetration);
  CHECK(failed == 0);
  CHECK(residual <= 1e-8);
  CHECK(penetration <= 1e-8);
}

TEST_CASE("sliding cube: exact backward Euler to 1e-6 m, the analytic solution to 0.3 %") {
  const Scene scene = PaperScene("sliding_cube.json");
  const Trajectory t = RecordTrajectory(scene);
  REQUIRE(t.records.size() == 400);
  CheckEveryStep(t, "sliding cube");
  const double mu_g = 0.12 * 9.8, h = 0.01, v0 = 5.0;
  const Eigen::Vector3d direction(0.8, 0.6, 0.0);
  double speed = v0, distance = 0.0, worst = 0.0, spin = 0.0;
  for (size_t k = 0; k < t.states.size(); ++k) {
    // Backward Euler with constant friction: v+ = v - h mu g, x+ = x + h v+.
    speed -= h * mu_g;
    distance += h * speed;
    const Eigen::Vector3d expected = distance * direction + Eigen::Vector3d(0, 0, 0.5);
    worst = std::max(worst, (t.states[k].position - expected).norm());
    spin = std::max(spin, t.states[k].angular_velocity.norm());
  }
  INFO("max distance from backward Euler " << worst);
  CHECK(worst <= 1e-6);
  CHECK(spin <= 1e-9);
  for (int second = 1; second <= 4; ++second) {
    const double s = v0 * second - 0.5 * mu_g * second * second;
    const Eigen::Vector3d& p = t.states[100 * second - 1].position;
    INFO("t = " << second << " s: x = " << p.x() << ", analytic " << 0.8 * s);
    CHECK(std::abs(p.x() - 0.8 * s) <= 0.003 * 0.8 * s);
    CHECK(std::abs(p.y() - 0.6 * s) <= 0.003 * 0.6 * s);
  }
  // One face in contact throughout, the ECP on the bottom face ahead of the centre.
  for (const ImplicitStepRecord& r : t.records) {
    REQUIRE(r.contacts.size() == 1);
    CHECK(r.contacts[0].n_active_f == 1);
  }
}

TEST_CASE("cylinder with line contact: the ECP stays on the contact line") {
  const Scene scene = PaperScene("rolling_cylinder.json");
  const Trajectory t = RecordTrajectory(scene);
  CheckEveryStep(t, "rolling cylinder");
  const double half_length = 2.5;
  double max_d = 0.0, max_l = 0.0, stopped_l = 0.0, spinning_l = 0.0;
  int spinning = 0;
  for (size_t k = 0; k < t.records.size(); ++k) {
    REQUIRE(t.records[k].contacts.size() == 1);
    const ContactRecord& c = t.records[k].contacts[0];
    const RigidBodyState& s = t.states[k];
    // L and D of Xie & Chakraborty 2016 VI-B: the ECP relative to the centre, along and across the
    // horizontal projection of the axis.
    Eigen::Vector3d axis = s.orientation.toRotationMatrix().col(0);
    axis.z() = 0.0;
    axis.normalize();
    const Eigen::Vector3d r = c.ecp - s.position;
    const double L = axis.x() * r.x() + axis.y() * r.y();
    const double D = axis.y() * r.x() - axis.x() * r.y();
    max_d = std::max(max_d, std::abs(D));
    max_l = std::max(max_l, std::abs(L));
    CHECK(c.n_active_f == 1);  // the side only: line contact
    if (std::abs(s.angular_velocity.z()) < 1e-6) stopped_l = std::max(stopped_l, std::abs(L));
    if (std::abs(s.angular_velocity.z()) > 0.05) {
      spinning_l += std::abs(L);
      ++spinning;
    }
  }
  // L follows the spin: where the spin has decayed the ECP is back near the middle of the line.
  REQUIRE(spinning > 0);
  INFO("max |L| with w_z = 0: " << stopped_l
                                << "; mean |L| with |w_z| > 0.05: " << spinning_l / spinning);
  CHECK(stopped_l < 0.5 * spinning_l / spinning);
  INFO("max |D| " << max_d << ", max |L| " << max_l);
  CHECK(max_d <= 1e-8);
  CHECK(max_l <= half_length);
  CHECK(max_l > 1e-3);  // the spin does move the ECP along the line
  // The scripted impulse fires each time w_z reaches 0, and several times in 10 s.
  CHECK(t.fired.size() >= 5);
  for (double value : t.fired_value) CHECK(std::abs(value) <= 1e-9);
}

TEST_CASE("toppling cube: vertex, edge, then face contact; the impulses act at 1 s and 1.8 s") {
  const Scene scene = PaperScene("toppling_cube.json");
  const Trajectory t = RecordTrajectory(scene);
  CheckEveryStep(t, "toppling cube");
  // The sequence of contact kinds while the cube presses on the plane (p_n > 0).
  std::vector<int> kinds;
  std::vector<double> first_time;
  for (const ImplicitStepRecord& r : t.records) {
    REQUIRE(r.contacts.size() == 1);
    const ContactRecord& c = r.contacts[0];
    if (c.p_n <= 0.0) continue;
    if (kinds.empty() || kinds.back() != c.n_active_f) {
      kinds.push_back(c.n_active_f);
      first_time.push_back(r.time);
    }
  }
  std::string sequence;
  for (int n : kinds) sequence += std::to_string(n) + " ";
  INFO("N while in contact: " << sequence);
  REQUIRE(kinds.size() >= 3);
  CHECK(kinds.front() == 3);
  CHECK(kinds.back() == 1);
  CHECK(std::find(kinds.begin(), kinds.end(), 2) != kinds.end());
  // Point contact first, line contact before the 1 s impulse, surface contact before 1.8 s.
  const auto index_of = [&](int n) {
    return std::find(kinds.begin(), kinds.end(), n) - kinds.begin();
  };
  CHECK(first_time[index_of(2)] < 1.0);
  CHECK(first_time.back() < 1.8);
  REQUIRE(t.fired.size() == 2);
  CHECK(t.fired[0].time == doctest::Approx(1.0));
  CHECK(t.fired[1].time == doctest::Approx(1.8));
  // The 1.8 s push makes the cube slide on its face; friction mu g stops it.
  const RigidBodyState& pushed = t.states[180];
  CHECK(pushed.linear_velocity.head<2>().norm() > 10.0);
  CHECK(t.states.back().position.z() == doctest::Approx(0.5).epsilon(1e-9));
}

TEST_CASE("cylinder manipulation: falls, rolls past the block, is stood up at the goal") {
  const Scene scene = PaperScene("cylinder_manipulation.json");
  const Trajectory t = RecordTrajectory(scene);
  CheckEveryStep(t, "cylinder manipulation");
  const auto height = [&](double time) {
    return t.states[static_cast<int>(time * 100) - 1].position.z();
  };
  CHECK(height(0.02) == doctest::Approx(0.15).epsilon(1e-6));  // standing on its cap
  CHECK(height(1.0) == doctest::Approx(0.1).epsilon(1e-6));    // lying: line contact
  CHECK(height(2.5) == doctest::Approx(0.1).epsilon(1e-6));    // rolling again after the pivot
  CHECK(height(5.0) == doctest::Approx(0.15).epsilon(1e-6));   // standing at the goal
  const Eigen::Vector3d goal = t.states.back().position;
  CHECK((goal - Eigen::Vector3d(0, 0, 0.15)).norm() > 0.8);
  CHECK(t.states.back().linear_velocity.norm() < 1e-6);
}

TEST_CASE("quasi-rigid layer: the deflection never exceeds the layer; the rigid limit") {
  Scene scene = PaperScene("quasi_rigid_drop.json");
  const ContactLaw layer = scene.laws.default_law;
  double max_deflection = 0.0, min_core_gap = 1.0;
  const Trajectory t = RecordTrajectory(scene);
  CheckEveryStep(t, "quasi-rigid drop");
  for (const ImplicitStepRecord& r : t.records) {
    for (const ContactRecord& c : r.contacts) {
      max_deflection = std::max(max_deflection, c.deflection);
      min_core_gap = std::min(min_core_gap, c.gap);
    }
  }
  INFO("max deflection " << max_deflection << ", layer " << layer.thickness);
  CHECK(max_deflection <= layer.thickness + 1e-9);
  CHECK(max_deflection > 0.99 * layer.thickness);  // the drop bottoms the layer out
  // At rest the layer carries the weight: deflection m g / k.
  const double rest = t.records[900].contacts.at(0).deflection;
  CHECK(rest == doctest::Approx(9.8 / layer.stiffness).epsilon(1e-6));

  // Rigid limit: thinner layers approach the rigid trajectory. The tangential Kelvin-Voigt
  // spring does not depend on the thickness, so both runs use the friction of eq. 9 here.
  const auto final_state = [&](double thickness) {
    Scene s = PaperScene("quasi_rigid_drop.json");
    if (thickness > 0.0) {
      s.laws.default_law.thickness = thickness;
      s.laws.default_law.tangential_stiffness = 0.0;
      s.laws.default_law.tangential_damping = 0.0;
    } else {
      s.laws.default_law = ContactLaw();
      s.laws.default_law.mu = layer.mu;
      s.laws.default_law.e_r = layer.e_r;
    }
    SceneRunner runner(s);
    int failed = 0;
    while (!runner.Done()) failed += runner.Step().summary.IsSolved() ? 0 : 1;
    return std::make_pair(runner.stepper().bodies()[0].state, failed);
  };
  const RigidBodyState rigid = final_state(0.0).first;
  double previous = 1e9;
  for (double thickness : {1e-2, 1e-3, 1e-4, 1e-5}) {
    const auto [s, failed] = final_state(thickness);
    CHECK(failed == 0);
    const double difference = (s.position - rigid.position).norm();
    INFO("thickness " << thickness << ": distance to the rigid final position " << difference);
    CHECK((difference < previous || difference < 1e-12));  // (or at rounding level)
    previous = difference;
  }
  CHECK(previous < 1e-4);
}

TEST_CASE("the stepper rejects bad bodies and impulses with a message") {
  Body plane;
  plane.name = "ground";
  plane.shape.kind = ShapeKind::HalfSpace;
  plane.fixed = true;
  Body cube;
  cube.name = "cube";
  cube.shape.kind = ShapeKind::Box;
  cube.mass = MassProperties::Box(1.0, Eigen::Vector3d::Ones());
  cube.state.position = Eigen::Vector3d(0, 0, 0.5);
  ImplicitStepperOptions options;
  {
    Body bad = cube;
    bad.mass.mass = -1.0;
    CHECK_THROWS_WITH_AS(ImplicitStepper({bad, plane}, ContactLawTable(), options),
                         doctest::Contains("mass"), std::invalid_argument);
  }
  {
    Body bad = cube;
    bad.state.linear_velocity.x() = std::nan("");
    CHECK_THROWS_AS(ImplicitStepper({bad, plane}, ContactLawTable(), options),
                    std::invalid_argument);
  }
  {
    ImplicitStepperOptions bad = options;
    bad.solver = "lemke";  // not a nonlinear solver
    CHECK_THROWS_AS(ImplicitStepper({cube, plane}, ContactLawTable(), bad), std::invalid_argument);
  }
  ImplicitStepper stepper({cube, plane}, ContactLawTable(), options);
  CHECK_THROWS_AS(stepper.Step({Vector6d::Zero()}), std::invalid_argument);  // one for two
  Vector6d nan = Vector6d::Zero();
  nan[2] = std::nan("");
  CHECK_THROWS_AS(stepper.Step({nan, Vector6d::Zero()}), std::invalid_argument);
}

TEST_CASE("every solver variant steps the sliding cube; free flight is exact") {
  for (const char* solver : {"fb-newton", "fb-newton-dense", "penalized-fb"}) {
    Scene scene = PaperScene("sliding_cube.json");
    scene.options<ImplicitStepperOptions>().solver = solver;
    scene.duration = 0.5;
    const Trajectory t = RecordTrajectory(scene);
    INFO(solver);
    CheckEveryStep(t, solver);
  }
  Scene flight = PaperScene("sliding_cube.json");
  flight.bodies[0].state.position.z() = 100.0;  // far above the plane: no active pair
  flight.duration = 0.1;
  const Trajectory t = RecordTrajectory(flight);
  CHECK(t.records.back().contacts.empty());
  CHECK(t.states.back().linear_velocity.z() == doctest::Approx(-9.8 * 0.1).epsilon(1e-12));
}

}  // namespace
}  // namespace ncpkit
