#include "solvers/registry/solver_registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <type_traits>
#include <utility>

#include "solvers/base/input_error.h"
#include "solvers/base/internal/enum_names.h"

namespace ncpkit {
namespace {

// How the settings every solver takes (SolverOptions) map onto each class's own options; the
// row's configuration keeps the rest. max_iterations 0 keeps the configuration's value.
void ApplySolverOptions(const SolverOptions& s, LemkeSolver::Options* o) {
  o->tolerance = s.tolerance;
  o->max_pivots = s.max_iterations;
  o->warm_start = s.warm_start;
}

void ApplySolverOptions(const SolverOptions& s, ProjectedGaussSeidel::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_sweeps = s.max_iterations;
  o->warm_start = s.warm_start;
}

void ApplySolverOptions(const SolverOptions& s, FischerBurmeisterNewton::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_iterations = s.max_iterations;
  o->record_history = s.record_history;
  o->project_onto_bounds = s.project_onto_bounds;
  o->start_acceptance = s.start_acceptance;
  o->reuse_factorization = s.reuse_factorization;
  o->active_set_restarts = s.active_set_restarts;
  o->skip_failed_newton = s.skip_failed_newton;
  o->equilibration = s.equilibrate ? FischerBurmeisterNewton::Equilibration::Auto
                                   : FischerBurmeisterNewton::Equilibration::Off;
}

void ApplySolverOptions(const SolverOptions& s, JosephyNewton::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_iterations = s.max_iterations;
  o->warm_start = s.warm_start;
}

void ApplySolverOptions(const SolverOptions& s, AutoSolvers::Options* o) {
  o->complementarity.tolerance = s.tolerance;
  if (s.max_iterations > 0) o->complementarity.max_iterations = s.max_iterations;
  o->warm_start = s.warm_start;
  o->friction.tolerance = s.tolerance;
  o->friction.warm_start = s.warm_start;
  o->friction.time_limit_seconds = s.time_limit_seconds;
}

void ApplySolverOptions(const SolverOptions& s, NonsmoothGaussSeidel::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_sweeps = s.max_iterations;
  o->warm_start = s.warm_start;
  o->time_limit_seconds = s.time_limit_seconds;
  o->seed = s.seed;
}

void ApplySolverOptions(const SolverOptions& s, FrictionNewton::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_iterations = s.max_iterations;
  o->warm_start = s.warm_start;
  o->time_limit_seconds = s.time_limit_seconds;
}

void ApplySolverOptions(const SolverOptions& s, FrictionProximalPoint::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_outer_iterations = s.max_iterations;
  o->warm_start = s.warm_start;
  o->time_limit_seconds = s.time_limit_seconds;
}

void ApplySolverOptions(const SolverOptions& s, VelocityGaussSeidel::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_sweeps = s.max_iterations;
  o->warm_start = s.warm_start;
  o->time_limit_seconds = s.time_limit_seconds;
}

void ApplySolverOptions(const SolverOptions& s, ConvexNewton::Options* o) {
  o->tolerance = s.tolerance;
  if (s.max_iterations > 0) o->max_iterations = s.max_iterations;
  o->warm_start = s.warm_start;
  o->time_limit_seconds = s.time_limit_seconds;
}

// The summary type Solver::Solve returns for Problem, or void when it takes no such problem.
template <class Solver, class Problem, class = void>
struct SummaryOf {
  using type = void;
};
template <class Solver, class Problem>
struct SummaryOf<Solver, Problem,
                 std::void_t<decltype(std::declval<Solver&>().Solve(
                     std::declval<const Problem&>(), std::declval<Eigen::VectorXd*>()))>> {
  using type = std::decay_t<decltype(std::declval<Solver&>().Solve(
      std::declval<const Problem&>(), std::declval<Eigen::VectorXd*>()))>;
};
template <class Solver, class Problem>
constexpr bool kSolves = !std::is_void_v<typename SummaryOf<Solver, Problem>::type>;

// Options without a warm_start field (the Newton classes start from *z whenever it has the
// problem's size): a cold solve empties *z first.
template <class Options, class = void>
struct HasWarmStart : std::false_type {};
template <class Options>
struct HasWarmStart<Options, std::void_t<decltype(std::declval<Options&>().warm_start)>>
    : std::true_type {};

// The summary kept for one problem type: the solver's own type, or an unused SolverSummary.
template <class Solver, class Problem>
using SummarySlot = std::conditional_t<kSolves<Solver, Problem>,
                                       typename SummaryOf<Solver, Problem>::type, SolverSummary>;

// The one adapter from a registry row to ComplementaritySolver. A kind the row does not take is
// refused with InvalidInput; an LCP goes to a solver of MCPs only as its linear MCP, a global
// frictional contact problem to a solver of the local form only through Reduce (the base).
template <class Solver>
class RegisteredSolver : public ComplementaritySolver {
 public:
  RegisteredSolver(const SolverEntry& entry, const SolverOptions& options)
      : ComplementaritySolver(entry.name, options), kinds_(entry.kinds) {
    auto configured = std::get<typename Solver::Options>(entry.configuration);
    ApplySolverOptions(options, &configured);
    solver_.mutable_options() = configured;
  }

  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    if (!Accepts(ProblemKind::Linear)) return *last_;
    if constexpr (kSolves<Solver, LinearComplementarityProblem>) {
      return Run(problem, z, &linear_);
    } else if constexpr (kSolves<Solver, MixedComplementarityProblem>) {
      return Run(LinearMcp(problem), z, &mixed_);
    } else {
      return Refuse(ProblemKind::Linear);
    }
  }
  const SolverSummary& Solve(const MixedComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    if (!Accepts(ProblemKind::Mixed)) return *last_;
    if constexpr (kSolves<Solver, MixedComplementarityProblem>) {
      return Run(problem, z, &mixed_);
    } else {
      return Refuse(ProblemKind::Mixed);
    }
  }
  const SolverSummary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r) override {
    if (!Accepts(ProblemKind::Friction)) return *last_;
    if constexpr (kSolves<Solver, FrictionContactProblem>) {
      return Run(problem, r, &friction_);
    } else {
      return Refuse(ProblemKind::Friction);
    }
  }
  const SolverSummary& Solve(const GlobalFrictionContactProblem& problem,
                             Eigen::VectorXd* r) override {
    if (!Accepts(ProblemKind::GlobalFriction)) return *last_;
    if constexpr (kSolves<Solver, GlobalFrictionContactProblem>) {
      return Run(problem, r, &global_);
    } else {
      return ComplementaritySolver::Solve(problem, r);
    }
  }
  const SolverSummary& summary() const override { return *last_; }
  std::shared_ptr<const SolverMemory> SaveMemory() const override {
    if constexpr (std::is_same_v<Solver, FischerBurmeisterNewton>) return solver_.SaveMemory();
    return nullptr;
  }
  void RestoreMemory(const SolverMemory* memory) override {
    if constexpr (std::is_same_v<Solver, FischerBurmeisterNewton>) solver_.RestoreMemory(memory);
  }
  static constexpr bool kTakesRunner =
      std::is_same_v<Solver, VelocityGaussSeidel> || std::is_same_v<Solver, AutoSolvers>;
  bool UsesParallelRunner() const override { return kTakesRunner; }
  void SetParallelRunner(const ParallelRunner* runner) override {
    if constexpr (kTakesRunner) solver_.SetParallelRunner(runner);
  }

 private:
  bool Accepts(ProblemKind kind) {
    if ((kinds_ & KindBit(kind)) != 0) return true;
    Refuse(kind);
    return false;
  }
  const SolverSummary& Refuse(ProblemKind kind) {
    refused_ = SolverSummary();
    refused_.solver = name();
    refused_.tolerance = options().tolerance;
    refused_.status = Status::InvalidInput;
    refused_.message = name() + " does not take " + ToString(kind) + " problems";
    last_ = &refused_;
    return refused_;
  }
  template <class Problem, class Summary>
  const SolverSummary& Run(const Problem& problem, Eigen::VectorXd* z, Summary* summary) {
    if constexpr (!HasWarmStart<typename Solver::Options>::value) {
      if (!options().warm_start) z->resize(0);
    }
    *summary = solver_.Solve(problem, z);
    last_ = summary;
    return *summary;
  }

  ProblemKinds kinds_;
  Solver solver_;
  SummarySlot<Solver, LinearComplementarityProblem> linear_;
  SummarySlot<Solver, MixedComplementarityProblem> mixed_;
  SummarySlot<Solver, FrictionContactProblem> friction_;
  SummarySlot<Solver, GlobalFrictionContactProblem> global_;
  SolverSummary refused_;
  const SolverSummary* last_ = &refused_;  // NotRun before the first Solve
};

template <class Solver>
std::unique_ptr<ComplementaritySolver> Make(const SolverEntry& entry,
                                            const SolverOptions& options) {
  return std::make_unique<RegisteredSolver<Solver>>(entry, options);
}

// The adapter of the class whose Options the row's configuration holds (the variant's index is
// the class's place in the list).
template <class... Solvers>
std::unique_ptr<ComplementaritySolver> Create(SolverClasses<Solvers...>, const SolverEntry& entry,
                                              const SolverOptions& options) {
  using Factory =
      std::unique_ptr<ComplementaritySolver> (*)(const SolverEntry&, const SolverOptions&);
  static constexpr Factory kFactories[] = {&Make<Solvers>...};
  if (const auto* external = std::get_if<ExternalSolver>(&entry.configuration)) {
    std::unique_ptr<ComplementaritySolver> solver = external->make(entry.name, options);
    if (solver == nullptr) throw InputError("solver " + entry.name + ": its factory made none");
    return solver;
  }
  return kFactories[entry.configuration.index()](entry, options);
}

// Row configurations: each class's defaults with the settings the row's name stands for.
FischerBurmeisterNewton::Options Newton(NcpFunction function,
                                        FischerBurmeisterNewton::LinearSolver linear_solver) {
  FischerBurmeisterNewton::Options o;
  o.ncp_function = function;
  o.linear_solver = linear_solver;
  return o;
}

NonsmoothGaussSeidel::Options Nsgs(NonsmoothGaussSeidel::Ordering ordering,
                                   int anderson_memory = 0) {
  NonsmoothGaussSeidel::Options o;
  o.ordering = ordering;
  o.anderson_memory = anderson_memory;
  return o;
}

FrictionNewton::Options ConeNewton(FrictionNewton::Function function) {
  FrictionNewton::Options o;
  o.function = function;
  return o;
}

FrictionProximalPoint::Options ConeProximal(FrictionNewton::Function function) {
  FrictionProximalPoint::Options o;
  o.function = function;
  return o;
}

}  // namespace

const char* ToString(ProblemKind kind) {
  static constexpr internal::EnumName<ProblemKind> kNames[] = {
      {ProblemKind::Linear, "linear (LCP / MLCP)"},
      {ProblemKind::Mixed, "mixed (MCP)"},
      {ProblemKind::Friction, "frictional contact (FC3D)"},
      {ProblemKind::GlobalFriction, "global frictional contact (FC3D, M and H)"}};
  return internal::NameIn(kNames, kind);
}

const SolverSummary& ComplementaritySolver::Solve(const FrictionContactProblem&, Eigen::VectorXd*) {
  not_taken_ = SolverSummary();
  not_taken_.solver = name_;
  not_taken_.tolerance = options_.tolerance;
  not_taken_.status = Status::InvalidInput;
  not_taken_.message = name_ + " does not take " + ToString(ProblemKind::Friction) + " problems";
  return not_taken_;
}

const SolverSummary& ComplementaritySolver::Solve(const GlobalFrictionContactProblem& problem,
                                                  Eigen::VectorXd* r) {
  problem.Reduce(&reduced_);
  return Solve(reduced_, r);
}

bool SolverOptions::IsValid(std::string* why) const {
  std::ostringstream os;
  if (!(tolerance > 0.0) || !std::isfinite(tolerance)) {
    os << "tolerance = " << tolerance << " must be positive and finite";
  } else if (max_iterations < 0) {
    os << "max_iterations = " << max_iterations << " must be >= 0 (0: the solver's default)";
  } else if (!(start_acceptance > 0.0 && start_acceptance <= 1.0)) {
    os << "start_acceptance = " << start_acceptance << " must be in (0, 1]";
  } else if (!(time_limit_seconds >= 0.0)) {
    os << "time_limit_seconds = " << time_limit_seconds << " must be >= 0";
  } else if (active_set_restarts < 0) {
    os << "active_set_restarts = " << active_set_restarts << " must be >= 0";
  }
  if (why) *why = os.str();
  return os.str().empty();
}

AutoSolver::Summary AutoSolvers::Solve(const LinearComplementarityProblem& problem,
                                       Eigen::VectorXd* z) const {
  if (!options_.warm_start) z->resize(0);
  return AutoSolver(options_.complementarity).Solve(problem, z);
}

AutoSolver::Summary AutoSolvers::Solve(const MixedComplementarityProblem& problem,
                                       Eigen::VectorXd* z) const {
  if (!options_.warm_start) z->resize(0);
  return AutoSolver(options_.complementarity).Solve(problem, z);
}

const FrictionAuto::Summary& AutoSolvers::Solve(const FrictionContactProblem& problem,
                                                Eigen::VectorXd* r) {
  friction_.mutable_options() = options_.friction;
  return friction_.Solve(problem, r);
}

const FrictionAuto::Summary& AutoSolvers::Solve(const GlobalFrictionContactProblem& problem,
                                                Eigen::VectorXd* r) {
  friction_.mutable_options() = options_.friction;
  return friction_.Solve(problem, r);
}

bool AutoSolvers::Options::IsValid(std::string* why) const {
  return complementarity.IsValid(why) && friction.IsValid(why);
}

namespace {

std::deque<SolverEntry> LibraryRows() {
  using Kind = ProblemKind;
  using LinearSolver = FischerBurmeisterNewton::LinearSolver;
  using Ordering = NonsmoothGaussSeidel::Ordering;
  using Function = FrictionNewton::Function;
  constexpr ProblemKinds kLinear = KindBit(Kind::Linear), kMixed = KindBit(Kind::Mixed);
  constexpr ProblemKinds kGlobal = KindBit(Kind::GlobalFriction);
  // name, description, kinds taken, kinds compared by default, needs a positive diagonal, the
  // configuration.
  return {
      {"lemke", "Lemke's complementary pivoting, lexicographic (lemke.h)", kLinear, kLinear, false,
       LemkeSolver::Options()},
      {"pgs", "projected Gauss-Seidel / SOR (projected_gauss_seidel.h)", kLinear, kLinear, true,
       ProjectedGaussSeidel::Options()},
      {"fb-newton", "Fischer-Burmeister semismooth Newton, KLU or dense LU (semismooth_newton.h)",
       kLinearAndMixed, kLinearAndMixed, false,
       Newton(NcpFunction::FischerBurmeister, LinearSolver::Auto)},
      {"fb-newton-dense", "the same, always dense LU", kLinearAndMixed, kMixed, false,
       Newton(NcpFunction::FischerBurmeister, LinearSolver::Dense)},
      {"penalized-fb", "penalized Fischer-Burmeister semismooth Newton", kLinearAndMixed, kMixed,
       false, Newton(NcpFunction::PenalizedFischerBurmeister, LinearSolver::Auto)},
      {"minmap-newton", "min-map semismooth Newton", kLinearAndMixed, kMixed, false,
       Newton(NcpFunction::MinMap, LinearSolver::Auto)},
      {"josephy-newton", "Josephy-Newton, Lemke on each linearization (josephy_newton.h)",
       kLinearAndMixed, 0, false, JosephyNewton::Options()},
      {"auto",
       "a robust sequence of the above, reporting which solved it (auto_solve.h, "
       "friction_auto.h)",
       kEveryKind, 0, false, AutoSolvers::Options()},
      {"nsgs", "block Gauss-Seidel over contacts, exact local solves (nonsmooth_gauss_seidel.h)",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false, Nsgs(Ordering::Natural)},
      {"nsgs-shuffled", "the same, contacts in a new random order every sweep",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false, Nsgs(Ordering::Shuffled)},
      {"nsgs-anderson",
       "the same in natural order, each sweep started from the Anderson combination of the last "
       "5",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false, Nsgs(Ordering::Natural, 5)},
      {"fc-newton", "semismooth Newton on the Alart-Curnier function, KLU (friction_newton.h)",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false, ConeNewton(Function::AlartCurnier)},
      {"fc-newton-fb",
       "semismooth Newton on the Fischer-Burmeister function of the second-order cone "
       "(friction_newton.h)",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false,
       ConeNewton(Function::FischerBurmeister)},
      {"fc-proximal", "proximal-point steps, each solved by fc-newton (friction_newton.h)",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false,
       ConeProximal(Function::AlartCurnier)},
      {"fc-proximal-fb", "proximal-point steps, each solved by fc-newton-fb",
       kLocalAndGlobalFriction, kLocalAndGlobalFriction, false,
       ConeProximal(Function::FischerBurmeister)},
      {"nsgs-velocity",
       "block Gauss-Seidel over contacts keeping the velocities, a face's "
       "sticking corners solved as one block, a resting island at once; global form only "
       "(velocity_gauss_seidel.h)",
       kGlobal, kGlobal, false, VelocityGaussSeidel::Options()},
      {"convex-newton",
       "the convex contact model (relaxed cone with a compliance) by primal Newton with an exact "
       "line search and a sparse Cholesky; its error is that model's (convex_newton.h)",
       kLocalAndGlobalFriction, 0, false, ConvexNewton::Options(), /*convex_model=*/true},
  };
}

// The library's rows first, then the registered ones.
struct Registry {
  std::deque<SolverEntry> rows = LibraryRows();
  const size_t library_rows = rows.size();
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

std::string RegistrationProblem(const SolverEntry& entry) {
  const std::string& name = entry.name;
  const bool well_formed =
      !name.empty() && std::isalnum(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(),
                  [](char c) {
                    return (std::islower(static_cast<unsigned char>(c)) != 0) ||
                           (std::isdigit(static_cast<unsigned char>(c)) != 0) || c == '-' ||
                           c == '.';
                  }) &&
      !(name.size() >= 5 && name.compare(name.size() - 5, 5, "-cold") == 0);
  if (!well_formed) {
    return "a solver's name is [a-z0-9][a-z0-9.-]* without a '-cold' end";
  }
  if (FindSolver(name) != nullptr) return "the name is taken";
  if ((entry.kinds & kEveryKind) == 0) return "it takes no problem kind";
  if ((entry.compared & ~entry.kinds) != 0) return "it is compared on kinds it does not take";
  const auto* external = std::get_if<ExternalSolver>(&entry.configuration);
  if (external != nullptr && !external->make) return "its ExternalSolver has no factory";
  return "";
}

}  // namespace

const std::deque<SolverEntry>& SolverRegistry() { return TheRegistry().rows; }

void RegisterSolver(SolverEntry entry) {
  const std::string problem = RegistrationProblem(entry);
  if (!problem.empty()) {
    throw InputError("cannot register solver '" + entry.name + "': " + problem);
  }
  TheRegistry().rows.push_back(std::move(entry));
}

bool UnregisterSolver(const std::string& name) {
  std::deque<SolverEntry>& rows = TheRegistry().rows;
  for (size_t k = TheRegistry().library_rows; k < rows.size(); ++k) {
    if (rows[k].name == name) {
      rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(k));
      return true;
    }
  }
  return false;
}

const SolverEntry* FindSolver(const std::string& name) {
  for (const SolverEntry& entry : SolverRegistry()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::string KindNames(ProblemKinds kinds) {
  static const char* const kNames[] = {"linear", "mixed", "friction", "global-friction"};
  std::string text;
  for (unsigned k = 0; k < 4; ++k) {
    if ((kinds & (1u << k)) != 0) text += (text.empty() ? "" : ", ") + std::string(kNames[k]);
  }
  return text;
}

std::string SolverTableMarkdown() {
  std::string table =
      "| solver | problem kinds | compared by default on | what it runs |\n|---|---|---|---|\n";
  for (const SolverEntry& e : SolverRegistry()) {
    table += "| `" + e.name + "` | " + KindNames(e.kinds) + " | " + KindNames(e.compared) + " | " +
             e.description + (e.needs_positive_diagonal ? "; needs M_ii > 0" : "") + " |\n";
  }
  return table;
}

std::vector<std::string> SolverNames(ProblemKind kind, bool convex_model) {
  std::vector<std::string> names;
  for (const SolverEntry& entry : SolverRegistry()) {
    if (entry.Takes(kind) && entry.convex_model == convex_model) names.push_back(entry.name);
  }
  return names;
}

bool IsSolverName(const std::string& name, ProblemKind kind) {
  const SolverEntry* entry = FindSolver(name);
  return entry != nullptr && entry->Takes(kind);
}

std::string SolverNameList(ProblemKind kind) {
  std::string list;
  for (const std::string& name : SolverNames(kind)) list += (list.empty() ? "" : ", ") + name;
  return list;
}

std::unique_ptr<ComplementaritySolver> CreateSolver(const std::string& name, ProblemKind kind,
                                                    const SolverOptions& options) {
  const SolverEntry* entry = FindSolver(name);
  if (entry == nullptr) {
    throw InputError("unknown solver '" + name + "' (expected one of " + SolverNameList(kind) +
                     ")");
  }
  if (!entry->Takes(kind)) {
    throw InputError("solver '" + name + "' does not take " + ToString(kind) +
                     " problems (those that do: " + SolverNameList(kind) + ")");
  }
  RequireValidOptions(options, "solver " + name);
  return Create(RegisteredSolverClasses(), *entry, options);
}

std::string SolverVariant::ToString() const {
  return (model.empty() ? "" : model + "/") + solver + (cold ? "-cold" : "");
}

bool SplitSolverVariant(const std::string& text, SolverVariant* variant, std::string* why) {
  static const std::string kCold = "-cold";
  *variant = SolverVariant();
  std::string rest = text;
  if (rest.size() > kCold.size() &&
      rest.compare(rest.size() - kCold.size(), kCold.size(), kCold) == 0) {
    variant->cold = true;
    rest.resize(rest.size() - kCold.size());
  }
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    variant->model = rest.substr(0, slash);
    rest = rest.substr(slash + 1);
    if (variant->model.empty()) {
      *why = "solver variant '" + text + "' names no model";
      return false;
    }
  }
  if (rest.empty() || rest.find('/') != std::string::npos) {
    *why = "malformed solver variant '" + text +
           "' (expected <solver>[-cold] or <model>/<solver>[-cold])";
    return false;
  }
  variant->solver = rest;
  return true;
}

SolverVariant ParseSolverVariant(const std::string& text) {
  SolverVariant variant;
  std::string why;
  if (!SplitSolverVariant(text, &variant, &why)) throw InputError(why);
  return variant;
}

}  // namespace ncpkit
