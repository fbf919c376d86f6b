// Scenes as data files (JSON): bodies, fixed obstacles, contact laws, scripted impulses and the
// stepper settings. The schema is documented in the README ("Scene files").
#ifndef NCPKIT_INTEGRATORS_SCENE_H_
#define NCPKIT_INTEGRATORS_SCENE_H_

#include <functional>
#include <string>
#include <vector>

#include "integrators/implicit_stepper.h"
#include "integrators/limits.h"
#include "solvers/solver_registry.h"

namespace ncpkit {

// An applied impulse on one body, at a time or whenever a condition on a body's state holds.
struct ImpulseEvent {
  int body = -1;                        // receives the impulse
  Vector6d impulse = Vector6d::Zero();  // [p (N s); p_tau (N m s)], world frame
  // Time trigger: fires once, in the first step starting at or after `at`.
  bool timed = true;
  double at = 0.0;
  // Condition trigger: `quantity` (x, y, z, vx, vy, vz, wx, wy, wz) of `watch` reaches `value`
  // (within `tolerance`, or crosses it since the previous step), after time `after`. With
  // `repeat` it fires again each time the condition becomes true anew.
  int watch = -1;
  int quantity = 0;  // index into [x, y, z, vx, vy, vz, wx, wy, wz]
  double value = 0.0;
  double tolerance = 1e-9;
  double after = 0.0;
  bool repeat = false;
};

struct Scene {
  std::string name;
  std::string description;
  std::vector<Body> bodies;  // moving and fixed
  ContactLawTable laws;
  ImplicitStepperOptions options;
  double duration = 1.0;
  // Step cap of a run (not a scene file field: the caller raises it, e.g. --max-steps).
  int64_t max_steps = kDefaultMaxSteps;
  std::vector<ImpulseEvent> impulses;
};

// Parses a scene; throws std::invalid_argument naming the file, the field and the problem
// (unknown shape, negative mass, missing field, NaN, ...).
Scene ParseScene(const std::string& text, const std::string& source);
Scene LoadScene(const std::string& path);

// Solver variants for stepping a scene: every name of SolverNames(ProblemKind::Mixed), and each with
// "-cold" appended (no warm start from the previous step), e.g. "fb-newton-cold".
bool IsSolverVariant(const std::string& variant);
// Sets options->solver and options->warm_start from the variant; throws std::invalid_argument
// for an unknown one.
void ApplySolverVariant(const std::string& variant, ImplicitStepperOptions* options);

// Quantities of a body state by name, for events and reports.
double StateQuantity(const RigidBodyState& state, int quantity);

struct ScriptedEvent {
  double time = 0.0;  // start of the step it acted in
  int event = -1;     // index into Scene::impulses
};

// Steps a scene to its duration, one Step() at a time, firing the scripted impulses; fired()
// lists the impulses that acted in the latest step (kept per step, so that a long run with
// repeating events keeps its memory flat).
class SceneRunner {
 public:
  // Throws std::invalid_argument if the run would take more than scene.max_steps steps.
  explicit SceneRunner(const Scene& scene);
  bool Done() const;
  StepRecord Step();
  const ImplicitStepper& stepper() const { return stepper_; }
  const std::vector<ScriptedEvent>& fired() const { return fired_; }
  int64_t num_steps() const { return num_steps_; }

 private:
  const Scene& scene_;
  ImplicitStepper stepper_;
  std::vector<char> armed_;
  std::vector<char> done_;
  std::vector<double> previous_;
  std::vector<ScriptedEvent> fired_;
  int64_t num_steps_ = 0;
  int64_t step_ = 0;
};

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_SCENE_H_
