// Per-step cost of the steppers: the paper scenes with each solver variant (implicit and
// quasistatic), and two scaling series of the implicit stepper (boxes resting side by side;
// towers of boxes). Each benchmark iteration is one step; a scene that ends is restarted
// outside the timed region, so the figures cover whole scenes, not their first steps.
#include <benchmark/benchmark.h>

#include <memory>
#include <new>
#include <string>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "tests/allocation_counter.h"

namespace ncpkit {
namespace {

void StepScene(benchmark::State& state, const Scene& scene) {
  std::unique_ptr<SceneRunner> runner;
  try {
    runner = std::make_unique<SceneRunner>(scene);
  } catch (const std::invalid_argument& e) {
    state.SkipWithError(e.what());  // e.g. qp-lcp on a scene without regularization
    return;
  }
  int64_t failed = 0, steps = 0, contacts = 0, iterations = 0, size = 0;
  const int64_t allocations_before = testing::AllocationCount();
  for (auto _ : state) {
    if (runner->Done()) {
      state.PauseTiming();
      runner = std::make_unique<SceneRunner>(scene);
      state.ResumeTiming();
    }
    const StepRecord& record = runner->Step();
    failed += record.summary.IsSolved() ? 0 : 1;
    contacts += record.num_contacts;
    iterations += record.summary.iterations;
    size += record.problem_size;
    ++steps;
  }
  const double per_step = 1.0 / static_cast<double>(std::max<int64_t>(1, steps));
  state.counters["failed_steps"] = static_cast<double>(failed);
  state.counters["contacts/step"] = static_cast<double>(contacts) * per_step;
  state.counters["iterations/step"] = static_cast<double>(iterations) * per_step;
  state.counters["size/step"] = static_cast<double>(size) * per_step;
  // Heap allocations per step, restarts included (0 in the steady state of an allocation-free
  // stepper).
  state.counters["allocs/step"] =
      static_cast<double>(testing::AllocationCount() - allocations_before) * per_step;
}

void BM_PaperScene(benchmark::State& state, const std::string& file, const std::string& variant) {
  Scene scene = LoadScene(std::string(NCPKIT_SCENE_DIR) + "/" + file);
  scene.ApplyVariant(variant);
  StepScene(state, scene);
}

Body Ground() {
  Body ground;
  ground.name = "ground";
  ground.shape.kind = ShapeKind::HalfSpace;
  ground.fixed = true;
  return ground;
}

Body UnitBox(const std::string& name, const Eigen::Vector3d& position) {
  Body box;
  box.name = name;
  box.shape.kind = ShapeKind::Box;
  box.shape.size = Eigen::Vector3d::Ones();
  box.mass = SolidMassProperties(box.shape, 1.0);
  box.state.position = position;
  return box;
}

// N unit boxes on the plane, box i with its centre at first + i * offset.
Scene UnitBoxes(int n, const Eigen::Vector3d& first, const Eigen::Vector3d& offset) {
  Scene scene;
  scene.duration = 1.0;
  scene.laws.default_law.mu = 0.5;
  for (int i = 0; i < n; ++i) {
    scene.bodies.push_back(UnitBox("box" + std::to_string(i), first + i * offset));
  }
  scene.bodies.push_back(Ground());
  return scene;
}

// N boxes resting in a row, 0.1 m apart: N contact patches; the box-box pairs are ruled out by
// the separation test.
void BM_BoxesSideBySide(benchmark::State& state) {
  StepScene(state, UnitBoxes(static_cast<int>(state.range(0)), Eigen::Vector3d(0, 0, 0.5),
                             Eigen::Vector3d(1.1, 0, 0)));
}

// A tower of N boxes: N face contacts, N - 1 of them between moving boxes.
void BM_BoxTower(benchmark::State& state) {
  StepScene(state, UnitBoxes(static_cast<int>(state.range(0)), Eigen::Vector3d(0, 0, 0.5),
                             Eigen::Vector3d(0, 0, 1.0)));
}

const char* const kImplicitScenes[] = {"sliding_cube.json", "rolling_cylinder.json",
                                       "toppling_cube.json", "cylinder_manipulation.json",
                                       "quasi_rigid_drop.json"};
const char* const kQuasistaticScenes[] = {"fence_particle.json", "gripper_sphere.json",
                                          "cube_stacking.json"};

int RegisterSceneBenchmarks() {
  const auto add = [](const std::string& family, const char* file, const std::string& variant) {
    const std::string name = family + "/" + file + "/" + variant;
    benchmark::RegisterBenchmark(name.c_str(), BM_PaperScene, std::string(file), variant)
        ->Unit(benchmark::kMicrosecond);
  };
  for (const char* file : kImplicitScenes) {
    for (const std::string& variant : DefaultVariants(StepperKind::Implicit)) {
      add("BM_PaperScene", file, variant);
    }
  }
  for (const char* file : kQuasistaticScenes) {
    for (const std::string& variant : DefaultVariants(StepperKind::Quasistatic)) {
      add("BM_Quasistatic", file, variant);
    }
  }
  return 0;
}
const int kRegistered = RegisterSceneBenchmarks();

BENCHMARK(BM_BoxesSideBySide)->Arg(1)->Arg(10)->Arg(30)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BoxTower)->Arg(2)->Arg(5)->Arg(10)->Arg(20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ncpkit
