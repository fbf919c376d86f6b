#include "solvers/lcp/linear_problem.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("problem validation rejects bad input with a message") {
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(2, 2);
  Eigen::VectorXd q(2);
  q << -1, 1;
  CHECK(ErrorOf([&] {
          LinearComplementarityProblem(Eigen::MatrixXd(2, 3), q);
        }).find("2 x 3, it must be square") != std::string::npos);
  CHECK(ErrorOf([&] {
          LinearComplementarityProblem(M, Eigen::VectorXd(3));
        }).find("q has 3 entries") != std::string::npos);
  Eigen::MatrixXd bad = M;
  bad(1, 0) = std::nan("");
  CHECK(ErrorOf([&] { LinearComplementarityProblem(bad, q); }).find("M(1,0)") != std::string::npos);
  Eigen::VectorXd bad_q = q;
  bad_q[1] = kInf;
  CHECK(ErrorOf([&] { LinearComplementarityProblem(M, bad_q); }).find("q(1)") != std::string::npos);
  Eigen::VectorXd l(2), u(2);
  l << 0, 2;
  u << 1, 1;
  CHECK(ErrorOf([&] { LinearComplementarityProblem(M, q, l, u); }).find("l(1) = 2 > u(1) = 1") !=
        std::string::npos);
  l << kInf, 0;
  u << kInf, 1;
  CHECK(ErrorOf([&] { LinearComplementarityProblem(M, q, l, u); }).find("no feasible value") !=
        std::string::npos);
  l << std::nan(""), 0;
  CHECK(ErrorOf([&] { LinearComplementarityProblem(M, q, l, u); }).find("NaN") !=
        std::string::npos);
  Eigen::SparseMatrix<double> S(2, 2);
  S.insert(0, 0) = std::nan("");
  CHECK(ErrorOf([&] { LinearComplementarityProblem(S, q); }).find("M(0,0)") != std::string::npos);
}

TEST_CASE("natural residual is ||z - mid(l, u, z - F)||_inf") {
  Eigen::VectorXd z(3), F(3), l(3), u(3);
  l << 0, -kInf, -1;
  u << kInf, kInf, 1;
  z << 0, 2, 1;
  F << 3, 0, -5;  // at lower bound with F >= 0, free with F = 0, at upper with F <= 0
  CHECK(natural_residual(z, F, l, u) == 0.0);
  z << 0.5, 2, 0.25;
  F << 3, 1e-3, 0.5;
  // row 0: 0.5 - max(0, -2.5) = 0.5; row 1: 1e-3; row 2: 0.25 - mid(-1, 1, -0.25) = 0.5.
  CHECK(natural_residual(z, F, l, u) == doctest::Approx(0.5));
  z[0] = std::nan("");
  CHECK(natural_residual(z, F, l, u) == kInf);
}

TEST_CASE("problem views and the LCP residual agree") {
  Eigen::MatrixXd M(2, 2);
  M << 2, 1, 1, 2;
  Eigen::VectorXd q(2);
  q << -5, -6;
  LinearComplementarityProblem dense(M, q);
  LinearComplementarityProblem sparse(Eigen::SparseMatrix<double>(M.sparseView()), q);
  CHECK(dense.IsStandardLcp());
  CHECK(dense.has_dense_matrix());
  CHECK_FALSE(sparse.has_dense_matrix());
  CHECK((sparse.dense_matrix() - M).norm() == 0.0);
  Eigen::VectorXd z(2);
  z << 4.0 / 3.0, 7.0 / 3.0;
  CHECK(natural_residual(dense, z) < 1e-15);
  CHECK(natural_residual(sparse, z) < 1e-15);
  CHECK(natural_residual(dense, Eigen::VectorXd::Zero(3)) == kInf);
}

}  // namespace
}  // namespace ncpkit
