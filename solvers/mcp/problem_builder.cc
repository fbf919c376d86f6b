#include "solvers/mcp/problem_builder.h"

#include <algorithm>
#include <cmath>

#include "solvers/base/input_error.h"
#include "solvers/linalg/internal/sparse_assembly.h"

namespace ncpkit {
namespace {

// Calls visit(e, i, k) for each local Jacobian entry e = (residual i, local variable k) of the
// block, in the order Evaluate() writes them.
template <class Visit>
void ForEachEntry(const internal::ResidualBlockBase& block, const Visit& visit) {
  const int m = block.num_residuals();
  const int c = block.num_local_variables();
  if (block.pattern_starts.empty()) {
    for (int i = 0; i < m; ++i) {
      for (int k = 0; k < c; ++k) visit(i * c + k, i, k);
    }
    return;
  }
  for (int i = 0; i < m; ++i) {
    for (int e = block.pattern_starts[i]; e < block.pattern_starts[i + 1]; ++e) {
      visit(e, i, block.pattern_columns[e]);
    }
  }
}

}  // namespace

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
  is_parameter_.push_back(0);
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

int ProblemBuilder::AddParameterBlock(const Eigen::VectorXd& values) {
  const Eigen::Index count = values.size();
  if (count <= 0) throw InputError("parameter block: needs at least one value");
  for (Eigen::Index k = 0; k < count; ++k) {
    if (!std::isfinite(values[k]))
      throw InputError("parameter block: entry " + std::to_string(k) + " is not finite");
  }
  const int offset = num_parameters();
  offsets_.push_back(offset);
  block_sizes_.push_back(static_cast<int>(count));
  is_parameter_.push_back(1);
  parameters_.conservativeResize(offset + count);
  parameters_.tail(count) = values;
  pattern_ready_ = false;
  return static_cast<int>(offsets_.size()) - 1;
}

void ProblemBuilder::SetParameterBlock(int block, const Eigen::VectorXd& values) {
  if (block < 0 || block >= num_variable_blocks() || !is_parameter_[block])
    throw InputError("parameter block " + std::to_string(block) + " does not exist");
  if (values.size() != block_sizes_[block] || !values.allFinite())
    throw InputError("parameter block " + std::to_string(block) + ": needs " +
                     std::to_string(block_sizes_[block]) + " finite values");
  parameters_.segment(offsets_[block], block_sizes_[block]) = values;
}

void ProblemBuilder::CheckBlock(int block, int expected_size, const char* role) const {
  if (block < 0 || block >= num_variable_blocks()) {
    throw InputError(std::string("residual block: ") + role + " variable block " +
                     std::to_string(block) + " does not exist");
  }
  if (is_parameter_[block] && std::string(role) == "paired") {
    throw InputError("residual block: block " + std::to_string(block) +
                     " is a parameter block; residuals pair with variable blocks");
  }
  if (expected_size >= 0 && block_sizes_[block] != expected_size) {
    throw InputError(std::string("residual block: ") + role + " variable block " +
                     std::to_string(block) + " has " + std::to_string(block_sizes_[block]) +
                     " variables, expected " + std::to_string(expected_size));
  }
}

// The number of variables of the paired blocks (which must exist; at least one).
int ProblemBuilder::PairedSize(const std::vector<int>& paired_blocks) const {
  if (paired_blocks.empty()) throw InputError("residual block: no paired variable block");
  int total = 0;
  for (int block : paired_blocks) {
    CheckBlock(block, -1, "paired");
    total += block_sizes_[block];
  }
  return total;
}

void ProblemBuilder::CheckPairing(const std::vector<int>& paired_blocks, int num_residuals) const {
  if (paired_blocks.size() == 1) return CheckBlock(paired_blocks[0], num_residuals, "paired");
  const int total = PairedSize(paired_blocks);
  if (total != num_residuals) {
    throw InputError("residual block: paired variable blocks have " + std::to_string(total) +
                     " variables, the functor writes " + std::to_string(num_residuals) +
                     " residuals");
  }
}

// A dynamic block's pattern (one list of local variables per residual) into the block's
// compressed rows, sorted and without repeats; empty: dense.
void ProblemBuilder::SetPattern(const std::vector<std::vector<int>>& pattern, int num_local,
                                internal::ResidualBlockBase* block) {
  if (pattern.empty()) return;
  const int m = block->num_residuals();
  if (static_cast<int>(pattern.size()) != m) {
    throw InputError("residual block: the pattern has " + std::to_string(pattern.size()) +
                     " rows, the block writes " + std::to_string(m) + " residuals");
  }
  block->pattern_starts.assign(1, 0);
  for (int i = 0; i < m; ++i) {
    std::vector<int> columns = pattern[i];
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    if (!columns.empty() && (columns.front() < 0 || columns.back() >= num_local)) {
      throw InputError("residual block: pattern row " + std::to_string(i) +
                       " names local variable " +
                       std::to_string(columns.front() < 0 ? columns.front() : columns.back()) +
                       ", outside 0.." + std::to_string(num_local - 1));
    }
    block->pattern_columns.insert(block->pattern_columns.end(), columns.begin(), columns.end());
    block->pattern_starts.push_back(static_cast<int>(block->pattern_columns.size()));
  }
}

void ProblemBuilder::AddBlock(std::unique_ptr<internal::ResidualBlockBase> block,
                              const std::vector<int>& paired_blocks,
                              const std::vector<int>& blocks) {
  if (blocks.empty()) throw InputError("residual block: reads no variable block");
  block->block_ids = blocks;
  block->paired_blocks = paired_blocks;
  residual_blocks_.push_back(std::move(block));
  pattern_ready_ = false;
}

namespace internal {

int GroupColumns(int num_columns, const std::vector<int>& pattern_starts,
                 const std::vector<int>& pattern_columns, std::vector<int>* group) {
  group->resize(num_columns);
  if (pattern_starts.empty()) {
    for (int k = 0; k < num_columns; ++k) (*group)[k] = k;
    return num_columns;
  }
  // The rows of each column (the pattern transposed).
  const int m = static_cast<int>(pattern_starts.size()) - 1;
  std::vector<int> column_starts(num_columns + 1, 0), column_rows(pattern_columns.size());
  for (int c : pattern_columns) ++column_starts[c + 1];
  for (int k = 0; k < num_columns; ++k) column_starts[k + 1] += column_starts[k];
  std::vector<int> next(column_starts.begin(), column_starts.end() - 1);
  for (int i = 0; i < m; ++i) {
    for (int e = pattern_starts[i]; e < pattern_starts[i + 1]; ++e) {
      column_rows[next[pattern_columns[e]]++] = i;
    }
  }
  // Greedy: each column takes the lowest group that no column sharing a row with it has.
  std::vector<int> taken_by(num_columns, -1);  // taken_by[g] == k: group g is barred for k
  int num_groups = 0;
  group->assign(num_columns, -1);
  for (int k = 0; k < num_columns; ++k) {
    for (int r = column_starts[k]; r < column_starts[k + 1]; ++r) {
      const int i = column_rows[r];
      for (int e = pattern_starts[i]; e < pattern_starts[i + 1]; ++e) {
        const int g = (*group)[pattern_columns[e]];
        if (g >= 0) taken_by[g] = k;
      }
    }
    int g = 0;
    while (taken_by[g] == k) ++g;
    (*group)[k] = g;
    num_groups = std::max(num_groups, g + 1);
  }
  return num_groups;
}

}  // namespace internal

void ProblemBuilder::BuildPattern() const {
  const int n = size();
  std::vector<char> covered(n, 0);
  size_t largest = 0, total = 0;
  for (const auto& block : residual_blocks_) {
    block->local_columns.clear();
    for (int id : block->block_ids) {
      const int base = is_parameter_[id] ? n + offsets_[id] : offsets_[id];
      for (int k = 0; k < block_sizes_[id]; ++k) block->local_columns.push_back(base + k);
    }
    block->rows.clear();
    for (int paired : block->paired_blocks) {
      for (int k = 0; k < block_sizes_[paired]; ++k) block->rows.push_back(offsets_[paired] + k);
    }
    for (int row : block->rows) covered[row] = 1;
    largest = std::max(largest, static_cast<size_t>(block->num_jacobian_entries()));
    total += static_cast<size_t>(block->num_jacobian_entries());
    block->jacobian_slots.assign(block->num_jacobian_entries(), 0);
  }
  for (int i = 0; i < n; ++i) {
    if (!covered[i]) {
      throw InputError("problem builder: variable " + std::to_string(i) +
                       " has no residual row paired with it");
    }
  }
  // Each block's entries with the slot each lands in: in the variables' pattern, or (-1 - slot)
  // in the parameters'.
  // (The entries are written field by field: a braced push_back builds each on the stack and
  // reloads it whole, a store-forwarding stall per entry that cost a third of this function.)
  std::vector<internal::PatternEntry> entries(total), parameter_entries, sorted;
  size_t count = 0;
  for (const auto& block : residual_blocks_) {
    ForEachEntry(*block, [&](int e, int i, int k) {
      const int column = block->local_columns[k];
      int* slot = &block->jacobian_slots[e];
      if (column < n) {
        internal::PatternEntry& entry = entries[count++];
        entry.row = block->rows[i];
        entry.column = column;
        entry.position = slot;
      } else {
        parameter_entries.push_back({block->rows[i], column - n, slot});
      }
    });
  }
  entries.resize(count);
  internal::CompressPattern(n, n, entries, &sorted, &pattern_);
  internal::CompressPattern(n, num_parameters(), parameter_entries, &sorted, &parameter_pattern_);
  for (const internal::PatternEntry& e : parameter_entries) *e.position = -1 - *e.position;
  local_jacobian_.resize(largest);
  pattern_ready_ = true;
}

const Eigen::VectorXd& ProblemBuilder::Extended(const Eigen::VectorXd& z) const {
  if (parameters_.size() == 0) return z;
  extended_.resize(z.size() + parameters_.size());
  extended_.head(z.size()) = z;
  extended_.tail(parameters_.size()) = parameters_;
  return extended_;
}

bool ProblemBuilder::EvaluateBlocks(const Eigen::VectorXd& z, Eigen::VectorXd* F, double* J,
                                    double* P) const {
  const Eigen::VectorXd& x = Extended(z);
  const bool derivatives = J != nullptr || P != nullptr;
  for (const auto& block : residual_blocks_) {
    const int m = block->num_residuals();
    const int entries = block->num_jacobian_entries();
    local_residuals_.resize(m);
    if (!block->Evaluate(x, local_residuals_.data(),
                         derivatives ? local_jacobian_.data() : nullptr)) {
      return false;
    }
    for (int i = 0; i < m; ++i) (*F)[block->rows[i]] += local_residuals_[i];
    if (!derivatives) continue;
    for (int k = 0; k < entries; ++k) {
      const int slot = block->jacobian_slots[k];
      if (slot >= 0) {
        if (J != nullptr) J[slot] += local_jacobian_[k];
      } else if (P != nullptr) {
        P[-1 - slot] += local_jacobian_[k];
      }
    }
  }
  return F->allFinite();
}

bool ProblemBuilder::Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                              Eigen::SparseMatrix<double>* J) const {
  if (!pattern_ready_) BuildPattern();
  F->setZero(size());
  if (J) {
    if (J->nonZeros() != pattern_.nonZeros() || J->rows() != size()) *J = pattern_;
    std::fill(J->valuePtr(), J->valuePtr() + J->nonZeros(), 0.0);
  }
  if (!EvaluateBlocks(z, F, J ? J->valuePtr() : nullptr, nullptr)) return false;
  if (J) {
    for (Eigen::Index k = 0; k < J->nonZeros(); ++k) {
      if (!std::isfinite(J->valuePtr()[k])) return false;
    }
  }
  return true;
}

bool ProblemBuilder::EvaluateParameterJacobian(const Eigen::VectorXd& z,
                                               Eigen::SparseMatrix<double>* J) const {
  if (!pattern_ready_) BuildPattern();
  Eigen::VectorXd F = Eigen::VectorXd::Zero(size());
  *J = parameter_pattern_;
  std::fill(J->valuePtr(), J->valuePtr() + J->nonZeros(), 0.0);
  if (!EvaluateBlocks(z, &F, nullptr, J->valuePtr())) return false;
  for (Eigen::Index k = 0; k < J->nonZeros(); ++k) {
    if (!std::isfinite(J->valuePtr()[k])) return false;
  }
  return true;
}

}  // namespace ncpkit
