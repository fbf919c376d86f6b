#include "integrators/stepper_registry.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "integrators/explicit_stepper.h"
#include "integrators/implicit_stepper.h"
#include "integrators/json_reader.h"
#include "integrators/limits.h"
#include "integrators/quasistatic_stepper.h"
#include "solvers/base/input_error.h"

namespace ncpkit {

const char* const kSharedSettingKeys[8] = {
    "h", "gravity", "solver", "tolerance", "max_iterations", "warm_start", "islands", "threads"};

namespace {

std::deque<StepperEntry> LibraryRows() {
  const std::vector<std::string> kRigidLaw = {"mu", "e_t", "e_o", "e_r", "torsion", "compliance"};
  std::vector<std::string> explicit_law = kRigidLaw;
  explicit_law.emplace_back("restitution");
  return {
      {"implicit",
       "Xie & Chakraborty's implicit step: one mixed complementarity problem with line and "
       "surface contact (implicit_stepper.h)",
       /*velocities=*/true, /*actuators=*/false, kRigidLaw, &MakeImplicitConfig},
      {"quasistatic",
       "quasistatic steps with actuated bodies: the DQC, DLC, convex QP and its LCP "
       "(quasistatic_stepper.h)",
       /*velocities=*/false,
       /*actuators=*/true,
       {"mu"},
       &MakeQuasistaticConfig},
      {"explicit",
       "explicit velocity-level steps: Coulomb cone, pyramid, relaxed cone or soft contact "
       "(explicit_stepper.h)",
       /*velocities=*/true, /*actuators=*/false, explicit_law, &MakeExplicitConfig},
  };
}

// The library's rows first, then the registered ones.
struct Registry {
  std::deque<StepperEntry> rows = LibraryRows();
  const size_t library_rows = rows.size();
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

std::string RegistrationProblem(const StepperEntry& entry) {
  const std::string& name = entry.name;
  const bool well_formed = !name.empty() &&
                           std::islower(static_cast<unsigned char>(name[0])) != 0 &&
                           std::all_of(name.begin(), name.end(), [](char c) {
                             return std::islower(static_cast<unsigned char>(c)) != 0 ||
                                    std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
                           });
  if (!well_formed) return "a stepper's name is [a-z][a-z0-9-]*";
  if (FindStepper(name) != nullptr) return "the name is taken";
  if (!entry.make_config) return "it has no make_config";
  if (!entry.make_config()) return "its make_config returns no configuration";
  return "";
}

}  // namespace

const std::deque<StepperEntry>& StepperRegistry() { return TheRegistry().rows; }

const StepperEntry* FindStepper(const std::string& name) {
  for (const StepperEntry& entry : StepperRegistry()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::string StepperNameList() {
  std::string list;
  for (const StepperEntry& entry : StepperRegistry()) {
    list += (list.empty() ? "" : ", ") + entry.name;
  }
  return list;
}

void RegisterStepper(StepperEntry entry) {
  const std::string problem = RegistrationProblem(entry);
  if (!problem.empty()) {
    throw InputError("cannot register stepper '" + entry.name + "': " + problem);
  }
  TheRegistry().rows.push_back(std::move(entry));
}

bool UnregisterStepper(const std::string& name) {
  std::deque<StepperEntry>& rows = TheRegistry().rows;
  for (size_t k = TheRegistry().library_rows; k < rows.size(); ++k) {
    if (rows[k].name == name) {
      rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(k));
      return true;
    }
  }
  return false;
}

namespace internal {

void ReadStepperSettings(const Reader& in, const Json& object, const std::string& path,
                         const std::string& prefix, bool h_required, int min_iterations,
                         StepperSettings* settings) {
  settings->h =
      h_required ? in.Positive(object, path, "h") : in.Number(object, path, "h", settings->h);
  if (!(settings->h > 0.0)) in.Fail(prefix + "h", "must be positive");
  settings->gravity = in.Vector3(object, path, "gravity", settings->gravity);
  if (object.contains("solver")) {
    settings->solver = in.String(object.at("solver"), prefix + "solver");
  }
  settings->tolerance = in.Number(object, path, "tolerance", settings->tolerance);
  if (!(settings->tolerance > 0.0)) in.Fail(prefix + "tolerance", "must be positive");
  settings->max_iterations =
      static_cast<int>(in.Integer(object, path, "max_iterations", settings->max_iterations,
                                  min_iterations, kMaxSolverIterations));
  settings->warm_start = in.Bool(object, path, "warm_start", settings->warm_start);
  settings->islands = in.Bool(object, path, "islands", settings->islands);
  settings->threads = static_cast<int>(
      in.Integer(object, path, "threads", settings->threads, 1, StepperSettings::kMaxThreads));
}

void AppendComparedVariants(const std::string& prefix, ProblemKind kind, bool zero_diagonal_rows,
                            std::vector<std::string>* variants) {
  for (const SolverEntry& e : SolverRegistry()) {
    if (!e.Takes(kind) || !e.Compared(kind)) continue;
    if (zero_diagonal_rows && e.needs_positive_diagonal) continue;
    variants->push_back(prefix + e.name);
  }
}

}  // namespace internal

}  // namespace ncpkit
