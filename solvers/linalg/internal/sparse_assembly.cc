#include "solvers/linalg/internal/sparse_assembly.h"

#include <algorithm>
#include <cstring>

namespace ncpkit::internal {

namespace {

// CompressPattern for patterns filling a good part of the matrix: a map of positions over the
// whole matrix, no sorting.
void CompressDensePattern(int rows, int cols, const std::vector<PatternEntry>& entries,
                          std::vector<int>* map, Eigen::SparseMatrix<double>* pattern) {
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  map->assign(count, -1);
  int* at = map->data();
  for (const PatternEntry& e : entries) at[static_cast<size_t>(e.column) * rows + e.row] = 0;
  Eigen::Index nonzeros = 0;
  for (size_t k = 0; k < count; ++k) nonzeros += at[k] == 0 ? 1 : 0;
  pattern->resize(rows, cols);
  pattern->resizeNonZeros(nonzeros);
  int* outer = pattern->outerIndexPtr();
  int* inner = pattern->innerIndexPtr();
  std::fill(pattern->valuePtr(), pattern->valuePtr() + nonzeros, 0.0);
  int position = 0;
  for (int j = 0; j < cols; ++j) {
    outer[j] = position;
    int* column = at + static_cast<size_t>(j) * rows;
    for (int i = 0; i < rows; ++i) {
      if (column[i] == 0) {
        inner[position] = i;
        column[i] = position++;
      }
    }
  }
  outer[cols] = position;
  for (const PatternEntry& e : entries) {
    *e.position = at[static_cast<size_t>(e.column) * rows + e.row];
  }
}

}  // namespace

void CompressPattern(int rows, int cols, const std::vector<PatternEntry>& entries,
                     std::vector<PatternEntry>* sorted, Eigen::SparseMatrix<double>* pattern) {
  // A map over the whole matrix costs rows * cols; sorting each column's entries, about
  // entries * log(entries per column) with a larger constant.
  if (static_cast<double>(rows) * static_cast<double>(cols) <=
      4.0 * static_cast<double>(entries.size())) {
    std::vector<int> map;
    CompressDensePattern(rows, cols, entries, &map, pattern);
    return;
  }
  // The entries by column (a counting sort), then each column's by row.
  std::vector<int> column_start(static_cast<size_t>(cols) + 1, 0);
  for (const PatternEntry& e : entries) ++column_start[e.column + 1];
  for (int j = 0; j < cols; ++j) column_start[j + 1] += column_start[j];
  sorted->resize(entries.size());
  {
    std::vector<int> next(column_start.begin(), column_start.end() - 1);
    for (const PatternEntry& e : entries) (*sorted)[next[e.column]++] = e;
  }
  const auto by_row = [](const PatternEntry& a, const PatternEntry& b) { return a.row < b.row; };
  Eigen::Index nonzeros = 0;
  for (int j = 0; j < cols; ++j) {
    const auto begin = sorted->begin() + column_start[j];
    const auto end = sorted->begin() + column_start[j + 1];
    std::sort(begin, end, by_row);
    for (auto it = begin; it != end; ++it) {
      if (it == begin || it->row != (it - 1)->row) ++nonzeros;
    }
  }
  pattern->resize(rows, cols);
  pattern->resizeNonZeros(nonzeros);
  int* outer = pattern->outerIndexPtr();
  int* inner = pattern->innerIndexPtr();
  std::fill(pattern->valuePtr(), pattern->valuePtr() + nonzeros, 0.0);
  int position = -1;
  outer[0] = 0;
  for (int j = 0; j < cols; ++j) {
    for (int k = column_start[j]; k < column_start[j + 1]; ++k) {
      const PatternEntry& e = (*sorted)[k];
      if (k == column_start[j] || e.row != (*sorted)[k - 1].row) inner[++position] = e.row;
      *e.position = position;
    }
    outer[j + 1] = position + 1;
  }
}

void TransposeInto(const Eigen::SparseMatrix<double, Eigen::RowMajor>& from,
                   Eigen::SparseMatrix<double>* to) {
  to->resize(from.cols(), from.rows());
  const Eigen::Index nonzeros = from.nonZeros();
  to->resizeNonZeros(nonzeros);
  std::memcpy(to->outerIndexPtr(), from.outerIndexPtr(), sizeof(int) * (from.outerSize() + 1));
  std::memcpy(to->innerIndexPtr(), from.innerIndexPtr(), sizeof(int) * nonzeros);
  std::memcpy(to->valuePtr(), from.valuePtr(), sizeof(double) * nonzeros);
}

void SparseProductInto(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& X,
                       Eigen::SparseMatrix<double>* W, std::vector<char>* mask,
                       std::vector<double>* values, std::vector<int>* rows) {
  const Eigen::Index m = A.rows();
  mask->assign(m, 0);
  values->resize(m);
  rows->clear();
  rows->reserve(m);
  W->resize(m, X.cols());
  Eigen::Index written = 0;
  for (Eigen::Index j = 0; j < X.outerSize(); ++j) {
    rows->clear();
    for (int p = X.outerIndexPtr()[j]; p < X.outerIndexPtr()[j + 1]; ++p) {
      const double y = X.valuePtr()[p];
      const int k = X.innerIndexPtr()[p];
      for (int q = A.outerIndexPtr()[k]; q < A.outerIndexPtr()[k + 1]; ++q) {
        const int i = A.innerIndexPtr()[q];
        const double x = A.valuePtr()[q];
        if (!(*mask)[i]) {
          (*mask)[i] = 1;
          (*values)[i] = x * y;
          rows->push_back(i);
        } else {
          (*values)[i] += x * y;
        }
      }
    }
    std::sort(rows->begin(), rows->end());
    W->resizeNonZeros(written + rows->size());
    W->outerIndexPtr()[j] = static_cast<int>(written);
    for (int i : *rows) {
      W->innerIndexPtr()[written] = i;
      W->valuePtr()[written] = (*values)[i];
      ++written;
      (*mask)[i] = 0;
    }
  }
  W->outerIndexPtr()[X.outerSize()] = static_cast<int>(written);
}

}  // namespace ncpkit::internal
