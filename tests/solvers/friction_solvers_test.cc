// The frictional contact solvers on constructed problems: exact answers, agreement, options,
// non-finite starts, and the registry's contract for the new problem kind.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "solvers/base/input_error.h"
#include "solvers/friction/friction_auto.h"
#include "solvers/friction/friction_newton.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/friction/internal/friction_functions.h"
#include "solvers/friction/nonsmooth_gauss_seidel.h"
#include "solvers/registry/solver_registry.h"

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

const char* const kFrictionSolvers[] = {"nsgs",           "nsgs-shuffled", "nsgs-anderson",
                                        "fc-newton",      "fc-newton-fb",  "fc-proximal",
                                        "fc-proximal-fb", "auto"};

TEST_CASE("every friction solver is in the registry and takes that kind only") {
  const std::vector<std::string> names = SolverNames(ProblemKind::Friction);
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    CHECK(IsSolverName(name, ProblemKind::Friction));
  }
  CHECK(names.size() == 8);
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

TEST_CASE("a kept solver's second solve reports afresh, not on top of the first") {
  // The solvers keep their summary from one solve to the next (its strings' storage): every
  // field must still describe the latest solve alone, e.g. auto's path of attempts.
  const FrictionContactProblem problem = RandomContactProblem(12, 6, 0.3, 0.5, 3);
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    SolverOptions options;
    options.tolerance = 1e-10;
    const std::unique_ptr<ComplementaritySolver> solver =
        CreateSolver(name, ProblemKind::Friction, options);
    Eigen::VectorXd r;
    const std::string first = solver->Solve(problem, &r).FullReport();
    r.resize(0);
    const std::string second = solver->Solve(problem, &r).FullReport();
    // The reports differ only in their wall time line.
    const auto without_time = [](const std::string& report) {
      std::string kept;
      std::istringstream lines(report);
      for (std::string line; std::getline(lines, line);) {
        if (line.find("time") == std::string::npos) kept += line + "\n";
      }
      return kept;
    };
    CHECK(without_time(first) == without_time(second));
    CHECK(!without_time(first).empty());
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

TEST_CASE("ellipsoidal friction through the tangential scaling: the ellipsoidal law holds") {
  // Two coupled contacts, scales (e_t, e_o) = (1, 0.25) and (2, 0.5): a sliding contact keeps
  // its reaction on the ellipse and slips along -E^-2 r_T.
  const FrictionContactProblem problem = RandomContactProblem(6, 3, 0.6, 0.5, 21);
  Eigen::MatrixX2d scales(6, 2);
  for (int a = 0; a < 6; ++a) scales.row(a) << 1.0 + a % 2, 0.25 + 0.25 * (a % 2);
  const FrictionContactProblem scaled = WithTangentialScaling(problem, scales);
  for (const char* name : kFrictionSolvers) {
    CAPTURE(name);
    SolverOptions options;
    options.tolerance = 1e-12;
    Eigen::VectorXd scaled_r;
    const std::unique_ptr<ComplementaritySolver> solver =
        CreateSolver(name, ProblemKind::Friction, options);
    REQUIRE(solver->Solve(scaled, &scaled_r).IsSolved());
    const Eigen::VectorXd r = UnscaleReactions(scales, scaled_r);
    Eigen::VectorXd u;
    problem.Velocity(r, &u);
    int sliding = 0;
    for (int a = 0; a < 6; ++a) {
      const double mu = problem.mu()[a], et = scales(a, 0), eo = scales(a, 1);
      const double rn = r[3 * a], ellipse = std::hypot(r[3 * a + 1] / et, r[3 * a + 2] / eo);
      CHECK(ellipse <= mu * rn + 1e-10);  // inside the ellipsoidal cone
      if (rn > 1e-8 && std::hypot(u[3 * a + 1], u[3 * a + 2]) > 1e-8) {
        ++sliding;
        CHECK(std::abs(u[3 * a]) <= 1e-9);
        CHECK(ellipse == doctest::Approx(mu * rn).epsilon(1e-8));
        // u_T parallel to -(r_t / e_t^2, r_o / e_o^2).
        const Eigen::Vector2d direction(r[3 * a + 1] / (et * et), r[3 * a + 2] / (eo * eo));
        const Eigen::Vector2d slip(u[3 * a + 1], u[3 * a + 2]);
        CHECK(slip.dot(direction) < 0.0);
        CHECK(std::abs(slip[0] * direction[1] - slip[1] * direction[0]) <=
              1e-8 * slip.norm() * direction.norm());
      }
    }
    CHECK(sliding >= 1);
  }
  CHECK_THROWS_AS(WithTangentialScaling(problem, Eigen::MatrixX2d::Ones(5, 2)), InputError);
  CHECK_THROWS_AS(WithTangentialScaling(problem, Eigen::MatrixX2d::Zero(6, 2)), InputError);
}

// Central differences of a contact function in r and u.
template <class Function>
void FiniteDifferences(Function phi, const Eigen::Vector3d& r, const Eigen::Vector3d& u,
                       Eigen::Matrix3d* A, Eigen::Matrix3d* B) {
  const double h = 1e-7;
  for (int k = 0; k < 3; ++k) {
    Eigen::Vector3d e = Eigen::Vector3d::Zero();
    e[k] = h;
    A->col(k) = (phi(r + e, u) - phi(r - e, u)) / (2 * h);
    B->col(k) = (phi(r, u + e) - phi(r, u - e)) / (2 * h);
  }
}

TEST_CASE("the contact functions' Jacobians agree with finite differences away from kinks") {
  std::mt19937 rng(9);
  std::normal_distribution<double> normal;
  int checked_ac = 0, checked_fb = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const double mu = trial % 10 == 0 ? 0.0 : 0.2 + 0.1 * (trial % 7);
    const double rho = 0.5 + 0.1 * (trial % 5);
    const Eigen::Vector3d r(normal(rng), normal(rng), normal(rng));
    const Eigen::Vector3d u(normal(rng), normal(rng), normal(rng));
    CAPTURE(trial);
    // Alart-Curnier: skip points within 1e-4 of a switch of its max or projection.
    const double x_normal = r[0] - rho * u[0];
    const double radius = mu * std::max(0.0, x_normal);
    const double y = (r.tail<2>() - rho * u.tail<2>()).norm();
    if (std::abs(x_normal) > 1e-4 && std::abs(y - radius) > 1e-4) {
      Eigen::Vector3d value;
      Eigen::Matrix3d A, B, A_fd, B_fd;
      internal::AlartCurnierContact(mu, rho, r, u, &value, &A, &B);
      FiniteDifferences(
          [&](const Eigen::Vector3d& rr, const Eigen::Vector3d& uu) {
            Eigen::Vector3d v;
            Eigen::Matrix3d a, b;
            internal::AlartCurnierContact(mu, rho, rr, uu, &v, &a, &b);
            return v;
          },
          r, u, &A_fd, &B_fd);
      CHECK((A - A_fd).norm() <= 1e-6 * (1.0 + A.norm()));
      CHECK((B - B_fd).norm() <= 1e-6 * (1.0 + B.norm()));
      ++checked_ac;
    }
    // Fischer-Burmeister: the Jet derivative of the smoothed function against differences of
    // the exact one (smooth wherever u_T != 0 and the smaller spectral value of z is positive),
    // at both ends of the smoothing the Newton iteration uses.
    Eigen::Matrix3d A_fd, B_fd;
    FiniteDifferences(
        [&](const Eigen::Vector3d& rr, const Eigen::Vector3d& uu) {
          return internal::FischerBurmeisterSoc<double>(mu, rho, rr, uu, 0.0);
        },
        r, u, &A_fd, &B_fd);
    for (const double smoothing : {1e-6, 1e-7}) {
      Eigen::Vector3d value;
      Eigen::Matrix3d A, B;
      internal::FischerBurmeisterContact(mu, rho, r, u, smoothing, &value, &A, &B);
      CHECK((value - internal::FischerBurmeisterSoc<double>(mu, rho, r, u, 0.0)).norm() == 0.0);
      CHECK((A - A_fd).norm() <= 1e-4 * (1.0 + A.norm()));
      CHECK((B - B_fd).norm() <= 1e-4 * (1.0 + B.norm()));
    }
    ++checked_fb;
  }
  CHECK(checked_ac > 300);
  CHECK(checked_fb == 400);
}

TEST_CASE("the FB function of the cone vanishes exactly at solutions of each kind") {
  const double mu = 0.5, rho = 0.8;
  // Sticking (u = 0, r inside), sliding (r on the boundary, u_N = 0, u_T = -2 r_T), take-off.
  const Eigen::Vector3d stick_r(1.0, 0.2, -0.1), slide_r(1.0, 0.3, 0.4);
  const Eigen::Vector3d slide_u(0.0, -0.6, -0.8);
  const auto phi = [&](const Eigen::Vector3d& r, const Eigen::Vector3d& u) {
    return internal::FischerBurmeisterSoc<double>(mu, rho, r, u, 0.0).norm();
  };
  CHECK(phi(stick_r, Eigen::Vector3d::Zero()) <= 1e-15);
  CHECK(phi(slide_r, slide_u) <= 1e-14);
  CHECK(phi(Eigen::Vector3d::Zero(), Eigen::Vector3d(0.5, 1.0, -2.0)) <= 1e-15);
  CHECK(phi(slide_r, Eigen::Vector3d(0.0, 0.6, 0.8)) > 0.1);  // slip along the force
  CHECK(phi(Eigen::Vector3d(1.0, 0.6, 0.0), Eigen::Vector3d::Zero()) > 0.01);  // outside the cone
}

TEST_CASE("the FB function keeps its accuracy at the stick-slip edge") {
  // Near a sliding solution (r on the cone's boundary, u_N = 0, u_T against r_T) with slips of
  // 1e-12 to 1e-8 the two spectral values of x o x + y o y nearly coincide, and z0 - |z_bar|
  // would cancel to rounding (its square root wrong by 1e-8 of the scale, which stalls Newton
  // methods on islands whose contacts slide at such speeds). Against the same function in long
  // double, the function in double must be right to rounding.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 2000; ++trial) {
    const double mu = 0.1 + 0.9 * unit(rng), rho = 0.5 + unit(rng), r_n = 0.5 + 1.5 * unit(rng);
    const double angle = 6.283185307179586 * unit(rng);
    const double slip = std::pow(10.0, -12.0 + 4.0 * unit(rng));
    const Eigen::Vector2d e(std::cos(angle), std::sin(angle));
    const double inside = trial % 2 == 0 ? 0.0 : 1e-12 * unit(rng);
    const Eigen::Vector3d r(r_n, (1.0 - inside) * mu * r_n * e[0],
                            (1.0 - inside) * mu * r_n * e[1]);
    const Eigen::Vector3d u(1e-12 * (unit(rng) - 0.5), -slip * e[0], -slip * e[1]);
    const Eigen::Vector3d phi = internal::FischerBurmeisterSoc<double>(mu, rho, r, u, 0.0);
    const Eigen::Matrix<long double, 3, 1> phi_long = internal::FischerBurmeisterSoc<long double>(
        mu, rho, r.cast<long double>(), u.cast<long double>(), 0.0);
    worst = std::max(worst, (phi - phi_long.cast<double>()).norm() / r.norm());
  }
  CHECK(worst <= 1e-14);
}

}  // namespace
}  // namespace ncpkit
