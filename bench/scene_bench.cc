// Per-step cost of the implicit stepper: the paper scenes with each solver variant, and two
// scaling series (boxes resting side by side; towers of boxes). Each benchmark iteration is
// one step; a scene that ends is restarted outside the timed region.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "integrators/scene.h"

namespace ncpkit {
namespace {

void StepScene(benchmark::State& state, const Scene& scene) {
  auto runner = std::make_unique<SceneRunner>(scene);
  int failed = 0, steps = 0, contacts = 0, iterations = 0;
  for (auto _ : state) {
    if (runner->Done()) {
      state.PauseTiming();
      runner = std::make_unique<SceneRunner>(scene);
      state.ResumeTiming();
    }
    const StepRecord record = runner->Step();
    failed += record.summary.IsSolved() ? 0 : 1;
    contacts += static_cast<int>(record.contacts.size());
    iterations += record.summary.iterations;
    ++steps;
  }
  state.counters["failed_steps"] = failed;
  state.counters["pairs/step"] = static_cast<double>(contacts) / std::max(1, steps);
  state.counters["iterations/step"] = static_cast<double>(iterations) / std::max(1, steps);
  state.counters["time/pair"] = benchmark::Counter(
      static_cast<double>(contacts), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_PaperScene(benchmark::State& state, const std::string& file, const std::string& variant) {
  Scene scene = LoadScene(std::string(NCPKIT_SCENE_DIR) + "/" + file);
  ApplySolverVariant(variant, &scene.options);
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
  box.mass = MassProperties::Box(1.0, box.shape.size);
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

const char* const kScenes[] = {"sliding_cube.json", "rolling_cylinder.json", "toppling_cube.json",
                               "cylinder_manipulation.json", "quasi_rigid_drop.json"};
const char* const kVariants[] = {"fb-newton", "fb-newton-dense", "minmap-newton", "penalized-fb",
                                 "fb-newton-cold"};

int RegisterSceneBenchmarks() {
  for (const char* file : kScenes) {
    for (const char* variant : kVariants) {
      std::string name = std::string("BM_PaperScene/") + file + "/" + variant;
      benchmark::RegisterBenchmark(name.c_str(), BM_PaperScene, std::string(file),
                                   std::string(variant))
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return 0;
}
const int kRegistered = RegisterSceneBenchmarks();

BENCHMARK(BM_BoxesSideBySide)->Arg(1)->Arg(10)->Arg(30)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BoxTower)->Arg(2)->Arg(5)->Arg(10)->Arg(20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ncpkit
