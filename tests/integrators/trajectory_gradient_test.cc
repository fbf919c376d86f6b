// The reverse pass through a trajectory (integrators/trajectory_gradient.h): the sliding box's
// closed forms as gradients; the same gradient with and without checkpoints; the reverse pass
// against forward products chained step by step and against central differences of whole
// trajectories; snapshots that replay steps bit for bit.
#include "integrators/trajectory_gradient.h"

#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "integrators/explicit_stepper.h"
#include "solvers/base/input_error.h"
#include "tests/integrators/derivative_bodies.h"

namespace ncpkit {
// Named, not anonymous: the unity build puts test files side by side.
namespace trajectory_gradient_test {

using derivative_bodies::Box;
using derivative_bodies::Ground;

ExplicitStepperOptions Options() { return derivative_bodies::TightOptions(); }

ContactLawTable Laws(double mu) {
  ContactLawTable laws;
  laws.default_law.mu = mu;
  return laws;
}

std::vector<Body> SlidingBox(const Eigen::Vector3d& v0) {
  std::vector<Body> bodies = {
      Ground(), Box("box", Eigen::Vector3d(0.4, 0.3, 0.2), 2.0, Eigen::Vector3d(0, 0, 0.1))};
  bodies[1].state.linear_velocity = v0;
  return bodies;
}

int Slot(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

// L = x of the first moving body after the last step.
LossGradient FinalX(int steps) {
  return [steps](int step, const Stepper& stepper) -> Eigen::VectorXd {
    if (step != steps) return Eigen::VectorXd();
    int moving = 0;
    for (const Body& b : stepper.bodies()) moving += b.fixed ? 0 : 1;
    return Eigen::VectorXd::Unit(12 * moving, 0);
  };
}

TEST_CASE("trajectory gradient: the sliding box's closed forms, with and without checkpoints") {
  const int N = 20;
  const double h = 0.01, g = 9.8;
  for (const int interval : {0, 1, 3, 7, 20, 50}) {
    CAPTURE(interval);
    ExplicitStepper stepper(SlidingBox(Eigen::Vector3d(2.0, 0, 0)), Laws(0.5), Options());
    TrajectoryGradientOptions options;
    options.steps = N;
    options.checkpoint_interval = interval;
    const TrajectoryGradientResult r = ReverseGradient(&stepper, FinalX(N), options);
    CHECK(r.initial_state[6] == doctest::Approx(N * h).epsilon(1e-9));
    CHECK(r.initial_state[0] == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(r.parameters[Slot(r.parameter_names, "mu")] ==
          doctest::Approx(-0.5 * g * h * h * N * (N + 1)).epsilon(1e-9));
    CHECK(std::abs(r.parameters[Slot(r.parameter_names, "box.mass")]) <= 1e-10);
    // An impulse along x at step k moves x_N by (N - k) h / m.
    CHECK(r.commands[5][0] == doctest::Approx((N - 5) * h / 2.0).epsilon(1e-9));
    const int expected_held = interval == 0 || interval >= N ? N : interval;
    CHECK(r.derivatives_held == expected_held);
    CHECK(r.snapshots == (interval == 0 || interval >= N ? 0 : (N - 1) / interval));
    CHECK(stepper.time() == doctest::Approx(N * h));  // left after the last step
  }
}

// A tumbling box dropped on the ground and a second one thrown at it: contacts come and go.
std::vector<Body> Tumbling() {
  Body a = Box("a", Eigen::Vector3d(0.4, 0.3, 0.2), 1.5, Eigen::Vector3d(0, 0, 0.25));
  a.state.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 2, 0).normalized()));
  a.state.linear_velocity = Eigen::Vector3d(0.5, 0.1, -0.5);
  a.state.angular_velocity = Eigen::Vector3d(1.0, -0.5, 2.0);
  Body b = Box("b", Eigen::Vector3d(0.25, 0.25, 0.25), 0.7, Eigen::Vector3d(0.6, 0.05, 0.3));
  b.state.linear_velocity = Eigen::Vector3d(-1.5, 0, 0);
  return {Ground(), a, b};
}

// L = sum over the steps of the moving bodies' heights and of w . v, w fixed.
LossGradient Heights() {
  return [](int /*step*/, const Stepper& stepper) -> Eigen::VectorXd {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(24);
    for (int k = 0; k < 2; ++k) {
      g[12 * k + 2] = 1.0;
      g[12 * k + 6] = 0.3;
      g[12 * k + 10] = -0.2;
    }
    return stepper.bodies().size() == 3 ? g : Eigen::VectorXd();
  };
}

TEST_CASE(
    "trajectory gradient: checkpoints change nothing, and the reverse pass equals forward "
    "products") {
  const int N = 40;
  TrajectoryGradientOptions options;
  options.steps = N;
  ExplicitStepperOptions loose = Options();
  loose.tolerance = 1e-8;
  ExplicitStepper plain(Tumbling(), Laws(0.4), loose);
  const TrajectoryGradientResult r = ReverseGradient(&plain, Heights(), options);
  options.checkpoint_interval = 6;
  ExplicitStepper checkpointed(Tumbling(), Laws(0.4), loose);
  const TrajectoryGradientResult c = ReverseGradient(&checkpointed, Heights(), options);
  CHECK((r.initial_state - c.initial_state).cwiseAbs().maxCoeff() == 0.0);
  CHECK((r.parameters - c.parameters).cwiseAbs().maxCoeff() == 0.0);
  CHECK(c.derivatives_held == 6);
  // <dL/ds0, ds0> + <dL/dp, dp> by chaining Jvps forward.
  std::mt19937 random(3);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::VectorXd ds0(24), dp(r.parameters.size());
  for (Eigen::Index k = 0; k < ds0.size(); ++k) ds0[k] = n(random);
  for (Eigen::Index k = 0; k < dp.size(); ++k) dp[k] = n(random);
  ExplicitStepper forward(Tumbling(), Laws(0.4), loose);
  Eigen::VectorXd ds = ds0;
  const Eigen::VectorXd w = Heights()(0, forward);
  double chained = w.dot(ds);
  for (int k = 0; k < N; ++k) {
    forward.Step();
    ds = forward.LastStepDerivative()->Jvp(ds, dp, Eigen::VectorXd());
    chained += w.dot(ds);
  }
  const double reverse = r.initial_state.dot(ds0) + r.parameters.dot(dp);
  CHECK(reverse == doctest::Approx(chained).epsilon(1e-9));
  MESSAGE("tumbling boxes, 40 steps: " << r.undetermined_steps.size()
                                       << " steps not determined by their data, "
                                       << r.degenerate_contacts.size() << " degenerate contacts");
}

TEST_CASE("trajectory gradient: a ball sliding with spin against central differences") {
  // A ball sliding on the ground with a spin that keeps it sliding for the 15 steps: the loss's
  // gradient with respect to its initial velocity, spin and mu.
  const auto bodies = [](const Eigen::Matrix<double, 7, 1>& x) {
    Body ball;
    ball.name = "ball";
    ball.shape.kind = ShapeKind::Sphere;
    ball.shape.size = Eigen::Vector3d(0.1, 0, 0);
    ball.mass = SolidMassProperties(ball.shape, 0.6);
    ball.state.position = Eigen::Vector3d(0, 0, 0.1);
    ball.state.linear_velocity = x.segment<3>(0);
    ball.state.angular_velocity = x.segment<3>(3);
    return std::vector<Body>{Ground(), ball};
  };
  Eigen::Matrix<double, 7, 1> x0;
  x0 << 1.0, 0.4, 0.0, 10.0, -40.0, 3.0, 0.5;
  constexpr int N = 15;
  const auto loss = [&](const Eigen::Matrix<double, 7, 1>& x) {
    ExplicitStepper s(bodies(x), Laws(x[6]), Options());
    for (int k = 0; k < N; ++k) s.Step();
    return s.bodies()[1].state.position.x() + 0.5 * s.bodies()[1].state.position.y();
  };
  ExplicitStepper stepper(bodies(x0), Laws(x0[6]), Options());
  TrajectoryGradientOptions options;
  options.steps = N;
  const TrajectoryGradientResult r = ReverseGradient(
      &stepper,
      [](int step, const Stepper&) -> Eigen::VectorXd {
        if (step != N) return Eigen::VectorXd();
        Eigen::VectorXd g = Eigen::VectorXd::Zero(12);
        g[0] = 1.0;
        g[1] = 0.5;
        return g;
      },
      options);
  CHECK(r.undetermined_steps.empty());
  Eigen::Matrix<double, 7, 1> exact;
  exact << r.initial_state.segment<6>(6), r.parameters[Slot(r.parameter_names, "mu")];
  for (int i = 0; i < 7; ++i) {
    const double eps = 1e-6;
    Eigen::Matrix<double, 7, 1> plus = x0, minus = x0;
    plus[i] += eps;
    minus[i] -= eps;
    const double numeric = (loss(plus) - loss(minus)) / (2 * eps);
    CAPTURE(i);
    CHECK(exact[i] == doctest::Approx(numeric).epsilon(1e-5).scale(1.0));
  }
}

TEST_CASE("explicit stepper: a restored snapshot replays its steps bit for bit") {
  ExplicitStepper stepper(Tumbling(), Laws(0.4), Options());
  for (int k = 0; k < 10; ++k) stepper.Step();
  const std::unique_ptr<StepperSnapshot> snapshot = stepper.Save();
  std::vector<RigidBodyState> first;
  for (int k = 0; k < 20; ++k) stepper.Step();
  for (const Body& b : stepper.bodies()) first.push_back(b.state);
  stepper.Restore(*snapshot);
  CHECK_THROWS_AS(stepper.LastStepDerivative(), InputError);
  for (int k = 0; k < 20; ++k) stepper.Step();
  for (size_t i = 0; i < first.size(); ++i) {
    CHECK(stepper.bodies()[i].state.position == first[i].position);
    CHECK(stepper.bodies()[i].state.angular_velocity == first[i].angular_velocity);
  }
  ExplicitStepper other(Tumbling(), Laws(0.4), Options());
  CHECK_THROWS_AS(other.Restore(*snapshot), InputError);
}

}  // namespace trajectory_gradient_test
}  // namespace ncpkit

namespace ncpkit::trajectory_gradient_test {

TEST_CASE("explicit stepper: SetBodyState moves a body for the next step and refuses bad states") {
  ExplicitStepper stepper(SlidingBox(Eigen::Vector3d::Zero()), Laws(0.5), Options());
  RigidBodyState s = stepper.bodies()[1].state;
  s.linear_velocity = Eigen::Vector3d(1.0, 0, 0);
  stepper.SetBodyState(1, s);
  stepper.Step();
  CHECK(stepper.bodies()[1].state.position.x() > 0.0);
  CHECK_THROWS_AS(stepper.SetBodyState(0, s), InputError);  // the fixed ground
  CHECK_THROWS_AS(stepper.SetBodyState(2, s), InputError);
  RigidBodyState bad = s;
  bad.orientation = Eigen::Quaterniond(2.0, 0, 0, 0);
  CHECK_THROWS_AS(stepper.SetBodyState(1, bad), InputError);
  bad = s;
  bad.angular_velocity.x() = std::nan("");
  CHECK_THROWS_AS(stepper.SetBodyState(1, bad), InputError);
  CHECK_NOTHROW(stepper.LastStepDerivative());  // refused states change nothing
  stepper.SetBodyState(1, s);
  CHECK_THROWS_AS(stepper.LastStepDerivative(), InputError);  // none since the state was set
}

}  // namespace ncpkit::trajectory_gradient_test
