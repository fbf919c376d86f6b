// MCP solves of the PROBLEMS.md examples, and the cost of a Jacobian evaluation by Jets
// (ProblemBuilder) against a hand-written F and J for the same problem (josephy).
#include <benchmark/benchmark.h>

#include <limits>

#include "fixtures/mcp_examples.h"
#include "solvers/mcp/auto_solve.h"
#include "solvers/mcp/semismooth_newton.h"

namespace ncpkit {
namespace {

void BM_McpFbNewton(benchmark::State& state, const std::string& name) {
  const McpExample example = McpExampleByName(name);
  FischerBurmeisterNewton newton;
  Eigen::VectorXd z;
  FischerBurmeisterNewton::Summary summary;
  for (auto _ : state) {
    z = example.starts[0];
    summary = newton.Solve(*example.problem, &z);
  }
  if (!summary.IsSolved()) state.SkipWithError(summary.message.c_str());
  state.counters["iterations"] = summary.iterations;
}

void BM_McpAuto(benchmark::State& state, const std::string& name) {
  const McpExample example = McpExampleByName(name);
  Eigen::VectorXd z;
  AutoSolver::Summary summary;
  for (auto _ : state) {
    z = example.starts[0];
    summary = AutoSolver().Solve(*example.problem, &z);
  }
  if (!summary.IsSolved()) state.SkipWithError(summary.message.c_str());
  state.counters["attempts"] = summary.attempts;
}

BENCHMARK_CAPTURE(BM_McpFbNewton, kojshin, std::string("kojshin"));
BENCHMARK_CAPTURE(BM_McpFbNewton, josephy, std::string("josephy"));
BENCHMARK_CAPTURE(BM_McpFbNewton, path_nonlinear, std::string("path_nonlinear"));
BENCHMARK_CAPTURE(BM_McpFbNewton, siconos_mcp10, std::string("siconos_mcp10"));
BENCHMARK_CAPTURE(BM_McpAuto, billups, std::string("billups"));

// Josephy's F and J written by hand, for comparison with the Jet evaluation.
class HandWrittenJosephy : public MixedComplementarityProblem {
 public:
  HandWrittenJosephy()
      : l_(Eigen::VectorXd::Zero(4)),
        u_(Eigen::VectorXd::Constant(4, std::numeric_limits<double>::infinity())) {
    Eigen::MatrixXd dense = Eigen::MatrixXd::Ones(4, 4);
    pattern_ = dense.sparseView();
  }
  int size() const override { return 4; }
  const Eigen::VectorXd& lower() const override { return l_; }
  const Eigen::VectorXd& upper() const override { return u_; }
  bool Evaluate(const Eigen::VectorXd& v, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override {
    F->resize(4);
    (*F)[0] = 3 * v[0] * v[0] + 2 * v[0] * v[1] + 2 * v[1] * v[1] + v[2] + 3 * v[3] - 6;
    (*F)[1] = 2 * v[0] * v[0] + v[0] + v[1] * v[1] + 3 * v[2] + 2 * v[3] - 2;
    (*F)[2] = 3 * v[0] * v[0] + v[0] * v[1] + 2 * v[1] * v[1] + 2 * v[2] + 3 * v[3] - 1;
    (*F)[3] = v[0] * v[0] + 3 * v[1] * v[1] + 2 * v[2] + 3 * v[3] - 3;
    if (J) {
      if (J->nonZeros() != 16) *J = pattern_;
      double* x = J->valuePtr();  // column-major, all 16 entries
      x[0] = 6 * v[0] + 2 * v[1], x[1] = 4 * v[0] + 1, x[2] = 6 * v[0] + v[1], x[3] = 2 * v[0];
      x[4] = 2 * v[0] + 4 * v[1], x[5] = 2 * v[1], x[6] = v[0] + 4 * v[1], x[7] = 6 * v[1];
      x[8] = 1, x[9] = 3, x[10] = 2, x[11] = 2;
      x[12] = 3, x[13] = 2, x[14] = 3, x[15] = 3;
    }
    return true;
  }

 private:
  Eigen::VectorXd l_, u_;
  Eigen::SparseMatrix<double> pattern_;
};

void BM_JosephyJacobianJets(benchmark::State& state) {
  const McpExample example = McpExampleByName("josephy");
  Eigen::VectorXd z = Eigen::VectorXd::Constant(4, 0.7), F;
  Eigen::SparseMatrix<double> J;
  for (auto _ : state) {
    example.problem->Evaluate(z, &F, &J);
    benchmark::DoNotOptimize(J.valuePtr());
  }
}
void BM_JosephyJacobianHandWritten(benchmark::State& state) {
  const HandWrittenJosephy problem;
  Eigen::VectorXd z = Eigen::VectorXd::Constant(4, 0.7), F;
  Eigen::SparseMatrix<double> J;
  for (auto _ : state) {
    problem.Evaluate(z, &F, &J);
    benchmark::DoNotOptimize(J.valuePtr());
  }
}
BENCHMARK(BM_JosephyJacobianJets);
BENCHMARK(BM_JosephyJacobianHandWritten);

}  // namespace
}  // namespace ncpkit
