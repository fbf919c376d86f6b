// Derivatives of the quasistatic stepper's steps (qp, qp-lcp and dlc models): a box pushed
// along a line by an impedance finger against the closed form of the regularized balance; every
// column of one step's Jacobians against central differences of fresh steppers, over random pushes
// of boxes of unequal sizes and masses, turned and offset, sticking and sliding (steps whose
// contact modes change within the difference are counted, not compared); products against their
// transposes; and what is refused.
#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "integrators/quasistatic_stepper.h"
#include "integrators/scene.h"
#include "integrators/trajectory_gradient.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
// Named, not anonymous: the unity build puts test files side by side.
namespace quasistatic_derivative_test {

// A box on the ground pushed by a sphere finger on prismatic actuators fx, fy; every input of
// the first step is a number here, so that the checks can perturb each one.
struct Push {
  std::string model = "qp-lcp";
  double h = 0.05, mu = 0.4, regularization = 1e-3, stiffness = 1000.0;
  Eigen::Vector3d size{0.2, 0.2, 0.1};
  double box_mass = 1.0, finger_mass = 0.3, radius = 0.03;
  Eigen::Vector3d box_position{0.0, 0.0, 0.05};
  Eigen::Quaterniond box_orientation = Eigen::Quaterniond::Identity();
  Eigen::Vector2d q0{0.0, 0.0}, command{0.0, 0.0};  // the actuators' positions at 0 and at h
  Eigen::Vector3d finger_base{-0.14, 0.0, 0.05};
  std::string box_dofs;  // e.g. "\"dofs\": [\"x\"], "; empty: all six
  bool ball = false;     // the pushed body a sphere of radius size.z() / 2
  // fy a revolute actuator (its q in rad) about the axis (0, 0.6, 0.8) through a pivot 0.3 m
  // behind the finger and 0.1 m above it, carried by fx: it swings the finger across (0.24 m/rad)
  // and down (0.18), so its gravity term and its twist turn with it.
  bool revolute = false;
  bool prescribed = false;  // fy moves exactly as commanded (no unknown, no stiffness)
  static constexpr double kAcross = 0.24;  // the finger's motion along y per rad

  std::string Json() const {
    std::ostringstream s;
    s.precision(17);
    const Eigen::Quaterniond& q = box_orientation;
    s << R"({"name": "push", "stepper": "quasistatic", "model": ")" << model << R"(", "solver": ")"
      << (model == "dqc" ? "fb-newton" : "lemke") << R"(", "tolerance": 1e-12, "h": )" << h
      << R"(, "duration": 1, "gravity": [0, 0, -9.81], "regularization": )" << regularization
      << R"(, "contact": {"mu": )" << mu << R"(}, "bodies": [{"name": "ground", "shape": "plane"},)"
      << R"({"name": "box", "shape": ")" << (ball ? "sphere" : "box") << R"(", )" << box_dofs
      << R"("size": [)";
    if (ball) {
      s << size.z() / 2;
    } else {
      s << size.x() << ", " << size.y() << ", " << size.z();
    }
    s << R"(], "mass": )" << box_mass << R"(, "position": [)" << box_position.x() << ", "
      << box_position.y() << ", " << box_position.z() << R"(], "orientation": [)" << q.w() << ", "
      << q.x() << ", " << q.y() << ", " << q.z()
      << R"(]}, {"name": "finger", "shape": "sphere", "size": [)" << radius << R"(], "mass": )"
      << finger_mass << R"(, "position": [)" << finger_base.x() << ", " << finger_base.y() << ", "
      << finger_base.z() << R"(]}], "actuators": [)"
      << R"({"name": "fx", "axis": [1, 0, 0], "bodies": ["finger"], "stiffness": )" << stiffness
      << R"(}, {"name": "fy", )";
    if (revolute) {
      s << R"("kind": "revolute", "axis": [0, 0.6, 0.8], "pivot": [)" << finger_base.x() - 0.3
        << ", " << finger_base.y() << ", " << finger_base.z() + 0.1
        << R"(], "bodies": ["finger"], "stiffness": )" << stiffness * kAcross * kAcross
        << (prescribed ? R"(, "prescribed": true)" : "");
    } else {
      s << R"("axis": [0, 1, 0], "bodies": ["finger"], "stiffness": )" << stiffness;
    }
    s << R"(}], "commands": {"fx": [[0, )" << q0.x() << "], [" << h << ", " << command.x()
      << R"(]], "fy": [[0, )" << q0.y() << "], [" << h << ", " << command.y() << "]]}}";
    return s.str();
  }
};

struct Outcome {
  Eigen::Vector3d position;
  Eigen::Quaterniond orientation;
  Eigen::Vector2d q;
  std::string modes;
  bool solved = false;
};

Outcome StepOnce(const Push& push, std::unique_ptr<StepDerivative>* derivative = nullptr) {
  const std::unique_ptr<Stepper> stepper = MakeStepper(ParseScene(push.Json(), "push"));
  const StepRecord& record = stepper->Step(std::vector<Vector6d>());
  Outcome out;
  out.solved = record.summary.IsSolved();
  out.position = stepper->bodies()[1].state.position;
  out.orientation = stepper->bodies()[1].state.orientation;
  const auto& qs = static_cast<const QuasistaticStepper&>(*stepper).actuator_positions();
  out.q = Eigen::Vector2d(qs[0], qs[1]);
  std::unique_ptr<StepDerivative> d;
  if (out.solved) d = stepper->LastStepDerivative();
  if (d != nullptr) out.modes = d->contact_modes();
  if (derivative != nullptr) *derivative = std::move(d);
  return out;
}

// s+ - s+_0 in the derivative's coordinates: the box's position and world-frame turn, fx.q, fy.q.
Eigen::VectorXd Difference(const Outcome& x, const Outcome& x0) {
  Eigen::VectorXd d(8);
  d.head<3>() = x.position - x0.position;
  const Eigen::AngleAxisd turn(x.orientation * x0.orientation.inverse());
  d.segment<3>(3) = turn.angle() * turn.axis();
  if (turn.angle() > M_PI) d.segment<3>(3) -= 2 * M_PI * turn.axis();
  d.tail<2>() = x.q - x0.q;
  return d;
}

// The push with input k of [s, p, u] moved by d: s = box position, turn, fx.q, fy.q; p = mu,
// box.mass, finger.mass; u = the commands of fx, fy.
Push Moved(Push push, int k, double d) {
  if (k < 3) push.box_position[k] += d;
  if (k >= 3 && k < 6) {
    push.box_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(d, Eigen::Vector3d::Unit(k - 3))) *
                           push.box_orientation;
  }
  if (k == 6 || k == 7) push.q0[k - 6] += d;
  if (k == 8) push.mu += d;
  if (k == 9) push.box_mass += d;
  if (k == 10) push.finger_mass += d;
  if (k == 11 || k == 12) push.command[k - 11] += d;
  return push;
}

// A box of random size and mass, turned about z and offset, resting on the ground, and a finger
// at its -x face, commanded into it by a random amount: gentle pushes stick, the others slide
// the box, and some steps leave the finger short of it.
Push RandomPush(std::mt19937* rng, const std::string& model, bool gentle, bool ball = false) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  Push p;
  p.model = model;
  p.size = Eigen::Vector3d(0.1 + 0.2 * U(*rng), 0.1 + 0.2 * U(*rng), 0.06 + 0.1 * U(*rng));
  p.box_mass = 0.3 + 2.0 * U(*rng);
  p.mu = 0.2 + 0.5 * U(*rng);
  const double yaw = 0.6 * (U(*rng) - 0.5);
  p.box_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ()));
  // 20 um above the ground: within the contact threshold, and clear of it for the differences.
  p.box_position =
      Eigen::Vector3d(0.05 * (U(*rng) - 0.5), 0.05 * (U(*rng) - 0.5), p.size.z() / 2 + 2e-5);
  p.radius = 0.02;
  p.ball = ball;
  // The finger at the face's centre height, touching the turned -x face within a millimetre.
  const Eigen::Vector3d normal = p.box_orientation * Eigen::Vector3d(-1, 0, 0);
  const Eigen::Vector3d across = p.box_orientation * Eigen::Vector3d(0, 1, 0);
  const double gap = gentle ? 1e-4 * U(*rng) : 1e-3 * U(*rng);
  const Eigen::Vector3d at =
      ball ? Eigen::Vector3d(p.box_position + normal * (p.size.z() / 2 + p.radius + gap))
           : Eigen::Vector3d(p.box_position + normal * (p.size.x() / 2 + p.radius + gap) +
                             across * (p.size.y() * 0.4 * (U(*rng) - 0.5)));
  p.finger_base = Eigen::Vector3d(at.x(), at.y(), p.size.z() / 2);
  p.q0.setZero();
  // Gentle pushes press with less than the box's friction (k 0.3 mm against mu m g >= 0.59 N).
  const double push = gentle ? gap + 3e-4 * U(*rng) : 0.002 + 0.03 * U(*rng);
  p.command = -push * normal.head<2>().normalized();
  return p;
}

TEST_CASE("quasistatic step derivative: a frictionless push along a line, its closed form") {
  // Box free in x only, no friction anywhere: the finger's impedance k against the box's
  // regularization a = eps m / h^2 through the closed contact (gap phi):
  //   delta_f = (k (c - q) + a phi) / (k + a),  delta_box = delta_f - phi,
  // and the box ends at the finger's end plus the gap: x_box+ = x_f + q + delta_f + w. So
  // dx_box/dc = k / (k + a), dx_box/dx_box = a / (k + a) (phi grows with x), dx_box/dq = 0 (phi
  // shrinks as q grows), dx_box/dm = (eps/h^2) k (phi - (c - q)) / (k + a)^2.
  for (const std::string model : {"qp-lcp", "qp", "dlc"}) {
    Push p;
    p.model = model;
    p.mu = 0.0;
    p.box_dofs = R"("dofs": ["x"], )";
    p.finger_base = Eigen::Vector3d(-0.1 - 0.03 - 0.004, 0.0, 0.05);  // gap 4 mm
    p.command = Eigen::Vector2d(0.02, 0.0);
    std::unique_ptr<StepDerivative> d;
    const Outcome out = StepOnce(p, &d);
    REQUIRE(out.solved);
    REQUIRE(d != nullptr);
    CHECK(d->state_size() == 8);
    CHECK(d->extra_state_names() == std::vector<std::string>{"fx.q", "fy.q"});
    CHECK(d->parameter_names() == std::vector<std::string>{"mu", "box.mass", "finger.mass"});
    const double a = p.regularization * p.box_mass / (p.h * p.h), k = p.stiffness, phi = 0.004;
    const double c = p.command.x();
    CHECK(out.position.x() == doctest::Approx((k * c + a * phi) / (k + a) - phi).epsilon(1e-10));
    const Eigen::MatrixXd C = d->CommandJacobian(), S = d->StateJacobian();
    const Eigen::MatrixXd P = d->ParameterJacobian();
    CHECK(C(0, 0) == doctest::Approx(k / (k + a)).epsilon(1e-10));
    CHECK(S(0, 0) == doctest::Approx(a / (k + a)).epsilon(1e-10));
    CHECK(std::abs(S(0, 6)) < 1e-12);
    CHECK(P(0, 1) ==
          doctest::Approx(p.regularization / (p.h * p.h) * k * (phi - c) / ((k + a) * (k + a)))
              .epsilon(1e-9));
    CHECK(C(6, 0) == doctest::Approx(k / (k + a)).epsilon(1e-10));  // the finger's fx.q
    // The ground's four corners carry nothing (z is no coordinate of the box); the finger presses.
    CHECK(d->contact_modes() == "aaaaf");
  }
}

TEST_CASE("quasistatic step derivative: a free finger follows its command") {
  Push p;
  p.finger_base = Eigen::Vector3d(-0.5, 0.0, 0.05);  // far from the box
  p.command = Eigen::Vector2d(0.01, -0.02);
  std::unique_ptr<StepDerivative> d;
  REQUIRE(StepOnce(p, &d).solved);
  const Eigen::MatrixXd C = d->CommandJacobian(), S = d->StateJacobian();
  CHECK(C(6, 0) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(C(7, 1) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(std::abs(S(6, 6)) < 1e-12);
  CHECK(C.topRows(6).norm() < 1e-12);  // the box rests whatever the finger's command
}

struct ColumnCounts {
  int compared = 0, one_sided = 0, changed = 0, undetermined = 0, unsolved = 0, disagree = 0;
  int touching = 0;
  int worst_column = -1;
  double worst = 0.0;
};

// Every column of [dS, dP, dC] of one push's step against central differences.
void CompareColumns(const Push& p, ColumnCounts* counts) {
  std::unique_ptr<StepDerivative> d;
  const Outcome base = StepOnce(p, &d);
  REQUIRE(base.solved);
  REQUIRE(d != nullptr);
  if (!d->determined()) {
    // Differences follow whichever member of the step's family the solver finds.
    ++counts->undetermined;
    return;
  }
  Eigen::MatrixXd J(8, 13);
  J << d->StateJacobian(), d->ParameterJacobian(), d->CommandJacobian();
  const double eps = 1e-6;
  for (int k = 0; k < 13; ++k) {
    const Outcome plus = StepOnce(Moved(p, k, eps)), minus = StepOnce(Moved(p, k, -eps));
    if (!plus.solved || !minus.solved) {
      ++counts->unsolved;
      continue;
    }
    if (plus.modes != base.modes || minus.modes != base.modes) {
      ++counts->changed;
      continue;
    }
    const Eigen::VectorXd fd = (Difference(plus, base) - Difference(minus, base)) / (2 * eps);
    // The differences are a reference only where a smaller step gives the same (a solver may land
    // on another of a step's solutions where it has several, and the difference then measures
    // the jump).
    const Outcome plus2 = StepOnce(Moved(p, k, 0.1 * eps)),
                  minus2 = StepOnce(Moved(p, k, -0.1 * eps));
    const Eigen::VectorXd fd2 = (Difference(plus2, base) - Difference(minus2, base)) / (0.2 * eps);
    if (!plus2.solved || !minus2.solved || (fd - fd2).norm() > 1e-5 * (1.0 + fd.norm())) {
      ++counts->disagree;
      continue;
    }
    const auto error_of = [&](const Eigen::VectorXd& x) {
      return (x - J.col(k)).norm() / (1.0 + J.col(k).norm());
    };
    double error = error_of(fd);
    if (error >= 1e-5 && !d->degenerate_contacts().empty()) {
      // A contact at a tie (a corner touching with no force, a direction row with a zero
      // multiplier): the step sits on a kink, central differences average its two one-sided
      // derivatives, and the derivative returned is one of them (docs/derivatives.md, the
      // degenerate rule) -- unless the tied index leaves its bound on both sides (it touches
      // the bound here), where the rule's piece is on neither side: counted, not compared.
      error = std::min(error_of(Difference(plus, base) / eps),
                       error_of(-Difference(minus, base) / eps));
      if (error >= 1e-5) {
        ++counts->touching;
        continue;
      }
      ++counts->one_sided;
    }
    ++counts->compared;
    if (error > counts->worst) {
      counts->worst = error;
      counts->worst_column = k;
    }
    INFO("column ", k, " modes ", base.modes, "\n", p.Json(), "\nexact ", J.col(k).transpose(),
         "\nfd    ", fd.transpose());
    CHECK(error < 1e-5);
  }
}

// Every column of 12 random pushes of `model`, boxes or balls, fy prismatic or revolute (the
// same pushes, fy's command and stiffness as an angle and a torque per rad).
ColumnCounts ComparePushes(const std::string& model, bool ball, std::string* modes,
                           bool revolute = false, bool prescribed = false) {
  std::mt19937 rng(7);
  ColumnCounts counts;
  for (int seed = 0; seed < 12; ++seed) {
    Push p = RandomPush(&rng, model, seed % 3 == 0, ball);
    if (revolute) {
      p.revolute = true;
      p.prescribed = prescribed;
      p.command.y() /= Push::kAcross;
    }
    std::unique_ptr<StepDerivative> d;
    REQUIRE(StepOnce(p, &d).solved);
    *modes += d->contact_modes() + " ";
    CompareColumns(p, &counts);
  }
  MESSAGE(
      model, ball ? " balls" : " boxes",
      std::string(revolute ? (prescribed ? " (fy revolute, prescribed)" : " (fy revolute)") : ""),
      ": ", counts.compared, " columns compared (", counts.one_sided,
      " with a one-sided difference at a degenerate contact), ", counts.changed,
      " not (modes changed), ", counts.unsolved, " not (a perturbed step unsolved), ",
      counts.disagree, " not (differences of two step sizes disagree), ", counts.touching,
      " not (a tied index touching its bound); ", counts.undetermined,
      " steps undetermined; worst ", counts.worst, " (column ", counts.worst_column, "); modes ",
      *modes);
  return counts;
}

TEST_CASE("quasistatic step derivative: every Jacobian column against central differences") {
  for (const std::string model : {"qp-lcp", "qp", "dlc"}) {
    std::string modes;
    CHECK(ComparePushes(model, false, &modes).compared >= 120);
    // Both sticking and sliding finger contacts among the pushes.
    CHECK(modes.find('s') != std::string::npos);
    CHECK(modes.find('l') != std::string::npos);
  }
  // Balls, which roll where boxes slide.
  for (const std::string model : {"qp-lcp", "dlc"}) {
    std::string modes;
    CHECK(ComparePushes(model, true, &modes).compared >= 120);
  }
}

TEST_CASE(
    "quasistatic step derivative: <v, J w> = <J^T v, w> for the state, parameters, commands") {
  std::mt19937 rng(11);
  std::normal_distribution<double> N(0.0, 1.0);
  for (int seed = 0; seed < 6; ++seed) {
    const Push p = RandomPush(&rng, seed % 3 == 0 ? "dlc" : "qp-lcp", seed % 2 == 0);
    std::unique_ptr<StepDerivative> d;
    REQUIRE(StepOnce(p, &d).solved);
    Eigen::VectorXd v(8), ds(8), dp(3), du(2);
    for (Eigen::VectorXd* x : {&v, &ds, &dp, &du}) {
      for (Eigen::Index i = 0; i < x->size(); ++i) (*x)[i] = N(rng);
    }
    const double forward = v.dot(d->Jvp(ds, dp, du));
    const StepDerivative::Gradient g = d->Vjp(v);
    const double reverse = g.state.dot(ds) + g.parameters.dot(dp) + g.commands.dot(du);
    CHECK(forward == doctest::Approx(reverse).epsilon(1e-10));
  }
}

TEST_CASE("quasistatic step derivative: snapshots replay bit for bit; checkpoints change nothing") {
  std::mt19937 rng(5);
  Push p = RandomPush(&rng, "qp-lcp", false);
  p.h = 0.02;  // the commands' ramp reaches its end after one step, then holds
  const auto stepper = [&] { return MakeStepper(ParseScene(p.Json(), "push")); };
  // The box's final x and y, and the finger's position at every step.
  const auto loss = [](int step, const Stepper& /*stepper*/) -> Eigen::VectorXd {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(8);
    if (step == 30) g.head<2>().setOnes();
    g[6] = 0.1;
    return g;
  };
  TrajectoryGradientOptions options;
  options.steps = 30;
  std::unique_ptr<Stepper> a = stepper(), b = stepper();
  const TrajectoryGradientResult all = ReverseGradient(a.get(), loss, options);
  options.checkpoint_interval = 7;
  const TrajectoryGradientResult checkpointed = ReverseGradient(b.get(), loss, options);
  CHECK(checkpointed.snapshots == 4);  // at steps 0, 7, 14, 21; the last stretch's kept
  CHECK(checkpointed.derivatives_held <= 7);
  CHECK(all.initial_state == checkpointed.initial_state);
  CHECK(all.parameters == checkpointed.parameters);
  for (int k = 0; k < 30; ++k) CHECK(all.commands[k] == checkpointed.commands[k]);
  CHECK(a->bodies()[1].state.position == b->bodies()[1].state.position);
  CHECK(all.parameters.allFinite());
  CHECK(all.parameters.norm() > 0.0);
  // A snapshot of another stepper is refused.
  const std::unique_ptr<StepperSnapshot> snapshot = a->Save();
  CHECK_THROWS_AS(b->Restore(*snapshot), InputError);
}

// Boxes stacked on the ground, `count` of them: flush and equal (a settled stack's boxes) or of
// random sizes and masses, turned about z and offset a little.
std::string StackScene(int count, bool flush, std::mt19937* rng) {
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::ostringstream s;
  s.precision(17);
  s << R"({"name": "stack", "stepper": "quasistatic", "model": "qp-lcp", "solver": "lemke",)"
    << R"( "h": 0.01, "duration": 1.0, "gravity": [0, 0, -9.8], "contact_threshold": 0.015,)"
    << R"( "friction_directions": 4, "regularization": 0.1, "contact": {"mu": 0.5},)"
    << R"( "bodies": [{"name": "ground", "shape": "plane"})";
  double z = 0.0;
  for (int i = 0; i < count; ++i) {
    const Eigen::Vector3d size =
        flush ? Eigen::Vector3d(0.1, 0.1, 0.1)
              : Eigen::Vector3d(0.1 + 0.03 * U(*rng), 0.1 + 0.03 * U(*rng), 0.08 + 0.02 * U(*rng));
    const double yaw = flush ? 0.0 : 0.1 * U(*rng);
    const Eigen::Vector2d offset =
        flush ? Eigen::Vector2d::Zero() : Eigen::Vector2d(0.01 * U(*rng), 0.01 * U(*rng));
    z += size.z() / 2;
    s << R"(, {"name": "b)" << i << R"(", "shape": "box", "size": [)" << size.x() << ", "
      << size.y() << ", " << size.z() << R"(], "mass": )" << (flush ? 1.0 : 0.5 + U(*rng) * 0.4)
      << R"(, "position": [)" << offset.x() << ", " << offset.y() << ", " << z
      << R"(], "orientation": [)" << std::cos(yaw / 2) << ", 0, 0, " << std::sin(yaw / 2) << "]}";
    z += size.z() / 2;
  }
  s << "]}";
  return s.str();
}

// The boxes' poses after one step from the scene with state entry k (per box: position, then
// world-frame turn) moved by d, in the derivative's coordinates relative to `base` (or absolute
// positions and zero turns where base is null).
Eigen::VectorXd StackStep(const std::string& json, int k, double d, const Eigen::VectorXd* base,
                          std::vector<Eigen::Quaterniond>* orientations) {
  Scene scene = ParseScene(json, "stack");
  if (k >= 0) {
    RigidBodyState& s = scene.bodies[1 + k / 6].state;
    if (k % 6 < 3) s.position[k % 6] += d;
    if (k % 6 >= 3) {
      s.orientation = Eigen::Quaterniond(Eigen::AngleAxisd(d, Eigen::Vector3d::Unit(k % 6 - 3))) *
                      s.orientation;
    }
  }
  const std::unique_ptr<Stepper> stepper = MakeStepper(scene);
  REQUIRE(stepper->Step(std::vector<Vector6d>()).summary.IsSolved());
  const int boxes = static_cast<int>(scene.bodies.size()) - 1;
  Eigen::VectorXd out(6 * boxes);
  for (int b = 0; b < boxes; ++b) {
    const RigidBodyState& s = stepper->bodies()[1 + b].state;
    out.segment<3>(6 * b) = s.position - (base != nullptr ? Eigen::Vector3d(base->segment<3>(6 * b))
                                                          : Eigen::Vector3d::Zero());
    if (base == nullptr) {
      orientations->push_back(s.orientation);
      out.segment<3>(6 * b + 3).setZero();
    } else {
      const Eigen::AngleAxisd turn(s.orientation * (*orientations)[b].inverse());
      out.segment<3>(6 * b + 3) = turn.angle() * turn.axis();
    }
  }
  return out;
}

TEST_CASE("quasistatic step derivative: stacked boxes against central differences, stable") {
  std::mt19937 rng(17);
  int compared = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const bool flush = trial % 2 == 0;
    const std::string json = StackScene(2 + trial % 3, flush, &rng);
    const std::unique_ptr<Stepper> stepper = MakeStepper(ParseScene(json, "stack"));
    stepper->Step(std::vector<Vector6d>());
    const Eigen::MatrixXd J = stepper->LastStepDerivative()->StateJacobian();
    std::vector<Eigen::Quaterniond> orientations;
    const Eigen::VectorXd base = StackStep(json, -1, 0.0, nullptr, &orientations);
    for (int k = 0; k < J.cols(); ++k) {
      Eigen::VectorXd fd[2];
      for (int size = 0; size < 2; ++size) {
        const double eps = size == 0 ? 1e-6 : 1e-7;
        fd[size] = (StackStep(json, k, eps, &base, &orientations) -
                    StackStep(json, k, -eps, &base, &orientations)) /
                   (2 * eps);
      }
      const double scale = 1.0 + fd[0].cwiseAbs().maxCoeff();
      if ((fd[0] - fd[1]).cwiseAbs().maxCoeff() > 1e-6 * scale) continue;  // a mode changed
      ++compared;
      INFO("trial " << trial << " column " << k << "\n"
                    << json << "\nexact " << J.col(k).transpose() << "\nfd    "
                    << fd[0].transpose());
      CHECK((J.col(k) - fd[0]).cwiseAbs().maxCoeff() <= 1e-5 * scale);
    }
    // A resting stack is stable: no perturbation grows from step to step.
    const Eigen::VectorXcd eigenvalues = J.eigenvalues();
    CHECK(eigenvalues.cwiseAbs().maxCoeff() <= 1.0 + 1e-6);
  }
  MESSAGE("stacked boxes: ", compared, " Jacobian columns compared");
  CHECK(compared >= 100);
}

// Through a settled stack of three flush boxes the gradient of the top box's position after 200
// steps stays of the size of the perturbations' effect (the tied corners hold).
TEST_CASE("quasistatic step derivative: a stack's gradient over 200 steps stays bounded") {
  std::mt19937 rng(3);
  const std::unique_ptr<Stepper> stepper =
      MakeStepper(ParseScene(StackScene(3, true, &rng), "stack"));
  TrajectoryGradientOptions options;
  options.steps = 200;
  options.checkpoint_interval = 50;
  const TrajectoryGradientResult r = ReverseGradient(
      stepper.get(),
      [](int step, const Stepper& /*stepper*/) -> Eigen::VectorXd {
        Eigen::VectorXd g = Eigen::VectorXd::Zero(18);
        if (step == 200) g.segment<3>(12).setOnes();  // the top box's x + y + z
        return g;
      },
      options);
  CHECK(r.initial_state.allFinite());
  CHECK(r.initial_state.cwiseAbs().maxCoeff() <= 10.0);
  CHECK(r.parameters.allFinite());
  CHECK(r.parameters.cwiseAbs().maxCoeff() <= 10.0);
}

// A revolute actuator's twist turns with its position (and any other revolute actuator's of its
// bodies), which moves the balance's column, the actuator's gravity term and each contact row's
// coefficient of it.
TEST_CASE("quasistatic step derivative: a finger on a revolute actuator against differences") {
  for (const std::string model : {"qp-lcp", "dlc"}) {
    std::string modes;
    const ColumnCounts counts = ComparePushes(model, false, &modes, true);
    // The finger's swing down brings it to the ground in some pushes: dlc changes modes there.
    CHECK(counts.compared >= 100);
    // Without the turning twists' terms the columns of fy's position disagree with either side.
    CHECK(counts.touching == 0);
    // Prescribed, fy's swing in the step is a row's constant u . twist (q_cmd - q); without it
    // 10 more columns disagree with both sides for each model. qp-lcp's gentle push of seed 0
    // (every contact tied, the prescribed finger sliding across the face) needs the sliding
    // finger's tied rows on their Bound side: held, 9 columns disagreed with both sides.
    const ColumnCounts driven = ComparePushes(model, false, &modes, true, true);
    CHECK(driven.compared >= 140);
    CHECK(driven.touching == 0);
  }
}

TEST_CASE("quasistatic step derivative: refused before a step, and for dqc") {
  Push p;
  const std::unique_ptr<Stepper> fresh = MakeStepper(ParseScene(p.Json(), "push"));
  CHECK_THROWS_AS(fresh->LastStepDerivative(), InputError);
  p.model = "dqc";
  const std::unique_ptr<Stepper> dqc = MakeStepper(ParseScene(p.Json(), "push"));
  dqc->Step(std::vector<Vector6d>());
  CHECK_THROWS_WITH_AS(dqc->LastStepDerivative(), doctest::Contains("not dqc"), InputError);
}

}  // namespace quasistatic_derivative_test
}  // namespace ncpkit
