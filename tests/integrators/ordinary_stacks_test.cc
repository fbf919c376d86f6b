// Stacks a user would write, run with each stepper's defaults: columns of 2 to 10 boxes of
// different sizes and masses, turned by random yaws of up to 0.4 rad, offset by up to 3 cm and
// placed touching or dropped from a millimetre, over many seeds. Uniform, aligned columns hide
// most failures; these do not.
#include <doctest/doctest.h>

#include <string>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "tests/allocation_counter.h"
#include "tests/integrators/random_columns.h"

namespace ncpkit {
namespace {

TEST_CASE("ordinary stacks: the explicit stepper's default solves every step, no overlap") {
  // Under the sanitizers, three sizes and one seed: they look for memory errors, the Release
  // run for results.
  const bool sanitized = testing::SanitizedBuild();
  const int seeds = sanitized ? 1 : 8;
  for (const int boxes : {2, 3, 5, 7, 10}) {
    if (sanitized && (boxes == 3 || boxes == 7)) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      CAPTURE(boxes);
      CAPTURE(seed);
      testing::ColumnsSpec spec;
      spec.seed = static_cast<unsigned>(100 * boxes + seed);
      spec.boxes = boxes;
      spec.columns = seed % 2 == 0 ? 1 : 2;  // one column, or two side by side (two islands)
      const Scene scene = ParseScene(testing::RandomColumnsScene(spec), "columns");
      CHECK(scene.variant() == "cone/auto");
      const SimulationStats stats = RunScene(scene, scene.variant(), nullptr);
      INFO(stats.first_failure);
      CHECK(stats.failed_steps == 0);
      CHECK(stats.max_penetration <= 1e-6);
      CHECK(stats.max_islands == spec.columns);
    }
  }
}

}  // namespace
}  // namespace ncpkit
