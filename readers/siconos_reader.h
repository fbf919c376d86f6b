// Readers for the Siconos numerics ".dat" LCP and MLCP files
// (../shared/data/FORMAT-siconos-dat.md).
#ifndef NCPKIT_READERS_SICONOS_READER_H_
#define NCPKIT_READERS_SICONOS_READER_H_

#include <string>

#include "readers/text_scanner.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/lcp/linear_problem.h"

namespace ncpkit {

// Reads an LCP file: n, a NumericsMatrix (dense column-major, or sparse-block), q.
// Dense matrices become a dense problem, sparse-block matrices a sparse one.
// Throws InputError (file, line, what was expected) on malformed input and
// std::invalid_argument if the data do not form a valid problem (e.g. NaN).
LinearComplementarityProblem ReadSiconosLcp(const std::string& path);

// Reads an MLCP file (storage type 1: block rows, M, q; or storage type 2: A, B, C, D, a, b).
// Rows of equality blocks become free variables (l = -inf, u = +inf), the others [0, +inf).
// ncpkit solves square MLCPs only: a rectangular M is rejected with a InputError.
LinearComplementarityProblem ReadSiconosMlcp(const std::string& path);

// The same from text in memory; `name` stands for the file in messages and names the problem.
LinearComplementarityProblem ParseSiconosLcp(const std::string& text, const std::string& name);
LinearComplementarityProblem ParseSiconosMlcp(const std::string& text, const std::string& name);

// Reads a Siconos FC3D file ("Friction-contact file"): d (3), n_c, the NumericsMatrix W
// (dense, or sparse-block), q, mu. Throws InputError (file, line, what was expected) on
// malformed input; 2D problems (d = 2) are refused.
FrictionContactProblem ReadSiconosFrictionContact(const std::string& path);
FrictionContactProblem ParseSiconosFrictionContact(const std::string& text,
                                                   const std::string& name);

// Reads any supported problem file: "*.mtx" as Matrix Market (see matrix_market.h) with q
// from `q_path` and optional bounds l, u from `lower_path`, `upper_path` (vector files; "inf"
// allowed; default l = 0, u = +inf); files whose name contains "mlcp" as Siconos MLCP; other
// files as Siconos LCP. Bounds files are only accepted with a Matrix Market matrix.
LinearComplementarityProblem ReadProblemFile(const std::string& path,
                                             const std::string& q_path = "",
                                             const std::string& lower_path = "",
                                             const std::string& upper_path = "");

}  // namespace ncpkit

#endif  // NCPKIT_READERS_SICONOS_READER_H_
