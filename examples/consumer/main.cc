// A program outside the ncpkit tree: the README's builder example, built against an installed
// ncpkit (find_package(ncpkit) in CMakeLists.txt, or `pkg-config --cflags --libs ncpkit`).
// The block below is the README's example (tests/readme_example_test.cc checks it); the tests
// also build and run this program (path_example).
// BEGIN README EXAMPLE
#include <iostream>

#include "solvers/mcp/auto_solve.h"
#include "solvers/mcp/problem_builder.h"
#include "solvers/mcp/semismooth_newton.h"
using namespace ncpkit;

struct PathExample {  // PATH's nonlinear example: F(x) with 0 <= x <= 10
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::pow;  // for Jets, ceres::pow (argument-dependent lookup)
    const T* v = x[0];
    r[0] = -v[2] * v[2] - v[3] + T(2);
    r[1] = v[2] * v[2] * v[2] - T(2) * v[3] * v[3] + T(2);
    r[2] = pow(v[0], 5.0) - v[1] + T(2) * v[2] - T(2) * v[3] - T(2);
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

int main() { return SolvePathExample() == 4 ? 0 : 1; }
