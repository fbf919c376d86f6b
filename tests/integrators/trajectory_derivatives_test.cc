// Gradients and forward Jacobians of a run's columns (integrators/trajectory_derivatives.h)
// against central differences of whole runs of scene files: a box pushed by a scripted impulse
// sliding on the ground (mu, its mass, its start velocity) and a box tumbling in the air (the
// quaternion columns against the start spin).
#include "integrators/trajectory_derivatives.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/base/input_error.h"

namespace ncpkit::trajectory_derivatives_test {

// An explicit scene of one 1 x 0.8 x 0.6 box, solved tightly enough for central differences.
// `mu`, `mass`, the start velocity and spin, and the body's height are the knobs.
std::string BoxScene(double mu, double mass, const Eigen::Vector3d& velocity,
                     const Eigen::Vector3d& spin, double height) {
  auto vec = [](const Eigen::Vector3d& v) {
    return "[" + std::to_string(v.x()) + ", " + std::to_string(v.y()) + ", " +
           std::to_string(v.z()) + "]";
  };
  std::string text = R"({"name": "box", "stepper": "explicit", "solver": "auto",
    "tolerance": 1e-12, "max_iterations": 200, "h": 0.01, "duration": 0.3,
    "gravity": [0, 0, -9.8],
    "bodies": [{"name": "box", "shape": "box", "size": [1, 0.8, 0.6], "mass": MASS,
                "position": [0, 0, HEIGHT], "velocity": VELOCITY, "angular_velocity": SPIN}],
    "fixed": [{"name": "ground", "shape": "plane", "normal": [0, 0, 1], "point": [0, 0, 0]}],
    "impulses": [{"body": "box", "at": 0.1, "impulse": [1.5, 0.5, 0, 0, 0, 0]}],
    "contact": {"mu": MU}})";
  auto replace = [&](const std::string& key, const std::string& value) {
    text.replace(text.find(key), key.size(), value);
  };
  char number[40];
  std::snprintf(number, sizeof(number), "%.17g", mass);
  replace("MASS", number);
  std::snprintf(number, sizeof(number), "%.17g", mu);
  replace("MU", number);
  std::snprintf(number, sizeof(number), "%.17g", height);
  replace("HEIGHT", number);
  replace("VELOCITY", vec(velocity));
  replace("SPIN", vec(spin));
  return text;
}

struct Run {
  std::vector<RigidBodyState> states;  // after each step
  TrajectoryDerivatives derivatives;
};

Run Simulate(const std::string& text, bool derivatives) {
  const Scene scene = ParseScene(text, "test");
  Run run;
  RunScene(scene, scene.variant(), [&](const StepRecord& record, const SceneRunner& runner) {
    REQUIRE(record.summary.IsSolved());
    run.states.push_back(runner.stepper().bodies()[0].state);
    if (derivatives) run.derivatives.Add(runner.stepper());
  });
  return run;
}

// Column values of a state, in the order of TrajectoryDerivatives::StateColumns().
Eigen::Matrix<double, 13, 1> Columns(const RigidBodyState& s) {
  Eigen::Matrix<double, 13, 1> c;
  c << s.position, s.orientation.w(), s.orientation.vec(), s.linear_velocity, s.angular_velocity;
  return c;
}

TEST_CASE("run derivatives: a pushed box sliding on the ground against whole-run differences") {
  const double mu = 0.3, mass = 2.0;
  const Eigen::Vector3d v0(1.0, 0.4, 0.0), w0 = Eigen::Vector3d::Zero();
  Run run = Simulate(BoxScene(mu, mass, v0, w0, 0.3), true);
  const TrajectoryDerivatives& d = run.derivatives;
  REQUIRE(d.steps() == 30);
  const int last = d.steps() - 1;
  // Gradients of x and y after the last step, and of sum_k x_k.
  Eigen::VectorXd at_end = Eigen::VectorXd::Zero(d.steps()), all = Eigen::VectorXd::Ones(d.steps());
  at_end(last) = 1.0;
  const std::vector<std::string> wrt = {"mu", "box.mass", "box.velocity"};
  const auto x_end = d.Gradient({{"box.x", at_end}}, wrt);
  const auto y_end = d.Gradient({{"box.y", at_end}}, wrt);
  const auto x_sum = d.Gradient({{"box.x", all}}, wrt);
  CHECK(x_end.undetermined_steps.empty());
  const auto forward = d.ColumnJacobians({"box.x", "box.y"}, wrt);

  // Central differences of whole runs.
  auto differences = [&](const std::function<std::string(double)>& scene, double step) {
    const Run up = Simulate(scene(step), false), down = Simulate(scene(-step), false);
    Eigen::MatrixXd diff(d.steps(), 2);
    for (int k = 0; k < d.steps(); ++k) {
      diff.row(k) =
          (up.states[k].position - down.states[k].position).head<2>().transpose() / (2.0 * step);
    }
    return diff;
  };
  const Eigen::MatrixXd by_mu =
      differences([&](double e) { return BoxScene(mu + e, mass, v0, w0, 0.3); }, 1e-6);
  const Eigen::MatrixXd by_mass =
      differences([&](double e) { return BoxScene(mu, mass + e, v0, w0, 0.3); }, 1e-6);
  const Eigen::MatrixXd by_vx = differences(
      [&](double e) { return BoxScene(mu, mass, v0 + Eigen::Vector3d(e, 0, 0), w0, 0.3); }, 1e-6);
  auto close = [](double exact, double fd) {
    CHECK(std::abs(exact - fd) <= 1e-5 * std::max(1.0, std::abs(fd)));
  };
  close(x_end.values[0].second(0, 0), by_mu(last, 0));
  close(y_end.values[0].second(0, 0), by_mu(last, 1));
  close(x_end.values[1].second(0, 0), by_mass(last, 0));
  close(y_end.values[1].second(0, 0), by_mass(last, 1));
  close(x_end.values[2].second(0, 0), by_vx(last, 0));
  close(y_end.values[2].second(0, 0), by_vx(last, 1));
  close(x_sum.values[0].second(0, 0), by_mu.col(0).sum());
  // The mass matters only through the impulse: before it (t < 0.1 s) x does not depend on it.
  CHECK(std::abs(by_mass(5, 0)) < 1e-8);
  CHECK(std::abs(by_mass(last, 0)) > 1e-3);
  // Forward Jacobians, row by row.
  for (int k = 0; k < d.steps(); ++k) {
    close(forward[0][0](k, 0), by_mu(k, 0));
    close(forward[0][1](k, 0), by_mu(k, 1));
    close(forward[1][0](k, 0), by_mass(k, 0));
    close(forward[2][0](k, 0), by_vx(k, 0));
    close(forward[2][1](k, 0), by_vx(k, 1));
  }
  // The reverse and forward passes agree to rounding.
  CHECK(forward[0][0].col(0).sum() == doctest::Approx(x_sum.values[0].second(0, 0)).epsilon(1e-12));
}

TEST_CASE("run derivatives: a box tumbling in the air, its quaternion against the start spin") {
  const Eigen::Vector3d v0(0.5, 0.0, 2.0), w0(3.0, 1.0, -2.0);
  auto scene = [&](const Eigen::Vector3d& w) {
    return BoxScene(0.3, 2.0, v0, w, 5.0);  // far above the ground: no contact
  };
  Run run = Simulate(scene(w0), true);
  const TrajectoryDerivatives& d = run.derivatives;
  const std::vector<std::string> columns = d.StateColumns();
  REQUIRE(columns.size() == 13);
  const auto forward = d.ColumnJacobians(columns, {"box.angular_velocity", "box.rotation"});
  const int last = d.steps() - 1;
  for (int i = 0; i < 3; ++i) {
    const double e = 1e-6;
    const Run up = Simulate(scene(w0 + e * Eigen::Vector3d::Unit(i)), false);
    const Run down = Simulate(scene(w0 - e * Eigen::Vector3d::Unit(i)), false);
    for (int k : {0, 12, last}) {
      const Eigen::Matrix<double, 13, 1> fd =
          (Columns(up.states[k]) - Columns(down.states[k])) / (2.0 * e);
      for (int c = 0; c < 13; ++c) {
        CAPTURE(columns[c]);
        CAPTURE(k);
        CHECK(std::abs(forward[0][c](k, i) - fd(c)) <= 1e-5 * std::max(1.0, std::abs(fd(c))));
      }
    }
  }
  // The reverse pass on a quaternion column gives the forward pass's entry.
  Eigen::VectorXd at_end = Eigen::VectorXd::Zero(d.steps());
  at_end(last) = 1.0;
  const auto qx = d.Gradient({{"box.qx", at_end}}, {"box.angular_velocity", "box.rotation"});
  for (int i = 0; i < 3; ++i) {
    CHECK(qx.values[0].second(i, 0) == doctest::Approx(forward[0][4](last, i)).epsilon(1e-10));
    CHECK(qx.values[1].second(i, 0) == doctest::Approx(forward[1][4](last, i)).epsilon(1e-10));
  }
}

TEST_CASE("run derivatives: unknown names and mismatched weights are refused, naming them") {
  Run run =
      Simulate(BoxScene(0.3, 2.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d::Zero(), 0.3), true);
  const TrajectoryDerivatives& d = run.derivatives;
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(d.steps());
  CHECK_THROWS_WITH_AS(d.Gradient({{"box.q", ones}}, {"mu"}),
                       doctest::Contains("no state column 'box.q'"), InputError);
  CHECK_THROWS_WITH_AS(d.Gradient({{"box.x", ones}}, {"friction"}),
                       doctest::Contains("'friction'; there are: h, mu"), InputError);
  CHECK_THROWS_WITH_AS(d.Gradient({{"box.x", Eigen::VectorXd::Ones(3)}}, {"mu"}),
                       doctest::Contains("3 rows for a run of 30 steps"), InputError);
  CHECK_THROWS_WITH_AS(d.ColumnJacobians({"box.x"}, {"box.impulse"}),
                       doctest::Contains("use the gradient"), InputError);
  // The impulse's gradient: one row per step; the box's x after the last step moves by h T / m
  // per unit of impulse along x applied at any step before (it is still sliding, so friction
  // does not change with the push): here checked at the first step against the forward pass's
  // start velocity derivative (an impulse u at step 0 is a start velocity change u / m).
  Eigen::VectorXd at_end = Eigen::VectorXd::Zero(d.steps());
  at_end(d.steps() - 1) = 1.0;
  const auto g = d.Gradient({{"box.x", at_end}}, {"box.impulse", "box.velocity"});
  REQUIRE(g.values[0].second.rows() == d.steps());
  REQUIRE(g.values[0].second.cols() == 6);
  CHECK(g.values[0].second(0, 0) == doctest::Approx(g.values[1].second(0, 0) / 2.0).epsilon(1e-9));
}

}  // namespace ncpkit::trajectory_derivatives_test
