// The frictional contact solvers on constructed problems: exact answers, agreement, options,
// non-finite starts, and the registry's contract for the new problem kind.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "solvers/friction_auto.h"
#include "solvers/friction_newton.h"
#include "solvers/friction_problem.h"
#include "solvers/input_error.h"
#include "solvers/nonsmooth_gauss_seidel.h"
#include "solvers/solver_registry.h"

namespace ncpkit {
namespace {

// W = J M^-1 J^T + eps I for random contact Jacobians J between `bodies` 6-dof bodies (each
// contact couples two of them), q random with mostly compressive normals.
FrictionContactProblem RandomContactProblem(int nc, int bodies, double mu, double eps,
                                            unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> body(0, bodies - 1);
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(3 * nc, 6 * bodies);
  for (int a = 0; a < nc; ++a) {
    const int b1 = body(rng), b2 = (b1 + 1 + body(rng) % (bodies - 1)) % bodies;
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 6; ++k) {
        J(3 * a + i, 6 * b1 + k) = normal(rng);
        J(3 * a + i, 6 * b2 + k) = -normal(rng);
      }
  }
  const Eigen::MatrixXd W = J * J.transpose() + eps * Eigen::MatrixXd::Identity(3 * nc, 3 * nc);
  Eigen::VectorXd q(3 * nc);
  for (int a = 0; a < nc; ++a) {
    q[3 * a] = normal(rng) - 0.5;
    q[3 * a + 1] = normal(rng);
    q[3 * a + 2] = normal(rng);
  }
  FrictionContactProblem problem(W.sparseView(), q, Eigen::VectorXd::Constant(nc, mu));
  problem.name = "random";
  return problem;
}

const char* const kFrictionSolvers[] = {"nsgs", "nsgs-shuffled", "fc-newton", "fc-proximal",
                                        "auto"};

TEST_CASE("every friction solver is in the registry and takes that kind only") {
  const std::vector<std::string> names = SolverNames(ProblemKind::Friction);
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    CHECK(IsSolverName(name, ProblemKind::Friction));
  }
  CHECK(names.size() == 5);
  CHECK_THROWS_AS(CreateSolver("nsgs", ProblemKind::Linear, SolverOptions()), InputError);
  CHECK_THROWS_AS(CreateSolver("lemke", ProblemKind::Friction, SolverOptions()), InputError);
  // A solver reached through the base interface with a kind it does not take reports it.
  const FrictionContactProblem problem = RandomContactProblem(2, 3, 0.3, 0.1, 1);
  Eigen::VectorXd r;
  const std::unique_ptr<ComplementaritySolver> solver_object =
      CreateSolver("lemke", ProblemKind::Linear, SolverOptions());
  const SolverSummary& summary = solver_object->Solve(problem, &r);
  CHECK(summary.status == Status::InvalidInput);
  CHECK(summary.message.find("frictional contact") != std::string::npos);
}

TEST_CASE("decoupled contacts: one sweep of NSGS is exact, and every solver agrees") {
  // Block-diagonal W: each contact is its own problem; one of each kind.
  Eigen::MatrixXd W = Eigen::MatrixXd::Zero(9, 9);
  const Eigen::Matrix3d block =
      (Eigen::Matrix3d() << 2.0, 0.2, -0.1, 0.2, 1.5, 0.1, -0.1, 0.1, 1.2).finished();
  for (int a = 0; a < 3; ++a) W.block<3, 3>(3 * a, 3 * a) = block;
  const double mu = 0.5;
  Eigen::VectorXd q(9);
  q << 0.4, 1.0, -2.0,  // take-off
      -1.0, 0.05, 0.0,  // sticking
      -1.0, 3.0, 1.0;   // sliding
  const FrictionContactProblem problem(W.sparseView(), q, Eigen::Vector3d::Constant(mu));
  NonsmoothGaussSeidel nsgs;
  Eigen::VectorXd r;
  const NonsmoothGaussSeidel::Summary summary = nsgs.Solve(problem, &r);
  CHECK(summary.IsSolved());
  CHECK(summary.iterations == 1);
  CHECK(summary.natural_residual <= 1e-15);
  CHECK(summary.take_off == 1);
  CHECK(summary.sticking == 1);
  CHECK(summary.sliding == 1);
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    SolverOptions options;
    options.tolerance = 1e-12;
    Eigen::VectorXd x;
    const std::unique_ptr<ComplementaritySolver> solver_object =
        CreateSolver(name, ProblemKind::Friction, options);
    const SolverSummary& s = solver_object->Solve(problem, &x);
    CHECK(s.IsSolved());
    CHECK(FclibError(problem, x) <= 1e-12);
    CHECK((x - r).norm() <= 1e-9 * r.norm());
  }
}

TEST_CASE("random well-posed problems: every solver converges and they agree") {
  for (unsigned seed = 0; seed < 10; ++seed) {
    CAPTURE(seed);
    const FrictionContactProblem problem = RandomContactProblem(12, 6, 0.3, 0.5, seed);
    Eigen::VectorXd reference;
    for (const char* name : kFrictionSolvers) {
      CAPTURE(name);
      SolverOptions options;
      options.tolerance = 1e-10;
      Eigen::VectorXd r;
      const std::unique_ptr<ComplementaritySolver> solver_object =
          CreateSolver(name, ProblemKind::Friction, options);
      const SolverSummary& s = solver_object->Solve(problem, &r);
      CAPTURE(s.message);
      CHECK(s.IsSolved());
      CHECK(FclibError(problem, r) == doctest::Approx(s.natural_residual));
      CHECK(s.natural_residual <= 1e-10);
      if (reference.size() == 0) {
        reference = r;
      } else {
        CHECK((r - reference).norm() <= 1e-6 * (1.0 + reference.norm()));
      }
    }
  }
}

TEST_CASE("friction solvers: invalid options, non-finite starts, no contacts") {
  const FrictionContactProblem problem = RandomContactProblem(4, 3, 0.4, 0.2, 3);
  Eigen::VectorXd r;
  NonsmoothGaussSeidel nsgs;
  nsgs.mutable_options().relaxation = 2.5;
  CHECK(nsgs.Solve(problem, &r).status == Status::InvalidInput);
  FrictionNewton newton;
  newton.mutable_options().tolerance = -1.0;
  CHECK(newton.Solve(problem, &r).status == Status::InvalidInput);
  newton.mutable_options().tolerance = 1e-8;
  CHECK(newton.SolveShifted(problem, -1.0, r, &r).status == Status::InvalidInput);
  FrictionProximalPoint proximal;
  proximal.mutable_options().sigma_scale = 0.0;
  CHECK(proximal.Solve(problem, &r).status == Status::InvalidInput);
  SolverOptions options;
  options.time_limit_seconds = -1.0;
  CHECK_THROWS_AS(CreateSolver("nsgs", ProblemKind::Friction, options), InputError);

  // A warm start holding NaN is not used: the solvers start from r = 0.
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    SolverOptions warm;
    warm.warm_start = true;
    Eigen::VectorXd x = Eigen::VectorXd::Constant(problem.size(), std::nan(""));
    const std::unique_ptr<ComplementaritySolver> solver_object =
        CreateSolver(name, ProblemKind::Friction, warm);
    const SolverSummary& s = solver_object->Solve(problem, &x);
    CHECK(s.IsSolved());
    CHECK(x.allFinite());
  }
  // No contacts: solved at once.
  const FrictionContactProblem empty(Eigen::SparseMatrix<double>(0, 0), Eigen::VectorXd(0),
                                     Eigen::VectorXd(0));
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    Eigen::VectorXd x;
    CHECK(CreateSolver(name, ProblemKind::Friction, SolverOptions())->Solve(empty, &x).IsSolved());
  }
}

TEST_CASE("a warm start at the solution needs no work") {
  const FrictionContactProblem problem = RandomContactProblem(8, 4, 0.5, 0.3, 5);
  FrictionNewton newton;
  Eigen::VectorXd r;
  REQUIRE(newton.Solve(problem, &r).IsSolved());
  NonsmoothGaussSeidel nsgs;
  nsgs.mutable_options().warm_start = true;
  const NonsmoothGaussSeidel::Summary s = nsgs.Solve(problem, &r);
  CHECK(s.IsSolved());
  CHECK(s.iterations == 0);
}

}  // namespace
}  // namespace ncpkit
