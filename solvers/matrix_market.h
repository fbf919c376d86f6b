// Matrix Market matrices and plain vector files, for users' own problems.
#ifndef NCPKIT_SOLVERS_MATRIX_MARKET_H_
#define NCPKIT_SOLVERS_MATRIX_MARKET_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>

#include "solvers/text_scanner.h"

namespace ncpkit {

// Reads a Matrix Market file: "matrix coordinate" (real or integer; general, symmetric or
// skew-symmetric) or "matrix array" (real, general). Throws ParseError on malformed input.
Eigen::SparseMatrix<double> ReadMatrixMarket(const std::string& path);

// Reads a vector written as whitespace-separated numbers ("inf" and "-inf" allowed, for
// bounds); lines starting with '%' or '#' are comments. Throws ParseError if it has none.
Eigen::VectorXd ReadVectorFile(const std::string& path);

// Writes M in Matrix Market coordinate format and a vector as one number per line.
void WriteMatrixMarket(const std::string& path, const Eigen::SparseMatrix<double>& M);
void WriteVectorFile(const std::string& path, const Eigen::VectorXd& v);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MATRIX_MARKET_H_
