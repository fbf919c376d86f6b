// The explicit stepper's convex model: every step of the engine scenes solved to its tolerance
// and checked against the model's conditions from each step's W (a solver registered here wraps
// convex-newton and checks what it returns), the model's physics on a resting stack, and the
// names a scene file and a variant accept for it.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>

#include "integrators/explicit_stepper.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"
#include "solvers/friction/convex_newton.h"
#include "solvers/registry/solver_registry.h"
#include "tests/solvers/friction_scenes.h"

namespace ncpkit {
namespace {

// convex-newton, and after each solve the model's conditions checked from the problem's local
// form; the largest violation over the solves is kept.
class CheckedConvexNewton : public ComplementaritySolver {
 public:
  CheckedConvexNewton(const std::string& name, const SolverOptions& options)
      : ComplementaritySolver(name, options) {
    ConvexNewton::Options o;
    o.tolerance = options.tolerance;
    o.warm_start = options.warm_start;
    solver_ = ConvexNewton(o);
  }
  const SolverSummary& Solve(const LinearComplementarityProblem&, Eigen::VectorXd*) override {
    return Refused();
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return Refused();
  }
  const SolverSummary& Solve(const GlobalFrictionContactProblem& problem,
                             Eigen::VectorXd* r) override {
    summary_ = solver_.Solve(problem, r);
    FrictionContactProblem local;
    problem.Reduce(&local);
    const test::ConvexModelViolations violations = test::ConvexModelViolationsOf(
        local.W_columns(), local.q(), local.mu(), solver_.Compliances(problem), *r);
    largest_violation = std::max(largest_violation, violations.Largest());
    ++solves;
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }

  static inline double largest_violation = 0.0;
  static inline int solves = 0;

 private:
  const SolverSummary& Refused() {
    summary_ = ConvexNewton::Summary();
    summary_.status = Status::InvalidInput;
    return summary_;
  }
  ConvexNewton solver_;
  ConvexNewton::Summary summary_;
};

struct CheckedRegistration {
  CheckedRegistration() {
    SolverEntry entry;
    entry.name = "test-checked-convex";
    entry.description = "convex-newton, each solution checked (a test's own solver)";
    entry.kinds = KindBit(ProblemKind::GlobalFriction);
    entry.convex_model = true;
    ExternalSolver external;
    external.make = [](const std::string& name, const SolverOptions& options) {
      return std::unique_ptr<ComplementaritySolver>(new CheckedConvexNewton(name, options));
    };
    entry.configuration = std::move(external);
    RegisterSolver(std::move(entry));
  }
  ~CheckedRegistration() { UnregisterSolver("test-checked-convex"); }
};

Scene EngineScene(const std::string& file, double duration, double tolerance) {
  Scene scene = ParseScene(
      internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) + "/scenes/engine/" + file), file);
  scene.ApplyVariant("convex/test-checked-convex");
  scene.mutable_settings().tolerance = tolerance;
  scene.duration = duration;
  return scene;
}

TEST_CASE("convex model: every step of the engine scenes solved, each solution checked from W") {
  CheckedRegistration registration;
  // The wall and the stack rest from the start; the pile's cubes land from 0.25 s on, so its
  // steps from there are the ones with contacts changing.
  const struct {
    const char* file;
    double duration;
  } cases[] = {{"wall100.json", 0.05}, {"stack50.json", 0.3}, {"pile200.json", 0.45}};
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CheckedConvexNewton::largest_violation = 0.0;
    CheckedConvexNewton::solves = 0;
    const Scene scene = EngineScene(c.file, c.duration, 1e-8);
    SceneRunner runner(scene);
    int steps = 0, failed = 0, largest_contacts = 0;
    while (!runner.Done()) {
      const StepRecord& record = runner.Step();
      ++steps;
      failed += record.summary.IsSolved() ? 0 : 1;
      largest_contacts = std::max(largest_contacts, record.num_contacts);
    }
    CHECK(failed == 0);
    CHECK(CheckedConvexNewton::solves >= steps / 2);
    CHECK(largest_contacts >= 200);
    // The solver stops at the model's error 1e-8; its conditions hold to that order.
    CHECK(CheckedConvexNewton::largest_violation <= 1e-7);
  }
}

TEST_CASE("convex model: a resting stack sinks by its compliance, and no further") {
  // The 50-box stack (25 columns of two boxes dropped from 5 mm): the normal compliance lets a
  // pressed contact sink by R_N r_N a step, so a resting box sits a little inside what holds
  // it; its depth stops growing once the columns rest.
  Scene scene = ParseScene(
      internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) + "/scenes/engine/stack50.json"),
      "stack50.json");
  scene.ApplyVariant("convex/convex-newton");
  scene.mutable_settings().tolerance = 1e-8;
  scene.duration = 1.0;
  SceneRunner runner(scene);
  double deepest_late = 0.0, deepest_early = 0.0;
  int failed = 0;
  while (!runner.Done()) {
    const StepRecord& record = runner.Step();
    failed += record.summary.IsSolved() ? 0 : 1;
    (record.time > 0.5 ? deepest_late : deepest_early) =
        std::max(record.time > 0.5 ? deepest_late : deepest_early, record.max_penetration);
  }
  CHECK(failed == 0);
  CHECK(deepest_late > 0.0);
  CHECK(deepest_late <= 1e-3);
  CHECK(deepest_late <= deepest_early * 1.01);
}

TEST_CASE("convex model: the names scene files and variants take") {
  std::string text =
      internal::ReadTextFile(std::string(NCPKIT_SOURCE_DIR) + "/scenes/engine/stack50.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  // "model": "convex" without a solver takes convex-newton; with a Coulomb solver it is refused.
  const Scene convex = ParseScene(
      with("\"model\": \"cone\",\n \"solver\": \"nsgs-velocity\",", "\"model\": \"convex\","),
      "x.json");
  CHECK(convex.variant() == "convex/convex-newton");
  CHECK_THROWS_WITH_AS(ParseScene(with("\"model\": \"cone\"", "\"model\": \"convex\""), "x.json"),
                       doctest::Contains("convex-model solver: convex-newton"), InputError);
  Scene scene = ParseScene(text, "x.json");
  CHECK_THROWS_AS(scene.ApplyVariant("cone/convex-newton"), InputError);
  CHECK_THROWS_AS(scene.ApplyVariant("convex/nsgs"), InputError);
  scene.ApplyVariant("convex/convex-newton");
  CHECK(scene.variant() == "convex/convex-newton");
  // A stepper built in code with the convex model and the default solver takes convex-newton.
  ExplicitStepperOptions options;
  options.model = ExplicitModel::Convex;
  options.h = 0.01;
  const ExplicitStepper stepper({}, ContactLawTable(), options);
  CHECK(stepper.variant() == "convex/convex-newton");
  options.solver = "nsgs";
  CHECK_THROWS_WITH_AS(ExplicitStepper({}, ContactLawTable(), options),
                       doctest::Contains("does not take nsgs"), InputError);
}

}  // namespace
}  // namespace ncpkit
