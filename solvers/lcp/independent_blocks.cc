#include "solvers/lcp/independent_blocks.h"

#include <algorithm>

namespace ncpkit {

int IndependentBlocks::Root(int i) {
  while (parent_[i] != i) {
    parent_[i] = parent_[parent_[i]];  // path halving
    i = parent_[i];
  }
  return i;
}

void IndependentBlocks::Find(const LinearComplementarityProblem& problem) {
  FindIn(problem.sparse_matrix());
}

void IndependentBlocks::Find(const Eigen::SparseMatrix<double>& matrix) { FindIn(matrix); }

void IndependentBlocks::Start(int n) {
  parent_.resize(n);
  for (int i = 0; i < n; ++i) parent_[i] = i;
}

void IndependentBlocks::Join(int i, int j) {
  if (parent_[i] == parent_[j]) return;  // most joins of a block's entries, once it has formed
  const int a = Root(i), b = Root(j);
  parent_[std::max(a, b)] = std::min(a, b);
}

template <class Matrix>
void IndependentBlocks::FindIn(const Matrix& M) {
  Start(static_cast<int>(M.rows()));
  // Every stored entry (i, j) joins i and j, the larger root under the smaller, so that each
  // set's root is its smallest unknown. The entries of one outer index share it: its root is
  // found once and follows the joins.
  for (int k = 0; k < M.outerSize(); ++k) {
    int b = -1;
    for (typename Matrix::InnerIterator it(M, k); it; ++it) {
      if (it.index() == k) continue;  // the diagonal joins nothing
      if (b < 0) b = Root(k);
      const int a = Root(static_cast<int>(it.index()));
      if (a == b) continue;
      parent_[std::max(a, b)] = std::min(a, b);
      b = std::min(a, b);
    }
  }
  Number();
}

void IndependentBlocks::Number() {
  // Number the blocks by their smallest unknown (the root), then lay out their members.
  const int n = static_cast<int>(parent_.size());
  block_of_.assign(n, -1);
  start_.assign(1, 0);
  for (int i = 0; i < n; ++i) {
    const int r = Root(i);
    parent_[i] = r;
    if (block_of_[r] < 0) {
      block_of_[r] = static_cast<int>(start_.size()) - 1;
      start_.push_back(0);
    }
    ++start_[block_of_[r] + 1];
  }
  for (size_t b = 1; b < start_.size(); ++b) start_[b] += start_[b - 1];
  cursor_.assign(start_.begin(), start_.end() - 1);
  members_.resize(n);
  local_.resize(n);
  for (int i = 0; i < n; ++i) {
    const int b = block_of_[parent_[i]];
    local_[i] = cursor_[b] - start_[b];
    members_[cursor_[b]++] = i;
  }
}

void IndependentBlocks::Extract(const LinearComplementarityProblem& problem, int b,
                                Storage* storage, LinearComplementarityProblem* sub) const {
  const int size = block_size(b);
  const int* member = members(b);
  const Eigen::SparseMatrix<double>& columns = problem.sparse_columns();
  int entries = 0;
  for (int k = 0; k < size; ++k) {
    entries += static_cast<int>(columns.outerIndexPtr()[member[k] + 1] -
                                columns.outerIndexPtr()[member[k]]);
  }
  // Every entry of a member's column lies in a row of the same block, and local_ increases with
  // the unknown within a block: the columns copy over with their rows renumbered, still sorted.
  Eigen::SparseMatrix<double>& M = storage->M;
  M.resize(size, size);
  M.resizeNonZeros(entries);
  int next = 0;
  for (int k = 0; k < size; ++k) {
    M.outerIndexPtr()[k] = next;
    for (Eigen::SparseMatrix<double>::InnerIterator it(columns, member[k]); it; ++it) {
      M.innerIndexPtr()[next] = local_[it.row()];
      M.valuePtr()[next] = it.value();
      ++next;
    }
  }
  M.outerIndexPtr()[size] = next;
  Gather(b, problem.q(), &storage->q);
  Gather(b, problem.lower(), &storage->l);
  Gather(b, problem.upper(), &storage->u);
  sub->AssignMlcp(M, storage->q, storage->l, storage->u);
}

void IndependentBlocks::Gather(int b, const Eigen::VectorXd& full, Eigen::VectorXd* part) const {
  const int size = block_size(b);
  const int* member = members(b);
  part->resize(size);
  for (int k = 0; k < size; ++k) (*part)[k] = full[member[k]];
}

void IndependentBlocks::Scatter(int b, const Eigen::VectorXd& part, Eigen::VectorXd* full) const {
  const int* member = members(b);
  for (int k = 0; k < block_size(b); ++k) (*full)[member[k]] = part[k];
}

}  // namespace ncpkit
