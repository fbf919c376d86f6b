#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <sstream>
#include <vector>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/report.h"
#include "readers/fclib_reader.h"
#include "readers/siconos_reader.h"
#include "solvers/base/input_error.h"
#include "solvers/registry/solver_registry.h"
#include "solvers/sensitivity/friction_sensitivity.h"
#include "solvers/sensitivity/linear_sensitivity.h"

namespace ncpkit {
namespace {

// One line a registry row: name, kinds, description.
std::string SolverLines() {
  std::string lines;
  for (const SolverEntry& e : SolverRegistry()) {
    std::string name = "  " + e.name;
    name.resize(std::max<size_t>(name.size() + 1, 18), ' ');
    lines += name + "[" + KindNames(e.kinds) + "] " + e.description + "\n";
  }
  return lines;
}

}  // namespace

int RunSolversCommand(const std::vector<std::string>& args, std::ostream& out) {
  if (!args.empty()) throw UsageError("solvers takes no arguments\n" + UsageText());
  out << SolverTableMarkdown();
  return 0;
}

std::string UsageText() {
  std::string solvers;
  for (const std::string& name : SolverNames(ProblemKind::Linear)) solvers += name + "|";
  const std::string mcp_solvers = SolverNameList(ProblemKind::Mixed);
  const std::string friction_solvers = SolverNameList(ProblemKind::Friction);
  return "usage:\n"
         "  ncpkit                      run the built-in demo (paper scenes x solver variants)\n"
         "  ncpkit lcp-demo             bundled LCPs x LCP solvers\n"
         "  ncpkit simulate SCENE [--solver NAME] [--duration T] [--max-steps N] [--out traj.csv]\n"
         "                  [--json] [--quiet] [--html page.html] [--threads N]\n"
         "                  [--save-problems DIR] [--gradient COLUMN [--wrt a,b,...]]\n"
         "  ncpkit view SCENE TRAJ.csv --html page.html\n"
         "  ncpkit mjcf SCENE [--out model.xml]   the scene as a MuJoCo MJCF model\n"
         "  ncpkit compare SCENE... [--solvers a,b,...] [--csv FILE] [--duration T] [--max-steps "
         "N]\n"
         "                  [--threads N]\n"
         "      SCENE: a JSON scene file (README, 'Scene files') or a MuJoCo MJCF model\n"
         "      (.xml: free bodies and fixed geoms, docs/steppers.md 'MJCF files'); NAME: " +
         mcp_solvers +
         ",\n"
         "      or any with -cold (no warm start); quasistatic scenes: MODEL/SOLVER with MODEL\n"
         "      dqc (SOLVER as above), dlc, qp, qp-lcp (SOLVER one of solve's), e.g.\n"
         "      qp-lcp/lemke; explicit scenes (\"stepper\": \"explicit\"): cone/SOLVER with a\n"
         "      frictional contact solver or nsgs-velocity (cone/nsgs-velocity), pyramid/SOLVER\n"
         "      or relaxed/SOLVER with one of solve's (pyramid/lemke, relaxed/pgs; no\n"
         "      pyramid/pgs), convex/convex-newton (the convex contact model), or soft\n"
         "      (the scene's \"soft\" spring-damper). simulate exits 1\n"
         "      if a step failed to solve. A run over 10^7 steps needs --max-steps N. A run\n"
         "      longer than a second shows its progress on stderr\n"
         "      (not with --quiet). --html writes a page that plays the run (shapes, contact\n"
         "      points and normals, solver statistics); view makes it from a --out CSV.\n"
         "      --threads N solves each step's islands on N threads (the trajectory is the\n"
         "      same for any N). --save-problems DIR writes every island problem of an\n"
         "      explicit cone or convex scene as an FCLib file (DIR/<scene>-<step>-<island>-\n"
         "      <pass>.hdf5, global form, its solution included) for `ncpkit fclib DIR`.\n"
         "      --gradient cube.x prints the gradient of that state column after the last\n"
         "      step with respect to --wrt (default all: mu, <body>.mass, <body>.velocity,\n"
         "      ...; explicit scenes of every model, implicit scenes, quasistatic\n"
         "      scenes of the qp, qp-lcp and dlc models).\n"
         "  ncpkit solve FILE [--q QFILE] [--solver " +
         solvers +
         "all] [--tol T] [--max-iter N] [--json]\n"
         "                  [--lower LFILE] [--upper UFILE] [--solution OUT] [--kind lcp|fc3d]\n"
         "                  [--time-limit S] [--sensitivity q|M|lower|upper (or q|W|mu)] [--seed "
         "N]\n"
         "      FILE: Siconos .dat LCP (or MLCP if the name contains 'mlcp'), or a Matrix\n"
         "      Market .mtx matrix with its q vector in QFILE and optional bounds (default\n"
         "      l = 0, u = inf; 'inf' and '-inf' allowed) in LFILE and UFILE; or a 3D\n"
         "      frictional contact problem: an FCLib .hdf5 file, or a Siconos FC3D .dat file\n"
         "      (its name contains 'fc3d', or --kind fc3d), solved with " +
         friction_solvers +
         "\n"
         "      (default auto, --tol 1e-8 on the FCLib error). --solution writes the\n"
         "      solution, one number a line in problem order (z; or r, contact by contact,\n"
         "      [normal, tangent, tangent]). --sensitivity adds the Jacobian of z with\n"
         "      respect to q, M (a column per stored entry), lower or upper (frictional\n"
         "      contact: of r with respect to q, W or mu) to the report of each solver\n"
         "      that converged. --seed N seeds the random order of nsgs-shuffled.\n"
         "  ncpkit fclib DIR_OR_FILE... [--solvers a,b] [--tol 1e-6] [--time-limit S] [--csv F]\n"
         "                  [--profile F.svg] [--json]\n"
         "      every frictional contact problem (.hdf5 files of the folders, or the files\n"
         "      named) with every chosen solver (default all): a table (status, iterations,\n"
         "      FCLib error, time), a CSV, and the Dolan-More performance profile as SVG.\n"
         "      Exit 0 when each problem was solved by at least one solver, else 1.\n"
         "  ncpkit solvers              the solver registry as a Markdown table\n"
         "  ncpkit campaign run FILE --db results.sqlite [--workers N] [--scheduler tcp://H:P]\n"
         "                  [--rerun crash,timeout] [--mix] [--quiet] [--dry-run]\n"
         "  ncpkit campaign report results.sqlite -o DIR\n"
         "      every case of a campaign file (TOML) x solvers x parameter grid, each run\n"
         "      in its own process with its limits, kept in SQLite, resumable; then its\n"
         "      report (docs/campaigns.md)\n"
         "  ncpkit version [--json]     the version and the commit it was built from\n"
         "  ncpkit help                 this text (also --help or -h after any command)\n"
         "solvers (problem kinds they take):\n" +
         SolverLines() +
         "exit status: 0 all requested solvers converged, 1 some did not, 2 usage or input "
         "error\n"
         "(with --json, an error is also printed on stdout as {\"error\": ..., \"exit_status\": "
         "2})\n";
}

namespace {

// Frictional contact files: FCLib HDF5, or Siconos FC3D text when the name says so or --kind
// fc3d is given.
bool IsFrictionFile(const std::string& path, const std::string& kind) {
  if (kind == "fc3d") return true;
  if (!kind.empty()) return false;
  if (IsHdf5File(path)) return true;
  std::string name = path.substr(path.find_last_of('/') + 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.find("fc3d") != std::string::npos;
}

FrictionContactProblem ReadFrictionFile(const std::string& path) {
  if (IsHdf5File(path)) return ReadFclibFile(path).problem;
  return ReadSiconosFrictionContact(path);
}

// The solver names of --solver for problems of `kind`: one, or all of the kind's.
std::vector<std::string> RequestedSolvers(const std::string& solver, ProblemKind kind) {
  if (solver == "all") return SolverNames(kind);
  if (IsSolverName(solver, kind)) return {solver};
  throw UsageError("unknown solver '" + solver + "' for " + ToString(kind) +
                   " problems (expected one of " + SolverNameList(kind) + ", or all)\n" +
                   UsageText());
}

// --solution FILE: one number a line, in problem order, exactly (17 significant digits).
void WriteSolution(const std::string& path, const Eigen::VectorXd& x) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) throw InputError(path, 0, "--solution", "cannot be written");
  bool ok = true;
  for (Eigen::Index i = 0; i < x.size() && ok; ++i) ok = std::fprintf(file, "%.17g\n", x[i]) > 0;
  ok = (std::fclose(file) == 0) && ok;
  if (!ok) throw InputError(path, 0, "--solution", "could not be written completely");
}

void PrintSmallVector(const char* label, const Eigen::VectorXd& x, std::ostream& out) {
  if (x.size() > 20) return;
  out << label;
  for (int i = 0; i < x.size(); ++i) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), " %.10g", x[i]);
    out << buffer;
  }
  out << "\n";
}

// A finite number with the digits that read back to it (17 significant).
std::string ExactNumber(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", x);
  return buffer;
}

// --sensitivity INPUT as JSON members (docs/derivatives.md): the input, the Jacobian's size and
// rows, the degenerate indices (contacts for frictional contact problems); for a matrix input,
// the (row, column) of the matrix entry each column belongs to.
std::string SensitivityJson(const std::string& input, const Eigen::MatrixXd& jacobian,
                            const std::vector<int>& degenerate, bool least_squares,
                            const Eigen::SparseMatrix<double>* matrix) {
  std::ostringstream os;
  os << ", \"sensitivity\": {\"input\": " << JsonString(input) << ", \"rows\": " << jacobian.rows()
     << ", \"cols\": " << jacobian.cols() << ", \"jacobian\": [";
  for (Eigen::Index i = 0; i < jacobian.rows(); ++i) {
    os << (i ? ", [" : "[");
    for (Eigen::Index j = 0; j < jacobian.cols(); ++j)
      os << (j ? ", " : "") << ExactNumber(jacobian(i, j));
    os << "]";
  }
  os << "], \"degenerate\": [";
  for (size_t k = 0; k < degenerate.size(); ++k) os << (k ? ", " : "") << degenerate[k];
  os << "], \"least_squares\": " << (least_squares ? "true" : "false");
  if (matrix != nullptr) {
    os << ", \"entries\": [";
    bool first = true;
    for (int j = 0; j < matrix->outerSize(); ++j)
      for (Eigen::SparseMatrix<double>::InnerIterator it(*matrix, j); it; ++it, first = false)
        os << (first ? "[" : ", [") << it.row() << ", " << j << "]";
    os << "]";
  }
  os << "}";
  return os.str();
}

std::string SensitivityJson(const LinearComplementarityProblem& problem, const Eigen::VectorXd& z,
                            const std::string& input) {
  const LinearSensitivity::Input which = input == "q"       ? LinearSensitivity::Input::q
                                         : input == "M"     ? LinearSensitivity::Input::M
                                         : input == "lower" ? LinearSensitivity::Input::lower
                                                            : LinearSensitivity::Input::upper;
  const LinearSensitivity sensitivity(problem, z);
  return SensitivityJson(
      input, sensitivity.Jacobian(which), sensitivity.degenerate(),
      sensitivity.box().least_squares(),
      which == LinearSensitivity::Input::M ? &problem.sparse_columns() : nullptr);
}

std::string SensitivityJson(const FrictionContactProblem& problem, const Eigen::VectorXd& r,
                            const std::string& input) {
  const FrictionSensitivity::Input which = input == "q"   ? FrictionSensitivity::Input::q
                                           : input == "W" ? FrictionSensitivity::Input::W
                                                          : FrictionSensitivity::Input::mu;
  const FrictionSensitivity sensitivity(problem, r);
  return SensitivityJson(input, sensitivity.Jacobian(which), sensitivity.degenerate(),
                         sensitivity.least_squares(),
                         which == FrictionSensitivity::Input::W ? &problem.W_columns() : nullptr);
}

// Runs each solver on the problem; prints a full report (one solver), a table or JSON lines.
template <class Problem>
int SolveWithEach(const Problem& problem, ProblemKind kind, const std::vector<std::string>& solvers,
                  const SolverOptions& options, const CommandLine& line, std::ostream& out) {
  const bool json = line.Has("json");
  const std::string solution_path = line.Value("solution", "");
  std::vector<SolveRecord> records;
  bool all_converged = true;
  Eigen::VectorXd best;
  double best_residual = std::numeric_limits<double>::infinity();
  for (const std::string& name : solvers) {
    Eigen::VectorXd x;
    const std::unique_ptr<ComplementaritySolver> solver = CreateSolver(name, kind, options);
    const SolverSummary& summary = solver->Solve(problem, &x);
    SolveRecord record{problem.name, problem.size(), summary};
    if (const auto* friction = dynamic_cast<const FrictionSolverSummary*>(&summary)) {
      record.siconos_error = friction->siconos_error;
    }
    const std::string sensitivity = line.Value("sensitivity", "");
    const std::string extra_json = sensitivity.empty() || !summary.IsSolved()
                                       ? std::string()
                                       : SensitivityJson(problem, x, sensitivity);
    all_converged = all_converged && summary.IsSolved();
    if (x.size() == problem.size() && !(summary.natural_residual >= best_residual)) {
      best_residual = summary.natural_residual;
      best = x;
    }
    if (json) {
      std::string json = ToJson(record);
      json.insert(json.size() - 1, extra_json);  // before the closing brace
      out << json << "\n";
    } else if (solvers.size() == 1) {
      out << "problem           " << problem.name << " (n = " << problem.size() << ")\n"
          << summary.FullReport();
      PrintSmallVector(kind == ProblemKind::Friction ? "r                " : "z                ", x,
                       out);
      // extra_json is ', "sensitivity": {...}': the object alone.
      if (!extra_json.empty())
        out << "sensitivity      " << extra_json.substr(extra_json.find('{')) << "\n";
    }
    records.push_back(record);
  }
  if (!json && solvers.size() > 1) PrintTable(records, out);
  // The best point of the solvers run (the smallest residual).
  if (!solution_path.empty()) WriteSolution(solution_path, best);
  return all_converged ? 0 : 1;
}

}  // namespace

int RunSolveCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line =
      CommandLine::Parse(args,
                         {"q", "lower", "upper", "solver", "tol", "max-iter", "solution", "kind",
                          "time-limit", "sensitivity", "seed"},
                         {"json"});
  if (line.positional.size() != 1) {
    throw UsageError("solve needs exactly one problem FILE\n" + UsageText());
  }
  const std::string kind = line.Value("kind", "");
  if (!kind.empty() && kind != "fc3d" && kind != "lcp") {
    throw UsageError("--kind must be lcp or fc3d, not '" + kind + "'\n" + UsageText());
  }
  const std::string& path = line.positional[0];
  const bool friction = IsFrictionFile(path, kind);
  const ProblemKind problem_kind = friction ? ProblemKind::Friction : ProblemKind::Linear;
  const std::vector<std::string> solvers =
      RequestedSolvers(line.Value("solver", friction ? "auto" : "lemke"), problem_kind);
  SolverOptions options;
  options.tolerance = line.PositiveDouble("tol", friction ? 1e-8 : options.tolerance);
  options.max_iterations = line.PositiveInt("max-iter", 0);
  options.time_limit_seconds = line.PositiveDouble("time-limit", 0.0);
  options.seed = static_cast<unsigned>(line.PositiveInt("seed", 0));
  const std::string sensitivity = line.Value("sensitivity", "");
  const bool known_input = friction
                               ? (sensitivity == "q" || sensitivity == "W" || sensitivity == "mu")
                               : (sensitivity == "q" || sensitivity == "M" ||
                                  sensitivity == "lower" || sensitivity == "upper");
  if (!sensitivity.empty() && !known_input) {
    throw UsageError("--sensitivity must be " +
                     std::string(friction ? "q, W or mu (a frictional contact problem)"
                                          : "q, M, lower or upper") +
                     ", not '" + sensitivity + "'\n" + UsageText());
  }
  if (friction) {
    if (line.Has("q") || line.Has("lower") || line.Has("upper")) {
      throw UsageError("--q, --lower and --upper are for Matrix Market problems\n" + UsageText());
    }
    return SolveWithEach(ReadFrictionFile(path), problem_kind, solvers, options, line, out);
  }
  const LinearComplementarityProblem problem =
      ReadProblemFile(path, line.Value("q", ""), line.Value("lower", ""), line.Value("upper", ""));
  return SolveWithEach(problem, problem_kind, solvers, options, line, out);
}

}  // namespace ncpkit
