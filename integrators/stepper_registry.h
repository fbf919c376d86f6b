// The stepper registry: one row per time-stepper, naming it as scene files and the command line
// do and saying what its bodies and contact laws carry, with a factory for its configuration.
// A configuration (StepperConfig) is a stepper's options as a scene holds them, with what a
// scene needs of them: the stepper's scene-file keys and their reader, its variant grammar, the
// variants compared by default, and the stepper's factory.
//
// Adding a stepper (docs/steppers.md): its file pair (the Stepper subclass, its Options deriving
// from StepperSettings, and a StepperConfigOf<Options> subclass with a Make...Config() factory)
// and one row in StepperRegistry() (stepper_registry.cc); or, from code outside the library,
// RegisterStepper() with the same row.
#ifndef NCPKIT_INTEGRATORS_STEPPER_REGISTRY_H_
#define NCPKIT_INTEGRATORS_STEPPER_REGISTRY_H_

#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "contact/contact_law.h"
#include "dynamics/actuators.h"
#include "dynamics/body.h"
#include "integrators/stepper.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {

namespace internal {
class Reader;
}  // namespace internal

class StepperConfig {
 public:
  StepperConfig() = default;
  StepperConfig(const StepperConfig&) = default;
  StepperConfig& operator=(const StepperConfig&) = default;
  virtual ~StepperConfig() = default;

  virtual std::unique_ptr<StepperConfig> Clone() const = 0;
  // The fields every stepper shares.
  virtual const StepperSettings& settings() const = 0;
  StepperSettings& mutable_settings() {
    return const_cast<StepperSettings&>(static_cast<const StepperConfig&>(*this).settings());
  }
  // The stepper's own scene-file keys, beside the shared ones (kSharedSettingKeys).
  virtual std::vector<std::string> OwnKeys() const = 0;
  // Reads the shared settings and the stepper's own keys from `object` (the scene file's top
  // level, or an older file's "quasistatic" object: `path` names it in messages, `prefix` comes
  // before each field's name), then checks the options as a whole. Throws InputError.
  virtual void Read(const internal::Reader& in, const nlohmann::json& object,
                    const std::string& path, const std::string& prefix) = 0;
  // The variant the options name: "<solver>[-cold]", "<model>/<solver>[-cold]", ...
  virtual std::string variant() const = 0;
  // Sets what `variant` names and returns ""; or, when it is not one of this stepper's
  // variants, returns why (naming the grammar) and leaves the options unchanged.
  virtual std::string SetVariant(const std::string& variant) = 0;
  // The grammar of the stepper's variants, for messages ("<solver>[-cold] with one of ...").
  virtual std::string VariantGrammar() const = 0;
  // The variants `compare` and the demo run by default: every registry row compared by default
  // on the problem kinds of the stepper's models, run-time registered ones included.
  virtual std::vector<std::string> DefaultVariants() const = 0;
  // The stepper, with these options. Throws InputError for what only the whole system shows.
  virtual std::unique_ptr<Stepper> MakeStepper(const std::vector<Body>& bodies,
                                               const ContactLawTable& laws,
                                               const std::vector<Actuator>& actuators) const = 0;
};

// A configuration holding a stepper's Options (which derive from StepperSettings); the scene's
// typed access (Scene::options<Options>()) finds it by its Options type.
template <class Options>
class StepperConfigOf : public StepperConfig {
 public:
  Options options;
  const StepperSettings& settings() const final { return options; }
};

// The keys of the shared settings (StepperSettings) in a scene file.
extern const char* const kSharedSettingKeys[8];

struct StepperEntry {
  // The scene file's "stepper" value: [a-z][a-z0-9-]*.
  std::string name;
  // One line for the docs and the usage text.
  std::string summary;
  // Bodies have masses and velocities: a moving body needs "mass" > 0 and "position", takes
  // "velocity", "angular_velocity", "inertia", and the scene takes "impulses". Otherwise bodies
  // are posed (quasistatic): "mass" >= 0 (default 0), "position" defaults to the origin, a body
  // may be a "point" and may name its free "dofs".
  bool velocities = true;
  // The scene takes "actuators" and their "commands".
  bool actuators = false;
  // The contact-law fields the stepper reads ("contact" and "pairs"): of mu, e_t, e_o, e_r,
  // torsion, compliance, restitution.
  std::vector<std::string> law_keys;
  // The configuration with the stepper's defaults.
  std::function<std::unique_ptr<StepperConfig>()> make_config;
};

// The library's rows (implicit, quasistatic, explicit), then those registered at run time.
const std::deque<StepperEntry>& StepperRegistry();
// The row named `name`, or nullptr.
const StepperEntry* FindStepper(const std::string& name);
// "implicit, quasistatic, explicit" (every row).
std::string StepperNameList();
// Adds a row; throws InputError for a malformed or taken name or a row without a factory.
void RegisterStepper(StepperEntry entry);
// Removes a row added by RegisterStepper; false if there is none of that name.
bool UnregisterStepper(const std::string& name);

namespace internal {

// Reads the shared settings from `object` (see StepperConfig::Read). `h_required`: the
// stepper has no default step; `min_iterations`: its least max_iterations.
void ReadStepperSettings(const Reader& in, const nlohmann::json& object, const std::string& path,
                         const std::string& prefix, bool h_required, int min_iterations,
                         StepperSettings* settings);

// Appends "<prefix><solver>" for every registry solver compared by default on `kind`, leaving out
// those that need a positive diagonal when the model's problem has rows with a zero one.
void AppendComparedVariants(const std::string& prefix, ProblemKind kind, bool zero_diagonal_rows,
                            std::vector<std::string>* variants);

// A stepper's variant reader (it fills the options or returns why the text is not one of its
// variants) as a test and as a setter that throws InputError and leaves the options unchanged.
template <class Options>
bool ReadsVariant(std::string (*read)(const std::string&, Options*), const std::string& variant) {
  Options scratch;
  return read(variant, &scratch).empty();
}
template <class Options>
void ApplyVariantOrThrow(std::string (*read)(const std::string&, Options*),
                         const std::string& variant, Options* options) {
  Options changed = *options;
  const std::string why = read(variant, &changed);
  if (!why.empty()) throw InputError(why);
  *options = changed;
}

}  // namespace internal

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_STEPPER_REGISTRY_H_
