// Every FCLib problem of ../shared/data/fclib with every frictional contact solver, to FCLib
// error 1e-6: auto solves each one; every failure of a single solver is listed by name with the
// reason, and the best single solver solves at least 11 of the 12 (fc-proximal solves all).
#include "fixtures/fclib_problems.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "readers/fclib_reader.h"
#include "solvers/friction/friction_newton.h"
#include "solvers/friction/nonsmooth_gauss_seidel.h"
#include "solvers/registry/solver_registry.h"
#include "tests/allocation_counter.h"
#include "tests/test_support.h"

namespace ncpkit {
namespace {

constexpr double kTolerance = 1e-6;

const std::string kStackStall =
    "block Gauss-Seidel crawls on the stack's coupled, redundant contacts (1.8e-6 after 10000 "
    "sweeps, natural turned shuffled; 2.8e-6 shuffled throughout); fc-newton and fc-proximal "
    "solve it";
const std::string kRockPileNsgs =
    "W has rank 743 of 1389 (redundant contacts, mu = 1): Gauss-Seidel cycles near 1e-4 in the "
    "natural order; 10000 sweeps reach 6.2e-5 turned shuffled after the cycle, 9e-6 shuffled "
    "throughout";
const std::string kNewtonLineSearch =
    "the Alart-Curnier merit stops decreasing far from the solution (line search fails); "
    "fc-proximal solves it";

// Expected failures by file name and solver, with the reason; every other pair must converge.
const std::map<std::string, std::map<std::string, std::string>>& ExpectedFclibFailures() {
  static const std::map<std::string, std::map<std::string, std::string>> failures = {
      {"BoxesStack1-fclib_local_problem_test.hdf5",
       {{"nsgs", kStackStall},
        {"nsgs-shuffled", kStackStall},
        {"fc-proximal-fb",
         "its Fischer-Burmeister subproblems on the stack's redundant contacts need 116 proximal "
         "steps (1691 Newton iterations) to reach 9.7e-7; the default budget of 100 ends at "
         "1.4e-6"}}},
      {"Capsules-i101-404.hdf5", {{"fc-newton", kNewtonLineSearch}}},
      {"KaplasTower-i1061-4.hdf5",
       {{"fc-newton",
         "570 contacts that keep switching state: 200 Newton iterations end at 5.5e-3; NSGS and "
         "fc-proximal solve it"}}},
      {"RockPile_tob1.hdf5",
       {{"nsgs", kRockPileNsgs},
        {"nsgs-shuffled", kRockPileNsgs},
        {"nsgs-anderson",
         "its history restarts at nearly every sweep as the redundant contacts keep changing "
         "state: 3e-4 after 10000 sweeps"},
        {"fc-newton",
         "W has rank 743 of 1389: 200 Newton iterations among the redundant contacts' states end "
         "at 1.3e-2; fc-proximal solves it"},
        {"fc-newton-fb",
         "200 Newton iterations on the redundant contacts end at 2.6e-4; the proximal solvers "
         "solve it"}}},
  };
  return failures;
}

TEST_CASE("every shared FCLib problem: auto solves it, single-solver failures are named") {
  std::map<std::string, int> solved_by_solver;
  // Under the sanitizers, the problems of at most 60 contacts: every solver's code runs on them
  // (the sanitizers look for memory and undefined-behaviour errors, not results), and the
  // Release build's run checks all twelve.
  const bool sanitized = testing::SanitizedBuild();
  for (const SharedFclibProblem& shared : SharedFclibProblems()) {
    if (sanitized && shared.contacts > 60) continue;
    const FclibFile data = ReadFclibFile(testing::SharedData("fclib/" + shared.path));
    const FrictionContactProblem& problem = data.problem;
    CAPTURE(problem.name);
    const auto expected = ExpectedFclibFailures().find(problem.name);
    for (const std::string& solver : SolverNames(ProblemKind::Friction)) {
      CAPTURE(solver);
      SolverOptions options;
      options.tolerance = kTolerance;
      Eigen::VectorXd r;
      const std::unique_ptr<ComplementaritySolver> solver_object =
          CreateSolver(solver, ProblemKind::Friction, options);
      const SolverSummary& summary = solver_object->Solve(problem, &r);
      CAPTURE(summary.message);
      // The reported error is the FCLib error of the point returned.
      CHECK(summary.natural_residual == doctest::Approx(FclibError(problem, r)).epsilon(1e-9));
      if (expected != ExpectedFclibFailures().end() && expected->second.count(solver)) {
        std::cout << "expected failure: " << solver << " on " << problem.name << ": "
                  << expected->second.at(solver) << "\n";
        CHECK_FALSE(summary.IsSolved());
        continue;
      }
      CHECK(summary.IsSolved());
      CHECK(FclibError(problem, r) <= kTolerance);
      if (solver != "auto") solved_by_solver[solver] += summary.IsSolved();
    }
  }
  int best = 0;
  for (const auto& entry : solved_by_solver) best = std::max(best, entry.second);
  if (!sanitized) CHECK(best >= 11);
}

TEST_CASE("NSGS's rate window stops a crawling solve early; auto then goes to Newton") {
  const FclibFile stack = ReadFclibFile(
      testing::SharedData("fclib/BoxesStack/BoxesStack1-fclib_local_problem_test.hdf5"));
  NonsmoothGaussSeidel::Options options;
  options.tolerance = kTolerance;
  options.max_sweeps = 1000;
  options.rate_window = 50;
  NonsmoothGaussSeidel nsgs(options);
  Eigen::VectorXd r;
  const NonsmoothGaussSeidel::Summary& stalled = nsgs.Solve(stack.problem, &r);
  INFO(stalled.message);
  CHECK(stalled.status == Status::MaxIterations);
  CHECK(stalled.iterations < 1000);
  CHECK(stalled.iterations % 50 == 0);
  CHECK(stalled.message.find("stopped: at its rate over the last 50 sweeps it would need") !=
        std::string::npos);
  // Where NSGS converges at a good rate, the window changes nothing.
  const FclibFile confeti = ReadFclibFile(testing::SharedData("fclib/Confeti/Confeti-ex03.hdf5"));
  Eigen::VectorXd with_window, without_window;
  const int sweeps_with = nsgs.Solve(confeti.problem, &with_window).iterations;
  nsgs.mutable_options().rate_window = 0;
  const NonsmoothGaussSeidel::Summary& plain = nsgs.Solve(confeti.problem, &without_window);
  CHECK(plain.IsSolved());
  CHECK(sweeps_with == plain.iterations);
  CHECK(with_window == without_window);
  // auto: its accelerated NSGS stops, Newton is tried from its point (on this stack its line
  // search fails at once), and NSGS's remaining sweeps finish.
  SolverOptions auto_options;
  auto_options.tolerance = kTolerance;
  const std::unique_ptr<ComplementaritySolver> automatic =
      CreateSolver("auto", ProblemKind::Friction, auto_options);
  const SolverSummary& summary = automatic->Solve(stack.problem, &r);
  const std::string report = summary.FullReport();
  INFO(report);
  CHECK(summary.IsSolved());
  CHECK(report.find("path              nsgs-anderson: max_iterations") != std::string::npos);
  CHECK(report.find("stopped: at its rate") != std::string::npos);
  CHECK(report.find("; fc-newton-fb: ") != std::string::npos);
  CHECK(summary.iterations < 1000 + 50);
}

TEST_CASE("fc-proximal-fb stops when its subproblems keep failing at the largest regularization") {
  // Below the rounding of their FCLib errors the subproblems fail from points no better than
  // the best, sigma's factor at its cap. Before this stop, 1000 steps ended at the same errors
  // (Confeti-ex13-4contact 7.9e-13 after 1619 Newton iterations, Rover1040 7.3e-15 after 3300).
  // The stop comes at the problems' rounding floor (Confeti's best point 1.2e-12, where
  // fc-newton-fb alone ends at 8e-12 after its 200 iterations).
  for (const char* file : {"Confeti/Confeti-ex13-4contact.hdf5", "Rover/Rover1040.hdf5"}) {
    CAPTURE(file);
    const FrictionContactProblem problem =
        ReadFclibFile(testing::SharedData(std::string("fclib/") + file)).problem;
    FrictionProximalPoint proximal;
    proximal.mutable_options().function = FrictionNewton::Function::FischerBurmeister;
    proximal.mutable_options().tolerance = 1e-15;
    proximal.mutable_options().max_outer_iterations = 1000;
    Eigen::VectorXd r;
    const FrictionProximalPoint::Summary summary = proximal.Solve(problem, &r);
    INFO(summary.message);
    CHECK(summary.status == Status::MaxIterations);
    CHECK(summary.message.find("stopped: 10 subproblems in a row failed at the largest "
                               "regularization without improving the best point") !=
          std::string::npos);
    CHECK(std::stoi(summary.message.substr(summary.message.find(" after ") + 7)) < 100);
    CHECK(summary.natural_residual == FclibError(problem, r));
    CHECK(summary.natural_residual < 2e-12);
  }
}

TEST_CASE("fc-proximal-fb stops when neither its error nor its best moves in 100 steps") {
  // An island of the mixed-shape drop (tools/make_engine_scenes.py --mixed 6, step 31, saved by
  // simulate --save-problems): twelve contacts, W of rank 18 of 36, four contacts of one body on
  // the cone's boundary at slips of 1e-10 m/s. The subproblems are solved while the original
  // error stays near 1.3e-10; without the stop all 1000 steps would run.
  const FrictionContactProblem problem =
      ReadFclibFile(testing::TestData("fclib/mixed_drop_seed6_step31.hdf5")).problem;
  FrictionProximalPoint proximal;
  proximal.mutable_options().function = FrictionNewton::Function::FischerBurmeister;
  proximal.mutable_options().tolerance = 1e-10;
  proximal.mutable_options().max_outer_iterations = 1000;
  Eigen::VectorXd r;
  const FrictionProximalPoint::Summary summary = proximal.Solve(problem, &r);
  INFO(summary.message);
  CHECK(summary.status == Status::MaxIterations);
  CHECK(summary.message.find("stopped: neither the error nor the best error moved by 1 % of the "
                             "best in 100 proximal steps") != std::string::npos);
  CHECK(std::stoi(summary.message.substr(summary.message.find(" after ") + 7)) < 1000);
  CHECK(summary.natural_residual == FclibError(problem, r));
}

TEST_CASE("fc-newton-fb: the Jacobian's smoothing shrinks with the error near the solution") {
  // An island of the mixed-shape drop (tools/make_engine_scenes.py --mixed 7, step 87, saved by
  // simulate --save-problems): five contacts, mu = 0.8, W of rank 12 of 15, four sticking and
  // one sliding at the solution. With the smoothing held at 1e-6 of the scale the iteration
  // needed 186 iterations to reach 1e-11 (104 to 1e-10); it now takes 52.
  const FrictionContactProblem problem =
      ReadFclibFile(testing::TestData("fclib/mixed_drop_seed7_step87.hdf5")).problem;
  FrictionNewton newton;
  newton.mutable_options().function = FrictionNewton::Function::FischerBurmeister;
  newton.mutable_options().tolerance = 1e-11;
  newton.mutable_options().max_iterations = 100;
  Eigen::VectorXd r;
  const FrictionNewton::Summary& summary = newton.Solve(problem, &r);
  INFO(summary.message);
  CHECK(summary.IsSolved());
  CHECK(FclibError(problem, r) <= 1e-11);
}

TEST_CASE("nsgs-anderson: the sweeps' Anderson combination solves where plain sweeps crawl") {
  // BoxesStack1: plain sweeps end at 1.8e-6 after 10000 (shuffled once they stall);
  // Capsules-i125-1213 (Release only, 286 contacts): they converge, in 1239 sweeps.
  std::vector<std::string> files = {"BoxesStack/BoxesStack1-fclib_local_problem_test.hdf5"};
  if (!testing::SanitizedBuild()) files.push_back("Capsules/Capsules-i125-1213.hdf5");
  for (const std::string& file : files) {
    CAPTURE(file);
    const FrictionContactProblem problem =
        ReadFclibFile(testing::SharedData("fclib/" + file)).problem;
    std::map<int, int> sweeps;
    for (const int memory : {0, 1, 5}) {
      CAPTURE(memory);
      NonsmoothGaussSeidel::Options options;
      options.tolerance = kTolerance;
      options.anderson_memory = memory;
      NonsmoothGaussSeidel nsgs(options);
      Eigen::VectorXd r;
      const NonsmoothGaussSeidel::Summary& summary = nsgs.Solve(problem, &r);
      CAPTURE(summary.message);
      CHECK(summary.solver == (memory > 0 ? "nsgs-anderson" : "nsgs"));
      // The point returned is one of the sweeps' results: in the cones, its error the reported.
      for (int a = 0; a < problem.num_contacts(); ++a) {
        CHECK(r.segment<2>(3 * a + 1).norm() <= problem.mu()[a] * r[3 * a] * (1.0 + 1e-12));
      }
      CHECK(summary.natural_residual == doctest::Approx(FclibError(problem, r)).epsilon(1e-9));
      if (memory > 0) CHECK(summary.IsSolved());
      sweeps[memory] = summary.iterations;
    }
    // Memory 5 needs a quarter of the plain sweeps or fewer, memory 1 (a secant step) fewer.
    CHECK(4 * sweeps[5] <= sweeps[0]);
    CHECK(sweeps[1] < sweeps[0]);
  }
  // Out of range.
  NonsmoothGaussSeidel nsgs;
  const FrictionContactProblem problem =
      ReadFclibFile(testing::SharedData("fclib/Confeti/Confeti-ex03.hdf5")).problem;
  Eigen::VectorXd r;
  for (const int memory : {-1, 51}) {
    nsgs.mutable_options().anderson_memory = memory;
    const NonsmoothGaussSeidel::Summary& summary = nsgs.Solve(problem, &r);
    CHECK(summary.status == Status::InvalidInput);
    CHECK(summary.message.find("anderson_memory") != std::string::npos);
  }
}

TEST_CASE("nsgs shuffles its order where the natural order cycles") {
  // A cube turned 45 degrees about the vertical and spinning at 2 rad/s on a fixed cube of the
  // same size, mu = 0.5, h = 0.01 s, every vertex of the face patch a contact
  // (ExplicitContactGeometry with BoxPatch::kEveryVertex): eight contacts on an octagon, the first
  // step's problem (saved by simulate --save-problems). In natural order the sliding directions
  // chase each other round the octagon and the error stays at 1.37e-2 for 10^4 sweeps.
  const FrictionContactProblem problem =
      ReadFclibFile(testing::TestData("fclib/spinning_octagon.hdf5")).problem;
  REQUIRE(problem.num_contacts() == 8);
  const std::string turn = "; shuffled order from sweep ";
  for (const bool shuffle : {false, true}) {
    CAPTURE(shuffle);
    NonsmoothGaussSeidel::Options options;
    options.tolerance = 1e-8;
    options.max_sweeps = 2000;
    options.shuffle_on_stall = shuffle;
    NonsmoothGaussSeidel nsgs(options);
    Eigen::VectorXd r;
    const NonsmoothGaussSeidel::Summary& summary = nsgs.Solve(problem, &r);
    CAPTURE(summary.message);
    CHECK(summary.solver == "nsgs");
    CHECK(summary.natural_residual == FclibError(problem, r));
    const size_t at = summary.message.find(turn);
    if (shuffle) {
      CHECK(summary.IsSolved());
      REQUIRE(at != std::string::npos);
      // The turn comes kCycleSweeps after the last sweep that lowered the best error.
      const int turned = std::stoi(summary.message.substr(at + turn.size()));
      CHECK(turned > NonsmoothGaussSeidel::kCycleSweeps);
      CHECK(turned < summary.iterations);
      CHECK(summary.iterations < 2 * NonsmoothGaussSeidel::kCycleSweeps);
    } else {
      CHECK(summary.status == Status::MaxIterations);
      CHECK(summary.natural_residual > 1e-2);
      CHECK(at == std::string::npos);
    }
  }
  // Where natural sweeps converge, the order stays natural: Confeti-ex03 in 55 sweeps.
  NonsmoothGaussSeidel nsgs;
  nsgs.mutable_options().tolerance = kTolerance;
  Eigen::VectorXd r;
  const NonsmoothGaussSeidel::Summary& summary =
      nsgs.Solve(ReadFclibFile(testing::SharedData("fclib/Confeti/Confeti-ex03.hdf5")).problem, &r);
  CAPTURE(summary.message);
  CHECK(summary.IsSolved());
  CHECK(summary.iterations == 55);
  CHECK(summary.message.find(turn) == std::string::npos);
}

}  // namespace
}  // namespace ncpkit
