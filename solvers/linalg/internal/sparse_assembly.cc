#include "solvers/linalg/internal/sparse_assembly.h"

#include <algorithm>
#include <cstring>

namespace ncpkit::internal {

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
