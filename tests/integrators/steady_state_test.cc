// The steady state of both stepper families: once the set of active contacts stops changing,
// a step reuses its solver's symbolic analyses and allocates nothing on the heap.
#include <doctest/doctest.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

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
};

// Counts the heap allocations of every step after the first `warmup` whose active pairs (and
// number of contact points) are those of the step before.
AllocationCount CountSteadyAllocations(const Scene& scene, int warmup) {
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
    if (step >= warmup && steady) {
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

// The explicit stepper does not reach zero yet: its solvers return their summaries by value, so
// a summary's message is built anew in each solve (NSGS: one string per step, in
// SetSweepOutcome), and the LCP models' proximal wrapper and Lemke allocate more; not yet traced
// one by one. Recorded as expected failures with today's counts over the 55 steady steps of a
// resting tower of five boxes, so that a step that allocates more fails here.
TEST_CASE("expected failure: explicit steps with unchanged contacts still allocate") {
  if (!testing::CountsMalloc()) {
    MESSAGE("the sanitizer owns malloc in this build: allocations are counted in Release only");
    return;
  }
  Scene tower = Tower();
  tower.SetStepper("explicit");
  tower.duration = 0.6;
  struct Recorded {
    const char* variant;
    int64_t today;
    const char* reason;
  };
  const char* kMessage = "the solver builds its summary's message anew in each solve";
  const char* kUntraced = "not yet traced";
  const Recorded recorded[] = {
      {"cone/nsgs", 55, kMessage},        {"cone/nsgs-velocity", 55, kMessage},
      {"cone/fc-newton", 275, kUntraced}, {"cone/auto", 527, kUntraced},
      {"pyramid/lemke", 1210, kUntraced}, {"relaxed/lemke", 1301, kUntraced},
      {"relaxed/pgs", 1210, kUntraced}};
  // Plain members, not a structured binding: doctest's INFO captures in a lambda, which C++17
  // does not allow for a binding.
  for (const Recorded& row : recorded) {
    const std::string variant = row.variant;
    const int64_t today = row.today;
    const char* reason = row.reason;
    Scene scene = tower;
    scene.ApplyVariant(variant);
    const AllocationCount count = CountSteadyAllocations(scene, 5);
    INFO(variant << ": " << count.allocations << " allocations in " << count.steady_steps
                 << " steady steps, at most " << count.worst << " in one");
    CHECK(count.steady_steps == 55);
    CHECK(count.allocations <= today);
    if (count.allocations > 0) {
      std::cout << "expected failure: explicit stepper " << variant << " allocates "
                << count.allocations << " times in " << count.steady_steps
                << " steps with unchanged contacts (a resting tower of 5 boxes; at most "
                << count.worst << " a step): " << reason << "\n";
    }
  }
}

// Runs a scene and sums the KLU symbolic analyses of the steps solved in one attempt (the
// solver's summary is then the step's); *steps counts every step, *factorized those whose
// Newton matrix was factorized (not solved by the warm start alone), *dense those factorized
// dense.
int NewtonAnalyses(const Scene& scene, int* steps, int* dense, int* factorized = nullptr) {
  SceneRunner runner(scene);
  int analyses = 0;
  *steps = *dense = 0;
  if (factorized) *factorized = 0;
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    ++*steps;
    if (record.attempts != 1) continue;
    const auto& summary =
        dynamic_cast<const FischerBurmeisterNewton::Summary&>(runner.stepper().solver().summary());
    analyses += summary.symbolic_analyses;
    *dense += summary.dense_linear_algebra && summary.factorizations > 0 ? 1 : 0;
    if (factorized) *factorized += summary.factorizations > 0 ? 1 : 0;
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
    CHECK(NewtonAnalyses(cube, &steps, &dense, &factorized) == 0);
    CHECK(steps == 100);
    CHECK(factorized == 100);
    CHECK(dense == 100);
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
