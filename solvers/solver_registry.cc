#include "solvers/solver_registry.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "solvers/auto_solve.h"
#include "solvers/friction_auto.h"
#include "solvers/friction_newton.h"
#include "solvers/input_error.h"
#include "solvers/josephy_newton.h"
#include "solvers/lemke.h"
#include "solvers/nonsmooth_gauss_seidel.h"
#include "solvers/projected_gauss_seidel.h"
#include "solvers/semismooth_newton.h"
#include "solvers/velocity_gauss_seidel.h"

namespace ncpkit {
namespace {

// The summary a solver gives for a problem kind it does not take.
template <class Summary>
const Summary& NotTaken(const std::string& name, ProblemKind kind, double tolerance,
                        Summary* summary) {
  *summary = Summary();
  summary->solver = name;
  summary->tolerance = tolerance;
  summary->status = Status::InvalidInput;
  summary->message = name + " does not take " + ToString(kind) + " problems";
  return *summary;
}

void Configure(const SolverOptions& options, LemkeSolver* lemke) {
  LemkeSolver::Options& o = lemke->mutable_options();
  o.tolerance = options.tolerance;
  o.max_pivots = options.max_iterations;
  o.warm_start = options.warm_start;
}

void Configure(const SolverOptions& options, ProjectedGaussSeidel* pgs) {
  ProjectedGaussSeidel::Options& o = pgs->mutable_options();
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_sweeps = options.max_iterations;
  o.warm_start = options.warm_start;
}

// Lemke and PGS: LCPs and box MLCPs only.
template <class Solver>
class LinearOnlyEntry : public ComplementaritySolver {
 public:
  LinearOnlyEntry(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    Configure(options, &solver_);
  }
  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    summary_ = solver_.Solve(problem, z);
    return summary_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return NotTaken(name(), ProblemKind::Mixed, options().tolerance, &summary_);
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  Solver solver_;
  typename Solver::Summary summary_;
};

// fb-newton, fb-newton-dense, penalized-fb and minmap-newton: one Newton object, kept. All but
// fb-newton-dense choose the factorization by size and pattern (LinearSolver::Auto: KLU, dense
// LU for small or dense Newton matrices).
class NewtonEntry : public ComplementaritySolver {
 public:
  NewtonEntry(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    FischerBurmeisterNewton::Options& o = newton_.mutable_options();
    o.tolerance = options.tolerance;
    if (options.max_iterations > 0) o.max_iterations = options.max_iterations;
    o.linear_solver = name == "fb-newton-dense" ? FischerBurmeisterNewton::LinearSolver::Dense
                                                : FischerBurmeisterNewton::LinearSolver::Auto;
    if (name == "penalized-fb") o.ncp_function = NcpFunction::PenalizedFischerBurmeister;
    if (name == "minmap-newton") o.ncp_function = NcpFunction::MinMap;
    o.record_history = options.record_history;
    o.project_onto_bounds = options.project_onto_bounds;
    o.start_acceptance = options.start_acceptance;
    o.equilibration = options.equilibrate ? FischerBurmeisterNewton::Equilibration::Auto
                                          : FischerBurmeisterNewton::Equilibration::Off;
  }
  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    return Solve(LinearMcp(problem), z);
  }
  const SolverSummary& Solve(const MixedComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    if (!options().warm_start) z->resize(0);
    summary_ = newton_.Solve(problem, z);
    summary_.solver = name();
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  FischerBurmeisterNewton newton_;
  FischerBurmeisterNewton::Summary summary_;
};

void Configure(const SolverOptions& options, JosephyNewton* josephy) {
  JosephyNewton::Options& o = josephy->mutable_options();
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_iterations = options.max_iterations;
  o.warm_start = true;  // from *z when it has the size (emptied below when not warm)
}

void Configure(const SolverOptions& options, AutoSolver* auto_solver) {
  AutoSolver::Options& o = auto_solver->mutable_options();
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_iterations = options.max_iterations;
}

// josephy-newton and auto: both problem kinds, started from *z when warm.
template <class Solver>
class BothKindsEntry : public ComplementaritySolver {
 public:
  BothKindsEntry(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    Configure(options, &solver_);
  }
  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    if (!options().warm_start) z->resize(0);
    summary_ = solver_.Solve(problem, z);
    return summary_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    if (!options().warm_start) z->resize(0);
    summary_ = solver_.Solve(problem, z);
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  Solver solver_;
  typename Solver::Summary summary_;
};

void Configure(const std::string& name, const SolverOptions& options, NonsmoothGaussSeidel* nsgs) {
  NonsmoothGaussSeidel::Options& o = nsgs->mutable_options();
  if (name == "nsgs-shuffled") o.ordering = NonsmoothGaussSeidel::Ordering::Shuffled;
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_sweeps = options.max_iterations;
  o.warm_start = options.warm_start;
  o.time_limit_seconds = options.time_limit_seconds;
}

void Configure(const std::string& name, const SolverOptions& options, FrictionNewton* newton) {
  FrictionNewton::Options& o = newton->mutable_options();
  if (name == "fc-newton-fb") o.function = FrictionNewton::Function::FischerBurmeister;
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_iterations = options.max_iterations;
  o.warm_start = options.warm_start;
  o.time_limit_seconds = options.time_limit_seconds;
}

void Configure(const std::string&, const SolverOptions& options, FrictionProximalPoint* proximal) {
  FrictionProximalPoint::Options& o = proximal->mutable_options();
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_outer_iterations = options.max_iterations;
  o.warm_start = options.warm_start;
  o.time_limit_seconds = options.time_limit_seconds;
}

// Frictional contact solvers: that kind only.
template <class Solver>
class FrictionOnlyEntry : public ComplementaritySolver {
 public:
  FrictionOnlyEntry(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    Configure(name, options, &solver_);
  }
  const SolverSummary& Solve(const LinearComplementarityProblem&, Eigen::VectorXd*) override {
    return NotTaken(name(), ProblemKind::Linear, options().tolerance, &summary_);
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return NotTaken(name(), ProblemKind::Mixed, options().tolerance, &summary_);
  }
  const SolverSummary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r) override {
    summary_ = solver_.Solve(problem, r);
    summary_.solver = name();
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  Solver solver_;
  typename Solver::Summary summary_;
};

void Configure(const SolverOptions& options, VelocityGaussSeidel* nsgs) {
  VelocityGaussSeidel::Options& o = nsgs->mutable_options();
  o.tolerance = options.tolerance;
  if (options.max_iterations > 0) o.max_sweeps = options.max_iterations;
  o.warm_start = options.warm_start;
  o.time_limit_seconds = options.time_limit_seconds;
}

// Solvers of the global form alone (they keep the velocities v, which the local form has not).
template <class Solver>
class GlobalOnlyEntry : public ComplementaritySolver {
 public:
  GlobalOnlyEntry(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    Configure(options, &solver_);
  }
  const SolverSummary& Solve(const LinearComplementarityProblem&, Eigen::VectorXd*) override {
    return NotTaken(name(), ProblemKind::Linear, options().tolerance, &summary_);
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return NotTaken(name(), ProblemKind::Mixed, options().tolerance, &summary_);
  }
  const SolverSummary& Solve(const FrictionContactProblem&, Eigen::VectorXd*) override {
    return NotTaken(name(), ProblemKind::Friction, options().tolerance, &summary_);
  }
  const SolverSummary& Solve(const GlobalFrictionContactProblem& problem,
                             Eigen::VectorXd* r) override {
    summary_ = solver_.Solve(problem, r);
    summary_.solver = name();
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  Solver solver_;
  typename Solver::Summary summary_;
};

// auto: the LCP / MCP sequence (auto_solve.h) and the frictional contact one (friction_auto.h).
class AutoEntry : public BothKindsEntry<AutoSolver> {
 public:
  AutoEntry(const std::string& name, const SolverOptions& options)
      : BothKindsEntry<AutoSolver>(name, options) {
    FrictionAuto::Options& o = friction_.mutable_options();
    o.tolerance = options.tolerance;
    o.warm_start = options.warm_start;
    o.time_limit_seconds = options.time_limit_seconds;
  }
  using BothKindsEntry<AutoSolver>::Solve;
  const SolverSummary& Solve(const FrictionContactProblem& problem, Eigen::VectorXd* r) override {
    friction_summary_ = friction_.Solve(problem, r);
    last_ = &friction_summary_;
    return friction_summary_;
  }
  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    last_ = &BothKindsEntry<AutoSolver>::Solve(problem, z);
    return *last_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    last_ = &BothKindsEntry<AutoSolver>::Solve(problem, z);
    return *last_;
  }
  const SolverSummary& summary() const override {
    return last_ ? *last_ : BothKindsEntry<AutoSolver>::summary();
  }

 private:
  FrictionAuto friction_;
  FrictionAuto::Summary friction_summary_;
  const SolverSummary* last_ = nullptr;
};

template <class Entry>
std::unique_ptr<ComplementaritySolver> Create(const std::string& name,
                                              const SolverOptions& options) {
  return std::make_unique<Entry>(name, options);
}

}  // namespace

const char* ToString(ProblemKind kind) {
  switch (kind) {
    case ProblemKind::Linear:
      return "linear (LCP / MLCP)";
    case ProblemKind::Mixed:
      return "mixed (MCP)";
    case ProblemKind::Friction:
      return "frictional contact (FC3D)";
    case ProblemKind::GlobalFriction:
      return "global frictional contact (FC3D, M and H)";
  }
  return "?";
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
  }
  if (why) *why = os.str();
  return os.str().empty();
}

const std::vector<SolverEntry>& SolverRegistry() {
  // name, description, takes linear, takes mixed, compared for linear, compared for mixed,
  // needs a positive diagonal, factory.
  static const std::vector<SolverEntry> kSolvers = {
      {"lemke", "Lemke's complementary pivoting, lexicographic (lemke.h)", true, false, true, false,
       false, &Create<LinearOnlyEntry<LemkeSolver>>},
      {"pgs", "projected Gauss-Seidel / SOR (projected_gauss_seidel.h)", true, false, true, false,
       true, &Create<LinearOnlyEntry<ProjectedGaussSeidel>>},
      {"fb-newton", "Fischer-Burmeister semismooth Newton, KLU or dense LU (semismooth_newton.h)",
       true, true, true, true, false, &Create<NewtonEntry>},
      {"fb-newton-dense", "the same, always dense LU", true, true, false, true, false,
       &Create<NewtonEntry>},
      {"penalized-fb", "penalized Fischer-Burmeister semismooth Newton", true, true, false, true,
       false, &Create<NewtonEntry>},
      {"minmap-newton", "min-map semismooth Newton", true, true, false, true, false,
       &Create<NewtonEntry>},
      {"josephy-newton", "Josephy-Newton, Lemke on each linearization (josephy_newton.h)", true,
       true, false, false, false, &Create<BothKindsEntry<JosephyNewton>>},
      {"auto",
       "a robust sequence of the above, reporting which solved it (auto_solve.h, "
       "friction_auto.h)",
       true, true, false, false, false, &Create<AutoEntry>, true, false},
      {"nsgs", "block Gauss-Seidel over contacts, exact local solves (nonsmooth_gauss_seidel.h)",
       false, false, false, false, false, &Create<FrictionOnlyEntry<NonsmoothGaussSeidel>>, true,
       true},
      {"nsgs-shuffled", "the same, contacts in a new random order every sweep", false, false, false,
       false, false, &Create<FrictionOnlyEntry<NonsmoothGaussSeidel>>, true, true},
      {"fc-newton", "semismooth Newton on the Alart-Curnier function, KLU (friction_newton.h)",
       false, false, false, false, false, &Create<FrictionOnlyEntry<FrictionNewton>>, true, true},
      {"fc-newton-fb",
       "semismooth Newton on the Fischer-Burmeister function of the second-order cone "
       "(friction_newton.h)",
       false, false, false, false, false, &Create<FrictionOnlyEntry<FrictionNewton>>, true, true},
      {"fc-proximal", "proximal-point steps, each solved by fc-newton (friction_newton.h)", false,
       false, false, false, false, &Create<FrictionOnlyEntry<FrictionProximalPoint>>, true, true},
      {"fc-proximal-fb", "proximal-point steps, each solved by fc-newton-fb", false, false, false,
       false, false, &Create<FrictionOnlyEntry<FrictionProximalPoint>>, true, true},
      {"nsgs-velocity",
       "block Gauss-Seidel over contacts keeping the velocities, W never formed; global form "
       "only (velocity_gauss_seidel.h)",
       false, false, false, false, false, &Create<GlobalOnlyEntry<VelocityGaussSeidel>>, false,
       false, true},
  };
  return kSolvers;
}

std::vector<std::string> SolverNames(ProblemKind kind) {
  std::vector<std::string> names;
  for (const SolverEntry& entry : SolverRegistry()) {
    if (entry.Takes(kind)) names.push_back(entry.name);
  }
  return names;
}

bool IsSolverName(const std::string& name, ProblemKind kind) {
  const auto& table = SolverRegistry();
  return std::any_of(table.begin(), table.end(), [&](const SolverEntry& entry) {
    return entry.name == name && entry.Takes(kind);
  });
}

std::string SolverNameList(ProblemKind kind) {
  std::string list;
  for (const std::string& name : SolverNames(kind)) list += (list.empty() ? "" : ", ") + name;
  return list;
}

std::unique_ptr<ComplementaritySolver> CreateSolver(const std::string& name, ProblemKind kind,
                                                    const SolverOptions& options) {
  for (const SolverEntry& entry : SolverRegistry()) {
    if (entry.name != name) continue;
    if (!entry.Takes(kind)) {
      throw InputError("solver '" + name + "' does not take " + ToString(kind) +
                       " problems (those that do: " + SolverNameList(kind) + ")");
    }
    RequireValidOptions(options, "solver " + name);
    return entry.create(name, options);
  }
  throw InputError("unknown solver '" + name + "' (expected one of " + SolverNameList(kind) + ")");
}

std::string SolverVariant::ToString() const {
  return (model.empty() ? "" : model + "/") + solver + (cold ? "-cold" : "");
}

SolverVariant ParseSolverVariant(const std::string& text) {
  static const std::string kCold = "-cold";
  SolverVariant variant;
  std::string rest = text;
  if (rest.size() > kCold.size() &&
      rest.compare(rest.size() - kCold.size(), kCold.size(), kCold) == 0) {
    variant.cold = true;
    rest.resize(rest.size() - kCold.size());
  }
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    variant.model = rest.substr(0, slash);
    rest = rest.substr(slash + 1);
    if (variant.model.empty()) throw InputError("solver variant '" + text + "' names no model");
  }
  if (rest.empty() || rest.find('/') != std::string::npos) {
    throw InputError("malformed solver variant '" + text +
                     "' (expected <solver>[-cold] or <model>/<solver>[-cold])");
  }
  variant.solver = rest;
  return variant;
}

}  // namespace ncpkit
