// Derivatives of frictional contact solutions: a single contact in each state against its closed
// form, the degenerate rule against one-sided differences, random problems against central
// differences, and the adjoint identity.
#include "solvers/sensitivity/friction_sensitivity.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

#include "solvers/base/input_error.h"
#include "solvers/friction/convex_newton.h"
#include "solvers/registry/solver_registry.h"
#include "solvers/sensitivity/global_friction_sensitivity.h"
#include "tests/solvers/friction_scenes.h"

namespace ncpkit {
namespace {

using State = FrictionSensitivity::ContactState;

Eigen::VectorXd SolveFriction(const FrictionContactProblem& problem) {
  SolverOptions options;
  options.tolerance = 1e-14;
  Eigen::VectorXd r;
  const SolverSummary summary =
      CreateSolver("auto", ProblemKind::Friction, options)->Solve(problem, &r);
  REQUIRE_MESSAGE(summary.IsSolved(), summary.BriefReport());
  return r;
}

FrictionContactProblem OneContact(const Eigen::Vector3d& q, double mu) {
  const Eigen::SparseMatrix<double> W = Eigen::Matrix3d::Identity().sparseView();
  return FrictionContactProblem(W, q, Eigen::VectorXd::Constant(1, mu));
}

TEST_CASE("friction sensitivity: one contact apart, sticking and sliding in closed form") {
  const double mu = 0.5;
  SUBCASE("apart: r = 0 whatever q does") {
    const FrictionContactProblem problem = OneContact(Eigen::Vector3d(1.0, 0.2, 0.0), mu);
    const FrictionSensitivity s(problem, SolveFriction(problem));
    CHECK(s.state(0) == State::Apart);
    CHECK(s.Jacobian(FrictionSensitivity::Input::q).isZero(0.0));
  }
  SUBCASE("sticking: r = -q, dr/dq = -I") {
    const FrictionContactProblem problem = OneContact(Eigen::Vector3d(-1.0, 0.1, 0.0), mu);
    const FrictionSensitivity s(problem, SolveFriction(problem));
    CHECK(s.state(0) == State::Sticking);
    CHECK((s.Jacobian(FrictionSensitivity::Input::q) + Eigen::Matrix3d::Identity())
              .cwiseAbs()
              .maxCoeff() <= 1e-12);
    CHECK(s.Jacobian(FrictionSensitivity::Input::mu).isZero(1e-12));
  }
  SUBCASE("sliding: r_N = -q_N, r_T = -mu r_N q_T / |q_T|") {
    // q_T = (2, 0): t = (1, 0), r = (1, -0.5, 0), the slip u_T = (1.5, 0).
    const FrictionContactProblem problem = OneContact(Eigen::Vector3d(-1.0, 2.0, 0.0), mu);
    const Eigen::VectorXd r = SolveFriction(problem);
    CHECK((r - Eigen::Vector3d(1.0, -0.5, 0.0)).norm() <= 1e-12);
    const FrictionSensitivity s(problem, r);
    CHECK(s.state(0) == State::Sliding);
    Eigen::Matrix3d expected = Eigen::Matrix3d::Zero();
    expected(0, 0) = -1.0;
    expected(1, 0) = mu;         // -mu t dr_N/dq_N
    expected(2, 2) = -mu / 2.0;  // -mu r_N (I - t t^T) / |q_T|
    CHECK((s.Jacobian(FrictionSensitivity::Input::q) - expected).cwiseAbs().maxCoeff() <= 1e-12);
    const Eigen::MatrixXd by_mu = s.Jacobian(FrictionSensitivity::Input::mu);
    CHECK((by_mu.col(0) - Eigen::Vector3d(0.0, -1.0, 0.0)).norm() <= 1e-12);  // -r_N t
  }
}

TEST_CASE("friction sensitivity: degenerate contacts return the side the rule names") {
  const double mu = 0.5, h = 1e-7;
  SensitivityOptions free_side;
  free_side.degenerate_side = DegenerateSide::Free;
  SUBCASE("grazing: r = 0 with u_N = 0") {
    const Eigen::Vector3d q(0.0, 0.3, 0.0);
    const FrictionContactProblem problem = OneContact(q, mu);
    const Eigen::VectorXd r = SolveFriction(problem);
    const FrictionSensitivity bound(problem, r), free(problem, r, free_side);
    REQUIRE(bound.degenerate() == std::vector<int>{0});
    CHECK(bound.state(0) == State::Apart);
    CHECK(free.state(0) == State::Sliding);
    // Raising q_N keeps the contact apart; lowering it presses it, sliding.
    const Eigen::VectorXd up =
        (SolveFriction(OneContact(q + Eigen::Vector3d(h, 0, 0), mu)) - r) / h;
    const Eigen::VectorXd down =
        (r - SolveFriction(OneContact(q - Eigen::Vector3d(h, 0, 0), mu))) / h;
    CHECK((bound.Jacobian(FrictionSensitivity::Input::q).col(0) - up).norm() <= 1e-6);
    CHECK((free.Jacobian(FrictionSensitivity::Input::q).col(0) - down).norm() <= 1e-6);
    CHECK((down - Eigen::Vector3d(-1.0, mu, 0.0)).norm() <= 1e-6);
  }
  SUBCASE("at the cone's edge with zero slip") {
    // r = -q = (1, -0.5, 0): |r_T| = mu r_N, u = 0.
    const Eigen::Vector3d q(-1.0, 0.5, 0.0);
    const FrictionContactProblem problem = OneContact(q, mu);
    const Eigen::VectorXd r = SolveFriction(problem);
    const FrictionSensitivity bound(problem, r), free(problem, r, free_side);
    REQUIRE(bound.degenerate() == std::vector<int>{0});
    CHECK(bound.state(0) == State::Sliding);
    CHECK(free.state(0) == State::Sticking);
    // Pushing harder along q_T1 makes it slide (r_T1 stays -mu r_N); less keeps it sticking.
    const Eigen::VectorXd up =
        (SolveFriction(OneContact(q + Eigen::Vector3d(0, h, 0), mu)) - r) / h;
    const Eigen::VectorXd down =
        (r - SolveFriction(OneContact(q - Eigen::Vector3d(0, h, 0), mu))) / h;
    CHECK((bound.Jacobian(FrictionSensitivity::Input::q).col(1) - up).norm() <= 1e-6);
    CHECK((free.Jacobian(FrictionSensitivity::Input::q).col(1) - down).norm() <= 1e-6);
  }
}

// A random problem: W = A A^T + I (3 n_c x 3 n_c), q pressing most contacts, mu in [0.2, 0.8].
FrictionContactProblem RandomProblem(int nc, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.2, 0.8);
  const int n = 3 * nc;
  Eigen::MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = normal(rng) / std::sqrt(n);
  const Eigen::MatrixXd W = A * A.transpose() + Eigen::MatrixXd::Identity(n, n);
  Eigen::VectorXd q(n), mu(nc);
  for (int a = 0; a < nc; ++a) {
    q[3 * a] = normal(rng) - 0.7;
    q[3 * a + 1] = normal(rng);
    q[3 * a + 2] = normal(rng);
    mu[a] = uniform(rng);
  }
  return FrictionContactProblem(W.sparseView(), q, mu);
}

FrictionContactProblem Perturbed(const FrictionContactProblem& p,
                                 const FrictionSensitivity::Tangent& d, double s) {
  Eigen::SparseMatrix<double> W = p.W_columns();
  if (d.W.rows() != 0) W += s * d.W;
  Eigen::VectorXd q = p.q(), mu = p.mu();
  if (d.q.size() != 0) q += s * d.q;
  if (d.mu.size() != 0) mu += s * d.mu;
  return FrictionContactProblem(W, q, mu);
}

// Compares s.Jvp(d) with the central difference of `solve` along d; a direction along which a
// contact's state changes within the difference (the perturbed solutions classified by
// `at`), or a problem with degenerate contacts, counts in *changed instead of *checked.
void CompareWithDifferences(
    const FrictionContactProblem& problem, const FrictionSensitivity& s,
    const FrictionSensitivity::Tangent& d,
    const std::function<Eigen::VectorXd(const FrictionContactProblem&)>& solve,
    const std::function<FrictionSensitivity(const FrictionContactProblem&, const Eigen::VectorXd&)>&
        at,
    int* checked, int* changed) {
  const double h = 1e-6;
  const FrictionContactProblem plus = Perturbed(problem, d, h), minus = Perturbed(problem, d, -h);
  const Eigen::VectorXd r_plus = solve(plus), r_minus = solve(minus);
  const FrictionSensitivity s_plus = at(plus, r_plus), s_minus = at(minus, r_minus);
  bool same = s.degenerate().empty();
  for (int a = 0; a < s.num_contacts(); ++a)
    same = same && s_plus.state(a) == s.state(a) && s_minus.state(a) == s.state(a);
  if (!same) {
    ++*changed;
    return;
  }
  ++*checked;
  const Eigen::VectorXd dr = s.Jvp(d);
  CHECK(((r_plus - r_minus) / (2 * h) - dr).norm() <= 1e-5 * std::max(1.0, dr.norm()));
}

TEST_CASE("friction sensitivity: central differences on random problems") {
  int checked = 0, changed = 0, states[4] = {0, 0, 0, 0};
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const int nc = 1 + static_cast<int>(seed % 4);
    const FrictionContactProblem problem = RandomProblem(nc, seed);
    const Eigen::VectorXd r = SolveFriction(problem);
    const FrictionSensitivity s(problem, r);
    for (int a = 0; a < nc; ++a) ++states[static_cast<int>(s.state(a))];
    std::mt19937_64 rng(seed + 100);
    std::normal_distribution<double> normal;
    for (int kind = 0; kind < 3; ++kind) {
      FrictionSensitivity::Tangent d;
      const int n = 3 * nc;
      if (kind == 0) d.q = Eigen::VectorXd::NullaryExpr(n, [&]() { return normal(rng); });
      if (kind == 1) d.mu = Eigen::VectorXd::NullaryExpr(nc, [&]() { return normal(rng); });
      if (kind == 2) {
        const Eigen::MatrixXd B = Eigen::MatrixXd::NullaryExpr(n, n, [&]() { return normal(rng); });
        d.W = (0.1 * (B + B.transpose())).sparseView();
      }
      CAPTURE(seed);
      CAPTURE(kind);
      CompareWithDifferences(
          problem, s, d, SolveFriction,
          [](const FrictionContactProblem& p, const Eigen::VectorXd& x) {
            return FrictionSensitivity(p, x);
          },
          &checked, &changed);
    }
  }
  MESSAGE(checked << " directions checked, " << changed
                  << " skipped (a state changed); states: " << states[0] << " apart, " << states[1]
                  << " sticking, " << states[2] << " sliding");
  CHECK(checked >= 80);
  CHECK(states[0] > 0);
  CHECK(states[1] > 0);
  CHECK(states[2] > 0);
}

// The convex contact model's solution (convex-newton, to 1e-14) with its compliances.
Eigen::VectorXd SolveConvex(const FrictionContactProblem& problem) {
  ConvexNewton::Options options;
  options.tolerance = 1e-14;
  options.max_iterations = 200;
  ConvexNewton solver(options);
  Eigen::VectorXd r;
  const ConvexNewton::Summary& summary = solver.Solve(problem, &r);
  REQUIRE_MESSAGE(summary.IsSolved(), summary.BriefReport());
  return r;
}

TEST_CASE("friction sensitivity: the convex model's against central differences") {
  // q and mu leave the compliances (which scale with W's blocks) where they are, so central
  // differences of convex-newton's solutions check the model's derivative with R held fixed.
  int checked = 0, changed = 0, states[4] = {0, 0, 0, 0};
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const int nc = 1 + static_cast<int>(seed % 4);
    const FrictionContactProblem problem = RandomProblem(nc, seed + 200);
    const Eigen::MatrixX2d R = ConvexNewton().Compliances(problem);
    const FrictionSensitivity s(problem, SolveConvex(problem), R);
    for (int a = 0; a < nc; ++a) ++states[static_cast<int>(s.state(a))];
    std::mt19937_64 rng(seed + 300);
    std::normal_distribution<double> normal;
    for (int kind = 0; kind < 2; ++kind) {
      FrictionSensitivity::Tangent d;
      if (kind == 0) d.q = Eigen::VectorXd::NullaryExpr(3 * nc, [&]() { return normal(rng); });
      if (kind == 1) d.mu = Eigen::VectorXd::NullaryExpr(nc, [&]() { return normal(rng); });
      CAPTURE(seed);
      CAPTURE(kind);
      CompareWithDifferences(
          problem, s, d, SolveConvex,
          [&R](const FrictionContactProblem& p, const Eigen::VectorXd& x) {
            return FrictionSensitivity(p, x, R);
          },
          &checked, &changed);
    }
    // The adjoint of the same derivative.
    const Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(3 * nc, [&]() { return normal(rng); });
    FrictionSensitivity::Tangent w;
    w.q = Eigen::VectorXd::NullaryExpr(3 * nc, [&]() { return normal(rng); });
    w.mu = Eigen::VectorXd::NullaryExpr(nc, [&]() { return normal(rng); });
    const FrictionSensitivity::Gradient g = s.Vjp(v);
    CHECK(v.dot(s.Jvp(w)) == doctest::Approx(g.q.dot(w.q) + g.mu.dot(w.mu)).epsilon(1e-11));
  }
  MESSAGE("convex model: " << checked << " directions checked, " << changed
                           << " skipped (a state changed); states: " << states[0] << " apart, "
                           << states[1] << " sticking, " << states[2] << " sliding");
  CHECK(checked >= 50);
  CHECK(states[0] > 0);
  CHECK(states[1] > 0);
  CHECK(states[2] > 0);
  // Compliances per contact, positive and finite.
  const FrictionContactProblem problem = RandomProblem(2, 7);
  CHECK_THROWS_AS(FrictionSensitivity(problem, SolveConvex(problem), Eigen::MatrixX2d::Ones(1, 2)),
                  InputError);
  CHECK_THROWS_AS(FrictionSensitivity(problem, SolveConvex(problem), Eigen::MatrixX2d::Zero(2, 2)),
                  InputError);
}

TEST_CASE("friction sensitivity: <v, J w> = <J^T v, w> to rounding") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const int nc = 1 + static_cast<int>(seed % 5);
    const FrictionContactProblem problem = RandomProblem(nc, seed + 50);
    const FrictionSensitivity s(problem, SolveFriction(problem));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    const int n = 3 * nc;
    FrictionSensitivity::Tangent w;
    w.q = Eigen::VectorXd::NullaryExpr(n, [&]() { return normal(rng); });
    w.mu = Eigen::VectorXd::NullaryExpr(nc, [&]() { return normal(rng); });
    const Eigen::MatrixXd dW = Eigen::MatrixXd::NullaryExpr(n, n, [&]() { return normal(rng); });
    w.W = dW.sparseView();
    const Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(n, [&]() { return normal(rng); });
    const double forward = v.dot(s.Jvp(w));
    const FrictionSensitivity::Gradient g = s.Vjp(v);
    const double backward =
        g.q.dot(w.q) + g.mu.dot(w.mu) + (s.MatrixGradient(g).array() * dW.array()).sum();
    CAPTURE(seed);
    CHECK(std::abs(forward - backward) <= 1e-11 * (1.0 + std::abs(forward)));
  }
}

TEST_CASE("friction sensitivity: W, q and mu given by parts give the problem's derivatives") {
  int compared = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const int nc = 1 + static_cast<int>(seed % 4);
    const FrictionContactProblem problem = RandomProblem(nc, seed);
    const Eigen::VectorXd r = SolveFriction(problem);
    const Eigen::MatrixX2d compliances = Eigen::MatrixX2d::Constant(nc, 2, 0.01 * seed);
    for (const bool convex : {false, true}) {
      const FrictionSensitivity whole =
          convex ? FrictionSensitivity(problem, r, compliances) : FrictionSensitivity(problem, r);
      const FrictionSensitivity parts =
          convex
              ? FrictionSensitivity(problem.W_columns(), problem.q(), problem.mu(), r, compliances)
              : FrictionSensitivity(problem.W_columns(), problem.q(), problem.mu(), r);
      CAPTURE(seed);
      for (int a = 0; a < nc; ++a) CHECK(parts.state(a) == whole.state(a));
      for (const auto input : {FrictionSensitivity::Input::q, FrictionSensitivity::Input::mu}) {
        const Eigen::MatrixXd J = whole.Jacobian(input);
        CHECK((parts.Jacobian(input) - J).cwiseAbs().maxCoeff() <=
              1e-12 * (1.0 + J.cwiseAbs().maxCoeff()));
        ++compared;
      }
    }
  }
  CHECK(compared == 80);
  const FrictionContactProblem one = OneContact(Eigen::Vector3d(-1.0, 0.2, 0.0), 0.5);
  const Eigen::Vector3d r(1.0, -0.2, 0.0);
  const Eigen::SparseMatrix<double> W = one.W_columns();
  CHECK_THROWS_AS(FrictionSensitivity(W, Eigen::Vector2d(-1.0, 0.2), one.mu(), r), InputError);
  CHECK_THROWS_AS(FrictionSensitivity(W, one.q(), Eigen::Vector2d(0.5, 0.5), r), InputError);
  CHECK_THROWS_AS(FrictionSensitivity(W, one.q(), Eigen::VectorXd::Constant(1, -0.5), r),
                  InputError);
  Eigen::SparseMatrix<double> bad = W;
  bad.coeffRef(1, 1) = std::nan("");
  CHECK_THROWS_AS(FrictionSensitivity(bad, one.q(), one.mu(), r), InputError);
  CHECK_THROWS_AS(
      FrictionSensitivity(W, one.q(), one.mu(), r, Eigen::MatrixX2d::Constant(1, 2, -1.0)),
      InputError);
}

TEST_CASE("friction sensitivity: redundant contacts and bad input") {
  // Two identical contacts pressed together: W singular, the impulses split in least norm.
  Eigen::MatrixXd W(6, 6);
  W << Eigen::Matrix3d::Identity(), Eigen::Matrix3d::Identity(), Eigen::Matrix3d::Identity(),
      Eigen::Matrix3d::Identity();
  const Eigen::VectorXd q = (Eigen::VectorXd(6) << -1.0, 0.1, 0.0, -1.0, 0.1, 0.0).finished();
  const FrictionContactProblem problem(W.sparseView(), q, Eigen::Vector2d(0.5, 0.5));
  const Eigen::VectorXd r = (Eigen::VectorXd(6) << 0.5, -0.05, 0.0, 0.5, -0.05, 0.0).finished();
  REQUIRE(FclibError(problem, r) <= 1e-15);
  const FrictionSensitivity s(problem, r);
  CHECK(s.least_squares());
  FrictionSensitivity::Tangent d;
  d.q = (Eigen::VectorXd(6) << -1.0, 0.0, 0.0, -1.0, 0.0, 0.0).finished();
  const Eigen::VectorXd dr = s.Jvp(d);
  CHECK(dr[0] == doctest::Approx(0.5).epsilon(1e-10));
  CHECK(dr[3] == doctest::Approx(0.5).epsilon(1e-10));
  CHECK_THROWS_AS(FrictionSensitivity(problem, Eigen::VectorXd::Zero(5)), InputError);
  CHECK_THROWS_AS(
      FrictionSensitivity(problem, (Eigen::VectorXd(6) << 1.0, 2.0, 0, 0, 0, 0).finished()),
      InputError);  // outside the cone
  CHECK_THROWS_AS(s.Vjp(Eigen::VectorXd::Zero(2)), InputError);
  // A solver's r a little outside the cone (as FCLib error 1e-6 leaves it) is taken onto the
  // cone: the sliding contact's derivatives are those of the exact solution.
  const FrictionContactProblem sliding = OneContact(Eigen::Vector3d(-1.0, 2.0, 0.0), 0.5);
  const Eigen::Vector3d exact(1.0, -0.5, 0.0), off(1.0, -0.5 * (1.0 + 1e-5), 1e-6);
  const FrictionSensitivity at_exact(sliding, exact), at_off(sliding, off);
  CHECK(at_off.state(0) == State::Sliding);
  CHECK((at_off.Jacobian(FrictionSensitivity::Input::q) -
         at_exact.Jacobian(FrictionSensitivity::Input::q))
            .cwiseAbs()
            .maxCoeff() <= 1e-5);
}

}  // namespace
}  // namespace ncpkit

namespace ncpkit {
namespace {

Eigen::VectorXd SolveGlobal(const GlobalFrictionContactProblem& problem) {
  SolverOptions options;
  options.tolerance = 1e-13;
  Eigen::VectorXd r;
  const SolverSummary summary =
      CreateSolver("auto", ProblemKind::GlobalFriction, options)->Solve(problem, &r);
  REQUIRE_MESSAGE(summary.IsSolved(), summary.BriefReport());
  return r;
}

// A random perturbation of one kind of the global data: M's blocks (kept symmetric), H on its
// pattern, f, w or mu.
GlobalFrictionSensitivity::Tangent GlobalDirection(const test::RandomScene& scene, int kind,
                                                   std::mt19937_64* rng) {
  std::normal_distribution<double> normal;
  GlobalFrictionSensitivity::Tangent d;
  const int n = static_cast<int>(scene.f.size()), m = static_cast<int>(scene.w.size());
  auto random = [&](int size) {
    return Eigen::VectorXd::NullaryExpr(size, [&]() { return normal(*rng); });
  };
  switch (kind) {
    case 0:
      d.f = random(n);
      break;
    case 1:
      d.w = random(m);
      break;
    case 2:
      d.mu = random(m / 3);
      break;
    case 3: {
      d.H = scene.H;
      for (int k = 0; k < d.H.nonZeros(); ++k) d.H.valuePtr()[k] = normal(*rng);
      break;
    }
    default: {
      Eigen::SparseMatrix<double> B = scene.M;
      for (int k = 0; k < B.nonZeros(); ++k) B.valuePtr()[k] = 0.3 * normal(*rng);
      d.M = B + Eigen::SparseMatrix<double>(B.transpose());
      break;
    }
  }
  return d;
}

test::RandomScene Moved(test::RandomScene s, const GlobalFrictionSensitivity::Tangent& d,
                        double h) {
  if (d.f.size()) s.f += h * d.f;
  if (d.w.size()) s.w += h * d.w;
  if (d.mu.size()) s.mu += h * d.mu;
  if (d.H.nonZeros()) s.H += h * d.H;
  if (d.M.nonZeros()) s.M += h * d.M;
  return s;
}

TEST_CASE("global friction sensitivity: M, H, f, w and mu against central differences") {
  int checked = 0, changed = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    test::RandomScene scene = test::MakeScene(2 + seed % 4, 3, 0.4, seed);
    for (int a = 0; a < scene.mu.size(); ++a) scene.mu[a] = 0.2 + 0.1 * ((seed + a) % 5);
    const GlobalFrictionContactProblem problem = test::Make(scene);
    const Eigen::VectorXd r = SolveGlobal(problem);
    const GlobalFrictionSensitivity s(problem, r);
    std::mt19937_64 rng(seed);
    for (int kind = 0; kind < 5; ++kind) {
      const GlobalFrictionSensitivity::Tangent d = GlobalDirection(scene, kind, &rng);
      const double h = 1e-6;
      const GlobalFrictionContactProblem plus = test::Make(Moved(scene, d, h)),
                                         minus = test::Make(Moved(scene, d, -h));
      const Eigen::VectorXd r_plus = SolveGlobal(plus), r_minus = SolveGlobal(minus);
      const GlobalFrictionSensitivity s_plus(plus, r_plus), s_minus(minus, r_minus);
      bool same = s.degenerate().empty();
      for (int a = 0; a < s.local().num_contacts(); ++a)
        same = same && s_plus.local().state(a) == s.local().state(a) &&
               s_minus.local().state(a) == s.local().state(a);
      if (!same || s.local().least_squares()) {
        ++changed;
        continue;
      }
      ++checked;
      const Eigen::VectorXd dr = s.Jvp(d);
      CAPTURE(seed);
      CAPTURE(kind);
      CHECK(((r_plus - r_minus) / (2 * h) - dr).norm() <= 1e-5 * std::max(1.0, dr.norm()));
    }
  }
  MESSAGE(checked << " directions checked, " << changed << " skipped (a state changed)");
  CHECK(checked >= 40);
}

TEST_CASE("global friction sensitivity: <v, J w> = <J^T v, w> to rounding") {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const test::RandomScene scene = test::MakeScene(2 + seed % 5, 3, 0.5, seed + 20);
    const GlobalFrictionContactProblem problem = test::Make(scene);
    const GlobalFrictionSensitivity s(problem, SolveGlobal(problem));
    std::mt19937_64 rng(seed);
    GlobalFrictionSensitivity::Tangent w;
    for (int kind = 0; kind < 5; ++kind) {
      const GlobalFrictionSensitivity::Tangent d = GlobalDirection(scene, kind, &rng);
      if (d.f.size()) w.f = d.f;
      if (d.w.size()) w.w = d.w;
      if (d.mu.size()) w.mu = d.mu;
      if (d.H.nonZeros()) w.H = d.H;
      if (d.M.nonZeros()) w.M = d.M;
    }
    std::normal_distribution<double> normal;
    const Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(s.size(), [&]() { return normal(rng); });
    const double forward = v.dot(s.Jvp(w));
    const GlobalFrictionSensitivity::Gradient g = s.Vjp(v);
    const double backward = g.f.dot(w.f) + g.w.dot(w.w) + g.mu.dot(w.mu) +
                            (s.HGradient(g).array() * Eigen::MatrixXd(w.H).array()).sum() +
                            (s.MGradient(g).array() * Eigen::MatrixXd(w.M).array()).sum();
    CAPTURE(seed);
    CHECK(std::abs(forward - backward) <= 1e-11 * (1.0 + std::abs(forward)));
    // On the patterns: the same entries.
    const Eigen::MatrixXd on_H(s.HGradientOnPattern(g));
    CHECK(((on_H - s.HGradient(g)).array() * Eigen::MatrixXd(w.H).array()).abs().maxCoeff() <=
          1e-14);
  }
}

}  // namespace
}  // namespace ncpkit

namespace ncpkit {
namespace {

// The two sensitivities' products agree to rounding: Jvp for random changes of q and mu, Vjp
// for a random gradient, and the undetermined impulses span the same space.
void CheckSameSensitivity(const FrictionSensitivity& a, const FrictionSensitivity& b,
                          std::mt19937_64* rng) {
  REQUIRE(a.num_contacts() == b.num_contacts());
  for (int c = 0; c < a.num_contacts(); ++c) CHECK(a.state(c) == b.state(c));
  CHECK(a.degenerate() == b.degenerate());
  CHECK(a.least_squares() == b.least_squares());
  std::normal_distribution<double> normal;
  const auto random = [&](int size) {
    return Eigen::VectorXd::NullaryExpr(size, [&]() { return normal(*rng); });
  };
  FrictionSensitivity::Tangent t;
  t.q = random(a.size());
  t.mu = random(a.num_contacts());
  const Eigen::VectorXd da = a.Jvp(t), db = b.Jvp(t);
  CHECK((da - db).norm() <= 1e-9 * (1.0 + db.norm()));
  const Eigen::VectorXd g = random(a.size());
  const FrictionSensitivity::Gradient ga = a.Vjp(g), gb = b.Vjp(g);
  CHECK((ga.q - gb.q).norm() <= 1e-9 * (1.0 + gb.q.norm()));
  CHECK((ga.mu - gb.mu).norm() <= 1e-9 * (1.0 + gb.mu.norm()));
  const Eigen::MatrixXd na = a.UndeterminedImpulses(), nb = b.UndeterminedImpulses();
  REQUIRE(na.cols() == nb.cols());
  CHECK((na * na.transpose() - nb * nb.transpose()).norm() <= 1e-9);  // the same projector
}

// A random global problem whose solution r is known and sticks at every contact strictly inside
// its cone: f and w chosen so that u = H^T v + w = 0 for a random v.
struct StickingProblem {
  GlobalFrictionContactProblem problem;
  Eigen::VectorXd r;
};
StickingProblem RandomStickingProblem(int contacts, int bodies, unsigned seed) {
  test::RandomScene scene = test::MakeScene(contacts, bodies, 0.5, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  StickingProblem out;
  out.r.resize(3 * contacts);
  for (int a = 0; a < contacts; ++a) {
    const double rn = 1.0 + uniform(rng) * 0.5;
    out.r.segment<3>(3 * a) << rn, 0.3 * rn * uniform(rng), 0.3 * rn * uniform(rng);
  }
  const Eigen::VectorXd v =
      Eigen::VectorXd::NullaryExpr(scene.f.size(), [&] { return uniform(rng); });
  scene.f = scene.M * v - scene.H * out.r;
  scene.w = -Eigen::VectorXd(scene.H.transpose() * v);
  out.problem = test::Make(scene);
  return out;
}

TEST_CASE("friction sensitivity: from the global form's rows where every contact sticks") {
  // FrictionSensitivity(problem, r) factorizes a sticking group's selected system from its rows
  // (SelectedSystem::FactorizeFromRows) and forms W only otherwise; its products are W's.
  std::mt19937_64 rng(7);
  int from_rows = 0, with_w = 0, box_columns_from_rows = 0;
  const auto compare = [&](const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r) {
    const FrictionSensitivity global(problem, r);
    const FrictionSensitivity local(problem.Delassus(), problem.local_q(), problem.mu(), r);
    CheckSameSensitivity(global, local, &rng);
    bool formed = true;
    Eigen::MatrixXd by_w;
    try {
      by_w = global.Jacobian(FrictionSensitivity::Input::W);
    } catch (const InputError& e) {
      formed = false;
      CHECK(std::string(e.what()).find("did not form") != std::string::npos);
    }
    if (formed) CHECK(by_w.isApprox(local.Jacobian(FrictionSensitivity::Input::W)));
    ++(formed ? with_w : from_rows);
    return formed;
  };
  for (unsigned seed = 1; seed <= 12; ++seed) {
    // Random groups of 2 and 3 bodies with enough contacts to fix them (and some bodies in
    // none), and too few contacts for their velocities (the rows cannot have full column rank:
    // W's factorization).
    const StickingProblem enough = RandomStickingProblem(8 + seed % 5, 2 + seed % 2, seed);
    CAPTURE(seed);
    CHECK_FALSE(compare(enough.problem, enough.r));
    const StickingProblem few = RandomStickingProblem(3, 3, seed + 100);
    CHECK(compare(few.problem, few.r));
    // Box columns pushed below what friction holds and above (sliding). Where a contact slides
    // W is formed; where every contact sticks or is apart the rows are used unless they leave a
    // body free (a box lifted onto an edge, whose two corners do not fix its turn about it). Below
    // the limit the corners' shares are not unique, and a solver may leave a corner at its cone's
    // edge (taken as sliding).
    for (const int count : {1, 2}) {
      for (const double push : {0.3, 1.5}) {
        const GlobalFrictionContactProblem column = test::BoxColumn(count, seed, push);
        const Eigen::VectorXd r = SolveGlobal(column);
        CAPTURE(count);
        CAPTURE(push);
        const FrictionSensitivity states(column.Delassus(), column.local_q(), column.mu(), r);
        bool stick_or_apart = true;
        for (int a = 0; a < states.num_contacts(); ++a) {
          stick_or_apart =
              stick_or_apart && (states.state(a) == FrictionSensitivity::ContactState::Sticking ||
                                 states.state(a) == FrictionSensitivity::ContactState::Apart);
        }
        const bool formed = compare(column, r);
        if (!stick_or_apart) CHECK(formed);
        box_columns_from_rows += formed ? 0 : 1;
      }
    }
  }
  // Two contacts with the same rows on one body: six rows, rank three (A = J^T J singular):
  // W's factorization, the same pseudo-inverse.
  test::RandomScene twice = test::MakeScene(2, 2, 0.5, 99);
  Eigen::MatrixXd H = Eigen::MatrixXd(twice.H);
  H.col(3) = H.col(0);
  H.col(4) = H.col(1);
  H.col(5) = H.col(2);
  twice.H = H.sparseView();
  Eigen::VectorXd r(6), v = Eigen::VectorXd::LinSpaced(twice.f.size(), -0.5, 0.5);
  r << 1.0, 0.1, -0.1, 0.5, 0.05, 0.1;
  twice.f = twice.M * v - twice.H * r;
  twice.w = -Eigen::VectorXd(twice.H.transpose() * v);
  CHECK(compare(test::Make(twice), r));
  CHECK(box_columns_from_rows >= 12);  // of the 24 pushed below what friction holds
  // Bad impulses are refused as by the other constructors: a wrong size, a NaN, far outside a
  // cone.
  const StickingProblem good = RandomStickingProblem(9, 2, 5);
  CHECK_THROWS_WITH_AS(FrictionSensitivity(good.problem, Eigen::VectorXd(good.r.head(6))),
                       doctest::Contains("entries"), InputError);
  Eigen::VectorXd bad = good.r;
  bad[4] = std::nan("");
  CHECK_THROWS_WITH_AS(FrictionSensitivity(good.problem, bad), doctest::Contains("not finite"),
                       InputError);
  bad = good.r;
  bad[1] = 10.0 * bad[0];
  CHECK_THROWS_WITH_AS(FrictionSensitivity(good.problem, bad),
                       doctest::Contains("outside its cone"), InputError);
  MESSAGE(from_rows << " sensitivities from the rows (" << box_columns_from_rows
                    << " box columns), " << with_w << " with W");
}

TEST_CASE("friction sensitivity: from the rows with contacts apart, whose impulses stay zero") {
  // Sticking contacts beside apart ones (r = 0, u_N > 0): the rows' factorization takes each
  // apart contact's dr = 0 as its own equation. Where the sticking contacts' equations are
  // consistent (a change dq = W x: W's columns on the sticking rows lie in their rows' range), W's
  // least-norm solution is the same; for any change the apart impulses stay zero, and the
  // products are each other's transposes.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  int apart_seen = 0;
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const int nc = 10 + seed % 3;
    test::RandomScene scene = test::MakeScene(nc, 2, 0.5, seed + 200);
    std::mt19937 pick(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    Eigen::VectorXd r(3 * nc);
    std::vector<bool> apart(nc);
    for (int a = 0; a < nc; ++a) {
      apart[a] = a % 4 == 3;
      const double rn = apart[a] ? 0.0 : 1.0 + 0.5 * uniform(pick);
      r.segment<3>(3 * a) << rn, 0.3 * rn * uniform(pick), 0.3 * rn * uniform(pick);
    }
    const Eigen::VectorXd v =
        Eigen::VectorXd::NullaryExpr(scene.f.size(), [&] { return uniform(pick); });
    scene.f = scene.M * v - scene.H * r;
    scene.w = -Eigen::VectorXd(scene.H.transpose() * v);
    for (int a = 0; a < nc; ++a) {
      if (apart[a]) scene.w[3 * a] += 0.5;  // separating
    }
    const GlobalFrictionContactProblem problem = test::Make(scene);
    const FrictionSensitivity rows(problem, r);
    const FrictionSensitivity by_w(problem.Delassus(), problem.local_q(), problem.mu(), r);
    CAPTURE(seed);
    REQUIRE_THROWS_AS(rows.Jacobian(FrictionSensitivity::Input::W), InputError);
    for (int a = 0; a < nc; ++a) {
      CHECK(rows.state(a) == (apart[a] ? FrictionSensitivity::ContactState::Apart
                                       : FrictionSensitivity::ContactState::Sticking));
      CHECK(by_w.state(a) == rows.state(a));
      apart_seen += apart[a] ? 1 : 0;
    }
    CHECK(rows.least_squares() == by_w.least_squares());
    const auto random = [&](int size) {
      return Eigen::VectorXd::NullaryExpr(size, [&]() { return normal(rng); });
    };
    FrictionSensitivity::Tangent consistent;
    consistent.q = problem.Delassus() * random(3 * nc);
    const Eigen::VectorXd d_rows = rows.Jvp(consistent), d_w = by_w.Jvp(consistent);
    CHECK((d_rows - d_w).norm() <= 1e-9 * (1.0 + d_w.norm()));
    FrictionSensitivity::Tangent any;
    any.q = random(3 * nc);
    any.mu = random(nc);
    const Eigen::VectorXd dr = rows.Jvp(any);
    for (int a = 0; a < nc; ++a) {
      if (apart[a]) CHECK(dr.segment<3>(3 * a).isZero(0.0));
    }
    const Eigen::VectorXd g = random(3 * nc);
    const FrictionSensitivity::Gradient back = rows.Vjp(g);
    CHECK(std::abs(g.dot(dr) - back.q.dot(any.q) - back.mu.dot(any.mu)) <=
          1e-9 * (1.0 + std::abs(g.dot(dr))));
  }
  CHECK(apart_seen >= 20);
}

}  // namespace
}  // namespace ncpkit
