// Derivatives of the implicit stepper's steps: the sliding box's closed forms for backward Euler
// on a line and in the plane, chained over a trajectory; every column of one step's Jacobians
// against central differences of fresh steppers, over random states of boxes, balls and
// cylinders on the ground and on each other (steps whose contacts change within the difference
// are counted, not compared); products against their transposes; gradients of runs of the
// shipped scenes against central differences of whole runs; snapshots; refusals.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "integrators/implicit_stepper.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "integrators/trajectory_derivatives.h"
#include "solvers/base/input_error.h"
#include "tests/integrators/derivative_bodies.h"

namespace ncpkit {
// Named, not anonymous: the unity build puts test files side by side.
namespace implicit_derivative_test {

using derivative_bodies::Box;
using derivative_bodies::Ground;

ImplicitStepperOptions Options() {
  ImplicitStepperOptions options;
  options.h = 0.01;
  options.tolerance = 1e-14;
  return options;
}

struct Setup {
  std::vector<Body> bodies;
  ContactLawTable laws;
  ImplicitStepperOptions options = Options();
  std::vector<Vector6d> impulses;  // per body, or empty
};

// The moving bodies' states after one step, and what tells a changed step from a smooth one:
// the pairs, their contact kinds (active multipliers) and modes.
struct Outcome {
  std::vector<RigidBodyState> states;
  std::vector<int> kinds;
  std::string modes;
  bool solved = false;
};

Outcome StepOnce(const Setup& setup, std::unique_ptr<StepDerivative>* derivative = nullptr) {
  ImplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  const ImplicitStepRecord& record = stepper.Step(setup.impulses);
  Outcome out;
  out.solved = record.summary.IsSolved();
  for (const Body& b : stepper.bodies()) {
    if (!b.fixed) out.states.push_back(b.state);
  }
  for (const ContactRecord& c : record.contacts) {
    out.kinds.insert(out.kinds.end(), {c.body_f, c.body_g, c.n_active_f, c.n_active_g});
  }
  std::unique_ptr<StepDerivative> d;
  if (out.solved) d = stepper.LastStepDerivative();
  if (d != nullptr) out.modes = d->contact_modes();
  if (derivative != nullptr) *derivative = std::move(d);
  return out;
}

Eigen::VectorXd Difference(const Outcome& x, const Outcome& x0) {
  return derivative_bodies::StateDifference(x.states, x0.states);
}

Setup MoveState(Setup s, int index, double delta) {
  derivative_bodies::MoveStateEntry(&s.bodies, index, delta);
  return s;
}

Setup MoveParameter(Setup s, const std::string& name, double delta) {
  ContactLaw& law = s.laws.default_law;
  if (name == "h") s.options.h += delta;
  if (name == "mu") law.mu += delta;
  if (name == "stiffness") law.stiffness += delta;
  if (name == "damping") law.damping += delta;
  if (name == "tangential_stiffness") law.tangential_stiffness += delta;
  if (name == "tangential_damping") law.tangential_damping += delta;
  for (Body& b : s.bodies) {
    if (name == b.name + ".mass") b.mass = SolidMassProperties(b.shape, b.mass.mass + delta);
  }
  return s;
}

Setup MoveCommand(Setup s, int index, double delta) {
  if (s.impulses.empty()) s.impulses.assign(s.bodies.size(), Vector6d::Zero());
  int k = index / 6;
  for (size_t i = 0; i < s.bodies.size(); ++i) {
    if (s.bodies[i].fixed) continue;
    if (k-- == 0) s.impulses[i][index % 6] += delta;
  }
  return s;
}

// Compares a column of the Jacobian with the central difference of `move`; false if a perturbed
// step's pairs, contact kinds or modes differ from the nominal step's. A difference carries the
// curvature's error (~eps^2) and the solver's (its tolerance over eps): where the first step
// size does not agree, one ten times larger and one ten times smaller are tried, and the best
// agreement counts (a wrong column agrees with none).
bool CheckColumn(const Setup& setup, const Outcome& nominal, const Eigen::VectorXd& exact,
                 const std::function<Setup(const Setup&, double)>& move, double eps,
                 const std::string& what, double* worst) {
  const auto same = [&](const Outcome& o) {
    return o.solved && o.kinds == nominal.kinds && o.modes == nominal.modes;
  };
  // The bodies' entries (a layer's carried state after them is checked over whole runs).
  const Eigen::VectorXd bodies = exact.head(12 * static_cast<Eigen::Index>(nominal.states.size()));
  const double scale = std::max(1.0, bodies.cwiseAbs().maxCoeff());
  double error = std::numeric_limits<double>::infinity();
  std::string tried;
  for (const double step : {eps, 10 * eps, 0.1 * eps}) {
    const Outcome plus = StepOnce(move(setup, step)), minus = StepOnce(move(setup, -step));
    if (!same(plus) || !same(minus)) return false;
    const Eigen::VectorXd numeric =
        (Difference(plus, nominal) - Difference(minus, nominal)) / (2 * step);
    error = std::min(error, (bodies - numeric).cwiseAbs().maxCoeff() / scale);
    std::ostringstream line;
    line << "\n numeric (" << step << ") " << numeric.transpose();
    tried += line.str();
    if (error <= 1e-5) break;
  }
  *worst = std::max(*worst, error);
  INFO(what << ": exact " << bodies.transpose() << tried);
  CHECK(error <= 1e-5);
  return true;
}

struct Tally {
  int compared = 0, changed = 0, undetermined = 0;
  double worst = 0.0;
};

void CheckStep(const Setup& setup, Tally* tally) {
  std::unique_ptr<StepDerivative> d;
  const Outcome nominal = StepOnce(setup, &d);
  REQUIRE(nominal.solved);
  if (!d->determined()) {
    ++tally->undetermined;
    return;
  }
  const Eigen::MatrixXd A = d->StateJacobian(), B = d->ParameterJacobian(),
                        C = d->CommandJacobian();
  REQUIRE(A.allFinite());
  const auto count = [&](bool same) { same ? ++tally->compared : ++tally->changed; };
  for (int i = 0; i < 12 * static_cast<int>(nominal.states.size()); ++i) {
    count(CheckColumn(
        setup, nominal, A.col(i), [&](const Setup& s, double e) { return MoveState(s, i, e); },
        1e-7, "state " + std::to_string(i), &tally->worst));
  }
  for (int i = 0; i < d->parameter_size(); ++i) {
    const std::string name = d->parameter_names()[i];
    const double eps =
        name == "h" ? 1e-8 : (name.find("stiffness") != std::string::npos ? 1e-2 : 1e-6);
    count(CheckColumn(
        setup, nominal, B.col(i),
        [&](const Setup& s, double e) { return MoveParameter(s, name, e); }, eps, name,
        &tally->worst));
  }
  for (int i = 0; i < d->command_size(); ++i) {
    count(CheckColumn(
        setup, nominal, C.col(i), [&](const Setup& s, double e) { return MoveCommand(s, i, e); },
        1e-6, "command " + std::to_string(i), &tally->worst));
  }
}

Eigen::VectorXd Chain(const Setup& setup, int steps, const Eigen::VectorXd& ds0,
                      const Eigen::VectorXd& dp) {
  ImplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  Eigen::VectorXd ds = ds0;
  for (int k = 0; k < steps; ++k) {
    stepper.Step();
    ds = stepper.LastStepDerivative()->Jvp(ds, dp, Eigen::VectorXd());
  }
  return ds;
}

Setup SlidingBox(const Eigen::Vector3d& v0) {
  Setup s;
  s.bodies = {Ground(),
              Box("box", Eigen::Vector3d(0.4, 0.3, 0.2), 2.0, Eigen::Vector3d(0, 0, 0.1))};
  s.bodies[1].state.linear_velocity = v0;
  s.laws.default_law.mu = 0.5;
  return s;
}

int Slot(const StepDerivative& d, const std::string& name) {
  const std::vector<std::string>& names = d.parameter_names();
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

TEST_CASE("implicit step derivative: a box sliding on a line, its closed forms over N steps") {
  // Backward Euler: v_k = v0 - k mu g h while it slides, x_N = x0 + N h v0 - mu g h^2 N (N + 1)
  // / 2.
  const Setup setup = SlidingBox(Eigen::Vector3d(2.0, 0, 0));
  const int N = 20;
  const double h = 0.01, g = 9.8;
  std::unique_ptr<StepDerivative> first;
  StepOnce(setup, &first);
  CHECK(first->contact_modes() == "l");
  const int np = first->parameter_size();
  const Eigen::VectorXd by_v0 = Chain(setup, N, Eigen::VectorXd::Unit(12, 6), Eigen::VectorXd());
  CHECK(by_v0[0] == doctest::Approx(N * h).epsilon(1e-9));
  const Eigen::VectorXd by_mu =
      Chain(setup, N, Eigen::VectorXd(), Eigen::VectorXd::Unit(np, Slot(*first, "mu")));
  CHECK(by_mu[0] == doctest::Approx(-0.5 * g * h * h * N * (N + 1)).epsilon(1e-9));
  CHECK(by_mu[6] == doctest::Approx(-g * h * N).epsilon(1e-9));
  const Eigen::VectorXd by_mass =
      Chain(setup, N, Eigen::VectorXd(), Eigen::VectorXd::Unit(np, Slot(*first, "box.mass")));
  CHECK(by_mass.cwiseAbs().maxCoeff() <= 1e-9);
}

TEST_CASE("implicit step derivative: a box sliding in the plane, dx/dv0 = T I - c (I - v v^T)") {
  const Eigen::Vector3d v0(1.5, 1.0, 0.0);
  const Setup setup = SlidingBox(v0);
  const int N = 15;
  const double h = 0.01, g = 9.8, mu = 0.5;
  const Eigen::Vector2d u = v0.head<2>().normalized();
  const Eigen::Matrix2d expected =
      N * h * Eigen::Matrix2d::Identity() - mu * g * h * h * N * (N + 1) / (2 * v0.norm()) *
                                                (Eigen::Matrix2d::Identity() - u * u.transpose());
  for (int axis = 0; axis < 2; ++axis) {
    const Eigen::VectorXd out =
        Chain(setup, N, Eigen::VectorXd::Unit(12, 6 + axis), Eigen::VectorXd());
    CHECK(out[0] == doctest::Approx(expected(0, axis)).epsilon(1e-8));
    CHECK(out[1] == doctest::Approx(expected(1, axis)).epsilon(1e-8));
  }
}

Body Ball(const std::string& name, double radius, double mass) {
  Body ball;
  ball.name = name;
  ball.shape.kind = ShapeKind::Sphere;
  ball.shape.size = Eigen::Vector3d(radius, 0, 0);
  ball.mass = SolidMassProperties(ball.shape, mass);
  return ball;
}

// Random boxes of unequal sizes and masses, turned and offset: one on the ground (sliding or at
// rest, tilted onto an edge or flat), two stacked, a ball on the ground or on a box, a
// cylinder lying on the ground; a compliant layer on some, applied impulses on others.
Setup RandomSetup(int trial, std::mt19937* random) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Setup s;
  s.laws.default_law.mu = 0.3 + 0.3 * (u(*random) + 1.0);
  const Eigen::Vector3d size(0.3 + 0.1 * u(*random), 0.25 + 0.1 * u(*random),
                             0.2 + 0.05 * u(*random));
  Body box = Box("box", size, 1.0 + 0.5 * u(*random), Eigen::Vector3d::Zero());
  const double tilt = trial % 3 == 0 ? 0.2 * u(*random) : 0.0;
  box.state.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(u(*random), Eigen::Vector3d::UnitZ()) *
                         Eigen::AngleAxisd(tilt, Eigen::Vector3d::UnitX()));
  const Eigen::Matrix3d R = box.state.orientation.toRotationMatrix();
  box.state.position =
      Eigen::Vector3d(u(*random), u(*random), R.row(2).cwiseAbs().dot(0.5 * size) + 1e-4);
  box.state.linear_velocity = Eigen::Vector3d(u(*random), u(*random), 0.05 * u(*random));
  box.state.angular_velocity = 0.3 * Eigen::Vector3d(u(*random), u(*random), u(*random));
  s.bodies = {Ground(), box};
  if (trial % 2 == 1) {
    Body top = Box("top", 0.8 * size, 0.5 + 0.3 * (u(*random) + 1.0), Eigen::Vector3d::Zero());
    top.state.orientation =
        box.state.orientation *
        Eigen::Quaterniond(Eigen::AngleAxisd(0.3 * u(*random), Eigen::Vector3d::UnitZ()));
    top.state.position =
        box.state.position + R * Eigen::Vector3d(0.05 * u(*random), 0.05 * u(*random),
                                                 0.5 * size.z() + 0.4 * size.z() + 1e-4);
    top.state.linear_velocity = box.state.linear_velocity;
    s.bodies.push_back(top);
  }
  if (trial % 6 == 5) {
    Body ball = Ball("ball", 0.1 + 0.02 * u(*random), 0.5 + 0.2 * u(*random));
    ball.state.linear_velocity = Eigen::Vector3d(u(*random), u(*random), -0.1);
    ball.state.angular_velocity = Eigen::Vector3d(u(*random), u(*random), u(*random));
    if (trial % 12 == 5) {
      ball.state.position =
          box.state.position +
          R * Eigen::Vector3d(0.05 * u(*random), 0.05 * u(*random), 0.5 * size.z()) +
          Eigen::Vector3d(0, 0, ball.shape.size[0] + 1e-4);
      s.bodies = {Ground(), box, ball};
    } else {
      ball.state.position = Eigen::Vector3d(u(*random), u(*random), ball.shape.size[0] + 1e-4);
      s.bodies = {Ground(), ball};
    }
  }
  if (trial % 8 == 6) {  // a cylinder (axis along body x) lying on the ground, rolling
    Body cylinder;
    cylinder.name = "cylinder";
    cylinder.shape.kind = ShapeKind::Cylinder;
    const double radius = 0.1 + 0.02 * u(*random), length = 0.3 + 0.1 * u(*random);
    cylinder.shape.size = Eigen::Vector3d(radius, length, 0);
    cylinder.mass = SolidMassProperties(cylinder.shape, 1.0 + 0.3 * u(*random));
    cylinder.state.orientation =
        Eigen::Quaterniond(Eigen::AngleAxisd(u(*random), Eigen::Vector3d::UnitZ()));
    cylinder.state.position = Eigen::Vector3d(u(*random), u(*random), radius + 1e-4);
    cylinder.state.linear_velocity = Eigen::Vector3d(0.3 * u(*random), 0.3 * u(*random), 0);
    cylinder.state.angular_velocity = Eigen::Vector3d(0.5 * u(*random), 0.5 * u(*random), 0);
    s.bodies = {Ground(), cylinder};
  }
  if (trial % 8 == 3) {  // a compliant layer with Kelvin-Voigt friction, pressed 2 mm in
    ContactLaw& law = s.laws.default_law;
    law.thickness = 0.005;
    law.stiffness = 5000.0;
    law.damping = 20.0;
    law.tangential_stiffness = 2000.0;
    law.tangential_damping = 10.0;
    for (Body& b : s.bodies) b.state.position.z() += 0.003;
  }
  if (trial % 4 == 2) {
    s.impulses.assign(s.bodies.size(), Vector6d::Zero());
    s.impulses[1] << 0.02 * u(*random), 0.02 * u(*random), 0, 0, 0, 0.01 * u(*random);
  }
  return s;
}

TEST_CASE("implicit step derivative: every Jacobian column against central differences") {
  std::mt19937 random(17);
  Tally tally;
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    CheckStep(RandomSetup(trial, &random), &tally);
  }
  MESSAGE("columns compared: " << tally.compared << ", with a change of contacts: " << tally.changed
                               << ", steps not determined: " << tally.undetermined
                               << ", worst relative error " << tally.worst);
  CHECK(tally.compared >= 4 * tally.changed);
  CHECK(tally.compared >= 200);
}

// Boxes at rest in a column of two or three on the ground (random sizes, masses, turns about z
// and offsets), or a box gliding 1.5 mm above the ground, its pair in the problem but apart, or
// a ball at rest on the ground.
Setup RestingOrApart(int trial, std::mt19937* random) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Setup s;
  s.laws.default_law.mu = 0.3 + 0.3 * (u(*random) + 1.0);
  s.bodies = {Ground()};
  if (trial % 4 == 3) {
    Body box = Box("box", Eigen::Vector3d(0.3, 0.25, 0.2) + 0.05 * Eigen::Vector3d::Random(),
                   1.0 + 0.5 * u(*random), Eigen::Vector3d::Zero());
    box.state.position = Eigen::Vector3d(u(*random), u(*random), 0.5 * box.shape.size.z() + 0.0015);
    box.state.linear_velocity = Eigen::Vector3d(u(*random), u(*random), 0);
    s.bodies.push_back(box);
    return s;
  }
  if (trial % 4 == 2) {
    Body ball = Ball("ball", 0.1 + 0.02 * u(*random), 0.5 + 0.2 * u(*random));
    ball.state.position = Eigen::Vector3d(u(*random), u(*random), ball.shape.size[0]);
    s.bodies.push_back(ball);
    return s;
  }
  const int height = 2 + trial % 2;
  double z = 0.0;
  Eigen::Vector2d centre(u(*random), u(*random));
  for (int k = 0; k < height; ++k) {
    const Eigen::Vector3d size(0.3 + 0.05 * u(*random), 0.3 + 0.05 * u(*random),
                               0.15 + 0.05 * u(*random));
    Body box =
        Box("box" + std::to_string(k), size, 1.0 + 0.5 * u(*random), Eigen::Vector3d::Zero());
    box.state.orientation =
        Eigen::Quaterniond(Eigen::AngleAxisd(0.3 * u(*random), Eigen::Vector3d::UnitZ()));
    centre += 0.03 * Eigen::Vector2d(u(*random), u(*random));
    box.state.position = Eigen::Vector3d(centre.x(), centre.y(), z + 0.5 * size.z());
    z += size.z();
    s.bodies.push_back(box);
  }
  return s;
}

TEST_CASE("implicit step derivative: resting columns, a ball at rest, a pair apart") {
  std::mt19937 random(29);
  Tally tally;
  std::string modes;
  for (int trial = 0; trial < 12; ++trial) {
    CAPTURE(trial);
    const Setup setup = RestingOrApart(trial, &random);
    std::unique_ptr<StepDerivative> d;
    StepOnce(setup, &d);
    modes += d->contact_modes() + " ";
    CheckStep(setup, &tally);
  }
  MESSAGE("modes " << modes << "; columns compared: " << tally.compared
                   << ", with a change of contacts: " << tally.changed << ", steps not determined: "
                   << tally.undetermined << ", worst relative error " << tally.worst);
  // The apart pairs hold their friction at zero; the others stick.
  CHECK(std::count(modes.begin(), modes.end(), 'a') >= 3);
  CHECK(std::count(modes.begin(), modes.end(), 's') >= 10);
  CHECK(tally.compared >= 4 * tally.changed);
  CHECK(tally.compared >= 150);
}

TEST_CASE("implicit step derivative: <v, J w> = <J^T v, w> for the state, parameters, commands") {
  std::mt19937 random(23);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 8; ++trial) {
    std::unique_ptr<StepDerivative> d;
    StepOnce(RandomSetup(trial, &random), &d);
    Eigen::VectorXd ds(d->state_size()), dp(d->parameter_size()), du(d->command_size()),
        v(d->state_size());
    for (Eigen::VectorXd* x : {&ds, &dp, &du, &v}) {
      for (Eigen::Index k = 0; k < x->size(); ++k) (*x)[k] = n(random);
    }
    const double forward = v.dot(d->Jvp(ds, dp, du));
    const StepDerivative::Gradient g = d->Vjp(v);
    const double backward = g.state.dot(ds) + g.parameters.dot(dp) + g.commands.dot(du);
    CHECK(forward == doctest::Approx(backward).epsilon(1e-10));
  }
}

// A shipped scene cut to `duration`, solved to 1e-12, with mu and the first body's start
// velocity moved by the given amounts.
std::string ShippedScene(const std::string& file, double duration, double dmu,
                         const Eigen::Vector3d& dv) {
  std::ifstream in(std::string(NCPKIT_SOURCE_DIR) + "/scenes/" + file);
  nlohmann::json scene = nlohmann::json::parse(in);
  scene["duration"] = duration;
  scene["tolerance"] = 1e-12;
  scene["contact"]["mu"] = scene["contact"]["mu"].get<double>() + dmu;
  nlohmann::json& velocity = scene["bodies"][0]["velocity"];
  for (int k = 0; k < 3; ++k) velocity[k] = velocity[k].get<double>() + dv[k];
  return scene.dump();
}

// The first body's positions after each step of a run, and the run's step derivatives.
std::vector<Eigen::Vector3d> RunScene(const std::string& text, TrajectoryDerivatives* d) {
  const Scene scene = ParseScene(text, "test");
  std::vector<Eigen::Vector3d> positions;
  ncpkit::RunScene(scene, scene.variant(),
                   [&](const StepRecord& record, const SceneRunner& runner) {
                     REQUIRE(record.summary.IsSolved());
                     positions.push_back(runner.stepper().bodies()[0].state.position);
                     if (d != nullptr) d->Add(runner.stepper());
                   });
  return positions;
}

TEST_CASE("implicit trajectories: the shipped scenes' gradients against whole-run differences") {
  // Stretches without a change of contact kind: the cube sliding, the cube rocking on its
  // vertex before it lands on an edge, the cylinder rolling on its line.
  const std::vector<std::pair<std::string, double>> scenes = {
      {"sliding_cube.json", 0.3}, {"toppling_cube.json", 0.2}, {"rolling_cylinder.json", 0.3}};
  for (const auto& scene : scenes) {
    // (Named, not bound: a lambda below captures them.)
    const std::string& file = scene.first;
    const double duration = scene.second;
    CAPTURE(file);
    TrajectoryDerivatives d;
    RunScene(ShippedScene(file, duration, 0.0, Eigen::Vector3d::Zero()), &d);
    const std::string body = file == "rolling_cylinder.json" ? "cylinder" : "cube";
    Eigen::VectorXd at_end = Eigen::VectorXd::Zero(d.steps());
    at_end(d.steps() - 1) = 1.0;
    for (const std::string column : {".x", ".y", ".z"}) {
      const auto gradient = d.Gradient({{body + column, at_end}}, {"mu", body + ".velocity"});
      CHECK(gradient.undetermined_steps.empty());
      const int axis = column[1] - 'x';
      const double eps = 1e-6;
      const auto moved = [&](double dmu, const Eigen::Vector3d& dv) {
        return RunScene(ShippedScene(file, duration, dmu, dv), nullptr).back()[axis];
      };
      const double by_mu =
          (moved(eps, Eigen::Vector3d::Zero()) - moved(-eps, Eigen::Vector3d::Zero())) / (2 * eps);
      INFO(file << column << ": d/dmu " << gradient.values[0].second(0, 0) << " against " << by_mu);
      CHECK(std::abs(gradient.values[0].second(0, 0) - by_mu) <=
            1e-5 * std::max(1.0, std::abs(by_mu)));
      for (int k = 0; k < 3; ++k) {
        const Eigen::Vector3d dv = eps * Eigen::Vector3d::Unit(k);
        const double by_v = (moved(0.0, dv) - moved(0.0, -dv)) / (2 * eps);
        const double exact = gradient.values[1].second(k, 0);
        INFO(column << ": d/dv" << k << " " << exact << " against " << by_v);
        CHECK(std::abs(exact - by_v) <= 1e-5 * std::max(1.0, std::abs(by_v)));
      }
    }
  }
}

TEST_CASE("implicit step derivative: snapshots replay the steps bit for bit") {
  Setup setup = SlidingBox(Eigen::Vector3d(1.0, 0.5, 0));
  setup.bodies[1].state.angular_velocity = Eigen::Vector3d(0, 0, 1.0);
  ImplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  for (int k = 0; k < 5; ++k) stepper.Step();
  const std::unique_ptr<StepperSnapshot> snapshot = stepper.Save();
  std::vector<RigidBodyState> first;
  for (int k = 0; k < 10; ++k) {
    stepper.Step();
    first.push_back(stepper.bodies()[1].state);
  }
  stepper.Restore(*snapshot);
  CHECK_THROWS_AS(stepper.LastStepDerivative(), InputError);
  for (int k = 0; k < 10; ++k) {
    stepper.Step();
    const RigidBodyState& s = stepper.bodies()[1].state;
    CHECK(s.position == first[k].position);
    CHECK(s.orientation.coeffs() == first[k].orientation.coeffs());
    CHECK(s.linear_velocity == first[k].linear_velocity);
    CHECK(s.angular_velocity == first[k].angular_velocity);
  }
}

TEST_CASE("implicit step derivative: refused before a step and after SetBodyState") {
  const Setup setup = SlidingBox(Eigen::Vector3d(1, 0, 0));
  ImplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  CHECK_THROWS_AS(stepper.LastStepDerivative(), InputError);
  stepper.Step();
  CHECK(stepper.LastStepDerivative() != nullptr);
  // SetBodyState moves a body for the next step as a fresh stepper would start it.
  RigidBodyState moved = setup.bodies[1].state;
  moved.linear_velocity.x() = 1.5;
  stepper.SetBodyState(1, moved);
  CHECK_THROWS_AS(stepper.LastStepDerivative(), InputError);
  stepper.Step();
  Setup fresh_setup = setup;
  fresh_setup.bodies[1].state = moved;
  ImplicitStepper fresh(fresh_setup.bodies, fresh_setup.laws, fresh_setup.options);
  fresh.Step();
  CHECK((stepper.bodies()[1].state.position - fresh.bodies()[1].state.position).norm() < 1e-12);
  CHECK_THROWS_AS(stepper.SetBodyState(0, moved), InputError);  // the ground
  moved.orientation.coeffs() *= 2.0;
  CHECK_THROWS_AS(stepper.SetBodyState(1, moved), InputError);
}

// The shipped quasi-rigid box started 2 mm into its layer, sliding and turning, for 50 steps:
// the layer's deflection and elastic displacement carry from step to step (damping and
// Kelvin-Voigt friction), with mu, the layer's coefficients and the start velocity moved.
std::string LayerScene(const std::map<std::string, double>& moved, const Eigen::Vector3d& dv) {
  std::ifstream in(std::string(NCPKIT_SOURCE_DIR) + "/scenes/quasi_rigid_drop.json");
  nlohmann::json scene = nlohmann::json::parse(in);
  scene["duration"] = 0.1;
  scene["tolerance"] = 1e-12;
  scene["impulses"] = nlohmann::json::array();
  nlohmann::json& box = scene["bodies"][0];
  box["position"] = {0.0, 0.0, 0.103};
  box["velocity"] = {0.3 + dv.x(), 0.1 + dv.y(), dv.z()};
  box["angular_velocity"] = {0.0, 0.0, 0.5};
  for (const auto& [name, delta] : moved) {
    nlohmann::json& value =
        name == "mu" ? scene["contact"]["mu"] : scene["contact"]["compliance"][name];
    value = value.get<double>() + delta;
  }
  return scene.dump();
}

TEST_CASE(
    "implicit trajectories: a compliant layer's carried state, against whole-run differences") {
  TrajectoryDerivatives d;
  RunScene(LayerScene({}, Eigen::Vector3d::Zero()), &d);
  REQUIRE(d.steps() == 50);
  const std::vector<std::string> wrt = {
      "mu", "stiffness", "damping", "tangential_stiffness", "tangential_damping", "box.velocity"};
  Eigen::VectorXd at_end = Eigen::VectorXd::Zero(d.steps());
  at_end(d.steps() - 1) = 1.0;
  const double eps = 1e-6;
  int compared = 0;
  for (int axis = 0; axis < 3; ++axis) {
    const std::string column = std::string("box.") + char('x' + axis);
    const auto gradient = d.Gradient({{column, at_end}}, wrt);
    const auto end = [&](const std::map<std::string, double>& moved, const Eigen::Vector3d& dv) {
      return RunScene(LayerScene(moved, dv), nullptr).back()[axis];
    };
    for (size_t i = 0; i + 1 < wrt.size(); ++i) {
      // The stiffnesses are thousands: moved relative to their size.
      const double step = wrt[i].find("stiffness") != std::string::npos ? 1e-3 : eps;
      const double numeric = (end({{wrt[i], step}}, Eigen::Vector3d::Zero()) -
                              end({{wrt[i], -step}}, Eigen::Vector3d::Zero())) /
                             (2 * step);
      const double exact = gradient.values[i].second(0, 0);
      INFO(column << " d/d" << wrt[i] << ": " << exact << " against " << numeric);
      CHECK(std::abs(exact - numeric) <= 1e-4 * std::abs(numeric) + 1e-9);
      ++compared;
    }
    for (int k = 0; k < 3; ++k) {
      const Eigen::Vector3d dv = eps * Eigen::Vector3d::Unit(k);
      const double numeric = (end({}, dv) - end({}, -dv)) / (2 * eps);
      const double exact = gradient.values.back().second(k, 0);
      INFO(column << " d/dv" << k << ": " << exact << " against " << numeric);
      CHECK(std::abs(exact - numeric) <= 1e-4 * std::abs(numeric) + 1e-9);
      ++compared;
    }
  }
  CHECK(compared == 24);
}

}  // namespace implicit_derivative_test
}  // namespace ncpkit
