// The cost of derivatives of steps and trajectories of every stepper (docs/derivatives.md
// "Cost"), each against what it replaces on the same instance:
//   BM_StateJacobian/<how>: the full state Jacobian of one step of a box sliding on the ground
//     (12 x 12), "exact" from the step's derivative, "central" by central differences of the
//     step (24 steps from perturbed states); both include the step itself.
//   BM_StepBackward vs BM_StepForward on the 50-box stack's step 50: the step's derivative and
//     one Vjp against the step alone.
//   BM_StackGradient vs BM_StackForward: the gradient of the 50-box stack's final heights with
//     respect to every initial velocity over 100 steps (a reverse pass), against the 100 steps.
//   BM_QuasistaticStepBackward vs BM_QuasistaticStepForward: a quasistatic step's derivative and
//     one Vjp against the step, on the shipped gripper (step 20: squeezing and pulling down, the
//     fingers slipping) and on a box pushed by a finger (examples/derivatives/push.py, step 10).
//   BM_ImplicitStepBackward vs BM_ImplicitStepForward, BM_ImplicitStateJacobian/<how>: the same
//     for the implicit stepper on its shipped scenes.
#include <benchmark/benchmark.h>

#include <Eigen/Geometry>
#include <memory>
#include <string>
#include <vector>

#include "integrators/explicit_stepper.h"
#include "integrators/implicit_stepper.h"
#include "integrators/scene.h"
#include "integrators/trajectory_gradient.h"

namespace ncpkit::bench {
namespace {

std::unique_ptr<ExplicitStepper> SlidingBox() {
  Body ground;
  ground.name = "ground";
  ground.shape.kind = ShapeKind::HalfSpace;
  ground.fixed = true;
  Body box;
  box.name = "box";
  box.shape.kind = ShapeKind::Box;
  box.shape.size = Eigen::Vector3d(0.4, 0.3, 0.2);
  box.mass = SolidMassProperties(box.shape, 2.0);
  box.state.position = Eigen::Vector3d(0, 0, 0.1);
  box.state.linear_velocity = Eigen::Vector3d(2.0, 0.5, 0.0);
  ContactLawTable laws;
  laws.default_law.mu = 0.5;
  ExplicitStepperOptions options;
  options.h = 0.01;
  options.tolerance = 1e-10;
  return std::make_unique<ExplicitStepper>(std::vector<Body>{ground, box}, laws, options);
}

// The state after one step from `start` with entry k of the derivative coordinates moved by d.
RigidBodyState Moved(const RigidBodyState& start, int k, double d) {
  RigidBodyState s = start;
  Eigen::Vector3d v = Eigen::Vector3d::Zero();
  v[k % 3] = d;
  if (k < 3) s.position += v;
  if (k >= 3 && k < 6) {
    s.orientation =
        Eigen::Quaterniond(Eigen::AngleAxisd(d, Eigen::Vector3d::Unit(k % 3))) * s.orientation;
  }
  if (k >= 6 && k < 9) s.linear_velocity += v;
  if (k >= 9) s.angular_velocity += v;
  return s;
}

// The full state Jacobian of the step `stepper` takes from where it stands, its body `body` the
// one that moves (12 x 12): "exact" from the step's derivative, "central" by central differences
// of the step (24 more steps from perturbed states); both include the step itself.
template <class SomeStepper>
void StateJacobianLoop(benchmark::State& state, SomeStepper* stepper, int body, bool exact) {
  const std::unique_ptr<StepperSnapshot> start = stepper->Save();
  const RigidBodyState initial = stepper->bodies()[body].state;
  Eigen::MatrixXd J(12, 12);
  for (auto _ : state) {
    stepper->Restore(*start);
    stepper->Step();
    if (exact) {
      J = stepper->LastStepDerivative()->StateJacobian();
    } else {
      const double eps = 1e-6;
      for (int k = 0; k < 12; ++k) {
        Eigen::Vector3d ends[2];
        for (int side = 0; side < 2; ++side) {
          stepper->Restore(*start);
          stepper->SetBodyState(body, Moved(initial, k, side == 0 ? eps : -eps));
          stepper->Step();
          ends[side] = stepper->bodies()[body].state.position;
        }
        J.block<3, 1>(0, k) = (ends[0] - ends[1]) / (2 * eps);  // (positions only suffice)
      }
    }
    benchmark::DoNotOptimize(J.data());
  }
}

void BM_StateJacobian(benchmark::State& state, bool exact) {
  std::unique_ptr<ExplicitStepper> stepper = SlidingBox();
  StateJacobianLoop(state, stepper.get(), 1, exact);
}
BENCHMARK_CAPTURE(BM_StateJacobian, exact, true);
BENCHMARK_CAPTURE(BM_StateJacobian, central, false);

std::unique_ptr<Stepper> Stack50() {
  return MakeStepper(LoadScene(std::string(NCPKIT_SCENE_DIR) + "/engine/stack50.json"));
}

void BM_StepForward(benchmark::State& state) {
  std::unique_ptr<Stepper> stepper = Stack50();
  for (int k = 0; k < 50; ++k) stepper->Step();
  const std::unique_ptr<StepperSnapshot> at = stepper->Save();
  for (auto _ : state) {
    stepper->Restore(*at);
    stepper->Step();
  }
}
BENCHMARK(BM_StepForward)->Unit(benchmark::kMicrosecond);

void BM_StepBackward(benchmark::State& state) {
  std::unique_ptr<Stepper> stepper = Stack50();
  for (int k = 0; k < 51; ++k) stepper->Step();
  Eigen::VectorXd g;
  for (auto _ : state) {
    const std::unique_ptr<StepDerivative> d = stepper->LastStepDerivative();
    if (g.size() == 0) g = Eigen::VectorXd::Ones(d->state_size());
    benchmark::DoNotOptimize(d->Vjp(g).state.data());
  }
}
BENCHMARK(BM_StepBackward)->Unit(benchmark::kMicrosecond);

void BM_StackForward(benchmark::State& state) {
  for (auto _ : state) {
    std::unique_ptr<Stepper> stepper = Stack50();
    for (int k = 0; k < 100; ++k) stepper->Step();
  }
}
BENCHMARK(BM_StackForward)->Unit(benchmark::kMillisecond);

void BM_StackGradient(benchmark::State& state) {
  const int interval = static_cast<int>(state.range(0));
  for (auto _ : state) {
    std::unique_ptr<Stepper> stepper = Stack50();
    TrajectoryGradientOptions options;
    options.steps = 100;
    options.checkpoint_interval = interval;
    const TrajectoryGradientResult r = ReverseGradient(
        stepper.get(),
        [](int step, const Stepper& s) -> Eigen::VectorXd {
          if (step != 100) return Eigen::VectorXd();
          Eigen::VectorXd g = Eigen::VectorXd::Zero(12 * (static_cast<int>(s.bodies().size()) - 1));
          for (Eigen::Index k = 0; k < g.size(); k += 12) g[k + 2] = 1.0;  // sum of heights
          return g;
        },
        options);
    benchmark::DoNotOptimize(r.initial_state.data());
    state.counters["undetermined"] = static_cast<double>(r.undetermined_steps.size());
  }
}
BENCHMARK(BM_StackGradient)->Arg(0)->Arg(25)->Unit(benchmark::kMillisecond);

// The box pushed off-centre by a sphere finger of examples/derivatives/push.py, qp-lcp.
const char* const kPushScene = R"({"name": "push", "stepper": "quasistatic", "model": "qp-lcp",
  "solver": "lemke", "h": 0.05, "duration": 1.0, "gravity": [0, 0, -9.81], "contact": {"mu": 0.4},
  "bodies": [{"name": "ground", "shape": "plane"},
             {"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 1.0,
              "position": [0, 0, 0.05]},
             {"name": "finger", "shape": "sphere", "size": [0.03], "mass": 0.1,
              "position": [-0.131, -0.05, 0.05]}],
  "actuators": [{"name": "fx", "axis": [1, 0, 0], "bodies": ["finger"], "stiffness": 1000},
                {"name": "fy", "axis": [0, 1, 0], "bodies": ["finger"], "stiffness": 1000}],
  "commands": {"fx": [[0, 0], [1.0, 0.3]], "fy": [[0, 0], [1.0, -0.06]]}})";

// The stepper of `which` (0: the gripper, 1: the push) after `steps` steps.
std::unique_ptr<Stepper> QuasistaticAt(int which, int steps) {
  std::unique_ptr<Stepper> stepper =
      which == 0 ? MakeStepper(LoadScene(std::string(NCPKIT_SCENE_DIR) + "/gripper_sphere.json"))
                 : MakeStepper(ParseScene(kPushScene, "push"));
  for (int k = 0; k < steps; ++k) stepper->Step(std::vector<Vector6d>());
  return stepper;
}

void BM_QuasistaticStepForward(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  std::unique_ptr<Stepper> stepper = QuasistaticAt(which, which == 0 ? 19 : 9);
  const std::unique_ptr<StepperSnapshot> at = stepper->Save();
  for (auto _ : state) {
    stepper->Restore(*at);
    stepper->Step(std::vector<Vector6d>());
  }
}
BENCHMARK(BM_QuasistaticStepForward)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_QuasistaticStepBackward(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  std::unique_ptr<Stepper> stepper = QuasistaticAt(which, which == 0 ? 20 : 10);
  Eigen::VectorXd g;
  for (auto _ : state) {
    const std::unique_ptr<StepDerivative> d = stepper->LastStepDerivative();
    if (g.size() == 0) g = Eigen::VectorXd::Ones(d->state_size());
    benchmark::DoNotOptimize(d->Vjp(g).state.data());
  }
}
BENCHMARK(BM_QuasistaticStepBackward)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The implicit stepper on the shipped scenes: `which` 0 the sliding cube (face contact,
// sliding), 1 the toppling cube (step 50: rocking on its vertex), 2 the quasi-rigid box (step
// 600: at rest in its layer, which carries its state), after `steps` steps.
const char* const kImplicitScenes[] = {"sliding_cube.json", "toppling_cube.json",
                                       "quasi_rigid_drop.json"};
constexpr int kImplicitAt[] = {10, 50, 600};

std::unique_ptr<ImplicitStepper> ImplicitAt(int which, int steps) {
  const Scene scene = LoadScene(std::string(NCPKIT_SCENE_DIR) + "/" + kImplicitScenes[which]);
  std::unique_ptr<Stepper> stepper = MakeStepper(scene);
  auto* implicit = dynamic_cast<ImplicitStepper*>(stepper.release());
  std::unique_ptr<ImplicitStepper> out(implicit);
  for (int k = 0; k < steps; ++k) out->Step();
  return out;
}

void BM_ImplicitStepForward(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  std::unique_ptr<ImplicitStepper> stepper = ImplicitAt(which, kImplicitAt[which] - 1);
  const std::unique_ptr<StepperSnapshot> at = stepper->Save();
  for (auto _ : state) {
    stepper->Restore(*at);
    stepper->Step();
  }
}
BENCHMARK(BM_ImplicitStepForward)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

void BM_ImplicitStepBackward(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  std::unique_ptr<ImplicitStepper> stepper = ImplicitAt(which, kImplicitAt[which]);
  Eigen::VectorXd g;
  for (auto _ : state) {
    const std::unique_ptr<StepDerivative> d = stepper->LastStepDerivative();
    if (g.size() == 0) g = Eigen::VectorXd::Ones(d->state_size());
    benchmark::DoNotOptimize(d->Vjp(g).state.data());
  }
}
BENCHMARK(BM_ImplicitStepBackward)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

// The full state Jacobian of the shipped sliding cube's step 10, as StateJacobianLoop's.
void BM_ImplicitStateJacobian(benchmark::State& state, bool exact) {
  std::unique_ptr<ImplicitStepper> stepper = ImplicitAt(0, kImplicitAt[0] - 1);
  StateJacobianLoop(state, stepper.get(), stepper->BodyIndex("cube"), exact);
}
BENCHMARK_CAPTURE(BM_ImplicitStateJacobian, exact, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ImplicitStateJacobian, central, false)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ncpkit::bench
