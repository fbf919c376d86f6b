// The solver registry: every row creates the solver its name says, for exactly the problem kinds
// its bits name, and the documentation's solver table is the registry's own.
#include "solvers/registry/solver_registry.h"

#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <variant>

#include "solvers/base/input_error.h"
#include "solvers/mcp/mcp.h"
#include "solvers/registry/proximal_point.h"

namespace ncpkit {
namespace {

// Small problems of every kind, each with one solution that every solver of the kind finds.
LinearComplementarityProblem SmallLcp() {
  Eigen::MatrixXd M(2, 2);
  M << 2, 1, 1, 2;
  return LinearComplementarityProblem(M, Eigen::Vector2d(-1, 1));
}

FrictionContactProblem SmallFrictionProblem() {
  // Two contacts, W symmetric positive definite, both pressed (q_N < 0), one sliding.
  Eigen::MatrixXd W = Eigen::MatrixXd::Identity(6, 6) * 2.0;
  W(0, 3) = W(3, 0) = 0.5;
  W(1, 4) = W(4, 1) = 0.2;
  Eigen::VectorXd q(6);
  q << -1.0, 0.1, 0.0, -0.5, 2.0, -0.3;
  return FrictionContactProblem(W.sparseView(), q, Eigen::Vector2d(0.5, 0.3));
}

GlobalFrictionContactProblem SmallGlobalProblem() {
  // One body of 3 velocities, two contacts: u = H^T v + w.
  const Eigen::MatrixXd M = Eigen::Vector3d(2.0, 3.0, 4.0).asDiagonal();
  Eigen::MatrixXd H(3, 6);
  H << 1.0, 0.0, 0.2, 1.0, 0.1, 0.0,  //
      0.0, 1.0, 0.0, 0.3, 1.0, 0.0,   //
      0.1, 0.0, 1.0, 0.0, 0.2, 1.0;
  return GlobalFrictionContactProblem(M.sparseView(), H.sparseView(),
                                      Eigen::Vector3d(-1.0, 0.5, -2.0),
                                      Eigen::VectorXd::Constant(6, 0.1), Eigen::Vector2d(0.4, 0.6));
}

// Solves the problem of `kind` with the registry's solver and returns its summary's solver name,
// after checking that it converged.
std::string SolvedBy(ComplementaritySolver* solver, ProblemKind kind) {
  Eigen::VectorXd x;
  const SolverSummary* summary = nullptr;
  switch (kind) {
    case ProblemKind::Linear:
      summary = &solver->Solve(SmallLcp(), &x);
      break;
    case ProblemKind::Mixed: {
      const LinearComplementarityProblem lcp = SmallLcp();
      summary = &solver->Solve(LinearMcp(lcp), &x);
      break;
    }
    case ProblemKind::Friction:
      summary = &solver->Solve(SmallFrictionProblem(), &x);
      break;
    case ProblemKind::GlobalFriction:
      summary = &solver->Solve(SmallGlobalProblem(), &x);
      break;
  }
  CHECK_MESSAGE(summary->IsSolved(), summary->BriefReport());
  CHECK(&solver->summary() == summary);
  return summary->solver;
}

constexpr ProblemKind kKinds[] = {ProblemKind::Linear, ProblemKind::Mixed, ProblemKind::Friction,
                                  ProblemKind::GlobalFriction};

TEST_CASE("solver registry: every row runs the solver its name says, for the kinds it names") {
  std::set<std::string> names;
  SolverOptions options;
  options.tolerance = 1e-9;
  for (const SolverEntry& entry : SolverRegistry()) {
    CAPTURE(entry.name);
    CHECK(names.insert(entry.name).second);
    CHECK(FindSolver(entry.name) == &entry);
    CHECK(entry.kinds != 0);
    CHECK((entry.compared & ~entry.kinds) == 0);  // compared only where it takes the kind
    for (const ProblemKind kind : kKinds) {
      CAPTURE(ToString(kind));
      if (!entry.Takes(kind)) {
        CHECK_THROWS_AS(CreateSolver(entry.name, kind, options), InputError);
        continue;
      }
      const auto solver = CreateSolver(entry.name, kind, options);
      CHECK(solver->summary().status == Status::NotRun);
      // The name in the summary comes from the solver class and its options, not from the row:
      // two rows with the same name in their summaries would run the same thing.
      CHECK(SolvedBy(solver.get(), kind) == entry.name);
    }
  }
}

TEST_CASE("solver registry: rows of one class differ in the setting their names stand for") {
  const auto& newton =
      std::get<FischerBurmeisterNewton::Options>(FindSolver("fb-newton-dense")->configuration);
  CHECK(newton.linear_solver == FischerBurmeisterNewton::LinearSolver::Dense);
  CHECK(std::get<FischerBurmeisterNewton::Options>(FindSolver("fb-newton")->configuration)
            .linear_solver == FischerBurmeisterNewton::LinearSolver::Auto);
  CHECK(std::get<FischerBurmeisterNewton::Options>(FindSolver("penalized-fb")->configuration)
            .ncp_function == NcpFunction::PenalizedFischerBurmeister);
  CHECK(std::get<FischerBurmeisterNewton::Options>(FindSolver("minmap-newton")->configuration)
            .ncp_function == NcpFunction::MinMap);
  CHECK(std::get<NonsmoothGaussSeidel::Options>(FindSolver("nsgs-shuffled")->configuration)
            .ordering == NonsmoothGaussSeidel::Ordering::Shuffled);
  const auto& anderson =
      std::get<NonsmoothGaussSeidel::Options>(FindSolver("nsgs-anderson")->configuration);
  CHECK(anderson.ordering == NonsmoothGaussSeidel::Ordering::Natural);
  CHECK(anderson.anderson_memory == 5);
  CHECK(
      std::get<NonsmoothGaussSeidel::Options>(FindSolver("nsgs")->configuration).anderson_memory ==
      0);
  CHECK(std::get<FrictionNewton::Options>(FindSolver("fc-newton-fb")->configuration).function ==
        FrictionNewton::Function::FischerBurmeister);
  CHECK(
      std::get<FrictionProximalPoint::Options>(FindSolver("fc-proximal")->configuration).function ==
      FrictionNewton::Function::AlartCurnier);
  CHECK(std::get<FrictionProximalPoint::Options>(FindSolver("fc-proximal-fb")->configuration)
            .function == FrictionNewton::Function::FischerBurmeister);
}

TEST_CASE("solver registry: fc-proximal-fb runs the proximal method on the FB function") {
  // The registry's fc-proximal-fb gives, bit for bit, what FrictionProximalPoint gives with the
  // Fischer-Burmeister function and the same settings.
  const FrictionContactProblem problem = SmallFrictionProblem();
  SolverOptions options;
  options.tolerance = 1e-12;
  Eigen::VectorXd by_registry, direct;
  const auto solver = CreateSolver("fc-proximal-fb", ProblemKind::Friction, options);
  const SolverSummary& summary = solver->Solve(problem, &by_registry);
  FrictionProximalPoint proximal;
  proximal.mutable_options().function = FrictionNewton::Function::FischerBurmeister;
  proximal.mutable_options().tolerance = 1e-12;
  const FrictionProximalPoint::Summary expected = proximal.Solve(problem, &direct);
  CHECK(summary.solver == "fc-proximal-fb");
  CHECK(summary.iterations == expected.iterations);
  CHECK(by_registry == direct);
  // The problem tells the two functions apart: fc-proximal (Alart-Curnier) ends elsewhere.
  Eigen::VectorXd alart_curnier;
  const auto plain = CreateSolver("fc-proximal", ProblemKind::Friction, options);
  CHECK(plain->Solve(problem, &alart_curnier).solver == "fc-proximal");
  CHECK(alart_curnier != direct);
}

TEST_CASE("solver registry: the seed option seeds nsgs-shuffled's order") {
  // Four contacts coupled in their normals, so that orders differ; one sweep, stopped before
  // convergence.
  Eigen::MatrixXd W = Eigen::MatrixXd::Identity(12, 12) * 2.0;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < a; ++b) W(3 * a, 3 * b) = W(3 * b, 3 * a) = 0.5;
  }
  Eigen::VectorXd q(12);
  q << -1.0, 0.4, 0.1, -0.5, -0.3, 0.2, -0.8, 0.1, -0.6, -0.2, 0.5, 0.3;
  const FrictionContactProblem problem(W.sparseView(), q, Eigen::Vector4d(0.5, 0.3, 0.4, 0.2));
  const auto by_registry = [&](unsigned seed) {
    SolverOptions options;
    options.tolerance = 1e-14;
    options.max_iterations = 1;
    options.seed = seed;
    Eigen::VectorXd r;
    CreateSolver("nsgs-shuffled", ProblemKind::Friction, options)->Solve(problem, &r);
    return r;
  };
  for (const unsigned seed : {0U, 7U}) {
    NonsmoothGaussSeidel direct;
    direct.mutable_options().ordering = NonsmoothGaussSeidel::Ordering::Shuffled;
    direct.mutable_options().tolerance = 1e-14;
    direct.mutable_options().max_sweeps = 1;
    direct.mutable_options().seed = seed;
    Eigen::VectorXd r;
    direct.Solve(problem, &r);
    CHECK(by_registry(seed) == r);
  }
  CHECK(by_registry(7) != by_registry(0));
}

TEST_CASE("solver registry: the solver table in docs/solvers.md is the registry's") {
  std::ifstream file(std::string(NCPKIT_SOURCE_DIR) + "/docs/solvers.md");
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  CHECK_MESSAGE(text.str().find(SolverTableMarkdown()) != std::string::npos,
                "docs/solvers.md lacks the registry's table; `ncpkit solvers` prints it:\n"
                    << SolverTableMarkdown());
}

TEST_CASE("solver registry: kind names") {
  CHECK(KindNames(kLinearAndMixed) == "linear, mixed");
  CHECK(KindNames(KindBit(ProblemKind::GlobalFriction)) == "global-friction");
  CHECK(KindNames(0).empty());
}

// Hands back the exact solution of SmallLcp() (z = (0.5, 0)) but reports that it stopped at its
// iteration cap, as a solver does whose own stopping test is stricter than the residual.
class PessimisticSolver : public ComplementaritySolver {
 public:
  explicit PessimisticSolver(const SolverOptions& options)
      : ComplementaritySolver("pessimistic", options) {}
  const SolverSummary& Solve(const LinearComplementarityProblem& problem,
                             Eigen::VectorXd* z) override {
    ++calls;
    *z = Eigen::Vector2d(0.5, 0.0);
    summary_ = SolverSummary();
    summary_.status = Status::MaxIterations;
    summary_.message = "stopped";
    summary_.natural_residual = natural_residual(problem, *z);
    return summary_;
  }
  const SolverSummary& Solve(const MixedComplementarityProblem&, Eigen::VectorXd*) override {
    return summary_;
  }
  const SolverSummary& summary() const override { return summary_; }
  int calls = 0;

 private:
  SolverSummary summary_;
};

TEST_CASE("the proximal-point wrapper keeps an inner point that solves the problem") {
  SolverOptions options;
  options.tolerance = 1e-10;
  PessimisticSolver inner(options);
  ProximalPointSolver proximal(&inner, ProximalPointSolver::Options());
  Eigen::VectorXd z;
  const ProximalPointSolver::Summary& summary = proximal.Solve(SmallLcp(), &z);
  CHECK(summary.IsSolved());
  CHECK(summary.natural_residual <= 1e-10);
  CHECK(summary.outer_iterations == 0);
  CHECK(inner.calls == 1);  // no regularized problem
  CHECK(summary.message.find("the point reached solves the problem") != std::string::npos);
}

}  // namespace
}  // namespace ncpkit
