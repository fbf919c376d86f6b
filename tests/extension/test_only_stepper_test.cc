// A stepper added from outside the library, by the steps docs/steppers.md gives for one ("Adding
// a stepper"): a class deriving from Stepper, its options deriving from StepperSettings, a
// configuration deriving from StepperConfigOf<Options>, and one RegisterStepper row. Nothing
// else is touched; scene files ("stepper": "test-spheres"), variants, the default comparisons
// and the run loop take it from then on.
//
// The stepper: frictionless spheres against fixed planes, velocity level. Each step the free
// velocity v_f = v + h g, and for each sphere-plane pair closer than the margin a normal impulse
// r >= 0 with 0 <= r  _|_  n . v+ + phi / h >= 0, v+ = v_f + sum r n / m: one LCP per sphere,
// W_ij = n_i . n_j / m, handed to the registry solver the scene names. Positions move by h v+.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "integrators/json_reader.h"
#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "integrators/stepper_registry.h"
#include "solvers/base/input_error.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

struct SpheresOptions : StepperSettings {
  SpheresOptions() { solver = "lemke"; }
  // A plane enters a sphere's problem when the gap is below this (m) plus h |v_f|. > 0.
  double margin = 0.01;
};

class SpheresStepper : public Stepper {
 public:
  SpheresStepper(std::vector<Body> bodies, const SpheresOptions& options)
      : bodies_(std::move(bodies)), options_(options) {
    for (const Body& b : bodies_) {
      const bool sphere = b.shape.kind == ShapeKind::Sphere && !b.fixed;
      const bool plane = b.shape.kind == ShapeKind::HalfSpace && b.fixed;
      if (!sphere && !plane) {
        throw InputError("body '" + b.name +
                         "': the test-spheres stepper takes moving spheres "
                         "and fixed planes only");
      }
    }
    SolverOptions solver_options;
    solver_options.tolerance = options.tolerance;
    solver_options.max_iterations = options.max_iterations;
    solver_options.warm_start = false;
    solver_ = CreateSolver(options.solver, ProblemKind::Linear, solver_options);
  }

  const StepRecord& Step(const std::vector<Vector6d>& /*applied_impulses*/) override {
    record_ = StepRecord();
    record_.summary.status = Status::Converged;
    for (Body& b : bodies_) {
      if (!b.fixed) StepSphere(&b);
    }
    time_ += options_.h;
    record_.time = time_;
    record_.attempts = 1;
    return record_;
  }

  double time() const override { return time_; }
  double h() const override { return options_.h; }
  const std::vector<Body>& bodies() const override { return bodies_; }
  const ComplementaritySolver& solver() const override { return *solver_; }
  std::string variant() const override {
    return SolverVariant{"spheres", options_.solver, !options_.warm_start}.ToString();
  }
  bool has_velocities() const override { return true; }
  Eigen::Vector3d gravity() const override { return options_.gravity; }
  const std::vector<const char*>& PairColumns() const override { return kNoColumns; }
  void TablePairs(const StepRecord& /*record*/, std::vector<PairRow>* rows) const override {
    rows->clear();
  }
  void ContactMarkers(const StepRecord& /*record*/,
                      std::vector<ContactMarker>* markers) const override {
    markers->clear();
  }

 private:
  void StepSphere(Body* sphere) {
    RigidBodyState& s = sphere->state;
    const Eigen::Vector3d free = s.linear_velocity + options_.h * options_.gravity;
    std::vector<Eigen::Vector3d> normals;
    std::vector<double> gaps;
    for (const Body& plane : bodies_) {
      if (!plane.fixed) continue;
      const Eigen::Vector3d n = plane.state.orientation * Eigen::Vector3d::UnitZ();
      const double gap = n.dot(s.position - plane.state.position) - sphere->shape.size[0];
      if (gap < options_.margin + options_.h * free.norm()) {
        normals.push_back(n);
        gaps.push_back(gap);
      }
    }
    Eigen::Vector3d velocity = free;
    if (!normals.empty()) {
      const int m = static_cast<int>(normals.size());
      Eigen::MatrixXd W(m, m);
      Eigen::VectorXd q(m);
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < m; ++j) W(i, j) = normals[i].dot(normals[j]) / sphere->mass.mass;
        q[i] = normals[i].dot(free) + gaps[i] / options_.h;
      }
      Eigen::VectorXd r = Eigen::VectorXd::Zero(m);
      const SolverSummary& summary = solver_->Solve(LinearComplementarityProblem(W, q), &r);
      record_.summary = summary;
      record_.problem_size = m;
      record_.num_contacts += m;
      for (int i = 0; i < m; ++i) velocity += r[i] * normals[i] / sphere->mass.mass;
    }
    s.linear_velocity = velocity;
    s.position += options_.h * velocity;
  }

  static const std::vector<const char*> kNoColumns;
  std::vector<Body> bodies_;
  SpheresOptions options_;
  std::unique_ptr<ComplementaritySolver> solver_;
  StepRecord record_;
  double time_ = 0.0;
};

const std::vector<const char*> SpheresStepper::kNoColumns;

// Variants "spheres/<solver>[-cold]" with a solver of linear problems.
std::string ReadSpheresVariant(const std::string& variant, SpheresOptions* options) {
  SolverVariant parsed;
  std::string why;
  if (!SplitSolverVariant(variant, &parsed, &why) || parsed.model != "spheres" ||
      !IsSolverName(parsed.solver, ProblemKind::Linear)) {
    return "unknown test-spheres variant '" + variant + "'";
  }
  options->solver = parsed.solver;
  options->warm_start = !parsed.cold;
  return "";
}

class SpheresConfig final : public StepperConfigOf<SpheresOptions> {
 public:
  std::unique_ptr<StepperConfig> Clone() const override {
    return std::make_unique<SpheresConfig>(*this);
  }
  std::vector<std::string> OwnKeys() const override { return {"margin"}; }
  void Read(const internal::Reader& in, const nlohmann::json& object, const std::string& path,
            const std::string& prefix) override {
    internal::ReadStepperSettings(in, object, path, prefix, /*h_required=*/true, 0, &options);
    if (!IsSolverName(options.solver, ProblemKind::Linear)) {
      in.Fail(prefix + "solver", "not a solver of linear problems");
    }
    options.margin = in.Number(object, path, "margin", options.margin);
    if (!(options.margin > 0.0)) in.Fail(prefix + "margin", "must be > 0");
  }
  std::string variant() const override {
    return SolverVariant{"spheres", options.solver, !options.warm_start}.ToString();
  }
  std::string SetVariant(const std::string& variant) override {
    return ReadSpheresVariant(variant, &options);
  }
  std::string VariantGrammar() const override {
    return "spheres/<solver>[-cold] with one of " + SolverNameList(ProblemKind::Linear);
  }
  std::vector<std::string> DefaultVariants() const override {
    std::vector<std::string> variants;
    internal::AppendComparedVariants("spheres/", ProblemKind::Linear, false, &variants);
    return variants;
  }
  std::unique_ptr<Stepper> MakeStepper(const std::vector<Body>& bodies,
                                       const ContactLawTable& /*laws*/,
                                       const std::vector<Actuator>& /*actuators*/) const override {
    return std::make_unique<SpheresStepper>(bodies, options);
  }
};

StepperEntry SpheresRow() {
  return {"test-spheres",
          "frictionless spheres on planes (a test of the stepper registry)",
          /*velocities=*/true,
          /*actuators=*/false,
          {"mu"},
          [] { return std::make_unique<SpheresConfig>(); }};
}

// A ball dropped 0.2 m onto the floor of a V of two planes at +-45 degrees about x.
const char* const kStepperDrop = R"({
  "name": "drop", "stepper": "test-spheres", "h": 0.01, "duration": 1.0, "margin": 0.02,
  "bodies": [{"name": "ball", "shape": "sphere", "size": [0.1], "mass": 2.0,
              "position": [0, 0.05, 0.5], "velocity": [0.3, 0, 0]}],
  "fixed": [{"name": "left", "shape": "plane", "normal": [0, 1, 1]},
            {"name": "right", "shape": "plane", "normal": [0, -1, 1]}]
})";

// Registers the row for one test and removes it after, so the other tests see the library's.
struct Registered {
  Registered() { RegisterStepper(SpheresRow()); }
  ~Registered() { UnregisterStepper("test-spheres"); }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;
};

TEST_CASE("a test-only stepper: registered by one row, read from scene files, run by variant") {
  const Registered registered;
  CHECK(StepperNameList() == "implicit, quasistatic, explicit, test-spheres");
  Scene scene = ParseScene(kStepperDrop, "drop.json");
  CHECK(scene.stepper() == "test-spheres");
  CHECK(scene.options<SpheresOptions>().margin == 0.02);
  CHECK(scene.variant() == "spheres/lemke");
  CHECK(scene.DefaultVariants() == DefaultVariants("test-spheres"));
  CHECK(scene.DefaultVariants().front() == "spheres/lemke");
  CHECK(scene.TakesVariant("spheres/pgs"));
  CHECK_FALSE(scene.TakesVariant("cone/nsgs"));
  CHECK_NOTHROW(RequireKnownVariant("spheres/pgs-cold"));
  CHECK_THROWS_WITH_AS(scene.options<ImplicitStepperOptions>(),
                       doctest::Contains("stepped by the test-spheres stepper"), InputError);

  // Free flight is semi-implicit Euler exactly; the ball then settles in the V's crease, where
  // both planes hold it: z = r * sqrt(2) on the line y = 0, sliding along x (no friction).
  std::vector<std::vector<Body>> ends;
  for (const std::string variant : {"spheres/lemke", "spheres/pgs", "spheres/fb-newton"}) {
    INFO(variant);
    scene.ApplyVariant(variant);
    SceneRunner runner(scene);
    runner.Step();
    const RigidBodyState& first = runner.stepper().bodies()[0].state;
    CHECK(first.position.z() == 0.5 + 0.01 * (0.01 * -9.8));
    CHECK(first.position.x() == 0.3 * 0.01);
    while (!runner.Done()) {
      const StepRecord& record = runner.Step();
      REQUIRE(record.summary.status == Status::Converged);
    }
    const RigidBodyState& end = runner.stepper().bodies()[0].state;
    CHECK(end.position.z() == doctest::Approx(0.1 * std::sqrt(2.0)).epsilon(1e-6));
    CHECK(std::abs(end.position.y()) < 1e-6);
    CHECK(end.position.x() == doctest::Approx(0.3).epsilon(1e-9));
    CHECK(std::abs(end.linear_velocity.z()) < 1e-6);
    ends.push_back(runner.stepper().bodies());
  }
  CHECK((ends[0][0].state.position - ends[1][0].state.position).norm() < 1e-6);

  // The row's own key is checked; the stepper's constructor refuses other shapes when the scene
  // is read.
  CHECK_THROWS_WITH_AS(
      ParseScene(std::string(kStepperDrop).replace(std::string(kStepperDrop).find("0.02"), 4, "-1"),
                 "drop.json"),
      doctest::Contains("margin: must be > 0"), InputError);
  std::string box = kStepperDrop;
  box.replace(box.find(R"("shape": "sphere", "size": [0.1])"), 32,
              R"("shape": "box", "size": [0.1, 0.1, 0.1])");
  CHECK_THROWS_WITH_AS(ParseScene(box, "drop.json"),
                       doctest::Contains("takes moving spheres and fixed planes only"), InputError);
}

TEST_CASE("a stepper row is checked when registered and gone when unregistered") {
  StepperEntry taken = SpheresRow();
  taken.name = "implicit";
  CHECK_THROWS_WITH_AS(RegisterStepper(taken), doctest::Contains("the name is taken"), InputError);
  StepperEntry bad = SpheresRow();
  bad.name = "Test Spheres";
  CHECK_THROWS_WITH_AS(RegisterStepper(bad), doctest::Contains("[a-z][a-z0-9-]*"), InputError);
  StepperEntry empty = SpheresRow();
  empty.make_config = nullptr;
  CHECK_THROWS_WITH_AS(RegisterStepper(empty), doctest::Contains("no make_config"), InputError);
  CHECK_FALSE(UnregisterStepper("implicit"));  // the library's rows stay
  { const Registered registered; }
  CHECK_THROWS_WITH_AS(ParseScene(kStepperDrop, "drop.json"),
                       doctest::Contains("unknown stepper 'test-spheres'"), InputError);
}

}  // namespace
}  // namespace ncpkit
