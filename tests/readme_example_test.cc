// The README's library example, compiled and run; a second test keeps the README in sync.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

// BEGIN README EXAMPLE
#include <iostream>

#include "solvers/auto_solve.h"
#include "solvers/problem_builder.h"
#include "solvers/semismooth_newton.h"
using namespace ncpkit;

struct PathExample {  // PATH's nonlinear example: F(x) with 0 <= x <= 10
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* v = x[0];
    r[0] = -v[2] * v[2] - v[3] + T(2);
    r[1] = v[2] * v[2] * v[2] - T(2) * v[3] * v[3] + T(2);
    r[2] = v[0] * v[0] * v[0] * v[0] * v[0] - v[1] + T(2) * v[2] - T(2) * v[3] - T(2);
    r[3] = v[0] + T(2) * v[1] * v[1] * v[1] - T(2) * v[2] + T(4) * v[3] - T(6);
    return true;
  }
};

int SolvePathExample() {  // returns how many solvers converged
  ProblemBuilder problem;
  const int x = problem.AddVariableBlock(4, 0.0, 10.0, /*start=*/1.0);
  problem.AddResidualBlock<4, 4>(PathExample{}, /*paired with=*/x, /*reads=*/{x});
  auto report = [](const SolverSummary& summary, const Eigen::VectorXd& z) {
    std::cout << summary.BriefReport() << "\n  z = " << z.transpose() << "\n";
    return summary.IsSolved() ? 1 : 0;
  };
  int solved = 0;
  for (auto f : {NcpFunction::FischerBurmeister, NcpFunction::MinMap,
                 NcpFunction::PenalizedFischerBurmeister}) {
    FischerBurmeisterNewton::Options options;
    options.ncp_function = f;
    Eigen::VectorXd z = problem.start();
    solved += report(FischerBurmeisterNewton(options).Solve(problem, &z), z);
  }
  Eigen::VectorXd z = problem.start();
  return solved + report(AutoSolver().Solve(problem, &z), z);
}
// END README EXAMPLE

namespace ncpkit {
namespace {

TEST_CASE("the README example solves the PATH nonlinear example with every solver") {
  CHECK(SolvePathExample() == 4);
}

std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t a = text.find(begin);
  const size_t b = text.find(end, a);
  if (a == std::string::npos || b == std::string::npos) return "";
  return text.substr(a + begin.size(), b - a - begin.size());
}

TEST_CASE("the README shows exactly this example") {
  std::ifstream readme(NCPKIT_SOURCE_DIR "/README.md");
  std::ifstream self(NCPKIT_SOURCE_DIR "/tests/readme_example_test.cc");
  std::stringstream r, s;
  r << readme.rdbuf();
  s << self.rdbuf();
  const std::string code = Between(s.str(), "// BEGIN README EXAMPLE\n", "// END README EXAMPLE");
  REQUIRE(!code.empty());
  CHECK(r.str().find("```cpp\n" + code + "```") != std::string::npos);
  // Under 40 lines.
  CHECK(std::count(code.begin(), code.end(), '\n') < 40);
}

}  // namespace
}  // namespace ncpkit
