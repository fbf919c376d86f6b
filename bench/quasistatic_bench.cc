// Per-step cost of the quasistatic steppers (dqc, dlc, qp, qp-lcp) with each solver on the
// three quasistatic scenes. Each benchmark iteration is one step; a scene that ends is restarted
// outside the timed region.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "integrators/quasistatic_scene.h"

namespace ncpkit {
namespace {

void BM_Quasistatic(benchmark::State& state, const std::string& file, const std::string& variant) {
  QuasistaticScene scene = LoadQuasistaticScene(std::string(NCPKIT_SCENE_DIR) + "/" + file);
  ApplyQuasistaticVariant(variant, &scene.options);
  const int steps_per_run = static_cast<int>(std::lround(scene.duration / scene.options.h));
  std::unique_ptr<QuasistaticStepper> stepper;
  try {
    stepper = std::make_unique<QuasistaticStepper>(scene.system, scene.options);
  } catch (const std::invalid_argument& e) {
    state.SkipWithError(e.what());  // e.g. qp-lcp on a scene without regularization
    return;
  }
  int failed = 0, steps = 0, contacts = 0, size = 0;
  int in_run = 0;
  for (auto _ : state) {
    if (in_run == steps_per_run) {
      state.PauseTiming();
      stepper = std::make_unique<QuasistaticStepper>(scene.system, scene.options);
      in_run = 0;
      state.ResumeTiming();
    }
    const QuasistaticStepRecord record = stepper->Step();
    failed += record.summary.IsSolved() ? 0 : 1;
    contacts += static_cast<int>(record.contacts.size());
    size += record.problem_size;
    ++steps;
    ++in_run;
  }
  state.counters["failed_steps"] = failed;
  state.counters["contacts/step"] = static_cast<double>(contacts) / std::max(1, steps);
  state.counters["size/step"] = static_cast<double>(size) / std::max(1, steps);
}

const char* const kScenes[] = {"fence_particle.json", "gripper_sphere.json", "cube_stacking.json"};
const char* const kVariants[] = {"dqc/fb-newton", "dlc/lemke",       "dlc/fb-newton",
                                 "qp/lemke",      "qp/fb-newton",    "qp-lcp/lemke",
                                 "qp-lcp/pgs",    "qp-lcp/fb-newton"};

const bool kRegistered = [] {
  for (const char* scene : kScenes) {
    for (const char* variant : kVariants) {
      benchmark::RegisterBenchmark(
          (std::string("BM_Quasistatic/") + scene + "/" + variant).c_str(),
          [scene, variant](benchmark::State& state) { BM_Quasistatic(state, scene, variant); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace ncpkit
