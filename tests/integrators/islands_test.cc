// Simulation islands and the worker pool: the island finder against a breadth-first search on
// random graphs, the pool running every item once, and the steppers solving one problem per
// island: the same trajectory as one problem for the whole scene (to the solver tolerance), and
// bitwise the same trajectory for any number of threads.
#include "integrators/islands.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "integrators/worker_pool.h"
#include "solvers/base/input_error.h"
#include "tests/allocation_counter.h"
#include "tests/integrators/random_columns.h"

namespace ncpkit {
namespace {

using internal::IslandFinder;
using internal::IslandView;

// Per body its component among the moving bodies (breadth-first, fixed bodies cut), -1 for a
// fixed body.
std::vector<int> Components(const std::vector<char>& fixed,
                            const std::vector<std::pair<int, int>>& links) {
  const int n = static_cast<int>(fixed.size());
  std::vector<std::vector<int>> next(n);
  for (const auto& [a, b] : links) {
    if (fixed[a] || fixed[b]) continue;
    next[a].push_back(b);
    next[b].push_back(a);
  }
  std::vector<int> component(n, -1);
  int count = 0;
  for (int start = 0; start < n; ++start) {
    if (fixed[start] || component[start] >= 0) continue;
    std::queue<int> queue;
    queue.push(start);
    component[start] = count;
    while (!queue.empty()) {
      const int i = queue.front();
      queue.pop();
      for (int j : next[i]) {
        if (component[j] < 0) {
          component[j] = count;
          queue.push(j);
        }
      }
    }
    ++count;
  }
  return component;
}

// A random graph of n < 41 bodies, about one in five fixed, and up to 60 links.
struct RandomGraph {
  explicit RandomGraph(unsigned seed) {
    std::mt19937 rng(seed);
    n = 1 + static_cast<int>(rng() % 40);
    fixed.resize(n);
    for (char& f : fixed) f = rng() % 5 == 0 ? 1 : 0;
    links.resize(rng() % 60);
    for (auto& [a, b] : links) {
      a = static_cast<int>(rng() % n);
      b = static_cast<int>(rng() % n);
      if (a == b) b = (b + 1) % n;
      if (a > b) std::swap(a, b);
    }
    component = Components(fixed, links);
    linked.assign(n, 0);
    for (const auto& [a, b] : links) {
      if (!fixed[a] && !fixed[b]) linked[a] = linked[b] = 1;
      if (fixed[a] != fixed[b]) linked[fixed[a] ? b : a] = 1;
    }
  }
  int n = 0;
  std::vector<char> fixed;
  std::vector<std::pair<int, int>> links;
  std::vector<int> component;  // Components()
  std::vector<char> linked;    // a moving body with a link
};

// Each link's island holds it at its local index; islands are numbered by first link.
void CheckLinkNumbering(const IslandFinder& finder, const RandomGraph& g) {
  int next_island = 0;
  for (size_t k = 0; k < g.links.size(); ++k) {
    const auto [a, b] = g.links[k];
    const int island = finder.island_of_link(static_cast<int>(k));
    if (g.fixed[a] && g.fixed[b]) {
      CHECK(island == -1);
      continue;
    }
    REQUIRE(island >= 0);
    REQUIRE(island < finder.num_islands());
    CHECK(island <= next_island);
    if (island == next_island) ++next_island;
    const IslandView view = finder.island(island);
    REQUIRE(finder.local_index(static_cast<int>(k)) < view.num_links);
    CHECK(view.links[finder.local_index(static_cast<int>(k))] == static_cast<int>(k));
  }
  CHECK(next_island == finder.num_islands());
}

// An island's bodies are one component's bodies that have a link, in order; its links are that
// component's, in order; every moving body with a link is in exactly one island.
void CheckIslandContents(const IslandFinder& finder, const RandomGraph& g) {
  std::vector<int> seen(g.n, 0);
  for (int island = 0; island < finder.num_islands(); ++island) {
    const IslandView view = finder.island(island);
    REQUIRE(view.num_bodies > 0);
    REQUIRE(view.num_links > 0);
    const int c = g.component[view.bodies[0]];
    for (int k = 0; k < view.num_bodies; ++k) {
      CHECK(!g.fixed[view.bodies[k]]);
      CHECK(g.component[view.bodies[k]] == c);
      if (k > 0) CHECK(view.bodies[k - 1] < view.bodies[k]);
      ++seen[view.bodies[k]];
    }
    for (int k = 0; k < view.num_links; ++k) {
      const auto [a, b] = g.links[view.links[k]];
      CHECK(g.component[g.fixed[a] ? b : a] == c);
      if (k > 0) CHECK(view.links[k - 1] < view.links[k]);
    }
  }
  for (int i = 0; i < g.n; ++i) CHECK(seen[i] == (g.linked[i] ? 1 : 0));
}

// Lone bodies: every moving body in exactly one island, one island per component, those with
// links first.
void CheckLoneBodies(const IslandFinder& finder, const RandomGraph& g) {
  const int components = 1 + *std::max_element(g.component.begin(), g.component.end());
  CHECK(finder.num_islands() == components);
  std::vector<int> count(g.n, 0);
  bool linkless_seen = false;
  for (int island = 0; island < finder.num_islands(); ++island) {
    const IslandView view = finder.island(island);
    CHECK((view.num_links == 0 || !linkless_seen));
    linkless_seen = linkless_seen || view.num_links == 0;
    for (int k = 0; k < view.num_bodies; ++k) ++count[view.bodies[k]];
  }
  for (int i = 0; i < g.n; ++i) CHECK(count[i] == (g.fixed[i] ? 0 : 1));
}

TEST_CASE("islands: the finder agrees with a breadth-first search on random graphs") {
  IslandFinder finder;  // one finder for every graph: what it keeps must not leak across
  for (unsigned seed = 0; seed < 300; ++seed) {
    CAPTURE(seed);
    const RandomGraph g(seed);
    finder.Find(g.fixed, g.links);
    CheckLinkNumbering(finder, g);
    CheckIslandContents(finder, g);
    // One island: every linked moving body and every link with one together.
    finder.Find(g.fixed, g.links, /*one_island=*/true);
    const int linked = static_cast<int>(std::count(g.linked.begin(), g.linked.end(), 1));
    CHECK(finder.num_islands() == (linked > 0 ? 1 : 0));
    if (linked > 0) CHECK(finder.island(0).num_bodies == linked);
    finder.Find(g.fixed, g.links, /*one_island=*/false, /*lone_bodies=*/true);
    CheckLoneBodies(finder, g);
    finder.Find(g.fixed, g.links, /*one_island=*/true, /*lone_bodies=*/true);
    const bool any_moving = std::count(g.fixed.begin(), g.fixed.end(), 0) > 0;
    CHECK(finder.num_islands() == (any_moving ? 1 : 0));
  }
}

TEST_CASE("islands: two stacks on one ground are two islands, a body on both joins them") {
  // Bodies: 0 ground (fixed), 1-2 a stack, 3-4 another, 5 a plank across both tops.
  const std::vector<char> fixed = {1, 0, 0, 0, 0, 0};
  std::vector<std::pair<int, int>> links = {{0, 1}, {1, 2}, {0, 3}, {3, 4}};
  IslandFinder finder;
  finder.Find(fixed, links);
  REQUIRE(finder.num_islands() == 2);
  CHECK(finder.island(0).num_bodies == 2);
  CHECK(finder.island(0).bodies[0] == 1);
  CHECK(finder.island(1).bodies[0] == 3);
  CHECK(finder.island(1).num_links == 2);
  links.push_back({2, 5});
  links.push_back({4, 5});
  finder.Find(fixed, links);
  REQUIRE(finder.num_islands() == 1);
  CHECK(finder.island(0).num_bodies == 5);
  CHECK(finder.island(0).num_links == 6);
}

TEST_CASE("worker pool: every item runs once, on any number of threads, and errors come back") {
  for (int threads : {1, 2, 3, 8}) {
    CAPTURE(threads);
    internal::WorkerPool pool(threads);
    CHECK(pool.size() == threads);
    for (int count : {0, 1, 2, 7, 100, 1000}) {
      CAPTURE(count);
      std::vector<std::atomic<int>> runs(count);
      std::vector<std::atomic<int>> by_worker(threads);
      auto work = [&](int item, int worker) {
        runs[item].fetch_add(1);
        REQUIRE(worker >= 0);
        REQUIRE(worker < threads);
        by_worker[worker].fetch_add(1);
      };
      pool.Run(count, work);
      for (int item = 0; item < count; ++item) CHECK(runs[item].load() == 1);
      int total = 0;
      for (auto& w : by_worker) total += w.load();
      CHECK(total == count);
      // Striped: item i on worker i mod threads, every time.
      std::vector<std::atomic<int>> worker_of(count);
      auto striped = [&](int item, int worker) {
        runs[item].fetch_add(1);
        worker_of[item].store(worker);
      };
      pool.RunStriped(count, striped);
      for (int item = 0; item < count; ++item) {
        CHECK(runs[item].load() == 2);
        CHECK(worker_of[item].load() == item % threads);
      }
    }
    std::atomic<int> ran{0};
    auto failing = [&](int item, int /*worker*/) {
      ran.fetch_add(1);
      if (item == 3) throw std::runtime_error("item 3 failed");
    };
    CHECK_THROWS_WITH(pool.Run(10, failing), "item 3 failed");
    CHECK(ran.load() == 10);
    std::atomic<int> after{0};
    auto counting = [&](int, int) { after.fetch_add(1); };
    pool.Run(50, counting);  // the pool works on after an error
    CHECK(after.load() == 50);
  }
}

// Every body's pose and twist at every step of a run.
std::vector<double> Trajectory(const Scene& scene, const std::string& variant, int* max_islands,
                               int64_t* failed) {
  std::vector<double> values;
  *max_islands = 0;
  *failed = 0;
  Scene run = scene;
  run.ApplyVariant(variant);
  SceneRunner runner(run);
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    *max_islands = std::max(*max_islands, record.islands);
    *failed += record.summary.IsSolved() ? 0 : 1;
    for (const Body& body : runner.stepper().bodies()) {
      const RigidBodyState& s = body.state;
      values.insert(values.end(),
                    {s.position.x(), s.position.y(), s.position.z(), s.orientation.w(),
                     s.orientation.x(), s.orientation.y(), s.orientation.z(), s.linear_velocity.x(),
                     s.linear_velocity.y(), s.linear_velocity.z(), s.angular_velocity.x(),
                     s.angular_velocity.y(), s.angular_velocity.z()});
    }
  }
  return values;
}

// Runs `scene` with `variant` on `threads` threads and checks the trajectory, the most islands
// and the failed steps against a one-thread run's (`one`, `islands`, `failed`): bitwise (a NaN
// equals itself here).
void CheckSameOnThreads(const Scene& scene, const std::string& variant, int threads,
                        const std::vector<double>& one, int islands, int64_t failed) {
  CAPTURE(threads);
  Scene threaded = scene;
  threaded.mutable_settings().threads = threads;
  int threaded_islands = 0;
  int64_t threaded_failed = 0;
  const std::vector<double> many =
      Trajectory(threaded, variant, &threaded_islands, &threaded_failed);
  CHECK(threaded_islands == islands);
  CHECK(threaded_failed == failed);
  REQUIRE(many.size() == one.size());
  CHECK(std::memcmp(many.data(), one.data(), one.size() * sizeof(double)) == 0);
}

// CheckSameOnThreads on 2 threads and, but under the sanitizers, 3.
void CheckSameOnTwoAndThree(const Scene& scene, const std::string& variant,
                            const std::vector<double>& one, int islands, int64_t failed) {
  for (int threads : {2, 3}) {
    if (testing::SanitizedBuild() && threads == 3) continue;
    CheckSameOnThreads(scene, variant, threads, one, islands, failed);
  }
}

// The explicit stepper's variants that pose a problem, one per model, and soft contact.
const char* const kExplicitVariants[] = {"cone/nsgs-velocity", "cone/nsgs",     "cone/auto",
                                         "cone/fc-newton-fb",  "relaxed/lemke", "relaxed/pgs",
                                         "pyramid/lemke",      "soft"};

Scene ColumnsScene(unsigned seed, int columns, int boxes, double duration) {
  testing::ColumnsSpec spec;
  spec.seed = seed;
  spec.columns = columns;
  spec.boxes = boxes;
  spec.duration = duration;
  spec.extra = "\"soft\": {\"stiffness\": 2000, \"damping\": 5}, ";
  return ParseScene(testing::RandomColumnsScene(spec), "columns");
}

// Under the sanitizers the scenes below run shorter and on fewer seeds: they look for memory
// errors, the Release run checks the results in full.
std::vector<unsigned> Seeds(int count) {
  std::vector<unsigned> seeds;
  for (int k = 1; k <= (testing::SanitizedBuild() ? 1 : count); ++k) seeds.push_back(k);
  return seeds;
}

TEST_CASE("islands: the explicit stepper's trajectory is bitwise the same on 1, 2 and 3 threads") {
  for (unsigned seed : Seeds(2)) {
    const Scene scene = ColumnsScene(seed, 4, 3, testing::SanitizedBuild() ? 0.1 : 0.2);
    for (const std::string variant : kExplicitVariants) {
      CAPTURE(seed);
      CAPTURE(variant);
      int islands = 0;
      int64_t failed = 0;
      const std::vector<double> one = Trajectory(scene, variant, &islands, &failed);
      CHECK(islands == 4);
      for (int threads : {2, 3}) {
        if (testing::SanitizedBuild() && threads == 2) continue;
        CheckSameOnThreads(scene, variant, threads, one, islands, failed);
      }
    }
  }
}

TEST_CASE("islands: the explicit stepper's contact search in chunks on threads, bitwise") {
  // The pile's hundreds of pairs and contacts go through the narrow phase and the frame rows in
  // chunks on the pool (the random columns above are too small for that), its settled heap is
  // one island; at 5 sweeps a step, as the engines' budgets.
  Scene scene = LoadScene(SceneDirectory() + "/engine/pile200.json");
  scene.duration = testing::SanitizedBuild() ? 0.12 : 0.4;
  scene.mutable_settings().max_iterations = 5;
  const std::string variant = "cone/nsgs-velocity";
  int islands = 0;
  int64_t failed = 0;
  const std::vector<double> one = Trajectory(scene, variant, &islands, &failed);
  CHECK(islands > 1);
  CheckSameOnTwoAndThree(scene, variant, one, islands, failed);
}

TEST_CASE("islands: one large island's sweeps on threads, bitwise") {
  // The wall is one island of about a thousand contacts: nsgs-velocity's sweeps run on the
  // pool's threads (VelocityGaussSeidel::SetParallelRunner), in runs of sweeps between the
  // error checks; cone/auto's first attempt is the same sweeps.
  Scene scene = LoadScene(SceneDirectory() + "/engine/wall100.json");
  scene.duration = testing::SanitizedBuild() ? 0.03 : 0.12;
  for (const std::string variant : {"cone/nsgs-velocity", "cone/auto"}) {
    CAPTURE(variant);
    scene.mutable_settings().max_iterations = variant == "cone/auto" ? 10000 : 20;
    int islands = 0;
    int64_t failed = 0;
    const std::vector<double> one = Trajectory(scene, variant, &islands, &failed);
    CHECK(islands == 1);
    CheckSameOnTwoAndThree(scene, variant, one, islands, failed);
  }
}

// The largest difference of two trajectories (Trajectory()), over positions and velocities
// (quaternion entries are compared as positions).
double LargestDifference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double largest = 0.0;
  for (size_t k = 0; k < a.size(); ++k) largest = std::max(largest, std::abs(a[k] - b[k]));
  return largest;
}

// The trajectories of `scene` with `variant` by island and as one problem: no failed step in
// either, and positions and velocities that agree to `factor` times the solver's tolerance (each
// island is solved to the tolerance on its own residual, the whole problem on its own).
void CheckIslandsAgree(const Scene& scene, const std::string& variant, int expected_islands,
                       double factor = 10.0) {
  int islands = 0, one_island = 0;
  int64_t failed = 0, one_failed = 0;
  const std::vector<double> by_island = Trajectory(scene, variant, &islands, &failed);
  Scene whole = scene;
  whole.mutable_settings().islands = false;
  const std::vector<double> as_one = Trajectory(whole, variant, &one_island, &one_failed);
  CHECK(failed == 0);
  CHECK(one_failed == 0);
  CHECK(islands == expected_islands);
  CHECK(one_island == 1);
  CHECK(LargestDifference(by_island, as_one) <= factor * scene.settings().tolerance);
}

TEST_CASE("islands: the explicit stepper's islands give the whole-scene problem's trajectory") {
  SUBCASE("engine scenes") {
    // The pile's first steps at the sweep cap come at 0.24 s (unsolved, so not comparable).
    const std::pair<std::string, double> files[] = {{"engine/stack50.json", 1.0},
                                                    {"engine/pile200.json", 0.23}};
    const int islands[] = {25, 48};
    for (int k = 0; k < (testing::SanitizedBuild() ? 1 : 2); ++k) {
      CAPTURE(files[k].first);
      Scene scene = LoadScene(SceneDirectory() + "/" + files[k].first);
      scene.duration = testing::SanitizedBuild() ? 0.15 : files[k].second;
      CheckIslandsAgree(scene, "cone/nsgs-velocity", islands[k]);
    }
  }
  SUBCASE("random columns") {
    for (unsigned seed : Seeds(2)) {
      testing::ColumnsSpec spec;
      spec.seed = seed;
      spec.columns = 3;
      spec.duration = testing::SanitizedBuild() ? 0.15 : 0.3;
      spec.extra = "\"tolerance\": 1e-8, ";
      const Scene scene = ParseScene(testing::RandomColumnsScene(spec), "columns");
      // The cone and the relaxed cone: their velocities are unique (the relaxed cone's LCP is
      // monotone); the pyramid's are not.
      for (const std::string variant : {"cone/nsgs-velocity", "cone/auto", "relaxed/lemke"}) {
        CAPTURE(seed);
        CAPTURE(variant);
        CheckIslandsAgree(scene, variant, 3);
      }
    }
  }
}

TEST_CASE("islands: the implicit stepper, by island and on threads") {
  for (unsigned seed : Seeds(3)) {
    CAPTURE(seed);
    testing::ColumnsSpec spec;
    spec.seed = seed;
    spec.columns = 3;
    spec.boxes = 2;
    spec.stepper = "implicit";
    spec.duration = 0.3;
    // Aligned columns against the whole-scene problem; then turned and offset boxes on threads.
    spec.max_yaw = spec.max_offset = 0.0;
    // The natural residual bounds the MCP's rows, whose units mix impulses, multipliers and
    // contact points, not the twists: solved to 1e-10 from different starts (the whole problem
    // starts every column from its loads when one column lands), a landing step's twists came
    // out 2e-8 apart (measured, seed 2). Solved to 1e-12, they agree to 1.4e-12.
    spec.extra = "\"tolerance\": 1e-12, ";
    const Scene aligned = ParseScene(testing::RandomColumnsScene(spec), "aligned columns");
    CheckIslandsAgree(aligned, aligned.variant(), 3, 100.0);
    spec.max_yaw = 0.4;
    spec.max_offset = 0.03;
    const Scene turned = ParseScene(testing::RandomColumnsScene(spec), "turned columns");
    for (const Scene* scene : {&aligned, &turned}) {
      int islands = 0;
      int64_t failed = 0;
      const std::vector<double> one = Trajectory(*scene, scene->variant(), &islands, &failed);
      CHECK(islands == 3);
      CheckSameOnThreads(*scene, scene->variant(), 2, one, islands, failed);
    }
  }
}

TEST_CASE("islands: the quasistatic stepper, by island and on threads") {
  // The gripper takes the red cube at 1.17 s: the gripper and the cube, the stack and the row of
  // cubes are three islands then.
  Scene scene = LoadScene(SceneDirectory() + "/cube_stacking.json");
  scene.duration = testing::SanitizedBuild() ? 1.2 : 2.0;
  // qp-lcp's and qp's displacements are unique (a strictly convex QP); dlc's are not. qp's
  // problem holds the displacements too: before the gripper touches a cube, each of its four
  // actuator coordinates (a stiffness of its own) is an island, 7 in all.
  const std::pair<std::string, int> variants[] = {{"qp-lcp/lemke", 3}, {"qp/lemke", 7}};
  for (const auto& entry : variants) {
    const std::string& variant = entry.first;
    CAPTURE(variant);
    CheckIslandsAgree(scene, variant, entry.second);
    int islands = 0;
    int64_t failed = 0;
    const std::vector<double> one = Trajectory(scene, variant, &islands, &failed);
    CheckSameOnThreads(scene, variant, 2, one, islands, failed);
  }
}

TEST_CASE("islands: the scene-file keys \"islands\" and \"threads\"") {
  testing::ColumnsSpec spec;
  spec.columns = 3;
  spec.boxes = 2;
  spec.duration = 0.05;
  for (const char* stepper : {"explicit", "implicit"}) {
    CAPTURE(stepper);
    spec.stepper = stepper;
    spec.extra = "\"islands\": false, \"threads\": 2, ";
    const Scene whole = ParseScene(testing::RandomColumnsScene(spec), "columns");
    CHECK_FALSE(whole.settings().islands);
    CHECK(whole.settings().threads == 2);
    CHECK(RunScene(whole, whole.variant(), nullptr).max_islands == 1);
    spec.extra = "\"islands\": true, ";
    const Scene by_island = ParseScene(testing::RandomColumnsScene(spec), "columns");
    CHECK(by_island.settings().islands);
    CHECK(by_island.settings().threads == 1);
    CHECK(RunScene(by_island, by_island.variant(), nullptr).max_islands == 3);
  }
  spec.extra = "\"threads\": 0, ";
  CHECK_THROWS_WITH_AS(ParseScene(testing::RandomColumnsScene(spec), "columns"),
                       doctest::Contains("threads"), InputError);
  spec.extra = "\"islands\": 1, ";
  CHECK_THROWS_AS(ParseScene(testing::RandomColumnsScene(spec), "columns"), InputError);
}

}  // namespace
}  // namespace ncpkit
