// Derivatives of the explicit stepper's steps (the cone, pyramid and relaxed models): the sliding
// box's closed forms on a line and in the plane, chained over the steps of a trajectory; every
// column of one step's Jacobians against central differences of fresh steppers, over random states
// of boxes on the ground and on each other (steps whose contacts change within the difference are
// counted, not compared; at a kink, a one-sided difference); products against their transposes.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "contact/distance.h"
#include "integrators/explicit/step_derivative.h"
#include "integrators/explicit_stepper.h"
#include "solvers/base/input_error.h"
#include "tests/integrators/derivative_bodies.h"

namespace ncpkit {
// Named, not anonymous: the unity build puts test files side by side.
namespace step_derivative_test {

using derivative_bodies::Box;
using derivative_bodies::Ground;

// Tight solves of `model`'s problems: FCLib error 1e-12 for the cone, the convex model's own
// error 1e-12 for convex, Lemke's pivots for the pyramid and relaxed models' LCPs.
ExplicitStepperOptions Options(ExplicitModel model = ExplicitModel::Cone) {
  ExplicitStepperOptions options = derivative_bodies::TightOptions();
  options.model = model;
  if (model == ExplicitModel::Pyramid || model == ExplicitModel::Relaxed) options.solver = "lemke";
  return options;
}

// A scene and the inputs of its first step, which the checks perturb.
struct Setup {
  std::vector<Body> bodies;
  ContactLawTable laws;
  ExplicitStepperOptions options;
  std::vector<Vector6d> impulses;  // per body, or empty
};

// The state of the moving bodies after one step from `setup`, and the step's contact count and
// the features of its contacts (for telling a changed step from a smooth one).
struct Outcome {
  std::vector<RigidBodyState> states;
  std::vector<ContactFeature::Kind> kinds;
  std::vector<Eigen::Vector3d> feature_points;
  std::string modes;  // StepDerivative::contact_modes()
  bool solved = false;
};

Outcome StepOnce(const Setup& setup, std::unique_ptr<StepDerivative>* derivative = nullptr) {
  ExplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  const StepRecord& record = stepper.Step(setup.impulses);
  Outcome out;
  out.solved = record.summary.IsSolved();
  for (const Body& b : stepper.bodies()) {
    if (!b.fixed) out.states.push_back(b.state);
  }
  for (const ExplicitContact& c : stepper.record().contacts) {
    out.kinds.push_back(c.point.feature.kind);
    const std::vector<Body>& bodies = stepper.bodies();
    out.feature_points.push_back(
        c.point.feature.Expand(bodies[c.body_a].shape, bodies[c.body_b].shape).point);
  }
  std::unique_ptr<StepDerivative> d;
  if (out.solved) d = stepper.LastStepDerivative();
  if (d != nullptr) out.modes = d->contact_modes();
  if (derivative != nullptr) *derivative = std::move(d);
  return out;
}

// s+ - s+_0 in the derivative's coordinates.
Eigen::VectorXd Difference(const Outcome& x, const Outcome& x0) {
  return derivative_bodies::StateDifference(x.states, x0.states);
}

bool SameContacts(const Outcome& a, const Outcome& b) {
  if (a.kinds != b.kinds || a.modes != b.modes) return false;
  for (size_t k = 0; k < a.feature_points.size(); ++k) {
    if ((a.feature_points[k] - b.feature_points[k]).norm() > 0.0) return false;
  }
  return true;
}

// The setup with state entry `index` (derivative coordinates) moved by `delta`.
Setup MoveState(Setup s, int index, double delta) {
  derivative_bodies::MoveStateEntry(&s.bodies, index, delta);
  return s;
}

// The setup with parameter `name` moved by `delta`.
Setup MoveParameter(Setup s, const std::string& name, double delta) {
  if (name == "h") s.options.h += delta;
  if (name == "mu") s.laws.default_law.mu += delta;
  if (name == "restitution") s.laws.default_law.restitution += delta;
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

// Compares column `column` of `exact` with the central difference of `move`; false if the
// perturbed steps' contacts or their modes differ from the nominal step's. Where the central
// difference disagrees, the step must sit on a kink, naming its degenerate contacts: with one,
// the derivative must be one of the one-sided ones (second-order differences on each side); with
// several, the rule's piece may be neither side's of this column (counted in *kinks all the
// same, and reported).
bool CheckColumn(const Setup& setup, const Outcome& nominal, const Eigen::VectorXd& exact,
                 const std::function<Setup(const Setup&, double)>& move, double eps,
                 const std::string& what, const std::vector<std::string>& degenerate, int* kinks) {
  const Outcome plus = StepOnce(move(setup, eps)), minus = StepOnce(move(setup, -eps));
  if (!plus.solved || !minus.solved || !SameContacts(plus, nominal) ||
      !SameContacts(minus, nominal)) {
    return false;
  }
  const Eigen::VectorXd numeric =
      (Difference(plus, nominal) - Difference(minus, nominal)) / (2 * eps);
  const double scale = std::max(1.0, exact.cwiseAbs().maxCoeff());
  const double tolerance = 1e-5 * scale;
  INFO(what << ": exact " << exact.transpose() << "\n numeric " << numeric.transpose());
  if ((exact - numeric).cwiseAbs().maxCoeff() <= tolerance) return true;
  REQUIRE_FALSE(degenerate.empty());
  ++*kinks;
  if (degenerate.size() > 1) return true;
  const Outcome plus2 = StepOnce(move(setup, 2 * eps)), minus2 = StepOnce(move(setup, -2 * eps));
  REQUIRE((plus2.solved && minus2.solved && SameContacts(plus2, nominal) &&
           SameContacts(minus2, nominal)));
  const Eigen::VectorXd ahead =
      (4 * Difference(plus, nominal) - Difference(plus2, nominal)) / (2 * eps);
  const Eigen::VectorXd behind =
      (Difference(minus2, nominal) - 4 * Difference(minus, nominal)) / (2 * eps);
  INFO(" ahead " << ahead.transpose() << "\n behind " << behind.transpose());
  CHECK(std::min((exact - ahead).cwiseAbs().maxCoeff(), (exact - behind).cwiseAbs().maxCoeff()) <=
        tolerance);
  return true;
}

// What CheckStep() counts: columns compared (kinks among them: steps with degenerate contacts
// whose central difference differs), columns whose perturbed steps changed contacts or modes,
// steps not determined by their data.
struct Tally {
  int compared = 0, kinks = 0, changed = 0, undetermined = 0;
};

std::ostream& operator<<(std::ostream& out, const Tally& t) {
  return out << "columns compared: " << t.compared << " (at a kink: " << t.kinks
             << "), with a change of contacts: " << t.changed
             << "; steps not determined by their data: " << t.undetermined;
}

// Every column of the first step's three Jacobians against central differences, into *tally.
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
  const std::vector<std::string>& degenerate = d->degenerate_contacts();
  const auto count = [&](bool same) { same ? ++tally->compared : ++tally->changed; };
  for (int i = 0; i < d->state_size(); ++i) {
    count(CheckColumn(
        setup, nominal, A.col(i), [&](const Setup& s, double e) { return MoveState(s, i, e); },
        1e-6, "state " + std::to_string(i), degenerate, &tally->kinks));
  }
  for (int i = 0; i < d->parameter_size(); ++i) {
    const std::string name = d->parameter_names()[i];
    if (name == "restitution" && setup.laws.default_law.restitution == 0.0) continue;
    const double eps = name == "h" ? 1e-8 : 1e-6;
    count(CheckColumn(
        setup, nominal, B.col(i),
        [&](const Setup& s, double e) { return MoveParameter(s, name, e); }, eps, name, degenerate,
        &tally->kinks));
  }
  for (int i = 0; i < d->command_size(); ++i) {
    count(CheckColumn(
        setup, nominal, C.col(i), [&](const Setup& s, double e) { return MoveCommand(s, i, e); },
        1e-6, "command " + std::to_string(i), degenerate, &tally->kinks));
  }
}

// ds_N of a trajectory of `steps` steps from `setup` for the start change (ds, dp), chaining
// each step's Jvp.
Eigen::VectorXd Chain(const Setup& setup, int steps, const Eigen::VectorXd& ds0,
                      const Eigen::VectorXd& dp) {
  ExplicitStepper stepper(setup.bodies, setup.laws, setup.options);
  Eigen::VectorXd ds = ds0;
  for (int k = 0; k < steps; ++k) {
    stepper.Step();
    ds = stepper.LastStepDerivative()->Jvp(ds, dp, Eigen::VectorXd());
  }
  return ds;
}

Setup SlidingBox(const Eigen::Vector3d& v0, ExplicitModel model = ExplicitModel::Cone) {
  Setup s;
  s.bodies = {Ground(),
              Box("box", Eigen::Vector3d(0.4, 0.3, 0.2), 2.0, Eigen::Vector3d(0, 0, 0.1))};
  s.bodies[1].state.linear_velocity = v0;
  s.laws.default_law.mu = 0.5;
  s.options = Options(model);
  return s;
}

// v_k = v0 - k mu g h while it slides, x_N = x0 + N h v0 - mu g h^2 N (N + 1) / 2.
void CheckSlidingOnALine(ExplicitModel model) {
  const std::string model_name = ToString(model);
  CAPTURE(model_name);
  const Setup setup = SlidingBox(Eigen::Vector3d(2.0, 0, 0), model);
  const int N = 20;
  const double h = 0.01, g = 9.8;
  Eigen::VectorXd dv0 = Eigen::VectorXd::Zero(12);
  dv0[6] = 1.0;
  std::unique_ptr<StepDerivative> first;
  StepOnce(setup, &first);
  const std::vector<std::string>& names = first->parameter_names();
  const auto slot = [&](const std::string& name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const Eigen::VectorXd by_v0 = Chain(setup, N, dv0, Eigen::VectorXd());
  CHECK(by_v0[0] == doctest::Approx(N * h).epsilon(1e-9));
  const Eigen::VectorXd by_mu =
      Chain(setup, N, Eigen::VectorXd(), Eigen::VectorXd::Unit(names.size(), slot("mu")));
  CHECK(by_mu[0] == doctest::Approx(-0.5 * g * h * h * N * (N + 1)).epsilon(1e-9));
  CHECK(by_mu[6] == doctest::Approx(-g * h * N).epsilon(1e-9));
  const Eigen::VectorXd by_mass =
      Chain(setup, N, Eigen::VectorXd(), Eigen::VectorXd::Unit(names.size(), slot("box.mass")));
  CHECK(by_mass.cwiseAbs().maxCoeff() <= 1e-10);
}

TEST_CASE("explicit step derivative: a box sliding on a line, its closed forms over N steps") {
  CheckSlidingOnALine(ExplicitModel::Cone);
  // One of the pyramid's four edges points against x (the ground's tangents are y and -x), so
  // its friction is the cone's.
  CheckSlidingOnALine(ExplicitModel::Pyramid);
}

TEST_CASE("explicit step derivative: a box sliding in the plane, dx/dv0 = T I - c (I - v v^T)") {
  // v_k = v0 - k mu g h v^ (direction fixed), so dx_N/dv0 = N h I - mu g h^2 N (N + 1) /
  // (2 |v0|) (I - v^ v^^T) in the plane.
  const Eigen::Vector3d v0(1.5, 1.0, 0.0);
  const Setup setup = SlidingBox(v0);
  const int N = 15;
  const double h = 0.01, g = 9.8, mu = 0.5;
  const Eigen::Vector2d u = v0.head<2>().normalized();
  const Eigen::Matrix2d expected =
      N * h * Eigen::Matrix2d::Identity() - mu * g * h * h * N * (N + 1) / (2 * v0.norm()) *
                                                (Eigen::Matrix2d::Identity() - u * u.transpose());
  for (int axis = 0; axis < 2; ++axis) {
    const Eigen::VectorXd ds = Eigen::VectorXd::Unit(12, 6 + axis);
    const Eigen::VectorXd out = Chain(setup, N, ds, Eigen::VectorXd());
    CHECK(out[0] == doctest::Approx(expected(0, axis)).epsilon(1e-8));
    CHECK(out[1] == doctest::Approx(expected(1, axis)).epsilon(1e-8));
  }
}

// Random boxes of unequal sizes and masses, turned and offset: one on the ground (sliding or
// at rest, tilted onto an edge or flat), or two stacked.
Setup RandomSetup(int trial, std::mt19937* random, ExplicitModel model = ExplicitModel::Cone) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Setup s;
  s.options = Options(model);
  s.laws.default_law.mu = 0.3 + 0.3 * (u(*random) + 1.0);
  // Restitution on some (a coefficient of 0 is the edge of its range, one-sided).
  s.laws.default_law.restitution = trial % 4 == 1 ? 0.3 : 0.0;
  const Eigen::Vector3d size(0.3 + 0.1 * u(*random), 0.25 + 0.1 * u(*random),
                             0.2 + 0.05 * u(*random));
  Body box = Box("box", size, 1.0 + 0.5 * u(*random), Eigen::Vector3d::Zero());
  const double tilt = trial % 3 == 0 ? 0.2 * u(*random) : 0.0;
  box.state.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(u(*random), Eigen::Vector3d::UnitZ()) *
                         Eigen::AngleAxisd(tilt, Eigen::Vector3d::UnitX()));
  const Eigen::Matrix3d R = box.state.orientation.toRotationMatrix();
  box.state.position =
      Eigen::Vector3d(u(*random), u(*random), R.row(2).cwiseAbs().dot(0.5 * size) - 1e-4);
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
                                                 0.5 * size.z() + 0.4 * size.z() - 1e-4);
    top.state.linear_velocity = box.state.linear_velocity;
    s.bodies.push_back(top);
  }
  if (trial % 6 == 5) {  // a ball rolling on the box or, alone, on the ground
    Body ball;
    ball.name = "ball";
    ball.shape.kind = ShapeKind::Sphere;
    ball.shape.size = Eigen::Vector3d(0.1 + 0.02 * u(*random), 0, 0);
    ball.mass = SolidMassProperties(ball.shape, 0.5 + 0.2 * u(*random));
    ball.state.linear_velocity = Eigen::Vector3d(u(*random), u(*random), -0.1);
    ball.state.angular_velocity = Eigen::Vector3d(u(*random), u(*random), u(*random));
    if (trial % 12 == 5) {
      ball.state.position =
          box.state.position +
          R * Eigen::Vector3d(0.05 * u(*random), 0.05 * u(*random), 0.5 * size.z()) +
          Eigen::Vector3d(0, 0, ball.shape.size[0] - 1e-4);
      s.bodies = {Ground(), box, ball};
    } else {
      ball.state.position = Eigen::Vector3d(u(*random), u(*random), ball.shape.size[0] - 1e-4);
      s.bodies = {Ground(), ball};
    }
  }
  if (trial % 4 == 2) {
    s.impulses.assign(s.bodies.size(), Vector6d::Zero());
    s.impulses[1] << 0.02 * u(*random), 0.02 * u(*random), 0, 0, 0, 0.01 * u(*random);
  }
  if (trial % 3 == 1) {
    // The ground listed last: then it is the contacts' body B (the pair's second), whose face
    // the moving body's vertices touch from the other side of the pair.
    std::rotate(s.bodies.begin(), s.bodies.begin() + 1, s.bodies.end());
    if (!s.impulses.empty())
      std::rotate(s.impulses.begin(), s.impulses.begin() + 1, s.impulses.end());
  }
  return s;
}

TEST_CASE("explicit step derivative: every Jacobian column against central differences") {
  std::mt19937 random(17);
  Tally tally;
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    CheckStep(RandomSetup(trial, &random), &tally);
  }
  MESSAGE(tally);
  const int compared = tally.compared;
  CHECK(compared >= 4 * tally.changed);
  // A floor on the columns compared, so that the test keeps its reach: which steps change mode
  // or are not determined moves with the compiler's rounding (315 columns with GCC's Release
  // build, 238 with Clang's sanitizer build).
  CHECK(compared >= 200);
}

// Boxes resting in a stack on the ground, at rest: flush and equal (a settled stack's boxes), or
// of random sizes and masses, turned about z and offset a little; each 1e-5 inside the one below.
Setup RestingStack(int trial, std::mt19937* random, ExplicitModel model = ExplicitModel::Cone) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const bool flush = trial % 3 != 2;
  Setup s;
  s.options = Options(model);
  s.laws.default_law.mu = 0.5;
  s.bodies = {Ground()};
  double z = 0.0;
  // (Random boxes two at a time: three make the tight solves of the perturbed steps take
  // seconds.)
  const int count = flush ? 2 + trial % 2 : 2;
  for (int i = 0; i < count; ++i) {
    const Eigen::Vector3d size =
        flush ? Eigen::Vector3d(0.2, 0.2, 0.2)
              : Eigen::Vector3d(0.2 + 0.05 * u(*random), 0.2 + 0.05 * u(*random), 0.15);
    z += 0.5 * size.z() - 1e-5;
    Body box =
        Box("b" + std::to_string(i), size, flush ? 1.0 : 1.0 + 0.5 * u(*random),
            Eigen::Vector3d(flush ? 0.0 : 0.01 * u(*random), flush ? 0.0 : 0.01 * u(*random), z));
    if (!flush) {
      box.state.orientation =
          Eigen::Quaterniond(Eigen::AngleAxisd(0.1 * u(*random), Eigen::Vector3d::UnitZ()));
    }
    s.bodies.push_back(box);
    z += 0.5 * size.z();
  }
  return s;
}

TEST_CASE("explicit step derivative: resting stacks against central differences") {
  std::mt19937 random(23);
  Tally tally;
  for (int trial = 0; trial < 6; ++trial) {
    CAPTURE(trial);
    CheckStep(RestingStack(trial, &random), &tally);
  }
  MESSAGE("resting stacks: " << tally);
  const int compared = tally.compared, changed = tally.changed;
  // 220 of 278 with GCC's Release build; the others' perturbed steps find other contacts.
  CHECK(compared >= 3 * changed);
  CHECK(compared >= 150);  // a floor that keeps the reach under other compilers' rounding
}

TEST_CASE(
    "explicit step derivative: the pyramid, relaxed and convex models against central "
    "differences") {
  for (const ExplicitModel model :
       {ExplicitModel::Pyramid, ExplicitModel::Relaxed, ExplicitModel::Convex}) {
    const std::string model_name = ToString(model);
    CAPTURE(model_name);
    std::mt19937 random(29);
    Tally tally;
    for (int trial = 0; trial < 24; ++trial) {
      CAPTURE(trial);
      CheckStep(RandomSetup(trial, &random, model), &tally);
    }
    for (int trial = 0; trial < 3; ++trial) {
      CAPTURE(trial);
      CheckStep(RestingStack(trial, &random, model), &tally);
    }
    MESSAGE(model_name << ": " << tally);
    CHECK(tally.compared >= 4 * tally.changed);
    CHECK(tally.kinks <= tally.compared / 20);
    CHECK(tally.compared >= 200);
  }
}

TEST_CASE("explicit step derivative: <v, J w> = <J^T v, w> for the state, parameters, commands") {
  std::mt19937 random(23);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 24; ++trial) {
    const ExplicitModel model = trial < 6    ? ExplicitModel::Cone
                                : trial < 12 ? ExplicitModel::Pyramid
                                : trial < 18 ? ExplicitModel::Relaxed
                                             : ExplicitModel::Convex;
    CAPTURE(trial);
    std::unique_ptr<StepDerivative> d;
    StepOnce(RandomSetup(trial, &random, model), &d);
    Eigen::VectorXd ds(d->state_size()), dp(d->parameter_size()), du(d->command_size()),
        v(d->state_size());
    for (Eigen::VectorXd* x : {&ds, &dp, &du, &v}) {
      for (Eigen::Index k = 0; k < x->size(); ++k) (*x)[k] = n(random);
    }
    const double forward = v.dot(d->Jvp(ds, dp, du));
    const StepDerivative::Gradient g = d->Vjp(v);
    const double backward = g.state.dot(ds) + g.parameters.dot(dp) + g.commands.dot(du);
    CHECK(forward == doctest::Approx(backward).epsilon(1e-10));
    // Columns solved together: each as its own Jvp (one input left out: zero).
    Eigen::MatrixXd DS(ds.size(), 3), DU(du.size(), 3);
    for (Eigen::MatrixXd* x : {&DS, &DU}) {
      for (Eigen::Index k = 0; k < x->size(); ++k) x->data()[k] = n(random);
    }
    const Eigen::MatrixXd columns = d->JvpColumns(DS, Eigen::MatrixXd(), DU);
    REQUIRE(columns.cols() == 3);
    // Matrices of changes with rows must agree on how many.
    CHECK_THROWS_WITH_AS(d->JvpColumns(DS, Eigen::MatrixXd(), DU.leftCols(2)),
                         doctest::Contains("columns"), InputError);
    for (int j = 0; j < 3; ++j) {
      const Eigen::VectorXd one = d->Jvp(DS.col(j), Eigen::VectorXd(), DU.col(j));
      CHECK((columns.col(j) - one).cwiseAbs().maxCoeff() <=
            1e-12 * std::max(1.0, one.cwiseAbs().maxCoeff()));
    }
  }
}

TEST_CASE(
    "explicit step derivative: a flat box sliding with a turn is not determined by its data") {
  // Four corners carry the weight in shares the problem does not fix; sliding with a turn, the
  // share moves the friction's torque, so the end velocities are a family.
  Setup turning = SlidingBox(Eigen::Vector3d(1.0, 0.2, 0));
  turning.bodies[1].state.angular_velocity = Eigen::Vector3d(0, 0, 2.0);
  std::unique_ptr<StepDerivative> d;
  StepOnce(turning, &d);
  CHECK(d->contact_modes() == "llll");
  CHECK_FALSE(d->determined());
  // Sliding straight, or at rest, the share moves nothing: determined.
  StepOnce(SlidingBox(Eigen::Vector3d(1.0, 0.2, 0)), &d);
  CHECK(d->contact_modes() == "llll");
  CHECK(d->determined());
  StepOnce(SlidingBox(Eigen::Vector3d::Zero()), &d);
  CHECK(d->contact_modes() == "ssss");
  CHECK(d->determined());
}

// A random pose near the identity for ClosedFormCase.
ShapePose TurnedPose(std::mt19937* random, double spread, const Eigen::Vector3d& position) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const Eigen::Vector3d w(normal(*random), normal(*random), normal(*random));
  ShapePose pose;
  pose.rotation = Eigen::AngleAxisd(spread * w.norm(), w.normalized()).toRotationMatrix();
  pose.position = position;
  return pose;
}

struct ClosedFormCase {
  Shape a, b;
  ShapePose pa, pb;
  bool moving_a = true, moving_b = true;
};

// Pairs whose contacts are faces against vertices or spheres: boxes of unequal sizes turned and
// offset on the ground and on each other (either of them fixed or both moving, the face on A's
// side or on B's), spheres on boxes and on the ground, each within a few millimetres of touching.
ClosedFormCase RandomClosedFormCase(int trial, std::mt19937* random) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ClosedFormCase c;
  const auto box = [&](double scale) {
    Shape shape;
    shape.kind = ShapeKind::Box;
    shape.size = scale * Eigen::Vector3d(0.4 + 0.2 * u(*random), 0.3 + 0.1 * u(*random),
                                         0.2 + 0.1 * u(*random));
    return shape;
  };
  Shape ground;
  ground.kind = ShapeKind::HalfSpace;
  Shape ball;
  ball.kind = ShapeKind::Sphere;
  ball.size = Eigen::Vector3d(0.1 + 0.05 * u(*random), 0, 0);
  const double gap = 0.003 * u(*random);
  switch (trial % 5) {
    case 0:  // a tilted box on the ground
      c.a = ground;
      c.b = box(1.0);
      c.moving_a = false;
      c.pa = TurnedPose(random, 0.05, Eigen::Vector3d::Zero());
      c.pb = TurnedPose(random, 0.2, Eigen::Vector3d(u(*random), u(*random), 0.0));
      break;
    case 1:    // a box turned and offset on a larger box (B on A, A on B), either fixed or both
    case 2: {  // moving
      c.a = box(trial % 5 == 1 ? 1.5 : 1.0);
      c.b = box(trial % 5 == 1 ? 1.0 : 1.5);
      c.moving_a = trial % 3 != 0;
      c.moving_b = trial % 3 != 1;
      c.pa = TurnedPose(random, 0.05, Eigen::Vector3d(u(*random), u(*random), u(*random)));
      const Eigen::Matrix3d yaw =
          Eigen::AngleAxisd(0.4 * u(*random), Eigen::Vector3d::UnitZ()).toRotationMatrix();
      c.pb.rotation =
          c.pa.rotation * yaw * Eigen::AngleAxisd(0.02 * u(*random), Eigen::Vector3d::UnitX());
      c.pb.position =
          c.pa.position + c.pa.rotation * Eigen::Vector3d(0.1 * u(*random), 0.1 * u(*random), 0.0);
      break;
    }
    case 3:  // a sphere on a box's face
      c.a = box(1.5);
      c.b = ball;
      c.moving_a = trial % 2 == 0;
      c.pa = TurnedPose(random, 0.5, Eigen::Vector3d(u(*random), u(*random), u(*random)));
      c.pb.position =
          c.pa.position + c.pa.rotation * Eigen::Vector3d(0.1 * u(*random), 0.1 * u(*random), 0.0);
      break;
    default:  // a sphere on the ground
      c.a = ground;
      c.b = ball;
      c.moving_a = false;
      c.pa = TurnedPose(random, 0.05, Eigen::Vector3d::Zero());
      c.pb.position = Eigen::Vector3d(u(*random), u(*random), 0.0);
  }
  // B lowered (or raised) along A's up axis until its nearest point is `gap` from A; below A
  // where A is the smaller box.
  const Eigen::Vector3d up = (trial % 5 == 2 ? -1.0 : 1.0) * c.pa.rotation.col(2);
  const auto nearest = [&](double along) {
    ShapePose pb = c.pb;
    pb.position += along * up;
    std::vector<ContactPoint> points;
    ExplicitContactGeometry().FindContacts(c.a, c.pa, c.b, pb, 1.0, &points);
    double closest = 1.0;
    for (const ContactPoint& p : points) closest = std::min(closest, p.distance);
    return closest;
  };
  double low = -0.5, high = 2.0;
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (low + high);
    (nearest(mid) < gap ? low : high) = mid;
  }
  c.pb.position += high * up;
  return c;
}

RigidBodyState StateAt(const ShapePose& pose) {
  RigidBodyState state;
  state.position = pose.position;
  state.orientation = Eigen::Quaterniond(pose.rotation);
  return state;
}

// The products a step's derivative takes without forming a face contact's Jacobian
// (FaceContactProducts): a random change of the live inputs, and a random gradient of the outputs
// through the transpose, against the Jets' Jacobian `jets` (its live columns).
void CheckFaceProducts(const internal::ContactSetting& setting, double h,
                       const std::vector<int>& active, const Eigen::MatrixXd& jets,
                       std::mt19937* random) {
  std::normal_distribution<double> normal;
  Eigen::Matrix<double, 26, 1> in = Eigen::Matrix<double, 26, 1>::Zero();
  Eigen::VectorXd live(active.size());
  for (size_t k = 0; k < active.size(); ++k) in[active[k]] = live[k] = normal(*random);
  Eigen::Matrix<double, 37, 1> y, out;
  for (int k = 0; k < 37; ++k) y[k] = normal(*random);
  Eigen::Matrix<double, 26, 1> gradient;
  internal::FaceContactProducts(setting, h, active, in, y, &out, &gradient);
  const double scale = 1.0 + jets.cwiseAbs().maxCoeff();
  const Eigen::VectorXd expected_out = jets * live, expected_gradient = jets.transpose() * y;
  CHECK((out - expected_out).cwiseAbs().maxCoeff() <=
        1e-12 * scale * (1.0 + live.cwiseAbs().sum()));
  Eigen::Matrix<double, 26, 1> off_live = gradient;
  for (size_t k = 0; k < active.size(); ++k) {
    CHECK(std::abs(gradient[active[k]] - expected_gradient[k]) <=
          1e-12 * scale * (1.0 + y.cwiseAbs().sum()));
    off_live[active[k]] = 0.0;
  }
  CHECK(off_live.isZero(0.0));  // a fixed body's inputs move nothing
}

TEST_CASE("explicit step derivative: a face's closed-form contact Jacobian equals the Jets'") {
  // The rows and offset of every contact of a face and a point (a vertex, an edge's crossing of
  // a side, a sphere's nearest point: ContactRowsJacobian), in closed form and on Jets, over the
  // moving bodies' pose inputs and h; and the closed form's products with a change and, through
  // the transpose, with a gradient (FaceContactProducts) against the Jets' Jacobian.
  std::mt19937 random(2027);
  int compared = 0, kinds[3] = {0, 0, 0}, face_on_b = 0, both_moving = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const ClosedFormCase c = RandomClosedFormCase(trial, &random);
    std::vector<ContactPoint> points;
    ExplicitContactGeometry().FindContacts(c.a, c.pa, c.b, c.pb, 0.01, &points);
    const RigidBodyState a = StateAt(c.pa), b = StateAt(c.pb);
    for (const ContactPoint& point : points) {
      const ContactFeature feature = point.feature.Expand(c.a, c.b);
      if (feature.kind != ContactFeature::Kind::kFace) continue;
      ExplicitContact contact;
      contact.body_a = 0;
      contact.body_b = 1;
      contact.point = point;
      const internal::ContactSetting setting{contact, feature, a,          b,
                                             0.0,     false,   c.moving_a, c.moving_b};
      Eigen::Matrix<double, 26, 1> nominal = Eigen::Matrix<double, 26, 1>::Zero();
      nominal[25] = 0.004 + 0.002 * (trial % 7);  // h
      std::vector<int> active;
      for (int side = 0; side < 2; ++side) {
        if (!(side == 0 ? c.moving_a : c.moving_b)) continue;
        for (int k = 0; k < 6; ++k) active.push_back(6 * side + k);
      }
      active.push_back(25);
      Eigen::MatrixXd closed, jets;
      internal::ContactRowsJacobian(setting, true, nominal, active, true, &closed);
      internal::ContactRowsJacobian(setting, true, nominal, active, false, &jets);
      REQUIRE(closed.rows() == jets.rows());
      REQUIRE(closed.cols() == jets.cols());
      const double scale = 1.0 + jets.cwiseAbs().maxCoeff();
      INFO("trial " << trial << ", face on " << (feature.face_body == 0 ? "A" : "B") << ", moving "
                    << c.moving_a << c.moving_b);
      CHECK((closed - jets).cwiseAbs().maxCoeff() <= 1e-12 * scale);
      CheckFaceProducts(setting, nominal[25], active, jets, &random);
      if (c.moving_a != c.moving_b) {
        // With a moving body's twist among the inputs the closed form declines: the Jets'.
        std::vector<int> with_twist(active.begin(), active.end() - 1);
        for (int k = 0; k < 6; ++k) with_twist.push_back((c.moving_a ? 12 : 18) + k);
        with_twist.push_back(25);
        internal::ContactRowsJacobian(setting, true, nominal, with_twist, true, &closed);
        internal::ContactRowsJacobian(setting, true, nominal, with_twist, false, &jets);
        CHECK(closed == jets);
      }
      ++compared;
      ++kinds[static_cast<int>(feature.incident)];
      face_on_b += feature.face_body == 1 ? 1 : 0;
      both_moving += c.moving_a && c.moving_b ? 1 : 0;
    }
  }
  CHECK(kinds[0] > 400);  // vertices
  CHECK(kinds[1] > 100);  // an edge crossing a face's side
  CHECK(kinds[2] > 100);  // spheres
  CHECK(face_on_b > 50);
  CHECK(both_moving > 100);
  MESSAGE(compared << " contacts compared: " << kinds[0] << " vertices, " << kinds[1]
                   << " edges crossing a side, " << kinds[2] << " spheres; " << face_on_b
                   << " with B's face, " << both_moving << " between moving bodies");
}

TEST_CASE("explicit step derivative: a contact without features refuses pose derivatives only") {
  // A ball against a box's top edge: the normal turns with the ball's centre, which no feature
  // describes; velocities, parameters and impulses still have their derivatives.
  Setup setup = SlidingBox(Eigen::Vector3d::Zero());
  Body ball;
  ball.name = "ball";
  ball.shape.kind = ShapeKind::Sphere;
  ball.shape.size = Eigen::Vector3d(0.1, 0, 0);
  ball.mass = SolidMassProperties(ball.shape, 0.5);
  ball.state.position = Eigen::Vector3d(0.2 + 0.07, 0, 0.2 + 0.07);
  setup.bodies.push_back(ball);
  std::unique_ptr<StepDerivative> d;
  StepOnce(setup, &d);
  const Eigen::VectorXd pose = Eigen::VectorXd::Unit(d->state_size(), 12);  // the ball's x
  CHECK_THROWS_WITH_AS(d->Jvp(pose, Eigen::VectorXd(), Eigen::VectorXd()),
                       doctest::Contains("box-ball #"), InputError);
  CHECK_THROWS_AS(d->Vjp(Eigen::VectorXd::Ones(d->state_size())), InputError);
  const Eigen::VectorXd velocity = Eigen::VectorXd::Unit(d->state_size(), 18);
  CHECK(d->Jvp(velocity, Eigen::VectorXd(), Eigen::VectorXd()).allFinite());
}

TEST_CASE("explicit step derivative: refused before a step") {
  Setup setup = SlidingBox(Eigen::Vector3d(1, 0, 0));
  ExplicitStepper fresh(setup.bodies, setup.laws, setup.options);
  CHECK_THROWS_AS(fresh.LastStepDerivative(), InputError);
}

}  // namespace step_derivative_test
}  // namespace ncpkit
