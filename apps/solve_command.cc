#include <Eigen/Dense>
#include <cstdio>

#include "apps/cli_options.h"
#include "apps/commands.h"
#include "apps/report.h"
#include "readers/siconos_reader.h"
#include "solvers/solver_registry.h"

namespace ncpkit {

std::string UsageText() {
  std::string solvers;
  for (const std::string& name : SolverNames(ProblemKind::Linear)) solvers += name + "|";
  const std::string mcp_solvers = SolverNameList(ProblemKind::Mixed);
  return "usage:\n"
         "  ncpkit                      run the built-in demo (paper scenes x solver variants)\n"
         "  ncpkit lcp-demo             bundled LCPs x LCP solvers\n"
         "  ncpkit simulate SCENE [--solver NAME] [--duration T] [--max-steps N] [--out traj.csv]\n"
         "                  [--json] [--quiet] [--html page.html]\n"
         "  ncpkit view SCENE TRAJ.csv --html page.html\n"
         "  ncpkit compare SCENE... [--solvers a,b,...] [--csv FILE] [--duration T] [--max-steps "
         "N]\n"
         "      SCENE: a JSON scene file (README, 'Scene files'); NAME: " +
         mcp_solvers +
         ",\n"
         "      or any with -cold (no warm start); quasistatic scenes: MODEL/SOLVER with MODEL\n"
         "      dqc (SOLVER as above), dlc, qp, qp-lcp (SOLVER one of solve's), e.g.\n"
         "      qp-lcp/lemke. simulate exits 1 if a step failed to solve. A run over 10^7 steps\n"
         "      needs --max-steps N. A run longer than a second shows its progress on stderr\n"
         "      (not with --quiet). --html writes a page that plays the run (shapes, contact\n"
         "      points and normals, solver statistics); view makes it from a --out CSV.\n"
         "  ncpkit solve FILE [--q QFILE] [--solver " +
         solvers +
         "all] [--tol T] [--max-iter N] [--json]\n"
         "                  [--lower LFILE] [--upper UFILE]\n"
         "      FILE: Siconos .dat LCP (or MLCP if the name contains 'mlcp'), or a Matrix\n"
         "      Market .mtx matrix with its q vector in QFILE and optional bounds (default\n"
         "      l = 0, u = inf; 'inf' and '-inf' allowed) in LFILE and UFILE.\n"
         "exit status: 0 all requested solvers converged, 1 some did not, 2 usage or input "
         "error\n"
         "(with --json, an error is also printed on stdout as {\"error\": ..., \"exit_status\": "
         "2})\n";
}

int RunSolveCommand(const std::vector<std::string>& args, std::ostream& out) {
  const CommandLine line =
      CommandLine::Parse(args, {"q", "lower", "upper", "solver", "tol", "max-iter"}, {"json"});
  if (line.positional.size() != 1) {
    throw UsageError("solve needs exactly one problem FILE\n" + UsageText());
  }
  const std::string solver = line.Value("solver", "lemke");
  std::vector<std::string> solvers;
  if (solver == "all") {
    solvers = SolverNames(ProblemKind::Linear);
  } else if (IsSolverName(solver, ProblemKind::Linear)) {
    solvers = {solver};
  } else {
    throw UsageError("unknown solver '" + solver + "'\n" + UsageText());
  }
  SolverOptions options;
  options.tolerance = line.PositiveDouble("tol", options.tolerance);
  options.max_iterations = line.PositiveInt("max-iter", 0);
  const bool json = line.Has("json");

  const LinearComplementarityProblem problem = ReadProblemFile(
      line.positional[0], line.Value("q", ""), line.Value("lower", ""), line.Value("upper", ""));
  std::vector<SolveRecord> records;
  bool all_converged = true;
  for (const std::string& name : solvers) {
    Eigen::VectorXd z;
    const std::unique_ptr<ComplementaritySolver> solver =
        CreateSolver(name, ProblemKind::Linear, options);
    const SolverSummary& summary = solver->Solve(problem, &z);
    const std::string full_report = summary.FullReport();
    SolveRecord record{problem.name, problem.size(), summary};
    all_converged = all_converged && record.summary.IsSolved();
    if (json) {
      out << ToJson(record) << "\n";
    } else if (solvers.size() == 1) {
      out << "problem           " << problem.name << " (n = " << problem.size() << ")\n"
          << full_report;
      if (problem.size() <= 20) {
        out << "z                ";
        for (int i = 0; i < z.size(); ++i) {
          char buffer[32];
          std::snprintf(buffer, sizeof(buffer), " %.10g", z[i]);
          out << buffer;
        }
        out << "\n";
      }
    }
    records.push_back(record);
  }
  if (!json && solvers.size() > 1) PrintTable(records, out);
  return all_converged ? 0 : 1;
}

}  // namespace ncpkit
