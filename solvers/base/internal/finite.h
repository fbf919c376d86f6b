// Whether an array of doubles is all finite, at the cost of its sum: a sum is finite only if
// every term is, so the entries are looked at one by one only when the sum is not (a non-finite
// entry, or an overflow of finite ones). Eigen's allFinite() compares x - x with itself entry by
// entry; on a time-stepper's small problems the checks around each solve cost more than that.
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_FINITE_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_FINITE_H_

#include <Eigen/Core>
#include <cmath>
#include <cstddef>

namespace ncpkit::internal {

inline bool AllFinite(const double* x, size_t n) {
  const Eigen::Map<const Eigen::VectorXd> values(x, static_cast<Eigen::Index>(n));
  return std::isfinite(values.sum()) || values.allFinite();
}

inline bool AllFinite(const Eigen::VectorXd& x) {
  return AllFinite(x.data(), static_cast<size_t>(x.size()));
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_BASE_INTERNAL_FINITE_H_
