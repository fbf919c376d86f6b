// Runs a set of the random scenes a user would write (tests/integrators/random_columns.h) with
// the implicit stepper's defaults and prints what the set did: failed steps and the scenes
// they were in, the deepest overlap, the solve time summed over the steps, the slowest step,
// Newton iterations and factorizations. The reliability and solver guides quote these sets
// (docs/reliability.md, docs/solvers.md); two builds of this program, run side by side,
// compare two versions of a solver on the same scenes. Failed steps and iteration counts do
// not depend on the host's load; times do.
//
//   ncpkit_scene_sets SET [FIRST_SEED LAST_SEED]
//
// SET: dropped (260 columns of 2-10 boxes dropped from heights uniform in [0, 1 mm], seeds
// 10000-10039), dropped5cm (180 columns dropped from up to 5 cm, seeds 20000-20017), pyramids
// (32 brick pyramids of 3-6 layers, seeds 0-7), pushed (pushed rows, seeds 1-80 unless given),
// towers (toppling towers, seeds 1-80 unless given).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "tests/integrators/random_columns.h"

namespace ncpkit {
namespace {

struct SetTotals {
  int runs = 0, failed_runs = 0;
  int64_t failed_steps = 0, iterations = 0, factorizations = 0;
  double solve_seconds = 0.0, slowest_step = 0.0, deepest_overlap = 0.0;
  std::string slowest_scene;
};

// One scene, `name` in the listing of failed runs.
void RunOne(const std::string& text, const std::string& name, SetTotals* totals) {
  const Scene scene = ParseScene(text, name);
  double slowest = 0.0;
  const SimulationStats stats =
      RunScene(scene, scene.variant(), [&](const StepRecord& record, const SceneRunner&) {
        totals->solve_seconds += record.step_seconds;
        slowest = std::max(slowest, record.step_seconds);
        totals->iterations += record.summary.iterations;
        totals->factorizations += record.summary.factorizations;
      });
  ++totals->runs;
  totals->failed_steps += stats.failed_steps;
  totals->deepest_overlap = std::max(totals->deepest_overlap, stats.max_penetration);
  if (slowest > totals->slowest_step) {
    totals->slowest_step = slowest;
    totals->slowest_scene = name;
  }
  if (stats.failed_steps > 0) {
    ++totals->failed_runs;
    std::printf("  %s: %lld failed steps, deepest overlap %.2e m; %s\n", name.c_str(),
                static_cast<long long>(stats.failed_steps), stats.max_penetration,
                stats.first_failure.c_str());
  }
}

testing::ColumnsSpec DroppedColumn(unsigned seed, int boxes, int columns, double drop) {
  testing::ColumnsSpec spec;
  spec.seed = seed;
  spec.boxes = boxes;
  spec.columns = columns;
  spec.stepper = "implicit";
  spec.uniform_drops = true;
  spec.drop = drop;
  return spec;
}

// The scenes of `set` as (name, scene text), seeds [first, last] where the set takes them.
std::vector<std::pair<std::string, std::function<std::string()>>> Scenes(const std::string& set,
                                                                         unsigned first,
                                                                         unsigned last) {
  std::vector<std::pair<std::string, std::function<std::string()>>> scenes;
  const auto columns = [&](unsigned from, unsigned to, double drop) {
    for (unsigned seed = from; seed <= to; ++seed) {
      for (const int boxes : {2, 3, 5, 7, 10}) {
        for (const int count : {1, 2}) {
          const std::string name = "columns seed " + std::to_string(seed) + ", " +
                                   std::to_string(count) + " x " + std::to_string(boxes);
          scenes.emplace_back(name, [=] {
            return testing::RandomColumnsScene(DroppedColumn(seed, boxes, count, drop));
          });
        }
      }
    }
  };
  if (set == "dropped") {
    columns(10000, 10019, 0.001);
    for (unsigned seed = 10020; seed <= 10039; ++seed) {
      for (const int boxes : {3, 5, 10}) {
        scenes.emplace_back(
            "column seed " + std::to_string(seed) + ", " + std::to_string(boxes) + " boxes",
            [=] { return testing::RandomColumnsScene(DroppedColumn(seed, boxes, 1, 0.001)); });
      }
    }
  } else if (set == "dropped5cm") {
    columns(20000, 20017, 0.05);
  } else if (set == "pyramids") {
    for (int layers = 3; layers <= 6; ++layers) {
      for (unsigned seed = 0; seed < 8; ++seed) {
        scenes.emplace_back(
            "pyramid of " + std::to_string(layers) + " layers, seed " + std::to_string(seed),
            [=] { return testing::RandomPyramidScene(seed, layers, "implicit", 1.0); });
      }
    }
  } else if (set == "pushed" || set == "towers") {
    const bool pushed = set == "pushed";
    for (unsigned seed = first; seed <= last; ++seed) {
      scenes.emplace_back((pushed ? "pushed row " : "tower ") + std::to_string(seed), [=] {
        return pushed ? testing::RandomPushedRowScene(seed, "implicit")
                      : testing::RandomTowerScene(seed, "implicit");
      });
    }
  }
  return scenes;
}

// A seed: digits only, below 2^32.
bool ParseSeed(const char* text, unsigned* seed) {
  const std::string digits = text;
  if (digits.empty() || digits.size() > 10 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const unsigned long long value = std::stoull(digits);
  if (value > 0xFFFFFFFFull) return false;
  *seed = static_cast<unsigned>(value);
  return true;
}

}  // namespace
}  // namespace ncpkit

int main(int argc, char** argv) {
  using namespace ncpkit;
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr,
                 "usage: ncpkit_scene_sets dropped|dropped5cm|pyramids|pushed|towers "
                 "[FIRST_SEED LAST_SEED]\n");
    return 2;
  }
  const std::string set = argv[1];
  const bool seeded = set == "pushed" || set == "towers";
  unsigned first = 1, last = 80;
  if (argc == 4 &&
      (!seeded || !ParseSeed(argv[2], &first) || !ParseSeed(argv[3], &last) || first > last)) {
    std::fprintf(stderr,
                 "ncpkit_scene_sets: seeds are taken by pushed and towers only, as two whole "
                 "numbers FIRST <= LAST below 2^32\n");
    return 2;
  }
  const auto scenes = Scenes(set, first, last);
  if (scenes.empty()) {
    std::fprintf(stderr, "ncpkit_scene_sets: no set '%s'\n", set.c_str());
    return 2;
  }
  SetTotals totals;
  for (const auto& [name, text] : scenes) RunOne(text(), name, &totals);
  std::printf(
      "%s: %d runs, %lld failed steps in %d runs, deepest overlap %.2e m, %.3f s of steps, "
      "slowest step %.1f ms (%s), %lld iterations, %lld factorizations\n",
      set.c_str(), totals.runs, static_cast<long long>(totals.failed_steps), totals.failed_runs,
      totals.deepest_overlap, totals.solve_seconds, 1e3 * totals.slowest_step,
      totals.slowest_scene.c_str(), static_cast<long long>(totals.iterations),
      static_cast<long long>(totals.factorizations));
  return 0;
}
