// The convex contact model and convex-newton: a contact's impulse and curvature against finite
// differences of its cost; solutions checked against the model's conditions computed here from W
// (not from the solver's own error); the local and global forms agree; the Coulomb problem's
// sticking solutions are the limit as the compliance vanishes, sliding ones are not (the
// relaxation); CHOLMOD's analysis is kept for the same pattern; bad input is refused.
#include "solvers/friction/convex_newton.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "solvers/friction/internal/convex_contact.h"
#include "solvers/registry/solver_registry.h"
#include "tests/solvers/friction_scenes.h"

namespace ncpkit {
namespace {

using internal::ConvexContactPoint;
using internal::ConvexContactState;
using internal::EvaluateConvexContact;

Eigen::MatrixXd DenseW(const GlobalFrictionContactProblem& problem, Eigen::VectorXd* q) {
  FrictionContactProblem local;
  problem.Reduce(&local);
  *q = local.q();
  return Eigen::MatrixXd(local.W_columns());
}

TEST_CASE(
    "convex model: a contact's impulse is minus its cost's gradient, its curvature the "
    "Hessian") {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int states[3] = {0, 0, 0};
  for (int trial = 0; trial < 400; ++trial) {
    CAPTURE(trial);
    const double mu = trial % 10 == 0 ? 0.0 : 1.2 * uniform(rng);
    const double rn = std::exp(3.0 * normal(rng)), rt = std::exp(3.0 * normal(rng));
    const Eigen::Vector3d u(normal(rng), normal(rng), normal(rng));
    const ConvexContactPoint point = EvaluateConvexContact(mu, rn, rt, u);
    ++states[static_cast<int>(point.state)];
    // The impulse lies in the cone.
    CHECK(point.impulse[0] >= 0.0);
    CHECK(point.impulse.tail<2>().norm() <= mu * point.impulse[0] * (1.0 + 1e-12) + 1e-300);
    // Central differences of the cost and of the impulse.
    const double step = 1e-6 * (1.0 + u.norm());
    Eigen::Vector3d gradient;
    Eigen::Matrix3d hessian;
    bool same_state = true;
    for (int i = 0; i < 3; ++i) {
      Eigen::Vector3d up = u, down = u;
      up[i] += step;
      down[i] -= step;
      const ConvexContactPoint plus = EvaluateConvexContact(mu, rn, rt, up);
      const ConvexContactPoint minus = EvaluateConvexContact(mu, rn, rt, down);
      same_state = same_state && plus.state == point.state && minus.state == point.state;
      gradient[i] = (plus.cost - minus.cost) / (2.0 * step);
      hessian.col(i) = -(plus.impulse - minus.impulse) / (2.0 * step);
    }
    const double g_scale = 1e-6 * (1.0 + point.impulse.norm());
    CHECK((gradient + point.impulse).norm() <= g_scale * (1.0 + point.curvature.norm()));
    if (same_state) {  // the Hessian only away from the kinks between the three pieces
      CHECK((hessian - point.curvature).norm() <= 1e-5 * (1.0 + point.curvature.norm()));
    }
    CHECK((point.curvature - point.curvature.transpose()).norm() <=
          1e-12 * (1.0 + point.curvature.norm()));
    CHECK(
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(point.curvature).eigenvalues().minCoeff() >=
        -1e-12 * (1.0 + point.curvature.norm()));
    // The line search's products: g . d and d^T G d, without G.
    const Eigen::Vector3d d(normal(rng), normal(rng), normal(rng));
    double along_curvature = 0.0;
    const double along = internal::ConvexContactAlong(internal::ConvexContactScales(mu, rn, rt), u,
                                                      d, &along_curvature);
    CHECK(along == doctest::Approx(point.impulse.dot(d)).epsilon(1e-10).scale(1e-300));
    CHECK(along_curvature ==
          doctest::Approx(d.dot(point.curvature * d)).epsilon(1e-10).scale(1e-300));
  }
  // Every piece was met.
  CHECK(states[0] > 20);
  CHECK(states[1] > 20);
  CHECK(states[2] > 20);
}

TEST_CASE("convex-newton: random global problems solved, the model's conditions checked from W") {
  for (const int block : {6, 3}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      CAPTURE(block);
      CAPTURE(seed);
      const test::RandomScene scene = test::MakeScene(12, 5, 0.1 + 0.05 * seed, seed, block);
      const GlobalFrictionContactProblem problem = test::Make(scene);
      ConvexNewton::Options options;
      options.tolerance = 1e-10;
      ConvexNewton solver(options);
      Eigen::VectorXd r;
      const ConvexNewton::Summary& summary = solver.Solve(problem, &r);
      REQUIRE(summary.IsSolved());
      CHECK(summary.natural_residual <= 1e-10);
      CHECK(summary.iterations <= 40);
      Eigen::VectorXd q;
      const Eigen::MatrixXd W = DenseW(problem, &q);
      CHECK(test::ConvexModelViolationsOf(W, q, problem.mu(), solver.Compliances(problem), r)
                .Largest() <= 1e-9);
      CHECK(solver.ModelError(problem, r) ==
            doctest::Approx(summary.natural_residual).epsilon(1e-6));
      // The local form of the same problem: the same impulses (the model's solution is unique).
      FrictionContactProblem local;
      problem.Reduce(&local);
      Eigen::VectorXd r_local;
      const ConvexNewton::Summary& local_summary = solver.Solve(local, &r_local);
      REQUIRE(local_summary.IsSolved());
      CHECK((r_local - r).norm() <= 1e-7 * (1.0 + r.norm()));
    }
  }
}

TEST_CASE(
    "convex-newton: Coulomb's sticking solutions are its limit as the compliance vanishes, "
    "sliding ones are not") {
  // One box or two on the ground, held (push 0, 0.5) or pushed to slide (push 3): as both
  // compliances shrink by 100, the Coulomb problem's FCLib error of the model's impulses shrinks
  // with them where every contact sticks; sliding, it stays: the relaxed cone lifts a sliding
  // contact by mu ||u_T|| (Anitescu's relaxation).
  for (const int count : {1, 2}) {
    for (unsigned seed = 1; seed <= 10; ++seed) {
      for (const double push : {0.0, 0.5, 3.0}) {
        CAPTURE(count);
        CAPTURE(seed);
        CAPTURE(push);
        const GlobalFrictionContactProblem problem = test::BoxColumn(count, seed, push);
        double errors[3];
        int index = 0;
        for (const double regularization : {1e-2, 1e-4, 1e-6}) {
          ConvexNewton::Options options;
          options.tolerance = 1e-10;  // at 1e-6 the rounding floor is near 1e-11
          options.normal_regularization = options.tangential_regularization = regularization;
          ConvexNewton solver(options);
          Eigen::VectorXd r;
          const ConvexNewton::Summary& summary = solver.Solve(problem, &r);
          REQUIRE(summary.IsSolved());
          errors[index++] = summary.coulomb_error;
        }
        if (push < 1.0) {
          CHECK(errors[1] <= 0.05 * errors[0]);
          CHECK(errors[2] <= 1e-6);
        } else {
          CHECK(errors[2] >= 1e-3);
        }
      }
    }
  }
}

TEST_CASE("convex-newton: the sparse factorizations keep their analysis for the same pattern") {
  // Above kDenseDofs: ten rigid bodies (6 x 6 blocks: the block factorization) and twenty
  // 3-row blocks (CHOLMOD). Each analyzes the first problem and no other of the same pattern,
  // and both solve to the model's conditions.
  for (const int block : {6, 3}) {
    CAPTURE(block);
    const int bodies = 60 / block;
    const test::RandomScene scene = test::MakeScene(30, bodies, 0.5, 3, block);
    const GlobalFrictionContactProblem problem = test::Make(scene);
    REQUIRE(problem.num_dofs() > ConvexNewton::kDenseDofs);
    ConvexNewton solver;
    Eigen::VectorXd r;
    const ConvexNewton::Summary& first = solver.Solve(problem, &r);
    CHECK(first.IsSolved());
    CHECK(first.symbolic_analyses == 1);
    Eigen::VectorXd q;
    const Eigen::MatrixXd W = DenseW(problem, &q);
    CHECK(test::ConvexModelViolationsOf(W, q, problem.mu(), solver.Compliances(problem), r)
              .Largest() <= 1e-7);
    CHECK(solver.Solve(problem, &r).symbolic_analyses == 0);
    const test::RandomScene other = test::MakeScene(30, bodies, 0.5, 4, block);  // other pairs
    const GlobalFrictionContactProblem moved = test::Make(other);
    const ConvexNewton::Summary& summary = solver.Solve(moved, &r);
    CHECK(summary.IsSolved());
    CHECK(summary.symbolic_analyses == 1);
    // Warm started from its own solution (v = M^-1 (H r + f), whose impulses are r to the
    // tolerance): solved within one iteration.
    ConvexNewton::Options options;
    options.warm_start = true;
    ConvexNewton warm(options);
    const ConvexNewton::Summary& again = warm.Solve(moved, &r);
    CHECK(again.IsSolved());
    CHECK(again.iterations <= 1);
  }
}

TEST_CASE("convex-newton: bad input is refused with a reason") {
  ConvexNewton::Options options;
  options.tangential_regularization = 0.0;
  ConvexNewton bad(options);
  const GlobalFrictionContactProblem problem = test::BoxColumn(1, 1, 0.0);
  Eigen::VectorXd r;
  const ConvexNewton::Summary& refused = bad.Solve(problem, &r);
  CHECK(refused.status == Status::InvalidInput);
  CHECK(refused.message.find("tangential_regularization") != std::string::npos);
  // A local problem with a W that is not symmetric.
  Eigen::SparseMatrix<double> W(3, 3);
  W.insert(0, 0) = 2.0;
  W.insert(1, 1) = 2.0;
  W.insert(2, 2) = 2.0;
  W.insert(0, 1) = 0.5;
  const FrictionContactProblem local(W, Eigen::Vector3d(-1.0, 0.1, 0.0),
                                     Eigen::VectorXd::Constant(1, 0.3));
  ConvexNewton solver;
  const ConvexNewton::Summary& summary = solver.Solve(local, &r);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("symmetric") != std::string::npos);
}

TEST_CASE("convex-newton in the registry: both forms, for the convex model only") {
  const SolverEntry* entry = FindSolver("convex-newton");
  REQUIRE(entry != nullptr);
  CHECK(entry->convex_model);
  CHECK(entry->Takes(ProblemKind::Friction));
  CHECK(entry->Takes(ProblemKind::GlobalFriction));
  // Not in the Coulomb comparisons: its error is another problem's.
  CHECK_FALSE(entry->Compared(ProblemKind::Friction));
  SolverOptions settings;
  settings.tolerance = 1e-9;
  const std::unique_ptr<ComplementaritySolver> solver =
      CreateSolver("convex-newton", ProblemKind::GlobalFriction, settings);
  const GlobalFrictionContactProblem problem = test::BoxColumn(2, 5, 0.5);
  Eigen::VectorXd r;
  const SolverSummary& summary = solver->Solve(problem, &r);
  CHECK(summary.IsSolved());
  CHECK(summary.natural_residual <= 1e-9);
  CHECK(dynamic_cast<const ConvexNewton::Summary*>(&summary) != nullptr);
}

}  // namespace
}  // namespace ncpkit
