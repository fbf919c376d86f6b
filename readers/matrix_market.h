// Matrix Market matrices and plain vector files, for users' own problems.
#ifndef NCPKIT_READERS_MATRIX_MARKET_H_
#define NCPKIT_READERS_MATRIX_MARKET_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>

#include "readers/text_scanner.h"

namespace ncpkit {

// Largest row or column count ReadMatrixMarket accepts (a coordinate file may declare a large
// matrix with few entries; its column pointers alone take 4 bytes per column).
constexpr int64_t kMaxMatrixMarketDimension = 10'000'000;

// Reads a Matrix Market file: "matrix coordinate" (real or integer; general, symmetric or
// skew-symmetric, both square) or "matrix array" (real, general). With expected_size >= 0 the
// matrix must be expected_size x expected_size (checked before anything is allocated). Throws
// InputError on malformed input, naming the file and the line.
Eigen::SparseMatrix<double> ReadMatrixMarket(const std::string& path,
                                             Eigen::Index expected_size = -1);
// The same from text in memory; `name` stands for the file in messages.
Eigen::SparseMatrix<double> ParseMatrixMarket(const std::string& text, const std::string& name,
                                              Eigen::Index expected_size = -1);

// Reads a vector written as whitespace-separated numbers ("inf" and "-inf" allowed, for
// bounds); lines starting with '%' or '#' are comments. Throws InputError if it has none.
Eigen::VectorXd ReadVectorFile(const std::string& path);
// The same from text in memory; `name` stands for the file in messages.
Eigen::VectorXd ParseVectorFile(const std::string& text, const std::string& name);

// Writes M in Matrix Market coordinate format and a vector as one number per line.
void WriteMatrixMarket(const std::string& path, const Eigen::SparseMatrix<double>& M);
void WriteVectorFile(const std::string& path, const Eigen::VectorXd& v);

}  // namespace ncpkit

#endif  // NCPKIT_READERS_MATRIX_MARKET_H_
