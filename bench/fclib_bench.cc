// Every shared FCLib problem with every ncpkit frictional contact solver, to FCLib error 1e-6;
// with Siconos numerics installed, the same problems through Siconos' fc3d_nsgs,
// fc3d_nonsmooth_Newton_AlartCurnier and fc3d_proximal at the same FCLib error, so that the
// ratios are measured in one run. Names: FCLib/<solver>/<problem>, SiconosFC3D/<solver>/<problem>.
// A run that does not reach the error is reported as an error of that benchmark (its time does
// not count in a performance profile); so is a Siconos run over the peer limits (peer_guard.h).
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixtures/fclib_problems.h"
#include "readers/fclib_reader.h"
#include "solvers/registry/solver_registry.h"
#ifdef NCPKIT_HAVE_SICONOS
#include "bench/peer_guard.h"
#include "bench/siconos_peer.h"
#endif

namespace ncpkit {
namespace {

constexpr double kFclibTolerance = 1e-6;

// The problem of a shared file, read once.
const FrictionContactProblem& Problem(const std::string& relative) {
  static std::map<std::string, FrictionContactProblem> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) {
    const std::string path = std::string(NCPKIT_SHARED_DIR) + "/data/fclib/" + relative;
    it = cache.emplace(relative, ReadFclibFile(path).problem).first;
  }
  return it->second;
}

void BM_Ncpkit(benchmark::State& state, const std::string& solver_name,
               const std::string& relative) {
  const FrictionContactProblem& problem = Problem(relative);
  SolverOptions options;
  options.tolerance = kFclibTolerance;
  const std::unique_ptr<ComplementaritySolver> solver =
      CreateSolver(solver_name, ProblemKind::Friction, options);
  Eigen::VectorXd r;
  const SolverSummary* summary = nullptr;
  for (auto _ : state) {
    r.resize(0);
    summary = &solver->Solve(problem, &r);
    benchmark::DoNotOptimize(r.data());
  }
  state.counters["contacts"] = problem.num_contacts();
  state.counters["iterations"] = summary->iterations;
  state.counters["fclib_error"] = FclibError(problem, r);
  if (!summary->IsSolved()) state.SkipWithError(("not solved: " + summary->message).c_str());
}

#ifdef NCPKIT_HAVE_SICONOS
using bench::SiconosFrictionSolver;

void BM_Siconos(benchmark::State& state, SiconosFrictionSolver solver,
                const std::string& relative) {
  const FrictionContactProblem& problem = Problem(relative);
  const int max_iterations = solver == SiconosFrictionSolver::Nsgs ? 100000 : 1000;
  // Siconos stops on its own error measure: tighten its tolerance (outside the timing) until
  // its answer reaches FCLib error 1e-6, and give up where it reports a failure. That search
  // runs first in a child process under the peer limits (peer_guard.h), then, once it is known
  // to end within them, again here, so that the timed runs start as warm as any other.
  Eigen::VectorXd r, u;
  const auto calibrate = [&]() {
    double tolerance = kFclibTolerance;
    for (; tolerance >= 1e-13; tolerance /= 10.0) {
      const bench::SiconosResult tried =
          bench::SiconosSolveFrictionContact(solver, problem.W_columns(), problem.q(), problem.mu(),
                                             tolerance, max_iterations, &r, &u);
      if (tried.info != 0 || FclibError(problem, r) <= kFclibTolerance) break;
    }
    return tolerance;
  };
  const bench::GuardedResult guarded = bench::RunGuarded(
      [&]() -> std::vector<double> { return {calibrate()}; }, bench::PeerLimits::FromEnvironment());
  if (!guarded.ok) {
    state.SkipWithError(guarded.why.c_str());
    return;
  }
  const double tolerance = calibrate();
  bench::SiconosResult result;
  for (auto _ : state) {
    result = bench::SiconosSolveFrictionContact(solver, problem.W_columns(), problem.q(),
                                                problem.mu(), tolerance, max_iterations, &r, &u);
  }
  state.counters["contacts"] = problem.num_contacts();
  state.counters["iterations"] = result.iterations;
  state.counters["fclib_error"] = FclibError(problem, r);
  state.counters["siconos_tolerance"] = tolerance;
  if (result.info != 0 || !(FclibError(problem, r) <= kFclibTolerance)) {
    state.SkipWithError("Siconos did not reach FCLib error 1e-6");
  }
}
#endif

// Registered at start-up: one benchmark per problem and solver.
const bool kFclibRegistered = [] {
  for (const SharedFclibProblem& shared : SharedFclibProblems()) {
    const std::string relative = shared.path;
    for (const std::string& solver : SolverNames(ProblemKind::Friction)) {
      benchmark::RegisterBenchmark(
          ("FCLib/" + solver + "/" + shared.name()).c_str(),
          [solver, relative](benchmark::State& state) { BM_Ncpkit(state, solver, relative); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
#ifdef NCPKIT_HAVE_SICONOS
    const std::pair<const char*, SiconosFrictionSolver> peers[] = {
        {"nsgs", SiconosFrictionSolver::Nsgs},
        {"nsn-ac", SiconosFrictionSolver::NewtonAlartCurnier},
        {"proximal", SiconosFrictionSolver::Proximal}};
    for (const auto& [name, solver] : peers) {
      const SiconosFrictionSolver kind = solver;
      benchmark::RegisterBenchmark(
          ("SiconosFC3D/" + std::string(name) + "/" + shared.name()).c_str(),
          [kind, relative](benchmark::State& state) { BM_Siconos(state, kind, relative); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
#endif
  }
  return true;
}();

}  // namespace
}  // namespace ncpkit
