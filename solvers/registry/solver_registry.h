// The solver registry: one table from a solver's name to the solver, for every problem kind,
// and the one grammar of solver variants that steppers and the command line accept.
//
// Contract for names: CreateSolver() throws InputError for a name that is not in the table or
// that does not take the problem kind asked for, naming the ones that do; nothing downstream of
// it sees an unknown name. Adding a solver (docs/solvers.md): its file pair (foo.h / foo.cc
// with Options, Summary and Solve overloads for the problem kinds it takes), its class in
// RegisteredSolverClasses, an ApplySolverOptions overload in solver_registry.cc (how
// the settings every solver takes map onto its own), one row in SolverRegistry(), and its tests.
#ifndef NCPKIT_SOLVERS_REGISTRY_SOLVER_REGISTRY_H_
#define NCPKIT_SOLVERS_REGISTRY_SOLVER_REGISTRY_H_

#include <Eigen/Dense>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "solvers/base/parallel_runner.h"
#include "solvers/base/status.h"
#include "solvers/friction/convex_newton.h"
#include "solvers/friction/friction_auto.h"
#include "solvers/friction/friction_newton.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/global_friction_problem.h"
#include "solvers/friction/nonsmooth_gauss_seidel.h"
#include "solvers/friction/velocity_gauss_seidel.h"
#include "solvers/lcp/lemke.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/lcp/projected_gauss_seidel.h"
#include "solvers/mcp/auto_solve.h"
#include "solvers/mcp/josephy_newton.h"
#include "solvers/mcp/mcp.h"
#include "solvers/mcp/semismooth_newton.h"

namespace ncpkit {

// What a solver is handed.
enum class ProblemKind {
  Linear,    // LinearComplementarityProblem: an LCP or a box-constrained MLCP
  Mixed,     // MixedComplementarityProblem: a nonlinear MCP (a Linear one can be posed as one)
  Friction,  // FrictionContactProblem: 3D frictional contact with Coulomb cones (FCLib)
  // GlobalFrictionContactProblem: the same in FCLib's global form (M v = H r + f, u = H^T v + w,
  // M block diagonal). Every solver of the Friction kind takes it, on its local form (W formed
  // by GlobalFrictionContactProblem::Reduce); nsgs-velocity takes only this form.
  GlobalFriction,
};
const char* ToString(ProblemKind kind);

// The settings every registered solver takes; each solver keeps its own defaults for the rest
// (its Options in its header).
struct SolverOptions {
  // Natural residual ||z - mid(l, u, z - F(z))||_inf below which a point counts as a solution;
  // for frictional contact problems the FCLib error (friction_problem.h). Default 1e-10; > 0.
  double tolerance = 1e-10;
  // Pivots (Lemke), sweeps (PGS), iterations (Newton, per attempt for auto). Default 0: the
  // solver's own default; >= 0.
  int max_iterations = 0;
  // Start from *z when it has the problem's size (Lemke: its complementary basis; PGS and the
  // Newton methods: the point). Default false: from the solver's default start.
  bool warm_start = false;
  // Newton methods: keep per-iteration records in the summary (FischerBurmeisterNewton).
  bool record_history = false;
  // Newton methods: keep the line search inside [l, u] (FischerBurmeisterNewton::Options).
  bool project_onto_bounds = false;
  // Newton methods: FischerBurmeisterNewton::Options::start_acceptance, in (0, 1]. Default 1.
  double start_acceptance = 1.0;
  // FB Newton methods: start a Solve with chord steps on the Newton matrix the previous Solve
  // factorized (FischerBurmeisterNewton::Options::reuse_factorization). Default false; a
  // time-stepper that keeps one solver per problem turns it on.
  bool reuse_factorization = false;
  // Newton methods: equilibrate badly scaled problems (FischerBurmeisterNewton::Options::
  // equilibration Auto) or never (Off). Default true; the steppers turn it off.
  bool equilibrate = true;
  // FB Newton methods: restarts after a stall from the stalled point with its worst unresolved
  // complementarity pair flipped (FischerBurmeisterNewton::Options::active_set_restarts).
  // Default 0; >= 0; the implicit stepper turns them on.
  int active_set_restarts = 0;
  // FB Newton methods: once the Newton direction has failed in a run, start the later
  // iterations from the regularized one (FischerBurmeisterNewton::Options::skip_failed_newton).
  // Default false; the implicit stepper turns it on.
  bool skip_failed_newton = false;
  // Frictional contact solvers: stop with MaxIterations after this much wall time. Default 0:
  // no limit; >= 0.
  double time_limit_seconds = 0.0;
  // Solvers with a random order (nsgs-shuffled): the seed of its generator, so that a run is
  // repeated exactly with the same seed and varied with another. Default 0.
  unsigned seed = 0;
  bool IsValid(std::string* why) const;
};

// A solver chosen by name. It lives as long as its owner (a time-stepper keeps one for all
// its steps), so factorization analyses and workspaces carry over from one Solve to the next.
class ComplementaritySolver {
 public:
  virtual ~ComplementaritySolver() = default;
  const std::string& name() const { return name_; }
  const SolverOptions& options() const { return options_; }
  // Solves the problem; *z is the start (see SolverOptions::warm_start) and receives the
  // solution, or the best point found. The summary's dynamic type is the solver's own
  // (LemkeSolver::Summary, ...): FullReport() and a dynamic_cast reach its specific fields. It
  // stays valid until the next Solve. A solver that does not take the kind reports
  // InvalidInput.
  virtual const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                                     Eigen::VectorXd* z) = 0;
  virtual const SolverSummary& Solve(const MixedComplementarityProblem& problem,
                                     Eigen::VectorXd* z) = 0;
  // *r: the reactions, contact by contact [normal, tangent, tangent]. The summary is a
  // FrictionSolverSummary. Solvers that do not take the kind keep this default: InvalidInput.
  virtual const SolverSummary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);
  // The global form; by default the local form is solved (Reduce, then the Solve above).
  virtual const SolverSummary& Solve(const GlobalFrictionContactProblem& problem,
                                     Eigen::VectorXd* r);
  // The summary of the latest Solve (NotRun before the first).
  virtual const SolverSummary& summary() const = 0;
  // A copy of what this solver carries into its next Solve (SolverMemory), null when nothing
  // it carries changes a result; RestoreMemory(m) makes it carry that again (null: nothing).
  virtual std::shared_ptr<const SolverMemory> SaveMemory() const { return nullptr; }
  virtual void RestoreMemory(const SolverMemory* memory) { (void)memory; }
  // Threads the next solves may use (null: none; it must outlive them). Solvers that cannot
  // part their work ignore it; none gives another result with it.
  virtual void SetParallelRunner(const ParallelRunner* runner) { (void)runner; }
  // Whether SetParallelRunner's threads can serve its solves (nsgs-velocity, auto's first
  // attempt).
  virtual bool UsesParallelRunner() const { return false; }

 protected:
  ComplementaritySolver(std::string name, const SolverOptions& options)
      : name_(std::move(name)), options_(options) {}

 private:
  std::string name_;
  SolverOptions options_;
  SolverSummary not_taken_;
  FrictionContactProblem reduced_;  // the local form of the latest global problem
};

// The kinds a registry row takes, as bits (KindBit(ProblemKind::Linear) | ...).
using ProblemKinds = unsigned;
constexpr ProblemKinds KindBit(ProblemKind kind) { return 1u << static_cast<unsigned>(kind); }
constexpr ProblemKinds kLinearAndMixed = KindBit(ProblemKind::Linear) | KindBit(ProblemKind::Mixed);
constexpr ProblemKinds kLocalAndGlobalFriction =
    KindBit(ProblemKind::Friction) | KindBit(ProblemKind::GlobalFriction);
constexpr ProblemKinds kEveryKind = kLinearAndMixed | kLocalAndGlobalFriction;

// auto: AutoSolver for linear and mixed problems, FrictionAuto for frictional contact ones,
// behind one name (auto_solve.h, friction_auto.h).
class AutoSolvers {
 public:
  struct Options {
    AutoSolver::Options complementarity;
    FrictionAuto::Options friction;
    // Linear and mixed problems start from *z when it has the problem's size (else from the
    // problem's default start); frictional contact ones take friction.warm_start.
    bool warm_start = false;
    bool IsValid(std::string* why) const;
  };
  Options& mutable_options() { return options_; }
  const Options& options() const { return options_; }
  AutoSolver::Summary Solve(const LinearComplementarityProblem& problem, Eigen::VectorXd* z) const;
  AutoSolver::Summary Solve(const MixedComplementarityProblem& problem, Eigen::VectorXd* z) const;
  const FrictionAuto::Summary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r);
  const FrictionAuto::Summary& Solve(const GlobalFrictionContactProblem& problem,
                                     Eigen::VectorXd* r);
  void SetParallelRunner(const ParallelRunner* runner) { friction_.SetParallelRunner(runner); }

 private:
  Options options_;
  FrictionAuto friction_;
};

// A row whose solver the library does not build: an embedding project's or a test's class,
// made by `make` from the row and the settings every solver takes (RegisterSolver).
struct ExternalSolver {
  std::function<std::unique_ptr<ComplementaritySolver>(const std::string& name,
                                                       const SolverOptions& options)>
      make;
};

template <class... Solvers>
struct SolverClasses {
  using Configuration = std::variant<typename Solvers::Options..., ExternalSolver>;
};
// Every solver class behind a registry row, in one list.
using RegisteredSolverClasses =
    SolverClasses<LemkeSolver, ProjectedGaussSeidel, FischerBurmeisterNewton, JosephyNewton,
                  AutoSolvers, NonsmoothGaussSeidel, FrictionNewton, FrictionProximalPoint,
                  VelocityGaussSeidel, ConvexNewton>;
// What a registry row runs: the Options of one solver class, holding that class's defaults and
// the settings that make the row what its name says (fb-newton-dense: always dense LU;
// fc-proximal-fb: proximal steps solved on the Fischer-Burmeister function). CreateSolver puts
// SolverOptions on top of them. A row's solver reports the name its options stand for, so what
// a row runs can be read back from its summaries.
using SolverConfiguration = RegisteredSolverClasses::Configuration;

// One row of the registry.
struct SolverEntry {
  std::string name;
  std::string description;  // one line, for usage texts and docs/solvers.md
  ProblemKinds kinds = 0;   // the kinds it takes (KindBit)
  // The kinds for which it is in the default comparison lists (compare, the demo).
  ProblemKinds compared = 0;
  // Needs M_ii > 0 on every row (PGS): problems with free rows of zero diagonal are not its.
  bool needs_positive_diagonal = false;
  SolverConfiguration configuration;
  // Solves the convex contact model of the frictional contact problems it takes
  // (convex_newton.h), not their Coulomb cones: its error is that model's. Such a row is for
  // the explicit stepper's convex model; the cone model and `auto` do not take it.
  bool convex_model = false;
  bool Takes(ProblemKind kind) const { return (kinds & KindBit(kind)) != 0; }
  bool Compared(ProblemKind kind) const { return (compared & KindBit(kind)) != 0; }
};

// The table, in the order comparison tables list the solvers: the library's rows, then those
// registered at run time.
const std::deque<SolverEntry>& SolverRegistry();
// Adds a row after the others: a configuration of a library class (e.g. NonsmoothGaussSeidel
// with another relaxation) or an ExternalSolver. From then on CreateSolver, the name lists and
// the default comparisons (for the kinds in `compared`) include it, in this process. Throws
// InputError for a name already taken or not of the form [a-z0-9][a-z0-9.-]* (no "-cold" end:
// that suffix names a cold start), no kinds, compared kinds it does not take, or an
// ExternalSolver without `make`. Not thread-safe: register before solving.
void RegisterSolver(SolverEntry entry);
// Removes a row RegisterSolver added (false if there is none of that name); solvers created
// from it live on. Pointers from FindSolver are invalid afterwards.
bool UnregisterSolver(const std::string& name);
// The row of that name, or nullptr.
const SolverEntry* FindSolver(const std::string& name);
// The kinds' names, "linear, mixed, ...", for messages and docs.
std::string KindNames(ProblemKinds kinds);
// The registry as a Markdown table (name, kinds, description): docs/solvers.md and
// `ncpkit solvers` print it.
std::string SolverTableMarkdown();
// The names that take `kind`, in table order: those that solve its problems, or with
// convex_model those that solve the convex contact model of its frictional contact problems
// (SolverEntry::convex_model; IsSolverName and CreateSolver take both).
std::vector<std::string> SolverNames(ProblemKind kind, bool convex_model = false);
bool IsSolverName(const std::string& name, ProblemKind kind);
// "a, b, c" of SolverNames(kind), for messages and usage texts.
std::string SolverNameList(ProblemKind kind);

// Throws InputError for a name that does not take `kind` (see the contract above) or for
// invalid options.
std::unique_ptr<ComplementaritySolver> CreateSolver(const std::string& name, ProblemKind kind,
                                                    const SolverOptions& options);

// A solver variant as steppers and the command line name it: "<solver>[-cold]" or
// "<model>/<solver>[-cold]" (a stepper's problem model and the solver for its problems);
// "-cold": no warm start from the previous step.
struct SolverVariant {
  std::string model;  // empty when the variant names none
  std::string solver;
  bool cold = false;
  std::string ToString() const;
};

// Splits a variant by the grammar above; throws InputError if it is empty or malformed (an
// empty model or solver). Whether the names exist is for the caller's tables to say.
SolverVariant ParseSolverVariant(const std::string& text);
// The same without throwing: false, with *why, for a malformed variant.
bool SplitSolverVariant(const std::string& text, SolverVariant* variant, std::string* why);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_REGISTRY_SOLVER_REGISTRY_H_
