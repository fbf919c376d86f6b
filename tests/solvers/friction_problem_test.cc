// The frictional contact problem: validation, the cone projection, the error measure, and the
// exact single-contact solver against closed forms.
#include "solvers/friction/friction_problem.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "solvers/base/input_error.h"
#include "solvers/friction/single_contact.h"

namespace ncpkit {
namespace {

Eigen::SparseMatrix<double> Sparse(const Eigen::MatrixXd& dense) { return dense.sparseView(); }

// A random symmetric positive definite matrix of size n.
Eigen::MatrixXd RandomSpd(int n, std::mt19937* rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = normal(*rng);
  return A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
}

// FORMAT.md §5 written out term by term, as the reference for the library's error.
double DirectFclibError(const Eigen::MatrixXd& W, const Eigen::VectorXd& q,
                        const Eigen::VectorXd& mu, const Eigen::VectorXd& r) {
  const Eigen::VectorXd u = W * r + q;
  double sum = 0.0;
  for (int a = 0; a < mu.size(); ++a) {
    const double m = mu[a];
    const double ut = std::sqrt(u[3 * a + 1] * u[3 * a + 1] + u[3 * a + 2] * u[3 * a + 2]);
    double x[3] = {r[3 * a] - (u[3 * a] + m * ut), r[3 * a + 1] - u[3 * a + 1],
                   r[3 * a + 2] - u[3 * a + 2]};
    const double xt = std::sqrt(x[1] * x[1] + x[2] * x[2]);
    double p[3];
    if (xt <= m * x[0]) {
      p[0] = x[0], p[1] = x[1], p[2] = x[2];
    } else if (m * xt <= -x[0]) {
      p[0] = p[1] = p[2] = 0.0;
    } else {
      p[0] = (m * xt + x[0]) / (1 + m * m);
      p[1] = m * p[0] * x[1] / xt;
      p[2] = m * p[0] * x[2] / xt;
    }
    for (int k = 0; k < 3; ++k) sum += (r[3 * a + k] - p[k]) * (r[3 * a + k] - p[k]);
  }
  return std::sqrt(sum) / (1.0 + q.norm());
}

TEST_CASE("a frictional contact problem checks its sizes and values") {
  const Eigen::MatrixXd W = Eigen::MatrixXd::Identity(6, 6);
  CHECK_NOTHROW(
      FrictionContactProblem(Sparse(W), Eigen::VectorXd::Zero(6), Eigen::VectorXd::Ones(2)));
  CHECK_THROWS_AS(
      FrictionContactProblem(Sparse(W), Eigen::VectorXd::Zero(6), Eigen::VectorXd::Ones(3)),
      InputError);
  CHECK_THROWS_AS(FrictionContactProblem(Sparse(Eigen::MatrixXd::Identity(5, 5)),
                                         Eigen::VectorXd::Zero(5), Eigen::VectorXd::Ones(2)),
                  InputError);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(6);
  q[4] = std::nan("");
  CHECK_THROWS_WITH_AS(FrictionContactProblem(Sparse(W), q, Eigen::VectorXd::Ones(2)),
                       doctest::Contains("q(4)"), InputError);
  CHECK_THROWS_WITH_AS(
      FrictionContactProblem(Sparse(W), Eigen::VectorXd::Zero(6), Eigen::Vector2d(0.5, -0.1)),
      doctest::Contains("mu(1)"), InputError);
  Eigen::MatrixXd bad = W;
  bad(2, 3) = INFINITY;
  CHECK_THROWS_WITH_AS(
      FrictionContactProblem(Sparse(bad), Eigen::VectorXd::Zero(6), Eigen::VectorXd::Ones(2)),
      doctest::Contains("W(2,3)"), InputError);
}

TEST_CASE("Assign poses the same problem as the constructor, in reused storage") {
  // A non-symmetric W with an explicit zero, then a smaller one, then an invalid one.
  std::mt19937 random(7);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  FrictionContactProblem assigned;
  for (int nc : {3, 2}) {
    Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(3 * nc, 3 * nc);
    for (int i = 0; i < 3 * nc; ++i)
      for (int j = 0; j < 3 * nc; ++j)
        if ((i + 2 * j) % 3 != 0) dense(i, j) = value(random);
    Eigen::SparseMatrix<double> W = dense.sparseView();
    W.coeffRef(0, 0) = 0.0;
    const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(3 * nc, -1.0, 1.0);
    const Eigen::VectorXd mu = Eigen::VectorXd::Constant(nc, 0.3);
    const FrictionContactProblem constructed(W, q, mu);
    assigned.Assign(W, q, mu);
    CHECK(assigned.num_contacts() == nc);
    CHECK(Eigen::MatrixXd(assigned.W()) == Eigen::MatrixXd(constructed.W()));
    CHECK(Eigen::MatrixXd(assigned.W_columns()) == dense);
    CHECK(assigned.W().nonZeros() == constructed.W().nonZeros());
    CHECK(assigned.q() == q);
    CHECK(assigned.mu() == mu);
    const Eigen::VectorXd r = Eigen::VectorXd::LinSpaced(3 * nc, 0.5, 2.0);
    Eigen::VectorXd u1, u2;
    assigned.Velocity(r, &u1);
    constructed.Velocity(r, &u2);
    CHECK((u1 - u2).norm() == 0.0);
  }
  Eigen::SparseMatrix<double> W(3, 3);
  W.insert(1, 2) = std::nan("");
  CHECK_THROWS_WITH_AS(assigned.Assign(W, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Ones(1)),
                       doctest::Contains("W(1,2)"), InputError);
}

TEST_CASE("the cone projection: inside, polar cone, boundary, mu = 0") {
  const double mu = 0.5;
  const Eigen::Vector3d inside(2.0, 0.3, -0.4);
  CHECK((ProjectOntoCone(mu, inside) - inside).norm() == 0.0);
  CHECK(ProjectOntoCone(mu, Eigen::Vector3d(-3.0, 0.5, 0.5)).norm() == 0.0);
  // Outside both: the result is on the boundary and x - P(x) is orthogonal to P(x).
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Vector3d x(normal(rng), normal(rng), normal(rng));
    const Eigen::Vector3d p = ProjectOntoCone(mu, x);
    CHECK(std::hypot(p[1], p[2]) <= mu * p[0] + 1e-14);
    CHECK(std::abs((x - p).dot(p)) <= 1e-13);
    // x - P(x) lies in the polar cone: -(x - p) in the dual cone K_{1/mu}.
    const Eigen::Vector3d d = p - x;
    CHECK(mu * std::hypot(d[1], d[2]) <= d[0] + 1e-13);
  }
  const Eigen::Vector3d p0 = ProjectOntoCone(0.0, Eigen::Vector3d(1.5, 2.0, -1.0));
  CHECK(p0[0] == 1.5);
  CHECK(p0[1] == 0.0);
  CHECK(p0[2] == 0.0);
  CHECK(ProjectOntoCone(0.0, Eigen::Vector3d(-1.0, 0.0, 0.0)).norm() == 0.0);
}

TEST_CASE("the FCLib error equals FORMAT.md §5 written out, on random points") {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    const int nc = 1 + trial % 5;
    const Eigen::MatrixXd W = RandomSpd(3 * nc, &rng);
    Eigen::VectorXd q(3 * nc), r(3 * nc), mu(nc);
    for (int i = 0; i < 3 * nc; ++i) q[i] = normal(rng), r[i] = normal(rng);
    for (int a = 0; a < nc; ++a) mu[a] = trial % 7 == 0 ? 0.0 : uniform(rng);
    const FrictionContactProblem problem(Sparse(W), q, mu);
    const double expected = DirectFclibError(W, q, mu, r);
    CHECK(FclibError(problem, r) == doctest::Approx(expected).epsilon(1e-13));
    const FrictionErrors errors = ComputeFrictionErrors(problem, r);
    const Eigen::VectorXd u = W * r + q;
    const double scale = std::max({q.norm(), r.norm(), u.norm()});
    CHECK(errors.siconos == doctest::Approx(expected * (1.0 + q.norm()) / scale).epsilon(1e-12));
  }
  const FrictionContactProblem problem(Sparse(Eigen::MatrixXd::Identity(3, 3)),
                                       Eigen::Vector3d(-1, 0, 0), Eigen::VectorXd::Ones(1));
  CHECK(std::isinf(FclibError(problem, Eigen::Vector3d(NAN, 0, 0))));
  CHECK(std::isinf(FclibError(problem, Eigen::Vector2d(0, 0))));
}

TEST_CASE("the error sum equals the contacts' natural maps summed one by one, to the bit") {
  // FrictionErrorsOf computes the terms two contacts at a time where it can; each term and the
  // sum must be what ContactNaturalMap gives contact by contact, in every case of the cone's
  // projection (inside, on the boundary, outside, polar), apart and opening, frictionless, and
  // with slips whose squares leave TangentNorm's plain range.
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double slips[] = {0.0, 1e-300, 1e-12, 1.0, 1e12, 1e300};
  const double mus[] = {0.0, 1e-3, 0.3, 1.0, 4.0};
  for (int trial = 0; trial < 2000; ++trial) {
    const int nc = 1 + trial % 9;
    Eigen::VectorXd r(3 * nc), u(3 * nc), mu(nc);
    for (int a = 0; a < nc; ++a) {
      mu[a] = mus[(trial + a) % 5];
      const double slip = slips[(trial / 7 + 2 * a) % 6];
      u.segment<3>(3 * a) = Eigen::Vector3d(normal(rng), slip * normal(rng), slip * normal(rng));
      const double r_n = uniform(rng);
      const Eigen::Vector2d t = Eigen::Vector2d(normal(rng), normal(rng)).normalized();
      // apart; pressed inside, on the boundary, outside the cone; polar; random
      const Eigen::Vector2d tangential[] = {
          Eigen::Vector2d::Zero(), 0.5 * mu[a] * r_n * t,
          mu[a] * r_n * t,         3.0 * mu[a] * r_n * t + t,
          Eigen::Vector2d::Zero(), Eigen::Vector2d(normal(rng), normal(rng))};
      const int kind = (trial / 3 + 5 * a) % 6;
      r[3 * a] = kind == 0 ? 0.0 : kind == 4 ? -r_n : r_n;
      r.segment<2>(3 * a + 1) = tangential[kind];
      if (kind == 0 && trial % 2 == 0) u[3 * a] = std::abs(u[3 * a]);
      if (kind == 2 && trial % 2 == 0) u.segment<3>(3 * a).setZero();  // sticking at the edge
    }
    double sum = 0.0;
    for (int a = 0; a < nc; ++a) {
      sum += ContactNaturalMap(mu[a], r.segment<3>(3 * a), u.segment<3>(3 * a)).squaredNorm();
    }
    CHECK(internal::FrictionErrorsOf(mu, 1.0, r, u).natural_map_norm == std::sqrt(sum));
  }
}

// One contact with W and q built so that r is its solution in the named case.
struct ExactContact {
  Eigen::Matrix3d W;
  Eigen::Vector3d q, r;
  double mu;
};

TEST_CASE("the error is zero at constructed exact solutions of every kind") {
  std::mt19937 rng(11);
  const Eigen::Matrix3d W = RandomSpd(3, &rng);
  const double mu = 0.6;
  // Sticking: r inside the cone, u = 0.
  const Eigen::Vector3d stick(1.0, 0.2, -0.1);
  // Sliding: r on the boundary, u_N = 0 and u_T = -2 r_T.
  const Eigen::Vector3d slide(1.0, mu * 0.6, mu * 0.8);
  const Eigen::Vector3d slide_u(0.0, -2.0 * slide[1], -2.0 * slide[2]);
  // Take-off: r = 0, u_N > 0, u_T anything.
  const ExactContact cases[] = {
      {W, -W * stick, stick, mu},
      {W, slide_u - W * slide, slide, mu},
      {W, Eigen::Vector3d(0.3, 5.0, -2.0), Eigen::Vector3d::Zero(), mu},
  };
  for (const ExactContact& c : cases) {
    const FrictionContactProblem problem(Sparse(c.W), c.q, Eigen::VectorXd::Constant(1, c.mu));
    CHECK(FclibError(problem, c.r) <= 1e-15);
    CHECK(FclibError(problem, c.r + Eigen::Vector3d(1e-3, 0, 0)) > 1e-5);
  }
}

TEST_CASE("the single-contact solver against closed forms") {
  std::mt19937 rng(5);
  const Eigen::Matrix3d W = RandomSpd(3, &rng);
  const Eigen::Matrix3d W_inverse = W.inverse();
  const double mu = 0.6;
  auto solve = [&](const Eigen::Vector3d& q, double m, const Eigen::Vector2d* warm = nullptr) {
    return SolveSingleContact(W, W_inverse, true, q, m, Eigen::Vector3d::Zero(), warm);
  };
  SUBCASE("take-off") {
    const SingleContactSolution s = solve(Eigen::Vector3d(0.5, -3.0, 1.0), mu);
    CHECK(s.state == ContactState::TakeOff);
    CHECK(s.r.norm() == 0.0);
  }
  SUBCASE("sticking") {
    const Eigen::Vector3d r(2.0, 0.3, -0.5);
    const SingleContactSolution s = solve(-W * r, mu);
    CHECK(s.state == ContactState::Sticking);
    CHECK((s.r - r).norm() <= 1e-14 * r.norm());
  }
  SUBCASE("sliding in a known direction") {
    // r on the boundary along the angle, u_T = -lambda r_T; W diagonally dominant, so that
    // q_N < 0 and the take-off is not a second solution.
    const Eigen::Matrix3d Wd =
        (Eigen::Matrix3d() << 2.0, 0.3, -0.2, 0.3, 1.5, 0.1, -0.2, 0.1, 1.2).finished();
    const Eigen::Matrix3d Wd_inverse = Wd.inverse();
    auto solve = [&](const Eigen::Vector3d& q, double m, const Eigen::Vector2d* warm = nullptr) {
      return SolveSingleContact(Wd, Wd_inverse, true, q, m, Eigen::Vector3d::Zero(), warm);
    };
    const Eigen::Matrix3d W = Wd;
    for (double angle : {2.1, -0.4, 3.1, 0.0, 3.14159}) {
      const Eigen::Vector3d r(1.5, mu * 1.5 * std::cos(angle), mu * 1.5 * std::sin(angle));
      const Eigen::Vector3d u(0.0, -0.7 * r[1], -0.7 * r[2]);
      const Eigen::Vector3d q = u - W * r;
      const SingleContactSolution s = solve(q, mu);
      CAPTURE(angle);
      CHECK(s.state == ContactState::Sliding);
      CHECK((s.r - r).norm() <= 1e-12 * r.norm());
      CHECK(ContactNaturalMap(mu, s.r, W * s.r + q).norm() <= 1e-13);
      // From a warm direction near the answer the Newton steps in the angle find it too.
      const Eigen::Vector2d warm(std::cos(angle + 0.05), std::sin(angle + 0.05));
      const SingleContactSolution w = solve(q, mu, &warm);
      CHECK(w.state == ContactState::Sliding);
      CHECK((w.r - r).norm() <= 1e-12 * r.norm());
    }
  }
  SUBCASE("mu = 0: the normal reaction alone") {
    const Eigen::Vector3d q(-1.0, 0.4, 0.2);
    const SingleContactSolution s = solve(q, 0.0);
    CHECK(s.r[1] == 0.0);
    CHECK(s.r[2] == 0.0);
    CHECK(s.r[0] == doctest::Approx(1.0 / W(0, 0)));
    CHECK(ContactNaturalMap(0.0, s.r, W * s.r + q).norm() <= 1e-15);
  }
  SUBCASE("random local problems are solved to rounding") {
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform(0.0, 1.5);
    int counts[4] = {0, 0, 0, 0};
    for (int trial = 0; trial < 2000; ++trial) {
      const Eigen::Matrix3d Wt = RandomSpd(3, &rng);
      const Eigen::Vector3d q(normal(rng), normal(rng), normal(rng));
      const double m = uniform(rng);
      const SingleContactSolution s =
          SolveSingleContact(Wt, Wt.inverse(), true, q, m, Eigen::Vector3d::Zero(), nullptr);
      ++counts[static_cast<int>(s.state)];
      const double error = ContactNaturalMap(m, s.r, Wt * s.r + q).norm();
      CAPTURE(trial);
      CHECK(s.state != ContactState::Approximate);
      CHECK(error <= 1e-11 * (1.0 + q.norm()));
    }
    CHECK(counts[0] > 100);  // every case is exercised
    CHECK(counts[1] > 100);
    CHECK(counts[2] > 100);
  }
  SUBCASE("a sliding answer meets the acceptance its header states, from any start") {
    // Accepted sliding reactions have natural maps within 1e-11 (|q| + |W| |r_start|), whether
    // the solver took them from a Newton guess (decided by a bound where it can be) or from the
    // quartic; the starts are far from and near the answer, the W badly conditioned too.
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    int sliding = 0;
    for (int trial = 0; trial < 4000; ++trial) {
      Eigen::Matrix3d Wt = RandomSpd(3, &rng);
      if (trial % 3 == 0) Wt += 1e6 * Wt.col(0) * Wt.col(0).transpose();  // badly conditioned
      const Eigen::Vector3d q(-std::abs(normal(rng)), normal(rng), normal(rng));
      const double m = 0.01 + 3.0 * uniform(rng);
      const Eigen::Vector3d r_start = trial % 2 == 0
                                          ? Eigen::Vector3d::Zero()
                                          : Eigen::Vector3d(uniform(rng), normal(rng), normal(rng));
      const Eigen::Vector2d warm = Eigen::Vector2d(normal(rng), normal(rng)).normalized();
      const SingleContactSolution s = SolveSingleContact(Wt, Wt.inverse(), true, q, m, r_start,
                                                         trial % 4 < 2 ? &warm : nullptr);
      if (s.state == ContactState::Sticking) continue;
      // Where sticking fails, the solve without its test gives the same answer to the bit.
      const SingleContactSolution n =
          SolveSingleContactNotSticking(Wt, q, m, r_start, trial % 4 < 2 ? &warm : nullptr);
      CHECK(n.state == s.state);
      CHECK((n.r.array() == s.r.array()).all());
      if (s.state != ContactState::Sliding) continue;
      ++sliding;
      const SingleContactSolution again =
          SolveSingleContact(Wt, Wt.inverse(), true, q, m, r_start, &s.direction);
      CAPTURE(trial);
      for (const SingleContactSolution* x : {&s, &again}) {
        CHECK(ContactNaturalMap(m, x->r, Wt * x->r + q).norm() <=
              1e-11 * (q.norm() + Wt.norm() * r_start.norm()));
      }
    }
    CHECK(sliding > 1000);
  }
}

}  // namespace
}  // namespace ncpkit
