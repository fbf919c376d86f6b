#include "solvers/mcp/semismooth_newton.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "fixtures/mcp_examples.h"
#include "fixtures/problem_generators.h"
#include "solvers/base/constants.h"
#include "solvers/lcp/lemke.h"
#include "solvers/mcp/problem_builder.h"

namespace ncpkit {
namespace {

// F = (x0^3 - 1, x1 - x0): J = [[0, 0], [-1, 1]] is singular at x0 = 0, but the merit's
// gradient J^T F is not zero there unless x1 = x0.
struct CubeChain {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    r[0] = x[0][0] * x[0][0] * x[0][0] - T(1);
    r[1] = x[0][1] - x[0][0];
    return true;
  }
};

struct LogResidual {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::log;
    r[0] = log(x[0][0]);
    return true;
  }
};

// Two free variables starting at (x0, x1) and the two equations `residual` of them.
template <class Residual>
void AddFreePair(const Residual& residual, double x0, double x1, ProblemBuilder* builder) {
  Eigen::VectorXd start(2);
  start << x0, x1;
  const int x = builder->AddVariableBlock(Eigen::VectorXd::Constant(2, -kInf),
                                          Eigen::VectorXd::Constant(2, kInf), start);
  builder->AddResidualBlock<2, 2>(residual, x, {x});
}

// Solves of random SPD LCPs, which Newton steps converge, end with `options` as with the
// default options, bit for bit, and without an active-set restart.
void CheckSameAsDefaultOnConvergingSolves(const FischerBurmeisterNewton::Options& options) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    const LinearComplementarityProblem lcp = RandomSpdLcp(12, seed);
    Eigen::VectorXd z_given, z_default;
    FischerBurmeisterNewton given(options), by_default;
    const auto a = given.Solve(LinearMcp(lcp), &z_given);
    const auto b = by_default.Solve(LinearMcp(lcp), &z_default);
    REQUIRE(a.status == Status::Converged);
    CHECK(a.active_set_restarts == 0);
    CHECK(a.iterations == b.iterations);
    CHECK(z_given == z_default);
  }
}

TEST_CASE("active-set restarts: validated, and taken only after a stall") {
  FischerBurmeisterNewton::Options options;
  options.active_set_restarts = -1;
  std::string why;
  CHECK_FALSE(options.IsValid(&why));
  CHECK(why.find("active_set_restarts") != std::string::npos);
  // A solve that converges takes none and ends where the solver without them ends (the
  // implicit stepper's dropped columns, tests/integrators/ordinary_stacks_test.cc, are where
  // one is taken).
  options.active_set_restarts = 3;
  CheckSameAsDefaultOnConvergingSolves(options);
}

TEST_CASE("the Levenberg-Marquardt stall window: validated, and idle where no such steps run") {
  FischerBurmeisterNewton::Options options;
  options.lm_stall_window = -1;
  std::string why;
  CHECK_FALSE(options.IsValid(&why));
  CHECK(why.find("lm_stall_window") != std::string::npos);
  // Solves by Newton steps end the same with the window off (0) and on (the default); a
  // landing whose Levenberg-Marquardt steps crawl is where it acts
  // (tests/integrators/ordinary_stacks_test.cc).
  options.lm_stall_window = 0;
  CheckSameAsDefaultOnConvergingSolves(options);
}

TEST_CASE("invalid options and invalid bounds are InvalidInput") {
  FischerBurmeisterNewton::Options options;
  options.penalty_lambda = 0.0;
  FischerBurmeisterNewton newton(options);
  const LinearComplementarityProblem lcp = RandomSpdLcp(4, 1);
  Eigen::VectorXd z;
  auto summary = newton.Solve(LinearMcp(lcp), &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("penalty_lambda") != std::string::npos);

  struct BadBounds : MixedComplementarityProblem {
    Eigen::VectorXd l = Eigen::VectorXd::Constant(1, 2.0), u = Eigen::VectorXd::Constant(1, 1.0);
    int size() const override { return 1; }
    const Eigen::VectorXd& lower() const override { return l; }
    const Eigen::VectorXd& upper() const override { return u; }
    bool Evaluate(const Eigen::VectorXd&, Eigen::VectorXd* F,
                  Eigen::SparseMatrix<double>*) const override {
      *F = Eigen::VectorXd::Zero(1);
      return true;
    }
  } bad;
  FischerBurmeisterNewton plain;
  summary = plain.Solve(bad, &z);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("l(0) = 2 > u(0) = 1") != std::string::npos);
}

TEST_CASE("KLU and dense LU give the same answer as Lemke on a contact-like LCP") {
  const LinearComplementarityProblem lcp = ContactLikeLcp(400, 9);
  Eigen::VectorXd reference;
  LemkeSolver lemke;
  REQUIRE(lemke.Solve(lcp, &reference).IsSolved());
  for (auto solver : {FischerBurmeisterNewton::LinearSolver::SparseKlu,
                      FischerBurmeisterNewton::LinearSolver::Dense}) {
    FischerBurmeisterNewton::Options options;
    options.linear_solver = solver;
    FischerBurmeisterNewton newton(options);
    Eigen::VectorXd z;
    const auto summary = newton.Solve(LinearMcp(lcp), &z);
    REQUIRE(summary.IsSolved());
    CHECK(summary.dense_linear_algebra == (solver == FischerBurmeisterNewton::LinearSolver::Dense));
    CHECK(summary.natural_residual <= 1e-10);
    CHECK((z - reference).cwiseAbs().maxCoeff() < 1e-6);
    CHECK(summary.factorizations >= summary.iterations);
    if (!summary.dense_linear_algebra) {
      CHECK(summary.iterations > 2);
      CHECK(summary.symbolic_analyses == 1);  // reused while the pattern is unchanged
      Eigen::VectorXd again;
      const auto second = newton.Solve(LinearMcp(lcp), &again);
      CHECK(second.IsSolved());
      CHECK(second.symbolic_analyses == 0);  // and across solves of the same pattern
    }
  }
}

// F(z) = M z + q + s dq + c z^3 on z >= 0 (componentwise cube, c > 0): a strongly monotone
// NCP whose data move with s, as a time-stepper's problem moves from one step to the next.
struct MovingCubicNcp : MixedComplementarityProblem {
  Eigen::SparseMatrix<double> M;
  Eigen::VectorXd q, dq, l, u;
  double s = 0.0, c = 0.1;
  MovingCubicNcp(const LinearComplementarityProblem& lcp, uint64_t seed)
      : M(lcp.sparse_columns()), q(lcp.q()) {
    dq = RandomSpdLcp(static_cast<int>(q.size()), seed).q();
    l = Eigen::VectorXd::Zero(q.size());
    u = Eigen::VectorXd::Constant(q.size(), kInf);
  }
  int size() const override { return static_cast<int>(q.size()); }
  const Eigen::VectorXd& lower() const override { return l; }
  const Eigen::VectorXd& upper() const override { return u; }
  bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override {
    *F = M * z + q + s * dq + c * z.array().cube().matrix();
    if (J != nullptr) {
      *J = M;
      for (int i = 0; i < size(); ++i) J->coeffRef(i, i) += 3.0 * c * z[i] * z[i];
    }
    return true;
  }
};

TEST_CASE("reuse_factorization: chord steps on the last factorization, the same solutions") {
  using LinearSolver = FischerBurmeisterNewton::LinearSolver;
  for (const LinearSolver linear : {LinearSolver::Dense, LinearSolver::SparseKlu}) {
    CAPTURE(static_cast<int>(linear));
    MovingCubicNcp problem(RandomSpdLcp(40, 3), 4);
    FischerBurmeisterNewton::Options options;
    options.linear_solver = linear;
    FischerBurmeisterNewton fresh(options);
    options.reuse_factorization = true;
    FischerBurmeisterNewton reusing(options);
    Eigen::VectorXd z_fresh, z_reuse;
    int chorded = 0, factorized = 0;
    for (int step = 0; step <= 20; ++step) {
      problem.s = 1e-3 * step;
      const auto a = fresh.Solve(problem, &z_fresh);
      const auto b = reusing.Solve(problem, &z_reuse);
      REQUIRE(a.IsSolved());
      REQUIRE(b.IsSolved());
      CHECK(a.chord_steps == 0);                                       // the option off: never
      CHECK(natural_residual(problem, z_reuse) <= options.tolerance);  // measured apart
      CHECK((z_reuse - z_fresh).cwiseAbs().maxCoeff() <= 1e-9);
      CHECK(b.iterations >= b.chord_steps);
      if (step == 0) CHECK(b.chord_steps == 0);  // nothing factorized before
      chorded += b.chord_steps > 0 && b.factorizations == 0 ? 1 : 0;
      factorized += b.factorizations > 0 ? 1 : 0;
    }
    MESSAGE(chorded << " of 20 moved problems solved by chord steps alone, " << factorized
                    << " factorized");
    CHECK(chorded >= 15);

    // An unrelated problem of the same size: the kept matrix may not serve; Newton then does.
    MovingCubicNcp other(RandomSpdLcp(40, 11), 12);
    Eigen::VectorXd z_other_fresh = z_reuse, z_other = z_reuse;
    REQUIRE(fresh.Solve(other, &z_other_fresh).IsSolved());
    REQUIRE(reusing.Solve(other, &z_other).IsSolved());
    CHECK((z_other - z_other_fresh).cwiseAbs().maxCoeff() <= 1e-9);
    // Ten times stiffer: a chord step from the kept matrix goes a tenth of the way, shrinks
    // |Phi| by far less than chord_contraction, and is discarded for a Newton step.
    MovingCubicNcp stiffer = other;
    stiffer.M *= 10.0;
    z_other_fresh = z_other;
    const auto stiff = reusing.Solve(stiffer, &z_other);
    REQUIRE(stiff.IsSolved());
    CHECK(stiff.chord_steps == 0);
    CHECK(stiff.factorizations > 0);
    REQUIRE(fresh.Solve(stiffer, &z_other_fresh).IsSolved());
    CHECK((z_other - z_other_fresh).cwiseAbs().maxCoeff() <= 1e-9);

    // max_iterations bounds chord steps too.
    FischerBurmeisterNewton::Options capped = options;
    capped.max_iterations = 1;
    FischerBurmeisterNewton one(capped);
    problem.s = 0.0;
    Eigen::VectorXd z_one;
    one.mutable_options().max_iterations = 200;
    REQUIRE(one.Solve(problem, &z_one).IsSolved());
    one.mutable_options().max_iterations = 1;
    problem.s = 0.05;
    const auto limited = one.Solve(problem, &z_one);
    CHECK(limited.iterations <= 1);
    CHECK(limited.chord_steps <= 1);
  }
}

TEST_CASE("reuse_factorization: a restored memory repeats the next solve bit for bit") {
  using LinearSolver = FischerBurmeisterNewton::LinearSolver;
  for (const LinearSolver linear : {LinearSolver::Dense, LinearSolver::SparseKlu}) {
    CAPTURE(static_cast<int>(linear));
    MovingCubicNcp problem(RandomSpdLcp(40, 5), 6);
    FischerBurmeisterNewton::Options options;
    options.linear_solver = linear;
    options.reuse_factorization = true;
    FischerBurmeisterNewton first(options);
    Eigen::VectorXd z;
    for (int step = 0; step < 3; ++step) {
      problem.s = 2e-3 * step;
      REQUIRE(first.Solve(problem, &z).IsSolved());
    }
    const std::shared_ptr<const SolverMemory> memory = first.SaveMemory();
    REQUIRE(memory != nullptr);
    const Eigen::VectorXd start = z;
    problem.s = 6e-3;
    const auto a = first.Solve(problem, &z);
    REQUIRE(a.IsSolved());
    CHECK(a.chord_steps > 0);

    FischerBurmeisterNewton second(options);
    second.RestoreMemory(memory.get());
    Eigen::VectorXd z2 = start;
    const auto b = second.Solve(problem, &z2);
    CHECK(b.iterations == a.iterations);
    CHECK(b.chord_steps == a.chord_steps);
    CHECK(b.factorizations == a.factorizations);
    CHECK(z2 == z);

    // No memory: no chord steps (the first solve factorizes).
    FischerBurmeisterNewton third(options);
    third.RestoreMemory(nullptr);
    Eigen::VectorXd z3 = start;
    CHECK(third.Solve(problem, &z3).chord_steps == 0);
    CHECK(third.SaveMemory() != nullptr);
    options.reuse_factorization = false;
    FischerBurmeisterNewton off(options);
    Eigen::VectorXd z4 = start;
    REQUIRE(off.Solve(problem, &z4).IsSolved());
    CHECK(off.SaveMemory() == nullptr);  // the option off: nothing carried
  }
}

TEST_CASE("a singular Newton matrix: the regularized direction, else Levenberg-Marquardt") {
  ProblemBuilder builder;
  AddFreePair(CubeChain{}, 0.0, 1.0, &builder);
  for (const double regularization : {1.0, 0.0}) {
    FischerBurmeisterNewton::Options options;
    options.regularization = regularization;
    FischerBurmeisterNewton newton(options);
    Eigen::VectorXd z = builder.start();
    const auto summary = newton.Solve(builder, &z);
    CAPTURE(regularization);
    CAPTURE(summary.BriefReport());
    REQUIRE(summary.IsSolved());
    if (regularization > 0.0) {
      CHECK(summary.regularized_steps >= 1);
    } else {
      CHECK(summary.regularized_steps == 0);
      CHECK(summary.levenberg_marquardt_steps >= 1);
    }
    CHECK(z[0] == doctest::Approx(1.0));
  }
}

// F = (s, 2 s), s = x0^3 + x1 - 1: J = [[3 x0^2, 1], [6 x0^2, 2]] has rank one everywhere.
struct RankOneEquations {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T s = x[0][0] * x[0][0] * x[0][0] + x[0][1] - T(1);
    r[0] = s;
    r[1] = T(2) * s;
    return true;
  }
};

TEST_CASE("skip_failed_newton: a Newton matrix singular at every iterate factorized once") {
  // The Newton direction fails at the first iteration; with the option the later ones start
  // from the regularized direction instead of factorizing the singular matrix again (without
  // it, two factorizations an iteration). The shift vanishes with |Phi|, and the residuals
  // still fall quadratically.
  ProblemBuilder builder;
  AddFreePair(RankOneEquations{}, 2.0, 0.0, &builder);
  using LinearSolver = FischerBurmeisterNewton::LinearSolver;
  for (const LinearSolver linear_solver : {LinearSolver::Dense, LinearSolver::SparseKlu}) {
    for (const bool skip : {true, false}) {
      FischerBurmeisterNewton::Options options;
      options.linear_solver = linear_solver;
      options.record_history = true;
      options.skip_failed_newton = skip;
      FischerBurmeisterNewton newton(options);
      Eigen::VectorXd z = builder.start();
      const auto summary = newton.Solve(builder, &z);
      CAPTURE(summary.FullReport());
      REQUIRE(summary.status == Status::Converged);
      CHECK(summary.regularized_steps == summary.iterations);
      CHECK(summary.iterations <= 6);
      CHECK(std::abs(z[0] * z[0] * z[0] + z[1] - 1.0) <= 1e-12);
      if (skip) {
        CHECK(summary.factorizations == summary.iterations + 1);  // the Newton matrix once
        CHECK(summary.skipped_newton_directions == summary.iterations - 1);
      } else {
        CHECK(summary.factorizations == 2 * summary.iterations);
        CHECK(summary.skipped_newton_directions == 0);
      }
      CHECK_FALSE(summary.ran_newton_first_again);
    }
  }
}

TEST_CASE("skip_failed_newton: a solve that fails after skipping runs again without") {
  // min-map Newton on path_lcp from its second start: its Newton direction fails once, and
  // the regularized directions after it (shift 0.1 at this residual) lead to a stall that the
  // Newton directions avoid. The second run solves it; the summary counts both runs' work.
  const McpExample example = McpExampleByName("path_lcp");
  FischerBurmeisterNewton::Options options;
  options.ncp_function = NcpFunction::MinMap;
  options.skip_failed_newton = true;
  FischerBurmeisterNewton skipping(options);
  Eigen::VectorXd z = example.starts[1];
  const auto summary = skipping.Solve(*example.problem, &z);
  CAPTURE(summary.FullReport());
  CHECK(summary.IsSolved());
  CHECK(summary.ran_newton_first_again);
  CHECK(summary.skipped_newton_directions > 0);
  options.skip_failed_newton = false;
  FischerBurmeisterNewton plain(options);
  Eigen::VectorXd z_plain = example.starts[1];
  const auto alone = plain.Solve(*example.problem, &z_plain);
  REQUIRE(alone.IsSolved());
  CHECK(summary.iterations > alone.iterations);  // the failed run's work included
  CHECK(z == z_plain);                           // the second run is the plain one
}

TEST_CASE("a NaN from the residual during the line search shortens the step") {
  ProblemBuilder builder;  // F(x) = log x, free: the full Newton step from 5 lands at x < 0
  const int x = builder.AddVariableBlock(1, -kInf, kInf, 5.0);
  builder.AddResidualBlock<1, 1>(LogResidual{}, x, {x});
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z = builder.start();
  const auto summary = newton.Solve(builder, &z);
  CAPTURE(summary.BriefReport());
  REQUIRE(summary.IsSolved());
  CHECK(summary.line_search_steps >= 1);
  CHECK(z[0] == doctest::Approx(1.0));
}

TEST_CASE("warm start from the solution needs no iteration; the non-monotone search converges") {
  const LinearComplementarityProblem lcp = ContactLikeLcp(200, 4);
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z;
  REQUIRE(newton.Solve(LinearMcp(lcp), &z).IsSolved());
  const auto warm = newton.Solve(LinearMcp(lcp), &z);
  REQUIRE(warm.IsSolved());
  CHECK(warm.iterations == 0);
  FischerBurmeisterNewton::Options options;
  options.nonmonotone_memory = 5;
  FischerBurmeisterNewton nonmonotone(options);
  Eigen::VectorXd z2;
  const auto summary = nonmonotone.Solve(LinearMcp(lcp), &z2);
  REQUIRE(summary.IsSolved());
  CHECK((z2 - z).cwiseAbs().maxCoeff() < 1e-6);
}

TEST_CASE("a problem without solution stops with a reason, not at the iteration cap") {
  Eigen::MatrixXd M(1, 1);
  M << -1;
  Eigen::VectorXd q(1);
  q << -1;  // w = -z - 1 < 0 for every z >= 0
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z;
  const LinearComplementarityProblem lcp(M, q);
  const auto summary = newton.Solve(LinearMcp(lcp), &z);
  CHECK_FALSE(summary.IsSolved());
  CHECK(summary.status != Status::MaxIterations);
  CHECK(!summary.message.empty());
}

}  // namespace
}  // namespace ncpkit
