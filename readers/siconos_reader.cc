#include "readers/siconos_reader.h"

#include <Eigen/SparseCore>
#include <algorithm>
#include <limits>
#include <sstream>
#include <vector>

#include "readers/matrix_market.h"
#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

using internal::TextScanner;

// A NumericsMatrix as read: dense (column-major storage) or sparse.
struct NumericsMatrix {
  int rows = 0, cols = 0;
  bool dense = true;
  Eigen::MatrixXd dense_values;
  Eigen::SparseMatrix<double> sparse_values;
};

// A dense NumericsMatrix after its storage type and sizes: the repeated sizes, then the
// entries column by column.
void ReadDenseValues(TextScanner& in, NumericsMatrix* m) {
  const int rows = static_cast<int>(in.ReadInt("repeated row count", 0, internal::kMaxDim));
  const int cols = static_cast<int>(in.ReadInt("repeated column count", 0, internal::kMaxDim));
  if (rows != m->rows || cols != m->cols) {
    std::ostringstream os;
    os << "dense matrix header says " << m->rows << " x " << m->cols << " then " << rows << " x "
       << cols;
    in.Fail(os.str());
  }
  in.RequireTokens(int64_t{m->rows} * m->cols, "dense matrix");
  m->dense_values.resize(m->rows, m->cols);
  for (int j = 0; j < m->cols; ++j) {
    for (int i = 0; i < m->rows; ++i) {
      std::ostringstream what;
      what << "M(" << i << "," << j << ")";
      m->dense_values(i, j) = in.ReadDouble(what.str());
    }
  }
}

// Cumulative block ends (rows or columns) that must end at `total`.
std::vector<int> ReadBlockEnds(TextScanner& in, int64_t count, int total, const char* what) {
  std::vector<int> ends(count);
  int previous = 0;
  for (int64_t k = 0; k < count; ++k) {
    ends[k] = static_cast<int>(
        in.ReadInt(std::string("cumulative block ") + what + " end", previous + 1, total));
    previous = ends[k];
  }
  if (count > 0 && previous != total) {
    in.Fail(std::string("block ") + what + " ends do not reach the " + what + " count");
  }
  return ends;
}

// The stored blocks of block row r (rows row0 .. row0 + nr), as triplets.
void ReadBlockRow(TextScanner& in, const std::vector<int64_t>& row_ptr,
                  const std::vector<int>& block_col, const std::vector<int>& col_end, int64_t r,
                  int row0, int nr, std::vector<Eigen::Triplet<double>>* triplets) {
  for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
    std::ostringstream what;
    what << "block number " << k;
    in.ReadInt(what.str(), k, k);
    const int c = block_col[k];
    const int col0 = c == 0 ? 0 : col_end[c - 1];
    const int nc = col_end[c] - col0;
    in.RequireTokens(int64_t{nr} * nc, what.str());
    for (int j = 0; j < nc; ++j) {
      for (int i = 0; i < nr; ++i) {
        const double v = in.ReadDouble(what.str() + " entry");
        if (v != 0.0) triplets->emplace_back(row0 + i, col0 + j, v);
      }
    }
  }
}

// A sparse block NumericsMatrix after its storage type and sizes.
void ReadSparseBlockValues(TextScanner& in, NumericsMatrix* m) {
  m->dense = false;
  const int64_t nbblocks = in.ReadInt("number of stored blocks", 0, internal::kMaxDim);
  const int64_t nbr = in.ReadInt("number of block rows", 0, internal::kMaxDim);
  const int64_t nbc = in.ReadInt("number of block columns", 0, internal::kMaxDim);
  in.RequireTokens(nbr + nbc + 2 + nbr + 1 + nbblocks, "sparse block structure");
  const std::vector<int> row_end = ReadBlockEnds(in, nbr, m->rows, "row");
  const std::vector<int> col_end = ReadBlockEnds(in, nbc, m->cols, "column");
  in.ReadInt("filled1 (= number of block rows + 1)", nbr + 1, nbr + 1);
  in.ReadInt("filled2 (= number of stored blocks)", nbblocks, nbblocks);
  std::vector<int64_t> row_ptr(nbr + 1);
  for (int64_t r = 0; r <= nbr; ++r) {
    row_ptr[r] = in.ReadInt("block row pointer", r == 0 ? 0 : row_ptr[r - 1], nbblocks);
  }
  if (row_ptr[0] != 0 || row_ptr[nbr] != nbblocks) {
    in.Fail("block row pointers must start at 0 and end at the number of blocks");
  }
  std::vector<int> block_col(nbblocks);
  for (int64_t k = 0; k < nbblocks; ++k) {
    block_col[k] = static_cast<int>(in.ReadInt("block column index", 0, nbc - 1));
  }
  std::vector<Eigen::Triplet<double>> triplets;
  for (int64_t r = 0; r < nbr; ++r) {
    const int row0 = r == 0 ? 0 : row_end[r - 1];
    ReadBlockRow(in, row_ptr, block_col, col_end, r, row0, row_end[r] - row0, &triplets);
  }
  m->sparse_values.resize(m->rows, m->cols);
  m->sparse_values.setFromTriplets(triplets.begin(), triplets.end());
}

// Reads a NumericsMatrix block; its size must be expected_rows x expected_cols (`context`
// explains the expectation in the error message).
NumericsMatrix ReadNumericsMatrix(TextScanner& in, int expected_rows, int expected_cols,
                                  const std::string& context) {
  NumericsMatrix m;
  const int storage =
      static_cast<int>(in.ReadInt("matrix storage type (0 dense, 1 sparse block)", 0, 2));
  m.rows = static_cast<int>(in.ReadInt("matrix row count size0", 0, internal::kMaxDim));
  m.cols = static_cast<int>(in.ReadInt("matrix column count size1", 0, internal::kMaxDim));
  if (m.rows != expected_rows || m.cols != expected_cols) {
    std::ostringstream os;
    os << "M is " << m.rows << " x " << m.cols << " but " << context;
    in.Fail(os.str());
  }
  if (storage == 2) in.Fail("NM_SPARSE matrix storage (type 2) is not supported");
  if (storage == 0) {
    ReadDenseValues(in, &m);
  } else {
    ReadSparseBlockValues(in, &m);
  }
  return m;
}

Eigen::VectorXd ReadVector(TextScanner& in, int64_t size, const std::string& name) {
  in.RequireTokens(size, name);
  Eigen::VectorXd v(size);
  for (int64_t i = 0; i < size; ++i) {
    std::ostringstream what;
    what << name << "(" << i << ")";
    v[i] = in.ReadDouble(what.str());
  }
  return v;
}

LinearComplementarityProblem MakeProblem(const NumericsMatrix& m, Eigen::VectorXd q,
                                         Eigen::VectorXd l, Eigen::VectorXd u) {
  if (m.dense) {
    return LinearComplementarityProblem(m.dense_values, std::move(q), std::move(l), std::move(u));
  }
  return LinearComplementarityProblem(m.sparse_values, std::move(q), std::move(l), std::move(u));
}

// The MLCP's A, B, C, D, a, b form (storage type 2), assembled as M and q.
void ReadSecondForm(TextScanner& in, int n, int m, Eigen::MatrixXd* M_out, Eigen::VectorXd* q_out) {
  const int size = n + m;
  in.RequireTokens(int64_t{size} * size + size, "A, B, C, D, a, b");
  Eigen::MatrixXd& M = *M_out;
  M.resize(size, size);
  auto read_block = [&](int row0, int col0, int rows, int cols, const char* name) {
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        std::ostringstream what;
        what << name << "(" << i << "," << j << ")";
        M(row0 + i, col0 + j) = in.ReadDouble(what.str());
      }
    }
  };
  read_block(0, 0, n, n, "A");
  read_block(n, n, m, m, "B");
  read_block(0, n, n, m, "C");
  read_block(n, 0, m, n, "D");
  Eigen::VectorXd& q = *q_out;
  q.resize(size);
  q.head(n) = ReadVector(in, n, "a");
  q.tail(m) = ReadVector(in, m, "b");
}

// A file with both storage types states the problem twice: the two must agree (to the
// rounding of a decimal writer), or the file contradicts itself.
void CheckSecondForm(TextScanner& in, int n, int m, const NumericsMatrix& first,
                     const Eigen::VectorXd& q) {
  Eigen::MatrixXd M2;
  Eigen::VectorXd q2;
  const int line = in.line();
  ReadSecondForm(in, n, m, &M2, &q2);
  const Eigen::MatrixXd M1 =
      first.dense ? first.dense_values : Eigen::MatrixXd(first.sparse_values);
  const double scale = std::max({1.0, M1.cwiseAbs().maxCoeff(), q.cwiseAbs().maxCoeff()});
  const double dM = (M1 - M2).cwiseAbs().maxCoeff(), dq = (q - q2).cwiseAbs().maxCoeff();
  if (!(dM <= 1e-12 * scale && dq <= 1e-12 * scale)) {
    std::ostringstream os;
    os << "the A, B, C, D, a, b form from line " << line
       << " differs from M and q given before it (max difference " << std::max(dM, dq) << ")";
    in.Fail(os.str());
  }
}

// Siconos' MLCP test files follow the two (checked) forms with solution values of their own
// layout, which Siconos' reader does not read either: numbers are skipped up to a remark.
void SkipSolutionValues(TextScanner& in) {
  while (!in.AtEnd() && in.NextNumberOrRestore()) {
  }
}

}  // namespace

LinearComplementarityProblem ReadSiconosLcp(const std::string& path) {
  return ParseSiconosLcp(internal::ReadTextFile(path), path);
}

LinearComplementarityProblem ReadSiconosMlcp(const std::string& path) {
  return ParseSiconosMlcp(internal::ReadTextFile(path), path);
}

LinearComplementarityProblem ParseSiconosLcp(const std::string& text, const std::string& path) {
  TextScanner in(path, text);
  const int n = static_cast<int>(in.ReadInt("problem size n", 1, internal::kMaxDim));
  // q alone takes n values: a size the file cannot hold is refused before any allocation.
  in.RequireTokens(n, "an LCP of size n");
  std::ostringstream context;
  context << "the LCP has size n = " << n;
  NumericsMatrix m = ReadNumericsMatrix(in, n, n, context.str());
  Eigen::VectorXd q = ReadVector(in, n, "q");
  in.ExpectEndOrRemark("the last entry of q");
  LinearComplementarityProblem problem =
      MakeProblem(m, std::move(q), Eigen::VectorXd::Zero(n), Eigen::VectorXd::Constant(n, kInf));
  problem.name = internal::BaseName(path);
  return problem;
}

LinearComplementarityProblem ParseSiconosMlcp(const std::string& text, const std::string& path) {
  TextScanner in(path, text);
  const bool type1 = in.ReadInt("isStorageType1 (0 or 1)", 0, 1) == 1;
  const bool type2 = in.ReadInt("isStorageType2 (0 or 1)", 0, 1) == 1;
  if (!type1 && !type2) in.Fail("neither storage type is set");
  const int n = static_cast<int>(in.ReadInt("number of equality rows n", 0, internal::kMaxDim));
  const int m =
      static_cast<int>(in.ReadInt("number of complementarity rows m", 0, internal::kMaxDim));
  const int size = n + m;
  if (size == 0) in.Fail("empty MLCP (n + m = 0)");
  // q alone takes n + m values: a size the file cannot hold is refused before any allocation.
  in.RequireTokens(size, "an MLCP of size n + m");
  Eigen::VectorXd l(size), u = Eigen::VectorXd::Constant(size, kInf);
  if (type1) {
    std::vector<int> block_rows;
    while (true) {
      const int row =
          static_cast<int>(in.ReadInt("block row start (the list ends with n + m)", 0, size));
      if (block_rows.empty() && row != 0) in.Fail("the first block row start must be 0");
      if (!block_rows.empty() && row <= block_rows.back()) {
        in.Fail("block row starts must increase");
      }
      block_rows.push_back(row);
      if (row >= size) break;
    }
    int equality_rows = 0;
    for (size_t b = 0; b + 1 < block_rows.size(); ++b) {
      const bool comp = in.ReadInt("block kind (0 equality, 1 complementarity)", 0, 1) == 1;
      for (int i = block_rows[b]; i < block_rows[b + 1]; ++i) {
        l[i] = comp ? 0.0 : -kInf;
        equality_rows += comp ? 0 : 1;
      }
    }
    if (equality_rows != n) {
      std::ostringstream os;
      os << "the equality blocks cover " << equality_rows << " rows, but n = " << n;
      in.Fail(os.str());
    }
    std::ostringstream context;
    context << "n + m = " << size << ": ncpkit solves square MLCPs only";
    NumericsMatrix M = ReadNumericsMatrix(in, size, size, context.str());
    Eigen::VectorXd q = ReadVector(in, size, "q");
    if (type2) {
      CheckSecondForm(in, n, m, M, q);
      SkipSolutionValues(in);
    }
    in.ExpectEndOrRemark("the last entry of q");
    LinearComplementarityProblem problem = MakeProblem(M, std::move(q), l, u);
    problem.name = internal::BaseName(path);
    return problem;
  }
  Eigen::MatrixXd M;
  Eigen::VectorXd q;
  ReadSecondForm(in, n, m, &M, &q);
  in.ExpectEndOrRemark("the last entry of b");
  l.head(n).setConstant(-kInf);
  l.tail(m).setZero();
  LinearComplementarityProblem problem(std::move(M), std::move(q), l, u);
  problem.name = internal::BaseName(path);
  return problem;
}

FrictionContactProblem ReadSiconosFrictionContact(const std::string& path) {
  return ParseSiconosFrictionContact(internal::ReadTextFile(path), path);
}

FrictionContactProblem ParseSiconosFrictionContact(const std::string& text,
                                                   const std::string& path) {
  TextScanner in(path, text);
  in.ReadInt("dimension d (3: ncpkit solves 3D frictional contact)", 3, 3);
  const int nc = static_cast<int>(in.ReadInt("number of contacts", 0, internal::kMaxDim / 3));
  // q and mu alone take 4 n_c values.
  in.RequireTokens(int64_t{4} * nc, "a frictional contact problem with that many contacts");
  std::ostringstream context;
  context << "the problem has " << nc << " contacts (3 n_c = " << 3 * nc << " rows)";
  const NumericsMatrix W = ReadNumericsMatrix(in, 3 * nc, 3 * nc, context.str());
  Eigen::VectorXd q = ReadVector(in, int64_t{3} * nc, "q");
  Eigen::VectorXd mu = ReadVector(in, nc, "mu");
  in.ExpectEndOrRemark("the last friction coefficient");
  FrictionContactProblem problem(
      W.dense ? Eigen::SparseMatrix<double>(W.dense_values.sparseView()) : W.sparse_values,
      std::move(q), std::move(mu));
  problem.name = internal::BaseName(path);
  return problem;
}

LinearComplementarityProblem ReadProblemFile(const std::string& path, const std::string& q_path,
                                             const std::string& lower_path,
                                             const std::string& upper_path) {
  const std::string base = internal::BaseName(path);
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".mtx") == 0) {
    if (q_path.empty()) {
      throw InputError(path, 0, "", "a Matrix Market matrix needs a q vector file (--q FILE)");
    }
    Eigen::VectorXd q = ReadVectorFile(q_path);
    Eigen::VectorXd l =
        lower_path.empty() ? Eigen::VectorXd::Zero(q.size()) : ReadVectorFile(lower_path);
    Eigen::VectorXd u =
        upper_path.empty() ? Eigen::VectorXd::Constant(q.size(), kInf) : ReadVectorFile(upper_path);
    Eigen::SparseMatrix<double> M = ReadMatrixMarket(path, q.size());
    LinearComplementarityProblem problem(std::move(M), std::move(q), std::move(l), std::move(u));
    problem.name = base;
    return problem;
  }
  if (!lower_path.empty() || !upper_path.empty()) {
    throw InputError(path, 0, "",
                     "bounds files go with a Matrix Market (.mtx) matrix only; Siconos "
                     "files carry their own bounds");
  }
  if (base.find("mlcp") != std::string::npos) return ReadSiconosMlcp(path);
  return ReadSiconosLcp(path);
}

}  // namespace ncpkit
