// Quasistatic scenes as data files (JSON): bodies, actuators with their commanded trajectories,
// friction and the stepper settings. The schema is documented in the README ("Quasistatic
// scene files"); a scene file is quasistatic when it has a "quasistatic" object.
#ifndef NCPKIT_INTEGRATORS_QUASISTATIC_SCENE_H_
#define NCPKIT_INTEGRATORS_QUASISTATIC_SCENE_H_

#include <string>
#include <vector>

#include "integrators/limits.h"
#include "integrators/quasistatic_stepper.h"

namespace ncpkit {

struct QuasistaticScene {
  std::string name;
  std::string description;
  double duration = 1.0;
  // Step cap of a run (not a scene file field: the caller raises it, e.g. --max-steps).
  int64_t max_steps = kDefaultMaxSteps;
  QuasistaticSystem system;
  QuasistaticOptions options;
};

// True if the text is a JSON object with a "quasistatic" field (no other validation).
bool IsQuasistaticSceneText(const std::string& text);
// Parses a scene; throws std::invalid_argument naming the file, the field and the problem (NaN
// in a command, stiffness <= 0, a command for an unknown actuator, ...).
QuasistaticScene ParseQuasistaticScene(const std::string& text, const std::string& source);
QuasistaticScene LoadQuasistaticScene(const std::string& path);
// True if the file can be read and holds a quasistatic scene.
bool IsQuasistaticSceneFile(const std::string& path);

// Stepper variants "<model>/<solver>", optionally with "-cold" (no warm start): the model one of
// dqc, dlc, qp, qp-lcp and the solver one of SolverNames(ProblemKind::Mixed) for dqc and of
// SolverNames(ProblemKind::Linear) otherwise, e.g. "qp-lcp/lemke", "dqc/fb-newton-cold".
bool IsQuasistaticVariant(const std::string& variant);
// Throws std::invalid_argument for an unknown variant.
void ApplyQuasistaticVariant(const std::string& variant, QuasistaticOptions* options);
std::string QuasistaticVariantName(const QuasistaticOptions& options);
// The variants `compare` runs by default on quasistatic scenes.
const std::vector<std::string>& DefaultQuasistaticVariants();

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_QUASISTATIC_SCENE_H_
