// The sparse LU behind FB Newton: KLU (symbolic analysis reused, as FischerBurmeisterNewton
// does) against UMFPACK (Eigen's UmfPackLU, symbolic analysis reused too) on the Newton
// matrices of the contact-like LCPs: H = D_a + D_b M with D_a, D_b from the FB function at z = 0.
#include <benchmark/benchmark.h>

#include <Eigen/UmfPackSupport>

#include "fixtures/problem_generators.h"
#include "solvers/linalg/sparse_lu.h"

namespace ncpkit {
namespace {

Eigen::SparseMatrix<double> NewtonMatrix(int n) {
  const LinearComplementarityProblem problem = ContactLikeLcp(n, 42);
  Eigen::SparseMatrix<double> H = problem.sparse_columns();
  // At z = 0: a = 0, b = q_i: D_a = 1 - 0/|q| = 1, D_b = 1 - q/|q| (0 or 2).
  for (int j = 0; j < H.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(H, j); it; ++it) {
      it.valueRef() *= problem.q()[it.row()] > 0 ? 0.0 : 2.0;
    }
  }
  Eigen::SparseMatrix<double> identity(n, n);
  identity.setIdentity();
  H += identity;
  H.makeCompressed();
  return H;
}

void BM_KluFactorizeSolve(benchmark::State& state) {
  const Eigen::SparseMatrix<double> H = NewtonMatrix(static_cast<int>(state.range(0)));
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(H.rows());
  KluLu lu;
  lu.analyzePattern(H);
  for (auto _ : state) {
    lu.factorize(H);
    Eigen::VectorXd x = lu.solve(b);
    benchmark::DoNotOptimize(x.data());
  }
  if (lu.info() != Eigen::Success) state.SkipWithError("KLU failed");
}

void BM_UmfpackFactorizeSolve(benchmark::State& state) {
  const Eigen::SparseMatrix<double> H = NewtonMatrix(static_cast<int>(state.range(0)));
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(H.rows());
  Eigen::UmfPackLU<Eigen::SparseMatrix<double>> lu;
  lu.analyzePattern(H);
  for (auto _ : state) {
    lu.factorize(H);
    Eigen::VectorXd x = lu.solve(b);
    benchmark::DoNotOptimize(x.data());
  }
  if (lu.info() != Eigen::Success) state.SkipWithError("UMFPACK failed");
}

BENCHMARK(BM_KluFactorizeSolve)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_UmfpackFactorizeSolve)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ncpkit
