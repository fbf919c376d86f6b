// The one run loop: steps a scene's stepper to the scene's duration, firing its scripted
// impulses.
#ifndef NCPKIT_INTEGRATORS_SCENE_RUNNER_H_
#define NCPKIT_INTEGRATORS_SCENE_RUNNER_H_

#include <cstdint>
#include <memory>
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

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_SCENE_RUNNER_H_
