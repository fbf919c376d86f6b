// nsgs-velocity's sweeps on several threads (VelocityGaussSeidel::SetParallelRunner,
// solvers/friction/internal/sweep_parts.h): the one-thread result to the bit, and the threads
// are used.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "solvers/friction/velocity_gauss_seidel.h"
#include "solvers/registry/solver_registry.h"
#include "tests/solvers/friction_scenes.h"

namespace ncpkit {
namespace {

// Each part on a thread of its own, the calls counted.
class ThreadRunner : public ParallelRunner {
 public:
  explicit ThreadRunner(int parts) : parts_(parts) {}
  int parts() const override { return parts_; }
  void Run(const std::function<void(int part)>& task) const override {
    ++runs_;
    std::vector<std::thread> threads;
    for (int part = 1; part < parts_; ++part) threads.emplace_back(task, part);
    task(0);
    for (std::thread& thread : threads) thread.join();
  }
  int runs() const { return runs_; }

 private:
  int parts_;
  mutable int runs_ = 0;
};

bool SameBits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Solves `problem` with nsgs-velocity alone and on 2, 3 and 4 threads (at most `sweeps`
// sweeps, Options::anderson_memory `anderson`) and checks that the reactions and the summary's
// figures are the same to the bit.
void CheckSameOnThreads(const GlobalFrictionContactProblem& problem, int sweeps, int anderson = 0) {
  CAPTURE(sweeps);
  CAPTURE(anderson);
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-12;
  options.max_sweeps = sweeps;
  options.anderson_memory = anderson;
  Eigen::VectorXd one;
  const VelocityGaussSeidel::Summary alone = VelocityGaussSeidel(options).Solve(problem, &one);
  for (int parts : {2, 3, 4}) {
    CAPTURE(parts);
    ThreadRunner runner(parts);
    VelocityGaussSeidel solver(options);
    solver.SetParallelRunner(&runner);
    Eigen::VectorXd many;
    const VelocityGaussSeidel::Summary& threaded = solver.Solve(problem, &many);
    CHECK(SameBits(many, one));
    CHECK(threaded.iterations == alone.iterations);
    CHECK(threaded.natural_residual == alone.natural_residual);
    CHECK(threaded.status == alone.status);
    // Every check but the first few follows a run of sweeps on the threads.
    const bool large = problem.num_contacts() >= VelocityGaussSeidel::kParallelContacts;
    CHECK((runner.runs() > 0) == large);
  }
}

TEST_CASE("nsgs-velocity on threads: the same reactions as on one, to the bit") {
  // Random bodies: nearly every contact shares a body with contacts of every other part.
  for (unsigned seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    const GlobalFrictionContactProblem problem = test::Make(test::MakeScene(400, 60, 0.4, seed));
    for (int sweeps : {1, 7, 45}) CheckSameOnThreads(problem, sweeps);
    // Anderson's combinations between sweeps, each sweep on the threads alone.
    for (int sweeps : {7, 45}) CheckSameOnThreads(problem, sweeps, 5);
  }
  // Columns of two cubes: four-corner manifolds, solved as blocks in the first 30 sweeps.
  const GlobalFrictionContactProblem columns = test::CubeColumns(0, 40);
  REQUIRE(columns.num_contacts() == 320);
  for (int sweeps : {1, 12, 45}) CheckSameOnThreads(columns, sweeps);
  // Below kParallelContacts the sweeps stay on the caller's thread.
  CheckSameOnThreads(test::CubeColumns(0, 20), 12);
}

TEST_CASE("nsgs-velocity on threads: backward and forward sweeps where one order cycles") {
  // Forty spinning octagons cycle in one order: after the turn (Options::reverse_on_stall) the
  // sweeps alternate, which only the caller's thread runs.
  const GlobalFrictionContactProblem problem = test::SpinningOctagon(40);
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-10;
  options.max_sweeps = 400;
  Eigen::VectorXd r;
  const VelocityGaussSeidel::Summary summary = VelocityGaussSeidel(options).Solve(problem, &r);
  REQUIRE(summary.message.find("backward and forward sweeps") != std::string::npos);
  CheckSameOnThreads(problem, 400);
}

TEST_CASE("nsgs-velocity on threads: through the registry, alone and in auto") {
  // (auto's sweeps solve the columns, before its local-form sequence.)
  const GlobalFrictionContactProblem problem = test::CubeColumns(0, 40);
  for (const char* name : {"nsgs-velocity", "auto"}) {
    CAPTURE(name);
    SolverOptions options;
    options.tolerance = 1e-8;
    Eigen::VectorXd one, many;
    const auto alone = CreateSolver(name, ProblemKind::GlobalFriction, options);
    const double alone_error = alone->Solve(problem, &one).natural_residual;
    ThreadRunner runner(2);
    const auto threaded = CreateSolver(name, ProblemKind::GlobalFriction, options);
    threaded->SetParallelRunner(&runner);
    CHECK(alone_error <= 1e-8);
    CHECK(threaded->Solve(problem, &many).natural_residual == alone_error);
    CHECK(SameBits(many, one));
    CHECK(runner.runs() > 0);
  }
}

// ThreadRunner whose part 0 starts late, as a thread the machine does not run at once: 20 ms
// after part 1 has begun (a thread's start can itself take milliseconds on a loaded host or
// under the sanitizers, and part 1 must be the one that waits).
class LateRunner : public ParallelRunner {
 public:
  int parts() const override { return 2; }
  void Run(const std::function<void(int part)>& task) const override {
    ++runs_;
    std::atomic<bool> begun{false};
    std::thread other([&] {
      begun.store(true);
      task(1);
    });
    while (!begun.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    task(0);
    other.join();
  }
  int runs() const { return runs_; }

 private:
  mutable int runs_ = 0;
};

TEST_CASE("nsgs-velocity on threads: after a stalled wait, the next solves sweep alone") {
  const GlobalFrictionContactProblem problem = test::Make(test::MakeScene(400, 60, 0.4, 2));
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-12;
  options.max_sweeps = 1;  // one run of sweeps a solve
  Eigen::VectorXd one;
  VelocityGaussSeidel(options).Solve(problem, &one);
  LateRunner runner;
  VelocityGaussSeidel solver(options);
  solver.SetParallelRunner(&runner);
  const auto solve_checked = [&]() {
    Eigen::VectorXd many;
    solver.Solve(problem, &many);
    CHECK(SameBits(many, one));
  };
  // A solve waits on the late part, unless the scheduler kept part 1 off the cores until part 0
  // had finished (then nothing waited: seen with four test processes on two cores, and in most
  // solves on a host loaded beyond its cores). So the solves go on, at most ten, until one
  // sweeps alone (the runner not called); without the rule none does.
  int first_alone = -1;
  for (int solve = 0; solve < 10 && first_alone < 0; ++solve) {
    const int runs = runner.runs();
    solve_checked();
    if (runner.runs() == runs) first_alone = solve;
  }
  CHECK(first_alone >= 1);  // the first solve has no stall before it
  // The next solves sweep alone too.
  const int runs = runner.runs();
  for (int solve = 0; solve < 3; ++solve) solve_checked();
  CHECK(runner.runs() == runs);
}

TEST_CASE("nsgs-velocity on threads: only the solvers that use them say so") {
  // (The explicit stepper lends its threads to an island's solve only where they serve.)
  for (const std::string& name : SolverNames(ProblemKind::GlobalFriction)) {
    CAPTURE(name);
    const auto solver = CreateSolver(name, ProblemKind::GlobalFriction, SolverOptions());
    CHECK(solver->UsesParallelRunner() == (name == "nsgs-velocity" || name == "auto"));
  }
  CHECK_FALSE(CreateSolver("lemke", ProblemKind::Linear, SolverOptions())->UsesParallelRunner());
}

}  // namespace
}  // namespace ncpkit
