// Derivatives of LCP and box MLCP solutions: closed forms, the degenerate rule, central finite
// differences on random problems, and the adjoint identity.
#include "solvers/sensitivity/linear_sensitivity.h"

#include <doctest/doctest.h>

#include <random>

#include "fixtures/problem_generators.h"
#include "solvers/base/input_error.h"
#include "solvers/registry/solver_registry.h"

namespace ncpkit {
namespace {

Eigen::VectorXd Solve(const LinearComplementarityProblem& problem) {
  SolverOptions options;
  options.tolerance = 1e-13;
  Eigen::VectorXd z;
  const SolverSummary summary =
      CreateSolver("lemke", ProblemKind::Linear, options)->Solve(problem, &z);
  REQUIRE_MESSAGE(summary.IsSolved(), summary.BriefReport());
  return z;
}

LinearComplementarityProblem TwoByTwo(double q1, double q2) {
  Eigen::MatrixXd M(2, 2);
  M << 2, 1, 1, 2;
  return LinearComplementarityProblem(M, Eigen::Vector2d(q1, q2));
}

TEST_CASE("LCP sensitivity: the closed form of a 2 x 2 problem") {
  // z = (1/2, 0), w = (0, 3/2): z_1 free with M_11 z_1 + q_1 = 0, z_2 at its bound.
  const LinearComplementarityProblem problem = TwoByTwo(-1.0, 1.0);
  const Eigen::VectorXd z = Solve(problem);
  CHECK(z[0] == doctest::Approx(0.5).epsilon(1e-14));
  CHECK(z[1] == 0.0);
  const LinearSensitivity sensitivity(problem, z);
  CHECK(sensitivity.degenerate().empty());
  const Eigen::MatrixXd by_q = sensitivity.Jacobian(LinearSensitivity::Input::q);
  CHECK(by_q(0, 0) == doctest::Approx(-0.5).epsilon(1e-14));
  CHECK(by_q(0, 1) == 0.0);
  CHECK(by_q(1, 0) == 0.0);
  CHECK(by_q(1, 1) == 0.0);
  // dz_1/dM_11 = z_1 dz_1/dq_1 = -1/4; M's nonzeros in column-major order: M_11 first.
  const Eigen::MatrixXd by_M = sensitivity.Jacobian(LinearSensitivity::Input::M);
  REQUIRE(by_M.cols() == 4);
  CHECK(by_M(0, 0) == doctest::Approx(-0.25).epsilon(1e-14));
  // dz_1/dM_12 = z_2 dz_1/dq_1 = 0.
  CHECK(by_M(0, 2) == 0.0);
  // The lower bound of z_2 moves z_2 one for one and z_1 through M_12: dz_1 = -M_12 / M_11.
  const Eigen::MatrixXd by_lower = sensitivity.Jacobian(LinearSensitivity::Input::lower);
  CHECK(by_lower(1, 1) == 1.0);
  CHECK(by_lower(0, 1) == doctest::Approx(-0.5).epsilon(1e-14));
  CHECK(by_lower(0, 0) == 0.0);
}

TEST_CASE("LCP sensitivity: a degenerate index returns the side the rule names") {
  // q = (-1, -1/2): z = (1/2, 0) and w_2 = z_1 + 2 z_2 - 1/2 = 0 — z_2 and w_2 both vanish.
  // Raising q_2 keeps z_2 at 0 (derivative 0); lowering it frees z_2: dz/dq_2 = -M^-1 e_2,
  // whose second entry is -2/3.
  const LinearComplementarityProblem problem = TwoByTwo(-1.0, -0.5);
  const Eigen::VectorXd z = Solve(problem);
  SensitivityOptions options;
  const LinearSensitivity at_bound(problem, z, options);
  REQUIRE(at_bound.degenerate() == std::vector<int>{1});
  CHECK(at_bound.box().state(1) == BoxSensitivity::IndexState::Lower);
  CHECK(at_bound.Jacobian(LinearSensitivity::Input::q)(1, 1) == 0.0);
  options.degenerate_side = DegenerateSide::Free;
  const LinearSensitivity free(problem, z, options);
  REQUIRE(free.degenerate() == std::vector<int>{1});
  CHECK(free.box().state(1) == BoxSensitivity::IndexState::Free);
  CHECK(free.Jacobian(LinearSensitivity::Input::q)(1, 1) ==
        doctest::Approx(-2.0 / 3.0).epsilon(1e-14));
  // Each is the one-sided difference quotient of its side.
  const double h = 1e-6;
  const double up = (Solve(TwoByTwo(-1.0, -0.5 + h))[1] - z[1]) / h;
  const double down = (z[1] - Solve(TwoByTwo(-1.0, -0.5 - h))[1]) / h;
  CHECK(up == 0.0);
  CHECK(down == doctest::Approx(-2.0 / 3.0).epsilon(1e-8));
  // Per index: degenerate_sides overrides degenerate_side (index 0 is not degenerate: its entry
  // changes nothing), and must have an entry per unknown.
  SensitivityOptions per_index;
  per_index.degenerate_side = DegenerateSide::Free;
  per_index.degenerate_sides = {DegenerateSide::Free, DegenerateSide::Bound};
  const LinearSensitivity held(problem, z, per_index);
  CHECK(held.box().state(1) == BoxSensitivity::IndexState::Lower);
  CHECK(held.Jacobian(LinearSensitivity::Input::q)(1, 1) == 0.0);
  per_index.degenerate_side = DegenerateSide::Bound;
  per_index.degenerate_sides = {DegenerateSide::Bound, DegenerateSide::Free};
  const LinearSensitivity freed(problem, z, per_index);
  CHECK(freed.box().state(1) == BoxSensitivity::IndexState::Free);
  CHECK(freed.Jacobian(LinearSensitivity::Input::q)(1, 1) ==
        doctest::Approx(-2.0 / 3.0).epsilon(1e-14));
  per_index.degenerate_sides = {DegenerateSide::Free};
  CHECK_THROWS_WITH_AS(LinearSensitivity(problem, z, per_index),
                       doctest::Contains("degenerate_sides has 1 entries for 2 unknowns"),
                       InputError);
}

// A random box MLCP with a positive definite M (a unique solution): some indices at each bound,
// some free, a few unbounded (equations).
LinearComplementarityProblem RandomMlcp(int n, uint64_t seed) {
  const LinearComplementarityProblem lcp = RandomSpdLcp(n, seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Eigen::VectorXd lower(n), upper(n);
  const double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) {
    const double kind = uniform(rng);
    lower[i] = kind < 0.1 ? -inf : -uniform(rng);
    upper[i] = kind > 0.9 ? inf : uniform(rng) * 0.5;
  }
  return LinearComplementarityProblem(lcp.dense_matrix(), 2.0 * lcp.q(), lower, upper);
}

struct FiniteDifferenceTally {
  int checked = 0, mode_changes = 0;
};

// Central differences of z along one input direction of the data, against Jvp; skipped (and
// counted) where the perturbed solutions have another active set.
void CheckDirection(const LinearComplementarityProblem& problem,
                    const LinearSensitivity& sensitivity, const LinearSensitivity::Tangent& d,
                    FiniteDifferenceTally* tally) {
  const double h = 1e-6;
  auto perturbed = [&](double s) {
    Eigen::MatrixXd M = problem.dense_matrix();
    if (d.M.rows() != 0) M += s * Eigen::MatrixXd(d.M);
    Eigen::VectorXd q = problem.q(), l = problem.lower(), u = problem.upper();
    if (d.q.size() != 0) q += s * d.q;
    if (d.lower.size() != 0) l += s * d.lower;
    if (d.upper.size() != 0) u += s * d.upper;
    return LinearComplementarityProblem(M, q, l, u);
  };
  const LinearComplementarityProblem plus = perturbed(h), minus = perturbed(-h);
  const Eigen::VectorXd z_plus = Solve(plus), z_minus = Solve(minus);
  const LinearSensitivity s_plus(plus, z_plus), s_minus(minus, z_minus);
  for (int i = 0; i < problem.size(); ++i) {
    if (s_plus.box().state(i) != sensitivity.box().state(i) ||
        s_minus.box().state(i) != sensitivity.box().state(i)) {
      ++tally->mode_changes;
      return;
    }
  }
  const Eigen::VectorXd difference = (z_plus - z_minus) / (2.0 * h);
  const Eigen::VectorXd dz = sensitivity.Jvp(d);
  ++tally->checked;
  CHECK((difference - dz).norm() <= 1e-5 * std::max(1.0, dz.norm()));
}

TEST_CASE("LCP and MLCP sensitivity: central differences on random problems") {
  FiniteDifferenceTally tally;
  int degenerate = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const int n = 4 + static_cast<int>(seed % 5) * 5;
    const LinearComplementarityProblem problem =
        seed % 2 == 0 ? RandomSpdLcp(n, seed) : RandomMlcp(n, seed);
    CAPTURE(seed);
    const Eigen::VectorXd z = Solve(problem);
    const LinearSensitivity sensitivity(problem, z);
    degenerate += static_cast<int>(sensitivity.degenerate().size());
    std::mt19937_64 rng(seed + 1000);
    std::normal_distribution<double> normal;
    auto random_vector = [&]() {
      Eigen::VectorXd v(n);
      for (int i = 0; i < n; ++i) v[i] = normal(rng);
      return v;
    };
    LinearSensitivity::Tangent d;
    d.q = random_vector();
    CheckDirection(problem, sensitivity, d, &tally);
    d = {};
    Eigen::MatrixXd dM(n, n);
    for (int i = 0; i < n; ++i) dM.row(i) = random_vector().transpose();
    d.M = (0.5 * (dM + dM.transpose())).sparseView();
    CheckDirection(problem, sensitivity, d, &tally);
    if (!problem.IsStandardLcp()) {
      d = {};
      d.lower = random_vector();
      d.upper = random_vector();
      CheckDirection(problem, sensitivity, d, &tally);
    }
  }
  MESSAGE(tally.checked << " directions checked, " << tally.mode_changes
                        << " skipped where the active set changed, " << degenerate
                        << " degenerate indices");
  CHECK(tally.checked >= 60);
}

TEST_CASE("LCP sensitivity: <v, J w> = <J^T v, w> to rounding") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const int n = 3 + static_cast<int>(seed % 7) * 4;
    const LinearComplementarityProblem problem = RandomMlcp(n, seed);
    const Eigen::VectorXd z = Solve(problem);
    const LinearSensitivity sensitivity(problem, z);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    auto random_vector = [&]() {
      Eigen::VectorXd v(n);
      for (int i = 0; i < n; ++i) v[i] = normal(rng);
      return v;
    };
    LinearSensitivity::Tangent w;
    w.q = random_vector();
    w.lower = random_vector();
    w.upper = random_vector();
    Eigen::MatrixXd dM(n, n);
    for (int i = 0; i < n; ++i) dM.row(i) = random_vector().transpose();
    w.M = dM.sparseView();
    const Eigen::VectorXd v = random_vector();
    const double forward = v.dot(sensitivity.Jvp(w));
    const LinearSensitivity::Gradient g = sensitivity.Vjp(v);
    const double backward = g.q.dot(w.q) + g.lower.dot(w.lower) + g.upper.dot(w.upper) +
                            (sensitivity.MatrixGradient(g).array() * dM.array()).sum();
    CAPTURE(seed);
    CHECK(std::abs(forward - backward) <= 1e-12 * (1.0 + std::abs(forward)));
    // On M's pattern (dense M: every entry), the same numbers.
    CHECK((Eigen::MatrixXd(sensitivity.MatrixGradientOnPattern(g)) - sensitivity.MatrixGradient(g))
              .cwiseAbs()
              .maxCoeff() <= 1e-15);
  }
}

TEST_CASE("LCP sensitivity: redundant equations are solved in least squares") {
  // Two identical free rows: J_FF is singular; the derivative is the least-norm one.
  Eigen::MatrixXd M(3, 3);
  M << 1, 1, 0, 1, 1, 0, 0, 0, 1;
  const Eigen::VectorXd q(Eigen::Vector3d(-2.0, -2.0, 1.0));
  const LinearComplementarityProblem problem(M, q);
  const Eigen::VectorXd z(Eigen::Vector3d(1.0, 1.0, 0.0));
  REQUIRE(natural_residual(problem, z) == 0.0);
  const LinearSensitivity sensitivity(problem, z);
  CHECK(sensitivity.box().least_squares());
  // dq = (1, 1) asks dz_1 + dz_2 = -1 of both rows: the least-norm answer is (-1/2, -1/2).
  LinearSensitivity::Tangent d;
  d.q = Eigen::Vector3d(1.0, 1.0, 0.0);
  const Eigen::VectorXd dz = sensitivity.Jvp(d);
  CHECK(dz[0] == doctest::Approx(-0.5).epsilon(1e-12));
  CHECK(dz[1] == doctest::Approx(-0.5).epsilon(1e-12));
  CHECK(dz[2] == 0.0);
}

TEST_CASE(
    "LCP sensitivity: a large rank-deficient system (sparse QR) gives the least-norm answer") {
  // M = B B^T with B 120 x 70 (sparse): every index free at z = 1, J_FF = M of rank 70, past the
  // size where the sparse QR takes over. Against the dense pseudo-inverse on consistent dq
  // (dq = M y), with exact adjoints for any v, w.
  const int n = 120, rank = 70;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> column(0, rank - 1);
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(n, rank);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) B(i, column(rng)) = normal(rng);
    B(i, i % rank) += 2.0;
  }
  const Eigen::MatrixXd M = B * B.transpose();
  const Eigen::VectorXd z = Eigen::VectorXd::Ones(n);
  const LinearComplementarityProblem problem(Eigen::SparseMatrix<double>(M.sparseView()), -(M * z));
  const LinearSensitivity sensitivity(problem, z);
  CHECK(sensitivity.box().least_squares());
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> dense(M);
  REQUIRE(dense.rank() == rank);
  auto random_vector = [&](int size) {
    Eigen::VectorXd v(size);
    for (int i = 0; i < size; ++i) v[i] = normal(rng);
    return v;
  };
  for (int trial = 0; trial < 5; ++trial) {
    LinearSensitivity::Tangent d;
    d.q = M * random_vector(n);
    const Eigen::VectorXd expected = -dense.solve(d.q);  // dz = -M^+ dq, least norm
    CHECK((sensitivity.Jvp(d) - expected).norm() <= 1e-9 * expected.norm());
    LinearSensitivity::Tangent w;
    w.q = random_vector(n);
    const Eigen::VectorXd v = random_vector(n);
    const double forward = v.dot(sensitivity.Jvp(w));
    const double backward = sensitivity.Vjp(v).q.dot(w.q);
    CHECK(std::abs(forward - backward) <= 1e-10 * (1.0 + std::abs(forward)));
  }
}

TEST_CASE(
    "LCP sensitivity: a matrix singular to rounding whose pivots look fine is taken as "
    "singular") {
  // Unit diagonal, -2 above it: every pivot is 1, so the pivots' ratio says "well conditioned",
  // yet the condition number is about 2^60 = 1e18. Its solves with the matrix and with its
  // transpose are then meaningless: the system is solved in least squares instead.
  const int n = 60;
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(n, n);
  for (int i = 0; i + 1 < n; ++i) M(i, i + 1) = -2.0;
  const Eigen::VectorXd z = Eigen::VectorXd::Ones(n);
  const LinearComplementarityProblem problem(M, -(M * z));
  REQUIRE(natural_residual(problem, z) <= 1e-12);
  CHECK(LinearSensitivity(problem, z).box().least_squares());
  // With 1.5 above the diagonal (condition number about 1.5^60 = 4e10) it is solved as it is.
  for (int i = 0; i + 1 < n; ++i) M(i, i + 1) = -1.5;
  const LinearComplementarityProblem fine(M, -(M * z));
  CHECK_FALSE(LinearSensitivity(fine, z).box().least_squares());
}

TEST_CASE("LCP sensitivity: bad input is refused with the reason") {
  const LinearComplementarityProblem problem = TwoByTwo(-1.0, 1.0);
  CHECK_THROWS_AS(LinearSensitivity(problem, Eigen::VectorXd::Zero(3)), InputError);
  CHECK_THROWS_AS(LinearSensitivity(problem, Eigen::Vector2d(0.5, -1.0)), InputError);
  CHECK_THROWS_AS(LinearSensitivity(problem, Eigen::Vector2d(std::nan(""), 0.0)), InputError);
  SensitivityOptions options;
  options.degeneracy_tolerance = 0.0;
  CHECK_THROWS_AS(LinearSensitivity(problem, Eigen::Vector2d(0.5, 0.0), options), InputError);
  const LinearSensitivity sensitivity(problem, Eigen::Vector2d(0.5, 0.0));
  LinearSensitivity::Tangent d;
  d.q = Eigen::VectorXd::Zero(5);
  CHECK_THROWS_AS(sensitivity.Jvp(d), InputError);
  CHECK_THROWS_AS(sensitivity.Vjp(Eigen::VectorXd::Zero(1)), InputError);
  // A dense Jacobian of 8000 x 8000 is refused before it is allocated; the products still work.
  const int n = 8000;
  Eigen::SparseMatrix<double> identity(n, n);
  identity.setIdentity();
  const LinearComplementarityProblem large(identity, Eigen::VectorXd::Constant(n, -1.0));
  const LinearSensitivity big(large, Eigen::VectorXd::Ones(n));
  CHECK_THROWS_WITH_AS(big.Jacobian(LinearSensitivity::Input::q),
                       doctest::Contains("use the Jacobian-vector"), InputError);
  LinearSensitivity::Tangent one;
  one.q = Eigen::VectorXd::Ones(n);
  CHECK(big.Jvp(one).isApproxToConstant(-1.0));
}

}  // namespace
}  // namespace ncpkit
