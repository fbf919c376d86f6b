#include "solvers/linalg/internal/normal_equations.h"

#include <algorithm>

namespace ncpkit::internal {

bool NormalEquations::SamePattern(const Eigen::SparseMatrix<double>& H) const {
  const Eigen::Index n = H.cols();
  return static_cast<Eigen::Index>(outer_.size()) == n + 1 &&
         std::equal(H.outerIndexPtr(), H.outerIndexPtr() + n + 1, outer_.begin()) &&
         static_cast<Eigen::Index>(inner_.size()) == H.nonZeros() &&
         std::equal(H.innerIndexPtr(), H.innerIndexPtr() + H.nonZeros(), inner_.begin());
}

void NormalEquations::BuildPattern(const Eigen::SparseMatrix<double>& H) {
  const int n = static_cast<int>(H.cols());
  const int nnz = static_cast<int>(H.nonZeros());
  const int* outer = H.outerIndexPtr();
  const int* inner = H.innerIndexPtr();
  outer_.assign(outer, outer + n + 1);
  inner_.assign(inner, inner + nnz);
  // H's rows by a counting sort of its entries: each row's columns come out ascending.
  transpose_outer_.assign(static_cast<size_t>(n) + 1, 0);
  for (int p = 0; p < nnz; ++p) ++transpose_outer_[inner[p] + 1];
  for (int k = 0; k < n; ++k) transpose_outer_[k + 1] += transpose_outer_[k];
  transpose_index_.resize(nnz);
  transpose_slot_.resize(nnz);
  std::vector<int> next(transpose_outer_.begin(), transpose_outer_.end() - 1);
  for (int j = 0; j < n; ++j) {
    for (int p = outer[j]; p < outer[j + 1]; ++p) {
      const int at = next[inner[p]]++;
      transpose_index_[at] = j;
      transpose_slot_[at] = p;
    }
  }
  row_values_.resize(nnz);
  // Column j of the lower triangle holds the columns i >= j that share a row with column j,
  // and the diagonal.
  sum_.assign(n, 0.0);
  touched_.assign(n, 0);
  row_cursor_.resize(n);
  std::vector<int> outer_normal(static_cast<size_t>(n) + 1, 0), rows, column;
  for (int j = 0; j < n; ++j) {
    column.clear();
    touched_[j] = 1;
    column.push_back(j);
    for (int p = outer[j]; p < outer[j + 1]; ++p) {
      const int k = inner[p];
      for (int q = transpose_outer_[k]; q < transpose_outer_[k + 1]; ++q) {
        const int i = transpose_index_[q];
        if (i >= j && !touched_[i]) {
          touched_[i] = 1;
          column.push_back(i);
        }
      }
    }
    std::sort(column.begin(), column.end());
    for (const int i : column) touched_[i] = 0;
    rows.insert(rows.end(), column.begin(), column.end());
    outer_normal[j + 1] = static_cast<int>(rows.size());
  }
  normal_.resize(n, n);
  normal_.resizeNonZeros(static_cast<Eigen::Index>(rows.size()));
  std::copy(outer_normal.begin(), outer_normal.end(), normal_.outerIndexPtr());
  std::copy(rows.begin(), rows.end(), normal_.innerIndexPtr());
  std::fill(normal_.valuePtr(), normal_.valuePtr() + rows.size(), 0.0);
  analyzed_ = false;
}

void NormalEquations::Fill(const Eigen::SparseMatrix<double>& H, double mu) {
  const int n = static_cast<int>(H.cols());
  const int* outer = H.outerIndexPtr();
  const int* inner = H.innerIndexPtr();
  const double* values = H.valuePtr();
  for (size_t q = 0; q < transpose_slot_.size(); ++q) row_values_[q] = values[transpose_slot_[q]];
  std::copy(transpose_outer_.begin(), transpose_outer_.end() - 1, row_cursor_.begin());
  double* out = normal_.valuePtr();
  const int* normal_outer = normal_.outerIndexPtr();
  const int* normal_inner = normal_.innerIndexPtr();
  for (int j = 0; j < n; ++j) {
    // Column j's entries start at -0.0, which IEEE addition leaves every value as it is (+0.0
    // included): each sum is then bit for bit the first product assigned and the others added,
    // without a test in the inner loop. Every entry off the diagonal shares a row of H with
    // column j, so only the diagonal can stay untouched, and -0.0 + mu is 0.0 + mu.
    for (int p = normal_outer[j]; p < normal_outer[j + 1]; ++p) sum_[normal_inner[p]] = -0.0;
    // Over the rows k of column j ascending, H(k, i) H(k, j) into entry i >= j, in the order of
    // Eigen's sparse product. Row k's columns ascend, so its entries left of j are skipped by a
    // cursor that only moves forward as j grows.
    for (int p = outer[j]; p < outer[j + 1]; ++p) {
      const int k = inner[p];
      const double y = values[p];
      int& first = row_cursor_[k];
      while (transpose_index_[first] < j) ++first;
      for (int q = first; q < transpose_outer_[k + 1]; ++q) {
        sum_[transpose_index_[q]] += row_values_[q] * y;
      }
    }
    for (int p = normal_outer[j]; p < normal_outer[j + 1]; ++p) {
      const int i = normal_inner[p];
      out[p] = i == j ? sum_[i] + mu : sum_[i];
    }
  }
}

bool NormalEquations::Factorize(const Eigen::SparseMatrix<double>& H, double mu) {
  if (!SamePattern(H)) BuildPattern(H);
  Fill(H, mu);
  if (!analyzed_) {
    ldlt_.analyzePattern(normal_);
    analyzed_ = true;
  }
  ldlt_.factorize(normal_);
  return ldlt_.info() == Eigen::Success;
}

}  // namespace ncpkit::internal
