// Lemke and PGS on dense SPD and sparse contact-like LCPs; with Siconos numerics installed,
// the same instances through Siconos' lcp_lexicolemke and lcp_pgs.
//
// Counters: natural_residual (ncpkit's common measure, computed for every solver's answer)
// and iterations (pivots or sweeps).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "fixtures/problem_generators.h"
#include "solvers/lcp/lemke.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/lcp/projected_gauss_seidel.h"
#include "solvers/mcp/semismooth_newton.h"
#include "solvers/sensitivity/linear_sensitivity.h"
#ifdef NCPKIT_HAVE_SICONOS
#include "bench/siconos_peer.h"
#endif

namespace ncpkit {
namespace {

enum class Family { DenseSpd, Contact };

// Instances are generated once per (family, n) and shared by every solver.
const LinearComplementarityProblem& Instance(Family family, int n) {
  static std::map<std::pair<int, int>, std::unique_ptr<LinearComplementarityProblem>> cache;
  auto& slot = cache[{static_cast<int>(family), n}];
  if (!slot) {
    slot = std::make_unique<LinearComplementarityProblem>(
        family == Family::DenseSpd ? RandomSpdLcp(n, 42) : ContactLikeLcp(n, 42));
  }
  return *slot;
}

constexpr double kTolerance = 1e-8;  // natural residual every solver must reach

template <Family kFamily>
void BM_Lemke(benchmark::State& state) {
  const LinearComplementarityProblem& problem = Instance(kFamily, static_cast<int>(state.range(0)));
  LemkeSolver lemke;
  Eigen::VectorXd z;
  LemkeSolver::Summary summary;
  for (auto _ : state) {
    summary = lemke.Solve(problem, &z);
    benchmark::DoNotOptimize(z.data());
  }
  if (!summary.IsSolved()) state.SkipWithError(summary.message.c_str());
  state.counters["natural_residual"] = summary.natural_residual;
  state.counters["iterations"] = summary.iterations;
}

template <Family kFamily>
void BM_Pgs(benchmark::State& state) {
  const LinearComplementarityProblem& problem = Instance(kFamily, static_cast<int>(state.range(0)));
  ProjectedGaussSeidel::Options options;
  options.tolerance = kTolerance;
  options.max_sweeps = 100000;
  ProjectedGaussSeidel pgs(options);
  Eigen::VectorXd z;
  ProjectedGaussSeidel::Summary summary;
  for (auto _ : state) {
    summary = pgs.Solve(problem, &z);
    benchmark::DoNotOptimize(z.data());
  }
  if (!summary.IsSolved()) state.SkipWithError(summary.message.c_str());
  state.counters["natural_residual"] = summary.natural_residual;
  state.counters["iterations"] = summary.iterations;
}

template <Family kFamily, FischerBurmeisterNewton::LinearSolver kLinearSolver>
void BM_FbNewton(benchmark::State& state) {
  const LinearComplementarityProblem& problem = Instance(kFamily, static_cast<int>(state.range(0)));
  FischerBurmeisterNewton::Options options;
  options.tolerance = 1e-10;
  options.linear_solver = kLinearSolver;
  FischerBurmeisterNewton newton(options);
  const LinearMcp mcp(problem);
  Eigen::VectorXd z;
  FischerBurmeisterNewton::Summary summary;
  for (auto _ : state) {
    z.resize(0);  // cold start every time
    summary = newton.Solve(mcp, &z);
    benchmark::DoNotOptimize(z.data());
  }
  if (!summary.IsSolved()) state.SkipWithError(summary.message.c_str());
  state.counters["natural_residual"] = summary.natural_residual;
  state.counters["iterations"] = summary.iterations;
}

// The backward pass of a solve: the sensitivity at the solution (its active set and the
// factorization of the free rows) and one vector-Jacobian product, against FBNewtonKLU/contact's
// forward solve of the same instance (docs/derivatives.md).
void BM_LinearSensitivity(benchmark::State& state) {
  const LinearComplementarityProblem& problem =
      Instance(Family::Contact, static_cast<int>(state.range(0)));
  FischerBurmeisterNewton::Options options;
  options.tolerance = 1e-10;
  FischerBurmeisterNewton newton(options);
  const LinearMcp mcp(problem);
  Eigen::VectorXd z;
  const FischerBurmeisterNewton::Summary summary = newton.Solve(mcp, &z);
  if (!summary.IsSolved()) {
    state.SkipWithError(summary.message.c_str());
    return;
  }
  const Eigen::VectorXd g = Eigen::VectorXd::Ones(problem.size());
  for (auto _ : state) {
    const LinearSensitivity sensitivity(problem, z);
    const LinearSensitivity::Gradient gradient = sensitivity.Vjp(g);
    benchmark::DoNotOptimize(gradient.q.data());
  }
  state.counters["free"] = static_cast<double>(
      std::count_if(z.data(), z.data() + z.size(), [](double x) { return x > 0.0; }));
}
BENCHMARK(BM_LinearSensitivity)
    ->Name("LinearSensitivity/contact")
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_TEMPLATE(BM_FbNewton, Family::Contact, FischerBurmeisterNewton::LinearSolver::SparseKlu)
    ->Name("FBNewtonKLU/contact")
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_FbNewton, Family::Contact, FischerBurmeisterNewton::LinearSolver::Dense)
    ->Name("FBNewtonDense/contact")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_FbNewton, Family::Contact, FischerBurmeisterNewton::LinearSolver::SparseKlu)
    ->Name("FBNewtonKLU/contact_small")
    ->Arg(10)
    ->Arg(30)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_FbNewton, Family::DenseSpd, FischerBurmeisterNewton::LinearSolver::Dense)
    ->Name("FBNewtonDense/dense_spd")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_TEMPLATE(BM_Lemke, Family::DenseSpd)
    ->Name("Lemke/dense_spd")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Pgs, Family::DenseSpd)
    ->Name("PGS/dense_spd")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Lemke, Family::Contact)
    ->Name("Lemke/contact")
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Pgs, Family::Contact)
    ->Name("PGS/contact")
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);

#ifdef NCPKIT_HAVE_SICONOS
using bench::SiconosLcpSolver;

template <Family kFamily, SiconosLcpSolver kSolver>
void BM_Siconos(benchmark::State& state) {
  const LinearComplementarityProblem& problem = Instance(kFamily, static_cast<int>(state.range(0)));
  const Eigen::MatrixXd M = problem.dense_matrix();
  Eigen::VectorXd z;
  // Siconos measures its own relative error; tighten its tolerance (outside the timing) until
  // its answer reaches the same natural residual as ours.
  const double target = kSolver == SiconosLcpSolver::NewtonFB ? 1e-10 : kTolerance;
  double tolerance = target;
  if (kSolver != SiconosLcpSolver::LexicoLemke) {
    for (int k = 0; k < 8; ++k) {
      bench::SiconosSolveLcp(kSolver, M, problem.q(), tolerance, 1000000, &z);
      if (natural_residual(problem, z) <= target) break;
      tolerance /= 10;
    }
  }
  bench::SiconosResult result;
  for (auto _ : state) {
    result = bench::SiconosSolveLcp(kSolver, M, problem.q(), tolerance, 1000000, &z);
    benchmark::DoNotOptimize(z.data());
  }
  const double residual = natural_residual(problem, z);
  if (!(residual <= target)) {
    state.SkipWithError("Siconos did not reach the tolerance");
  }
  state.counters["natural_residual"] = residual;
  state.counters["iterations"] = result.iterations;
}

BENCHMARK_TEMPLATE(BM_Siconos, Family::DenseSpd, SiconosLcpSolver::LexicoLemke)
    ->Name("SiconosLexicoLemke/dense_spd")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Siconos, Family::DenseSpd, SiconosLcpSolver::Pgs)
    ->Name("SiconosPGS/dense_spd")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Siconos, Family::Contact, SiconosLcpSolver::LexicoLemke)
    ->Name("SiconosLexicoLemke/contact")
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Siconos, Family::Contact, SiconosLcpSolver::Pgs)
    ->Name("SiconosPGS/contact")
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Siconos, Family::Contact, SiconosLcpSolver::NewtonFB)
    ->Name("SiconosNewtonFB/contact")
    ->Arg(10)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
#endif

}  // namespace
}  // namespace ncpkit

BENCHMARK_MAIN();
