// Derivatives of the explicit stepper's steps with the soft model, whose contacts carry anchor
// offsets from step to step: trajectories' Jacobians (chained Jvps, the anchors carried between
// the steps) against central differences of whole trajectories over random boxes and balls, at
// rest in their springs, sliding, rocking and stacked; products against their transposes with the
// carried entries; the reverse pass against the forward chain.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "integrators/explicit_stepper.h"
#include "integrators/trajectory_gradient.h"
#include "solvers/base/input_error.h"
#include "tests/integrators/derivative_bodies.h"

namespace ncpkit {
// Named, not anonymous: the unity build puts test files side by side.
namespace soft_derivative_test {

using derivative_bodies::Box;
using derivative_bodies::Ground;

struct Setup {
  std::vector<Body> bodies;
  ContactLawTable laws;
  ExplicitStepperOptions options;
};

// Springs stiff and damped enough to hold the bodies a millimetre deep, soft enough for the
// semi-implicit step to be stable (integrators/explicit/soft.h).
ExplicitStepperOptions SoftOptions() {
  ExplicitStepperOptions options = derivative_bodies::TightOptions();
  options.model = ExplicitModel::Soft;
  options.soft_stiffness = 1e3;
  options.soft_damping = 10.0;
  return options;
}

// Random boxes of unequal sizes and masses, turned and offset, on the ground in their springs'
// reach: sliding, at rest, tilted onto an edge, with a second box on top, or a ball.
Setup RandomSetup(int trial, std::mt19937* random) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Setup s;
  s.options = SoftOptions();
  s.laws.default_law.mu = 0.3 + 0.3 * (u(*random) + 1.0);
  const Eigen::Vector3d size(0.3 + 0.1 * u(*random), 0.25 + 0.1 * u(*random),
                             0.2 + 0.05 * u(*random));
  Body box = Box("box", size, 1.0 + 0.3 * u(*random), Eigen::Vector3d::Zero());
  const double tilt = trial % 3 == 0 ? 0.1 * u(*random) : 0.0;
  box.state.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(u(*random), Eigen::Vector3d::UnitZ()) *
                         Eigen::AngleAxisd(tilt, Eigen::Vector3d::UnitX()));
  const Eigen::Matrix3d R = box.state.orientation.toRotationMatrix();
  box.state.position =
      Eigen::Vector3d(u(*random), u(*random), R.row(2).cwiseAbs().dot(0.5 * size) - 1e-3);
  const double speed = trial % 4 == 0 ? 0.0 : 1.0;
  box.state.linear_velocity = Eigen::Vector3d(speed * u(*random), speed * u(*random), 0.0);
  box.state.angular_velocity = speed * 0.3 * Eigen::Vector3d(0, 0, u(*random));
  s.bodies = {Ground(), box};
  if (trial % 4 == 1) {
    Body top = Box("top", 0.8 * size, 0.5 + 0.2 * (u(*random) + 1.0), Eigen::Vector3d::Zero());
    top.state.orientation =
        box.state.orientation *
        Eigen::Quaterniond(Eigen::AngleAxisd(0.3 * u(*random), Eigen::Vector3d::UnitZ()));
    top.state.position =
        box.state.position + R * Eigen::Vector3d(0.03 * u(*random), 0.03 * u(*random),
                                                 0.5 * size.z() + 0.4 * size.z() - 1e-3);
    top.state.linear_velocity = box.state.linear_velocity;
    s.bodies.push_back(top);
  }
  if (trial % 6 == 5) {  // a ball, rolling and sliding on the ground
    Body ball;
    ball.name = "ball";
    ball.shape.kind = ShapeKind::Sphere;
    ball.shape.size = Eigen::Vector3d(0.1 + 0.02 * u(*random), 0, 0);
    ball.mass = SolidMassProperties(ball.shape, 0.5 + 0.2 * u(*random));
    ball.state.position = Eigen::Vector3d(u(*random), u(*random), ball.shape.size[0] - 1e-3);
    ball.state.linear_velocity = Eigen::Vector3d(u(*random), u(*random), 0.0);
    ball.state.angular_velocity = Eigen::Vector3d(u(*random), u(*random), u(*random));
    s.bodies = {Ground(), ball};
  }
  return s;
}

// A run of `steps` steps: the moving bodies' final states, every step's contact modes (a
// change of contacts or modes along the run is beyond a derivative) and, if asked, each step's
// derivative.
struct Run {
  std::vector<RigidBodyState> states;
  std::string modes;
};

Run RunSteps(const Setup& setup, int steps,
             std::vector<std::unique_ptr<StepDerivative>>* derivatives = nullptr) {
  ExplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  Run run;
  for (int k = 0; k < steps; ++k) {
    REQUIRE(stepper.Step().summary.IsSolved());
    std::unique_ptr<StepDerivative> d = stepper.LastStepDerivative();
    run.modes += d->contact_modes() + "|";
    if (derivatives != nullptr) derivatives->push_back(std::move(d));
  }
  for (const Body& b : stepper.bodies()) {
    if (!b.fixed) run.states.push_back(b.state);
  }
  return run;
}

// End state minus end state, in the derivatives' coordinates.
Eigen::VectorXd Difference(const Run& x, const Run& x0) {
  return derivative_bodies::StateDifference(x.states, x0.states);
}

// The setup with its start state entry `index` or parameter `name` moved by `delta`.
Setup MoveState(Setup s, int index, double delta) {
  derivative_bodies::MoveStateEntry(&s.bodies, index, delta);
  return s;
}

Setup MoveParameter(Setup s, const std::string& name, double delta) {
  if (name == "h") s.options.h += delta;
  if (name == "mu") s.laws.default_law.mu += delta;
  if (name == "soft_stiffness") s.options.soft_stiffness += delta;
  if (name == "soft_damping") s.options.soft_damping += delta;
  for (Body& b : s.bodies) {
    if (name == b.name + ".mass") b.mass = SolidMassProperties(b.shape, b.mass.mass + delta);
  }
  return s;
}

// The run's end state's change for a start change (ds of the state, dp), chaining each step's
// Jvp with the entries the steps carry.
Eigen::VectorXd Chain(const std::vector<std::unique_ptr<StepDerivative>>& steps,
                      const Eigen::VectorXd& ds0, const Eigen::VectorXd& dp) {
  Eigen::VectorXd ds = ds0;
  for (const std::unique_ptr<StepDerivative>& d : steps) ds = d->Jvp(ds, dp, Eigen::VectorXd());
  return ds.head(steps.back()->state_size());
}

struct Tally {
  int compared = 0, changed = 0, carried = 0;
};

// Compares a column of the run's Jacobian with the central difference of `move` (by `eps`),
// scaled by `scale` (a parameter's value: its columns compare as d/d log p); false if a
// perturbed run's modes differ.
bool CheckColumn(const Setup& setup, const Run& nominal, int steps, const Eigen::VectorXd& exact,
                 const std::function<Setup(const Setup&, double)>& move, double eps, double scale,
                 const std::string& what) {
  const Run plus = RunSteps(move(setup, eps), steps), minus = RunSteps(move(setup, -eps), steps);
  if (plus.modes != nominal.modes || minus.modes != nominal.modes) return false;
  const Eigen::VectorXd numeric =
      scale * (Difference(plus, nominal) - Difference(minus, nominal)) / (2 * eps);
  const Eigen::VectorXd scaled = scale * exact;
  INFO(what << ": exact " << scaled.transpose() << "\n numeric " << numeric.transpose());
  CHECK((scaled - numeric).cwiseAbs().maxCoeff() <=
        1e-5 * std::max(1.0, scaled.cwiseAbs().maxCoeff()));
  return true;
}

// Every column of the Jacobians of a run's end state with respect to its start state and the
// parameters. (Differences of 1e-7 in the state: a stack's springs make the run's second
// derivatives large enough that 1e-6 leaves a truncation error above the tolerance.)
void CheckRun(const Setup& setup, int steps, Tally* tally) {
  std::vector<std::unique_ptr<StepDerivative>> d;
  const Run nominal = RunSteps(setup, steps, &d);
  for (const std::unique_ptr<StepDerivative>& step : d) {
    if (!step->carried_in_names().empty()) ++tally->carried;
  }
  const auto count = [&](bool same) { same ? ++tally->compared : ++tally->changed; };
  const int n = d.front()->state_size();
  for (int i = 0; i < n; ++i) {
    const Eigen::VectorXd exact = Chain(d, Eigen::VectorXd::Unit(n, i), Eigen::VectorXd());
    count(CheckColumn(
        setup, nominal, steps, exact, [&](const Setup& s, double e) { return MoveState(s, i, e); },
        1e-7, 1.0, "state " + std::to_string(i)));
  }
  const std::vector<std::string>& names = d.front()->parameter_names();
  for (int i = 0; i < d.front()->parameter_size(); ++i) {
    if (names[i] == "restitution") continue;  // the soft model reads none
    const double value = names[i] == "soft_stiffness" ? setup.options.soft_stiffness
                         : names[i] == "soft_damping" ? setup.options.soft_damping
                                                      : 1.0;
    const double eps = names[i] == "h" ? 1e-8 : 1e-6 * value;
    const Eigen::VectorXd exact =
        Chain(d, Eigen::VectorXd(), Eigen::VectorXd::Unit(d.front()->parameter_size(), i));
    count(CheckColumn(
        setup, nominal, steps, exact,
        [&](const Setup& s, double e) { return MoveParameter(s, names[i], e); }, eps, value,
        names[i]));
  }
}

TEST_CASE("soft step derivative: trajectories' Jacobians against central differences") {
  std::mt19937 random(31);
  Tally tally;
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    CheckRun(RandomSetup(trial, &random), 12, &tally);
  }
  MESSAGE("soft model: columns compared " << tally.compared << ", with a change of modes "
                                          << tally.changed << "; steps carrying anchors in "
                                          << tally.carried);
  CHECK(tally.compared >= 4 * tally.changed);
  CHECK(tally.compared >= 300);
  CHECK(tally.carried >= 200);  // the anchors' chain is what is checked
}

TEST_CASE("soft step derivative: a box dropped onto its springs, by its own recursion") {
  // Four corners' springs alone hold a unit box dropped flat (nothing slides or turns): with
  // depth = 0.5 - z, a step is
  //   v+ = v - h g + (4 h / m) max(0, K_p depth - K_d v) (while depth > 0),  z+ = z + h v+,
  // and its derivatives with respect to K_p, K_d, m and v_0 follow the same recursion by hand.
  Setup setup;
  setup.options = SoftOptions();
  setup.options.soft_stiffness = 5e3;
  setup.options.soft_damping = 50.0;
  setup.laws.default_law.mu = 0.5;
  setup.bodies = {Ground(), Box("box", Eigen::Vector3d(1, 1, 1), 2.0, Eigen::Vector3d(0, 0, 0.5))};
  setup.bodies[1].state.linear_velocity = Eigen::Vector3d(0, 0, -0.4);
  const double h = setup.options.h, g = 9.8, k = 5e3, d = 50.0, m = 2.0;
  const int steps = 40;
  // Forward sensitivities (dz, dv) for the inputs K_p, K_d, m, v_0.
  double z = 0.5, v = -0.4;
  Eigen::Vector4d dz = Eigen::Vector4d::Zero(), dv(0, 0, 0, 1);
  bool clamped = false, lifted = false;
  for (int n = 0; n < steps; ++n) {
    const double depth = 0.5 - z, force = k * depth - d * v;
    if (depth > 0.0 && force > 0.0) {
      const Eigen::Vector4d dforce = Eigen::Vector4d(depth, -v, 0, 0) - k * dz - d * dv;
      dv += 4 * h / m * dforce - Eigen::Vector4d(0, 0, 4 * h * force / (m * m), 0);
      v += -h * g + 4 * h / m * force;
    } else {
      clamped = clamped || depth > 0.0;
      lifted = lifted || depth <= 0.0;
      v -= h * g;
    }
    z += h * v;
    dz += h * dv;
  }
  CHECK(clamped);  // the run crosses every branch
  CHECK(lifted);
  std::vector<std::unique_ptr<StepDerivative>> derivatives;
  const Run run = RunSteps(setup, steps, &derivatives);
  CHECK(run.states[0].position.z() == doctest::Approx(z).epsilon(1e-12));
  const std::vector<std::string>& names = derivatives.front()->parameter_names();
  const auto slot = [&](const std::string& name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const int p = derivatives.front()->parameter_size();
  const int columns[3] = {slot("soft_stiffness"), slot("soft_damping"), slot("box.mass")};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(columns[i] < p);
    CHECK(Chain(derivatives, {}, Eigen::VectorXd::Unit(p, columns[i]))[2] ==
          doctest::Approx(dz[i]).epsilon(1e-9));
  }
  CHECK(Chain(derivatives, Eigen::VectorXd::Unit(12, 8), {})[2] ==
        doctest::Approx(dz[3]).epsilon(1e-9));
}

TEST_CASE("soft step derivative: <v, J w> = <J^T v, w> with the entries the steps carry") {
  std::mt19937 random(37);
  std::normal_distribution<double> n(0.0, 1.0);
  int carried = 0;
  for (int trial = 0; trial < 12; ++trial) {
    CAPTURE(trial);
    std::vector<std::unique_ptr<StepDerivative>> d;
    RunSteps(RandomSetup(trial, &random), 6, &d);
    const StepDerivative& step = *d.back();
    carried += !step.carried_in_names().empty() && !step.carried_out_names().empty();
    Eigen::VectorXd ds(step.input_size()), dp(step.parameter_size()), du(step.command_size()),
        v(step.output_size());
    for (Eigen::VectorXd* x : {&ds, &dp, &du, &v}) {
      for (Eigen::Index k = 0; k < x->size(); ++k) (*x)[k] = n(random);
    }
    const double forward = v.dot(step.Jvp(ds, dp, du));
    const StepDerivative::Gradient g = step.Vjp(v);
    REQUIRE(g.state.size() == step.input_size());
    const double backward = g.state.dot(ds) + g.parameters.dot(dp) + g.commands.dot(du);
    CHECK(forward == doctest::Approx(backward).epsilon(1e-10));
    // Without the carried entries, the state alone.
    const Eigen::VectorXd state = step.Jvp(ds.head(step.state_size()), dp, du);
    CHECK(state.size() == step.output_size());
    CHECK(step.Vjp(v.head(step.state_size())).state.size() == step.input_size());
  }
  CHECK(carried >= 10);
}

TEST_CASE("soft step derivative: the reverse pass, with and without checkpoints, is the chain's") {
  std::mt19937 random(41);
  for (int trial = 0; trial < 6; ++trial) {
    CAPTURE(trial);
    const Setup setup = RandomSetup(trial, &random);
    const int steps = 15;
    std::vector<std::unique_ptr<StepDerivative>> d;
    RunSteps(setup, steps, &d);
    // L = the first moving body's final x plus its final vy.
    Eigen::VectorXd weights = Eigen::VectorXd::Zero(d.back()->state_size());
    weights[0] = 1.0;
    weights[7] = 1.0;
    const LossGradient loss = [&](int k, const Stepper&) {
      return k == steps ? weights : Eigen::VectorXd();
    };
    for (const int interval : {0, 4}) {
      CAPTURE(interval);
      ExplicitStepper stepper(setup.bodies, setup.laws, setup.options);
      TrajectoryGradientOptions options;
      options.steps = steps;
      options.checkpoint_interval = interval;
      const TrajectoryGradientResult r = ReverseGradient(&stepper, loss, options);
      REQUIRE(r.initial_state.size() == d.front()->state_size());
      for (int i = 0; i < d.front()->state_size(); ++i) {
        const double forward =
            weights.dot(Chain(d, Eigen::VectorXd::Unit(d.front()->state_size(), i), {}));
        CHECK(r.initial_state[i] == doctest::Approx(forward).epsilon(1e-9).scale(1.0));
      }
      for (int i = 0; i < d.front()->parameter_size(); ++i) {
        const double forward =
            weights.dot(Chain(d, {}, Eigen::VectorXd::Unit(d.front()->parameter_size(), i)));
        CHECK(r.parameters[i] == doctest::Approx(forward).epsilon(1e-9).scale(1.0));
      }
    }
  }
}

TEST_CASE("soft step derivative: steps that do not follow each other do not chain") {
  std::mt19937 random(43);
  const Setup setup = RandomSetup(2, &random);
  std::vector<std::unique_ptr<StepDerivative>> d;
  RunSteps(setup, 6, &d);
  REQUIRE_FALSE(d[4]->carried_out_names().empty());
  const std::vector<Eigen::VectorXd> losses(3, Eigen::VectorXd());
  CHECK_NOTHROW(ReverseThrough({d[3].get(), d[4].get()}, losses));
  // Step 2's derivative carries what step 3 left, not step 4: refused by name.
  std::vector<Eigen::VectorXd> end(3, Eigen::VectorXd());
  end[2] = Eigen::VectorXd::Ones(d[4]->output_size());
  CHECK_THROWS_WITH_AS(ReverseThrough({d[2].get(), d[4].get()}, end),
                       doctest::Contains("does not start from the entries"), InputError);
}

}  // namespace soft_derivative_test
}  // namespace ncpkit
