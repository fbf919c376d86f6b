// Writes frictional contact problems as FCLib HDF5 files (../shared/data/fclib/FORMAT.md §3):
// the explicit stepper's global problems (`ncpkit simulate --save-problems`), so that any FCLib
// tool — `ncpkit fclib`, Siconos, libfclib — replays them. Matrices are written as triplets,
// as the Siconos files are; the reader (fclib_reader.h) reads every storage back.
#ifndef NCPKIT_READERS_FCLIB_WRITER_H_
#define NCPKIT_READERS_FCLIB_WRITER_H_

#include <Eigen/Dense>
#include <string>

#include "solvers/friction/global_friction_problem.h"

namespace ncpkit {

// /fclib_global: M (block diagonal, its blocks), H, vectors f, w, mu, spacedim 3 and
// info/title; with r (3 n_c values) also /solution/r and /solution/v = M^-1 (H r + f). Throws
// InputError naming the file where it cannot be created or written.
void WriteFclibGlobal(const std::string& path, const GlobalFrictionContactProblem& problem,
                      const std::string& title, const Eigen::VectorXd* r = nullptr);

}  // namespace ncpkit

#endif  // NCPKIT_READERS_FCLIB_WRITER_H_
