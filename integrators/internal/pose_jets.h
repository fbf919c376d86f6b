// Small rotation helpers on any scalar type, for the step derivatives' Jets
// (integrators/explicit/step_derivative.cc, integrators/quasistatic_derivative.cc).
#ifndef NCPKIT_INTEGRATORS_INTERNAL_POSE_JETS_H_
#define NCPKIT_INTEGRATORS_INTERNAL_POSE_JETS_H_

#include <Eigen/Dense>

namespace ncpkit::internal {

template <class T>
using Vec3 = Eigen::Matrix<T, 3, 1>;
template <class T>
using Mat3 = Eigen::Matrix<T, 3, 3>;

template <class T>
Mat3<T> Skew(const Vec3<T>& w) {
  Mat3<T> s;
  s << T(0), -w.z(), w.y(), w.z(), T(0), -w.x(), -w.y(), w.x(), T(0);
  return s;
}

// R0 turned by the world-frame theta to first order, (I + [theta]x) R0: exact for the first
// derivatives at theta = 0, which is where Jets evaluate it.
// Column by column, R0's columns c turned to c + theta x c with products of T and double only:
// the 3 x 3 product of T matrices this replaces was a tenth of a stack's step derivative.
template <class T>
Mat3<T> Turned(const Eigen::Matrix3d& R0, const Vec3<T>& theta) {
  Mat3<T> out;
  for (int j = 0; j < 3; ++j) {
    const double x = R0(0, j), y = R0(1, j), z = R0(2, j);
    out(0, j) = theta.y() * z - theta.z() * y + x;
    out(1, j) = theta.z() * x - theta.x() * z + y;
    out(2, j) = theta.x() * y - theta.y() * x + z;
  }
  return out;
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_INTERNAL_POSE_JETS_H_
