// Wall time of a solve, for Summary::wall_time_seconds and time limits.
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_SECONDS_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_SECONDS_H_

#include <chrono>

namespace ncpkit::internal {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_BASE_INTERNAL_SECONDS_H_
