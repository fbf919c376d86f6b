// Scenes: one description for every stepper (bodies with shapes and mass properties, per-pair
// contact laws, scripted impulses, actuators with their commands, the stepper and its
// settings), read from one kind of JSON file. The schema is documented in the README ("Scene
// files"); a file with a "quasistatic" object is stepped quasistatically, any other
// implicitly.
#ifndef NCPKIT_INTEGRATORS_SCENE_H_
#define NCPKIT_INTEGRATORS_SCENE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contact/contact_law.h"
#include "dynamics/actuators.h"
#include "dynamics/body.h"
#include "integrators/explicit_stepper.h"
#include "integrators/implicit_stepper.h"
#include "integrators/limits.h"
#include "integrators/quasistatic_stepper.h"
#include "integrators/stepper.h"

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
  int quantity = 0;  // index into [x, y, z, vx, vy, vz, wx, wy, wz] (StateQuantity)
  double value = 0.0;
  double tolerance = 1e-9;
  double after = 0.0;
  bool repeat = false;
};

enum class StepperKind { Implicit, Quasistatic, Explicit };
// "implicit", "quasistatic", "explicit".
const char* ToString(StepperKind kind);

struct Scene {
  std::string name;
  std::string description;
  double duration = 1.0;  // s
  // Step cap of a run (not a scene file field: the caller raises it, e.g. --max-steps).
  int64_t max_steps = kDefaultMaxSteps;
  std::vector<Body> bodies;  // moving and fixed
  ContactLawTable laws;      // quasistatic steppers read mu only
  std::vector<ImpulseEvent> impulses;
  std::vector<Actuator> actuators;
  StepperKind stepper = StepperKind::Implicit;
  ImplicitStepperOptions implicit;          // when stepper == Implicit
  QuasistaticOptions quasistatic;           // when stepper == Quasistatic
  ExplicitStepperOptions explicit_stepper;  // when stepper == Explicit

  // The scene's stepper's shared settings (its options' StepperSettings).
  const StepperSettings& settings() const;
  StepperSettings& mutable_settings();
  double h() const { return settings().h; }
  Eigen::Vector3d gravity() const { return settings().gravity; }
  // The variant the scene's settings name: "<solver>[-cold]" (implicit) or
  // "<model>/<solver>[-cold]" (quasistatic; explicit: cone, pyramid, relaxed, or "soft").
  std::string variant() const;
  // True if the variant fits the scene's stepper; ApplyVariant throws InputError otherwise.
  bool TakesVariant(const std::string& variant) const;
  void ApplyVariant(const std::string& variant);
  int FindBody(const std::string& name) const { return ncpkit::FindBody(bodies, name); }
  int FindActuator(const std::string& name) const;
  // Replaces the named actuator's command; throws InputError for an unknown name or an
  // invalid command.
  void SetCommand(const std::string& actuator, const ActuatorCommand& command);
};

// Parses a scene; throws InputError naming the file, the field path and the problem (unknown
// shape, negative mass, missing field, NaN, bodies overlapping at the start, a pair the
// stepper has no contact model for, ...).
Scene ParseScene(const std::string& text, const std::string& source);
Scene LoadScene(const std::string& path);

// The scene's stepper, with its settings (Scene::ApplyVariant to change them first).
std::unique_ptr<Stepper> MakeStepper(const Scene& scene);

// The variants `compare` and the demo run by default for a kind of stepper: every registry row
// compared by default on the stepper's problem kinds, run-time registered ones included.
std::vector<std::string> DefaultVariants(StepperKind kind);

// The implicit variants: "<solver>[-cold]" with a registry solver taking ProblemKind::Mixed.
bool IsSolverVariant(const std::string& variant);
void ApplySolverVariant(const std::string& variant, ImplicitStepperOptions* options);
// The quasistatic variants "<model>/<solver>[-cold]": model dqc (solvers taking
// ProblemKind::Mixed) or dlc, qp, qp-lcp (ProblemKind::Linear), e.g. "qp-lcp/lemke".
bool IsQuasistaticVariant(const std::string& variant);
void ApplyQuasistaticVariant(const std::string& variant, QuasistaticOptions* options);
// The explicit variants "cone/<solver>[-cold]" with a registry solver taking
// ProblemKind::Friction (e.g. "cone/nsgs"), "pyramid/<solver>[-cold]" and
// "relaxed/<solver>[-cold]" with one taking ProblemKind::Linear (no PGS for the pyramid), and
// "soft" (needs the scene's soft stiffness).
bool IsExplicitVariant(const std::string& variant);
void ApplyExplicitVariant(const std::string& variant, ExplicitStepperOptions* options);
// Throws InputError, naming both grammars, unless some stepper takes the variant.
void RequireKnownVariant(const std::string& variant);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_SCENE_H_
