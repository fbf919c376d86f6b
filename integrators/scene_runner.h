// The one run loop: steps a scene's stepper to the scene's duration, firing its scripted
// impulses, and RunScene(), the run with its statistics that the command line and the Python
// package share.
#ifndef NCPKIT_INTEGRATORS_SCENE_RUNNER_H_
#define NCPKIT_INTEGRATORS_SCENE_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "integrators/scene.h"
#include "integrators/stepper.h"

namespace ncpkit {

struct ScriptedEvent {
  double time = 0.0;  // start of the step it acted in
  int event = -1;     // index into Scene::impulses
};

// Steps a scene to its duration, one Step() at a time; fired() lists the impulses that acted
// in the latest step (kept per step, so that a long run with repeating events keeps its memory
// flat). The runner keeps a reference to the scene.
class SceneRunner {
 public:
  // Builds the scene's stepper (MakeStepper); throws InputError if the run would take more
  // than scene.max_steps steps.
  explicit SceneRunner(const Scene& scene);
  // The runner keeps a reference to the scene, so a temporary one would dangle.
  explicit SceneRunner(Scene&&) = delete;
  bool Done() const { return step_ >= num_steps_; }
  const StepRecord& Step();
  const Stepper& stepper() const { return *stepper_; }
  Stepper& mutable_stepper() { return *stepper_; }
  const Scene& scene() const { return scene_; }
  const std::vector<ScriptedEvent>& fired() const { return fired_; }
  int64_t num_steps() const { return num_steps_; }

 private:
  bool Fires(size_t k, double t);

  const Scene& scene_;
  std::unique_ptr<Stepper> stepper_;
  std::vector<char> armed_;
  std::vector<char> done_;
  std::vector<double> previous_;
  std::vector<ScriptedEvent> fired_;
  std::vector<Vector6d> impulses_;
  int64_t num_steps_ = 0;
  int64_t step_ = 0;
};

struct SimulationStats {
  std::string scene, variant;
  int64_t steps = 0, failed_steps = 0;
  std::string first_failure;  // "step k (t = ...): <solver message>"
  double max_residual = 0.0;  // natural residual, over all steps
  double max_penetration = 0.0;
  // Whole step (assembly + solve); the median within 0.5 % (a histogram: constant memory).
  double median_us = 0.0, max_us = 0.0;
  int median_iterations = 0, max_iterations = 0;
  // Contacts in a step's problems (all islands): the median and the largest over the steps, so
  // that median_us / median_contacts is the cost of a contact.
  int median_contacts = 0, max_contacts = 0;
  // The most islands (integrators/islands.h) a step posed, and the islands left unsolved over the
  // run (a failed step counts each of its unsolved islands).
  int max_islands = 0;
  int64_t failed_islands = 0;
  double wall_seconds = 0.0;
  // Peak resident memory of the process so far (kB; VmHWM of /proc/self/status, -1 if the
  // system does not say), for checking that long runs keep their memory flat.
  int64_t peak_rss_kb = -1;
};

// Runs `scene` (its duration may have been overridden by the caller) with `variant` (one the
// scene's stepper takes, Scene::TakesVariant); `on_step` (optional) sees every record and the
// runner after the step, `on_start` (optional) the runner before the first.
SimulationStats RunScene(const Scene& scene, const std::string& variant,
                         const std::function<void(const StepRecord&, const SceneRunner&)>& on_step,
                         const std::function<void(SceneRunner&)>& on_start = nullptr);

// The figures of SimulationStats by name, in one order: what `ncpkit simulate --json` writes and
// Python's simulate() returns. A value is an integer, a number (non-finite ones are written as
// JSON null), a string, or absent (std::monostate: the peak memory where the system does not say).
using StatsValue = std::variant<std::monostate, int64_t, double, std::string>;
std::vector<std::pair<const char*, StatsValue>> StatsFields(const SimulationStats& stats);

// Folder of the bundled scene files: $NCPKIT_SCENES if set; else, for an installed program,
// share/ncpkit/scenes beside its bin/ folder; else the source tree's scenes/.
std::string SceneDirectory();

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_SCENE_RUNNER_H_
