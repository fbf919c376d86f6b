// The steady state of both stepper families: once the set of active contacts stops changing,
// a step reuses its solver's symbolic analyses and allocates nothing on the heap.
#include <doctest/doctest.h>

#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "integrators/implicit_stepper.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/mcp/semismooth_newton.h"
#include "tests/allocation_counter.h"

namespace ncpkit {
namespace {

Scene Bundled(const std::string& file) {
  return LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/scenes/" + file);
}

// A tower of 5 unit boxes resting on the ground.
Scene Tower() {
  Scene scene;
  scene.name = "tower of 5 boxes";
  scene.duration = 0.5;
  for (int i = 0; i < 5; ++i) {
    Body box;
    box.name = "box" + std::to_string(i);
    box.shape.kind = ShapeKind::Box;
    box.shape.size = Eigen::Vector3d::Ones();
    box.mass = SolidMassProperties(box.shape, 1.0);
    box.state.position = Eigen::Vector3d(0, 0, 0.5 + i);
    scene.bodies.push_back(box);
  }
  Body ground;
  ground.name = "ground";
  ground.shape.kind = ShapeKind::HalfSpace;
  ground.fixed = true;
  scene.bodies.push_back(ground);
  return scene;
}

// The pairs (bodies) a record's contacts join, to tell when the active set changes.
std::vector<std::pair<int, int>> ActivePairs(const Stepper& stepper, const StepRecord& record) {
  std::vector<PairRow> rows;
  stepper.TablePairs(record, &rows);
  std::vector<std::pair<int, int>> pairs;
  for (const PairRow& row : rows) pairs.emplace_back(row.body_a, row.body_b);
  return pairs;
}

struct AllocationCount {
  int steady_steps = 0;     // steps whose active set equals the previous step's
  int64_t allocations = 0;  // heap allocations in those steps
  int64_t worst = 0;        // the most in one of them
  // Steady steps that `set_apart` marked (counted here instead of above).
  int apart_steps = 0;
  int64_t apart_allocations = 0;
};

// Counts the heap allocations of every step after the first `warmup` whose active pairs (and
// number of contact points) are those of the step before; steps for which `set_apart` is true
// are counted apart.
AllocationCount CountSteadyAllocations(
    const Scene& scene, int warmup,
    const std::function<bool(const StepRecord&)>& set_apart = nullptr) {
  SceneRunner runner(scene);
  AllocationCount count;
  std::vector<std::pair<int, int>> previous_pairs;
  int previous_points = -1;
  for (int step = 0; !runner.Done(); ++step) {
    const int64_t before = testing::AllocationCount();
    const StepRecord& record = runner.Step();
    const int64_t allocations = testing::AllocationCount() - before;
    std::vector<std::pair<int, int>> pairs = ActivePairs(runner.stepper(), record);
    const bool steady = pairs == previous_pairs && record.num_contacts == previous_points;
    if (step >= warmup && steady && set_apart && set_apart(record)) {
      ++count.apart_steps;
      count.apart_allocations += allocations;
    } else if (step >= warmup && steady) {
      ++count.steady_steps;
      count.allocations += allocations;
      count.worst = std::max(count.worst, allocations);
    }
    previous_pairs = std::move(pairs);
    previous_points = record.num_contacts;
  }
  return count;
}

TEST_CASE("a step with the same active contacts as the last allocates nothing") {
  if (!testing::CountsMalloc()) {
    MESSAGE("the sanitizer owns malloc in this build: allocations are counted in Release only");
    return;
  }
  Scene cube = Bundled("sliding_cube.json");
  cube.duration = 1.0;
  const AllocationCount sliding = CountSteadyAllocations(cube, 2);
  CHECK(sliding.steady_steps >= 90);
  CHECK(sliding.allocations == 0);
  const AllocationCount tower = CountSteadyAllocations(Tower(), 2);
  CHECK(tower.steady_steps >= 40);
  CHECK(tower.allocations == 0);
  const AllocationCount gripper = CountSteadyAllocations(Bundled("gripper_sphere.json"), 2);
  CHECK(gripper.steady_steps >= 10);
  INFO("gripper_sphere (qp-lcp/lemke): " << gripper.allocations << " allocations in "
                                         << gripper.steady_steps << " steady steps, at most "
                                         << gripper.worst << " in one");
  CHECK(gripper.allocations == 0);
}

// The explicit stepper's models and solvers keep their workspaces and summaries (messages are
// rewritten in place), so a resting tower of five boxes steps without allocating in every
// default variant. A step whose first Lemke pass ends on a basis that rounding spoiled re-runs
// it with a fresh factorization every pivot, and a step that recovery does not solve goes to
// the proximal-point wrapper: those recovery paths allocate, and are counted apart.
TEST_CASE("explicit steps with unchanged contacts allocate nothing") {
  if (!testing::CountsMalloc()) {
    MESSAGE("the sanitizer owns malloc in this build: allocations are counted in Release only");
    return;
  }
  Scene tower = Tower();
  tower.SetStepper("explicit");
  tower.duration = 0.6;
  const auto recovered = [](const StepRecord& record) {
    const std::string& message = record.summary.message;
    return message.find("recovered") != std::string::npos ||
           message.find("proximal point") != std::string::npos;
  };
  for (const char* name : {"cone/nsgs", "cone/nsgs-velocity", "cone/fc-newton", "cone/auto",
                           "pyramid/lemke", "relaxed/lemke", "relaxed/pgs"}) {
    const std::string variant = name;
    Scene scene = tower;
    scene.ApplyVariant(variant);
    const AllocationCount count = CountSteadyAllocations(scene, 5, recovered);
    INFO(variant << ": " << count.allocations << " allocations in " << count.steady_steps
                 << " steady steps, at most " << count.worst << " in one; " << count.apart_steps
                 << " recovered steps");
    CHECK(count.steady_steps + count.apart_steps == 55);
    CHECK(count.steady_steps >= 45);
    CHECK(count.allocations == 0);
    if (count.apart_steps > 0) {
      std::cout << "explicit stepper " << variant << ": " << count.apart_steps
                << " of 55 steady steps took Lemke's recovery or the proximal-point wrapper ("
                << count.apart_allocations << " allocations there)\n";
    }
  }
}

// On threads, the explicit stepper's narrow phase and frame rows run in chunks whose buffers
// keep their capacity: the 50-box stack (25 islands, some 75 pairs) at rest allocates nothing.
TEST_CASE("explicit steps on two threads with unchanged contacts allocate nothing") {
  if (!testing::CountsMalloc()) {
    MESSAGE("the sanitizer owns malloc in this build: allocations are counted in Release only");
    return;
  }
  Scene stack = Bundled("engine/stack50.json");
  stack.mutable_settings().threads = 2;
  const AllocationCount count = CountSteadyAllocations(stack, 30);
  INFO(count.allocations << " allocations in " << count.steady_steps << " steady steps, at most "
                         << count.worst << " in one");
  CHECK(count.steady_steps >= 50);
  CHECK(count.allocations == 0);
}

// A wall of one island of about a thousand contacts: its sweeps run on both threads
// (VelocityGaussSeidel::SetParallelRunner), whose parts keep their storage from step to step.
TEST_CASE("explicit steps of one large island on two threads allocate nothing") {
  if (!testing::CountsMalloc()) {
    MESSAGE("the sanitizer owns malloc in this build: allocations are counted in Release only");
    return;
  }
  Scene wall = Bundled("engine/wall100.json");
  wall.ApplyVariant("cone/nsgs-velocity");
  // At 30 sweeps a step the wall rests, its contacts the same from step to step; at 20 it
  // creeps, and which steps keep their contacts moves with rounding.
  wall.mutable_settings().max_iterations = 30;
  wall.mutable_settings().threads = 2;
  wall.duration = 1.0;
  const AllocationCount count = CountSteadyAllocations(wall, 20);
  INFO(count.allocations << " allocations in " << count.steady_steps << " steady steps, at most "
                         << count.worst << " in one");
  CHECK(count.steady_steps >= 50);
  CHECK(count.allocations == 0);
}

// The solver of the latest step's first island (the implicit stepper's islands each have
// their own), or the stepper's one solver.
const ComplementaritySolver& FirstIslandSolver(const Stepper& stepper) {
  if (const auto* implicit = dynamic_cast<const ImplicitStepper*>(&stepper)) {
    return implicit->island_solver(0);
  }
  return stepper.solver();
}

// Runs a scene of one island and sums the KLU symbolic analyses of the steps solved in one
// attempt (the solver's summary is then the step's); *steps counts every step, *factorized those
// whose Newton matrix was factorized, *dense those factorized dense, *chorded those solved by
// chord steps on an earlier step's factorization alone (neither is solved by the warm start).
int NewtonAnalyses(const Scene& scene, int* steps, int* dense, int* factorized = nullptr,
                   int* chorded = nullptr) {
  SceneRunner runner(scene);
  int analyses = 0;
  *steps = *dense = 0;
  if (factorized) *factorized = 0;
  if (chorded) *chorded = 0;
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    ++*steps;
    REQUIRE(record.islands == 1);
    if (record.attempts != 1) continue;
    const auto& summary = dynamic_cast<const FischerBurmeisterNewton::Summary&>(
        FirstIslandSolver(runner.stepper()).summary());
    analyses += summary.symbolic_analyses;
    *dense += summary.dense_linear_algebra && summary.factorizations > 0 ? 1 : 0;
    if (factorized) *factorized += summary.factorizations > 0 ? 1 : 0;
    if (chorded) *chorded += summary.factorizations == 0 && summary.chord_steps > 0 ? 1 : 0;
  }
  return analyses;
}

TEST_CASE("the solvers keep their symbolic analysis over steps with an unchanged pattern") {
  int steps = 0, dense = 0, factorized = 0;
  SUBCASE("implicit stepper, fb-newton (KLU) on a tower of 5 boxes") {
    CHECK(NewtonAnalyses(Tower(), &steps, &dense) == 1);
    CHECK(steps == 50);
    CHECK(dense == 0);
  }
  SUBCASE("small or dense Newton matrices are factorized dense: no KLU analysis at all") {
    Scene cube = Bundled("sliding_cube.json");  // 24 unknowns, a full pattern
    cube.duration = 1.0;
    int chorded = 0;
    CHECK(NewtonAnalyses(cube, &steps, &dense, &factorized, &chorded) == 0);
    CHECK(steps == 100);
    // The first step factorizes; later ones take chord steps on the kept factorization
    // (SolverOptions::reuse_factorization) while it serves.
    CHECK(factorized >= 1);
    CHECK(dense == factorized);
    CHECK(factorized + chorded == 100);
    CHECK(chorded >= 90);
    MESSAGE("sliding cube: " << factorized << " steps factorized, " << chorded
                             << " by chord steps");
    // Chord steps go with the warm start: the cold variant factorizes every step.
    cube.ApplyVariant("fb-newton-cold");
    CHECK(NewtonAnalyses(cube, &steps, &dense, &factorized, &chorded) == 0);
    CHECK(factorized == 100);
    CHECK(chorded == 0);
    Scene fence = Bundled("fence_particle.json");  // dqc/fb-newton, fewer than 20 unknowns
    fence.duration = 2.0;
    CHECK(NewtonAnalyses(fence, &steps, &dense, &factorized) == 0);
    CHECK(steps == 200);
    CHECK(factorized > 100);
    CHECK(dense == factorized);
  }
  SUBCASE("quasistatic stepper, qp-lcp: the stiffness's Cholesky analysis") {
    const Scene scene = Bundled("gripper_sphere.json");
    SceneRunner runner(scene);
    while (!runner.Done()) runner.Step();
    const auto& stepper = dynamic_cast<const QuasistaticStepper&>(runner.stepper());
    CHECK(stepper.cholesky_analyses() == 1);
  }
}

}  // namespace
}  // namespace ncpkit
