#include "readers/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

namespace ncpkit {
namespace {

using internal::TextScanner;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

Eigen::SparseMatrix<double> ReadMatrixMarket(const std::string& path, Eigen::Index expected_size) {
  return ParseMatrixMarket(internal::ReadTextFile(path), path, expected_size);
}

namespace {

struct MatrixMarketHeader {
  std::string format, symmetry;
};

// The banner line: %%MatrixMarket matrix coordinate|array real|integer|double
// general|symmetric|skew-symmetric.
MatrixMarketHeader ReadHeader(TextScanner* in) {
  std::string line;
  if (!in->NextLine(&line)) in->Fail("empty file, expected a %%MatrixMarket header");
  std::istringstream header(Lower(line));
  std::string banner, object, field;
  MatrixMarketHeader h;
  header >> banner >> object >> h.format >> field >> h.symmetry;
  if (banner != "%%matrixmarket" || object != "matrix") {
    in->Fail("expected '%%MatrixMarket matrix ...' header, found '" + internal::Printable(line) +
             "'");
  }
  if (h.format != "coordinate" && h.format != "array") {
    in->Fail("expected format 'coordinate' or 'array', found '" + internal::Printable(h.format) +
             "'");
  }
  if (field != "real" && field != "integer" && field != "double") {
    in->Fail("expected field 'real' or 'integer', found '" + internal::Printable(field) + "'");
  }
  if (h.symmetry != "general" && h.symmetry != "symmetric" && h.symmetry != "skew-symmetric") {
    in->Fail("expected symmetry 'general', 'symmetric' or 'skew-symmetric', found '" +
             internal::Printable(h.symmetry) + "'");
  }
  if (h.format == "array" && h.symmetry != "general") in->Fail("array format must be 'general'");
  return h;
}

// The first line that is not a comment: the sizes.
std::string SizeLine(TextScanner* in) {
  std::string line;
  while (true) {
    if (!in->NextLine(&line)) in->Fail("missing size line");
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] != '%') return line;
  }
}

// The sizes must fit the symmetry and the q vector (expected_size >= 0).
void CheckSizes(const TextScanner& in, const std::string& symmetry, int rows, int cols,
                Eigen::Index expected_size) {
  if (symmetry != "general" && rows != cols) {
    std::ostringstream os;
    os << "a " << symmetry << " matrix must be square, found " << rows << " x " << cols;
    in.Fail(os.str());
  }
  if (expected_size >= 0 && (rows != expected_size || cols != expected_size)) {
    std::ostringstream os;
    os << "M is " << rows << " x " << cols;
    if (rows != cols) {
      os << ", it must be square";
    } else {
      os << " but q has " << expected_size << " entries";
    }
    in.Fail(os.str());
  }
}

void ReadArrayEntries(TextScanner* in, int rows, int cols,
                      std::vector<Eigen::Triplet<double>>* triplets) {
  in->RequireTokens(int64_t{rows} * cols, "array matrix");
  for (int j = 0; j < cols; ++j) {
    for (int i = 0; i < rows; ++i) {
      const double v = in->ReadDouble("matrix entry");
      if (v != 0.0) triplets->emplace_back(i, j, v);
    }
  }
}

void ReadCoordinateEntries(TextScanner* in, TextScanner* sizes, const std::string& symmetry,
                           int rows, int cols, std::vector<Eigen::Triplet<double>>* triplets) {
  const int64_t nnz = sizes->ReadInt("entry count", 0, int64_t{rows} * cols);
  in->RequireTokens(3 * nnz, "coordinate entries");
  triplets->reserve(symmetry == "general" ? nnz : 2 * nnz);
  for (int64_t k = 0; k < nnz; ++k) {
    const int i = static_cast<int>(in->ReadInt("row index", 1, rows)) - 1;
    const int j = static_cast<int>(in->ReadInt("column index", 1, cols)) - 1;
    const double v = in->ReadDouble("entry value");
    triplets->emplace_back(i, j, v);
    if (symmetry != "general" && i != j) {
      triplets->emplace_back(j, i, symmetry == "symmetric" ? v : -v);
    }
  }
}

}  // namespace

Eigen::SparseMatrix<double> ParseMatrixMarket(const std::string& text, const std::string& path,
                                              Eigen::Index expected_size) {
  TextScanner in(path, text);
  const MatrixMarketHeader header = ReadHeader(&in);
  TextScanner sizes(path + " (size line)", SizeLine(&in));
  const int rows = static_cast<int>(sizes.ReadInt("row count", 1, kMaxMatrixMarketDimension));
  const int cols = static_cast<int>(sizes.ReadInt("column count", 1, kMaxMatrixMarketDimension));
  CheckSizes(in, header.symmetry, rows, cols, expected_size);
  // Nothing is allocated before the file is known to hold the entries it declares.
  std::vector<Eigen::Triplet<double>> triplets;
  if (header.format == "array") {
    ReadArrayEntries(&in, rows, cols, &triplets);
  } else {
    ReadCoordinateEntries(&in, &sizes, header.symmetry, rows, cols, &triplets);
  }
  if (!sizes.AtEnd()) sizes.Fail("unexpected data after the sizes");
  if (!in.AtEnd()) in.Fail("unexpected data after the last entry");
  Eigen::SparseMatrix<double> M(rows, cols);
  M.setFromTriplets(triplets.begin(), triplets.end());
  return M;
}

Eigen::VectorXd ReadVectorFile(const std::string& path) {
  return ParseVectorFile(internal::ReadTextFile(path), path);
}

Eigen::VectorXd ParseVectorFile(const std::string& text, const std::string& path) {
  TextScanner in(path, text);
  std::vector<double> values;
  std::string line;
  int line_number = 0;
  while (in.NextLine(&line)) {
    ++line_number;
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '%' || line[first] == '#') continue;
    std::ostringstream name;
    name << path << ":" << line_number;
    TextScanner tokens(name.str(), line);
    while (!tokens.AtEnd()) values.push_back(tokens.ReadDouble("vector entry"));
  }
  if (values.empty()) throw InputError(path, 0, "", "expected a vector of numbers, found none");
  return Eigen::Map<Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

void WriteMatrixMarket(const std::string& path, const Eigen::SparseMatrix<double>& M) {
  std::ofstream out(path);
  out << "%%MatrixMarket matrix coordinate real general\n"
      << M.rows() << " " << M.cols() << " " << M.nonZeros() << "\n";
  out.precision(17);
  for (int j = 0; j < M.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(M, j); it; ++it) {
      out << it.row() + 1 << " " << it.col() + 1 << " " << it.value() << "\n";
    }
  }
}

void WriteVectorFile(const std::string& path, const Eigen::VectorXd& v) {
  std::ofstream out(path);
  out.precision(17);
  for (Eigen::Index i = 0; i < v.size(); ++i) out << v[i] << "\n";
}

}  // namespace ncpkit
