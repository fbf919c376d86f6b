// A solver added from outside the library, by the steps docs/solvers.md gives for one
// ("Adding a solver from your own code"): a class deriving from ComplementaritySolver and one
// RegisterSolver call. Nothing else is touched; the registry's consumers (CreateSolver, the name
// lists, the default comparisons, the steppers by variant name) take it from then on.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "fixtures/problem_generators.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "solvers/base/input_error.h"
#include "solvers/registry/solver_registry.h"
#include "tests/allocation_counter.h"

namespace ncpkit {
namespace {

// Projected Gauss-Seidel on a dense M, one row at a time: z_i <- mid(l_i, u_i, z_i - (M z +
// q)_i / M_ii). Converges for symmetric positive semidefinite M with a positive diagonal on
// solvable problems (the relaxed model's LCP).
class DensePgs : public ComplementaritySolver {
 public:
  DensePgs(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    summary_.solver = name;
  }
  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    summary_ = SolverSummary();
    summary_.solver = name();
    summary_.tolerance = options().tolerance;
    const Eigen::MatrixXd M = problem.dense_matrix();
    if ((M.diagonal().array() <= 0.0).any()) {
      summary_.status = Status::InvalidInput;
      summary_.message = "needs M_ii > 0";
      return summary_;
    }
    if (!options().warm_start || z->size() != problem.size()) z->setZero(problem.size());
    const int cap = options().max_iterations > 0 ? options().max_iterations : 100000;
    for (int k = 0; k <= cap; ++k) {
      summary_.natural_residual = natural_residual(problem, *z);
      summary_.iterations = k;
      if (summary_.natural_residual <= options().tolerance) {
        summary_.status = Status::Converged;
        return summary_;
      }
      for (int i = 0; i < problem.size(); ++i) {
        const double w = M.row(i).dot(*z) + problem.q()[i];
        (*z)[i] = std::clamp((*z)[i] - w / M(i, i), problem.lower()[i], problem.upper()[i]);
      }
    }
    summary_.status = Status::MaxIterations;
    return summary_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    summary_.status = Status::InvalidInput;
    summary_.message = name() + " takes linear problems only";
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

 private:
  SolverSummary summary_;
};

// Registers the row for one test case and removes it after, so that the other tests see the
// library's registry.
struct SolverRegistration {
  explicit SolverRegistration(ProblemKinds compared) {
    SolverEntry entry;
    entry.name = "test-dense-pgs";
    entry.description = "dense projected Gauss-Seidel (a test's own solver)";
    entry.kinds = KindBit(ProblemKind::Linear);
    entry.compared = compared;
    entry.needs_positive_diagonal = true;
    entry.configuration = ExternalSolver{[](const std::string& name, const SolverOptions& options) {
      return std::unique_ptr<ComplementaritySolver>(new DensePgs(name, options));
    }};
    RegisterSolver(entry);
  }
  ~SolverRegistration() { UnregisterSolver("test-dense-pgs"); }
};

TEST_CASE("a registered solver is created by name and solves what its name says") {
  CHECK(FindSolver("test-dense-pgs") == nullptr);
  {
    SolverRegistration registration(0);
    REQUIRE(FindSolver("test-dense-pgs") != nullptr);
    const std::vector<std::string> linear = SolverNames(ProblemKind::Linear);
    CHECK(std::find(linear.begin(), linear.end(), "test-dense-pgs") != linear.end());
    CHECK(SolverTableMarkdown().find("| `test-dense-pgs` | linear |") != std::string::npos);
    CHECK_THROWS_AS(CreateSolver("test-dense-pgs", ProblemKind::Mixed, SolverOptions()),
                    InputError);
    SolverOptions options;
    options.tolerance = 1e-10;
    auto solver = CreateSolver("test-dense-pgs", ProblemKind::Linear, options);
    auto lemke = CreateSolver("lemke", ProblemKind::Linear, options);
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const LinearComplementarityProblem problem = RandomSpdLcp(12, seed);
      Eigen::VectorXd z, z_lemke;
      const SolverSummary& summary = solver->Solve(problem, &z);
      CHECK_MESSAGE(summary.IsSolved(), summary.BriefReport());
      CHECK(summary.solver == "test-dense-pgs");
      CHECK(natural_residual(problem, z) <= 1e-10);
      REQUIRE(lemke->Solve(problem, &z_lemke).IsSolved());
      CHECK((z - z_lemke).lpNorm<Eigen::Infinity>() <= 1e-8);  // M positive definite: unique
    }
  }
  CHECK(FindSolver("test-dense-pgs") == nullptr);
}

TEST_CASE("registration refuses a taken, malformed or empty row") {
  SolverEntry entry;
  entry.kinds = KindBit(ProblemKind::Linear);
  entry.configuration = ExternalSolver{};
  for (const char* name : {"lemke", "", "Upper", "a/b", "x-cold", "-lead"}) {
    entry.name = name;
    CHECK_THROWS_AS(RegisterSolver(entry), InputError);
  }
  entry.name = "test-nothing";
  CHECK_THROWS_WITH_AS(RegisterSolver(entry), doctest::Contains("no factory"), InputError);
  entry.configuration = LemkeSolver::Options();
  entry.kinds = 0;
  CHECK_THROWS_WITH_AS(RegisterSolver(entry), doctest::Contains("no problem kind"), InputError);
  entry.kinds = KindBit(ProblemKind::Linear);
  entry.compared = KindBit(ProblemKind::Mixed);
  CHECK_THROWS_AS(RegisterSolver(entry), InputError);
  CHECK_FALSE(UnregisterSolver("lemke"));  // the library's rows stay
  CHECK(FindSolver("lemke") != nullptr);
}

TEST_CASE("a registered solver joins the default comparisons and steps a scene by its variant") {
  SolverRegistration registration(KindBit(ProblemKind::Linear));
  const std::vector<std::string> variants = DefaultVariants("explicit");
  CHECK(std::find(variants.begin(), variants.end(), "relaxed/test-dense-pgs") != variants.end());
  // Needs a positive diagonal: not offered for the pyramid's LCP, refused by name there.
  CHECK(std::find(variants.begin(), variants.end(), "pyramid/test-dense-pgs") == variants.end());
  Scene scene = LoadScene(std::string(NCPKIT_SOURCE_DIR) + "/tests/data/explicit_boxes.json");
  // 0.3 s; in sanitizer builds the 9 steps before the landing at step 10, where both solvers
  // run to their sweep cap (below), which takes minutes there.
  scene.duration = testing::SanitizedBuild() ? 0.09 : 0.3;
  CHECK_THROWS_AS(Scene(scene).ApplyVariant("pyramid/test-dense-pgs"), InputError);
  // Against the library's PGS on the same scene: both stall on the steps where the third box
  // lands on the first (redundant face contacts make the relaxed LCP's matrix singular, and
  // Gauss-Seidel converges sublinearly there); no more failed steps, the same end state.
  std::vector<Body> end_dense, end_pgs;
  const SimulationStats dense =
      RunScene(scene, "relaxed/test-dense-pgs", [&](const StepRecord&, const SceneRunner& runner) {
        if (runner.Done()) end_dense = runner.stepper().bodies();
      });
  const SimulationStats pgs =
      RunScene(scene, "relaxed/pgs", [&](const StepRecord&, const SceneRunner& runner) {
        if (runner.Done()) end_pgs = runner.stepper().bodies();
      });
  CHECK(dense.steps == static_cast<int>(std::lround(scene.duration / scene.h())));
  CHECK(dense.failed_steps <= pgs.failed_steps);
  CHECK(dense.max_residual <= 1e-8);
  REQUIRE(end_dense.size() == end_pgs.size());
  for (size_t i = 0; i < end_pgs.size(); ++i) {
    CHECK((end_dense[i].state.position - end_pgs[i].state.position).norm() <= 1e-6);
  }
}

}  // namespace
}  // namespace ncpkit
