// A test on the pivots of an LU factorization: a pivot that is exactly zero or at rounding level
// makes a basis solve meaningless, and a condition estimate alone can miss it (Eigen's rcond()
// gave 1.4e-8 for a Lemke basis with an exact zero pivot). Lemke refuses such a basis. (The
// Newton solvers do not need it: a direction from a singular matrix fails their finiteness
// and descent tests, and a small pivot there often comes from row scaling, not singularity.)
#ifndef NCPKIT_SOLVERS_LINALG_INTERNAL_PIVOTS_H_
#define NCPKIT_SOLVERS_LINALG_INTERNAL_PIVOTS_H_

#include <Eigen/Dense>
#include <cmath>
#include <limits>

namespace ncpkit::internal {

// Relative size below which a pivot of an n x n LU counts as zero: 64 n eps. Below it,
// rounding in the elimination leaves no significant digit.
inline double RelativePivotFloor(Eigen::Index n) {
  return 64.0 * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
}

// True if every |pivot| exceeds RelativePivotFloor(n) times `scale` (the largest entry of the
// factorized matrix).
inline bool PivotsAreUsable(
    const Eigen::Ref<const Eigen::VectorXd, 0, Eigen::InnerStride<>>& pivots, double scale) {
  if (!std::isfinite(scale) || !(scale > 0.0)) return pivots.size() == 0;
  const double floor = RelativePivotFloor(pivots.size()) * scale;
  for (Eigen::Index i = 0; i < pivots.size(); ++i) {
    if (!(std::abs(pivots[i]) > floor)) return false;  // also false for NaN
  }
  return true;
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_LINALG_INTERNAL_PIVOTS_H_
