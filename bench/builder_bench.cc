// The cost of a Jacobian from the problem builder, per Jacobian entry: one run-time-sized block
// with its sparse pattern (column groups, 8-wide Jets), the same rows as fixed-size blocks of
// one row each, and F and J written by hand, on Bratu's problem (banded, 3 entries a row); and
// fixed against run-time-sized dense blocks. Counter `per_entry`: time per Jacobian entry.
#include <benchmark/benchmark.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "solvers/base/constants.h"
#include "solvers/mcp/problem_builder.h"

namespace ncpkit {
namespace {

constexpr double kLambda = 1.0;

// Rows first .. first + count - 1 of Bratu's F(x) = A x / h^2 - lambda exp(x), A =
// tridiag(-1, 2, -1), with n unknowns in all. x points at x[first - 1] when first > 0.
template <class T>
void BratuRows(int n, int first, int count, const T* x, T* r) {
  using std::exp;
  const double h2 = 1.0 / ((n + 1.0) * (n + 1.0));
  const int shift = first > 0 ? 1 : 0;
  for (int a = 0; a < count; ++a) {
    const int i = first + a;
    const T& v = x[a + shift];
    T sum = 2.0 * v;
    if (i > 0) sum -= x[a + shift - 1];
    if (i + 1 < n) sum -= x[a + shift + 1];
    r[a] = sum / h2 - kLambda * exp(v);
  }
}

struct BratuBlock {  // all n rows, one block of n variables
  int n;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    BratuRows(n, 0, n, x[0], r);
    return true;
  }
};

struct BratuRow {  // row i from the 1-variable blocks it reads (2 or 3 of them)
  int n, i;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    T v[3];
    const int reads = (i > 0) + 1 + (i + 1 < n);
    for (int b = 0; b < reads; ++b) v[b] = x[b][0];
    BratuRows(n, i, 1, v, r);
    return true;
  }
};

// Bratu's F and J by hand, into a fixed pattern.
class HandWrittenBratu : public MixedComplementarityProblem {
 public:
  explicit HandWrittenBratu(int n)
      : n_(n), l_(Eigen::VectorXd::Zero(n)), u_(Eigen::VectorXd::Constant(n, kInf)) {
    std::vector<Eigen::Triplet<double>> t;
    for (int i = 0; i < n; ++i) {
      for (int j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); ++j) t.emplace_back(i, j, 1.0);
    }
    pattern_.resize(n, n);
    pattern_.setFromTriplets(t.begin(), t.end());
  }
  int size() const override { return n_; }
  const Eigen::VectorXd& lower() const override { return l_; }
  const Eigen::VectorXd& upper() const override { return u_; }
  bool Evaluate(const Eigen::VectorXd& x, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override {
    const double inv_h2 = (n_ + 1.0) * (n_ + 1.0);
    F->resize(n_);
    BratuRows(n_, 0, n_, x.data(), F->data());
    if (J) {
      if (J->nonZeros() != pattern_.nonZeros()) *J = pattern_;
      double* value = J->valuePtr();  // column-major: column j holds rows j-1, j, j+1
      int k = 0;
      for (int j = 0; j < n_; ++j) {
        if (j > 0) value[k++] = -inv_h2;
        value[k++] = 2.0 * inv_h2 - kLambda * std::exp(x[j]);
        if (j + 1 < n_) value[k++] = -inv_h2;
      }
    }
    return true;
  }

 private:
  int n_;
  Eigen::VectorXd l_, u_;
  Eigen::SparseMatrix<double> pattern_;
};

std::unique_ptr<ProblemBuilder> DynamicBratu(int n) {
  auto problem = std::make_unique<ProblemBuilder>();
  const int x = problem->AddVariableBlock(n, 0.0, kInf);
  std::vector<std::vector<int>> pattern(n);
  for (int i = 0; i < n; ++i) {
    for (int j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); ++j) pattern[i].push_back(j);
  }
  problem->AddDynamicResidualBlock(BratuBlock{n}, {x}, {x}, pattern);
  return problem;
}

std::unique_ptr<ProblemBuilder> FixedRowsBratu(int n) {
  auto problem = std::make_unique<ProblemBuilder>();
  for (int i = 0; i < n; ++i) problem->AddVariableBlock(1, 0.0, kInf);
  for (int i = 0; i < n; ++i) {
    if (i > 0 && i + 1 < n) {
      problem->AddResidualBlock<1, 1, 1, 1>(BratuRow{n, i}, i, {i - 1, i, i + 1});
    } else if (i > 0) {
      problem->AddResidualBlock<1, 1, 1>(BratuRow{n, i}, i, {i - 1, i});
    } else {
      problem->AddResidualBlock<1, 1, 1>(BratuRow{n, i}, i, {i, i + 1});
    }
  }
  return problem;
}

void TimeJacobian(benchmark::State& state, const MixedComplementarityProblem& problem) {
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(problem.size(), 0.1);
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  bool ok = problem.Evaluate(x, &F, &J);
  for (auto _ : state) {
    ok = problem.Evaluate(x, &F, &J) && ok;
    benchmark::DoNotOptimize(J.valuePtr());
  }
  if (!ok) state.SkipWithError("Evaluate failed");
  state.counters["entries"] = static_cast<double>(J.nonZeros());
  state.counters["per_entry"] = benchmark::Counter(
      static_cast<double>(J.nonZeros()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_BratuJacobianDynamic(benchmark::State& state) {
  TimeJacobian(state, *DynamicBratu(static_cast<int>(state.range(0))));
}
void BM_BratuJacobianFixedRows(benchmark::State& state) {
  TimeJacobian(state, *FixedRowsBratu(static_cast<int>(state.range(0))));
}
void BM_BratuJacobianHandWritten(benchmark::State& state) {
  TimeJacobian(state, HandWrittenBratu(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_BratuJacobianDynamic)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_BratuJacobianFixedRows)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_BratuJacobianHandWritten)->Arg(100)->Arg(1000)->Arg(10000);

// A dense block: every residual reads every variable (through their mean).
struct DenseCoupled {
  int n;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    using std::sin;
    const T* v = x[0];
    T mean = T(0.0);
    for (int j = 0; j < n; ++j) mean += v[j] / double(n);
    for (int i = 0; i < n; ++i) r[i] = v[i] * v[i] * v[i] + sin(v[(i + 1) % n]) * v[i] + mean;
    return true;
  }
};

template <int kN>
void BM_DenseJacobianFixed(benchmark::State& state) {
  ProblemBuilder problem;
  const int x = problem.AddVariableBlock(kN, -kInf, kInf);
  problem.AddResidualBlock<kN, kN>(DenseCoupled{kN}, x, {x});
  TimeJacobian(state, problem);
}
void BM_DenseJacobianDynamic(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  ProblemBuilder problem;
  const int x = problem.AddVariableBlock(n, -kInf, kInf);
  problem.AddDynamicResidualBlock(DenseCoupled{n}, {x}, {x});
  TimeJacobian(state, problem);
}
BENCHMARK_TEMPLATE(BM_DenseJacobianFixed, 24);
BENCHMARK_TEMPLATE(BM_DenseJacobianFixed, 64);
BENCHMARK_TEMPLATE(BM_DenseJacobianFixed, 256);
BENCHMARK(BM_DenseJacobianDynamic)->Arg(24)->Arg(64)->Arg(256)->Arg(1000);

}  // namespace
}  // namespace ncpkit
