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
template <class T>
Mat3<T> Turned(const Eigen::Matrix3d& R0, const Vec3<T>& theta) {
  const Mat3<T> R = R0.cast<T>();
  return R + Skew(theta) * R;
}

}  // namespace ncpkit::internal

#endif  // NCPKIT_INTEGRATORS_INTERNAL_POSE_JETS_H_
