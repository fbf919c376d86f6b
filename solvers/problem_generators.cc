#include "solvers/problem_generators.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace ncpkit {

LinearComplementarityProblem RandomSpdLcp(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Eigen::MatrixXd A(n, n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) A(i, j) = uniform(rng);
  }
  Eigen::MatrixXd M = A.transpose() * A / n;
  M.diagonal().array() += 0.1;
  Eigen::VectorXd q(n);
  for (int i = 0; i < n; ++i) q[i] = uniform(rng);
  LinearComplementarityProblem problem(std::move(M), std::move(q));
  problem.name = "random_spd_" + std::to_string(n);
  return problem;
}

LinearComplementarityProblem ContactLikeLcp(int rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const int bodies = std::max(2, rows / 2);
  // Inverse mass blocks: B B^T + 0.5 I, 6 x 6 SPD.
  std::vector<Eigen::Matrix<double, 6, 6>> inverse_mass(bodies);
  for (auto& block : inverse_mass) {
    Eigen::Matrix<double, 6, 6> B;
    for (int j = 0; j < 6; ++j) {
      for (int i = 0; i < 6; ++i) B(i, j) = 0.5 * uniform(rng);
    }
    block = B * B.transpose();
    block.diagonal().array() += 0.5;
  }
  std::uniform_int_distribution<int> pick_body(0, bodies - 1);
  std::uniform_int_distribution<int> pick_offset(1, 3);
  std::vector<Eigen::Triplet<double>> j_entries, a_entries;
  for (int r = 0; r < rows; ++r) {
    const int a = pick_body(rng);
    const int b = (a + pick_offset(rng)) % bodies;
    for (int body : {a, b}) {
      for (int k = 0; k < 6; ++k) j_entries.emplace_back(r, 6 * body + k, uniform(rng));
    }
  }
  for (int body = 0; body < bodies; ++body) {
    for (int j = 0; j < 6; ++j) {
      for (int i = 0; i < 6; ++i) {
        a_entries.emplace_back(6 * body + i, 6 * body + j, inverse_mass[body](i, j));
      }
    }
  }
  Eigen::SparseMatrix<double> J(rows, 6 * bodies), A_inv(6 * bodies, 6 * bodies);
  J.setFromTriplets(j_entries.begin(), j_entries.end());
  A_inv.setFromTriplets(a_entries.begin(), a_entries.end());
  Eigen::SparseMatrix<double> M = J * A_inv * Eigen::SparseMatrix<double>(J.transpose());
  Eigen::SparseMatrix<double> identity(rows, rows);
  identity.setIdentity();
  M += 1e-6 * identity;
  M.prune(0.0);
  Eigen::VectorXd q(rows);
  for (int i = 0; i < rows; ++i) q[i] = uniform(rng);
  LinearComplementarityProblem problem(M, std::move(q));
  problem.name = "contact_like_" + std::to_string(rows);
  return problem;
}

LinearComplementarityProblem MurtyLcp(int n) {
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd q(n);
  for (int i = 0; i < n; ++i) {
    M(i, i) = 1.0;
    for (int j = i + 1; j < n; ++j) M(i, j) = 2.0;
    q[i] = -(std::ldexp(1.0, n + 1) - std::ldexp(1.0, i + 1));
  }
  LinearComplementarityProblem problem(std::move(M), std::move(q));
  problem.name = "murty_" + std::to_string(n);
  return problem;
}

}  // namespace ncpkit
