// The reader of FCLib HDF5 files: local frictional contact problems, and global ones reduced to
// local form (../shared/data/fclib/FORMAT.md). Siconos FC3D ".dat" files are read by
// siconos_reader.h.
//
// The HDF5 files are read with the HDF5 C library (libhdf5-dev) rather than libfclib, so that
// every dataset is checked before it is used (type, size against the sizes it must agree with,
// indices in range, finite values) and a bad file is an InputError naming the dataset, where
// libfclib's reader trusts the file.
#ifndef NCPKIT_READERS_FCLIB_READER_H_
#define NCPKIT_READERS_FCLIB_READER_H_

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "solvers/friction/friction_problem.h"

namespace ncpkit {

// What an FCLib file holds besides the problem.
struct FclibFile {
  FrictionContactProblem problem;
  // True if the file held a global problem (/fclib_global), reduced to the local one:
  // W = H^T M^-1 H, q = H^T M^-1 f + w (FORMAT.md §2), with M factorized by CHOLMOD.
  bool from_global = false;
  int num_degrees_of_freedom = 0;  // global problems: the size of M
  // /solution/r (and /solution/u) when the file has them (local problems; empty otherwise).
  Eigen::VectorXd solution_r, solution_u;
  // /guesses/<k>/r for k = 1 .. number_of_guesses.
  std::vector<Eigen::VectorXd> guesses_r;
  std::string title;  // /fclib_local/info/title or /fclib_global/info/title, when present
};

// Reads an FCLib HDF5 file. W may be stored as triplets (duplicates summed), compressed
// columns or compressed rows. Throws InputError "<file>: <dataset>: <what>" for a file that is
// not HDF5, a missing group or dataset, a dataset of the wrong type or size, an index out of
// range, a non-finite value, a mixed local problem (V, R) or a global one with equality
// constraints (G), which ncpkit does not solve, or a global M that is not positive definite.
FclibFile ReadFclibFile(const std::string& path);

// True if the file starts with the HDF5 signature.
bool IsHdf5File(const std::string& path);

}  // namespace ncpkit

#endif  // NCPKIT_READERS_FCLIB_READER_H_
