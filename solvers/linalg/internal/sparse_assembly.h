// Assembling a sparse matrix from triplets step after step without allocating once its
// pattern settles.
#ifndef NCPKIT_SOLVERS_LINALG_INTERNAL_SPARSE_ASSEMBLY_H_
#define NCPKIT_SOLVERS_LINALG_INTERNAL_SPARSE_ASSEMBLY_H_

#include <Eigen/SparseCore>
#include <algorithm>
#include <vector>

namespace ncpkit::internal {

// Sets a matrix to the sum of a list of triplets, exactly as setFromTriplets() does
// (duplicates summed in list order, explicit zeros kept). When the list names the same
// (row, column) sequence as the last call, the values are written into the existing pattern
// and nothing is allocated; otherwise setFromTriplets() runs and the slots are recorded.
template <class SparseMatrixType>
class TripletAssembly {
 public:
  void Assemble(int rows, int cols, const std::vector<Eigen::Triplet<double>>& triplets,
                SparseMatrixType* M) {
    if (!SamePattern(rows, cols, triplets, *M)) {
      M->resize(rows, cols);
      M->setFromTriplets(triplets.begin(), triplets.end());
      M->makeCompressed();
      Record(rows, cols, triplets, *M);
    }
    double* values = M->valuePtr();
    for (size_t k = 0; k < triplets.size(); ++k) {
      if (first_[k]) {
        values[slot_[k]] = triplets[k].value();
      } else {
        values[slot_[k]] += triplets[k].value();
      }
    }
  }

 private:
  bool SamePattern(int rows, int cols, const std::vector<Eigen::Triplet<double>>& triplets,
                   const SparseMatrixType& M) const {
    if (rows != rows_ || cols != cols_ || triplets.size() != row_.size() ||
        M.nonZeros() != nonzeros_ || !M.isCompressed()) {
      return false;
    }
    for (size_t k = 0; k < triplets.size(); ++k) {
      if (triplets[k].row() != row_[k] || triplets[k].col() != col_[k]) return false;
    }
    return true;
  }

  // Where each triplet lands in M's value array, and whether it is the first one there.
  void Record(int rows, int cols, const std::vector<Eigen::Triplet<double>>& triplets,
              const SparseMatrixType& M) {
    rows_ = rows;
    cols_ = cols;
    nonzeros_ = M.nonZeros();
    row_.resize(triplets.size());
    col_.resize(triplets.size());
    slot_.resize(triplets.size());
    first_.assign(triplets.size(), 0);
    std::vector<char> seen(static_cast<size_t>(nonzeros_), 0);
    for (size_t k = 0; k < triplets.size(); ++k) {
      row_[k] = triplets[k].row();
      col_[k] = triplets[k].col();
      const int outer = SparseMatrixType::IsRowMajor ? row_[k] : col_[k];
      const int inner = SparseMatrixType::IsRowMajor ? col_[k] : row_[k];
      const int* begin = M.innerIndexPtr() + M.outerIndexPtr()[outer];
      const int* end = M.innerIndexPtr() + M.outerIndexPtr()[outer + 1];
      slot_[k] = static_cast<int>(std::lower_bound(begin, end, inner) - M.innerIndexPtr());
      first_[k] = seen[slot_[k]] ? 0 : 1;
      seen[slot_[k]] = 1;
    }
  }

  int rows_ = -1, cols_ = -1;
  Eigen::Index nonzeros_ = -1;
  std::vector<int> row_, col_, slot_;
  std::vector<char> first_;
};

// Copies a compressed matrix into one of the other storage order (the same matrix), as
// Eigen's assignment between storage orders does, but into *to's existing storage: nothing is
// allocated once it is large enough.
template <class From, class To>
void ConvertStorageOrder(const From& from, To* to) {
  static_assert(bool(From::IsRowMajor) != bool(To::IsRowMajor), "storage orders must differ");
  const Eigen::Index outer = To::IsRowMajor ? from.rows() : from.cols();
  to->resize(from.rows(), from.cols());
  const Eigen::Index nonzeros = from.nonZeros();
  to->resizeNonZeros(nonzeros);
  int* starts = to->outerIndexPtr();
  std::fill(starts, starts + outer + 1, 0);
  for (Eigen::Index k = 0; k < nonzeros; ++k) ++starts[from.innerIndexPtr()[k] + 1];
  for (Eigen::Index j = 0; j < outer; ++j) starts[j + 1] += starts[j];
  // Walk `from` in its outer order: each target row (column) receives its entries in
  // increasing inner index, as Eigen's conversion leaves them.
  for (Eigen::Index j = 0; j < from.outerSize(); ++j) {
    for (int k = from.outerIndexPtr()[j]; k < from.outerIndexPtr()[j + 1]; ++k) {
      const int target = from.innerIndexPtr()[k];
      const int slot = starts[target]++;
      to->innerIndexPtr()[slot] = static_cast<int>(j);
      to->valuePtr()[slot] = from.valuePtr()[k];
    }
  }
  for (Eigen::Index j = outer; j > 0; --j) starts[j] = starts[j - 1];
  starts[0] = 0;
}

// An entry of a sparsity pattern being built: its row and column, and where to write its
// position in the pattern's value array.
struct PatternEntry {
  int row;
  int column;
  int* position;
};

// Sets *pattern to the compressed column-major rows x cols matrix (values zero) holding the
// entries, repeats merged, and writes each entry's position in its value array, as
// setFromTriplets() and a search of each column would, but by a counting sort on the columns
// and a sort of each column's rows. *sorted is a workspace.
void CompressPattern(int rows, int cols, const std::vector<PatternEntry>& entries,
                     std::vector<PatternEntry>* sorted, Eigen::SparseMatrix<double>* pattern);

// The transpose of a compressed row-major matrix as a column-major one: the same arrays.
void TransposeInto(const Eigen::SparseMatrix<double, Eigen::RowMajor>& from,
                   Eigen::SparseMatrix<double>* to);

// W = A X for column-major A and X, computed as Eigen's sparse product computes it (for each
// column j of X, the products A(i, k) X(k, j) accumulated in increasing k), so the values are
// the same to the last bit; W's columns hold their rows in increasing order. `mask`, `values`
// and `rows` are workspaces of A.rows() entries; nothing is allocated once *W's storage is
// large enough.
void SparseProductInto(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& X,
                       Eigen::SparseMatrix<double>* W, std::vector<char>* mask,
                       std::vector<double>* values, std::vector<int>* rows);

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_LINALG_INTERNAL_SPARSE_ASSEMBLY_H_
