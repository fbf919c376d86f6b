// Every MLCP file of ../shared/data/mlcp/: solved by at least one solver to natural residual
// 1e-9, with the expected failures of each solver listed by name and reason.
#include <dirent.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "readers/siconos_reader.h"
#include "solvers/registry/solver_registry.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

using testing::SharedData;

const std::string kPgsZeroDiagonal = "PGS needs a positive diagonal; M has a zero diagonal entry";
const std::string kDiodeRay =
    "Lemke ray-terminates: the free block is singular and M is not copositive-plus (FB Newton "
    "solves it)";
const std::string kBuckFirstStall =
    "FB Newton stalls near 7e-8 at this degenerate switching point (Lemke solves it)";

// Expected failures by file and solver. Every other (file, solver) pair must converge.
const std::map<std::string, std::map<std::string, std::string>>& ExpectedMlcpFailures() {
  static const std::map<std::string, std::map<std::string, std::string>> failures = {
      {"Buck2_mlcp",
       {{"pgs", kPgsZeroDiagonal}, {"minmap-newton", "min-map Newton stalls near 1e-4"}}},
      {"BuckFirstStep_mlcp",
       {{"pgs", kPgsZeroDiagonal},
        {"fb-newton", kBuckFirstStall},
        {"fb-newton-dense", kBuckFirstStall},
        {"penalized-fb", kBuckFirstStall}}},
      {"PD_mlcp", {{"lemke", kDiodeRay}, {"pgs", kPgsZeroDiagonal}}},
      {"RCD_mlcp", {{"pgs", kPgsZeroDiagonal}}},
      {"RLCD_mlcp", {{"pgs", kPgsZeroDiagonal}}},
      {"deudeu_mlcp", {}},
      {"diodeBridge20_mlcp", {{"lemke", kDiodeRay}, {"pgs", kPgsZeroDiagonal}}},
      {"diodeBridge_mlcp", {{"lemke", kDiodeRay}, {"pgs", kPgsZeroDiagonal}}},
      {"m2n1_mlcp", {}},
      {"relay2_mlcp", {{"pgs", kPgsZeroDiagonal}}},
  };
  return failures;
}

// Files no solver can take, with the reason.
const std::map<std::string, std::string> kRejected = {
    {"Rectangular_mlcp", "M is 3 x 2: ncpkit solves square MLCPs only"}};

TEST_CASE("every Siconos MLCP file is solved by at least one solver, or its failure named") {
  DIR* dir = opendir(SharedData("mlcp").c_str());
  REQUIRE(dir != nullptr);
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    const std::string file = entry->d_name;
    if (file.size() > 4 && file.substr(file.size() - 4) == ".dat") {
      names.push_back(file.substr(0, file.size() - 4));
    }
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  CHECK(names.size() == ExpectedMlcpFailures().size() + kRejected.size());
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string path = SharedData("mlcp/" + name + ".dat");
    if (kRejected.count(name)) {
      std::cout << "expected failure: every solver on " << name << ": rejected, "
                << kRejected.at(name) << "\n";
      CHECK_THROWS_AS(ReadSiconosMlcp(path), InputError);
      continue;
    }
    REQUIRE_MESSAGE(ExpectedMlcpFailures().count(name), "no expectation recorded for " << name);
    const LinearComplementarityProblem problem = ReadSiconosMlcp(path);
    int solved_by = 0;
    for (const std::string& solver : SolverNames(ProblemKind::Linear)) {
      CAPTURE(solver);
      SolverOptions options;
      options.tolerance = 1e-9;
      Eigen::VectorXd z;
      const SolverSummary summary =
          CreateSolver(solver, ProblemKind::Linear, options)->Solve(problem, &z);
      CAPTURE(summary.BriefReport());
      const auto& failures = ExpectedMlcpFailures().at(name);
      if (failures.count(solver)) {
        std::cout << "expected failure: " << solver << " on " << name << ": " << failures.at(solver)
                  << "\n";
        CHECK_FALSE(summary.IsSolved());
        continue;
      }
      CHECK(summary.IsSolved());
      CHECK(natural_residual(problem, z) <= 1e-9);
      solved_by += summary.IsSolved();
    }
    CHECK(solved_by >= 1);
  }
}

}  // namespace
}  // namespace ncpkit
