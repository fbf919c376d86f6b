// Every LCP file of ../shared/data/lcp/ with every solver; expectations from lcp/CASES.md.
#include <dirent.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixtures/problem_generators.h"
#include "readers/siconos_reader.h"
#include "solvers/lcp/lemke.h"
#include "solvers/registry/solver_registry.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::SharedData;

struct Expectation {
  std::vector<double> solution;  // the unique solution, empty if not unique / not known exactly
  // Expected failures by solver, with the reason; a solver not listed must converge.
  std::map<std::string, std::string> expected_failures;
};

const std::string kZeroDiagonal = "PGS needs a positive diagonal; M has a zero diagonal entry";
const std::string kRay = "Lemke with covering vector e ray-terminates (CASES.md)";
const std::string kMinMapStall =
    "min-map Newton stalls at a non-solution stationary point of its merit (zero diagonal)";
const std::string kNoSolution = "the LCP has no solution (CASES.md)";
const std::string kJosephyRay =
    "Josephy-Newton: its linearization is the LCP itself, on which Lemke ray-terminates, and the "
    "proximal steps J + mu I stall at natural residual 1";
const std::string kNewtonStall =
    "bimatrix-game LCP: Newton stalls at a non-solution stationary point; auto solves it by "
    "Lemke";

const std::map<std::string, Expectation>& Cases() {
  static const std::map<std::string, Expectation> cases = {
      {"lcp_CPS_1", {{}, {}}},  // PSD singular, a segment of solutions
      {"lcp_CPS_2", {{0, 1, 3}, {{"pgs", kZeroDiagonal}}}},
      {"lcp_CPS_3",
       {{},
        {{"lemke", kRay + ": M is copositive but not copositive-plus, solutions exist"},
         {"pgs", kZeroDiagonal},
         {"josephy-newton", kJosephyRay}}}},
      {"lcp_CPS_4", {{2, 2, 2, 92}, {{"pgs", kZeroDiagonal}, {"minmap-newton", kMinMapStall}}}},
      {"lcp_CPS_4bis", {{3, 3, 0, 83}, {{"pgs", kZeroDiagonal}, {"minmap-newton", kMinMapStall}}}},
      {"lcp_CPS_5", {{}, {}}},  // (0, 1) plus the ray (t, 1 + t)
      {"lcp_Pang_isolated_sol", {{1, 0, 0}, {{"pgs", kZeroDiagonal}}}},
      {"lcp_Pang_isolated_sol_perturbed",
       {{},
        {{"lemke", kRay + ": " + kNoSolution},
         {"pgs", kZeroDiagonal},
         {"fb-newton", kNoSolution},
         {"fb-newton-dense", kNoSolution},
         {"penalized-fb", kNoSolution},
         {"minmap-newton", kNoSolution},
         {"josephy-newton", kNoSolution},
         {"auto", kNoSolution}}}},
      {"lcp_inf_sol_perturbed", {{1, 0, 1e-4}, {{"pgs", kZeroDiagonal}}}},
      {"lcp_deudeu", {{4.0 / 3.0, 7.0 / 3.0}, {}}},
      {"lcp_deudeu_block", {{4.0 / 3.0, 7.0 / 3.0}, {}}},
      {"lcp_ortiz", {{2.0 / 3.0, 0, 1.0 / 3.0, 0}, {}}},
      {"lcp_ortiz_block", {{2.0 / 3.0, 0, 1.0 / 3.0, 0}, {}}},
      {"lcp_trivial",
       {{1, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9}, {}}},
      {"lcp_trivial_block",
       {{1, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9}, {}}},
      {"lcp_enum_fails", {{}, {{"pgs", kZeroDiagonal}}}},
      {"lcp_exp_murty", {{0, 0, 0, 0, 0, 1}, {}}},
      {"lcp_exp_murty2", {{0, 0, 0, 0, 0, 64}, {}}},
      {"lcp_mmc", {{}, {}}},
      {"lcp_tobenna",
       {{},
        {{"pgs", kZeroDiagonal},
         {"fb-newton", kNewtonStall},
         {"fb-newton-dense", kNewtonStall},
         {"penalized-fb", kNewtonStall},
         {"minmap-newton", kNewtonStall}}}},
  };
  return cases;
}

std::vector<std::string> DatFiles(const std::string& folder) {
  std::vector<std::string> files;
  DIR* dir = opendir(folder.c_str());
  REQUIRE_MESSAGE(dir != nullptr, "cannot open " << folder);
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() > 4 && name.substr(name.size() - 4) == ".dat") files.push_back(name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("every Siconos LCP file with every solver matches CASES.md") {
  const std::vector<std::string> files = DatFiles(SharedData("lcp"));
  CHECK(files.size() == Cases().size());  // a new file must get an expectation
  int expected_failures = 0;
  for (const std::string& file : files) {
    const std::string name = file.substr(0, file.size() - 4);
    REQUIRE_MESSAGE(Cases().count(name), "no expectation recorded for " << file);
    const Expectation& expect = Cases().at(name);
    const LinearComplementarityProblem problem = ReadSiconosLcp(SharedData("lcp/" + file));
    for (const std::string& solver : SolverNames(ProblemKind::Linear)) {
      CAPTURE(file);
      CAPTURE(solver);
      SolverOptions options;
      options.tolerance = 1e-10;
      Eigen::VectorXd z;
      const SolverSummary summary =
          CreateSolver(solver, ProblemKind::Linear, options)->Solve(problem, &z);
      CAPTURE(summary.BriefReport());
      const auto failure = expect.expected_failures.find(solver);
      if (failure != expect.expected_failures.end()) {
        ++expected_failures;
        std::cout << "expected failure: " << solver << " on " << name << ": " << failure->second
                  << "\n";
        CHECK_FALSE(summary.IsSolved());
        continue;
      }
      REQUIRE(summary.IsSolved());
      CHECK(summary.natural_residual <= 1e-10);
      CHECK(natural_residual(problem, z) == summary.natural_residual);
      if (!expect.solution.empty()) {
        REQUIRE(z.size() == static_cast<int>(expect.solution.size()));
        for (int i = 0; i < z.size(); ++i) {
          CHECK(z[i] == doctest::Approx(expect.solution[i]).epsilon(1e-8));
        }
      }
    }
  }
  CHECK(expected_failures > 0);
}

TEST_CASE("auto solves lcp_tobenna, and says which path did") {
  Eigen::VectorXd z;
  const auto solver = CreateSolver("auto", ProblemKind::Linear, SolverOptions());
  const SolverSummary& summary =
      solver->Solve(ReadSiconosLcp(SharedData("lcp/lcp_tobenna.dat")), &z);
  const std::string report = summary.FullReport();
  CHECK(summary.IsSolved());
  CHECK(summary.natural_residual <= 1e-10);
  CHECK(summary.message == "solved by lemke");
  CHECK(report.find("fb-newton: failed") != std::string::npos);
}

TEST_CASE("Lemke ray termination is its own outcome") {
  LemkeSolver lemke;
  Eigen::VectorXd z;
  for (const char* file : {"lcp/lcp_Pang_isolated_sol_perturbed.dat", "lcp/lcp_CPS_3.dat"}) {
    const LemkeSolver::Summary summary = lemke.Solve(ReadSiconosLcp(SharedData(file)), &z);
    CAPTURE(file);
    CHECK(summary.status == Status::Failed);
    CHECK(summary.ray_termination);
    CHECK(summary.message.find("ray termination") != std::string::npos);
  }
  const LemkeSolver::Summary solved =
      lemke.Solve(ReadSiconosLcp(SharedData("lcp/lcp_CPS_2.dat")), &z);
  CHECK_FALSE(solved.ray_termination);
}

TEST_CASE("Lemke needs exactly 2^n pivots on Murty's example") {
  LemkeSolver lemke;
  Eigen::VectorXd z;
  const LemkeSolver::Summary file_summary =
      lemke.Solve(ReadSiconosLcp(SharedData("lcp/lcp_exp_murty2.dat")), &z);
  CHECK(file_summary.IsSolved());
  CHECK(file_summary.iterations == 64);
  for (int n : {6, 8, 10}) {
    CAPTURE(n);
    const LinearComplementarityProblem problem = MurtyLcp(n);
    const LemkeSolver::Summary summary = lemke.Solve(problem, &z);
    REQUIRE(summary.IsSolved());
    CHECK(summary.iterations == (1 << n));
    CHECK(z[n - 1] == doctest::Approx(std::ldexp(1.0, n)));
    CHECK(z.head(n - 1).cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("Murty's q = -e instance resolves its first-ratio tie lexicographically") {
  // All q_i tie at the first ratio test. The lexicographic rule (rows of [q, I]) makes the
  // last index leave, which is already the solution: 2 pivots. CASES.md reports 4 pivots for
  // its own tie-breaking; the solution (0, ..., 0, 1) is the same.
  LemkeSolver lemke;
  Eigen::VectorXd z;
  const LemkeSolver::Summary summary =
      lemke.Solve(ReadSiconosLcp(SharedData("lcp/lcp_exp_murty.dat")), &z);
  REQUIRE(summary.IsSolved());
  CHECK(summary.iterations == 2);
  CHECK(z[5] == doctest::Approx(1.0));
}

}  // namespace
}  // namespace ncpkit
