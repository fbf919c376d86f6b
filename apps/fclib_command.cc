// ncpkit fclib: every frictional contact problem of the given files and folders with every
// chosen solver, as a table, a CSV and a Dolan-Moré performance profile.
#include <Eigen/Dense>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/performance_profile.h"
#include "apps/report.h"
#include "readers/fclib_reader.h"
#include "readers/siconos_reader.h"
#include "solvers/base/input_error.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

// The problem files: each argument a file, or a folder searched (recursively) for *.hdf5.
std::vector<std::string> ProblemFiles(const std::vector<std::string>& arguments) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (size_t k = 0; k < arguments.size(); ++k) {
    const std::string& argument = arguments[k];
    std::error_code error;
    if (fs::is_directory(argument, error)) {
      std::vector<std::string> found;
      for (fs::recursive_directory_iterator it(argument, error), end; !error && it != end;
           it.increment(error)) {
        if (it->is_regular_file(error) && it->path().extension() == ".hdf5") {
          found.push_back(it->path().string());
        }
      }
      if (error) throw InputError(argument, 0, "", "cannot be listed: " + error.message());
      std::sort(found.begin(), found.end());
      if (found.empty()) throw InputError(argument, 0, "", "holds no .hdf5 file");
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(argument);
    }
  }
  return files;
}

FrictionContactProblem ReadProblem(const std::string& path) {
  if (IsHdf5File(path)) return ReadFclibFile(path).problem;
  return ReadSiconosFrictionContact(path);
}

struct Row {
  std::string problem;
  int contacts = 0;
  std::string solver, status, message;
  bool solved = false;
  int iterations = 0;
  double fclib_error = 0.0, siconos_error = 0.0, seconds = 0.0;
};

void PrintRows(const std::vector<Row>& rows, std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof(line), "%-44s %8s  %-14s %-15s %8s %11s %11s\n", "problem", "contacts",
                "solver", "status", "iters", "fclib error", "time ms");
  out << line;
  for (const Row& r : rows) {
    std::snprintf(line, sizeof(line), "%-44s %8d  %-14s %-15s %8d %11.2e %11.3f\n",
                  r.problem.c_str(), r.contacts, r.solver.c_str(), r.status.c_str(), r.iterations,
                  r.fclib_error, 1e3 * r.seconds);
    out << line;
  }
}

void WriteCsv(const std::vector<Row>& rows, const std::string& path) {
  std::ofstream csv(path);
  if (!csv) throw InputError(path, 0, "--csv", "cannot be written");
  csv << "problem,contacts,solver,status,solved,iterations,fclib_error,siconos_error,time\n";
  for (const Row& r : rows) {
    char numbers[160];
    std::snprintf(numbers, sizeof(numbers), "%d,%.6e,%.6e,%.6e", r.iterations, r.fclib_error,
                  r.siconos_error, r.seconds);
    csv << r.problem << "," << r.contacts << "," << r.solver << "," << r.status << ","
        << (r.solved ? "true" : "false") << "," << numbers << "\n";
  }
  CloseOrThrow(&csv, path);
}

}  // namespace

int RunFclibCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line =
      CommandLine::Parse(args, {"solvers", "tol", "time-limit", "csv", "profile"}, {"json"});
  if (line.positional.empty()) {
    throw UsageError("fclib needs at least one problem file or folder\n" + UsageText());
  }
  std::vector<std::string> solvers = SplitList(line.Value("solvers", ""));
  if (solvers.empty()) solvers = SolverNames(ProblemKind::Friction);
  for (const std::string& solver : solvers) {
    if (!IsSolverName(solver, ProblemKind::Friction)) {
      throw UsageError("unknown frictional contact solver '" + solver + "' (expected one of " +
                       SolverNameList(ProblemKind::Friction) + ")\n" + UsageText());
    }
  }
  SolverOptions options;
  options.tolerance = line.PositiveDouble("tol", 1e-6);
  options.time_limit_seconds = line.PositiveDouble("time-limit", 0.0);
  const bool json = line.Has("json");
  const std::vector<std::string> files = ProblemFiles(line.positional);
  // Every file is read before any solve, so that a bad file stops the run at once.
  std::vector<FrictionContactProblem> problems;
  for (const std::string& file : files) problems.push_back(ReadProblem(file));

  std::vector<Row> rows;
  std::vector<ProfileResult> results;
  bool every_problem_solved = true;
  for (const FrictionContactProblem& problem : problems) {
    bool solved = false;
    for (const std::string& name : solvers) {
      const std::unique_ptr<ComplementaritySolver> solver =
          CreateSolver(name, ProblemKind::Friction, options);
      Eigen::VectorXd r;
      const SolverSummary& summary = solver->Solve(problem, &r);
      Row row;
      row.problem = problem.name;
      row.contacts = problem.num_contacts();
      row.solver = name;
      row.status = ToString(summary.status);
      row.message = summary.message;
      row.solved = summary.IsSolved();
      row.iterations = summary.iterations;
      row.fclib_error = summary.natural_residual;
      row.seconds = summary.wall_time_seconds;
      if (const auto* friction = dynamic_cast<const FrictionSolverSummary*>(&summary)) {
        row.siconos_error = friction->siconos_error;
      }
      solved = solved || row.solved;
      if (json) {
        SolveRecord record{problem.name, problem.size(), summary, row.siconos_error};
        out << ToJson(record) << "\n";
      }
      rows.push_back(row);
      results.push_back({row.problem, row.solver, row.seconds, row.solved});
    }
    every_problem_solved = every_problem_solved && solved;
  }
  if (!json) {
    PrintRows(rows, out);
    std::map<std::string, int> solved_count;
    for (const Row& r : rows) solved_count[r.solver] += r.solved;
    out << "\nsolved (FCLib error <= " << options.tolerance << ") of " << problems.size()
        << " problems:";
    for (const std::string& name : solvers) out << "  " << name << " " << solved_count[name];
    out << "\n";
    for (const std::string& name : solvers) {
      if (FindSolver(name)->convex_model) {
        out << name << ": the error is the convex contact model's (docs/fclib.md), not the "
            << "Coulomb problem's; it refuses a W that is not symmetric\n";
      }
    }
  }
  if (line.Has("csv")) WriteCsv(rows, line.Value("csv", ""));
  if (line.Has("profile")) {
    const std::string path = line.Value("profile", "");
    std::ofstream svg(path);
    if (!svg) throw InputError(path, 0, "--profile", "cannot be written");
    char title[128];
    std::snprintf(title, sizeof(title), "performance profile: wall time, FCLib error <= %g",
                  options.tolerance);
    svg << PerformanceProfileSvg(ComputePerformanceProfile(results), title);
    CloseOrThrow(&svg, path);
  }
  return every_problem_solved ? 0 : 1;
}

}  // namespace ncpkit
