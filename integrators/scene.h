// Scenes: one description for every stepper (bodies with shapes and mass properties, per-pair
// contact laws, scripted impulses, actuators with their commands, the stepper and its
// settings), read from one kind of JSON file whose "stepper" names a row of the stepper registry
// (default "implicit"). The schema is documented in docs/steppers.md; files that give the
// quasistatic stepper's settings in a "quasistatic" object, and its friction as "friction",
// still load.
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
#include "integrators/stepper_registry.h"

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

// A scene: its bodies, contact laws, impulses and actuators, and the configuration of the
// stepper that advances it (a row of the stepper registry, stepper_registry.h). Copies are
// values: each copy owns its configuration.
struct Scene {
  // An implicit scene with the implicit stepper's defaults.
  Scene();

  std::string name;
  std::string description;
  double duration = 1.0;  // s
  // Step cap of a run (not a scene file field: the caller raises it, e.g. --max-steps).
  int64_t max_steps = kDefaultMaxSteps;
  std::vector<Body> bodies;  // moving and fixed
  ContactLawTable laws;      // each stepper reads the fields of its row's law_keys
  std::vector<ImpulseEvent> impulses;
  std::vector<Actuator> actuators;

  // The stepper's name (its registry row): "implicit", "quasistatic", "explicit", ...
  const std::string& stepper() const { return stepper_; }
  // Switches to the named stepper with its default options; throws InputError for a name
  // without a registry row.
  void SetStepper(const std::string& name);
  const StepperConfig& config() const { return *config_.get(); }
  StepperConfig& mutable_config() { return *config_.get(); }
  // The stepper's options, by their type (ImplicitStepperOptions, QuasistaticOptions,
  // ExplicitStepperOptions, or a registered stepper's); throws InputError if the scene's
  // stepper has other options.
  template <class Options>
  Options& options() {
    return OptionsOf<Options>(config_.get());
  }
  template <class Options>
  const Options& options() const {
    return OptionsOf<Options>(config_.get());
  }

  // The scene's stepper's shared settings (its options' StepperSettings).
  const StepperSettings& settings() const { return config_.get()->settings(); }
  StepperSettings& mutable_settings() { return config_.get()->mutable_settings(); }
  double h() const { return settings().h; }
  Eigen::Vector3d gravity() const { return settings().gravity; }
  // The variant the scene's settings name, in its stepper's grammar:  "<solver>[-cold]"
  // (implicit), "<model>/<solver>[-cold]" (quasistatic; explicit: cone, pyramid, relaxed, or
  // "soft").
  std::string variant() const { return config_.get()->variant(); }
  // True if the variant fits the scene's stepper; ApplyVariant throws InputError otherwise.
  bool TakesVariant(const std::string& variant) const;
  void ApplyVariant(const std::string& variant);
  // The variants compared by default for the scene's stepper (StepperConfig::DefaultVariants).
  std::vector<std::string> DefaultVariants() const { return config_.get()->DefaultVariants(); }
  int FindBody(const std::string& name) const { return ncpkit::FindBody(bodies, name); }
  int FindActuator(const std::string& name) const;
  // Replaces the named actuator's command; throws InputError for an unknown name or an
  // invalid command.
  void SetCommand(const std::string& actuator, const ActuatorCommand& command);

 private:
  // Owns the configuration and copies it with Clone(), so that a Scene copies as a value.
  class ConfigHolder {
   public:
    ConfigHolder() = default;
    explicit ConfigHolder(std::unique_ptr<StepperConfig> config) : config_(std::move(config)) {}
    ConfigHolder(const ConfigHolder& other) : config_(Copy(other)) {}
    ConfigHolder& operator=(const ConfigHolder& other) {
      if (this != &other) config_ = Copy(other);
      return *this;
    }
    ConfigHolder(ConfigHolder&&) noexcept = default;
    ConfigHolder& operator=(ConfigHolder&&) noexcept = default;
    ~ConfigHolder() = default;
    StepperConfig* get() const { return config_.get(); }

   private:
    static std::unique_ptr<StepperConfig> Copy(const ConfigHolder& other) {
      return other.config_ ? other.config_->Clone() : nullptr;
    }
    std::unique_ptr<StepperConfig> config_;
  };

  template <class Options>
  Options& OptionsOf(StepperConfig* config) const {
    auto* typed = dynamic_cast<StepperConfigOf<Options>*>(config);
    if (typed == nullptr) ThrowOtherOptions();
    return typed->options;
  }
  [[noreturn]] void ThrowOtherOptions() const;

  std::string stepper_;
  ConfigHolder config_;
};

// Parses a scene; throws InputError naming the file, the field path and the problem (unknown
// shape, negative mass, missing field, NaN, bodies overlapping at the start, a pair the
// stepper has no contact model for, ...). Text that starts with '<', and a path ending in .xml or
// .mjcf, is read as a MuJoCo MJCF model (integrators/mjcf.h).
Scene ParseScene(const std::string& text, const std::string& source);
Scene LoadScene(const std::string& path);

// The scene's stepper, with its settings (Scene::ApplyVariant to change them first).
std::unique_ptr<Stepper> MakeStepper(const Scene& scene);

// The variants `compare` and the demo run by default for the named stepper
// (StepperConfig::DefaultVariants of its default configuration); throws InputError for an unknown
// stepper.
std::vector<std::string> DefaultVariants(const std::string& stepper);

// Throws InputError, naming every stepper's grammar, unless some stepper takes the variant.
void RequireKnownVariant(const std::string& variant);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_SCENE_H_
