// Derivatives of MCP solutions: a builder's parameter blocks (Jets) against the LCP's own
// sensitivity and against central differences of re-solved problems.
#include "solvers/sensitivity/mcp_sensitivity.h"

#include <doctest/doctest.h>

#include <random>

#include "fixtures/problem_generators.h"
#include "solvers/base/input_error.h"
#include "solvers/registry/solver_registry.h"
#include "solvers/sensitivity/linear_sensitivity.h"

namespace ncpkit {
namespace {

Eigen::VectorXd SolveMcp(const MixedComplementarityProblem& problem) {
  SolverOptions options;
  options.tolerance = 1e-13;
  Eigen::VectorXd z;
  const SolverSummary summary =
      CreateSolver("auto", ProblemKind::Mixed, options)->Solve(problem, &z);
  REQUIRE_MESSAGE(summary.IsSolved(), summary.BriefReport());
  return z;
}

// F = M z + q with q a parameter block: the builder's sensitivity must equal the LCP's.
struct LinearRows {
  Eigen::MatrixXd M;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const int n = static_cast<int>(M.rows());
    for (int i = 0; i < n; ++i) {
      r[i] = x[1][i];
      for (int j = 0; j < n; ++j) r[i] += M(i, j) * x[0][j];
    }
    return true;
  }
};

TEST_CASE("MCP sensitivity: a builder's parameters against the LCP's own derivatives") {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const int n = 6;
    const LinearComplementarityProblem lcp = RandomSpdLcp(n, seed);
    ProblemBuilder builder;
    const int z_block = builder.AddVariableBlock(n, 0.0, std::numeric_limits<double>::infinity());
    const int q_block = builder.AddParameterBlock(lcp.q());
    builder.AddDynamicResidualBlock(LinearRows{lcp.dense_matrix()}, {z_block}, {z_block, q_block});
    const Eigen::VectorXd z = SolveMcp(builder);
    const McpSensitivity mcp(builder, z);
    const LinearSensitivity linear(lcp, z);
    REQUIRE(mcp.num_parameters() == n);
    CAPTURE(seed);
    CHECK((mcp.ParameterJacobian() - linear.Jacobian(LinearSensitivity::Input::q))
              .cwiseAbs()
              .maxCoeff() <= 1e-12);
    const Eigen::VectorXd g = Eigen::VectorXd::LinSpaced(n, -1.0, 2.0);
    CHECK((mcp.ParameterVjp(g) - linear.Vjp(g).q).cwiseAbs().maxCoeff() <= 1e-12);
  }
}

// A nonlinear NCP with three parameters: F_0 = a z_0^2 + z_0 - b + z_1,
// F_1 = z_1 + c z_0 - 1 (with c = 2 the second variable sits at its bound).
struct Nonlinear {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* z = x[0];
    const T* p = x[1];
    r[0] = p[0] * z[0] * z[0] + z[0] - p[1] + z[1];
    r[1] = z[1] + p[2] * z[0] - T(1.0);
    return true;
  }
};

TEST_CASE("MCP sensitivity: parameters of a nonlinear builder against central differences") {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> uniform(0.5, 2.0);
  int checked = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::Vector3d theta(uniform(rng), uniform(rng) + 1.0, uniform(rng));
    auto make = [](const Eigen::Vector3d& p, ProblemBuilder* builder) {
      const int z_block =
          builder->AddVariableBlock(2, 0.0, std::numeric_limits<double>::infinity());
      const int p_block = builder->AddParameterBlock(p);
      builder->AddResidualBlock<2, 2, 3>(Nonlinear{}, z_block, {z_block, p_block});
    };
    ProblemBuilder builder;
    make(theta, &builder);
    const Eigen::VectorXd z = SolveMcp(builder);
    const McpSensitivity sensitivity(builder, z);
    const Eigen::MatrixXd jacobian = sensitivity.ParameterJacobian();
    const double h = 1e-6;
    for (int k = 0; k < 3; ++k) {
      Eigen::Vector3d step = Eigen::Vector3d::Zero();
      step[k] = h;
      // The same builder with new parameter values: SetParameterBlock, not a rebuild.
      builder.SetParameterBlock(1, theta + step);
      const Eigen::VectorXd plus = SolveMcp(builder);
      builder.SetParameterBlock(1, theta - step);
      const Eigen::VectorXd minus = SolveMcp(builder);
      builder.SetParameterBlock(1, theta);
      if (((plus.array() > 0) != (z.array() > 0)).any() ||
          ((minus.array() > 0) != (z.array() > 0)).any())
        continue;
      ++checked;
      CAPTURE(trial);
      CAPTURE(k);
      CHECK(((plus - minus) / (2 * h) - jacobian.col(k)).norm() <=
            1e-6 * std::max(1.0, jacobian.col(k).norm()));
    }
  }
  CHECK(checked >= 50);
}

TEST_CASE("MCP sensitivity: parameter blocks are refused where they do not belong") {
  ProblemBuilder builder;
  const int z_block = builder.AddVariableBlock(2, 0.0, 1.0);
  const int p_block = builder.AddParameterBlock(Eigen::Vector3d(1.0, 2.0, 3.0));
  CHECK_THROWS_AS((builder.AddResidualBlock<2, 2, 3>(Nonlinear{}, p_block, {z_block, p_block})),
                  InputError);
  CHECK_THROWS_AS(builder.AddParameterBlock(Eigen::Vector2d(1.0, std::nan(""))), InputError);
  CHECK_THROWS_AS(builder.SetParameterBlock(z_block, Eigen::Vector2d(1.0, 2.0)), InputError);
  CHECK_THROWS_AS(builder.SetParameterBlock(p_block, Eigen::Vector2d(1.0, 2.0)), InputError);
  builder.AddResidualBlock<2, 2, 3>(Nonlinear{}, z_block, {z_block, p_block});
  // dF/dtheta at z = (0.5, 0.25): the functor's derivatives written out.
  Eigen::SparseMatrix<double> P;
  REQUIRE(builder.EvaluateParameterJacobian(Eigen::Vector2d(0.5, 0.25), &P));
  const Eigen::MatrixXd dense(P);
  CHECK(dense(0, 0) == 0.25);  // z_0^2
  CHECK(dense(0, 1) == -1.0);
  CHECK(dense(1, 2) == 0.5);  // z_0
  const McpSensitivity sensitivity(builder, Eigen::Vector2d(0.5, 0.25));
  CHECK_THROWS_AS(sensitivity.ParameterJvp(Eigen::VectorXd::Zero(2)), InputError);
  CHECK_THROWS_AS(McpSensitivity(builder, Eigen::VectorXd::Zero(3)), InputError);
}

}  // namespace
}  // namespace ncpkit
