// Per-step cost of the steppers: the paper scenes with each solver variant (implicit and
// quasistatic), and two scaling series of the implicit stepper (boxes resting side by side;
// towers of boxes), the 50-box stack, ordinary turned columns, a layer of many spheres (set-up
// and steps). Each benchmark iteration is one whole scene (StepScene). The explicit stepper's
// scenes are in engine_bench.cc.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "tests/allocation_counter.h"
#include "tests/integrators/random_columns.h"

namespace ncpkit {
namespace {

// One benchmark iteration runs one whole scene (building its stepper is not timed, see the
// set-up benchmarks below), so every figure covers whole scenes, late steps as much as the
// first ones. The time column is per scene; so are the counters steps/scene and failed/scene
// (failed steps); the others are per step, over every step run: mean and median step time
// (StepRecord::step_seconds: pair search, start values, assembly, solve, update), contacts,
// Newton iterations, problem size, heap allocations.
void StepScene(benchmark::State& state, const Scene& scene) {
  std::unique_ptr<SceneRunner> runner;
  try {
    runner = std::make_unique<SceneRunner>(scene);
  } catch (const std::invalid_argument& e) {
    state.SkipWithError(e.what());  // e.g. qp-lcp on a scene without regularization
    return;
  }
  int64_t failed = 0, steps = 0, contacts = 0, iterations = 0, size = 0, allocations = 0;
  int64_t scenes = 0;
  std::vector<double> step_us, scene_us;
  for (auto _ : state) {
    state.PauseTiming();
    runner = std::make_unique<SceneRunner>(scene);
    scene_us.clear();
    scene_us.reserve(static_cast<size_t>(scene.duration / scene.h()) + 2);
    const int64_t allocations_before = testing::AllocationCount();
    state.ResumeTiming();
    while (!runner->Done()) {
      const StepRecord& record = runner->Step();
      failed += record.summary.IsSolved() ? 0 : 1;
      contacts += record.num_contacts;
      iterations += record.summary.iterations;
      size += record.problem_size;
      scene_us.push_back(1e6 * record.step_seconds);
    }
    state.PauseTiming();
    ++scenes;
    allocations += testing::AllocationCount() - allocations_before;
    step_us.insert(step_us.end(), scene_us.begin(), scene_us.end());
    state.ResumeTiming();
  }
  steps = static_cast<int64_t>(step_us.size());
  const double per_step = 1.0 / static_cast<double>(std::max<int64_t>(1, steps));
  double total_us = 0.0;
  for (double us : step_us) total_us += us;
  double median_us = 0.0;
  const double max_us = step_us.empty() ? 0.0 : *std::max_element(step_us.begin(), step_us.end());
  if (!step_us.empty()) {
    std::nth_element(step_us.begin(), step_us.begin() + step_us.size() / 2, step_us.end());
    median_us = step_us[step_us.size() / 2];
  }
  const double per_scene = 1.0 / static_cast<double>(std::max<int64_t>(1, scenes));
  state.counters["steps/scene"] = static_cast<double>(steps) * per_scene;
  state.counters["mean_us/step"] = total_us * per_step;
  state.counters["median_us/step"] = median_us;
  state.counters["max_us/step"] = max_us;
  state.counters["failed/scene"] = static_cast<double>(failed) * per_scene;
  state.counters["contacts/step"] = static_cast<double>(contacts) * per_step;
  state.counters["iterations/step"] = static_cast<double>(iterations) * per_step;
  state.counters["size/step"] = static_cast<double>(size) * per_step;
  state.counters["us/contact"] = total_us / static_cast<double>(std::max<int64_t>(1, contacts));
  // Heap allocations per step (0 in the steady state of an allocation-free stepper).
  state.counters["allocs/step"] = static_cast<double>(allocations) * per_step;
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

// A column a user would write (tests/integrators/random_columns.h): N boxes of different sizes
// and masses, turned and offset a little, placed touching or dropped from a millimetre, seed S,
// 1 s with the implicit stepper's defaults; max_us/step is the slowest step (a landing).
void BM_OrdinaryColumn(benchmark::State& state) {
  testing::ColumnsSpec spec;
  spec.boxes = static_cast<int>(state.range(0));
  spec.seed = static_cast<unsigned>(100 * spec.boxes + state.range(1));
  spec.stepper = "implicit";
  StepScene(state, ParseScene(testing::RandomColumnsScene(spec), "ordinary column"));
}

// The dropped columns of docs/reliability.md ("Ordinary stacks"): N boxes as above, each dropped
// from a height uniform in [0, 1 mm] (ColumnsSpec::uniform_drops), seed S, 1 s with the implicit
// stepper's defaults. The three seeds land three ways: 10022 is solved by FB Newton from its
// first start, 10008 from its first start after an active-set restart, and 10032 (the slowest
// landing measured over those columns) only after FB Newton and the AutoSolver's chain fail from
// every start, by FB Newton from its own best point (docs/steppers.md).
void BM_DroppedColumn(benchmark::State& state) {
  testing::ColumnsSpec spec;
  spec.boxes = static_cast<int>(state.range(0));
  spec.seed = static_cast<unsigned>(state.range(1));
  spec.stepper = "implicit";
  spec.uniform_drops = true;
  StepScene(state, ParseScene(testing::RandomColumnsScene(spec), "dropped column"));
}

// A brick pyramid a user would write (tests/integrators/random_columns.h), L layers, seed S,
// 1 s with the implicit stepper's defaults: every box rests on two, and at such degenerate
// solutions FB Newton takes its Levenberg-Marquardt direction.
void BM_BrickPyramid(benchmark::State& state) {
  StepScene(state, ParseScene(testing::RandomPyramidScene(static_cast<unsigned>(state.range(1)),
                                                          static_cast<int>(state.range(0)),
                                                          "implicit", 1.0),
                              "brick pyramid"));
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

// The 50-box stack: 5 x 5 columns of two unit boxes, 5 mm gaps between the boxes and above the
// ground, dropped and left to rest (0.5 s, 50 steps): 25 box-plane and 25 box-box face contacts
// plus the side contacts that the 5 mm gaps bring within the margin.
Scene FiftyBoxStack() {
  Scene scene;
  scene.duration = 0.5;
  scene.laws.default_law.mu = 0.5;
  const double g = 0.005;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int k = 0; k < 2; ++k) {
        scene.bodies.push_back(
            UnitBox("b" + std::to_string(10 * i + 2 * j + k),
                    Eigen::Vector3d(i * (1 + g), j * (1 + g), 0.5 + g + k * (1 + g))));
      }
    }
  }
  scene.bodies.push_back(Ground());
  return scene;
}

void BM_FiftyBoxStack(benchmark::State& state) { StepScene(state, FiftyBoxStack()); }

// N spheres (radius 5 cm, 1 kg) resting on the plane in a square grid 13 cm apart, as a scene
// file: N sphere-plane contacts, no sphere-sphere pair within the contact margin.
std::string SphereLayerJson(int n, double duration) {
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  std::string text =
      "{\"name\": \"sphere layer\", \"h\": 0.01, \"duration\": " + std::to_string(duration) +
      ", \"contact\": {\"mu\": 0.5}, \"bodies\": [";
  for (int k = 0; k < n; ++k) {
    text += (k ? ", " : "") + std::string("{\"name\": \"s") + std::to_string(k) +
            "\", \"shape\": \"sphere\", \"size\": [0.05], \"mass\": 1, \"position\": [" +
            std::to_string(0.13 * (k / side)) + ", " + std::to_string(0.13 * (k % side)) +
            ", 0.05]}";
  }
  text += "], \"fixed\": [{\"name\": \"ground\", \"shape\": \"plane\", \"normal\": [0, 0, 1]}]}";
  return text;
}

// What a scene of N spheres costs before its first step: reading the file (with the initial
// overlap check) and building the stepper. Quadratic in N before the broad phase.
void BM_SphereLayerSetup(benchmark::State& state) {
  const std::string text = SphereLayerJson(static_cast<int>(state.range(0)), 0.05);
  for (auto _ : state) {
    Scene scene = ParseScene(text, "sphere layer");
    SceneRunner runner(scene);
    benchmark::DoNotOptimize(runner.Done());
  }
}

// The same scene stepped (five steps: the cold first one and four warm ones).
void BM_SphereLayer(benchmark::State& state) {
  StepScene(state,
            ParseScene(SphereLayerJson(static_cast<int>(state.range(0)), 0.05), "sphere layer"));
}

// N spheres (radius 5 cm, 0.5 kg) in four layers of a square lattice 11 cm apart, each moved
// by up to 4 mm, dropped from 1 cm into a box just wide enough (explicit stepper, cone/
// nsgs-velocity at 20 sweeps a step, the engines' fixed budget: a pile of spheres needs
// thousands of sweeps to reach a tolerance, and more the wider it is). 30 steps of 10 ms: the
// layers land and settle.
std::string SphereDropJson(int n) {
  const int side = static_cast<int>(std::ceil(std::sqrt(std::ceil(n / 4.0))));
  const double r = 0.05, pitch = 0.11;
  std::string text =
      "{\"name\": \"sphere drop\", \"stepper\": \"explicit\", \"model\": \"cone\", "
      "\"solver\": \"nsgs-velocity\", \"tolerance\": 1e-6, \"max_iterations\": 20, "
      "\"h\": 0.01, \"duration\": 0.3, \"gravity\": [0, 0, -9.81], \"contact\": {\"mu\": 0.5}, "
      "\"bodies\": [";
  for (int k = 0; k < n; ++k) {
    const int layer = k / (side * side), i = (k / side) % side, j = k % side;
    const double x = i * pitch + 0.004 * std::sin(1.3 * k);
    const double y = j * pitch + 0.004 * std::cos(0.7 * k);
    text += (k ? ", " : "") + std::string("{\"name\": \"s") + std::to_string(k) +
            "\", \"shape\": \"sphere\", \"size\": [0.05], \"mass\": 0.5, \"position\": [" +
            std::to_string(x) + ", " + std::to_string(y) + ", " +
            std::to_string(r + 0.01 + layer * pitch) + "]}";
  }
  // The walls: 10 cm thick, 1 m high, 1 cm beyond the lattice's outer spheres.
  const double inner = (side - 1) * pitch + 2 * r + 0.02, centre = (side - 1) * pitch / 2;
  const double offset = inner / 2 + 0.05;
  const auto wall = [&](const std::string& name, double x, double y, double sx, double sy) {
    return ", {\"name\": \"" + name + "\", \"shape\": \"box\", \"size\": [" + std::to_string(sx) +
           ", " + std::to_string(sy) + ", 1], \"position\": [" + std::to_string(x) + ", " +
           std::to_string(y) + ", 0.5]}";
  };
  text += "], \"fixed\": [{\"name\": \"ground\", \"shape\": \"plane\", \"normal\": [0, 0, 1]}" +
          wall("east", centre + offset, centre, 0.1, inner + 0.2) +
          wall("west", centre - offset, centre, 0.1, inner + 0.2) +
          wall("north", centre, centre + offset, inner, 0.1) +
          wall("south", centre, centre - offset, inner, 0.1) + "]}";
  return text;
}

// Reading the sphere drop and building its stepper, before the first step.
void BM_SphereDropSetup(benchmark::State& state) {
  const std::string text = SphereDropJson(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Scene scene = ParseScene(text, "sphere drop");
    SceneRunner runner(scene);
    benchmark::DoNotOptimize(runner.Done());
  }
}

// The whole drop (30 steps) of N spheres: the cost per contact (us/contact) should not grow with
// N.
void BM_SphereDrop(benchmark::State& state) {
  StepScene(state, ParseScene(SphereDropJson(static_cast<int>(state.range(0))), "sphere drop"));
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
    for (const std::string& variant : DefaultVariants("implicit")) {
      add("BM_PaperScene", file, variant);
    }
  }
  for (const char* file : kQuasistaticScenes) {
    for (const std::string& variant : DefaultVariants("quasistatic")) {
      add("BM_Quasistatic", file, variant);
    }
  }
  // The explicit stepper's scenes run in BM_Engine (engine_bench.cc), beside the peer engines.
  return 0;
}
const int kSceneRegistered = RegisterSceneBenchmarks();

BENCHMARK(BM_BoxesSideBySide)->Arg(1)->Arg(10)->Arg(30)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BoxTower)->Arg(2)->Arg(5)->Arg(10)->Arg(20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FiftyBoxStack)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OrdinaryColumn)
    ->ArgsProduct({{10}, {0, 2, 4, 6}})
    ->ArgNames({"boxes", "seed"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DroppedColumn)
    ->ArgsProduct({{10}, {10008, 10022, 10032}})
    ->ArgNames({"boxes", "seed"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BrickPyramid)
    ->ArgsProduct({{5}, {0, 7}})
    ->ArgNames({"layers", "seed"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SphereLayerSetup)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SphereLayer)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SphereDropSetup)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SphereDrop)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ncpkit
