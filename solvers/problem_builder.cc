#include "solvers/problem_builder.h"

#include <algorithm>
#include <cmath>

#include "solvers/input_error.h"

namespace ncpkit {

int ProblemBuilder::AddVariableBlock(int size, double lower, double upper, double start) {
  return AddVariableBlock(Eigen::VectorXd::Constant(size, lower),
                          Eigen::VectorXd::Constant(size, upper),
                          Eigen::VectorXd::Constant(size, start));
}

int ProblemBuilder::AddVariableBlock(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                     const Eigen::VectorXd& start) {
  const Eigen::Index count = lower.size();
  if (count <= 0 || upper.size() != count || start.size() != count) {
    throw InputError(
        "variable block: lower, upper and start need one equal, positive "
        "size (got " +
        std::to_string(lower.size()) + ", " + std::to_string(upper.size()) + ", " +
        std::to_string(start.size()) + ")");
  }
  for (Eigen::Index k = 0; k < count; ++k) {
    if (std::isnan(lower[k]) || std::isnan(upper[k]) || !(lower[k] <= upper[k]) ||
        !std::isfinite(start[k])) {
      throw InputError("variable block: entry " + std::to_string(k) +
                       " needs lower <= upper, no NaN, and a finite start (got [" +
                       std::to_string(lower[k]) + ", " + std::to_string(upper[k]) + "], start " +
                       std::to_string(start[k]) + ")");
    }
  }
  const int offset = size();
  offsets_.push_back(offset);
  block_sizes_.push_back(static_cast<int>(count));
  auto append = [&](Eigen::VectorXd& to, const Eigen::VectorXd& v) {
    to.conservativeResize(offset + count);
    to.tail(count) = v;
  };
  append(lower_, lower);
  append(upper_, upper);
  append(start_, start);
  pattern_ready_ = false;
  return static_cast<int>(offsets_.size()) - 1;
}

void ProblemBuilder::CheckBlock(int block, int expected_size, const char* role) const {
  if (block < 0 || block >= num_variable_blocks()) {
    throw InputError(std::string("residual block: ") + role + " variable block " +
                     std::to_string(block) + " does not exist");
  }
  if (block_sizes_[block] != expected_size) {
    throw InputError(std::string("residual block: ") + role + " variable block " +
                     std::to_string(block) + " has " + std::to_string(block_sizes_[block]) +
                     " variables, expected " + std::to_string(expected_size));
  }
}

void ProblemBuilder::CheckPairing(const std::vector<int>& paired_blocks, int num_residuals) const {
  if (paired_blocks.size() == 1) return CheckBlock(paired_blocks[0], num_residuals, "paired");
  int total = 0;
  for (int block : paired_blocks) {
    if (block < 0 || block >= num_variable_blocks()) {
      throw InputError("residual block: paired variable block " + std::to_string(block) +
                       " does not exist");
    }
    total += block_sizes_[block];
  }
  if (total != num_residuals) {
    throw InputError("residual block: paired variable blocks have " + std::to_string(total) +
                     " variables, the functor writes " + std::to_string(num_residuals) +
                     " residuals");
  }
}

void ProblemBuilder::BuildPattern() const {
  const int n = size();
  std::vector<char> covered(n, 0);
  std::vector<Eigen::Triplet<double>> triplets;
  for (const auto& block : residual_blocks_) {
    block->rows.clear();
    for (int paired : block->paired_blocks) {
      for (int k = 0; k < block_sizes_[paired]; ++k) block->rows.push_back(offsets_[paired] + k);
    }
    for (int row : block->rows) {
      covered[row] = 1;
      for (int column : block->local_columns) triplets.emplace_back(row, column, 0.0);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!covered[i]) {
      throw InputError("problem builder: variable " + std::to_string(i) +
                       " has no residual row paired with it");
    }
  }
  pattern_.resize(n, n);
  pattern_.setFromTriplets(triplets.begin(), triplets.end());
  pattern_.makeCompressed();
  size_t largest = 0;
  for (const auto& block : residual_blocks_) {
    const int m = block->num_residuals();
    const int c = block->num_local_variables();
    largest = std::max(largest, static_cast<size_t>(m) * c);
    block->jacobian_slots.assign(static_cast<size_t>(m) * c, 0);
    for (int k = 0; k < c; ++k) {
      const int column = block->local_columns[k];
      const int* begin = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[column];
      const int* end = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[column + 1];
      for (int i = 0; i < m; ++i) {
        const int* at = std::lower_bound(begin, end, block->rows[i]);
        block->jacobian_slots[i * c + k] = static_cast<int>(at - pattern_.innerIndexPtr());
      }
    }
  }
  local_jacobian_.resize(largest);
  pattern_ready_ = true;
}

bool ProblemBuilder::Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                              Eigen::SparseMatrix<double>* J) const {
  if (!pattern_ready_) BuildPattern();
  F->setZero(size());
  if (J) {
    if (J->nonZeros() != pattern_.nonZeros() || J->rows() != size()) *J = pattern_;
    std::fill(J->valuePtr(), J->valuePtr() + J->nonZeros(), 0.0);
  }
  for (const auto& block : residual_blocks_) {
    const int m = block->num_residuals();
    const int c = block->num_local_variables();
    local_residuals_.resize(m);
    if (!block->Evaluate(z, local_residuals_.data(), J ? local_jacobian_.data() : nullptr)) {
      return false;
    }
    for (int i = 0; i < m; ++i) (*F)[block->rows[i]] += local_residuals_[i];
    if (J) {
      double* values = J->valuePtr();
      for (int k = 0; k < m * c; ++k) values[block->jacobian_slots[k]] += local_jacobian_[k];
    }
  }
  if (!F->allFinite()) return false;
  if (J) {
    for (Eigen::Index k = 0; k < J->nonZeros(); ++k) {
      if (!std::isfinite(J->valuePtr()[k])) return false;
    }
  }
  return true;
}

}  // namespace ncpkit
